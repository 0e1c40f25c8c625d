//! DCTCP on a rate against the paper's equations (α per window, eq. 1; a
//! cut of α/2 once per window, eq. 2) as the HPCC simulator's mode 8 runs
//! them, in f64.

mod common;
use cc_core::cc::{AckEvent, CongestionControl};
use cc_core::dctcp::{Dctcp, DctcpKnobs};
use common::*;

const MTU: u32 = 4096;

fn setup() -> (Dctcp, DctcpKnobs) {
    let l = link(10);
    let k = DctcpKnobs::for_link(&l);
    (Dctcp::new(&l, k, 0), k)
}

/// Sends `n` packets from PSN `psn`, then ACKs each, marking those for
/// which `ce(i)` holds; returns the next PSN.
fn window(d: &mut Dctcp, psn: u32, n: u32, ce: impl Fn(u32) -> bool) -> u32 {
    for i in 0..n {
        d.on_send(0, psn + i, MTU);
    }
    for i in 0..n {
        let a = AckEvent {
            psn: psn + i,
            ..ack(0, MTU, ce(i), false)
        };
        d.on_ack(&a);
    }
    psn + n
}

fn alpha(d: &Dctcp) -> f64 {
    d.alpha().0 as f64 / 4294967296.0
}

#[test]
fn simulator_defaults() {
    let (d, k) = setup();
    assert_eq!(k.g.0, 1 << 28, "g = 1/16");
    assert_eq!(
        (k.ai_bps, k.min_rate_bps),
        (100_000_000, 10_000_000),
        "line/100 and line/1000"
    );
    assert_eq!(alpha(&d), 1.0, "α starts at 1");
    assert_eq!(d.pacing(0).rate_bps, 10 * GBPS);
}

#[test]
fn alpha_per_window_against_eq_1() {
    let (mut d, k) = setup();
    let g = k.g.0 as f64 / 4294967296.0;
    // The first window only sizes the next (the simulator's first RTT).
    // A window's α update comes at its first ACK, with the marks counted
    // since the last one: the previous window's but its first ACK, and
    // that ACK's.
    let mut psn = window(&mut d, 0, 10, |_| false);
    let mut a = 1.0f64;
    let mut carried = 0u32; // marks of the ACK that closes a window
    for marked in [0u32, 3, 10, 5, 0, 1] {
        // This window's first ACK closes the last window: F over 10 packets.
        psn = window(&mut d, psn, 10, |i| i < marked);
        let f = ((carried + u32::from(marked > 0)).min(10)) as f64 / 10.0;
        a = (1.0 - g) * a + g * f;
        carried = marked.saturating_sub(1);
        assert!(
            (alpha(&d) - a).abs() < 1e-6,
            "after {marked} marks: α {} want {a}",
            alpha(&d)
        );
    }
}

#[test]
fn one_cut_per_window_of_alpha_over_two() {
    let (mut d, _) = setup();
    let psn = window(&mut d, 0, 10, |_| false);
    let before = d.pacing(0).rate_bps;
    // Every ACK of the next window marked: one cut, R·(1 − α/2), with the
    // α its first ACK updated (the only update in the window).
    window(&mut d, psn, 10, |_| true);
    assert_eq!(d.cuts(), 1, "CWR holds the rest of the window");
    let a = alpha(&d);
    let want = before as f64 * (1.0 - a / 2.0);
    assert!(
        close(d.pacing(0).rate_bps as f64, want, 1e-6),
        "{} vs {want}",
        d.pacing(0).rate_bps
    );
}

#[test]
fn additive_increase_per_window_outside_cwr() {
    let (mut d, k) = setup();
    let mut psn = window(&mut d, 0, 10, |_| false);
    psn = window(&mut d, psn, 10, |i| i == 0);
    let cut = d.pacing(0).rate_bps;
    // The window after the cut ends CWR at its first ACK past snd_nxt; each
    // new window outside CWR adds R_AI.
    for n in 1..=3u64 {
        psn = window(&mut d, psn, 10, |_| false);
        assert_eq!(d.pacing(0).rate_bps, cut + n * k.ai_bps, "window {n}");
    }
}

#[test]
fn rate_floor_and_naks() {
    let (mut d, k) = setup();
    let mut psn = 0;
    for _ in 0..400 {
        psn = window(&mut d, psn, 4, |_| true);
    }
    assert_eq!(d.pacing(0).rate_bps, k.min_rate_bps);
    let before = d.pacing(0).rate_bps;
    d.on_ack(&AckEvent {
        nak: true,
        ce: true,
        ..ack(0, 0, true, false)
    });
    assert_eq!(d.pacing(0).rate_bps, before, "a NAK is no mark");
}
