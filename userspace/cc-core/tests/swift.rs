//! Swift's windows against Algorithm 1 and §3.2 of the paper, in f64.

mod common;
use cc_core::cc::{AckEvent, CongestionControl};
use cc_core::swift::{Swift, SwiftKnobs};
use common::*;

const MTU: u64 = 4096;

fn setup() -> (Swift, SwiftKnobs) {
    let (l, t) = (link(10), 50 * US);
    let k = SwiftKnobs::for_link(&l, t);
    (Swift::new(&l, k, 0), k)
}

fn q(x: cc_core::fixed::Q32) -> f64 {
    x.0 as f64 / 4294967296.0
}

/// §3.2's flow scaling in f64: α/√cwnd + β within [0, fs_range].
fn fs_ref(k: &SwiftKnobs, cwnd_pkts: f64) -> f64 {
    let (lo, hi) = (
        k.fs_min_cwnd_milli as f64 / 1000.0,
        k.fs_max_cwnd_milli as f64 / 1000.0,
    );
    let range = k.fs_range_ns as f64;
    let alpha = range / (1.0 / lo.sqrt() - 1.0 / hi.sqrt());
    let beta = -alpha / hi.sqrt();
    (alpha / cwnd_pkts.sqrt() + beta).clamp(0.0, range)
}

/// Drives the fabric window to `pkts` packets with decreases, one per RTT.
fn shrink_to(s: &mut Swift, pkts: f64, now: &mut u64) {
    while s.fabric_window() as f64 > pkts * MTU as f64 {
        *now += 1_000_000_000;
        s.on_delay(*now, 1_000_000_000, 0, 1);
    }
}

/// One timed packet, sent at 0 and acknowledged `rtt` later: Swift's
/// first RTT sample (its ACK reacts at that delay).
fn learn_rtt(s: &mut Swift, rtt: u64) {
    s.on_send(0, 0, 4096);
    s.on_ack(&AckEvent {
        psn: 0,
        ..ack(rtt, 4096, false, false)
    });
}

#[test]
fn flow_scaling_target() {
    let (l, t) = (link(10), 50 * US);
    let mut k = SwiftKnobs::for_link(&l, t);
    k.max_cwnd_bytes = 200 * MTU;
    let mut s = Swift::new(&l, k, 0);
    let mut now = 0;
    assert_eq!(
        s.fabric_target_ns(),
        k.base_target_ns,
        "at and above fs_max_cwnd: the base"
    );
    for pkts in [50.0, 10.0, 2.0, 0.5, 0.1, 0.01] {
        shrink_to(&mut s, pkts, &mut now);
        let w = s.fabric_window() as f64 / MTU as f64;
        let want = k.base_target_ns as f64 + fs_ref(&k, w);
        let got = s.fabric_target_ns() as f64;
        // 1/√cwnd is kept to 2^-16: a few ns of a ms-scale target.
        assert!(
            (got - want).abs() <= 1e-4 * k.fs_range_ns as f64,
            "{w} packets: target {got} want {want}"
        );
    }
    assert_eq!(
        s.fabric_target_ns(),
        k.base_target_ns + k.fs_range_ns,
        "below fs_min_cwnd: the whole range"
    );
}

#[test]
fn additive_increase_per_ack() {
    let (mut s, k) = setup();
    let mut now = 0;
    // At 8 packets: cwnd += ai/cwnd per packet ACKed.
    shrink_to(&mut s, 8.0, &mut now);
    let w0 = s.fabric_window() as f64 / MTU as f64;
    s.on_delay(now + 1, 0, 0, 3);
    let want = w0 + q(k.ai) / w0 * 3.0;
    let got = s.fabric_window() as f64 / MTU as f64;
    assert!((got - want).abs() < 1e-3, "{got} packets, want {want}");
    // Below one packet: cwnd += ai per packet ACKed.
    shrink_to(&mut s, 0.2, &mut now);
    let w0 = s.fabric_window();
    s.on_delay(now + 1, 0, 0, 1);
    assert_eq!(s.fabric_window(), w0 + q(k.ai) as u64 * MTU);
}

#[test]
fn multiplicative_decrease_once_per_rtt() {
    let (mut s, k) = setup();
    let rtt = 3_000_000;
    // Learn an RTT from a timed packet.
    learn_rtt(&mut s, rtt);
    // The ACK reacted at once (delay = rtt, above the target): one cut,
    // with the target of the window it cut.
    let target = k.base_target_ns as f64 + fs_ref(&k, k.max_cwnd_bytes as f64 / MTU as f64);
    let b = q(k.beta);
    let f = (1.0 - b * (rtt as f64 - target) / rtt as f64).max(1.0 - q(k.max_mdf));
    let start = k.max_cwnd_bytes as f64;
    assert!(
        close(s.window() as f64, start * f, 1e-6),
        "{} vs {}",
        s.window(),
        start * f
    );
    assert_eq!(s.cuts(), 1);
    // Within the same RTT no further decrease, however late, and no
    // increase either: the delay is above target (Algorithm 1 lines 7-11).
    let cut = s.window();
    s.on_delay(rtt + rtt / 2, 10 * rtt, 0, 1);
    assert_eq!(s.cuts(), 1);
    assert_eq!(s.window(), cut, "above target inside the RTT: held");
    // One RTT after the last: a decrease of at most max_mdf.
    let before = s.window() as f64;
    s.on_delay(2 * rtt, 100 * rtt, 0, 1);
    assert_eq!(s.cuts(), 2);
    assert!(close(
        s.window() as f64,
        before * (1.0 - q(k.max_mdf)),
        1e-6
    ));
}

/// A delay just above target cuts by β·(delay − target)/delay, less than
/// max_mdf: the excess over target, not the whole delay, sets the cut.
#[test]
fn decrease_scales_with_the_excess_over_target() {
    let (mut s, k) = setup();
    let target = s.fabric_target_ns();
    let delay = target + target / 4;
    let before = s.window() as f64;
    s.on_delay(1_000_000_000, delay, 0, 1);
    let f = 1.0 - q(k.beta) * (delay - target) as f64 / delay as f64;
    assert!(f > 1.0 - q(k.max_mdf), "the case must be under max_mdf");
    assert!(
        (s.window() as f64 - before * f).abs() <= 1.0,
        "{} vs {}",
        s.window(),
        before * f
    );
}

#[test]
fn endpoint_window_and_the_smaller_one() {
    let (mut s, k) = setup();
    // Host delay above its target: only the endpoint window shrinks.
    s.on_delay(1_000_000_000, 0, 10 * k.host_target_ns, 1);
    assert!(s.endpoint_window() < s.fabric_window());
    assert_eq!(s.window(), s.endpoint_window());
}

#[test]
fn fast_recovery_on_nak() {
    let (mut s, k) = setup();
    let before = s.window();
    s.on_ack(&AckEvent {
        nak: true,
        ..ack(5, 0, false, false)
    });
    assert_eq!(s.window(), before - k.max_mdf.mul_int(before));
}

/// Fast recovery (Algorithm 1 lines 14-17) at most once per RTT.
#[test]
fn fast_recovery_once_per_rtt() {
    let (mut s, k) = setup();
    let rtt = 3_000_000;
    learn_rtt(&mut s, rtt);
    let nak = |at| AckEvent {
        nak: true,
        ..ack(at, 0, false, false)
    };
    let t0 = 10 * rtt;
    let before = s.window();
    s.on_ack(&nak(t0));
    let once = before - k.max_mdf.mul_int(before);
    assert_eq!(s.window(), once);
    s.on_ack(&nak(t0 + rtt / 2));
    assert_eq!(s.window(), once, "a second NAK inside the RTT: no cut");
    s.on_ack(&nak(t0 + rtt));
    assert_eq!(s.window(), once - k.max_mdf.mul_int(once), "an RTT later");
}

/// Algorithm 1 works `pacing_delay` out at every event: a send held for
/// rtt/cwnd of a tiny window leaves as soon as an ACK raises the window to
/// a packet, not when the gap computed at the send runs out.
#[test]
fn an_ack_that_raises_the_window_shortens_the_pacing_delay() {
    let (mut s, k) = setup();
    let rtt = 2_000_000;
    learn_rtt(&mut s, rtt);
    let mut now = rtt;
    while s.window() > MTU / 50 {
        now += 10 * rtt;
        s.on_delay(now, 100 * rtt, 0, 1);
    }
    // A packet leaves: at ~0.02 packets the next one is ~50 RTTs away.
    s.on_send(now, 1, 4096);
    let held = s.pacing(now).next_send_ns - now;
    assert!(held > 40 * rtt, "held {held} ns");
    // An ACK below target raises cwnd by ai (below one packet: ai·acked).
    let at = now + rtt;
    s.on_delay(at, 0, 0, 1);
    assert!(s.window() >= MTU, "window {}", s.window());
    assert_eq!(k.ai, cc_core::fixed::Q32::ONE);
    let p = s.pacing(at);
    assert!(
        p.next_send_ns <= at,
        "from one packet up no pacing delay: next {} at {at}",
        p.next_send_ns
    );
}

#[test]
fn below_one_packet_paces_at_cwnd_per_rtt() {
    let (mut s, k) = setup();
    let rtt = 2_000_000;
    learn_rtt(&mut s, rtt);
    let mut now = rtt;
    while s.window() >= MTU / 4 {
        now += 10 * rtt;
        s.on_delay(now, 100 * rtt, 0, 1);
    }
    let w = s.window();
    assert!(w >= k.min_cwnd_bytes);
    let p = s.pacing(now);
    assert_eq!(p.window_bytes, Some(MTU), "one packet in flight");
    let want = w as f64 * 8.0 * 1e9 / rtt as f64;
    assert!(
        close(p.rate_bps as f64, want, 1e-3),
        "{} vs {want}",
        p.rate_bps
    );
    // The next packet leaves rtt/cwnd packets later.
    s.on_send(now, 1, 4096);
    let gap = s.pacing(now).next_send_ns - now;
    let want = rtt as f64 * MTU as f64 / w as f64;
    assert!(close(gap as f64, want, 1e-3), "gap {gap} want {want}");
}

#[test]
fn window_stays_within_bounds() {
    let (mut s, k) = setup();
    let mut now = 0;
    for _ in 0..10_000 {
        now += 1_000_000_000;
        s.on_delay(now, 1_000_000_000, 1_000_000_000, 1);
    }
    assert_eq!(s.window(), k.min_cwnd_bytes);
    for _ in 0..100_000 {
        s.on_delay(now, 0, 0, 64);
    }
    assert_eq!(s.window(), k.max_cwnd_bytes);
}
