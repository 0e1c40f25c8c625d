// SPDX-License-Identifier: GPL-2.0

//! Swift (Kumar et al., SIGCOMM'20): a window held to a delay target.
//!
//! Algorithm 1 of the paper, on two windows, the fabric's and the
//! endpoint's, the QP's window being the smaller:
//!
//! ```text
//! an ACK, delay below target:  cwnd += ai/cwnd · acked   (cwnd ≥ 1 packet)
//!                              cwnd += ai · acked        (cwnd < 1)
//! delay at or above target, at most once per RTT:
//!     cwnd ·= max(1 − β·(delay − target)/delay, 1 − max_mdf)
//! fast recovery (a NAK), at most once per RTT:  cwnd ·= 1 − max_mdf
//! cwnd within [min_cwnd, max_cwnd]; below one packet, one packet per
//! rtt/cwnd (pacing)
//! ```
//!
//! The pacing delay is Algorithm 1's `pacing_delay`: worked out again from
//! the window at every event (`rtt/cwnd` below one packet, none from one
//! packet up) and counted from the last send, so an ACK that raises the
//! window shortens a wait already begun.
//!
//! The fabric's target (§3.2) is `base_target + fs(cwnd)`, flow scaling
//! `fs = α/√cwnd + β'` within `[0, fs_range]`, which is
//! `fs_range·(1/√cwnd − 1/√fs_max)/(1/√fs_min − 1/√fs_max)`. Hop scaling
//! is left out: a RoCE ACK tells the sender no hop count (set the base
//! target per path instead). The endpoint window sees the host delay the
//! testbed can report, none today (docs/algorithms.md).

use super::alg::{AlgInfo, Algorithm};
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::cc::{pacing_burst_ns, Reactions, MTU};
use super::fixed::{bytes_in, mul_div, rate_bps, tx_time_ns, Q32};
use super::knobs::{Knob, KnobSource};
use super::rtt::{Flight, RttProbe};

/// Swift's parameters; windows in bytes, `ai` in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwiftKnobs {
    /// The fabric's base target delay, ns.
    pub base_target_ns: u64,
    /// The endpoint's target delay, ns.
    pub host_target_ns: u64,
    /// Flow scaling's range, ns (0: none).
    pub fs_range_ns: u64,
    /// Flow scaling's smallest and largest window, in thousandths of a
    /// packet: the target is base + fs_range at and below the first, base
    /// at and above the second.
    pub fs_min_cwnd_milli: u64,
    /// See `fs_min_cwnd_milli`.
    pub fs_max_cwnd_milli: u64,
    /// ai, packets per window's worth of ACKs.
    pub ai: Q32,
    /// β, the decrease's gain.
    pub beta: Q32,
    /// max_mdf, the largest share one decrease takes.
    pub max_mdf: Q32,
    /// The window's floor and ceiling, bytes.
    pub min_cwnd_bytes: u64,
    /// See `min_cwnd_bytes`.
    pub max_cwnd_bytes: u64,
    /// Pacing credit after a late wake, ns.
    pub burst_ns: u64,
}

impl SwiftKnobs {
    /// Defaults for the link: base target 2 T (T its base RTT), flow
    /// scaling over 4 T between 0.1 and 100 packets, ai 1, β 0.8, max_mdf
    /// 0.5, a window from 1/1000 packet to 4 BDP.
    pub fn for_link(link: &LinkParams, t_ns: u64) -> Self {
        let mtu = u64::from(link.mtu).max(1);
        let t = t_ns.max(1);
        Self {
            base_target_ns: t.saturating_mul(2),
            host_target_ns: t,
            fs_range_ns: t.saturating_mul(4),
            fs_min_cwnd_milli: 100,
            fs_max_cwnd_milli: 100_000,
            ai: Q32::ONE,
            beta: Q32::from_milli(800),
            max_mdf: Q32::from_milli(500),
            min_cwnd_bytes: (mtu / 1000).max(1),
            max_cwnd_bytes: bytes_in(link.line_rate_bps, t).saturating_mul(4).max(mtu),
            burst_ns: tx_time_ns(mtu, link.line_rate_bps.max(1)),
        }
    }
}

/// ⌊√x⌋.
fn isqrt(x: u64) -> u64 {
    // Bit by bit from the top: no division, no overflow.
    let mut rem = x;
    let mut root = 0u64;
    let mut bit = 1u64 << 62;
    while bit > x {
        bit >>= 2;
    }
    while bit != 0 {
        let trial = root.saturating_add(bit);
        if rem >= trial {
            rem = rem.saturating_sub(trial);
            root = (root >> 1).saturating_add(bit);
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}

/// 1/√(num/den), Q16: √(den/num · 2^32) = 2^16/√(num/den).
fn inv_sqrt_q16(num: u64, den: u64) -> u64 {
    isqrt(Q32::ratio(den, num.max(1)).0)
}

/// A window's reaction to one ACK's delay (Algorithm 1).
#[derive(Clone, Copy, Debug)]
struct Window {
    cwnd: u64,
}

impl Window {
    /// Additive increase for `acked` packets, or a decrease if allowed;
    /// true if it decreased.
    fn react(
        &mut self,
        k: &SwiftKnobs,
        mtu: u64,
        delay: u64,
        target: u64,
        acked: u64,
        can_decrease: bool,
    ) -> bool {
        if delay < target {
            let ai_bytes = k.ai.mul_int(mtu).saturating_mul(acked);
            let inc = if self.cwnd >= mtu {
                mul_div(ai_bytes, mtu, self.cwnd.max(1))
            } else {
                ai_bytes
            };
            self.cwnd = self.cwnd.saturating_add(inc);
            false
        } else if can_decrease {
            let by_delay = mul_div(
                k.beta.mul_int(self.cwnd),
                delay.saturating_sub(target),
                delay.max(1),
            );
            self.cwnd = self
                .cwnd
                .saturating_sub(by_delay.min(k.max_mdf.mul_int(self.cwnd)));
            true
        } else {
            false
        }
    }

    fn clamp(&mut self, k: &SwiftKnobs) {
        self.cwnd = self.cwnd.min(k.max_cwnd_bytes).max(k.min_cwnd_bytes);
    }
}

/// A Swift QP.
#[derive(Clone, Debug)]
pub struct Swift {
    knobs: SwiftKnobs,
    line_rate_bps: u64,
    mtu: u64,
    fabric: Window,
    endpoint: Window,
    flight: Flight,
    probe: RttProbe,
    /// The last RTT sample, ns (0: none yet).
    rtt_ns: u64,
    last_decrease_ns: Option<u64>,
    /// The line's pacing clock: when the next packet may leave at line rate.
    line_next_ns: u64,
    /// The last send's time and payload (None: nothing sent yet).
    last_send: Option<(u64, u64)>,
    samples: u64,
    cuts: u64,
}

impl Swift {
    /// A QP starting with the largest window.
    pub fn new(link: &LinkParams, knobs: SwiftKnobs, now_ns: u64) -> Self {
        let w = Window {
            cwnd: knobs.max_cwnd_bytes.max(knobs.min_cwnd_bytes),
        };
        Self {
            knobs,
            line_rate_bps: link.line_rate_bps.max(1),
            mtu: u64::from(link.mtu).max(1),
            fabric: w,
            endpoint: w,
            flight: Flight::default(),
            probe: RttProbe::default(),
            rtt_ns: 0,
            last_decrease_ns: None,
            line_next_ns: now_ns,
            last_send: None,
            samples: 0,
            cuts: 0,
        }
    }

    /// The window, bytes: the smaller of the fabric's and the endpoint's.
    pub fn window(&self) -> u64 {
        self.fabric.cwnd.min(self.endpoint.cwnd)
    }

    /// The fabric's window, bytes.
    pub fn fabric_window(&self) -> u64 {
        self.fabric.cwnd
    }

    /// The endpoint's window, bytes.
    pub fn endpoint_window(&self) -> u64 {
        self.endpoint.cwnd
    }

    /// RTT samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Decreases so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// Bytes in flight and which PSNs are new, for the window.
    pub fn flight(&self) -> &Flight {
        &self.flight
    }

    /// The fabric's target for the current window (§3.2), ns.
    pub fn fabric_target_ns(&self) -> u64 {
        let k = &self.knobs;
        let s_min = inv_sqrt_q16(k.fs_min_cwnd_milli, 1000);
        let s_max = inv_sqrt_q16(k.fs_max_cwnd_milli, 1000);
        // max/min, not clamp: clamp panics if the bounds cross.
        let s = inv_sqrt_q16(self.fabric.cwnd, self.mtu)
            .max(s_max)
            .min(s_min);
        let fs = mul_div(
            k.fs_range_ns,
            s.saturating_sub(s_max),
            s_min.saturating_sub(s_max).max(1),
        );
        k.base_target_ns.saturating_add(fs)
    }

    fn can_decrease(&self, now_ns: u64) -> bool {
        self.last_decrease_ns
            .is_none_or(|t| now_ns.saturating_sub(t) >= self.rtt_ns)
    }

    /// Both windows' reaction to an ACK of `acked` packets at `now_ns`,
    /// after a fabric delay and a host delay (ns).
    pub fn on_delay(&mut self, now_ns: u64, fabric_ns: u64, host_ns: u64, acked: u64) {
        let k = self.knobs;
        let can = self.can_decrease(now_ns);
        let target = self.fabric_target_ns();
        let f = self
            .fabric
            .react(&k, self.mtu, fabric_ns, target, acked, can);
        let e = self
            .endpoint
            .react(&k, self.mtu, host_ns, k.host_target_ns, acked, can);
        self.fabric.clamp(&k);
        self.endpoint.clamp(&k);
        if f || e {
            self.last_decrease_ns = Some(now_ns);
            self.cuts = self.cuts.saturating_add(1);
        }
    }

    /// Fast recovery: both windows lose max_mdf, at most once per RTT.
    pub fn on_fast_recovery(&mut self, now_ns: u64) {
        if !self.can_decrease(now_ns) {
            return;
        }
        let k = self.knobs;
        for w in [&mut self.fabric, &mut self.endpoint] {
            w.cwnd = w.cwnd.saturating_sub(k.max_mdf.mul_int(w.cwnd));
            w.clamp(&k);
        }
        self.last_decrease_ns = Some(now_ns);
        self.cuts = self.cuts.saturating_add(1);
    }

    /// The pacing rate: the line's from one packet up, `cwnd/rtt` below.
    pub fn rate_bps(&self) -> u64 {
        let w = self.window();
        if w >= self.mtu || self.rtt_ns == 0 {
            self.line_rate_bps
        } else {
            rate_bps(w, self.rtt_ns).max(1).min(self.line_rate_bps)
        }
    }

    /// When the next packet may leave: the line's clock, and below one
    /// packet of window the last send's time plus `pacing_delay`, that
    /// send's share of `rtt/cwnd` for the current window.
    pub fn next_send_ns(&self) -> u64 {
        let w = self.window();
        match self.last_send {
            Some((at, bytes)) if w < self.mtu && self.rtt_ns != 0 => self
                .line_next_ns
                .max(at.saturating_add(mul_div(bytes, self.rtt_ns, w.max(1)))),
            _ => self.line_next_ns,
        }
    }
}

impl CongestionControl for Swift {
    fn window_of(&self, psn: u32) -> Option<(u64, u64, bool)> {
        let f = self.flight();
        // Below one packet the pacer spaces the packets out.
        Some((
            self.window().max(u64::from(MTU)),
            f.inflight(),
            f.is_new_psn(psn),
        ))
    }

    fn reactions(&self) -> Reactions {
        Reactions {
            rtt_samples: self.samples(),
            cuts: self.cuts(),
            ..Reactions::default()
        }
    }

    fn name(&self) -> &'static str {
        "swift"
    }

    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32) {
        self.flight.on_send(psn, bytes);
        self.probe.on_send(
            now_ns,
            psn,
            bytes,
            u32::try_from(self.mtu).unwrap_or(u32::MAX),
        );
        self.line_next_ns = advance_pacing(
            self.line_next_ns,
            now_ns,
            u64::from(bytes),
            self.line_rate_bps,
            self.knobs.burst_ns,
        );
        self.last_send = Some((now_ns, u64::from(bytes)));
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.nak {
            self.on_fast_recovery(ack.now_ns);
            return;
        }
        self.flight.on_ack(ack.acked_bytes);
        if let Some(rtt) = self.probe.on_ack(ack.now_ns, ack.psn, false) {
            self.rtt_ns = rtt;
            self.samples = self.samples.saturating_add(1);
        }
        if self.rtt_ns != 0 {
            // The testbed reports no host delay: all of the RTT is the
            // fabric's (docs/algorithms.md).
            self.on_delay(ack.now_ns, self.rtt_ns, 0, u64::from(ack.packets()));
        }
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps(),
            next_send_ns: self.next_send_ns(),
            window_bytes: Some(self.window().max(self.mtu)),
        }
    }
}

impl SwiftKnobs {
    /// Swift's knobs: defaults for the link with T from `hpcc_t_us`, and
    /// any explicit setting.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let link = LinkParams::from_knobs(k);
        let mut s = Self::for_link(&link, k.us_ns(Knob::HpccTUs));
        if k.get(Knob::SwiftTargetUs) != 0 {
            s.base_target_ns = k.us_ns(Knob::SwiftTargetUs);
        }
        if k.get(Knob::SwiftFsRangeUs) != 0 {
            s.fs_range_ns = k.us_ns(Knob::SwiftFsRangeUs);
        }
        s.ai = Q32::ratio(u64::from(k.get(Knob::SwiftAiPermille)), 1000);
        s.beta = Q32::ratio(u64::from(k.get(Knob::SwiftBetaPermille)), 1000);
        s.max_mdf = Q32::ratio(u64::from(k.get(Knob::SwiftMaxMdfPermille)), 1000);
        s.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), s.burst_ns);
        s
    }
}

/// Swift times packets against ACKs, one per packet so that a sample is not
/// late by the coalescing.
impl Algorithm for Swift {
    const INFO: AlgInfo = AlgInfo {
        name: "swift",
        ack_every: 1,
        signals: &["rtt_samples"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Swift::new(
            &LinkParams::from_knobs(k),
            SwiftKnobs::from_knobs(k),
            now_ns,
        )
    }
}
