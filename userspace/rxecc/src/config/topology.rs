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

impl Built {
    /// The guest host `h` runs in under `testbed/vms.sh`.
    pub fn host_guest(&self, h: usize) -> &str {
        let n = &self.topo.hosts[h];
        n.guest.as_ref().unwrap_or(&n.name).get_ref()
    }

    /// The guest switch `s` runs in.
    pub fn switch_guest(&self, s: usize) -> &str {
        let n = &self.topo.switches[s];
        n.guest.as_ref().unwrap_or(&n.name).get_ref()
    }

    /// Every port device's set rate, Mb/s.
    pub fn port_rates_mbps(&self) -> BTreeMap<String, u64> {
        self.ports
            .iter()
            .map(|p| (p.dev.clone(), p.rate_mbps))
            .collect()
    }

    /// Host `h`'s link rate, Mb/s (its NIC's line rate); none on a plain
    /// bridge.
    pub fn host_rate_mbps(&self, h: usize) -> Option<u64> {
        let name = self.topo.hosts.get(h)?.name.get_ref();
        let t = &self.topo;
        let l = t
            .links
            .iter()
            .find(|l| l.a.get_ref() == name || l.b.get_ref() == name)?;
        let other = if l.a.get_ref() == name { &l.b } else { &l.a };
        // A plain bridge's links have no rate: the guest's CPU sets it.
        let plain = t
            .switches
            .iter()
            .any(|s| s.name.get_ref() == other.get_ref() && !s.emulate);
        (!plain).then(|| l.rate_mbps.unwrap_or(t.defaults.rate_mbps))
    }

    /// Every guest, in the order of the file's first node in each.
    pub fn guests(&self) -> Vec<String> {
        let mut g: Vec<String> = Vec::new();
        let all = (0..self.topo.hosts.len())
            .map(|h| self.host_guest(h))
            .chain((0..self.topo.switches.len()).map(|s| self.switch_guest(s)));
        for n in all {
            if !g.iter().any(|x| x == n) {
                g.push(n.to_string());
            }
        }
        g
    }

    /// The NICs of a testbed of several guests: two per link between
    /// guests, on UDP ports from `base_port` up. A link inside a guest
    /// stays a veth pair.
    pub fn vm_nics(&self, base_port: u16) -> Result<Vec<VmNic>> {
        let mut ends: Vec<[(String, String, String); 2]> = Vec::new();
        for (h, (sw, port)) in self.host_port.iter().enumerate() {
            let (gh, gs) = (self.host_guest(h), self.switch_guest(*sw));
            if gh != gs {
                let m = switch_nic_mac(port).context("switch port name")?;
                ends.push([
                    (gh.to_string(), host_mac(h), format!("v{h}")),
                    (gs.to_string(), m, port.clone()),
                ]);
            }
        }
        for (a, b, da, db) in &self.trunks {
            let (ga, gb) = (self.switch_guest(*a), self.switch_guest(*b));
            if ga != gb {
                ends.push([
                    (
                        ga.to_string(),
                        switch_nic_mac(da).context("trunk port")?,
                        da.clone(),
                    ),
                    (
                        gb.to_string(),
                        switch_nic_mac(db).context("trunk port")?,
                        db.clone(),
                    ),
                ]);
            }
        }
        let mut nics = Vec::new();
        for (i, [a, b]) in ends.into_iter().enumerate() {
            let pa = u16::try_from(i * 2)
                .ok()
                .and_then(|k| base_port.checked_add(k))
                .and_then(|p| p.checked_add(1).map(|q| (p, q)))
                .context("too many links between guests for the UDP port range")?;
            nics.push(VmNic {
                guest: a.0,
                mac: a.1,
                dev: a.2,
                local_port: pa.0,
                remote_port: pa.1,
            });
            nics.push(VmNic {
                guest: b.0,
                mac: b.1,
                dev: b.2,
                local_port: pa.1,
                remote_port: pa.0,
            });
        }
        Ok(nics)
    }

    /// Is host `h` built here (all are, unless scoped to a guest)?
    pub(crate) fn host_here(&self, h: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.host_guest(h) == g)
    }

    /// Is switch `s` built here?
    pub(crate) fn switch_here(&self, s: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.switch_guest(s) == g)
    }

    /// Is port `p` built here?
    pub(crate) fn port_here(&self, p: &PortPlan) -> bool {
        match (
            p.switch,
            p.dev.strip_prefix('v').and_then(|h| h.parse().ok()),
        ) {
            (Some(s), _) => self.switch_here(s),
            (None, Some(h)) => self.host_here(h),
            (None, None) => false,
        }
    }

    /// Narrows what `up` builds and `down` removes to guest `g`'s nodes:
    /// its hosts' namespaces and rxe devices, its switches, their ports,
    /// and the veths of links inside it. A link to another guest is a NIC
    /// that `testbed/vms.sh` gave this guest.
    pub fn scope_to(&mut self, g: &str) -> Result<()> {
        let guests = self.guests();
        if !guests.iter().any(|x| x == g) {
            bail!(
                "{}: no guest '{g}' (its guests: {})",
                self.plan.file.display(),
                guests.join(", ")
            );
        }
        // HPCC's INT is written at the link's far end from the switch
        // port's own state (a shared map): both ends must share a kernel.
        for (h, (sw, _)) in self.host_port.iter().enumerate() {
            if self.topo.switches[*sw].int == IntMode::Hpcc
                && self.host_guest(h) != self.switch_guest(*sw)
            {
                bail!(
                    "switch '{}' stamps INT for HPCC at the far end of its links, which needs host '{}' in its guest (fncc and icc stamp at the switch)",
                    self.topo.switches[*sw].name.get_ref(),
                    self.topo.hosts[h].name.get_ref()
                );
            }
        }
        for (a, b, _, _) in &self.trunks {
            let hpcc = |s: usize| self.topo.switches[s].int == IntMode::Hpcc;
            if (hpcc(*a) || hpcc(*b)) && self.switch_guest(*a) != self.switch_guest(*b) {
                bail!(
                    "switches '{}' and '{}' stamp INT for HPCC across guests, which needs them in one guest",
                    self.topo.switches[*a].name.get_ref(),
                    self.topo.switches[*b].name.get_ref()
                );
            }
        }
        self.guest = Some(g.to_string());
        let hosts: Vec<usize> = (0..self.topo.hosts.len())
            .filter(|h| self.host_here(*h))
            .collect();
        self.plan.guest = Some(g.to_string());
        self.plan.hosts = hosts
            .iter()
            .map(|h| self.topo.hosts[*h].name.get_ref().clone())
            .collect();
        self.plan.rxe = hosts.iter().map(|h| format!("rxe{h}")).collect();
        self.plan.switches = (0..self.topo.switches.len())
            .filter(|s| self.switch_here(*s))
            .map(|s| self.topo.switches[s].name.get_ref().clone())
            .collect();
        let ports: Vec<PortPlan> = self
            .ports
            .iter()
            .filter(|p| self.port_here(p))
            .cloned()
            .collect();
        self.plan.ports = ports
            .iter()
            .map(|p| (p.dev.clone(), p.netns.clone()))
            .collect();
        self.ports = ports;
        self.plan.veths = self
            .host_port
            .iter()
            .enumerate()
            .filter(|(h, (sw, _))| self.host_here(*h) && self.switch_here(*sw))
            .map(|(_, (_, p))| p.clone())
            .chain(
                self.trunks
                    .iter()
                    .filter(|t| self.switch_here(t.0) && self.switch_here(t.1))
                    .map(|t| t.2.clone()),
            )
            .collect();
        Ok(())
    }

    /// This guest's ports on links to other guests.
    pub fn remote_links(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (h, (sw, port)) in self.host_port.iter().enumerate() {
            match (self.host_here(h), self.switch_here(*sw)) {
                (true, false) => v.push(format!("v{h}")),
                (false, true) => v.push(port.clone()),
                _ => {}
            }
        }
        for (a, b, da, db) in &self.trunks {
            match (self.switch_here(*a), self.switch_here(*b)) {
                (true, false) => v.push(da.clone()),
                (false, true) => v.push(db.clone()),
                _ => {}
            }
        }
        v
    }

    /// Host `h`'s port on its switch: its traffic's ingress.
    pub fn host_port(&self, h: usize) -> Option<&str> {
        self.host_port.get(h).map(|(_, d)| d.as_str())
    }

    /// The port device `dev`'s plan.
    pub fn port(&self, dev: &str) -> Option<&PortPlan> {
        self.ports.iter().find(|p| p.dev == dev)
    }

    /// Every switch-to-switch port: (device, its switch, the switch it
    /// sends to), both directions of each link.
    pub fn trunk_ports(&self) -> Vec<(String, usize, usize)> {
        self.trunks
            .iter()
            .flat_map(|(a, b, da, db)| [(da.clone(), *a, *b), (db.clone(), *b, *a)])
            .collect()
    }

    /// Every port's node and device index as the simulator numbers them:
    /// hosts are nodes 0..H-1 (type 0) and switches H.. (type 1), in the
    /// file's order; a node's devices count from 1 (ns-3's 0 is the
    /// loopback), in the file's link order.
    pub fn sim_ports(&self) -> Vec<SimPort> {
        let nh = self.topo.hosts.len() as u32;
        let mut next = vec![1u32; self.topo.switches.len()];
        self.ports
            .iter()
            .filter_map(|p| match (p.switch, p.dev.strip_prefix('v')) {
                (None, Some(h)) => Some(SimPort {
                    dev: p.dev.clone(),
                    node: h.parse().ok()?,
                    node_type: 0,
                    ifindex: 1,
                }),
                (Some(s), _) => {
                    let i = next.get_mut(s)?;
                    *i += 1;
                    Some(SimPort {
                        dev: p.dev.clone(),
                        node: nh + s as u32,
                        node_type: 1,
                        ifindex: *i - 1,
                    })
                }
                _ => None,
            })
            .collect()
    }
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
            .map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1)
            .unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", file.display(), e.message())
    })
}

/// Checks a topology and plans its testbed. `src` is the text `topo` was
/// read from (its names' places are in it), before any settings an
/// experiment laid over it.
pub fn build(file: &Path, src: &str, topo: Topology) -> Result<Built> {
    if topo.defaults.ack_priority && topo.switches.iter().all(|s| !s.emulate) {
        bail!(
            "{}: defaults.ack_priority needs emulated ports (every switch here is a plain bridge)",
            file.display()
        );
    }
    if topo.hosts.is_empty() || topo.switches.is_empty() {
        bail!(
            "{}: a topology needs at least one [[host]] and one [[switch]]",
            file.display()
        );
    }
    if topo.hosts.len() > 200 {
        bail!(
            "{}: at most 200 hosts, not {}",
            file.display(),
            topo.hosts.len()
        );
    }
    if topo.switches.len() > switch::MAX_SWITCHES as usize {
        bail!(
            "{}: at most {} switches",
            file.display(),
            switch::MAX_SWITCHES
        );
    }
    let mut names: BTreeMap<String, Node> = BTreeMap::new();
    // A host's or switch's name: a valid device-name part, unique among both.
    let mut declare = |name: &Spanned<String>, field: &str, node: Node| -> Result<()> {
        let n = name.get_ref();
        let msg = if !valid_name(n, 15) {
            "use 1-15 letters, digits, '-' or '_'".to_string()
        } else if names.insert(n.clone(), node).is_some() {
            format!("'{n}' is declared twice")
        } else {
            return Ok(());
        };
        Err(at(file, src, name.span(), field, msg))
    };
    for (i, h) in topo.hosts.iter().enumerate() {
        declare(&h.name, "host.name", Node::Host(i))?;
    }
    for (i, s) in topo.switches.iter().enumerate() {
        declare(&s.name, "switch.name", Node::Switch(i))?;
        if s.pfc && s.flow_control.is_some_and(|m| m != FlowControl::Pfc) {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.flow_control",
                "contradicts pfc = true (give one of them)",
            ));
        }
        if matches!(s.fc(), FlowControl::GfcBuffer | FlowControl::GfcTime) && s.gfc_bm_bytes == 0 {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.gfc_bm_bytes",
                "GFC needs B_m, the bytes per ingress port",
            ));
        }
        if s.fc() == FlowControl::Pfc && (s.xon_bytes > s.xoff_bytes || s.xoff_bytes == 0) {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.xoff_bytes",
                "PFC needs 0 < XON <= XOFF",
            ));
        }
        if s.mark == MarkMode::Red && s.red.is_none() {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.red",
                "mark = \"red\" needs a [switch.red] table",
            ));
        }
        if s.mark == MarkMode::Tcd && s.tcd.is_none() {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.tcd",
                "mark = \"tcd\" needs a [switch.tcd] table",
            ));
        }
        if let Err(e) = s.icc.validate() {
            return Err(at(file, src, s.name.span(), "switch.icc", e));
        }
        if !s.emulate {
            if let Some(field) = s.emulated_setting() {
                return Err(at(
                    file,
                    src,
                    s.name.span(),
                    &format!("switch.{field}"),
                    "needs emulated ports: this switch is a plain bridge (emulate = false)",
                ));
            }
        }
    }
    for (g, field) in topo
        .hosts
        .iter()
        .filter_map(|h| h.guest.as_ref().map(|g| (g, "host.guest")))
        .chain(
            topo.switches
                .iter()
                .filter_map(|s| s.guest.as_ref().map(|g| (g, "switch.guest"))),
        )
    {
        if !valid_name(g.get_ref(), 32) {
            return Err(at(
                file,
                src,
                g.span(),
                field,
                "use 1-32 letters, digits, '-' or '_'",
            ));
        }
    }
    let node = |s: &Spanned<String>, field: &str| -> Result<Node> {
        names.get(s.get_ref()).copied().ok_or_else(|| {
            at(
                file,
                src,
                s.span(),
                field,
                format!("no host or switch named '{}'", s.get_ref()),
            )
        })
    };
    let d = &topo.defaults;
    let mut host_port: Vec<Option<(usize, String)>> = vec![None; topo.hosts.len()];
    let mut ports = Vec::new();
    let mut trunks = Vec::new();
    let mut adj: Vec<Vec<(usize, String)>> = vec![Vec::new(); topo.switches.len()];
    for l in &topo.links {
        let (na, nb) = (node(&l.a, "link.a")?, node(&l.b, "link.b")?);
        let plain = [na, nb]
            .iter()
            .any(|n| matches!(n, Node::Switch(s) if !topo.switches[*s].emulate));
        if plain {
            let trunk = matches!((na, nb), (Node::Switch(_), Node::Switch(_)));
            let set = l.rate_mbps.is_some()
                || l.delay_us.is_some()
                || l.limit_pkts.is_some()
                || l.xoff_bytes.is_some()
                || l.xon_bytes.is_some();
            if trunk || set {
                return Err(at(
                    file,
                    src,
                    l.a.span(),
                    "link",
                    if trunk {
                        "a plain bridge (emulate = false) links hosts only"
                    } else {
                        "a link to a plain bridge (emulate = false) takes no rate, delay, limit or thresholds"
                    },
                ));
            }
        }
        let rate = l.rate_mbps.unwrap_or(d.rate_mbps);
        if rate == 0 {
            return Err(at(
                file,
                src,
                l.a.span(),
                "link.rate_mbps",
                "a link needs a rate above 0",
            ));
        }
        // GFC's thresholds depend on the link's rate: checked per port.
        let gfc = |sw: Option<usize>| -> Result<Option<GfcThresholds>> {
            let Some(s) = sw.map(|i| &topo.switches[i]) else {
                return Ok(None);
            };
            if s.fc() != FlowControl::GfcBuffer {
                return Ok(None);
            }
            GfcThresholds::new(
                s.gfc_bm_bytes,
                s.gfc_b1_bytes,
                rate.saturating_mul(1_000_000),
                s.tau_us,
                s.gfc_step_bytes,
            )
            .map(Some)
            .map_err(|e| at(file, src, s.name.span(), "switch.gfc_b1_bytes", e))
        };
        let gfc_time = |sw: Option<usize>| -> Result<Option<GfcTime>> {
            let Some(s) = sw.map(|i| &topo.switches[i]) else {
                return Ok(None);
            };
            if s.fc() != FlowControl::GfcTime {
                return Ok(None);
            }
            GfcTime::new(
                s.gfc_bm_bytes,
                s.gfc_b0_bytes,
                s.gfc_period_us,
                rate.saturating_mul(1_000_000),
                s.tau_us,
            )
            .map(Some)
            .map_err(|e| at(file, src, s.name.span(), "switch.gfc_b0_bytes", e))
        };
        let mk = |dev: String, netns: Option<String>, sw: Option<usize>, peer: Option<usize>| {
            let s = sw.map(|i| &topo.switches[i]);
            Ok::<_, anyhow::Error>(PortPlan {
                dev,
                netns,
                switch: sw,
                rate_mbps: rate,
                delay_us: l.delay_us.unwrap_or(d.delay_us),
                limit_pkts: l.limit_pkts.unwrap_or(d.limit_pkts),
                xoff_bytes: l.xoff_bytes.or(s.map(|s| s.xoff_bytes)).unwrap_or(0),
                xon_bytes: l.xon_bytes.or(s.map(|s| s.xon_bytes)).unwrap_or(0),
                peer_switch: peer,
                gfc: gfc(sw)?,
                gfc_time: gfc_time(sw)?,
                peer_gfc_time: gfc_time(peer.or(sw))?,
            })
        };
        match (na, nb) {
            (Node::Host(h), Node::Switch(s)) | (Node::Switch(s), Node::Host(h)) => {
                if host_port[h].is_some() {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link",
                        format!("host '{}' has a second link", topo.hosts[h].name.get_ref()),
                    ));
                }
                let p = mk(format!("p{h}"), None, Some(s), None)?;
                if p.xon_bytes > p.xoff_bytes {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link.xon_bytes",
                        "XON must not exceed XOFF",
                    ));
                }
                host_port[h] = Some((s, p.dev.clone()));
                if plain {
                    continue;
                }
                ports.push(mk(
                    format!("v{h}"),
                    Some(topo.hosts[h].name.get_ref().clone()),
                    None,
                    Some(s),
                )?);
                ports.push(p);
            }
            (Node::Switch(a), Node::Switch(b)) if a != b => {
                let (da, db) = (format!("x{a}_{b}"), format!("x{b}_{a}"));
                if adj[a].iter().any(|(n, _)| *n == b) {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link",
                        "these switches are linked twice",
                    ));
                }
                adj[a].push((b, da.clone()));
                adj[b].push((a, db.clone()));
                ports.push(mk(da.clone(), None, Some(a), Some(b))?);
                ports.push(mk(db.clone(), None, Some(b), Some(a))?);
                trunks.push((a, b, da, db));
            }
            _ => {
                return Err(at(
                    file,
                    src,
                    l.a.span(),
                    "link",
                    "a link joins a host to a switch, or two switches",
                ))
            }
        }
    }
    let host_port: Vec<(usize, String)> = host_port
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            p.ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: host '{}' has no link",
                    file.display(),
                    topo.hosts[i].name.get_ref()
                )
            })
        })
        .collect::<Result<_>>()?;

    // Static forwarding: per switch, towards each host's switch by BFS
    // (fewest hops), then the file's routes on top.
    let mut next: Vec<Vec<Option<String>>> =
        vec![vec![None; topo.switches.len()]; topo.switches.len()];
    for (src_sw, row) in next.iter_mut().enumerate() {
        let mut first: Vec<Option<String>> = vec![None; topo.switches.len()];
        let mut seen = vec![false; topo.switches.len()];
        let mut q = VecDeque::from([src_sw]);
        seen[src_sw] = true;
        while let Some(u) = q.pop_front() {
            for (v, dev) in &adj[u] {
                if !seen[*v] {
                    seen[*v] = true;
                    first[*v] = if u == src_sw {
                        Some(dev.clone())
                    } else {
                        first[u].clone()
                    };
                    q.push_back(*v);
                }
            }
        }
        *row = first;
    }
    let mut fdb = Vec::new();
    for (h, (hs, hp)) in host_port.iter().enumerate() {
        for (s, row) in next.iter().enumerate() {
            let dev = if s == *hs {
                hp.clone()
            } else {
                row[*hs].clone().ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: host '{}' cannot be reached from switch '{}'",
                        file.display(),
                        topo.hosts[h].name.get_ref(),
                        topo.switches[s].name.get_ref()
                    )
                })?
            };
            fdb.push((s, h, dev));
        }
    }
    for r in &topo.routes {
        let Node::Switch(s) = node(&r.at, "route.at")? else {
            return Err(at(file, src, r.at.span(), "route.at", "must name a switch"));
        };
        let Node::Host(h) = node(&r.to, "route.to")? else {
            return Err(at(file, src, r.to.span(), "route.to", "must name a host"));
        };
        let Node::Switch(v) = node(&r.via, "route.via")? else {
            return Err(at(
                file,
                src,
                r.via.span(),
                "route.via",
                "must name a switch",
            ));
        };
        let dev = adj[s]
            .iter()
            .find(|(n, _)| *n == v)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| {
                at(
                    file,
                    src,
                    r.via.span(),
                    "route.via",
                    "is not linked to route.at",
                )
            })?;
        for e in fdb.iter_mut().filter(|e| e.0 == s && e.1 == h) {
            e.2 = dev.clone();
        }
    }
    ports.sort_by_key(|p| p.netns.is_none());
    for r in &topo.injects {
        if !ports.iter().any(|p| p.dev == r.port) {
            let mut devs: Vec<&str> = ports.iter().map(|p| p.dev.as_str()).collect();
            devs.sort();
            bail!(
                "{}: [[inject]] port '{}' is not a port of this topology (ports: {})",
                file.display(),
                r.port,
                devs.join(" ")
            );
        }
        r.validate()
            .with_context(|| format!("{}: [[inject]] at {}", file.display(), r.port))?;
    }
    let plan = Plan {
        file: file.to_path_buf(),
        hosts: topo
            .hosts
            .iter()
            .map(|h| h.name.get_ref().clone())
            .collect(),
        switches: topo
            .switches
            .iter()
            .map(|s| s.name.get_ref().clone())
            .collect(),
        ports: ports
            .iter()
            .map(|p| (p.dev.clone(), p.netns.clone()))
            .collect(),
        veths: host_port
            .iter()
            .map(|(_, p)| p.clone())
            .chain(trunks.iter().map(|t| t.2.clone()))
            .collect(),
        rxe: (0..topo.hosts.len()).map(|h| format!("rxe{h}")).collect(),
        guest: None,
    };
    Ok(Built {
        topo,
        plan,
        ports,
        fdb,
        trunks,
        host_port,
        guest: None,
        nic_devs: BTreeMap::new(),
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn p(src: &str) -> Result<Built> {
        parse(Path::new("t.toml"), src)
    }

    /// The error a file that must be refused gives.
    fn err(src: &str) -> String {
        p(src).expect_err("the file was accepted").to_string()
    }

    const SMALL: &str = r#"
[[switch]]
name = "s0"
pfc = true
xoff_bytes = 100
xon_bytes = 50
[[host]]
name = "h0"
[[host]]
name = "h1"
[[link]]
a = "h0"
b = "s0"
[[link]]
a = "h1"
b = "s0"
rate_mbps = 50
"#;

    const PLAIN: &str = r#"
[[switch]]
name = "br0"
emulate = false
[[host]]
name = "h0"
[[host]]
name = "h1"
[[link]]
a = "h0"
b = "br0"
[[link]]
a = "h1"
b = "br0"
"#;

    #[test]
    fn plain_bridge() {
        let b = p(PLAIN).unwrap();
        assert!(b.ports.is_empty(), "a plain bridge has no emulated port");
        assert!(b.plan.ports.is_empty());
        assert_eq!(b.plan.veths, ["p0", "p1"]);
        assert_eq!(b.host_port(1), Some("p1"));
        // No rate: the guest's CPU sets it.
        assert_eq!(b.host_rate_mbps(1), None);
        assert_eq!(path_rate_mbps(&b.topo, 1, 0), Some(u64::MAX));
        let e = err(&PLAIN.replace(
            "emulate = false",
            "emulate = false\npfc = true\nxoff_bytes = 9",
        ));
        assert!(
            e.contains("switch.flow_control: needs emulated ports"),
            "{e}"
        );
        let e = err(&PLAIN.replace("emulate = false", "emulate = false\nmark = \"ce\""));
        assert!(e.contains("switch.mark"), "{e}");
        let e = err(&format!("[defaults]\nack_priority = true\n{PLAIN}"));
        assert!(e.contains("ack_priority needs emulated ports"), "{e}");
        let e = p(&format!("{PLAIN}rate_mbps = 10\n"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("takes no rate"), "{e}");
        let trunk = PLAIN.replace(
            "[[host]]\nname = \"h0\"",
            "[[switch]]\nname = \"s1\"\n[[host]]\nname = \"h0\"",
        ) + "[[link]]\na = \"s1\"\nb = \"br0\"\n";
        let e = err(&trunk);
        assert!(e.contains("links hosts only"), "{e}");
    }

    #[test]
    fn small_plan() {
        let b = p(SMALL).unwrap();
        assert!(!b.topo.defaults.ack_priority, "one FIFO unless asked");
        let prio = p(&format!("[defaults]\nack_priority = true\n{SMALL}")).unwrap();
        assert!(prio.topo.defaults.ack_priority);
        assert_eq!(b.plan.hosts, ["h0", "h1"]);
        let devs: Vec<&str> = b.ports.iter().map(|p| p.dev.as_str()).collect();
        assert_eq!(devs, ["v0", "v1", "p0", "p1"]);
        assert_eq!(
            b.ports.iter().find(|p| p.dev == "p1").unwrap().rate_mbps,
            50
        );
        assert_eq!(
            b.ports.iter().find(|p| p.dev == "p0").unwrap().xoff_bytes,
            100
        );
        assert_eq!(
            b.fdb,
            vec![(0, 0, "p0".to_string()), (0, 1, "p1".to_string())]
        );
        let sp = b.sim_ports();
        let find = |d: &str| sp.iter().find(|p| p.dev == d).cloned().unwrap();
        assert_eq!(
            (find("v1").node, find("v1").node_type, find("v1").ifindex),
            (1, 0, 1)
        );
        assert_eq!(
            (find("p0").node, find("p0").node_type, find("p0").ifindex),
            (2, 1, 1)
        );
        assert_eq!((find("p1").node, find("p1").ifindex), (2, 2));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = err(&SMALL.replace("b = \"s0\"\nrate_mbps", "b = \"s9\"\nrate_mbps"));
        assert!(e.starts_with("t.toml:16: link.b:"), "{e}");
        assert!(e.contains("'s9'"), "{e}");
        let e = err(&SMALL.replace("xon_bytes = 50", "xon_bytes = 500"));
        assert!(e.starts_with("t.toml:3: switch.xoff_bytes"), "{e}");
        let e = err(&SMALL.replace("rate_mbps = 50", "rate_mbps = \"fast\""));
        assert!(e.starts_with("t.toml:17:"), "{e}");
        let e = err(&SMALL.replace("rate_mbps = 50", "speed = 50"));
        assert!(e.contains("unknown field `speed`"), "{e}");
        // Hosts and switches share one namespace of names.
        let e = err(&SMALL.replace("name = \"h1\"", "name = \"s0\""));
        assert!(
            e.starts_with("t.toml:3: switch.name: 's0' is declared twice"),
            "{e}"
        );
        let e = err(&SMALL.replace("name = \"h1\"", "name = \"h.1\""));
        assert!(e.starts_with("t.toml:10: host.name: use 1-15"), "{e}");
    }

    #[test]
    fn inject_rules_name_a_port_of_the_topology() {
        let rule = "\n[[inject]]\nport = \"p1\"\naction = \"drop\"\nnth = [3, 7]\n";
        let b = p(&format!("{SMALL}{rule}")).unwrap();
        assert_eq!(b.topo.injects.len(), 1);
        assert_eq!(b.topo.injects[0].nth, [3, 7]);
        let e = p(&format!("{SMALL}{}", rule.replace("p1", "p7")))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("'p7' is not a port") && e.contains("p0 p1 v0 v1"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            p(&format!("{SMALL}{}", rule.replace("[3, 7]", "[0]")))
                .err()
                .unwrap()
        );
        assert!(e.contains("1..=64"), "{e}");
        let e = p(&format!("{SMALL}{}", rule.replace("action", "acton")))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("acton"), "{e}");
    }

    #[test]
    fn shipped_topologies_parse() {
        let dir = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testbed/topologies"
        ));
        for name in ["dumbbell", "chain", "triangle"] {
            let b =
                load(&dir.join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert!(
                b.ports.iter().all(|p| p.dev.len() <= 9),
                "{name}: a device name is too long"
            );
        }
    }

    /// Three guests: g (sw0 and h0), sw1 (sw1 and h2), and h1 on its own.
    pub(crate) const TWO_GUESTS: &str = r#"
            [[switch]]
            name = "sw0"
            guest = "g"
            [[switch]]
            name = "sw1"
            [[host]]
            name = "h0"
            guest = "g"
            [[host]]
            name = "h1"
            [[host]]
            name = "h2"
            guest = "sw1"
            [[link]]
            a = "h0"
            b = "sw0"
            [[link]]
            a = "h1"
            b = "sw0"
            [[link]]
            a = "h2"
            b = "sw1"
            [[link]]
            a = "sw0"
            b = "sw1"
        "#;

    #[test]
    fn guests_share_by_name_and_link_by_udp() {
        let src = TWO_GUESTS;
        let b = p(src).unwrap();
        assert_eq!(b.guests(), ["g", "h1", "sw1"]);
        let nics = b.vm_nics(47000).unwrap();
        let show: Vec<(&str, &str, &str, u16, u16)> = nics
            .iter()
            .map(|n| {
                (
                    n.guest.as_str(),
                    n.dev.as_str(),
                    n.mac.as_str(),
                    n.local_port,
                    n.remote_port,
                )
            })
            .collect();
        // h0 shares g with sw0, h2 shares sw1's guest: veths, no NICs.
        assert_eq!(
            show,
            [
                ("h1", "v1", "02:77:00:00:00:02", 47000, 47001),
                ("g", "p1", "02:78:00:00:00:02", 47001, 47000),
                ("g", "x0_1", "02:79:00:00:00:01", 47002, 47003),
                ("sw1", "x1_0", "02:79:00:00:01:00", 47003, 47002),
            ]
        );
        let mut g = p(src).unwrap();
        g.scope_to("g").unwrap();
        assert_eq!(g.plan.hosts, ["h0"]);
        assert_eq!(g.plan.switches, ["sw0"]);
        assert_eq!(g.plan.rxe, ["rxe0"]);
        assert_eq!(g.plan.veths, ["p0"]);
        let devs: Vec<&str> = g.ports.iter().map(|p| p.dev.as_str()).collect();
        assert_eq!(devs, ["v0", "p0", "p1", "x0_1"]);
        assert_eq!(g.remote_links(), ["p1", "x0_1"]);
        let mut h = p(src).unwrap();
        h.scope_to("h1").unwrap();
        assert_eq!((h.plan.hosts.len(), h.plan.switches.len()), (1, 0));
        assert!(h.plan.veths.is_empty());
        assert_eq!(h.ports.len(), 1);
        assert_eq!(h.remote_links(), ["v1"]);
        let e = p(src).unwrap().scope_to("nope").unwrap_err().to_string();
        assert!(
            e.contains("no guest 'nope'") && e.contains("g, h1, sw1"),
            "{e}"
        );
        // HPCC's INT is written at the far end: not across guests.
        let hpcc = src.replace(
            "guest = \"g\"\n            [[switch]]",
            "guest = \"g\"\n            int = \"hpcc\"\n            [[switch]]",
        );
        assert!(hpcc.contains("hpcc"));
        let e = p(&hpcc).unwrap().scope_to("g").unwrap_err().to_string();
        assert!(e.contains("HPCC"), "{e}");
        let bad = src.replacen("guest = \"g\"", "guest = \"a b\"", 1);
        let e = err(&bad);
        assert!(e.contains("t.toml:4: switch.guest"), "{e}");
    }

    #[test]
    fn triangle_routes_form_a_cycle() {
        let dir = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testbed/topologies"
        ));
        let b = load(&dir.join("triangle.toml")).unwrap();
        // Each switch sends traffic for the host two hops clockwise through
        // its clockwise neighbour: x0_1, x1_2, x2_0 all carry traffic.
        let trunk_out: Vec<&str> = b
            .fdb
            .iter()
            .filter(|(_, _, d)| d.starts_with('x'))
            .map(|(_, _, d)| d.as_str())
            .collect();
        for d in ["x0_1", "x1_2", "x2_0"] {
            assert!(
                trunk_out.contains(&d),
                "{d} carries no route: {trunk_out:?}"
            );
        }
    }
}
