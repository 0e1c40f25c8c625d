//! What scripts ask of an experiment file (`rxecc experiment`): a run's
//! topology, rate, knobs, or any key's value.

use super::*;

/// The run labelled `label` of an experiment file.
pub(crate) fn find_run<'a>(e: &'a Experiment, path: &Path, label: &str) -> Result<&'a Run> {
    e.runs.iter().find(|r| r.label == label).with_context(|| {
        format!(
            "{} has no run '{label}' (it has {})",
            path.display(),
            e.runs
                .iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `rxecc experiment topology`: the topology one run brings up.
pub fn run_topology(path: &Path, label: &str) -> Result<String> {
    let e = load(path)?;
    find_run(&e, path, label)?;
    let sc = e.scenario(label)?;
    Ok(format!(
        "# {}, run {label}: {} with the run's settings (rxecc experiment topology)\n{}",
        path.display(),
        sc.file.display(),
        sc.text
    ))
}

/// The experiment and the topology one of its runs brings up, parsed and
/// checked, with the run's settings merged in (for `rxecc model`).
pub fn run_built(path: &Path, label: &str) -> Result<(Experiment, topology::Built)> {
    let e = load(path)?;
    find_run(&e, path, label)?;
    let built = e.scenario(label)?.built.clone();
    Ok((e, built))
}

/// `rxecc experiment get`: the value at a dotted key of a checked
/// experiment file (an array's item by its index: `events.1.t_s`); an
/// array's items as space-separated words.
pub fn get(path: &Path, key: &str) -> Result<String> {
    let e = load(path)?;
    let text = std::fs::read_to_string(path)?;
    let mut v: toml::Value = toml::from_str(&text)?;
    // The rates the topology gives (resolve_rates) and what [scale]
    // derives, where the file has none.
    let mut set = |table: &str, k: &str, x: u64| {
        if let Some(toml::Value::Table(t)) = v.get_mut(table) {
            t.insert(k.into(), toml::Value::Integer(x as i64));
        }
    };
    if let Some(r) = &e.report {
        set("report", "capacity_mbps", r.capacity_mbps);
        set("report", "period_us", r.period_us);
    }
    if let Some(Workload::Poisson {
        rate_mbps: Some(x), ..
    }) = &e.workload
    {
        set("workload", "rate_mbps", *x);
    }
    for part in key.split('.') {
        let keys = |t: &toml::Table| t.keys().cloned().collect::<Vec<_>>().join(", ");
        v = match v {
            toml::Value::Table(mut t) => match t.remove(part) {
                Some(x) => x,
                None => bail!(
                    "{}: no '{part}' in '{key}' (there: {})",
                    path.display(),
                    keys(&t)
                ),
            },
            // An array's item by its index from 0 (`events.1.t_s`).
            toml::Value::Array(mut a) => match part.parse::<usize>() {
                Ok(i) if i < a.len() => a.swap_remove(i),
                _ => bail!(
                    "{}: '{key}': '{part}': an index from 0 to {}",
                    path.display(),
                    a.len().saturating_sub(1)
                ),
            },
            _ => bail!("{}: '{key}': '{part}' is below a value", path.display()),
        };
    }
    let word = |x: &toml::Value| match x {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Table(_) | toml::Value::Array(_) => {
            bail!("{}: '{key}' holds tables, not values", path.display())
        }
        x => Ok(x.to_string()),
    };
    match &v {
        toml::Value::Array(a) => Ok(a.iter().map(word).collect::<Result<Vec<_>>>()?.join(" ")),
        toml::Value::Table(t) => bail!(
            "{}: '{key}' is a table; name one of its keys: {}",
            path.display(),
            t.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        x => word(x),
    }
}

/// `rxecc experiment rate`: the fastest link of a run's topology, Mb/s.
pub fn run_rate_mbps(path: &Path, label: &str) -> Result<u64> {
    let (_, built) = run_built(path, label)?;
    let t = &built.topo;
    t.links
        .iter()
        .map(|l| l.rate_mbps.unwrap_or(t.defaults.rate_mbps))
        .max()
        .context("the topology has no link")
}

/// `rxecc experiment knobs`: a run's rxe_cc parameters, cc first.
pub fn run_knobs(path: &Path, label: &str) -> Result<Vec<String>> {
    let e = load(path)?;
    let run = find_run(&e, path, label)?;
    ensure!(
        run.rxe.has_cc(),
        "{}: run {label} is on the {} rdma_rxe: no rxe_cc, no knobs",
        path.display(),
        run.rxe.name()
    );
    let mut v = vec![format!("cc={}", run.cc)];
    for (k, x) in &run.knobs {
        v.push(format!("{k}={}", value_text(x)?));
    }
    Ok(v)
}

pub(crate) fn value_text(v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => u8::from(*b).to_string(),
        _ => bail!("knob value {v}: an integer, a string or a boolean"),
    })
}
