// SPDX-License-Identifier: GPL-2.0

//! The algorithms behind one type: which one a QP runs (`cc=`), what it
//! asks of rdma_rxe, and how it is built. Each algorithm's file says all
//! of that for itself ([`Algorithm`]); the `algs!` table below lists the
//! algorithms once, and the enums, the factory and the dispatch follow
//! from it, so the kernel module has no per-algorithm choice.

use super::acc::{Acc, AccClass};
use super::cc::CongestionControl;
use super::dcqcn::Dcqcn;
use super::dctcp::Dctcp;
use super::fixed_rate::FixedRate;
use super::fncc::Fncc;
use super::hpcc::{Hpcc, MAX_HOPS};
use super::icc::Icc;
use super::knobs::{Knob, KnobSource};
use super::none::NoCc;
use super::swift::Swift;
use super::timely::Timely;

pub use super::cc::{Reactions, MTU};

/// INT shim kinds, as `enum rxe_cc_int_kind`.
pub const INT_KIND_HPCC: u8 = 1;
/// FNCC's: stamped on the ACKs' way back.
pub const INT_KIND_FNCC: u8 = 2;
/// ICC's: the most congested port's feedback.
pub const INT_KIND_ICC: u8 = 3;

/// IP ECN ECT(1): TCD marks UE as 0b10, so senders that want UE marks send
/// ECT(1); an unmarked ECT(0) packet would read as UE.
pub const ECN_ECT1: u8 = 0b01;

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

/// How many hops an algorithm's INT shim has room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntRoom {
    /// One per switch on the path, up to `int_hops`.
    Hops,
    /// One slot (ICC: the most congested port's feedback).
    One,
}

/// An algorithm's facts, besides its behaviour.
#[derive(Clone, Copy, Debug)]
pub struct AlgInfo {
    /// Its name, as `cc=` takes it.
    pub name: &'static str,
    /// What a QP is doing, for debugfs, from [`AnyCc::state_code`]; none:
    /// its name.
    pub state_name: Option<fn(u32) -> &'static str>,
    /// True if it halts sources (debugfs shows `halts`).
    pub halts: bool,
    /// The IP ECN codepoint of its data, 0 for none.
    pub data_ecn: u8,
    /// An ACK at least every this many packets, 0 for rxe's default.
    pub ack_every: u16,
    /// The INT shim its ACKs carry, and its room.
    pub int_shim: Option<(u8, IntRoom)>,
    /// True if its responder is a notification point: a CE-marked request
    /// earns the requester a CNP.
    pub sends_cnps: bool,
    /// True if its receivers count their concurrent flows for the ACKs'
    /// INT shim (FNCC's N).
    pub counts_flows: bool,
    /// The rxe_cc counters (`/sys/kernel/debug/rxe_cc/totals`) that show it
    /// acting: what it reacts to (CNPs, CE echoed, INT records, RTT
    /// samples) or what it did (halts, congested periods, pacer fires).
    /// Any one above 0 in a run is enough; `none` has nothing to show.
    pub signals: &'static [&'static str],
    /// True if its senders use ECT(1) when `data_ecn` is 0, so that an ECN
    /// of 0b10 at the responder is TCD's UE, not unmarked ECT(0).
    pub ect1_by_default: bool,
}

impl AlgInfo {
    /// An algorithm that asks nothing of rdma_rxe and shows nothing: each
    /// algorithm's `INFO` sets what differs.
    pub const DEFAULT: AlgInfo = AlgInfo {
        name: "",
        state_name: None,
        halts: false,
        data_ecn: 0,
        ack_every: 0,
        int_shim: None,
        sends_cnps: false,
        counts_flows: false,
        signals: &[],
        ect1_by_default: false,
    };
}

/// What rxe_cc needs of an algorithm besides [`CongestionControl`]: its
/// facts and how a QP's state is built. Each algorithm's file implements
/// it.
pub trait Algorithm: CongestionControl + Sized {
    /// Its facts.
    const INFO: AlgInfo;

    /// A new QP's state, from the knobs as they are now.
    fn build(k: &dyn KnobSource, now_ns: u64) -> Self;
}

/// Writes each algorithm once: its `AlgId` variant and id (`enum
/// rxe_cc_alg`'s), and the type that runs it. It defines [`AlgId`],
/// [`ALGS`], [`NR_ALGS`] and [`AnyCc`], with the factory and dispatch.
macro_rules! algs {
    ($($(#[$doc:meta])* $variant:ident = $id:literal => $ty:ty,)*) => {
        /// The algorithm a QP runs; ids are `enum rxe_cc_alg`'s.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum AlgId {
            $($(#[$doc])* $variant = $id,)*
        }

        /// Every algorithm, in id order (`knobs.h`'s `RXE_CC_ALGS` is
        /// generated from it).
        pub const ALGS: [AlgId; [$($id),*].len()] = [$(AlgId::$variant),*];

        /// A QP's algorithm state, one variant per [`AlgId`].
        #[derive(Clone, Debug)]
        pub enum AnyCc {
            $($(#[$doc])* $variant($ty),)*
        }

        impl AlgId {
            /// Its facts.
            pub fn info(self) -> &'static AlgInfo {
                match self {
                    $(Self::$variant => &<$ty as Algorithm>::INFO,)*
                }
            }
        }

        impl AnyCc {
            /// A new QP's state under `alg`, from the knobs as they are now.
            pub fn new(alg: AlgId, k: &dyn KnobSource, now_ns: u64) -> Self {
                match alg {
                    $(AlgId::$variant => Self::$variant(<$ty as Algorithm>::build(k, now_ns)),)*
                }
            }

            /// The algorithm, to drive.
            pub fn cc(&mut self) -> &mut dyn CongestionControl {
                match self {
                    $(Self::$variant(cc) => cc,)*
                }
            }

            /// The algorithm, to read.
            pub fn cc_ref(&self) -> &dyn CongestionControl {
                match self {
                    $(Self::$variant(cc) => cc,)*
                }
            }
        }
    };
}

algs! {
    /// Pass-through: count, never delay.
    None = 0 => NoCc,
    /// Pace at `fixed_rate_mbps`: the pacer's test mode.
    Fixed = 1 => FixedRate,
    /// ACC (NSDI'24).
    Acc = 2 => Acc,
    /// DCQCN (SIGCOMM'15), driven by CNPs.
    Dcqcn = 3 => Dcqcn,
    /// HPCC (SIGCOMM'19), driven by the INT records ACKs carry.
    Hpcc = 4 => Hpcc,
    /// FNCC (2024): HPCC on INT stamped into ACKs, plus LHCS.
    Fncc = 5 => Fncc,
    /// ICC (CMC 2023): rates from the congested port's INT feedback.
    Icc = 6 => Icc,
    /// TIMELY (SIGCOMM'15): a rate from the RTT's gradient.
    Timely = 7 => Timely,
    /// DCTCP's α on a rate, as the HPCC simulator's mode 8.
    Dctcp = 8 => Dctcp,
    /// Swift (SIGCOMM'20): a window held to a delay target.
    Swift = 9 => Swift,
}

/// `RXE_CC_NR_ALGS`.
pub const NR_ALGS: u32 = ALGS.len() as u32;

// Each entry sits at its id.
const _: () = {
    let mut i = 0;
    while i < ALGS.len() {
        assert!(ALGS[i] as usize == i);
        i += 1;
    }
};

impl AlgId {
    /// The algorithm of `enum rxe_cc_alg` id `id`.
    pub fn from_id(id: u32) -> Option<Self> {
        ALGS.get(usize::try_from(id).ok()?).copied()
    }

    /// The algorithm `cc=` names `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        ALGS.iter().copied().find(|a| a.name() == name)
    }

    /// Its name, as `cc=` takes it.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// What a QP is doing, for debugfs (`code` from [`AnyCc::state_code`]).
    pub fn state_name(self, code: u32) -> &'static str {
        let info = self.info();
        info.state_name.map_or(info.name, |f| f(code))
    }

    /// True if the algorithm halts sources (debugfs shows `halts`).
    pub fn halts(self) -> bool {
        self.info().halts
    }

    /// What its QPs need of rdma_rxe.
    pub fn wire(self, k: &dyn KnobSource) -> Wire {
        let info = self.info();
        let hops = u8::try_from(k.get(Knob::IntHops).min(MAX_HOPS as u32)).unwrap_or(1);
        Wire {
            data_ecn: info.data_ecn,
            ack_every: info.ack_every,
            int_shim: info.int_shim.map(|(kind, room)| match room {
                IntRoom::Hops => (kind, hops),
                IntRoom::One => (kind, 1),
            }),
        }
    }

    /// True if its responder is a notification point (DCQCN).
    pub fn sends_cnps(self) -> bool {
        self.info().sends_cnps
    }

    /// True if its receivers count their concurrent flows (FNCC's N).
    pub fn counts_flows(self) -> bool {
        self.info().counts_flows
    }

    /// The rxe_cc counters that show it acting ([`AlgInfo::signals`]).
    pub fn signals(self) -> &'static [&'static str] {
        self.info().signals
    }

    /// True if its senders use ECT(1) when `data_ecn` is 0 (ACC).
    pub fn ect1_by_default(self) -> bool {
        self.info().ect1_by_default
    }
}

impl AnyCc {
    /// A window-based algorithm's limit on a packet of `payload` bytes with
    /// PSN `psn`: true if it must wait for an ACK. Retransmissions pass.
    pub fn window_full(&self, psn: u32, payload: u32) -> bool {
        self.cc_ref()
            .window_of(psn)
            .is_some_and(|(window, inflight, new)| {
                new && inflight > 0 && inflight.saturating_add(u64::from(payload)) > window
            })
    }

    /// True if the window has room again, or the algorithm has none.
    pub fn window_open(&self) -> bool {
        self.cc_ref()
            .window_of(0)
            .is_none_or(|(window, inflight, _)| inflight < window)
    }

    /// Knobs that act on running QPs at each period's end.
    pub fn period_knobs(&mut self, k: &dyn KnobSource) {
        self.cc().period_knobs(k);
    }

    /// Knobs that act on running QPs at each send.
    pub fn send_knobs(&mut self, k: &dyn KnobSource) {
        self.cc().send_knobs(k);
    }

    /// Pacing catch-up when `pacing_catchup_us` is 0.
    pub fn default_catchup_ns(&self) -> u64 {
        self.cc_ref().default_catchup_ns()
    }

    /// ACC's last period class, for counting.
    pub fn period_class(&self) -> Option<AccClass> {
        self.cc_ref().period_class()
    }

    /// The state's code, for debugfs and the rate tracepoint (0: none).
    pub fn state_code(&self) -> u32 {
        self.period_class().map_or(0, AccClass::code)
    }

    /// Source halts so far (ACC).
    pub fn halts(&self) -> u64 {
        self.cc_ref().halts_so_far().0
    }

    /// The last halt's planned length, ns (ACC).
    pub fn last_halt_ns(&self) -> u64 {
        self.cc_ref().halts_so_far().1
    }

    /// What the algorithm has done so far, for counting.
    pub fn reactions(&self) -> Reactions {
        self.cc_ref().reactions()
    }
}
