//! Loading, configuring and reading the switch's eBPF programs
//! (`switch-ebpf/`).
//!
//! One instance of `port.bpf.c` serves every port: its qdisc (kind
//! `rxecc_port`, with handle `<port id>:`) and its TC ingress program, with
//! each port's state in its id's slot of the maps, all pinned under
//! `/sys/fs/bpf/rxecc/`; a port's directory `/sys/fs/bpf/rxecc/<dev>/` says
//! that it is one. The marker (`mark.bpf.c`) is a TC egress program, one
//! per port, that reuses the ports' maps at its port's slot.

use anyhow::{bail, Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle, TcHookBuilder, TC_EGRESS, TC_INGRESS};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::path::Path;

pub(crate) mod mark_skel {
    include!(concat!(env!("OUT_DIR"), "/mark.skel.rs"));
}
pub(crate) mod port_skel {
    include!(concat!(env!("OUT_DIR"), "/port.skel.rs"));
}
use mark_skel::MarkSkelBuilder;
use port_skel::types::{
    ingress_acct, ingress_cfg, port_cfg, port_state, rxecc_port_params, rxecc_qlen_hist,
    switch_buf, switch_ports,
};
use port_skel::PortSkelBuilder;

/// Root of everything rxecc pins.
pub const PIN_ROOT: &str = "/sys/fs/bpf/rxecc";
/// Maps shared by all ports, pinned under [`PIN_ROOT`].
const SHARED_MAPS: [&str; 6] = [
    "ingress_cfg",
    "ingress_acct",
    "switch_buf",
    "switch_ports",
    "int_deq",
    "events",
];
/// Where each switch port's ifindex is remembered (bpffs holds no files).
const IFINDEX_DIR: &str = "/run/rxecc/ifindex";
/// Each port's id (its slot in the shared `int_deq` map), by device name.
const PORT_ID_DIR: &str = "/run/rxecc/portid";
/// Port ids are 1..MAX_PORTS (`RXECC_MAX_PORTS`); 0 means none.
const MAX_PORTS: u32 = 256;
/// How many switches the shared buffer map holds.
pub const MAX_SWITCHES: u32 = 16;

/// What the marker writes on ECN-capable RoCEv2 packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
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
    fn code(self) -> u32 {
        match self {
            MarkMode::Off => 0,
            MarkMode::Ce => 1,
            MarkMode::Ue => 2,
            MarkMode::Red => 3,
            MarkMode::Tcd => 4,
        }
    }
}

/// Whether `dev` exists in the calling thread's network namespace, from
/// /proc/thread-self/net/dev. Asked first because `if_nametoindex` on a
/// missing name makes the kernel try to load a module `netdev-<name>`: a
/// modprobe run, 0.4 s each under TCG, for every port of a testbed that
/// `down` has already deleted.
pub fn dev_exists(dev: &str) -> bool {
    std::fs::read_to_string("/proc/thread-self/net/dev").is_ok_and(|t| {
        t.lines()
            .skip(2)
            .any(|l| l.split_once(':').is_some_and(|(n, _)| n.trim() == dev))
    })
}

/// The interface index of `dev` in this process's network namespace.
pub fn ifindex(dev: &str) -> Result<u32> {
    if !dev_exists(dev) {
        bail!("no network device '{dev}' in this network namespace");
    }
    let name = std::ffi::CString::new(dev).context("device name contains NUL")?;
    // SAFETY: `name` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if idx == 0 {
        bail!("no network device '{dev}' in this network namespace");
    }
    Ok(idx)
}

/// Moves this process into network namespace `name` (`ip netns` naming).
pub fn enter_netns(name: &str) -> Result<()> {
    let path = format!("/run/netns/{name}");
    let f = std::fs::File::open(&path)
        .with_context(|| format!("no network namespace '{name}' ({path})"))?;
    use std::os::fd::AsRawFd;
    // SAFETY: `f` is an open namespace file descriptor for the whole call.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("entering network namespace '{name}'"));
    }
    Ok(())
}

/// libbpf's messages, less the kernel's notice that a clsact qdisc exists
/// already, which `TcHook::create` expects and treats as success.
fn libbpf_print(level: libbpf_rs::PrintLevel, msg: String) {
    if level != libbpf_rs::PrintLevel::Debug && !msg.contains("Exclusivity flag on") {
        eprint!("{msg}");
    }
    // With RXECC_VERIFIER_STATS set, the verifier's own summary of each
    // program it loaded: "prog 'x': ... processed N insns ... verification
    // time N usec", one line per program.
    if level == libbpf_rs::PrintLevel::Debug && msg.contains("verification time") {
        let name = msg.split('\'').nth(1).unwrap_or("?");
        let facts: Vec<&str> = msg
            .lines()
            .filter(|l| l.starts_with("processed ") || l.starts_with("verification time"))
            .collect();
        eprintln!("rxecc: verifier: {name}: {}", facts.join("; "));
    }
}

/// True if RXECC_VERIFIER_STATS asks for the verifier's statistics.
fn verifier_stats_wanted() -> bool {
    std::env::var_os("RXECC_VERIFIER_STATS").is_some()
}

/// Routes libbpf's messages to [`libbpf_print`]: its debug messages too
/// when RXECC_VERIFIER_STATS is set, as they carry the verifier's log.
fn set_libbpf_print() {
    let level = if verifier_stats_wanted() {
        libbpf_rs::PrintLevel::Debug
    } else {
        libbpf_rs::PrintLevel::Info
    };
    libbpf_rs::set_print(Some((level, libbpf_print)));
}

/// The verifier's statistics (BPF_LOG_STATS) for every program of `obj`,
/// printed by [`libbpf_print`], when RXECC_VERIFIER_STATS is set: where
/// `rxecc testbed up`'s time goes.
fn verifier_stats(obj: &mut libbpf_rs::OpenObject) {
    const BPF_LOG_STATS: u32 = 4;
    if !verifier_stats_wanted() {
        return;
    }
    for mut prog in obj.progs_mut() {
        prog.set_log_level(BPF_LOG_STATS);
    }
}

/// Views a plain-old-data value as bytes, for a map update.
fn pod_bytes<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: `T` is a `Copy` C struct generated from BTF (no padding is
    // read as anything but bytes, and no references are formed to it).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// Reads a plain-old-data value out of map bytes.
fn from_bytes<T: Copy>(bytes: &[u8], what: &str) -> Result<T> {
    if bytes.len() < std::mem::size_of::<T>() {
        bail!(
            "{what}: map value is {} bytes, expected {}",
            bytes.len(),
            std::mem::size_of::<T>()
        );
    }
    // SAFETY: `bytes` holds at least one `T`, a plain-old-data C struct
    // generated from the object's BTF; read_unaligned copies it out.
    Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) })
}

fn pinned(path: &str, what: &str) -> Result<MapHandle> {
    MapHandle::from_pinned_path(path).with_context(|| format!("{what} (no {path})"))
}

/// bpffs directory of a port's pinned objects.
fn pin_dir(dev: &str) -> String {
    format!("{PIN_ROOT}/{dev}")
}

/// One of the ports' maps (pinned by [`load_port_object`]) and `dev`'s key
/// in it, its port id.
fn port_slot(dev: &str, map: &str) -> Result<(MapHandle, [u8; 4])> {
    let id = port_id(dev)
        .filter(|_| is_port(dev))
        .with_context(|| format!("{dev} is not a port"))?;
    Ok((
        pinned(&obj_pin(map), "the ports' programs are not loaded")?,
        id.to_ne_bytes(),
    ))
}

/// True if `dev` is an emulated port.
pub fn is_port(dev: &str) -> bool {
    Path::new(&pin_dir(dev)).exists()
}

/// Makes sure `rxecc_switch.ko` (the PFC kfuncs) is loaded: the port's
/// programs cannot load without it. Looks for the module next to the
/// source tree this binary was built from, or at `$RXECC_SWITCH_KO`.
pub fn ensure_switch_module() -> Result<()> {
    if Path::new("/sys/module/rxecc_switch").exists() {
        return Ok(());
    }
    let ko = std::env::var("RXECC_SWITCH_KO").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../switch-ebpf/kmod/rxecc_switch.ko"
        )
        .into()
    });
    if !Path::new(&ko).exists() {
        bail!("rxecc_switch.ko is not loaded and {ko} does not exist: run `make modules`");
    }
    let out = std::process::Command::new("insmod")
        .arg(&ko)
        .output()
        .context("running insmod")?;
    if !out.status.success() {
        bail!(
            "insmod {ko}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Attaches the marker to `dev`'s TC egress in `mode`, replacing any marker
/// already there; `Off` removes it. On a port, the marker shares the port's
/// queue, pause state and thresholds; on a plain device only the CE and UE
/// fixtures make sense. The filter stays after this process exits.
pub fn attach_marker(dev: &str, mode: MarkMode) -> Result<()> {
    ifindex(dev)?;
    let mut storage = MaybeUninit::uninit();
    let skel = load_marker(&mut storage, dev, mode)?;
    attach_loaded_marker(dev, mode, skel)
}

/// A marker's program, loaded but not attached: what [`load_markers`]
/// returns.
pub type LoadedMarker<'obj> = mark_skel::MarkSkel<'obj>;

/// Loads the markers of several ports (`(dev, mode)`, each already a port),
/// on every CPU as [`load_ports`] does, for [`attach_loaded_marker`].
pub fn load_markers<'obj>(
    storage: &'obj mut [MaybeUninit<libbpf_rs::OpenObject>],
    marks: &[(&str, MarkMode)],
) -> Result<Vec<LoadedMarker<'obj>>> {
    if storage.len() != marks.len() {
        bail!(
            "load_markers: {} object slots for {} markers",
            storage.len(),
            marks.len()
        );
    }
    let items: Vec<_> = storage.iter_mut().zip(marks).collect();
    on_all_cpus(items, |(slot, (dev, mode))| load_marker(slot, dev, *mode))
}

/// Opens and loads mark.bpf.o for `dev`, on the port's maps if it is one.
fn load_marker<'obj>(
    storage: &'obj mut MaybeUninit<libbpf_rs::OpenObject>,
    dev: &str,
    mode: MarkMode,
) -> Result<LoadedMarker<'obj>> {
    set_libbpf_print();
    let mut open = MarkSkelBuilder::default()
        .open(storage)
        .context("opening mark.bpf.o")?;
    verifier_stats(open.open_object_mut());
    if let Some(id) = port_id(dev).filter(|_| is_port(dev)) {
        open.maps
            .port_state
            .reuse_pinned_map(obj_pin("port_state"))
            .context("reusing the ports' state")?;
        open.maps
            .port_cfg
            .reuse_pinned_map(obj_pin("port_cfg"))
            .context("reusing the ports' configuration")?;
        open.maps
            .rodata_data
            .as_deref_mut()
            .context("mark.bpf.o has no .rodata")?
            .port_id = id;
    } else if matches!(mode, MarkMode::Red | MarkMode::Tcd) {
        bail!(
            "{dev} is not a port: {mode:?} marks need the port's queue (`rxecc port attach` first)"
        );
    }
    open.load()
        .context("loading mark.bpf.o (is this the testbed kernel, and are you root?)")
}

/// Attaches a loaded marker to `dev`'s TC egress in `mode`, replacing any
/// marker already there; `Off` removes it.
pub fn attach_loaded_marker(dev: &str, mode: MarkMode, skel: LoadedMarker<'_>) -> Result<()> {
    let idx = ifindex(dev)? as i32;
    let port = is_port(dev);
    let mut hook = TcHookBuilder::new(skel.progs.mark_egress.as_fd())
        .ifindex(idx)
        .replace(true)
        .handle(1)
        .priority(1)
        .hook(TC_EGRESS);
    if mode == MarkMode::Off {
        // Nothing attached is fine.
        let _ = hook.detach();
        if port {
            update_port_cfg(dev, |c| c.mark_mode = 0)?;
        }
        return Ok(());
    }
    // The port's slot of the ports' map, or slot 0 of the marker's own.
    let id = if port { port_id(dev).unwrap_or(0) } else { 0 };
    update_cfg_map(&skel.maps.port_cfg, id, |c| c.mark_mode = mode.code())
        .context("setting the mark mode")?;
    hook.create()
        .with_context(|| format!("creating clsact on {dev}"))?;
    hook.attach()
        .with_context(|| format!("attaching the marker to {dev} egress"))?;
    Ok(())
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
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            rate_mbps: 100,
            limit_pkts: 10_000,
            burst_us: default_burst_us(),
            delay_us: 0,
            pfc_class: 3,
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

/// The qdisc kind every port is (port.bpf.c's Qdisc_ops id).
const PORT_KIND: &str = "rxecc_port";
/// The one loaded instance of port.bpf.c, pinned under [`PIN_ROOT`]: its
/// struct_ops link (which keeps [`PORT_KIND`] registered), its TC ingress
/// program, and the maps that only it may use: the queues hold its own
/// objects (`bpf_obj_new`), which another load's programs could not take.
/// The link comes last: while it is pinned, so is the rest.
const OBJ_PINS: [&str; 8] = [
    "port_ingress",
    "port_state",
    "port_cfg",
    "qlen_hist",
    "pacer",
    "data_q",
    "ctl_q",
    "port_ops",
];

/// The map of [`SHARED_MAPS`] named `name` in a port skeleton's maps, open
/// or loaded (their types differ, their field names do not).
macro_rules! shared_map {
    ($maps:expr, $name:expr) => {
        match $name {
            "ingress_cfg" => &mut $maps.ingress_cfg,
            "ingress_acct" => &mut $maps.ingress_acct,
            "int_deq" => &mut $maps.int_deq,
            "events" => &mut $maps.events,
            "switch_ports" => &mut $maps.switch_ports,
            _ => &mut $maps.switch_buf,
        }
    };
}

fn obj_pin(name: &str) -> String {
    format!("{PIN_ROOT}/{name}")
}

/// Loads switch-ebpf/port.bpf.c once for every port (registers qdisc kind
/// `rxecc_port`) and pins it, reusing the maps every port shares or
/// pinning them if they are new; nothing to do if it is loaded already.
/// The load (the verifier's) took 0.4 s of CPU under TCG, 14 to 17 s on
/// the debug kernel, and was once done for every port.
pub fn load_port_object() -> Result<()> {
    if Path::new(&obj_pin("port_ops")).exists() {
        return Ok(());
    }
    set_libbpf_print();
    ensure_switch_module()?;
    // Pins of a load cut short before its link was pinned.
    for name in OBJ_PINS {
        let _ = std::fs::remove_file(obj_pin(name));
    }
    let mut storage = MaybeUninit::uninit();
    let mut open = PortSkelBuilder::default()
        .open(&mut storage)
        .context("opening port.bpf.o")?;
    verifier_stats(open.open_object_mut());
    let mut fresh = Vec::new();
    for name in SHARED_MAPS {
        let path = obj_pin(name);
        let map = shared_map!(open.maps, name);
        if Path::new(&path).exists() {
            map.reuse_pinned_map(&path)
                .with_context(|| format!("reusing {path}"))?;
        } else {
            fresh.push(name);
        }
    }
    let mut skel = open
        .load()
        .context("loading port.bpf.o (is this the testbed kernel, and are you root?)")?;
    std::fs::create_dir_all(PIN_ROOT)
        .with_context(|| format!("creating {PIN_ROOT} (is bpffs mounted?)"))?;
    for name in fresh {
        let path = obj_pin(name);
        let map = shared_map!(skel.maps, name);
        map.pin(&path).with_context(|| format!("pinning {path}"))?;
    }
    skel.progs
        .port_ingress
        .pin(obj_pin("port_ingress"))
        .context("pinning the ports' ingress program")?;
    for (name, map) in [
        ("port_state", &mut skel.maps.port_state),
        ("port_cfg", &mut skel.maps.port_cfg),
        ("qlen_hist", &mut skel.maps.qlen_hist),
        ("pacer", &mut skel.maps.pacer),
        ("data_q", &mut skel.maps.data_q),
        ("ctl_q", &mut skel.maps.ctl_q),
    ] {
        map.pin(obj_pin(name))
            .with_context(|| format!("pinning {}", obj_pin(name)))?;
    }
    let mut link = skel
        .maps
        .port
        .attach_struct_ops()
        .context("registering the ports' Qdisc_ops")?;
    link.pin(obj_pin("port_ops"))
        .context("pinning the struct_ops link")?;
    Ok(())
}

/// `f` on each item, the items shared out in order among as many threads
/// as there are CPUs; the results in the items' order, or the first error.
fn on_all_cpus<I: Send, R: Send>(
    items: Vec<I>,
    f: impl Fn(I) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = items.len().div_ceil(threads).max(1);
    let mut chunks: Vec<Vec<I>> = Vec::new();
    for item in items {
        match chunks.last_mut() {
            Some(c) if c.len() < per_thread => c.push(item),
            _ => chunks.push(vec![item]),
        }
    }
    let f = &f;
    let done: Vec<Result<Vec<R>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| sc.spawn(move || chunk.into_iter().map(f).collect::<Result<Vec<R>>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a loading thread panicked")))
            })
            .collect()
    });
    let mut out = Vec::new();
    for d in done {
        out.extend(d?);
    }
    Ok(out)
}

/// Unpins the loaded port.bpf.c once no port uses it, so that it is
/// freed (and rxecc_switch.ko, whose kfuncs it calls, can be unloaded).
/// The maps every port shares stay, as they did with a load per port.
fn unload_port_object_if_unused() -> Result<()> {
    if !ports().is_empty() {
        return Ok(());
    }
    // The link first: without it the rest is a load cut short.
    for name in OBJ_PINS.iter().rev() {
        let path = obj_pin(name);
        if Path::new(&path).exists() {
            std::fs::remove_file(&path).with_context(|| format!("unpinning {path}"))?;
        }
    }
    Ok(())
}

/// Makes `dev` an emulated port: loads port.bpf.c if no port has yet
/// ([`load_port_object`]), gives `dev` a port id and that slot's
/// configuration, installs a qdisc of kind `rxecc_port` with handle
/// `<id>:` as `dev`'s root and attaches the PFC receiver to its TC
/// ingress. An existing port on `dev` is replaced.
pub fn attach_port(dev: &str, cfg: &PortConfig) -> Result<()> {
    ifindex(dev)?;
    load_port_object()?;
    attach_loaded_port(dev, cfg)
}

/// Makes `dev` (in the calling thread's network namespace) a port, with
/// port.bpf.c loaded already ([`load_port_object`]), replacing any port
/// already there.
pub fn attach_loaded_port(dev: &str, cfg: &PortConfig) -> Result<()> {
    if cfg.rate_mbps == 0 {
        bail!("a port needs a rate above 0 Mb/s");
    }
    if cfg.pfc_class > 7 {
        bail!("PFC classes are 0..7, not {}", cfg.pfc_class);
    }
    let idx = ifindex(dev)?;
    remove_port(dev)?;
    let ingress = libbpf_rs::Program::fd_from_pinned_path(obj_pin("port_ingress"))
        .context("the ports' programs are not loaded (load_port_object)")?;
    // The slot starts afresh (an earlier port may have held it), and the
    // link configuration is in place before the qdisc's first packet.
    let port_id = alloc_port_id(dev)?;
    let dir = pin_dir(dev);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {dir}"))?;
    let key = port_id.to_ne_bytes();
    // SAFETY: plain-old-data C structs generated from BTF; zeroes are valid.
    let (zero_state, zero_hist): (port_state, rxecc_qlen_hist) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    pinned(&obj_pin("port_state"), "the ports' counters")?
        .update(&key, pod_bytes(&zero_state), MapFlags::ANY)
        .context("clearing the port's counters")?;
    pinned(&obj_pin("qlen_hist"), "the ports' queue histograms")?
        .update(&key, pod_bytes(&zero_hist), MapFlags::ANY)
        .context("clearing the port's queue histogram")?;
    update_cfg_map(
        &pinned(&obj_pin("port_cfg"), "the ports' configuration")?,
        port_id,
        |pc| {
            // SAFETY: plain-old-data; zeroes are valid.
            *pc = unsafe { std::mem::zeroed() };
            pc.rate_bps = cfg.rate_mbps.saturating_mul(1_000_000);
            pc.delay_ns = cfg.delay_us.saturating_mul(1000);
            pc.pfc_class = cfg.pfc_class;
            pc.port_id = port_id;
            pc.limit_pkts = cfg.limit_pkts;
            pc.burst_ns = cfg.burst_us.saturating_mul(1000);
            pc.ifindex = idx;
        },
    )?;
    let major = u16::try_from(port_id).context("port id above 65535")?;
    if let Err(e) =
        crate::netlink::Net::open().and_then(|n| n.replace_root_qdisc(idx, major, PORT_KIND))
    {
        let _ = remove_port(dev);
        return Err(e).with_context(|| format!("making {PORT_KIND} the root qdisc of {dev}"));
    }
    let mut hook = TcHookBuilder::new(ingress.as_fd())
        .ifindex(idx as i32)
        .replace(true)
        .handle(1)
        .priority(1)
        .hook(TC_INGRESS);
    hook.create()
        .with_context(|| format!("creating clsact on {dev}"))?;
    if let Err(e) = hook.attach() {
        let _ = remove_port(dev);
        return Err(e).with_context(|| format!("attaching the PFC receiver to {dev} ingress"));
    }
    Ok(())
}

/// Removes the port (and any marker) from `dev`; nothing to do if there is
/// none. Its ingress accounting entry goes too, and port.bpf.c is unloaded
/// once no port is left.
pub fn detach_port(dev: &str) -> Result<()> {
    remove_port(dev)?;
    unload_port_object_if_unused()
}

/// [`detach_port`] but for the unload: what replacing a port does first.
fn remove_port(dev: &str) -> Result<()> {
    let dir = pin_dir(dev);
    if !Path::new(&dir).exists() {
        return Ok(());
    }
    if let Ok(idx) = ifindex(dev) {
        let net = crate::netlink::Net::open()?;
        // No root qdisc of ours left is fine (del_qdisc: false).
        net.del_qdisc(idx, false)
            .with_context(|| format!("removing the port from {dev}"))?;
        // Removes the PFC receiver and the marker with it.
        let _ = net.del_qdisc(idx, true);
    }
    let idx_file = format!("{IFINDEX_DIR}/{dev}");
    if let Ok(idx) =
        std::fs::read_to_string(&idx_file).map(|s| s.trim().parse::<u32>().unwrap_or(0))
    {
        // Packets that entered here may still wait in other ports' queues,
        // charged to this account: deleting it now would let their release
        // go unmatched. Keep it (and its thresholds, which its XON needs)
        // until it drains; a later `set_ingress` reuses it as it is.
        let held = ingress_stats(idx).ok().flatten().map_or(0, |i| i.bytes);
        if held > 0 {
            eprintln!(
                "{dev}: keeping its ingress account: {held} B that entered here are still queued"
            );
        } else {
            for name in ["ingress_cfg", "ingress_acct"] {
                if let Ok(map) = MapHandle::from_pinned_path(format!("{PIN_ROOT}/{name}")) {
                    let _ = map.delete(&idx.to_ne_bytes());
                }
            }
            let _ = std::fs::remove_file(&idx_file);
        }
    }
    let _ = std::fs::remove_file(format!("{PORT_ID_DIR}/{dev}"));
    std::fs::remove_dir(&dir).with_context(|| format!("removing {dir}"))?;
    Ok(())
}

/// The id of port `dev` (its slot in `int_deq`), if it is a port.
pub fn port_id(dev: &str) -> Option<u32> {
    std::fs::read_to_string(format!("{PORT_ID_DIR}/{dev}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Gives `dev` the lowest port id no other port holds (its own, if it has
/// one already).
fn alloc_port_id(dev: &str) -> Result<u32> {
    std::fs::create_dir_all(PORT_ID_DIR).with_context(|| format!("creating {PORT_ID_DIR}"))?;
    if let Some(id) = port_id(dev) {
        return Ok(id);
    }
    let used: Vec<u32> = std::fs::read_dir(PORT_ID_DIR)
        .with_context(|| format!("reading {PORT_ID_DIR}"))?
        .filter_map(|e| {
            std::fs::read_to_string(e.ok()?.path())
                .ok()?
                .trim()
                .parse()
                .ok()
        })
        .collect();
    let Some(id) = (1..MAX_PORTS).find(|i| !used.contains(i)) else {
        bail!("{dev}: all {} port ids are taken", MAX_PORTS - 1);
    };
    let f = format!("{PORT_ID_DIR}/{dev}");
    std::fs::write(&f, id.to_string()).with_context(|| format!("writing {f}"))?;
    Ok(id)
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

/// Removes the shared maps once no port is left.
pub fn remove_shared_maps() -> Result<()> {
    for name in SHARED_MAPS {
        let p = format!("{PIN_ROOT}/{name}");
        if Path::new(&p).exists() {
            std::fs::remove_file(&p).with_context(|| format!("unpinning {p}"))?;
        }
    }
    Ok(())
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

/// Time-based GFC's settings for a link (GFC §5.3): the receiver's B_m, the
/// B_0 below which the sender runs at C, and the advertisement period T.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GfcTime {
    pub bm_bytes: u64,
    pub b0_bytes: u64,
    pub period_ns: u64,
}

impl GfcTime {
    /// Settings for a link of `rate_bps` with feedback latency `tau_us`:
    /// T as given, or InfiniBand's default, the time to send 65535 bytes;
    /// B_0 as given, or the highest Theorem 5.1 allows,
    /// B_0 = B_m - (sqrt(tau / T) + 1)^2 C T. An error if it cannot hold.
    pub fn new(
        bm_bytes: u64,
        b0_bytes: Option<u64>,
        period_us: Option<u64>,
        rate_bps: u64,
        tau_us: u64,
    ) -> Result<Self> {
        if rate_bps == 0 {
            bail!("GFC needs a link rate above 0");
        }
        let period_ns = match period_us {
            Some(us) => us.saturating_mul(1000),
            None => 65_535u64.saturating_mul(8_000_000_000) / rate_bps,
        };
        if period_ns == 0 {
            bail!("time-based GFC needs an advertisement period above 0");
        }
        // Userspace arithmetic, once per link: floating point is fine here.
        let t = period_ns as f64 / 1e9;
        let ct = rate_bps as f64 / 8.0 * t;
        let need = ((tau_us as f64 / 1e6 / t).sqrt() + 1.0).powi(2) * ct;
        let max_b0 = bm_bytes as f64 - need;
        if max_b0 < 1.0 {
            bail!(
                "time-based GFC needs B_0 <= B_m - (sqrt(tau/T) + 1)^2 * C * T, and B_m = {bm_bytes} B \
                 leaves no room: that term is {need:.0} B (tau = {tau_us} us, T = {} us, {} Mb/s)",
                period_ns / 1000,
                rate_bps / 1_000_000
            );
        }
        let b0 = b0_bytes.unwrap_or(max_b0 as u64);
        if b0 == 0 || b0 as f64 > max_b0 {
            bail!(
                "time-based GFC needs 0 < B_0 <= B_m - (sqrt(tau/T) + 1)^2 * C * T = {max_b0:.0} B \
                 (tau = {tau_us} us, T = {} us), not {b0} B",
                period_ns / 1000
            );
        }
        Ok(GfcTime {
            bm_bytes,
            b0_bytes: b0,
            period_ns,
        })
    }
}

/// GFC's deepest stage (port.h's `RXECC_GFC_MAX_STAGES`).
pub const GFC_MAX_STAGES: u32 = 24;

/// Buffer-based GFC's thresholds for an ingress port: B_1, B_m, and the
/// number of stages N (GFC §5.2: B_k = B_m - (B_m - B_1) / 2^(k-1), rate
/// C / 2^k). The paper adds stages until two are at most a byte apart; a
/// queue that moves a whole frame at a time cannot tell apart stages
/// closer than a frame, and one frame would jump it to a last stage whose
/// rate is next to zero (C / 2^16 for the paper's N): ON/OFF again, which
/// is what GFC must avoid. So stages stop at `step_bytes` apart, the
/// largest frame (1 reproduces the paper's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GfcThresholds {
    pub b1_bytes: u64,
    pub bm_bytes: u64,
    pub stages: u32,
}

impl GfcThresholds {
    /// Thresholds for a port of rate `rate_bps` with feedback latency
    /// `tau_us`: B_1 as given, or the highest the paper's condition allows,
    /// B_1 = B_m - 2 C tau. An error if the condition cannot hold.
    pub fn new(
        bm_bytes: u64,
        b1_bytes: Option<u64>,
        rate_bps: u64,
        tau_us: u64,
        step_bytes: u64,
    ) -> Result<Self> {
        // 2 C tau, in bytes: what arrives in the round trip of a feedback.
        let headroom = rate_bps
            .saturating_mul(tau_us)
            .saturating_mul(2)
            .div_ceil(8_000_000);
        let Some(max_b1) = bm_bytes.checked_sub(headroom).filter(|b| *b > 0) else {
            bail!(
                "GFC needs B_1 <= B_m - 2*C*tau, and B_m = {bm_bytes} B leaves no room: \
                 2*C*tau is {headroom} B at {} Mb/s and tau = {tau_us} us",
                rate_bps / 1_000_000
            );
        };
        let b1 = b1_bytes.unwrap_or(max_b1);
        if b1 == 0 || b1 > max_b1 {
            bail!(
                "GFC needs 0 < B_1 <= B_m - 2*C*tau = {bm_bytes} - {headroom} = {max_b1} B \
                 (tau = {tau_us} us at {} Mb/s), not {b1} B",
                rate_bps / 1_000_000
            );
        }
        let d1 = bm_bytes - b1;
        // The smallest N with (B_m - B_1) / 2^(N-1) <= step.
        let step = step_bytes.max(1);
        let stages = (1..=GFC_MAX_STAGES)
            .find(|n| d1 <= step.saturating_mul(1u64 << (n - 1)))
            .unwrap_or(GFC_MAX_STAGES);
        Ok(GfcThresholds {
            b1_bytes: b1,
            bm_bytes,
            stages,
        })
    }

    /// The stage of an ingress queue of `q` bytes (port.bpf.c's
    /// gfc_stage_of(), for tests and docs).
    pub fn stage_of(&self, q: u64) -> u32 {
        if q < self.b1_bytes || self.bm_bytes <= self.b1_bytes {
            return 0;
        }
        let (d1, left) = (
            self.bm_bytes - self.b1_bytes,
            self.bm_bytes.saturating_sub(q),
        );
        (1..self.stages.min(GFC_MAX_STAGES))
            .take_while(|i| left <= d1 >> i)
            .last()
            .map_or(1, |i| i + 1)
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

/// A consistent snapshot of a port's counters (each map read under its lock).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PortStats {
    pub dev: String,
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
    pub tcd_ce: u64,
    pub tcd_ue: u64,
    pub tcd_none: u64,
    pub pfc_rx_xoff: u64,
    pub pfc_rx_xon: u64,
    /// PFC frames ignored as older than one already obeyed.
    pub pfc_rx_stale: u64,
    /// MAC control frames dropped as malformed, and PFC frames for classes
    /// the port does not carry.
    pub pfc_rx_bad: u64,
    pub pfc_rx_other: u64,
    pub pause_expired: u64,
    pub paused_ns: u64,
    pub paused: u64,
    pub tau_n: u64,
    pub tau_mean_ns: u64,
    pub tau_max_ns: u64,
    /// Now minus the peer's stamp, averaged over every sample, those
    /// whose stamp was ahead of this clock included: tau plus the peer's
    /// clock offset, when the peer is another machine (docs/vms.md).
    pub tau_raw_mean_ns: i64,
    /// Samples whose stamp was ahead of this clock (not in tau_n).
    pub tau_early_n: u64,
    pub ctl_pkts: u64,
    pub stalls: u64,
    pub stall_ns: u64,
    /// Link time lost to late dequeues beyond the pacer's catch-up credit,
    /// while a packet waited free to go: the port ran this much below its
    /// rate.
    pub late_ns: u64,
    /// Bytes of the queue that an ideal link of the port's rate would
    /// have sent by now (late_ns while they waited); TCD discounts them.
    pub lag_bytes: u64,
    /// Releases more than one packet ahead of an ideal link of the port's
    /// rate fed with the same releases (the physical invariant; 0 unless
    /// the pacing credit is larger than a packet), and the most time
    /// beyond that packet.
    pub rate_violations: u64,
    pub rate_violation_max_ns: u64,
    /// Arrivals from the link peer faster than the link's rate allows (an
    /// upstream catch-up burst), and TCD decisions re-based on them.
    pub compressed_pkts: u64,
    pub tcd_compressed: u64,
    /// INT records this port's ingress wrote, hops that found the shim
    /// full, and flagged packets it left alone as not ours.
    pub int_stamped: u64,
    pub int_overflow: u64,
    pub int_bad: u64,
    /// ICC: ACKs left without feedback (queue draining at low utilisation).
    pub int_quiet: u64,
    /// PFC events (pfc.txt) the shared ring buffer had no room for.
    pub events_lost: u64,
    /// GFC obeyed: the stage now (rate C >> stage), frames received, the
    /// highest stage, and the time spent below the full rate.
    pub gfc_stage: u64,
    pub gfc_rx: u64,
    pub gfc_max_stage: u64,
    pub gfc_limited_ns: u64,
    /// Time-based GFC: dequeues that found no credit left.
    pub gfc_credit_waits: u64,
    /// Time-based GFC: packets sent below the full rate, the credit at
    /// the last advertisement being under the span that maps to it.
    pub gfc_credit_slowed: u64,
    /// Time-based GFC: the rate the last advertisement set, held until the
    /// next (b/s).
    pub gfc_rate_bps: u64,
    /// As an ingress port of a switch (absent on host NICs).
    pub ingress: Option<IngressStats>,
}

/// A switch port's ingress accounting and the PFC frames it sent.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct IngressStats {
    pub switch_id: u32,
    pub bytes: u64,
    pub max_bytes: u64,
    pub pkts: u64,
    pub xoff_active: u64,
    pub pfc_tx_xoff: u64,
    pub pfc_tx_xon: u64,
    pub pfc_tx_refresh: u64,
    pub pfc_tx_failed: u64,
    /// Releases of more bytes than the account held (clamped at 0).
    pub underflows: u64,
    /// GFC sent: the stage last sent, frames, the highest stage sent.
    pub gfc_stage: u64,
    pub gfc_tx: u64,
    pub gfc_max_stage: u64,
}

/// A switch's shared buffer.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct BufferStats {
    pub switch_id: u32,
    pub used_bytes: u64,
    pub max_used_bytes: u64,
    pub drops: u64,
    /// Releases of more bytes than the buffer held (clamped at 0).
    pub underflows: u64,
}

/// Reads `dev`'s counters, consistently (BPF_F_LOCK).
pub fn port_stats(dev: &str) -> Result<PortStats> {
    let (map, key) = port_slot(dev, "port_state")?;
    let bytes = map
        .lookup(&key, MapFlags::LOCK)
        .context("reading the port's counters")?
        .context("the port's counters are missing")?;
    let s = from_bytes::<port_state>(&bytes, "port_state")?.stats;
    let ingress = match std::fs::read_to_string(format!("{IFINDEX_DIR}/{dev}")) {
        Ok(idx) => ingress_stats(idx.trim().parse().unwrap_or(0))?,
        Err(_) => None,
    };
    Ok(PortStats {
        dev: dev.to_string(),
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
        tcd_ce: s.tcd_ce,
        tcd_ue: s.tcd_ue,
        tcd_none: s.tcd_none,
        pfc_rx_xoff: s.pfc_rx_xoff,
        pfc_rx_xon: s.pfc_rx_xon,
        pfc_rx_stale: s.pfc_rx_stale,
        pfc_rx_bad: s.pfc_rx_bad,
        pfc_rx_other: s.pfc_rx_other,
        pause_expired: s.pause_expired,
        paused_ns: s.paused_ns,
        paused: s.paused,
        tau_n: s.tau_n,
        tau_mean_ns: s.tau_sum_ns.checked_div(s.tau_n).unwrap_or(0),
        tau_max_ns: s.tau_max_ns,
        tau_raw_mean_ns: {
            let n = i128::from(s.tau_n) + i128::from(s.tau_early_n);
            let sum = i128::from(s.tau_sum_ns) - i128::from(s.tau_early_sum_ns);
            i64::try_from(sum.checked_div(n).unwrap_or(0)).unwrap_or(0)
        },
        tau_early_n: s.tau_early_n,
        ctl_pkts: s.ctl_pkts,
        stalls: s.stalls,
        stall_ns: s.stall_ns,
        late_ns: s.late_ns,
        lag_bytes: s.lag_bytes,
        rate_violations: s.rate_viol,
        rate_violation_max_ns: s.rate_viol_max_ns,
        compressed_pkts: s.compressed_pkts,
        tcd_compressed: s.tcd_compressed,
        int_stamped: s.int_stamped,
        int_overflow: s.int_overflow,
        int_bad: s.int_bad,
        int_quiet: s.int_quiet,
        events_lost: s.events_lost,
        gfc_stage: s.gfc_stage,
        gfc_rx: s.gfc_rx,
        gfc_max_stage: s.gfc_max_stage,
        gfc_limited_ns: s.gfc_limited_ns,
        gfc_credit_waits: s.gfc_credit_waits,
        gfc_credit_slowed: s.gfc_credit_slowed,
        gfc_rate_bps: s.gfc_rate_bps,
        ingress,
    })
}

/// Reads the egress queue histograms of a set of ports (port.h's
/// `rxecc_qlen_hist`): nanoseconds each queue spent at each length, in
/// 1000-byte bins, all up to one time.
pub struct QlenReader {
    map: MapHandle,
    keys: Vec<[u8; 4]>,
}

impl QlenReader {
    /// The ports must exist now; their slots are resolved once, so that a
    /// read is one lookup per port and nothing else.
    pub fn new(devs: &[String]) -> Result<Self> {
        let mut keys = Vec::new();
        for dev in devs {
            keys.push(port_slot(dev, "qlen_hist")?.1);
        }
        Ok(QlenReader {
            map: pinned(&obj_pin("qlen_hist"), "the ports' programs are not loaded")?,
            keys,
        })
    }

    /// Every port's histogram up to one CLOCK_MONOTONIC time, read before
    /// the ports, and returned with it; bins past a port's last non-zero
    /// one are cut. Each locked lookup is one snapshot of the bins, the
    /// length and time of the last change, and the log of the last
    /// intervals given (port.h). A port that changed after that time,
    /// while the ports were being read (a preempted read takes tens of
    /// ms under TCG), has the intervals after it taken back out; if more
    /// than the log holds came after it, every port is read again, up to
    /// 20 times, after which such a port counts to its last change.
    pub fn read(&self) -> Result<QlenSnapshot> {
        let mut tries = 0;
        loop {
            tries += 1;
            let now_ns = crate::record::monotonic_ns();
            let mut raws = Vec::with_capacity(self.keys.len());
            for key in &self.keys {
                raws.push(
                    self.map
                        .lookup(key, MapFlags::LOCK)
                        .context("reading a queue-length histogram")?
                        .context("a queue-length histogram is missing")?,
                );
            }
            let window_ns = crate::record::monotonic_ns().saturating_sub(now_ns);
            let mut ports = Vec::with_capacity(raws.len());
            let (mut undone, mut exact) = (0, true);
            for raw in &raws {
                let h: rxecc_qlen_hist = from_bytes(raw, "qlen_hist")?;
                let log: Vec<(u64, u32)> = h.log.iter().map(|iv| (iv.start_ns, iv.bin)).collect();
                let at = qlen_bins_at(&h.ns, h.qlen_bytes, h.since_ns, &log, h.logged, now_ns);
                undone = undone.max(at.undone);
                exact &= at.exact;
                ports.push(at.bins);
            }
            if !exact && tries < 20 {
                continue;
            }
            return Ok(QlenSnapshot {
                now_ns,
                window_ns,
                undone,
                exact,
                tries,
                ports,
            });
        }
    }
}

/// [`qlen_bins_at`]'s answer.
#[derive(Debug, PartialEq, Eq)]
struct BinsAt {
    bins: Vec<u64>,
    /// Intervals taken back out.
    undone: usize,
    /// false: the log did not reach back to the time.
    exact: bool,
}

/// A histogram snapshot's bins up to `t_ns`. The snapshot's bins hold the
/// time up to `since_ns`; `log` is the ring of the last intervals given
/// ((start, bin); the one at `(logged - 1) % len` the newest, ending at
/// `since_ns`, each older one ending where the next began). If `since_ns`
/// is not after `t_ns`, the time from it to `t_ns` is owed to the bin of
/// `qlen_bytes` (below 0 for an instant, port.h, counts as empty; the
/// last bin takes the rest). Otherwise the intervals after `t_ns` are
/// taken back out, newest first. Bins past the last non-zero one are cut.
fn qlen_bins_at(
    ns: &[u64],
    qlen_bytes: i64,
    since_ns: u64,
    log: &[(u64, u32)],
    logged: u64,
    t_ns: u64,
) -> BinsAt {
    let mut bins = ns.to_vec();
    let last = bins.len().saturating_sub(1);
    let (mut undone, mut exact) = (0, true);
    if since_ns <= t_ns {
        let cur = usize::try_from(qlen_bytes.max(0) / 1000).map_or(last, |b| b.min(last));
        if let Some(b) = bins.get_mut(cur) {
            *b = b.saturating_add(t_ns - since_ns);
        }
    } else {
        let mut end = since_ns;
        let logged = usize::try_from(logged).unwrap_or(usize::MAX);
        exact = false;
        // Newest first: entry logged - 1, logged - 2, ... of the ring.
        for k in 1..=logged.min(log.len()) {
            let Some(&(start, bin)) = log.get((logged - k) % log.len()) else {
                break;
            };
            let bin = usize::try_from(bin).map_or(last, |b| b.min(last));
            if let Some(b) = bins.get_mut(bin) {
                *b = b.saturating_sub(end.saturating_sub(start.max(t_ns)));
            }
            undone += 1;
            if start <= t_ns {
                exact = true;
                break;
            }
            end = start;
        }
    }
    while bins.len() > 1 && bins.last() == Some(&0) {
        bins.pop();
    }
    BinsAt {
        bins,
        undone,
        exact,
    }
}

/// [`QlenReader::read`]: per port, ns at each length up to `now_ns`. The
/// reads took `window_ns`, the last of `tries`; at most `undone` intervals
/// of one port were taken back out; `exact` is false if a port's log did
/// not reach back to `now_ns` even at the last try.
pub struct QlenSnapshot {
    pub now_ns: u64,
    pub window_ns: u64,
    pub undone: usize,
    pub exact: bool,
    pub tries: u32,
    pub ports: Vec<Vec<u64>>,
}

/// Bins of [`QlenReader`] (`RXECC_QLEN_BINS`).
pub const QLEN_BINS: u32 = 2048;

/// A PFC frame a port received (port.h's `struct rxecc_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    pub t_ns: u64,
    pub port_id: u32,
    /// true: a pause time; false: 0, a resume.
    pub pause: bool,
    pub quanta: u16,
}

impl PfcEvent {
    fn parse(b: &[u8]) -> Option<Self> {
        Some(PfcEvent {
            t_ns: u64::from_ne_bytes(b.get(0..8)?.try_into().ok()?),
            port_id: u32::from_ne_bytes(b.get(8..12)?.try_into().ok()?),
            pause: u16::from_ne_bytes(b.get(12..14)?.try_into().ok()?) == 1,
            quanta: u16::from_ne_bytes(b.get(14..16)?.try_into().ok()?),
        })
    }
}

/// Collects the PFC frames every port receives from the shared ring
/// buffer, on a thread of its own, until [`PfcEvents::stop`].
pub struct PfcEvents {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Result<Vec<PfcEvent>>>,
}

impl PfcEvents {
    /// Starts reading; events already in the buffer (from before) are
    /// dropped.
    pub fn start() -> Result<Self> {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let map = MapHandle::from_pinned_path(format!("{PIN_ROOT}/events"))
            .context("no PFC event buffer (is a topology up?)")?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || -> Result<Vec<PfcEvent>> {
            let got = Arc::new(Mutex::new(Vec::new()));
            let sink = got.clone();
            let mut b = libbpf_rs::RingBufferBuilder::new();
            b.add(&map, move |data: &[u8]| {
                if let (Some(e), Ok(mut v)) = (PfcEvent::parse(data), sink.lock()) {
                    v.push(e);
                }
                0
            })
            .context("reading the PFC event buffer")?;
            let rb = b.build().context("reading the PFC event buffer")?;
            rb.consume().context("draining the PFC event buffer")?;
            if let Ok(mut v) = got.lock() {
                v.clear();
            }
            while !flag.load(Ordering::Relaxed) {
                rb.poll(std::time::Duration::from_millis(100))
                    .context("polling the PFC event buffer")?;
            }
            rb.consume().context("draining the PFC event buffer")?;
            let v = got
                .lock()
                .map(|mut v| std::mem::take(&mut *v))
                .unwrap_or_default();
            Ok(v)
        });
        Ok(PfcEvents { stop, thread })
    }

    /// Stops reading and returns what was read, in time order.
    pub fn stop(self) -> Result<Vec<PfcEvent>> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut v = self
            .thread
            .join()
            .map_err(|_| anyhow::anyhow!("the PFC event reader panicked"))??;
        v.sort_by_key(|e| e.t_ns);
        Ok(v)
    }
}

fn ingress_stats(idx: u32) -> Result<Option<IngressStats>> {
    let (Ok(acct), Ok(cfg)) = (
        MapHandle::from_pinned_path(format!("{PIN_ROOT}/ingress_acct")),
        MapHandle::from_pinned_path(format!("{PIN_ROOT}/ingress_cfg")),
    ) else {
        return Ok(None);
    };
    let key = idx.to_ne_bytes();
    let (Some(a), Some(c)) = (
        acct.lookup(&key, MapFlags::LOCK)?,
        cfg.lookup(&key, MapFlags::ANY)?,
    ) else {
        return Ok(None);
    };
    let a: ingress_acct = from_bytes(&a, "ingress_acct")?;
    let c: ingress_cfg = from_bytes(&c, "ingress_cfg")?;
    Ok(Some(IngressStats {
        switch_id: c.switch_id,
        bytes: a.bytes,
        max_bytes: a.max_bytes,
        pkts: a.pkts,
        xoff_active: a.xoff_active,
        pfc_tx_xoff: a.pfc_tx_xoff,
        pfc_tx_xon: a.pfc_tx_xon,
        pfc_tx_refresh: a.pfc_tx_refresh,
        pfc_tx_failed: a.pfc_tx_failed,
        underflows: a.underflows,
        gfc_stage: a.gfc_stage,
        gfc_tx: a.gfc_tx,
        gfc_max_stage: a.gfc_max_stage,
    }))
}

/// Reads switch `id`'s shared-buffer counters.
pub fn buffer_stats(id: u32) -> Result<BufferStats> {
    let map = pinned(
        &format!("{PIN_ROOT}/switch_buf"),
        "no switch port is attached",
    )?;
    let b = map
        .lookup(&id.to_ne_bytes(), MapFlags::LOCK)?
        .context("switch id out of range")?;
    let b: switch_buf = from_bytes(&b, "switch_buf")?;
    Ok(BufferStats {
        switch_id: id,
        used_bytes: b.used_bytes,
        max_used_bytes: b.max_used_bytes,
        drops: b.drops,
        underflows: b.underflows,
    })
}

/// Every attached port, by name.
pub fn ports() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(PIN_ROOT)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::qlen_bins_at;

    #[test]
    fn qlen_bins_owe_the_time_since_the_last_change_to_its_length() {
        let at = |ns: &[u64], q, since, t| qlen_bins_at(ns, q, since, &[(0, 0); 4], 0, t).bins;
        // 2500 B queued since t=100: bin 2 gets t - since.
        assert_eq!(at(&[5, 0, 7, 0, 0], 2500, 100, 160), vec![5, 0, 67]);
        // A dequeue's delta before its enqueue's: below 0 is empty.
        assert_eq!(at(&[5, 0, 0], -1500, 100, 130), vec![35]);
        // Longer than the bins: the last bin.
        assert_eq!(at(&[1, 1, 1], 9_000_000, 0, 10), vec![1, 1, 11]);
        // An idle, empty port keeps one bin.
        assert_eq!(at(&[0, 0], 0, 0, 0), vec![0]);
    }

    #[test]
    fn qlen_bins_take_back_the_intervals_after_the_time() {
        // Intervals [0, 100) at bin 0, [100, 150) at bin 1, [150, 190) at
        // bin 2; the last change at 190. A log of 4, 3 given, in slots 0-2.
        let ns = [100, 50, 40];
        let log = [(0, 0), (100, 1), (150, 2), (0, 0)];
        let got = qlen_bins_at(&ns, 0, 190, &log, 3, 120);
        assert_eq!(got.bins, vec![100, 20]);
        assert_eq!((got.undone, got.exact), (2, true));
        // The same, the ring wrapped: 5 given, the newest in slot 0.
        let ring = [(150, 2), (7, 7), (0, 0), (100, 1)];
        let got = qlen_bins_at(&ns, 0, 190, &ring, 5, 120);
        assert_eq!(got.bins, vec![100, 20]);
        // At an interval's start: all of it goes.
        assert_eq!(qlen_bins_at(&ns, 0, 190, &ring, 5, 150).bins, vec![100, 50]);
        // Further back than the log reaches (2 given): not exact.
        let got = qlen_bins_at(&ns, 0, 190, &[(100, 1), (150, 2), (0, 0), (0, 0)], 2, 50);
        assert_eq!((got.undone, got.exact), (2, false));
    }

    #[test]
    fn auto_quanta_is_three_refreshes() {
        // 3 x 10 ms at 100 Mb/s = 3 Mbit = 5859.4 quanta of 512 bits.
        assert_eq!(super::auto_quanta(100_000_000, 10_000), 5860);
        assert_eq!(super::auto_quanta(100_000_000_000, 10_000), 0xffff);
        assert_eq!(super::auto_quanta(0, 10_000), 1);
    }

    #[test]
    fn gfc_stages_follow_the_paper() {
        use super::GfcThresholds;
        // The GFC testbed's numbers: B_m 1000 KB, B_1 750 KB (in KB units
        // here): B_2 = 875, B_3 = 937.5, B_4 = 968.75.
        let g = GfcThresholds::new(1_000_000, Some(750_000), 10_000_000_000, 10, 1).unwrap();
        assert_eq!(g.stage_of(749_999), 0);
        assert_eq!(g.stage_of(750_000), 1);
        assert_eq!(g.stage_of(874_999), 1);
        assert_eq!(g.stage_of(875_000), 2);
        assert_eq!(g.stage_of(937_500), 3);
        assert_eq!(g.stage_of(968_750), 4);
        assert_eq!(g.stage_of(2_000_000), g.stages);
        // 250000 B halves to 1 B in 18 steps: N = 19.
        assert_eq!(g.stages, 19);
        // B_1 defaults to B_m - 2 C tau: 10 Gb/s x 90 us x 2 = 225000 B.
        let d = GfcThresholds::new(1_000_000, None, 10_000_000_000, 90, 1).unwrap();
        assert_eq!(d.b1_bytes, 775_000);
        // Time-based, the paper's testbed: tau 90 us, T 52 us, B_m 1000 KB:
        // B_0 <= 1e6 - (sqrt(90/52) + 1)^2 * 65000 = 651.5 KB (its 492 KB
        // is below that bound).
        let t = super::GfcTime::new(1_000_000, None, Some(52), 10_000_000_000, 90).unwrap();
        assert!((651_000..652_000).contains(&t.b0_bytes), "{t:?}");
        assert!(super::GfcTime::new(100_000, None, Some(52), 10_000_000_000, 90).is_err());
        // Default T: 65535 B at C.
        let d = super::GfcTime::new(1_000_000, None, None, 10_000_000_000, 90).unwrap();
        assert_eq!(d.period_ns, 52_428);
        // Theorem 4.1's condition, violated: a clear error.
        let e = GfcThresholds::new(1_000_000, Some(800_000), 10_000_000_000, 90, 1).unwrap_err();
        assert!(e.to_string().contains("B_1 <= B_m - 2*C*tau"), "{e}");
        assert!(GfcThresholds::new(100_000, None, 10_000_000_000, 90, 1).is_err());
        // Stages a frame apart: 28 KB over 4170-byte frames gives N = 4
        // (28672 / 8 = 3584 <= 4170 < 7168).
        let f = GfcThresholds::new(102_400, Some(73_728), 50_000_000, 2000, 4170).unwrap();
        assert_eq!(f.stages, 4);
        assert_eq!(f.stage_of(102_400 + 9000), 4);
    }

    /// The loads are shared out among threads; results come back in the
    /// items' order, and one failure is the whole call's error.
    #[test]
    fn on_all_cpus_keeps_order_and_errors() {
        let items: Vec<u32> = (0..37).collect();
        let out = super::on_all_cpus(items.clone(), |i| Ok(i * 2)).unwrap();
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        let err = super::on_all_cpus(items, |i| {
            if i == 20 {
                anyhow::bail!("item {i} failed")
            }
            Ok(i)
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "item 20 failed");
        assert!(super::on_all_cpus(Vec::<u32>::new(), Ok)
            .unwrap()
            .is_empty());
    }
}
