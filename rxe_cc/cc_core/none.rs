// SPDX-License-Identifier: GPL-2.0

//! `none`: no congestion control. Sends at line rate, never waits.

use super::alg::{AlgInfo, Algorithm};
use super::cc::{AckEvent, CongestionControl, LinkParams, Pacing};
use super::knobs::KnobSource;

/// Pass-through state.
#[derive(Clone, Debug)]
pub struct NoCc {
    line_rate_bps: u64,
}

impl NoCc {
    /// A pass-through QP on `link`.
    pub fn new(link: &LinkParams) -> Self {
        Self {
            line_rate_bps: link.line_rate_bps,
        }
    }
}

impl CongestionControl for NoCc {
    fn name(&self) -> &'static str {
        "none"
    }
    fn on_send(&mut self, _now_ns: u64, _psn: u32, _bytes: u32) {}
    fn on_ack(&mut self, _ack: &AckEvent<'_>) {}
    fn pacing(&self, now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.line_rate_bps,
            next_send_ns: now_ns,
            window_bytes: None,
        }
    }
}

/// Its debugfs state.
fn state_name(_code: u32) -> &'static str {
    "pass-through"
}

/// `cc=none` asks nothing of rdma_rxe and has nothing to show.
impl Algorithm for NoCc {
    const INFO: AlgInfo = AlgInfo {
        name: "none",
        state_name: Some(state_name),
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, _now_ns: u64) -> Self {
        NoCc::new(&LinkParams::from_knobs(k))
    }
}
