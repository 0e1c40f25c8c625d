//! Topologies from TOML files (`testbed/topologies/*.toml`): parsing,
//! validation, and the plan `rxecc testbed up` builds (`testbed/`).
//!
//! Hosts are network namespaces, switches are Linux bridges whose ports are
//! emulated switch ports (`switch-ebpf/`), and every host NIC is a port too
//! (it obeys PFC). Naming, from each host's and switch's position in the
//! file: host i has NIC `v<i>` (10.77.0.<i+1>/24, MAC 02:77:00:00:00:<i+1>)
//! and rxe device `rxe<i>`; its switch-side port is `p<i>`; a link between
//! switches a and b has port `x<a>_<b>` on a and `x<b>_<a>` on b.
//!
//! Forwarding is static: bridges neither learn nor flood; every switch gets
//! an FDB entry per host (shortest path, unless a `[[route]]` says
//! otherwise), and every host a permanent neighbour entry per other host.
//! So a topology with a loop (`triangle`) has no broadcast storm, and its
//! routes can form a cyclic buffer dependency on purpose.

use crate::switch::{
    self, FlowControl, GfcThresholds, GfcTime, IccParams, IngressConfig, IntMode, MarkMode,
};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use toml::Spanned;

mod build;
mod built;
#[cfg(test)]
pub(crate) mod tests;

pub use build::build;

const NET: &str = "10.77.0";

fn default_rate() -> u64 {
    100
}
fn default_refresh() -> u64 {
    10_000
}
fn default_class() -> u32 {
    3
}
/// GFC's stage step when a file gives none: the largest RoCE frame rxe
/// sends here (a 4096-byte path MTU payload with Ethernet, IP, UDP, BTH,
/// RETH and ICRC: 4170 bytes).
fn default_gfc_step() -> u64 {
    4170
}
/// GFC's feedback latency tau when a file gives none: the PFC round trip
/// measured on this testbed under TCG (mean 1.4 to 2.5 ms per host NIC in
/// test_switch_lossless_incast; docs/switch.md).
fn default_tau() -> u64 {
    2_000
}
fn default_limit() -> u32 {
    10_000
}
fn default_burst() -> u64 {
    switch::default_burst_us()
}

/// A topology file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Free text, printed by `up`.
    #[serde(default)]
    pub description: String,
    /// Link settings used where a link does not give its own.
    #[serde(default)]
    pub defaults: LinkDefaults,
    #[serde(default, rename = "switch")]
    pub switches: Vec<Switch>,
    #[serde(default, rename = "host")]
    pub hosts: Vec<Host>,
    #[serde(default, rename = "link")]
    pub links: Vec<Link>,
    #[serde(default, rename = "route")]
    pub routes: Vec<Route>,
    /// Fault-injection rules, each at a port's ingress (docs/switch.md).
    #[serde(default, rename = "inject", skip_serializing_if = "Vec::is_empty")]
    pub injects: Vec<switch::InjectRule>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDefaults {
    #[serde(default = "default_rate")]
    pub rate_mbps: u64,
    #[serde(default)]
    pub delay_us: u64,
    /// Egress queue limit of every port, packets (drops above it).
    #[serde(default = "default_limit")]
    pub limit_pkts: u32,
    /// Pacing credit a late dequeue may catch up on, us; 0: one packet
    /// (the default, 4000 under RXECC_CLOCK=host: switch::default_burst_us).
    #[serde(default = "default_burst")]
    pub burst_us: u64,
    /// ACKs, NAKs and CNPs in a strict-priority class ahead of data at
    /// every port, host NICs included (as ACC §4.3 assumes, and
    /// deployments give CNPs); off: one FIFO.
    #[serde(default)]
    pub ack_priority: bool,
}

impl Default for LinkDefaults {
    fn default() -> Self {
        LinkDefaults {
            rate_mbps: default_rate(),
            delay_us: 0,
            limit_pkts: default_limit(),
            burst_us: default_burst(),
            ack_priority: false,
        }
    }
}

/// A switch's settings, listed once. [`Switch`] takes each with its
/// default; [`SwitchOverlay`] (an experiment's or a run's `switch` table)
/// takes each as optional, and sets those given on every switch of the
/// topology.
macro_rules! switch_settings {
    ($($(#[doc = $doc:literal])* $field:ident: $ty:ty = $default:tt,)*) => {
        #[derive(Clone, Debug, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct Switch {
            pub name: Spanned<String>,
            /// The guest this switch runs in under `testbed/vms.sh` (nodes
            /// that name the same guest share it); absent: a guest of its
            /// own.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub guest: Option<Spanned<String>>,
            $($(#[doc = $doc])* #[serde(default = $default)] pub $field: $ty,)*
        }

        /// Settings for every switch of a topology, from an experiment
        /// (its `[switch]`, or a run's `switch = { ... }`): those given
        /// replace the topology's.
        #[derive(Clone, Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct SwitchOverlay {
            $(pub $field: Option<$ty>,)*
        }

        impl SwitchOverlay {
            /// Sets every setting given here on `s`.
            pub fn apply(&self, s: &mut Switch) {
                $(if let Some(v) = &self.$field {
                    s.$field = v.clone();
                })*
            }
        }
    };
}

switch_settings! {
    /// false: a plain Linux bridge whose ports, and the host NICs linked
    /// to it, get no port program (a test attaches its own with `rxecc
    /// port attach`); none of the settings below may be given then.
    emulate: bool = "emulated",
    /// Shared buffer, bytes; 0 is unlimited.
    buffer_bytes: u64 = "Default::default",
    /// PFC on (the same as `flow_control = "pfc"`).
    pfc: bool = "Default::default",
    /// Link-level flow control on this switch's ports and on the host NICs
    /// linked to it: "none", "pfc" or "gfc-buffer". Absent: `pfc` decides.
    flow_control: Option<FlowControl> = "Default::default",
    /// Buffer-based GFC: B_m per ingress port, bytes.
    gfc_bm_bytes: u64 = "Default::default",
    /// Buffer-based GFC: B_1; absent, the highest GFC allows:
    /// B_m - 2 C tau.
    gfc_b1_bytes: Option<u64> = "Default::default",
    /// The feedback latency GFC's thresholds are checked against, us.
    tau_us: u64 = "default_tau",
    /// GFC: stages are added until two are this close (the largest frame).
    gfc_step_bytes: u64 = "default_gfc_step",
    /// Time-based GFC: B_0, below which the sender runs at C; absent, the
    /// highest Theorem 5.1 allows.
    gfc_b0_bytes: Option<u64> = "Default::default",
    /// Time-based GFC: the advertisement period; absent, the time to send
    /// 65535 bytes at the link's rate (InfiniBand's default).
    gfc_period_us: Option<u64> = "Default::default",
    /// Per ingress port, bytes (a link may override them).
    xoff_bytes: u64 = "Default::default",
    xon_bytes: u64 = "Default::default",
    /// Pause time sent with XOFF, 512-bit quanta; absent: three refresh
    /// intervals at the link's rate (switch::auto_quanta).
    pause_quanta: Option<u32> = "Default::default",
    refresh_us: u64 = "default_refresh",
    pfc_class: u32 = "default_class",
    /// Marks on every egress port: off, ce, ue, red or tcd.
    mark: MarkMode = "mark_off",
    red: Option<RedCfg> = "Default::default",
    tcd: Option<TcdCfg> = "Default::default",
    /// INT on every egress port: off, hpcc (data packets, stamped at the
    /// link's far end), fncc or icc (ACKs, stamped at the port itself).
    int: IntMode = "int_off",
    /// ICC's switch parameters, for `int = "icc"`.
    icc: IccParams = "Default::default",
}

impl Switch {
    /// The first setting given that only emulated ports carry out.
    fn emulated_setting(&self) -> Option<&'static str> {
        [
            (self.buffer_bytes != 0, "buffer_bytes"),
            (self.fc() != FlowControl::None, "flow_control"),
            (self.xoff_bytes != 0 || self.xon_bytes != 0, "xoff_bytes"),
            (self.mark != MarkMode::Off, "mark"),
            (self.red.is_some(), "red"),
            (self.tcd.is_some(), "tcd"),
            (self.int != IntMode::Off, "int"),
        ]
        .into_iter()
        .find_map(|(given, field)| given.then_some(field))
    }

    /// The switch's flow-control mode.
    pub fn fc(&self) -> FlowControl {
        match (self.flow_control, self.pfc) {
            (Some(m), _) => m,
            (None, true) => FlowControl::Pfc,
            (None, false) => FlowControl::None,
        }
    }
}

fn emulated() -> bool {
    true
}

fn int_off() -> IntMode {
    IntMode::Off
}

fn mark_off() -> MarkMode {
    MarkMode::Off
}

#[derive(Debug, Deserialize, Serialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct RedCfg {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax_permille: u32,
}

#[derive(Debug, Deserialize, Serialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct TcdCfg {
    pub thresh_bytes: u64,
    pub max_ton_us: u64,
    /// Dequeue lateness judged an emulation stall (OFF); 0 or absent: 2 ms.
    #[serde(default)]
    pub stall_us: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: Spanned<String>,
    /// As [`Switch::guest`].
    #[serde(default)]
    pub guest: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub a: Spanned<String>,
    pub b: Spanned<String>,
    pub rate_mbps: Option<u64>,
    pub delay_us: Option<u64>,
    pub limit_pkts: Option<u32>,
    /// Overrides of the switch's thresholds for the switch ports of this link.
    pub xoff_bytes: Option<u64>,
    pub xon_bytes: Option<u64>,
}

impl Link {
    /// Takes the settings `o` gives (an experiment's `[[links]]` entry for
    /// this link).
    pub fn take_settings(&mut self, o: &Link) {
        self.rate_mbps = o.rate_mbps.or(self.rate_mbps);
        self.delay_us = o.delay_us.or(self.delay_us);
        self.limit_pkts = o.limit_pkts.or(self.limit_pkts);
        self.xoff_bytes = o.xoff_bytes.or(self.xoff_bytes);
        self.xon_bytes = o.xon_bytes.or(self.xon_bytes);
    }
}

impl Topology {
    /// Leaves only the first `n` hosts, with the links and routes that
    /// name none of the others: a host no flow uses would cost two ports'
    /// programs at every bring-up (incast.toml uses 5 of dumbbell's 9).
    /// The hosts kept keep their numbers, names and addresses.
    pub fn keep_hosts(&mut self, n: usize) {
        if self.hosts.len() <= n {
            return;
        }
        let gone: Vec<String> = self.hosts.drain(n..).map(|h| h.name.into_inner()).collect();
        let is_gone = |x: &Spanned<String>| gone.contains(x.get_ref());
        self.links.retain(|l| !is_gone(&l.a) && !is_gone(&l.b));
        self.routes
            .retain(|r| !is_gone(&r.at) && !is_gone(&r.to) && !is_gone(&r.via));
    }
}

/// At switch `at`, traffic to host `to` leaves towards switch `via`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub at: Spanned<String>,
    pub to: Spanned<String>,
    pub via: Spanned<String>,
}

/// An error at a place in a topology file.
fn at(
    file: &Path,
    src: &str,
    span: std::ops::Range<usize>,
    field: &str,
    msg: impl std::fmt::Display,
) -> anyhow::Error {
    let line = src[..span.start.min(src.len())].matches('\n').count() + 1;
    anyhow::anyhow!("{}:{line}: {field}: {msg}", file.display())
}

/// One end of a link, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Host(usize),
    Switch(usize),
}

/// A port to create: its device, where it lives, and its settings.
#[derive(Clone, Debug, Serialize)]
pub struct PortPlan {
    pub dev: String,
    /// The host namespace, for host NICs.
    pub netns: Option<String>,
    pub switch: Option<usize>,
    pub rate_mbps: u64,
    pub delay_us: u64,
    pub limit_pkts: u32,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    /// The switch at the link's other end, whose frames this port obeys.
    pub peer_switch: Option<usize>,
    /// GFC's thresholds, for a switch port of a `gfc-buffer` switch.
    pub gfc: Option<GfcThresholds>,
    /// Time-based GFC at this port's ingress (a port of a `gfc-time`
    /// switch), and at the switch whose frames this port obeys.
    pub gfc_time: Option<GfcTime>,
    pub peer_gfc_time: Option<GfcTime>,
}

impl PortPlan {
    /// The switch whose frames this port's egress obeys: the one at the
    /// link's far end (a host sends none: a host port takes its own
    /// switch's mode).
    pub(crate) fn fc_peer(&self) -> Option<usize> {
        self.peer_switch.or(self.switch)
    }

    /// This switch port's ingress accounting and flow control, on switch
    /// `s` (index `si`).
    pub(crate) fn ingress_config(&self, s: &Switch, si: usize) -> IngressConfig {
        IngressConfig {
            switch_id: si as u32,
            mode: s.fc(),
            xoff_bytes: self.xoff_bytes,
            xon_bytes: self.xon_bytes,
            buffer_bytes: s.buffer_bytes,
            pfc_class: s.pfc_class,
            pause_quanta: s.pause_quanta,
            refresh_us: s.refresh_us,
            gfc: self.gfc.unwrap_or_default(),
            gfc_time: self.gfc_time.unwrap_or_default(),
        }
    }
}

/// What `up` builds, derived from a validated file; `down` reads it back.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub file: PathBuf,
    pub hosts: Vec<String>,
    pub switches: Vec<String>,
    /// Every port device, host NICs first.
    pub ports: Vec<(String, Option<String>)>,
    /// Root-namespace veths to delete (one end of each pair).
    pub veths: Vec<String>,
    /// The rxe devices `up` made (one per host built here).
    #[serde(default)]
    pub rxe: Vec<String>,
    /// The guest this is the part of (`up --guest`); none: the whole.
    #[serde(default)]
    pub guest: Option<String>,
}

/// A parsed and checked topology, with what it takes to build it.
#[derive(Clone, Debug)]
pub struct Built {
    pub topo: Topology,
    pub plan: Plan,
    pub(crate) ports: Vec<PortPlan>,
    /// (switch, host index, port device) static FDB entries.
    pub(crate) fdb: Vec<(usize, usize, String)>,
    /// Switch-to-switch links: (a, b, dev on a, dev on b).
    pub(crate) trunks: Vec<(usize, usize, String, String)>,
    /// Host i's port on its switch.
    pub(crate) host_port: Vec<(usize, String)>,
    /// Built in part: this guest's (see [`Built::scope_to`]).
    pub(crate) guest: Option<String>,
    /// The device playing a port on a link to another guest, where named.
    pub(crate) nic_devs: BTreeMap<String, String>,
}

/// Host `i`'s address on the testbed network (its NIC `v<i>`).
pub fn host_ip(i: usize) -> String {
    format!("{NET}.{}", i + 1)
}

/// A port in the HPCC simulator's numbering, for pfc.txt and qlen.txt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimPort {
    pub dev: String,
    pub node: u32,
    /// 0 host, 1 switch.
    pub node_type: u32,
    pub ifindex: u32,
}

/// A NIC of one guest of a testbed of several (`testbed/vms.sh`): one end
/// of a link between two guests, a QEMU `dgram` netdev (UDP datagrams
/// between two ports on 127.0.0.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmNic {
    pub guest: String,
    /// The NIC's MAC (testbed/vms.sh finds the NIC's name by it).
    pub mac: String,
    /// The port it plays: a host's `v<i>`, a switch's `p<i>` or `x<a>_<b>`.
    pub dev: String,
    pub local_port: u16,
    pub remote_port: u16,
}

/// The MAC of a switch's end of a link between guests: `p<h>` and
/// `x<a>_<b>` by their numbers (a host's end keeps the host's MAC).
fn switch_nic_mac(dev: &str) -> Option<String> {
    if let Some(h) = dev.strip_prefix('p').and_then(|h| h.parse::<usize>().ok()) {
        return Some(format!(
            "02:78:00:00:{:02x}:{:02x}",
            (h + 1) >> 8,
            (h + 1) & 0xff
        ));
    }
    let (a, b) = dev.strip_prefix('x')?.split_once('_')?;
    let (a, b): (u8, u8) = (a.parse().ok()?, b.parse().ok()?);
    Some(format!("02:79:00:00:{a:02x}:{b:02x}"))
}

/// Finds a topology: a path, or a name in testbed/topologies/.
pub fn resolve(name: &str) -> Result<PathBuf> {
    let p = PathBuf::from(name);
    if p.exists() {
        return Ok(p);
    }
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testbed/topologies"
    ));
    let q = dir.join(format!("{name}.toml"));
    if q.exists() {
        return Ok(q.canonicalize().unwrap_or(q));
    }
    bail!(
        "no topology '{name}': not a file, and not in {}",
        dir.display()
    )
}

fn valid_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses and checks a topology file; every error names the file, the
/// line and the field.
pub fn load(file: &Path) -> Result<Built> {
    let src =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    parse(file, &src)
}

/// As [`load`], from text.
pub fn parse(file: &Path, src: &str) -> Result<Built> {
    build(file, src, read(file, src)?)
}

/// A topology file's text as a [`Topology`], not yet checked.
pub fn read(file: &Path, src: &str) -> Result<Topology> {
    toml::from_str(src).map_err(|e| {
        let line = e
            .span()
            .map(|s| super::lines::line_at(src, s.start))
            .unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", file.display(), e.message())
    })
}

/// Host `h`'s NIC MAC address (`v<h>`).
pub fn host_mac(h: usize) -> String {
    format!("02:77:00:00:{:02x}:{:02x}", (h + 1) >> 8, (h + 1) & 0xff)
}

/// Bottleneck rate, Mb/s, of the shortest path between hosts `a` and `b`
/// (hosts are never transit), as the simulator's routing computes it;
/// None if there is no path. A plain bridge's links have no rate (the
/// guest's CPU sets it): a path of those alone is `u64::MAX`, and its
/// flows cross in no time on the wire.
pub fn path_rate_mbps(topo: &Topology, a: usize, b: usize) -> Option<u64> {
    let nh = topo.hosts.len();
    let mut idx: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, h) in topo.hosts.iter().enumerate() {
        idx.insert(h.name.get_ref(), i);
    }
    for (i, s) in topo.switches.iter().enumerate() {
        idx.insert(s.name.get_ref(), nh + i);
    }
    let n = nh + topo.switches.len();
    let mut adj: Vec<Vec<(usize, u64)>> = vec![Vec::new(); n];
    for l in &topo.links {
        let (Some(&x), Some(&y)) = (
            idx.get(l.a.get_ref().as_str()),
            idx.get(l.b.get_ref().as_str()),
        ) else {
            continue;
        };
        let plain = |i: usize| i >= nh && !topo.switches[i - nh].emulate;
        let r = if plain(x) || plain(y) {
            u64::MAX
        } else {
            l.rate_mbps.unwrap_or(topo.defaults.rate_mbps)
        };
        adj[x].push((y, r));
        adj[y].push((x, r));
    }
    // BFS by hops, keeping the widest bottleneck among shortest paths.
    let mut dist = vec![usize::MAX; n];
    let mut bw = vec![0u64; n];
    dist[a] = 0;
    bw[a] = u64::MAX;
    let mut q = VecDeque::from([a]);
    while let Some(u) = q.pop_front() {
        if u != a && u < nh {
            continue;
        }
        for &(v, r) in &adj[u] {
            let w = bw[u].min(r);
            if dist[v] == usize::MAX {
                dist[v] = dist[u] + 1;
                bw[v] = w;
                q.push_back(v);
            } else if dist[v] == dist[u] + 1 && w > bw[v] {
                bw[v] = w;
            }
        }
    }
    (dist[b] != usize::MAX).then_some(bw[b])
}
