//! Library behind the `rxecc` command: report parsing and statistics.

pub mod perftest;
pub mod stats;
pub mod switch;
