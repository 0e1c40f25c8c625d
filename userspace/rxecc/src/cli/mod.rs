//! One module per subcommand: its arguments and what it does.

pub mod capture;
pub mod check;
pub mod deadlock;
pub mod experiment;
pub mod fct;
pub mod flows;
pub mod mark;
pub mod model;
pub mod modules;
pub mod paper;
pub mod perftest;
pub mod port;
pub mod record;
pub mod report;
pub mod run;
pub mod spread;
pub mod stats;
pub mod testbed;
pub mod workload;
