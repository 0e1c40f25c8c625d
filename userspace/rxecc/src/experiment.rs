//! Experiment files and `rxecc run`: a topology, a workload, and the
//! algorithms to compare, each with its knobs and its switch settings, in
//! one TOML file (docs/workloads.md). Run inside the testbed guest with
//! rdma_rxe (patched) and rxe_cc loaded; each run sets rxe_cc's `cc` and
//! knobs through sysfs, brings the topology up with the run's switch
//! settings, replays the flow file with flowgen on every host, writes
//! fct.txt, and takes the topology down; at the end, the slowdown table.

use crate::clock::monotonic_ns;
use crate::{fct, switch, topology, workload};
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const PARAMS: &str = "/sys/module/rxe_cc/parameters";

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
    #[serde(default = "one")]
    pub repetitions: u32,
    /// The most seconds the QPs' set-up may take. Time 0 of the flow file
    /// is 0.25 s after every host's flowgen has connected its QPs
    /// (flowgen --sync-dir), not a fixed lead.
    #[serde(default = "default_setup")]
    pub setup_s: u64,
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
    /// Settings merged into every `[[switch]]` of the topology, for every
    /// run (a run's own `switch` comes on top).
    #[serde(default)]
    pub switch: toml::Table,
    /// Link overrides: a link of the topology with the same `a` and `b`
    /// takes these fields.
    #[serde(default)]
    pub links: Vec<toml::Table>,
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
    #[serde(rename = "run")]
    pub runs: Vec<Run>,
}

/// `rxecc report`'s set-up: what the runs' convergence is measured against.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcReport {
    /// The bottleneck's rate, Mb/s.
    pub capacity_mbps: u64,
    /// The bottleneck port (switch egress device), e.g. "p0".
    pub bottleneck: String,
    /// The period T convergence is counted in, us.
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
    /// `<name>_mbps`: a flow's rate, its bytes over its time from post to
    /// completion, by its line in the flow file (0 = the first flow); or
    /// several flows' together (a list: their bytes from the first post
    /// to the last completion, as one flow of several QPs); null if one
    /// did not complete.
    #[serde(default)]
    pub flows: BTreeMap<String, FlowSel>,
}

/// One flow of the flow file, or several taken together.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FlowSel {
    One(u32),
    Many(Vec<u32>),
}

impl FlowSel {
    fn ids(&self) -> &[u32] {
        match self {
            FlowSel::One(i) => std::slice::from_ref(i),
            FlowSel::Many(v) => v,
        }
    }
}

impl NamedMetrics {
    fn is_empty(&self) -> bool {
        self.ports.is_empty() && self.peak_ingress.is_empty() && self.flows.is_empty()
    }

    /// The metrics of one run, from its directory: `ports.jsonl` and
    /// flowgen's records.
    fn of_run(&self, dir: &Path) -> Result<BTreeMap<String, Option<f64>>> {
        let mut m = BTreeMap::new();
        if self.is_empty() {
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
        for (name, devs) in &self.ports {
            let pauses: u64 = of(devs, &["pfc_rx_xoff"]).iter().sum();
            let paused: u64 = of(devs, &["paused_ns"]).iter().sum();
            m.insert(format!("{name}_pauses"), Some(pauses as f64));
            m.insert(format!("{name}_paused_ms"), Some(paused as f64 / 1e6));
        }
        for (name, devs) in &self.peak_ingress {
            let peak = of(devs, &["ingress", "max_bytes"]).into_iter().max();
            m.insert(format!("{name}_peak_kb"), peak.map(|b| b as f64 / 1024.0));
        }
        if !self.flows.is_empty() {
            let csvs: Vec<PathBuf> = std::fs::read_dir(dir)?
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("flowgen-h") && n.ends_with(".csv"))
                })
                .collect();
            let recs = fct::read_records(&csvs)?;
            for (name, sel) in &self.flows {
                let done: Vec<&fct::Record> = sel
                    .ids()
                    .iter()
                    .filter_map(|id| recs.iter().find(|r| r.id == *id && r.status == "ok"))
                    .collect();
                let start = done.iter().map(|r| r.start_ns).min().unwrap_or(0);
                let end = done.iter().map(|r| r.end_ns).max().unwrap_or(0);
                let bytes: u64 = done.iter().map(|r| r.size).sum();
                let rate = (done.len() == sel.ids().len() && end > start)
                    .then(|| bytes as f64 * 8e3 / (end - start) as f64);
                m.insert(format!("{name}_mbps"), rate);
            }
        }
        Ok(m)
    }

    /// Every port it names is one of `built`'s, every flow one of
    /// `flows` (when known).
    fn check(&self, built: &topology::Built, flows: Option<usize>) -> Result<()> {
        for (name, devs) in self.ports.iter().chain(&self.peak_ingress) {
            for d in devs {
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
        if let Some(n) = flows {
            for (name, sel) in &self.flows {
                ensure!(!sel.ids().is_empty(), "[metrics] flows.{name}: no flow");
                for id in sel.ids() {
                    ensure!(
                        (*id as usize) < n,
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
        /// Each host's link rate; default: the topology's default rate.
        rate_mbps: Option<u64>,
        duration_s: f64,
        #[serde(default = "one64")]
        size_div: u64,
        #[serde(default = "one64")]
        seed: u64,
    },
    Incast {
        senders: Vec<u32>,
        receiver: u32,
        size: u64,
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
    /// Switch settings for this run (mark, red, tcd, int, pfc, ...).
    #[serde(default)]
    pub switch: toml::Table,
    /// Fault-injection rules for this run, added to the topology's
    /// `[[inject]]` (docs/switch.md).
    #[serde(default)]
    pub inject: Vec<toml::Table>,
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
fn find(base: &Path, name: &str, dir: &str) -> Result<PathBuf> {
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
    let e: Experiment = toml::from_str(&text).map_err(|err| {
        let line = err
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", path.display(), err.message())
    })?;
    ensure!(!e.runs.is_empty(), "{}: no [[run]]", path.display());
    ensure!(
        ["write", "send", "read"].contains(&e.op.as_str()),
        "{}: op '{}': write, send or read",
        path.display(),
        e.op
    );
    if let Some(r) = &e.report {
        ensure!(
            e.record_interval_ms > 0,
            "{}: [report] needs the runs recorded (record_interval_ms = 20, say)",
            path.display()
        );
        ensure!(
            r.capacity_mbps > 0 && r.period_us > 0 && !r.bottleneck.is_empty(),
            "{}: [report]: capacity_mbps and period_us above 0, and a bottleneck port",
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
        let run_at = text.find(&format!("label = \"{}\"", r.label)).unwrap_or(0);
        let at = |needle: &str| {
            text[run_at..]
                .find(needle)
                .map_or(0, |i| text[..run_at + i].matches('\n').count() + 1)
        };
        ensure!(
            cc_core::alg::AlgId::from_name(&r.cc).is_some(),
            "{}:{}: run {}: cc '{}' is not one of rxe_cc's: {}",
            path.display(),
            at(&format!("\"{}\"", r.cc)),
            r.label,
            r.cc,
            cc_core::alg::ALGS.map(|a| a.name()).join(", ")
        );
        for (k, v) in &r.knobs {
            ensure!(
                k != "cc",
                "{}:{}: run {}: knob 'cc' (set the algorithm with cc = ...)",
                path.display(),
                at(k),
                r.label
            );
            let Some(def) = cc_core::knobs::KNOBS.iter().find(|d| d.name == k) else {
                bail!(
                    "{}:{}: run {}: '{k}' is not a knob of rxe_cc; valid names: {}",
                    path.display(),
                    at(k),
                    r.label,
                    cc_core::knobs::KNOBS.map(|d| d.name).join(", ")
                );
            };
            let n = v.as_integer();
            ensure!(
                n.is_some_and(|n| n >= i64::from(def.min) && n <= i64::from(def.max)),
                "{}:{}: run {}: {k} = {v}: an integer in [{}, {}] ({})",
                path.display(),
                at(k),
                r.label,
                def.min,
                def.max,
                def.help
            );
        }
    }
    if !e.metrics.is_empty() {
        let base = path.parent().unwrap_or(Path::new("."));
        let flows = match &e.workload {
            Some(Workload::File { flows }) => {
                let p = base.join(flows);
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("{}: reading {}", path.display(), p.display()))?;
                Some(workload::parse(&p.display().to_string(), &text)?.len())
            }
            _ => None,
        };
        for r in &e.runs {
            let (_, text) = topology_for(&e, r, base)?;
            let built = topology::parse(path, &text)?;
            e.metrics
                .check(&built, flows)
                .with_context(|| format!("{}: run {}", path.display(), r.label))?;
        }
    }
    Ok(e)
}

/// The topology text with the experiment's and the run's settings merged in.
fn topology_for(e: &Experiment, run: &Run, base: &Path) -> Result<(PathBuf, String)> {
    let file = match find(base, &e.topology, "testbed/topologies") {
        Ok(p) => p,
        Err(_) => topology::resolve(&e.topology)?,
    };
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let mut t: toml::Table =
        toml::from_str(&text).with_context(|| format!("{}: not TOML", file.display()))?;
    if let Some(toml::Value::Array(sws)) = t.get_mut("switch") {
        for sw in sws.iter_mut() {
            if let toml::Value::Table(sw) = sw {
                for (k, v) in e.switch.iter().chain(run.switch.iter()) {
                    sw.insert(k.clone(), v.clone());
                }
            }
        }
    }
    for o in &e.links {
        let (Some(a), Some(b)) = (o.get("a"), o.get("b")) else {
            bail!("a [[links]] override needs a and b");
        };
        let Some(toml::Value::Array(links)) = t.get_mut("link") else {
            bail!("{}: no [[link]] to override", file.display());
        };
        let mut hit = false;
        for l in links.iter_mut() {
            if let toml::Value::Table(l) = l {
                if l.get("a") == Some(a) && l.get("b") == Some(b) {
                    for (k, v) in o {
                        l.insert(k.clone(), v.clone());
                    }
                    hit = true;
                }
            }
        }
        ensure!(
            hit,
            "links override {a} - {b}: no such link in {}",
            file.display()
        );
    }
    if !run.inject.is_empty() {
        let injects = t
            .entry("inject")
            .or_insert_with(|| toml::Value::Array(Vec::new()));
        let toml::Value::Array(injects) = injects else {
            bail!("{}: inject is not an array of tables", file.display());
        };
        injects.extend(run.inject.iter().cloned().map(toml::Value::Table));
    }
    if let Some(n) = e.hosts {
        keep_hosts(&mut t, n as usize);
    }
    Ok((file, toml::to_string(&t)?))
}

/// Leaves only the first `n` hosts of a topology table, with the links
/// and routes that name none of the others: a host no flow uses would cost
/// two ports' programs at every bring-up (incast.toml uses 5 of dumbbell's
/// 9). The hosts kept keep their numbers, names and addresses.
fn keep_hosts(t: &mut toml::Table, n: usize) {
    let Some(toml::Value::Array(hosts)) = t.get_mut("host") else {
        return;
    };
    if hosts.len() <= n {
        return;
    }
    let gone: Vec<toml::Value> = hosts
        .drain(n..)
        .filter_map(|h| h.get("name").cloned())
        .collect();
    let names_gone = |v: &toml::Value, keys: &[&str]| {
        keys.iter()
            .any(|k| v.get(*k).is_some_and(|x| gone.contains(x)))
    };
    if let Some(toml::Value::Array(links)) = t.get_mut("link") {
        links.retain(|l| !names_gone(l, &["a", "b"]));
    }
    if let Some(toml::Value::Array(routes)) = t.get_mut("route") {
        routes.retain(|r| !names_gone(r, &["at", "to", "via"]));
    }
}

/// The run labelled `label` of an experiment file.
fn find_run<'a>(e: &'a Experiment, path: &Path, label: &str) -> Result<&'a Run> {
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
    let run = find_run(&e, path, label)?;
    let (file, text) = topology_for(&e, run, path.parent().unwrap_or(Path::new(".")))?;
    // Checked as `rxecc testbed up` will check it.
    topology::parse(&file, &text)?;
    Ok(format!(
        "# {}, run {label}: {} with the run's settings (rxecc experiment topology)\n{text}",
        path.display(),
        file.display()
    ))
}

/// The experiment and the topology one of its runs brings up, parsed and
/// checked, with the run's settings merged in (for `rxecc model`).
pub fn run_built(path: &Path, label: &str) -> Result<(Experiment, topology::Built)> {
    let e = load(path)?;
    let run = find_run(&e, path, label)?;
    let (file, text) = topology_for(&e, run, path.parent().unwrap_or(Path::new(".")))?;
    let built = topology::parse(&file, &text)?;
    Ok((e, built))
}

/// `rxecc experiment get`: the value at a dotted key of a checked
/// experiment file; an array's items as space-separated words.
pub fn get(path: &Path, key: &str) -> Result<String> {
    load(path)?;
    let text = std::fs::read_to_string(path)?;
    let mut v: toml::Value = toml::from_str(&text)?;
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
    let mut v = vec![format!("cc={}", run.cc)];
    for (k, x) in &run.knobs {
        v.push(format!("{k}={}", value_text(x)?));
    }
    Ok(v)
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

fn value_text(v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => u8::from(*b).to_string(),
        _ => bail!("knob value {v}: an integer, a string or a boolean"),
    })
}

/// rxe_cc's `totals` (counters of every QP destroyed since it loaded).
fn read_totals() -> BTreeMap<String, u64> {
    std::fs::read_to_string("/sys/kernel/debug/rxe_cc/totals")
        .unwrap_or_default()
        .lines()
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
    base: &Path,
    flows_file: &Path,
    flows: &[workload::Flow],
    out: &Path,
    base_rtt_ns: u64,
) -> Result<usize> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_param("cc", &run.cc)?;
    for (k, v) in &run.knobs {
        write_param(k, &value_text(v)?)?;
    }
    let totals_before = read_totals();
    let (_, topo_text) = topology_for(e, run, base)?;
    let topo_file = out.join("topology.toml");
    std::fs::write(&topo_file, &topo_text)?;
    let built = topology::load(&topo_file)?;
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
    topology::up_logged(&topo_file.display().to_string(), false, false, None, &[])?;
    let result = (|| -> Result<usize> {
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
        let pfc = switch::PfcEvents::start()?;
        let qlen = QlenDumper::start(
            &sim,
            out.join("qlen.txt"),
            e.qlen_interval_ms.max(1),
            sync.join("epoch"),
            t0_ns,
        )?;
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
        let mut kids: Vec<(u32, Child)> = Vec::new();
        for h in 0..n {
            let ns = built.plan.hosts[h as usize].clone();
            let log = std::fs::File::create(out.join(format!("flowgen-h{h}.log")))?;
            let child = Command::new("ip")
                .args(["netns", "exec", &ns])
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
                .stderr(log)
                .spawn()
                .context("starting flowgen (ip netns exec ... flowgen)")?;
            kids.push((h, child));
        }
        // A process that fails before time 0 leaves the others waiting for
        // it (up to setup_s): stop them too.
        let mut failed = Vec::new();
        let mut running = kids;
        let (mut released, mut polls) = (false, 0u32);
        while !running.is_empty() {
            let mut still = Vec::new();
            for (h, mut c) in running {
                match c.try_wait()? {
                    Some(st) if !st.success() => failed.push(h),
                    Some(_) => {}
                    None => still.push((h, c)),
                }
            }
            running = still;
            // A deadlock `rxecc record` saw would hold the flows until the
            // timeout: note the ports as they stand, then flow control
            // off, so that the held bytes drain and the flows complete
            // (the run's summary counts the deadlock).
            if rec.is_some() && !released && polls % 10 == 0 {
                let seen = std::fs::read_to_string(out.join("rec/deadlocks.csv"))
                    .is_ok_and(|t| t.contains(",start,"));
                if seen {
                    released = true;
                    std::fs::write(out.join("locked.jsonl"), ports_jsonl()?)?;
                    topology::set_flow_control(switch::FlowControl::None)
                        .context("releasing a deadlock")?;
                    eprintln!(
                        "rxecc run: {}: deadlock (rec/deadlocks.csv); flow control off so that the flows drain",
                        run.label
                    );
                }
            }
            polls += 1;
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
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        failed.sort_unstable();
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
        qlen.stop()?;
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
        for ev in pfc.stop()? {
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
        let mut totals = String::new();
        for (k, v) in read_totals() {
            let b = totals_before.get(&k).copied().unwrap_or(0);
            totals.push_str(&format!("{k} {}\n", v.saturating_sub(b)));
        }
        std::fs::write(out.join("rxe_cc-totals.txt"), totals)?;
        // rxe's own counters say why a NAK or a retransmission happened
        // (RNR, sequence error, timeout); the devices are this run's.
        let counters = Command::new("rdma")
            .args(["statistic", "show"])
            .output()
            .context("rdma statistic show")?;
        std::fs::write(out.join("rxe-counters.txt"), &counters.stdout)?;
        let csvs: Vec<PathBuf> = (0..n)
            .map(|h| out.join(format!("flowgen-h{h}.csv")))
            .filter(|p| p.exists())
            .collect();
        let recs = fct::read_records(&csvs)?;
        let lines = fct::fct_lines(flows, &recs, &built.topo, base_rtt_ns)?;
        std::fs::write(out.join("fct.txt"), fct::to_text(&lines))?;
        if !failed.is_empty() {
            eprintln!(
                "rxecc run: {}: flowgen failed on hosts {failed:?} (see {}/flowgen-h*.log)",
                run.label,
                out.display()
            );
        }
        Ok(lines.len())
    })();
    topology::down().context("taking the topology down")?;
    result
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
    child: Child,
}

impl Capture {
    /// dumpcap on `dev` (in namespace `ns`, if any), once it captures: it
    /// starts in well under a second where tshark takes 30 s under TCG.
    fn start(dev: &str, ns: Option<&str>, out: &Path) -> Result<Self> {
        let pcap = out.join(format!("{dev}.pcap"));
        let log = out.join(format!("{dev}-capture.log"));
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "dumpcap"]);
                c
            }
            None => Command::new("dumpcap"),
        };
        let mut child = cmd
            .args(["-i", dev, "-P", "-f", "udp port 4791", "-w"])
            .arg(&pcap)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("starting dumpcap (Wireshark's capture tool)")?;
        let t0 = Instant::now();
        loop {
            if std::fs::read_to_string(&log).is_ok_and(|l| l.contains("Capturing on")) {
                break;
            }
            if let Some(st) = child.try_wait()? {
                bail!(
                    "dumpcap on {dev} exited ({st}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default().trim()
                );
            }
            if t0.elapsed().as_secs() >= 60 {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "dumpcap on {dev} did not start capturing in 60 s (see {})",
                    log.display()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("rxecc run: capturing RoCEv2 on {dev}");
        Ok(Capture {
            dev: dev.to_string(),
            pcap,
            child,
        })
    }

    /// Stops dumpcap (SIGTERM: it closes the file) and writes the
    /// checkers' verdict beside the capture.
    fn stop_and_judge(mut self, out: &Path) -> Result<()> {
        // SAFETY: kill(2) on our own child's pid; no memory involved.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait()?;
        let rep = crate::check::judge(&crate::check::read(&self.pcap)?);
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

/// The base RTT of the standalone FCT, measured: 20 one-packet flows
/// between hosts 0 and 1, 20 ms apart on the idle testbed with no CC;
/// the least of their FCT less their serialisation, so that the
/// standalone FCT is a lower bound, as the simulator's is (a median let
/// slowdowns below 1 be clipped away). Every run's fct.txt uses it, so
/// their slowdowns compare.
fn measure_base_rtt(e: &Experiment, base: &Path, out: &Path) -> Result<u64> {
    let dir = out.join("base-rtt");
    std::fs::create_dir_all(&dir)?;
    let flows: Vec<workload::Flow> = (0..20u32)
        .map(|i| workload::Flow {
            src: i % 2,
            dst: 1 - i % 2,
            pg: workload::PG,
            dport: workload::DPORT,
            size: 64,
            start_s: workload::BASE_S + f64::from(i) * 0.02,
        })
        .collect();
    let file = dir.join("flows.txt");
    std::fs::write(&file, workload::to_text(&flows))?;
    let probe = Run {
        label: "base-rtt".into(),
        cc: "none".into(),
        knobs: BTreeMap::new(),
        switch: toml::Table::new(),
        inject: Vec::new(),
    };
    eprintln!("rxecc run: measuring the base RTT (20 one-packet flows, h0 <-> h1, no CC) ...");
    let done = run_one(e, &probe, base, &file, &flows, &dir, 0)?;
    ensure!(
        done == flows.len(),
        "base RTT: only {done} of 20 probe flows completed"
    );
    let text = std::fs::read_to_string(dir.join("fct.txt"))?;
    let mut excess: Vec<u64> = fct::parse("base-rtt/fct.txt", &text)?
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

/// `rxecc run`: every run of the experiment, `repetitions` times, into
/// `out`; prints the slowdown table. Fails if any flow did not complete.
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
    let flows = match workload {
        Workload::File { flows } => {
            let p = base.join(flows);
            std::fs::copy(&p, &flows_file).with_context(|| format!("copying {}", p.display()))?;
            let text = std::fs::read_to_string(&flows_file)?;
            workload::parse(&p.display().to_string(), &text)?
        }
        Workload::Poisson {
            cdf,
            load,
            rate_mbps,
            duration_s,
            size_div,
            seed,
        } => {
            let cdf = workload::Cdf::load(&find(base, cdf, "testbed/workloads")?)?;
            // Defaults from the topology as the first run brings it up.
            let (_, text) = topology_for(&e, &e.runs[0], base)?;
            let built = topology::parse(path, &text)?;
            let rate = rate_mbps.unwrap_or(built.topo.defaults.rate_mbps);
            let n = e.hosts.unwrap_or(built.topo.hosts.len() as u32);
            let f = workload::Poisson {
                cdf: &cdf,
                hosts: n,
                load: *load,
                rate_mbps: rate,
                duration_s: *duration_s,
                size_div: *size_div,
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
            period_s,
            rounds,
        } => {
            let f = workload::incast(senders, *receiver, *size, *period_s, *rounds)?;
            std::fs::write(&flows_file, workload::to_text(&f))?;
            f
        }
    };
    ensure!(!flows.is_empty(), "the workload has no flows");
    let base_rtt_ns = match e.base_rtt_us {
        Some(us) if us >= 0.0 && us.is_finite() => (us * 1000.0) as u64,
        Some(_) => bail!("base_rtt_us must be a non-negative number"),
        None if e.slowdown_table => measure_base_rtt(&e, base, out)?,
        // No slowdowns asked for: fct.txt's standalone FCT counts the
        // serialisation alone (docs/workloads.md).
        None => 0,
    };
    let total = e.runs.len() as u32 * e.repetitions;
    let mut k = 0;
    let mut incomplete = Vec::new();
    let mut tables: Vec<(String, PathBuf)> = Vec::new();
    for rep in 1..=e.repetitions {
        for r in &e.runs {
            k += 1;
            let label = if e.repetitions > 1 {
                format!("{}-{rep}", r.label)
            } else {
                r.label.clone()
            };
            let dir = out.join(&label);
            eprintln!(
                "rxecc run: [{k}/{total}] {label}: cc={}, {} flows ...",
                r.cc,
                flows.len()
            );
            let t0 = Instant::now();
            let res = run_one(&e, r, base, &flows_file, &flows, &dir, base_rtt_ns);
            for (name, v) in &saved {
                let _ = std::fs::write(Path::new(PARAMS).join(name), v);
            }
            let done = res.with_context(|| format!("run {label}"))?;
            eprintln!(
                "rxecc run: [{k}/{total}] {label}: {done} of {} flows completed in {:.0} s",
                flows.len(),
                t0.elapsed().as_secs_f64()
            );
            if done < flows.len() {
                incomplete.push(label.clone());
            }
            tables.push((label, dir.join("fct.txt")));
        }
    }
    // Every run's fct.txt, read once for both tables.
    let mut raw = Vec::new();
    for (label, f) in &tables {
        let text = std::fs::read_to_string(f)?;
        raw.push((label.clone(), fct::parse(&f.display().to_string(), &text)?));
    }
    // Every run at a glance: FCT tails, pauses and drops.
    let mut sums = Vec::new();
    for ((label, f), (_, lines)) in tables.iter().zip(&raw) {
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
        r.named = e
            .metrics
            .of_run(dir)
            .with_context(|| format!("[metrics] of run {label}"))?;
        sums.push(r);
    }
    let table = fct::summary_table(&sums);
    print!("{table}");
    std::fs::write(out.join("summary.txt"), &table)?;
    let mut engaged = Vec::new();
    for ((label, f), r) in tables.iter().zip(run_labels(&e)) {
        let totals =
            std::fs::read_to_string(f.with_file_name("rxe_cc-totals.txt")).unwrap_or_default();
        let verdict = Engagement::judge(&r.cc, &totals);
        let line = verdict.line(label, &r.cc);
        if verdict.engaged == Some(false) {
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
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&sums)?,
    )?;
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
        crate::plot::plot_runs(&loaded, &setup, &out.join("plots"))?;
        print!("{table}");
        std::fs::write(out.join("table.txt"), &table)?;
    }
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
    crate::plot::plot_fct(&all, &raw, fct::Kind::All, &out.join("plots"))?;
    ensure!(
        incomplete.is_empty(),
        "not every flow completed in {incomplete:?}"
    );
    Ok(())
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
            let rep: crate::check::Report = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a check report", f.display()))?;
            rows.push((label.clone(), dev.clone(), injected, rep));
        }
    }
    Ok(crate::check::run_table(&rows))
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

    #[test]
    fn experiment_merges_into_the_topology() {
        let dir = std::env::temp_dir().join(format!("rxecc-exp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.toml");
        std::fs::write(&p, EXP).unwrap();
        let e = load(&p).unwrap();
        assert_eq!(e.runs.len(), 2);
        let (_, text) = topology_for(&e, &e.runs[0], &dir).unwrap();
        let t = dir.join("t.toml");
        std::fs::write(&t, &text).unwrap();
        let b = topology::load(&t).unwrap();
        let sw = &b.topo.switches[0];
        assert!(sw.red.is_some() && sw.pfc);
        assert_eq!(b.topo.links[0].rate_mbps, Some(40));
        assert_eq!(fct::path_rate_mbps(&b.topo, 0, 1), Some(40));
        // hosts = 4: dumbbell's other five hosts and their links are gone.
        assert_eq!(b.topo.hosts.len(), 4);
        assert_eq!(b.topo.links.len(), 4);
        assert!(b
            .topo
            .links
            .iter()
            .all(|l| *l.a.get_ref() != "h4" && *l.b.get_ref() != "h4"));
        let (_, text) = topology_for(&e, &e.runs[1], &dir).unwrap();
        std::fs::write(&t, &text).unwrap();
        assert!(topology::load(&t).unwrap().topo.switches[0].red.is_none());

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
                "rpg_time_reset = 0: an integer in [1, 1000000]",
            ),
            (
                EXP.replace("cc = \"none\"", "cc = \"nil\""),
                "run none: cc 'nil' is not one of rxe_cc's: none, fixed",
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
        std::fs::write(
            &p,
            EXP.replace(
                "[switch]",
                "[report]\ncapacity_mbps = 40\nbottleneck = \"p0\"\nperiod_us = 10000\n[switch]",
            )
            .replace("hosts = 4", "hosts = 4\nrecord_interval_ms = 20"),
        )
        .unwrap();
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
            flows = { big = 0, small = 1, both = [0, 1], big2 = [0], pair = [0, 2] }
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
        let m = e.metrics.of_run(&dir).unwrap();
        assert_eq!(m["trunk_pauses"], Some(5.0));
        assert_eq!(m["trunk_paused_ms"], Some(3.0));
        assert_eq!(m["any_peak_kb"], Some(10.0));
        assert_eq!(m["big_mbps"], Some(100.0));
        assert_eq!(m["small_mbps"], None);
        assert_eq!(m["both_mbps"], None, "one of them failed");
        assert_eq!(m["big2_mbps"], Some(100.0));
        // 2 MB from the first post (1 us) to the last completion (160 ms).
        assert_eq!(m["pair_mbps"], Some(100.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
