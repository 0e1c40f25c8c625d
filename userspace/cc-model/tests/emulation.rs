//! The testbed's emulation effects in the model (`Emulation`, used by
//! `rxecc model`): each does what it says, and only when it is on.

use cc_model::{run, Algo, Config, Emulation, Marking, Pfc};

/// The incast at the testbed's scale: four flows at 100 Mb/s into a
/// 40 Mb/s port, 4 KB packets, T = 10 ms.
fn testbed_incast(algo: Algo) -> Config {
    let mut c = Config::new(algo, 4);
    c.line_rate_bps = 100_000_000;
    c.port_rate_bps = 40_000_000;
    c.mtu = 4096;
    c.prop_rtt_ns = 1_640_000;
    c.period_ns = 10_000_000;
    c.sample_ns = 20_000_000;
    c.duration_ns = 3_000_000_000;
    if algo == Algo::Acc {
        c.marking = Marking::Tcd {
            threshold_bytes: 16_384,
            max_ton_ns: 0,
        };
    }
    c
}

const PFC: Pfc = Pfc {
    xoff_bytes: 32_768,
    xon_bytes: 16_384,
    delay_ns: 2_000_000,
    refresh_ns: 10_000_000,
};

/// Without CC the queue grows without bound; PFC holds each ingress near
/// its XOFF plus what τ lets through, and counts its pauses, while the
/// port stays busy.
#[test]
fn pfc_bounds_the_queue_and_counts_pauses() {
    let free = run(&testbed_incast(Algo::None));
    let mut c = testbed_incast(Algo::None);
    c.emulation.pfc = Some(PFC);
    let paused = run(&c);
    // Per flow: XOFF, what the sender sends in τ and what is on the wire
    // (half the RTT) at the line rate, and a packet each side.
    let bound = 4
        * (PFC.xoff_bytes
            + (PFC.delay_ns + c.prop_rtt_ns / 2) * c.line_rate_bps / 8_000_000_000
            + 2 * 4096);
    let pauses = *paused.pauses.last().unwrap();
    let busy: u64 = paused.port_bytes.iter().sum::<u64>() * 8 * 100 * 1_000_000_000
        / (c.port_rate_bps * paused.t_ns.last().unwrap());
    println!(
        "no PFC: peak {} B; PFC: peak {} B (bound {bound}), {pauses} XOFFs, port busy {busy}%",
        free.max_queue_bytes, paused.max_queue_bytes
    );
    assert_eq!(*free.pauses.last().unwrap(), 0);
    // Without PFC only rxe's 128 packets in flight per flow bound it.
    assert!(free.max_queue_bytes > 5 * bound);
    assert!(paused.max_queue_bytes <= bound);
    assert!(pauses > 0);
    assert!(busy >= 95, "the port idled under PFC: {busy}%");
}

/// Late timers stretch ACC's halts past their planned length by about
/// the lateness. On time, a halt overruns its plan only by the wait for
/// the next packet's pacing time.
#[test]
fn late_timers_stretch_acc_halts() {
    let late_ns = 4_000_000;
    let stretch = |c: &Config| -> (usize, u64) {
        let t = run(c);
        let mut d: Vec<u64> = t
            .halts
            .iter()
            .filter_map(|h| h.actual_ns.map(|a| a.saturating_sub(h.planned_ns)))
            .collect();
        d.sort_unstable();
        (d.len(), d.get(d.len() / 2).copied().unwrap_or(0))
    };
    let on_time = testbed_incast(Algo::Acc);
    let mut late = on_time.clone();
    late.emulation = Emulation {
        period_late_ns: vec![late_ns],
        pacer_late_ns: vec![late_ns],
        ..Emulation::default()
    };
    let (n0, d0) = stretch(&on_time);
    let (n1, d1) = stretch(&late);
    println!(
        "halts on time: {n0}, median past plan {d0} ns; {late_ns} ns late: {n1}, median {d1} ns"
    );
    assert!(n0 > 0 && n1 > 0, "no halts");
    assert!(d0 < late_ns / 2, "on time, halts overran by {d0} ns");
    assert!(
        d1 >= late_ns * 3 / 4,
        "late timers, halts overran by only {d1} ns"
    );
}

/// Share of the port's capacity a run used, %.
fn busy_percent(c: &Config) -> u64 {
    let t = run(c);
    t.port_bytes.iter().sum::<u64>() * 8 * 100 * 1_000_000_000
        / (c.port_rate_bps * t.t_ns.last().unwrap())
}

/// A late period timer only delays ACC's decisions; a late pacer delays
/// every paced packet past the credit it may catch up on, and the link
/// idles (on the testbed this is most of what late timers cost:
/// docs/experiments.md). Catch-up (`pacing_catchup_ns`) wins it back.
#[test]
fn a_late_pacer_costs_throughput_and_late_periods_do_not() {
    let late_ns = 2_000_000;
    let on_time = testbed_incast(Algo::Acc);
    let mut periods = on_time.clone();
    periods.emulation.period_late_ns = vec![late_ns];
    let mut pacer = on_time.clone();
    pacer.emulation.pacer_late_ns = vec![late_ns];
    let (b0, b1, b2) = (
        busy_percent(&on_time),
        busy_percent(&periods),
        busy_percent(&pacer),
    );
    println!("port busy: on time {b0}%, late periods {b1}%, late pacer {b2}%");
    assert!(b1 + 5 >= b0, "late periods alone cost {b0}% -> {b1}%");
    assert!(b2 + 10 <= b1, "a late pacer cost only {b1}% -> {b2}%");
    // rxe_cc's pacing_catchup_us: a late send counts from when it was due,
    // so the flows win back what the pacer lost.
    let mut caught_up = pacer.clone();
    caught_up.pacing_catchup_ns = 10_000_000;
    let b3 = busy_percent(&caught_up);
    println!("late pacer with 10 ms of catch-up: {b3}%");
    assert!(
        b3 + 5 >= b0,
        "with catch-up, a late pacer still cost {b0}% -> {b3}%"
    );
}
