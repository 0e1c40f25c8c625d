//! Experiment files and `rxecc run`: a topology, a workload, and the
//! algorithms to compare, each with its knobs and its switch settings, in
//! one TOML file (docs/workloads.md). Run inside the testbed guest with
//! rdma_rxe (patched) and rxe_cc loaded; each run sets rxe_cc's `cc` and
//! knobs through sysfs, brings the topology up with the run's switch
//! settings, replays the flow file with flowgen on every host (or with
//! perftest, `traffic`), writes fct.txt, and takes the topology down; at
//! the end, the slowdown table.

use super::lines::{line_at, Lines};
use crate::switch::MarkMode;
use crate::{config::scale, config::topology, config::workload};
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    #[serde(default)]
    pub description: String,
    /// A topology name (testbed/topologies) or path, relative to the
    /// experiment file.
    pub topology: String,
    /// flowgen runs on hosts 0..hosts-1 (default: every host); only those
    /// hosts of the topology are brought up.
    pub hosts: Option<u32>,
    /// write, send or read.
    #[serde(default = "default_op")]
    pub op: String,
    /// What drives every run's flows, unless a run says (default
    /// flowgen).
    #[serde(default)]
    pub traffic: Traffic,
    #[serde(default = "one")]
    pub repetitions: u32,
    /// The most seconds the QPs' set-up may take. Time 0 of the flow file
    /// is 0.25 s after every host's flowgen has connected its QPs
    /// (flowgen --sync-dir), not a fixed lead.
    #[serde(default = "default_setup")]
    pub setup_s: u64,
    /// Every QP's local ACK timeout, 4.096 us x 2^N (flowgen
    /// --ack-timeout, perftest's -u); default rdma_cm's, about 0.5 to 1 s.
    pub ack_timeout: Option<u8>,
    /// Each flow posted as messages of at most this many bytes, all at its
    /// start (flowgen --msg-size; write and read only): one QP carrying
    /// many messages, as perftest's -s. Default: one message per flow
    /// (flowgen), 64 KB (perftest, whose flows must be whole messages).
    pub message_bytes: Option<u64>,
    /// Seconds between the testbed's bring-up and the flows' set-up
    /// (default 0).
    #[serde(default)]
    pub settle_s: f64,
    /// Seconds after time 0 before an unfinished run is given up.
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    /// Base RTT for the standalone FCT, us; default: each run's best case.
    pub base_rtt_us: Option<f64>,
    /// qlen.txt: a cumulative histogram of every switch port's queue this
    /// often, ms (the simulator's QLEN_DUMP_INTERVAL, 100 ms).
    #[serde(default = "default_qlen_ms")]
    pub qlen_interval_ms: u64,
    /// `rxecc record` during each run, sampling every this many ms, into
    /// <run>/rec (per-flow rate and throughput, per-port queue); 0: off.
    #[serde(default)]
    pub record_interval_ms: u64,
    /// With a recording: how long a cycle of switch-to-switch ports must
    /// send nothing, bytes queued, to count as deadlocked, ms. A deadlock
    /// seen is released (flow control off) so that the flows complete,
    /// and counted in summary.json.
    #[serde(default = "default_hold_ms")]
    pub deadlock_hold_ms: u64,
    /// Bucket width of the slowdown table, percent of the flows.
    #[serde(default = "default_step")]
    pub step: u32,
    /// Print the FCT slowdown table and draw its plots (fct.txt is always
    /// written); off for a few long flows, where it means little.
    #[serde(default = "yes")]
    pub slowdown_table: bool,
    /// The congestion-control table of `rxecc report` over every run's
    /// recording (needs record_interval_ms).
    pub report: Option<CcReport>,
    /// None: the file only names each run's settings, for a script that
    /// drives its own traffic (`rxecc experiment topology|knobs`).
    pub workload: Option<Workload>,
    /// Settings for every `[[switch]]` of the topology, in every run (a
    /// run's own `switch` comes on top).
    #[serde(default)]
    pub switch: topology::SwitchOverlay,
    /// The rate of every link that has none of its own in the topology
    /// (its `[defaults] rate_mbps`), Mb/s; `links` come on top.
    pub rate_mbps: Option<u64>,
    /// Link overrides: a link of the topology with the same `a` and `b`
    /// takes the settings given here.
    #[serde(default)]
    pub links: Vec<topology::Link>,
    /// Fault-injection rules of every run, added to the topology's
    /// `[[inject]]` (docs/switch.md); a run's own `inject` follow.
    #[serde(default)]
    pub inject: Vec<crate::switch::InjectRule>,
    /// rxe_cc knobs of every run on the patched build; a run's own
    /// `knobs` come on top.
    #[serde(default)]
    pub knobs: BTreeMap<String, toml::Value>,
    /// The patched rdma_rxe's in-flight limits for every run
    /// (`modules::RXE_PARAMS`, e.g. { max_unacked_psns = 512 }); a run's
    /// own come on top. Written before each run, put back after.
    #[serde(default)]
    pub rxe_params: BTreeMap<String, u64>,
    /// Events of every run, merged with a run's own in time order.
    #[serde(default)]
    pub events: Vec<RunEvent>,
    /// Port devices (switch ports or host NICs, e.g. "p1") whose RoCEv2
    /// traffic each run captures (`<run>/<dev>.pcap`, dumpcap) and judges
    /// as `rxecc check` does (`<run>/check-<dev>.json`); the runs' check
    /// table follows the summary (docs/switch.md).
    #[serde(default)]
    pub capture: Vec<String>,
    /// Metrics of every run beyond the FCTs, named here, for summary.json
    /// and the paper recipes.
    #[serde(default)]
    pub metrics: NamedMetrics,
    /// False where the runs are not meant to congest anything (a flow
    /// on an idle path): a run whose algorithm shows none of its signals
    /// is then no warning.
    #[serde(default = "yes")]
    pub expect_signals: bool,
    /// What the runs must show, in the paper recipes' claim format
    /// (run/paper.rs): judged and printed after the runs, and an error
    /// under `rxecc run --check` if one of the runs made missed it.
    #[serde(default, rename = "expect")]
    pub expects: Vec<crate::config::claim::Claim>,
    #[serde(rename = "run")]
    pub runs: Vec<Run>,
    /// The paper's setting in its own units and the time factor: the
    /// rates, delays, thresholds, T and knobs it implies are derived from
    /// it (config/scale.rs, docs/scale-model.md), and none may also be
    /// written in the testbed's units.
    pub scale: Option<scale::PaperSetting>,
    /// What `scale` gives the testbed (`load`).
    #[serde(skip)]
    pub derived: Option<scale::Derived>,
    /// Each run's testbed, resolved when the file loads (`load`), in the
    /// runs' order.
    #[serde(skip)]
    pub scenarios: Vec<Scenario>,
}

/// One run's testbed: the topology with the experiment's and the run's
/// settings laid over it, checked once, when the file loads; `rxecc run`
/// brings it up as it is.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The run's label.
    pub label: String,
    /// The run's topology written out as TOML: what the run's
    /// `topology.toml` records (nothing parses it during the run).
    pub text: String,
    /// The topology file it came from.
    pub file: PathBuf,
    pub built: topology::Built,
    /// The run's own flow file (`flows`), and its flows; none: the
    /// experiment's workload.
    pub flows: Option<(PathBuf, Vec<workload::Flow>)>,
}

impl Experiment {
    /// The resolved testbed of the run labelled `label`.
    pub fn scenario(&self, label: &str) -> Result<&Scenario> {
        self.scenarios
            .iter()
            .find(|s| s.label == label)
            .with_context(|| format!("no run '{label}' (or the file was not loaded)"))
    }
}

/// A run's testbed: the topology with `e`'s and `run`'s settings laid
/// over it, checked. `path` and `text` are the experiment file's.
pub(crate) fn scenario_for(e: &Experiment, run: &Run, path: &Path, text: &str) -> Result<Scenario> {
    let base = path.parent().unwrap_or(Path::new("."));
    let (file, src, topo) = topology_for(e, run, base, path, text)?;
    let text = toml::to_string(&topo)
        .with_context(|| format!("writing out {} as TOML", file.display()))?;
    let built = topology::build(&file, &src, topo).with_context(|| {
        format!(
            "{}: run {}: {} with the experiment's settings",
            path.display(),
            run.label,
            file.display()
        )
    })?;
    let flows = match &run.flows {
        Some(f) => {
            let p = base.join(f);
            let t = std::fs::read_to_string(&p).with_context(|| {
                format!(
                    "{}: run {}: reading {}",
                    path.display(),
                    run.label,
                    p.display()
                )
            })?;
            let fl = workload::parse(&p.display().to_string(), &t)?;
            ensure!(
                !fl.is_empty(),
                "{}: run {}: {} has no flows",
                path.display(),
                run.label,
                p.display()
            );
            Some((p, fl))
        }
        None => None,
    };
    Ok(Scenario {
        label: run.label.clone(),
        text,
        file,
        built,
        flows,
    })
}

/// `rxecc report`'s set-up: what the runs' convergence is measured against.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcReport {
    /// The bottleneck's rate, Mb/s: the bottleneck port's, from the
    /// topology (a value given must agree).
    #[serde(default)]
    pub capacity_mbps: u64,
    /// The bottleneck port (switch egress device), e.g. "p0".
    pub bottleneck: String,
    /// The period T convergence is counted in, us; with a `[scale]`,
    /// its T.
    #[serde(default)]
    pub period_us: u64,
}

/// `[metrics]`: what summary.json reports per run beyond the FCTs, under
/// names the file gives (docs/workloads.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedMetrics {
    /// `<name>_pauses` and `<name>_paused_ms`: the PAUSE frames the
    /// group's port devices received and the time they spent paused,
    /// summed (the ports a congestion tree must not reach, say).
    #[serde(default)]
    pub ports: BTreeMap<String, Vec<String>>,
    /// `<name>_peak_kb`: the highest ingress occupancy any of the group's
    /// switch ports reached, KB.
    #[serde(default)]
    pub peak_ingress: BTreeMap<String, Vec<String>>,
    /// `<name>_wire_mbps`: the bytes a port sent (frames whole), over
    /// the time from the first flow's post to the last one's completion;
    /// `<name>_of_set`, that over the port's set rate; `<name>_stalls`,
    /// its dequeues more than 2 ms late (`stall_ns`).
    #[serde(default)]
    pub wire: BTreeMap<String, String>,
    /// `<name>_mbps`: a flow's rate, its bytes over its time from post to
    /// completion, by its line in the flow file (0 = the first flow); or
    /// several flows' together (a list: their bytes from the first post
    /// to the last completion, as one flow of several QPs); null if one
    /// did not complete.
    #[serde(default)]
    pub flows: BTreeMap<String, FlowSel>,
    /// rxe_cc's counters over the run (its `totals`): one name, the
    /// count; two, the first over the second (`["acks", "tx_packets"]`:
    /// ACKs per packet). None for a run on the stock rdma_rxe.
    #[serde(default)]
    pub counters: BTreeMap<String, Vec<String>>,
    /// `<name>`: a counter between two snapshots of the run's events,
    /// `[from, to, counter]`: one of rxe_cc's (`acked_bytes`, its
    /// totals' names, live QPs included) or of the rxe devices' (`rdma
    /// statistic`: `sent_pkts`, `completer_retry_err`), summed over QPs
    /// or devices; null where a run has not both snapshots.
    #[serde(default)]
    pub window: BTreeMap<String, Vec<String>>,
    /// The cost of the run's traffic, from time 0 to the last flow's end:
    /// `kernel_cpu_pct`, the guest's system, irq and softirq time as a
    /// share of all its CPUs' time, percent; and from rxe_cc's totals (null on the stock
    /// rdma_rxe) `timer_fires_per_s`, its period and pacer timers' fires
    /// per second, and `rxe_cc_us_per_qp_s`, its own CPU (hooks and timer
    /// callbacks) in us per second per flow.
    #[serde(default)]
    pub cpu: bool,
    /// With repetitions or a baseline, the runs' metrics are also
    /// printed per run across its repetitions (median [min-max], into
    /// metrics.json), each as a ratio of this run's median.
    pub baseline: Option<String>,
}

/// One flow of the flow file, several taken together, or "all" of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FlowSel {
    One(u32),
    Many(Vec<u32>),
    All(String),
}

impl FlowSel {
    /// The flows it names, of a workload of `n`.
    pub(crate) fn ids(&self, n: usize) -> Vec<u32> {
        match self {
            FlowSel::One(i) => vec![*i],
            FlowSel::Many(v) => v.clone(),
            FlowSel::All(_) => (0..n as u32).collect(),
        }
    }
}

impl NamedMetrics {
    pub(crate) fn is_empty(&self) -> bool {
        self.ports.is_empty()
            && self.peak_ingress.is_empty()
            && self.wire.is_empty()
            && self.flows.is_empty()
            && self.counters.is_empty()
            && self.window.is_empty()
            && !self.cpu
    }

    /// Every port it names is one of `built`'s, every flow one of
    /// `flows` (when known).
    fn check(&self, built: &topology::Built, flows: Option<usize>) -> Result<()> {
        let wire: Vec<(&String, Vec<String>)> = self
            .wire
            .iter()
            .map(|(n, d)| (n, vec![d.clone()]))
            .collect();
        let groups = self
            .ports
            .iter()
            .chain(&self.peak_ingress)
            .map(|(n, d)| (n, d.clone()))
            .chain(wire);
        for (name, devs) in groups {
            for d in &devs {
                ensure!(
                    built.plan.ports.iter().any(|(p, _)| p == d),
                    "[metrics] {name}: no port {d} in the topology (its ports: {})",
                    built
                        .plan
                        .ports
                        .iter()
                        .map(|(p, _)| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        for (name, w) in &self.window {
            ensure!(
                w.len() == 3 && w.iter().all(|n| !n.is_empty()),
                "[metrics] window.{name}: [from, to, counter]: two snapshots' names and a counter"
            );
        }
        for (name, c) in &self.counters {
            ensure!(
                matches!(c.len(), 1 | 2) && c.iter().all(|n| !n.is_empty()),
                "[metrics] counters.{name}: one counter of rxe_cc's totals, or two (the first over the second)"
            );
        }
        for (name, sel) in &self.flows {
            if let FlowSel::All(s) = sel {
                ensure!(
                    s == "all",
                    "[metrics] flows.{name}: \"{s}\": a flow's line in the flow file (0 = the first), a list of them, or \"all\""
                );
            }
        }
        if let Some(n) = flows {
            for (name, sel) in &self.flows {
                ensure!(!sel.ids(n).is_empty(), "[metrics] flows.{name}: no flow");
                for id in sel.ids(n) {
                    ensure!(
                        (id as usize) < n,
                        "[metrics] flows.{name}: flow {id}, but the workload has {n} flows (0 to {})",
                        n.saturating_sub(1)
                    );
                }
            }
        }
        Ok(())
    }
}

/// Whether `label` names a repetition of `run` (`<run>-<k>`, as
/// `repetitions` labels them).
pub fn is_repetition_of(label: &str, run: &str) -> bool {
    label
        .strip_prefix(run)
        .and_then(|s| s.strip_prefix('-'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum Workload {
    /// A flow file, relative to the experiment file.
    File { flows: PathBuf },
    Poisson {
        /// A CDF file: a path relative to the experiment file, or a name
        /// in testbed/workloads.
        cdf: String,
        load: f64,
        /// Each host's link rate: the senders', from the topology (a value
        /// given must agree).
        rate_mbps: Option<u64>,
        duration_s: f64,
        /// The CDF's sizes divided by this (to fit the testbed's rates)...
        #[serde(default = "one64")]
        size_div: u64,
        /// ... and multiplied by this; with a `[scale]`, its k_b (and
        /// neither may be written).
        size_mul: Option<f64>,
        #[serde(default = "one64")]
        seed: u64,
    },
    Incast {
        senders: Vec<u32>,
        receiver: u32,
        /// Bytes per sender and round; with a `[scale]`, its flow_bytes.
        #[serde(default)]
        size: u64,
        /// QPs per sender, over which its bytes are split (`rxecc run
        /// --qps` overrides it).
        #[serde(default = "one")]
        qps: u32,
        period_s: f64,
        rounds: u32,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub label: String,
    /// rxe_cc's algorithm.
    pub cc: String,
    /// rxe_cc knobs (module parameters), e.g. { acc_t_us = 10000 }.
    #[serde(default)]
    pub knobs: BTreeMap<String, toml::Value>,
    /// rxe_cc knobs in the paper's units, scaled as `[scale] knobs`.
    #[serde(default)]
    pub paper_knobs: BTreeMap<String, f64>,
    /// The patched rdma_rxe's in-flight limits for this run.
    #[serde(default)]
    pub rxe_params: BTreeMap<String, u64>,
    /// Switch settings for this run (mark, red, tcd, int, pfc, ...).
    #[serde(default)]
    pub switch: topology::SwitchOverlay,
    /// Fault-injection rules for this run, added to the topology's
    /// `[[inject]]` (docs/switch.md).
    #[serde(default)]
    pub inject: Vec<crate::switch::InjectRule>,
    /// The rdma_rxe build the run loads: patched (rxe_glue's, with
    /// rxe_cc; the default), without-fix, or stock (the kernel's own,
    /// with no rxe_cc: cc = "none" and no knobs).
    #[serde(default)]
    pub rxe: crate::modules::Rxe,
    /// This run's rate for every link that has none of its own in the
    /// topology, Mb/s, over the experiment's `rate_mbps`.
    pub rate_mbps: Option<u64>,
    /// This run's own flow file (next to the experiment file), replayed
    /// instead of the workload: the same testbed under other traffic.
    pub flows: Option<PathBuf>,
    /// The flow control a deadlock the recording sees is released to
    /// (default none: flow control off), e.g. "gfc-buffer": GFC switched
    /// on under a PFC deadlock.
    pub deadlock_release: Option<crate::switch::FlowControl>,
    /// With a `deadlock_release` other than none: seconds it holds, after
    /// which flow control goes off too, so that the flows drain at the
    /// full rate (the ports as they stood then: `release-end.jsonl`;
    /// `released.txt` has a line per switch). Default 0.
    pub deadlock_release_s: Option<f64>,
    /// What is done to the testbed at times of the run, in time order.
    #[serde(default)]
    pub events: Vec<RunEvent>,
    /// What drives this run's flows, over the experiment's `traffic`.
    pub traffic: Option<Traffic>,
}

/// What drives a run's flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Traffic {
    /// flowgen on every host: a QP per flow, each posted at its time.
    #[default]
    Flowgen,
    /// perftest (`ib_write_bw`, `ib_read_bw` or `ib_send_bw` by `op`):
    /// the flows alike in source, destination, size and start are one
    /// perftest pair, a QP each (-q), of `message_bytes` messages
    /// (run/perftest.rs). Its clients busy-poll, niced and pinned, as
    /// the testbed's perftest helpers run them.
    Perftest,
}

impl Experiment {
    /// The traffic source of run `r`.
    pub fn traffic_of(&self, r: &Run) -> Traffic {
        r.traffic.unwrap_or(self.traffic)
    }

    /// The message size of perftest's pairs.
    pub fn perftest_message_bytes(&self) -> u64 {
        self.message_bytes
            .unwrap_or(crate::config::perftest::DEFAULT_MESSAGE_BYTES)
    }
}

impl Traffic {
    /// Its name in a file, and where its processes' output goes.
    pub fn name_and_logs(self) -> (&'static str, &'static str) {
        match self {
            Traffic::Flowgen => ("flowgen", "flowgen-h*.log"),
            Traffic::Perftest => ("perftest", "perftest-p*.txt"),
        }
    }
}

/// Something done at a time of a run (`[[run]] events`), at most one
/// `rxecc run` poll (50 ms) late.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEvent {
    /// Seconds after time 0 (the first flow's start).
    pub t_s: f64,
    /// rxe_cc knobs written then.
    #[serde(default)]
    pub knobs: BTreeMap<String, toml::Value>,
    /// Injection rules added then, each at its `port`'s ingress.
    #[serde(default)]
    pub inject: Vec<crate::switch::InjectRule>,
    /// Ports whose injection rules all go then.
    #[serde(default)]
    pub clear_inject: Vec<String>,
    /// The counters as they stand then, under this name (`at-NAME.txt`:
    /// rxe_cc's totals with every live QP's stats added, and the rxe
    /// devices' counters), for `[metrics] window`.
    pub snapshot: Option<String>,
}

fn default_op() -> String {
    "write".into()
}
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn one64() -> u64 {
    1
}
fn default_setup() -> u64 {
    600
}
fn default_timeout() -> u64 {
    300
}
fn default_qlen_ms() -> u64 {
    100
}
fn default_hold_ms() -> u64 {
    500
}
fn default_step() -> u32 {
    5
}

fn repo_dir(sub: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(sub);
    p.canonicalize().unwrap_or(p)
}

/// A path relative to the experiment file, else a name in `dir`.
pub(crate) fn find(base: &Path, name: &str, dir: &str) -> Result<PathBuf> {
    let p = base.join(name);
    if p.exists() {
        return Ok(p);
    }
    let q = repo_dir(dir).join(name);
    if q.exists() {
        return Ok(q);
    }
    bail!("'{name}': not a file next to the experiment, nor in {dir}/")
}

/// Parses and checks an experiment file.
pub fn load(path: &Path) -> Result<Experiment> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut e: Experiment = toml::from_str(&text).map_err(|err| {
        let line = err.span().map(|s| line_at(&text, s.start)).unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", path.display(), err.message())
    })?;
    ensure!(!e.runs.is_empty(), "{}: no [[run]]", path.display());
    apply_scale(&mut e, path, &text)?;
    let lines = Lines::new(&text);
    for (k, v) in &e.knobs {
        let line = lines.of(&["knobs", k]);
        check_knob(k, v).map_err(|m| anyhow::anyhow!("{}:{line}: knobs: {m}", path.display()))?;
    }
    ensure!(
        e.ack_timeout.is_none_or(|t| (1..=31).contains(&t)),
        "{}: ack_timeout = {}: an exponent from 1 to 31 (4.096 us x 2^N)",
        path.display(),
        e.ack_timeout.unwrap_or(0)
    );
    ensure!(
        e.settle_s.is_finite() && (0.0..=600.0).contains(&e.settle_s),
        "{}: settle_s = {}: 0 to 600 seconds",
        path.display(),
        e.settle_s
    );
    ensure!(
        e.rate_mbps != Some(0),
        "{}: rate_mbps = 0: a link needs a rate",
        path.display()
    );
    for r in &e.runs {
        ensure!(
            r.rate_mbps != Some(0),
            "{}: run {}: rate_mbps = 0: a link needs a rate",
            path.display(),
            r.label
        );
    }
    for r in &mut e.runs {
        let mut all = e.events.clone();
        all.append(&mut r.events);
        // Stable: at one time, the experiment's first.
        all.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        r.events = all;
    }
    for r in e.runs.iter_mut().filter(|r| r.rxe.has_cc()) {
        for (k, v) in &e.knobs {
            r.knobs.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for r in e
        .runs
        .iter_mut()
        .filter(|r| r.rxe != crate::modules::Rxe::Stock)
    {
        for (k, v) in &e.rxe_params {
            r.rxe_params.entry(k.clone()).or_insert(*v);
        }
    }
    ensure!(
        ["write", "send", "read"].contains(&e.op.as_str()),
        "{}: op '{}': write, send or read",
        path.display(),
        e.op
    );
    let flowgen_send = e.op == "send" && e.runs.iter().any(|r| e.traffic_of(r) == Traffic::Flowgen);
    ensure!(
        e.message_bytes.is_none_or(|b| b > 0 && !flowgen_send),
        "{}: message_bytes = {}: above 0, with op write or read (a SEND needs a receive per message)",
        path.display(),
        e.message_bytes.unwrap_or(0)
    );
    if let Some(r) = &e.report {
        ensure!(
            e.record_interval_ms > 0,
            "{}: [report] needs the runs recorded (record_interval_ms = 20, say)",
            path.display()
        );
        ensure!(
            r.period_us > 0 && !r.bottleneck.is_empty(),
            "{}: [report]: period_us above 0, and a bottleneck port",
            path.display()
        );
    }
    ensure!(
        e.repetitions >= 1,
        "{}: repetitions must be at least 1",
        path.display()
    );
    // `<run>-<k>` names repetition k of <run> (--repetitions, rxecc
    // paper): no label may read as one of another's.
    for a in &e.runs {
        for b in &e.runs {
            ensure!(
                !is_repetition_of(&b.label, &a.label),
                "{}: run label '{}' reads as a repetition of run '{}' (rename one)",
                path.display(),
                b.label,
                a.label
            );
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in &e.runs {
        ensure!(
            !r.label.is_empty()
                && r.label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{}: run label '{}': use letters, digits, '-' or '_'",
            path.display(),
            r.label
        );
        ensure!(
            seen.insert(&r.label),
            "{}: run label '{}' twice",
            path.display(),
            r.label
        );
        // The algorithm and knobs against the module's own tables
        // (cc_core), here on the host rather than at a sysfs write in the
        // guest: a name, its line, and what is valid.
        let at = |path: &[&str]| lines.run(&r.label, path);
        ensure!(
            r.rxe.has_cc() || (r.cc == "none" && r.knobs.is_empty()),
            "{}:{}: run {}: the {} rdma_rxe has no rxe_cc: cc = \"none\" and no knobs",
            path.display(),
            at(&["rxe"]),
            r.label,
            r.rxe.name()
        );
        ensure!(
            cc_core::alg::AlgId::from_name(&r.cc).is_some(),
            "{}:{}: run {}: cc '{}' is not one of rxe_cc's: {}",
            path.display(),
            at(&["cc"]),
            r.label,
            r.cc,
            cc_core::alg::ALGS.map(|a| a.name()).join(", ")
        );
        for (k, v) in &r.knobs {
            check_knob(k, v).map_err(|m| match at(&["knobs", k]) {
                // Not in the run's text: [scale] derived it.
                0 => anyhow::anyhow!(
                    "{}:{}: [scale] knobs, scaled to the testbed, for run {}: {m}",
                    path.display(),
                    lines.of(&["scale"]),
                    r.label
                ),
                line => anyhow::anyhow!("{}:{line}: run {}: {m}", path.display(), r.label),
            })?;
        }
        ensure!(
            r.rxe != crate::modules::Rxe::Stock
                || (r.rxe_params.is_empty() && e.rxe_params.is_empty()),
            "{}:{}: run {}: the stock rdma_rxe has no rxe_params",
            path.display(),
            at(&["rxe"]),
            r.label
        );
        for (k, v) in &r.rxe_params {
            crate::modules::check_rxe_param(k, *v).map_err(|m| {
                anyhow::anyhow!(
                    "{}:{}: run {}: rxe_params: {m}",
                    path.display(),
                    at(&["rxe_params", k]),
                    r.label
                )
            })?;
        }
        ensure!(
            r.deadlock_release_s
                .is_none_or(|s| s.is_finite() && s >= 0.0 && r.deadlock_release.is_some()),
            "{}:{}: run {}: deadlock_release_s: seconds (0 or more), with a deadlock_release",
            path.display(),
            at(&["deadlock_release_s"]),
            r.label
        );
        for ev in &r.events {
            let line = lines.event(&r.label, ev.t_s);
            let here = |m: String| {
                anyhow::anyhow!("{}:{line}: run {}: events: {m}", path.display(), r.label)
            };
            if !(ev.t_s.is_finite() && ev.t_s >= 0.0) {
                return Err(here(format!("t_s = {}: seconds from time 0", ev.t_s)));
            }
            if !r.rxe.has_cc() && !ev.knobs.is_empty() {
                return Err(here(format!(
                    "the {} rdma_rxe has no rxe_cc: no knobs",
                    r.rxe.name()
                )));
            }
            for (k, v) in &ev.knobs {
                check_knob(k, v).map_err(here)?;
            }
            for rule in &ev.inject {
                rule.validate().map_err(|m| here(format!("{m:#}")))?;
            }
        }
    }
    if let Some(b) = &e.metrics.baseline {
        find_run(&e, path, b).context("[metrics] baseline")?;
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let flows = match &e.workload {
        Some(Workload::File { flows }) => {
            let p = base.join(flows);
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("{}: reading {}", path.display(), p.display()))?;
            Some(workload::parse(&p.display().to_string(), &text)?)
        }
        _ => None,
    };
    let mut scenarios = Vec::new();
    for r in &e.runs {
        let sc = scenario_for(&e, r, path, &text)?;
        ensure!(
            r.flows.is_none() || e.workload.is_some(),
            "{}: run {}: its own flows, but the file has no [workload]",
            path.display(),
            r.label
        );
        for ev in &r.events {
            for dev in ev.inject.iter().map(|i| &i.port).chain(&ev.clear_inject) {
                ensure!(
                    sc.built.port(dev).is_some(),
                    "{}: run {}: events: no port '{dev}' in {}",
                    path.display(),
                    r.label,
                    sc.file.display()
                );
            }
        }
        // perftest's pairs from the flows, where the file gives them
        // (generated workloads are checked as they are generated).
        if e.traffic_of(r) == Traffic::Perftest {
            crate::config::perftest::tool(&e.op)
                .with_context(|| format!("{}: run {}", path.display(), r.label))?;
            let msg = e.perftest_message_bytes();
            if let Some(f) = sc.flows.as_ref().map(|(_, f)| f).or(flows.as_ref()) {
                crate::config::perftest::pairs(f, msg)
                    .with_context(|| format!("{}: run {}", path.display(), r.label))?;
            }
        }
        let n = sc.flows.as_ref().map(|(_, f)| f.len());
        if !e.metrics.is_empty() {
            e.metrics
                .check(&sc.built, n.or(flows.as_ref().map(Vec::len)))
                .with_context(|| format!("{}: run {}", path.display(), r.label))?;
        }
        scenarios.push(sc);
    }
    resolve_rates(&mut e, path, &text, &scenarios, flows.as_deref())?;
    e.scenarios = scenarios;
    let labels: Vec<String> = e.runs.iter().map(|r| r.label.clone()).collect();
    for (i, x) in e.expects.iter().enumerate() {
        x.check(&labels)
            .with_context(|| format!("{}: expect {} ('{}')", path.display(), i + 1, x.says))?;
    }
    Ok(e)
}

/// The T knobs `[scale] t_us` sets: each algorithm's control period.
const T_KNOBS: [&str; 3] = ["acc_t_us", "hpcc_t_us", "icc_t_us"];

/// Derives the testbed's quantities from `[scale]` into the experiment,
/// refusing any that the file also writes in the testbed's units (both
/// places named).
fn apply_scale(e: &mut Experiment, path: &Path, text: &str) -> Result<()> {
    let Some(p) = &e.scale else {
        ensure!(
            e.runs.iter().all(|r| r.paper_knobs.is_empty()),
            "{}: paper_knobs need a [scale]",
            path.display()
        );
        ensure!(
            !matches!(e.workload, Some(Workload::Incast { size: 0, .. })),
            "{}: [workload] size: bytes per sender (or [scale] flow_bytes)",
            path.display()
        );
        return Ok(());
    };
    let d = p
        .derive()
        .with_context(|| format!("{}: [scale]", path.display()))?;
    if let Some(r) = e.runs.iter().find(|r| r.flows.is_some()) {
        bail!(
            "{}: run {}: its own flow file is not scaled by [scale]; give the flows as the [workload]'s file, in the paper's units",
            path.display(),
            r.label
        );
    }
    let lines = Lines::new(text);
    let line = |path: &[&str]| lines.of(path);
    let scale_at = line(&["scale"]);
    let twice = |what: &str, from: &str, at: usize| -> anyhow::Error {
        anyhow::anyhow!(
            "{}:{at}: {what} is written in the testbed's units, and [scale] (line {scale_at}) gives it from {from}; write it once",
            path.display()
        )
    };
    if e.rate_mbps.is_some() {
        return Err(twice("rate_mbps", "link_gbps", line(&["rate_mbps"])));
    }
    e.rate_mbps = Some(d.rate_mbps);
    if let Some(r) = e.runs.iter().find(|r| r.rate_mbps.is_some()) {
        return Err(twice(
            &format!("run {}: rate_mbps", r.label),
            "link_gbps",
            lines.run(&r.label, &["rate_mbps"]),
        ));
    }
    for l in &e.links {
        if l.rate_mbps.is_some() {
            return Err(twice(
                &format!("links {} - {}: rate_mbps", l.a.get_ref(), l.b.get_ref()),
                "link_gbps and its links",
                lines.at(l.a.span().start),
            ));
        }
        if l.delay_us.is_some() {
            return Err(twice(
                &format!("links {} - {}: delay_us", l.a.get_ref(), l.b.get_ref()),
                "delay_us or base_rtt_us",
                lines.at(l.a.span().start),
            ));
        }
    }
    let sw_given = |o: &topology::SwitchOverlay| {
        [
            (o.xoff_bytes.is_some(), "xoff_bytes"),
            (o.xon_bytes.is_some(), "xon_bytes"),
            (o.buffer_bytes.is_some(), "buffer_bytes"),
        ]
    };
    for (given, name) in sw_given(&e.switch)
        .into_iter()
        .chain(e.runs.iter().flat_map(|r| sw_given(&r.switch)))
    {
        let from_scale = match name {
            "xoff_bytes" => d.xoff_bytes.is_some(),
            "xon_bytes" => d.xon_bytes.is_some(),
            _ => d.buffer_bytes.is_some(),
        };
        if given && from_scale {
            // The file's [switch], else the first run's that gives it.
            let at = std::iter::once(line(&["switch", name]))
                .chain(
                    e.runs
                        .iter()
                        .map(|r| lines.run(&r.label, &["switch", name])),
                )
                .find(|l| *l > 0)
                .unwrap_or(0);
            return Err(twice(&format!("switch {name}"), name, at));
        }
    }
    if let Some(x) = d.xoff_bytes {
        e.switch.xoff_bytes = Some(x);
    }
    if let Some(x) = d.xon_bytes {
        e.switch.xon_bytes = Some(x);
    }
    if let Some(x) = d.buffer_bytes {
        e.switch.buffer_bytes = Some(x);
    }
    let t_knobs: &[&str] = if d.t_us.is_some() { &T_KNOBS } else { &[] };
    let scaled: Vec<&str> = d
        .knobs
        .keys()
        .map(String::as_str)
        .chain(t_knobs.iter().copied())
        .collect();
    if let Some(k) = scaled.iter().find(|k| e.knobs.contains_key(**k)) {
        return Err(twice(
            &format!("knobs.{k}"),
            "the paper's value",
            line(&["knobs", k]),
        ));
    }
    let common_mark = e.switch.mark;
    let common_marks = e.switch.red.is_some() || e.switch.tcd.is_some();
    for r in &mut e.runs {
        let label = r.label.clone();
        let at = |path: &[&str]| lines.run(&label, path);
        let own = r.paper_knobs.keys().map(String::as_str);
        if let Some(k) = scaled
            .iter()
            .copied()
            .chain(own)
            .find(|k| r.knobs.contains_key(*k))
        {
            return Err(twice(
                &format!("run {}: knobs.{k}", r.label),
                "the paper's value",
                at(&["knobs", k]),
            ));
        }
        for (k, v) in &d.knobs {
            r.knobs.insert(k.clone(), toml::Value::Integer(*v as i64));
        }
        if let Some(t) = d.t_us {
            for k in T_KNOBS {
                r.knobs.insert(k.into(), toml::Value::Integer(t as i64));
            }
        }
        for (k, v) in &r.paper_knobs {
            ensure!(
                !d.knobs.contains_key(k),
                "{}:{}: run {}: paper_knobs.{k}, and [scale] knobs.{k} (line {scale_at}); write it once",
                path.display(),
                at(&["paper_knobs", k]),
                r.label
            );
            let want = p.knob(k, *v).with_context(|| {
                format!(
                    "{}:{}: run {}: paper_knobs",
                    path.display(),
                    at(&["paper_knobs", k]),
                    r.label
                )
            })?;
            r.knobs.insert(
                k.clone(),
                toml::Value::Integer(want.round().max(1.0) as i64),
            );
        }
        let mark = r.switch.mark.or(common_mark);
        if let (Some(MarkMode::Red), Some((kmin, kmax, pmax))) = (mark, d.red) {
            if r.switch.red.is_some() || common_marks {
                return Err(twice(
                    &format!("run {}: switch red", r.label),
                    "red",
                    at(&["switch", "red"]),
                ));
            }
            r.switch.red = Some(Some(topology::RedCfg {
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax_permille: pmax,
            }));
        }
        if let (Some(MarkMode::Tcd), Some((thresh, ton))) = (mark, d.tcd) {
            if r.switch.tcd.is_some() || common_marks {
                return Err(twice(
                    &format!("run {}: switch tcd", r.label),
                    "tcd",
                    at(&["switch", "tcd"]),
                ));
            }
            r.switch.tcd = Some(Some(topology::TcdCfg {
                thresh_bytes: thresh,
                max_ton_us: ton,
                stall_us: 0,
            }));
        }
    }
    if let (Some(rep), Some(t)) = (&mut e.report, d.t_us) {
        if rep.period_us != 0 {
            return Err(twice(
                "[report] period_us",
                "t_us",
                line(&["report", "period_us"]),
            ));
        }
        rep.period_us = t;
    }
    if let Some(Workload::Incast { size, .. }) = &mut e.workload {
        match (*size, d.flow_bytes) {
            (0, Some(b)) => *size = b,
            (0, None) => bail!(
                "{}: [workload] size: bytes per sender (or [scale] flow_bytes)",
                path.display()
            ),
            (_, Some(_)) => {
                return Err(twice(
                    "[workload] size",
                    "flow_bytes",
                    line(&["workload", "size"]),
                ))
            }
            _ => {}
        }
    }
    // A CDF's sizes are the paper's bytes: times k_b, as every byte.
    if let Some(Workload::Poisson {
        size_div, size_mul, ..
    }) = &mut e.workload
    {
        if *size_div != 1 {
            return Err(twice(
                "[workload] size_div",
                "mtu_bytes (k_b)",
                line(&["workload", "size_div"]),
            ));
        }
        if size_mul.is_some() {
            return Err(twice(
                "[workload] size_mul",
                "mtu_bytes (k_b)",
                line(&["workload", "size_mul"]),
            ));
        }
        *size_mul = Some(p.scale().k_b);
    }
    e.derived = Some(d);
    Ok(())
}

/// The hosts that send: the flow file's sources, the incast's senders,
/// every host of a Poisson workload (or of the topology, with none).
fn senders_of(
    workload: &Option<Workload>,
    hosts: Option<u32>,
    b: &topology::Built,
    flows: Option<&[workload::Flow]>,
) -> Vec<usize> {
    let all = || (0..hosts.map_or(b.topo.hosts.len(), |n| n as usize)).collect();
    let mut v: Vec<usize> = match (workload, flows) {
        // A flow file's sources (`workload` None: a run's own file).
        (Some(Workload::File { .. }) | None, Some(f)) => f.iter().map(|f| f.src as usize).collect(),
        (Some(Workload::Incast { senders, .. }), _) => {
            senders.iter().map(|h| *h as usize).collect()
        }
        _ => all(),
    };
    v.sort_unstable();
    v.dedup();
    v
}

/// An experiment's hosts are NICs: their QPs wait in the NIC's arbiter,
/// with this many packets queued on its line, instead of handing up to 64
/// packets each to the device's queue (rxe_cc's `nic_queue_pkts`, off in
/// the module itself, where no topology gives the line). Two: one on the
/// wire and one ready, as an RNIC's scheduler keeps it busy.
const NIC_QUEUE_PKTS: i64 = 2;

/// A link rate is written once, in the topology (or the experiment's
/// `links`): each run's `line_rate_mbps` knob is its senders' link rate
/// (the fastest, where they differ: one value serves every QP),
/// `[report] capacity_mbps` the bottleneck port's and a Poisson
/// workload's `rate_mbps` the senders'. A value the file gives that
/// disagrees is an error naming both places.
fn resolve_rates(
    e: &mut Experiment,
    path: &Path,
    text: &str,
    scenarios: &[Scenario],
    flows: Option<&[workload::Flow]>,
) -> Result<()> {
    let lines = Lines::new(text);
    let mut senders_rate = None;
    for (r, sc) in e.runs.iter_mut().zip(scenarios) {
        let (file, b) = (&sc.file, &sc.built);
        // A run's own flow file names its senders, as a file workload's.
        let hosts = match &sc.flows {
            Some((_, own)) => senders_of(&None, e.hosts, b, Some(own)),
            None => senders_of(&e.workload, e.hosts, b, flows),
        };
        let mut rates: Vec<(usize, u64)> = hosts
            .iter()
            .filter_map(|h| Some((*h, b.host_rate_mbps(*h)?)))
            .collect();
        rates.sort_by_key(|(_, r)| *r);
        let Some(hi) = rates.last() else {
            continue;
        };
        let given = r
            .knobs
            .get("line_rate_mbps")
            .and_then(toml::Value::as_integer);
        let list = || {
            rates
                .iter()
                .map(|(h, v)| format!("h{h} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match given {
            // The stock rdma_rxe has no rxe_cc to tell.
            None if !r.rxe.has_cc() => {}
            None => {
                r.knobs
                    .insert("line_rate_mbps".into(), toml::Value::Integer(hi.1 as i64));
            }
            Some(k) if !rates.iter().any(|(_, v)| *v as i64 == k) => bail!(
                "{}:{}: run {}: knobs.line_rate_mbps = {k}, but its senders' links run at {} Mb/s ({}); leave the knob out, the topology gives it",
                path.display(),
                lines.run(&r.label, &["knobs", "line_rate_mbps"]),
                r.label,
                list(),
                file.display()
            ),
            Some(_) => {}
        }
        if r.rxe.has_cc() {
            r.knobs
                .entry("nic_queue_pkts".into())
                .or_insert(toml::Value::Integer(NIC_QUEUE_PKTS));
        }
        senders_rate.get_or_insert(hi.1);
    }
    if let Some(Workload::Poisson { rate_mbps, .. }) = &mut e.workload {
        match (*rate_mbps, senders_rate) {
            (Some(x), Some(s)) if x != s => bail!(
                "{}:{}: workload.rate_mbps = {x}, but the senders' links run at {s} Mb/s; leave it out, the topology gives it",
                path.display(),
                lines.of(&["workload", "rate_mbps"]),
            ),
            (None, s) => *rate_mbps = s,
            _ => {}
        }
    }
    if let (Some(rep), Some(Scenario { file, built: b, .. })) = (&mut e.report, scenarios.first()) {
        let port = b.port(&rep.bottleneck).with_context(|| {
            format!(
                "{}: [report] bottleneck '{}' is not a port of {} (its ports: {})",
                path.display(),
                rep.bottleneck,
                file.display(),
                b.plan
                    .ports
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        match rep.capacity_mbps {
            0 => rep.capacity_mbps = port.rate_mbps,
            c if c != port.rate_mbps => bail!(
                "{}:{}: [report] capacity_mbps = {c}, but its bottleneck {} runs at {} Mb/s ({}); leave it out, the topology gives it",
                path.display(),
                lines.of(&["report", "capacity_mbps"]),
                rep.bottleneck,
                port.rate_mbps,
                file.display()
            ),
            _ => {}
        }
    }
    Ok(())
}

/// A knob's name and value against rxe_cc's table (cc_core): an error
/// that says what is valid.
fn check_knob(k: &str, v: &toml::Value) -> std::result::Result<(), String> {
    if k == "cc" {
        return Err("knob 'cc' (set the algorithm with cc = ...)".into());
    }
    let Some(def) = cc_core::knobs::KNOBS.iter().find(|d| d.name == k) else {
        return Err(format!(
            "'{k}' is not a knob of rxe_cc; valid names: {}",
            cc_core::knobs::KNOBS.map(|d| d.name).join(", ")
        ));
    };
    if v.as_integer()
        .is_some_and(|n| n >= i64::from(def.min) && n <= i64::from(def.max))
    {
        return Ok(());
    }
    Err(format!(
        "{k} = {v}: an integer in [{}, {}] ({})",
        def.min, def.max, def.help
    ))
}

/// A run's topology: the file's, with the experiment's and the run's
/// settings laid over it. Returns the file, its text (where the names'
/// places are) and the topology.
fn topology_for(
    e: &Experiment,
    run: &Run,
    base: &Path,
    path: &Path,
    text: &str,
) -> Result<(PathBuf, String, topology::Topology)> {
    let file = match find(base, &e.topology, "testbed/topologies") {
        Ok(p) => p,
        Err(_) => topology::resolve(&e.topology)?,
    };
    let src =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let mut t = topology::read(&file, &src)?;
    for sw in &mut t.switches {
        e.switch.apply(sw);
        run.switch.apply(sw);
    }
    if let Some(rate) = run.rate_mbps.or(e.rate_mbps) {
        t.defaults.rate_mbps = rate;
    }
    // A scale model's every link: its delay, and its rate where the
    // paper's differs from link_gbps.
    if let Some(d) = &e.derived {
        t.defaults.delay_us = d.delay_us;
        for l in &mut t.links {
            ensure!(
                l.delay_us.is_none(),
                "{}: link {} - {} has a delay_us of its own, and the experiment's [scale] gives every link's; write it once",
                file.display(),
                l.a.get_ref(),
                l.b.get_ref()
            );
        }
        for (a, b, mbps) in &d.links {
            let mut hit = false;
            for l in t
                .links
                .iter_mut()
                .filter(|l| l.a.get_ref() == a && l.b.get_ref() == b)
            {
                l.rate_mbps = Some(*mbps);
                hit = true;
            }
            ensure!(
                hit,
                "{}: [scale] links: {a} - {b}: no such link in {}",
                path.display(),
                file.display()
            );
        }
    }
    for o in &e.links {
        let (a, b) = (o.a.get_ref(), o.b.get_ref());
        let mut hit = false;
        for l in t
            .links
            .iter_mut()
            .filter(|l| l.a.get_ref() == a && l.b.get_ref() == b)
        {
            l.take_settings(o);
            hit = true;
        }
        ensure!(
            hit,
            "{}:{}: links: {a} - {b}: no such link in {}",
            path.display(),
            line_at(text, o.a.span().start),
            file.display()
        );
    }
    t.injects
        .extend(e.inject.iter().chain(&run.inject).cloned());
    if let Some(n) = e.hosts {
        t.keep_hosts(n as usize);
    }
    Ok((file, src, t))
}

/// The run labelled `label` of an experiment file.
pub(crate) fn find_run<'a>(e: &'a Experiment, path: &Path, label: &str) -> Result<&'a Run> {
    e.runs.iter().find(|r| r.label == label).with_context(|| {
        format!(
            "{} has no run '{label}' (it has {})",
            path.display(),
            e.runs
                .iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `rxecc experiment topology`: the topology one run brings up.
pub fn run_topology(path: &Path, label: &str) -> Result<String> {
    let e = load(path)?;
    find_run(&e, path, label)?;
    let sc = e.scenario(label)?;
    Ok(format!(
        "# {}, run {label}: {} with the run's settings (rxecc experiment topology)\n{}",
        path.display(),
        sc.file.display(),
        sc.text
    ))
}

/// The experiment and the topology one of its runs brings up, parsed and
/// checked, with the run's settings merged in (for `rxecc model`).
pub fn run_built(path: &Path, label: &str) -> Result<(Experiment, topology::Built)> {
    let e = load(path)?;
    find_run(&e, path, label)?;
    let built = e.scenario(label)?.built.clone();
    Ok((e, built))
}

/// `rxecc experiment get`: the value at a dotted key of a checked
/// experiment file (an array's item by its index: `events.1.t_s`); an
/// array's items as space-separated words.
pub fn get(path: &Path, key: &str) -> Result<String> {
    let e = load(path)?;
    let text = std::fs::read_to_string(path)?;
    let mut v: toml::Value = toml::from_str(&text)?;
    // The rates the topology gives (resolve_rates) and what [scale]
    // derives, where the file has none.
    let mut set = |table: &str, k: &str, x: u64| {
        if let Some(toml::Value::Table(t)) = v.get_mut(table) {
            t.insert(k.into(), toml::Value::Integer(x as i64));
        }
    };
    if let Some(r) = &e.report {
        set("report", "capacity_mbps", r.capacity_mbps);
        set("report", "period_us", r.period_us);
    }
    if let Some(Workload::Poisson {
        rate_mbps: Some(x), ..
    }) = &e.workload
    {
        set("workload", "rate_mbps", *x);
    }
    for part in key.split('.') {
        let keys = |t: &toml::Table| t.keys().cloned().collect::<Vec<_>>().join(", ");
        v = match v {
            toml::Value::Table(mut t) => match t.remove(part) {
                Some(x) => x,
                None => bail!(
                    "{}: no '{part}' in '{key}' (there: {})",
                    path.display(),
                    keys(&t)
                ),
            },
            // An array's item by its index from 0 (`events.1.t_s`).
            toml::Value::Array(mut a) => match part.parse::<usize>() {
                Ok(i) if i < a.len() => a.swap_remove(i),
                _ => bail!(
                    "{}: '{key}': '{part}': an index from 0 to {}",
                    path.display(),
                    a.len().saturating_sub(1)
                ),
            },
            _ => bail!("{}: '{key}': '{part}' is below a value", path.display()),
        };
    }
    let word = |x: &toml::Value| match x {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Table(_) | toml::Value::Array(_) => {
            bail!("{}: '{key}' holds tables, not values", path.display())
        }
        x => Ok(x.to_string()),
    };
    match &v {
        toml::Value::Array(a) => Ok(a.iter().map(word).collect::<Result<Vec<_>>>()?.join(" ")),
        toml::Value::Table(t) => bail!(
            "{}: '{key}' is a table; name one of its keys: {}",
            path.display(),
            t.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        x => word(x),
    }
}

/// `rxecc experiment rate`: the fastest link of a run's topology, Mb/s.
pub fn run_rate_mbps(path: &Path, label: &str) -> Result<u64> {
    let (_, built) = run_built(path, label)?;
    let t = &built.topo;
    t.links
        .iter()
        .map(|l| l.rate_mbps.unwrap_or(t.defaults.rate_mbps))
        .max()
        .context("the topology has no link")
}

/// `rxecc experiment knobs`: a run's rxe_cc parameters, cc first.
pub fn run_knobs(path: &Path, label: &str) -> Result<Vec<String>> {
    let e = load(path)?;
    let run = find_run(&e, path, label)?;
    ensure!(
        run.rxe.has_cc(),
        "{}: run {label} is on the {} rdma_rxe: no rxe_cc, no knobs",
        path.display(),
        run.rxe.name()
    );
    let mut v = vec![format!("cc={}", run.cc)];
    for (k, x) in &run.knobs {
        v.push(format!("{k}={}", value_text(x)?));
    }
    Ok(v)
}

pub(crate) fn value_text(v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => u8::from(*b).to_string(),
        _ => bail!("knob value {v}: an integer, a string or a boolean"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: &str = r#"
        topology = "dumbbell"
        hosts = 4
        links = [{ a = "h0", b = "sw0", rate_mbps = 40 }]
        [switch]
        pfc = true
        [workload]
        kind = "poisson"
        cdf = "WebSearch_distribution.txt"
        load = 0.3
        duration_s = 2
        size_div = 20
        [[run]]
        label = "dcqcn"
        cc = "dcqcn"
        knobs = { rpg_time_reset = 20000 }
        switch = { mark = "red", red = { kmin_bytes = 5120, kmax_bytes = 204800, pmax_permille = 200 } }
        [[run]]
        label = "none"
        cc = "none"
    "#;

    /// EXP with a `[report]` on p0 (and the recording it needs).
    fn with_report() -> String {
        EXP.replace(
            "[switch]",
            "[report]\nbottleneck = \"p0\"\nperiod_us = 10000\n[switch]",
        )
        .replace("hosts = 4", "hosts = 4\nrecord_interval_ms = 20")
    }

    /// Every shipped experiment's runs: the topology a run records (its
    /// settings written out) brings up the same testbed as the one the
    /// file resolved.
    #[test]
    fn each_run_records_its_testbed() {
        let dir = std::env::temp_dir().join(format!("rxecc-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut n = 0;
        for sub in ["testbed/experiments", "tests"] {
            for f in std::fs::read_dir(repo_dir(sub)).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_none_or(|x| x != "toml") {
                    continue;
                }
                let e = load(&f).unwrap_or_else(|err| panic!("{}: {err:#}", f.display()));
                for sc in &e.scenarios {
                    let t = dir.join("topology.toml");
                    std::fs::write(&t, &sc.text).unwrap();
                    let b = topology::load(&t).unwrap();
                    let json = |b: &topology::Built| {
                        serde_json::to_string(&(&b.plan.ports, &b.ports)).unwrap()
                    };
                    assert_eq!(json(&b), json(&sc.built), "{} {}", f.display(), sc.label);
                    n += 1;
                }
            }
        }
        assert!(n > 40, "only {n} runs");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn experiment_merges_into_the_topology() {
        let dir = std::env::temp_dir().join(format!("rxecc-exp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        std::fs::write(&p, EXP).unwrap();
        let e = load(&p).unwrap();
        assert_eq!(e.runs.len(), 2);
        // Each run's testbed, resolved as the file loaded, by label (the
        // order `--runs` may change).
        assert_eq!(e.scenarios.len(), 2);
        let b = &e.scenario("dcqcn").unwrap().built;
        let sw = &b.topo.switches[0];
        assert!(sw.red.is_some() && sw.pfc);
        assert_eq!(b.topo.links[0].rate_mbps, Some(40));
        assert_eq!(topology::path_rate_mbps(&b.topo, 0, 1), Some(40));
        // hosts = 4: dumbbell's other five hosts and their links are gone.
        assert_eq!(b.topo.hosts.len(), 4);
        assert_eq!(b.topo.links.len(), 4);
        assert!(b
            .topo
            .links
            .iter()
            .all(|l| *l.a.get_ref() != "h4" && *l.b.get_ref() != "h4"));
        let none = e.scenario("none").unwrap();
        assert!(none.built.topo.switches[0].red.is_none());
        assert!(none.file.ends_with("dumbbell.toml"));
        // What the run records as its topology.toml is the same testbed.
        let t = dir.join("t.toml");
        std::fs::write(&t, &none.text).unwrap();
        assert_eq!(
            topology::load(&t).unwrap().plan.ports,
            none.built.plan.ports
        );
        assert!(e.scenario("acc").is_err());

        for (bad, why) in [
            (
                EXP.replace("label = \"none\"", "label = \"dcqcn\""),
                "twice",
            ),
            (
                EXP.replace("kind = \"poisson\"", "kind = \"bursty\""),
                "unknown variant",
            ),
            (EXP.replace("rpg_time_reset", "cc"), "knob 'cc'"),
            (
                EXP.replace("label = \"none\"", "label = \"dcqcn-2\""),
                "run label 'dcqcn-2' reads as a repetition of run 'dcqcn'",
            ),
            (
                EXP.replace("hosts = 4", "hosts = 4\nbogus = 1"),
                "unknown field",
            ),
            // Knobs and algorithms against rxe_cc's tables, with the line.
            (
                EXP.replace("rpg_time_reset", "rpg_time_rest"),
                "e.toml:16: run dcqcn: 'rpg_time_rest' is not a knob of rxe_cc",
            ),
            (
                EXP.replace("20000 }", "0 }"),
                "rpg_time_reset = 0: an integer in [1, 10000000]",
            ),
            (
                EXP.replace("cc = \"none\"", "cc = \"nil\""),
                "run none: cc 'nil' is not one of rxe_cc's: none, fixed",
            ),
            // The settings laid over the topology are typed where they
            // are written: a misspelt one, with the experiment's line.
            (
                EXP.replace("pfc = true", "pfc_on = true"),
                "e.toml:6: unknown field `pfc_on`",
            ),
            (
                EXP.replace("rate_mbps = 40 }", "rate = 40 }"),
                "e.toml:4: unknown field `rate`",
            ),
            (
                EXP.replace("b = \"sw0\"", "b = \"sw1\""),
                "e.toml:4: links: h0 - sw1: no such link in",
            ),
            // Events: knobs, ports and times checked as the file loads.
            (
                EXP.replace(
                    "hosts = 4",
                    "hosts = 4\nevents = [{ t_s = 1, knobs = { nope = 1 } }]",
                ),
                "e.toml:4: run dcqcn: events: 'nope' is not a knob of rxe_cc",
            ),
            (
                EXP.replace(
                    "hosts = 4",
                    "hosts = 4\nevents = [{ t_s = 1, clear_inject = [\"p9\"] }]",
                ),
                "run dcqcn: events: no port 'p9'",
            ),
            (
                EXP.replace(
                    "hosts = 4",
                    "hosts = 4\nevents = [{ t_s = -1, snapshot = \"a\" }]",
                ),
                "t_s = -1: seconds from time 0",
            ),
            (
                EXP.replace(
                    "hosts = 4",
                    "hosts = 4\nop = \"send\"\nmessage_bytes = 4096",
                ),
                "message_bytes = 4096: above 0, with op write or read",
            ),
            // A setting the topology's check refuses names the run.
            (
                EXP.replace("pfc = true", "flow_control = \"gfc-buffer\""),
                "run dcqcn: ",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn get_and_rate_for_scripts() {
        let dir = std::env::temp_dir().join(format!("rxecc-get-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        std::fs::write(&p, with_report()).unwrap();
        // From the topology: p0 is h0's link, at 40 Mb/s here.
        assert_eq!(get(&p, "report.capacity_mbps").unwrap(), "40");
        assert_eq!(get(&p, "report.bottleneck").unwrap(), "p0");
        assert_eq!(
            get(&p, "workload.cdf").unwrap(),
            "WebSearch_distribution.txt"
        );
        assert_eq!(get(&p, "switch.pfc").unwrap(), "true");
        for (key, why) in [
            (
                "report.capacity",
                "no 'capacity' in 'report.capacity' (there: bottleneck, capacity_mbps, period_us)",
            ),
            ("report", "'report' is a table; name one of its keys"),
            ("run", "'run' holds tables"),
            ("hosts.x", "'x' is below a value"),
        ] {
            let e = format!("{:#}", get(&p, key).unwrap_err());
            assert!(e.contains(why), "{key}: {e}");
        }
        // dumbbell's links run at 100 Mb/s, but for h0's, at 40 here.
        assert_eq!(run_rate_mbps(&p, "none").unwrap(), 100);
        std::fs::write(&p, "senders = [1, 2]\n").unwrap();
        assert!(
            get(&p, "senders").is_err(),
            "an experiment file that does not load"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// ACC's testbed at k_t 256 on dumbbell: every quantity from `[scale]`.
    const SCALED: &str = r#"
topology = "dumbbell"
hosts = 5
record_interval_ms = 20
[scale]
source = "ACC testbed"
k_t = 256
mtu_bytes = 4000
link_gbps = 10
base_rtt_us = 20
t_us = 50
xoff_bytes = 256000
xon_bytes = 128000
tcd = { thresh_bytes = 8000, max_ton_us = 24 }
red = { kmin_bytes = 5000, kmax_bytes = 200000, pmax = 0.2 }
flow_bytes = 10000000
knobs = { rpg_time_reset = 55 }
[workload]
kind = "incast"
senders = [1, 2, 3, 4]
receiver = 0
period_s = 1
rounds = 1
[report]
bottleneck = "p0"
[[run]]
label = "dcqcn"
cc = "dcqcn"
paper_knobs = { dce_tcp_rtt = 50 }
switch = { mark = "red" }
[[run]]
label = "acc"
cc = "acc"
switch = { mark = "tcd" }
"#;

    #[test]
    fn a_scale_models_cdf_sizes_are_the_papers_bytes() {
        let dir = std::env::temp_dir().join(format!("rxecc-scale-cdf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        let poisson = SCALED.replace("flow_bytes = 10000000\n", "").replace(
            "kind = \"incast\"\nsenders = [1, 2, 3, 4]\nreceiver = 0\nperiod_s = 1\nrounds = 1",
            "kind = \"poisson\"\ncdf = \"WebSearch_distribution.txt\"\nload = 0.5\nduration_s = 1",
        );
        std::fs::write(&p, &poisson).unwrap();
        let e = load(&p).unwrap();
        match &e.workload {
            Some(Workload::Poisson { size_mul, .. }) => {
                assert_eq!(*size_mul, Some(4096.0 / 4000.0))
            }
            w => panic!("{w:?}"),
        }
        for (extra, why) in [
            (
                "size_div = 20",
                "e.toml:22: [workload] size_div is written in the testbed's units",
            ),
            (
                "size_mul = 2.0",
                "e.toml:22: [workload] size_mul is written in the testbed's units",
            ),
        ] {
            let text = poisson.replace("duration_s = 1", &format!("duration_s = 1\n{extra}"));
            std::fs::write(&p, &text).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{why}\n{err}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_scale_model_derives_every_quantity_once() {
        let dir = std::env::temp_dir().join(format!("rxecc-scale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        std::fs::write(&p, SCALED).unwrap();
        let e = load(&p).unwrap();
        let (acc, dcqcn) = (e.scenario("acc").unwrap(), e.scenario("dcqcn").unwrap());
        let text = &acc.text;
        assert!(text.contains("rate_mbps = 40"), "{text}");
        assert!(text.contains("delay_us = 870"), "{text}");
        assert!(text.contains("xoff_bytes = 262144"), "{text}");
        assert!(text.contains("thresh_bytes = 8192"), "{text}");
        assert!(dcqcn.text.contains("kmax_bytes = 204800"), "{}", dcqcn.text);
        for r in &e.runs {
            assert_eq!(r.knobs["acc_t_us"].as_integer(), Some(12800), "{}", r.label);
            assert_eq!(r.knobs["rpg_time_reset"].as_integer(), Some(14080));
            assert_eq!(r.knobs["line_rate_mbps"].as_integer(), Some(40));
        }
        assert_eq!(e.runs[0].knobs["dce_tcp_rtt"].as_integer(), Some(12800));
        assert_eq!(e.report.as_ref().unwrap().period_us, 12800);
        // Scripts read the derived T as they read the derived rate.
        assert_eq!(get(&p, "report.period_us").unwrap(), "12800");
        assert!(matches!(
            e.workload,
            Some(Workload::Incast { size: 10240000, .. })
        ));
        // Written both ways: refused, both places named.
        for (from, to, why) in [
            ("hosts = 5", "hosts = 5\nrate_mbps = 40", "e.toml:4: rate_mbps is written in the testbed's units, and [scale] (line 6)"),
            ("bottleneck = \"p0\"", "bottleneck = \"p0\"\nperiod_us = 12800", "e.toml:26: [report] period_us is written in the testbed's units, and [scale] (line 5)"),
            ("cc = \"acc\"", "cc = \"acc\"\nknobs = { acc_t_us = 12800 }", "e.toml:34: run acc: knobs.acc_t_us is written"),
            ("switch = { mark = \"tcd\" }", "switch = { mark = \"tcd\", tcd = { thresh_bytes = 8192, max_ton_us = 6144 } }", "run acc: switch tcd"),
            ("rounds = 1", "rounds = 1\nsize = 10240000", "[workload] size"),
            ("paper_knobs = { dce_tcp_rtt = 50 }", "paper_knobs = { rpg_time_reset = 50 }", "paper_knobs.rpg_time_reset, and [scale] knobs.rpg_time_reset"),
            ("base_rtt_us = 20", "base_rtt_us = 20\ndelay_us = 3", "delay_us (per link) or base_rtt_us"),
            // A knob in range in the paper's units but not once scaled:
            // the [scale] line, not a line of the run that lacks it.
            ("rpg_time_reset = 55 }", "rpg_time_reset = 50000 }", "e.toml:5: [scale] knobs, scaled to the testbed, for run dcqcn: rpg_time_reset = 12800000"),
        ] {
            let text = SCALED.replace(from, to);
            std::fs::write(&p, &text).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{why}\n{err}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn link_rates_are_written_once() {
        let dir = std::env::temp_dir().join(format!("rxecc-rates-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        let with_report = with_report();
        std::fs::write(&p, &with_report).unwrap();
        let e = load(&p).unwrap();
        // The senders (every host of a Poisson workload) run at 100 Mb/s
        // but h0, at 40: the fastest is the algorithms' line rate.
        for r in &e.runs {
            assert_eq!(
                r.knobs["line_rate_mbps"].as_integer(),
                Some(100),
                "{}",
                r.label
            );
        }
        assert!(matches!(
            e.workload,
            Some(Workload::Poisson {
                rate_mbps: Some(100),
                ..
            })
        ));
        assert_eq!(e.report.as_ref().unwrap().capacity_mbps, 40);
        // Hosts are NICs with an arbiter unless the experiment says otherwise.
        assert_eq!(
            run_knobs(&p, "none").unwrap(),
            ["cc=none", "line_rate_mbps=100", "nic_queue_pkts=2"]
        );
        std::fs::write(
            &p,
            with_report.replace("rpg_time_reset", "nic_queue_pkts = 0, rpg_time_reset"),
        )
        .unwrap();
        let e = load(&p).unwrap();
        let arbiter: Vec<_> = e
            .runs
            .iter()
            .map(|r| r.knobs["nic_queue_pkts"].as_integer())
            .collect();
        assert_eq!(arbiter, [Some(0), Some(2)], "dcqcn's own 0 is kept");
        // A value given that agrees is taken; one that does not names both
        // places.
        for (text, ok) in [
            (
                with_report.replace("rpg_time_reset", "line_rate_mbps = 40, rpg_time_reset"),
                true,
            ),
            (
                with_report.replace("period_us", "capacity_mbps = 40\nperiod_us"),
                true,
            ),
            (
                with_report.replace("size_div", "rate_mbps = 100\nsize_div"),
                true,
            ),
        ] {
            std::fs::write(&p, &text).unwrap();
            assert_eq!(load(&p).is_ok(), ok, "{text}");
        }
        for (text, why) in [
            (
                with_report.replace("rpg_time_reset", "line_rate_mbps = 50, rpg_time_reset"),
                "e.toml:20: run dcqcn: knobs.line_rate_mbps = 50, but its senders' links run at h0 40, h1 100, h2 100, h3 100 Mb/s",
            ),
            (
                with_report.replace("period_us", "capacity_mbps = 100\nperiod_us"),
                "[report] capacity_mbps = 100, but its bottleneck p0 runs at 40 Mb/s",
            ),
            (
                with_report.replace("size_div", "rate_mbps = 40\nsize_div"),
                "workload.rate_mbps = 40, but the senders' links run at 100 Mb/s",
            ),
            (
                with_report.replace("\"p0\"", "\"p9\""),
                "[report] bottleneck 'p9' is not a port of",
            ),
        ] {
            std::fs::write(&p, &text).unwrap();
            let e = format!("{:#}", load(&p).unwrap_err());
            assert!(e.contains(why), "{e}");
            assert!(e.contains("dumbbell.toml") || why.contains("workload"), "names the topology: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn one_rate_and_knobs_for_every_run() {
        let dir = std::env::temp_dir().join(format!("rxecc-every-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        // Every link at 60 but h0's (the override on top), and one knob
        // for both runs, which dcqcn's own replaces.
        let every = EXP.replace(
            "hosts = 4\n",
            "hosts = 4\nrate_mbps = 60\nknobs = { rpg_time_reset = 7, dce_tcp_rtt = 9 }\n",
        );
        std::fs::write(&p, &every).unwrap();
        let e = load(&p).unwrap();
        let b = &e.scenario("none").unwrap().built;
        let rates: Vec<_> = b
            .topo
            .links
            .iter()
            .map(|l| l.rate_mbps.unwrap_or(b.topo.defaults.rate_mbps))
            .collect();
        assert_eq!(rates, [40, 60, 60, 60]);
        let knob = |run: &str, k: &str| {
            let r = e.runs.iter().find(|r| r.label == run).unwrap();
            r.knobs.get(k).and_then(toml::Value::as_integer)
        };
        assert_eq!(knob("dcqcn", "rpg_time_reset"), Some(20000));
        assert_eq!(knob("none", "rpg_time_reset"), Some(7));
        assert_eq!(
            (knob("dcqcn", "dce_tcp_rtt"), knob("none", "dce_tcp_rtt")),
            (Some(9), Some(9))
        );
        assert_eq!(
            knob("none", "line_rate_mbps"),
            Some(60),
            "derived from the links"
        );
        for (bad, why) in [
            (
                every.replace("dce_tcp_rtt = 9", "dce_tcp_rt = 9"),
                "e.toml:5: knobs: 'dce_tcp_rt' is not a knob of rxe_cc",
            ),
            (
                every.replace("rate_mbps = 60", "rate_mbps = 0"),
                "rate_mbps = 0: a link needs a rate",
            ),
            (
                every.replace("hosts = 4", "hosts = 4\nack_timeout = 32"),
                "ack_timeout = 32: an exponent from 1 to 31",
            ),
            (
                every.replace("hosts = 4", "hosts = 4\nsettle_s = -1.0"),
                "settle_s = -1: 0 to 600 seconds",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn other_rxe_builds_and_metrics_across_runs() {
        let dir = std::env::temp_dir().join(format!("rxecc-rxe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        let stock = EXP.replace(
            "label = \"none\"\n        cc = \"none\"",
            "label = \"stock\"\n        cc = \"none\"\n        rxe = \"stock\"",
        ) + "\n[metrics]\nbaseline = \"stock\"\ncounters = { acks_per_packet = [\"acks\", \"tx_packets\"] }\n";
        std::fs::write(&p, &stock).unwrap();
        let e = load(&p).unwrap();
        assert_eq!(e.runs[1].rxe, crate::modules::Rxe::Stock);
        assert_eq!(e.runs[0].rxe, crate::modules::Rxe::Patched);
        // No rxe_cc on the stock build: no line rate to give it.
        assert!(e.runs[1].knobs.is_empty());
        assert_eq!(e.metrics.baseline.as_deref(), Some("stock"));
        assert!(run_knobs(&p, "stock")
            .unwrap_err()
            .to_string()
            .contains("run stock is on the stock rdma_rxe: no rxe_cc, no knobs"));
        // The patched build's in-flight limits: the experiment's, under
        // a run's own; not on the stock build.
        let limits = stock.replace(
            "rxe = \"stock\"",
            "rxe = \"patched\"\nrxe_params = { max_unacked_psns = 512 }",
        );
        let limits = limits.replacen(
            "hosts = 4",
            "hosts = 4\nrxe_params = { max_inflight_skbs = 256 }",
            1,
        );
        std::fs::write(&p, &limits).unwrap();
        let e = load(&p).unwrap();
        let want: BTreeMap<String, u64> = [
            ("max_inflight_skbs".to_string(), 256),
            ("max_unacked_psns".to_string(), 512),
        ]
        .into();
        assert_eq!(e.runs[1].rxe_params, want);
        assert_eq!(e.runs[0].rxe_params.len(), 1);
        for (text, why) in [
            (
                stock.replace(
                    "rxe = \"stock\"",
                    "rxe = \"stock\"\nknobs = { acc_t_us = 100 }",
                ),
                "run stock: the stock rdma_rxe has no rxe_cc",
            ),
            (
                stock.replace(
                    "rxe = \"stock\"",
                    "rxe = \"stock\"\nrxe_params = { max_unacked_psns = 512 }",
                ),
                "run stock: the stock rdma_rxe has no rxe_params",
            ),
            (
                limits.replace("512", "1024"),
                "rxe_params: max_unacked_psns = 1024: 1 to 1023",
            ),
            (
                limits.replace("max_unacked_psns", "max_psns"),
                "'max_psns' is not a parameter of the patched rdma_rxe",
            ),
            (
                stock.replace("baseline = \"stock\"", "baseline = \"stok\""),
                "has no run 'stok' (it has dcqcn, stock)",
            ),
            (
                stock.replace(
                    "\"acks\", \"tx_packets\"",
                    "\"acks\", \"tx_packets\", \"naks\"",
                ),
                "counters.acks_per_packet: one counter of rxe_cc's totals, or two",
            ),
            (
                stock.replace("rxe = \"stock\"", "rxe = \"stcok\""),
                "unknown variant `stcok`",
            ),
        ] {
            std::fs::write(&p, &text).unwrap();
            let e = format!("{:#}", load(&p).unwrap_err());
            assert!(e.contains(why), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn perftest_runs_take_whole_messages() {
        let dir = std::env::temp_dir().join(format!("rxecc-perf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        let flows = |size: u64| format!("2\n1 0 3 100 {size} 0\n1 0 3 100 {size} 0\n");
        let exp = EXP.replace(
            "label = \"none\"\n        cc = \"none\"",
            "label = \"none\"\n        cc = \"none\"\n        traffic = \"perftest\"\n        flows = \"f.txt\"",
        );
        std::fs::write(&p, &exp).unwrap();
        std::fs::write(dir.join("f.txt"), flows(2 * 65536)).unwrap();
        let e = load(&p).unwrap();
        assert_eq!(e.traffic_of(&e.runs[1]), Traffic::Perftest);
        assert_eq!(e.traffic_of(&e.runs[0]), Traffic::Flowgen);
        std::fs::write(dir.join("f.txt"), flows(100_000)).unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(
            err.contains("run none: perftest: flow 0 (1 -> 0) of 100000 B is not a whole number"),
            "{err}"
        );
        std::fs::write(&p, exp.replace("\"perftest\"", "\"iperf\"")).unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(err.contains("unknown variant `iperf`"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
