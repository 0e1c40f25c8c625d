// SPDX-License-Identifier: GPL-2.0

//! What rxe_cc shares with `glue.c` and rdma_rxe's hook ABI: the unpacked
//! INT shim, response kinds, echo bits and ECN codepoints (algorithm ids
//! and knobs come from `knobs.h`, which is generated).

use crate::cc_core::{cc::IntWidths, hpcc::MAX_HOPS};

/// HPCC's INT: records for every hop, written by the emulated switch's
/// ports with 32-bit times and byte counts.
pub(crate) const INT_WIDTHS: IntWidths = IntWidths {
    ts_bits: 32,
    tx_bits: 32,
};

/// One hop's INT record as the glue unpacks it (`struct rxe_cc_int_rec`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IntRec {
    pub(crate) b_bps: u64,
    pub(crate) ts_ns: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) qlen: u64,
}

/// An ACK's INT shim as the glue unpacks it
/// (`struct rxe_cc_int_shim_info`).
#[repr(C)]
pub struct IntShim {
    pub(crate) hop: [IntRec; MAX_HOPS],
    pub(crate) kind: u32,
    pub(crate) nhops: u32,
    pub(crate) overflow: u32,
    pub(crate) n_flows: u32,
    pub(crate) port_flows: u32,
    pub(crate) lu_permille: u32,
    pub(crate) qlen_rate: i64,
}

// What Rust and C share, checked at build time on both sides against the
// same numbers (`glue.c` asserts them too), so that neither can drift. The
// algorithms and knobs need no such check: `knobs.h` is generated.
const _: () = {
    assert!(MAX_HOPS == 5);
    assert!(core::mem::size_of::<IntRec>() == 32);
    assert!(core::mem::offset_of!(IntRec, qlen) == 24);
    assert!(core::mem::size_of::<IntShim>() == 192);
    assert!(core::mem::offset_of!(IntShim, kind) == 160);
    assert!(core::mem::offset_of!(IntShim, lu_permille) == 180);
    assert!(core::mem::offset_of!(IntShim, qlen_rate) == 184);
};

/// Response kinds, as `enum rxe_cc_ack_kind`.
pub(crate) const ACK_KIND_NAK: u8 = 1;
pub(crate) const ACK_KIND_CNP: u8 = 2;
/// Echo bits, as `RXE_CC_ECHO_*`.
pub(crate) const ECHO_CE: u8 = 0x1;
pub(crate) const ECHO_UE: u8 = 0x2;
/// From `rx_data`: have rdma_rxe send a CNP, as `RXE_CC_SEND_CNP`.
pub(crate) const SEND_CNP: u8 = 0x4;
/// IP ECN codepoints. TCD marks UE as 0b10, so senders that want UE marks
/// send ECT(1) (0b01): an unmarked ECT(0) packet would read as UE.
/// `data_ecn`'s value for ECT(1) is 1.
pub(crate) const ECN_CE: u8 = 0b11;
pub(crate) const ECN_UE: u8 = 0b10;
pub(crate) const ECN_ECT1: u32 = 0b01;
