// SPDX-License-Identifier: GPL-2.0

//! The congestion-control algorithms of rxe-cc, as pure code.
//!
//! Everything under `cc_core/` uses only `core`: no allocation, no floating
//! point, no clock (time is passed in, in nanoseconds), and no arithmetic
//! that can overflow or panic. The kernel module (`rxe_cc_main.rs`) and the
//! userspace crate `userspace/cc-core` both compile these very files, so the
//! code that cargo tests is the code that runs in the kernel.

pub mod acc;
pub mod alg;
pub mod cc;
pub mod dcqcn;
pub mod dctcp;
pub mod fixed;
pub mod fixed_rate;
pub mod flows;
pub mod fncc;
pub mod hpcc;
pub mod icc;
pub mod knobs;
pub mod none;
pub mod psn;
pub mod rtt;
pub mod swift;
pub mod timely;
