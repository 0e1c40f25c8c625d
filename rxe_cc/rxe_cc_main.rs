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
use core::pin::Pin;
use kernel::ffi::c_char;
use kernel::{
    debugfs::{Dir, File},
    new_spinlock,
    prelude::*,
    sync::{atomic::Atomic, Arc},
    types::ForeignOwnable,
};

mod abi;
pub mod cc_core;
mod knobs;
mod qp;
mod stats;
mod timers;

/// The INT shim as `glue.c` hands it to `rxe_cc_rs_rx_ack`.
pub use abi::{IntRec, IntShim};
use cc_core::alg::AlgId;
use knobs::ModuleKnobs;
use qp::{new_qp_state, Context, QpState, MAX_DEVS};
use stats::{Counters, Totals};

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
        let name = AlgId::from_id(alg).map_or("?", AlgId::name);
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
    let Some(alg) = AlgId::from_id(unsafe { ffi::rxe_cc_param_alg() }) else {
        pr_warn!("qp {}: unknown cc; it runs as stock rxe\n", qpn);
        return core::ptr::null_mut();
    };
    let wire = alg.wire(&ModuleKnobs);
    // SAFETY: the glue passes pointers into the `rxe_cc_qp_info` it is
    // filling in, valid and exclusive for this call. Explicit knob
    // settings (already there) win.
    unsafe {
        if *data_ecn == 0 {
            *data_ecn = wire.data_ecn;
        }
        if *ack_every == 0 {
            *ack_every = wire.ack_every;
        }
        if let Some((kind, hops)) = wire.int_shim {
            *int_kind = kind;
            *int_hops = hops;
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

/// `tx_gate` hook: 0 means send now, else the time the QP may send.
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
    wire_bytes: u32,
) -> u64 {
    // SAFETY: by the function's contract.
    unsafe { qp_state(priv_) }.tx_gate(now_ns, psn, payload, wire_bytes)
}

/// `tx_done` hook.
///
/// # Safety
///
/// As for `rxe_cc_rs_tx_gate`.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_tx_done(
    priv_: *mut c_void,
    now_ns: u64,
    psn: u32,
    psns: u32,
    payload: u32,
    wire_bytes: u32,
) {
    // SAFETY: by the function's contract.
    unsafe { qp_state(priv_) }.tx_done(now_ns, psn, psns, payload, wire_bytes)
}

/// `poll` hook: the send task's first call after a kick.
///
/// # Safety
///
/// As for `rxe_cc_rs_tx_gate`.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_poll(priv_: *mut c_void, now_ns: u64) {
    // SAFETY: by the function's contract.
    unsafe { qp_state(priv_) }.poll(now_ns)
}

/// `rx_ack` hook.
///
/// # Safety
///
/// `priv_` as for `rxe_cc_rs_tx_gate`, and `shim` is NULL or an unpacked
/// shim valid for the call.
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
    // SAFETY: by the function's contract.
    let (qp, shim) = unsafe { (qp_state(priv_), shim.as_ref()) };
    qp.rx_ack(
        now_ns,
        psn,
        acked_psns,
        acked_bytes,
        kind,
        echo,
        ce_pkts,
        shim,
    )
}

/// `rx_data` hook: the echo bits for the next ACK (see `QpState::rx_data`).
///
/// # Safety
///
/// `priv_` as for `rxe_cc_rs_tx_gate`, and `int_flows` points to the
/// glue's `struct rxe_cc_rx` field, valid and unaliased for the call.
#[no_mangle]
pub unsafe extern "C" fn rxe_cc_rs_rx_data(
    priv_: *mut c_void,
    now_ns: u64,
    _psn: u32,
    payload: u32,
    ecn: u8,
    int_flows: *mut u16,
) -> u8 {
    let mut n = None;
    // SAFETY: by the function's contract.
    let echo = unsafe { qp_state(priv_) }.rx_data(now_ns, payload, ecn, &mut n);
    if let Some(n) = n {
        // SAFETY: by the function's contract.
        unsafe { *int_flows = n };
    }
    echo
}
