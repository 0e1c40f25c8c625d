//! Summarise perftest bandwidth reports as a per-flow table.

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use rxecc::report::perftest;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    /// perftest client outputs, one per flow (written with --report_gbits).
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// Label printed above the table.
    #[arg(long, default_value = "")]
    pub label: String,
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        reports,
        label,
        json,
    } = args;
    let mut rows = Vec::new();
    for p in &reports {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        let r = perftest::parse_bw(&text).with_context(|| format!("in {}", p.display()))?;
        rows.push((
            p.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            r,
        ));
    }
    let rates: Vec<f64> = rows.iter().map(|(_, r)| r.avg_gbps).collect();
    let total: f64 = rates.iter().sum();
    let jain = perftest::jain_index(&rates);
    if json {
        let v = serde_json::json!({
            "label": label,
            "flows": rows.iter().map(|(n, r)| serde_json::json!({"flow": n, "report": r})).collect::<Vec<_>>(),
            "total_gbps": total,
            "jain": jain,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    if !label.is_empty() {
        println!("{label}");
    }
    println!(
        "{:<12} {:>12} {:>14} {:>12}",
        "flow", "MB moved", "avg Mb/s", "peak Mb/s"
    );
    for (n, r) in &rows {
        println!(
            "{:<12} {:>12.1} {:>14.1} {:>12.1}",
            n,
            r.bytes() as f64 / 1e6,
            r.avg_gbps * 1000.0,
            r.peak_gbps * 1000.0
        );
    }
    println!("{:<12} {:>12} {:>14.1}", "total", "", total * 1000.0);
    if let Some(j) = jain {
        println!("Jain's fairness index: {j:.3}");
    }
    Ok(())
}
