//! Run a paper recipe (testbed/experiments/paper/, docs/experiments.md)
//! in the testbed guest, or judge runs already made, and print the
//! paper's claims against the testbed's numbers: met or missed.

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::run::paper;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    pub recipe: PathBuf,
    /// Results directory (claims.txt, claims.json, and the runs).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Judge the runs in this `rxecc run` results directory instead of
    /// running them (its report.json and summary.json). Given more
    /// than once, each directory is one repetition (its runs labelled
    /// <run>-1, <run>-2, ... in order), as separate boots or bench
    /// rounds make them.
    #[arg(long, value_name = "DIR")]
    pub from: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let Args { recipe, out, from } = args;
    paper::run(&recipe, &out, &from)?;
    Ok(())
}
