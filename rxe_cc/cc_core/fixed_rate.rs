// SPDX-License-Identifier: GPL-2.0

//! `fixed`: a pinned pacing rate and nothing else; a test mode for the
//! pacer and the transmit gate (pacing accuracy), and a baseline.

use super::alg::{AlgInfo, Algorithm};
use super::cc::{advance_pacing, AckEvent, CongestionControl, Pacing};
use super::cc::{pacing_burst_ns, LinkParams};
use super::fixed::tx_time_ns;
use super::knobs::{Knob, KnobSource};

/// A QP paced at a fixed rate.
#[derive(Clone, Debug)]
pub struct FixedRate {
    rate_bps: u64,
    burst_ns: u64,
    /// The burst asked for, and the packet size that is its floor.
    min_burst_ns: u64,
    mtu: u32,
    next_send_ns: u64,
}

impl FixedRate {
    /// Paces payload bytes at `rate_bps`. A sender that was late (its timer
    /// fired late, or it was idle) may catch up on at most `burst_ns` worth
    /// of credit, at least one packet of `mtu` bytes.
    pub fn new(rate_bps: u64, burst_ns: u64, mtu: u32, now_ns: u64) -> Self {
        let rate_bps = rate_bps.max(1);
        Self {
            rate_bps,
            burst_ns: burst_ns.max(tx_time_ns(u64::from(mtu), rate_bps)),
            min_burst_ns: burst_ns,
            mtu,
            next_send_ns: now_ns,
        }
    }

    /// Paces at `rate_bps` from the next packet on: the rate knob written
    /// while a flow runs.
    pub fn set_rate(&mut self, rate_bps: u64) {
        let rate_bps = rate_bps.max(1);
        if rate_bps != self.rate_bps {
            self.rate_bps = rate_bps;
            self.burst_ns = self
                .min_burst_ns
                .max(tx_time_ns(u64::from(self.mtu), rate_bps));
        }
    }
}

impl CongestionControl for FixedRate {
    fn send_knobs(&mut self, k: &dyn KnobSource) {
        self.set_rate(k.bps(Knob::FixedRateMbps));
    }

    fn default_catchup_ns(&self) -> u64 {
        FIXED_CATCHUP_NS
    }

    fn name(&self) -> &'static str {
        "fixed"
    }

    fn on_send(&mut self, now_ns: u64, _psn: u32, bytes: u32) {
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            u64::from(bytes),
            self.rate_bps,
            self.burst_ns,
        );
    }

    fn on_ack(&mut self, _ack: &AckEvent<'_>) {}

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps,
            next_send_ns: self.next_send_ns,
            window_bytes: None,
        }
    }
}

/// `cc=fixed`'s pacing credit when `pacing_burst_us` is 0: under QEMU TCG
/// the pacer's hrtimer plus the send task wake up 0.3-2 ms late, and one
/// packet of credit held a `cc=fixed` flow to 44% of 100 Mb/s.
pub const FIXED_BURST_NS: u64 = 2_000_000;

/// `cc=fixed`'s catch-up when `pacing_catchup_us` is 0 (the algorithms'
/// is none: `cc::CatchUp`).
pub const FIXED_CATCHUP_NS: u64 = 10_000_000;

/// Its debugfs state.
fn state_name(_code: u32) -> &'static str {
    "paced"
}

/// `cc=fixed` asks nothing of rdma_rxe; its pacer's fires show it acting.
impl Algorithm for FixedRate {
    const INFO: AlgInfo = AlgInfo {
        name: "fixed",
        state_name: Some(state_name),
        signals: &["pacer_fires"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        let link = LinkParams::from_knobs(k);
        FixedRate::new(
            k.bps(Knob::FixedRateMbps),
            pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), FIXED_BURST_NS),
            link.mtu,
            now_ns,
        )
    }
}
