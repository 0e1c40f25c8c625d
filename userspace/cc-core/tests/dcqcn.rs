//! DCQCN's reaction and notification points against the equations.

mod common;
use cc_core::cc::CongestionControl;
use cc_core::dcqcn::{Dcqcn, DcqcnKnobs, DcqcnNp};
use common::*;

fn setup() -> (Dcqcn, DcqcnKnobs) {
    let l = link(10);
    let k = DcqcnKnobs::for_link(&l);
    (Dcqcn::new(&l, k, 0), k)
}

#[test]
fn alpha_and_rate_after_k_cnps() {
    let (mut rp, k) = setup();
    let g = 1.0 / 256.0;
    // Let α decay for 10 periods first, so that it is not at its fixed point 1.
    rp.on_timer(10 * k.alpha_period_ns);
    let mut alpha: f64 = (1.0f64 - g).powi(10);
    let mut rate = 10e9;
    // The timer also raised Rc (fast recovery towards Rt = line: no change).
    assert_eq!(rp.pacing(0).rate_bps, 10 * GBPS);
    for i in 1..=6 {
        let now = 10 * k.alpha_period_ns + i * 1_000;
        rp.on_cnp(now);
        rate *= 1.0 - alpha / 2.0;
        alpha = (1.0 - g) * alpha + g;
        let got = rp.pacing(now).rate_bps as f64;
        // Each Q32 step may lose 2^-32 of α: the error stays far below 1e-6.
        assert!(close(got, rate, 1e-6), "CNP {i}: rate {got} want {rate}");
        let a = rp.alpha().0 as f64 / 4294967296.0;
        assert!(close(a, alpha, 1e-6), "CNP {i}: alpha {a} want {alpha}");
    }
}

#[test]
fn increase_stages() {
    let (mut rp, k) = setup();
    rp.on_cnp(0);
    let rt = 10 * GBPS;
    let mut rc = 5 * GBPS;
    assert_eq!(rp.pacing(0).rate_bps, rc);
    // F = 5 timer events of fast recovery: Rc = (Rt + Rc)/2.
    for i in 1..=5u64 {
        rp.on_timer(i * k.rate_period_ns);
        rc = (rt + rc) / 2;
        assert_eq!(rp.pacing(0).rate_bps, rc, "fast recovery {i}");
        assert_eq!(rp.target_rate_bps(), rt);
    }
    // Timer events past F: additive increase (Rt is capped at line).
    rp.on_timer(6 * k.rate_period_ns);
    assert_eq!(rp.target_rate_bps(), 10 * GBPS);
}

#[test]
fn additive_and_hyper_increase_below_line() {
    let l = link(10);
    let mut k = DcqcnKnobs::for_link(&l);
    k.byte_reset = 4096;
    let mut rp = Dcqcn::new(&l, k, 0);
    rp.on_cnp(0);
    rp.on_cnp(1);
    rp.on_cnp(2); // Rc ≈ 1.25 G, Rt ≈ 2.5 G
    let rt0 = rp.target_rate_bps();
    // 5 timer events (t <= F): fast recovery only.
    rp.on_timer(5 * k.rate_period_ns + 2);
    assert_eq!(rp.target_rate_bps(), rt0);
    // A 6th timer event: t = 6 > F, bc = 0: additive.
    rp.on_timer(6 * k.rate_period_ns + 2);
    assert_eq!(rp.target_rate_bps(), rt0 + k.ai_rate_bps);
    // Byte-counter events: bc = 1..=5 are additive (t is past F), bc = 6
    // is hyper with i = min(t, bc) − F = 1.
    for _ in 0..6 {
        rp.on_send(6 * k.rate_period_ns + 3, 0, 4096);
    }
    let want = rt0 + k.ai_rate_bps * 6 + k.hai_rate_bps;
    assert_eq!(rp.target_rate_bps(), want);
}

#[test]
fn np_sends_at_most_one_cnp_per_interval() {
    let mut np = DcqcnNp::new(50 * US);
    let sent: Vec<u64> = (0..200u64)
        .map(|i| i * US)
        .filter(|&t| np.on_ce(t))
        .collect();
    assert_eq!(sent, vec![0, 50 * US, 100 * US, 150 * US]);
}

/// Rates at 0 keep the link's defaults (R_HAI follows R_AI); times, steps
/// and g are the module's.
#[test]
fn settings_default_to_the_link() {
    use cc_core::dcqcn::{DcqcnKnobs, DcqcnSettings};
    let link = cc_core::cc::LinkParams {
        line_rate_bps: 100_000_000,
        mtu: 4096,
    };
    let base = DcqcnKnobs::for_link(&link);
    let s = DcqcnSettings {
        rate_period_ns: 20_000_000,
        alpha_period_ns: 20_000_000,
        byte_reset: 262_144,
        threshold: 5,
        g_1024: 4,
        ..Default::default()
    };
    let k = DcqcnKnobs::from_settings(&link, &s);
    assert_eq!(
        (k.ai_rate_bps, k.hai_rate_bps, k.min_rate_bps),
        (base.ai_rate_bps, base.ai_rate_bps * 10, base.min_rate_bps)
    );
    assert_eq!(
        (k.rate_period_ns, k.byte_reset, k.threshold),
        (20_000_000, 262_144, 5)
    );
    assert_eq!(k.g, cc_core::fixed::Q32::ratio(1, 256));
    let k = DcqcnKnobs::from_settings(
        &link,
        &DcqcnSettings {
            ai_rate_bps: 1_000_000,
            min_rate_bps: 7,
            ..s
        },
    );
    assert_eq!(
        (k.ai_rate_bps, k.hai_rate_bps, k.min_rate_bps),
        (1_000_000, 10_000_000, 7)
    );
}

/// The HPCC simulator's DCQCN (`rdma-hw.cc`), `dcqcn_variant=1`, with its
/// own defaults: F = 1, a 4 us decrease check, α every 1 us, 300 us
/// increase timer (unscaled here: a 10 Gb/s link).
fn sim() -> (Dcqcn, DcqcnKnobs) {
    use cc_core::dcqcn::DcqcnVariant;
    let l = link(10);
    let k = DcqcnKnobs {
        variant: DcqcnVariant::Simulator,
        decrease_period_ns: 4_000,
        alpha_period_ns: 1_000,
        rate_period_ns: 300_000,
        threshold: 1,
        ..DcqcnKnobs::for_link(&l)
    };
    (Dcqcn::new(&l, k, 0), k)
}

/// A CNP cuts nothing at once: the next decrease check does, once however
/// many CNPs came, with α = 1 from the first CNP (`cnp_received_mlx`).
#[test]
fn simulator_cuts_at_most_once_per_check() {
    let (mut rp, _) = sim();
    let line = 10 * GBPS;
    for t in [100, 200, 300, 3_000] {
        rp.on_cnp(t);
        assert_eq!(rp.pacing(t).rate_bps, line, "no cut on the CNP itself");
    }
    // The check at 100 + 4000 ns: one cut by α/2. α was 1 at the first CNP
    // and its timer ran at 1100, 2100, 3100 (with the flag) and 4100 ns,
    // after the check (α first, 1 ns before the check, as there).
    rp.on_timer(4_100);
    let r = rp.pacing(4_100).rate_bps;
    assert!(
        r < line && r >= line / 2 - 1 && r <= line * 51 / 100,
        "one cut near half: {r}"
    );
    // More CNPs within the next 4 us: one more cut at the next check.
    rp.on_cnp(5_000);
    rp.on_cnp(6_000);
    rp.on_timer(8_099);
    assert_eq!(
        rp.pacing(8_099).rate_bps,
        r,
        "the check at 8100 has not run"
    );
    rp.on_timer(8_100);
    assert!(rp.pacing(8_100).rate_bps < r, "cut at the check");
    // No CNP since: no more cuts.
    let r2 = rp.pacing(8_100).rate_bps;
    rp.on_timer(50_000);
    assert_eq!(rp.pacing(50_000).rate_bps, r2);
}

/// The increase timer restarts at the cut; F = 1: one fast recovery, then
/// additive (R_AI) once, then hyper (R_HAI, constant, not i·R_HAI). No
/// byte counter: sending changes nothing.
#[test]
fn simulator_increase_stages_and_no_byte_counter() {
    let (mut rp, k) = sim();
    let line = 10 * GBPS;
    rp.on_cnp(0);
    rp.on_timer(4_000);
    let rc0 = rp.pacing(4_000).rate_bps;
    let rt0 = rp.target_rate_bps();
    assert_eq!(rt0, line, "no increase yet: Rt not clamped to Rc");
    for i in 0..10_000 {
        rp.on_send(4_000, i, 4096);
    }
    assert_eq!(rp.pacing(4_000).rate_bps, rc0, "bytes sent raise nothing");
    // Event 1 at 4000 + 300000: fast recovery, Rc = (Rt + Rc)/2.
    rp.on_timer(304_000);
    let rc1 = rp.pacing(304_000).rate_bps;
    assert_eq!(rc1, (rt0 + rc0) / 2);
    assert_eq!(rp.target_rate_bps(), rt0);
    // A cut now clamps Rt to Rc (an increase happened), then event 2 is
    // again fast recovery; here without a cut: event 2 is additive.
    rp.on_timer(604_000);
    let rt2 = rp.target_rate_bps();
    assert_eq!(rt2, line.min(rt0 + k.ai_rate_bps));
    // Below the line, the hyper steps add R_HAI each, constant.
    let (mut rp, k) = sim();
    rp.on_cnp(0);
    rp.on_cnp(5_000); // cut at 4000, then at 8000 with no increase between:
    rp.on_timer(8_000); // Rt stays at the line; the timer restarts at 8000
    assert_eq!(rp.target_rate_bps(), line);
    rp.on_timer(308_000); // event 1: fast recovery
    rp.on_cnp(309_000);
    rp.on_timer(312_000); // the cut: Rt = Rc, since an increase happened
    let rt = rp.target_rate_bps();
    assert!(rt < line);
    rp.on_timer(612_000); // fast recovery
    assert_eq!(rp.target_rate_bps(), rt);
    rp.on_timer(912_000); // additive
    assert_eq!(rp.target_rate_bps(), rt + k.ai_rate_bps);
    rp.on_timer(1_212_000); // hyper
    rp.on_timer(1_512_000); // hyper
    assert_eq!(
        rp.target_rate_bps(),
        rt + k.ai_rate_bps + 2 * k.hai_rate_bps
    );
}
