//! `[scale]`: the paper's setting turned into the testbed's knobs,
//! switch settings and workload, each written once.

use super::*;
use crate::config::lines::Lines;

/// The T knobs `[scale] t_us` sets: each algorithm's control period.
pub(super) const T_KNOBS: [&str; 3] = ["acc_t_us", "hpcc_t_us", "icc_t_us"];

/// Derives the testbed's quantities from `[scale]` into the experiment,
/// refusing any that the file also writes in the testbed's units (both
/// places named).
pub(super) fn apply_scale(e: &mut Experiment, path: &Path, text: &str) -> Result<()> {
    let Some(p) = &e.scale else {
        ensure!(
            e.runs.iter().all(|r| r.paper_knobs.is_empty()),
            "{}: paper_knobs need a [scale]",
            path.display()
        );
        ensure!(
            !matches!(e.workload, Some(Workload::Incast { size: 0, .. })),
            "{}: [workload] size: bytes per sender (or [scale] flow_bytes)",
            path.display()
        );
        return Ok(());
    };
    let d = p
        .derive()
        .with_context(|| format!("{}: [scale]", path.display()))?;
    if let Some(r) = e.runs.iter().find(|r| r.flows.is_some()) {
        bail!(
            "{}: run {}: its own flow file is not scaled by [scale]; give the flows as the [workload]'s file, in the paper's units",
            path.display(),
            r.label
        );
    }
    let lines = Lines::new(text);
    let line = |path: &[&str]| lines.of(path);
    let scale_at = line(&["scale"]);
    let twice = |what: &str, from: &str, at: usize| -> anyhow::Error {
        anyhow::anyhow!(
            "{}:{at}: {what} is written in the testbed's units, and [scale] (line {scale_at}) gives it from {from}; write it once",
            path.display()
        )
    };
    if e.rate_mbps.is_some() {
        return Err(twice("rate_mbps", "link_gbps", line(&["rate_mbps"])));
    }
    e.rate_mbps = Some(d.rate_mbps);
    if let Some(r) = e.runs.iter().find(|r| r.rate_mbps.is_some()) {
        return Err(twice(
            &format!("run {}: rate_mbps", r.label),
            "link_gbps",
            lines.run(&r.label, &["rate_mbps"]),
        ));
    }
    for l in &e.links {
        if l.rate_mbps.is_some() {
            return Err(twice(
                &format!("links {} - {}: rate_mbps", l.a.get_ref(), l.b.get_ref()),
                "link_gbps and its links",
                lines.at(l.a.span().start),
            ));
        }
        if l.delay_us.is_some() {
            return Err(twice(
                &format!("links {} - {}: delay_us", l.a.get_ref(), l.b.get_ref()),
                "delay_us or base_rtt_us",
                lines.at(l.a.span().start),
            ));
        }
    }
    let sw_given = |o: &topology::SwitchOverlay| {
        [
            (o.xoff_bytes.is_some(), "xoff_bytes"),
            (o.xon_bytes.is_some(), "xon_bytes"),
            (o.buffer_bytes.is_some(), "buffer_bytes"),
        ]
    };
    for (given, name) in sw_given(&e.switch)
        .into_iter()
        .chain(e.runs.iter().flat_map(|r| sw_given(&r.switch)))
    {
        let from_scale = match name {
            "xoff_bytes" => d.xoff_bytes.is_some(),
            "xon_bytes" => d.xon_bytes.is_some(),
            _ => d.buffer_bytes.is_some(),
        };
        if given && from_scale {
            // The file's [switch], else the first run's that gives it.
            let at = std::iter::once(line(&["switch", name]))
                .chain(
                    e.runs
                        .iter()
                        .map(|r| lines.run(&r.label, &["switch", name])),
                )
                .find(|l| *l > 0)
                .unwrap_or(0);
            return Err(twice(&format!("switch {name}"), name, at));
        }
    }
    if let Some(x) = d.xoff_bytes {
        e.switch.xoff_bytes = Some(x);
    }
    if let Some(x) = d.xon_bytes {
        e.switch.xon_bytes = Some(x);
    }
    if let Some(x) = d.buffer_bytes {
        e.switch.buffer_bytes = Some(x);
    }
    let t_knobs: &[&str] = if d.t_us.is_some() { &T_KNOBS } else { &[] };
    let scaled: Vec<&str> = d
        .knobs
        .keys()
        .map(String::as_str)
        .chain(t_knobs.iter().copied())
        .collect();
    if let Some(k) = scaled.iter().find(|k| e.knobs.contains_key(**k)) {
        return Err(twice(
            &format!("knobs.{k}"),
            "the paper's value",
            line(&["knobs", k]),
        ));
    }
    let common_mark = e.switch.mark;
    let common_marks = e.switch.red.is_some() || e.switch.tcd.is_some();
    for r in &mut e.runs {
        let label = r.label.clone();
        let at = |path: &[&str]| lines.run(&label, path);
        let own = r.paper_knobs.keys().map(String::as_str);
        if let Some(k) = scaled
            .iter()
            .copied()
            .chain(own)
            .find(|k| r.knobs.contains_key(*k))
        {
            return Err(twice(
                &format!("run {}: knobs.{k}", r.label),
                "the paper's value",
                at(&["knobs", k]),
            ));
        }
        for (k, v) in &d.knobs {
            r.knobs.insert(k.clone(), toml::Value::Integer(*v as i64));
        }
        if let Some(t) = d.t_us {
            for k in T_KNOBS {
                r.knobs.insert(k.into(), toml::Value::Integer(t as i64));
            }
        }
        for (k, v) in &r.paper_knobs {
            ensure!(
                !d.knobs.contains_key(k),
                "{}:{}: run {}: paper_knobs.{k}, and [scale] knobs.{k} (line {scale_at}); write it once",
                path.display(),
                at(&["paper_knobs", k]),
                r.label
            );
            let want = p.knob(k, *v).with_context(|| {
                format!(
                    "{}:{}: run {}: paper_knobs",
                    path.display(),
                    at(&["paper_knobs", k]),
                    r.label
                )
            })?;
            r.knobs.insert(
                k.clone(),
                toml::Value::Integer(want.round().max(1.0) as i64),
            );
        }
        let mark = r.switch.mark.or(common_mark);
        if let (Some(MarkMode::Red), Some((kmin, kmax, pmax))) = (mark, d.red) {
            if r.switch.red.is_some() || common_marks {
                return Err(twice(
                    &format!("run {}: switch red", r.label),
                    "red",
                    at(&["switch", "red"]),
                ));
            }
            r.switch.red = Some(Some(topology::RedCfg {
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax_permille: pmax,
            }));
        }
        if let (Some(MarkMode::Tcd), Some((thresh, ton))) = (mark, d.tcd) {
            if r.switch.tcd.is_some() || common_marks {
                return Err(twice(
                    &format!("run {}: switch tcd", r.label),
                    "tcd",
                    at(&["switch", "tcd"]),
                ));
            }
            r.switch.tcd = Some(Some(topology::TcdCfg {
                thresh_bytes: thresh,
                max_ton_us: ton,
                stall_us: 0,
            }));
        }
    }
    if let (Some(rep), Some(t)) = (&mut e.report, d.t_us) {
        if rep.period_us != 0 {
            return Err(twice(
                "[report] period_us",
                "t_us",
                line(&["report", "period_us"]),
            ));
        }
        rep.period_us = t;
    }
    if let Some(Workload::Incast { size, .. }) = &mut e.workload {
        match (*size, d.flow_bytes) {
            (0, Some(b)) => *size = b,
            (0, None) => bail!(
                "{}: [workload] size: bytes per sender (or [scale] flow_bytes)",
                path.display()
            ),
            (_, Some(_)) => {
                return Err(twice(
                    "[workload] size",
                    "flow_bytes",
                    line(&["workload", "size"]),
                ))
            }
            _ => {}
        }
    }
    // A CDF's sizes are the paper's bytes: times k_b, as every byte.
    if let Some(Workload::Poisson {
        size_div, size_mul, ..
    }) = &mut e.workload
    {
        if *size_div != 1 {
            return Err(twice(
                "[workload] size_div",
                "mtu_bytes (k_b)",
                line(&["workload", "size_div"]),
            ));
        }
        if size_mul.is_some() {
            return Err(twice(
                "[workload] size_mul",
                "mtu_bytes (k_b)",
                line(&["workload", "size_mul"]),
            ));
        }
        *size_mul = Some(p.scale().k_b);
    }
    e.derived = Some(d);
    Ok(())
}
