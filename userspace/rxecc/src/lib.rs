//! Library behind the `rxecc` command, a folder per part of the testbed:
//! `config` (topology, experiment and flow files, checked), `testbed`
//! (bring-up, recording, statistics), `switch` (the emulated switch's
//! programs and their settings), `run` (experiments and paper recipes)
//! and `report` (metrics, tables, plots, the model); `clock`, `netlink`
//! and `modules` (the kernel modules, loaded in one place) serve them all.

pub mod clock;
pub mod config;
pub mod modules;
pub mod netlink;
pub mod report;
pub mod run;
pub mod switch;
pub mod testbed;
