//! Each feature's settings, written into a loaded port's slot of the maps:
//! the link (rate, delay, pacing credit), ECN marking (RED, TCD), INT and
//! ICC, and flow control with the shared buffer (PFC, GFC). The programs
//! pick a change up at their next packet; nothing is reloaded.

use super::*;
use anyhow::bail;
use port_skel::types::{ingress_acct, ingress_cfg, port_cfg, rxecc_port_params, switch_ports};

/// What the marker writes on ECN-capable RoCEv2 packets.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum MarkMode {
    /// No marks (the marker is removed).
    Off,
    /// Congestion experienced (0b11) on every packet: a test fixture.
    Ce,
    /// TCD's undetermined (0b10), on packets that are not CE: a fixture.
    Ue,
    /// RED on the port's queue, for DCQCN.
    Red,
    /// TCD ternary marks on the port's queue and pause state, for ACC.
    Tcd,
}

impl MarkMode {
    pub(super) fn code(self) -> u32 {
        match self {
            MarkMode::Off => 0,
            MarkMode::Ce => 1,
            MarkMode::Ue => 2,
            MarkMode::Red => 3,
            MarkMode::Tcd => 4,
        }
    }
}

/// Pacing credit a port keeps under the host clock, us: how late its timer
/// may fire and still be caught up on. There a busy guest's timers are
/// often 1-4 ms late (docs/switch.md), and the port then bursts.
pub const HOST_CLOCK_BURST_US: u64 = 4000;

/// The pacing credit a port keeps unless told: one packet's serialisation
/// (0), which holds the physical invariant, on a clock whose timers fire
/// on time (the testbed's virtual clock, a real machine); 4 ms under
/// testbed/guest.sh's host clock (RXECC_CLOCK=host, which guest-env.sh
/// also sets in testbed/vms.sh's guests).
pub fn default_burst_us() -> u64 {
    if std::env::var("RXECC_CLOCK").is_ok_and(|c| c == "host") {
        HOST_CLOCK_BURST_US
    } else {
        0
    }
}

/// The largest packet limit a port takes (port.h's RXECC_LIMIT_PKTS_MAX):
/// its reset frees at most that many packets from each list.
pub const LIMIT_PKTS_MAX: u32 = 65_536;

/// An emulated port's link.
#[derive(Clone, Copy, Debug)]
pub struct PortConfig {
    pub rate_mbps: u64,
    pub limit_pkts: u32,
    pub burst_us: u64,
    /// Propagation delay added at egress.
    pub delay_us: u64,
    /// The PFC priority class RoCE traffic uses.
    pub pfc_class: u32,
    /// ACKs, NAKs and CNPs in a strict-priority class ahead of data
    /// (port/prio.h).
    pub ack_priority: bool,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            rate_mbps: 100,
            limit_pkts: 10_000,
            burst_us: default_burst_us(),
            delay_us: 0,
            pfc_class: 3,
            ack_priority: false,
        }
    }
}

/// Reads, changes and writes back a port's configuration. The programs
/// pick the change up at their next packet; nothing is reloaded.
pub fn update_port_cfg(dev: &str, f: impl FnOnce(&mut rxecc_port_params)) -> Result<()> {
    let id = port_id(dev).with_context(|| format!("{dev} is not a port"))?;
    let map = pinned(&obj_pin("port_cfg"), "the ports' configuration")?;
    update_cfg_map(&map, id, f)
}

/// Changes entry `id` of a `port_cfg` map (the ports' or a marker's own:
/// both take the type from port.h). Read and written under the entry's spin
/// lock (BPF_F_LOCK), so a program never sees half an update. Two writers
/// at once could still lose one's change; rxecc is the only writer.
pub fn update_cfg_map(
    map: &dyn MapCore,
    id: u32,
    f: impl FnOnce(&mut rxecc_port_params),
) -> Result<()> {
    let key = id.to_ne_bytes();
    let mut cfg: port_cfg = from_bytes(
        &map.lookup(&key, MapFlags::LOCK)?
            .with_context(|| format!("port_cfg has no entry {id}"))?,
        "port_cfg",
    )?;
    f(&mut cfg.p);
    map.update(&key, pod_bytes(&cfg), MapFlags::LOCK)
        .context("writing the port's configuration")
}

/// RED thresholds of a port's marker.
#[derive(Clone, Copy, Debug)]
pub struct Red {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax_permille: u32,
}

/// Sets `dev`'s RED thresholds; the marker uses them from its next packet.
pub fn set_red(dev: &str, red: &Red) -> Result<()> {
    if red.kmin_bytes > red.kmax_bytes || red.pmax_permille > 1000 {
        bail!("RED needs Kmin <= Kmax and Pmax <= 1000 per mille");
    }
    update_port_cfg(dev, |c| {
        c.kmin_bytes = red.kmin_bytes;
        c.kmax_bytes = red.kmax_bytes;
        c.pmax_permille = red.pmax_permille;
    })
}

/// Sets `dev`'s TCD threshold, max(T_on) and stall threshold (0: 2 ms).
pub fn set_tcd(dev: &str, thresh_bytes: u64, max_ton_us: u64, stall_us: u64) -> Result<()> {
    update_port_cfg(dev, |c| {
        c.tcd_thresh_bytes = thresh_bytes;
        c.tcd_max_ton_ns = max_ton_us.saturating_mul(1000);
        c.stall_ns = stall_us.saturating_mul(1000);
    })
}

/// Changes a port's link rate at run time.
pub fn set_rate(dev: &str, rate_mbps: u64) -> Result<()> {
    if rate_mbps == 0 {
        bail!("a port needs a rate above 0 Mb/s");
    }
    update_port_cfg(dev, |c| c.rate_bps = rate_mbps.saturating_mul(1_000_000))
}

/// What a port's TC ingress stamps into INT shims.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum IntMode {
    /// Nothing.
    Off,
    /// A hop record (HPCC) on data packets, from the sending port's egress.
    Hpcc,
    /// A hop record (FNCC) on ACKs, from this port's own egress, which
    /// carries the data the ACK answers.
    Fncc,
    /// ICC's feedback on ACKs, from this port's own egress.
    Icc,
}

impl IntMode {
    fn code(self) -> u32 {
        match self {
            IntMode::Off => 0,
            IntMode::Hpcc => 1,
            IntMode::Fncc => 2,
            IntMode::Icc => 3,
        }
    }

    /// True if the mode stamps ACKs with the state of the port they cross
    /// (FNCC, ICC), false if data packets with their link peer's (HPCC).
    pub fn on_acks(self) -> bool {
        matches!(self, IntMode::Fncc | IntMode::Icc)
    }
}

/// ICC's switch parameters (docs/algorithms.md), scaled from the paper's
/// 5 us and 15 us at T = 13 us to the testbed's T.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct IccParams {
    /// Queue-growth samples at least this far apart, us.
    #[serde(default = "IccParams::default_sample_us")]
    pub sample_us: u64,
    /// Feedback at least this often, us.
    #[serde(default = "IccParams::default_period_us")]
    pub period_us: u64,
    /// Utilisation at or above which a port counts as busy, 1/1000.
    #[serde(default = "IccParams::default_lu_permille")]
    pub lu_permille: u32,
}

impl IccParams {
    fn default_sample_us() -> u64 {
        500
    }
    fn default_period_us() -> u64 {
        1500
    }
    fn default_lu_permille() -> u32 {
        700
    }

    /// Checks the ranges, with a message that says which value is wrong.
    pub fn validate(&self) -> Result<()> {
        if self.sample_us == 0 || self.sample_us > 10_000_000 {
            bail!("icc sample_us {} is not in 1..=10000000", self.sample_us);
        }
        if self.period_us == 0 || self.period_us > 10_000_000 {
            bail!("icc period_us {} is not in 1..=10000000", self.period_us);
        }
        if self.lu_permille > 1000 {
            bail!("icc lu_permille {} is not in 0..=1000", self.lu_permille);
        }
        Ok(())
    }
}

impl Default for IccParams {
    fn default() -> Self {
        Self {
            sample_us: Self::default_sample_us(),
            period_us: Self::default_period_us(),
            lu_permille: Self::default_lu_permille(),
        }
    }
}

/// Makes `dev`'s ingress stamp INT (`mode`). HPCC records describe the
/// egress of port `from`, the link peer that sends data into `dev`; FNCC
/// and ICC describe `dev`'s own egress, so `from` must be empty or `dev`.
/// Takes effect at the next packet; nothing is reloaded or lost.
pub fn set_int(dev: &str, from: &str, mode: IntMode, icc: &IccParams) -> Result<()> {
    if !is_port(dev) {
        bail!("{dev} is not a port (`rxecc port attach` first)");
    }
    icc.validate()?;
    let from = match mode {
        IntMode::Hpcc if from.is_empty() => {
            bail!("--mode hpcc needs --from: the link peer whose egress {dev} describes")
        }
        m if m.on_acks() && !from.is_empty() && from != dev => {
            bail!("--mode {m:?} stamps {dev}'s own egress into the ACKs it takes in: leave out --from (got {from})")
        }
        m if m.on_acks() => dev,
        _ => from,
    };
    let from_id = match mode {
        IntMode::Off => 0,
        _ => port_id(from)
            .with_context(|| format!("{from} is not a port: INT needs its egress queue"))?,
    };
    update_port_cfg(dev, |c| {
        c.int_mode = mode.code();
        c.int_from = from_id;
        c.icc_sample_ns = icc.sample_us * 1000;
        c.icc_period_ns = icc.period_us * 1000;
        c.icc_lu_permille = icc.lu_permille;
    })
}

/// Link-level flow control between a port and its link peer (port.h's
/// `enum fc_mode`). Both ends of a link must use the same one.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Deserialize,
    serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum FlowControl {
    /// Nothing: a full buffer drops.
    #[default]
    None,
    /// 802.1Qbb PFC: pause above XOFF, resume at XON.
    Pfc,
    /// Buffer-based GFC: the ingress queue's stage k, sent in the PFC
    /// frame's time field, holds the upstream port at C / 2^k.
    GfcBuffer,
    /// Time-based GFC (the CBFC variant): the ingress port advertises its
    /// credit limit every period; the upstream port maps the credit left
    /// to a rate.
    GfcTime,
}

impl FlowControl {
    fn code(self) -> u32 {
        match self {
            FlowControl::None => 0,
            FlowControl::Pfc => 1,
            FlowControl::GfcBuffer => 2,
            FlowControl::GfcTime => 3,
        }
    }

    /// As written in topology files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FlowControl::None => "none",
            FlowControl::Pfc => "pfc",
            FlowControl::GfcBuffer => "gfc-buffer",
            FlowControl::GfcTime => "gfc-time",
        }
    }
}

/// `dev`'s link rate.
pub fn port_rate_bps(dev: &str) -> Result<u64> {
    let (map, key) = port_slot(dev, "port_cfg")?;
    let c: port_cfg = from_bytes(
        &map.lookup(&key, MapFlags::LOCK)?
            .context("the port's configuration is missing")?,
        "port_cfg",
    )?;
    Ok(c.p.rate_bps)
}

/// Sets how `dev`'s egress reads the flow-control frames of its link peer
/// (`time`: the peer's time-based GFC settings, for `GfcTime`).
pub fn set_fc_mode(dev: &str, mode: FlowControl, time: &GfcTime) -> Result<()> {
    if mode == FlowControl::GfcTime && time.bm_bytes <= time.b0_bytes {
        bail!("{dev}: time-based GFC needs B_0 < B_m");
    }
    update_port_cfg(dev, |c| {
        c.fc_mode = mode.code();
        c.gfc_span_bytes = time.bm_bytes.saturating_sub(time.b0_bytes);
        c.gfc_period_ns = time.period_ns;
    })
}

/// A switch port's role as an ingress port: its share of the switch's
/// buffer and its flow control towards its link peer.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressConfig {
    pub switch_id: u32,
    pub mode: FlowControl,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    /// The switch's shared buffer; 0 means unlimited.
    pub buffer_bytes: u64,
    pub pfc_class: u32,
    /// Pause time sent with XOFF, in 512-bit quanta; None: auto_quanta().
    pub pause_quanta: Option<u32>,
    /// XOFF is sent again this often while it holds.
    pub refresh_us: u64,
    /// For `FlowControl::GfcBuffer`.
    pub gfc: GfcThresholds,
    /// For `FlowControl::GfcTime`.
    pub gfc_time: GfcTime,
}

/// The default pause time: three refresh intervals at the link's rate. An
/// XOFF is renewed every `refresh_us` while its queue stays above XON, so
/// this only ends a pause early when no packet arrived to renew it; and a
/// resume that never arrives (a frame lost) holds the peer for 3 refresh
/// intervals, not for 0xffff quanta (671 ms at 50 Mb/s).
pub fn auto_quanta(rate_bps: u64, refresh_us: u64) -> u32 {
    let bits = rate_bps.saturating_mul(refresh_us.saturating_mul(3)) / 1_000_000;
    bits.div_ceil(512).clamp(1, 0xffff) as u32
}

/// Sets `dev`'s ingress accounting and PFC thresholds (creating its
/// counters the first time). Safe under traffic: counters are kept.
pub fn set_ingress(dev: &str, ic: &IngressConfig) -> Result<()> {
    if ic.switch_id >= MAX_SWITCHES {
        bail!(
            "switch id {} is out of range (0..{MAX_SWITCHES})",
            ic.switch_id
        );
    }
    let pfc = ic.mode == FlowControl::Pfc;
    if pfc && ic.xon_bytes > ic.xoff_bytes {
        bail!(
            "{dev}: XON ({} B) must not exceed XOFF ({} B)",
            ic.xon_bytes,
            ic.xoff_bytes
        );
    }
    if ic.mode == FlowControl::GfcBuffer {
        let g = &ic.gfc;
        if g.b1_bytes == 0 || g.bm_bytes <= g.b1_bytes || g.stages == 0 {
            bail!(
                "{dev}: GFC needs 0 < B_1 < B_m and at least one stage (B_1 {} B, B_m {} B, {} stages)",
                g.b1_bytes,
                g.bm_bytes,
                g.stages
            );
        }
        if ic.buffer_bytes != 0 && g.bm_bytes > ic.buffer_bytes {
            bail!(
                "{dev}: GFC's B_m ({} B) is more than the switch's buffer ({} B)",
                g.bm_bytes,
                ic.buffer_bytes
            );
        }
    }
    if ic.mode == FlowControl::GfcTime && (ic.gfc_time.bm_bytes == 0 || ic.gfc_time.period_ns == 0)
    {
        bail!("{dev}: time-based GFC needs B_m and a period");
    }
    if pfc && ic.pause_quanta == Some(0) {
        bail!("{dev}: a pause of 0 quanta would resume, not pause");
    }
    let pause_quanta = match ic.pause_quanta {
        Some(q) => q,
        None => auto_quanta(port_rate_bps(dev)?, ic.refresh_us),
    };
    let idx = ifindex(dev)?.to_ne_bytes();
    let acct = pinned(
        &format!("{PIN_ROOT}/ingress_acct"),
        "no switch port is attached yet",
    )?;
    if acct.lookup(&idx, MapFlags::ANY)?.is_none() {
        // SAFETY: `ingress_acct` is plain-old-data; zeroes are a valid value
        // (the spin lock included).
        let zero: ingress_acct = unsafe { std::mem::zeroed() };
        acct.update(&idx, pod_bytes(&zero), MapFlags::NO_EXIST)
            .context("creating the ingress counters")?;
    }
    let cfg = pinned(
        &format!("{PIN_ROOT}/ingress_cfg"),
        "no switch port is attached yet",
    )?;
    let v = ingress_cfg {
        switch_id: ic.switch_id,
        fc_mode: ic.mode.code(),
        xoff_bytes: ic.xoff_bytes,
        xon_bytes: ic.xon_bytes,
        buffer_bytes: ic.buffer_bytes,
        pfc_class: ic.pfc_class,
        pause_quanta,
        refresh_ns: ic.refresh_us.saturating_mul(1000),
        gfc_b1_bytes: ic.gfc.b1_bytes,
        gfc_bm_bytes: if ic.mode == FlowControl::GfcTime {
            ic.gfc_time.bm_bytes
        } else {
            ic.gfc.bm_bytes
        },
        gfc_stages: ic.gfc.stages,
        gfc_period_ns: ic.gfc_time.period_ns,
        ..Default::default()
    };
    cfg.update(&idx, pod_bytes(&v), MapFlags::ANY)
        .context("writing the ingress configuration")?;
    add_switch_port(ic.switch_id, u32::from_ne_bytes(idx), v.refresh_ns)?;
    // Remembered so that stats and detach find the entry by name.
    std::fs::create_dir_all(IFINDEX_DIR).with_context(|| format!("creating {IFINDEX_DIR}"))?;
    let f = format!("{IFINDEX_DIR}/{dev}");
    std::fs::write(&f, u32::from_ne_bytes(idx).to_string()).with_context(|| format!("writing {f}"))
}

/// Adds ingress port `iif` to switch `sw`'s list (port.h's `switch_ports`),
/// from which a paused queue renews its switch's XOFFs; ports whose
/// ingress configuration is gone (detached) leave it.
fn add_switch_port(sw: u32, iif: u32, refresh_ns: u64) -> Result<()> {
    let map = pinned(
        &format!("{PIN_ROOT}/switch_ports"),
        "no switch port is attached yet",
    )?;
    let cfg = pinned(
        &format!("{PIN_ROOT}/ingress_cfg"),
        "no switch port is attached yet",
    )?;
    let key = sw.to_ne_bytes();
    let mut sp: switch_ports = from_bytes(
        &map.lookup(&key, MapFlags::ANY)?
            .context("switch id out of range")?,
        "switch_ports",
    )?;
    let n = (sp.n as usize).min(sp.iif.len());
    let mut keep: Vec<u32> = sp.iif[..n]
        .iter()
        .copied()
        .filter(|i| *i != iif)
        .filter(|i| {
            cfg.lookup(&i.to_ne_bytes(), MapFlags::ANY)
                .ok()
                .flatten()
                .and_then(|b| from_bytes::<ingress_cfg>(&b, "ingress_cfg").ok())
                .is_some_and(|c| c.switch_id == sw)
        })
        .collect();
    keep.push(iif);
    if keep.len() > sp.iif.len() {
        bail!("switch {sw} has more than {} ingress ports", sp.iif.len());
    }
    sp.iif = [0; 32];
    sp.iif[..keep.len()].copy_from_slice(&keep);
    sp.n = keep.len() as u32;
    sp.refresh_ns = match sp.refresh_ns {
        0 => refresh_ns,
        r => r.min(refresh_ns),
    };
    map.update(&key, pod_bytes(&sp), MapFlags::ANY)
        .context("writing the switch's port list")
}

#[cfg(test)]
mod tests {

    #[test]
    fn auto_quanta_is_three_refreshes() {
        // 3 x 10 ms at 100 Mb/s = 3 Mbit = 5859.4 quanta of 512 bits.
        assert_eq!(super::auto_quanta(100_000_000, 10_000), 5860);
        assert_eq!(super::auto_quanta(100_000_000_000, 10_000), 0xffff);
        assert_eq!(super::auto_quanta(0, 10_000), 1);
    }
}
