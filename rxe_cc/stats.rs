// SPDX-License-Identifier: GPL-2.0

//! Per-QP and module-wide counters and their debugfs views.

use core::fmt;
use kernel::sync::{
    atomic::{Atomic, Relaxed},
    Arc,
};

use crate::cc_core::alg::AlgId;
use crate::ffi;

/// Event counters kept per QP and, summed over destroyed QPs, module-wide.
#[derive(Clone, Copy)]
pub(crate) enum Counter {
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
    RttSamples,
    CcCuts,
    /// Sends the device's arbiter held (`nic_queue_pkts`).
    TxNicHeld,
    /// ACKs that brought a QP's send time before its pacer's timer.
    PacerRekicks,
    /// Periods the algorithm ran (`on_timer`), and their total lateness:
    /// from the period's nominal end to the hook that ran it.
    PeriodRuns,
    PeriodLateNs,
}

pub(crate) const NR_COUNTERS: usize = 38;
pub(crate) const COUNTER_NAMES: [&str; NR_COUNTERS] = [
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
    "rtt_samples",
    "cc_cuts",
    "tx_nic_held",
    "pacer_rekicks",
    "period_runs",
    "period_late_ns",
];

pub(crate) struct Counters([Atomic<u64>; NR_COUNTERS]);

impl Counters {
    pub(crate) fn new() -> Self {
        Self(core::array::from_fn(|_| Atomic::new(0)))
    }

    /// Counters wrap rather than trap: they are reported, never used for
    /// control, and 2^64 bytes is centuries of traffic.
    pub(crate) fn add(&self, c: Counter, by: u64) {
        if let Some(a) = self.0.get(c as usize) {
            a.fetch_add(by, Relaxed);
        }
    }

    pub(crate) fn get(&self, c: Counter) -> u64 {
        self.0.get(c as usize).map_or(0, |a| a.load(Relaxed))
    }

    pub(crate) fn add_all(&self, other: &Counters) {
        for (mine, theirs) in self.0.iter().zip(other.0.iter()) {
            mine.fetch_add(theirs.load(Relaxed), Relaxed);
        }
    }

    /// One `name value` line per counter, without a final newline (debugfs
    /// `Writer` adds it).
    pub(crate) fn fmt_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
pub(crate) struct QpStats {
    pub(crate) alg: AlgId,
    pub(crate) qpn: u32,
    pub(crate) line_rate_mbps: u32,
    pub(crate) created_ns: u64,
    /// The algorithm's current rate and next send time, mirrored after
    /// each event so that reading debugfs takes no lock.
    pub(crate) rate_bps: Atomic<u64>,
    pub(crate) next_send_ns: Atomic<u64>,
    /// HPCC and FNCC: the window, bytes (0: the algorithm has none).
    pub(crate) window_bytes: Atomic<u64>,
    /// ACC: the last period's class (`AccClass::code`), halts and their
    /// total planned length.
    pub(crate) class: Atomic<u32>,
    pub(crate) halts: Atomic<u64>,
    pub(crate) halt_ns: Atomic<u64>,
    /// Shared with the QP's timers, which count their fires.
    pub(crate) counters: Arc<Counters>,
}

impl fmt::Debug for QpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cc {}", self.alg.name())?;
        writeln!(f, "qpn {}", self.qpn)?;
        writeln!(f, "state {}", self.alg.state_name(self.class.load(Relaxed)))?;
        if self.alg.halts() {
            writeln!(f, "halts {}", self.halts.load(Relaxed))?;
            writeln!(f, "halt_ns {}", self.halt_ns.load(Relaxed))?;
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
pub(crate) struct Totals {
    pub(crate) qps_created: Atomic<u64>,
    pub(crate) qps_destroyed: Atomic<u64>,
    pub(crate) counters: Counters,
}

impl fmt::Debug for Totals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "qps_created {}", self.qps_created.load(Relaxed))?;
        writeln!(f, "qps_destroyed {}", self.qps_destroyed.load(Relaxed))?;
        self.counters.fmt_lines(f)
    }
}

/// Adds the time from `start` to its drop to one counter: the CPU that
/// rxe_cc's own code takes in a hook (from the clock read rdma_rxe makes
/// just before the call) or a timer callback. A hook declares it first, so
/// that it is dropped last, after the QP's lock is released.
pub(crate) struct CpuClock<'a> {
    pub(crate) counters: &'a Counters,
    pub(crate) counter: Counter,
    pub(crate) start_ns: u64,
}

impl<'a> CpuClock<'a> {
    pub(crate) fn start(counters: &'a Counters, counter: Counter, start_ns: u64) -> Self {
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
