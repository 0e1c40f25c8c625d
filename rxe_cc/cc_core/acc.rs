// SPDX-License-Identifier: GPL-2.0

//! ACC: ACK-driven congestion control (NSDI'24, Algorithm 1).
//!
//! Every period T the sender classifies itself from the marks its ACKs echo
//! (TCD: CE congested, UE undetermined) and then
//! - congested: sends at the ACK arrival rate R and halts for
//!   `(ΔS − ΔA)/R` to let its excess drain, extended one period later by the
//!   excess it sent at the old rate (`r = ΔS − ΔS·R/R_s`, `t_extend = r/R`);
//! - undetermined (a victim of PFC): keeps its rate, and halves it after
//!   more than `P_thresh` consecutive periods with UE;
//! - uncongested: `R_s += (line − R_s)/line · RI`, RI_low for the first two
//!   periods, RI_high after.
//!
//! Some CE but under 90% ("mixed") is not congested, and not uncongested
//! either: §4.1 "Only when neither UE nor CE marking is received, the flow
//! is uncongested". Such a period holds the rate by default; the knob
//! [`MixedPeriod::Increase`] treats it as uncongested instead.
//!
//! Choices where the paper is silent (also in `docs/algorithms.md`):
//! - A period without ACKs: no information, hold; ΔS accumulates. So is a
//!   period whose ACKs acknowledged no new byte (duplicates of an ACK
//!   already counted): its R would be 0, and a congested reading would set
//!   the rate to the floor and halt for ΔS at the floor rate, seconds long.
//! - R is measured as bytes acked per period (`ΔA/T`), not `recvNum·MTU/T`,
//!   because rxe coalesces ACKs; with per-packet ACKs of full packets the two
//!   are equal. T is the period as it really ran: a kernel runs a period at
//!   the QP's first event after the timer, so periods can end late, or
//!   several at once, and ΔA then covers more than T.
//! - A halt starts from `max(t_NextPkt, now)`: pacing credit left from an
//!   idle spell must not shorten it.
//! - The halt state ends at the end of the period after the halt, with its
//!   one extension (lines 6-10), whatever that period shows (Fig. 7's
//!   `T_{i+1}`; §4.2 infers the excess without waiting for ACKs). Algorithm
//!   1 clears it only in CONGESTED: read literally, a halt followed by any
//!   other class stayed set, and the next congestion, however late, took
//!   the extension branch with no new halt. The QP then waits out
//!   `t_NextPkt` and its later ACKs count only past `snd_nxt_start`.

use super::alg::{AlgInfo, Algorithm, ECN_ECT1};
use super::cc::{advance_pacing, AckEvent, CongestionControl, LinkParams, Pacing};
use super::fixed::{mul_div, rate_bps, tx_time_ns, Q32};
use super::knobs::{Knob, KnobSource};

/// ACC's knobs, with the paper's defaults scaled to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccKnobs {
    /// Control period T, ns (the paper: base RTT, 50 us on its testbed).
    pub period_ns: u64,
    /// Increase step for the first two uncongested periods, b/s (line/250).
    pub ri_low_bps: u64,
    /// Increase step afterwards, b/s (10 x RI_low).
    pub ri_high_bps: u64,
    /// Periods with UE tolerated before a victim halves its rate (1).
    pub p_thresh: u32,
    /// Fraction of CE-marked ACKs that makes a period congested (0.9).
    pub ce_fraction: Q32,
    /// Lowest rate ACC will set, b/s (line/1000; the paper gives none).
    pub min_rate_bps: u64,
    /// Pacing credit a sender may keep after waiting, ns (one MTU at line rate).
    pub burst_ns: u64,
    /// What a period with some CE, under `ce_fraction`, does.
    pub mixed: MixedPeriod,
}

/// What a "mixed" period (some CE, too few to be congested) does to R_s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixedPeriod {
    /// Keep R_s (§4.1: only a period without CE and UE is uncongested).
    Hold,
    /// Raise R_s as an uncongested period would (rxe-cc before 2026-12).
    Increase,
}

impl AccKnobs {
    /// The paper's defaults for `link` and a base RTT of `t_ns`: T =
    /// `t_ns`, RI_low = line/250, RI_high = 10 RI_low, P_thresh = 1, CE
    /// fraction 90%.
    pub fn for_link(link: &LinkParams, t_ns: u64) -> Self {
        let ri_low = link.line_rate_bps / 250;
        Self {
            period_ns: t_ns.max(1),
            ri_low_bps: ri_low,
            ri_high_bps: ri_low.saturating_mul(10),
            p_thresh: 1,
            ce_fraction: Q32::from_milli(900),
            min_rate_bps: (link.line_rate_bps / 1000).max(1),
            burst_ns: tx_time_ns(u64::from(link.mtu), link.line_rate_bps),
            mixed: MixedPeriod::Hold,
        }
    }
}

/// ACC's module parameters as a user sets them (rxe_cc's `acc_*` and
/// `pacing_burst_us` knobs); 0 means "the default for the link". The kernel
/// module and the cargo model (`rxecc model`) both derive `AccKnobs` from
/// these through [`AccKnobs::from_settings`], so that they cannot drift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccSettings {
    /// RI_low, b/s (0: line/250).
    pub ri_low_bps: u64,
    /// RI_high, b/s (0: 10 x RI_low).
    pub ri_high_bps: u64,
    /// P_thresh.
    pub p_thresh: u32,
    /// CE fraction of a congested period, per mille.
    pub ce_permille: u64,
    /// Pacing credit, ns (0: one packet at line rate).
    pub burst_ns: u64,
    /// A mixed period raises the rate (false: holds it, the paper).
    pub mixed_increase: bool,
}

impl AccKnobs {
    /// The knobs for `link` and T = `t_ns` under the user's `settings`.
    pub fn from_settings(link: &LinkParams, t_ns: u64, settings: &AccSettings) -> Self {
        let mut k = Self::for_link(link, t_ns);
        if settings.ri_low_bps != 0 {
            k.ri_low_bps = settings.ri_low_bps;
        }
        k.ri_high_bps = if settings.ri_high_bps != 0 {
            settings.ri_high_bps
        } else {
            k.ri_low_bps.saturating_mul(10)
        };
        k.p_thresh = settings.p_thresh;
        k.ce_fraction = Q32::ratio(settings.ce_permille, 1000);
        k.burst_ns = super::cc::pacing_burst_ns(link, settings.burst_ns, k.burst_ns);
        if settings.mixed_increase {
            k.mixed = MixedPeriod::Increase;
        }
        k
    }
}

/// How the last period was classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccClass {
    /// No period has ended yet, or the period had no ACKs.
    NoInfo,
    /// No marks: rate increase.
    Uncongested,
    /// At least `ce_fraction` of ACKs CE: throttle and halt.
    Congested,
    /// Some CE, too few to be congested: hold (or increase, by the knob).
    Mixed,
    /// UE but no CE: a victim.
    Undetermined,
}

impl AccClass {
    /// The class's code, for debugfs and the rate tracepoint.
    pub fn code(self) -> u32 {
        match self {
            Self::NoInfo => 0,
            Self::Uncongested => 1,
            Self::Congested => 2,
            Self::Mixed => 3,
            Self::Undetermined => 4,
        }
    }

    /// The class of a [`AccClass::code`]; NoInfo for any other value.
    pub fn from_code(code: u32) -> Self {
        match code {
            1 => Self::Uncongested,
            2 => Self::Congested,
            3 => Self::Mixed,
            4 => Self::Undetermined,
            _ => Self::NoInfo,
        }
    }

    /// Its name in debugfs.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoInfo => "no-info",
            Self::Uncongested => "uncongested",
            Self::Congested => "congested",
            Self::Mixed => "mixed",
            Self::Undetermined => "undetermined",
        }
    }
}

/// ACC's per-QP state (Table 1 plus the per-period counters).
#[derive(Clone, Debug)]
pub struct Acc {
    knobs: AccKnobs,
    line_rate_bps: u64,
    /// R_s, the sending rate.
    rate_bps: u64,
    /// R, the ACK arrival rate measured at the last congested period.
    ack_rate_bps: u64,
    /// R_s before the last halt, for the extension.
    rate_before_halt_bps: u64,
    /// Bytes sent and acked since QP start (sequence space in bytes).
    snd_nxt: u64,
    snd_una: u64,
    snd_nxt_start: u64,
    halt: bool,
    /// Length of the current or last halt, including its extension, ns.
    t_halt_ns: u64,
    /// t_NextPkt.
    next_send_ns: u64,
    n_u: u32,
    n_v: u32,
    /// Per-period counters: packets acknowledged (an ACK per packet, or
    /// the packets a coalesced ACK answers), of them CE-marked, and UE ACKs.
    acks: u32,
    ce: u32,
    ue: u32,
    ds_cur: u64,
    ds_prev: u64,
    da: u64,
    last_ack_ns: Option<u64>,
    max_gap_ns: u64,
    /// When the current period began (the last `on_timer`, or the first ACK).
    period_start_ns: u64,
    started: bool,
    class: AccClass,
    halts: u64,
}

impl Acc {
    /// A QP starting at line rate.
    pub fn new(link: &LinkParams, knobs: AccKnobs, now_ns: u64) -> Self {
        Self {
            knobs,
            line_rate_bps: link.line_rate_bps.max(1),
            rate_bps: link.line_rate_bps.max(1),
            ack_rate_bps: 0,
            rate_before_halt_bps: link.line_rate_bps.max(1),
            snd_nxt: 0,
            snd_una: 0,
            snd_nxt_start: 0,
            halt: false,
            t_halt_ns: 0,
            next_send_ns: now_ns,
            n_u: 0,
            n_v: 0,
            acks: 0,
            ce: 0,
            ue: 0,
            ds_cur: 0,
            ds_prev: 0,
            da: 0,
            last_ack_ns: None,
            max_gap_ns: 0,
            period_start_ns: now_ns,
            started: false,
            class: AccClass::NoInfo,
            halts: 0,
        }
    }

    /// Replaces the knobs (sysfs writes); takes effect from the next event.
    pub fn set_knobs(&mut self, knobs: AccKnobs) {
        self.knobs = knobs;
    }

    /// The last period's class.
    pub fn class(&self) -> AccClass {
        self.class
    }

    /// True from a halt until the end of the next period.
    pub fn halted(&self) -> bool {
        self.halt
    }

    /// Length of the last halt including its extension, ns.
    pub fn last_halt_ns(&self) -> u64 {
        self.t_halt_ns
    }

    /// Number of halts so far.
    pub fn halts(&self) -> u64 {
        self.halts
    }

    /// R, the last measured ACK arrival rate, b/s.
    pub fn ack_rate_bps(&self) -> u64 {
        self.ack_rate_bps
    }

    fn clamp(&self, r: u64) -> u64 {
        r.clamp(
            self.knobs.min_rate_bps.min(self.line_rate_bps),
            self.line_rate_bps,
        )
    }

    /// Algorithm 1, CONGESTED and SOURCEHALT.
    fn congested(&mut self, now_ns: u64) {
        if !self.halt && self.snd_una > self.snd_nxt_start {
            // The ACK arrival rate over the period as it ran; a longer gap
            // between ACKs stands in for it.
            let ran = now_ns.saturating_sub(self.period_start_ns);
            let span = if ran == 0 { self.knobs.period_ns } else { ran }.max(self.max_gap_ns);
            let r = self.clamp(rate_bps(self.da, span));
            self.ack_rate_bps = r;
            self.rate_before_halt_bps = self.rate_bps;
            self.rate_bps = r;
            // ΔS is the previous period's sending, ΔA this period's acks.
            if self.ds_prev > self.da {
                self.t_halt_ns = tx_time_ns(self.ds_prev.saturating_sub(self.da), r);
                self.next_send_ns = self.next_send_ns.max(now_ns).saturating_add(self.t_halt_ns);
                self.halt = true;
                self.snd_nxt_start = self.snd_nxt;
                self.halts = self.halts.saturating_add(1);
            }
        } else if self.halt {
            self.extend_halt();
        }
    }

    /// Algorithm 1, lines 7-10: the period before the halt sent ΔS at the
    /// old rate R_s while only ΔS·R/R_s fit through the bottleneck; the
    /// halt grows by the excess at R, and ends.
    fn extend_halt(&mut self) {
        let r = self.ack_rate_bps.max(1);
        let fit = mul_div(self.ds_prev, r, self.rate_before_halt_bps.max(1));
        let excess = self.ds_prev.saturating_sub(fit);
        let t_extend = tx_time_ns(excess, r);
        self.t_halt_ns = self.t_halt_ns.saturating_add(t_extend);
        self.next_send_ns = self.next_send_ns.saturating_add(t_extend);
        self.halt = false;
    }

    /// Algorithm 1, UNCONGESTED.
    fn uncongested(&mut self) {
        let ri = if self.n_u < 2 {
            self.knobs.ri_low_bps
        } else {
            self.knobs.ri_high_bps
        };
        let headroom = self.line_rate_bps.saturating_sub(self.rate_bps);
        let step = mul_div(headroom, ri, self.line_rate_bps);
        self.rate_bps = self.clamp(self.rate_bps.saturating_add(step));
        self.n_u = self.n_u.saturating_add(1);
    }

    /// Algorithm 1, UNDETERMINED.
    fn undetermined(&mut self) {
        self.n_v = self.n_v.saturating_add(1);
        if self.n_v > self.knobs.p_thresh {
            self.rate_bps = self.clamp(self.rate_bps / 2);
        }
    }
}

impl CongestionControl for Acc {
    fn period_knobs(&mut self, k: &dyn KnobSource) {
        self.set_knobs(AccKnobs::from_knobs(k));
    }

    fn period_class(&self) -> Option<AccClass> {
        Some(self.class())
    }

    fn halts_so_far(&self) -> (u64, u64) {
        (self.halts(), self.last_halt_ns())
    }

    fn name(&self) -> &'static str {
        "acc"
    }

    fn on_send(&mut self, now_ns: u64, _psn: u32, bytes: u32) {
        let b = u64::from(bytes);
        self.snd_nxt = self.snd_nxt.saturating_add(b);
        self.ds_cur = self.ds_cur.saturating_add(b);
        self.next_send_ns = advance_pacing(
            self.next_send_ns,
            now_ns,
            b,
            self.rate_bps,
            self.knobs.burst_ns,
        );
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.nak {
            return;
        }
        if !self.started {
            self.period_start_ns = ack.now_ns;
        }
        self.started = true;
        let b = u64::from(ack.acked_bytes);
        self.snd_una = self.snd_una.saturating_add(b);
        self.da = self.da.saturating_add(b);
        // The share of CE packets is per packet, so a coalesced ACK counts
        // for the packets it answers (with one ACK per packet: 1 and 0/1).
        self.acks = self.acks.saturating_add(ack.packets());
        if ack.ce {
            self.ce = self.ce.saturating_add(ack.ce_packets());
        } else if ack.ue {
            self.ue = self.ue.saturating_add(1);
        }
        if let Some(last) = self.last_ack_ns {
            self.max_gap_ns = self.max_gap_ns.max(ack.now_ns.saturating_sub(last));
        }
        self.last_ack_ns = Some(ack.now_ns);
    }

    fn on_timer(&mut self, now_ns: u64) {
        // The period timer starts at the first ACK.
        if !self.started {
            return;
        }
        let acks = u64::from(self.acks);
        // ACKs that acknowledged nothing new carry marks but no rate.
        let informative = acks > 0 && self.da > 0;
        self.class = if !informative {
            AccClass::NoInfo
        } else if (u64::from(self.ce) << Q32::SHIFT)
            >= self.knobs.ce_fraction.0.saturating_mul(acks)
        {
            // ce/acks >= fraction, compared exactly (no rounding of either side).
            AccClass::Congested
        } else if self.ce > 0 {
            AccClass::Mixed
        } else if self.ue > 0 {
            AccClass::Undetermined
        } else {
            AccClass::Uncongested
        };
        match self.class {
            AccClass::Congested => {
                self.congested(now_ns);
                self.n_u = 0;
                self.n_v = 0;
            }
            AccClass::Undetermined => {
                self.undetermined();
                self.n_u = 0;
            }
            AccClass::Uncongested => {
                self.uncongested();
                self.n_v = 0;
            }
            AccClass::Mixed => match self.knobs.mixed {
                // Neither uncongested nor a victim (§4.1): N_u and N_v
                // count consecutive periods of their own class.
                MixedPeriod::Hold => {
                    self.n_u = 0;
                    self.n_v = 0;
                }
                MixedPeriod::Increase => {
                    self.uncongested();
                    self.n_v = 0;
                }
            },
            AccClass::NoInfo => {}
        }
        // The period after a halt ends it with its extension, whatever it
        // showed: §4.2 infers the excess "without the need to wait for the
        // arrival of ACKs". (A congested one did so above, Algorithm 1's
        // else branch.)
        if self.halt && self.class != AccClass::Congested {
            self.extend_halt();
        }
        // ΔS accumulates over periods that carry no information.
        self.ds_prev = if !informative {
            self.ds_prev.saturating_add(self.ds_cur)
        } else {
            self.ds_cur
        };
        self.ds_cur = 0;
        self.da = 0;
        self.acks = 0;
        self.ce = 0;
        self.ue = 0;
        self.max_gap_ns = 0;
        self.period_start_ns = now_ns;
    }

    fn timer_period_ns(&self) -> Option<u64> {
        Some(self.knobs.period_ns)
    }

    fn pacing(&self, _now_ns: u64) -> Pacing {
        Pacing {
            rate_bps: self.rate_bps,
            next_send_ns: self.next_send_ns,
            window_bytes: None,
        }
    }
}

impl AccKnobs {
    /// ACC's knobs: the paper's defaults for the link, overridden where set.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        Self::from_settings(
            &LinkParams::from_knobs(k),
            k.us_ns(Knob::AccTUs),
            &AccSettings {
                ri_low_bps: k.bps(Knob::AccRiLowMbps),
                ri_high_bps: k.bps(Knob::AccRiHighMbps),
                p_thresh: k.get(Knob::AccPThresh),
                ce_permille: u64::from(k.get(Knob::AccCePermille)),
                burst_ns: k.us_ns(Knob::PacingBurstUs),
                mixed_increase: k.get(Knob::AccMixedIncrease) != 0,
            },
        )
    }
}

/// Its debugfs state: the last period's class.
fn state_name(code: u32) -> &'static str {
    AccClass::from_code(code).name()
}

/// ACC needs ECN-capable data, as ECT(1), and an ACK per packet.
impl Algorithm for Acc {
    const INFO: AlgInfo = AlgInfo {
        name: "acc",
        state_name: Some(state_name),
        halts: true,
        data_ecn: ECN_ECT1,
        ack_every: 1,
        signals: &["periods_congested", "periods_mixed", "halts"],
        ect1_by_default: true,
        ..AlgInfo::DEFAULT
    };

    fn build(k: &dyn KnobSource, now_ns: u64) -> Self {
        Acc::new(&LinkParams::from_knobs(k), AccKnobs::from_knobs(k), now_ns)
    }
}
