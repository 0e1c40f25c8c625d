//! `rxecc capture start|stop`: a RoCEv2 capture (dumpcap) that outlives
//! the command which starts it, for scripts: `stop` drains it first, as
//! `rxecc run` drains its own (run/capture.rs).

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use rxecc::run::capture;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum Cmd {
    /// Capture RoCEv2 (UDP 4791) on a device into a classic pcap, in the
    /// background; returns once dumpcap captures. Leaves <pcap>.pid.
    Start {
        #[arg(long)]
        dev: String,
        #[arg(long)]
        pcap: PathBuf,
        /// dumpcap's messages (default: the pcap's name with .log).
        #[arg(long)]
        log: Option<PathBuf>,
    },
    /// Stop captures `start` began, each once it has caught up (its
    /// files unchanged for a second); prints what each received and its
    /// kernel buffer dropped.
    Stop {
        #[arg(required = true)]
        pcaps: Vec<PathBuf>,
        /// Fail if a capture dropped packets.
        #[arg(long)]
        no_loss: bool,
    },
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Start { dev, pcap, log } => {
            let log = log.unwrap_or_else(|| capture::default_log(&pcap));
            let child = capture::start(&dev, None, &pcap, &log)?;
            let pid_file = capture::pid_file(&pcap);
            std::fs::write(&pid_file, format!("{}\n{}\n", child.id(), log.display()))
                .with_context(|| format!("writing {}", pid_file.display()))?;
            // Half a second more, as the shell helper that came before
            // gave it: "Capturing on" comes as the ring is set up.
            std::thread::sleep(std::time::Duration::from_millis(500));
            Ok(())
        }
        Cmd::Stop { pcaps, no_loss } => {
            let mut stops = Vec::new();
            for pcap in &pcaps {
                let pid_file = capture::pid_file(pcap);
                let text = std::fs::read_to_string(&pid_file).with_context(|| {
                    format!(
                        "{}: no capture of `rxecc capture start` ({})",
                        pcap.display(),
                        pid_file.display()
                    )
                })?;
                let mut lines = text.lines();
                let pid: i32 = lines
                    .next()
                    .and_then(|l| l.parse().ok())
                    .with_context(|| format!("{}: no pid on its first line", pid_file.display()))?;
                let log = PathBuf::from(lines.next().unwrap_or_default());
                stops.push((pcap, pid_file, pid, log));
            }
            for (pcap, _, _, log) in &stops {
                capture::drain(pcap, log);
            }
            let mut lost = Vec::new();
            for (pcap, pid_file, pid, log) in &stops {
                capture::stop_pid(*pid)?;
                std::fs::remove_file(pid_file)?;
                match capture::counts(log) {
                    Some((rx, dropped)) => {
                        println!(
                            "{}: {rx} packets received, {dropped} dropped",
                            pcap.display()
                        );
                        if dropped > 0 {
                            lost.push(format!("{} ({dropped})", pcap.display()));
                        }
                    }
                    None => println!("{}: no counts in {}", pcap.display(), log.display()),
                }
            }
            if no_loss && !lost.is_empty() {
                bail!(
                    "captures lost packets in their kernel buffers: {}",
                    lost.join(", ")
                );
            }
            Ok(())
        }
    }
}
