//! `rxecc`: the rxe-cc testbed command line.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rxecc::{perftest, stats, switch};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "rxecc", version, about = "rxe-cc congestion-control testbed")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print rxe_cc's module totals and per-QP statistics (debugfs).
    Stats {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// debugfs directory of rxe_cc.
        #[arg(long, default_value = stats::DEBUGFS_ROOT)]
        root: PathBuf,
    },
    /// Attach the ECN marker (switch-ebpf/mark.bpf.c) to a port's egress:
    /// every ECN-capable RoCEv2 packet leaving `dev` gets the mark.
    Mark {
        /// Network device, e.g. a bridge port.
        #[arg(long)]
        dev: String,
        #[arg(long, value_enum)]
        mode: switch::MarkMode,
    },
    /// Emulated switch ports (switch-ebpf/port.bpf.c as a BPF qdisc).
    Port {
        #[command(subcommand)]
        cmd: PortCmd,
    },
    /// Summarise perftest bandwidth reports as a per-flow table.
    Flows {
        /// perftest client outputs, one per flow (written with --report_gbits).
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Label printed above the table.
        #[arg(long, default_value = "")]
        label: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum PortCmd {
    /// Make a device a switch port with a link rate and an exact queue.
    Attach {
        #[arg(long)]
        dev: String,
        /// Link rate, Mb/s.
        #[arg(long)]
        rate_mbps: u64,
        /// Queue limit in packets; arrivals beyond it are dropped (counted).
        #[arg(long, default_value_t = 10_000)]
        limit_pkts: u32,
        /// Pacing credit a late dequeue may catch up on, us.
        #[arg(long, default_value_t = 1000)]
        burst_us: u64,
    },
    /// Print a port's counters (a consistent snapshot).
    Stats {
        #[arg(long)]
        dev: String,
        #[arg(long)]
        json: bool,
    },
    /// Set the port's RED thresholds (and mark with `rxecc mark --mode red`).
    Red {
        #[arg(long)]
        dev: String,
        #[arg(long)]
        kmin_bytes: u64,
        #[arg(long)]
        kmax_bytes: u64,
        /// Marking probability at Kmax, per mille.
        #[arg(long)]
        pmax_permille: u32,
    },
    /// Remove the port from a device.
    Detach {
        #[arg(long)]
        dev: String,
    },
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Stats { json, root } => {
            let snap = stats::snapshot(&root)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&snap)?);
                return Ok(());
            }
            println!("totals:");
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
        }
        Cmd::Mark { dev, mode } => switch::attach_marker(&dev, mode)?,
        Cmd::Port { cmd } => match cmd {
            PortCmd::Attach { dev, rate_mbps, limit_pkts, burst_us } => {
                switch::attach_port(&dev, &switch::PortConfig { rate_mbps, limit_pkts, burst_us })?
            }
            PortCmd::Detach { dev } => switch::detach_port(&dev)?,
            PortCmd::Red { dev, kmin_bytes, kmax_bytes, pmax_permille } => {
                switch::set_red(&dev, &switch::Red { kmin_bytes, kmax_bytes, pmax_permille })?
            }
            PortCmd::Stats { dev, json } => {
                let s = switch::port_stats(&dev)?;
                if json {
                    println!("{}", serde_json::to_string(&s)?);
                } else {
                    println!(
                        "{dev}: enq {} pkts {} B, deq {} pkts {} B, queue {} pkts {} B (max {} B), drops {}",
                        s.enq_pkts, s.enq_bytes, s.deq_pkts, s.deq_bytes, s.qlen_pkts, s.qlen_bytes,
                        s.max_qlen_bytes, s.drops
                    );
                }
            }
        },
        Cmd::Flows {
            reports,
            label,
            json,
        } => {
            let mut rows = Vec::new();
            for p in &reports {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?;
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
        }
    }
    Ok(())
}
