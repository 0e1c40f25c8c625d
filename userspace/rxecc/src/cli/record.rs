//! Record a run's time series (rxe_cc tracepoints, port and QP samples)
//! as CSV into a directory, until SIGINT/SIGTERM or --duration.

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::{testbed::record, testbed::stats};
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    #[arg(long)]
    pub out: PathBuf,
    /// Sampling interval of ports and QPs.
    #[arg(long, default_value_t = 10, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=10000))]
    pub interval_ms: u64,
    /// Stop after this many seconds.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    #[arg(long, default_value = stats::DEBUGFS_ROOT)]
    pub root: PathBuf,
    /// A cycle of switch-to-switch ports that sends nothing, with bytes
    /// queued, for this long is recorded as a deadlock.
    #[arg(long, value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=600000))]
    pub deadlock_hold_ms: u64,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        out,
        interval_ms,
        duration,
        root,
        deadlock_hold_ms,
    } = args;
    let duration = match duration {
        Some(d) if !(d > 0.0 && d.is_finite()) => {
            anyhow::bail!("--duration must be a positive number of seconds")
        }
        d => d.map(std::time::Duration::from_secs_f64),
    };
    record::record_until_signal(&record::Options {
        out,
        interval: std::time::Duration::from_millis(interval_ms),
        duration,
        debugfs_root: root,
        deadlock_hold: std::time::Duration::from_millis(deadlock_hold_ms),
        log: None,
    })?;
    Ok(())
}
