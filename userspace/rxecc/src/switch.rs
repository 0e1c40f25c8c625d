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
    /// Congestion experienced (0b11).
    Ce,
    /// TCD's undetermined (0b10), on packets that are not CE.
    Ue,
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
    };
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
