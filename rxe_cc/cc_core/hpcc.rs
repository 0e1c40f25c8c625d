// SPDX-License-Identifier: GPL-2.0

//! HPCC: high-precision congestion control (SIGCOMM'19, Algorithm 1).
//!
//! Window-based with pacing. Each ACK carries per-hop INT records; the
//! sender estimates each link's normalised inflight
//! `u = min(qLen, qLen_prev)/(B·T) + txRate/B`, keeps an EWMA `U` of the
//! largest weighted by `τ/T`, and sets `W = W^c/(U/η) + W_AI` (or
//! `W = W^c + W_AI` while `U < η`, for at most `maxStage` RTTs). `W^c` moves
//! once per RTT, on the ACK of the first packet sent after the last update;
//! every other ACK recomputes `W` from the fixed `W^c`. The pacing rate is
//! `W/T`.
//!
//! Fixed point: `U` and η are Q32.32 (2^-32); windows are bytes.
//! Choices (also in `docs/algorithms.md`): the first ACK and any ACK after a
//! path or hop-count change only store the records; a hop whose timestamp
//! did not move (τ = 0) is skipped; wrapping INT counters are unwrapped with
//! [`wrapping_delta`](super::psn::wrapping_delta); `W` stays within
//! `[MTU, W_init]`.

use super::alg::{AlgInfo, Algorithm, IntRoom, INT_KIND_HPCC};
use super::cc::pacing_burst_ns;
use super::cc::{
    advance_pacing, AckEvent, CongestionControl, IntHop, IntInfo, IntWidths, LinkParams, Pacing,
};
use super::fixed::{bytes_in, mul_div, rate_bps, tx_time_ns, Q32};
use super::knobs::{Knob, KnobSource};
use super::psn::wrapping_delta;
use super::rtt::Flight;

/// Most hops an INT shim carries.
pub const MAX_HOPS: usize = 5;

/// HPCC knobs. Defaults: η = 0.95, maxStage = 5, T = base RTT,
/// `W_AI = W_init·(1 − η)/100` (the paper's 80 B at 100 Gb/s and T = 13 us).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpccKnobs {
    /// Target utilisation η.
    pub eta: Q32,
    /// Consecutive additive-increase RTTs before a multiplicative step.
    pub max_stage: u32,
    /// Additive increase W_AI, bytes.
    pub w_ai_bytes: u64,
    /// T, the base RTT, ns.
    pub period_ns: u64,
    /// Pacing credit kept after waiting, ns.
    pub burst_ns: u64,
}

impl HpccKnobs {
    /// Defaults for `link` and a base RTT of `t_ns` (the paper's T).
    pub fn for_link(link: &LinkParams, t_ns: u64) -> Self {
        let eta = Q32::from_milli(950);
        let w_init = bytes_in(link.line_rate_bps, t_ns);
        Self {
            eta,
            max_stage: 5,
            w_ai_bytes: (Q32::ONE.saturating_sub(eta).mul_int(w_init) / 100).max(1),
            period_ns: t_ns.max(1),
            burst_ns: tx_time_ns(u64::from(link.mtu), link.line_rate_bps),
        }
    }
}

/// What one ACK's telemetry says, from [`Hpcc::measure_inflight`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inflight {
    /// The largest per-hop normalised inflight u' of this ACK.
    pub u_max: Q32,
    /// The hop it was on (index into the ACK's records).
    pub hop: usize,
}

/// HPCC's per-QP state.
#[derive(Clone, Debug)]
pub struct Hpcc {
    knobs: HpccKnobs,
    line_rate_bps: u64,
    mtu: u64,
    w_init: u64,
    /// W, the window; W^c, the reference window.
    w: u64,
    wc: u64,
    /// U, the EWMA of the normalised inflight.
    u: Q32,
    inc_stage: u32,
    last_update_seq: u64,
    /// Bytes sent and acknowledged; a retransmitted PSN's bytes are not in
    /// flight a second time.
    flight: Flight,
    prev: [IntHop; MAX_HOPS],
    n_prev: usize,
    path_id: u16,
    have_prev: bool,
    next_send_ns: u64,
}

impl Hpcc {
    /// A QP starting at line rate with `W = W^c = W_init = line·T`.
    pub fn new(link: &LinkParams, knobs: HpccKnobs, now_ns: u64) -> Self {
        let mtu = u64::from(link.mtu).max(1);
        let w_init = bytes_in(link.line_rate_bps, knobs.period_ns).max(mtu);
        Self {
            knobs,
            line_rate_bps: link.line_rate_bps.max(1),
            mtu,
            w_init,
            w: w_init,
            wc: w_init,
            u: Q32::ONE,
            inc_stage: 0,
            last_update_seq: 0,
            flight: Flight::default(),
            prev: [IntHop::default(); MAX_HOPS],
            n_prev: 0,
            path_id: 0,
            have_prev: false,
            next_send_ns: now_ns,
        }
    }

    /// W, bytes.
    pub fn window(&self) -> u64 {
        self.w
    }

    /// True unless `psn` was sent before: a retransmission, which the
    /// window must let through (the bytes are already in flight).
    pub fn is_new_psn(&self, psn: u32) -> bool {
        self.flight.is_new_psn(psn)
    }

    /// Bytes sent and not yet acknowledged: what the window limits.
    pub fn inflight(&self) -> u64 {
        self.flight.inflight()
    }

    /// W^c, bytes.
    pub fn reference_window(&self) -> u64 {
        self.wc
    }

    /// Sets W^c (FNCC's last-hop speedup).
    pub fn set_reference_window(&mut self, wc: u64) {
        self.wc = wc.clamp(self.mtu, self.w_init);
    }

    /// Sets W and W^c to `w` (FNCC's last-hop speedup, set directly); at
    /// the once-per-RTT update point it also ends an increase run, as an MD
    /// step of COMPUTEWIND does.
    pub fn set_window(&mut self, w: u64, update_wc: bool) {
        self.w = w.clamp(self.mtu, self.w_init);
        self.wc = self.w;
        if update_wc {
            self.inc_stage = 0;
        }
    }

    /// U, the EWMA of normalised inflight.
    pub fn utilisation(&self) -> Q32 {
        self.u
    }

    /// The knobs.
    pub fn knobs(&self) -> &HpccKnobs {
        &self.knobs
    }

    /// The pacing rate `W/T`, b/s, within the line rate.
    pub fn rate_bps(&self) -> u64 {
        rate_bps(self.w, self.knobs.period_ns).clamp(1, self.line_rate_bps)
    }

    /// Stores the ACK's records as the new reference `L`.
    fn store(&mut self, int: &IntInfo<'_>) {
        let n = int.hops.len().min(MAX_HOPS);
        self.prev[..n].copy_from_slice(&int.hops[..n]);
        self.n_prev = n;
        self.path_id = int.path_id;
        self.have_prev = true;
    }

    /// MEASUREINFLIGHT: updates U from the ACK's records against `L`.
    /// Returns None when the ACK only stores records (first ACK, path change)
    /// or no hop's clock moved.
    pub fn measure_inflight(&mut self, int: &IntInfo<'_>) -> Option<Inflight> {
        let n = int.hops.len().min(MAX_HOPS);
        if !self.have_prev || int.path_id != self.path_id || n != self.n_prev {
            return None;
        }
        let t = self.knobs.period_ns.max(1);
        let w: IntWidths = int.widths;
        let mut best: Option<(Inflight, u64)> = None;
        for (i, (hop, old)) in int.hops[..n].iter().zip(self.prev[..n].iter()).enumerate() {
            let dt = wrapping_delta(hop.ts_ns, old.ts_ns, w.ts_bits);
            if dt == 0 || hop.b_bps == 0 {
                continue;
            }
            let tx_rate = rate_bps(wrapping_delta(hop.tx_bytes, old.tx_bytes, w.tx_bits), dt);
            let bdp = bytes_in(hop.b_bps, t).max(1);
            let u = Q32::ratio(hop.qlen.min(old.qlen), bdp)
                .saturating_add(Q32::ratio(tx_rate, hop.b_bps));
            if best.is_none_or(|(b, _)| u > b.u_max) {
                best = Some((Inflight { u_max: u, hop: i }, dt));
            }
        }
        let (inflight, tau) = best?;
        let tau = tau.min(t);
        // U = (1 − τ/T)·U + (τ/T)·u
        self.u = Q32(
            mul_div(self.u.0, t.saturating_sub(tau), t).saturating_add(mul_div(
                inflight.u_max.0,
                tau,
                t,
            )),
        );
        Some(inflight)
    }

    /// COMPUTEWIND.
    pub fn compute_window(&mut self, update_wc: bool) {
        let k = self.knobs;
        let w = if self.u >= k.eta || self.inc_stage >= k.max_stage {
            let w = mul_div(self.wc, k.eta.0, self.u.0.max(1)).saturating_add(k.w_ai_bytes);
            if update_wc {
                self.inc_stage = 0;
            }
            w
        } else {
            if update_wc {
                self.inc_stage = self.inc_stage.saturating_add(1);
            }
            self.wc.saturating_add(k.w_ai_bytes)
        };
        self.w = w.clamp(self.mtu, self.w_init);
        if update_wc {
            self.wc = self.w;
        }
    }

    /// Books an ACK's sequence progress; true if it is the once-per-RTT
    /// update point (the ACK of the first packet sent after the last update).
    pub fn ack_advances(&mut self, ack: &AckEvent<'_>) -> bool {
        self.flight.on_ack(ack.acked_bytes);
        self.flight.snd_una > self.last_update_seq
    }

    /// Records that W^c was updated: the next update waits for new data.
    pub fn mark_updated(&mut self) {
        self.last_update_seq = self.flight.snd_nxt;
    }

    /// Stores `L` after an ACK was used.
    pub fn finish_ack(&mut self, int: &IntInfo<'_>) {
        self.store(int);
    }
}

impl CongestionControl for Hpcc {
    fn window_of(&self, psn: u32) -> Option<(u64, u64, bool)> {
        Some((self.window(), self.inflight(), self.is_new_psn(psn)))
    }

    fn name(&self) -> &'static str {
        "hpcc"
    }

    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32) {
        let b = u64::from(bytes);
        self.flight.on_send(psn, bytes);
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            b,
            self.rate_bps(),
            self.knobs.burst_ns,
        );
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.nak {
            return;
        }
        let update = self.ack_advances(ack);
        let Some(int) = ack.int else { return };
        if self.measure_inflight(&int).is_some() {
            self.compute_window(update);
            if update {
                self.mark_updated();
            }
        }
        self.finish_ack(&int);
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps(),
            next_send_ns: self.next_send_ns,
            window_bytes: Some(self.w),
        }
    }
}

impl HpccKnobs {
    /// HPCC's knobs: the paper's defaults for the link, with T from
    /// `hpcc_t_us` (the emulated network's base RTT) and any explicit
    /// setting.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        let link = LinkParams::from_knobs(k);
        let mut h = Self::for_link(&link, k.us_ns(Knob::HpccTUs));
        h.eta = Q32::ratio(u64::from(k.get(Knob::HpccEtaPermille)), 1000);
        h.max_stage = k.get(Knob::HpccMaxStage);
        if k.get(Knob::HpccWAiBytes) != 0 {
            h.w_ai_bytes = u64::from(k.get(Knob::HpccWAiBytes));
        }
        h.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), h.burst_ns);
        h
    }
}

/// HPCC reads INT from an ACK per packet.
impl Algorithm for Hpcc {
    const INFO: AlgInfo = AlgInfo {
        name: "hpcc",
        ack_every: 1,
        int_shim: Some((INT_KIND_HPCC, IntRoom::Hops)),
        signals: &["int_acks"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Hpcc::new(&LinkParams::from_knobs(k), HpccKnobs::from_knobs(k), now_ns)
    }
}
