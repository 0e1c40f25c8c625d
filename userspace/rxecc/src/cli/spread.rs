//! Run-to-run spread of repeated experiments: per run and metric,
//! the median and range of each group's report.json files, groups
//! side by side (tests/repro.sh: the demo's incast in separate boots
//! under each guest clock); or of rows a script measured (`--measured`,
//! the bench's parts that drive perftest themselves).

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use rxecc::report::spread;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    /// GROUP=report.json, once per repetition; groups in first-seen
    /// order.
    #[arg(required_unless_present = "measured", value_name = "GROUP=FILE")]
    pub reports: Vec<String>,
    /// One group only, as a row per run and a column per metric
    /// (medians; the bench's rounds).
    #[arg(long)]
    pub rows: bool,
    /// Rows a script measured, a JSON object per line: `run` (the row's
    /// label; repetitions repeat it) and metrics (numbers or null). Prints
    /// each metric per run across its repetitions: median [min-max].
    #[arg(long, value_name = "FILE.jsonl", conflicts_with_all = ["reports", "rows"])]
    pub measured: Option<PathBuf>,
    /// With --measured: each median also as a ratio of this run's.
    #[arg(long, requires = "measured", value_name = "RUN")]
    pub baseline: Option<String>,
    /// With --measured: write the table's cells as JSON here too.
    #[arg(long, requires = "measured", value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        reports,
        rows,
        measured,
        baseline,
        json,
    } = args;
    if let Some(file) = measured {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let measured = spread::read_measured(&file.display().to_string(), &text)?;
        if let Some(b) = &baseline {
            anyhow::ensure!(
                measured.iter().any(|(r, _)| r == b),
                "--baseline {b}: no such run in {}",
                file.display()
            );
        }
        let samples: Vec<_> = measured.iter().map(|(r, m)| (r.as_str(), m)).collect();
        let (table, cells) = spread::across_runs(&samples, baseline.as_deref());
        print!("{table}");
        if let Some(j) = json {
            std::fs::write(&j, serde_json::to_string_pretty(&cells)?)
                .with_context(|| format!("writing {}", j.display()))?;
        }
        return Ok(());
    }
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
