// SPDX-License-Identifier: GPL-2.0

//! A QP's CC state: the algorithm, its timers and counters, and what the
//! hooks do with them.

use core::ffi::c_void;
use kernel::{
    debugfs::{Dir, Scope},
    new_spinlock,
    prelude::*,
    str::CString,
    sync::{
        atomic::{Acquire, Atomic, Relaxed},
        Arc, SpinLock,
    },
    time::{
        hrtimer::{ArcHrTimerHandle, HrTimer, HrTimerPointer},
        Delta,
    },
};

use crate::abi::*;
use crate::cc_core::{
    acc::AccClass,
    alg::{AlgId, AnyCc},
    cc::{advance_pacing, nic_gate, AckEvent, CatchUp, IntHop, IntInfo},
    dcqcn::DcqcnNp,
    fixed::{tx_time_ns, Q32},
    flows::ActiveFlows,
    hpcc::MAX_HOPS,
    knobs::{Knob, KnobSource},
    psn::psn_add,
};
use crate::ffi;
use crate::knobs::ModuleKnobs;
use crate::stats::*;
use crate::timers::*;

/// What the send task mutates: the algorithm and the timers' handles.
pub(crate) struct QpCtl {
    pub(crate) cc: AnyCc,
    /// Dropping a handle cancels its timer and waits for its callback.
    pub(crate) timer: Option<ArcHrTimerHandle<Pacer>>,
    pub(crate) period_timer: Option<ArcHrTimerHandle<Period>>,
    /// When the pending ACC halt started (0: none pending). A halt ends at
    /// the QP's next send.
    pub(crate) halt_since_ns: u64,
    /// The gate stopped the QP on a full window; an ACK that opens it
    /// kicks the QP.
    pub(crate) window_blocked: bool,
    /// Catching up on pacing time lost to late wakes (see `pacing_time`).
    pub(crate) catchup: CatchUp,
}

/// What `rxe_cc_rs_qp_create` hands to rdma_rxe as the QP's private pointer.
///
/// The send-task hooks (`poll`, `tx_gate`, `tx_done`, `rx_ack`) take
/// `ctl`'s lock; rdma_rxe serializes them, so it is never contended. Nothing else takes
/// it: the timer callbacks use atomics, and the receive-task hook only
/// takes `np`, which nothing else does.
#[pin_data(PinnedDrop)]
pub(crate) struct QpState {
    #[pin]
    pub(crate) ctl: SpinLock<QpCtl>,
    pub(crate) pacer: Arc<Pacer>,
    pub(crate) period: Arc<Period>,
    /// The counters, owned by their debugfs directory: dropping the scope
    /// removes the directory before the counters go.
    pub(crate) stats: Pin<KBox<Scope<QpStats>>>,
    /// Where the counters go when the QP is destroyed.
    pub(crate) totals: Arc<Totals>,
    /// DCQCN's notification point, in the receive task (`rx_data`) only.
    #[pin]
    pub(crate) np: SpinLock<DcqcnNp>,
    /// `<dev>-qp<N>`, as in debugfs, for the tracepoints.
    pub(crate) name: CString,
    /// FNCC's receiver: the device's flow count (the table and the slot),
    /// and the window this QP was last counted in (under the table's lock).
    pub(crate) dev_flows: Option<(Arc<FlowTable>, usize)>,
    pub(crate) flow_mark: Atomic<u32>,
    /// The device's slot in the same table, for its wire clock
    /// (`nic_queue_pkts`); none past `MAX_DEVS` devices.
    pub(crate) nic: Option<(Arc<FlowTable>, usize)>,
}

impl QpState {
    pub(crate) fn count(&self, c: Counter, by: u64) {
        self.stats.counters.add(c, by);
    }

    /// Counts the hook's CPU in `hook_ns` until the returned guard drops.
    pub(crate) fn hook_clock(&self, now_ns: u64) -> CpuClock<'_> {
        CpuClock::start(&self.stats.counters, Counter::HookNs, now_ns)
    }

    /// Mirrors the algorithm's pacing and state into debugfs.
    pub(crate) fn publish(&self, cc: &AnyCc, now_ns: u64) {
        let p = cc.cc_ref().pacing(now_ns);
        self.stats.rate_bps.store(p.rate_bps, Relaxed);
        self.stats.next_send_ns.store(p.next_send_ns, Relaxed);
        self.stats
            .window_bytes
            .store(p.window_bytes.unwrap_or(0), Relaxed);
        self.stats.class.store(cc.state_code(), Relaxed);
    }

    /// Runs a period that ended since the last hook; called with the lock.
    /// Knob writes take effect here, at the next period.
    pub(crate) fn run_due_period(&self, ctl: &mut QpCtl, now_ns: u64) {
        if self.period.due.xchg(0, Acquire) == 0 {
            return;
        }
        let since = self.period.due_since_ns.load(Relaxed);
        self.count(Counter::PeriodRuns, 1);
        self.count(Counter::PeriodLateNs, now_ns.saturating_sub(since));
        ctl.cc.period_knobs(&ModuleKnobs);
        if let Some(p) = ctl.cc.cc_ref().timer_period_ns() {
            self.period.period_ns.store(p, Relaxed);
        }
        ctl.cc.cc().on_timer(now_ns);
        self.trace_rate(ctl, now_ns);
        // Halts start only here, at a period's end: count and trace them.
        let halts = ctl.cc.halts();
        let before = self.stats.halts.xchg(halts, Relaxed);
        if before != halts {
            let planned = ctl.cc.last_halt_ns();
            self.stats.halt_ns.fetch_add(planned, Relaxed);
            self.count(Counter::Halts, halts.saturating_sub(before));
            ctl.halt_since_ns = now_ns;
            // SAFETY: `name` is a NUL-terminated string that outlives the
            // call.
            unsafe { ffi::rxe_cc_trace_halt_start(self.name.as_char_ptr(), now_ns, planned) };
        }
        match ctl.cc.period_class() {
            Some(AccClass::Congested) => self.count(Counter::PeriodsCongested, 1),
            Some(AccClass::Undetermined) => self.count(Counter::PeriodsUndetermined, 1),
            Some(AccClass::Uncongested) => self.count(Counter::PeriodsUncongested, 1),
            Some(AccClass::Mixed) => self.count(Counter::PeriodsMixed, 1),
            Some(AccClass::NoInfo) | None => {}
        }
    }

    /// Fires the `rxe_cc_rate` tracepoint with the QP's current rate.
    pub(crate) fn trace_rate(&self, ctl: &mut QpCtl, now_ns: u64) {
        let rate = ctl.cc.cc_ref().pacing(now_ns).rate_bps;
        let state = ctl.cc.state_code();
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
    pub(crate) fn pacing_time(&self, ctl: &mut QpCtl, now_ns: u64) -> u64 {
        let catchup = match ModuleKnobs.us_ns(Knob::PacingCatchupUs) {
            0 => ctl.cc.default_catchup_ns(),
            ns => ns,
        };
        let next = ctl.cc.cc_ref().pacing(now_ns).next_send_ns;
        let (t, lost) = ctl.catchup.send_time(now_ns, next, catchup);
        if lost > 0 {
            self.count(Counter::PacerLostNs, lost);
        }
        t
    }

    /// A send ends a pending halt: traces its actual length, from the end
    /// of the period that decided it to this send.
    pub(crate) fn end_halt(&self, ctl: &mut QpCtl, now_ns: u64) {
        if ctl.halt_since_ns == 0 {
            return;
        }
        let halted = now_ns.saturating_sub(ctl.halt_since_ns);
        ctl.halt_since_ns = 0;
        self.count(Counter::HaltActualNs, halted);
        let planned = ctl.cc.last_halt_ns();
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        unsafe { ffi::rxe_cc_trace_halt_end(self.name.as_char_ptr(), now_ns, halted, planned) };
    }

    /// Notes activity, and starts the period timer if the algorithm needs
    /// one and it is not running.
    pub(crate) fn touch_period(&self, ctl: &mut QpCtl, start: bool) {
        if !start {
            // Only a running timer counts activity; the first ACK starts it.
            let _ = self
                .period
                .state
                .cmpxchg(PERIOD_IDLE, PERIOD_ACTIVE, Relaxed);
            return;
        }
        let Some(p) = ctl.cc.cc_ref().timer_period_ns() else {
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

/// One rxe device's shared state, by device name: FNCC's active flows of
/// it as a receiver, and its wire clock as a sender (`nic_queue_pkts`: when
/// its line is free, the NIC's arbiter of cc_core::cc::nic_gate).
pub(crate) struct DevFlows {
    pub(crate) name: CString,
    pub(crate) flows: ActiveFlows,
    pub(crate) nic_next_ns: u64,
}

/// Devices whose flows FNCC counts; entries stay until unload (devices are
/// few, and a name comes back with its device).
pub(crate) const MAX_DEVS: usize = 64;

/// Every device's `DevFlows`. Allocated for `MAX_DEVS` at init: entries
/// are added in process context and used from the receive task, so it is
/// never grown under the lock.
pub(crate) type FlowTable = SpinLock<KVec<DevFlows>>;

/// Module-wide state handed to the glue as its context pointer.
pub(crate) struct Context {
    pub(crate) qp_dir: Dir,
    pub(crate) totals: Arc<Totals>,
    pub(crate) flows: Arc<FlowTable>,
}

impl Context {
    /// `dev`'s slot in `flows`, created if new; None if the table is full.
    pub(crate) fn dev_slot(&self, dev: &str) -> Option<usize> {
        let owned = CString::try_from_fmt(fmt!("{}", dev)).ok()?;
        let mut t = self.flows.lock();
        if let Some(i) = t.iter().position(|d| d.name.to_str() == Ok(dev)) {
            return Some(i);
        }
        let i = t.len();
        t.push_within_capacity(DevFlows {
            name: owned,
            flows: ActiveFlows::new(),
            nic_next_ns: 0,
        })
        .ok()?;
        Some(i)
    }
}

pub(crate) fn new_qp_state(
    ctx: &Context,
    alg: AlgId,
    qp: *mut c_void,
    name: &CStr,
    dev: &CStr,
    qpn: u32,
    now_ns: u64,
) -> Result<Pin<KBox<QpState>>> {
    let name = name.to_str().map_err(|_| EINVAL)?;
    let dir_name = CString::try_from_fmt(fmt!("{}", name))?;
    let name = CString::try_from_fmt(fmt!("{}", name))?;
    let counters = Arc::new(Counters::new(), GFP_KERNEL)?;
    let stats = KBox::pin_init(
        ctx.qp_dir.scope(
            QpStats {
                alg,
                qpn,
                line_rate_mbps: ModuleKnobs.get(Knob::LineRateMbps),
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
            due_since_ns: Atomic::new(0),
            state: Atomic::new(PERIOD_STOPPED),
            period_ns: Atomic::new(0),
            stats: counters,
        }),
        GFP_KERNEL,
    )?;
    let dev = dev.to_str().map_err(|_| EINVAL)?;
    let slot = ctx.dev_slot(dev);
    let nic = slot.map(|i| (ctx.flows.clone(), i));
    let dev_flows = if alg.counts_flows() {
        if slot.is_none() {
            pr_warn!(
                "{}: more than {} devices: its ACKs carry no flow count\n",
                dev,
                MAX_DEVS
            );
        }
        slot.map(|i| (ctx.flows.clone(), i))
    } else {
        None
    };
    let cc = AnyCc::new(alg, &ModuleKnobs, now_ns);
    stats
        .rate_bps
        .store(cc.cc_ref().pacing(now_ns).rate_bps, Relaxed);
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
            np <- new_spinlock!(DcqcnNp::new(ModuleKnobs.us_ns(Knob::MinTimeBetweenCnps))),
            name,
            dev_flows,
            flow_mark: Atomic::new(0),
            nic,
        }),
        GFP_KERNEL,
    )?;
    ctx.totals.qps_created.fetch_add(1, Relaxed);
    Ok(state)
}

/// The device's arbiter (`nic_queue_pkts`), under the device table's lock
/// alone.
impl QpState {
    /// With `nic_queue_pkts` set: when the device's line is free enough for
    /// this QP to send a packet of `wire_bytes`, if later than `now_ns`.
    fn nic_free_at(&self, now_ns: u64, wire_bytes: u32) -> Option<u64> {
        let pkts = u64::from(ModuleKnobs.get(Knob::NicQueuePkts));
        if pkts == 0 {
            return None;
        }
        let queue_ns = tx_time_ns(u64::from(wire_bytes), ModuleKnobs.bps(Knob::LineRateMbps))
            .saturating_mul(pkts);
        let (table, slot) = self.nic.as_ref()?;
        let next = table.lock().get(*slot)?.nic_next_ns;
        nic_gate(next, now_ns, queue_ns)
    }

    /// With `nic_queue_pkts` set: the device's wire clock takes a packet of
    /// `wire_bytes` at the line rate.
    fn nic_sent(&self, now_ns: u64, wire_bytes: u32) {
        if ModuleKnobs.get(Knob::NicQueuePkts) == 0 {
            return;
        }
        let Some((table, slot)) = &self.nic else {
            return;
        };
        if let Some(d) = table.lock().get_mut(*slot) {
            d.nic_next_ns = advance_pacing(
                d.nic_next_ns,
                now_ns,
                wire_bytes.into(),
                ModuleKnobs.bps(Knob::LineRateMbps),
                0,
            );
        }
    }
}

/// What the hooks do; the `rxe_cc_rs_*` entry points in `rxe_cc_main.rs`
/// only turn rdma_rxe's pointers into these arguments.
impl QpState {
    /// `tx_gate`: 0 means send now, else the time the QP may send. In the
    /// second case the pacer's hrtimer is set to kick the QP at that time.
    pub(crate) fn tx_gate(&self, now_ns: u64, psn: u32, payload: u32, wire_bytes: u32) -> u64 {
        let _cpu = self.hook_clock(now_ns);
        // Read before the QP's lock: the table's lock is never taken inside it.
        let nic_free = self.nic_free_at(now_ns, wire_bytes);
        let mut ctl = self.ctl.lock();
        self.run_due_period(&mut ctl, now_ns);
        let mut next = ctl.cc.cc().pacing(now_ns).next_send_ns;
        if let Some(t) = nic_free.filter(|t| *t > next) {
            next = t;
            self.count(Counter::TxNicHeld, 1);
        }
        if next <= now_ns {
            if !ctl.cc.window_full(psn, payload) {
                return 0;
            }
            // The ACK that opens the window kicks the QP; the timer is the
            // fallback should none come (a lost packet, until rxe retries).
            ctl.window_blocked = true;
            // Sends that wait on ACKs have no pacing time to catch up on.
            ctl.catchup.forget();
            self.count(Counter::TxWindowed, 1);
            next = now_ns.saturating_add(ModuleKnobs.us_ns(Knob::HpccTUs).max(1));
        } else {
            ctl.catchup.hold();
            self.count(Counter::TxGated, 1);
        }
        // A timer already set for `next` or earlier will do: when it fires,
        // the gate runs again and re-arms if the QP must still wait.
        let armed = self.pacer.armed_until.load(Relaxed);
        if armed == 0 || armed > next {
            // Cancel any later timer before setting this one.
            drop(ctl.timer.take());
            self.pacer.armed_until.store(next, Relaxed);
            let delay =
                Delta::from_nanos(i64::try_from(next.saturating_sub(now_ns)).unwrap_or(i64::MAX));
            ctl.timer = Some(self.pacer.clone().start(delay));
        }
        next
    }

    /// `poll`: the send task's first call after a kick, wherever the
    /// requester then stops (rxe's PSN window or in-flight skbs stop it
    /// before `tx_gate`). A period that ended runs here, not at the next
    /// packet or ACK.
    pub(crate) fn poll(&self, now_ns: u64) {
        let _cpu = self.hook_clock(now_ns);
        let mut ctl = self.ctl.lock();
        self.run_due_period(&mut ctl, now_ns);
        self.publish(&ctl.cc, now_ns);
    }

    /// `tx_done`: a request of `psns` PSNs from `psn` (more than one only
    /// for a READ, whose `payload` is what its responses carry).
    pub(crate) fn tx_done(&self, now_ns: u64, psn: u32, psns: u32, payload: u32, wire_bytes: u32) {
        let _cpu = self.hook_clock(now_ns);
        self.nic_sent(now_ns, wire_bytes);
        let mut ctl = self.ctl.lock();
        // This packet passed the gate, so a halt decided earlier is over; one
        // that the period below decides starts after it.
        self.end_halt(&mut ctl, now_ns);
        let first = self.stats.counters.get(Counter::TxPackets) == 0;
        self.run_due_period(&mut ctl, now_ns);
        let pace_ns = self.pacing_time(&mut ctl, now_ns);
        ctl.cc.send_knobs(&ModuleKnobs);
        let last_psn = psn_add(psn, psns.saturating_sub(1));
        ctl.cc.cc().on_send(pace_ns, last_psn, payload);
        // Caught up once the next send must wait for its time again.
        let next = ctl.cc.cc().pacing(now_ns).next_send_ns;
        ctl.catchup.sent(now_ns, next);
        if first {
            // The flow's start, for a rate time series.
            self.trace_rate(&mut ctl, now_ns);
        }
        self.touch_period(&mut ctl, false);
        self.publish(&ctl.cc, now_ns);
        self.count(Counter::TxPackets, 1);
        self.count(Counter::TxBytes, u64::from(payload));
        self.count(Counter::TxWireBytes, u64::from(wire_bytes));
    }

    /// `rx_ack`, with the response's unpacked INT shim if it had one.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rx_ack(
        &self,
        now_ns: u64,
        psn: u32,
        acked_psns: u32,
        acked_bytes: u32,
        kind: u8,
        echo: u8,
        ce_pkts: u8,
        shim: Option<&IntShim>,
    ) {
        let _cpu = self.hook_clock(now_ns);
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
            self.count(Counter::IntAcks, 1);
            self.count(Counter::IntHops, n as u64);
            self.count(Counter::IntOverflow, u64::from(sh.overflow));
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
            let mut ctl = self.ctl.lock();
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
            self.run_due_period(&mut ctl, now_ns);
            if kind == ACK_KIND_CNP {
                ctl.cc.cc().on_cnp(now_ns);
                self.trace_rate(&mut ctl, now_ns);
            } else {
                let before = ctl.cc.reactions();
                ctl.cc.cc().on_ack(&ack);
                let new = ctl.cc.reactions().since(&before);
                self.count(Counter::LhcsJumps, new.lhcs_jumps);
                self.count(Counter::RttSamples, new.rtt_samples);
                self.count(Counter::CcCuts, new.cuts);
            }
            if ctl.window_blocked && ctl.cc.window_open() {
                ctl.window_blocked = false;
                // SAFETY: the QP outlives its CC state, whose hooks these are.
                unsafe { ffi::rxe_cc_glue_kick(self.pacer.qp.0) };
            } else if !ctl.window_blocked {
                // The pacer's timer is set for the send time the gate saw;
                // an ACK that brings it forward (a pacing delay worked out
                // from a larger window) must not leave the QP waiting for the
                // old one. The kick runs the gate, which re-arms for the new
                // time.
                let armed = self.pacer.armed_until.load(Relaxed);
                if armed != 0 && ctl.cc.cc_ref().pacing(now_ns).next_send_ns < armed {
                    self.count(Counter::PacerRekicks, 1);
                    // SAFETY: as above.
                    unsafe { ffi::rxe_cc_glue_kick(self.pacer.qp.0) };
                }
            }
            // The period timer starts at the first ACK.
            self.touch_period(&mut ctl, true);
            self.publish(&ctl.cc, now_ns);
        }
        let c = match kind {
            ACK_KIND_NAK => Counter::Naks,
            ACK_KIND_CNP => Counter::Cnps,
            _ => Counter::Acks,
        };
        self.count(c, 1);
        self.count(Counter::AckedBytes, u64::from(acked_bytes));
        // CE-marked packets the ACK answers: its count, or 1 from a
        // responder that only set FECN.
        let ce = if echo & ECHO_CE == 0 {
            0
        } else {
            ce_pkts.max(1)
        };
        self.count(Counter::EchoCe, u64::from(ce));
        self.count(Counter::EchoUe, u64::from((echo & ECHO_UE) >> 1));
    }

    /// `rx_data`: the echo bits for the next ACK, and FNCC's N for its shim
    /// (None for other algorithms). The responder echoes the marks its
    /// requests carry, whatever the algorithm: CE always, UE when senders
    /// use ECT(1) (`data_ecn=1`; the testbed's hosts share one kernel and
    /// so one setting). A DCQCN QP is also a notification point: a
    /// CE-marked request earns the requester a CNP, at most one per
    /// `min_time_between_cnps`.
    pub(crate) fn rx_data(
        &self,
        now_ns: u64,
        payload: u32,
        ecn: u8,
        int_flows: &mut Option<u16>,
    ) -> u8 {
        let _cpu = self.hook_clock(now_ns);
        self.count(Counter::RxPackets, 1);
        self.count(Counter::RxBytes, u64::from(payload));
        if let Some((table, slot)) = &self.dev_flows {
            // FNCC's receiver: N, over windows of T, for this QP's next ACK.
            let mut t = table.lock();
            if let Some(d) = t.get_mut(*slot) {
                let mut mark = self.flow_mark.load(Relaxed);
                let n = d
                    .flows
                    .on_data(now_ns, ModuleKnobs.us_ns(Knob::HpccTUs), &mut mark);
                self.flow_mark.store(mark, Relaxed);
                *int_flows = Some(n);
            }
        }
        if ecn == ECN_CE {
            self.count(Counter::RxEcnCe, 1);
            if self.stats.alg.sends_cnps() {
                let mut np = self.np.lock();
                np.interval_ns = ModuleKnobs.us_ns(Knob::MinTimeBetweenCnps);
                if np.on_ce(now_ns) {
                    drop(np);
                    self.count(Counter::CnpsSent, 1);
                    return ECHO_CE | SEND_CNP;
                }
            }
            return ECHO_CE;
        }
        // UE is 0b10, which an unmarked ECT(0) packet also reads as: count it
        // only when this kernel's senders use ECT(1), as `data_ecn=1` or ACC's
        // default (`data_ecn=0` under cc=acc) make them.
        let data_ecn = ModuleKnobs.get(Knob::DataEcn);
        if ecn == ECN_UE
            && (data_ecn == ECN_ECT1 || (data_ecn == 0 && self.stats.alg.ect1_by_default()))
        {
            self.count(Counter::RxEcnUe, 1);
            return ECHO_UE;
        }
        0
    }
}
