//! Write a flow file (the HPCC simulator's format) for flowgen.

use anyhow::{Context, Result};
use clap::Subcommand;
use rxecc::config::workload;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum Cmd {
    /// Poisson arrivals per host at a load of its own link, sizes from a
    /// CDF file (traffic_gen.py's model), destinations uniform over the
    /// other hosts when their links are equal (weighted so that every link
    /// is offered the load both ways when not).
    Poisson {
        /// CDF file (`size percentile` lines), e.g.
        /// testbed/workloads/WebSearch_distribution.txt.
        #[arg(long)]
        cdf: PathBuf,
        /// Hosts 0..N-1 of the topology send and receive.
        #[arg(long)]
        hosts: u32,
        /// Offered load per host, a fraction of its link (0 to 1].
        #[arg(long)]
        load: f64,
        /// The hosts' link rates, Mb/s: one for all, or one per host.
        #[arg(long, value_delimiter = ',', required = true)]
        rate_mbps: Vec<u64>,
        /// Seconds of arrivals.
        #[arg(long)]
        duration: f64,
        /// Divide the CDF's sizes by this, to fit the testbed's rates.
        #[arg(long, default_value_t = 1)]
        size_div: u64,
        /// Multiply the CDF's sizes by this (a scale model's byte factor
        /// k_b, the testbed's MTU over the paper's); with --size-div, both.
        #[arg(long, default_value_t = 1.0)]
        size_mul: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output flow file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Senders each send SIZE bytes (over QPS QPs) to the receiver at once,
    /// every PERIOD, ROUNDS times (destination port 200, the simulator's incast).
    Incast {
        /// Sending hosts, e.g. 1,2,3,4.
        #[arg(long, value_delimiter = ',', required = true)]
        senders: Vec<u32>,
        #[arg(long)]
        receiver: u32,
        /// Bytes per sender and round.
        #[arg(long)]
        size: u64,
        /// QPs per sender (flows that start together), over which its
        /// bytes are split.
        #[arg(long, default_value_t = 1)]
        qps: u32,
        /// Seconds between rounds.
        #[arg(long)]
        period: f64,
        #[arg(long)]
        rounds: u32,
        #[arg(short, long)]
        out: PathBuf,
    },
}

pub fn run(cmd: Cmd) -> Result<()> {
    let (flows, out) = match cmd {
        Cmd::Poisson {
            cdf,
            hosts,
            load,
            rate_mbps,
            duration,
            size_div,
            size_mul,
            seed,
            out,
        } => {
            anyhow::ensure!(size_div > 0, "--size-div must be positive");
            let cdf = workload::Cdf::load(&cdf)?;
            let rates = match rate_mbps[..] {
                [r] => vec![r; hosts as usize],
                _ if rate_mbps.len() == hosts as usize => rate_mbps,
                _ => anyhow::bail!(
                    "--rate-mbps: {} rates for {hosts} hosts; give one for all or one per host",
                    rate_mbps.len()
                ),
            };
            let p = workload::Poisson {
                cdf: &cdf,
                rates_mbps: &rates,
                load,
                duration_s: duration,
                size_factor: size_mul / size_div as f64,
                seed,
            };
            (p.generate()?, out)
        }
        Cmd::Incast {
            senders,
            receiver,
            size,
            qps,
            period,
            rounds,
            out,
        } => (
            workload::incast(&senders, receiver, size, qps, period, rounds)?,
            out,
        ),
    };
    std::fs::write(&out, workload::to_text(&flows))
        .with_context(|| format!("writing {}", out.display()))?;
    let bytes: u64 = flows.iter().map(|f| f.size).sum();
    eprintln!(
        "rxecc workload: {} flows, {} bytes, in {}",
        flows.len(),
        bytes,
        out.display()
    );
    Ok(())
}
