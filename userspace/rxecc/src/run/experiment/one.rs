//! One run of an experiment: its knobs, its topology up, its traffic
//! (flowgen on every host, or perftest pairs), its events, and what it
//! measured, returned as a [`RunOutcome`]; the files it writes beside
//! (fct.txt, pfc.txt, ports.jsonl, ...) are for people and other tools.

use super::live::Live;
use super::metrics::{read_totals, CpuUse};
use crate::config::experiment::{value_text, Experiment, Run, RunEvent, Scenario};
use crate::config::{topology, workload};
use crate::modules::{self, Rxe};
use crate::report::fct;
use crate::run::capture;
use crate::{switch, testbed};
use anyhow::{ensure, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// What one run measured, as values: the summary, the named metrics,
/// the fidelity table and the engagement line are worked out from these,
/// never from the files the run writes beside them.
#[derive(Debug, Default)]
pub(crate) struct RunOutcome {
    /// A line per flow (fct.txt): its length is how many completed.
    pub fct: Vec<fct::Fct>,
    /// flowgen's or perftest's records of each flow.
    pub records: Vec<fct::Record>,
    /// PAUSE frames the switch's ports sent (pfc.txt's lines that pause).
    pub pauses: u64,
    /// Every port's counters at the end (ports.jsonl).
    pub ports: Vec<switch::PortStats>,
    /// Every port's counters when a deadlock was released (locked.jsonl).
    pub locked: Option<Vec<switch::PortStats>>,
    /// Deadlocks `rxecc record` saw (rec/deadlocks.csv), if it ran.
    pub deadlocks: Option<usize>,
    /// rxe_cc's totals, this run's share (rxe_cc-totals.txt); None on the
    /// stock rdma_rxe.
    pub totals: Option<BTreeMap<String, u64>>,
    /// The guest's CPU over the traffic (cpu.txt), once time 0 came.
    pub cpu: Option<CpuUse>,
    /// The counters at each of the run's snapshot events (at-<name>.txt).
    pub snapshots: BTreeMap<String, BTreeMap<String, u64>>,
    /// Each captured port's packets, judged (check-<port>.json).
    pub checks: Vec<(String, crate::report::check::Report)>,
}

/// One run of `run` into `out`: what it measured.
pub(crate) fn run_one(
    e: &Experiment,
    run: &Run,
    sc: &Scenario,
    flows_file: &Path,
    flows: &[workload::Flow],
    out: &Path,
    base_rtt_ns: u64,
) -> Result<RunOutcome> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let with_cc = set_modules(run, out)?;
    let totals_before = with_cc.then(read_totals);
    let (built, n) = topology_here(e, sc, flows, out)?;
    testbed::up_built(&built, false, false)?;
    let result = (|| -> Result<RunOutcome> {
        std::thread::sleep(Duration::from_secs_f64(e.settle_s));
        let mut live = Live::start(e, run, &built, n, flows_file, flows, out)?;
        let watched = live.watch(run, out)?;
        live.finish(
            watched,
            e,
            run,
            &built,
            flows,
            out,
            base_rtt_ns,
            totals_before.as_ref(),
        )
    })();
    testbed::down().context("taking the topology down")?;
    result
}

/// Sets the run's algorithm and knobs (with rxe_cc) and notes which
/// rdma_rxe ran; true if rxe_cc is loaded.
fn set_modules(run: &Run, out: &Path) -> Result<bool> {
    let with_cc = run.rxe.has_cc();
    if with_cc {
        modules::set_knob("cc", &run.cc)?;
        for (k, v) in &run.knobs {
            modules::set_knob(k, &value_text(v)?)?;
        }
    }
    // Which rdma_rxe ran: the build whose file has the loaded module's
    // build ID, which follows.
    std::fs::write(
        out.join("rxe.txt"),
        format!(
            "{} {}\n",
            modules::loaded_rxe().map_or("unknown", Rxe::name),
            modules::rxe_build_id().unwrap_or_default()
        ),
    )?;
    Ok(with_cc)
}

/// The run's topology as resolved when the file loaded, its file written
/// into `out` (what `down` and a flow-control switch read back), checked
/// against the flows and captures; and the number of hosts that run.
fn topology_here(
    e: &Experiment,
    sc: &Scenario,
    flows: &[workload::Flow],
    out: &Path,
) -> Result<(topology::Built, u32)> {
    let topo_file = out.join("topology.toml");
    std::fs::write(&topo_file, &sc.text)?;
    let mut built = sc.built.clone();
    built.plan.file.clone_from(&topo_file);
    let n = e.hosts.unwrap_or(built.topo.hosts.len() as u32);
    ensure!(
        n as usize <= built.topo.hosts.len(),
        "hosts = {n}, but the topology has {}",
        built.topo.hosts.len()
    );
    ensure!(
        flows.iter().all(|f| f.src < n && f.dst < n),
        "the workload uses a host beyond the experiment's {n}"
    );
    for dev in &e.capture {
        ensure!(
            built.plan.ports.iter().any(|(d, _)| d == dev),
            "capture: no port {dev} in the topology (its ports: {})",
            built
                .plan
                .ports
                .iter()
                .map(|(d, _)| d.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok((built, n))
}

/// Does what one of a run's events says, and notes it in `events.txt`
/// with its time (ns after time 0); a snapshot's counters, with its name.
pub(super) fn apply_event(
    ev: &RunEvent,
    out: &Path,
    t_ns: u64,
) -> Result<Option<(String, BTreeMap<String, u64>)>> {
    let mut did = Vec::new();
    for (k, v) in &ev.knobs {
        let v = value_text(v)?;
        modules::set_knob(k, &v)?;
        did.push(format!("{k}={v}"));
    }
    for r in &ev.inject {
        switch::add_inject_rule(&r.port, r)?;
        did.push(format!("inject at {}: {}", r.port, r.to_args()));
    }
    for d in &ev.clear_inject {
        switch::clear_inject_rules(d)?;
        did.push(format!("injection rules at {d} cleared"));
    }
    let snapshot = match &ev.snapshot {
        Some(n) => {
            let c = counters_now();
            std::fs::write(out.join(format!("at-{n}.txt")), name_count_lines(&c))?;
            did.push(format!("snapshot {n}"));
            Some((n.clone(), c))
        }
        None => None,
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("events.txt"))?;
    writeln!(f, "{t_ns} {}", did.join("; "))?;
    Ok(snapshot)
}

/// The counters as they stand: rxe_cc's totals with every live QP's
/// stats added (none without rxe_cc), and every rxe device's counters
/// (`rdma statistic`) summed.
fn counters_now() -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = BTreeMap::new();
    if let Ok(snap) =
        crate::testbed::stats::snapshot(Path::new(crate::testbed::stats::DEBUGFS_ROOT))
    {
        for st in std::iter::once(&snap.totals).chain(snap.qps.values()) {
            for (k, v) in &st.counters {
                let e = m.entry(k.clone()).or_default();
                *e = e.saturating_add(*v);
            }
        }
    }
    if let Ok(o) = Command::new("rdma").args(["statistic", "show"]).output() {
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            // "link rxe1/1 sent_pkts 12 ...": each counter summed, and
            // per device as rxe1.sent_pkts.
            let w: Vec<&str> = line.split_whitespace().collect();
            let dev = w.get(1).and_then(|d| d.split('/').next()).unwrap_or("");
            for kv in w.get(2..).unwrap_or_default().chunks(2) {
                if let [k, v] = kv {
                    if let Ok(v) = v.parse::<u64>() {
                        let e = m.entry((*k).to_string()).or_default();
                        *e = e.saturating_add(v);
                        m.insert(format!("{dev}.{k}"), v);
                    }
                }
            }
        }
    }
    m
}

/// `name count` lines, as rxe_cc's totals are written.
pub(super) fn name_count_lines(m: &BTreeMap<String, u64>) -> String {
    m.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

/// Every switch port's counters as they stand.
pub(super) fn ports_now() -> Vec<switch::PortStats> {
    switch::ports()
        .iter()
        .filter_map(|d| switch::port_stats(d).ok())
        .collect()
}

/// Ports' counters, a JSON line each (`rxecc port stats --json`).
pub(super) fn jsonl(ports: &[switch::PortStats]) -> Result<String> {
    let mut s = String::new();
    for p in ports {
        s.push_str(&serde_json::to_string(p)?);
        s.push('\n');
    }
    Ok(s)
}

/// A capture of one port's RoCEv2 packets during a run.
pub(super) struct Capture {
    dev: String,
    pcap: PathBuf,
    log: PathBuf,
    child: Child,
}

impl Capture {
    /// dumpcap on `dev` (in namespace `ns`, if any), once it captures
    /// (run/capture.rs).
    pub(super) fn start(dev: &str, ns: Option<&str>, out: &Path) -> Result<Self> {
        let pcap = out.join(format!("{dev}.pcap"));
        let log = out.join(format!("{dev}-capture.log"));
        let child = capture::start(dev, ns, &pcap, &log)?;
        eprintln!("rxecc run: capturing RoCEv2 on {dev}");
        Ok(Capture {
            dev: dev.to_string(),
            pcap,
            log,
            child,
        })
    }

    /// Waits until the capture has caught up (run/capture.rs).
    pub(super) fn drain(&self) {
        capture::drain(&self.pcap, &self.log);
    }

    /// Stops dumpcap (SIGTERM: it closes the file) and judges the capture:
    /// the port and the checkers' verdict, also written beside it.
    pub(super) fn stop_and_judge(
        mut self,
        out: &Path,
    ) -> Result<(String, crate::report::check::Report)> {
        // SAFETY: kill(2) on our own child's pid; no memory involved.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait()?;
        let rep = crate::report::check::judge(&crate::report::check::read(&self.pcap)?);
        std::fs::write(
            out.join(format!("check-{}.json", self.dev)),
            serde_json::to_string_pretty(&rep)?,
        )?;
        Ok((self.dev, rep))
    }
}

/// The epoch flowgen's processes agreed on (CLOCK_MONOTONIC ns), once
/// the file exists.
pub(super) fn read_epoch(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}
