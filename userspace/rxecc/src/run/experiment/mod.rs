//! `rxecc run`: an experiment file (crate::config::experiment) on the
//! testbed guest, with rdma_rxe (patched) and rxe_cc loaded. Each run sets
//! rxe_cc's `cc` and knobs through sysfs, brings the topology up with the
//! run's switch settings, replays the flow file with flowgen on every
//! host (or with perftest pairs, run/perftest.rs), and takes the topology
//! down (`one.rs`); at the end, the summary, the metrics and the slowdown
//! table, from what each run returned.

mod live;
mod metrics;
mod one;
mod qlen;
mod regime;

#[cfg(test)]
pub(crate) use metrics::parse_totals;
pub(crate) use metrics::CpuUse;
pub use metrics::Engagement;

use crate::config::experiment::{find, find_run, load, Experiment, Run, Workload};
use crate::config::{scale, workload};
use crate::modules::{self, Rxe};
use crate::report::fct;
use crate::run::fidelity::{self, Fidelity};
use anyhow::{bail, ensure, Context, Result};
use one::{run_one, RunOutcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `rxecc run`'s command line changes in the file.
#[derive(Debug, Default)]
pub struct Overrides {
    /// Only these runs, by label.
    pub runs: Option<Vec<String>>,
    /// Every flow's verbs operation.
    pub op: Option<String>,
    /// The file's `timeout_s`.
    pub timeout_s: Option<u64>,
    /// The file's `repetitions`.
    pub repetitions: Option<u32>,
    /// An incast workload's QPs per sender.
    pub qps: Option<u32>,
    /// Fail if an `[[expect]]` of the runs made is missed.
    pub check: bool,
}

/// One run as made: its label (with its repetition), its directory, and
/// what it measured.
struct Made {
    label: String,
    dir: PathBuf,
    outcome: RunOutcome,
}

/// `rxecc run`: every run of the experiment, `repetitions` times, into
/// `out`; prints the summary and the slowdown table. Fails if any flow
/// did not complete.
pub fn run(path: &Path, out: &Path, o: &Overrides) -> Result<()> {
    let e = with_overrides(load(path)?, path, o)?;
    ensure!(
        Path::new("/sys/module/rdma_rxe").exists(),
        "rdma_rxe is not loaded (load the patched one: tb_load_rxe patched)"
    );
    let knobs = modules::KnobGuard::save()?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    // The flow file, written once: every run replays the same flows.
    let flows_file = out.join("flows.txt");
    let Some(workload) = &e.workload else {
        bail!(
            "{}: no [workload]: it names settings for `rxecc experiment topology|knobs`, not a run",
            path.display()
        );
    };
    ensure!(
        o.qps.is_none() || matches!(workload, Workload::Incast { .. }),
        "--qps: {} has no incast workload to split over QPs",
        path.display()
    );
    let flows = flows_of(&e, workload, path, &flows_file, o.qps)?;
    ensure!(!flows.is_empty(), "the workload has no flows");
    let offered = regime::offered_load(&e, workload, &flows)?;
    let regime = regime_of(&e, path, out, &flows)?;
    let base_rtt_ns = match e.base_rtt_us {
        Some(us) if us >= 0.0 && us.is_finite() => (us * 1000.0) as u64,
        Some(_) => bail!("base_rtt_us must be a non-negative number"),
        None if e.slowdown_table => regime::measure_base_rtt(&e, path, out)?,
        // No slowdowns asked for: fct.txt's standalone FCT counts the
        // serialisation alone (docs/workloads.md).
        None => 0,
    };
    let made = run_all(&e, &flows_file, &flows, out, base_rtt_ns, &knobs)?;
    let sums = summarise(&e, out, &made, &flows, &offered, base_rtt_ns)?;
    let fidelity: Vec<(String, Fidelity)> = made
        .iter()
        .map(|m| {
            let t_us = e.derived.as_ref().and_then(|d| d.t_us);
            let r = &m.outcome;
            let f = Fidelity::of(r.cpu.as_ref(), r.totals.as_ref(), t_us);
            (m.label.clone(), f)
        })
        .collect();
    write_engagement(&e, out, &made)?;
    if !e.capture.is_empty() {
        let table = check_table(&made);
        print!("{table}");
        std::fs::write(out.join("check.txt"), &table)?;
    }
    write_summary_json(out, &sums, regime.as_ref(), &fidelity)?;
    if let Some(r) = &regime {
        print!("{}", r.table());
        print!("{}", fidelity::table(&fidelity));
    }
    let unfaithful: Vec<String> = fidelity
        .iter()
        .flat_map(|(label, f)| f.flags().into_iter().map(move |w| format!("{label}: {w}")))
        .collect();
    for w in &unfaithful {
        eprintln!("rxecc run: WARNING: {w}");
    }
    if let Some(r) = &e.report {
        let setup = crate::report::Setup {
            capacity_bps: r.capacity_mbps.saturating_mul(1_000_000),
            bottleneck: r.bottleneck.clone(),
            period_ns: r.period_us.saturating_mul(1000),
        };
        // The recorder's CSVs: another process's output.
        let recs: Vec<(String, PathBuf)> = made
            .iter()
            .map(|m| (m.label.clone(), m.dir.join("rec")))
            .collect();
        let (table, loaded) =
            crate::report::compare(&recs, &setup, Some(&out.join("report.json")))?;
        crate::report::plot::plot_runs(&loaded, &setup, &out.join("plots"))?;
        print!("{table}");
        std::fs::write(out.join("table.txt"), &table)?;
    }
    let mut missed = judge_expects(&e, out)?;
    if let Some(r) = &regime {
        missed.extend(unfaithful.iter().map(|w| format!("emulator: {w}")));
        for g in r.unexplained() {
            missed.push(format!(
                "regime: {} is {:+.0}% off the paper's ({:.3} against {:.3})",
                g.group,
                g.off * 100.0,
                g.testbed,
                g.paper
            ));
        }
    }
    ensure!(
        !o.check || missed.is_empty(),
        "expectations missed (expect.txt, regime.txt): {}",
        missed.join("; ")
    );
    let incomplete: Vec<&str> = made
        .iter()
        .zip(run_labels(&e))
        .filter(|(m, r)| m.outcome.fct.len() < n_flows_of(&e, r, &flows))
        .map(|(m, _)| m.label.as_str())
        .collect();
    if e.slowdown_table {
        write_slowdowns(&e, out, &made)?;
    }
    ensure!(
        incomplete.is_empty(),
        "not every flow completed in {incomplete:?}"
    );
    Ok(())
}

/// The file as the command line changes it.
fn with_overrides(mut e: Experiment, path: &Path, o: &Overrides) -> Result<Experiment> {
    if let Some(op) = &o.op {
        e.op.clone_from(op);
    }
    if let Some(t) = o.timeout_s {
        e.timeout_s = t;
    }
    if let Some(n) = o.repetitions {
        ensure!(n >= 1, "repetitions must be at least 1");
        e.repetitions = n;
    }
    if let Some(only) = &o.runs {
        for l in only {
            find_run(&e, path, l).context("--runs")?;
        }
        e.runs.retain(|r| only.contains(&r.label));
    }
    Ok(e)
}

/// The workload's flows, written to `flows_file` as every run replays
/// them: a scale model's flow file scaled from its paper's units, a
/// Poisson workload generated on each host's own link, an incast's
/// rounds (`qps`: the command line's QPs per sender).
fn flows_of(
    e: &Experiment,
    workload: &Workload,
    path: &Path,
    flows_file: &Path,
    qps: Option<u32>,
) -> Result<Vec<workload::Flow>> {
    let base = path.parent().unwrap_or(Path::new("."));
    let flows = match workload {
        Workload::File { flows } => {
            let p = base.join(flows);
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            let mut f = workload::parse(&p.display().to_string(), &text)?;
            // A scale model's flow file is in its paper's units; any
            // other is replayed as written.
            match e.scale.as_ref().map(|p| p.scale()) {
                Some(s) => {
                    workload::scale_flows(&mut f, s.k_t, s.k_b);
                    std::fs::write(flows_file, workload::to_text(&f))?;
                }
                None => std::fs::write(flows_file, &text)?,
            }
            return Ok(f);
        }
        Workload::Poisson {
            cdf,
            load,
            rate_mbps,
            duration_s,
            size_div,
            size_mul,
            seed,
        } => {
            let cdf = workload::Cdf::load(&find(base, cdf, "testbed/workloads")?)?;
            // Each host's own link, as the first run brings the topology
            // up; a plain bridge's hosts (no rate) the workload's or the
            // topology's default.
            let built = &e.scenario(&e.runs[0].label)?.built;
            let n = e.hosts.unwrap_or(built.topo.hosts.len() as u32) as usize;
            let rates: Vec<u64> = (0..n)
                .map(|h| {
                    built
                        .host_rate_mbps(h)
                        .or(*rate_mbps)
                        .unwrap_or(built.topo.defaults.rate_mbps)
                })
                .collect();
            workload::Poisson {
                cdf: &cdf,
                rates_mbps: &rates,
                load: *load,
                duration_s: *duration_s,
                size_factor: size_mul.unwrap_or(1.0) / *size_div as f64,
                seed: *seed,
            }
            .generate()?
        }
        Workload::Incast {
            senders,
            receiver,
            size,
            qps: file_qps,
            period_s,
            rounds,
        } => {
            let qps = qps.unwrap_or(*file_qps);
            workload::incast(senders, *receiver, *size, qps, *period_s, *rounds)?
        }
    };
    std::fs::write(flows_file, workload::to_text(&flows))?;
    Ok(flows)
}

/// A scale model's regime, printed and written (regime.json, regime.txt)
/// with a warning for each group off the paper's that [scale] unkept does
/// not explain; None, said, for an experiment that is not a scale model.
fn regime_of(
    e: &Experiment,
    path: &Path,
    out: &Path,
    flows: &[workload::Flow],
) -> Result<Option<scale::Regime>> {
    let Some(p) = &e.scale else {
        eprintln!("rxecc run: regime: not a scale model (no [scale]): its groups are not compared with a paper's");
        return Ok(None);
    };
    let r = regime::scaled_regime(e, p, path, out, flows)?;
    eprint!("{}", r.table());
    for c in &e.derived.as_ref().map_or(Vec::new(), |d| d.coarse.clone()) {
        eprintln!(
            "rxecc run: WARNING: knob {} wants {:.3} in its units, and can only be set to {}",
            c.0, c.1, c.2
        );
    }
    let bad = r.unexplained();
    if !bad.is_empty() {
        eprintln!(
            "rxecc run: WARNING: not a faithful scale model: {} more than {:.0}% off the paper's, and [scale] unkept does not say why",
            bad.iter().map(|g| g.group.as_str()).collect::<Vec<_>>().join(", "),
            scale::TOLERANCE * 100.0
        );
    }
    std::fs::write(out.join("regime.json"), serde_json::to_string_pretty(&r)?)?;
    std::fs::write(out.join("regime.txt"), r.table())?;
    Ok(Some(r))
}

/// How many flows run `r` replays: its own flow file's, or the workload's.
fn n_flows_of(e: &Experiment, r: &Run, flows: &[workload::Flow]) -> usize {
    e.scenario(&r.label)
        .ok()
        .and_then(|sc| sc.flows.as_ref().map(|(_, f)| f.len()))
        .unwrap_or(flows.len())
}

/// Every run, `repetitions` times, each with its knobs and rdma_rxe's
/// parameters put back after it; the caller's rdma_rxe build (and
/// rxe_cc's knobs) back when the runs end, however they end.
fn run_all(
    e: &Experiment,
    flows_file: &Path,
    flows: &[workload::Flow],
    out: &Path,
    base_rtt_ns: u64,
    knobs: &modules::KnobGuard,
) -> Result<Vec<Made>> {
    let total = e.runs.len() as u32 * e.repetitions;
    let mut k = 0;
    let mut made = Vec::new();
    let caller = modules::loaded_rxe().unwrap_or(Rxe::Patched);
    let mut loaded = caller;
    let mut runs = || -> Result<()> {
        for rep in 1..=e.repetitions {
            for r in &e.runs {
                if r.rxe != loaded {
                    eprintln!("rxecc run: rdma_rxe: the {} build", r.rxe.name());
                    modules::switch_rxe(r.rxe)?;
                    loaded = r.rxe;
                }
                k += 1;
                let label = if e.repetitions > 1 {
                    format!("{}-{rep}", r.label)
                } else {
                    r.label.clone()
                };
                let dir = out.join(&label);
                let n_flows = n_flows_of(e, r, flows);
                eprintln!(
                    "rxecc run: [{k}/{total}] {label}: cc={}{}, {} flows ...",
                    r.cc,
                    if r.rxe == Rxe::Patched {
                        String::new()
                    } else {
                        format!(" on the {} rdma_rxe", r.rxe.name())
                    },
                    n_flows
                );
                let t0 = Instant::now();
                let rxe_was = modules::set_rxe_params(&r.rxe_params)?;
                let res = e.scenario(&r.label).and_then(|sc| {
                    let (ff, fl) = sc
                        .flows
                        .as_ref()
                        .map_or((flows_file, flows), |(p, f)| (p.as_path(), f.as_slice()));
                    run_one(e, r, sc, ff, fl, &dir, base_rtt_ns)
                });
                knobs.restore();
                modules::set_rxe_params(&rxe_was)?;
                let outcome = res.with_context(|| format!("run {label}"))?;
                eprintln!(
                    "rxecc run: [{k}/{total}] {label}: {} of {n_flows} flows completed in {:.0} s",
                    outcome.fct.len(),
                    t0.elapsed().as_secs_f64()
                );
                made.push(Made {
                    label,
                    dir,
                    outcome,
                });
            }
        }
        Ok(())
    };
    let ran = runs();
    if loaded != caller {
        eprintln!(
            "rxecc run: rdma_rxe: the {} build, with rxe_cc, again",
            caller.name()
        );
        modules::switch_rxe(caller)?;
        knobs.restore();
    }
    ran?;
    Ok(made)
}

/// Every run at a glance (FCT tails, pauses and drops), printed and
/// written (summary.txt, offered_load.json), and the named metrics'
/// spread across repetitions (metrics.txt, metrics.json).
fn summarise(
    e: &Experiment,
    out: &Path,
    made: &[Made],
    flows: &[workload::Flow],
    offered: &[workload::LinkLoad],
    base_rtt_ns: u64,
) -> Result<Vec<fct::RunSummary>> {
    let mut sums = Vec::new();
    for (m, run) in made.iter().zip(run_labels(e)) {
        let r = &m.outcome;
        let drops_of = |ports: &[crate::switch::PortStats]| ports.iter().map(|p| p.drops).sum();
        let drops: u64 = drops_of(&r.ports);
        // A released deadlock: the drops until then are the switch's, the
        // rest flow control off's.
        let locked_drops: Option<u64> = r.locked.as_deref().map(drops_of);
        let violations = r.ports.iter().map(|p| p.rate_violations).sum();
        let mut s = fct::RunSummary::new(
            &m.label,
            &r.fct,
            r.pauses,
            locked_drops.unwrap_or(drops),
            base_rtt_ns,
            violations,
        );
        s.drops_after_release = locked_drops.map(|l| drops.saturating_sub(l));
        s.deadlocks = r.deadlocks;
        let sc = e.scenario(&run.label)?;
        let rates = sc.built.port_rates_mbps();
        s.named = metrics::named_metrics(&e.metrics, r, n_flows_of(e, run, flows), &rates)
            .with_context(|| format!("[metrics] of run {}", m.label))?;
        sums.push(s);
    }
    let mut table = fct::summary_table(&sums);
    if let Some(line) = regime::offered_line(offered) {
        table.push_str(&line);
        table.push('\n');
    }
    print!("{table}");
    std::fs::write(out.join("summary.txt"), &table)?;
    std::fs::write(
        out.join("offered_load.json"),
        serde_json::to_string_pretty(&offered)?,
    )?;
    if !e.metrics.is_empty() && (e.repetitions > 1 || e.metrics.baseline.is_some()) {
        let samples: Vec<(&str, &BTreeMap<String, Option<f64>>)> = run_labels(e)
            .into_iter()
            .zip(&sums)
            .map(|(r, s)| (r.label.as_str(), &s.named))
            .collect();
        let (table, rows) =
            crate::report::spread::across_runs(&samples, e.metrics.baseline.as_deref());
        print!("{table}");
        std::fs::write(out.join("metrics.txt"), &table)?;
        std::fs::write(
            out.join("metrics.json"),
            serde_json::to_string_pretty(&rows)?,
        )?;
    }
    Ok(sums)
}

/// Whether each run's algorithm acted, a line each and engagement.json;
/// a warning for one that never did, where the file expects signals.
fn write_engagement(e: &Experiment, out: &Path, made: &[Made]) -> Result<()> {
    let mut engaged = Vec::new();
    for (m, r) in made.iter().zip(run_labels(e)) {
        let verdict = Engagement::judge(&r.cc, m.outcome.totals.as_ref());
        let line = verdict.line(&m.label, &r.cc);
        if verdict.engaged == Some(false) && e.expect_signals {
            eprintln!("rxecc run: WARNING: {line}");
        }
        println!("{line}");
        engaged.push(serde_json::json!({
            "run": m.label,
            "cc": r.cc,
            "engaged": verdict.engaged,
            "signals": verdict.signals,
        }));
    }
    std::fs::write(
        out.join("engagement.json"),
        serde_json::to_string_pretty(&engaged)?,
    )?;
    Ok(())
}

/// summary.json: every run's summary with the regime it ran in and how
/// faithfully the emulator ran it.
fn write_summary_json(
    out: &Path,
    sums: &[fct::RunSummary],
    regime: Option<&scale::Regime>,
    fidelity: &[(String, Fidelity)],
) -> Result<()> {
    let mut summary = serde_json::to_value(sums)?;
    if let Some(runs) = summary.as_array_mut() {
        let objs = runs.iter_mut().filter_map(|v| v.as_object_mut());
        for (run, (_, f)) in objs.zip(fidelity) {
            if let Some(r) = regime {
                run.insert("regime".into(), serde_json::to_value(r)?);
            }
            run.insert("fidelity".into(), serde_json::to_value(f)?);
        }
    }
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    Ok(())
}

/// The slowdown table of every run (slowdown.txt) and its plots.
fn write_slowdowns(e: &Experiment, out: &Path, made: &[Made]) -> Result<()> {
    let all: Vec<_> = made
        .iter()
        .map(|m| {
            (
                m.label.clone(),
                fct::buckets(&m.outcome.fct, fct::Kind::All, e.step, None),
            )
        })
        .collect();
    let raw: Vec<(String, Vec<fct::Fct>)> = made
        .iter()
        .map(|m| (m.label.clone(), m.outcome.fct.clone()))
        .collect();
    let table = fct::table(&all, e.step);
    print!("{table}");
    std::fs::write(out.join("slowdown.txt"), &table)?;
    std::fs::create_dir_all(out.join("plots"))?;
    crate::report::plot::plot_fct(&all, &raw, fct::Kind::All, &out.join("plots"))
}

/// Judges the file's `[[expect]]` entries whose runs were all made
/// against the runs' metrics (report.json and summary.json), prints the
/// table and writes it (`expect.txt`, `expect.json`); returns the ones
/// missed.
fn judge_expects(e: &Experiment, out: &Path) -> Result<Vec<String>> {
    let made: Vec<&String> = e.runs.iter().map(|r| &r.label).collect();
    let expects: Vec<crate::config::claim::Claim> = e
        .expects
        .iter()
        .filter(|x| x.runs().all(|r| made.contains(&r)))
        .cloned()
        .collect();
    if expects.is_empty() {
        return Ok(Vec::new());
    }
    let report = crate::run::paper::metrics_of(out)?;
    let verdicts = crate::run::paper::judge_claims(&expects, &report)?;
    let table = crate::run::paper::verdict_table(&verdicts, "expectation", "bound");
    print!("{table}");
    std::fs::write(out.join("expect.txt"), &table)?;
    std::fs::write(
        out.join("expect.json"),
        serde_json::to_string_pretty(&verdicts)?,
    )?;
    Ok(verdicts
        .iter()
        .filter(|v| !v.met)
        .map(|v| v.says.clone())
        .collect())
}

/// The runs in the order `run` ran them (each repetition in turn).
fn run_labels(e: &Experiment) -> Vec<&Run> {
    (0..e.repetitions).flat_map(|_| e.runs.iter()).collect()
}

/// Every run's captures, judged: one row per run and port, with the
/// packets the switch's injection rules acted on in the run.
fn check_table(made: &[Made]) -> String {
    let mut rows = Vec::new();
    for m in made {
        let injected: u64 = m
            .outcome
            .ports
            .iter()
            .map(|p| {
                p.injected_drops
                    + p.injected_marks
                    + p.injected_corrupts
                    + p.injected_dups
                    + p.injected_delays
                    + p.injected_reorders
            })
            .sum();
        for (dev, rep) in &m.outcome.checks {
            rows.push((m.label.clone(), dev.clone(), injected, rep.clone()));
        }
    }
    crate::report::check::run_table(&rows)
}
