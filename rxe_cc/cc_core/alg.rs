// SPDX-License-Identifier: GPL-2.0

//! The algorithms behind one type: which one a QP runs (`cc=`), what it
//! asks of rdma_rxe, how it is built from the knobs, and what the module
//! reads of it. Every per-algorithm choice outside the algorithms' own
//! files is here, so the kernel module has none.

use super::acc::{Acc, AccClass, AccKnobs, AccSettings};
use super::cc::{pacing_burst_ns, CongestionControl, LinkParams};
use super::dcqcn::{Dcqcn, DcqcnKnobs, DcqcnSettings};
use super::dctcp::{Dctcp, DctcpKnobs};
use super::fixed::Q32;
use super::fixed_rate::FixedRate;
use super::fncc::{Fncc, FnccKnobs, Lhcs};
use super::hpcc::{Hpcc, HpccKnobs, MAX_HOPS};
use super::icc::{Icc, IccKnobs};
use super::knobs::{Knob, KnobSource};
use super::none::NoCc;
use super::rtt::Flight;
use super::swift::{Swift, SwiftKnobs};
use super::timely::{Timely, TimelyKnobs};

/// rxe's path MTU on the testbed (4 KB RoCE MTU).
pub const MTU: u32 = 4096;

/// `cc=fixed`'s pacing credit when `pacing_burst_us` is 0: under QEMU TCG
/// the pacer's hrtimer plus the send task wake up 0.3-2 ms late, and one
/// packet of credit held a `cc=fixed` flow to 44% of 100 Mb/s.
pub const FIXED_BURST_NS: u64 = 2_000_000;

/// `cc=fixed`'s catch-up when `pacing_catchup_us` is 0 (the algorithms'
/// is none: `cc::CatchUp`).
pub const FIXED_CATCHUP_NS: u64 = 10_000_000;

/// INT shim kinds, as `enum rxe_cc_int_kind`.
pub const INT_KIND_HPCC: u8 = 1;
/// FNCC's: stamped on the ACKs' way back.
pub const INT_KIND_FNCC: u8 = 2;
/// ICC's: the most congested port's feedback.
pub const INT_KIND_ICC: u8 = 3;

/// IP ECN ECT(1): TCD marks UE as 0b10, so senders that want UE marks send
/// ECT(1); an unmarked ECT(0) packet would read as UE.
pub const ECN_ECT1: u8 = 0b01;

/// The algorithm a QP runs; ids are `enum rxe_cc_alg`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AlgId {
    /// Pass-through: count, never delay.
    None = 0,
    /// Pace at `fixed_rate_mbps`: the pacer's test mode.
    Fixed = 1,
    /// ACC (NSDI'24).
    Acc = 2,
    /// DCQCN (SIGCOMM'15), driven by CNPs.
    Dcqcn = 3,
    /// HPCC (SIGCOMM'19), driven by the INT records ACKs carry.
    Hpcc = 4,
    /// FNCC (2024): HPCC on INT stamped into ACKs, plus LHCS.
    Fncc = 5,
    /// ICC (CMC 2023): rates from the congested port's INT feedback.
    Icc = 6,
    /// TIMELY (SIGCOMM'15): a rate from the RTT's gradient.
    Timely = 7,
    /// DCTCP's α on a rate, as the HPCC simulator's mode 8.
    Dctcp = 8,
    /// Swift (SIGCOMM'20): a window held to a delay target.
    Swift = 9,
}

/// `RXE_CC_NR_ALGS`.
pub const NR_ALGS: u32 = 10;

/// Every algorithm, in id order (`knobs.h`'s `RXE_CC_ALGS` is generated
/// from it).
pub const ALGS: [AlgId; NR_ALGS as usize] = [
    AlgId::None,
    AlgId::Fixed,
    AlgId::Acc,
    AlgId::Dcqcn,
    AlgId::Hpcc,
    AlgId::Fncc,
    AlgId::Icc,
    AlgId::Timely,
    AlgId::Dctcp,
    AlgId::Swift,
];

// Each entry sits at its id.
const _: () = {
    let mut i = 0;
    while i < ALGS.len() {
        assert!(ALGS[i] as usize == i);
        i += 1;
    }
};

/// What a QP's algorithm asks of rdma_rxe where the knobs leave it open
/// (`struct rxe_cc_qp_info`; 0 is rxe's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    /// IP ECN codepoint of its data (0: not ECN-capable).
    pub data_ecn: u8,
    /// An ACK at least every this many packets (0: rxe's default).
    pub ack_every: u16,
    /// The INT shim kind and its room in hops.
    pub int_shim: Option<(u8, u8)>,
}

impl AlgId {
    /// The algorithm of `enum rxe_cc_alg` id `id`.
    pub fn from_id(id: u32) -> Option<Self> {
        ALGS.get(usize::try_from(id).ok()?).copied()
    }

    /// Its name, as `cc=` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Fixed => "fixed",
            Self::Acc => "acc",
            Self::Dcqcn => "dcqcn",
            Self::Hpcc => "hpcc",
            Self::Fncc => "fncc",
            Self::Icc => "icc",
            Self::Timely => "timely",
            Self::Dctcp => "dctcp",
            Self::Swift => "swift",
        }
    }

    /// What a QP is doing, for debugfs: ACC's last period class (`code`
    /// from [`AnyCc::state_code`]), else the algorithm.
    pub fn state_name(self, code: u32) -> &'static str {
        match self {
            Self::None => "pass-through",
            Self::Fixed => "paced",
            Self::Acc => AccClass::from_code(code).name(),
            _ => self.name(),
        }
    }

    /// True if the algorithm halts sources (debugfs shows `halts`).
    pub fn halts(self) -> bool {
        self == Self::Acc
    }

    /// What its QPs need of rdma_rxe. ACC needs ECN-capable data, as
    /// ECT(1), and an ACK per packet; DCQCN needs ECN-capable data; DCTCP
    /// both, to count marks per packet; HPCC, FNCC and ICC read INT from an
    /// ACK per packet; TIMELY and Swift time packets against ACKs, one per
    /// packet so that a sample is not late by the coalescing.
    pub fn wire(self, k: &dyn KnobSource) -> Wire {
        let hops = u8::try_from(k.get(Knob::IntHops).min(MAX_HOPS as u32)).unwrap_or(1);
        let (data_ecn, ack_every, int_shim) = match self {
            Self::Acc | Self::Dctcp => (ECN_ECT1, 1, None),
            Self::Dcqcn => (ECN_ECT1, 0, None),
            Self::Timely | Self::Swift => (0, 1, None),
            Self::Hpcc => (0, 1, Some((INT_KIND_HPCC, hops))),
            Self::Fncc => (0, 1, Some((INT_KIND_FNCC, hops))),
            // One slot: the most congested port's feedback.
            Self::Icc => (0, 1, Some((INT_KIND_ICC, 1))),
            Self::None | Self::Fixed => (0, 0, None),
        };
        Wire {
            data_ecn,
            ack_every,
            int_shim,
        }
    }

    /// True if its responder is a notification point: a CE-marked request
    /// earns the requester a CNP (DCQCN).
    pub fn sends_cnps(self) -> bool {
        self == Self::Dcqcn
    }

    /// True if its receivers count their concurrent flows for the ACKs'
    /// INT shim (FNCC's N).
    pub fn counts_flows(self) -> bool {
        self == Self::Fncc
    }

    /// The rxe_cc counters (`/sys/kernel/debug/rxe_cc/totals`) that show it
    /// acting: what it reacts to (CNPs, CE echoed, INT records, RTT
    /// samples) or what it did (halts, congested periods, pacer fires).
    /// Any one above 0 in a run is enough; `none` has nothing to show.
    pub fn signals(self) -> &'static [&'static str] {
        match self {
            Self::None => &[],
            Self::Fixed => &["pacer_fires"],
            Self::Acc => &["periods_congested", "periods_mixed", "halts"],
            Self::Dcqcn => &["cnps"],
            Self::Hpcc | Self::Fncc | Self::Icc => &["int_acks"],
            Self::Timely | Self::Swift => &["rtt_samples"],
            Self::Dctcp => &["echo_ce"],
        }
    }

    /// The algorithm `cc=` names `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        ALGS.iter().copied().find(|a| a.name() == name)
    }

    /// True if its senders use ECT(1) when `data_ecn` is 0, so that an
    /// ECN of 0b10 at the responder is TCD's UE, not unmarked ECT(0).
    pub fn ect1_by_default(self) -> bool {
        self == Self::Acc
    }
}

/// The link the algorithms assume: `line_rate_mbps`, rxe's MTU, and T from
/// `t` (each algorithm's T knob).
pub fn link(k: &dyn KnobSource, t: Knob) -> LinkParams {
    LinkParams {
        line_rate_bps: k.bps(Knob::LineRateMbps),
        mtu: MTU,
        base_rtt_ns: k.us_ns(t),
    }
}

/// ACC's knobs: the paper's defaults for the link, overridden where set.
pub fn acc_knobs(k: &dyn KnobSource) -> AccKnobs {
    AccKnobs::from_settings(
        &link(k, Knob::AccTUs),
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

/// DCQCN's knobs: defaults for the link, with the testbed-scaled times and
/// any explicit setting.
pub fn dcqcn_knobs(k: &dyn KnobSource) -> DcqcnKnobs {
    DcqcnKnobs::from_settings(
        &link(k, Knob::AccTUs),
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

/// HPCC's knobs: the paper's defaults for the link, with T from
/// `hpcc_t_us` (the emulated network's base RTT) and any explicit setting.
pub fn hpcc_knobs(k: &dyn KnobSource) -> HpccKnobs {
    let link = link(k, Knob::HpccTUs);
    let mut h = HpccKnobs::for_link(&link);
    h.eta = Q32::ratio(u64::from(k.get(Knob::HpccEtaPermille)), 1000);
    h.max_stage = k.get(Knob::HpccMaxStage);
    if k.get(Knob::HpccWAiBytes) != 0 {
        h.w_ai_bytes = u64::from(k.get(Knob::HpccWAiBytes));
    }
    h.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), h.burst_ns);
    h
}

/// FNCC's knobs: HPCC's, plus α, β and the LHCS order.
pub fn fncc_knobs(k: &dyn KnobSource) -> FnccKnobs {
    let mut f = FnccKnobs::for_link(&link(k, Knob::AccTUs));
    f.hpcc = hpcc_knobs(k);
    f.alpha = Q32::ratio(u64::from(k.get(Knob::FnccAlphaPermille)), 1000);
    f.beta = Q32::ratio(u64::from(k.get(Knob::FnccBetaPermille)), 1000);
    if k.get(Knob::FnccLhcsComputeWind) != 0 {
        f.lhcs = Lhcs::ComputeWind;
    }
    f
}

/// ICC's knobs: T from `icc_t_us`, Q_d from `icc_qd_bytes`.
pub fn icc_knobs(k: &dyn KnobSource) -> IccKnobs {
    let link = link(k, Knob::IccTUs);
    let mut i = IccKnobs::for_link(&link);
    i.q_d_bytes = u64::from(k.get(Knob::IccQdBytes));
    i.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), i.burst_ns);
    i
}

/// TIMELY's knobs: the paper's values for the link, scaled, and any
/// explicit setting.
pub fn timely_knobs(k: &dyn KnobSource) -> TimelyKnobs {
    let link = link(k, Knob::HpccTUs);
    let mut t = TimelyKnobs::for_link(&link);
    t.t_low_ns = k.us_ns(Knob::TimelyTLowUs);
    t.t_high_ns = k.us_ns(Knob::TimelyTHighUs);
    t.min_rtt_ns = k.us_ns(Knob::TimelyMinRttUs);
    if k.get(Knob::TimelyAiMbps) != 0 {
        t.ai_bps = k.bps(Knob::TimelyAiMbps);
    }
    t.alpha = Q32::ratio(u64::from(k.get(Knob::TimelyAlphaPermille)), 1000);
    t.beta = Q32::ratio(u64::from(k.get(Knob::TimelyBetaPermille)), 1000);
    t.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), t.burst_ns);
    t
}

/// DCTCP's knobs: the simulator's for the link, and any explicit setting.
pub fn dctcp_knobs(k: &dyn KnobSource) -> DctcpKnobs {
    let link = link(k, Knob::HpccTUs);
    let mut d = DctcpKnobs::for_link(&link);
    d.g = Q32::ratio(u64::from(k.get(Knob::DctcpG)), 1024);
    if k.get(Knob::DctcpAiMbps) != 0 {
        d.ai_bps = k.bps(Knob::DctcpAiMbps);
    }
    d.burst_ns = pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), d.burst_ns);
    d
}

/// Swift's knobs: defaults for the link with T from `hpcc_t_us`, and any
/// explicit setting.
pub fn swift_knobs(k: &dyn KnobSource) -> SwiftKnobs {
    let link = link(k, Knob::HpccTUs);
    let mut s = SwiftKnobs::for_link(&link);
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

/// A QP's algorithm state, one variant per [`AlgId`].
#[derive(Clone, Debug)]
pub enum AnyCc {
    /// `cc=none`.
    None(NoCc),
    /// `cc=fixed`.
    Fixed(FixedRate),
    /// `cc=acc`.
    Acc(Acc),
    /// `cc=dcqcn`.
    Dcqcn(Dcqcn),
    /// `cc=hpcc`.
    Hpcc(Hpcc),
    /// `cc=fncc`.
    Fncc(Fncc),
    /// `cc=icc`.
    Icc(Icc),
    /// `cc=timely`.
    Timely(Timely),
    /// `cc=dctcp`.
    Dctcp(Dctcp),
    /// `cc=swift`.
    Swift(Swift),
}

impl AnyCc {
    /// A new QP's state under `alg`, from the knobs as they are now.
    pub fn new(alg: AlgId, k: &dyn KnobSource, now_ns: u64) -> Self {
        let link = link(k, Knob::AccTUs);
        match alg {
            AlgId::Acc => Self::Acc(Acc::new(&link, acc_knobs(k), now_ns)),
            AlgId::Dcqcn => Self::Dcqcn(Dcqcn::new(&link, dcqcn_knobs(k), now_ns)),
            AlgId::Hpcc => Self::Hpcc(Hpcc::new(&link, hpcc_knobs(k), now_ns)),
            AlgId::Fncc => Self::Fncc(Fncc::new(&link, fncc_knobs(k), now_ns)),
            AlgId::Icc => Self::Icc(Icc::new(&link, icc_knobs(k), now_ns)),
            AlgId::Timely => Self::Timely(Timely::new(&link, timely_knobs(k), now_ns)),
            AlgId::Dctcp => Self::Dctcp(Dctcp::new(&link, dctcp_knobs(k), now_ns)),
            AlgId::Swift => Self::Swift(Swift::new(&link, swift_knobs(k), now_ns)),
            AlgId::None => Self::None(NoCc::new(&link)),
            AlgId::Fixed => Self::Fixed(FixedRate::new(
                k.bps(Knob::FixedRateMbps),
                pacing_burst_ns(&link, k.us_ns(Knob::PacingBurstUs), FIXED_BURST_NS),
                link.mtu,
                now_ns,
            )),
        }
    }

    /// The algorithm, to drive.
    pub fn cc(&mut self) -> &mut dyn CongestionControl {
        match self {
            Self::None(cc) => cc,
            Self::Fixed(cc) => cc,
            Self::Acc(cc) => cc,
            Self::Dcqcn(cc) => cc,
            Self::Hpcc(cc) => cc,
            Self::Fncc(cc) => cc,
            Self::Icc(cc) => cc,
            Self::Timely(cc) => cc,
            Self::Dctcp(cc) => cc,
            Self::Swift(cc) => cc,
        }
    }

    /// The algorithm, to read.
    pub fn cc_ref(&self) -> &dyn CongestionControl {
        match self {
            Self::None(cc) => cc,
            Self::Fixed(cc) => cc,
            Self::Acc(cc) => cc,
            Self::Dcqcn(cc) => cc,
            Self::Hpcc(cc) => cc,
            Self::Fncc(cc) => cc,
            Self::Icc(cc) => cc,
            Self::Timely(cc) => cc,
            Self::Dctcp(cc) => cc,
            Self::Swift(cc) => cc,
        }
    }

    /// The HPCC window underneath HPCC and FNCC.
    fn hpcc(&self) -> Option<&Hpcc> {
        match self {
            Self::Hpcc(h) => Some(h),
            Self::Fncc(f) => Some(f.hpcc()),
            _ => None,
        }
    }

    /// A window-based algorithm's window, bytes in flight, and whether
    /// `psn` is new data (`None`: no window).
    fn window_of(&self, psn: u32) -> Option<(u64, u64, bool)> {
        if let Some(h) = self.hpcc() {
            return Some((h.window(), h.inflight(), h.is_new_psn(psn)));
        }
        match self {
            Self::Swift(s) => {
                let f: &Flight = s.flight();
                // Below one packet the pacer spaces the packets out.
                Some((
                    s.window().max(u64::from(MTU)),
                    f.inflight(),
                    f.is_new_psn(psn),
                ))
            }
            _ => None,
        }
    }

    /// A window-based algorithm's limit on a packet of `payload` bytes with
    /// PSN `psn`: true if it must wait for an ACK. Retransmissions pass.
    pub fn window_full(&self, psn: u32, payload: u32) -> bool {
        self.window_of(psn).is_some_and(|(window, inflight, new)| {
            new && inflight > 0 && inflight.saturating_add(u64::from(payload)) > window
        })
    }

    /// True if the window has room again, or the algorithm has none.
    pub fn window_open(&self) -> bool {
        self.window_of(0)
            .is_none_or(|(window, inflight, _)| inflight < window)
    }

    /// Knobs that act on running QPs at each period's end: ACC's and
    /// DCQCN's (their T included).
    pub fn period_knobs(&mut self, k: &dyn KnobSource) {
        match self {
            Self::Acc(a) => a.set_knobs(acc_knobs(k)),
            Self::Dcqcn(d) => d.set_knobs(dcqcn_knobs(k)),
            _ => {}
        }
    }

    /// Knobs that act on running QPs at each send: `cc=fixed`'s rate.
    pub fn send_knobs(&mut self, k: &dyn KnobSource) {
        if let Self::Fixed(f) = self {
            f.set_rate(k.bps(Knob::FixedRateMbps));
        }
    }

    /// Pacing catch-up when `pacing_catchup_us` is 0.
    pub fn default_catchup_ns(&self) -> u64 {
        match self {
            Self::Fixed(_) => FIXED_CATCHUP_NS,
            _ => 0,
        }
    }

    /// ACC's last period class, for counting.
    pub fn period_class(&self) -> Option<AccClass> {
        match self {
            Self::Acc(a) => Some(a.class()),
            _ => None,
        }
    }

    /// The state's code, for debugfs and the rate tracepoint (0: none).
    pub fn state_code(&self) -> u32 {
        self.period_class().map_or(0, AccClass::code)
    }

    /// Source halts so far (ACC).
    pub fn halts(&self) -> u64 {
        match self {
            Self::Acc(a) => a.halts(),
            _ => 0,
        }
    }

    /// The last halt's planned length, ns (ACC).
    pub fn last_halt_ns(&self) -> u64 {
        match self {
            Self::Acc(a) => a.last_halt_ns(),
            _ => 0,
        }
    }

    /// What the algorithm has done so far, for counting.
    pub fn reactions(&self) -> Reactions {
        let (rtt_samples, cuts) = match self {
            Self::Timely(t) => (t.samples(), t.cuts()),
            Self::Dctcp(d) => (0, d.cuts()),
            Self::Swift(s) => (s.samples(), s.cuts()),
            _ => (0, 0),
        };
        Reactions {
            lhcs_jumps: match self {
                Self::Fncc(f) => f.lhcs_jumps(),
                _ => 0,
            },
            rtt_samples,
            cuts,
        }
    }
}

/// Running counts of an algorithm's reactions; the module counts their
/// growth per event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reactions {
    /// FNCC's LHCS jumps.
    pub lhcs_jumps: u64,
    /// RTT samples taken (TIMELY, Swift).
    pub rtt_samples: u64,
    /// Rate or window decreases (TIMELY, DCTCP, Swift).
    pub cuts: u64,
}

impl Reactions {
    /// The growth from `before` to `self`.
    pub fn since(&self, before: &Reactions) -> Reactions {
        Reactions {
            lhcs_jumps: self.lhcs_jumps.saturating_sub(before.lhcs_jumps),
            rtt_samples: self.rtt_samples.saturating_sub(before.rtt_samples),
            cuts: self.cuts.saturating_sub(before.cuts),
        }
    }
}
