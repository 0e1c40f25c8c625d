//! `rxecc report`: the metrics of an incast run recorded by `rxecc record`,
//! side by side for several runs (one per algorithm), and their plots.
//!
//! Definitions (docs/experiments.md):
//! - flows are the QPs that sent data; a flow starts at its first send and
//!   ends at the last sample in which its acked bytes grew;
//! - congestion starts when the last flow starts (`t0`); the run's common
//!   window ends when the first flow ends (`t1`);
//! - convergence is judged on what the bottleneck delivers: the first
//!   time after `t0` at which every flow's rate of acked bytes, over the
//!   window that ends then (one period T, or two recording samples if
//!   longer), is within 10% of its fair share C/n, counted in periods T
//!   from `t0` (so never under one window). `in_band` is the share of the
//!   judged times with every flow in the band, and `settle` the first
//!   entry after which they stay in it for STAY_PERIODS periods T on end
//!   (a fairer measure than the first entry, which one lucky window can
//!   make early);
//! - the algorithms' own rate (`rate_converge`, as ACC's Fig. 9 plots it)
//!   is the sum of the rates they set (what they pace at: line rate under
//!   `none`, and from one packet of window up under a window-limited
//!   scheme), a step function of the trace, judged within 10% of the
//!   bottleneck;
//! - throughput is acked bytes over time; Jain's index is taken over each
//!   flow's throughput in the second half of [t0, t1];
//! - the queue is the bottleneck port's (peak: its exact maximum; mean: the
//!   samples' mean over [t0, t1]); pauses are the PFC pause frames every
//!   switch port sent;
//! - the first halt round is the halts that start within one period T of
//!   the first halt after `t0` (the flows' answer to the last join); its
//!   ideal length is the largest total queue (all ports) sampled in the two
//!   periods before it, over C (the ACC paper's Fig. 10b);
//! - deadlocks are those `rxecc record` saw (deadlocks.csv), and the time
//!   spent in them (one still in force at the end lasts to the last port
//!   sample).

pub mod check;
pub mod fct;
mod measure;
pub mod model;
pub mod perftest;
pub mod plot;
pub mod spread;
#[cfg(test)]
mod tests;

pub use measure::{aggregate_rate, deadlocked_ns, join_reaction, metrics};

use crate::testbed::record::{DeadlockRow, HaltRow, PortRow, QpRow, RateRow};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Periods T every flow must stay within 10% of its fair share for the
/// entry to count as settled. Five: long enough that one algorithm step (a period
/// at most, for every algorithm here) cannot carry it through, short
/// enough to fit the incast's window of a few tens of periods.
pub const STAY_PERIODS: u64 = 5;

/// What the caller knows about the experiment.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    pub capacity_bps: u64,
    pub bottleneck: String,
    pub period_ns: u64,
}

/// A flow's time series.
#[derive(Debug, Default, Clone)]
pub struct Flow {
    pub qp: String,
    /// (t, rate) steps of the algorithm's rate.
    pub rate: Vec<(u64, u64)>,
    /// (t, acked bytes) samples.
    pub acked: Vec<(u64, u64)>,
    /// (t, window bytes) samples, for window-based algorithms (HPCC, FNCC).
    pub window: Vec<(u64, u64)>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One sample of a port: (t, qlen, max_qlen, drops, pfc_tx_xoff, pfc_rx_xoff).
pub type PortSample = (u64, u64, u64, u64, u64, u64);

/// A port's samples.
#[derive(Debug, Default, Clone)]
pub struct PortSeries {
    pub samples: Vec<PortSample>,
    /// (t, bytes sent) samples, for the port's utilisation.
    pub deq: Vec<(u64, u64)>,
}

#[derive(Debug, Default, Clone)]
pub struct Halt {
    pub qp: String,
    pub t_ns: u64,
    pub halted_ns: u64,
    pub planned_ns: u64,
}

#[derive(Debug, Default)]
pub struct Run {
    pub label: String,
    pub flows: Vec<Flow>,
    pub ports: BTreeMap<String, PortSeries>,
    pub halts: Vec<Halt>,
    /// Deadlocks recorded (absent from recordings made before them).
    pub deadlocks: Vec<DeadlockRow>,
}

#[derive(Debug, Serialize, Clone)]
pub struct Metrics {
    pub label: String,
    pub flows: usize,
    /// Window [t0, t1], ns since the first flow's start.
    pub t0_ms: f64,
    pub t1_ms: f64,
    /// Aggregate rate at t0, Mb/s.
    pub aggregate_at_t0_mbps: f64,
    /// Periods T from t0 until the bottleneck delivers every flow its fair
    /// share C/n within 10%, over the window that ends then
    /// ([`delivered_window`]), if it got there.
    pub converge_periods: Option<f64>,
    pub converge_ms: Option<f64>,
    /// The algorithm's own rate (ACC's Fig. 9): periods T from t0 until
    /// the sum of the rates the algorithms set is within 10% of C. Not a
    /// window-limited scheme's rate: one paces at line rate from one
    /// packet of window up.
    pub rate_converge_periods: Option<f64>,
    /// From t0 to the first entry of that sum into C ± 10% that lasts
    /// STAY_PERIODS periods: DCQCN's "converge" (ACC Fig. 9), which falls
    /// through C long before it settles there.
    pub rate_settle_periods: Option<f64>,
    pub jain: Option<f64>,
    /// Per-flow throughput over the second half of [t0, t1], Mb/s.
    pub flow_mbps: Vec<f64>,
    pub throughput_mbps: f64,
    /// The flows' acked payload over [t0, t1] against C.
    pub utilisation: f64,
    /// The bottleneck's own sent bytes over the samples within [t0, t1]
    /// against C: frames as the port sends them (headers and ICRC in, no
    /// preamble, FCS or gap), so the link's use where `utilisation` is the
    /// payload's. None without port samples there.
    pub wire_utilisation: Option<f64>,
    pub peak_queue_bytes: u64,
    pub mean_queue_bytes: f64,
    /// The bottleneck's queue over t0..t1, by nearest rank: HPCC's claim
    /// is a near-empty queue, which the median and p95 show better than
    /// the mean.
    pub p50_queue_bytes: u64,
    pub p95_queue_bytes: u64,
    /// The same p95 over the second half of [t0, t1], as `flow_mbps`:
    /// the steady state, without the first round trips' queue, which
    /// fills a short run's tail (a paper's run is longer: HPCC's Fig. 14b
    /// is 10 ms of 100 Gb/s, 2,400 RTTs).
    pub p95_queue_late_bytes: u64,
    pub pauses: u64,
    pub drops: u64,
    pub halts: usize,
    pub halt_actual_ms_median: Option<f64>,
    pub halt_planned_ms_median: Option<f64>,
    /// Share of the judged times in [t0 + window, t1] at which every flow
    /// was delivered its fair share within 10%.
    pub in_band: f64,
    /// From t0 to the first entry into the band that lasts STAY_PERIODS
    /// periods, in periods T and ms; None if none in [t0, t1] did.
    pub settle_periods: Option<f64>,
    pub settle_ms: Option<f64>,
    /// The first halt round after t0: how many halts, their median actual
    /// length, and the ideal (queue over C).
    pub first_round_halts: usize,
    pub first_round_actual_ms: Option<f64>,
    pub first_round_ideal_ms: Option<f64>,
    /// Deadlocks seen, their time in total, and the first one's cycle.
    pub deadlocks: usize,
    pub deadlocked_ms: f64,
    pub first_deadlock: Option<String>,
    /// A late joiner (a second flow starting at least a period after the
    /// first, FNCC's Fig. 13): the first flow's rate when the second
    /// started, and the time from then to the first flow's first rate
    /// below 90% of it, in ms and periods T (None: it never slowed).
    pub join_rate_mbps: Option<f64>,
    pub join_slowdown_ms: Option<f64>,
    pub join_slowdown_periods: Option<f64>,
}

/// The rows of one of `rxecc record`'s CSV files, by column name.
fn rows<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<Vec<T>> {
    let p = dir.join(name);
    let mut rd = csv::Reader::from_path(&p).with_context(|| format!("reading {}", p.display()))?;
    rd.deserialize()
        .enumerate()
        .map(|(i, r)| r.with_context(|| format!("{}: row {}", p.display(), i + 2)))
        .collect()
}

/// Loads a run recorded by `rxecc record` in `dir`.
pub fn load(label: &str, dir: &Path) -> Result<Run> {
    let mut flows: BTreeMap<String, Flow> = BTreeMap::new();
    let mut first_send: BTreeMap<String, u64> = BTreeMap::new();
    for r in rows::<RateRow>(dir, "rates.csv")? {
        first_send.entry(r.qp.clone()).or_insert(r.t_ns);
        flows
            .entry(r.qp.clone())
            .or_insert_with(|| Flow {
                qp: r.qp,
                ..Default::default()
            })
            .rate
            .push((r.t_ns, r.rate_bps));
    }
    for r in rows::<QpRow>(dir, "qps.csv")? {
        let f = flows.entry(r.qp.clone()).or_insert_with(|| Flow {
            qp: r.qp,
            ..Default::default()
        });
        f.rate.push((r.t_ns, r.rate_bps));
        f.acked.push((r.t_ns, r.acked_bytes));
        if r.window_bytes > 0 {
            f.window.push((r.t_ns, r.window_bytes));
        }
    }
    let mut out = Vec::new();
    for (qp, mut f) in flows {
        f.rate.sort_unstable();
        f.acked.sort_unstable();
        let Some(&(_, last)) = f.acked.last() else {
            continue;
        };
        if last == 0 {
            continue; // a receiver's QP, or a flow that never sent
        }
        let first_acked = f.acked.iter().find(|(_, a)| *a > 0).map_or(0, |(t, _)| *t);
        f.start_ns = first_send
            .get(&qp)
            .copied()
            .unwrap_or(first_acked)
            .min(first_acked);
        f.end_ns = f
            .acked
            .iter()
            .find(|(_, a)| *a == last)
            .map_or(0, |(t, _)| *t);
        out.push(f);
    }
    let mut ports: BTreeMap<String, PortSeries> = BTreeMap::new();
    for r in rows::<PortRow>(dir, "ports.csv")? {
        let p = ports.entry(r.dev).or_default();
        p.samples.push((
            r.t_ns,
            r.qlen_bytes,
            r.max_qlen_bytes,
            r.drops,
            r.pfc_tx_xoff,
            r.pfc_rx_xoff,
        ));
        p.deq.push((r.t_ns, r.deq_bytes));
    }
    let halts = rows::<HaltRow>(dir, "halts.csv")?
        .into_iter()
        .filter(|r| r.event == "end")
        .map(|r| Halt {
            qp: r.qp,
            t_ns: r.t_ns,
            halted_ns: r.halted_ns,
            planned_ns: r.planned_ns,
        })
        .collect();
    let deadlocks = if dir.join("deadlocks.csv").exists() {
        rows::<DeadlockRow>(dir, "deadlocks.csv")?
    } else {
        Vec::new()
    };
    Ok(Run {
        label: label.to_string(),
        flows: out,
        ports,
        halts,
        deadlocks,
    })
}

/// The `pct` percentile of a sorted slice, by nearest rank (0 if empty).
pub(crate) fn percentile(v: &[u64], pct: usize) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (pct * v.len()).div_ceil(100).clamp(1, v.len());
    v[rank - 1]
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.prec$}"))
}

/// `rxecc report`: the metrics of each recorded run (LABEL, directory
/// written by `rxecc record`), all metrics as JSON into `json`; returns
/// the side-by-side table and the runs as loaded (for
/// `plot::plot_runs`).
pub fn compare(
    runs: &[(String, std::path::PathBuf)],
    setup: &Setup,
    json: Option<&Path>,
) -> Result<(String, Vec<Run>)> {
    let mut all = Vec::new();
    let mut loaded = Vec::new();
    for (label, dir) in runs {
        let run = load(label, dir).with_context(|| format!("loading run {label}"))?;
        all.push(metrics(&run, setup)?);
        loaded.push(run);
    }
    if let Some(p) = json {
        std::fs::write(p, serde_json::to_string_pretty(&all)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok((table(&all, setup), loaded))
}

/// The side-by-side table.
pub fn table(ms: &[Metrics], setup: &Setup) -> String {
    let mut s = format!(
        "{} flows into {} at {} Mb/s, T = {} us\n",
        ms.first().map_or(0, |m| m.flows),
        setup.bottleneck,
        setup.capacity_bps / 1_000_000,
        setup.period_ns / 1000
    );
    // The label column fits the longest label (`rxecc model`'s are long).
    let w = ms.iter().map(|m| m.label.len()).max().unwrap_or(0).max(8);
    s += &format!(
        "{:<w$} {:>10} {:>8} {:>9} {:>11} {:>7} {:>9} {:>6} {:>8} {:>8} {:>13} {:>7} {:>5} {:>6} {:>14} {:>16}\n",
        "cc",
        "converge T",
        "(ms)",
        "settled T",
        "rate conv T",
        "in band",
        "tput Mb/s",
        "Jain",
        "peak KB",
        "mean KB",
        "p50/p95 KB",
        "pauses",
        "drops",
        "halts",
        "act/plan ms",
        "1st act/ideal ms"
    );
    for m in ms {
        s += &format!(
            "{:<w$} {:>10} {:>8} {:>9} {:>11} {:>6.0}% {:>9.1} {:>6} {:>8.1} {:>8.1} {:>13} {:>7} {:>5} {:>6} {:>14} {:>16}\n",
            m.label,
            opt(m.converge_periods, 1),
            opt(m.converge_ms, 1),
            opt(m.settle_periods, 1),
            opt(m.rate_converge_periods, 1),
            m.in_band * 100.0,
            m.throughput_mbps,
            opt(m.jain, 3),
            m.peak_queue_bytes as f64 / 1024.0,
            m.mean_queue_bytes / 1024.0,
            format!("{:.1}/{:.1}", m.p50_queue_bytes as f64 / 1024.0, m.p95_queue_bytes as f64 / 1024.0),
            m.pauses,
            m.drops,
            m.halts,
            format!("{}/{}", opt(m.halt_actual_ms_median, 1), opt(m.halt_planned_ms_median, 1)),
            format!("{}/{}", opt(m.first_round_actual_ms, 1), opt(m.first_round_ideal_ms, 1))
        );
    }
    for m in ms {
        if let Some(r) = m.join_rate_mbps {
            s += &format!(
                "{}: late joiner: the first flow at {r:.1} Mb/s when the second started; first below 90% of it {}\n",
                m.label,
                match (m.join_slowdown_ms, m.join_slowdown_periods) {
                    (Some(ms), Some(t)) => format!("{ms:.1} ms ({t:.2} T) later"),
                    _ => "never".into(),
                }
            );
        }
    }
    for m in ms.iter().filter(|m| m.deadlocks > 0) {
        s += &format!(
            "{}: {} deadlock(s), {:.1} s deadlocked; first: {}\n",
            m.label,
            m.deadlocks,
            m.deadlocked_ms / 1e3,
            m.first_deadlock.as_deref().unwrap_or("-")
        );
    }
    s
}
