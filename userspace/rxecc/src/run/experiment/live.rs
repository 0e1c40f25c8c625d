//! A run while its flows go: the readers started before the traffic
//! (captures, PAUSEs, queue lengths, the recording), the traffic
//! (flowgen on every host, or perftest pairs), the watch over it (events,
//! CPU, a deadlock released), and what it measured once it ended.

use super::metrics::{read_totals, CpuUse};
use super::one::{
    apply_event, jsonl, name_count_lines, ports_now, read_epoch, Capture, RunOutcome,
};
use super::qlen::QlenDumper;
use crate::clock::monotonic_ns;
use crate::config::experiment::{Experiment, Run, RunEvent, Traffic};
use crate::config::{topology, workload};
use crate::report::fct;
use crate::run::perftest;
use crate::testbed::record::{self, Recorder};
use crate::testbed::stats;
use crate::{switch, testbed};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn flowgen() -> PathBuf {
    std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("flowgen"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("flowgen"))
}

/// A run while its flows go: the readers started before the traffic,
/// and the traffic.
pub(super) struct Live {
    captures: Vec<Capture>,
    /// Where the traffic's processes agree on the epoch.
    sync: PathBuf,
    /// The flow file's time of the epoch (its earliest start), ns.
    t0_ns: u64,
    sim: Vec<topology::SimPort>,
    pfc: Option<switch::PfcEvents>,
    qlen: Option<QlenDumper>,
    rec: Option<Recorder>,
    traffic: Traffic,
    perftest: Option<perftest::Runner>,
    /// flowgen's process on each host, while it runs.
    flowgen: Vec<(u32, Child)>,
}

/// What the watch over a run's flows saw.
#[derive(Default)]
pub(super) struct Watched {
    /// Hosts whose traffic failed.
    failed: Vec<u32>,
    /// /proc/stat at time 0 (to a poll), for cpu.txt.
    cpu_start: Option<(u64, String)>,
    snapshots: BTreeMap<String, BTreeMap<String, u64>>,
    locked: Option<Vec<switch::PortStats>>,
}

impl Live {
    /// Captures, the PAUSE and queue readers and the recording first,
    /// then the traffic: perftest's pairs, or flowgen on every host.
    pub(super) fn start(
        e: &Experiment,
        run: &Run,
        built: &topology::Built,
        n: u32,
        flows_file: &Path,
        flows: &[workload::Flow],
        out: &Path,
    ) -> Result<Self> {
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
        // The flowgen processes agree on the epoch there, once every QP is
        // connected (flowgen --sync-dir). Not in `out`: they poll it every
        // 10 ms, and the guest's results directory is 9p, whose reads under
        // TCG left one process 250 ms behind the others.
        let sync =
            std::env::temp_dir().join(format!("rxecc-sync-{}-{}", std::process::id(), run.label));
        let _ = std::fs::remove_dir_all(&sync);
        std::fs::create_dir_all(&sync).with_context(|| format!("creating {}", sync.display()))?;
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
        let rec = (e.record_interval_ms > 0).then(|| {
            Recorder::start(record::Options {
                out: out.join("rec"),
                interval: Duration::from_millis(e.record_interval_ms),
                duration: None,
                debugfs_root: stats::DEBUGFS_ROOT.into(),
                deadlock_hold: Duration::from_millis(e.deadlock_hold_ms),
                log: Some(out.join("record.log")),
            })
        });
        let traffic = e.traffic_of(run);
        let mut live = Live {
            captures,
            sync,
            t0_ns,
            sim,
            pfc,
            qlen,
            rec,
            traffic,
            perftest: None,
            flowgen: Vec::new(),
        };
        match traffic {
            Traffic::Perftest => {
                let msg = e.perftest_message_bytes();
                let settings = perftest::Settings {
                    op: &e.op,
                    message_bytes: msg,
                    ack_timeout: e.ack_timeout,
                    setup_s: e.setup_s,
                    timeout_s: e.timeout_s,
                };
                live.perftest = Some(perftest::Runner::start(
                    crate::config::perftest::pairs(flows, msg)?,
                    &built.plan.hosts,
                    &settings,
                    out,
                    &live.sync.join("epoch"),
                )?);
            }
            Traffic::Flowgen => {
                let ips: Vec<String> = (0..n as usize).map(topology::host_ip).collect();
                for h in 0..n {
                    let child = live
                        .flowgen_command(
                            e,
                            &built.plan.hosts[h as usize],
                            h,
                            &ips,
                            flows_file,
                            out,
                        )?
                        .spawn()
                        .context("starting flowgen (ip netns exec ... flowgen)")?;
                    live.flowgen.push((h, child));
                }
            }
        }
        Ok(live)
    }

    /// flowgen on host `h` (namespace `ns`).
    fn flowgen_command(
        &self,
        e: &Experiment,
        ns: &str,
        h: u32,
        ips: &[String],
        flows_file: &Path,
        out: &Path,
    ) -> Result<Command> {
        let log = std::fs::File::create(out.join(format!("flowgen-h{h}.log")))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(flowgen())
            .args(["--host", &h.to_string(), "--hosts", &ips.join(",")])
            .arg("--flows")
            .arg(flows_file)
            .arg("--sync-dir")
            .arg(&self.sync)
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
        Ok(cmd)
    }

    /// Time 0, once the traffic's processes have agreed on it.
    fn epoch(&self) -> Option<u64> {
        read_epoch(&self.sync.join("epoch"))
    }

    /// Watches the flows until they end: the run's events when due, the
    /// CPU from time 0, and a deadlock released. A flowgen that fails
    /// before time 0 leaves the others waiting for it (up to setup_s):
    /// they are stopped too.
    pub(super) fn watch(&mut self, run: &Run, out: &Path) -> Result<Watched> {
        let mut w = Watched::default();
        let mut release = Release::default();
        let mut events = run.events.iter().peekable();
        while !self.flowgen.is_empty()
            || self
                .perftest
                .as_ref()
                .is_some_and(perftest::Runner::running)
        {
            let epoch = self.epoch();
            if w.cpu_start.is_none() {
                let now = monotonic_ns();
                if epoch.is_some_and(|t| now >= t) {
                    w.cpu_start = std::fs::read_to_string("/proc/stat").ok().map(|s| (now, s));
                }
            }
            let due =
                |ev: &&RunEvent| epoch.is_some_and(|t| monotonic_ns() >= t + (ev.t_s * 1e9) as u64);
            while let Some(ev) = events.next_if(due) {
                let now = monotonic_ns().saturating_sub(epoch.unwrap_or(0));
                if let Some((name, snap)) =
                    apply_event(ev, out, now).with_context(|| format!("event at {} s", ev.t_s))?
                {
                    w.snapshots.insert(name, snap);
                }
            }
            let mut still = Vec::new();
            for (h, mut c) in std::mem::take(&mut self.flowgen) {
                match c.try_wait()? {
                    Some(st) if !st.success() => w.failed.push(h),
                    Some(_) => {}
                    None => still.push((h, c)),
                }
            }
            self.flowgen = still;
            if let Some(p) = &mut self.perftest {
                p.poll()?;
            }
            release.poll(run, out, self.rec.as_ref(), &mut w.locked)?;
            if !w.failed.is_empty() && self.epoch().is_none() {
                for (h, c) in &mut self.flowgen {
                    let _ = c.kill();
                    let _ = c.wait();
                    w.failed.push(*h);
                }
                self.flowgen.clear();
                eprintln!(
                    "rxecc run: {}: flowgen failed on host {} before time 0 (see flowgen-h*.log)",
                    run.label, w.failed[0]
                );
                break;
            }
            // The next event, if sooner than the next poll.
            let next_ms = events.peek().zip(epoch).map(|(ev, t)| {
                (t + (ev.t_s * 1e9) as u64).saturating_sub(monotonic_ns()) / 1_000_000
            });
            std::thread::sleep(Duration::from_millis(next_ms.map_or(50, |m| m.min(50))));
        }
        if events.peek().is_some() {
            eprintln!(
                "rxecc run: {}: the flows ended before every event (events.txt has those done)",
                run.label
            );
        }
        Ok(w)
    }

    /// Stops the readers once the queues have drained and writes what
    /// the run measured.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        self,
        mut w: Watched,
        e: &Experiment,
        run: &Run,
        built: &topology::Built,
        flows: &[workload::Flow],
        out: &Path,
        base_rtt_ns: u64,
        totals_before: Option<&BTreeMap<String, u64>>,
    ) -> Result<RunOutcome> {
        if let Some(p) = self.perftest {
            w.failed.extend(p.failed_hosts());
            p.finish(&e.op)?;
        }
        w.failed.sort_unstable();
        let cpu = w.cpu_start.and_then(|(t0, stat0)| {
            let stat1 = std::fs::read_to_string("/proc/stat").unwrap_or_default();
            CpuUse::between(&stat0, &stat1, monotonic_ns().saturating_sub(t0))
        });
        if let Some(c) = &cpu {
            std::fs::write(out.join("cpu.txt"), c.to_text())?;
        }
        // Queues drain and the last XONs arrive before the readers stop.
        std::thread::sleep(Duration::from_millis(500));
        let recorded = match self.rec.map(Recorder::stop).transpose() {
            Ok(r) => r,
            Err(err) => {
                eprintln!("rxecc run: {}: the recording failed: {err:#}", run.label);
                None
            }
        };
        if let Some(q) = self.qlen {
            q.stop()?;
        }
        for c in &self.captures {
            c.drain();
        }
        let mut checks = Vec::new();
        for c in self.captures {
            checks.push(c.stop_and_judge(out)?);
        }
        // No epoch: no process got as far as its flows (flowgen-h*.log).
        let epoch = read_epoch(&self.sync.join("epoch")).unwrap_or_else(monotonic_ns);
        let _ = std::fs::remove_dir_all(&self.sync);
        std::fs::write(out.join("epoch_ns.txt"), format!("{epoch}\n"))?;
        let pfc = self.pfc.map(switch::PfcEvents::stop).transpose()?;
        let file_ns = |mono: u64| (mono + self.t0_ns).saturating_sub(epoch);
        let pauses = write_pfc(&pfc.unwrap_or_default(), &self.sim, file_ns, out)?;
        let ports = ports_now();
        std::fs::write(out.join("ports.jsonl"), jsonl(&ports)?)?;
        // rxe_cc's totals count since the module loaded: this run's share.
        let totals = totals_before.map(|before| {
            read_totals()
                .into_iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.saturating_sub(before.get(&k).copied().unwrap_or(0)),
                    )
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
        if !w.failed.is_empty() {
            let (name, logs) = self.traffic.name_and_logs();
            eprintln!(
                "rxecc run: {}: {name} failed on hosts {:?} (see {}/{logs})",
                run.label,
                w.failed,
                out.display()
            );
        }
        Ok(RunOutcome {
            fct: lines,
            records,
            pauses,
            ports,
            locked: w.locked,
            deadlocks: recorded.map(|r| r.deadlocks as usize),
            totals,
            cpu,
            snapshots: w.snapshots,
            checks,
        })
    }
}

/// pfc.txt (the simulator's `time node type port pause` lines) from the
/// PAUSE and resume events of the ports in `sim`; the PAUSEs counted.
fn write_pfc(
    events: &[switch::PfcEvent],
    sim: &[topology::SimPort],
    file_ns: impl Fn(u64) -> u64,
    out: &Path,
) -> Result<u64> {
    let by_id: BTreeMap<u32, &topology::SimPort> = sim
        .iter()
        .filter_map(|p| Some((switch::port_id(&p.dev)?, p)))
        .collect();
    let (mut text, mut pauses) = (String::new(), 0);
    for ev in events {
        if let Some(p) = by_id.get(&ev.port_id) {
            text.push_str(&format!(
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
    std::fs::write(out.join("pfc.txt"), text)?;
    Ok(pauses)
}

/// A deadlock the recording saw would hold the flows until the timeout:
/// the ports are noted as they stand, then flow control goes off (or to
/// deadlock_release's, for deadlock_release_s, then off), so that the
/// held bytes drain and the flows complete (the run's summary counts the
/// deadlock). Once per run.
#[derive(Default)]
struct Release {
    done: bool,
    /// When a release's own flow control ends.
    until: Option<u64>,
}

impl Release {
    fn poll(
        &mut self,
        run: &Run,
        out: &Path,
        rec: Option<&Recorder>,
        locked: &mut Option<Vec<switch::PortStats>>,
    ) -> Result<()> {
        if let Some(t) = self.until.filter(|t| monotonic_ns() >= *t) {
            self.until = None;
            std::fs::write(out.join("release-end.jsonl"), jsonl(&ports_now())?)?;
            testbed::set_flow_control(switch::FlowControl::None)
                .context("flow control off after the release")?;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(out.join("released.txt"))?;
            writeln!(f, "{} none", t.max(monotonic_ns()))?;
        }
        // Every row the recording sent since the last poll (a start once
        // released is no news).
        let mut seen = false;
        for row in rec.iter().flat_map(|r| r.deadlocks.try_iter()) {
            seen |= row.event == "start";
        }
        if self.done || !seen {
            return Ok(());
        }
        self.done = true;
        let ports = ports_now();
        std::fs::write(out.join("locked.jsonl"), jsonl(&ports)?)?;
        *locked = Some(ports);
        let to = run.deadlock_release.unwrap_or(switch::FlowControl::None);
        std::fs::write(
            out.join("released.txt"),
            format!("{} {}\n", monotonic_ns(), to.name()),
        )?;
        testbed::set_flow_control(to).context("releasing a deadlock")?;
        if to != switch::FlowControl::None {
            self.until =
                Some(monotonic_ns() + (run.deadlock_release_s.unwrap_or(0.0) * 1e9) as u64);
        }
        eprintln!(
            "rxecc run: {}: deadlock (rec/deadlocks.csv); flow control now {} so that the flows drain",
            run.label,
            to.name()
        );
        Ok(())
    }
}
