// SPDX-License-Identifier: GPL-2.0

//! TIMELY (Mittal et al., SIGCOMM'15): a rate from the RTT's gradient.
//!
//! The rules are the paper's Algorithm 1 as the HPCC ns-3 simulator runs
//! it (`rdma-hw.cc`, `UpdateRateTimely`, `CC_MODE` 7), the reference for
//! this module; docs/algorithms.md lists where it differs from the paper.
//! Per RTT sample (one per round trip, [`RttProbe`]):
//!
//! ```text
//! new_rtt_diff = rtt − prev_rtt;  prev_rtt = rtt
//! rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff
//! gradient = rtt_diff / minRTT
//! rtt < T_low:       R += δ            (N·δ after `hai_stages` increases)
//! rtt > T_high:      R ·= 1 − β·(1 − T_high/rtt)
//! gradient ≤ 0:      R += δ            (N·δ, as above)
//! else:              R ·= 1 − β·gradient   (not below 0)
//! ```

use super::alg::{AlgInfo, Algorithm};
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::cc::{pacing_burst_ns, Reactions};
use super::fixed::{mul_div, Q32};
use super::knobs::{Knob, KnobSource};
use super::rtt::RttProbe;

/// The testbed's times are 20 times a data centre's (docs/algorithms.md):
/// the simulator's T_low 50 us, T_high 500 us and minRTT 20 us, scaled.
const TIME_SCALE: u64 = 20;

/// TIMELY's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelyKnobs {
    /// α, the EWMA weight of a new RTT difference.
    pub alpha: Q32,
    /// β, the multiplicative decrease factor.
    pub beta: Q32,
    /// T_low: below it the rate rises whatever the gradient, ns.
    pub t_low_ns: u64,
    /// T_high: above it the rate falls whatever the gradient, ns.
    pub t_high_ns: u64,
    /// minRTT, the gradient's normaliser, ns.
    pub min_rtt_ns: u64,
    /// δ, the additive increase, b/s.
    pub ai_bps: u64,
    /// Increases in a row after which each adds `hai_factor`·δ (HAI).
    pub hai_stages: u32,
    /// N, HAI's multiple of δ.
    pub hai_factor: u64,
    /// The rate never falls below this, b/s.
    pub min_rate_bps: u64,
    /// Pacing credit after a late wake, ns.
    pub burst_ns: u64,
}

impl TimelyKnobs {
    /// The paper's values (α 0.875, β 0.8, T_low 50 us, T_high 500 us,
    /// minRTT 20 us, δ 10 Mb/s at 10 Gb/s, N = 5 after 5 increases), times
    /// scaled to the testbed and rates to the link.
    pub fn for_link(link: &LinkParams) -> Self {
        let line = link.line_rate_bps.max(1);
        Self {
            alpha: Q32::from_milli(875),
            beta: Q32::from_milli(800),
            t_low_ns: 50_000 * TIME_SCALE,
            t_high_ns: 500_000 * TIME_SCALE,
            min_rtt_ns: 20_000 * TIME_SCALE,
            ai_bps: (line / 1000).max(1),
            hai_stages: 5,
            hai_factor: 5,
            min_rate_bps: (line / 1000).max(1),
            burst_ns: super::fixed::tx_time_ns(u64::from(link.mtu), line),
        }
    }
}

/// `x·q` for a signed `x`, rounded towards zero.
fn mul_signed(x: i64, q: Q32) -> i64 {
    let m = i64::try_from(q.mul_int(x.unsigned_abs())).unwrap_or(i64::MAX);
    if x < 0 {
        m.saturating_neg()
    } else {
        m
    }
}

/// A TIMELY QP.
#[derive(Clone, Debug)]
pub struct Timely {
    knobs: TimelyKnobs,
    line_rate_bps: u64,
    mtu: u32,
    rate_bps: u64,
    /// The EWMA of RTT differences, ns.
    rtt_diff: i64,
    prev_rtt_ns: Option<u64>,
    /// Increases in a row.
    inc_stage: u32,
    probe: RttProbe,
    next_send_ns: u64,
    samples: u64,
    cuts: u64,
}

impl Timely {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: TimelyKnobs, now_ns: u64) -> Self {
        let line = link.line_rate_bps.max(1);
        Self {
            knobs,
            line_rate_bps: line,
            mtu: link.mtu,
            rate_bps: line,
            rtt_diff: 0,
            prev_rtt_ns: None,
            inc_stage: 0,
            probe: RttProbe::default(),
            next_send_ns: now_ns,
            samples: 0,
            cuts: 0,
        }
    }

    /// The smoothed RTT difference, ns.
    pub fn rtt_diff_ns(&self) -> i64 {
        self.rtt_diff
    }

    /// RTT samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Rate decreases so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// Algorithm 1 on one RTT sample.
    pub fn on_rtt(&mut self, rtt_ns: u64) {
        self.samples = self.samples.saturating_add(1);
        let Some(prev) = self.prev_rtt_ns.replace(rtt_ns) else {
            return;
        };
        let k = self.knobs;
        let new_diff = i64::try_from(rtt_ns)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(prev).unwrap_or(i64::MAX));
        let keep = Q32::ONE.saturating_sub(k.alpha);
        self.rtt_diff =
            mul_signed(self.rtt_diff, keep).saturating_add(mul_signed(new_diff, k.alpha));
        let cut = if rtt_ns < k.t_low_ns {
            None
        } else if rtt_ns > k.t_high_ns {
            // R·β·(1 − T_high/rtt) = R·β·(rtt − T_high)/rtt
            Some(mul_div(
                k.beta.mul_int(self.rate_bps),
                rtt_ns.saturating_sub(k.t_high_ns),
                rtt_ns,
            ))
        } else if self.rtt_diff <= 0 {
            None
        } else {
            // R·β·gradient, at most R (1 − β·gradient is not below 0).
            Some(mul_div(
                k.beta.mul_int(self.rate_bps),
                self.rtt_diff.unsigned_abs(),
                k.min_rtt_ns.max(1),
            ))
        };
        match cut {
            None => {
                let step = if self.inc_stage < k.hai_stages {
                    k.ai_bps
                } else {
                    k.ai_bps.saturating_mul(k.hai_factor)
                };
                self.rate_bps = self.rate_bps.saturating_add(step).min(self.line_rate_bps);
                self.inc_stage = self.inc_stage.saturating_add(1);
            }
            Some(cut) => {
                self.rate_bps = self
                    .rate_bps
                    .saturating_sub(cut)
                    .max(k.min_rate_bps)
                    .min(self.line_rate_bps);
                self.inc_stage = 0;
                self.cuts = self.cuts.saturating_add(1);
            }
        }
    }
}

impl CongestionControl for Timely {
    fn reactions(&self) -> Reactions {
        Reactions {
            rtt_samples: self.samples(),
            cuts: self.cuts(),
            ..Reactions::default()
        }
    }

    fn name(&self) -> &'static str {
        "timely"
    }

    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32) {
        self.probe.on_send(now_ns, psn, bytes, self.mtu);
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            u64::from(bytes),
            self.rate_bps,
            self.knobs.burst_ns,
        );
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if let Some(rtt) = self.probe.on_ack(ack.now_ns, ack.psn, ack.nak) {
            self.on_rtt(rtt);
        }
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps,
            next_send_ns: self.next_send_ns,
            window_bytes: None,
        }
    }
}

impl TimelyKnobs {
    /// TIMELY's knobs: the paper's values for the link, scaled, and any
    /// explicit setting.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let link = LinkParams::from_knobs(k);
        let mut t = Self::for_link(&link);
        t.t_low_ns = k.us_ns(Knob::TimelyTLowUs);
        t.t_high_ns = k.us_ns(Knob::TimelyTHighUs);
        t.min_rtt_ns = k.us_ns(Knob::TimelyMinRttUs);
        if k.get(Knob::TimelyAiMbps) != 0 {
            t.ai_bps = k.bps(Knob::TimelyAiMbps);
        }
        t.alpha = Q32::ratio(u64::from(k.get(Knob::TimelyAlphaPermille)), 1000);
        t.beta = Q32::ratio(u64::from(k.get(Knob::TimelyBetaPermille)), 1000);
        t.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), t.burst_ns);
        t
    }
}

/// TIMELY times packets against ACKs, one per packet so that a sample is
/// not late by the coalescing.
impl Algorithm for Timely {
    const INFO: AlgInfo = AlgInfo {
        name: "timely",
        ack_every: 1,
        signals: &["rtt_samples"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Timely::new(
            &LinkParams::from_knobs(k),
            TimelyKnobs::from_knobs(k),
            now_ns,
        )
    }
}
