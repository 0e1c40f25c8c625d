//! `rxecc run`: an experiment file (crate::config::experiment) on the
//! testbed guest, with rdma_rxe (patched) and rxe_cc loaded. Each run sets
//! rxe_cc's `cc` and knobs through sysfs, brings the topology up with the
//! run's switch settings, replays the flow file with flowgen on every
//! host (or with perftest pairs, run/perftest.rs), writes fct.txt, and
//! takes the topology down; at the end, the slowdown table.

use crate::clock::monotonic_ns;
use crate::config::experiment::{
    find, find_run, load, scenario_for, value_text, Experiment, NamedMetrics, Run, RunEvent,
    Scenario, Traffic, Workload,
};
use crate::config::scale;
use crate::config::{topology, workload};
use crate::modules::{self, Rxe};
use crate::report::fct;
use crate::run::fidelity::{self, Fidelity};
use crate::run::{capture, perftest};
use crate::{switch, testbed};
use anyhow::{bail, ensure, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const PARAMS: &str = "/sys/module/rxe_cc/parameters";

/// What `rxecc run`'s command line changes in the file.
#[derive(Debug, Default)]
pub struct Overrides {
    /// Only these runs, by label.
    pub runs: Option<Vec<String>>,
    /// Every flow's verbs operation.
    pub op: Option<String>,
    /// The file's `timeout_s`.
    pub timeout_s: Option<u64>,
    /// The file's `repetitions`.
    pub repetitions: Option<u32>,
    /// An incast workload's QPs per sender.
    pub qps: Option<u32>,
    /// Fail if an `[[expect]]` of the runs made is missed.
    pub check: bool,
}

/// The named metrics of one run, from its directory: `ports.jsonl` and
/// flowgen's records.
fn named_metrics(
    nm: &NamedMetrics,
    dir: &Path,
    n_flows: usize,
    rates_mbps: &BTreeMap<String, u64>,
) -> Result<BTreeMap<String, Option<f64>>> {
    let mut m = BTreeMap::new();
    if nm.is_empty() {
        return Ok(m);
    }
    let ports: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("ports.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |devs: &[String], key: &[&str]| -> Vec<u64> {
        ports
            .iter()
            .filter(|p| {
                p.get("dev")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|d| devs.iter().any(|x| x == d))
            })
            .filter_map(|p| key.iter().try_fold(p, |v, k| v.get(k))?.as_u64())
            .collect()
    };
    for (name, devs) in &nm.ports {
        let pauses: u64 = of(devs, &["pfc_rx_xoff"]).iter().sum();
        let paused: u64 = of(devs, &["paused_ns"]).iter().sum();
        m.insert(format!("{name}_pauses"), Some(pauses as f64));
        m.insert(format!("{name}_paused_ms"), Some(paused as f64 / 1e6));
    }
    for (name, devs) in &nm.peak_ingress {
        let peak = of(devs, &["ingress", "max_bytes"]).into_iter().max();
        m.insert(format!("{name}_peak_kb"), peak.map(|b| b as f64 / 1024.0));
    }
    if !nm.flows.is_empty() || !nm.wire.is_empty() {
        let recs = fct::read_records(&fct::record_files(dir)?)?;
        for (name, sel) in &nm.flows {
            let ids = sel.ids(n_flows);
            let done: Vec<&fct::Record> = ids
                .iter()
                .filter_map(|id| recs.iter().find(|r| r.id == *id && r.status == "ok"))
                .collect();
            let start = done.iter().map(|r| r.start_ns).min().unwrap_or(0);
            let end = done.iter().map(|r| r.end_ns).max().unwrap_or(0);
            let bytes: u64 = done.iter().map(|r| r.size).sum();
            let rate = (done.len() == ids.len() && end > start)
                .then(|| bytes as f64 * 8e3 / (end - start) as f64);
            m.insert(format!("{name}_mbps"), rate);
        }
        // The flows' span, all of them complete or none counted.
        let ok: Vec<&fct::Record> = recs.iter().filter(|r| r.status == "ok").collect();
        let span_ns = (ok.len() == n_flows && n_flows > 0)
            .then(|| {
                let start = ok.iter().map(|r| r.start_ns).min()?;
                let end = ok.iter().map(|r| r.end_ns).max()?;
                (end > start).then(|| end - start)
            })
            .flatten();
        for (name, dev) in &nm.wire {
            let devs = std::slice::from_ref(dev);
            let bytes = of(devs, &["deq_bytes"]).first().copied();
            let wire = bytes.zip(span_ns).map(|(b, ns)| b as f64 * 8e3 / ns as f64);
            let set = rates_mbps.get(dev).copied().filter(|r| *r > 0);
            m.insert(format!("{name}_wire_mbps"), wire);
            m.insert(
                format!("{name}_of_set"),
                wire.zip(set).map(|(w, r)| w / r as f64),
            );
            m.insert(
                format!("{name}_stalls"),
                of(devs, &["stalls"]).first().map(|s| *s as f64),
            );
        }
    }
    for (name, w) in &nm.window {
        let at = |snap: &str| {
            std::fs::read_to_string(dir.join(format!("at-{snap}.txt")))
                .ok()
                .map(|t| parse_totals(&t))
        };
        let v = match (w.as_slice(), at(&w[0]), at(&w[1])) {
            ([_, _, c], Some(a), Some(b)) => b
                .get(c)
                .zip(a.get(c))
                .map(|(b, a)| b.saturating_sub(*a) as f64),
            _ => None,
        };
        m.insert(name.clone(), v);
    }
    // Absent on the stock rdma_rxe: no rxe_cc, no counters.
    let totals: Option<BTreeMap<String, u64>> =
        std::fs::read_to_string(dir.join("rxe_cc-totals.txt"))
            .ok()
            .map(|t| parse_totals(&t));
    if nm.cpu {
        let text = std::fs::read_to_string(dir.join("cpu.txt"))
            .context("cpu.txt: the run did not measure its CPU")?;
        let cpu = CpuUse::parse(&text).context("cpu.txt")?;
        let secs = cpu.secs();
        m.insert(
            "kernel_cpu_pct".into(),
            cpu.kernel_share().map(|x| x * 100.0),
        );
        let of = |keys: &[&str]| -> Option<f64> {
            let t = totals.as_ref()?;
            Some(
                keys.iter()
                    .map(|k| t.get(*k).copied().unwrap_or(0))
                    .sum::<u64>() as f64,
            )
        };
        m.insert(
            "timer_fires_per_s".into(),
            of(&["period_fires", "pacer_fires"])
                .zip(secs)
                .map(|(f, s)| f / s),
        );
        m.insert(
            "rxe_cc_us_per_qp_s".into(),
            of(&["hook_ns", "timer_ns"])
                .zip(secs)
                .filter(|_| n_flows > 0)
                .map(|(ns, s)| ns / 1e3 / s / n_flows as f64),
        );
    }
    if !nm.counters.is_empty() {
        for (name, c) in &nm.counters {
            let Some(t) = &totals else {
                m.insert(name.clone(), None);
                continue;
            };
            let get = |k: &String| {
                t.get(k).copied().with_context(|| {
                    format!(
                        "counters.{name}: rxe_cc's totals have no '{k}' (they have {})",
                        t.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                })
            };
            let v = match c.as_slice() {
                [a] => Some(get(a)? as f64),
                [a, b] => {
                    let (a, b) = (get(a)?, get(b)?);
                    (b > 0).then(|| a as f64 / b as f64)
                }
                _ => bail!("counters.{name}: one counter or two"),
            };
            m.insert(name.clone(), v);
        }
    }
    Ok(m)
}

fn write_param(name: &str, value: &str) -> Result<()> {
    let p = Path::new(PARAMS).join(name);
    ensure!(p.exists(), "rxe_cc has no knob '{name}' ({})", p.display());
    std::fs::write(&p, value).with_context(|| format!("rxe_cc refused {name} = {value}"))
}

/// Every rxe_cc knob's current value, to put back after each run.
fn read_params() -> Result<BTreeMap<String, String>> {
    let mut m = BTreeMap::new();
    let rd = std::fs::read_dir(PARAMS)
        .with_context(|| format!("{PARAMS}: is rxe_cc loaded? (insmod rxe_cc.ko)"))?;
    for d in rd {
        let d = d?;
        let name = d.file_name().to_string_lossy().into_owned();
        if let Ok(v) = std::fs::read_to_string(d.path()) {
            m.insert(name, v.trim().to_string());
        }
    }
    Ok(m)
}

/// The guest's CPU time over a run's traffic, from two reads of
/// `/proc/stat`: its `cpu.txt` (`name value` lines).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct CpuUse {
    window_ns: u64,
    /// System, irq and softirq time, in clock ticks.
    kernel_ticks: u64,
    /// All but idle and iowait.
    busy_ticks: u64,
    ticks_per_s: u64,
    cpus: u64,
}

/// `/proc/stat`'s `cpu` line: (kernel, busy) ticks, and the CPU count.
fn proc_stat(text: &str) -> Option<(u64, u64, u64)> {
    let f: Vec<u64> = text
        .lines()
        .find(|l| l.starts_with("cpu "))?
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal ...
    let g = |i: usize| f.get(i).copied().unwrap_or(0);
    let kernel = g(2) + g(5) + g(6);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count() as u64;
    Some((kernel, kernel + g(0) + g(1) + g(7), cpus))
}

impl CpuUse {
    fn between(a: &str, b: &str, window_ns: u64) -> Option<Self> {
        let ((k0, b0, _), (k1, b1, cpus)) = (proc_stat(a)?, proc_stat(b)?);
        // SAFETY: sysconf(3) reads a constant; no memory is passed.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Some(CpuUse {
            window_ns,
            kernel_ticks: k1.saturating_sub(k0),
            busy_ticks: b1.saturating_sub(b0),
            ticks_per_s: u64::try_from(hz).ok()?,
            cpus,
        })
    }

    fn to_text(&self) -> String {
        format!(
            "window_ns {}\nkernel_ticks {}\nbusy_ticks {}\nticks_per_s {}\ncpus {}\n",
            self.window_ns, self.kernel_ticks, self.busy_ticks, self.ticks_per_s, self.cpus
        )
    }

    pub(crate) fn parse(text: &str) -> Result<Self> {
        let t = parse_totals(text);
        let get = |k: &str| t.get(k).copied().with_context(|| format!("no {k}"));
        Ok(CpuUse {
            window_ns: get("window_ns")?,
            kernel_ticks: get("kernel_ticks")?,
            busy_ticks: get("busy_ticks")?,
            ticks_per_s: get("ticks_per_s")?,
            cpus: get("cpus")?,
        })
    }

    fn secs(&self) -> Option<f64> {
        (self.window_ns > 0).then(|| self.window_ns as f64 / 1e9)
    }

    /// Kernel time as a share of all CPUs' time over the window.
    fn kernel_share(&self) -> Option<f64> {
        let all = self.secs()? * (self.ticks_per_s * self.cpus) as f64;
        (all > 0.0).then(|| self.kernel_ticks as f64 / all)
    }

    /// Busy time as a share of all CPUs' time over the window.
    pub(crate) fn busy_share(&self) -> Option<f64> {
        let all = self.secs()? * (self.ticks_per_s * self.cpus) as f64;
        (all > 0.0).then(|| self.busy_ticks as f64 / all)
    }
}

/// rxe_cc's `totals` (counters of every QP destroyed since it loaded).
fn read_totals() -> BTreeMap<String, u64> {
    parse_totals(&std::fs::read_to_string("/sys/kernel/debug/rxe_cc/totals").unwrap_or_default())
}

/// `name count` lines.
pub(crate) fn parse_totals(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn flowgen() -> PathBuf {
    std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("flowgen"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("flowgen"))
}

/// One run: returns how many flows completed.
fn run_one(
    e: &Experiment,
    run: &Run,
    sc: &Scenario,
    flows_file: &Path,
    flows: &[workload::Flow],
    out: &Path,
    base_rtt_ns: u64,
) -> Result<usize> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let with_cc = run.rxe.has_cc();
    if with_cc {
        write_param("cc", &run.cc)?;
        for (k, v) in &run.knobs {
            write_param(k, &value_text(v)?)?;
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
    let result = (|| -> Result<usize> {
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
                apply_event(ev, out, now).with_context(|| format!("event at {} s", ev.t_s))?;
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
                std::fs::write(out.join("release-end.jsonl"), ports_jsonl()?)?;
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
                    std::fs::write(out.join("locked.jsonl"), ports_jsonl()?)?;
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
        if let Some((t0, stat0)) = &cpu_start {
            let stat1 = std::fs::read_to_string("/proc/stat").unwrap_or_default();
            if let Some(c) = CpuUse::between(stat0, &stat1, monotonic_ns().saturating_sub(*t0)) {
                std::fs::write(out.join("cpu.txt"), c.to_text())?;
            }
        }
        // Queues drain and the last XONs arrive before the readers stop.
        std::thread::sleep(std::time::Duration::from_millis(500));
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
        for c in captures {
            c.stop_and_judge(out)?;
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
        let mut pfc_txt = String::new();
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
            }
        }
        std::fs::write(out.join("pfc.txt"), pfc_txt)?;
        std::fs::write(out.join("ports.jsonl"), ports_jsonl()?)?;
        // rxe_cc's totals count since the module loaded: this run's share.
        if with_cc {
            let mut totals = String::new();
            for (k, v) in read_totals() {
                let b = totals_before.get(&k).copied().unwrap_or(0);
                totals.push_str(&format!("{k} {}\n", v.saturating_sub(b)));
            }
            std::fs::write(out.join("rxe_cc-totals.txt"), totals)?;
        }
        // rxe's own counters say why a NAK or a retransmission happened
        // (RNR, sequence error, timeout); the devices are this run's.
        let counters = Command::new("rdma")
            .args(["statistic", "show"])
            .output()
            .context("rdma statistic show")?;
        std::fs::write(out.join("rxe-counters.txt"), &counters.stdout)?;
        let recs = fct::read_records(&fct::record_files(out)?)?;
        let lines = fct::fct_lines(flows, &recs, &built.topo, base_rtt_ns)?;
        std::fs::write(out.join("fct.txt"), fct::to_text(&lines))?;
        if !failed.is_empty() {
            let (name, logs) = traffic.name_and_logs();
            eprintln!(
                "rxecc run: {}: {name} failed on hosts {failed:?} (see {}/{logs})",
                run.label,
                out.display()
            );
        }
        Ok(lines.len())
    })();
    testbed::down().context("taking the topology down")?;
    result
}

/// Does what one of a run's events says, and notes it in `events.txt`
/// with its time (ns after time 0).
fn apply_event(ev: &RunEvent, out: &Path, t_ns: u64) -> Result<()> {
    let mut did = Vec::new();
    for (k, v) in &ev.knobs {
        let v = value_text(v)?;
        write_param(k, &v)?;
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
    if let Some(n) = &ev.snapshot {
        std::fs::write(out.join(format!("at-{n}.txt")), counters_now())?;
        did.push(format!("snapshot {n}"));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("events.txt"))?;
    writeln!(f, "{t_ns} {}", did.join("; "))?;
    Ok(())
}

/// The counters as they stand, `name count` lines: rxe_cc's totals with
/// every live QP's stats added (none without rxe_cc), and every rxe
/// device's counters (`rdma statistic`) summed.
fn counters_now() -> String {
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
    m.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

/// Every switch port's counters, a JSON line each (`rxecc port stats
/// --json`).
fn ports_jsonl() -> Result<String> {
    let mut ports = String::new();
    for d in switch::ports() {
        if let Ok(s) = switch::port_stats(&d) {
            ports.push_str(&serde_json::to_string(&s)?);
            ports.push('\n');
        }
    }
    Ok(ports)
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

    /// Stops dumpcap (SIGTERM: it closes the file) and writes the
    /// checkers' verdict beside the capture.
    fn stop_and_judge(mut self, out: &Path) -> Result<()> {
        // SAFETY: kill(2) on our own child's pid; no memory involved.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait()?;
        let rep = crate::report::check::judge(&crate::report::check::read(&self.pcap)?);
        std::fs::write(
            out.join(format!("check-{}.json", self.dev)),
            serde_json::to_string_pretty(&rep)?,
        )?;
        Ok(())
    }
}

/// The epoch flowgen's processes agreed on (CLOCK_MONOTONIC ns), once
/// the file exists.
fn read_epoch(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Writes qlen.txt as the simulator does: every interval, `time: <ns>`,
/// then a line `node ifindex c0 c1 ...` per switch port, ci counting the
/// 100 ns samples (here: time, exactly, from every change of the queue)
/// with the port's queue in [i, i+1) KB (1000 B), cumulative from the
/// start. Times are on the flow file's clock.
struct QlenDumper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Result<()>>,
}

/// The worst of a qlen.txt's reads, for the line `rxecc run` prints.
#[derive(Default)]
struct QlenReads {
    window_ns: u64,
    tries: u32,
    undone: usize,
    inexact: usize,
}

impl QlenReads {
    fn note(&mut self, snap: &switch::QlenSnapshot) {
        self.window_ns = self.window_ns.max(snap.window_ns);
        self.tries = self.tries.max(snap.tries);
        self.undone = self.undone.max(snap.undone);
        self.inexact += usize::from(!snap.exact);
    }
}

impl std::fmt::Display for QlenReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "reads took at most {} us, {} tries at most, {} intervals taken back at most; ",
            self.window_ns / 1000,
            self.tries,
            self.undone
        )?;
        if self.inexact > 0 {
            write!(
                f,
                "{} reads NOT EXACT (more changes during the read than the log holds)",
                self.inexact
            )
        } else {
            write!(f, "every read exact")
        }
    }
}

impl QlenDumper {
    /// Histograms count from the epoch (the flow file's first start), as
    /// the simulator's from QLEN_MON_START; flowgen writes it to
    /// `epoch_file` once every QP is connected.
    fn start(
        sim: &[topology::SimPort],
        path: PathBuf,
        interval_ms: u64,
        epoch_file: PathBuf,
        t0_ns: u64,
    ) -> Result<Self> {
        use std::io::Write as _;
        use std::sync::atomic::{AtomicBool, Ordering};
        let ports: Vec<topology::SimPort> =
            sim.iter().filter(|p| p.node_type == 1).cloned().collect();
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?,
        );
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let name = path.display().to_string();
        let thread = std::thread::spawn(move || -> Result<()> {
            let step = interval_ms * 1_000_000;
            let mut epoch = None;
            while !flag.load(Ordering::Relaxed) {
                epoch = epoch.or_else(|| read_epoch(&epoch_file));
                if epoch.is_some_and(|e| monotonic_ns() >= e) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let reader =
                switch::QlenReader::new(&ports.iter().map(|p| p.dev.clone()).collect::<Vec<_>>())?;
            let mut worst = QlenReads::default();
            let base = reader.read()?;
            worst.note(&base);
            let t_base = base.now_ns;
            let mut next = t_base + step;
            let mut dumps = 0;
            loop {
                let last = flag.load(Ordering::Relaxed);
                let t = monotonic_ns();
                if t >= next || last {
                    let snap = reader.read()?;
                    worst.note(&snap);
                    dumps += 1;
                    let t_now = snap.now_ns;
                    writeln!(w, "time: {}", t0_ns + t_now.saturating_sub(t_base))?;
                    for ((p, b0), h) in ports.iter().zip(&base.ports).zip(&snap.ports) {
                        write!(w, "{} {}", p.node, p.ifindex)?;
                        for (i, v) in h.iter().enumerate() {
                            let d = v.saturating_sub(b0.get(i).copied().unwrap_or(0));
                            write!(w, " {}", d / 100)?;
                        }
                        writeln!(w)?;
                    }
                    // A late dump (a busy guest) skips the times it missed
                    // rather than writing them all at once.
                    while next <= t_now {
                        next += step;
                    }
                }
                if last {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(interval_ms.min(20)));
            }
            w.flush()?;
            eprintln!(
                "rxecc run: {name}: {dumps} dumps of {} ports; {worst}",
                ports.len()
            );
            Ok(())
        });
        Ok(QlenDumper { stop, thread })
    }

    fn stop(self) -> Result<()> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the qlen.txt writer panicked"))?
    }
}

/// `n` one-packet flows, 20 ms apart on the idle testbed with no CC, each
/// the next of `kinds` (source, destination, bytes) in turn, into
/// `out/<name>`: their FCT lines.
fn probe_flows(
    e: &Experiment,
    path: &Path,
    out: &Path,
    name: &str,
    kinds: &[(u32, u32, u64)],
    n: u32,
) -> Result<Vec<fct::Fct>> {
    let dir = out.join(name);
    std::fs::create_dir_all(&dir)?;
    let flows: Vec<workload::Flow> = (0..n)
        .zip(kinds.iter().cycle())
        .map(|(i, &(src, dst, size))| workload::Flow {
            src,
            dst,
            pg: workload::PG,
            dport: workload::DPORT,
            size,
            start_s: workload::BASE_S + f64::from(i) * 0.02,
        })
        .collect();
    let file = dir.join("flows.txt");
    std::fs::write(&file, workload::to_text(&flows))?;
    let probe = Run {
        label: name.into(),
        cc: "none".into(),
        knobs: BTreeMap::new(),
        paper_knobs: BTreeMap::new(),
        rxe_params: BTreeMap::new(),
        switch: Default::default(),
        inject: Vec::new(),
        rxe: Rxe::Patched,
        rate_mbps: None,
        flows: None,
        deadlock_release: None,
        deadlock_release_s: None,
        events: Vec::new(),
        // One-packet flows, timed by flowgen whatever the runs use.
        traffic: Some(Traffic::Flowgen),
    };
    // The file loaded already: its text is needed for no error's place.
    let sc = scenario_for(e, &probe, path, "")?;
    let done = run_one(e, &probe, &sc, &file, &flows, &dir, 0)?;
    ensure!(
        done == flows.len(),
        "{name}: only {done} of {n} probe flows completed"
    );
    let text = std::fs::read_to_string(dir.join("fct.txt"))?;
    fct::parse(&format!("{name}/fct.txt"), &text)
}

/// The base RTT of the standalone FCT, measured: 20 one-packet flows
/// between hosts 0 and 1, 20 ms apart on the idle testbed with no CC;
/// the least of their FCT less their serialisation, so that the
/// standalone FCT is a lower bound, as the simulator's is (a median let
/// slowdowns below 1 be clipped away). Every run's fct.txt uses it, so
/// their slowdowns compare.
fn measure_base_rtt(e: &Experiment, path: &Path, out: &Path) -> Result<u64> {
    eprintln!("rxecc run: measuring the base RTT (20 one-packet flows, h0 <-> h1, no CC) ...");
    let lines = probe_flows(e, path, out, "base-rtt", &[(0, 1, 64), (1, 0, 64)], 20)?;
    let mut excess: Vec<u64> = lines
        .iter()
        .map(|l| l.fct_ns.saturating_sub(l.standalone_ns))
        .collect();
    excess.sort_unstable();
    let rtt = excess[0];
    eprintln!(
        "rxecc run: base RTT {} us, the least of 20 probes (median {}, max {})",
        rtt / 1000,
        excess[excess.len() / 2] / 1000,
        excess[excess.len() - 1] / 1000
    );
    std::fs::write(out.join("base_rtt_ns.txt"), format!("{rtt}\n"))?;
    Ok(rtt)
}

/// A scale model's regime table: the paper's groups against the
/// testbed's, whose base RTT is measured on the first run's testbed with
/// full-MTU one-packet flows from the first sender to its receiver (the
/// least of 10; 64-byte probes beside them show the intrinsic part).
fn scaled_regime(
    e: &Experiment,
    p: &scale::PaperSetting,
    path: &Path,
    out: &Path,
    flows: &[workload::Flow],
) -> Result<scale::Regime> {
    use scale::{Rate, Size, Span};
    let d = e.derived.as_ref().context("[scale] not derived")?;
    let first = flows.first().context("no flows")?;
    let pair = (first.src, first.dst);
    let senders: std::collections::BTreeSet<u32> = flows.iter().map(|f| f.src).collect();
    let n = senders.len() as u32;
    eprintln!(
        "rxecc run: measuring the testbed's base RTT, h{} -> h{}: 10 one-packet flows of {} B and 10 of 64 B, no CC ...",
        pair.0,
        pair.1,
        scale::TESTBED_MTU
    );
    let mtu = scale::TESTBED_MTU;
    let lines = probe_flows(
        e,
        path,
        out,
        "regime-rtt",
        &[(pair.0, pair.1, mtu), (pair.0, pair.1, 64)],
        20,
    )?;
    let least = |size: u64| {
        lines
            .iter()
            .filter(|l| l.size == size)
            .map(|l| l.fct_ns)
            .min()
            .unwrap_or(0)
    };
    let (full, small) = (least(mtu), least(64));
    let paper = p.paper_point(n);
    let lo = d.links.iter().map(|l| l.2).fold(d.rate_mbps, u64::min);
    let size = |x: Option<u64>| x.map(|b| Size::bytes(b as f64));
    let testbed = scale::Point {
        mtu: Size::bytes(scale::TESTBED_MTU as f64),
        bottleneck: Rate::mbps(lo as f64),
        sender: Rate::mbps(d.rate_mbps as f64),
        rtt: Span::ns(full as f64),
        t: d.t_us.map(|t| Span::us(t as f64)),
        buffer: size(d.buffer_bytes),
        xoff: size(d.xoff_bytes),
        xon: size(d.xon_bytes),
        kmin: size(d.red.map(|r| r.0)),
        kmax: size(d.red.map(|r| r.1)),
        tcd: size(d.tcd.map(|t| t.0)),
        flows: n,
    };
    let how = format!(
        "measured: {:.0} us with {} B packets, {:.0} us with 64 B; k_t x the paper's: {:.0} us",
        full as f64 / 1e3,
        scale::TESTBED_MTU,
        small as f64 / 1e3,
        p.scale().time(paper.rtt).as_us()
    );
    Ok(scale::Regime::new(p, &paper, &testbed, &how))
}

/// `rxecc run`: every run of the experiment, `repetitions` times, into
/// `out`; prints the slowdown table. Fails if any flow did not complete.
/// Each host link's offered load, both ways, from the flows: over a
/// Poisson workload's duration, or a flow file's span of start times. An
/// incast's bursts are meant to overload the link: none. A link offered
/// more than its rate is refused for a Poisson workload (its generator
/// cannot have meant it) and warned about for a flow file: its queue grows
/// for the whole run, and its FCTs measure the overload, not the CC.
fn offered_load(
    e: &Experiment,
    w: &Workload,
    flows: &[workload::Flow],
) -> Result<Vec<workload::LinkLoad>> {
    let span = match w {
        Workload::Poisson { duration_s, .. } => *duration_s,
        Workload::File { .. } => {
            let (lo, hi) = flows.iter().fold((f64::MAX, f64::MIN), |(lo, hi), f| {
                (lo.min(f.start_s), hi.max(f.start_s))
            });
            hi - lo
        }
        Workload::Incast { .. } => return Ok(Vec::new()),
    };
    let built = &e.scenario(&e.runs[0].label)?.built;
    let rates: Vec<Option<u64>> = (0..built.topo.hosts.len())
        .map(|h| built.host_rate_mbps(h))
        .collect();
    let loads = workload::offered_load(flows, &rates, span);
    let over: Vec<String> = loads
        .iter()
        .flat_map(|l| {
            [("out", l.out), ("in", l.inn)]
                .into_iter()
                .filter(|(_, x)| *x > 1.0)
                .map(move |(dir, x)| format!("h{} {dir} {x:.2}", l.host))
        })
        .collect();
    if !over.is_empty() {
        let msg = format!(
            "host links offered more than their rate over {span:.1} s of the flow file: {}",
            over.join(", ")
        );
        ensure!(!matches!(w, Workload::Poisson { .. }), "{msg}");
        eprintln!("rxecc run: WARNING: {msg}: their queues grow for the whole run");
    }
    if let Some(line) = offered_line(&loads) {
        eprintln!("rxecc run: {line}");
    }
    Ok(loads)
}

/// `offered load (out/in): h0 0.49/0.51, ...`, or None with none known.
fn offered_line(loads: &[workload::LinkLoad]) -> Option<String> {
    (!loads.is_empty()).then(|| {
        let each: Vec<String> = loads
            .iter()
            .map(|l| format!("h{} {:.2}/{:.2}", l.host, l.out, l.inn))
            .collect();
        format!(
            "offered load of each host link (out/in, of its rate): {}",
            each.join(", ")
        )
    })
}

pub fn run(path: &Path, out: &Path, o: &Overrides) -> Result<()> {
    let mut e = load(path)?;
    if let Some(op) = &o.op {
        e.op.clone_from(op);
    }
    if let Some(t) = o.timeout_s {
        e.timeout_s = t;
    }
    if let Some(n) = o.repetitions {
        ensure!(n >= 1, "repetitions must be at least 1");
        e.repetitions = n;
    }
    if let Some(only) = &o.runs {
        for l in only {
            find_run(&e, path, l).context("--runs")?;
        }
        e.runs.retain(|r| only.contains(&r.label));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    ensure!(
        Path::new("/sys/module/rdma_rxe").exists(),
        "rdma_rxe is not loaded (load the patched one: tb_load_rxe patched)"
    );
    let saved = read_params()?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    // The flow file, written once: every run replays the same flows.
    let flows_file = out.join("flows.txt");
    let Some(workload) = &e.workload else {
        bail!(
            "{}: no [workload]: it names settings for `rxecc experiment topology|knobs`, not a run",
            path.display()
        );
    };
    ensure!(
        o.qps.is_none() || matches!(workload, Workload::Incast { .. }),
        "--qps: {} has no incast workload to split over QPs",
        path.display()
    );
    let flows = match workload {
        Workload::File { flows } => {
            let p = base.join(flows);
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            let mut f = workload::parse(&p.display().to_string(), &text)?;
            // A scale model's flow file is in its paper's units; any
            // other is replayed as written.
            match e.scale.as_ref().map(|p| p.scale()) {
                Some(s) => {
                    workload::scale_flows(&mut f, s.k_t, s.k_b);
                    std::fs::write(&flows_file, workload::to_text(&f))?;
                }
                None => std::fs::write(&flows_file, &text)?,
            }
            f
        }
        Workload::Poisson {
            cdf,
            load,
            rate_mbps,
            duration_s,
            size_div,
            size_mul,
            seed,
        } => {
            let cdf = workload::Cdf::load(&find(base, cdf, "testbed/workloads")?)?;
            // Each host's own link, as the first run brings the topology
            // up; a plain bridge's hosts (no rate) the workload's or the
            // topology's default.
            let built = &e.scenario(&e.runs[0].label)?.built;
            let n = e.hosts.unwrap_or(built.topo.hosts.len() as u32) as usize;
            let rates: Vec<u64> = (0..n)
                .map(|h| {
                    built
                        .host_rate_mbps(h)
                        .or(*rate_mbps)
                        .unwrap_or(built.topo.defaults.rate_mbps)
                })
                .collect();
            let f = workload::Poisson {
                cdf: &cdf,
                rates_mbps: &rates,
                load: *load,
                duration_s: *duration_s,
                size_factor: size_mul.unwrap_or(1.0) / *size_div as f64,
                seed: *seed,
            }
            .generate()?;
            std::fs::write(&flows_file, workload::to_text(&f))?;
            f
        }
        Workload::Incast {
            senders,
            receiver,
            size,
            qps,
            period_s,
            rounds,
        } => {
            let qps = o.qps.unwrap_or(*qps);
            let f = workload::incast(senders, *receiver, *size, qps, *period_s, *rounds)?;
            std::fs::write(&flows_file, workload::to_text(&f))?;
            f
        }
    };
    ensure!(!flows.is_empty(), "the workload has no flows");
    let offered = offered_load(&e, workload, &flows)?;
    let regime = match &e.scale {
        Some(p) => {
            let r = scaled_regime(&e, p, path, out, &flows)?;
            eprint!("{}", r.table());
            for c in &e.derived.as_ref().map_or(Vec::new(), |d| d.coarse.clone()) {
                eprintln!(
                    "rxecc run: WARNING: knob {} wants {:.3} in its units, and can only be set to {}",
                    c.0, c.1, c.2
                );
            }
            let bad = r.unexplained();
            if !bad.is_empty() {
                eprintln!(
                    "rxecc run: WARNING: not a faithful scale model: {} more than {:.0}% off the paper's, and [scale] unkept does not say why",
                    bad.iter().map(|g| g.group.as_str()).collect::<Vec<_>>().join(", "),
                    scale::TOLERANCE * 100.0
                );
            }
            std::fs::write(out.join("regime.json"), serde_json::to_string_pretty(&r)?)?;
            std::fs::write(out.join("regime.txt"), r.table())?;
            Some(r)
        }
        None => {
            eprintln!("rxecc run: regime: not a scale model (no [scale]): its groups are not compared with a paper's");
            None
        }
    };
    let base_rtt_ns = match e.base_rtt_us {
        Some(us) if us >= 0.0 && us.is_finite() => (us * 1000.0) as u64,
        Some(_) => bail!("base_rtt_us must be a non-negative number"),
        None if e.slowdown_table => measure_base_rtt(&e, path, out)?,
        // No slowdowns asked for: fct.txt's standalone FCT counts the
        // serialisation alone (docs/workloads.md).
        None => 0,
    };
    let total = e.runs.len() as u32 * e.repetitions;
    let mut k = 0;
    let mut incomplete = Vec::new();
    let mut tables: Vec<(String, PathBuf)> = Vec::new();
    // A run of another rdma_rxe build swaps the modules; the caller's
    // (its build, rxe_cc and its knobs) are back when the runs end,
    // however they end.
    let caller = modules::loaded_rxe().unwrap_or(Rxe::Patched);
    let mut loaded = caller;
    let mut runs = || -> Result<()> {
        for rep in 1..=e.repetitions {
            for r in &e.runs {
                if r.rxe != loaded {
                    eprintln!("rxecc run: rdma_rxe: the {} build", r.rxe.name());
                    modules::switch_rxe(r.rxe)?;
                    loaded = r.rxe;
                }
                k += 1;
                let label = if e.repetitions > 1 {
                    format!("{}-{rep}", r.label)
                } else {
                    r.label.clone()
                };
                let dir = out.join(&label);
                // The run's own flow file, or the workload's.
                let n_flows = e
                    .scenario(&r.label)?
                    .flows
                    .as_ref()
                    .map_or(flows.len(), |(_, f)| f.len());
                eprintln!(
                    "rxecc run: [{k}/{total}] {label}: cc={}{}, {} flows ...",
                    r.cc,
                    if r.rxe == Rxe::Patched {
                        String::new()
                    } else {
                        format!(" on the {} rdma_rxe", r.rxe.name())
                    },
                    n_flows
                );
                let t0 = Instant::now();
                let rxe_was = modules::set_rxe_params(&r.rxe_params)?;
                let res = e.scenario(&r.label).and_then(|sc| {
                    let (ff, fl) = sc
                        .flows
                        .as_ref()
                        .map_or((&flows_file, &flows), |(p, f)| (p, f));
                    run_one(&e, r, sc, ff, fl, &dir, base_rtt_ns)
                });
                for (name, v) in &saved {
                    let _ = std::fs::write(Path::new(PARAMS).join(name), v);
                }
                modules::set_rxe_params(&rxe_was)?;
                let done = res.with_context(|| format!("run {label}"))?;
                eprintln!(
                    "rxecc run: [{k}/{total}] {label}: {done} of {} flows completed in {:.0} s",
                    n_flows,
                    t0.elapsed().as_secs_f64()
                );
                if done < n_flows {
                    incomplete.push(label.clone());
                }
                tables.push((label, dir.join("fct.txt")));
            }
        }
        Ok(())
    };
    let ran = runs();
    if loaded != caller {
        eprintln!(
            "rxecc run: rdma_rxe: the {} build, with rxe_cc, again",
            caller.name()
        );
        modules::switch_rxe(caller)?;
        for (name, v) in &saved {
            let _ = std::fs::write(Path::new(PARAMS).join(name), v);
        }
    }
    ran?;
    // Every run's fct.txt, read once for both tables.
    let mut raw = Vec::new();
    for (label, f) in &tables {
        let text = std::fs::read_to_string(f)?;
        raw.push((label.clone(), fct::parse(&f.display().to_string(), &text)?));
    }
    // Every run at a glance: FCT tails, pauses and drops.
    let mut sums = Vec::new();
    let mut fidelity = Vec::new();
    for (((label, f), (_, lines)), run) in tables.iter().zip(&raw).zip(run_labels(&e)) {
        let pfc = std::fs::read_to_string(f.with_file_name("pfc.txt")).unwrap_or_default();
        let pauses = pfc.lines().filter(|l| l.ends_with(" 1")).count() as u64;
        let ports: Vec<serde_json::Value> =
            std::fs::read_to_string(f.with_file_name("ports.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
        let sum_of = |ports: &[serde_json::Value], key: &str| -> u64 {
            ports
                .iter()
                .filter_map(|v| v.get(key).and_then(serde_json::Value::as_u64))
                .sum()
        };
        let sum = |key: &str| sum_of(&ports, key);
        let dir = f.parent().unwrap_or(Path::new("."));
        // A released deadlock: the drops until then are the switch's, the
        // rest flow control off's.
        let locked: Option<Vec<serde_json::Value>> =
            std::fs::read_to_string(dir.join("locked.jsonl"))
                .ok()
                .map(|t| {
                    t.lines()
                        .filter_map(|l| serde_json::from_str(l).ok())
                        .collect()
                });
        let drops = locked.as_ref().map_or(sum("drops"), |l| sum_of(l, "drops"));
        let mut r = fct::RunSummary::new(
            label,
            lines,
            pauses,
            drops,
            base_rtt_ns,
            sum("rate_violations"),
        );
        r.drops_after_release = locked
            .as_ref()
            .map(|l| sum("drops").saturating_sub(sum_of(l, "drops")));
        r.deadlocks = std::fs::read_to_string(dir.join("rec/deadlocks.csv"))
            .ok()
            .map(|t| t.lines().filter(|l| l.contains(",start,")).count());
        let sc = e.scenario(&run.label)?;
        let rates = sc.built.port_rates_mbps();
        let n_flows = sc.flows.as_ref().map_or(flows.len(), |(_, f)| f.len());
        r.named = named_metrics(&e.metrics, dir, n_flows, &rates)
            .with_context(|| format!("[metrics] of run {label}"))?;
        sums.push(r);
        let t_us = e.derived.as_ref().and_then(|d| d.t_us);
        fidelity.push((label.clone(), Fidelity::of_run(dir, t_us)?));
    }
    let mut table = fct::summary_table(&sums);
    if let Some(line) = offered_line(&offered) {
        table.push_str(&line);
        table.push('\n');
    }
    print!("{table}");
    std::fs::write(out.join("summary.txt"), &table)?;
    std::fs::write(
        out.join("offered_load.json"),
        serde_json::to_string_pretty(&offered)?,
    )?;
    if !e.metrics.is_empty() && (e.repetitions > 1 || e.metrics.baseline.is_some()) {
        let samples: Vec<(&str, &BTreeMap<String, Option<f64>>)> = run_labels(&e)
            .into_iter()
            .zip(&sums)
            .map(|(r, s)| (r.label.as_str(), &s.named))
            .collect();
        let (table, rows) =
            crate::report::spread::across_runs(&samples, e.metrics.baseline.as_deref());
        print!("{table}");
        std::fs::write(out.join("metrics.txt"), &table)?;
        std::fs::write(
            out.join("metrics.json"),
            serde_json::to_string_pretty(&rows)?,
        )?;
    }
    let mut engaged = Vec::new();
    for ((label, f), r) in tables.iter().zip(run_labels(&e)) {
        let totals =
            std::fs::read_to_string(f.with_file_name("rxe_cc-totals.txt")).unwrap_or_default();
        let verdict = Engagement::judge(&r.cc, &totals);
        let line = verdict.line(label, &r.cc);
        if verdict.engaged == Some(false) && e.expect_signals {
            eprintln!("rxecc run: WARNING: {line}");
        }
        println!("{line}");
        engaged.push(serde_json::json!({
            "run": label,
            "cc": r.cc,
            "engaged": verdict.engaged,
            "signals": verdict.signals,
        }));
    }
    std::fs::write(
        out.join("engagement.json"),
        serde_json::to_string_pretty(&engaged)?,
    )?;
    if !e.capture.is_empty() {
        let table = check_table(&e, &tables)?;
        print!("{table}");
        std::fs::write(out.join("check.txt"), &table)?;
    }
    // Every run's summary carries the regime it ran in.
    let mut summary = serde_json::to_value(&sums)?;
    if let Some(runs) = summary.as_array_mut() {
        let objs = runs.iter_mut().filter_map(|v| v.as_object_mut());
        for (run, (_, f)) in objs.zip(&fidelity) {
            if let Some(r) = &regime {
                run.insert("regime".into(), serde_json::to_value(r)?);
            }
            run.insert("fidelity".into(), serde_json::to_value(f)?);
        }
    }
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    if let Some(r) = &regime {
        print!("{}", r.table());
        print!("{}", fidelity::table(&fidelity));
    }
    let unfaithful: Vec<String> = fidelity
        .iter()
        .flat_map(|(label, f)| f.flags().into_iter().map(move |w| format!("{label}: {w}")))
        .collect();
    for w in &unfaithful {
        eprintln!("rxecc run: WARNING: {w}");
    }
    if let Some(r) = &e.report {
        let setup = crate::report::Setup {
            capacity_bps: r.capacity_mbps.saturating_mul(1_000_000),
            bottleneck: r.bottleneck.clone(),
            period_ns: r.period_us.saturating_mul(1000),
        };
        let recs: Vec<(String, PathBuf)> = tables
            .iter()
            .map(|(l, f)| (l.clone(), f.with_file_name("rec")))
            .collect();
        let (table, loaded) =
            crate::report::compare(&recs, &setup, Some(&out.join("report.json")))?;
        crate::report::plot::plot_runs(&loaded, &setup, &out.join("plots"))?;
        print!("{table}");
        std::fs::write(out.join("table.txt"), &table)?;
    }
    let mut missed = judge_expects(&e, out)?;
    if let Some(r) = &regime {
        missed.extend(unfaithful.iter().map(|w| format!("emulator: {w}")));
        for g in r.unexplained() {
            missed.push(format!(
                "regime: {} is {:+.0}% off the paper's ({:.3} against {:.3})",
                g.group,
                g.off * 100.0,
                g.testbed,
                g.paper
            ));
        }
    }
    ensure!(
        !o.check || missed.is_empty(),
        "expectations missed (expect.txt, regime.txt): {}",
        missed.join("; ")
    );
    if !e.slowdown_table {
        ensure!(
            incomplete.is_empty(),
            "not every flow completed in {incomplete:?}"
        );
        return Ok(());
    }
    let all: Vec<_> = raw
        .iter()
        .map(|(label, lines)| {
            (
                label.clone(),
                fct::buckets(lines, fct::Kind::All, e.step, None),
            )
        })
        .collect();
    let table = fct::table(&all, e.step);
    print!("{table}");
    std::fs::write(out.join("slowdown.txt"), &table)?;
    std::fs::create_dir_all(out.join("plots"))?;
    crate::report::plot::plot_fct(&all, &raw, fct::Kind::All, &out.join("plots"))?;
    ensure!(
        incomplete.is_empty(),
        "not every flow completed in {incomplete:?}"
    );
    Ok(())
}

/// Judges the file's `[[expect]]` entries whose runs were all made
/// against the runs' metrics (report.json and summary.json), prints the
/// table and writes it (`expect.txt`, `expect.json`); returns the ones
/// missed.
fn judge_expects(e: &Experiment, out: &Path) -> Result<Vec<String>> {
    let made: Vec<&String> = e.runs.iter().map(|r| &r.label).collect();
    let expects: Vec<crate::config::claim::Claim> = e
        .expects
        .iter()
        .filter(|x| x.runs().all(|r| made.contains(&r)))
        .cloned()
        .collect();
    if expects.is_empty() {
        return Ok(Vec::new());
    }
    let report = crate::run::paper::metrics_of(out)?;
    let verdicts = crate::run::paper::judge_claims(&expects, &report)?;
    let table = crate::run::paper::verdict_table(&verdicts, "expectation", "bound");
    print!("{table}");
    std::fs::write(out.join("expect.txt"), &table)?;
    std::fs::write(
        out.join("expect.json"),
        serde_json::to_string_pretty(&verdicts)?,
    )?;
    Ok(verdicts
        .iter()
        .filter(|v| !v.met)
        .map(|v| v.says.clone())
        .collect())
}

/// The runs in the order `run` ran them (each repetition in turn).
fn run_labels(e: &Experiment) -> Vec<&Run> {
    (0..e.repetitions).flat_map(|_| e.runs.iter()).collect()
}

/// Whether a run's algorithm acted, from rxe_cc's totals for the run: a
/// `cc=` run that shows none of its signals (DCQCN with no CNP, HPCC with
/// no INT record) is an experiment set up wrong, not a result.
#[derive(Debug, PartialEq)]
pub struct Engagement {
    /// None: the algorithm acts on nothing (`none`), or is not known here.
    pub engaged: Option<bool>,
    /// Each signal counter of the algorithm, with its count in the run.
    pub signals: Vec<(String, u64)>,
}

impl Engagement {
    /// The counters that show `cc` acting (`AlgId::signals`).
    fn signals(cc: &str) -> Option<&'static [&'static str]> {
        cc_core::alg::AlgId::from_name(cc).map(cc_core::alg::AlgId::signals)
    }

    /// Judges `cc`'s run from the text of its rxe_cc-totals.txt.
    pub fn judge(cc: &str, totals: &str) -> Self {
        let get = |k: &str| {
            totals
                .lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(n, _)| *n == k)
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        match Self::signals(cc) {
            None | Some([]) => Engagement {
                engaged: None,
                signals: Vec::new(),
            },
            Some(keys) => {
                let signals: Vec<(String, u64)> =
                    keys.iter().map(|k| (k.to_string(), get(k))).collect();
                Engagement {
                    engaged: Some(signals.iter().any(|(_, n)| *n > 0)),
                    signals,
                }
            }
        }
    }

    /// One line for the run's summary.
    pub fn line(&self, label: &str, cc: &str) -> String {
        let counts: Vec<String> = self
            .signals
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        match self.engaged {
            Some(true) => format!("engaged: {label} (cc={cc}): {}", counts.join(", ")),
            Some(false) => format!(
                "{label} (cc={cc}) shows none of its signals ({}): the algorithm never acted; check the switch's marking, INT and knobs",
                counts.join(", ")
            ),
            None if Self::signals(cc).is_none() => {
                format!("engaged: {label} (cc={cc}): no signals known for this algorithm")
            }
            None => format!("engaged: {label} (cc={cc}): nothing to act on"),
        }
    }
}

/// Every run's captures, judged: one row per run and port, with the
/// packets the switch's injection rules acted on in the run.
fn check_table(e: &Experiment, runs: &[(String, PathBuf)]) -> Result<String> {
    let mut rows = Vec::new();
    for (label, fct_txt) in runs {
        let dir = fct_txt.parent().unwrap_or(Path::new("."));
        let injected: u64 = std::fs::read_to_string(dir.join("ports.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| {
                [
                    "injected_drops",
                    "injected_marks",
                    "injected_corrupts",
                    "injected_dups",
                    "injected_delays",
                    "injected_reorders",
                ]
                .iter()
                .filter_map(|k| v.get(*k).and_then(serde_json::Value::as_u64))
                .sum::<u64>()
            })
            .sum();
        for dev in &e.capture {
            let f = dir.join(format!("check-{dev}.json"));
            let text =
                std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
            let rep: crate::report::check::Report = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a check report", f.display()))?;
            rows.push((label.clone(), dev.clone(), injected, rep));
        }
    }
    Ok(crate::report::check::run_table(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engagement_needs_one_signal_of_the_algorithm() {
        let t = "cnps 0\ncnps_sent 0\nint_acks 12\nhalts 0\n";
        let d = Engagement::judge("dcqcn", t);
        assert_eq!(d.engaged, Some(false));
        assert!(d
            .line("x", "dcqcn")
            .contains("none of its signals (cnps 0)"));
        assert_eq!(Engagement::judge("hpcc", t).engaged, Some(true));
        assert_eq!(Engagement::judge("acc", t).engaged, Some(false));
        assert_eq!(
            Engagement::judge("acc", "periods_mixed 3\n").engaged,
            Some(true)
        );
        assert_eq!(Engagement::judge("none", t).engaged, None);
        // Every algorithm but none has a signal, and one is enough.
        for alg in cc_core::alg::ALGS {
            let first = alg.signals().first().map(|k| format!("{k} 1\n"));
            let want = first.as_ref().map(|_| true);
            let got = Engagement::judge(alg.name(), first.as_deref().unwrap_or("")).engaged;
            assert_eq!(got, want, "{}", alg.name());
        }
        assert!(Engagement::judge("bbr", t)
            .line("x", "bbr")
            .contains("no signals known"));
    }

    #[test]
    fn wire_rate_is_a_ports_bytes_over_the_flows_span() {
        let dir = std::env::temp_dir().join(format!("rxecc-wire-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("flows.txt"),
            "2\n1 0 3 100 1000000 0\n1 0 3 100 1000000 0\n",
        )
        .unwrap();
        // The second run is at 400 Mb/s, the first at the file's 200.
        let exp = r#"
            topology = "dumbbell"
            hosts = 2
            rate_mbps = 200
            [workload]
            kind = "file"
            flows = "flows.txt"
            [metrics]
            wire = { port = "p0" }
            [[run]]
            label = "r200"
            cc = "none"
            [[run]]
            label = "r400"
            cc = "none"
            rate_mbps = 400
        "#;
        let p = dir.join("e.toml");
        std::fs::write(&p, exp).unwrap();
        let e = load(&p).unwrap();
        let rate = |label: &str| e.scenario(label).unwrap().built.port_rates_mbps();
        assert_eq!(rate("r200")["p0"], 200);
        assert_eq!(rate("r400")["p0"], 400);
        assert_eq!(rate("r400")["v1"], 400);
        for (bad, why) in [
            (
                exp.replace("\"p0\"", "\"p7\""),
                "[metrics] port: no port p7",
            ),
            (
                exp.replace("rate_mbps = 400", "rate_mbps = 0"),
                "run r400: rate_mbps = 0: a link needs a rate",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        // 2 MB of frames in 80 ms (the first post at 1 ms, the last end at
        // 81 ms): 200 Mb/s, half of a 400 Mb/s port.
        std::fs::write(
            dir.join("ports.jsonl"),
            r#"{"dev":"p0","deq_bytes":2000000,"stalls":3}"#,
        )
        .unwrap();
        let csv = "id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n\
                   0,1,0,100,write,1000000,0,1000000,61000000,ok\n\
                   1,1,0,100,write,1000000,0,2000000,81000000,ok\n";
        std::fs::write(dir.join("flowgen-h1.csv"), csv).unwrap();
        let m = named_metrics(&e.metrics, &dir, 2, &rate("r400")).unwrap();
        assert_eq!(m["port_wire_mbps"], Some(200.0));
        assert_eq!(m["port_of_set"], Some(0.5));
        assert_eq!(m["port_stalls"], Some(3.0));
        // A flow that did not complete: no span, no rate.
        std::fs::write(
            dir.join("flowgen-h1.csv"),
            csv.replace("81000000,ok", "81000000,failed"),
        )
        .unwrap();
        let m = named_metrics(&e.metrics, &dir, 2, &rate("r400")).unwrap();
        assert_eq!(m["port_wire_mbps"], None);
        assert_eq!(m["port_of_set"], None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn named_metrics_are_checked_and_computed() {
        let dir = std::env::temp_dir().join(format!("rxecc-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("flows.txt"),
            "3\n0 1 3 100 1000000 0\n2 1 3 100 500 0\n2 1 3 100 1000000 0.04\n",
        )
        .unwrap();
        let exp = r#"
            topology = "dumbbell"
            hosts = 3
            [workload]
            kind = "file"
            flows = "flows.txt"
            [metrics]
            ports = { trunk = ["p0", "v1"] }
            peak_ingress = { any = ["p0", "p1"] }
            flows = { big = 0, small = 1, both = [0, 1], big2 = [0], pair = [0, 2], all = "all" }
            counters = { acks = ["acks"], acks_per_packet = ["acks", "tx_packets"] }
            [[run]]
            label = "none"
            cc = "none"
        "#;
        let p = dir.join("e.toml");
        std::fs::write(&p, exp).unwrap();
        let e = load(&p).unwrap();
        for (bad, why) in [
            (
                exp.replace("\"v1\"", "\"v9\""),
                "[metrics] trunk: no port v9",
            ),
            (
                exp.replace("small = 1", "small = 3"),
                "flows.small: flow 3, but the workload has 3 flows",
            ),
            (
                exp.replace("\"all\" }", "\"every\" }"),
                "flows.all: \"every\": a flow's line in the flow file (0 = the first), a list of them, or \"all\"",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        // A run's directory: its ports and flowgen's records (flow 0 took
        // 80 ms for 1 MB: 100 Mb/s; flow 1 failed).
        std::fs::write(
            dir.join("ports.jsonl"),
            concat!(
                r#"{"dev":"p0","pfc_rx_xoff":3,"paused_ns":2500000,"ingress":{"max_bytes":4096}}"#,
                "\n",
                r#"{"dev":"v1","pfc_rx_xoff":2,"paused_ns":500000}"#,
                "\n",
                r#"{"dev":"p1","pfc_rx_xoff":7,"paused_ns":9,"ingress":{"max_bytes":10240}}"#,
                "\n",
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("flowgen-h0.csv"),
            "id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n\
             0,0,1,100,write,1000000,0,1000,80001000,ok\n\
             1,2,1,100,write,500,0,0,10,failed\n\
             2,2,1,100,write,1000000,0,41000000,160001000,ok\n",
        )
        .unwrap();
        let m = named_metrics(&e.metrics, &dir, 3, &BTreeMap::new()).unwrap();
        assert_eq!(m["trunk_pauses"], Some(5.0));
        assert_eq!(m["trunk_paused_ms"], Some(3.0));
        assert_eq!(m["any_peak_kb"], Some(10.0));
        assert_eq!(m["big_mbps"], Some(100.0));
        assert_eq!(m["small_mbps"], None);
        assert_eq!(m["both_mbps"], None, "one of them failed");
        assert_eq!(m["big2_mbps"], Some(100.0));
        // 2 MB from the first post (1 us) to the last completion (160 ms).
        assert_eq!(m["pair_mbps"], Some(100.0));
        assert_eq!(m["all_mbps"], None, "flow 1 failed");
        // A run on the stock rdma_rxe: no rxe_cc, no counters.
        assert_eq!(m["acks"], None);
        std::fs::write(dir.join("rxe_cc-totals.txt"), "tx_packets 400\nacks 100\n").unwrap();
        let m = named_metrics(&e.metrics, &dir, 3, &BTreeMap::new()).unwrap();
        assert_eq!(m["acks"], Some(100.0));
        assert_eq!(m["acks_per_packet"], Some(0.25));
        std::fs::write(dir.join("rxe_cc-totals.txt"), "tx_packets 400\n").unwrap();
        let err = format!(
            "{:#}",
            named_metrics(&e.metrics, &dir, 3, &BTreeMap::new()).unwrap_err()
        );
        assert!(
            err.contains("rxe_cc's totals have no 'acks' (they have tx_packets)"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cpu_use_over_a_window() {
        let stat = |user: u64, sys: u64, idle: u64, irq: u64, soft: u64| {
            format!(
                "cpu  {user} 0 {sys} {idle} 5 {irq} {soft} 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 7\n"
            )
        };
        // 2 s on 2 CPUs at 100 ticks/s: 400 ticks; 40 of them kernel.
        let mut c = CpuUse::between(
            &stat(10, 20, 30, 1, 2),
            &stat(70, 50, 300, 5, 8),
            2_000_000_000,
        )
        .unwrap();
        c.ticks_per_s = 100;
        assert_eq!((c.kernel_ticks, c.busy_ticks, c.cpus), (40, 100, 2));
        assert_eq!(c.kernel_share(), Some(0.1));
        assert_eq!(CpuUse::parse(&c.to_text()).unwrap(), c);
        assert!(CpuUse::parse("window_ns 1\n").is_err());
        assert!(CpuUse::between("intr 7\n", &stat(1, 1, 1, 1, 1), 1).is_none());
        // The metrics: fires and rxe_cc's time per second, per flow.
        let dir = std::env::temp_dir().join(format!("rxecc-cpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cpu.txt"), c.to_text()).unwrap();
        let nm = NamedMetrics {
            cpu: true,
            ..Default::default()
        };
        let m = named_metrics(&nm, &dir, 4, &BTreeMap::new()).unwrap();
        assert_eq!(m["kernel_cpu_pct"], Some(10.0));
        assert_eq!(m["timer_fires_per_s"], None, "stock: no rxe_cc");
        std::fs::write(
            dir.join("rxe_cc-totals.txt"),
            "period_fires 300\npacer_fires 100\nhook_ns 6000000\ntimer_ns 2000000\n",
        )
        .unwrap();
        let m = named_metrics(&nm, &dir, 4, &BTreeMap::new()).unwrap();
        assert_eq!(m["timer_fires_per_s"], Some(200.0));
        // 8 ms over 2 s and 4 flows: 1000 us per second per flow.
        assert_eq!(m["rxe_cc_us_per_qp_s"], Some(1000.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `[metrics] window`: a counter's rise between two event snapshots,
    /// null where a snapshot or the counter is missing.
    #[test]
    fn window_metric_between_snapshots() {
        let dir = std::env::temp_dir().join(format!("rxecc-win-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("at-from.txt"),
            "acked_bytes 1000\nrxe1.sent_pkts 7\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("at-to.txt"),
            "acked_bytes 5096\nrxe1.sent_pkts 10\n",
        )
        .unwrap();
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let nm = NamedMetrics {
            window: BTreeMap::from([
                ("acked".to_string(), w(&["from", "to", "acked_bytes"])),
                ("sent".to_string(), w(&["from", "to", "rxe1.sent_pkts"])),
                ("none".to_string(), w(&["from", "to", "naks"])),
                ("later".to_string(), w(&["from", "end", "acked_bytes"])),
            ]),
            ..Default::default()
        };
        let m = named_metrics(&nm, &dir, 1, &BTreeMap::new()).unwrap();
        assert_eq!(m["acked"], Some(4096.0));
        assert_eq!(m["sent"], Some(3.0));
        assert_eq!(m["none"], None);
        assert_eq!(m["later"], None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
