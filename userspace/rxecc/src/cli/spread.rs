//! Run-to-run spread of repeated experiments: per run and metric,
//! the median and range of each group's report.json files, groups
//! side by side (tests/repro.sh: the demo's incast in separate boots
//! under each guest clock).

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::report::spread;

#[derive(ClapArgs)]
pub struct Args {
    /// GROUP=report.json, once per repetition; groups in first-seen
    /// order.
    #[arg(required = true, value_name = "GROUP=FILE")]
    pub reports: Vec<String>,
    /// One group only, as a row per run and a column per metric
    /// (medians; the bench's rounds).
    #[arg(long)]
    pub rows: bool,
}

pub fn run(args: Args) -> Result<()> {
    let Args { reports, rows } = args;
    let groups = spread::read(&reports)?;
    if rows {
        anyhow::ensure!(
            groups.len() == 1,
            "--rows: one group (GROUP=FILE with one GROUP)"
        );
        print!("{}", spread::rows(&groups[0].1));
    } else {
        print!("{}", spread::table(&groups));
    }
    Ok(())
}
