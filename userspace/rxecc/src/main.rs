//! `rxecc`: the rxe-cc testbed command line.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rxecc::{
    deadlock, experiment, fct, model, paper, perftest, plot, record, report, selftest, spread,
    stats, switch, topology, workload,
};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "rxecc", version, about = "rxe-cc congestion-control testbed")]
struct Cli {
    /// Run in this network namespace (`ip netns` name), e.g. for a host's NIC.
    #[arg(long, global = true)]
    netns: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Judge the hosts' reactions from a capture (classic pcap, e.g.
    /// `dumpcap -P`): go-back-N after NAKs, resends of acked data, CE and
    /// CNPs per data QP, and every packet's ICRC.
    Check {
        pcap: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Print per-port (switch) and per-QP (rxe_cc) statistics.
    Stats {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Print again every this many milliseconds, until interrupted.
        #[arg(long, value_name = "MS", num_args = 0..=1, default_missing_value = "1000")]
        watch: Option<u64>,
        /// debugfs directory of rxe_cc.
        #[arg(long, default_value = stats::DEBUGFS_ROOT)]
        root: PathBuf,
        /// With a topology of several switches up: how long a cycle of
        /// switch-to-switch ports must send nothing, with bytes queued, to
        /// be reported as a deadlock (`--watch`: its interval instead).
        #[arg(long, value_name = "MS", default_value_t = 500)]
        deadlock_hold_ms: u64,
    },
    /// Bring a topology up or down (namespaces, bridges, rxe, ports).
    Testbed {
        #[command(subcommand)]
        cmd: TestbedCmd,
    },
    /// Unit-test the switch's eBPF programs on crafted packets
    /// (BPF_PROG_TEST_RUN); needs the testbed kernel.
    Selftest,
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
    /// Record a run's time series (rxe_cc tracepoints, port and QP samples)
    /// as CSV into a directory, until SIGINT/SIGTERM or --duration.
    Record {
        #[arg(long)]
        out: PathBuf,
        /// Sampling interval of ports and QPs.
        #[arg(long, default_value_t = 10, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=10000))]
        interval_ms: u64,
        /// Stop after this many seconds.
        #[arg(long, value_name = "S")]
        duration: Option<f64>,
        #[arg(long, default_value = stats::DEBUGFS_ROOT)]
        root: PathBuf,
        /// A cycle of switch-to-switch ports that sends nothing, with bytes
        /// queued, for this long is recorded as a deadlock.
        #[arg(long, value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=600000))]
        deadlock_hold_ms: u64,
    },
    /// Compare recorded incast runs: convergence, fairness, queue, pauses,
    /// throughput, halts; optionally write plots and JSON.
    Report {
        /// Runs as LABEL=DIR (directories written by `rxecc record`).
        #[arg(required = true, value_name = "LABEL=DIR")]
        runs: Vec<String>,
        /// Bottleneck link rate.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        capacity_mbps: u64,
        /// The bottleneck port (switch egress) device.
        #[arg(long)]
        bottleneck: String,
        /// The control period T the convergence is counted in.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        period_us: u64,
        /// Write <LABEL>.png per run into this directory.
        #[arg(long)]
        plots: Option<PathBuf>,
        /// Write the metrics as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Run-to-run spread of repeated experiments: per run and metric,
    /// the median and range of each group's report.json files, groups
    /// side by side (tests/repro.sh: the demo's incast in separate boots
    /// under each guest clock).
    Spread {
        /// GROUP=report.json, once per repetition; groups in first-seen
        /// order.
        #[arg(required = true, value_name = "GROUP=FILE")]
        reports: Vec<String>,
        /// One group only, as a row per run and a column per metric
        /// (medians; the bench's rounds).
        #[arg(long)]
        rows: bool,
    },
    /// The cargo model (the module's own algorithms) on an incast
    /// experiment's scenario, beside the testbed's runs of it: the
    /// testbed's row, the model's on an ideal network, then with the
    /// testbed's start skew, late period timers, a late pacer and PFC
    /// added one at a time (docs/experiments.md, "The model beside the
    /// testbed").
    Model {
        experiment: PathBuf,
        /// The directory `rxecc run` wrote for the experiment
        /// (<DIR>/<label>/rec): the testbed's rows, its flows' start
        /// times and its timers' lateness.
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// Only these runs (labels).
        #[arg(long, value_delimiter = ',', value_name = "LABEL,...")]
        runs: Vec<String>,
        /// The network's round trip without queues (the testbed's, under
        /// QEMU TCG: 1.64 ms median, docs/experiments.md).
        #[arg(long, default_value_t = 1640, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        rtt_us: u64,
        /// The run whose period timers give the lateness (one whose
        /// algorithm has a period timer running all along).
        #[arg(long, default_value = "acc")]
        late_from: String,
    },
    /// Run an experiment file (docs/workloads.md) in the testbed guest:
    /// every algorithm on the same flows, and the FCT slowdown table.
    Run {
        experiment: PathBuf,
        /// Results directory.
        #[arg(short, long)]
        out: PathBuf,
        /// Only these runs (labels), in the file's order.
        #[arg(long, value_delimiter = ',', value_name = "LABEL,...")]
        runs: Option<Vec<String>>,
        /// The verbs operation of every flow, instead of the file's `op`.
        #[arg(long, value_parser = ["write", "send", "read"])]
        op: Option<String>,
        /// Seconds after time 0 before an unfinished run is given up,
        /// instead of the file's `timeout_s` (a slower machine or kernel).
        #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        timeout_s: Option<u64>,
        /// Run every run this many times (labels <run>-1, <run>-2, ...),
        /// instead of the file's `repetitions`.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
        repetitions: Option<u32>,
    },
    /// Run a paper recipe (testbed/experiments/paper/, docs/experiments.md)
    /// in the testbed guest, or judge runs already made, and print the
    /// paper's claims against the testbed's numbers: met or missed.
    Paper {
        recipe: PathBuf,
        /// Results directory (claims.txt, claims.json, and the runs).
        #[arg(short, long)]
        out: PathBuf,
        /// Judge the runs in this `rxecc run` results directory instead of
        /// running them (its report.json and summary.json). Given more
        /// than once, each directory is one repetition (its runs labelled
        /// <run>-1, <run>-2, ... in order), as separate boots or bench
        /// rounds make them.
        #[arg(long, value_name = "DIR")]
        from: Vec<PathBuf>,
    },
    /// What one run of an experiment file sets, for scripts that drive
    /// their own traffic with the same settings.
    Experiment {
        #[command(subcommand)]
        cmd: ExperimentCmd,
    },
    /// Write a flow file (the HPCC simulator's format) for flowgen.
    Workload {
        #[command(subcommand)]
        cmd: WorkloadCmd,
    },
    /// Flow completion times: flowgen's records to the simulator's
    /// fct.txt, and its slowdown-by-size table.
    Fct {
        #[command(subcommand)]
        cmd: FctCmd,
    },
    /// Look for a deadlock: a cycle of switch-to-switch ports, each with
    /// bytes queued and nothing dequeued for `--hold-ms`, each waiting on
    /// the next one's switch. Exit status 0 either way; the first line
    /// says which (`deadlock: ...` or `no deadlock`).
    Deadlock {
        /// How long a port must have sent nothing with bytes queued.
        #[arg(long, default_value_t = 1000)]
        hold_ms: u64,
        #[arg(long)]
        json: bool,
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
enum ExperimentCmd {
    /// Print the topology a run brings up: the experiment's and the run's
    /// switch settings and link overrides merged in.
    Topology { experiment: PathBuf, run: String },
    /// Print a run's rxe_cc parameters as `name=value` words (cc first),
    /// for insmod.
    Knobs { experiment: PathBuf, run: String },
    /// Print a value of the (checked) experiment file by its dotted key,
    /// e.g. `report.capacity_mbps`; an array as space-separated words.
    Get { experiment: PathBuf, key: String },
    /// Print the fastest link of the topology a run brings up, Mb/s (the
    /// ring's C).
    Rate { experiment: PathBuf, run: String },
}

#[derive(Subcommand)]
enum WorkloadCmd {
    /// Poisson arrivals per host at a load, sizes from a CDF file
    /// (traffic_gen.py's model), destinations uniform over the other hosts.
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
        /// Each host's link rate, Mb/s.
        #[arg(long)]
        rate_mbps: u64,
        /// Seconds of arrivals.
        #[arg(long)]
        duration: f64,
        /// Divide the CDF's sizes by this, to fit the testbed's rates.
        #[arg(long, default_value_t = 1)]
        size_div: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output flow file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Senders each send SIZE bytes to the receiver at once, every PERIOD,
    /// ROUNDS times (destination port 200, the simulator's incast).
    Incast {
        /// Sending hosts, e.g. 1,2,3,4.
        #[arg(long, value_delimiter = ',', required = true)]
        senders: Vec<u32>,
        #[arg(long)]
        receiver: u32,
        #[arg(long)]
        size: u64,
        /// Seconds between rounds.
        #[arg(long)]
        period: f64,
        #[arg(long)]
        rounds: u32,
        #[arg(short, long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum FctCmd {
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

#[derive(Subcommand)]
enum TestbedCmd {
    /// Build a topology from its TOML file (see testbed/topologies/).
    Up {
        /// A topology file, or the name of one in testbed/topologies/.
        topology: String,
        /// Print what would be run instead of running it.
        #[arg(long)]
        dry_run: bool,
        /// Build only this guest's part of a testbed of several guests
        /// (run by testbed/vms.sh in each guest it boots).
        #[arg(long)]
        guest: Option<String>,
        /// With --guest: the device that plays a port on a link to another
        /// guest or machine, PORT=DEV (e.g. --nic p1=enp3s0, --nic
        /// v1=eth1); a port not named is the NIC with its MAC (vms.sh).
        #[arg(long, value_name = "PORT=DEV")]
        nic: Vec<String>,
    },
    /// The guests of a testbed of several (testbed/vms.sh), a line each:
    /// `file PATH` (the topology's), `hosts N`, `guest NAME NODE...`, then
    /// per NIC `nic GUEST DEV MAC LOCAL_PORT
    /// REMOTE_PORT` (QEMU dgram netdevs on 127.0.0.1).
    Guests {
        topology: String,
        /// The first UDP port of the links between guests.
        #[arg(long, default_value_t = 47000)]
        base_port: u16,
    },
    /// Tear down what `up` built.
    Down,
    /// Print the topology that is up (JSON).
    Show,
    /// Change every switch's flow control while the testbed runs: each
    /// port's egress first learns the new mode, then each ingress port
    /// sends by it; thresholds come from the topology file (GFC needs
    /// `gfc_bm_bytes` there). Nothing is dropped for the change.
    FlowControl {
        #[arg(long, value_enum)]
        mode: switch::FlowControl,
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
        #[arg(long)]
        dev: String,
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

fn run_workload(cmd: WorkloadCmd) -> Result<()> {
    let (flows, out) = match cmd {
        WorkloadCmd::Poisson {
            cdf,
            hosts,
            load,
            rate_mbps,
            duration,
            size_div,
            seed,
            out,
        } => {
            let cdf = workload::Cdf::load(&cdf)?;
            let p = workload::Poisson {
                cdf: &cdf,
                hosts,
                load,
                rate_mbps,
                duration_s: duration,
                size_div,
                seed,
            };
            (p.generate()?, out)
        }
        WorkloadCmd::Incast {
            senders,
            receiver,
            size,
            period,
            rounds,
            out,
        } => (
            workload::incast(&senders, receiver, size, period, rounds)?,
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

fn run_fct(cmd: FctCmd) -> Result<()> {
    match cmd {
        FctCmd::Convert {
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
        FctCmd::Report {
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

fn main() -> Result<()> {
    let cli = Cli::parse();
    if let Some(ns) = &cli.netns {
        switch::enter_netns(ns)?;
    }
    match cli.cmd {
        Cmd::Stats {
            json,
            watch,
            root,
            deadlock_hold_ms,
        } => {
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
        }
        Cmd::Testbed { cmd } => match cmd {
            TestbedCmd::Up {
                topology,
                dry_run,
                guest,
                nic,
            } => topology::up_logged(&topology, dry_run, true, guest.as_deref(), &nic)?,
            TestbedCmd::Guests {
                topology,
                base_port,
            } => print!("{}", topology::guests_text(&topology, base_port)?),
            TestbedCmd::Down => topology::down()?,
            TestbedCmd::FlowControl { mode } => topology::set_flow_control(mode)?,
            TestbedCmd::Show => {
                println!("{}", serde_json::to_string_pretty(&topology::current()?)?)
            }
        },
        Cmd::Selftest => selftest::run()?,
        Cmd::Check { pcap, json } => {
            let rep = rxecc::check::judge(&rxecc::check::read(&pcap)?);
            if json {
                println!("{}", serde_json::to_string(&rep)?);
            } else {
                rxecc::check::print(&rep);
            }
        }
        Cmd::Deadlock { hold_ms, json } => {
            let r = deadlock::detect(std::time::Duration::from_millis(hold_ms))?;
            // A reader that stops early (`| head -1`) is not an error.
            use std::io::Write;
            let text = if json {
                format!("{}\n", serde_json::to_string(&r)?)
            } else {
                r.to_string()
            };
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
        Cmd::Record {
            out,
            interval_ms,
            duration,
            root,
            deadlock_hold_ms,
        } => {
            let duration = match duration {
                Some(d) if !(d > 0.0 && d.is_finite()) => {
                    anyhow::bail!("--duration must be a positive number of seconds")
                }
                d => d.map(std::time::Duration::from_secs_f64),
            };
            record::record(&record::Options {
                out,
                interval: std::time::Duration::from_millis(interval_ms),
                duration,
                debugfs_root: root,
                deadlock_hold: std::time::Duration::from_millis(deadlock_hold_ms),
            })?
        }
        Cmd::Report {
            runs,
            capacity_mbps,
            bottleneck,
            period_us,
            plots,
            json,
        } => {
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
        }
        Cmd::Spread { reports, rows } => {
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
        }
        Cmd::Model {
            experiment,
            from,
            runs,
            rtt_us,
            late_from,
        } => print!(
            "{}",
            model::compare(
                &experiment,
                from.as_deref(),
                &runs,
                rtt_us,
                Some(&late_from)
            )?
        ),
        Cmd::Run {
            experiment,
            out,
            runs,
            op,
            timeout_s,
            repetitions,
        } => experiment::run(
            &experiment,
            &out,
            &experiment::Overrides {
                runs,
                op,
                timeout_s,
                repetitions,
            },
        )?,
        Cmd::Paper { recipe, out, from } => paper::run(&recipe, &out, &from)?,
        Cmd::Experiment { cmd } => match cmd {
            ExperimentCmd::Topology { experiment, run } => {
                print!("{}", experiment::run_topology(&experiment, &run)?)
            }
            ExperimentCmd::Knobs { experiment, run } => {
                println!("{}", experiment::run_knobs(&experiment, &run)?.join(" "))
            }
            ExperimentCmd::Get { experiment, key } => {
                println!("{}", experiment::get(&experiment, &key)?)
            }
            ExperimentCmd::Rate { experiment, run } => {
                println!("{}", experiment::run_rate_mbps(&experiment, &run)?)
            }
        },
        Cmd::Workload { cmd } => run_workload(cmd)?,
        Cmd::Fct { cmd } => run_fct(cmd)?,
        Cmd::Mark { dev, mode } => switch::attach_marker(&dev, mode)?,
        Cmd::Port { cmd } => match cmd {
            PortCmd::Attach {
                dev,
                rate_mbps,
                limit_pkts,
                burst_us,
                delay_us,
                pfc_class,
            } => switch::attach_port(
                &dev,
                &switch::PortConfig {
                    rate_mbps,
                    limit_pkts,
                    burst_us: burst_us.unwrap_or_else(switch::default_burst_us),
                    delay_us,
                    pfc_class,
                },
            )?,
            PortCmd::Detach { dev } => switch::detach_port(&dev)?,
            PortCmd::Int {
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
            PortCmd::Red {
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
            PortCmd::Rate { dev, rate_mbps } => switch::set_rate(&dev, rate_mbps)?,
            PortCmd::Inject {
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
            PortCmd::Tcd {
                dev,
                thresh_bytes,
                max_ton_us,
                stall_us,
            } => switch::set_tcd(&dev, thresh_bytes, max_ton_us, stall_us)?,
            PortCmd::Ingress {
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
                let rate = switch::port_rate_bps(&dev)?;
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
                    &dev,
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
            PortCmd::FlowControl {
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
            PortCmd::Sum { file, key, globs } => {
                let text = if file.as_os_str() == "-" {
                    std::io::read_to_string(std::io::stdin()).context("reading stdin")?
                } else {
                    std::fs::read_to_string(&file)
                        .with_context(|| format!("cannot read {}", file.display()))?
                };
                let out = rxecc::portsum::port_sum(&text, &key, &globs)
                    .with_context(|| format!("in {}", file.display()))?;
                println!("{out}");
            }
            PortCmd::Stats {
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

fn print_port(s: &switch::PortStats) {
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
        print_port(p);
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
