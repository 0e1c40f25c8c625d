//! The model drives the real algorithms and checks the papers' claims.
//! Each test prints what it measured (`cargo test -- --nocapture`).

use cc_model::{first_fair_window, jain, run, Algo, Config};

const C: u64 = 100_000_000_000;

/// ACC Proposition 1: once congestion is detected, the aggregate sending
/// rate is within 10% of C within one period T, and the queue built
/// before it drains at C (eqs. 6-7: `Q(k+m) = Q − m·C·T`). The rate part
/// holds by packet conservation alone (R is measured from ACKs); the queue
/// part needs the source halt: without it the flows send at C in total
/// and the queue stays.
#[test]
fn acc_prop1_aggregate_converges_within_one_period() {
    for n in [2usize, 4, 8, 16] {
        let mut cfg = Config::new(Algo::Acc, n);
        cfg.duration_ns = 2_000_000;
        cfg.sample_ns = cfg.period_ns;
        let t = run(&cfg);
        let first = t
            .halts
            .first()
            .expect("congestion was never detected")
            .at_ns;
        let agg: Vec<u64> = t.rate_bps.iter().map(|r| r.iter().sum()).collect();
        let from = t.t_ns.iter().position(|&s| s >= first).unwrap();
        let within = agg[from..]
            .iter()
            .position(|&a| (a as f64 - C as f64).abs() <= 0.1 * C as f64);
        // The queue at detection, drained at C, plus a period for the
        // halt's extension and one for the sampling: 95% of it gone.
        let q0 = t.queue_bytes[from];
        let drain_ns = q0 * 8 * 1_000_000_000 / C;
        let by = first + drain_ns + 2 * cfg.period_ns;
        let at = t.t_ns.iter().position(|&s| s >= by).expect("run too short");
        let q_after = t.queue_bytes[at];
        println!(
            "ACC {n}->1: detected at {} us; aggregate within 10% of C after {within:?} periods; queue {q0} B at detection, {q_after} B at {} us",
            first / 1000,
            by / 1000
        );
        let k = within.expect("aggregate never came within 10% of C");
        assert!(k <= 1, "{n} flows: {k} periods");
        assert!(
            q_after * 20 <= q0,
            "{n} flows: the queue ({q0} B) did not drain at C: {q_after} B left"
        );
    }
}

/// ACC §4.1 with TCD's undetermined marks: a flow whose port is paused by
/// the hop after it is a victim, not the cause. The port's queue is UE
/// while paused and while it drains the backlog (the model's TCD follows
/// the testbed's, `mark.bpf.c`), never CE. After one pause of 3 T the flow
/// keeps its rate; under pauses that go on (half of every 2 T), ACC holds
/// through P_thresh UE periods in a row and then halves (persistent UE).
/// A TCD without the UE path marks that queue CE and ACC cuts at once.
#[test]
fn acc_victim_of_downstream_pauses() {
    use cc_core::acc::AccKnobs;
    use cc_core::cc::LinkParams;
    let base = Config::new(Algo::Acc, 1);
    let t_ns = base.period_ns;
    let link = LinkParams {
        line_rate_bps: base.line_rate_bps,
        mtu: base.mtu,
    };
    let mut k = AccKnobs::for_link(&link, t_ns);
    k.p_thresh = 3;
    let pause_at = 500_000;
    let once = vec![(pause_at, 3 * t_ns)];
    let every: Vec<(u64, u64)> = (0..40).map(|i| (pause_at + 2 * i * t_ns, t_ns)).collect();
    for (what, pauses) in [("one pause of 3 T", once), ("a pause in every 2 T", every)] {
        let mut cfg = base.clone();
        cfg.acc_knobs = Some(k);
        cfg.port_pauses = pauses;
        cfg.duration_ns = 3_000_000;
        cfg.sample_ns = t_ns;
        let t = run(&cfg);
        let cut = t.rate_steps[0]
            .iter()
            .find(|&&(_, r)| r < C)
            .map(|&(at, _)| at);
        let q_end = *t.queue_bytes.last().unwrap();
        println!(
            "ACC, {what} from {} us: {} UE and {} CE marks; first cut at {:?} us; queue at the end {q_end} B",
            pause_at / 1000,
            t.ue_marks,
            t.ce_marks,
            cut.map(|c| c / 1000)
        );
        assert!(t.ue_marks > 0, "{what}: the paused port marked no UE");
        assert_eq!(
            t.ce_marks, 0,
            "{what}: a queue the pauses built was marked CE"
        );
        assert!(
            q_end <= 2 * u64::from(cfg.mtu),
            "{what}: the backlog never drained: {q_end} B"
        );
        if cfg.port_pauses.len() == 1 {
            assert_eq!(cut, None, "{what}: the victim's rate was cut");
        } else {
            let cut = cut.expect("persistent UE never lowered the rate");
            assert!(
                cut > pause_at + 3 * t_ns,
                "{what}: cut at {} us, within P_thresh = 3 periods of the first pause",
                cut / 1000
            );
        }
    }
}

/// ACC Proposition 2: from unequal start (flows join 0.5 ms apart, each at
/// line rate) the flows converge to fair shares. The fluid proof has no
/// "mixed" periods (some CE, under 90%); with them, holding the rate there
/// (§4.1, the default) stops the convergence short of raising it
/// (`acc_mixed_increase=1`): both are fair (Jain >= 0.98 over the second
/// half), only the increase goes on to 0.99 (docs/algorithms.md).
#[test]
fn acc_prop2_fairness_from_unequal_starts() {
    use cc_core::acc::{AccKnobs, MixedPeriod};
    use cc_core::cc::LinkParams;
    let jain_of = |mixed| {
        let mut cfg = Config::new(Algo::Acc, 4);
        cfg.starts_ns = vec![0, 500_000, 1_000_000, 1_500_000];
        cfg.duration_ns = 60_000_000;
        let link = LinkParams {
            line_rate_bps: cfg.line_rate_bps,
            mtu: cfg.mtu,
        };
        cfg.acc_knobs = Some(AccKnobs {
            mixed,
            ..AccKnobs::for_link(&link, cfg.period_ns)
        });
        let t = run(&cfg);
        let half = t.sent_bytes.len() / 2;
        let j = jain(&t.sent_between(half, t.sent_bytes.len()));
        let conv = t.converged_at(50, 0.98).map(|s| t.t_ns[s] / 1000);
        println!("ACC 4 flows, staggered, mixed periods {mixed:?}: Jain over the second half {j:.4}; 1-ms windows >= 0.98 from {conv:?} us");
        j
    };
    let hold = jain_of(MixedPeriod::Hold);
    let increase = jain_of(MixedPeriod::Increase);
    assert!(hold >= 0.98, "hold: Jain {hold}");
    assert!(increase >= 0.99, "increase: Jain {increase}");
}

/// ACC halt: in a 10->1 incast the actual halt is within 20% of the ideal,
/// the peak queue drained at C.
#[test]
fn acc_halt_matches_queue_over_c() {
    let mut cfg = Config::new(Algo::Acc, 10);
    cfg.duration_ns = 1_000_000;
    let t = run(&cfg);
    let first = t.halts.first().expect("no halt").at_ns;
    let episode: Vec<_> = t.halts.iter().filter(|h| h.at_ns == first).collect();
    assert_eq!(
        episode.len(),
        10,
        "every flow halts in the first congestion episode"
    );
    let actual: Vec<u64> = episode
        .iter()
        .map(|h| h.actual_ns.expect("flow never resumed"))
        .collect();
    let mean = actual.iter().sum::<u64>() as f64 / actual.len() as f64;
    let ideal = t.max_queue_bytes as f64 * 8.0 / C as f64 * 1e9;
    let ratio = mean / ideal;
    println!("ACC 10->1: peak queue {} B, ideal halt {:.1} us, actual halts {:?} us (mean {:.1}), ratio {ratio:.3}",
        t.max_queue_bytes, ideal / 1e3, actual.iter().map(|a| a / 1000).collect::<Vec<_>>(), mean / 1e3);
    assert!((ratio - 1.0).abs() <= 0.2, "halt ratio {ratio}");
}

/// DCQCN converges to the fair share, more slowly than ACC in the same
/// scenario (4 flows start together at line rate, as in ACC's Fig. 9).
/// Converged: the first 1 ms window in which every flow's throughput is
/// within 10% of C/4. Both must then stay fair in the long run: Jain's
/// index over the last 10 ms at least 0.97 (neither holds every flow within
/// 10% for ever: flows wander 15-20% around C/4).
#[test]
fn dcqcn_converges_slower_than_acc() {
    let converge = |algo| {
        let mut cfg = Config::new(algo, 4);
        cfg.duration_ns = 60_000_000;
        let t = run(&cfg);
        let w = (1_000_000 / cfg.sample_ns) as usize;
        let first =
            first_fair_window(&t, w, cfg.sample_ns, C / 4, 0.1).map(|i| t.t_ns[i] - cfg.sample_ns);
        let n = t.sent_bytes.len();
        let last = jain(&t.sent_between(n.saturating_sub(10 * w), n));
        (first, last)
    };
    let (acc, acc_end) = converge(Algo::Acc);
    let (dcqcn, dcqcn_end) = converge(Algo::Dcqcn);
    println!("4 flows, fair share ± 10% over 1 ms: ACC from {acc:?} ns (Jain over the last 10 ms: {acc_end:.4}), DCQCN from {dcqcn:?} ns (Jain over the last 10 ms: {dcqcn_end:.4})");
    let acc = acc.expect("ACC never reached the fair share");
    let dcqcn = dcqcn.expect("DCQCN never reached the fair share");
    assert!(
        acc_end >= 0.97 && dcqcn_end >= 0.97,
        "unfair by the end: ACC {acc_end}, DCQCN {dcqcn_end}"
    );
    // A window starting at 0 still counts 1 ms: compare window ends.
    let ratio = (dcqcn + 1_000_000) as f64 / (acc + 1_000_000) as f64;
    println!("DCQCN / ACC convergence time (window ends): {ratio:.1}x");
    assert!(
        dcqcn > acc,
        "DCQCN {dcqcn} ns is not slower than ACC {acc} ns"
    );
}

/// HPCC holds utilisation near η = 0.95 with a near-empty queue.
#[test]
fn hpcc_utilisation_near_eta() {
    let mut cfg = Config::new(Algo::Hpcc, 4);
    cfg.duration_ns = 10_000_000;
    let t = run(&cfg);
    let half = t.port_bytes.len() / 2;
    let n = (t.port_bytes.len() - half) as f64;
    let util = t.port_bytes[half..].iter().sum::<u64>() as f64 * 8.0
        / (C as f64 * n * cfg.sample_ns as f64 / 1e9);
    let mean_q = t.queue_bytes[half..].iter().sum::<u64>() as f64 / n;
    let bdp = C as f64 * cfg.prop_rtt_ns as f64 / 8e9;
    println!(
        "HPCC 4 flows: utilisation {util:.3}, mean queue {mean_q:.0} B ({:.2} BDP), max queue {} B",
        mean_q / bdp,
        t.max_queue_bytes
    );
    assert!((util - 0.95).abs() <= 0.03, "utilisation {util}");
    assert!(
        mean_q <= 0.1 * bdp,
        "mean queue {mean_q} B is not near empty (BDP {bdp} B)"
    );
}
