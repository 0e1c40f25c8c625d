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
pub mod model;
pub mod perftest;
pub mod plot;
pub mod spread;

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

/// The value of a step function at `t` (the last step at or before it).
fn step_at(steps: &[(u64, u64)], t: u64) -> u64 {
    match steps.partition_point(|(ts, _)| *ts <= t) {
        0 => steps.first().map_or(0, |s| s.1),
        i => steps[i - 1].1,
    }
}

/// Acked bytes at `t`, interpolated between samples.
fn acked_at(s: &[(u64, u64)], t: u64) -> f64 {
    let i = s.partition_point(|(ts, _)| *ts <= t);
    if i == 0 {
        return s.first().map_or(0.0, |x| x.1 as f64);
    }
    if i == s.len() {
        return s[i - 1].1 as f64;
    }
    let ((ta, a), (tb, b)) = (s[i - 1], s[i]);
    a as f64 + (b as f64 - a as f64) * (t - ta) as f64 / (tb - ta).max(1) as f64
}

/// The median; of an even count, the mean of the middle two.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    })
}

/// The start of the first run of in-band time that lasts `stay` ns within
/// [times[0], t1]. `times` are sorted; each one's verdict holds until the
/// next (and the last's until t1).
fn settled_at(times: &[u64], t1: u64, stay: u64, in_c: impl Fn(u64) -> bool) -> Option<u64> {
    let mut from: Option<u64> = None;
    for (i, &t) in times.iter().enumerate() {
        if in_c(t) {
            let start = *from.get_or_insert(t);
            let end = times.get(i + 1).copied().unwrap_or(t1).min(t1);
            if end.saturating_sub(start) >= stay {
                return Some(start);
            }
        } else {
            from = None;
        }
    }
    None
}

/// The window over which a flow's delivered rate is judged: one period T,
/// or two of the recording's samples of acked bytes if they are further
/// apart (a rate needs a difference of samples).
fn delivered_window(flows: &[Flow], period_ns: u64) -> u64 {
    let mut gaps: Vec<u64> = flows
        .iter()
        .flat_map(|f| f.acked.windows(2).map(|w| w[1].0.saturating_sub(w[0].0)))
        .filter(|g| *g > 0)
        .collect();
    gaps.sort_unstable();
    period_ns.max(2 * percentile(&gaps, 50)).max(1)
}

/// The times in [t0 + w, t1] at which delivered rates are judged (every
/// acked sample, and t1), and whether every flow then got its fair share
/// C/n within 10% over the window [t - w, t].
fn delivered_band(flows: &[Flow], t0: u64, t1: u64, c: f64, w: u64) -> Vec<(u64, bool)> {
    let fair = c / flows.len().max(1) as f64;
    let mut times: Vec<u64> = flows
        .iter()
        .flat_map(|f| f.acked.iter().map(|s| s.0))
        .filter(|t| *t >= t0.saturating_add(w) && *t <= t1)
        .collect();
    times.push(t1);
    times.sort_unstable();
    times.dedup();
    times
        .into_iter()
        .filter(|t| *t >= t0.saturating_add(w))
        .map(|t| {
            let ok = flows.iter().all(|f| {
                let bps =
                    (acked_at(&f.acked, t) - acked_at(&f.acked, t - w)) * 8.0 * 1e9 / w as f64;
                (bps - fair).abs() <= 0.1 * fair
            });
            (t, ok)
        })
        .collect()
}

/// Sum of the flows' rates at `t`, counting only flows running then.
pub fn aggregate_rate(flows: &[Flow], t: u64) -> u64 {
    flows
        .iter()
        .filter(|f| f.start_ns <= t && t <= f.end_ns)
        .map(|f| step_at(&f.rate, t))
        .sum()
}

pub fn metrics(run: &Run, setup: &Setup) -> Result<Metrics> {
    let flows = &run.flows;
    if flows.is_empty() {
        bail!("{}: no flow sent data", run.label);
    }
    let origin = flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let t0 = flows.iter().map(|f| f.start_ns).max().unwrap_or(0);
    let t1 = flows.iter().map(|f| f.end_ns).min().unwrap_or(0);
    if t1 <= t0 {
        bail!(
            "{}: the flows never all ran at once (the last started after the first ended)",
            run.label
        );
    }
    let c = setup.capacity_bps as f64;
    let ms = |t: u64| t.saturating_sub(origin) as f64 / 1e6;
    // The algorithms' own rates change only at steps: check each step
    // time in [t0, t1].
    let mut times: Vec<u64> = flows
        .iter()
        .flat_map(|f| f.rate.iter().map(|s| s.0))
        .filter(|t| *t >= t0 && *t <= t1)
        .collect();
    times.push(t0);
    times.sort_unstable();
    let in_c = |t: u64| (aggregate_rate(flows, t) as f64 - c).abs() <= 0.1 * c;
    let rate_conv = times.iter().copied().find(|&t| in_c(t));
    let rate_settle = settled_at(
        &times,
        t1,
        setup.period_ns.saturating_mul(STAY_PERIODS),
        in_c,
    );
    // What the bottleneck delivered each flow.
    let band = delivered_band(flows, t0, t1, c, delivered_window(flows, setup.period_ns));
    let conv = band.iter().find(|b| b.1).map(|b| b.0);
    let in_band = band.iter().filter(|b| b.1).count() as f64 / band.len().max(1) as f64;
    let judged: Vec<u64> = band.iter().map(|b| b.0).collect();
    let settle = settled_at(
        &judged,
        t1,
        setup.period_ns.saturating_mul(STAY_PERIODS),
        |t| band.iter().any(|b| b.0 == t && b.1),
    );
    let period = setup.period_ns.max(1) as f64;
    let mid = t0 + (t1 - t0) / 2;
    let flow_mbps: Vec<f64> = flows
        .iter()
        .map(|f| {
            (acked_at(&f.acked, t1) - acked_at(&f.acked, mid)) * 8.0
                / ((t1 - mid) as f64 / 1e9)
                / 1e6
        })
        .collect();
    let total: f64 = flows
        .iter()
        .map(|f| acked_at(&f.acked, t1) - acked_at(&f.acked, t0))
        .sum();
    let throughput_mbps = total * 8.0 / ((t1 - t0) as f64 / 1e9) / 1e6;
    let wire_utilisation = run.ports.get(&setup.bottleneck).and_then(|b| {
        let mut w = b.deq.iter().filter(|s| s.0 >= t0 && s.0 <= t1);
        let first = w.next()?;
        let last = w.next_back()?;
        let dt = last.0.checked_sub(first.0).filter(|d| *d > 0)?;
        Some(last.1.saturating_sub(first.1) as f64 * 8.0 / (dt as f64 / 1e9) / c)
    });
    let (mut peak_queue, mut mean_queue, mut p50, mut p95, mut p95_late) = (0, 0.0, 0, 0, 0);
    if let Some(b) = run.ports.get(&setup.bottleneck) {
        peak_queue = b.samples.iter().map(|s| s.2).max().unwrap_or(0);
        let mut w: Vec<u64> = b
            .samples
            .iter()
            .filter(|s| s.0 >= t0 && s.0 <= t1)
            .map(|s| s.1)
            .collect();
        mean_queue = w.iter().sum::<u64>() as f64 / w.len().max(1) as f64;
        w.sort_unstable();
        p50 = percentile(&w, 50);
        p95 = percentile(&w, 95);
        let mut late: Vec<u64> = b
            .samples
            .iter()
            .filter(|s| s.0 >= mid && s.0 <= t1)
            .map(|s| s.1)
            .collect();
        late.sort_unstable();
        p95_late = percentile(&late, 95);
    } else if !run.ports.is_empty() {
        bail!(
            "{}: no port {} in the recording",
            run.label,
            setup.bottleneck
        );
    }
    let delta = |f: fn(&PortSample) -> u64| -> u64 {
        run.ports
            .values()
            .map(|p| match (p.samples.first(), p.samples.last()) {
                (Some(a), Some(b)) => f(b).saturating_sub(f(a)),
                _ => 0,
            })
            .sum()
    };
    let pauses = delta(|s| s.4);
    let drops = delta(|s| s.3);
    // The largest total queue over all ports, at one sample time.
    let mut total_q: BTreeMap<u64, u64> = BTreeMap::new();
    for p in run.ports.values() {
        for s in &p.samples {
            *total_q.entry(s.0).or_default() += s.1;
        }
    }
    let start = |h: &Halt| h.t_ns.saturating_sub(h.halted_ns);
    let first = run.halts.iter().map(start).filter(|s| *s >= t0).min();
    let round: Vec<&Halt> = match first {
        Some(f) => run
            .halts
            .iter()
            .filter(|h| (f..=f + setup.period_ns).contains(&start(h)))
            .collect(),
        None => Vec::new(),
    };
    let first_round_ideal_ms = first.map(|f| {
        let from = f.saturating_sub(2 * setup.period_ns);
        let q = total_q.range(from..=f).map(|(_, q)| *q).max().unwrap_or(0);
        q as f64 * 8.0 / c * 1e3
    });
    let join = join_reaction(flows, setup.period_ns);
    Ok(Metrics {
        label: run.label.clone(),
        flows: flows.len(),
        t0_ms: ms(t0),
        t1_ms: ms(t1),
        aggregate_at_t0_mbps: aggregate_rate(flows, t0) as f64 / 1e6,
        converge_periods: conv.map(|t| (t - t0) as f64 / period),
        converge_ms: conv.map(|t| (t - t0) as f64 / 1e6),
        rate_converge_periods: rate_conv.map(|t| (t - t0) as f64 / period),
        rate_settle_periods: rate_settle.map(|t| (t - t0) as f64 / period),
        jain: crate::report::perftest::jain_index(&flow_mbps),
        flow_mbps,
        throughput_mbps,
        utilisation: throughput_mbps * 1e6 / c,
        wire_utilisation,
        peak_queue_bytes: peak_queue,
        mean_queue_bytes: mean_queue,
        p50_queue_bytes: p50,
        p95_queue_bytes: p95,
        p95_queue_late_bytes: p95_late,
        pauses,
        drops,
        halts: run.halts.len(),
        halt_actual_ms_median: median(run.halts.iter().map(|h| h.halted_ns as f64 / 1e6).collect()),
        halt_planned_ms_median: median(
            run.halts
                .iter()
                .map(|h| h.planned_ns as f64 / 1e6)
                .collect(),
        ),
        in_band,
        settle_periods: settle.map(|t| (t - t0) as f64 / period),
        settle_ms: settle.map(|t| (t - t0) as f64 / 1e6),
        first_round_halts: round.len(),
        first_round_actual_ms: median(round.iter().map(|h| h.halted_ns as f64 / 1e6).collect()),
        first_round_ideal_ms,
        deadlocks: run.deadlocks.iter().filter(|d| d.event == "start").count(),
        deadlocked_ms: deadlocked_ns(run) as f64 / 1e6,
        first_deadlock: run.deadlocks.iter().find(|d| d.event == "start").map(|d| {
            format!(
                "{} at {:.1} s",
                d.cycle.replace(' ', " -> "),
                ms(d.t_ns) / 1e3
            )
        }),
        join_rate_mbps: join.map(|(r, _)| r as f64 / 1e6),
        join_slowdown_ms: join.and_then(|(_, d)| d).map(|d| d as f64 / 1e6),
        join_slowdown_periods: join.and_then(|(_, d)| d).map(|d| d as f64 / period),
    })
}

/// A late joiner: the flow that started second, at least `period_ns`
/// after the first. Returns the first flow's rate (bit/s) at the join and
/// the time from the join to its first rate below 90% of that, if any;
/// None without a late joiner.
pub fn join_reaction(flows: &[Flow], period_ns: u64) -> Option<(u64, Option<u64>)> {
    let mut by_start: Vec<&Flow> = flows.iter().collect();
    by_start.sort_by_key(|f| f.start_ns);
    let (first, second) = (by_start.first()?, by_start.get(1)?);
    let join = second.start_ns;
    if join.saturating_sub(first.start_ns) < period_ns.max(1) {
        return None;
    }
    let r0 = first.rate.iter().take_while(|(t, _)| *t <= join).last()?.1;
    let slow = first
        .rate
        .iter()
        .find(|(t, r)| *t > join && r.saturating_mul(10) < r0.saturating_mul(9))
        .map(|(t, _)| t - join);
    Some((r0, slow))
}

/// Time spent deadlocked: each start to its end, or to the last port
/// sample if none came.
pub fn deadlocked_ns(run: &Run) -> u64 {
    let last = run
        .ports
        .values()
        .filter_map(|p| p.samples.last().map(|s| s.0))
        .max()
        .unwrap_or(0);
    let (mut total, mut since) = (0u64, None);
    for d in &run.deadlocks {
        match (d.event.as_str(), since) {
            ("start", None) => since = Some(d.t_ns),
            ("end", Some(t)) => {
                total += d.t_ns.saturating_sub(t);
                since = None;
            }
            _ => {}
        }
    }
    if let Some(t) = since {
        total += last.saturating_sub(t);
    }
    total
}

/// The `pct`-th percentile of sorted `v` by nearest rank (0 if empty).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_joiner_reaction() {
        let flow = |start: u64, rate: Vec<(u64, u64)>| Flow {
            start_ns: start,
            rate,
            ..Default::default()
        };
        let first = flow(0, vec![(0, 40), (5_000, 40), (21_000, 37), (23_000, 30)]);
        // The joiner at 20 us: the first flow's 40 first falls below 36 at 23 us.
        let flows = [first.clone(), flow(20_000, vec![(20_000, 10)])];
        assert_eq!(join_reaction(&flows, 10_000), Some((40, Some(3_000))));
        // Together within a period: no late joiner.
        assert_eq!(join_reaction(&flows, 30_000), None);
        // One flow, or a first flow that never slows.
        assert_eq!(join_reaction(&flows[..1], 10_000), None);
        let steady = [flow(0, vec![(0, 40)]), flow(20_000, vec![(20_000, 10)])];
        assert_eq!(join_reaction(&steady, 10_000), Some((40, None)));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    const MS: u64 = 1_000_000;

    fn flow(qp: &str, start: u64, end: u64, rate: Vec<(u64, u64)>, mbps: u64) -> Flow {
        // acked grows linearly at `mbps` from start to end, sampled every ms.
        let acked = (start / MS..=end / MS)
            .map(|i| (i * MS, (i * MS - start) * mbps / 8 / 1000))
            .collect();
        Flow {
            qp: qp.into(),
            rate,
            acked,
            start_ns: start,
            end_ns: end,
            ..Default::default()
        }
    }

    /// The metrics of a run of `flows` (with `ports` and `halts`) through
    /// a bottleneck `p0` of `c` b/s, counted in periods of `period_ns`.
    fn judge(
        flows: Vec<Flow>,
        ports: BTreeMap<String, PortSeries>,
        halts: Vec<Halt>,
        c: u64,
        period_ns: u64,
    ) -> Result<Metrics> {
        let run = Run {
            label: "x".into(),
            flows,
            ports,
            halts,
            deadlocks: vec![],
        };
        metrics(&run, &setup_p0(c, period_ns))
    }

    fn setup_p0(c: u64, period_ns: u64) -> Setup {
        Setup {
            capacity_bps: c,
            bottleneck: "p0".into(),
            period_ns,
        }
    }

    #[test]
    fn rates_settle_at_the_entry_that_lasts_not_the_first() {
        let c = 100_000_000;
        // As DCQCN in ACC's Fig. 9: both at C (2 C in all), through C at
        // 3 ms (C/2 each), far below at 4 ms, back to C/2 each at 10 ms.
        let steps = vec![(0, c), (3 * MS, c / 2), (4 * MS, c / 10), (10 * MS, c / 2)];
        let flows = vec![
            flow("a", 0, 100 * MS, steps.clone(), 50),
            flow("b", 0, 100 * MS, steps, 50),
        ];
        let m = judge(flows, BTreeMap::new(), vec![], c, MS).unwrap();
        assert_eq!(m.rate_converge_periods, Some(3.0));
        // 3..4 ms is one period in the band, short of STAY_PERIODS.
        assert_eq!(m.rate_settle_periods, Some(10.0));
    }

    #[test]
    fn convergence_counts_periods_from_the_last_start() {
        let c = 100_000_000;
        // Flow a runs alone at C; b joins at 10 ms at C; both drop to C/2 at 13 ms.
        let a = flow("a", 0, 100 * MS, vec![(0, c), (13 * MS, c / 2)], 50);
        let b = flow(
            "b",
            10 * MS,
            100 * MS,
            vec![(10 * MS, c), (13 * MS, c / 2)],
            50,
        );
        let mut ports = BTreeMap::new();
        ports.insert(
            "p0".to_string(),
            PortSeries {
                samples: vec![
                    (0, 0, 0, 0, 0, 0),
                    (13 * MS, 25000, 25000, 0, 1, 0),
                    (20 * MS, 12500, 25000, 0, 3, 0),
                    (90 * MS, 0, 25000, 0, 7, 0),
                ],
                // 1.02 MB sent from 10 to 90 ms: 102 Mb/s of headers and
                // payload where the flows' acked payload is 100.
                deq: vec![(0, 0), (10 * MS, 0), (90 * MS, 1_020_000)],
            },
        );
        // Halts start at 14 and 14.5 ms (one round) and at 40 ms (not in it).
        let h = |qp: &str, end: u64, len: u64| Halt {
            qp: qp.into(),
            t_ns: end,
            halted_ns: len,
            planned_ns: len,
        };
        let halts = vec![
            h("a", 4 * MS, MS),
            h("a", 16 * MS, 2 * MS),
            h("b", 17 * MS + MS / 2, 3 * MS),
            h("a", 41 * MS, MS),
        ];
        let m = judge(vec![a, b], ports, halts, c, MS).unwrap();
        // The rates the algorithms set sum to C from 13 ms.
        assert_eq!(m.rate_converge_periods, Some(3.0));
        // Each flow is delivered 50 Mb/s, its fair share, from the start:
        // judged at the first window's end (two 1 ms samples).
        assert_eq!(m.converge_periods, Some(2.0));
        assert_eq!(m.in_band, 1.0);
        // ... and it stays there: settled at the first entry.
        assert_eq!(m.settle_periods, Some(2.0));
        assert_eq!(m.first_round_halts, 2);
        // The median of the round's two halts, 2 and 3 ms.
        assert_eq!(m.first_round_actual_ms, Some(2.5));
        // The queue sampled at 13 ms, within 2 T before the round: 25 KB at C.
        assert!((m.first_round_ideal_ms.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(m.aggregate_at_t0_mbps, 200.0);
        assert!((m.jain.unwrap() - 1.0).abs() < 1e-9);
        assert!(
            (m.throughput_mbps - 100.0).abs() < 1.0,
            "{}",
            m.throughput_mbps
        );
        let wire = m.wire_utilisation.unwrap();
        assert!((wire - 1.02).abs() < 1e-9, "{wire}");
        assert_eq!(m.peak_queue_bytes, 25000);
        // Queue samples in 10..100 ms: 25000 at 13, 12500 at 20: p50 12500.
        assert_eq!((m.p50_queue_bytes, m.p95_queue_bytes), (12500, 25000));
        // From the half, 55 ms: 0 at 90 ms alone.
        assert_eq!(m.p95_queue_late_bytes, 0);
        assert_eq!(m.pauses, 7);
        assert!(table(&[m], &setup_p0(c, MS)).contains("3.0"));
    }

    #[test]
    fn settling_needs_a_run_in_band_of_the_stay_length() {
        // In band at 10 (until 12), out at 12, in from 14 on; t1 = 30.
        let times = [10, 12, 14, 20];
        let inb = |t: u64| t != 12;
        // A stay of 2 fits 10..12: settled at the first entry.
        assert_eq!(settled_at(&times, 30, 2, inb), Some(10));
        // A stay of 5 does not fit 10..12, and 14..30 holds it.
        assert_eq!(settled_at(&times, 30, 5, inb), Some(14));
        // Consecutive in-band steps form one run: 14..30 is 16 long.
        assert_eq!(settled_at(&times, 30, 16, inb), Some(14));
        // Longer than any run before t1: never settled.
        assert_eq!(settled_at(&times, 30, 17, inb), None);
        assert_eq!(settled_at(&times, 30, 1, |_| false), None);
    }

    #[test]
    fn time_deadlocked_counts_to_the_end_or_the_last_sample() {
        let d = |t_ns: u64, event: &str| DeadlockRow {
            t_ns,
            event: event.into(),
            cycle: "x0_1 x1_2 x2_0".into(),
            qlen_bytes: 0,
        };
        let mut ports = BTreeMap::new();
        ports.insert(
            "x0_1".to_string(),
            PortSeries {
                samples: vec![(0, 0, 0, 0, 0, 0), (100 * MS, 0, 0, 0, 0, 0)],
                deq: vec![],
            },
        );
        let mut run = Run {
            label: "pfc".into(),
            ports,
            deadlocks: vec![d(20 * MS, "start"), d(30 * MS, "end"), d(90 * MS, "start")],
            ..Default::default()
        };
        assert_eq!(deadlocked_ns(&run), 20 * MS);
        run.deadlocks.truncate(2);
        assert_eq!(deadlocked_ns(&run), 10 * MS);
        run.deadlocks.clear();
        assert_eq!(deadlocked_ns(&run), 0);
    }

    #[test]
    fn percentile_by_nearest_rank() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile(&v, 50), 10);
        assert_eq!(percentile(&v, 95), 19);
        assert_eq!(percentile(&v, 100), 20);
        assert_eq!(percentile(&[7], 95), 7);
        assert_eq!(percentile(&[], 50), 0);
    }

    fn two_flows(a_rate: u64, a_mbps: u64, b_rate: u64, b_mbps: u64) -> Metrics {
        let a = flow("a", 0, 50 * MS, vec![(0, a_rate)], a_mbps);
        let b = flow("b", MS, 50 * MS, vec![(MS, b_rate)], b_mbps);
        judge(vec![a, b], BTreeMap::new(), vec![], 100_000_000, 4 * MS).unwrap()
    }

    #[test]
    fn convergence_is_judged_on_what_each_flow_is_delivered() {
        let c = 100_000_000;
        // Both pace at line rate (none; a window-limited scheme from one
        // packet of window up): their rates never converge, but the
        // bottleneck delivers each its fair share, from the first window
        // (one period, 4 ms).
        let m = two_flows(c, 50, c, 50);
        assert_eq!(m.rate_converge_periods, None);
        assert_eq!(m.converge_periods, Some(1.0));
        assert_eq!(m.in_band, 1.0);
        // Rates that sum to C, but one flow gets 80 and the other 20:
        // converged by the algorithms' rates, never by what is delivered.
        let m = two_flows(c / 2, 80, c / 2, 20);
        assert_eq!(m.rate_converge_periods, Some(0.0));
        assert_eq!(m.converge_periods, None);
        assert_eq!(m.settle_periods, None);
        assert_eq!(m.in_band, 0.0);
        // 54 and 46: each within 10% of 50.
        assert_eq!(two_flows(c, 54, c, 46).converge_periods, Some(1.0));
        // 56 and 44: not.
        assert_eq!(two_flows(c, 56, c, 44).converge_periods, None);
    }

    #[test]
    fn flows_that_never_overlap_are_an_error() {
        let a = flow("a", 0, 5 * MS, vec![(0, 1)], 50);
        let b = flow("b", 6 * MS, 9 * MS, vec![(6 * MS, 1)], 50);
        let e = judge(vec![a, b], BTreeMap::new(), vec![], 1, 1).unwrap_err();
        assert!(e.to_string().contains("never all ran at once"));
    }
}
