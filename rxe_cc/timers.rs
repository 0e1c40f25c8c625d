// SPDX-License-Identifier: GPL-2.0

//! A QP's hrtimers: the pacer and the period timer. Both only kick the
//! QP's send task; the algorithm runs there.

use core::ffi::c_void;
use kernel::{
    impl_has_hr_timer,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed, Release},
        Arc, ArcBorrow,
    },
    time::{
        hrtimer::{HrTimer, HrTimerCallback, HrTimerCallbackContext, HrTimerRestart, RelativeMode},
        Delta, Monotonic,
    },
};

use crate::ffi;
use crate::stats::{Counter, Counters, CpuClock};

/// rdma_rxe's opaque handle for a QP.
pub(crate) struct QpHandle(pub(crate) *mut c_void);

// SAFETY: the handle is only passed back to `rxe_cc_kick`, which may be
// called from any context.
unsafe impl Send for QpHandle {}
// SAFETY: as above; the pointer is never dereferenced in Rust.
unsafe impl Sync for QpHandle {}

/// A QP's pacing timer. It only kicks the QP's send task: all algorithm
/// state changes happen in the task, never in the timer (hardirq) context.
#[pin_data]
pub(crate) struct Pacer {
    #[pin]
    pub(crate) timer: HrTimer<Pacer>,
    pub(crate) qp: QpHandle,
    /// The time the timer is set for, 0 when it is not pending.
    pub(crate) armed_until: Atomic<u64>,
    /// Timer fires and their total lateness, for the QP's debugfs.
    pub(crate) stats: Arc<Counters>,
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
/// QP, leaving `due` set; the send task's `poll`, which the kick brings
/// before anything can stop the requester, runs the algorithm's
/// `on_timer`. It starts at the first ACK and stops after a period with no
/// ACK and no send, so an idle QP has no timer running.
#[pin_data]
pub(crate) struct Period {
    #[pin]
    pub(crate) timer: HrTimer<Period>,
    pub(crate) qp: QpHandle,
    /// A period ended and the algorithm has not seen it yet.
    pub(crate) due: Atomic<u32>,
    /// The nominal end of the oldest period not yet run (valid while `due`).
    pub(crate) due_since_ns: Atomic<u64>,
    /// `PERIOD_STOPPED`, `PERIOD_IDLE` or `PERIOD_ACTIVE`: one atomic, so
    /// that a hook marking the QP active and the callback deciding to stop
    /// cannot both miss the other (each is one read-modify-write of it).
    pub(crate) state: Atomic<u32>,
    pub(crate) period_ns: Atomic<u64>,
    pub(crate) stats: Arc<Counters>,
}

/// The period timer is not set (nor will it restart).
pub(crate) const PERIOD_STOPPED: u32 = 0;
/// It is set, and the QP has not sent or been ACKed since it last fired.
pub(crate) const PERIOD_IDLE: u32 = 1;
/// It is set, and the QP has sent or been ACKed since it last fired.
pub(crate) const PERIOD_ACTIVE: u32 = 2;

impl HrTimerCallback for Period {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // SAFETY: reading the clock has no preconditions.
        let start = unsafe { ffi::rxe_cc_glue_now_ns() };
        let _cpu = CpuClock::start(&this.stats, Counter::TimerNs, start);
        // The timer's own lateness counts too: the period ended at expiry.
        let late = u64::try_from(this.timer.expires().elapsed().as_nanos()).unwrap_or(0);
        if this.due.load(Relaxed) == 0 {
            this.due_since_ns.store(start.saturating_sub(late), Relaxed);
        }
        // Release: a hook that sees `due` sees `due_since_ns`.
        this.due.store(1, Release);
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
                    if this
                        .state
                        .cmpxchg(PERIOD_IDLE, PERIOD_STOPPED, Relaxed)
                        .is_ok()
                    {
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
