// SPDX-License-Identifier: GPL-2.0

//! ICC: congestion control using in-network telemetry for lossless data
//! centres (CMC 2023), sender side (Algorithm 1).
//!
//! Per ACK carrying the congested port's telemetry (qlen, qlenrate, lu, n):
//! - queue growing (`qlen > 0`, `qlenrate > 0`): `V = V_max`;
//! - queue present but not growing: `V = V_min`;
//! - no queue: `V = V·lu + line·(1 − lu)`.
//!
//! The paper's bounds (its Eqs. (1)-(5)) cannot be used as printed: (4)
//! and (5) add bytes to rates, and its V_min, solved from (3), is
//! `(C + B·lu)/n + qlen/(n·T)`, above the fair share C/n, so the queue it
//! should empty grows instead (on the testbed ICC then behaved as no CC).
//! We keep what the text says each bound is for, with the queue's own
//! balance `q' = q + (n·V − C)·Δt`:
//! - V_min "empties the accumulated queue" within T, the link kept busy:
//!   `V_min = C/n − qlen/(n·T)`;
//! - V_max is "the highest rate that won't trigger Q_d" in t_m, the time
//!   the queue takes to reach Q_d at its growth rate (at least T):
//!   `V_max = C/n + (Q_d − qlen)/(n·t_m)`; at or above Q_d the excess
//!   drains within T, `C/n − (qlen − Q_d)/(n·T)`.
//!
//! The paper's `B·T·lu` term (bytes in flight) is left out of both: they
//! reach the queue at the rate already sent, which qlen and qlenrate
//! already show. B = C = the port rate the ACK reports; n = the port's flow
//! count from the ACK, at least 1; Q_d, the conservative threshold below
//! PFC's, defaults to one BDP (`C·T`). In the decrease branches V never
//! exceeds the current rate, and never goes below the minimum rate.

use super::alg::{AlgInfo, Algorithm, IntRoom, INT_KIND_ICC};
use super::cc::pacing_burst_ns;
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::fixed::{bytes_in, mul_div, tx_time_ns, NSEC_PER_SEC, Q32};
use super::knobs::{Knob, KnobSource};

/// ICC knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IccKnobs {
    /// T, the base RTT, ns.
    pub period_ns: u64,
    /// Q_d, bytes; 0 means one BDP of the reporting port.
    pub q_d_bytes: u64,
    /// Lowest rate, b/s (line/1000).
    pub min_rate_bps: u64,
    /// Pacing credit kept after waiting, ns.
    pub burst_ns: u64,
}

impl IccKnobs {
    /// Defaults for `link` and a base RTT of `t_ns` (the paper's T).
    pub fn for_link(link: &LinkParams, t_ns: u64) -> Self {
        Self {
            period_ns: t_ns.max(1),
            q_d_bytes: 0,
            min_rate_bps: (link.line_rate_bps / 1000).max(1),
            burst_ns: tx_time_ns(u64::from(link.mtu), link.line_rate_bps),
        }
    }
}

/// Which branch of Algorithm 1 the last ACK took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IccBranch {
    /// No telemetry yet.
    None,
    /// Queue growing: V_max.
    Max,
    /// Queue draining: V_min.
    Min,
    /// No queue: lu-weighted increase.
    Increase,
}

/// ICC's per-QP state.
#[derive(Clone, Debug)]
pub struct Icc {
    knobs: IccKnobs,
    line_rate_bps: u64,
    rate_bps: u64,
    branch: IccBranch,
    next_send_ns: u64,
}

impl Icc {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: IccKnobs, now_ns: u64) -> Self {
        Self {
            knobs,
            line_rate_bps: link.line_rate_bps.max(1),
            rate_bps: link.line_rate_bps.max(1),
            branch: IccBranch::None,
            next_send_ns: now_ns,
        }
    }

    /// The last branch taken.
    pub fn branch(&self) -> IccBranch {
        self.branch
    }

    /// `V_min = C/n − qlen/(n·T)`, b/s (0 if the queue needs more than
    /// the link can drain in T).
    pub fn v_min(&self, c_bps: u64, n: u64, qlen: u64) -> u64 {
        let n = n.max(1);
        let t = self.knobs.period_ns.max(1);
        let drain = mul_div(qlen.saturating_mul(8), NSEC_PER_SEC, t.saturating_mul(n));
        (c_bps / n).saturating_sub(drain)
    }

    /// `V_max = C/n + (Q_d − qlen)/(n·t_m)`, b/s, with `t_m = (Q_d −
    /// qlen)/qlenrate` (at least T); at or above Q_d, `C/n − (qlen −
    /// Q_d)/(n·T)`.
    pub fn v_max(&self, c_bps: u64, n: u64, qlen: u64, qlen_rate: i64) -> u64 {
        let n = n.max(1);
        let t = self.knobs.period_ns.max(1);
        let q_d = if self.knobs.q_d_bytes == 0 {
            bytes_in(c_bps, t)
        } else {
            self.knobs.q_d_bytes
        };
        if qlen >= q_d {
            return self.v_min(c_bps, n, qlen.saturating_sub(q_d));
        }
        let room = q_d.saturating_sub(qlen);
        let growth = qlen_rate.unsigned_abs().max(1); // bytes per second
        let t_m = mul_div(room, NSEC_PER_SEC, growth).max(t);
        (c_bps / n).saturating_add(mul_div(
            room.saturating_mul(8),
            NSEC_PER_SEC,
            t_m.saturating_mul(n),
        ))
    }
}

impl CongestionControl for Icc {
    fn name(&self) -> &'static str {
        "icc"
    }

    fn on_send(&mut self, now_ns: u64, _psn: u32, bytes: u32) {
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            u64::from(bytes),
            self.rate_bps,
            self.knobs.burst_ns,
        );
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let Some(int) = ack.int else { return };
        let Some(hop) = int.hops.first() else { return };
        let c = if hop.b_bps == 0 {
            self.line_rate_bps
        } else {
            hop.b_bps
        };
        let lu = int.lu.min(Q32::ONE);
        let n = u64::from(int.port_flows);
        let v = if hop.qlen > 0 {
            if int.qlen_rate > 0 {
                self.branch = IccBranch::Max;
                self.v_max(c, n, hop.qlen, int.qlen_rate).min(self.rate_bps)
            } else {
                self.branch = IccBranch::Min;
                self.v_min(c, n, hop.qlen).min(self.rate_bps)
            }
        } else {
            self.branch = IccBranch::Increase;
            // V·lu + line·(1 − lu), written as V + (1 − lu)·(line − V) so
            // that rounding never takes a line-rate sender below the line.
            let headroom = self.line_rate_bps.saturating_sub(self.rate_bps);
            self.rate_bps
                .saturating_add(Q32::ONE.saturating_sub(lu).mul_int(headroom))
        };
        self.rate_bps = v.clamp(
            self.knobs.min_rate_bps.min(self.line_rate_bps),
            self.line_rate_bps,
        );
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps,
            next_send_ns: self.next_send_ns,
            window_bytes: None,
        }
    }
}

impl IccKnobs {
    /// ICC's knobs: T from `icc_t_us`, Q_d from `icc_qd_bytes`.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let link = LinkParams::from_knobs(k);
        let mut i = Self::for_link(&link, k.us_ns(Knob::IccTUs));
        i.q_d_bytes = u64::from(k.get(Knob::IccQdBytes));
        i.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), i.burst_ns);
        i
    }
}

/// ICC reads one INT slot, the most congested port's feedback, from an
/// ACK per packet.
impl Algorithm for Icc {
    const INFO: AlgInfo = AlgInfo {
        name: "icc",
        ack_every: 1,
        int_shim: Some((INT_KIND_ICC, IntRoom::One)),
        signals: &["int_acks"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Icc::new(&LinkParams::from_knobs(k), IccKnobs::from_knobs(k), now_ns)
    }
}
