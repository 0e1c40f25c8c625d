// SPDX-License-Identifier: GPL-2.0

//! rxe_cc: per-QP congestion control for SoftRoCE (`rdma_rxe`).
//!
//! The patched `rdma_rxe` (see `rxe_glue/`) calls this module at each QP's
//! create and destroy, before and after each transmit, on each response and
//! on each received request. The C glue (`glue.c`) unpacks the hook ABI into
//! plain integers and calls the `rxe_cc_rs_*` functions below; this file
//! owns the per-QP state and its debugfs view.
//!
//! Concurrency, as rdma_rxe guarantees it (`rxe_cc_hooks.h`): `tx_gate`,
//! `tx_done` and `rx_ack` run in the QP's send task and are serialized;
//! `rx_data` runs in the receive task, concurrently with them. So state
//! shared by both sides is atomic. Create and destroy never overlap a hook.

use core::ffi::c_void;
use core::fmt;
use kernel::ffi::c_char;
use kernel::{
    debugfs::{Dir, File, Scope},
    impl_has_hr_timer, new_spinlock,
    prelude::*,
    str::CString,
    sync::{
        atomic::{Atomic, Relaxed},
        Arc, ArcBorrow, SpinLock,
    },
    time::{
        hrtimer::{
            ArcHrTimerHandle, HrTimer, HrTimerCallback, HrTimerCallbackContext, HrTimerPointer,
            HrTimerRestart, RelativeMode,
        },
        Delta, Monotonic,
    },
    types::ForeignOwnable,
};

pub mod cc_core;

use cc_core::{
    acc::{Acc, AccClass, AccKnobs, AccSettings},
    cc::{
        pacing_burst_ns as core_pacing_burst_ns, AckEvent, CatchUp, CongestionControl, IntHop,
        IntInfo, IntWidths, LinkParams,
    },
    dcqcn::{Dcqcn, DcqcnKnobs, DcqcnNp, DcqcnSettings},
    fixed::Q32,
    fixed_rate::FixedRate,
    flows::ActiveFlows,
    fncc::{Fncc, FnccKnobs, Lhcs},
    hpcc::{Hpcc, HpccKnobs, MAX_HOPS},
    icc::{Icc, IccKnobs},
    none::NoCc,
};

module! {
    type: RxeCc,
    name: "rxe_cc",
    authors: ["rxe-cc developers"],
    description: "Congestion control for SoftRoCE (rdma_rxe) queue pairs",
    license: "GPL",
}

/// C functions of `glue.c` (declared in `glue.h`).
mod ffi {
    use core::ffi::c_void;
    use kernel::ffi::c_char;

    extern "C" {
        pub(crate) fn rxe_cc_glue_register(ctx: *mut c_void) -> i32;
        pub(crate) fn rxe_cc_glue_unregister();
        pub(crate) fn rxe_cc_glue_kick(qp: *mut c_void);
        pub(crate) fn rxe_cc_glue_now_ns() -> u64;
        pub(crate) fn rxe_cc_param_alg() -> u32;
        pub(crate) fn rxe_cc_knob(id: u32) -> u32;
        pub(crate) fn rxe_cc_trace_rate(
            qp: *const c_char,
            now_ns: u64,
            alg: u32,
            state: u32,
            rate_bps: u64,
            tx_bytes: u64,
            acked_bytes: u64,
        );
        pub(crate) fn rxe_cc_trace_halt_start(qp: *const c_char, now_ns: u64, planned_ns: u64);
        pub(crate) fn rxe_cc_trace_halt_end(
            qp: *const c_char,
            now_ns: u64,
            halted_ns: u64,
            planned_ns: u64,
        );
    }
}

/// Numeric knobs Rust reads, as `enum rxe_cc_knob_id` in `glue.h` (3,
/// `ack_every`, is only read by the glue).
#[derive(Clone, Copy)]
enum Knob {
    LineRateMbps = 0,
    FixedRateMbps = 1,
    DataEcn = 2,
    AccTUs = 4,
    AccRiLowMbps = 5,
    AccRiHighMbps = 6,
    AccPThresh = 7,
    AccCePermille = 8,
    RpgAiRate = 9,
    RpgHaiRate = 10,
    RpgMinRate = 11,
    RpgTimeReset = 12,
    RpgByteReset = 13,
    RpgThreshold = 14,
    DceTcpG = 15,
    DceTcpRtt = 16,
    MinTimeBetweenCnps = 17,
    PacingBurstUs = 18,
    HpccEtaPermille = 19,
    HpccMaxStage = 20,
    HpccWAiBytes = 21,
    HpccTUs = 22,
    IntHops = 23,
    FnccAlphaPermille = 24,
    FnccBetaPermille = 25,
    IccTUs = 26,
    IccQdBytes = 27,
    PacingCatchupUs = 28,
    AccMixedIncrease = 29,
    FnccLhcsComputeWind = 30,
}

impl Knob {
    /// The knob's current value (validated by its setter in `glue.c`).
    fn get(self) -> u32 {
        // SAFETY: reading a knob has no preconditions; ids are in range.
        unsafe { ffi::rxe_cc_knob(self as u32) }
    }

    /// The value in Mb/s as b/s.
    fn bps(self) -> u64 {
        u64::from(self.get()).saturating_mul(1_000_000)
    }

    /// The value in us as ns.
    fn us_ns(self) -> u64 {
        u64::from(self.get()).saturating_mul(1000)
    }
}

/// Pacing credit a sender may catch up on after waking late, ns: the
/// `pacing_burst_us` knob, or `default_ns` when it is 0, and never less than
/// one MTU at the line rate. Under QEMU TCG the pacer's hrtimer plus the
/// send task wake up 0.3-2 ms late, and lateness beyond the credit is lost:
/// one packet of credit held a `cc=fixed` flow to 44% of 100 Mb/s, so
/// `cc=fixed` defaults to 2 ms. ACC and DCQCN keep their algorithms' one MTU
/// by default (a 4-flow ACC incast reached 37.9 Mb/s of 40 either way); they
/// read the knob at each period, `cc=fixed` when a QP is created.
fn pacing_burst_ns(link: &LinkParams, default_ns: u64) -> u64 {
    core_pacing_burst_ns(link, Knob::PacingBurstUs.us_ns(), default_ns)
}

/// `cc=fixed`'s pacing credit when `pacing_burst_us` is 0.
const FIXED_BURST_NS: u64 = 2_000_000;

/// `cc=fixed`'s catch-up when `pacing_catchup_us` is 0 (the algorithms'
/// is none: see `QpState::pacing_time`).
const FIXED_CATCHUP_NS: u64 = 10_000_000;

/// The link the algorithms assume, from the knobs.
fn link_params() -> LinkParams {
    LinkParams {
        line_rate_bps: Knob::LineRateMbps.bps(),
        mtu: 4096,
        base_rtt_ns: u64::from(Knob::AccTUs.get()).saturating_mul(1000),
    }
}

/// ACC's knobs: the paper's defaults for the link, overridden where set.
fn acc_knobs(link: &LinkParams) -> AccKnobs {
    AccKnobs::from_settings(
        link,
        &AccSettings {
            ri_low_bps: Knob::AccRiLowMbps.bps(),
            ri_high_bps: Knob::AccRiHighMbps.bps(),
            p_thresh: Knob::AccPThresh.get(),
            ce_permille: u64::from(Knob::AccCePermille.get()),
            burst_ns: Knob::PacingBurstUs.us_ns(),
            mixed_increase: Knob::AccMixedIncrease.get() != 0,
        },
    )
}

/// DCQCN's knobs: defaults for the link, with the testbed-scaled times and
/// any explicit setting from sysfs.
fn dcqcn_knobs(link: &LinkParams) -> DcqcnKnobs {
    DcqcnKnobs::from_settings(
        link,
        &DcqcnSettings {
            ai_rate_bps: Knob::RpgAiRate.bps(),
            hai_rate_bps: Knob::RpgHaiRate.bps(),
            min_rate_bps: Knob::RpgMinRate.bps(),
            rate_period_ns: Knob::RpgTimeReset.us_ns(),
            alpha_period_ns: Knob::DceTcpRtt.us_ns(),
            byte_reset: u64::from(Knob::RpgByteReset.get()),
            threshold: Knob::RpgThreshold.get(),
            g_1024: u64::from(Knob::DceTcpG.get()),
            burst_ns: Knob::PacingBurstUs.us_ns(),
        },
    )
}

/// HPCC's knobs: the paper's defaults for the link, with T from
/// `hpcc_t_us` (the emulated network's base RTT) and any explicit setting.
fn hpcc_knobs(link: &LinkParams) -> HpccKnobs {
    let link = LinkParams {
        base_rtt_ns: Knob::HpccTUs.us_ns(),
        ..*link
    };
    let mut k = HpccKnobs::for_link(&link);
    k.eta = Q32::ratio(u64::from(Knob::HpccEtaPermille.get()), 1000);
    k.max_stage = Knob::HpccMaxStage.get();
    if Knob::HpccWAiBytes.get() != 0 {
        k.w_ai_bytes = u64::from(Knob::HpccWAiBytes.get());
    }
    k.burst_ns = pacing_burst_ns(&link, k.burst_ns);
    k
}

/// FNCC's knobs: HPCC's, plus α and β.
fn fncc_knobs(link: &LinkParams) -> FnccKnobs {
    let hpcc = hpcc_knobs(link);
    let mut k = FnccKnobs::for_link(link);
    k.hpcc = hpcc;
    k.alpha = Q32::ratio(u64::from(Knob::FnccAlphaPermille.get()), 1000);
    k.beta = Q32::ratio(u64::from(Knob::FnccBetaPermille.get()), 1000);
    if Knob::FnccLhcsComputeWind.get() != 0 {
        k.lhcs = Lhcs::ComputeWind;
    }
    k
}

/// ICC's knobs: T from `icc_t_us`, Q_d from `icc_qd_bytes`.
fn icc_knobs(link: &LinkParams) -> IccKnobs {
    let link = LinkParams {
        base_rtt_ns: Knob::IccTUs.us_ns(),
        ..*link
    };
    let mut k = IccKnobs::for_link(&link);
    k.q_d_bytes = u64::from(Knob::IccQdBytes.get());
    k.burst_ns = pacing_burst_ns(&link, k.burst_ns);
    k
}

/// HPCC's INT: records for every hop, written by the emulated switch's
/// ports with 32-bit times and byte counts.
const INT_WIDTHS: IntWidths = IntWidths {
    ts_bits: 32,
    tx_bits: 32,
};

/// One hop's INT record as the glue unpacks it (`struct rxe_cc_int_rec`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IntRec {
    b_bps: u64,
    ts_ns: u64,
    tx_bytes: u64,
    qlen: u64,
}

/// An ACK's INT shim as the glue unpacks it
/// (`struct rxe_cc_int_shim_info`).
#[repr(C)]
pub struct IntShim {
    hop: [IntRec; MAX_HOPS],
    kind: u32,
    nhops: u32,
    overflow: u32,
    n_flows: u32,
    port_flows: u32,
    lu_permille: u32,
    qlen_rate: i64,
}

/// Shim kinds, as `enum rxe_cc_int_kind`.
const INT_KIND_HPCC: u8 = 1;
const INT_KIND_FNCC: u8 = 2;
const INT_KIND_ICC: u8 = 3;

/// The congestion-control algorithm a QP runs; ids match `enum rxe_cc_alg`.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Algorithm {
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

/// `RXE_CC_NR_ALGS` and `RXE_CC_NR_KNOBS`.
const NR_ALGS: u32 = 7;
const NR_KNOBS: u32 = 31;

// What Rust and C share, checked at build time on both sides against the
// same numbers (`glue.c` asserts them too), so that neither can drift.
const _: () = {
    assert!(Algorithm::Icc as u32 + 1 == NR_ALGS);
    assert!(Knob::FnccLhcsComputeWind as u32 + 1 == NR_KNOBS);
    assert!(MAX_HOPS == 5);
    assert!(core::mem::size_of::<IntRec>() == 32);
    assert!(core::mem::offset_of!(IntRec, qlen) == 24);
    assert!(core::mem::size_of::<IntShim>() == 192);
    assert!(core::mem::offset_of!(IntShim, kind) == 160);
    assert!(core::mem::offset_of!(IntShim, lu_permille) == 180);
    assert!(core::mem::offset_of!(IntShim, qlen_rate) == 184);
};

impl Algorithm {
    fn from_id(id: u32) -> Option<Self> {
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

    fn name(self) -> &'static str {
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

    /// What the QP is doing, for debugfs.
    fn state(self) -> &'static str {
        match self {
            Self::None => "pass-through",
            Self::Fixed => "paced",
            Self::Acc => "acc",
            Self::Dcqcn => "dcqcn",
            Self::Hpcc => "hpcc",
            Self::Fncc => "fncc",
            Self::Icc => "icc",
        }
    }

    /// The INT shim its QPs carry, and the room in it (`int_hops`).
    fn int_shim(self) -> Option<(u8, u8)> {
        let hops = u8::try_from(Knob::IntHops.get().min(MAX_HOPS as u32)).unwrap_or(1);
        match self {
            Self::Hpcc => Some((INT_KIND_HPCC, hops)),
            Self::Fncc => Some((INT_KIND_FNCC, hops)),
            // One slot: the most congested port's feedback.
            Self::Icc => Some((INT_KIND_ICC, 1)),
            _ => None,
        }
    }
}

/// Response kinds, as `enum rxe_cc_ack_kind`.
const ACK_KIND_NAK: u8 = 1;
const ACK_KIND_CNP: u8 = 2;
/// Echo bits, as `RXE_CC_ECHO_*`.
const ECHO_CE: u8 = 0x1;
const ECHO_UE: u8 = 0x2;
/// From `rx_data`: have rdma_rxe send a CNP, as `RXE_CC_SEND_CNP`.
const SEND_CNP: u8 = 0x4;
/// IP ECN codepoints. TCD marks UE as 0b10, so senders that want UE marks
/// send ECT(1) (0b01): an unmarked ECT(0) packet would read as UE.
const ECN_CE: u8 = 0b11;
const ECN_UE: u8 = 0b10;
const ECN_ECT1: u32 = 0b01;
const ECN_ECT1_U8: u8 = 0b01;

/// Event counters kept per QP and, summed over destroyed QPs, module-wide.
#[derive(Clone, Copy)]
enum Counter {
    TxPackets,
    TxBytes,
    TxWireBytes,
    TxGated,
    Acks,
    Naks,
    Cnps,
    AckedBytes,
    EchoCe,
    EchoUe,
    RxPackets,
    RxBytes,
    RxEcnCe,
    RxEcnUe,
    PeriodFires,
    PeriodsCongested,
    PeriodsUndetermined,
    PeriodsUncongested,
    Halts,
    PacerFires,
    PacerLateNs,
    CnpsSent,
    HaltActualNs,
    TxWindowed,
    IntAcks,
    IntHops,
    IntOverflow,
    LhcsJumps,
    PacerLostNs,
    HookNs,
    TimerNs,
    PeriodsMixed,
}

const NR_COUNTERS: usize = 32;
const COUNTER_NAMES: [&str; NR_COUNTERS] = [
    "tx_packets",
    "tx_bytes",
    "tx_wire_bytes",
    "tx_gated",
    "acks",
    "naks",
    "cnps",
    "acked_bytes",
    "echo_ce",
    "echo_ue",
    "rx_packets",
    "rx_bytes",
    "rx_ecn_ce",
    "rx_ecn_ue",
    "period_fires",
    "periods_congested",
    "periods_undetermined",
    "periods_uncongested",
    "halts",
    "pacer_fires",
    "pacer_late_ns",
    "cnps_sent",
    "halt_actual_ns",
    "tx_windowed",
    "int_acks",
    "int_hops",
    "int_overflow",
    "lhcs_jumps",
    "pacer_lost_ns",
    "hook_ns",
    "timer_ns",
    "periods_mixed",
];

struct Counters([Atomic<u64>; NR_COUNTERS]);

impl Counters {
    fn new() -> Self {
        Self(core::array::from_fn(|_| Atomic::new(0)))
    }

    /// Counters wrap rather than trap: they are reported, never used for
    /// control, and 2^64 bytes is centuries of traffic.
    fn add(&self, c: Counter, by: u64) {
        if let Some(a) = self.0.get(c as usize) {
            a.fetch_add(by, Relaxed);
        }
    }

    fn get(&self, c: Counter) -> u64 {
        self.0.get(c as usize).map_or(0, |a| a.load(Relaxed))
    }

    fn add_all(&self, other: &Counters) {
        for (mine, theirs) in self.0.iter().zip(other.0.iter()) {
            mine.fetch_add(theirs.load(Relaxed), Relaxed);
        }
    }

    /// One `name value` line per counter, without a final newline (debugfs
    /// `Writer` adds it).
    fn fmt_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in COUNTER_NAMES.iter().zip(self.0.iter()).enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{} {}", name, value.load(Relaxed))?;
        }
        Ok(())
    }
}

/// A QP's view in `/sys/kernel/debug/rxe_cc/qps/<dev>-qp<N>/stats`.
struct QpStats {
    alg: Algorithm,
    qpn: u32,
    line_rate_mbps: u32,
    created_ns: u64,
    /// The algorithm's current rate and next send time, mirrored after
    /// each event so that reading debugfs takes no lock.
    rate_bps: Atomic<u64>,
    next_send_ns: Atomic<u64>,
    /// HPCC and FNCC: the window, bytes (0: the algorithm has none).
    window_bytes: Atomic<u64>,
    /// ACC: the last period's class (see `class_name`), halts and their
    /// total planned length.
    class: Atomic<u32>,
    halts: Atomic<u64>,
    halt_ns: Atomic<u64>,
    /// Shared with the QP's timers, which count their fires.
    counters: Arc<Counters>,
}

/// Names of `AccClass` values, as `QpStats::class` stores them.
fn class_name(c: u32) -> &'static str {
    match c {
        1 => "uncongested",
        2 => "congested",
        3 => "mixed",
        4 => "undetermined",
        _ => "no-info",
    }
}

fn class_code(c: AccClass) -> u32 {
    match c {
        AccClass::NoInfo => 0,
        AccClass::Uncongested => 1,
        AccClass::Congested => 2,
        AccClass::Mixed => 3,
        AccClass::Undetermined => 4,
    }
}

impl fmt::Debug for QpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cc {}", self.alg.name())?;
        writeln!(f, "qpn {}", self.qpn)?;
        if self.alg == Algorithm::Acc {
            writeln!(f, "state {}", class_name(self.class.load(Relaxed)))?;
            writeln!(f, "halts {}", self.halts.load(Relaxed))?;
            writeln!(f, "halt_ns {}", self.halt_ns.load(Relaxed))?;
        } else {
            writeln!(f, "state {}", self.alg.state())?;
        }
        writeln!(f, "line_rate_mbps {}", self.line_rate_mbps)?;
        writeln!(f, "rate_bps {}", self.rate_bps.load(Relaxed))?;
        writeln!(f, "next_send_ns {}", self.next_send_ns.load(Relaxed))?;
        writeln!(f, "window_bytes {}", self.window_bytes.load(Relaxed))?;
        writeln!(f, "created_ns {}", self.created_ns)?;
        self.counters.fmt_lines(f)
    }
}

/// `/sys/kernel/debug/rxe_cc/totals`: counters of every QP destroyed since
/// the module loaded, so that a finished run can still be accounted for.
struct Totals {
    qps_created: Atomic<u64>,
    qps_destroyed: Atomic<u64>,
    counters: Counters,
}

impl fmt::Debug for Totals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "qps_created {}", self.qps_created.load(Relaxed))?;
        writeln!(f, "qps_destroyed {}", self.qps_destroyed.load(Relaxed))?;
        self.counters.fmt_lines(f)
    }
}

/// A QP's algorithm state; one variant per `Algorithm`.
enum QpCc {
    None(NoCc),
    Fixed(FixedRate),
    Acc(Acc),
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
    Fncc(Fncc),
    Icc(Icc),
}

impl QpCc {
    fn new(alg: Algorithm, link: &LinkParams, fixed_rate_bps: u64, now_ns: u64) -> Self {
        match alg {
            Algorithm::Acc => Self::Acc(Acc::new(link, acc_knobs(link), now_ns)),
            Algorithm::Dcqcn => Self::Dcqcn(Dcqcn::new(link, dcqcn_knobs(link), now_ns)),
            Algorithm::Hpcc => Self::Hpcc(Hpcc::new(link, hpcc_knobs(link), now_ns)),
            Algorithm::Fncc => Self::Fncc(Fncc::new(link, fncc_knobs(link), now_ns)),
            Algorithm::Icc => Self::Icc(Icc::new(link, icc_knobs(link), now_ns)),
            Algorithm::None => Self::None(NoCc::new(link)),
            Algorithm::Fixed => Self::Fixed(FixedRate::new(
                fixed_rate_bps,
                pacing_burst_ns(link, FIXED_BURST_NS),
                link.mtu,
                now_ns,
            )),
        }
    }

    /// A window-based algorithm's limit on a packet of `payload` bytes with
    /// PSN `psn`: true if it must wait for an ACK. Retransmissions pass.
    fn window_full(&self, psn: u32, payload: u32) -> bool {
        match self.hpcc() {
            Some(h) => {
                let inflight = h.inflight();
                h.is_new_psn(psn)
                    && inflight > 0
                    && inflight.saturating_add(u64::from(payload)) > h.window()
            }
            None => false,
        }
    }

    /// True if the window has room again, or the algorithm has none.
    fn window_open(&self) -> bool {
        self.hpcc().is_none_or(|h| h.inflight() < h.window())
    }

    /// The HPCC window underneath HPCC and FNCC.
    fn hpcc(&self) -> Option<&Hpcc> {
        match self {
            Self::Hpcc(h) => Some(h),
            Self::Fncc(f) => Some(f.hpcc()),
            _ => None,
        }
    }

    /// Knobs that act on running QPs: `fixed` follows `fixed_rate_mbps`.
    fn follow_knobs(&mut self) {
        if let Self::Fixed(f) = self {
            f.set_rate(Knob::FixedRateMbps.bps());
        }
    }

    fn get(&mut self) -> &mut dyn CongestionControl {
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
}

/// Adds the time from `start` to its drop to one counter: the CPU that
/// rxe_cc's own code takes in a hook (from the clock read rdma_rxe makes
/// just before the call) or a timer callback. A hook declares it first, so
/// that it is dropped last, after the QP's lock is released.
struct CpuClock<'a> {
    counters: &'a Counters,
    counter: Counter,
    start_ns: u64,
}

impl<'a> CpuClock<'a> {
    fn start(counters: &'a Counters, counter: Counter, start_ns: u64) -> Self {
        Self {
            counters,
            counter,
            start_ns,
        }
    }
}

impl Drop for CpuClock<'_> {
    fn drop(&mut self) {
        // SAFETY: reading the clock has no preconditions.
        let now = unsafe { ffi::rxe_cc_glue_now_ns() };
        self.counters
            .add(self.counter, now.saturating_sub(self.start_ns));
    }
}

/// rdma_rxe's opaque handle for a QP.
struct QpHandle(*mut c_void);

// SAFETY: the handle is only passed back to `rxe_cc_kick`, which may be
// called from any context.
unsafe impl Send for QpHandle {}
// SAFETY: as above; the pointer is never dereferenced in Rust.
unsafe impl Sync for QpHandle {}

/// A QP's pacing timer. It only kicks the QP's send task: all algorithm
/// state changes happen in the task, never in the timer (hardirq) context.
#[pin_data]
struct Pacer {
    #[pin]
    timer: HrTimer<Pacer>,
    qp: QpHandle,
    /// The time the timer is set for, 0 when it is not pending.
    armed_until: Atomic<u64>,
    /// Timer fires and their total lateness, for the QP's debugfs.
    stats: Arc<Counters>,
}

impl HrTimerCallback for Pacer {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // Clear before kicking: a gate that runs after the kick re-arms.
        let due = this.armed_until.xchg(0, Relaxed);
        // SAFETY: reading the clock has no preconditions.
        let now = unsafe { ffi::rxe_cc_glue_now_ns() };
        this.stats.add(Counter::PacerFires, 1);
        this.stats
            .add(Counter::PacerLateNs, now.saturating_sub(due));
        let _cpu = CpuClock::start(&this.stats, Counter::TimerNs, now);
        // SAFETY: the QP outlives its CC state, and dropping the state
        // cancels this timer (and waits for this callback) first.
        unsafe { ffi::rxe_cc_glue_kick(this.qp.0) };
        HrTimerRestart::NoRestart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Pacer {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

/// A QP's control-period timer (ACC's T). Like the pacer it only kicks the
/// QP, leaving `due` set; the next send-task hook runs the algorithm's
/// `on_timer`. It starts at the first ACK and stops after a period with no
/// ACK and no send, so an idle QP has no timer running.
#[pin_data]
struct Period {
    #[pin]
    timer: HrTimer<Period>,
    qp: QpHandle,
    /// A period ended and the algorithm has not seen it yet.
    due: Atomic<u32>,
    /// `PERIOD_STOPPED`, `PERIOD_IDLE` or `PERIOD_ACTIVE`: one atomic, so
    /// that a hook marking the QP active and the callback deciding to stop
    /// cannot both miss the other (each is one read-modify-write of it).
    state: Atomic<u32>,
    period_ns: Atomic<u64>,
    stats: Arc<Counters>,
}

/// The period timer is not set (nor will it restart).
const PERIOD_STOPPED: u32 = 0;
/// It is set, and the QP has not sent or been ACKed since it last fired.
const PERIOD_IDLE: u32 = 1;
/// It is set, and the QP has sent or been ACKed since it last fired.
const PERIOD_ACTIVE: u32 = 2;

impl HrTimerCallback for Period {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // SAFETY: reading the clock has no preconditions.
        let start = unsafe { ffi::rxe_cc_glue_now_ns() };
        let _cpu = CpuClock::start(&this.stats, Counter::TimerNs, start);
        this.due.store(1, Relaxed);
        this.stats.add(Counter::PeriodFires, 1);
        // SAFETY: as for the pacer: the QP outlives its CC state, which
        // cancels this timer first.
        unsafe { ffi::rxe_cc_glue_kick(this.qp.0) };
        // Active: run again, idle until a hook says otherwise. Idle: stop,
        // unless a hook made it active meanwhile (then the first exchange
        // succeeds on the next try).
        loop {
            match this.state.cmpxchg(PERIOD_ACTIVE, PERIOD_IDLE, Relaxed) {
                Ok(_) => break,
                Err(PERIOD_IDLE) => {
                    if this.state.cmpxchg(PERIOD_IDLE, PERIOD_STOPPED, Relaxed).is_ok() {
                        return HrTimerRestart::NoRestart;
                    }
                }
                Err(_) => return HrTimerRestart::NoRestart,
            }
        }
        let p = this.period_ns.load(Relaxed).max(1);
        ctx.forward_now(Delta::from_nanos(i64::try_from(p).unwrap_or(i64::MAX)));
        HrTimerRestart::Restart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Period {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

/// What the send task mutates: the algorithm and the timers' handles.
struct QpCtl {
    cc: QpCc,
    /// Dropping a handle cancels its timer and waits for its callback.
    timer: Option<ArcHrTimerHandle<Pacer>>,
    period_timer: Option<ArcHrTimerHandle<Period>>,
    /// When the pending ACC halt started (0: none pending). A halt ends at
    /// the QP's next send.
    halt_since_ns: u64,
    /// The gate stopped the QP on a full window; an ACK that opens it
    /// kicks the QP.
    window_blocked: bool,
    /// Catching up on pacing time lost to late wakes (see `pacing_time`).
    catchup: CatchUp,
}

/// What `rxe_cc_rs_qp_create` hands to rdma_rxe as the QP's private pointer.
///
/// The send-task hooks (`tx_gate`, `tx_done`, `rx_ack`) take `ctl`'s lock;
/// rdma_rxe serializes them, so it is never contended. Nothing else takes
/// it: the timer callbacks use atomics, and the receive-task hook only
/// takes `np`, which nothing else does.
#[pin_data(PinnedDrop)]
struct QpState {
    #[pin]
    ctl: SpinLock<QpCtl>,
    pacer: Arc<Pacer>,
    period: Arc<Period>,
    /// The counters, owned by their debugfs directory: dropping the scope
    /// removes the directory before the counters go.
    stats: Pin<KBox<Scope<QpStats>>>,
    /// Where the counters go when the QP is destroyed.
    totals: Arc<Totals>,
    /// DCQCN's notification point, in the receive task (`rx_data`) only.
    #[pin]
    np: SpinLock<DcqcnNp>,
    /// `<dev>-qp<N>`, as in debugfs, for the tracepoints.
    name: CString,
    /// FNCC's receiver: the device's flow count (the table and the slot),
    /// and the window this QP was last counted in (under the table's lock).
    dev_flows: Option<(Arc<FlowTable>, usize)>,
    flow_mark: Atomic<u32>,
}

impl QpState {
    fn count(&self, c: Counter, by: u64) {
        self.stats.counters.add(c, by);
    }

    /// Counts the hook's CPU in `hook_ns` until the returned guard drops.
    fn hook_clock(&self, now_ns: u64) -> CpuClock<'_> {
        CpuClock::start(&self.stats.counters, Counter::HookNs, now_ns)
    }

    /// Mirrors the algorithm's pacing and state into debugfs.
    fn publish(&self, cc: &mut QpCc, now_ns: u64) {
        let p = cc.get().pacing(now_ns);
        self.stats.rate_bps.store(p.rate_bps, Relaxed);
        self.stats.next_send_ns.store(p.next_send_ns, Relaxed);
        self.stats.window_bytes.store(p.window_bytes.unwrap_or(0), Relaxed);
        if let QpCc::Acc(acc) = cc {
            self.stats.class.store(class_code(acc.class()), Relaxed);
        }
    }

    /// Runs a period that ended since the last hook; called with the lock.
    /// Knob writes take effect here, at the next period.
    fn run_due_period(&self, ctl: &mut QpCtl, now_ns: u64) {
        if self.period.due.xchg(0, Relaxed) == 0 {
            return;
        }
        match &mut ctl.cc {
            QpCc::Acc(acc) => {
                let link = link_params();
                acc.set_knobs(acc_knobs(&link));
                self.period.period_ns.store(link.base_rtt_ns, Relaxed);
            }
            QpCc::Dcqcn(d) => {
                d.set_knobs(dcqcn_knobs(&link_params()));
                if let Some(p) = d.timer_period_ns() {
                    self.period.period_ns.store(p, Relaxed);
                }
            }
            _ => {}
        }
        ctl.cc.get().on_timer(now_ns);
        self.trace_rate(ctl, now_ns);
        if let QpCc::Acc(acc) = &ctl.cc {
            // Halts start only here, at a period's end: count and trace them.
            let halts = acc.halts();
            let before = self.stats.halts.xchg(halts, Relaxed);
            if before != halts {
                self.stats.halt_ns.fetch_add(acc.last_halt_ns(), Relaxed);
                self.count(Counter::Halts, halts.saturating_sub(before));
                ctl.halt_since_ns = now_ns;
                // SAFETY: `name` is a NUL-terminated string that outlives
                // the call.
                unsafe {
                    ffi::rxe_cc_trace_halt_start(self.name.as_char_ptr(), now_ns, acc.last_halt_ns())
                };
            }
            match acc.class() {
                AccClass::Congested => self.count(Counter::PeriodsCongested, 1),
                AccClass::Undetermined => self.count(Counter::PeriodsUndetermined, 1),
                AccClass::Uncongested => self.count(Counter::PeriodsUncongested, 1),
                AccClass::Mixed => self.count(Counter::PeriodsMixed, 1),
                AccClass::NoInfo => {}
            }
        }
    }

    /// Fires the `rxe_cc_rate` tracepoint with the QP's current rate.
    fn trace_rate(&self, ctl: &mut QpCtl, now_ns: u64) {
        let rate = ctl.cc.get().pacing(now_ns).rate_bps;
        let state = match &ctl.cc {
            QpCc::Acc(acc) => class_code(acc.class()),
            _ => 0,
        };
        let c = &self.stats.counters;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        unsafe {
            ffi::rxe_cc_trace_rate(
                self.name.as_char_ptr(),
                now_ns,
                self.stats.alg as u32,
                state,
                rate,
                c.get(Counter::TxBytes),
                c.get(Counter::AckedBytes),
            )
        };
    }

    /// The time a send counts as sent at for pacing. A send the gate held
    /// had its packet waiting: the time it lost past its due time, to a
    /// late hrtimer or a late send task (0.1 to several ms under QEMU TCG,
    /// more on a loaded host), is the emulation's, not the sender's. It and
    /// the sends right behind it count from when they were due, so the QP
    /// catches up back to back until its pacing time is ahead of the clock
    /// again, on at most `pacing_catchup_us`; a held send later than that
    /// loses the rest, and `pacer_lost_ns` counts it. A QP that sent nothing
    /// for `pacing_catchup_us` is idle, not behind: it keeps only its
    /// algorithm's burst credit.
    ///
    /// By default only `cc=fixed` catches up (10 ms). The algorithms'
    /// experiments were measured without it, and with it the chain victim
    /// scenario changed: F0 and F1 ran at 40-48 Mb/s instead of 20-25, and
    /// ACC's time paused rose above DCQCN's (docs/architecture.md).
    fn pacing_time(&self, ctl: &mut QpCtl, now_ns: u64) -> u64 {
        let catchup = match (Knob::PacingCatchupUs.us_ns(), &ctl.cc) {
            (0, QpCc::Fixed(_)) => FIXED_CATCHUP_NS,
            (us, _) => us,
        };
        let next = ctl.cc.get().pacing(now_ns).next_send_ns;
        let (t, lost) = ctl.catchup.send_time(now_ns, next, catchup);
        if lost > 0 {
            self.count(Counter::PacerLostNs, lost);
        }
        t
    }

    /// A send ends a pending halt: traces its actual length, from the end
    /// of the period that decided it to this send.
    fn end_halt(&self, ctl: &mut QpCtl, now_ns: u64) {
        if ctl.halt_since_ns == 0 {
            return;
        }
        let halted = now_ns.saturating_sub(ctl.halt_since_ns);
        ctl.halt_since_ns = 0;
        self.count(Counter::HaltActualNs, halted);
        let planned = match &ctl.cc {
            QpCc::Acc(acc) => acc.last_halt_ns(),
            _ => 0,
        };
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        unsafe { ffi::rxe_cc_trace_halt_end(self.name.as_char_ptr(), now_ns, halted, planned) };
    }

    /// Notes activity, and starts the period timer if the algorithm needs
    /// one and it is not running.
    fn touch_period(&self, ctl: &mut QpCtl, start: bool) {
        if !start {
            // Only a running timer counts activity; the first ACK starts it.
            let _ = self
                .period
                .state
                .cmpxchg(PERIOD_IDLE, PERIOD_ACTIVE, Relaxed);
            return;
        }
        let Some(p) = ctl.cc.get().timer_period_ns() else {
            return;
        };
        if self.period.state.xchg(PERIOD_ACTIVE, Relaxed) != PERIOD_STOPPED {
            return;
        }
        drop(ctl.period_timer.take());
        self.period.period_ns.store(p, Relaxed);
        let delay = Delta::from_nanos(i64::try_from(p).unwrap_or(i64::MAX));
        ctl.period_timer = Some(self.period.clone().start(delay));
    }
}

#[pinned_drop]
impl PinnedDrop for QpState {
    fn drop(self: Pin<&mut Self>) {
        // Cancel the timers first: after this no callback can kick the QP.
        let (pacer, period) = {
            let mut ctl = self.ctl.lock();
            (ctl.timer.take(), ctl.period_timer.take())
        };
        drop(pacer);
        drop(period);
        self.totals.counters.add_all(&self.stats.counters);
        self.totals.qps_destroyed.fetch_add(1, Relaxed);
    }
}

/// FNCC's active flows of one receiver (rxe device), by device name.
struct DevFlows {
    name: CString,
    flows: ActiveFlows,
}

/// Devices whose flows FNCC counts; entries stay until unload (devices are
/// few, and a name comes back with its device).
const MAX_DEVS: usize = 64;

/// Every device's `DevFlows`. Allocated for `MAX_DEVS` at init: entries
/// are added in process context and used from the receive task, so it is
/// never grown under the lock.
type FlowTable = SpinLock<KVec<DevFlows>>;

/// Module-wide state handed to the glue as its context pointer.
struct Context {
    qp_dir: Dir,
    totals: Arc<Totals>,
    flows: Arc<FlowTable>,
}

impl Context {
    /// `dev`'s slot in `flows`, created if new; None if the table is full.
    fn dev_slot(&self, dev: &str) -> Option<usize> {
        let owned = CString::try_from_fmt(fmt!("{}", dev)).ok()?;
        let mut t = self.flows.lock();
        if let Some(i) = t.iter().position(|d| d.name.to_str() == Ok(dev)) {
            return Some(i);
        }
        let i = t.len();
        t.push_within_capacity(DevFlows {
            name: owned,
            flows: ActiveFlows::new(),
        })
        .ok()?;
        Some(i)
    }
}

struct RxeCc {
    /// Boxed so that the address given to the glue stays put. Only the glue
    /// reads it (through that address); holding it here keeps it alive until
    /// `Drop` has unregistered.
    _ctx: KBox<Context>,
    _totals_file: Pin<KBox<File<Arc<Totals>>>>,
    _root: Dir,
}

impl kernel::Module for RxeCc {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let root = Dir::new(c"rxe_cc");
        let totals = Arc::new(
            Totals {
                qps_created: Atomic::new(0),
                qps_destroyed: Atomic::new(0),
                counters: Counters::new(),
            },
            GFP_KERNEL,
        )?;
        let totals_file =
            KBox::pin_init(root.read_only_file(c"totals", totals.clone()), GFP_KERNEL)?;
        let devs = KVec::with_capacity(MAX_DEVS, GFP_KERNEL)?;
        let flows = Arc::pin_init(new_spinlock!(devs), GFP_KERNEL)?;
        let ctx = KBox::new(
            Context {
                qp_dir: root.subdir(c"qps"),
                totals,
                flows,
            },
            GFP_KERNEL,
        )?;
        let ctx_ptr = core::ptr::from_ref::<Context>(&ctx)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: `ctx` is heap-allocated and outlives the registration:
        // `Drop` unregisters (which waits for every hook) before it is freed.
        let err = unsafe { ffi::rxe_cc_glue_register(ctx_ptr) };
        if err != 0 {
            pr_err!("cannot register with rdma_rxe ({})\n", err);
            return Err(Error::from_errno(err));
        }
        // SAFETY: reading a parameter has no preconditions.
        let alg = unsafe { ffi::rxe_cc_param_alg() };
        let name = Algorithm::from_id(alg).map_or("?", Algorithm::name);
        pr_info!("registered with rdma_rxe, cc={}\n", name);
        Ok(RxeCc {
            _ctx: ctx,
            _totals_file: totals_file,
            _root: root,
        })
    }
}

impl Drop for RxeCc {
    fn drop(&mut self) {
        // SAFETY: registered in `init`. On return no hook runs any more and
        // every QP's state has been destroyed, so `ctx` may go.
        unsafe { ffi::rxe_cc_glue_unregister() };
        pr_info!("unregistered; live QPs went back to stock rxe\n");
    }
}

/// Turns rdma_rxe's private pointer back into the QP state.
///
/// # Safety
///
/// `priv_` must come from `rxe_cc_rs_qp_create` and not have been passed to
/// `rxe_cc_rs_qp_destroy` yet, nor be for as long as `'a` lasts; rdma_rxe
/// guarantees this for every hook.
unsafe fn qp_state<'a>(priv_: *mut c_void) -> &'a QpState {
    // SAFETY: by the function's contract `priv_` is a live `into_foreign`
    // pointer that `from_foreign` will not take back during `'a`.
    unsafe { <Pin<KBox<QpState>>>::borrow(priv_) }.get_ref()
}

fn new_qp_state(
    ctx: &Context,
    alg: Algorithm,
    qp: *mut c_void,
    name: &CStr,
    dev: &CStr,
    qpn: u32,
    now_ns: u64,
) -> Result<Pin<KBox<QpState>>> {
    let link = link_params();
    let name = name.to_str().map_err(|_| EINVAL)?;
    let dir_name = CString::try_from_fmt(fmt!("{}", name))?;
    let name = CString::try_from_fmt(fmt!("{}", name))?;
    let counters = Arc::new(Counters::new(), GFP_KERNEL)?;
    let stats = KBox::pin_init(
        ctx.qp_dir.scope(
            QpStats {
                alg,
                qpn,
                line_rate_mbps: Knob::LineRateMbps.get(),
                created_ns: now_ns,
                rate_bps: Atomic::new(0),
                next_send_ns: Atomic::new(now_ns),
                window_bytes: Atomic::new(0),
                class: Atomic::new(0),
                halts: Atomic::new(0),
                halt_ns: Atomic::new(0),
                counters: counters.clone(),
            },
            &dir_name,
            |stats, dir| dir.read_only_file(c"stats", stats),
        ),
        GFP_KERNEL,
    )?;
    let pacer_stats = counters.clone();
    let pacer = Arc::pin_init(
        pin_init!(Pacer {
            timer <- HrTimer::new(),
            qp: QpHandle(qp),
            armed_until: Atomic::new(0),
            stats: pacer_stats,
        }),
        GFP_KERNEL,
    )?;
    let period = Arc::pin_init(
        pin_init!(Period {
            timer <- HrTimer::new(),
            qp: QpHandle(qp),
            due: Atomic::new(0),
            state: Atomic::new(PERIOD_STOPPED),
            period_ns: Atomic::new(0),
            stats: counters,
        }),
        GFP_KERNEL,
    )?;
    let dev_flows = if alg == Algorithm::Fncc {
        let dev = dev.to_str().map_err(|_| EINVAL)?;
        let slot = ctx.dev_slot(dev);
        if slot.is_none() {
            pr_warn!("{}: more than {} devices: its ACKs carry no flow count\n", dev, MAX_DEVS);
        }
        slot.map(|i| (ctx.flows.clone(), i))
    } else {
        None
    };
    let mut cc = QpCc::new(alg, &link, Knob::FixedRateMbps.bps(), now_ns);
    stats
        .rate_bps
        .store(cc.get().pacing(now_ns).rate_bps, Relaxed);
    let state = KBox::pin_init(
        pin_init!(QpState {
            ctl <- new_spinlock!(QpCtl {
                cc,
                timer: None,
                period_timer: None,
                halt_since_ns: 0,
                window_blocked: false,
                catchup: CatchUp::default(),
            }),
            pacer,
            period,
            stats,
            totals: ctx.totals.clone(),
            np <- new_spinlock!(DcqcnNp::new(Knob::MinTimeBetweenCnps.us_ns())),
            name,
            dev_flows,
            flow_mark: Atomic::new(0),
        }),
        GFP_KERNEL,
    )?;
    ctx.totals.qps_created.fetch_add(1, Relaxed);
    Ok(state)
}

/// `qp_create` hook: returns the QP's state, or NULL to leave it alone.
///
/// # Safety
///
/// `ctx` is the `Context` given to `rxe_cc_glue_register`, not yet
/// unregistered; `qp` is the QP being created; `name` and `dev` are
/// NUL-terminated strings and `data_ecn`, `ack_every`, `int_kind` and
/// `int_hops` point to fields of the glue's `struct rxe_cc_qp_info`, all
/// valid and unaliased for the call.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_qp_create(
    ctx: *mut c_void,
    qp: *mut c_void,
    name: *const c_char,
    dev: *const c_char,
    qpn: u32,
    now_ns: u64,
    data_ecn: *mut u8,
    ack_every: *mut u16,
    int_kind: *mut u8,
    int_hops: *mut u8,
) -> *mut c_void {
    // The algorithm is read once: a write to `cc` during the create must
    // not give the QP one algorithm's state and another's wire settings.
    // SAFETY: reading a parameter has no preconditions.
    let Some(alg) = Algorithm::from_id(unsafe { ffi::rxe_cc_param_alg() }) else {
        pr_warn!("qp {}: unknown cc; it runs as stock rxe\n", qpn);
        return core::ptr::null_mut();
    };
    // ACC needs its data ECN-capable, as ECT(1) because TCD's UE is 0b10,
    // and an ACK per packet; DCQCN needs ECN-capable data too. Explicit
    // knob settings win.
    if alg == Algorithm::Dcqcn {
        // SAFETY: as below: the glue's `rxe_cc_qp_info` fields.
        unsafe {
            if *data_ecn == 0 {
                *data_ecn = ECN_ECT1_U8;
            }
        }
    }
    if let Some((kind, hops)) = alg.int_shim() {
        // HPCC, FNCC and ICC read INT from an ACK per packet.
        // SAFETY: as below: the glue's `rxe_cc_qp_info` fields.
        unsafe {
            if *ack_every == 0 {
                *ack_every = 1;
            }
            *int_kind = kind;
            *int_hops = hops;
        }
    }
    if alg == Algorithm::Acc {
        // SAFETY: the glue passes pointers into the `rxe_cc_qp_info` it is
        // filling in, valid and exclusive for this call.
        unsafe {
            if *data_ecn == 0 {
                *data_ecn = ECN_ECT1_U8;
            }
            if *ack_every == 0 {
                *ack_every = 1;
            }
        }
    }
    // SAFETY: `ctx` is the `Context` given to `rxe_cc_glue_register`, alive
    // until unregistration, which cannot overlap a create.
    let ctx = unsafe { &*ctx.cast::<Context>() };
    // SAFETY: the glue passes NUL-terminated names valid for this call.
    let (name, dev) = unsafe { (CStr::from_char_ptr(name), CStr::from_char_ptr(dev)) };
    match new_qp_state(ctx, alg, qp, name, dev, qpn, now_ns) {
        Ok(state) => state.into_foreign(),
        Err(e) => {
            pr_warn!("qp {}: no CC state ({:?}); it runs as stock rxe\n", qpn, e);
            core::ptr::null_mut()
        }
    }
}

/// `qp_destroy` hook.
///
/// # Safety
///
/// `priv_` is a non-NULL state from `rxe_cc_rs_qp_create`, passed here
/// once, after the QP's last hook.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_qp_destroy(priv_: *mut c_void) {
    // SAFETY: `priv_` came from `into_foreign` in `rxe_cc_rs_qp_create` and
    // by the function's contract comes back exactly once, with no borrow
    // left.
    drop(unsafe { <Pin<KBox<QpState>>>::from_foreign(priv_) });
}

/// `tx_gate` hook: 0 means send now, else the time the QP may send. In the
/// second case the pacer's hrtimer is set to kick the QP at that time.
///
/// # Safety
///
/// `priv_` is a state from `rxe_cc_rs_qp_create` not yet destroyed
/// (rdma_rxe calls hooks only between create and destroy).
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_tx_gate(
    priv_: *mut c_void,
    now_ns: u64,
    psn: u32,
    payload: u32,
    _wire_bytes: u32,
) -> u64 {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let _cpu = qp.hook_clock(now_ns);
    let mut ctl = qp.ctl.lock();
    qp.run_due_period(&mut ctl, now_ns);
    let mut next = ctl.cc.get().pacing(now_ns).next_send_ns;
    if next <= now_ns {
        if !ctl.cc.window_full(psn, payload) {
            return 0;
        }
        // The ACK that opens the window kicks the QP; the timer is the
        // fallback should none come (a lost packet, until rxe retries).
        ctl.window_blocked = true;
        // Sends that wait on ACKs have no pacing time to catch up on.
        ctl.catchup.forget();
        qp.count(Counter::TxWindowed, 1);
        next = now_ns.saturating_add(Knob::HpccTUs.us_ns().max(1));
    } else {
        ctl.catchup.hold();
        qp.count(Counter::TxGated, 1);
    }
    // A timer already set for `next` or earlier will do: when it fires,
    // the gate runs again and re-arms if the QP must still wait.
    let armed = qp.pacer.armed_until.load(Relaxed);
    if armed == 0 || armed > next {
        // Cancel any later timer before setting this one.
        drop(ctl.timer.take());
        qp.pacer.armed_until.store(next, Relaxed);
        let delay =
            Delta::from_nanos(i64::try_from(next.saturating_sub(now_ns)).unwrap_or(i64::MAX));
        ctl.timer = Some(qp.pacer.clone().start(delay));
    }
    next
}

/// `tx_done` hook.
///
/// # Safety
///
/// `priv_` is a state from `rxe_cc_rs_qp_create` not yet destroyed
/// (rdma_rxe calls hooks only between create and destroy).
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_tx_done(
    priv_: *mut c_void,
    now_ns: u64,
    psn: u32,
    payload: u32,
    wire_bytes: u32,
) {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let _cpu = qp.hook_clock(now_ns);
    let mut ctl = qp.ctl.lock();
    // This packet passed the gate, so a halt decided earlier is over; one
    // that the period below decides starts after it.
    qp.end_halt(&mut ctl, now_ns);
    let first = qp.stats.counters.get(Counter::TxPackets) == 0;
    qp.run_due_period(&mut ctl, now_ns);
    let pace_ns = qp.pacing_time(&mut ctl, now_ns);
    ctl.cc.follow_knobs();
    ctl.cc.get().on_send(pace_ns, psn, payload);
    // Caught up once the next send must wait for its time again.
    let next = ctl.cc.get().pacing(now_ns).next_send_ns;
    ctl.catchup.sent(now_ns, next);
    if first {
        // The flow's start, for a rate time series.
        qp.trace_rate(&mut ctl, now_ns);
    }
    qp.touch_period(&mut ctl, false);
    qp.publish(&mut ctl.cc, now_ns);
    qp.count(Counter::TxPackets, 1);
    qp.count(Counter::TxBytes, u64::from(payload));
    qp.count(Counter::TxWireBytes, u64::from(wire_bytes));
}

/// FNCC's LHCS jumps so far; 0 for other algorithms.
fn lhcs_jumps(cc: &QpCc) -> u64 {
    match cc {
        QpCc::Fncc(f) => f.lhcs_jumps(),
        _ => 0,
    }
}

/// `rx_ack` hook.
///
/// # Safety
///
/// `priv_` is a state from `rxe_cc_rs_qp_create` not yet destroyed
/// (rdma_rxe calls hooks only between create and destroy), and `shim` is
/// NULL or an unpacked shim valid for the call.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_rx_ack(
    priv_: *mut c_void,
    now_ns: u64,
    psn: u32,
    acked_psns: u32,
    acked_bytes: u32,
    kind: u8,
    echo: u8,
    ce_pkts: u8,
    shim: *const IntShim,
) {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let _cpu = qp.hook_clock(now_ns);
    // SAFETY: the glue passes NULL or an unpacked shim valid for this call.
    let shim = unsafe { shim.as_ref() };
    let mut hops = [IntHop::default(); MAX_HOPS];
    let mut n = 0;
    if let Some(sh) = shim {
        n = usize::try_from(sh.nhops).unwrap_or(0).min(MAX_HOPS);
        for (h, r) in hops.iter_mut().zip(sh.hop.iter()).take(n) {
            *h = IntHop {
                b_bps: r.b_bps,
                ts_ns: r.ts_ns,
                tx_bytes: r.tx_bytes,
                qlen: r.qlen,
            };
        }
        qp.count(Counter::IntAcks, 1);
        qp.count(Counter::IntHops, n as u64);
        qp.count(Counter::IntOverflow, u64::from(sh.overflow));
    }
    let int = shim.map(|sh| IntInfo {
        hops: hops.get(..n).unwrap_or(&[]),
        path_id: 0,
        widths: INT_WIDTHS,
        n_flows: u16::try_from(sh.n_flows).unwrap_or(u16::MAX),
        port_flows: u16::try_from(sh.port_flows).unwrap_or(u16::MAX),
        qlen_rate: sh.qlen_rate,
        lu: Q32::ratio(u64::from(sh.lu_permille), 1000),
    });
    {
        let mut ctl = qp.ctl.lock();
        let ack = AckEvent {
            now_ns,
            psn,
            acked_bytes,
            acked_psns,
            ce: echo & ECHO_CE != 0,
            ce_pkts: u32::from(ce_pkts),
            ue: echo & ECHO_UE != 0,
            nak: kind == ACK_KIND_NAK,
            int,
        };
        qp.run_due_period(&mut ctl, now_ns);
        if kind == ACK_KIND_CNP {
            ctl.cc.get().on_cnp(now_ns);
            qp.trace_rate(&mut ctl, now_ns);
        } else {
            let jumps = lhcs_jumps(&ctl.cc);
            ctl.cc.get().on_ack(&ack);
            qp.count(Counter::LhcsJumps, lhcs_jumps(&ctl.cc).saturating_sub(jumps));
        }
        if ctl.window_blocked && ctl.cc.window_open() {
            ctl.window_blocked = false;
            // SAFETY: the QP outlives its CC state, whose hooks these are.
            unsafe { ffi::rxe_cc_glue_kick(qp.pacer.qp.0) };
        }
        // The period timer starts at the first ACK.
        qp.touch_period(&mut ctl, true);
        qp.publish(&mut ctl.cc, now_ns);
    }
    let c = match kind {
        ACK_KIND_NAK => Counter::Naks,
        ACK_KIND_CNP => Counter::Cnps,
        _ => Counter::Acks,
    };
    qp.count(c, 1);
    qp.count(Counter::AckedBytes, u64::from(acked_bytes));
    // CE-marked packets the ACK answers: its count, or 1 from a
    // responder that only set FECN.
    let ce = if echo & ECHO_CE == 0 { 0 } else { ce_pkts.max(1) };
    qp.count(Counter::EchoCe, u64::from(ce));
    qp.count(Counter::EchoUe, u64::from((echo & ECHO_UE) >> 1));
}

/// `rx_data` hook: returns the echo bits for the next ACK. The responder
/// echoes the marks its requests carry, whatever the algorithm: CE always,
/// UE when senders use ECT(1) (`data_ecn=1`; the testbed's hosts share one
/// kernel and so one setting). A DCQCN QP is also a notification point: a
/// CE-marked request earns the requester a CNP, at most one per
/// `min_time_between_cnps`.
///
/// # Safety
///
/// `priv_` is a state from `rxe_cc_rs_qp_create` not yet destroyed, and
/// `int_flows` points to the glue's `struct rxe_cc_rx` field, valid and
/// unaliased for the call.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_rx_data(
    priv_: *mut c_void,
    now_ns: u64,
    _psn: u32,
    payload: u32,
    ecn: u8,
    int_flows: *mut u16,
) -> u8 {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let _cpu = qp.hook_clock(now_ns);
    qp.count(Counter::RxPackets, 1);
    qp.count(Counter::RxBytes, u64::from(payload));
    if let Some((table, slot)) = &qp.dev_flows {
        // FNCC's receiver: N, over windows of T, for this QP's next ACK.
        let mut t = table.lock();
        if let Some(d) = t.get_mut(*slot) {
            let mut mark = qp.flow_mark.load(Relaxed);
            let n = d.flows.on_data(now_ns, Knob::HpccTUs.us_ns(), &mut mark);
            qp.flow_mark.store(mark, Relaxed);
            // SAFETY: the glue passes the `rxe_cc_rx` field it hands back
            // to rdma_rxe, valid and exclusive for this call.
            unsafe { *int_flows = n };
        }
    }
    if ecn == ECN_CE {
        qp.count(Counter::RxEcnCe, 1);
        if qp.stats.alg == Algorithm::Dcqcn {
            let mut np = qp.np.lock();
            np.interval_ns = Knob::MinTimeBetweenCnps.us_ns();
            if np.on_ce(now_ns) {
                drop(np);
                qp.count(Counter::CnpsSent, 1);
                return ECHO_CE | SEND_CNP;
            }
        }
        return ECHO_CE;
    }
    // UE is 0b10, which an unmarked ECT(0) packet also reads as: count it
    // only when this kernel's senders use ECT(1), as `data_ecn=1` or ACC's
    // default (`data_ecn=0` under cc=acc) make them.
    let data_ecn = Knob::DataEcn.get();
    if ecn == ECN_UE && (data_ecn == ECN_ECT1 || (data_ecn == 0 && qp.stats.alg == Algorithm::Acc)) {
        qp.count(Counter::RxEcnUe, 1);
        return ECHO_UE;
    }
    0
}
