// SPDX-License-Identifier: GPL-2.0

//! DCTCP for RoCE: DCTCP's α (Alizadeh et al., SIGCOMM'10, eq. 1 and 2) on
//! a sending rate, as the HPCC ns-3 simulator runs it (`rdma-hw.cc`,
//! `HandleAckDctcp`, `CC_MODE` 8), the reference for this module.
//!
//! ```text
//! per window of data (an ACK past the last update's snd_nxt):
//!     F = min(1, CE-marked ACKs / packets of the window)
//!     α = (1 − g)·α + g·F                          (eq. 1)
//! a CE-echoing ACK outside CWR: R = max(R_min, R·(1 − α/2))   (eq. 2),
//!     then CWR until the ACK passes this snd_nxt (once per window)
//! each new window outside CWR: R = min(line, R + R_AI)
//! ```

use super::alg::{AlgInfo, Algorithm, ECN_ECT1};
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::cc::{pacing_burst_ns, Reactions};
use super::fixed::{mul_div, Q32};
use super::knobs::{Knob, KnobSource};
use super::rtt::Flight;

/// DCTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpKnobs {
    /// g, α's gain.
    pub g: Q32,
    /// R_AI, the additive increase per window, b/s.
    pub ai_bps: u64,
    /// R_min, b/s.
    pub min_rate_bps: u64,
    /// Pacing credit after a late wake, ns.
    pub burst_ns: u64,
}

impl DctcpKnobs {
    /// The simulator's defaults: g = 1/16, R_AI 1000 Mb/s and R_min 100 Mb/s
    /// at 100 Gb/s (line/100 and line/1000).
    pub fn for_link(link: &LinkParams) -> Self {
        let line = link.line_rate_bps.max(1);
        Self {
            g: Q32::ratio(1, 16),
            ai_bps: (line / 100).max(1),
            min_rate_bps: (line / 1000).max(1),
            burst_ns: super::fixed::tx_time_ns(u64::from(link.mtu), line),
        }
    }
}

/// A DCTCP QP.
#[derive(Clone, Debug)]
pub struct Dctcp {
    knobs: DctcpKnobs,
    line_rate_bps: u64,
    mtu: u64,
    rate_bps: u64,
    alpha: Q32,
    flight: Flight,
    /// snd_nxt at the last α update (0: none yet).
    last_update_seq: u64,
    /// Packets the window being measured holds, and its CE-marked ACKs.
    batch_pkts: u64,
    ce_acks: u64,
    /// In CWR until the cumulative ack passes `high_seq`.
    cwr: bool,
    high_seq: u64,
    next_send_ns: u64,
    cuts: u64,
}

impl Dctcp {
    /// A QP starting at line rate with α = 1 (the simulator's).
    pub fn new(link: &LinkParams, knobs: DctcpKnobs, now_ns: u64) -> Self {
        let line = link.line_rate_bps.max(1);
        Self {
            knobs,
            line_rate_bps: line,
            mtu: u64::from(link.mtu).max(1),
            rate_bps: line,
            alpha: Q32::ONE,
            flight: Flight::default(),
            last_update_seq: 0,
            batch_pkts: 1,
            ce_acks: 0,
            cwr: false,
            high_seq: 0,
            next_send_ns: now_ns,
            cuts: 0,
        }
    }

    /// α.
    pub fn alpha(&self) -> Q32 {
        self.alpha
    }

    /// Rate cuts so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// The window's α update (eq. 1); true at a new window.
    fn update_alpha(&mut self) -> bool {
        let una = self.flight.snd_una;
        if una <= self.last_update_seq {
            return false;
        }
        let nxt = self.flight.snd_nxt;
        if self.last_update_seq != 0 {
            let frac = Q32::ratio(self.ce_acks.min(self.batch_pkts), self.batch_pkts.max(1));
            self.alpha = Q32(mul_div(
                self.alpha.0,
                Q32::ONE.saturating_sub(self.knobs.g).0,
                Q32::ONE.0,
            )
            .saturating_add(mul_div(frac.0, self.knobs.g.0, Q32::ONE.0)));
            self.ce_acks = 0;
        }
        let unacked = nxt.saturating_sub(if self.last_update_seq == 0 { 0 } else { una });
        self.batch_pkts = unacked.checked_div(self.mtu).unwrap_or(0).saturating_add(1);
        self.last_update_seq = nxt;
        true
    }
}

impl CongestionControl for Dctcp {
    fn reactions(&self) -> Reactions {
        Reactions {
            cuts: self.cuts(),
            ..Reactions::default()
        }
    }

    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32) {
        self.flight.on_send(psn, bytes);
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            u64::from(bytes),
            self.rate_bps,
            self.knobs.burst_ns,
        );
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.nak {
            return;
        }
        self.flight.on_ack(ack.acked_bytes);
        // The simulator counts ACKs with the CNP flag; with an ACK per
        // packet that is the marked packets.
        self.ce_acks = self.ce_acks.saturating_add(u64::from(ack.ce_packets()));
        let new_window = self.update_alpha();
        if self.cwr && self.flight.snd_una > self.high_seq {
            self.cwr = false;
        }
        if ack.ce && !self.cwr {
            // R·(1 − α/2)
            let cut = self.alpha.mul_int(self.rate_bps) / 2;
            self.rate_bps = self
                .rate_bps
                .saturating_sub(cut)
                .max(self.knobs.min_rate_bps);
            self.cwr = true;
            self.high_seq = self.flight.snd_nxt;
            self.cuts = self.cuts.saturating_add(1);
        }
        if !self.cwr && new_window {
            self.rate_bps = self
                .rate_bps
                .saturating_add(self.knobs.ai_bps)
                .min(self.line_rate_bps);
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

impl DctcpKnobs {
    /// DCTCP's knobs: the simulator's for the link, and any explicit
    /// setting.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let link = LinkParams::from_knobs(k);
        let mut d = Self::for_link(&link);
        d.g = Q32::ratio(u64::from(k.get(Knob::DctcpG)), 1024);
        if k.get(Knob::DctcpAiMbps) != 0 {
            d.ai_bps = k.bps(Knob::DctcpAiMbps);
        }
        d.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), d.burst_ns);
        d
    }
}

/// DCTCP needs ECN-capable data and an ACK per packet, to count marks per
/// packet.
impl Algorithm for Dctcp {
    const INFO: AlgInfo = AlgInfo {
        name: "dctcp",
        data_ecn: ECN_ECT1,
        ack_every: 1,
        signals: &["echo_ce"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Dctcp::new(
            &LinkParams::from_knobs(k),
            DctcpKnobs::from_knobs(k),
            now_ns,
        )
    }
}
