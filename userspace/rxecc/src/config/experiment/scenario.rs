//! A run's testbed: the topology file with the experiment's and the run's
//! settings laid over it.

use super::*;
use crate::config::lines::line_at;

/// A run's testbed: the topology with `e`'s and `run`'s settings laid
/// over it, checked. `path` and `text` are the experiment file's.
pub(crate) fn scenario_for(e: &Experiment, run: &Run, path: &Path, text: &str) -> Result<Scenario> {
    let base = path.parent().unwrap_or(Path::new("."));
    let (file, src, topo) = topology_for(e, run, base, path, text)?;
    let text = toml::to_string(&topo)
        .with_context(|| format!("writing out {} as TOML", file.display()))?;
    let built = topology::build(&file, &src, topo).with_context(|| {
        format!(
            "{}: run {}: {} with the experiment's settings",
            path.display(),
            run.label,
            file.display()
        )
    })?;
    let flows = match &run.flows {
        Some(f) => {
            let p = base.join(f);
            let t = std::fs::read_to_string(&p).with_context(|| {
                format!(
                    "{}: run {}: reading {}",
                    path.display(),
                    run.label,
                    p.display()
                )
            })?;
            let fl = workload::parse(&p.display().to_string(), &t)?;
            ensure!(
                !fl.is_empty(),
                "{}: run {}: {} has no flows",
                path.display(),
                run.label,
                p.display()
            );
            Some((p, fl))
        }
        None => None,
    };
    Ok(Scenario {
        label: run.label.clone(),
        text,
        file,
        built,
        flows,
    })
}

/// A run's topology: the file's, with the experiment's and the run's
/// settings laid over it. Returns the file, its text (where the names'
/// places are) and the topology.
pub(super) fn topology_for(
    e: &Experiment,
    run: &Run,
    base: &Path,
    path: &Path,
    text: &str,
) -> Result<(PathBuf, String, topology::Topology)> {
    let file = match find(base, &e.topology, "testbed/topologies") {
        Ok(p) => p,
        Err(_) => topology::resolve(&e.topology)?,
    };
    let src =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let mut t = topology::read(&file, &src)?;
    for sw in &mut t.switches {
        e.switch.apply(sw);
        run.switch.apply(sw);
    }
    if let Some(rate) = run.rate_mbps.or(e.rate_mbps) {
        t.defaults.rate_mbps = rate;
    }
    // A scale model's every link: its delay, and its rate where the
    // paper's differs from link_gbps.
    if let Some(d) = &e.derived {
        t.defaults.delay_us = d.delay_us;
        for l in &mut t.links {
            ensure!(
                l.delay_us.is_none(),
                "{}: link {} - {} has a delay_us of its own, and the experiment's [scale] gives every link's; write it once",
                file.display(),
                l.a.get_ref(),
                l.b.get_ref()
            );
        }
        for (a, b, mbps) in &d.links {
            let mut hit = false;
            for l in t
                .links
                .iter_mut()
                .filter(|l| l.a.get_ref() == a && l.b.get_ref() == b)
            {
                l.rate_mbps = Some(*mbps);
                hit = true;
            }
            ensure!(
                hit,
                "{}: [scale] links: {a} - {b}: no such link in {}",
                path.display(),
                file.display()
            );
        }
    }
    for o in &e.links {
        let (a, b) = (o.a.get_ref(), o.b.get_ref());
        let mut hit = false;
        for l in t
            .links
            .iter_mut()
            .filter(|l| l.a.get_ref() == a && l.b.get_ref() == b)
        {
            l.take_settings(o);
            hit = true;
        }
        ensure!(
            hit,
            "{}:{}: links: {a} - {b}: no such link in {}",
            path.display(),
            line_at(text, o.a.span().start),
            file.display()
        );
    }
    t.injects
        .extend(e.inject.iter().chain(&run.inject).cloned());
    if let Some(n) = e.hosts {
        t.keep_hosts(n as usize);
    }
    Ok((file, src, t))
}
