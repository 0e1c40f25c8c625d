//! Print per-port (switch) and per-QP (rxe_cc) statistics.

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::{switch, testbed::deadlock, testbed::stats};
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Print again every this many milliseconds, until interrupted.
    #[arg(long, value_name = "MS", num_args = 0..=1, default_missing_value = "1000")]
    pub watch: Option<u64>,
    /// debugfs directory of rxe_cc.
    #[arg(long, default_value = stats::DEBUGFS_ROOT)]
    pub root: PathBuf,
    /// With a topology of several switches up: how long a cycle of
    /// switch-to-switch ports must send nothing, with bytes queued, to
    /// be reported as a deadlock (`--watch`: its interval instead).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub deadlock_hold_ms: u64,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        json,
        watch,
        root,
        deadlock_hold_ms,
    } = args;
    // Deadlocks need two readings: the first is taken here, and
    // each print judges the time since the last.
    let watcher = deadlock::Watch::of_current();
    let hold = std::time::Duration::from_millis(watch.unwrap_or(deadlock_hold_ms).max(10));
    let mut prev = match &watcher {
        Some(w) => {
            let r = w.read()?;
            std::thread::sleep(hold);
            Some(r)
        }
        None => None,
    };
    loop {
        let look = match (&watcher, &prev) {
            (Some(w), Some(before)) => {
                let now = w.read()?;
                let rep = w.judge(before, &now, hold);
                prev = Some(now);
                Some(rep)
            }
            _ => None,
        };
        print_stats(json, &root, look.as_ref())?;
        match watch {
            Some(_) => std::thread::sleep(hold),
            None => break,
        }
    }
    Ok(())
}

/// Per-port and per-QP statistics; either part may be absent.
/// `deadlock`: a look at the switch-to-switch ports, if a topology with
/// some is up.
fn print_stats(
    json: bool,
    root: &std::path::Path,
    deadlock: Option<&deadlock::Report>,
) -> Result<()> {
    let ports: Vec<switch::PortStats> = switch::ports()
        .iter()
        .map(|d| switch::port_stats(d))
        .collect::<Result<_>>()?;
    let qps = if root.exists() {
        Some(stats::snapshot(root)?)
    } else {
        None
    };
    if json {
        println!(
            "{}",
            serde_json::to_string(
                &serde_json::json!({ "ports": ports, "rxe_cc": qps, "deadlock": deadlock })
            )?
        );
        return Ok(());
    }
    for p in &ports {
        super::port::print_port(p);
    }
    if let Some(d) = deadlock {
        print!("{d}");
    }
    let Some(snap) = qps else {
        if ports.is_empty() {
            println!("no switch ports and no rxe_cc (is the testbed up?)");
        }
        return Ok(());
    };
    println!("rxe_cc totals:");
    for (k, v) in &snap.totals.counters {
        println!("  {k:<16} {v}");
    }
    for (name, s) in &snap.qps {
        let cc = s.fields.get("cc").map_or("?", String::as_str);
        println!(
            "{name}: cc={cc} tx_packets={} tx_bytes={} acks={} naks={}",
            s.get("tx_packets").unwrap_or(0),
            s.get("tx_bytes").unwrap_or(0),
            s.get("acks").unwrap_or(0),
            s.get("naks").unwrap_or(0),
        );
    }
    Ok(())
}
