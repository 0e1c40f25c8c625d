// SPDX-License-Identifier: GPL-2.0

//! FNCC: fast notification congestion control (2024): HPCC driven by INT
//! that switches stamp on the ACK's return path, plus the Last-Hop
//! Congestion Speedup (LHCS).
//!
//! LHCS: when the most loaded hop is the last hop (index 0 in ACK order,
//! the receiver's switch port) and its u' exceeds α, the sender's window
//! is "directly set to the final convergence value" (§3.2.2, Fig. 13d),
//! `W = W^c = B·T·β/N`, with N the receiver's concurrent flows from the
//! ACK. The paper's Algorithm 3 instead sets only W^c and then runs
//! COMPUTEWIND on it (`W = W^c·η/U`, below the fair share while U > η);
//! [`Lhcs::ComputeWind`] selects that order. Defaults α = 1.05, β = 0.9;
//! the rest is HPCC's. The test is on the ACK's instantaneous u', before
//! HPCC's EWMA (the paper's `Umax`).

use super::alg::{AlgInfo, Algorithm, IntRoom, INT_KIND_FNCC};
use super::cc::Reactions;
use super::cc::{AckEvent, CongestionControl, LinkParams, Pacing};
use super::fixed::{bytes_in, Q32};
use super::hpcc::{Hpcc, HpccKnobs};
use super::knobs::{Knob, KnobSource};

/// FNCC knobs: HPCC's plus α and β.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FnccKnobs {
    /// HPCC's knobs.
    pub hpcc: HpccKnobs,
    /// u' above which last-hop congestion triggers LHCS (1.05).
    pub alpha: Q32,
    /// Share of the fair window LHCS jumps to (0.9).
    pub beta: Q32,
    /// What LHCS sets.
    pub lhcs: Lhcs,
}

/// What FNCC's last-hop speedup does with the fair window `B·T·β/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lhcs {
    /// W = W^c = the fair window (§3.2.2: "directly set").
    Direct,
    /// W^c = the fair window, then COMPUTEWIND (Algorithm 3, lines 29-32).
    ComputeWind,
}

impl FnccKnobs {
    /// Defaults for `link` and a base RTT of `t_ns` (HPCC's T).
    pub fn for_link(link: &LinkParams, t_ns: u64) -> Self {
        Self {
            hpcc: HpccKnobs::for_link(link, t_ns),
            alpha: Q32::from_milli(1050),
            beta: Q32::from_milli(900),
            lhcs: Lhcs::Direct,
        }
    }
}

/// FNCC's per-QP state.
#[derive(Clone, Debug)]
pub struct Fncc {
    hpcc: Hpcc,
    alpha: Q32,
    beta: Q32,
    lhcs: Lhcs,
    lhcs_jumps: u64,
}

impl Fncc {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: FnccKnobs, now_ns: u64) -> Self {
        Self {
            hpcc: Hpcc::new(link, knobs.hpcc, now_ns),
            alpha: knobs.alpha,
            beta: knobs.beta,
            lhcs: knobs.lhcs,
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
    fn window_of(&self, psn: u32) -> Option<(u64, u64, bool)> {
        self.hpcc().window_of(psn)
    }

    fn reactions(&self) -> Reactions {
        Reactions {
            lhcs_jumps: self.lhcs_jumps(),
            ..Reactions::default()
        }
    }

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
            let mut direct = false;
            if m.hop == 0 && m.u_max > self.alpha {
                if let Some(last) = int.hops.first() {
                    let bdp = bytes_in(last.b_bps, self.hpcc.knobs().period_ns);
                    let n = u64::from(int.n_flows.max(1));
                    let fair = self.beta.mul_int(bdp) / n;
                    match self.lhcs {
                        Lhcs::Direct => {
                            self.hpcc.set_window(fair, update);
                            direct = true;
                        }
                        Lhcs::ComputeWind => self.hpcc.set_reference_window(fair),
                    }
                    self.lhcs_jumps = self.lhcs_jumps.saturating_add(1);
                }
            }
            if !direct {
                self.hpcc.compute_window(update);
            }
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

impl FnccKnobs {
    /// FNCC's knobs: HPCC's, plus α, β and the LHCS order.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let mut f = Self::for_link(&LinkParams::from_knobs(k), k.us_ns(Knob::HpccTUs));
        f.hpcc = HpccKnobs::from_knobs(k);
        f.alpha = Q32::ratio(u64::from(k.get(Knob::FnccAlphaPermille)), 1000);
        f.beta = Q32::ratio(u64::from(k.get(Knob::FnccBetaPermille)), 1000);
        if k.get(Knob::FnccLhcsComputeWind) != 0 {
            f.lhcs = Lhcs::ComputeWind;
        }
        f
    }
}

/// FNCC reads INT from an ACK per packet; its receivers count their flows.
impl Algorithm for Fncc {
    const INFO: AlgInfo = AlgInfo {
        name: "fncc",
        ack_every: 1,
        int_shim: Some((INT_KIND_FNCC, IntRoom::Hops)),
        counts_flows: true,
        signals: &["int_acks"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Fncc::new(&LinkParams::from_knobs(k), FnccKnobs::from_knobs(k), now_ns)
    }
}
