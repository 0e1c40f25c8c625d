//! The fabric model against the GFC paper's claims (docs/switch.md).

use fc_model::{cbd, cbd_of, run, shift_flows, Flow, Net, Params, Sched};

const SLOTS: usize = 20_000;

#[test]
fn gfc_stages_follow_the_paper() {
    // B_m 1000, B_1 750: B_2 = 875, B_3 = 937.5, B_4 = 968.75.
    let st = |q| Flow::gfc_stage(750, 1000, 19, q);
    assert_eq!((st(749), st(750), st(874), st(875)), (0, 1, 1, 2));
    assert_eq!((st(937), st(938), st(968), st(969)), (2, 3, 3, 4));
    assert_eq!(st(1000), 19);
}

/// The ring, with the emulated switch's discipline (one FIFO per output):
/// PFC locks its three switch-to-switch links; GFC never does, and every
/// flow keeps moving.
#[test]
fn ring_deadlocks_under_pfc_and_not_under_gfc() {
    let flows = shift_flows(3, 2);
    let o = run(
        &Net::ring3(),
        &flows,
        &Params::paper(false, Sched::Fifo, SLOTS),
    );
    assert_eq!(o.cycle.len(), 3, "{o:?}");
    assert!(o.cycle.iter().all(|&(a, b)| a >= 3 && b >= 3), "{o:?}");
    let stalled = o.delivered.clone();
    // Locked for good: twice as long delivers nothing more.
    let o2 = run(
        &Net::ring3(),
        &flows,
        &Params::paper(false, Sched::Fifo, 2 * SLOTS),
    );
    assert_eq!(o2.delivered, stalled, "the PFC ring moved after it locked");

    let o = run(
        &Net::ring3(),
        &flows,
        &Params::paper(true, Sched::Fifo, SLOTS),
    );
    assert!(o.cycle.is_empty(), "{o:?}");
    let o2 = run(
        &Net::ring3(),
        &flows,
        &Params::paper(true, Sched::Fifo, 2 * SLOTS),
    );
    for (a, b) in o.delivered.iter().zip(&o2.delivered) {
        assert!(
            b > a,
            "a GFC flow stopped: {:?} then {:?}",
            o.delivered,
            o2.delivered
        );
    }
}

/// With a FIFO per input served round-robin (an input-buffered switch, as
/// the paper's software switches are), GFC gives each flow C/2 and holds
/// the queue at its first stage, below B_m: the paper's testbed result.
#[test]
fn ring_runs_at_half_rate_under_gfc_with_round_robin() {
    let p = Params::paper(true, Sched::RoundRobin, SLOTS);
    let o = run(&Net::ring3(), &shift_flows(3, 2), &p);
    assert!(o.cycle.is_empty(), "{o:?}");
    for (f, d) in o.delivered.iter().enumerate() {
        assert!(
            *d as usize > SLOTS / 2 * 9 / 10 && (*d as usize) <= SLOTS / 2,
            "flow {f}: {d} packets in {SLOTS} slots"
        );
    }
    let Flow::Gfc { bm, .. } = p.flow else {
        unreachable!()
    };
    assert!(o.peak_ingress <= bm, "peak {} > B_m {bm}", o.peak_ingress);
}

/// A k = 4 fat tree from Table 1's run (examples/table1.rs), with three
/// links failed: edge 17 - agg 25, agg 24 - core 33 and agg 30 - core 32.
/// Some shortest paths then bounce core -> agg -> core, and four of those
/// links close a CBD (core 32 -> agg 28 -> core 33 -> agg 26 -> core 32).
/// With one workload of that run PFC locks it; GFC, on the same flows,
/// does not, and every flow keeps moving.
#[test]
fn a_failed_fat_tree_locks_under_pfc_and_not_under_gfc() {
    let net = Net::fat_tree(4).without(&[(17, 25), (24, 33), (30, 32)]);
    assert!(cbd(&net).is_some());
    let flows = [
        (0, 5),
        (1, 4),
        (2, 1),
        (3, 15),
        (4, 15),
        (5, 8),
        (6, 14),
        (7, 1),
        (8, 15),
        (9, 15),
        (10, 5),
        (11, 0),
        (12, 0),
        (13, 8),
        (14, 3),
        (15, 2),
    ];
    assert!(
        cbd_of(&net, &flows).is_some(),
        "these flows' routes close the CBD"
    );
    let o = run(&net, &flows, &Params::paper(false, Sched::Fifo, SLOTS));
    assert!(!o.cycle.is_empty(), "{o:?}");
    // Switch-to-switch links only (hosts are 0..16).
    assert!(o.cycle.iter().all(|&(a, b)| a >= 16 && b >= 16), "{o:?}");
    let g = run(&net, &flows, &Params::paper(true, Sched::Fifo, SLOTS));
    assert!(g.cycle.is_empty(), "{g:?}");
    let g2 = run(&net, &flows, &Params::paper(true, Sched::Fifo, 2 * SLOTS));
    for (f, (a, b)) in g.delivered.iter().zip(&g2.delivered).enumerate() {
        assert!(b > a, "flow {f} stopped under GFC: {a} then {b}");
    }
}

#[test]
fn intact_fat_tree_never_deadlocks() {
    // Shortest paths in an intact fat tree go up, then down: no CBD.
    assert!(cbd(&Net::fat_tree(4)).is_none());
    assert!(cbd(&Net::fat_tree(8)).is_none());
    assert!(cbd(&Net::ring3()).is_some());
    let net = Net::fat_tree(4);
    for shift in [1, 5, 9] {
        let o = run(
            &net,
            &shift_flows(net.hosts, shift),
            &Params::paper(false, Sched::Fifo, SLOTS / 2),
        );
        assert!(o.cycle.is_empty(), "shift {shift}: {o:?}");
        assert!(o.delivered.iter().all(|&d| d > 0), "shift {shift}: {o:?}");
    }
}
