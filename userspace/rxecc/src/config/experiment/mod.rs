//! Experiment files and `rxecc run`: a topology, a workload, and the
//! algorithms to compare, each with its knobs and its switch settings, in
//! one TOML file (docs/workloads.md). Run inside the testbed guest with
//! rdma_rxe (patched) and rxe_cc loaded; each run sets rxe_cc's `cc` and
//! knobs through sysfs, brings the topology up with the run's switch
//! settings, replays the flow file with flowgen on every host (or with
//! perftest, `traffic`), writes fct.txt, and takes the topology down; at
//! the end, the slowdown table.

use crate::switch::MarkMode;
use crate::{config::scale, config::topology, config::workload};
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod get;
mod load;
mod rates;
mod scaled;
mod scenario;
#[cfg(test)]
mod tests;

pub(crate) use get::{find_run, value_text};
pub use get::{get, run_built, run_knobs, run_rate_mbps, run_topology};
pub use load::load;
use rates::resolve_rates;
use scaled::apply_scale;
pub(crate) use scenario::scenario_for;

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
