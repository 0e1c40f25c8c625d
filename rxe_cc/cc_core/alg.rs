// SPDX-License-Identifier: GPL-2.0

//! The algorithms behind one type: which one a QP runs (`cc=`), what it
//! asks of rdma_rxe, how it is built from the knobs, and what the module
//! reads of it. Every per-algorithm choice outside the algorithms' own
//! files is here, so the kernel module has none.

use super::acc::{Acc, AccClass, AccKnobs, AccSettings};
use super::cc::{pacing_burst_ns, CongestionControl, LinkParams};
use super::dcqcn::{Dcqcn, DcqcnKnobs, DcqcnSettings};
use super::fixed::Q32;
use super::fixed_rate::FixedRate;
use super::fncc::{Fncc, FnccKnobs, Lhcs};
use super::hpcc::{Hpcc, HpccKnobs, MAX_HOPS};
use super::icc::{Icc, IccKnobs};
use super::knobs::{Knob, KnobSource};
use super::none::NoCc;

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
}

/// `RXE_CC_NR_ALGS`.
pub const NR_ALGS: u32 = 7;

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
        match id {
            0 => Some(Self::None),
            1 => Some(Self::Fixed),
            2 => Some(Self::Acc),
            3 => Some(Self::Dcqcn),
            4 => Some(Self::Hpcc),
            5 => Some(Self::Fncc),
            6 => Some(Self::Icc),
            _ => None,
        }
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
    /// ECT(1), and an ACK per packet; DCQCN needs ECN-capable data; HPCC,
    /// FNCC and ICC read INT from an ACK per packet.
    pub fn wire(self, k: &dyn KnobSource) -> Wire {
        let hops = u8::try_from(k.get(Knob::IntHops).min(MAX_HOPS as u32)).unwrap_or(1);
        let (data_ecn, ack_every, int_shim) = match self {
            Self::Acc => (ECN_ECT1, 1, None),
            Self::Dcqcn => (ECN_ECT1, 0, None),
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

    /// A window-based algorithm's limit on a packet of `payload` bytes with
    /// PSN `psn`: true if it must wait for an ACK. Retransmissions pass.
    pub fn window_full(&self, psn: u32, payload: u32) -> bool {
        self.hpcc().is_some_and(|h| {
            let inflight = h.inflight();
            h.is_new_psn(psn) && inflight > 0 && inflight.saturating_add(u64::from(payload)) > h.window()
        })
    }

    /// True if the window has room again, or the algorithm has none.
    pub fn window_open(&self) -> bool {
        self.hpcc().is_none_or(|h| h.inflight() < h.window())
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

    /// FNCC's LHCS jumps so far.
    pub fn lhcs_jumps(&self) -> u64 {
        match self {
            Self::Fncc(f) => f.lhcs_jumps(),
            _ => 0,
        }
    }
}
