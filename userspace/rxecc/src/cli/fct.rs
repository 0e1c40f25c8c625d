//! Flow completion times: flowgen's records to the simulator's
//! fct.txt, and its slowdown-by-size table.

use anyhow::{Context, Result};
use clap::Subcommand;
use rxecc::{config::topology, config::workload, report::fct, report::plot};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum Cmd {
    /// Turn flowgen's records of one run into fct.txt.
    Convert {
        /// The flow file flowgen ran.
        #[arg(long)]
        flows: PathBuf,
        /// The topology it ran on (for each path's bottleneck rate).
        #[arg(long)]
        topology: String,
        /// Base RTT, us, for the standalone FCT; default: the least time
        /// any flow of the run took beyond its own serialisation.
        #[arg(long)]
        base_rtt_us: Option<f64>,
        #[arg(short, long)]
        out: PathBuf,
        /// flowgen's CSV files, one per host.
        #[arg(required = true)]
        records: Vec<PathBuf>,
    },
    /// FCT slowdown by flow-size bucket (median, p95, p99), as the
    /// simulator's fct_analysis.py computes it, across runs.
    Report {
        /// LABEL=fct.txt, one per run.
        #[arg(required = true)]
        runs: Vec<String>,
        #[arg(long, value_enum, default_value = "normal")]
        kind: fct::Kind,
        /// Bucket width, percent of the flows.
        #[arg(long, default_value_t = 5)]
        step: u32,
        /// Only flows that finish before this time, ns (the script's -T).
        #[arg(long)]
        time_limit_ns: Option<u64>,
        /// Print the script's own lines instead of the table.
        #[arg(long)]
        script: bool,
        /// Write the buckets as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write slowdown.png and fct_cdf.png into this directory.
        #[arg(long)]
        plots: Option<PathBuf>,
    },
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Convert {
            flows,
            topology: topo,
            base_rtt_us,
            out,
            records,
        } => {
            let text = std::fs::read_to_string(&flows)
                .with_context(|| format!("reading {}", flows.display()))?;
            let flows = workload::parse(&flows.display().to_string(), &text)?;
            let built = topology::load(&topology::resolve(&topo)?)?;
            let recs = fct::read_records(&records)?;
            let base = match base_rtt_us {
                Some(us) if us >= 0.0 && us.is_finite() => (us * 1000.0) as u64,
                Some(_) => anyhow::bail!("--base-rtt-us must be a non-negative number"),
                None => fct::min_excess_ns(&flows, &recs, &built.topo)?,
            };
            let lines = fct::fct_lines(&flows, &recs, &built.topo, base)?;
            std::fs::write(&out, fct::to_text(&lines))
                .with_context(|| format!("writing {}", out.display()))?;
            let failed = recs.iter().filter(|r| r.status != "ok").count();
            eprintln!(
                "rxecc fct: {} of {} flows completed ({failed} failed or timed out), base RTT {} us, in {}",
                lines.len(),
                flows.len(),
                base / 1000,
                out.display()
            );
            if lines.len() + failed < flows.len() {
                eprintln!(
                    "rxecc fct: warning: {} flows have no record",
                    flows.len() - lines.len() - failed
                );
            }
        }
        Cmd::Report {
            runs,
            kind,
            step,
            time_limit_ns,
            script,
            json,
            plots,
        } => {
            let mut all = Vec::new();
            let mut raw = Vec::new();
            for r in &runs {
                let (label, file) = r
                    .split_once('=')
                    .with_context(|| format!("'{r}': expected LABEL=fct.txt"))?;
                let text =
                    std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
                let lines = fct::parse(file, &text)?;
                all.push((
                    label.to_string(),
                    fct::buckets(&lines, kind, step, time_limit_ns),
                ));
                raw.push((label.to_string(), lines));
            }
            if script {
                print!("{}", fct::script_table(&all));
            } else {
                print!("{}", fct::table(&all, step.clamp(1, 100)));
            }
            if let Some(p) = json {
                let m: std::collections::BTreeMap<_, _> = all.iter().cloned().collect();
                std::fs::write(&p, serde_json::to_string_pretty(&m)?)
                    .with_context(|| format!("writing {}", p.display()))?;
            }
            if let Some(d) = plots {
                std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
                plot::plot_fct(&all, &raw, kind, &d)?;
            }
        }
    }
    Ok(())
}
