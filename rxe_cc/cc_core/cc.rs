// SPDX-License-Identifier: GPL-2.0

//! The interface every algorithm implements, and the events it sees.
//!
//! The kernel glue calls an algorithm at these events, always from one
//! context at a time (the QP's send task), passing the time in nanoseconds
//! from a monotonic clock. The algorithm never reads a clock itself.

use super::acc::AccClass;
use super::knobs::{Knob, KnobSource};

/// rxe's path MTU on the testbed (4 KB RoCE MTU).
pub const MTU: u32 = 4096;

/// The link a QP sends on, given at QP init. The network's base round
/// trip (the papers' T) is not the link's: the algorithms that scale with
/// it take it beside the link, each from its own paper's knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// Line rate of the sender's NIC, b/s.
    pub line_rate_bps: u64,
    /// Path MTU: payload bytes of a full packet.
    pub mtu: u32,
}

impl LinkParams {
    /// The link the algorithms assume: `line_rate_mbps` and rxe's MTU.
    pub fn from_knobs(k: &dyn KnobSource) -> Self {
        Self {
            line_rate_bps: k.bps(Knob::LineRateMbps),
            mtu: MTU,
        }
    }
}

/// Running counts of an algorithm's reactions; the module counts their
/// growth per event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reactions {
    /// FNCC's LHCS jumps.
    pub lhcs_jumps: u64,
    /// RTT samples taken (the delay-based algorithms).
    pub rtt_samples: u64,
    /// Rate or window decreases the algorithm counts as cuts.
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

/// One hop's in-band telemetry record, as HPCC defines it: the egress port's
/// rate `b_bps`, the stamping time, and the port's cumulative transmitted
/// bytes and queue length at that time. `ts_ns` and `tx_bytes` are wrapping
/// counters of `ts_bits` and `tx_bits` bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Egress port rate, b/s.
    pub b_bps: u64,
    /// Time the packet left the port, ns, wrapping at `ts_bits`.
    pub ts_ns: u64,
    /// Bytes the port had sent, wrapping at `tx_bits`.
    pub tx_bytes: u64,
    /// Queue length in bytes after this packet left.
    pub qlen: u64,
}

/// Widths of the wrapping INT counters on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntWidths {
    /// Bits of [`IntHop::ts_ns`].
    pub ts_bits: u32,
    /// Bits of [`IntHop::tx_bytes`].
    pub tx_bits: u32,
}

impl IntWidths {
    /// Full 64-bit counters (no wrap in practice).
    pub const FULL: IntWidths = IntWidths {
        ts_bits: 64,
        tx_bits: 64,
    };
}

/// Telemetry an ACK carries, if the network stamps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntInfo<'a> {
    /// Per-hop records; for HPCC in data-path order, for FNCC in ACK order
    /// (index 0 is the receiver's last hop).
    pub hops: &'a [IntHop],
    /// Path identifier; a change means the path changed.
    pub path_id: u16,
    /// Counter widths of `hops`.
    pub widths: IntWidths,
    /// Concurrent flows at the receiver (FNCC's N), 0 if unknown.
    pub n_flows: u16,
    /// Flows on the congested port (ICC's n), 0 if unknown.
    pub port_flows: u16,
    /// Queue growth at the stamping port, bytes per second, signed (ICC).
    pub qlen_rate: i64,
    /// Link utilisation of the stamping port (ICC).
    pub lu: super::fixed::Q32,
}

/// An ACK (or NAK) as the completer reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckEvent<'a> {
    /// Arrival time, ns.
    pub now_ns: u64,
    /// BTH PSN of the response.
    pub psn: u32,
    /// Payload bytes the cumulative ack advanced by.
    pub acked_bytes: u32,
    /// Packets the cumulative ack advanced by: 1 with an ACK per packet,
    /// more when the responder coalesces ACKs (`ack_every`).
    pub acked_psns: u32,
    /// The responder echoed a CE mark: a packet since its last ACK was CE.
    pub ce: bool,
    /// How many packets since the responder's last ACK were CE (0 from a
    /// responder that does not count: then `ce` means at least one). The
    /// wire saturates it at 63 (docs/wire-format.md).
    pub ce_pkts: u32,
    /// The responder echoed a UE mark (TCD undetermined).
    pub ue: bool,
    /// True for a NAK: nothing was acked.
    pub nak: bool,
    /// Telemetry, for HPCC, FNCC and ICC.
    pub int: Option<IntInfo<'a>>,
}

impl AckEvent<'_> {
    /// Packets this ACK answers, at least 1 (a duplicate ACK or one whose
    /// PSN delta is unknown still stands for the packet that earned it).
    pub fn packets(&self) -> u32 {
        self.acked_psns.max(1)
    }

    /// CE-marked packets among [`Self::packets`]: the responder's count, or
    /// 1 if it only set FECN; never more than the packets answered.
    pub fn ce_packets(&self) -> u32 {
        if self.ce {
            self.ce_pkts.max(1).min(self.packets())
        } else {
            0
        }
    }
}

/// When and how fast the QP may send: the answer to "when may the next
/// packet leave?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// Current sending rate, b/s.
    pub rate_bps: u64,
    /// Earliest time the next packet may leave, ns. In the future while the
    /// QP is paced or halted.
    pub next_send_ns: u64,
    /// Limit on bytes in flight, for window-based algorithms.
    pub window_bytes: Option<u64>,
}

/// A congestion-control algorithm's per-QP state.
pub trait CongestionControl {
    /// The algorithm's name, as `cc=` takes it.
    fn name(&self) -> &'static str;

    /// A packet of `bytes` payload left at `now_ns`; `psn` is the last PSN
    /// it takes (its own, or a READ's last response's, `bytes` being what
    /// the READ pulls), so that a retried READ is no new data.
    fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32);

    /// An ACK or NAK arrived.
    fn on_ack(&mut self, ack: &AckEvent<'_>);

    /// A congestion notification packet arrived. Ignored by default.
    fn on_cnp(&mut self, _now_ns: u64) {}

    /// The periodic timer fired. Ignored by default.
    fn on_timer(&mut self, _now_ns: u64) {}

    /// Period of the timer the algorithm needs, ns; none by default.
    fn timer_period_ns(&self) -> Option<u64> {
        None
    }

    /// The pacing decision for the next packet.
    fn pacing(&self, now_ns: u64) -> Pacing;

    /// A window-based algorithm's window, bytes in flight, and whether
    /// `psn` is new data; none by default.
    fn window_of(&self, _psn: u32) -> Option<(u64, u64, bool)> {
        None
    }

    /// Takes the knobs that act on a running QP at each period's end
    /// (ACC's and DCQCN's, their T included). None by default.
    fn period_knobs(&mut self, _k: &dyn KnobSource) {}

    /// Takes the knobs that act on a running QP at each send (`cc=fixed`'s
    /// rate). None by default.
    fn send_knobs(&mut self, _k: &dyn KnobSource) {}

    /// Pacing catch-up when `pacing_catchup_us` is 0: none by default.
    fn default_catchup_ns(&self) -> u64 {
        0
    }

    /// ACC's last period class, for counting.
    fn period_class(&self) -> Option<AccClass> {
        None
    }

    /// Source halts so far, and the last one's planned length, ns (ACC).
    fn halts_so_far(&self) -> (u64, u64) {
        (0, 0)
    }

    /// What the algorithm has done so far, for counting.
    fn reactions(&self) -> Reactions {
        Reactions::default()
    }
}

/// Advances a pacing clock by one packet: the next send time after sending
/// `bytes` at `rate_bps`, starting from `next_ns` or `now_ns`, whichever is
/// later. A packet that waited keeps no credit beyond `burst_ns`, so a paced
/// sender never bursts after idling.
pub fn advance_pacing(next_ns: u64, now_ns: u64, bytes: u64, rate_bps: u64, burst_ns: u64) -> u64 {
    let start = next_ns.max(now_ns.saturating_sub(burst_ns));
    start.saturating_add(super::fixed::tx_time_ns(bytes, rate_bps))
}

/// A NIC's arbiter (rxe_cc's `nic_queue_pkts`): a real NIC shares its line
/// among its QPs and queues next to nothing for them, so a rate cut acts on
/// bytes not yet sent. rxe instead hands each QP's packets to the device's
/// queue (up to 64 per QP), beyond the algorithm's reach. With the device's
/// wire clock `nic_next_ns` (advanced by [`advance_pacing`] at its line
/// rate for every packet any of its QPs sends), a QP may send while that
/// clock is at most `queue_ns` ahead of `now_ns`; else it waits until then.
/// The module sets `queue_ns` to `nic_queue_pkts` of the packet's wire time
/// at the line, so that the queue is the same in packets at any scale.
pub fn nic_gate(nic_next_ns: u64, now_ns: u64, queue_ns: u64) -> Option<u64> {
    let free_ns = nic_next_ns.saturating_sub(queue_ns);
    (free_ns > now_ns).then_some(free_ns)
}

/// Pacing catch-up after late wakes (rxe_cc's `pacing_catchup_us`). A send
/// the gate held had its packet waiting: the time it lost past its due
/// time, to a late timer or a late send task, is the emulation's, not the
/// sender's. It and the sends right behind it count from when they were
/// due, so the QP catches up back to back until its pacing time is ahead
/// of the clock again, on at most the catch-up; a QP that sent nothing for
/// that long is idle, not behind. Shared by the module and the cargo model.
#[derive(Clone, Copy, Debug, Default)]
pub struct CatchUp {
    /// The gate held the next send for its pacing time, since the last send.
    held: bool,
    /// The sends since the hold were back to back and still behind.
    behind: bool,
    /// The last send's time.
    last_tx_ns: u64,
}

impl CatchUp {
    /// The gate held the QP's next send for its pacing time.
    pub fn hold(&mut self) {
        self.held = true;
    }

    /// Sends that wait on ACKs (a full window) have nothing to catch up on.
    pub fn forget(&mut self) {
        self.held = false;
        self.behind = false;
    }

    /// For a send at `now_ns` whose pacing time was `next_send_ns`: the time
    /// it counts as sent at, and the link time a held send lost beyond the
    /// catch-up of `catchup_ns`.
    pub fn send_time(&mut self, now_ns: u64, next_send_ns: u64, catchup_ns: u64) -> (u64, u64) {
        let held = core::mem::replace(&mut self.held, false);
        let last = core::mem::replace(&mut self.last_tx_ns, now_ns);
        self.behind = held || (self.behind && now_ns.saturating_sub(last) <= catchup_ns);
        if !self.behind {
            return (now_ns, 0);
        }
        let due = next_send_ns.min(now_ns);
        let floor = now_ns.saturating_sub(catchup_ns);
        let lost = if held { floor.saturating_sub(due) } else { 0 };
        (due.max(floor), lost)
    }

    /// After the send: caught up once the next send must wait again.
    pub fn sent(&mut self, now_ns: u64, next_send_ns: u64) {
        self.behind = self.behind && next_send_ns <= now_ns;
    }
}

/// Pacing credit a sender may catch up on after waking late, ns: the user's
/// setting (`pacing_burst_us`, as ns) or `default_ns` when it is 0, and
/// never less than one full packet at line rate.
pub fn pacing_burst_ns(link: &LinkParams, setting_ns: u64, default_ns: u64) -> u64 {
    let ns = match setting_ns {
        0 => default_ns,
        ns => ns,
    };
    ns.max(super::fixed::tx_time_ns(
        u64::from(link.mtu),
        link.line_rate_bps,
    ))
}
