// SPDX-License-Identifier: GPL-2.0

//! FNCC: fast notification congestion control (2024): HPCC driven by INT
//! that switches stamp on the ACK's return path, plus the Last-Hop
//! Congestion Speedup (LHCS).
//!
//! LHCS: when the most loaded hop is the last hop (index 0 in ACK order,
//! the receiver's switch port) and its u' exceeds α, the sender jumps its
//! reference window to its fair share, `W^c = B·T·β/N`, with N the
//! receiver's concurrent flows from the ACK, then runs HPCC's COMPUTEWIND.
//! Defaults α = 1.05, β = 0.9; the rest is HPCC's. The test is on the
//! ACK's instantaneous u', before HPCC's EWMA (the paper's `Umax`).

use super::cc::{AckEvent, CongestionControl, LinkParams, Pacing};
use super::fixed::{bytes_in, Q32};
use super::hpcc::{Hpcc, HpccKnobs};

/// FNCC knobs: HPCC's plus α and β.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FnccKnobs {
    /// HPCC's knobs.
    pub hpcc: HpccKnobs,
    /// u' above which last-hop congestion triggers LHCS (1.05).
    pub alpha: Q32,
    /// Share of the fair window LHCS jumps to (0.9).
    pub beta: Q32,
}

impl FnccKnobs {
    /// Defaults for `link`.
    pub fn for_link(link: &LinkParams) -> Self {
        Self {
            hpcc: HpccKnobs::for_link(link),
            alpha: Q32::from_milli(1050),
            beta: Q32::from_milli(900),
        }
    }
}

/// FNCC's per-QP state.
#[derive(Clone, Debug)]
pub struct Fncc {
    hpcc: Hpcc,
    alpha: Q32,
    beta: Q32,
    lhcs_jumps: u64,
}

impl Fncc {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: FnccKnobs, now_ns: u64) -> Self {
        Self {
            hpcc: Hpcc::new(link, knobs.hpcc, now_ns),
            alpha: knobs.alpha,
            beta: knobs.beta,
            lhcs_jumps: 0,
        }
    }

    /// The HPCC state underneath.
    pub fn hpcc(&self) -> &Hpcc {
        &self.hpcc
    }

    /// Times LHCS fired.
    pub fn lhcs_jumps(&self) -> u64 {
        self.lhcs_jumps
    }
}

impl CongestionControl for Fncc {
    fn name(&self) -> &'static str {
        "fncc"
    }

    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32) {
        self.hpcc.on_send(now_ns, psn, bytes);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.nak {
            return;
        }
        let update = self.hpcc.ack_advances(ack);
        let Some(int) = ack.int else { return };
        if let Some(m) = self.hpcc.measure_inflight(&int) {
            if m.hop == 0 && m.u_max > self.alpha {
                if let Some(last) = int.hops.first() {
                    let fair = bytes_in(last.b_bps, self.hpcc.knobs().period_ns);
                    let n = u64::from(int.n_flows.max(1));
                    self.hpcc.set_reference_window(self.beta.mul_int(fair) / n);
                    self.lhcs_jumps = self.lhcs_jumps.saturating_add(1);
                }
            }
            self.hpcc.compute_window(update);
            if update {
                self.hpcc.mark_updated();
            }
        }
        self.hpcc.finish_ack(&int);
    }

    fn pacing(&self, now_ns: u64) -> Pacing {
        self.hpcc.pacing(now_ns)
    }
}
