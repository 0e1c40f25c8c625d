//! Loading an experiment file: parsed, checked against rxe_cc's tables
//! and the topology, with [scale] applied and the link rates resolved.

use super::*;
use crate::config::lines::{line_at, Lines};

/// Parses and checks an experiment file.
pub fn load(path: &Path) -> Result<Experiment> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut e: Experiment = toml::from_str(&text).map_err(|err| {
        let line = err.span().map(|s| line_at(&text, s.start)).unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", path.display(), err.message())
    })?;
    ensure!(!e.runs.is_empty(), "{}: no [[run]]", path.display());
    apply_scale(&mut e, path, &text)?;
    let lines = Lines::new(&text);
    for (k, v) in &e.knobs {
        let line = lines.of(&["knobs", k]);
        check_knob(k, v).map_err(|m| anyhow::anyhow!("{}:{line}: knobs: {m}", path.display()))?;
    }
    ensure!(
        e.ack_timeout.is_none_or(|t| (1..=31).contains(&t)),
        "{}: ack_timeout = {}: an exponent from 1 to 31 (4.096 us x 2^N)",
        path.display(),
        e.ack_timeout.unwrap_or(0)
    );
    ensure!(
        e.settle_s.is_finite() && (0.0..=600.0).contains(&e.settle_s),
        "{}: settle_s = {}: 0 to 600 seconds",
        path.display(),
        e.settle_s
    );
    ensure!(
        e.rate_mbps != Some(0),
        "{}: rate_mbps = 0: a link needs a rate",
        path.display()
    );
    for r in &e.runs {
        ensure!(
            r.rate_mbps != Some(0),
            "{}: run {}: rate_mbps = 0: a link needs a rate",
            path.display(),
            r.label
        );
    }
    for r in &mut e.runs {
        let mut all = e.events.clone();
        all.append(&mut r.events);
        // Stable: at one time, the experiment's first.
        all.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        r.events = all;
    }
    for r in e.runs.iter_mut().filter(|r| r.rxe.has_cc()) {
        for (k, v) in &e.knobs {
            r.knobs.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for r in e
        .runs
        .iter_mut()
        .filter(|r| r.rxe != crate::modules::Rxe::Stock)
    {
        for (k, v) in &e.rxe_params {
            r.rxe_params.entry(k.clone()).or_insert(*v);
        }
    }
    ensure!(
        ["write", "send", "read"].contains(&e.op.as_str()),
        "{}: op '{}': write, send or read",
        path.display(),
        e.op
    );
    let flowgen_send = e.op == "send" && e.runs.iter().any(|r| e.traffic_of(r) == Traffic::Flowgen);
    ensure!(
        e.message_bytes.is_none_or(|b| b > 0 && !flowgen_send),
        "{}: message_bytes = {}: above 0, with op write or read (a SEND needs a receive per message)",
        path.display(),
        e.message_bytes.unwrap_or(0)
    );
    if let Some(r) = &e.report {
        ensure!(
            e.record_interval_ms > 0,
            "{}: [report] needs the runs recorded (record_interval_ms = 20, say)",
            path.display()
        );
        ensure!(
            r.period_us > 0 && !r.bottleneck.is_empty(),
            "{}: [report]: period_us above 0, and a bottleneck port",
            path.display()
        );
    }
    ensure!(
        e.repetitions >= 1,
        "{}: repetitions must be at least 1",
        path.display()
    );
    // `<run>-<k>` names repetition k of <run> (--repetitions, rxecc
    // paper): no label may read as one of another's.
    for a in &e.runs {
        for b in &e.runs {
            ensure!(
                !is_repetition_of(&b.label, &a.label),
                "{}: run label '{}' reads as a repetition of run '{}' (rename one)",
                path.display(),
                b.label,
                a.label
            );
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in &e.runs {
        ensure!(
            !r.label.is_empty()
                && r.label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{}: run label '{}': use letters, digits, '-' or '_'",
            path.display(),
            r.label
        );
        ensure!(
            seen.insert(&r.label),
            "{}: run label '{}' twice",
            path.display(),
            r.label
        );
        // The algorithm and knobs against the module's own tables
        // (cc_core), here on the host rather than at a sysfs write in the
        // guest: a name, its line, and what is valid.
        let at = |path: &[&str]| lines.run(&r.label, path);
        ensure!(
            r.rxe.has_cc() || (r.cc == "none" && r.knobs.is_empty()),
            "{}:{}: run {}: the {} rdma_rxe has no rxe_cc: cc = \"none\" and no knobs",
            path.display(),
            at(&["rxe"]),
            r.label,
            r.rxe.name()
        );
        ensure!(
            cc_core::alg::AlgId::from_name(&r.cc).is_some(),
            "{}:{}: run {}: cc '{}' is not one of rxe_cc's: {}",
            path.display(),
            at(&["cc"]),
            r.label,
            r.cc,
            cc_core::alg::ALGS.map(|a| a.name()).join(", ")
        );
        for (k, v) in &r.knobs {
            check_knob(k, v).map_err(|m| match at(&["knobs", k]) {
                // Not in the run's text: [scale] derived it.
                0 => anyhow::anyhow!(
                    "{}:{}: [scale] knobs, scaled to the testbed, for run {}: {m}",
                    path.display(),
                    lines.of(&["scale"]),
                    r.label
                ),
                line => anyhow::anyhow!("{}:{line}: run {}: {m}", path.display(), r.label),
            })?;
        }
        ensure!(
            r.rxe != crate::modules::Rxe::Stock
                || (r.rxe_params.is_empty() && e.rxe_params.is_empty()),
            "{}:{}: run {}: the stock rdma_rxe has no rxe_params",
            path.display(),
            at(&["rxe"]),
            r.label
        );
        for (k, v) in &r.rxe_params {
            crate::modules::check_rxe_param(k, *v).map_err(|m| {
                anyhow::anyhow!(
                    "{}:{}: run {}: rxe_params: {m}",
                    path.display(),
                    at(&["rxe_params", k]),
                    r.label
                )
            })?;
        }
        ensure!(
            r.deadlock_release_s
                .is_none_or(|s| s.is_finite() && s >= 0.0 && r.deadlock_release.is_some()),
            "{}:{}: run {}: deadlock_release_s: seconds (0 or more), with a deadlock_release",
            path.display(),
            at(&["deadlock_release_s"]),
            r.label
        );
        for ev in &r.events {
            let line = lines.event(&r.label, ev.t_s);
            let here = |m: String| {
                anyhow::anyhow!("{}:{line}: run {}: events: {m}", path.display(), r.label)
            };
            if !(ev.t_s.is_finite() && ev.t_s >= 0.0) {
                return Err(here(format!("t_s = {}: seconds from time 0", ev.t_s)));
            }
            if !r.rxe.has_cc() && !ev.knobs.is_empty() {
                return Err(here(format!(
                    "the {} rdma_rxe has no rxe_cc: no knobs",
                    r.rxe.name()
                )));
            }
            for (k, v) in &ev.knobs {
                check_knob(k, v).map_err(here)?;
            }
            for rule in &ev.inject {
                rule.validate().map_err(|m| here(format!("{m:#}")))?;
            }
        }
    }
    if let Some(b) = &e.metrics.baseline {
        find_run(&e, path, b).context("[metrics] baseline")?;
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let flows = match &e.workload {
        Some(Workload::File { flows }) => {
            let p = base.join(flows);
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("{}: reading {}", path.display(), p.display()))?;
            Some(workload::parse(&p.display().to_string(), &text)?)
        }
        _ => None,
    };
    let mut scenarios = Vec::new();
    for r in &e.runs {
        let sc = scenario_for(&e, r, path, &text)?;
        ensure!(
            r.flows.is_none() || e.workload.is_some(),
            "{}: run {}: its own flows, but the file has no [workload]",
            path.display(),
            r.label
        );
        for ev in &r.events {
            for dev in ev.inject.iter().map(|i| &i.port).chain(&ev.clear_inject) {
                ensure!(
                    sc.built.port(dev).is_some(),
                    "{}: run {}: events: no port '{dev}' in {}",
                    path.display(),
                    r.label,
                    sc.file.display()
                );
            }
        }
        // perftest's pairs from the flows, where the file gives them
        // (generated workloads are checked as they are generated).
        if e.traffic_of(r) == Traffic::Perftest {
            crate::config::perftest::tool(&e.op)
                .with_context(|| format!("{}: run {}", path.display(), r.label))?;
            let msg = e.perftest_message_bytes();
            if let Some(f) = sc.flows.as_ref().map(|(_, f)| f).or(flows.as_ref()) {
                crate::config::perftest::pairs(f, msg)
                    .with_context(|| format!("{}: run {}", path.display(), r.label))?;
            }
        }
        let n = sc.flows.as_ref().map(|(_, f)| f.len());
        if !e.metrics.is_empty() {
            e.metrics
                .check(&sc.built, n.or(flows.as_ref().map(Vec::len)))
                .with_context(|| format!("{}: run {}", path.display(), r.label))?;
        }
        scenarios.push(sc);
    }
    resolve_rates(&mut e, path, &text, &scenarios, flows.as_deref())?;
    e.scenarios = scenarios;
    let labels: Vec<String> = e.runs.iter().map(|r| r.label.clone()).collect();
    for (i, x) in e.expects.iter().enumerate() {
        x.check(&labels)
            .with_context(|| format!("{}: expect {} ('{}')", path.display(), i + 1, x.says))?;
    }
    Ok(e)
}

/// A knob's name and value against rxe_cc's table (cc_core): an error
/// that says what is valid.
pub(super) fn check_knob(k: &str, v: &toml::Value) -> std::result::Result<(), String> {
    if k == "cc" {
        return Err("knob 'cc' (set the algorithm with cc = ...)".into());
    }
    let Some(def) = cc_core::knobs::KNOBS.iter().find(|d| d.name == k) else {
        return Err(format!(
            "'{k}' is not a knob of rxe_cc; valid names: {}",
            cc_core::knobs::KNOBS.map(|d| d.name).join(", ")
        ));
    };
    if v.as_integer()
        .is_some_and(|n| n >= i64::from(def.min) && n <= i64::from(def.max))
    {
        return Ok(());
    }
    Err(format!(
        "{k} = {v}: an integer in [{}, {}] ({})",
        def.min, def.max, def.help
    ))
}
