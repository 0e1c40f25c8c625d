// SPDX-License-Identifier: GPL-2.0

//! DCQCN (Zhu et al., SIGCOMM'15): the reaction point (sender) and the
//! notification point's CNP pacing (receiver).
//!
//! RP, on a CNP: `Rt = Rc; Rc = Rc·(1 − α/2); α = (1 − g)·α + g`, and the
//! increase counters restart. Every `alpha_period` without a CNP,
//! `α = (1 − g)·α`. Increase events come from a timer (`rate_period`) and a
//! byte counter (`byte_reset` bytes sent); with `t` timer and `bc` byte
//! events since the last CNP:
//! - both at most F: fast recovery, `Rc = (Rt + Rc)/2`;
//! - one past F: additive, `Rt += R_AI`, then `Rc = (Rt + Rc)/2`;
//! - both past F: hyper, `Rt += i·R_HAI` with `i = min(t, bc) − F`.
//!
//! Knob names follow the ConnectX `cc_params` users know (`rpg_*`, `dce_tcp_g`,
//! `min_time_between_cnps`).
//!
//! [`DcqcnVariant::Simulator`] (`dcqcn_variant=1`) is instead the DCQCN of
//! the HPCC ns-3 simulator (`rdma-hw.cc`, "Mellanox's version of DCQCN"),
//! the baseline of most papers' large-scale figures, ACC's included: a CNP
//! only sets two flags; α is updated on its own timer (`(1 − g)·α + g` if a
//! CNP came in the last interval, else `(1 − g)·α`); the rate is cut at
//! most once per `decrease_period` (4 us there), if a CNP came, and Rt is
//! set to Rc first only if an increase happened since the last cut; no
//! byte counter; the increase timer (300 us there) restarts at each cut,
//! and its events are fast recovery while fewer than F (1 there), additive
//! at F, hyper (`Rt += R_HAI`, constant) after. The first CNP sets α = 1
//! and starts the timers.

use super::alg::{AlgInfo, Algorithm, ECN_ECT1};
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::fixed::{tx_time_ns, Q32};
use super::knobs::{Knob, KnobSource};

/// DCQCN knobs. Defaults: g = 1/256, K = 55 us, F = 5, 10 MB byte counter,
/// R_AI and R_HAI scaled as HPCC's scripts do (5 and 50 Mb/s per 25 Gb/s),
/// minimum rate line/100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnKnobs {
    /// `dce_tcp_g`: α gain, g.
    pub g: Q32,
    /// α decay period K without CNPs, ns (55 us).
    pub alpha_period_ns: u64,
    /// `rpg_time_reset`: rate increase timer, ns (55 us).
    pub rate_period_ns: u64,
    /// `rpg_byte_reset`: bytes per byte-counter increase event (10 MB).
    pub byte_reset: u64,
    /// `rpg_threshold`: F, events before additive/hyper increase (5).
    pub threshold: u32,
    /// `rpg_ai_rate`: R_AI, b/s.
    pub ai_rate_bps: u64,
    /// `rpg_hai_rate`: R_HAI, b/s.
    pub hai_rate_bps: u64,
    /// `rpg_min_rate`, b/s.
    pub min_rate_bps: u64,
    /// `initial_alpha_value`.
    pub initial_alpha: Q32,
    /// Pacing credit kept after waiting, ns.
    pub burst_ns: u64,
    /// The paper's rules or the HPCC simulator's.
    pub variant: DcqcnVariant,
    /// [`DcqcnVariant::Simulator`]: the rate-decrease check's period, ns.
    pub decrease_period_ns: u64,
}

/// Which DCQCN a QP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DcqcnVariant {
    /// SIGCOMM'15: the rules of the paper (the default).
    Paper,
    /// The HPCC ns-3 simulator's `rdma-hw.cc` (module doc).
    Simulator,
}

impl DcqcnKnobs {
    /// Defaults for `link`.
    pub fn for_link(link: &LinkParams) -> Self {
        let per_25g =
            |x: u64| -> u64 { super::fixed::mul_div(x, link.line_rate_bps, 25_000_000_000).max(1) };
        Self {
            g: Q32::ratio(1, 256),
            alpha_period_ns: 55_000,
            rate_period_ns: 55_000,
            byte_reset: 10 * 1024 * 1024,
            threshold: 5,
            ai_rate_bps: per_25g(5_000_000),
            hai_rate_bps: per_25g(50_000_000),
            min_rate_bps: (link.line_rate_bps / 100).max(1),
            initial_alpha: Q32::ONE,
            burst_ns: tx_time_ns(u64::from(link.mtu), link.line_rate_bps),
            variant: DcqcnVariant::Paper,
            decrease_period_ns: 4_000,
        }
    }
}

/// DCQCN's module parameters as a user sets them (rxe_cc's `rpg_*`,
/// `dce_tcp_*` and `pacing_burst_us` knobs, in the units of Mellanox's
/// sysfs); a 0 rate means "the default for the link". The kernel module and
/// the cargo model both derive `DcqcnKnobs` from these through
/// [`DcqcnKnobs::from_settings`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DcqcnSettings {
    /// R_AI, b/s (0: scaled from 5 Mb/s at 25 Gb/s).
    pub ai_rate_bps: u64,
    /// R_HAI, b/s (0: 10 x R_AI).
    pub hai_rate_bps: u64,
    /// The rate floor, b/s (0: line/100).
    pub min_rate_bps: u64,
    /// The rate-increase timer, ns.
    pub rate_period_ns: u64,
    /// The alpha-update timer, ns.
    pub alpha_period_ns: u64,
    /// The byte counter's step, bytes.
    pub byte_reset: u64,
    /// F, the fast-recovery steps.
    pub threshold: u32,
    /// g, in 1/1024.
    pub g_1024: u64,
    /// Pacing credit, ns (0: one packet at line rate).
    pub burst_ns: u64,
    /// The HPCC simulator's rules instead of the paper's.
    pub simulator: bool,
    /// The simulator's rate-decrease period, ns.
    pub decrease_period_ns: u64,
}

impl DcqcnKnobs {
    /// The knobs for `link` under the user's `settings`.
    pub fn from_settings(link: &LinkParams, settings: &DcqcnSettings) -> Self {
        let mut k = Self::for_link(link);
        if settings.ai_rate_bps != 0 {
            k.ai_rate_bps = settings.ai_rate_bps;
        }
        k.hai_rate_bps = if settings.hai_rate_bps != 0 {
            settings.hai_rate_bps
        } else {
            k.ai_rate_bps.saturating_mul(10)
        };
        if settings.min_rate_bps != 0 {
            k.min_rate_bps = settings.min_rate_bps;
        }
        k.rate_period_ns = settings.rate_period_ns;
        k.alpha_period_ns = settings.alpha_period_ns;
        k.byte_reset = settings.byte_reset;
        k.threshold = settings.threshold;
        k.g = Q32::ratio(settings.g_1024, 1024);
        k.burst_ns = super::cc::pacing_burst_ns(link, settings.burst_ns, k.burst_ns);
        if settings.simulator {
            k.variant = DcqcnVariant::Simulator;
        }
        if settings.decrease_period_ns != 0 {
            k.decrease_period_ns = settings.decrease_period_ns;
        }
        k
    }
}

/// DCQCN reaction point: per-QP sender state.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    knobs: DcqcnKnobs,
    line_rate_bps: u64,
    /// Rc, the current rate.
    rc: u64,
    /// Rt, the target rate.
    rt: u64,
    alpha: Q32,
    /// Timer and byte-counter increase events since the last CNP.
    t: u32,
    bc: u32,
    bytes: u64,
    last_alpha_ns: u64,
    last_rate_ns: u64,
    next_send_ns: u64,
    cnps: u64,
    /// The simulator's state: CNP flags for the α timer and the decrease
    /// check, whether a CNP has come yet, increase events since the last
    /// cut, the last decrease check, and whether the increase timer runs.
    sim_alpha_cnp: bool,
    sim_decrease_cnp: bool,
    sim_started: bool,
    sim_stage: u32,
    sim_last_dec_ns: u64,
    sim_rate_timer: bool,
}

impl Dcqcn {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: DcqcnKnobs, now_ns: u64) -> Self {
        let line = link.line_rate_bps.max(1);
        Self {
            knobs,
            line_rate_bps: line,
            rc: line,
            rt: line,
            alpha: knobs.initial_alpha,
            t: 0,
            bc: 0,
            bytes: 0,
            last_alpha_ns: now_ns,
            last_rate_ns: now_ns,
            next_send_ns: now_ns,
            cnps: 0,
            sim_alpha_cnp: false,
            sim_decrease_cnp: false,
            sim_started: false,
            sim_stage: 0,
            sim_last_dec_ns: now_ns,
            sim_rate_timer: false,
        }
    }

    /// Replaces the knobs; takes effect from the next event.
    pub fn set_knobs(&mut self, knobs: DcqcnKnobs) {
        self.knobs = knobs;
    }

    /// α.
    pub fn alpha(&self) -> Q32 {
        self.alpha
    }

    /// Rt, the target rate, b/s.
    pub fn target_rate_bps(&self) -> u64 {
        self.rt
    }

    /// CNPs seen.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    fn clamp(&self, r: u64) -> u64 {
        r.clamp(
            self.knobs.min_rate_bps.min(self.line_rate_bps),
            self.line_rate_bps,
        )
    }

    /// (Rt + Rc)/2 without overflow.
    fn halfway(&self) -> u64 {
        self.clamp(
            (self.rt / 2)
                .saturating_add(self.rc / 2)
                .saturating_add(self.rt & self.rc & 1),
        )
    }

    /// The simulator's increase event: fast recovery before F events,
    /// additive at F, hyper (R_HAI, constant) after (`RateIncEventMlx`).
    fn sim_increase(&mut self) {
        let f = self.knobs.threshold;
        if self.sim_stage == f {
            self.rt = self.clamp(self.rt.saturating_add(self.knobs.ai_rate_bps));
        } else if self.sim_stage > f {
            self.rt = self.clamp(self.rt.saturating_add(self.knobs.hai_rate_bps));
        }
        self.rc = self.halfway();
        self.sim_stage = self.sim_stage.saturating_add(1);
    }

    /// The simulator's timers up to `now_ns`, in order: α updates, the
    /// decrease check (after the α update of the same instant, as there),
    /// then the increase timer. Catch-up is bounded as in the paper's.
    fn sim_timer(&mut self, now_ns: u64) {
        if !self.sim_started {
            return;
        }
        let g = self.knobs.g;
        let k = self.knobs.alpha_period_ns.max(1);
        let n = now_ns.saturating_sub(self.last_alpha_ns) / k;
        for i in 0..n.min(2048) {
            let decayed = Q32::ONE.saturating_sub(g).saturating_mul(self.alpha);
            self.alpha = if i == 0 && self.sim_alpha_cnp {
                decayed.saturating_add(g).min(Q32::ONE)
            } else {
                decayed
            };
        }
        if n > 0 {
            self.sim_alpha_cnp = false;
        }
        self.last_alpha_ns = self.last_alpha_ns.saturating_add(n.saturating_mul(k));
        let d = self.knobs.decrease_period_ns.max(1);
        let n = now_ns.saturating_sub(self.sim_last_dec_ns) / d;
        if n > 0 && self.sim_decrease_cnp {
            // CLAMP_TARGET_RATE 0: Rt follows Rc only after an increase.
            if self.sim_stage != 0 {
                self.rt = self.rc;
            }
            let cut = (self.alpha.mul_int(self.rc)) / 2;
            self.rc = self.clamp(self.rc.saturating_sub(cut));
            self.sim_stage = 0;
            self.sim_decrease_cnp = false;
            // The increase timer restarts at the check that cut.
            self.last_rate_ns = self.sim_last_dec_ns.saturating_add(d);
            self.sim_rate_timer = true;
        }
        self.sim_last_dec_ns = self.sim_last_dec_ns.saturating_add(n.saturating_mul(d));
        if self.sim_rate_timer {
            let ti = self.knobs.rate_period_ns.max(1);
            let n = now_ns.saturating_sub(self.last_rate_ns) / ti;
            for _ in 0..n.min(256) {
                self.sim_increase();
            }
            self.last_rate_ns = self.last_rate_ns.saturating_add(n.saturating_mul(ti));
        }
    }

    fn increase(&mut self) {
        let f = self.knobs.threshold;
        if self.t > f && self.bc > f {
            let i = u64::from(self.t.min(self.bc).saturating_sub(f));
            self.rt = self.clamp(
                self.rt
                    .saturating_add(self.knobs.hai_rate_bps.saturating_mul(i)),
            );
        } else if self.t > f || self.bc > f {
            self.rt = self.clamp(self.rt.saturating_add(self.knobs.ai_rate_bps));
        }
        self.rc = self.halfway();
    }
}

impl CongestionControl for Dcqcn {
    fn period_knobs(&mut self, k: &dyn KnobSource) {
        self.set_knobs(DcqcnKnobs::from_knobs(k));
    }

    fn name(&self) -> &'static str {
        "dcqcn"
    }

    fn on_send(&mut self, now_ns: u64, _psn: u32, bytes: u32) {
        let b = u64::from(bytes);
        self.bytes = self.bytes.saturating_add(b);
        // The simulator has no byte counter.
        if self.knobs.variant == DcqcnVariant::Paper
            && self.knobs.byte_reset > 0
            && self.bytes >= self.knobs.byte_reset
        {
            self.bytes = self.bytes.saturating_sub(self.knobs.byte_reset);
            self.bc = self.bc.saturating_add(1);
            self.increase();
        }
        self.next_send_ns =
            advance_pacing(self.next_send_ns, now_ns, b, self.rc, self.knobs.burst_ns);
    }

    fn on_ack(&mut self, _ack: &AckEvent<'_>) {}

    fn on_cnp(&mut self, now_ns: u64) {
        self.cnps = self.cnps.saturating_add(1);
        if self.knobs.variant == DcqcnVariant::Simulator {
            // Timers that fell due before this CNP run without it.
            self.sim_timer(now_ns);
            self.sim_alpha_cnp = true;
            self.sim_decrease_cnp = true;
            if !self.sim_started {
                // `cnp_received_mlx`: α = 1, the timers start (the cut
                // waits for the first check), RateOnFirstCnp 1.0.
                self.sim_started = true;
                self.alpha = Q32::ONE;
                self.sim_alpha_cnp = false;
                self.last_alpha_ns = now_ns;
                self.sim_last_dec_ns = now_ns;
                self.rt = self.rc;
            }
            return;
        }
        self.rt = self.rc;
        // Rc·(1 − α/2) = Rc − Rc·α/2.
        let cut = (self.alpha.mul_int(self.rc)) / 2;
        self.rc = self.clamp(self.rc.saturating_sub(cut));
        let g = self.knobs.g;
        self.alpha = Q32::ONE
            .saturating_sub(g)
            .saturating_mul(self.alpha)
            .saturating_add(g)
            .min(Q32::ONE);
        self.t = 0;
        self.bc = 0;
        self.bytes = 0;
        self.last_alpha_ns = now_ns;
        self.last_rate_ns = now_ns;
    }

    fn on_timer(&mut self, now_ns: u64) {
        if self.knobs.variant == DcqcnVariant::Simulator {
            self.sim_timer(now_ns);
            return;
        }
        // Catch up on every period that passed, but boundedly: 2048 decays
        // take α below 4e-4 (g = 1/256), and 256 increase events take any
        // rate back to the line.
        let k = self.knobs.alpha_period_ns.max(1);
        let n = now_ns.saturating_sub(self.last_alpha_ns) / k;
        for _ in 0..n.min(2048) {
            self.alpha = Q32::ONE
                .saturating_sub(self.knobs.g)
                .saturating_mul(self.alpha);
        }
        self.last_alpha_ns = self.last_alpha_ns.saturating_add(n.saturating_mul(k));
        let ti = self.knobs.rate_period_ns.max(1);
        let n = now_ns.saturating_sub(self.last_rate_ns) / ti;
        for _ in 0..n.min(256) {
            self.t = self.t.saturating_add(1);
            self.increase();
        }
        self.last_rate_ns = self.last_rate_ns.saturating_add(n.saturating_mul(ti));
    }

    fn timer_period_ns(&self) -> Option<u64> {
        let p = self.knobs.alpha_period_ns.min(self.knobs.rate_period_ns);
        Some(
            match self.knobs.variant {
                DcqcnVariant::Paper => p,
                DcqcnVariant::Simulator => p.min(self.knobs.decrease_period_ns),
            }
            .max(1),
        )
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rc,
            next_send_ns: self.next_send_ns,
            window_bytes: None,
        }
    }
}

/// DCQCN notification point: decides when a CE-marked packet earns a CNP.
#[derive(Clone, Debug)]
pub struct DcqcnNp {
    /// `min_time_between_cnps`, ns (50 us).
    pub interval_ns: u64,
    last_cnp_ns: Option<u64>,
}

impl DcqcnNp {
    /// An NP sending at most one CNP per `interval_ns`.
    pub fn new(interval_ns: u64) -> Self {
        Self {
            interval_ns,
            last_cnp_ns: None,
        }
    }

    /// A CE-marked packet arrived at `now_ns`: true if a CNP should go out.
    pub fn on_ce(&mut self, now_ns: u64) -> bool {
        match self.last_cnp_ns {
            Some(last) if now_ns.saturating_sub(last) < self.interval_ns => false,
            _ => {
                self.last_cnp_ns = Some(now_ns);
                true
            }
        }
    }
}

impl DcqcnKnobs {
    /// DCQCN's knobs: defaults for the link, with the testbed-scaled times
    /// and any explicit setting.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        Self::from_settings(
            &LinkParams::from_knobs(k),
            &DcqcnSettings {
                ai_rate_bps: k.bps(Knob::RpgAiRate),
                hai_rate_bps: k.bps(Knob::RpgHaiRate),
                min_rate_bps: k.bps(Knob::RpgMinRate),
                rate_period_ns: k.us_ns(Knob::RpgTimeReset),
                alpha_period_ns: k.us_ns(Knob::DceTcpRtt),
                byte_reset: u64::from(k.get(Knob::RpgByteReset)),
                threshold: k.get(Knob::RpgThreshold),
                g_1024: u64::from(k.get(Knob::DceTcpG)),
                burst_ns: k.us_ns(Knob::PacingBurstUs),
                simulator: k.get(Knob::DcqcnVariant) != 0,
                decrease_period_ns: k.us_ns(Knob::DcqcnDecUs),
            },
        )
    }
}

/// DCQCN needs ECN-capable data; its responder sends CNPs.
impl Algorithm for Dcqcn {
    const INFO: AlgInfo = AlgInfo {
        name: "dcqcn",
        data_ecn: ECN_ECT1,
        sends_cnps: true,
        signals: &["cnps"],
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Dcqcn::new(
            &LinkParams::from_knobs(k),
            DcqcnKnobs::from_knobs(k),
            now_ns,
        )
    }
}
