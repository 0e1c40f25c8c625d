//! HPCC, FNCC and ICC against their papers' equations.

mod common;
use cc_core::cc::{AckEvent, CongestionControl, IntHop, IntInfo, IntWidths};
use cc_core::fixed::{bytes_in, Q32};
use cc_core::fncc::{Fncc, FnccKnobs, Lhcs};
use cc_core::hpcc::{Hpcc, HpccKnobs};
use cc_core::icc::{Icc, IccBranch, IccKnobs};
use common::*;

fn q(x: Q32) -> f64 {
    x.0 as f64 / 4294967296.0
}

fn hop(ts_ns: u64, tx_bytes: u64, qlen: u64) -> IntHop {
    IntHop {
        b_bps: 10 * GBPS,
        ts_ns,
        tx_bytes,
        qlen,
    }
}

fn int_ack<'a>(now: u64, acked: u32, info: IntInfo<'a>) -> AckEvent<'a> {
    AckEvent {
        now_ns: now,
        psn: 0,
        acked_bytes: acked,
        acked_psns: 1,
        ce: false,
        ce_pkts: 0,
        ue: false,
        nak: false,
        int: Some(info),
    }
}

fn setup(w_ai: u64) -> (Hpcc, HpccKnobs) {
    let (l, t) = (link(10), 10 * US);
    let mut k = HpccKnobs::for_link(&l, t);
    k.w_ai_bytes = w_ai;
    (Hpcc::new(&l, k, 0), k)
}

#[test]
fn u_from_two_int_samples() {
    let (mut h, _) = setup(0);
    // T = 10 us at 10 Gb/s: B·T = 12500 B. Over 10 us the port sent 12500 B
    // (txRate = B) and its queue went 10000 -> 20000: u = 10000/12500 + 1 = 1.8.
    let a = [hop(0, 0, 10_000)];
    let b = [hop(10_000, 12_500, 20_000)];
    h.on_ack(&int_ack(1, 4096, int(&a, 1)));
    h.on_ack(&int_ack(2, 4096, int(&b, 1)));
    assert!(
        close(q(h.utilisation()), 1.8, 1e-9),
        "U = {}",
        q(h.utilisation())
    );
}

#[test]
fn ewma_weights_by_tau_over_t() {
    let (mut h, _) = setup(0);
    // τ = T/4: U = 3/4·1 + 1/4·u, from the initial U = 1.
    let a = [hop(0, 0, 0)];
    let b = [hop(2_500, 6_250, 0)]; // txRate = 2·B: u = 2
    h.on_ack(&int_ack(1, 4096, int(&a, 1)));
    h.on_ack(&int_ack(2, 4096, int(&b, 1)));
    assert!(close(q(h.utilisation()), 0.75 + 0.25 * 2.0, 1e-9));
}

#[test]
fn counter_wrap() {
    let (mut h, _) = setup(0);
    let widths = IntWidths {
        ts_bits: 24,
        tx_bits: 20,
    };
    let a = [hop((1 << 24) - 4_000, (1 << 20) - 5_000, 10_000)];
    let b = [hop(6_000, 7_500, 20_000)]; // dt = 10 us, dtx = 12500 across the wrap
    let mut ia = int(&a, 1);
    ia.widths = widths;
    let mut ib = int(&b, 1);
    ib.widths = widths;
    h.on_ack(&int_ack(1, 4096, ia));
    h.on_ack(&int_ack(2, 4096, ib));
    assert!(
        close(q(h.utilisation()), 1.8, 1e-9),
        "U = {}",
        q(h.utilisation())
    );
}

/// HPCC Fig. 5: two ACKs in one RTT that report the same load give
/// `W(2) = W(1) = W^c/2`, not `W^c/4`.
#[test]
fn figure_5_no_overreaction() {
    let (mut h, k) = setup(0);
    let bdp = bytes_in(10 * GBPS, k.period_ns);
    let eta = q(k.eta);
    for i in 0..30 {
        h.on_send(0, i, 4096);
    }
    // τ = T on every sample, so U is each ACK's u. No queue; txRate sets u.
    let tx = |u: f64| (u * bdp as f64).round() as u64;
    let a = [hop(0, 0, 0)];
    let b0 = [hop(10_000, tx(eta), 0)];
    let p1 = [hop(20_000, tx(eta) + tx(2.0 * eta), 0)];
    let p2 = [hop(30_000, tx(eta) + 2 * tx(2.0 * eta), 0)];
    h.on_ack(&int_ack(1, 4096, int(&a, 1))); // stores L
                                             // The update point, at U = η: W^c stays, and the next update waits for
                                             // the ACK of data sent from now on.
    h.on_ack(&int_ack(2, 4096, int(&b0, 1)));
    let wc = h.reference_window();
    // P1 and P2 both see U = 2η.
    h.on_ack(&int_ack(3, 4096, int(&p1, 1)));
    let w1 = h.window();
    h.on_ack(&int_ack(4, 4096, int(&p2, 1)));
    let w2 = h.window();
    assert!(
        close(w1 as f64, wc as f64 / 2.0, 1e-3),
        "W(1) = {w1}, W^c = {wc}"
    );
    assert_eq!(w2, w1, "W(2) = W(1)");
    assert_eq!(h.reference_window(), wc, "W^c is fixed within the RTT");
}

#[test]
fn additive_increase_stages_then_multiplicative() {
    let (mut h, k) = setup(100);
    let bdp = bytes_in(10 * GBPS, k.period_ns);
    // Low utilisation (txRate = B/2): AI for maxStage updates, then one MI.
    let mut ts = 0;
    let mut tx = 0;
    let a = [hop(ts, tx, 0)];
    h.on_ack(&int_ack(1, 0, int(&a, 1)));
    // Start from a small window so increases are visible.
    h.set_reference_window(bdp / 4);
    let mut seen = Vec::new();
    for i in 0..8u64 {
        h.on_send(i, 0, 4096);
        ts += 10_000;
        tx += bdp / 2;
        let b = [hop(ts, tx, 0)];
        h.on_ack(&int_ack(2 + i, 4096, int(&b, 1)));
        seen.push(h.reference_window());
    }
    // U converges to 0.5 < η; stages 1..=5 add W_AI, the 6th is W^c·η/U + W_AI.
    for i in 1..5 {
        assert_eq!(seen[i], seen[i - 1] + 100, "AI step {i}: {seen:?}");
    }
    assert!(seen[5] > seen[4] + 100, "MI step after maxStage: {seen:?}");
}

#[test]
fn path_change_resets_reference() {
    let (mut h, _) = setup(0);
    let a = [hop(0, 0, 0)];
    let b = [hop(10_000, 100_000, 100_000)];
    h.on_ack(&int_ack(1, 4096, int(&a, 1)));
    let mut other = int(&b, 1);
    other.path_id = 9;
    let u = h.utilisation();
    h.on_ack(&int_ack(2, 4096, other));
    assert_eq!(h.utilisation(), u, "a new path only stores its records");
}

/// One LHCS jump on a 10 Gb/s link with T = 1 ms (a fair window far above
/// one MTU): the last hop (index 0) at u = 2 > α over one T, `n` flows.
fn lhcs_jump(k: FnccKnobs, n: u16) -> Fncc {
    let l = link(10);
    let mut f = Fncc::new(&l, k, 0);
    let bdp = bytes_in(10 * GBPS, k.hpcc.period_ns);
    let a = [hop(0, 0, bdp), hop(0, 0, 0)];
    let b = [hop(1_000_000, bdp, bdp), hop(1_000_000, bdp / 2, 0)];
    f.on_send(0, 0, 4096);
    f.on_ack(&int_ack(1, 0, int(&a, n)));
    f.on_ack(&int_ack(2, 4096, int(&b, n)));
    assert_eq!(f.lhcs_jumps(), 1);
    f
}

#[test]
fn fncc_lhcs_jumps_to_fair_window() {
    let (l, t) = (link(10), 1000 * US);
    let mut k = FnccKnobs::for_link(&l, t);
    k.hpcc.w_ai_bytes = 0;
    let bdp = bytes_in(10 * GBPS, k.hpcc.period_ns);
    // §3.2.2: W = W^c = B·T·β/N, for each β and N.
    for (beta, n) in [(900, 4u16), (900, 2), (500, 4)] {
        k.beta = Q32::from_milli(beta);
        let f = lhcs_jump(k, n);
        let want = bdp * beta / 1000 / u64::from(n);
        assert!(
            close(f.hpcc().window() as f64, want as f64, 1e-5),
            "β {beta} N {n}: W = {} want {want}",
            f.hpcc().window()
        );
        assert_eq!(f.hpcc().reference_window(), f.hpcc().window());
    }
    // Algorithm 3's order: W^c = B·T·β/N, then COMPUTEWIND: U = 2 >= η,
    // W = W^c·η/U.
    k.beta = Q32::from_milli(900);
    k.lhcs = Lhcs::ComputeWind;
    let f = lhcs_jump(k, 4);
    let want = (bdp * 9 / 10 / 4) as f64 * 0.95 / 2.0;
    assert!(
        close(f.hpcc().window() as f64, want, 1e-3),
        "COMPUTEWIND: W = {} want {want}",
        f.hpcc().window()
    );
    // Congestion on a middle hop does not jump.
    let mut g = Fncc::new(&l, k, 0);
    let a2 = [hop(0, 0, 0), hop(0, 0, bdp)];
    let c = [hop(1_000_000, bdp / 2, 0), hop(1_000_000, bdp, bdp)];
    g.on_ack(&int_ack(1, 0, int(&a2, 4)));
    g.on_ack(&int_ack(2, 4096, int(&c, 4)));
    assert_eq!(g.lhcs_jumps(), 0);
}

/// LHCS tests the ACK's instantaneous u′ (the paper's Umax), not HPCC's
/// smoothed U: with τ < T the two differ. U starts at 1.
#[test]
fn fncc_lhcs_tests_the_instantaneous_u() {
    let (l, t) = (link(10), 1000 * US);
    let k = FnccKnobs::for_link(&l, t);
    let t = k.hpcc.period_ns;
    let bdp = bytes_in(10 * GBPS, t);
    let tau = t / 10;
    let line = bytes_in(10 * GBPS, tau);
    // The last hop at u′ = 0.3 + 1 = 1.3 > α over τ = T/10: U = 0.9 + 0.13
    // = 1.03 < α. The jump must happen.
    let qlen = bdp * 3 / 10;
    let mut f = Fncc::new(&l, k, 0);
    f.on_send(0, 0, 4096);
    f.on_ack(&int_ack(1, 0, int(&[hop(0, 0, qlen)], 4)));
    f.on_ack(&int_ack(2, 4096, int(&[hop(tau, line, qlen)], 4)));
    assert!(q(f.hpcc().utilisation()) < q(k.alpha), "U below α");
    assert_eq!(f.lhcs_jumps(), 1, "u′ = 1.3 > α: LHCS");
    // The other way round: U driven to ~2 by a long congested spell, then
    // one sample at u′ = 1 < α: no jump, though U > α.
    let mut g = Fncc::new(&l, k, 0);
    let mut ts = 0;
    let mut tx = 0;
    g.on_ack(&int_ack(1, 0, int(&[hop(ts, tx, bdp)], 4)));
    for i in 0..8 {
        ts += t;
        tx += bdp;
        g.on_ack(&int_ack(2 + i, 0, int(&[hop(ts, tx, bdp)], 4)));
    }
    let jumps = g.lhcs_jumps();
    ts += tau;
    tx += line;
    g.on_ack(&int_ack(20, 0, int(&[hop(ts, tx, 0)], 4)));
    assert!(q(g.hpcc().utilisation()) > q(k.alpha), "U above α");
    assert_eq!(g.lhcs_jumps(), jumps, "u′ = 1 ≤ α: no LHCS");
}

#[test]
fn icc_branch_selection() {
    let (l, t) = (link(10), 10 * US);
    let k = IccKnobs::for_link(&l, t);
    let line = 10 * GBPS;
    let mk = |qlen: u64, rate: i64, lu: u64| {
        let hops = [IntHop {
            b_bps: line,
            ts_ns: 0,
            tx_bytes: 0,
            qlen,
        }];
        let mut icc = Icc::new(&l, k, 0);
        let mut info = int(&hops, 4);
        info.qlen_rate = rate;
        info.lu = Q32::from_milli(lu);
        icc.on_ack(&int_ack(1, 4096, info));
        (icc.branch(), icc.pacing(0).rate_bps, icc)
    };
    let (b, r, icc) = mk(20_000, 1_000_000_000, 900);
    assert_eq!(b, IccBranch::Max);
    assert_eq!(r, icc.v_max(line, 4, 20_000, 1_000_000_000).min(line));
    // Q_d is one BDP, 12.5 KB at 10 Gb/s and 10 us: 20 KB is above it,
    // so the 7.5 KB excess drains within T.
    let want = line as f64 / 4.0 - 7_500.0 * 8.0 / (4.0 * 10e-6);
    assert!(
        close(r as f64, want, 1e-6),
        "V_max above Q_d {r} want {want}"
    );
    // Below Q_d, growing at 1 GB/s: t_m = 2.5 KB / 1 GB/s = 2.5 us, so T.
    let (_, r, _) = mk(10_000, 1_000_000_000, 900);
    let want = line as f64 / 4.0 + 2_500.0 * 8.0 / (4.0 * 10e-6);
    assert!(close(r as f64, want, 1e-6), "V_max {r} want {want}");
    let (b, r, icc) = mk(5_000, -1_000, 900);
    assert_eq!(b, IccBranch::Min);
    // V_min = C/n − qlen/(n·T) = 10G/4 − 5000 B·8/(4·10 us): the four
    // flows drain the queue within T.
    let want = line as f64 / 4.0 - 5_000.0 * 8.0 / (4.0 * 10e-6);
    assert!(close(r as f64, want, 1e-6), "V_min {r} want {want}");
    assert_eq!(r, icc.v_min(line, 4, 5_000).min(line));
    // A queue the link cannot drain in T: the minimum rate, not zero.
    let (_, r, _) = mk(200_000, -1_000, 900);
    assert_eq!(r, k.min_rate_bps);
    let (b, r, _) = mk(0, 0, 600);
    assert_eq!(b, IccBranch::Increase);
    assert_eq!(
        r, line,
        "from line rate the lu-weighted increase stays at line"
    );
}

/// ICC's increase branch from below line rate: `V = V·lu + line·(1 − lu)`
/// (Algorithm 1, no queue), for two values of lu.
#[test]
fn icc_increase_from_below_line() {
    let (l, t) = (link(10), 10 * US);
    let k = IccKnobs::for_link(&l, t);
    let line = 10 * GBPS;
    let ack = |icc: &mut Icc, qlen: u64, rate: i64, lu: u64| {
        let hops = [IntHop {
            b_bps: line,
            ts_ns: 0,
            tx_bytes: 0,
            qlen,
        }];
        let mut info = int(&hops, 4);
        info.qlen_rate = rate;
        info.lu = Q32::from_milli(lu);
        icc.on_ack(&int_ack(1, 4096, info));
    };
    for lu in [600u64, 900] {
        let mut icc = Icc::new(&l, k, 0);
        // A draining queue first: V_min, a quarter of the line less the drain.
        ack(&mut icc, 5_000, -1_000, 900);
        let v = icc.pacing(0).rate_bps;
        assert!(v < line / 4, "V_min {v}");
        // Then no queue: the lu-weighted step up.
        ack(&mut icc, 0, 0, lu);
        assert_eq!(icc.branch(), IccBranch::Increase);
        let want = v as f64 * lu as f64 / 1000.0 + line as f64 * (1.0 - lu as f64 / 1000.0);
        let got = icc.pacing(0).rate_bps;
        assert!(
            close(got as f64, want, 1e-6),
            "lu {lu}: V = {got} want {want}"
        );
    }
}

#[test]
fn inflight_counts_new_psns_once() {
    let (mut h, _) = setup(0);
    for psn in 0..4 {
        h.on_send(psn as u64, psn, 1000);
    }
    assert_eq!(h.inflight(), 4000);
    // Go-back-N resends PSNs 2 and 3: still 4000 B in flight, not 6000.
    h.on_send(10, 2, 1000);
    h.on_send(11, 3, 1000);
    assert_eq!(h.inflight(), 4000);
    h.on_ack(&AckEvent {
        now_ns: 12,
        psn: 3,
        acked_bytes: 4000,
        acked_psns: 1,
        ce: false,
        ce_pkts: 0,
        ue: false,
        nak: false,
        int: None,
    });
    assert_eq!(h.inflight(), 0);
    // Across the 24-bit PSN wrap, a new PSN is still new.
    h.on_send(13, 4, 1000);
    let mut h2 = setup(0).0;
    h2.on_send(0, 0x00ff_ffff, 1000);
    h2.on_send(1, 0, 1000);
    assert_eq!(h2.inflight(), 2000);
}

/// A READ is booked by its last PSN (rxe_cc's tx_done): the requests after
/// it are new, and a READ retried from one of its own PSNs is not (booked
/// by its first PSN, the retry would count the rest of the READ twice).
#[test]
fn a_retried_read_is_no_new_data() {
    let (mut h, _) = setup(0);
    // PSN 0 a 1000-byte WRITE; PSNs 1..=4 a READ of 16000 B; PSN 5 a WRITE.
    h.on_send(0, 0, 1000);
    h.on_send(1, 4, 16_000);
    h.on_send(2, 5, 1000);
    assert_eq!(h.inflight(), 18_000);
    // Retried from its third response: PSN 3, last PSN 4, 8000 B left.
    h.on_send(3, 4, 8000);
    assert_eq!(h.inflight(), 18_000);
    assert!(h.is_new_psn(6));
    assert!(!h.is_new_psn(3));
    // Booked by its first PSN instead, the same retry counts 8000 B more.
    let mut first = setup(0).0;
    first.on_send(0, 0, 1000);
    first.on_send(1, 1, 16_000);
    first.on_send(3, 3, 8000);
    assert_eq!(first.inflight(), 25_000);
}
