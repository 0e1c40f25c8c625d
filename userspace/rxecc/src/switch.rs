//! Loading and attaching the switch's eBPF programs (`switch-ebpf/`).

use anyhow::{bail, Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, TcHookBuilder, TC_EGRESS};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;

mod mark_skel {
    include!(concat!(env!("OUT_DIR"), "/mark.skel.rs"));
}
use mark_skel::MarkSkelBuilder;

/// What the marker writes on ECN-capable RoCEv2 packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MarkMode {
    /// Remove the marker.
    Off,
    /// Congestion experienced (0b11) on every packet.
    Ce,
    /// TCD's undetermined (0b10), on packets that are not CE.
    Ue,
    /// RED on the port's queue (needs `rxecc port attach` first).
    Red,
}

fn ifindex(dev: &str) -> Result<i32> {
    let path = format!("/sys/class/net/{dev}/ifindex");
    let s = std::fs::read_to_string(&path).with_context(|| format!("no network device '{dev}' ({path})"))?;
    s.trim().parse().with_context(|| format!("bad ifindex in {path}"))
}

/// libbpf's messages, less the kernel's notice that a clsact qdisc exists
/// already, which `TcHook::create` expects and treats as success.
fn libbpf_print(level: libbpf_rs::PrintLevel, msg: String) {
    if level != libbpf_rs::PrintLevel::Debug && !msg.contains("Exclusivity flag on") {
        eprint!("{msg}");
    }
}

/// Attaches the marker to `dev`'s TC egress in `mode`, replacing any marker
/// already there; `Off` removes it. The filter stays after this process exits.
pub fn attach_marker(dev: &str, mode: MarkMode) -> Result<()> {
    libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Info, libbpf_print)));
    let idx = ifindex(dev)?;
    let mut storage = MaybeUninit::uninit();
    let mut open = MarkSkelBuilder::default().open(&mut storage).context("opening mark.bpf.o")?;
    open.maps.rodata_data.as_deref_mut().context("mark.bpf.o has no .rodata")?.mark_mode = match mode {
        MarkMode::Off => 0,
        MarkMode::Ce => 1,
        MarkMode::Ue => 2,
        MarkMode::Red => 3,
    };
    if mode == MarkMode::Red {
        // Share the port's queue state and thresholds.
        let dir = pin_dir(dev);
        open.maps
            .port_state
            .reuse_pinned_map(format!("{dir}/state"))
            .with_context(|| format!("{dev} is not a port: run `rxecc port attach` first"))?;
        open.maps.port_cfg.reuse_pinned_map(format!("{dir}/cfg")).context("reusing the port's RED thresholds")?;
    }
    let skel = open.load().context("loading mark.bpf.o (is this the testbed kernel, and are you root?)")?;
    let mut hook = TcHookBuilder::new(skel.progs.mark_egress.as_fd())
        .ifindex(idx)
        .replace(true)
        .handle(1)
        .priority(1)
        .hook(TC_EGRESS);
    if mode == MarkMode::Off {
        hook.detach().with_context(|| format!("removing the marker from {dev}"))?;
        return Ok(());
    }
    hook.create().with_context(|| format!("creating clsact on {dev}"))?;
    hook.attach().with_context(|| format!("attaching the marker to {dev} egress"))?;
    // Smoke-read the stats map, so a broken map layout fails here, loudly.
    let zero = 0u32.to_ne_bytes();
    if skel.maps.mark_stats.lookup_percpu(&zero, MapFlags::ANY)?.is_none() {
        bail!("mark_stats map has no entry 0");
    }
    Ok(())
}

mod port_skel {
    include!(concat!(env!("OUT_DIR"), "/port.skel.rs"));
}
use port_skel::{types::port_state, PortSkelBuilder};

/// bpffs directory of a port's pinned objects.
fn pin_dir(dev: &str) -> String {
    format!("/sys/fs/bpf/rxecc/{dev}")
}

/// An emulated switch port's configuration.
#[derive(Clone, Copy, Debug)]
pub struct PortConfig {
    pub rate_mbps: u64,
    pub limit_pkts: u32,
    pub burst_us: u64,
}

/// A consistent snapshot of a port's counters (taken under their lock).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct PortStats {
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    pub drops: u64,
    pub qlen_pkts: u64,
    pub qlen_bytes: u64,
    pub max_qlen_bytes: u64,
    pub red_above: u64,
    pub red_above_marked: u64,
    pub red_below: u64,
    pub red_between: u64,
    pub red_between_marked: u64,
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
    let path = format!("{}/cfg", pin_dir(dev));
    let map = libbpf_rs::MapHandle::from_pinned_path(&path).with_context(|| format!("{dev} is not a port (no {path})"))?;
    let cfg = port_skel::types::port_cfg {
        kmin_bytes: red.kmin_bytes,
        kmax_bytes: red.kmax_bytes,
        pmax_permille: red.pmax_permille,
        pad: 0,
    };
    // SAFETY: `port_cfg` is a plain-old-data C struct; viewing it as bytes
    // for the map update reads initialised memory only.
    let bytes = unsafe {
        std::slice::from_raw_parts((&cfg as *const port_skel::types::port_cfg).cast::<u8>(), std::mem::size_of_val(&cfg))
    };
    map.update(&0u32.to_ne_bytes(), bytes, MapFlags::ANY).context("writing the RED thresholds")
}

/// Qdisc_ops ids are at most 15 characters; one per port.
fn ops_id(dev: &str) -> Result<String> {
    let id = format!("rxecc_{dev}");
    if id.len() > 15 {
        bail!("device name '{dev}' is too long for a port (at most 9 characters)");
    }
    Ok(id)
}

fn run_tc(args: &[&str]) -> Result<std::process::Output> {
    std::process::Command::new("tc").args(args).output().context("running tc (iproute2)")
}

/// Makes `dev` an emulated switch port: loads its own instance of
/// switch-ebpf/port.bpf.c, registers it as qdisc kind `rxecc_<dev>`, pins it
/// under /sys/fs/bpf/rxecc/<dev>/ and installs it as `dev`'s root qdisc.
/// An existing port on `dev` is replaced.
pub fn attach_port(dev: &str, cfg: &PortConfig) -> Result<()> {
    libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Info, libbpf_print)));
    ifindex(dev)?;
    if cfg.rate_mbps == 0 {
        bail!("a port needs a rate above 0 Mb/s");
    }
    let id = ops_id(dev)?;
    detach_port(dev)?;
    let mut storage = MaybeUninit::uninit();
    let mut open = PortSkelBuilder::default().open(&mut storage).context("opening port.bpf.o")?;
    let ro = open.maps.rodata_data.as_deref_mut().context("port.bpf.o has no .rodata")?;
    ro.rate_bps = cfg.rate_mbps.saturating_mul(1_000_000);
    ro.burst_ns = cfg.burst_us.saturating_mul(1000);
    ro.limit_pkts = cfg.limit_pkts;
    let ops = open.struct_ops.port_mut();
    ops.id = [0; 16];
    for (dst, src) in ops.id.iter_mut().zip(id.bytes()) {
        *dst = src as _;
    }
    let mut skel = open.load().context("loading port.bpf.o (is this the testbed kernel, and are you root?)")?;
    let mut link = skel.maps.port.attach_struct_ops().context("registering the port's Qdisc_ops")?;
    let dir = pin_dir(dev);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {dir} (is bpffs mounted?)"))?;
    link.pin(format!("{dir}/ops")).context("pinning the struct_ops link")?;
    skel.maps.port_state.pin(format!("{dir}/state")).context("pinning the port's counters")?;
    skel.maps.port_cfg.pin(format!("{dir}/cfg")).context("pinning the port's configuration")?;
    let out = run_tc(&["qdisc", "replace", "dev", dev, "root", &id])?;
    if !out.status.success() {
        let _ = detach_port(dev);
        bail!("tc qdisc replace dev {dev} root {id}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// Removes the port from `dev` (nothing to do if there is none).
pub fn detach_port(dev: &str) -> Result<()> {
    let dir = pin_dir(dev);
    if !std::path::Path::new(&dir).exists() {
        return Ok(());
    }
    let out = run_tc(&["qdisc", "del", "dev", dev, "root"])?;
    if !out.status.success() && ifindex(dev).is_ok() {
        let err = String::from_utf8_lossy(&out.stderr);
        // No root qdisc of ours left is fine.
        if !err.contains("Cannot delete qdisc with handle of zero") && !err.contains("No such file") {
            bail!("tc qdisc del dev {dev} root: {}", err.trim());
        }
    }
    for f in ["ops", "state", "cfg"] {
        let p = format!("{dir}/{f}");
        if std::path::Path::new(&p).exists() {
            std::fs::remove_file(&p).with_context(|| format!("unpinning {p}"))?;
        }
    }
    std::fs::remove_dir(&dir).with_context(|| format!("removing {dir}"))?;
    Ok(())
}

/// Reads `dev`'s counters, consistently (BPF_F_LOCK).
pub fn port_stats(dev: &str) -> Result<PortStats> {
    let path = format!("{}/state", pin_dir(dev));
    let map = libbpf_rs::MapHandle::from_pinned_path(&path)
        .with_context(|| format!("{dev} is not a port (no {path})"))?;
    let bytes = map
        .lookup(&0u32.to_ne_bytes(), MapFlags::LOCK)
        .context("reading the port's counters")?
        .context("the port's counters are missing")?;
    if bytes.len() < std::mem::size_of::<port_state>() {
        bail!("the port's state map value is {} bytes, expected {}", bytes.len(), std::mem::size_of::<port_state>());
    }
    // SAFETY: `bytes` holds at least one `port_state`, a plain-old-data C
    // struct generated from the object's BTF; read_unaligned copies it out.
    let q: port_state = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
    let s = q.stats;
    Ok(PortStats {
        enq_pkts: s.enq_pkts,
        enq_bytes: s.enq_bytes,
        deq_pkts: s.deq_pkts,
        deq_bytes: s.deq_bytes,
        drops: s.drops,
        qlen_pkts: s.qlen_pkts,
        qlen_bytes: s.qlen_bytes,
        max_qlen_bytes: s.max_qlen_bytes,
        red_above: s.red_above,
        red_above_marked: s.red_above_marked,
        red_below: s.red_below,
        red_between: s.red_between,
        red_between_marked: s.red_between_marked,
    })
}
