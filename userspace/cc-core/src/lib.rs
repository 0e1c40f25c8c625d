//! rxe-cc's congestion-control algorithms, compiled from the kernel
//! module's own source files (`rxe_cc/cc_core/`), so that what cargo tests
//! is exactly what runs in the kernel.
#![no_std]

#[path = "../../../rxe_cc/cc_core/mod.rs"]
pub mod cc_core;

pub use cc_core::*;
