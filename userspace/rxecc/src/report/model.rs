//! `rxecc model`: the cargo model (`cc-model`, which drives the kernel
//! module's own `cc_core` code) on an experiment's scenario, beside the
//! testbed's recording of the same runs (issue 16, docs/experiments.md,
//! "The model beside the testbed").
//!
//! For each run whose algorithm the model has (none, ACC, DCQCN, HPCC) it
//! prints the testbed's row and the model's, the model first on an ideal
//! network and then with the testbed's effects turned on one at a time,
//! each row keeping the ones above:
//! - `start skew`: the flows start when flowgen posted their first WRITE
//!   on the testbed;
//! - `late periods`: every period's end is late by a draw from the
//!   lateness the testbed's period timers showed;
//! - `late pacer`: every send that waits for its pacing time is late by a
//!   draw from the same (the pacer is an hrtimer too, and its send runs in
//!   the same send task);
//! - `PFC`: the switch's ingress ports pause their senders, with its XOFF,
//!   XON, refresh and τ.
//!
//! The model's metrics come from the same code as `rxecc report`'s, on the
//! same window (the last start to the first end), so that a row's
//! difference from the one above is that effect's cost.

use crate::config::experiment::{self, Workload};
use crate::report::{self, Flow, Metrics, PortSeries, Setup};
use crate::switch::MarkMode;
use anyhow::{bail, ensure, Context, Result};
use cc_core::acc::AccKnobs;
use cc_core::alg::MTU;
use cc_core::dcqcn::DcqcnKnobs;
use cc_core::fixed::tx_time_ns;
use cc_core::knobs::{Knob, KnobSource, KNOBS, NR_KNOBS};
use cc_model::{Algo, Config, Emulation, Marking, Pfc, Trace};
use std::collections::BTreeMap;
use std::path::Path;

/// A run's knobs: rxe_cc's defaults (`cc_core::knobs`, the module's own
/// table) with the experiment's settings; algorithms read them as the
/// module does, through `KnobSource`.
struct Knobs([u32; NR_KNOBS]);

impl Knobs {
    fn new(run: &experiment::Run) -> Result<Self> {
        let mut v = KNOBS.map(|k| k.default);
        for (name, value) in &run.knobs {
            let Some(def) = KNOBS.iter().find(|k| k.name == name.as_str()) else {
                bail!("run {}: rxe_cc has no knob {name}", run.label);
            };
            let Some(x) = value.as_integer().and_then(|x| u32::try_from(x).ok()) else {
                bail!(
                    "run {}: knob {name} = {value}: the model reads whole numbers only",
                    run.label
                );
            };
            ensure!(
                (def.min..=def.max).contains(&x),
                "run {}: knob {name} = {x} is outside {}..{}",
                run.label,
                def.min,
                def.max
            );
            v[def.knob as usize] = x;
        }
        Ok(Self(v))
    }
}

impl KnobSource for Knobs {
    fn get(&self, knob: Knob) -> u32 {
        self.0.get(knob as usize).copied().unwrap_or(0)
    }
}

/// One run of the experiment as the model sees it.
struct Scenario {
    label: String,
    cfg: Config,
    pfc: Option<Pfc>,
    /// The ingress port of each sender, and the bottleneck, as named on
    /// the testbed.
    sender_ports: Vec<String>,
}

fn scenario(path: &Path, label: &str, rtt_us: u64) -> Result<Option<Scenario>> {
    let (e, built) = experiment::run_built(path, label)?;
    let run = e
        .runs
        .iter()
        .find(|r| r.label == label)
        .context("no such run")?;
    let algo = match run.cc.as_str() {
        "none" => Algo::None,
        "acc" => Algo::Acc,
        "dcqcn" => Algo::Dcqcn,
        "hpcc" => Algo::Hpcc,
        _ => return Ok(None),
    };
    let Some(rep) = &e.report else {
        bail!("{}: the model needs a [report] section", path.display());
    };
    let Some(Workload::Incast {
        senders,
        receiver,
        size,
        qps,
        ..
    }) = &e.workload
    else {
        bail!("{}: the model runs incast workloads only", path.display());
    };
    ensure!(
        *qps == 1,
        "{}: the model takes one QP per sender (the workload has {qps})",
        path.display()
    );
    let knobs = Knobs::new(run)?;
    let sender_ports: Vec<String> = senders
        .iter()
        .map(|&h| {
            built
                .host_port(h as usize)
                .map(str::to_string)
                .with_context(|| format!("host h{h} has no switch port"))
        })
        .collect::<Result<_>>()?;
    ensure!(
        built.host_port(*receiver as usize) == Some(rep.bottleneck.as_str()),
        "{}: the model has one switch, whose port to the receiver is the bottleneck; [report] names {}",
        path.display(),
        rep.bottleneck
    );
    let first = built
        .port(&sender_ports[0])
        .context("the first sender's port")?;
    let line_bps = first.rate_mbps.saturating_mul(1_000_000);
    let period_ns = match algo {
        Algo::Hpcc => knobs.us_ns(Knob::HpccTUs),
        _ => knobs.us_ns(Knob::AccTUs),
    };
    let sw = built.topo.switches.first().context("no switch")?;
    let marking = match sw.mark {
        MarkMode::Tcd => Marking::Tcd {
            threshold_bytes: sw.tcd.as_ref().map_or(0, |t| t.thresh_bytes),
            max_ton_ns: sw
                .tcd
                .as_ref()
                .map_or(0, |t| t.max_ton_us.saturating_mul(1000)),
        },
        MarkMode::Red => {
            let r = sw.red.as_ref().context("RED without thresholds")?;
            Marking::Red {
                kmin: r.kmin_bytes,
                kmax: r.kmax_bytes,
                pmax_milli: u64::from(r.pmax_permille),
            }
        }
        _ => Marking::None,
    };
    let pfc = sw.pfc.then(|| Pfc {
        xoff_bytes: first.xoff_bytes,
        xon_bytes: first.xon_bytes,
        delay_ns: sw.tau_us.saturating_mul(1000),
        refresh_ns: sw.refresh_us.saturating_mul(1000),
    });
    let mut cfg = Config::new(algo, senders.len());
    cfg.line_rate_bps = line_bps;
    cfg.port_rate_bps = rep.capacity_mbps.saturating_mul(1_000_000);
    cfg.mtu = MTU;
    cfg.prop_rtt_ns = rtt_us.saturating_mul(1000);
    cfg.period_ns = period_ns;
    cfg.marking = marking;
    cfg.sizes_bytes = vec![*size; senders.len()];
    cfg.acc_knobs = Some(AccKnobs::from_knobs(&knobs));
    cfg.dcqcn_knobs = Some(DcqcnKnobs::from_knobs(&knobs));
    cfg.cnp_interval_ns = knobs.us_ns(Knob::MinTimeBetweenCnps);
    cfg.pacing_catchup_ns = knobs.us_ns(Knob::PacingCatchupUs);
    cfg.sample_ns = e.record_interval_ms.max(1).saturating_mul(1_000_000);
    // Long enough for the flows at a tenth of their fair share.
    let fair = cfg.port_rate_bps / senders.len().max(1) as u64;
    cfg.duration_ns = tx_time_ns(*size, (fair / 10).max(1)).max(1_000_000_000);
    Ok(Some(Scenario {
        label: label.to_string(),
        cfg,
        pfc,
        sender_ports,
    }))
}

/// A model trace as `rxecc report` loads a recording.
fn as_run(label: &str, t: &Trace, s: &Scenario) -> report::Run {
    let flows = (0..s.cfg.flows)
        .filter_map(|i| {
            let rate = t.rate_steps.get(i)?.clone();
            let start_ns = rate.first()?.0;
            let acked: Vec<(u64, u64)> = t
                .t_ns
                .iter()
                .zip(&t.acked_bytes)
                .map(|(ts, a)| (*ts, a.get(i).copied().unwrap_or(0)))
                .chain(t.end_ns[i].map(|e| (e, s.cfg.sizes_bytes[i])))
                .collect();
            Some(Flow {
                qp: format!("flow{i}"),
                rate,
                acked,
                window: Vec::new(),
                start_ns,
                end_ns: t.end_ns[i].unwrap_or(s.cfg.duration_ns),
            })
        })
        .collect();
    let mut ports = BTreeMap::new();
    let mut deq = 0u64;
    let bottleneck = PortSeries {
        samples: t
            .t_ns
            .iter()
            .enumerate()
            .map(|(k, ts)| (*ts, t.queue_bytes[k], t.queue_max_bytes[k], 0, 0, 0))
            .collect(),
        deq: t
            .t_ns
            .iter()
            .zip(&t.port_bytes)
            .map(|(ts, b)| {
                deq += b;
                (*ts, deq)
            })
            .collect(),
    };
    // The XOFFs, all on one ingress port's series: report sums them.
    let ingress = PortSeries {
        samples: t
            .t_ns
            .iter()
            .zip(&t.pauses)
            .map(|(ts, p)| (*ts, 0, 0, 0, *p, 0))
            .collect(),
        deq: Vec::new(),
    };
    ports.insert(s.sender_ports.first().cloned().unwrap_or_default(), ingress);
    ports.insert("bottleneck".to_string(), bottleneck);
    let halts = t
        .halts
        .iter()
        .filter_map(|h| {
            let actual = h.actual_ns?;
            Some(report::Halt {
                qp: format!("flow{}", h.flow),
                t_ns: h.at_ns + actual,
                halted_ns: actual,
                planned_ns: h.planned_ns,
            })
        })
        .collect();
    report::Run {
        label: label.to_string(),
        flows,
        ports,
        halts,
        deadlocks: Vec::new(),
    }
}

/// What the testbed's recording of a run gives the model.
struct Measured {
    metrics: Metrics,
    /// Each flow's start after the first's, ns.
    starts_ns: Vec<u64>,
}

/// `dir` is a run's directory from `rxecc run`: the recording in `rec/`,
/// and flowgen's record of when each flow's first WRITE was posted
/// (`flowgen-h<N>.csv`), which the recording's 20 ms samples cannot time.
fn measured(dir: &Path, label: &str, setup: &Setup) -> Result<Measured> {
    let run = report::load(label, &dir.join("rec"))?;
    let metrics = report::metrics(&run, setup)?;
    let recs = crate::report::fct::read_records(&crate::report::fct::record_files(dir)?)?;
    let first = recs.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let mut starts_ns: Vec<u64> = recs.iter().map(|r| r.start_ns - first).collect();
    starts_ns.sort_unstable();
    Ok(Measured { metrics, starts_ns })
}

/// How late the period timers of a recorded run processed their periods,
/// ns. Per QP, each rate event in `rates.csv` (one per period's end) lies
/// on its timer's grid of period T plus its lateness: the grid is exact
/// while the timer runs (hrtimer forwarding), so the events' offsets
/// modulo T, on a circle, fill an arc from "on time" onwards. The arc
/// starts after the widest empty stretch of the circle; each event's
/// lateness is its distance past that start. A gap of more than 1.5 T
/// starts a new grid (the timer stops on an idle QP); grids of fewer than
/// 5 events are left out, and so is each QP's first event (its start).
pub fn timer_lateness(rec: &Path, period_ns: u64) -> Result<Vec<u64>> {
    let p = rec.join("rates.csv");
    let mut rd = csv::Reader::from_path(&p).with_context(|| format!("reading {}", p.display()))?;
    let mut by_qp: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in rd.deserialize::<crate::testbed::record::RateRow>() {
        let r = r.with_context(|| format!("{}: a row", p.display()))?;
        by_qp.entry(r.qp).or_default().push(r.t_ns);
    }
    let mut late = Vec::new();
    for mut ts in by_qp.into_values() {
        ts.sort_unstable();
        let mut grid: Vec<u64> = Vec::new();
        for w in ts.windows(2).skip(1) {
            if grid.is_empty() {
                grid.push(w[0]);
            }
            if w[1] - w[0] > period_ns + period_ns / 2 {
                late.extend(grid_lateness(&grid, period_ns));
                grid.clear();
            }
            grid.push(w[1]);
        }
        late.extend(grid_lateness(&grid, period_ns));
    }
    Ok(late)
}

/// The lateness of events on one timer's grid (see `timer_lateness`).
pub fn grid_lateness(ts: &[u64], period_ns: u64) -> Vec<u64> {
    let t = period_ns.max(1);
    if ts.len() < 5 {
        return Vec::new();
    }
    let off: Vec<u64> = ts.iter().map(|&x| (x - ts[0]) % t).collect();
    let mut sorted = off.clone();
    sorted.sort_unstable();
    // The widest empty stretch, going round: the arc starts after it.
    let n = sorted.len();
    let (mut widest, mut start) = (sorted[0] + t - sorted[n - 1], sorted[0]);
    for w in sorted.windows(2) {
        if w[1] - w[0] > widest {
            widest = w[1] - w[0];
            start = w[1];
        }
    }
    off.iter().map(|&o| (o + t - start) % t).collect()
}

/// The testbed's round trip without queues under QEMU TCG, for an
/// experiment that is not a scale model: 1.64 ms median
/// (docs/experiments.md).
pub const TESTBED_RTT_US: u64 = 1640;

/// The propagation round trip the model takes for `e`: a scale model's
/// is its paper's path (both ways, every link's delay; the model
/// serialises packets itself) times k_t; else `TESTBED_RTT_US`.
pub fn prop_rtt_us(e: &experiment::Experiment) -> u64 {
    match &e.scale {
        Some(p) => {
            let prop = 2.0 * f64::from(p.path_links) * p.link_delay_us() * p.k_t;
            (prop.round() as u64).max(1)
        }
        None => TESTBED_RTT_US,
    }
}

/// The report's setup for the model's runs of `e`.
fn model_setup(e: &experiment::Experiment, path: &Path) -> Result<Setup> {
    let rep = e
        .report
        .as_ref()
        .with_context(|| format!("{}: no [report] section", path.display()))?;
    Ok(Setup {
        capacity_bps: rep.capacity_mbps.saturating_mul(1_000_000),
        bottleneck: "bottleneck".to_string(),
        period_ns: rep.period_us.saturating_mul(1000),
    })
}

/// The model on an ideal network (no start skew, exact timers, no PFC),
/// for each of `labels` whose algorithm it has: the run as `rxecc report`
/// loads a recording, and its metrics. What a recipe's claims are also
/// judged on, so that a miss on the testbed but not here is the
/// emulator's, and a miss here too the algorithm's or the paper's.
pub fn ideal(path: &Path, labels: &[String]) -> Result<(Vec<(report::Run, Metrics)>, Setup)> {
    let e = experiment::load(path)?;
    if !matches!(e.workload, Some(Workload::Incast { .. })) || e.report.is_none() {
        // The model runs recorded incasts only.
        return Ok((Vec::new(), Setup::default()));
    }
    let setup = model_setup(&e, path)?;
    let rtt_us = prop_rtt_us(&e);
    let mut out = Vec::new();
    for label in labels {
        let Some(s) = scenario(path, label, rtt_us)? else {
            continue;
        };
        let t = cc_model::run(&s.cfg);
        let run = as_run(label, &t, &s);
        let m = report::metrics(&run, &setup).with_context(|| format!("the model's {label}"))?;
        out.push((run, m));
    }
    Ok((out, setup))
}

/// `rxecc model`: the table for every run of `path` the model has, or for
/// `labels`; with `from` (the directory `rxecc run` wrote, with
/// `<label>/rec`), the testbed's row and its effects too. `rtt_us`: the
/// propagation round trip, [`prop_rtt_us`] unless given.
pub fn compare(
    path: &Path,
    from: Option<&Path>,
    labels: &[String],
    rtt_us: Option<u64>,
    late_from: Option<&str>,
) -> Result<String> {
    if let Some(d) = from {
        ensure!(
            d.is_dir(),
            "--from {}: no such directory (give the one `rxecc run` wrote)",
            d.display()
        );
    }
    let e = experiment::load(path)?;
    let rep = e
        .report
        .as_ref()
        .with_context(|| format!("{}: no [report] section", path.display()))?;
    let mut setup = model_setup(&e, path)?;
    let rtt_us = rtt_us.unwrap_or_else(|| prop_rtt_us(&e));
    let mut out = format!(
        "the model's propagation round trip: {rtt_us} us{}\n",
        if e.scale.is_some() && rtt_us == prop_rtt_us(&e) {
            " (the paper's path times k_t)"
        } else {
            ""
        }
    );
    let wanted: Vec<&experiment::Run> = e
        .runs
        .iter()
        .filter(|r| labels.is_empty() || labels.contains(&r.label))
        .collect();
    ensure!(
        !wanted.is_empty(),
        "{}: no run among {}",
        path.display(),
        labels.join(", ")
    );
    // The timers' lateness: from the run named (ACC's, whose period timer
    // ticks all along), for every algorithm.
    let mut late = Vec::new();
    if let Some(dir) = from {
        let src = late_from.unwrap_or("acc");
        if let Some(r) = e.runs.iter().find(|r| r.label == src) {
            let k = Knobs::new(r)?;
            let rec = dir.join(src).join("rec");
            if rec.exists() {
                late = timer_lateness(&rec, k.us_ns(Knob::AccTUs))?;
                late.sort_unstable();
                let percentile = |p| report::percentile(&late, p) as f64 / 1e6;
                out += &format!(
                    "timer lateness from {} ({} periods): p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms\n",
                    rec.display(),
                    late.len(),
                    percentile(50),
                    percentile(90),
                    percentile(99)
                );
            }
        }
    }
    for r in wanted {
        let Some(s) = scenario(path, &r.label, rtt_us)? else {
            out += &format!("{}: cc={} is not in the model; left out\n", r.label, r.cc);
            continue;
        };
        let mut ms: Vec<Metrics> = Vec::new();
        let mut starts = Vec::new();
        if let Some(dir) = from {
            setup.bottleneck = rep.bottleneck.clone();
            match measured(&dir.join(&r.label), &format!("{} testbed", r.label), &setup) {
                Ok(m) => {
                    starts = m.starts_ns;
                    ms.push(m.metrics);
                }
                Err(err) => out += &format!("{}: no testbed row: {err:#}\n", r.label),
            }
            setup.bottleneck = "bottleneck".to_string();
        }
        let mut steps: Vec<(String, Config)> = vec![(format!("{} model", r.label), s.cfg.clone())];
        let mut cfg = s.cfg.clone();
        if !starts.is_empty() {
            out += &format!(
                "{}: the testbed's flows started at {} ms\n",
                r.label,
                starts
                    .iter()
                    .map(|s| format!("{:.1}", *s as f64 / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            cfg.starts_ns = starts.clone();
            steps.push(("+ start skew".into(), cfg.clone()));
        }
        if !late.is_empty() {
            cfg.emulation.period_late_ns = late.clone();
            steps.push(("+ late periods".into(), cfg.clone()));
            cfg.emulation.pacer_late_ns = late.clone();
            steps.push(("+ late pacer".into(), cfg.clone()));
        }
        if let Some(p) = s.pfc {
            cfg.emulation = Emulation {
                pfc: Some(p),
                ..cfg.emulation
            };
            steps.push(("+ PFC".into(), cfg.clone()));
        }
        for (label, c) in &steps {
            let t = cc_model::run(c);
            let run = as_run(label, &t, &s);
            match report::metrics(&run, &setup) {
                Ok(m) => ms.push(m),
                Err(err) => out += &format!("{label}: {err:#}\n"),
            }
        }
        out += &format!("\n{} (cc={}):\n", s.label, r.cc);
        out += &report::table(&ms, &setup);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Events late by 1, 3, 0.2, 6 and 2 ms on a 10 ms grid: the earliest
    /// is taken as on time, so each is late by its lateness less 0.2 ms,
    /// though the first event's offset wraps round the circle.
    #[test]
    fn lateness_is_the_distance_past_the_grid() {
        let late = [1000, 3000, 200, 6000, 2000];
        let ts: Vec<u64> = late
            .iter()
            .enumerate()
            .map(|(k, l)| 5 * MS + k as u64 * 10 * MS + l * 1000)
            .collect();
        let want: Vec<u64> = late.iter().map(|l| (l - 200) * 1000).collect();
        assert_eq!(grid_lateness(&ts, 10 * MS), want);
    }

    #[test]
    fn a_short_grid_gives_nothing() {
        assert!(grid_lateness(&[0, 10 * MS, 20 * MS, 30 * MS], 10 * MS).is_empty());
    }

    /// A recorded run: a QP's first event is its start; after a gap of
    /// more than 1.5 periods its timer starts a new grid.
    #[test]
    fn lateness_from_a_recording() {
        let dir = std::env::temp_dir().join(format!("rxecc-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut csv = String::from(crate::testbed::record::RATES_HEADER);
        csv.push('\n');
        let mut t = vec![MS];
        // A grid from 20 ms, one event 2 ms late, then a stop and a grid
        // from 200 ms with one event 1 ms late.
        t.extend((0..6).map(|k| 20 * MS + k * 10 * MS + if k == 3 { 2 * MS } else { 0 }));
        t.extend((0..6).map(|k| 200 * MS + k * 10 * MS + if k == 2 { MS } else { 0 }));
        for x in &t {
            csv += &format!("{x},rxe1-qp17,2,0,1000000,0,0\n");
        }
        std::fs::write(dir.join("rates.csv"), csv).unwrap();
        let mut late = timer_lateness(&dir, 10 * MS).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        late.sort_unstable();
        assert_eq!(late, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, MS, 2 * MS]);
    }
    #[test]
    fn a_scale_models_round_trip_is_its_papers_path_times_k_t() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbed/experiments");
        // ACC's testbed: a 20 us RTT over two links of 10 GbE with 4000 B
        // packets is 3.4 us of propagation per link, 13.6 us both ways.
        let e = experiment::load(&dir.join("incast-scale.toml")).unwrap();
        assert_eq!(prop_rtt_us(&e), (13.6f64 * 256.0).round() as u64);
        // Not a scale model: the testbed's own.
        let e = experiment::load(&dir.join("incast.toml")).unwrap();
        assert_eq!(prop_rtt_us(&e), TESTBED_RTT_US);
    }
}
