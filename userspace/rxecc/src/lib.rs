//! Library behind the `rxecc` command, a folder per part of the testbed:
//! `config` (topology, experiment and flow files, checked), `testbed`
//! (bring-up, recording, statistics), `switch` (the emulated switch's
//! programs and their settings), `run` (experiments and paper recipes)
//! and `report` (metrics, tables, plots, the model); `clock` and `netlink`
//! serve them all.

pub mod clock;
pub mod config;
pub mod netlink;
pub mod report;
pub mod run;
pub mod switch;
pub mod testbed;
