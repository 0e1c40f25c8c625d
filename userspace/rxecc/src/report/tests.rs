use super::measure::*;
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
