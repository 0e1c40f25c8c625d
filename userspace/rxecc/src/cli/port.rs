//! Emulated switch ports (switch-ebpf/port.bpf.c as a BPF qdisc).

use anyhow::{Context, Result};
use clap::Subcommand;
use rxecc::switch;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum Cmd {
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
        /// Pacing credit a late dequeue may catch up on, us; 0: one
        /// packet (default: 0, or 4000 under RXECC_CLOCK=host).
        #[arg(long)]
        burst_us: Option<u64>,
        /// Propagation delay, us.
        #[arg(long, default_value_t = 0)]
        delay_us: u64,
        /// PFC priority class of RoCE traffic.
        #[arg(long, default_value_t = 3)]
        pfc_class: u32,
        /// ACKs, NAKs and CNPs in a strict-priority class ahead of data,
        /// not paused with it.
        #[arg(long)]
        ack_priority: bool,
    },
    /// Change a port's link rate at run time.
    Rate {
        #[arg(long)]
        dev: String,
        #[arg(long)]
        rate_mbps: u64,
    },
    /// Set a port's TCD threshold and max(T_on) (mark with `--mode tcd`).
    Tcd {
        #[arg(long)]
        dev: String,
        #[arg(long)]
        thresh_bytes: u64,
        #[arg(long)]
        max_ton_us: u64,
        /// A dequeue this late with packets waiting is an emulation stall,
        /// judged like a PFC OFF period (0: the default, 2 ms).
        #[arg(long, default_value_t = 0)]
        stall_us: u64,
    },
    /// Make a port an ingress port of switch `switch-id`: shared-buffer
    /// accounting and PFC thresholds.
    Ingress {
        /// The port, or several with one setting (`p1,p2`): one process
        /// where each costs half a second under TCG.
        #[arg(long, value_delimiter = ',', required = true)]
        dev: Vec<String>,
        #[arg(long, default_value_t = 0)]
        switch_id: u32,
        /// Send PFC frames (the same as `--mode pfc`).
        #[arg(long)]
        pfc: bool,
        /// Flow control towards the link peer (which must obey the same
        /// mode: `rxecc port flow-control`).
        #[arg(long, value_enum, conflicts_with = "pfc")]
        mode: Option<switch::FlowControl>,
        /// Buffer-based GFC: B_m, the bytes this ingress port may hold.
        #[arg(long, default_value_t = 0)]
        gfc_bm_bytes: u64,
        /// Buffer-based GFC: B_1; default B_m - 2 C tau.
        #[arg(long)]
        gfc_b1_bytes: Option<u64>,
        /// The feedback latency GFC's thresholds are checked against.
        #[arg(long, default_value_t = 2000)]
        tau_us: u64,
        /// GFC: stages stop this close together (the largest frame).
        #[arg(long, default_value_t = 4170)]
        gfc_step_bytes: u64,
        /// Time-based GFC: the advertisement period; default the time to
        /// send 65535 bytes at the port's rate.
        #[arg(long)]
        gfc_period_us: Option<u64>,
        #[arg(long, default_value_t = 0)]
        xoff_bytes: u64,
        #[arg(long, default_value_t = 0)]
        xon_bytes: u64,
        /// The switch's shared buffer, bytes; 0: unlimited.
        #[arg(long, default_value_t = 0)]
        buffer_bytes: u64,
        #[arg(long, default_value_t = 3)]
        pfc_class: u32,
        /// Pause time sent with XOFF, 512-bit quanta; default: three
        /// refresh intervals at the port's rate.
        #[arg(long)]
        pause_quanta: Option<u32>,
        #[arg(long, default_value_t = 10_000)]
        refresh_us: u64,
    },
    /// How a port's egress reads its link peer's flow-control frames:
    /// pauses (pfc), rate stages (gfc-buffer), or neither (none). Both
    /// ends of a link use one mode; change the obeying end first.
    FlowControl {
        #[arg(long)]
        dev: String,
        #[arg(long, value_enum)]
        mode: switch::FlowControl,
        /// Time-based GFC: the peer ingress port's B_m.
        #[arg(long, default_value_t = 0)]
        gfc_bm_bytes: u64,
        /// Time-based GFC: the peer's B_0 (C is sent at B_m - B_0 of credit).
        #[arg(long, default_value_t = 0)]
        gfc_b0_bytes: u64,
        /// Time-based GFC: the peer's advertisement period.
        #[arg(long, default_value_t = 0)]
        gfc_period_us: u64,
    },
    /// Print a port's counters (a consistent snapshot).
    Stats {
        /// One port; all of them if absent.
        #[arg(long)]
        dev: Option<String>,
        #[arg(long)]
        json: bool,
        /// Print a snapshot each time a line arrives on stdin, each ending
        /// with an empty line, until stdin closes: for a test that reads
        /// the counters many times (one process, not one per snapshot).
        #[arg(long, requires = "json")]
        each_line: bool,
    },
    /// One number from saved `port stats --json` output: the sum of KEY
    /// (`ingress.KEY` for a switch ingress record's) over the ports whose
    /// names match a GLOB (all if none); `max:KEY` the largest value,
    /// `list:KEY` dev=value for each port where it is not 0.
    Sum {
        /// The saved output; `-` reads stdin.
        file: PathBuf,
        key: String,
        globs: Vec<String>,
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
    /// Stamp INT records into the HPCC shims of packets arriving at `dev`,
    /// describing the egress of `from`, the port at the other end of the
    /// link (`--mode off` stops).
    Int {
        #[arg(long)]
        dev: String,
        #[arg(long, value_enum)]
        mode: switch::IntMode,
        /// HPCC: the link peer whose egress the records describe. FNCC
        /// and ICC describe --dev's own egress: leave it out.
        #[arg(long, default_value = "")]
        from: String,
        /// ICC: queue-growth samples at least this far apart, us.
        #[arg(long, default_value_t = switch::IccParams::default().sample_us)]
        icc_sample_us: u64,
        /// ICC: feedback at least this often, us.
        #[arg(long, default_value_t = switch::IccParams::default().period_us)]
        icc_period_us: u64,
        /// ICC: utilisation that counts as busy, 1/1000.
        #[arg(long, default_value_t = switch::IccParams::default().lu_permille)]
        icc_lu_permille: u32,
    },
    /// Fault injection at a port's ingress: drop, ECN-mark, corrupt the
    /// ICRC of, duplicate, delay or reorder RoCEv2 packets selected by QP,
    /// PSN and opcode (every n-th, the n-th ones, or with a seeded
    /// probability). With no action, lists the rules in force and what
    /// each has done.
    Inject {
        #[arg(long)]
        dev: String,
        #[arg(long, value_enum)]
        action: Option<switch::InjectAction>,
        /// The BTH's destination QP (decimal or 0x hex); any if absent.
        #[arg(long, value_parser = switch::parse_u32)]
        qpn: Option<u32>,
        /// A PSN or a range, FROM-TO; any if absent.
        #[arg(long, value_parser = switch::parse_psn_range)]
        psn: Option<(u32, u32)>,
        /// The BTH opcode (e.g. 0x0a, RC RDMA WRITE ONLY); any if absent.
        #[arg(long, value_parser = switch::parse_u32)]
        opcode: Option<u32>,
        /// Act on every n-th selected packet.
        #[arg(long, default_value_t = 0)]
        every: u32,
        /// Act only on these selected packets, counted from 1 (e.g. 3,7).
        #[arg(long)]
        nth: Option<String>,
        /// Act with this probability, from a generator seeded by --seed.
        #[arg(long)]
        prob: Option<f64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// delay: how long the packet takes longer to reach its egress
        /// queue; reorder: the longest it is held (default 10000).
        #[arg(long)]
        delay_us: Option<u32>,
        /// reorder: how many later packets overtake it (default 1).
        #[arg(long)]
        gap: Option<u32>,
        /// Remove every rule from the port.
        #[arg(long, conflicts_with = "action")]
        clear: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove the port from a device.
    Detach {
        #[arg(long)]
        dev: String,
    },
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Attach {
            dev,
            rate_mbps,
            limit_pkts,
            burst_us,
            delay_us,
            pfc_class,
            ack_priority,
        } => switch::attach_port(
            &dev,
            &switch::PortConfig {
                rate_mbps,
                limit_pkts,
                burst_us: burst_us.unwrap_or_else(switch::default_burst_us),
                delay_us,
                pfc_class,
                ack_priority,
            },
        )?,
        Cmd::Detach { dev } => switch::detach_port(&dev)?,
        Cmd::Int {
            dev,
            mode,
            from,
            icc_sample_us,
            icc_period_us,
            icc_lu_permille,
        } => {
            let icc = switch::IccParams {
                sample_us: icc_sample_us,
                period_us: icc_period_us,
                lu_permille: icc_lu_permille,
            };
            switch::set_int(&dev, &from, mode, &icc)?
        }
        Cmd::Red {
            dev,
            kmin_bytes,
            kmax_bytes,
            pmax_permille,
        } => switch::set_red(
            &dev,
            &switch::Red {
                kmin_bytes,
                kmax_bytes,
                pmax_permille,
            },
        )?,
        Cmd::Rate { dev, rate_mbps } => switch::set_rate(&dev, rate_mbps)?,
        Cmd::Inject {
            dev,
            action,
            qpn,
            psn,
            opcode,
            every,
            nth,
            prob,
            seed,
            delay_us,
            gap,
            clear,
            json,
        } => {
            if clear {
                switch::clear_inject_rules(&dev)?;
            } else if action.is_some() {
                let rule = switch::InjectRule {
                    port: dev.clone(),
                    action,
                    qpn,
                    psn,
                    opcode,
                    every,
                    nth: nth
                        .as_deref()
                        .map(switch::parse_nth)
                        .transpose()?
                        .unwrap_or_default(),
                    prob,
                    seed,
                    delay_us,
                    gap,
                };
                let slot = switch::add_inject_rule(&dev, &rule)?;
                eprintln!("rxecc: {dev}: injection rule {slot} in force");
            } else {
                let rules = switch::inject_rules(&dev)?;
                if json {
                    println!("{}", serde_json::to_string(&rules)?);
                } else if rules.is_empty() {
                    println!("{dev}: no injection rules");
                }
                if !json {
                    for r in rules {
                        println!(
                            "{dev} rule {}: {:?} matched {} applied {}",
                            r.slot, r.rule, r.matched, r.applied
                        );
                    }
                }
            }
        }
        Cmd::Tcd {
            dev,
            thresh_bytes,
            max_ton_us,
            stall_us,
        } => switch::set_tcd(&dev, thresh_bytes, max_ton_us, stall_us)?,
        Cmd::Ingress {
            dev,
            switch_id,
            pfc,
            mode,
            gfc_bm_bytes,
            gfc_b1_bytes,
            tau_us,
            gfc_step_bytes,
            gfc_period_us,
            xoff_bytes,
            xon_bytes,
            buffer_bytes,
            pfc_class,
            pause_quanta,
            refresh_us,
        } => {
            let mode = match (mode, pfc) {
                (Some(m), _) => m,
                (None, true) => switch::FlowControl::Pfc,
                (None, false) => switch::FlowControl::None,
            };
            for dev in &dev {
                let rate = switch::port_rate_bps(dev)?;
                let gfc_time = if mode == switch::FlowControl::GfcTime {
                    switch::GfcTime::new(gfc_bm_bytes, None, gfc_period_us, rate, tau_us)
                        .with_context(|| format!("{dev}: time-based GFC"))?
                } else {
                    Default::default()
                };
                let gfc = if mode == switch::FlowControl::GfcBuffer {
                    switch::GfcThresholds::new(
                        gfc_bm_bytes,
                        gfc_b1_bytes,
                        rate,
                        tau_us,
                        gfc_step_bytes,
                    )
                    .with_context(|| format!("{dev}: GFC thresholds"))?
                } else {
                    Default::default()
                };
                switch::set_ingress(
                    dev,
                    &switch::IngressConfig {
                        switch_id,
                        mode,
                        xoff_bytes,
                        xon_bytes,
                        buffer_bytes,
                        pfc_class,
                        pause_quanta,
                        refresh_us,
                        gfc,
                        gfc_time,
                    },
                )?
            }
        }
        Cmd::FlowControl {
            dev,
            mode,
            gfc_bm_bytes,
            gfc_b0_bytes,
            gfc_period_us,
        } => switch::set_fc_mode(
            &dev,
            mode,
            &switch::GfcTime {
                bm_bytes: gfc_bm_bytes,
                b0_bytes: gfc_b0_bytes,
                period_ns: gfc_period_us.saturating_mul(1000),
            },
        )?,
        Cmd::Sum { file, key, globs } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("reading stdin")?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let out = rxecc::switch::portsum::port_sum(&text, &key, &globs)
                .with_context(|| format!("in {}", file.display()))?;
            println!("{out}");
        }
        Cmd::Stats {
            dev,
            json,
            each_line,
        } => {
            let snapshot = |json: bool| -> Result<()> {
                let devs = match &dev {
                    Some(d) => vec![d.clone()],
                    None => switch::ports(),
                };
                for d in devs {
                    let s = switch::port_stats(&d)?;
                    if json {
                        println!("{}", serde_json::to_string(&s)?);
                    } else {
                        print_port(&s);
                    }
                }
                Ok(())
            };
            if each_line {
                use std::io::{BufRead, Write};
                for line in std::io::stdin().lock().lines() {
                    line.context("reading stdin")?;
                    snapshot(true)?;
                    println!();
                    std::io::stdout().flush().context("writing stdout")?;
                }
            } else {
                snapshot(json)?;
            }
        }
    }
    Ok(())
}

pub fn print_port(s: &switch::PortStats) {
    println!(
        "{:<8} enq {:>8} pkts {:>11} B  deq {:>8} pkts  queue {:>7} B (max {:>8} B)  drops {}",
        s.dev, s.enq_pkts, s.enq_bytes, s.deq_pkts, s.qlen_bytes, s.max_qlen_bytes, s.drops
    );
    if s.pfc_rx_xoff + s.pfc_rx_xon > 0 {
        println!(
            "         PFC rx: {} pause, {} resume, {} stale, {} expired; paused {:.3} ms; tau mean {:.1} us max {:.1} us",
            s.pfc_rx_xoff,
            s.pfc_rx_xon,
            s.pfc_rx_stale,
            s.pause_expired,
            s.paused_ns as f64 / 1e6,
            s.tau_mean_ns as f64 / 1e3,
            s.tau_max_ns as f64 / 1e3
        );
    }
    if s.stalls + s.late_ns > 0 {
        println!(
            "         emulation: {} stalls ({:.3} ms), {:.3} ms of link time lost to late dequeues",
            s.stalls,
            s.stall_ns as f64 / 1e6,
            s.late_ns as f64 / 1e6
        );
    }
    if s.rate_violations > 0 {
        println!(
            "         faster than its rate: {} releases more than one packet ahead of an ideal link, at most {:.3} ms beyond",
            s.rate_violations,
            s.rate_violation_max_ns as f64 / 1e6
        );
    }
    let injected = [
        s.injected_drops,
        s.injected_marks,
        s.injected_corrupts,
        s.injected_dups,
        s.injected_delays,
        s.injected_reorders,
    ];
    if injected.iter().any(|n| *n > 0) {
        println!(
            "         injected: {} drops, {} ECN marks, {} ICRC corruptions, {} copies, {} delays, {} reorders",
            s.injected_drops,
            s.injected_marks,
            s.injected_corrupts,
            s.injected_dups,
            s.injected_delays,
            s.injected_reorders
        );
    }
    if s.held_pkts > 0 {
        println!(
            "         held for a delay or reorder: {} packets",
            s.held_pkts
        );
    }
    if s.prio_pkts > 0 {
        println!(
            "         ACK class, ahead of data: {} packets, {} B",
            s.prio_pkts, s.prio_bytes
        );
    }
    if s.pfc_rx_bad + s.pfc_rx_other > 0 {
        println!(
            "         MAC control rx dropped: {} malformed, {} PFC for other classes",
            s.pfc_rx_bad, s.pfc_rx_other
        );
    }
    if s.int_stamped + s.int_overflow + s.int_bad + s.int_quiet > 0 {
        println!(
            "         INT: {} records stamped, {} hops found the shim full, {} flagged packets not ours, {} ICC ACKs quiet",
            s.int_stamped, s.int_overflow, s.int_bad, s.int_quiet
        );
    }
    if s.gfc_rx > 0 {
        println!(
            "         GFC rx: {} frames; stage {} now (max {}); below full rate {:.3} ms; {} waits for credit, {} packets slowed by it",
            s.gfc_rx,
            s.gfc_stage,
            s.gfc_max_stage,
            s.gfc_limited_ns as f64 / 1e6,
            s.gfc_credit_waits,
            s.gfc_credit_slowed
        );
        if s.gfc_rate_bps > 0 {
            println!(
                "         GFC time-based rate held: {:.3} Mb/s",
                s.gfc_rate_bps as f64 / 1e6
            );
        }
    }
    if let Some(i) = &s.ingress {
        println!(
            "         ingress (switch {}): {} B held (max {} B); PFC tx: {} pause, {} resume, {} refresh; {} underflows",
            i.switch_id, i.bytes, i.max_bytes, i.pfc_tx_xoff, i.pfc_tx_xon, i.pfc_tx_refresh, i.underflows
        );
        if i.gfc_tx > 0 {
            println!(
                "         GFC tx: {} frames; stage {} now (max {})",
                i.gfc_tx, i.gfc_stage, i.gfc_max_stage
            );
        }
    }
    if s.tcd_ce + s.tcd_ue > 0 || s.red_above + s.red_between > 0 {
        println!(
            "         marks: TCD {} CE {} UE {} none; RED {} + {} CE",
            s.tcd_ce, s.tcd_ue, s.tcd_none, s.red_above_marked, s.red_between_marked
        );
    }
}
