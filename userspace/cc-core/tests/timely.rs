//! TIMELY's rate against Algorithm 1 of the paper, as the HPCC simulator
//! runs it (`UpdateRateTimely`), in f64; and the RTT probe it samples with.

mod common;
use cc_core::cc::CongestionControl;
use cc_core::rtt::RttProbe;
use cc_core::timely::{Timely, TimelyKnobs};
use common::*;

/// The simulator's UpdateRateTimely in f64, one sample at a time.
struct Reference {
    k: TimelyKnobs,
    line: f64,
    rate: f64,
    rtt_diff: f64,
    prev: Option<f64>,
    stage: u32,
}

impl Reference {
    fn on_rtt(&mut self, rtt: f64) {
        let Some(prev) = self.prev.replace(rtt) else {
            return;
        };
        let a = self.k.alpha.0 as f64 / 4294967296.0;
        let b = self.k.beta.0 as f64 / 4294967296.0;
        self.rtt_diff = (1.0 - a) * self.rtt_diff + a * (rtt - prev);
        let gradient = self.rtt_diff / self.k.min_rtt_ns as f64;
        let (t_low, t_high) = (self.k.t_low_ns as f64, self.k.t_high_ns as f64);
        let c = if rtt < t_low {
            None
        } else if rtt > t_high {
            Some(1.0 - b * (1.0 - t_high / rtt))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - b * gradient).max(0.0))
        };
        match c {
            None => {
                let step = if self.stage < self.k.hai_stages {
                    1.0
                } else {
                    self.k.hai_factor as f64
                };
                self.rate = (self.rate + step * self.k.ai_bps as f64).min(self.line);
                self.stage += 1;
            }
            Some(c) => {
                self.rate = (self.rate * c).max(self.k.min_rate_bps as f64);
                self.stage = 0;
            }
        }
    }
}

fn setup() -> (Timely, Reference) {
    let l = link(10);
    let k = TimelyKnobs::for_link(&l);
    let r = Reference {
        k,
        line: 10e9,
        rate: 10e9,
        rtt_diff: 0.0,
        prev: None,
        stage: 0,
    };
    (Timely::new(&l, k, 0), r)
}

#[test]
fn paper_parameters_scaled() {
    let k = TimelyKnobs::for_link(&link(10));
    assert_eq!(
        (k.t_low_ns, k.t_high_ns, k.min_rtt_ns),
        (1_000_000, 10_000_000, 400_000)
    );
    // δ = 10 Mb/s at 10 Gb/s; HAI after 5 increases in a row, N = 5.
    assert_eq!((k.ai_bps, k.hai_stages, k.hai_factor), (10_000_000, 5, 5));
}

#[test]
fn every_branch_against_algorithm_1() {
    let (mut t, mut r) = setup();
    // In µs: rising in the band (gradient > 0, cuts), above T_high (cut by
    // T_high/rtt), falling in the band (gradient ≤ 0, increases, HAI after
    // five), below T_low (increases whatever the gradient).
    let rtts_us = [
        2000, 2040, 2080, 2140, 12_000, 11_000, 9000, 8000, 7000, 6000, 5000, 4900, 4800, 4700,
        800, 900, 1200, 1150, 1150, 1150,
    ];
    let (mut cuts, mut incs) = (0, 0);
    for (i, us) in rtts_us.iter().enumerate() {
        let before = t.pacing(0).rate_bps;
        t.on_rtt(us * US);
        r.on_rtt((us * US) as f64);
        let got = t.pacing(0).rate_bps as f64;
        // rtt_diff is kept in whole ns (checked below), which moves the
        // gradient by up to 2(i+1) ns / minRTT: 1e-4 of the rate here.
        assert!(
            close(got, r.rate, 1e-4),
            "sample {i} ({us} us): rate {got}, reference {}",
            r.rate
        );
        let diff = t.rtt_diff_ns() as f64;
        assert!(
            (diff - r.rtt_diff).abs() <= 2.0 * (i + 1) as f64,
            "sample {i}: rtt_diff {diff} vs {}",
            r.rtt_diff
        );
        match (got as u64).cmp(&before) {
            std::cmp::Ordering::Less => cuts += 1,
            std::cmp::Ordering::Greater => incs += 1,
            _ => {}
        }
    }
    assert!(
        cuts >= 4 && incs >= 6,
        "{cuts} cuts and {incs} increases: the sequence missed a branch"
    );
    assert_eq!(t.cuts(), cuts);
    assert_eq!(t.samples(), rtts_us.len() as u64);
}

#[test]
fn hyper_increase_after_five_increases() {
    let (mut t, _) = setup();
    // A cut (a rising RTT), then an RTT that falls for good.
    t.on_rtt(2000 * US);
    t.on_rtt(2100 * US);
    let cut = t.pacing(0).rate_bps;
    assert!(cut < 10 * GBPS);
    let mut steps = Vec::new();
    let mut last = cut;
    for i in 1..=8u64 {
        t.on_rtt((2100 - i * 100) * US);
        let now = t.pacing(0).rate_bps;
        steps.push(now - last);
        last = now;
    }
    let d = 10_000_000;
    assert_eq!(
        steps,
        [d, d, d, d, d, 5 * d, 5 * d, 5 * d],
        "δ five times, then N·δ"
    );
}

#[test]
fn rate_stays_within_min_and_line() {
    let (mut t, _) = setup();
    for i in 0..200u64 {
        t.on_rtt((1000 + i * 5000) * US);
    }
    assert_eq!(t.pacing(0).rate_bps, 10_000_000, "floor line/1000");
    for _ in 0..100_000 {
        t.on_rtt(500 * US);
    }
    assert_eq!(t.pacing(0).rate_bps, 10 * GBPS, "ceiling: the line");
}

#[test]
fn probe_times_one_packet_per_round_trip() {
    let mut p = RttProbe::default();
    p.on_send(100, 10, 4096, 4096);
    p.on_send(200, 11, 4096, 4096); // not timed: 10 is
    assert_eq!(p.on_ack(900, 9, false), None, "an ACK before the timed PSN");
    assert_eq!(
        p.on_ack(1000, 10, true),
        None,
        "a NAK acknowledges nothing here"
    );
    assert_eq!(
        p.on_ack(1100, 11, false),
        Some(1000),
        "an ACK past it answers it"
    );
    assert_eq!(
        p.on_ack(1200, 11, false),
        None,
        "one sample per timed packet"
    );
    p.on_send(1300, 12, 4096, 4096);
    assert_eq!(p.on_ack(1500, 12, false), Some(200));
}

#[test]
fn probe_forgets_a_resent_packet() {
    let mut p = RttProbe::default();
    p.on_send(0, 5, 4096, 4096);
    p.on_send(10, 6, 4096, 4096);
    p.on_send(20, 7, 4096, 4096);
    p.on_send(30, 6, 4096, 4096); // go-back-N from 6: any resend voids the timing
    assert_eq!(p.on_ack(100, 5, false), None);
    p.on_send(110, 8, 4096, 4096);
    p.on_send(120, 8, 4096, 4096); // 8 is resent: its ACK could answer either copy
    assert_eq!(p.on_ack(200, 8, false), None);
    // A READ of 3 packets is timed to its first response.
    let mut p = RttProbe::default();
    p.on_send(1000, 12, 3 * 4096, 4096);
    assert_eq!(
        p.on_ack(1500, 10, false),
        Some(500),
        "the first response, PSN 10"
    );
    // PSNs wrap at 2^24.
    let mut p = RttProbe::default();
    p.on_send(300, 0xff_fffe, 4096, 4096);
    p.on_send(310, 0xff_ffff, 4096, 4096);
    p.on_send(320, 0, 4096, 4096);
    assert_eq!(p.on_ack(400, 0, false), Some(100));
}

#[test]
fn samples_come_from_sends_and_acks() {
    let (mut t, _) = setup();
    // Five packets per round trip of 2 ms, ACKed as they leave + 2 ms.
    let mut now = 0;
    for psn in 0..50u32 {
        t.on_send(now, psn, 4096);
        let a = cc_core::cc::AckEvent {
            psn,
            now_ns: now + 2_000_000,
            ..ack(0, 4096, false, false)
        };
        t.on_ack(&a);
        now += 400_000;
    }
    assert_eq!(
        t.samples(),
        50,
        "with an ACK before the next send, every packet is timed"
    );
}
