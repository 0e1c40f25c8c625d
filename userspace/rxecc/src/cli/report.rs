//! Compare recorded incast runs: convergence, fairness, queue, pauses,
//! throughput, halts; optionally write plots and JSON.

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use rxecc::{report, report::plot};
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    /// Runs as LABEL=DIR (directories written by `rxecc record`).
    #[arg(required = true, value_name = "LABEL=DIR")]
    pub runs: Vec<String>,
    /// Bottleneck link rate.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub capacity_mbps: u64,
    /// The bottleneck port (switch egress) device.
    #[arg(long)]
    pub bottleneck: String,
    /// The control period T the convergence is counted in.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub period_us: u64,
    /// Write <LABEL>.png per run into this directory.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Write the metrics as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        runs,
        capacity_mbps,
        bottleneck,
        period_us,
        plots,
        json,
    } = args;
    let setup = report::Setup {
        capacity_bps: capacity_mbps.saturating_mul(1_000_000),
        bottleneck,
        period_ns: period_us.saturating_mul(1000),
    };
    let mut dirs = Vec::new();
    for r in &runs {
        let (label, dir) = r
            .split_once('=')
            .with_context(|| format!("'{r}': expected LABEL=DIR"))?;
        dirs.push((label.to_string(), PathBuf::from(dir)));
    }
    let (table, loaded) = report::compare(&dirs, &setup, json.as_deref())?;
    if let Some(d) = plots {
        plot::plot_runs(&loaded, &setup, &d)?;
    }
    print!("{table}");
    Ok(())
}
