//! Library behind the `rxecc` command: report parsing, statistics, the
//! switch's eBPF programs and topologies.

pub mod check;
pub mod clock;
pub mod deadlock;
pub mod experiment;
pub mod fct;
pub mod model;
pub mod netlink;
pub mod paper;
pub mod perftest;
pub mod plot;
pub mod portsum;
pub mod record;
pub mod report;
pub mod selftest;
pub mod spread;
pub mod stats;
pub mod switch;
pub mod topology;
pub mod workload;
