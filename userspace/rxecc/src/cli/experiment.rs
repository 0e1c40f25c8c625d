//! What one run of an experiment file sets, for scripts that drive
//! their own traffic with the same settings.

use anyhow::Result;
use clap::Subcommand;
use rxecc::config::experiment;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum Cmd {
    /// Print the topology a run brings up: the experiment's and the run's
    /// switch settings and link overrides merged in.
    Topology { experiment: PathBuf, run: String },
    /// Print a run's rxe_cc parameters as `name=value` words (cc first),
    /// for insmod.
    Knobs { experiment: PathBuf, run: String },
    /// Print a value of the (checked) experiment file by its dotted key,
    /// e.g. `report.capacity_mbps`; an array as space-separated words.
    Get { experiment: PathBuf, key: String },
    /// Print the fastest link of the topology a run brings up, Mb/s (the
    /// ring's C).
    Rate { experiment: PathBuf, run: String },
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Topology { experiment, run } => {
            print!("{}", experiment::run_topology(&experiment, &run)?)
        }
        Cmd::Knobs { experiment, run } => {
            println!("{}", experiment::run_knobs(&experiment, &run)?.join(" "))
        }
        Cmd::Get { experiment, key } => {
            println!("{}", experiment::get(&experiment, &key)?)
        }
        Cmd::Rate { experiment, run } => {
            println!("{}", experiment::run_rate_mbps(&experiment, &run)?)
        }
    }
    Ok(())
}
