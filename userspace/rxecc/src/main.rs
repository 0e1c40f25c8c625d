//! `rxecc`: the rxe-cc testbed command line.

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cli;
use rxecc::{switch, switch::selftest};

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
    /// Capture RoCEv2 on a device in the background (dumpcap), and stop
    /// it once it has caught up.
    #[command(subcommand)]
    Capture(cli::capture::Cmd),
    /// Judge the hosts' reactions from a capture (classic pcap, e.g.
    /// `dumpcap -P`): go-back-N after NAKs, resends of acked data, CE and
    /// CNPs per data QP, and every packet's ICRC.
    Check(cli::check::Args),
    /// Print per-port (switch) and per-QP (rxe_cc) statistics.
    Stats(cli::stats::Args),
    /// Bring a topology up or down (namespaces, bridges, rxe, ports).
    #[command(subcommand)]
    Testbed(cli::testbed::Cmd),
    /// Unit-test the switch's eBPF programs on crafted packets
    /// (BPF_PROG_TEST_RUN); needs the testbed kernel.
    Selftest,
    /// Attach the ECN marker (switch-ebpf/mark.bpf.c) to a port's egress:
    /// every ECN-capable RoCEv2 packet leaving `dev` gets the mark.
    Mark(cli::mark::Args),
    /// Load or unload the testbed's kernel modules (rdma_rxe, rxe_cc).
    #[command(subcommand)]
    Modules(cli::modules::Cmd),
    /// Emulated switch ports (switch-ebpf/port.bpf.c as a BPF qdisc).
    #[command(subcommand)]
    Port(cli::port::Cmd),
    /// Record a run's time series (rxe_cc tracepoints, port and QP samples)
    /// as CSV into a directory, until SIGINT/SIGTERM or --duration.
    Record(cli::record::Args),
    /// Compare recorded incast runs: convergence, fairness, queue, pauses,
    /// throughput, halts; optionally write plots and JSON.
    Report(cli::report::Args),
    /// Run-to-run spread of repeated experiments: per run and metric,
    /// the median and range of each group's report.json files, groups
    /// side by side (tests/repro.sh: the demo's incast in separate boots
    /// under each guest clock); or of rows a script measured
    /// (--measured).
    Spread(cli::spread::Args),
    /// The cargo model (the module's own algorithms) on an incast
    /// experiment's scenario, beside the testbed's runs of it: the
    /// testbed's row, the model's on an ideal network, then with the
    /// testbed's start skew, late period timers, a late pacer and PFC
    /// added one at a time (docs/experiments.md, "The model beside the
    /// testbed").
    Model(cli::model::Args),
    /// Run an experiment file (docs/workloads.md) in the testbed guest:
    /// every algorithm on the same flows, and the FCT slowdown table.
    Run(cli::run::Args),
    /// Run a paper recipe (testbed/experiments/paper/, docs/experiments.md)
    /// in the testbed guest, or judge runs already made, and print the
    /// paper's claims against the testbed's numbers: met or missed.
    Paper(cli::paper::Args),
    /// What one run of an experiment file sets, for scripts that drive
    /// their own traffic with the same settings.
    #[command(subcommand)]
    Experiment(cli::experiment::Cmd),
    /// Write a flow file (the HPCC simulator's format) for flowgen.
    #[command(subcommand)]
    Workload(cli::workload::Cmd),
    /// Flow completion times: flowgen's records to the simulator's
    /// fct.txt, and its slowdown-by-size table.
    #[command(subcommand)]
    Fct(cli::fct::Cmd),
    /// Look for a deadlock: a cycle of switch-to-switch ports, each with
    /// bytes queued and nothing dequeued for `--hold-ms`, each waiting on
    /// the next one's switch. Exit status 0 either way; the first line
    /// says which (`deadlock: ...` or `no deadlock`).
    Deadlock(cli::deadlock::Args),
    /// Summarise perftest bandwidth reports as a per-flow table.
    Flows(cli::flows::Args),
    /// One perftest flow between two testbed hosts, for scripts: a
    /// server, a client, or both waited for.
    #[command(subcommand)]
    Perftest(cli::perftest::Cmd),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if let Some(ns) = &cli.netns {
        switch::enter_netns(ns)?;
    }
    match cli.cmd {
        Cmd::Capture(c) => cli::capture::run(c),
        Cmd::Check(a) => cli::check::run(a),
        Cmd::Stats(a) => cli::stats::run(a),
        Cmd::Testbed(c) => cli::testbed::run(c),
        Cmd::Selftest => selftest::run(),
        Cmd::Mark(a) => cli::mark::run(a),
        Cmd::Modules(c) => cli::modules::run(c),
        Cmd::Port(c) => cli::port::run(c),
        Cmd::Record(a) => cli::record::run(a),
        Cmd::Report(a) => cli::report::run(a),
        Cmd::Spread(a) => cli::spread::run(a),
        Cmd::Model(a) => cli::model::run(a),
        Cmd::Run(a) => cli::run::run(a),
        Cmd::Paper(a) => cli::paper::run(a),
        Cmd::Experiment(c) => cli::experiment::run(c),
        Cmd::Workload(c) => cli::workload::run(c),
        Cmd::Fct(c) => cli::fct::run(c),
        Cmd::Deadlock(a) => cli::deadlock::run(a),
        Cmd::Flows(a) => cli::flows::run(a),
        Cmd::Perftest(c) => cli::perftest::run(c),
    }
}
