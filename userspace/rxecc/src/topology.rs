//! Topologies from TOML files (`testbed/topologies/*.toml`): parsing,
//! validation, and `rxecc testbed up|down`.
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

use crate::netlink::{self, Net};
use crate::switch::{
    self, FlowControl, GfcThresholds, GfcTime, IccParams, IngressConfig, IntMode, MarkMode,
    PortConfig,
};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Where `up` records what it built, for `down`.
pub const STATE_FILE: &str = "/run/rxecc/topology.json";
const NET: &str = "10.77.0";
const MTU: &str = "9000";

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
#[derive(Debug, Deserialize)]
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
    #[serde(default, rename = "inject")]
    pub injects: Vec<switch::InjectRule>,
}

#[derive(Debug, Deserialize)]
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
}

impl Default for LinkDefaults {
    fn default() -> Self {
        LinkDefaults {
            rate_mbps: default_rate(),
            delay_us: 0,
            limit_pkts: default_limit(),
            burst_us: default_burst(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub name: Spanned<String>,
    /// false: a plain Linux bridge whose ports, and the host NICs linked
    /// to it, get no port program (a test attaches its own with `rxecc
    /// port attach`); none of the settings below may be given then.
    #[serde(default = "emulated")]
    pub emulate: bool,
    /// Shared buffer, bytes; 0 is unlimited.
    #[serde(default)]
    pub buffer_bytes: u64,
    /// PFC on (the same as `flow_control = "pfc"`).
    #[serde(default)]
    pub pfc: bool,
    /// Link-level flow control on this switch's ports and on the host NICs
    /// linked to it: "none", "pfc" or "gfc-buffer". Absent: `pfc` decides.
    #[serde(default)]
    pub flow_control: Option<FlowControl>,
    /// Buffer-based GFC: B_m per ingress port, bytes.
    #[serde(default)]
    pub gfc_bm_bytes: u64,
    /// Buffer-based GFC: B_1; absent, the highest GFC allows:
    /// B_m - 2 C tau.
    #[serde(default)]
    pub gfc_b1_bytes: Option<u64>,
    /// The feedback latency GFC's thresholds are checked against, us.
    #[serde(default = "default_tau")]
    pub tau_us: u64,
    /// GFC: stages are added until two are this close (the largest frame).
    #[serde(default = "default_gfc_step")]
    pub gfc_step_bytes: u64,
    /// Time-based GFC: B_0, below which the sender runs at C; absent, the
    /// highest Theorem 5.1 allows.
    #[serde(default)]
    pub gfc_b0_bytes: Option<u64>,
    /// Time-based GFC: the advertisement period; absent, the time to send
    /// 65535 bytes at the link's rate (InfiniBand's default).
    #[serde(default)]
    pub gfc_period_us: Option<u64>,
    /// Per ingress port, bytes (a link may override them).
    #[serde(default)]
    pub xoff_bytes: u64,
    #[serde(default)]
    pub xon_bytes: u64,
    /// Pause time sent with XOFF, 512-bit quanta; absent: three refresh
    /// intervals at the link's rate (switch::auto_quanta).
    #[serde(default)]
    pub pause_quanta: Option<u32>,
    #[serde(default = "default_refresh")]
    pub refresh_us: u64,
    #[serde(default = "default_class")]
    pub pfc_class: u32,
    /// Marks on every egress port: off, ce, ue, red or tcd.
    #[serde(default = "mark_off")]
    pub mark: MarkMode,
    #[serde(default)]
    pub red: Option<RedCfg>,
    #[serde(default)]
    pub tcd: Option<TcdCfg>,
    /// INT on every egress port: off, hpcc (data packets, stamped at the
    /// link's far end), fncc or icc (ACKs, stamped at the port itself).
    #[serde(default = "int_off")]
    pub int: IntMode,
    /// ICC's switch parameters, for `int = "icc"`.
    #[serde(default)]
    pub icc: IccParams,
    /// The guest this switch runs in under `testbed/vms.sh` (nodes that
    /// name the same guest share it); absent: a guest of its own.
    #[serde(default)]
    pub guest: Option<Spanned<String>>,
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

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct RedCfg {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax_permille: u32,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct TcdCfg {
    pub thresh_bytes: u64,
    pub max_ton_us: u64,
    /// Dequeue lateness judged an emulation stall (OFF); 0 or absent: 2 ms.
    #[serde(default)]
    pub stall_us: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: Spanned<String>,
    /// As [`Switch::guest`].
    #[serde(default)]
    pub guest: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
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

/// At switch `at`, traffic to host `to` leaves towards switch `via`.
#[derive(Debug, Deserialize)]
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
    fn fc_peer(&self) -> Option<usize> {
        self.peer_switch.or(self.switch)
    }

    /// This switch port's ingress accounting and flow control, on switch
    /// `s` (index `si`).
    fn ingress_config(&self, s: &Switch, si: usize) -> IngressConfig {
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

/// Switches every switch of the testbed that is up to flow control
/// `mode`, under traffic. The file it was built from gives the thresholds
/// (checked as at `up`). Every egress reads the new mode before any
/// ingress port sends by it; an ingress port's first frame in the new mode
/// releases what the old one held (switch-ebpf/port/buffer.h's fc_decide()), and a pause
/// with no packet to prompt that frame runs out of quanta first.
pub fn set_flow_control(mode: FlowControl) -> Result<()> {
    let plan = current()?;
    let src = std::fs::read_to_string(&plan.file)
        .with_context(|| format!("cannot read {}", plan.file.display()))?;
    let mut t: toml::Table = toml::from_str(&src)
        .with_context(|| format!("{} is not valid TOML", plan.file.display()))?;
    let mode_str = mode.name();
    if let Some(toml::Value::Array(sws)) = t.get_mut("switch") {
        for sw in sws.iter_mut() {
            if let toml::Value::Table(sw) = sw {
                sw.insert("pfc".into(), toml::Value::Boolean(mode == FlowControl::Pfc));
                sw.insert("flow_control".into(), toml::Value::String(mode_str.into()));
            }
        }
    }
    let mut b = parse(&plan.file, &toml::to_string(&t)?)
        .with_context(|| format!("{} cannot run {mode_str}", plan.file.display()))?;
    if let Some(g) = &plan.guest {
        b.scope_to(g)?;
    }
    // The obeying ends first. Meanwhile a GFC receiver still takes the old
    // PFC pauses as pauses (a time past the deepest stage is one); then
    // each ingress port's first frame in the new mode releases the pause
    // it held (switch-ebpf/port/buffer.h's fc_decide()). Senders first would let a PFC
    // receiver run at full rate between the resume and the first stage
    // (in a test that overflowed a switch's buffer).
    for p in &b.ports {
        if let Some(peer) = p.fc_peer() {
            switch::set_fc_mode(
                &p.dev,
                b.topo.switches[peer].fc(),
                &p.peer_gfc_time.unwrap_or_default(),
            )?;
        }
    }
    for p in &b.ports {
        if let Some(si) = p.switch {
            switch::set_ingress(&p.dev, &p.ingress_config(&b.topo.switches[si], si))?;
        }
    }
    eprintln!(
        "rxecc: flow control is now {mode_str} on {} switches",
        b.topo.switches.len()
    );
    Ok(())
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
pub struct Built {
    pub topo: Topology,
    pub plan: Plan,
    ports: Vec<PortPlan>,
    /// (switch, host index, port device) static FDB entries.
    fdb: Vec<(usize, usize, String)>,
    /// Switch-to-switch links: (a, b, dev on a, dev on b).
    trunks: Vec<(usize, usize, String, String)>,
    /// Host i's port on its switch.
    host_port: Vec<(usize, String)>,
    /// Built in part: this guest's (see [`Built::scope_to`]).
    guest: Option<String>,
    /// The device playing a port on a link to another guest, where named.
    nic_devs: BTreeMap<String, String>,
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
                    (gh.to_string(), mac(h), format!("v{h}")),
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
    fn host_here(&self, h: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.host_guest(h) == g)
    }

    /// Is switch `s` built here?
    fn switch_here(&self, s: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.switch_guest(s) == g)
    }

    /// Is port `p` built here?
    fn port_here(&self, p: &PortPlan) -> bool {
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
        return Ok(q);
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
    let topo: Topology = toml::from_str(src).map_err(|e| {
        let line = e
            .span()
            .map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1)
            .unwrap_or(0);
        anyhow::anyhow!("{}:{line}: {}", file.display(), e.message())
    })?;
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
    for (i, h) in topo.hosts.iter().enumerate() {
        if !valid_name(h.name.get_ref(), 15) {
            return Err(at(
                file,
                src,
                h.name.span(),
                "host.name",
                "use 1-15 letters, digits, '-' or '_'",
            ));
        }
        if names
            .insert(h.name.get_ref().clone(), Node::Host(i))
            .is_some()
        {
            return Err(at(
                file,
                src,
                h.name.span(),
                "host.name",
                format!("'{}' is declared twice", h.name.get_ref()),
            ));
        }
    }
    for (i, s) in topo.switches.iter().enumerate() {
        if !valid_name(s.name.get_ref(), 15) {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.name",
                "use 1-15 letters, digits, '-' or '_'",
            ));
        }
        if names
            .insert(s.name.get_ref().clone(), Node::Switch(i))
            .is_some()
        {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.name",
                format!("'{}' is declared twice", s.name.get_ref()),
            ));
        }
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

fn mac(h: usize) -> String {
    format!("02:77:00:00:{:02x}:{:02x}", (h + 1) >> 8, (h + 1) & 0xff)
}

/// Does each step of a bring-up, or on a dry run prints what it would do
/// (as the `ip`/`bridge`/`sysctl` command that does the same).
struct Runner {
    dry: bool,
    /// rtnetlink in the root namespace (none on a dry run).
    net: Option<Net>,
    /// A line per host and a summary on stderr.
    log: bool,
}

impl Runner {
    fn new(dry: bool, log: bool) -> Result<Self> {
        Ok(Runner {
            dry,
            net: if dry { None } else { Some(Net::open()?) },
            log,
        })
    }

    /// `f` on the root namespace's connection.
    fn op(&self, what: &str, f: impl FnOnce(&Net) -> Result<()>) -> Result<()> {
        match &self.net {
            Some(n) => f(n),
            None => {
                println!("{what}");
                Ok(())
            }
        }
    }

    /// `f` on a connection opened in namespace `ns`.
    fn op_in(&self, ns: &str, what: &str, f: impl FnOnce(&Net) -> Result<()>) -> Result<()> {
        if self.dry {
            println!("{what}");
            return Ok(());
        }
        in_netns(ns, || f(&Net::open()?))
    }

    /// Writes `value` to a sysctl or sysfs file of namespace `ns` (None:
    /// the root's).
    fn write(&self, ns: Option<&str>, path: &str, value: &str) -> Result<()> {
        if self.dry {
            match ns {
                Some(ns) => println!("ip netns exec {ns} sh -c 'echo {value} > {path}'"),
                None => println!("echo {value} > {path}"),
            }
            return Ok(());
        }
        let write =
            || std::fs::write(path, value).with_context(|| format!("writing {value} to {path}"));
        match ns {
            None => write(),
            Some(ns) if path.starts_with("/sys/") => in_netns_sysfs(ns, write),
            Some(ns) => in_netns(ns, write),
        }
    }

    /// Runs a program (in namespace `ns`, if given): rdma, for what
    /// rtnetlink does not do.
    fn run(&self, ns: Option<&str>, argv: &[&str]) -> Result<()> {
        if self.dry {
            match ns {
                Some(ns) => println!("ip netns exec {ns} {}", argv.join(" ")),
                None => println!("{}", argv.join(" ")),
            }
            return Ok(());
        }
        let go = || -> Result<()> {
            // A child inherits the forking thread's network namespace.
            let out = std::process::Command::new(argv[0])
                .args(&argv[1..])
                .output()
                .with_context(|| format!("running {}", argv[0]))?;
            if !out.status.success() {
                bail!(
                    "`{}` failed: {}",
                    argv.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(())
        };
        match ns {
            Some(ns) => in_netns(ns, go),
            None => go(),
        }
    }
}

/// Runs `f` on a thread of its own inside network namespace `ns`, with a
/// sysfs mounted for that namespace in a private mount namespace (as `ip
/// netns exec` does): /sys/class/net shows the devices of the namespace
/// that mounted it.
fn in_netns_sysfs<T: Send>(ns: &str, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|sc| {
        sc.spawn(|| -> Result<T> {
            switch::enter_netns(ns)?;
            let sysfs = c"sysfs";
            let (root, sys) = (c"/", c"/sys");
            // SAFETY: unshare(2) on this thread only (it ends with the scope);
            // the strings are NUL-terminated literals and null data is allowed.
            unsafe {
                if libc::unshare(libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error())
                        .context("unsharing the mount namespace");
                }
                // Our mounts must not reach the rest of the system.
                if libc::mount(
                    std::ptr::null(),
                    root.as_ptr(),
                    std::ptr::null(),
                    libc::MS_SLAVE | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(std::io::Error::last_os_error()).context("making / a slave mount");
                }
                libc::umount2(sys.as_ptr(), libc::MNT_DETACH);
                if libc::mount(
                    sysfs.as_ptr(),
                    sys.as_ptr(),
                    sysfs.as_ptr(),
                    0,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(std::io::Error::last_os_error())
                        .with_context(|| format!("mounting sysfs for namespace {ns}"));
                }
            }
            f()
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the thread in namespace {ns} panicked"))?
    })
}

/// Runs `f` inside network namespace `ns`, then comes back.
fn in_netns<T>(ns: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    use std::os::fd::AsRawFd;
    let home =
        std::fs::File::open("/proc/self/ns/net").context("opening this network namespace")?;
    switch::enter_netns(ns)?;
    let r = f();
    // SAFETY: `home` is an open namespace descriptor for the whole call.
    if unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error())
            .context("returning to the root network namespace");
    }
    r
}

/// The RPS CPU mask that spreads flows over this machine's CPUs (the first
/// 32 of them: one hex word is all a mask without commas can say).
fn rps_mask() -> String {
    let n = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 32);
    format!("{:x}", (1u64 << n) - 1)
}

/// `rxecc testbed guests`: the guests of a testbed of several and their
/// NICs, a line each, for testbed/vms.sh.
pub fn guests_text(name: &str, base_port: u16) -> Result<String> {
    let file = resolve(name)?;
    let b = load(&file)?;
    let path = std::fs::canonicalize(&file).unwrap_or(file);
    let mut out = format!("file {}\nhosts {}\n", path.display(), b.topo.hosts.len());
    for g in b.guests() {
        let mut line = format!("guest {g}");
        for h in (0..b.topo.hosts.len()).filter(|h| b.host_guest(*h) == g) {
            line.push(' ');
            line.push_str(b.topo.hosts[h].name.get_ref());
        }
        for s in (0..b.topo.switches.len()).filter(|s| b.switch_guest(*s) == g) {
            line.push(' ');
            line.push_str(b.topo.switches[s].name.get_ref());
        }
        out.push_str(&line);
        out.push('\n');
    }
    for n in b.vm_nics(base_port)? {
        out.push_str(&format!(
            "nic {} {} {} {} {}\n",
            n.guest, n.dev, n.mac, n.local_port, n.remote_port
        ));
    }
    Ok(out)
}

/// Brings a topology up: namespaces, bridges, veths, rxe devices, ports;
/// with its line per host on stderr or not (`rxecc run` prints a progress
/// line per run instead); with `guest`, only that guest's part of a
/// testbed of several (`testbed/vms.sh`).
///
/// `nics` names the device that plays each port on a link to another
/// guest or machine (`PORT=DEV`, e.g. `p1=enp3s0`): it is renamed to the
/// port, and a host's takes the host's MAC.
pub fn up_logged(
    name: &str,
    dry_run: bool,
    log: bool,
    guest: Option<&str>,
    nics: &[String],
) -> Result<()> {
    let file = resolve(name)?;
    let mut b = load(&file)?;
    if let Some(g) = guest {
        b.scope_to(g)?;
    }
    let links = b.remote_links();
    for n in nics {
        let Some((port, dev)) = n.split_once('=') else {
            bail!("--nic {n}: give PORT=DEV, e.g. p1=enp3s0");
        };
        if guest.is_none() {
            bail!("--nic {n}: only with --guest (a link to another machine)");
        }
        if !links.iter().any(|p| p == port) {
            bail!(
                "--nic {n}: {port} is not a port of guest '{}' on a link to another guest (those are: {})",
                guest.unwrap_or_default(),
                links.join(", ")
            );
        }
        b.nic_devs.insert(port.to_string(), dev.to_string());
    }
    if !dry_run && Path::new(STATE_FILE).exists() {
        bail!("a topology is up already ({STATE_FILE}): run `rxecc testbed down` first");
    }
    if !dry_run && !Path::new("/sys/module/rdma_rxe").exists() {
        bail!("rdma_rxe is not loaded (load the patched one: tb_load_rxe patched, or modprobe rdma_rxe)");
    }
    let r = Runner::new(dry_run, log)?;
    let t = &b.topo;
    if log {
        eprintln!(
            "rxecc: {}{}: {} hosts, {} switches, {} ports{}",
            file.display(),
            guest.map_or(String::new(), |g| format!(" (guest {g})")),
            b.plan.hosts.len(),
            b.plan.switches.len(),
            b.ports.len(),
            if t.description.is_empty() {
                String::new()
            } else {
                format!(" ({})", t.description.trim())
            }
        );
    }
    if !dry_run {
        std::fs::create_dir_all("/run/rxecc").context("creating /run/rxecc")?;
        // Recorded first, so that `down` can clean up after a failed `up`.
        std::fs::write(STATE_FILE, serde_json::to_string_pretty(&b.plan)?)
            .context("writing the testbed state")?;
    }
    let res = build(&b, &r, dry_run);
    if res.is_err() && !dry_run {
        eprintln!("rxecc: bring-up failed; tearing down what was built");
        let _ = down();
    }
    res
}

/// The namespaces, bridges, links, addresses, neighbours and rxe devices;
/// returns the time `rdma link add` took.
fn build_net(b: &Built, r: &Runner, dry_run: bool) -> Result<std::time::Duration> {
    let mut rdma_time = std::time::Duration::ZERO;
    let t = &b.topo;
    let mtu: u32 = MTU.parse().context("MTU")?;
    for (si, s) in t.switches.iter().enumerate() {
        if !b.switch_here(si) {
            continue;
        }
        let n = s.name.get_ref();
        r.op(
            &format!("ip link add {n} mtu {MTU} up type bridge stp_state 0 mcast_snooping 0"),
            |net| net.add_bridge(n, mtu),
        )?;
    }
    let no_v6 = |ns: Option<&str>, dev: &str| {
        r.write(
            ns,
            &format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"),
            "1",
        )
    };
    // Receive steering (RPS) on every veth, by flow hash. A veth hands
    // what it sends to the receiving CPU's backlog: a port's qdisc runs on
    // whichever CPU its watchdog or a sender is on, so two packets of one
    // QP could land in two CPUs' backlogs and overtake each other. rxe
    // answers each such gap with a NAK and the sender goes back N: 5 to 11
    // out-of-sequence requests per 9,600 packets without it, 0 with it.
    let mask = rps_mask();
    let steer = |ns: Option<&str>, dev: &str| {
        r.write(
            ns,
            &format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus"),
            &mask,
        )
    };
    let enslave = |dev: &str, sw: usize| -> Result<()> {
        let br = t.switches[sw].name.get_ref();
        r.op(
            &format!(
                "ip link set {dev} mtu {MTU} master {br}\n\
                 bridge link set dev {dev} learning off flood off mcast_flood off"
            ),
            |net| net.enslave(dev, br, mtu),
        )?;
        steer(None, dev)?;
        no_v6(None, dev)?;
        r.op(&format!("ip link set {dev} up"), |net| net.up(dev, None))
    };
    // A link to another guest or machine: the device named for it (--nic)
    // takes the name of the port it plays.
    // A host's NIC also takes the host's MAC (the switches' FDBs and the
    // other hosts' neighbour entries name it), and is promiscuous.
    // `host_mac`: the host's, for a host's NIC; none for a switch port.
    let nic = |dev: &str, host_mac: Option<&str>| -> Result<()> {
        let named = b.nic_devs.get(dev);
        if dry_run {
            let which = named.map_or(format!("<the --nic for {dev}>"), |d| d.clone());
            let how = host_mac.map_or(String::new(), |m| format!(" promisc on address {m}"));
            println!("ip link set {which} down name {dev}{how}");
            return Ok(());
        }
        let Some(old) = named else {
            bail!("{dev} is on a link to another guest or machine: name the device that plays it (--nic {dev}=DEV)");
        };
        r.op("", |net| net.rename(old, dev, host_mac.is_some(), host_mac))
    };
    for (h, (sw, port)) in b.host_port.iter().enumerate() {
        let (host_here, switch_here) = (b.host_here(h), b.switch_here(*sw));
        if !host_here {
            if switch_here {
                nic(port, None)?;
                enslave(port, *sw)?;
            }
            continue;
        }
        let ns = t.hosts[h].name.get_ref();
        let v = format!("v{h}");
        let (m, ip) = (mac(h), format!("{NET}.{}", h + 1));
        if r.log {
            eprintln!(
                "rxecc: host {ns}: {v} {ip}/24 <-> {port} on {}",
                t.switches[*sw].name.get_ref()
            );
        }
        if dry_run {
            println!("ip netns add {ns}");
        } else {
            netlink::add_netns(ns)?;
        }
        if switch_here {
            r.op(
                &format!("ip link add {v} mtu {MTU} address {m} type veth peer name {port} mtu {MTU}\nip link set {v} netns {ns}"),
                |net| {
                    net.add_veth(&v, port, mtu, Some(&m))?;
                    net.move_to_netns(&v, ns)
                },
            )?;
        } else {
            nic(&v, Some(&m))?;
            // The guest's CPUs, not the namespace's, decide the mask, and
            // a NIC keeps its queues' settings across namespaces.
            steer(None, &v)?;
            r.op(&format!("ip link set {v} mtu {MTU} netns {ns}"), |net| {
                net.up(&v, Some(mtu))?;
                net.move_to_netns(&v, ns)
            })?;
        }
        no_v6(Some(ns), &v)?;
        let addr: std::net::Ipv4Addr = ip.parse().with_context(|| format!("host address {ip}"))?;
        r.op_in(
            ns,
            &format!("ip -n {ns} addr add {ip}/24 dev {v}\nip -n {ns} link set lo up\nip -n {ns} link set {v} up"),
            |net| {
                net.add_addr(&v, addr, 24)?;
                net.up("lo", None)?;
                net.up(&v, None)
            },
        )?;
        if switch_here {
            steer(Some(ns), &v)?;
            enslave(port, *sw)?;
        }
    }
    for (a, bb, da, db) in &b.trunks {
        match (b.switch_here(*a), b.switch_here(*bb)) {
            (true, true) => {
                r.op(
                    &format!("ip link add {da} mtu {MTU} type veth peer name {db} mtu {MTU}"),
                    |net| net.add_veth(da, db, mtu, None),
                )?;
                enslave(da, *a)?;
                enslave(db, *bb)?;
            }
            (true, false) => {
                nic(da, None)?;
                enslave(da, *a)?;
            }
            (false, true) => {
                nic(db, None)?;
                enslave(db, *bb)?;
            }
            (false, false) => {}
        }
    }
    for (sw, h, dev) in &b.fdb {
        if !b.switch_here(*sw) {
            continue;
        }
        let m = mac(*h);
        r.op(
            &format!("bridge fdb replace {m} dev {dev} master static"),
            |net| net.fdb_static(dev, &m),
        )?;
    }
    for (h, host) in t.hosts.iter().enumerate() {
        if !b.host_here(h) {
            continue;
        }
        let ns = host.name.get_ref();
        let v = format!("v{h}");
        let others: Vec<(String, String)> = (0..t.hosts.len())
            .filter(|o| *o != h)
            .map(|o| (host_ip(o), mac(o)))
            .collect();
        let what: Vec<String> = others
            .iter()
            .map(|(ip, m)| {
                format!("ip -n {ns} neigh replace {ip} lladdr {m} dev {v} nud permanent")
            })
            .collect();
        r.op_in(ns, &what.join("\n"), |net| {
            for (ip, m) in &others {
                let a: std::net::Ipv4Addr =
                    ip.parse().with_context(|| format!("host address {ip}"))?;
                net.neigh_permanent(&v, a, m)?;
            }
            Ok(())
        })?;
        let rdma_start = std::time::Instant::now();
        r.run(
            Some(ns),
            &[
                "rdma",
                "link",
                "add",
                &format!("rxe{h}"),
                "type",
                "rxe",
                "netdev",
                &v,
            ],
        )?;
        rdma_time += rdma_start.elapsed();
    }
    Ok(rdma_time)
}

fn build(b: &Built, r: &Runner, dry_run: bool) -> Result<()> {
    let t = &b.topo;
    // The ports: host NICs (in their namespaces), then switch ports. Their
    // programs (one instance for all) are loaded first, then each port is
    // attached.
    let configs: Vec<PortConfig> = b
        .ports
        .iter()
        .map(|p| PortConfig {
            rate_mbps: p.rate_mbps,
            limit_pkts: p.limit_pkts,
            burst_us: t.defaults.burst_us,
            delay_us: p.delay_us,
            pfc_class: p.switch.map_or(3, |s| t.switches[s].pfc_class),
        })
        .collect();
    let load = !dry_run && !b.ports.is_empty();
    // The programs are loaded and verified (0.4 s of CPU under TCG, 15 s
    // on the debug kernel), so say so before and how long after. They load
    // while the network is built (build_net): that touches no program, and
    // under TCG much of its 1.2 s per host is spent waiting (process
    // starts, RCU grace periods).
    let log = r.log;
    let up_start = std::time::Instant::now();
    let mut rdma_time = std::time::Duration::ZERO;
    let mut load_time = std::time::Duration::ZERO;
    std::thread::scope(|sc| -> Result<()> {
        let loader = sc.spawn(|| {
            if !load {
                return Ok(std::time::Duration::ZERO);
            }
            let load_start = std::time::Instant::now();
            if log {
                eprintln!("rxecc: up: loading the ports' BPF programs");
            }
            let loaded = switch::load_port_object();
            if log && loaded.is_ok() {
                eprintln!(
                    "rxecc: up: the ports' programs loaded in {:.1} s",
                    load_start.elapsed().as_secs_f64()
                );
            }
            loaded.map(|()| load_start.elapsed())
        });
        let net = build_net(b, r, dry_run);
        let loaded = loader
            .join()
            .map_err(|_| anyhow::anyhow!("the thread loading the ports' programs panicked"))?;
        rdma_time = net?;
        load_time = loaded?;
        Ok(())
    })?;
    let net_time = up_start.elapsed();
    let mut int_time = std::time::Duration::ZERO;
    let mut marks: Vec<(&str, MarkMode)> = Vec::new();
    for (p, pc) in b.ports.iter().zip(configs) {
        if dry_run {
            println!(
                "# port {} ({}): {:?} {:?}",
                p.dev,
                p.netns.as_deref().unwrap_or("root"),
                pc,
                p.switch
            );
            continue;
        }
        match &p.netns {
            Some(ns) => in_netns(ns, || switch::attach_loaded_port(&p.dev, &pc))?,
            None => switch::attach_loaded_port(&p.dev, &pc)?,
        }
        if let Some(peer) = p.fc_peer() {
            switch::set_fc_mode(
                &p.dev,
                t.switches[peer].fc(),
                &p.peer_gfc_time.unwrap_or_default(),
            )?;
        }
        let Some(si) = p.switch else { continue };
        let s = &t.switches[si];
        switch::set_ingress(&p.dev, &p.ingress_config(s, si))?;
        if let Some(red) = s.red {
            switch::set_red(
                &p.dev,
                &switch::Red {
                    kmin_bytes: red.kmin_bytes,
                    kmax_bytes: red.kmax_bytes,
                    pmax_permille: red.pmax_permille,
                },
            )?;
        }
        if let Some(tcd) = s.tcd {
            switch::set_tcd(&p.dev, tcd.thresh_bytes, tcd.max_ton_us, tcd.stall_us)?;
        }
        if s.mark != MarkMode::Off {
            marks.push((p.dev.as_str(), s.mark));
        }
    }
    let ports_time = up_start.elapsed() - net_time;
    // The markers, loaded all at once as the ports were, on their ports.
    let mut mark_storage: Vec<_> = marks
        .iter()
        .map(|_| std::mem::MaybeUninit::uninit())
        .collect();
    for ((dev, mode), skel) in marks
        .iter()
        .zip(switch::load_markers(&mut mark_storage, &marks)?)
    {
        switch::attach_loaded_marker(dev, *mode, skel)?;
    }
    let markers_time = up_start.elapsed() - net_time - ports_time;
    // INT: for HPCC each egress port of a stamping switch is described at
    // its link's far end (the next switch's port, or the host's NIC), where
    // a data packet can be written with the values of its own dequeue. For
    // FNCC and ICC each egress port describes itself, into the ACKs its
    // ingress takes in (paths are symmetric: a bridge tree is).
    let mut stampers: Vec<(String, String, usize)> = Vec::new();
    for (h, (sw, port)) in b.host_port.iter().enumerate() {
        stampers.push((format!("v{h}"), port.clone(), *sw));
    }
    for (a, bb, da, db) in &b.trunks {
        stampers.push((db.clone(), da.clone(), *a));
        stampers.push((da.clone(), db.clone(), *bb));
    }
    for (peer, port, sw) in stampers {
        let s = &t.switches[sw];
        let (dev, from) = match s.int {
            IntMode::Off => continue,
            IntMode::Hpcc => (peer, port),
            _ => (port, String::new()),
        };
        // scope_to() refused HPCC across guests; the rest stamp at the
        // switch's own port.
        if !b.plan.ports.iter().any(|(d, _)| *d == dev) {
            continue;
        }
        if dry_run {
            println!(
                "# int {dev} stamps {}'s egress: {:?}",
                if from.is_empty() { &dev } else { &from },
                s.int
            );
        } else {
            let t0 = std::time::Instant::now();
            switch::set_int(&dev, &from, s.int, &s.icc)?;
            int_time += t0.elapsed();
        }
    }
    for rule in &t.injects {
        if !b.plan.ports.iter().any(|(d, _)| *d == rule.port) {
            continue;
        }
        if dry_run {
            println!("rxecc port inject --dev {} {}", rule.port, rule.to_args());
        } else {
            switch::add_inject_rule(&rule.port, rule)?;
        }
    }
    if !dry_run && r.log {
        // Where `up` spends its time; the programs load beside the net.
        let secs = |d: std::time::Duration| d.as_secs_f64();
        eprintln!(
            "rxecc: up: {} ports attached in {:.2} s: net {:.2} s (of which rdma link {:.2} s; \
             the programs' load {:.2} s beside it), ports {:.2} s, markers {:.2} s, INT {:.2} s",
            b.ports.len(),
            secs(up_start.elapsed()),
            secs(net_time),
            secs(rdma_time),
            secs(load_time),
            secs(ports_time),
            secs(markers_time),
            secs(int_time)
        );
    }
    Ok(())
}

/// The topology that is up, as `up` recorded it.
pub fn current() -> Result<Plan> {
    let s = std::fs::read_to_string(STATE_FILE)
        .with_context(|| format!("no topology is up ({STATE_FILE} is missing)"))?;
    serde_json::from_str(&s).with_context(|| format!("{STATE_FILE} is corrupt"))
}

/// Tears down what `up` built; tolerates a half-built testbed.
pub fn down() -> Result<()> {
    let plan = current()?;
    // Best effort: whatever a failed bring-up left is removed, and what is
    // gone already is skipped.
    // One rdma for all hosts (-force: on past a device already gone); a
    // process start costs about 0.4 s under TCG.
    let batch: String = plan
        .rxe
        .iter()
        .filter(|d| Path::new(&format!("/sys/class/infiniband/{d}")).exists())
        .map(|d| format!("link delete {d}\n"))
        .collect();
    if !batch.is_empty() {
        use std::io::Write;
        if let Ok(mut child) = std::process::Command::new("rdma")
            .args(["-f", "-b", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(batch.as_bytes());
            }
            let _ = child.wait();
        }
    }
    let net = Net::open()?;
    for v in &plan.veths {
        if let Err(e) = net.del_link(v) {
            eprintln!("rxecc: down: {e:#}");
        }
    }
    for s in &plan.switches {
        if let Err(e) = net.del_link(s) {
            eprintln!("rxecc: down: {e:#}");
        }
    }
    for h in &plan.hosts {
        if let Err(e) = netlink::del_netns(h) {
            eprintln!("rxecc: down: {e:#}");
        }
    }
    let mut errs = Vec::new();
    for (dev, _) in &plan.ports {
        if let Err(e) = switch::detach_port(dev) {
            errs.push(format!("{dev}: {e:#}"));
        }
    }
    if switch::ports().is_empty() {
        switch::remove_shared_maps()?;
    }
    std::fs::remove_file(STATE_FILE).with_context(|| format!("removing {STATE_FILE}"))?;
    if !errs.is_empty() {
        bail!("down left ports behind: {}", errs.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(src: &str) -> Result<Built> {
        parse(Path::new("t.toml"), src)
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
        let e = p(&PLAIN.replace(
            "emulate = false",
            "emulate = false\npfc = true\nxoff_bytes = 9",
        ))
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("switch.flow_control: needs emulated ports"),
            "{e}"
        );
        let e = p(&PLAIN.replace("emulate = false", "emulate = false\nmark = \"ce\""))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("switch.mark"), "{e}");
        let e = p(&format!("{PLAIN}rate_mbps = 10\n"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("takes no rate"), "{e}");
        let trunk = PLAIN.replace(
            "[[host]]\nname = \"h0\"",
            "[[switch]]\nname = \"s1\"\n[[host]]\nname = \"h0\"",
        ) + "[[link]]\na = \"s1\"\nb = \"br0\"\n";
        let e = p(&trunk).err().unwrap().to_string();
        assert!(e.contains("links hosts only"), "{e}");
    }

    #[test]
    fn small_plan() {
        let b = p(SMALL).unwrap();
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
        let e = p(&SMALL.replace("b = \"s0\"\nrate_mbps", "b = \"s9\"\nrate_mbps"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("t.toml:16: link.b:"), "{e}");
        assert!(e.contains("'s9'"), "{e}");
        let e = p(&SMALL.replace("xon_bytes = 50", "xon_bytes = 500"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("t.toml:3: switch.xoff_bytes"), "{e}");
        let e = p(&SMALL.replace("rate_mbps = 50", "rate_mbps = \"fast\""))
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("t.toml:17:"), "{e}");
        let e = p(&SMALL.replace("rate_mbps = 50", "speed = 50"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown field `speed`"), "{e}");
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

    #[test]
    fn guests_share_by_name_and_link_by_udp() {
        let src = r#"
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
        // --nic names only this guest's ports towards other guests.
        let f = std::env::temp_dir().join(format!("rxecc-guests-{}.toml", std::process::id()));
        std::fs::write(&f, src).unwrap();
        let path = f.display().to_string();
        let nic = |g: &str, n: &str| up_logged(&path, true, false, Some(g), &[n.to_string()]);
        assert!(nic("g", "p1=eth3").is_ok());
        let e = nic("g", "p0=eth3").unwrap_err().to_string();
        assert!(
            e.contains("p0 is not a port of guest 'g'") && e.contains("p1, x0_1"),
            "{e}"
        );
        let e = nic("g", "p1").unwrap_err().to_string();
        assert!(e.contains("PORT=DEV"), "{e}");
        let e = up_logged(&path, true, false, None, &["p1=eth3".into()]).unwrap_err();
        assert!(e.to_string().contains("only with --guest"), "{e}");
        std::fs::remove_file(&f).unwrap();
        let bad = src.replacen("guest = \"g\"", "guest = \"a b\"", 1);
        let e = p(&bad).err().unwrap().to_string();
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
