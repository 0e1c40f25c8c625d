//! Loading port.bpf.c once for every port and mark.bpf.c per marker,
//! pinning them, and making a device a port; the network namespace helpers
//! the loader and `rxecc` use.

use super::*;
use anyhow::bail;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{TcHookBuilder, TC_EGRESS, TC_INGRESS};
use mark_skel::MarkSkelBuilder;
use port_skel::types::rxecc_inject;
use port_skel::PortSkelBuilder;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;

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

/// The qdisc kind every port is (port.bpf.c's Qdisc_ops id).
const PORT_KIND: &str = "rxecc_port";
/// The one loaded instance of port.bpf.c, pinned under [`PIN_ROOT`]: its
/// struct_ops link (which keeps [`PORT_KIND`] registered), its TC ingress
/// program, and the maps that only it may use: the queues hold its own
/// objects (`bpf_obj_new`), which another load's programs could not take.
/// The link comes last: while it is pinned, so is the rest.
const OBJ_PINS: [&str; 9] = [
    "port_ingress",
    "port_state",
    "port_cfg",
    "qlen_hist",
    "pacer",
    "data_q",
    "ctl_q",
    "inject",
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
    crate::modules::ensure_switch()?;
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
        ("inject", &mut skel.maps.inject),
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
    if cfg.limit_pkts == 0 || cfg.limit_pkts > LIMIT_PKTS_MAX {
        bail!(
            "a port's packet limit is 1..={LIMIT_PKTS_MAX}, not {}",
            cfg.limit_pkts
        );
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
    // SAFETY: as above.
    let zero_inject: rxecc_inject = unsafe { std::mem::zeroed() };
    pinned(&obj_pin("inject"), "the ports' injection rules")?
        .update(&key, pod_bytes(&zero_inject), MapFlags::ANY)
        .context("clearing the port's injection rules")?;
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
            pc.ack_prio = u32::from(cfg.ack_priority);
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

#[cfg(test)]
mod tests {

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
