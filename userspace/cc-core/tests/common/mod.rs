//! Shared helpers for the cc-core tests.
#![allow(dead_code)]

use cc_core::cc::{AckEvent, IntHop, IntInfo, IntWidths, LinkParams};
use cc_core::fixed::Q32;

pub const GBPS: u64 = 1_000_000_000;
pub const US: u64 = 1_000;

pub fn link(gbps: u64) -> LinkParams {
    LinkParams {
        line_rate_bps: gbps * GBPS,
        mtu: 4096,
    }
}

pub fn ack(now_ns: u64, acked_bytes: u32, ce: bool, ue: bool) -> AckEvent<'static> {
    AckEvent {
        now_ns,
        psn: 0,
        acked_bytes,
        acked_psns: 1,
        ce,
        ce_pkts: u32::from(ce),
        ue,
        nak: false,
        int: None,
    }
}

pub fn int<'a>(hops: &'a [IntHop], n_flows: u16) -> IntInfo<'a> {
    IntInfo {
        hops,
        path_id: 7,
        widths: IntWidths::FULL,
        n_flows,
        port_flows: n_flows,
        qlen_rate: 0,
        lu: Q32::ZERO,
    }
}

/// `a` and `b` within `tol` of each other (relative).
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-9)
}
