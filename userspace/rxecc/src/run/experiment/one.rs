//! One run of an experiment: its knobs, its topology up, its traffic
//! (flowgen on every host, or perftest pairs), its events, and what it
//! measured, returned as a [`RunOutcome`]; the files it writes beside
//! (fct.txt, pfc.txt, ports.jsonl, ...) are for people and other tools.

use super::metrics::{read_totals, CpuUse};
use super::qlen::QlenDumper;
use crate::clock::monotonic_ns;
use crate::config::experiment::{value_text, Experiment, Run, RunEvent, Scenario, Traffic};
use crate::config::{topology, workload};
use crate::modules::{self, Rxe};
use crate::report::fct;
use crate::run::{capture, perftest};
use crate::{switch, testbed};
use anyhow::{ensure, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn flowgen() -> PathBuf {
    std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("flowgen"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("flowgen"))
}

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
    let totals_before = read_totals();
    // The run's topology as resolved when the file loaded; its file here
    // is what `down` and a flow-control switch read back.
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
    testbed::up_built(&built, false, false)?;
    let result = (|| -> Result<RunOutcome> {
        std::thread::sleep(std::time::Duration::from_secs_f64(e.settle_s));
        let mut captures = Vec::new();
        for dev in &e.capture {
            let ns = built
                .plan
                .ports
                .iter()
                .find(|(d, _)| d == dev)
                .and_then(|(_, ns)| ns.clone());
            captures.push(Capture::start(dev, ns.as_deref(), out)?);
        }
        let ips: Vec<String> = (0..n as usize).map(topology::host_ip).collect();
        // The flowgen processes agree on the epoch there, once every QP is
        // connected (flowgen --sync-dir). Not in `out`: they poll it every
        // 10 ms, and the guest's results directory is 9p, whose reads under
        // TCG left one process 250 ms behind the others.
        let sync =
            std::env::temp_dir().join(format!("rxecc-sync-{}-{}", std::process::id(), run.label));
        let _ = std::fs::remove_dir_all(&sync);
        std::fs::create_dir_all(&sync).with_context(|| format!("creating {}", sync.display()))?;
        // The flow file's clock: its earliest start is at the epoch.
        let t0_ns = flows
            .iter()
            .map(|f| (f.start_s * 1e9).round() as u64)
            .min()
            .unwrap_or(0);
        let sim = built.sim_ports();
        // A plain bridge has no port programs, hence no PAUSE to hear of.
        let pfc = if built.plan.ports.is_empty() {
            None
        } else {
            Some(switch::PfcEvents::start()?)
        };
        let qlen = if pfc.is_some() {
            Some(QlenDumper::start(
                &sim,
                out.join("qlen.txt"),
                e.qlen_interval_ms.max(1),
                sync.join("epoch"),
                t0_ns,
            )?)
        } else {
            std::fs::write(out.join("qlen.txt"), "")?;
            None
        };
        let rec = if e.record_interval_ms > 0 {
            Some(
                Command::new(std::env::current_exe()?)
                    .arg("record")
                    .arg("--out")
                    .arg(out.join("rec"))
                    .args(["--interval-ms", &e.record_interval_ms.to_string()])
                    .args(["--deadlock-hold-ms", &e.deadlock_hold_ms.to_string()])
                    .stderr(std::fs::File::create(out.join("record.log"))?)
                    .spawn()
                    .context("starting rxecc record")?,
            )
        } else {
            None
        };
        let traffic = e.traffic_of(run);
        let mut perftest = match traffic {
            Traffic::Perftest => {
                let msg = e.perftest_message_bytes();
                let settings = perftest::Settings {
                    op: &e.op,
                    message_bytes: msg,
                    ack_timeout: e.ack_timeout,
                    setup_s: e.setup_s,
                    timeout_s: e.timeout_s,
                };
                Some(perftest::Runner::start(
                    crate::config::perftest::pairs(flows, msg)?,
                    &built.plan.hosts,
                    &settings,
                    out,
                    &sync.join("epoch"),
                )?)
            }
            Traffic::Flowgen => None,
        };
        let mut kids: Vec<(u32, Child)> = Vec::new();
        // flowgen on every host (perftest's pairs started above).
        let flowgen_hosts = if traffic == Traffic::Flowgen {
            0..n
        } else {
            0..0
        };
        for h in flowgen_hosts {
            let ns = built.plan.hosts[h as usize].clone();
            let log = std::fs::File::create(out.join(format!("flowgen-h{h}.log")))?;
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", &ns])
                .arg(flowgen())
                .args(["--host", &h.to_string(), "--hosts", &ips.join(",")])
                .arg("--flows")
                .arg(flows_file)
                .arg("--sync-dir")
                .arg(&sync)
                .args(["--setup-timeout", &e.setup_s.to_string(), "--op", &e.op])
                .args(["--timeout", &e.timeout_s.to_string()])
                .arg("--out")
                .arg(out.join(format!("flowgen-h{h}.csv")))
                .stdout(Stdio::null())
                .stderr(log);
            if let Some(t) = e.ack_timeout {
                cmd.args(["--ack-timeout", &t.to_string()]);
            }
            if let Some(b) = e.message_bytes {
                cmd.args(["--msg-size", &b.to_string()]);
            }
            let child = cmd
                .spawn()
                .context("starting flowgen (ip netns exec ... flowgen)")?;
            kids.push((h, child));
        }
        // A process that fails before time 0 leaves the others waiting for
        // it (up to setup_s): stop them too.
        let mut failed = Vec::new();
        let mut running = kids;
        let (mut released, mut polls) = (false, 0u32);
        // When a release's own flow control ends (deadlock_release_s).
        let mut release_until: Option<u64> = None;
        let mut events = run.events.iter().peekable();
        // /proc/stat at time 0 (to a poll), for cpu.txt.
        let mut cpu_start: Option<(u64, String)> = None;
        let mut snapshots = BTreeMap::new();
        let mut locked = None;
        while !running.is_empty() || perftest.as_ref().is_some_and(perftest::Runner::running) {
            // Time 0, once flowgen's processes have agreed on it.
            let epoch = read_epoch(&sync.join("epoch"));
            if cpu_start.is_none() {
                let now = monotonic_ns();
                if epoch.is_some_and(|t| now >= t) {
                    cpu_start = std::fs::read_to_string("/proc/stat").ok().map(|s| (now, s));
                }
            }
            // The run's events that are due.
            let due =
                |ev: &&RunEvent| epoch.is_some_and(|t| monotonic_ns() >= t + (ev.t_s * 1e9) as u64);
            while let Some(ev) = events.next_if(due) {
                let now = monotonic_ns().saturating_sub(epoch.unwrap_or(0));
                if let Some((name, snap)) =
                    apply_event(ev, out, now).with_context(|| format!("event at {} s", ev.t_s))?
                {
                    snapshots.insert(name, snap);
                }
            }
            let mut still = Vec::new();
            for (h, mut c) in running {
                match c.try_wait()? {
                    Some(st) if !st.success() => failed.push(h),
                    Some(_) => {}
                    None => still.push((h, c)),
                }
            }
            running = still;
            if let Some(p) = &mut perftest {
                p.poll()?;
            }
            // A deadlock `rxecc record` saw would hold the flows until the
            // timeout: note the ports as they stand, then flow control
            // off (or deadlock_release's, for deadlock_release_s, then
            // off), so that the held bytes drain and the flows complete
            // (the run's summary counts the deadlock).
            if let Some(t) = release_until.filter(|t| monotonic_ns() >= *t) {
                release_until = None;
                std::fs::write(out.join("release-end.jsonl"), jsonl(&ports_now())?)?;
                testbed::set_flow_control(switch::FlowControl::None)
                    .context("flow control off after the release")?;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(out.join("released.txt"))?;
                writeln!(f, "{} none", t.max(monotonic_ns()))?;
            }
            if rec.is_some() && !released && polls % 10 == 0 {
                let seen = std::fs::read_to_string(out.join("rec/deadlocks.csv"))
                    .is_ok_and(|t| t.contains(",start,"));
                if seen {
                    released = true;
                    let ports = ports_now();
                    std::fs::write(out.join("locked.jsonl"), jsonl(&ports)?)?;
                    locked = Some(ports);
                    let to = run.deadlock_release.unwrap_or(switch::FlowControl::None);
                    std::fs::write(
                        out.join("released.txt"),
                        format!("{} {}\n", monotonic_ns(), to.name()),
                    )?;
                    testbed::set_flow_control(to).context("releasing a deadlock")?;
                    if to != switch::FlowControl::None {
                        release_until = Some(
                            monotonic_ns() + (run.deadlock_release_s.unwrap_or(0.0) * 1e9) as u64,
                        );
                    }
                    eprintln!(
                        "rxecc run: {}: deadlock (rec/deadlocks.csv); flow control now {} so that the flows drain",
                        run.label,
                        to.name()
                    );
                }
            }
            polls += 1;
            // The next event, if sooner than the next poll.
            let next_ms = events.peek().zip(epoch).map(|(ev, t)| {
                (t + (ev.t_s * 1e9) as u64).saturating_sub(monotonic_ns()) / 1_000_000
            });
            if !failed.is_empty() && read_epoch(&sync.join("epoch")).is_none() {
                for (h, c) in &mut running {
                    let _ = c.kill();
                    let _ = c.wait();
                    failed.push(*h);
                }
                eprintln!(
                    "rxecc run: {}: flowgen failed on host {} before time 0 (see flowgen-h*.log)",
                    run.label, failed[0]
                );
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(
                next_ms.map_or(50, |m| m.min(50)),
            ));
        }
        if events.peek().is_some() {
            eprintln!(
                "rxecc run: {}: the flows ended before every event (events.txt has those done)",
                run.label
            );
        }
        if let Some(p) = perftest {
            failed.extend(p.failed_hosts());
            p.finish(&e.op)?;
        }
        failed.sort_unstable();
        let cpu = cpu_start.and_then(|(t0, stat0)| {
            let stat1 = std::fs::read_to_string("/proc/stat").unwrap_or_default();
            CpuUse::between(&stat0, &stat1, monotonic_ns().saturating_sub(t0))
        });
        if let Some(c) = &cpu {
            std::fs::write(out.join("cpu.txt"), c.to_text())?;
        }
        // Queues drain and the last XONs arrive before the readers stop.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let recorded = rec.is_some();
        if let Some(mut r) = rec {
            // SAFETY: kill(2) on our own child's pid; no memory involved.
            unsafe { libc::kill(r.id() as libc::pid_t, libc::SIGINT) };
            if !r.wait()?.success() {
                eprintln!(
                    "rxecc run: {}: rxecc record failed (see record.log)",
                    run.label
                );
            }
        }
        if let Some(q) = qlen {
            q.stop()?;
        }
        for c in &captures {
            c.drain();
        }
        let mut checks = Vec::new();
        for c in captures {
            checks.push(c.stop_and_judge(out)?);
        }
        // No epoch: no process got as far as its flows (flowgen-h*.log).
        let epoch = read_epoch(&sync.join("epoch")).unwrap_or_else(monotonic_ns);
        let _ = std::fs::remove_dir_all(&sync);
        std::fs::write(out.join("epoch_ns.txt"), format!("{epoch}\n"))?;
        let file_ns = |mono: u64| (mono + t0_ns).saturating_sub(epoch);
        let by_id: BTreeMap<u32, &topology::SimPort> = sim
            .iter()
            .filter_map(|p| Some((switch::port_id(&p.dev)?, p)))
            .collect();
        let (mut pfc_txt, mut pauses) = (String::new(), 0);
        for ev in pfc
            .map(switch::PfcEvents::stop)
            .transpose()?
            .unwrap_or_default()
        {
            if let Some(p) = by_id.get(&ev.port_id) {
                pfc_txt.push_str(&format!(
                    "{} {} {} {} {}\n",
                    file_ns(ev.t_ns),
                    p.node,
                    p.node_type,
                    p.ifindex,
                    u8::from(ev.pause)
                ));
                pauses += u64::from(ev.pause);
            }
        }
        std::fs::write(out.join("pfc.txt"), pfc_txt)?;
        let ports = ports_now();
        std::fs::write(out.join("ports.jsonl"), jsonl(&ports)?)?;
        // rxe_cc's totals count since the module loaded: this run's share.
        let totals = with_cc.then(|| {
            read_totals()
                .into_iter()
                .map(|(k, v)| {
                    let b = totals_before.get(&k).copied().unwrap_or(0);
                    (k, v.saturating_sub(b))
                })
                .collect::<BTreeMap<_, _>>()
        });
        if let Some(t) = &totals {
            std::fs::write(out.join("rxe_cc-totals.txt"), name_count_lines(t))?;
        }
        // rxe's own counters say why a NAK or a retransmission happened
        // (RNR, sequence error, timeout); the devices are this run's.
        let counters = Command::new("rdma")
            .args(["statistic", "show"])
            .output()
            .context("rdma statistic show")?;
        std::fs::write(out.join("rxe-counters.txt"), &counters.stdout)?;
        let records = fct::read_records(&fct::record_files(out)?)?;
        let lines = fct::fct_lines(flows, &records, &built.topo, base_rtt_ns)?;
        std::fs::write(out.join("fct.txt"), fct::to_text(&lines))?;
        // The recorder is a child process: its file is how it tells.
        let deadlocks = std::fs::read_to_string(out.join("rec/deadlocks.csv"))
            .ok()
            .filter(|_| recorded)
            .map(|t| t.lines().filter(|l| l.contains(",start,")).count());
        if !failed.is_empty() {
            let (name, logs) = traffic.name_and_logs();
            eprintln!(
                "rxecc run: {}: {name} failed on hosts {failed:?} (see {}/{logs})",
                run.label,
                out.display()
            );
        }
        Ok(RunOutcome {
            fct: lines,
            records,
            pauses,
            ports,
            locked,
            deadlocks,
            totals,
            cpu,
            snapshots,
            checks,
        })
    })();
    testbed::down().context("taking the topology down")?;
    result
}

/// Does what one of a run's events says, and notes it in `events.txt`
/// with its time (ns after time 0); a snapshot's counters, with its name.
fn apply_event(
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
fn name_count_lines(m: &BTreeMap<String, u64>) -> String {
    m.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

/// Every switch port's counters as they stand.
fn ports_now() -> Vec<switch::PortStats> {
    switch::ports()
        .iter()
        .filter_map(|d| switch::port_stats(d).ok())
        .collect()
}

/// Ports' counters, a JSON line each (`rxecc port stats --json`).
fn jsonl(ports: &[switch::PortStats]) -> Result<String> {
    let mut s = String::new();
    for p in ports {
        s.push_str(&serde_json::to_string(p)?);
        s.push('\n');
    }
    Ok(s)
}

/// A capture of one port's RoCEv2 packets during a run.
struct Capture {
    dev: String,
    pcap: PathBuf,
    log: PathBuf,
    child: Child,
}

impl Capture {
    /// dumpcap on `dev` (in namespace `ns`, if any), once it captures
    /// (run/capture.rs).
    fn start(dev: &str, ns: Option<&str>, out: &Path) -> Result<Self> {
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
    fn drain(&self) {
        capture::drain(&self.pcap, &self.log);
    }

    /// Stops dumpcap (SIGTERM: it closes the file) and judges the capture:
    /// the port and the checkers' verdict, also written beside it.
    fn stop_and_judge(mut self, out: &Path) -> Result<(String, crate::report::check::Report)> {
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
