//! The metrics of one recorded incast run: convergence, fairness, queue,
//! pauses, throughput and halts against the setup's capacity and period.

use super::*;

/// The value of a step function at `t` (the last step at or before it).
pub(super) fn step_at(steps: &[(u64, u64)], t: u64) -> u64 {
    match steps.partition_point(|(ts, _)| *ts <= t) {
        0 => steps.first().map_or(0, |s| s.1),
        i => steps[i - 1].1,
    }
}

/// Acked bytes at `t`, interpolated between samples.
pub(super) fn acked_at(s: &[(u64, u64)], t: u64) -> f64 {
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
pub(super) fn median(mut v: Vec<f64>) -> Option<f64> {
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
pub(super) fn settled_at(
    times: &[u64],
    t1: u64,
    stay: u64,
    in_c: impl Fn(u64) -> bool,
) -> Option<u64> {
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
pub(super) fn delivered_window(flows: &[Flow], period_ns: u64) -> u64 {
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
pub(super) fn delivered_band(flows: &[Flow], t0: u64, t1: u64, c: f64, w: u64) -> Vec<(u64, bool)> {
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
