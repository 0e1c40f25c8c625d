//! Run an experiment file (docs/workloads.md) in the testbed guest:
//! every algorithm on the same flows, and the FCT slowdown table.

use anyhow::Result;
use clap::Args as ClapArgs;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    pub experiment: PathBuf,
    /// Results directory.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Only these runs (labels), in the file's order.
    #[arg(long, value_delimiter = ',', value_name = "LABEL,...")]
    pub runs: Option<Vec<String>>,
    /// The verbs operation of every flow, instead of the file's `op`.
    #[arg(long, value_parser = ["write", "send", "read"])]
    pub op: Option<String>,
    /// Seconds after time 0 before an unfinished run is given up,
    /// instead of the file's `timeout_s` (a slower machine or kernel).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub timeout_s: Option<u64>,
    /// Run every run this many times (labels <run>-1, <run>-2, ...),
    /// instead of the file's `repetitions`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repetitions: Option<u32>,
    /// QPs per sender of an incast workload, instead of the file's
    /// `qps`: each sender's bytes are split over them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub qps: Option<u32>,
    /// Fail if the runs made miss one of the file's `[[expect]]` entries
    /// (they are judged and printed either way).
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        experiment,
        out,
        runs,
        op,
        timeout_s,
        repetitions,
        qps,
        check,
    } = args;
    rxecc::run::experiment::run(
        &experiment,
        &out,
        &rxecc::run::experiment::Overrides {
            runs,
            op,
            timeout_s,
            repetitions,
            qps,
            check,
        },
    )?;
    Ok(())
}
