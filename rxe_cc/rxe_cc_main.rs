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
use kernel::ffi::c_char;
use core::fmt;
use kernel::{
    debugfs::{Dir, File, Scope},
    prelude::*,
    str::CString,
    sync::{
        atomic::{Atomic, Relaxed},
        Arc,
    },
};

pub mod cc_core;

use cc_core::{
    cc::{CongestionControl, LinkParams},
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

    extern "C" {
        pub(crate) fn rxe_cc_glue_register(ctx: *mut c_void) -> i32;
        pub(crate) fn rxe_cc_glue_unregister();
        #[allow(dead_code)] // First used by the pacing algorithms.
        pub(crate) fn rxe_cc_glue_kick(qp: *mut c_void);
        pub(crate) fn rxe_cc_param_alg() -> u32;
        pub(crate) fn rxe_cc_param_line_rate_mbps() -> u32;
    }
}

/// The congestion-control algorithm a QP runs; ids match `enum rxe_cc_alg`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    /// Pass-through: count, never delay.
    None,
}

impl Algorithm {
    fn from_id(id: u32) -> Option<Self> {
        match id {
            0 => Some(Self::None),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
        }
    }
}

/// Response kinds, as `enum rxe_cc_ack_kind`.
const ACK_KIND_NAK: u8 = 1;
const ACK_KIND_CNP: u8 = 2;
/// Echo bits, as `RXE_CC_ECHO_*`.
const ECHO_CE: u8 = 0x1;
const ECHO_UE: u8 = 0x2;
/// The IP ECN codepoint "congestion experienced".
const ECN_CE: u8 = 0b11;

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
}

const NR_COUNTERS: usize = 13;
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
    counters: Counters,
}

impl fmt::Debug for QpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cc {}", self.alg.name())?;
        writeln!(f, "qpn {}", self.qpn)?;
        writeln!(f, "state {}", "pass-through")?;
        writeln!(f, "line_rate_mbps {}", self.line_rate_mbps)?;
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
}

impl QpCc {
    fn new(alg: Algorithm, link: &LinkParams) -> Self {
        match alg {
            Algorithm::None => Self::None(NoCc::new(link)),
        }
    }

    fn get(&self) -> &dyn CongestionControl {
        match self {
            Self::None(cc) => cc,
        }
    }
}

/// What `rxe_cc_rs_qp_create` hands to rdma_rxe as the QP's private pointer.
struct QpState {
    /// The algorithm's state, from `cc_core`.
    cc: QpCc,
    /// rdma_rxe's handle for this QP, for `rxe_cc_glue_kick`.
    #[allow(dead_code)] // First used by the pacing algorithms.
    handle: *mut c_void,
    /// The counters, owned by their debugfs directory: dropping the scope
    /// removes the directory before the counters go.
    stats: Pin<KBox<Scope<QpStats>>>,
    /// Where the counters go when the QP is destroyed.
    totals: Arc<Totals>,
}

impl QpState {
    fn count(&self, c: Counter, by: u64) {
        self.stats.counters.add(c, by);
    }
}

impl Drop for QpState {
    fn drop(&mut self) {
        self.totals.counters.add_all(&self.stats.counters);
        self.totals.qps_destroyed.fetch_add(1, Relaxed);
    }
}

// SAFETY: `handle` is only passed back to rdma_rxe, whose `rxe_cc_kick` may
// be called from any context; everything else in `QpState` is `Sync`.
unsafe impl Send for QpState {}
// SAFETY: as above; shared access only reads `handle` and uses atomics.
unsafe impl Sync for QpState {}

/// Module-wide state handed to the glue as its context pointer.
struct Context {
    qp_dir: Dir,
    totals: Arc<Totals>,
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
        let totals_file = KBox::pin_init(root.read_only_file(c"totals", totals.clone()), GFP_KERNEL)?;
        let ctx = KBox::new(
            Context {
                qp_dir: root.subdir(c"qps"),
                totals,
            },
            GFP_KERNEL,
        )?;
        let ctx_ptr = core::ptr::from_ref::<Context>(&ctx).cast_mut().cast::<c_void>();
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
/// `rxe_cc_rs_qp_destroy` yet; rdma_rxe guarantees this for every hook.
unsafe fn qp_state<'a>(priv_: *mut c_void) -> &'a QpState {
    // SAFETY: by the function's contract `priv_` is a live `QpState`.
    unsafe { &*priv_.cast::<QpState>() }
}

fn new_qp_state(ctx: &Context, qp: *mut c_void, name: &CStr, qpn: u32, now_ns: u64) -> Result<KBox<QpState>> {
    // SAFETY: reading a parameter has no preconditions.
    let alg = Algorithm::from_id(unsafe { ffi::rxe_cc_param_alg() }).ok_or(EINVAL)?;
    // SAFETY: as above.
    let rate = unsafe { ffi::rxe_cc_param_line_rate_mbps() };
    let name = CString::try_from_fmt(fmt!("{}", name.to_str().map_err(|_| EINVAL)?))?;
    let stats = KBox::pin_init(
        ctx.qp_dir.scope(
            QpStats {
                alg,
                qpn,
                line_rate_mbps: rate,
                created_ns: now_ns,
                counters: Counters::new(),
            },
            &name,
            |stats, dir| dir.read_only_file(c"stats", stats),
        ),
        GFP_KERNEL,
    )?;
    let link = LinkParams {
        line_rate_bps: u64::from(rate).saturating_mul(1_000_000),
        mtu: 4096,
        base_rtt_ns: 50_000,
    };
    let state = KBox::new(
        QpState {
            cc: QpCc::new(alg, &link),
            handle: qp,
            stats,
            totals: ctx.totals.clone(),
        },
        GFP_KERNEL,
    )?;
    ctx.totals.qps_created.fetch_add(1, Relaxed);
    Ok(state)
}

/// `qp_create` hook: returns the QP's state, or NULL to leave it alone.
#[no_mangle]
pub extern "C" fn rxe_cc_rs_qp_create(
    ctx: *mut c_void,
    qp: *mut c_void,
    name: *const c_char,
    qpn: u32,
    now_ns: u64,
) -> *mut c_void {
    // SAFETY: `ctx` is the `Context` given to `rxe_cc_glue_register`, alive
    // until unregistration, which cannot overlap a create.
    let ctx = unsafe { &*ctx.cast::<Context>() };
    // SAFETY: the glue passes a NUL-terminated name valid for this call.
    let name = unsafe { CStr::from_char_ptr(name) };
    match new_qp_state(ctx, qp, name, qpn, now_ns) {
        Ok(state) => KBox::into_raw(state).cast::<c_void>(),
        Err(e) => {
            pr_warn!("qp {}: no CC state ({:?}); it runs as stock rxe\n", qpn, e);
            core::ptr::null_mut()
        }
    }
}

/// `qp_destroy` hook.
#[no_mangle]
pub extern "C" fn rxe_cc_rs_qp_destroy(priv_: *mut c_void) {
    // SAFETY: `priv_` came from `KBox::into_raw` in `rxe_cc_rs_qp_create`,
    // and rdma_rxe calls destroy exactly once, after the last hook.
    drop(unsafe { KBox::from_raw(priv_.cast::<QpState>()) });
}

/// `tx_gate` hook: 0 means send now, else the time the QP may send.
#[no_mangle]
pub extern "C" fn rxe_cc_rs_tx_gate(
    priv_: *mut c_void,
    now_ns: u64,
    _psn: u32,
    _payload: u32,
    _wire_bytes: u32,
) -> u64 {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let next = qp.cc.get().pacing(now_ns).next_send_ns;
    if next <= now_ns {
        return 0;
    }
    qp.count(Counter::TxGated, 1);
    next
}

/// `tx_done` hook.
#[no_mangle]
pub extern "C" fn rxe_cc_rs_tx_done(
    priv_: *mut c_void,
    _now_ns: u64,
    _psn: u32,
    payload: u32,
    wire_bytes: u32,
) {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    qp.count(Counter::TxPackets, 1);
    qp.count(Counter::TxBytes, u64::from(payload));
    qp.count(Counter::TxWireBytes, u64::from(wire_bytes));
}

/// `rx_ack` hook.
#[no_mangle]
pub extern "C" fn rxe_cc_rs_rx_ack(
    priv_: *mut c_void,
    _now_ns: u64,
    _psn: u32,
    _acked_psns: u32,
    acked_bytes: u32,
    kind: u8,
    echo: u8,
) {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    let c = match kind {
        ACK_KIND_NAK => Counter::Naks,
        ACK_KIND_CNP => Counter::Cnps,
        _ => Counter::Acks,
    };
    qp.count(c, 1);
    qp.count(Counter::AckedBytes, u64::from(acked_bytes));
    qp.count(Counter::EchoCe, u64::from(echo & ECHO_CE));
    qp.count(Counter::EchoUe, u64::from((echo & ECHO_UE) >> 1));
}

/// `rx_data` hook: returns the echo bits for the next ACK (none for `none`).
#[no_mangle]
pub extern "C" fn rxe_cc_rs_rx_data(
    priv_: *mut c_void,
    _now_ns: u64,
    _psn: u32,
    payload: u32,
    ecn: u8,
) -> u8 {
    // SAFETY: called by rdma_rxe between create and destroy.
    let qp = unsafe { qp_state(priv_) };
    qp.count(Counter::RxPackets, 1);
    qp.count(Counter::RxBytes, u64::from(payload));
    if ecn == ECN_CE {
        qp.count(Counter::RxEcnCe, 1);
    }
    0
}
