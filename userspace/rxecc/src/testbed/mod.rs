//! The testbed: `rxecc testbed up|down`, bringing a checked topology
//! (crate::config::topology) up as namespaces, bridges, veths, rxe devices
//! and emulated switch ports, and down again; its flow control switched
//! under traffic; what runs on it (deadlock, record, stats).

pub mod deadlock;
pub mod record;
pub mod stats;

use crate::config::topology::{self, host_ip, host_mac, Built, Plan};
use crate::netlink::{self, Net};
use crate::switch::{self, FlowControl, IntMode, MarkMode, PortConfig};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Where `up` records what it built, for `down`.
pub const STATE_FILE: &str = "/run/rxecc/topology.json";
const MTU: &str = "9000";

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
    let mut t = topology::read(&plan.file, &src)?;
    let mode_str = mode.name();
    for sw in &mut t.switches {
        sw.pfc = mode == FlowControl::Pfc;
        sw.flow_control = Some(mode);
    }
    let mut b = topology::build(&plan.file, &src, t)
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
    let file = topology::resolve(name)?;
    let b = topology::load(&file)?;
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
    let file = topology::resolve(name)?;
    let mut b = topology::load(&file)?;
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
    up_built(&b, dry_run, log)
}

/// Brings up a topology already parsed and checked (`rxecc run`'s runs:
/// crate::config::experiment::Scenario); `down` reads what it built, and
/// the flow-control switch its thresholds, from `b.plan.file`.
pub fn up_built(b: &Built, dry_run: bool, log: bool) -> Result<()> {
    let file = &b.plan.file;
    let guest = b.guest.as_deref();
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
    let res = build(b, &r, dry_run);
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
        let (m, ip) = (host_mac(h), host_ip(h));
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
        let m = host_mac(*h);
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
            .map(|o| (host_ip(o), host_mac(o)))
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
            ack_priority: t.defaults.ack_priority,
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

    #[test]
    fn nic_names_a_port_towards_another_guest() {
        let src = crate::config::topology::tests::TWO_GUESTS;
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
    }
}
