//! DCQCN's reaction and notification points against the equations.

mod common;
use cc_core::cc::CongestionControl;
use cc_core::dcqcn::{Dcqcn, DcqcnKnobs, DcqcnNp};
use common::*;

fn setup() -> (Dcqcn, DcqcnKnobs) {
    let l = link(10, 50);
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
    let l = link(10, 50);
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
        base_rtt_ns: 10_000_000,
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
