//! `rxecc selftest`: unit tests of the switch's eBPF programs on crafted
//! packets, with BPF_PROG_TEST_RUN. They load fresh, unattached instances
//! of the objects (maps of their own), so they can run next to a live
//! testbed. They need the testbed kernel and `rxecc_switch.ko`.

use crate::switch::{mark_skel, port_skel};
use anyhow::{bail, Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, ProgramInput};
use port_skel::types::{port_cfg, port_state};
use std::mem::MaybeUninit;

const TC_ACT_OK: u32 = 0;
const TC_ACT_SHOT: u32 = 2;
const RATE_BPS: u64 = 100_000_000;

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// An 802.1Qbb frame: class-enable vector, one time for every enabled
/// class, and a stamp in the pad.
pub fn pfc_frame(dst_last: u8, opcode: u16, class_vec: u8, quanta: u16, stamp: u64) -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, dst_last];
    f.extend_from_slice(&[0x02, 0x77, 0, 0, 0, 0x63]);
    f.extend_from_slice(&0x8808u16.to_be_bytes());
    f.extend_from_slice(&opcode.to_be_bytes());
    f.extend_from_slice(&(class_vec as u16).to_be_bytes());
    for c in 0..8 {
        let q = if class_vec & (1 << c) != 0 { quanta } else { 0 };
        f.extend_from_slice(&q.to_be_bytes());
    }
    f.extend_from_slice(&stamp.to_be_bytes());
    f.resize(60, 0);
    f
}

fn ip_csum(h: &[u8]) -> u16 {
    let mut s: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet/IPv4/UDP packet to `dport` with ECN bits `ecn`, a valid IP
/// checksum and a RoCE-sized payload.
pub fn udp_packet(dport: u16, ecn: u8) -> Vec<u8> {
    let mut p = vec![0x02, 0x77, 0, 0, 0, 1, 0x02, 0x77, 0, 0, 0, 2, 0x08, 0x00];
    let payload = 64usize;
    let tot = (20 + 8 + payload) as u16;
    let mut ip = vec![0x45, ecn & 3];
    ip.extend_from_slice(&tot.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 10, 77, 0, 2, 10, 77, 0, 1]);
    let c = ip_csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&ip);
    p.extend_from_slice(&49152u16.to_be_bytes());
    p.extend_from_slice(&dport.to_be_bytes());
    p.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend(std::iter::repeat_n(0xab, payload));
    p
}

struct Tally {
    passed: usize,
    failed: Vec<String>,
}

impl Tally {
    fn check(&mut self, name: &str, ok: bool, detail: String) {
        if ok {
            self.passed += 1;
            println!("ok   {name}");
        } else {
            println!("FAIL {name}: {detail}");
            self.failed.push(name.to_string());
        }
    }
}

fn run_prog(prog: &libbpf_rs::ProgramMut<'_>, pkt: &[u8]) -> Result<(u32, Vec<u8>)> {
    let mut out = vec![0u8; pkt.len() + 256];
    let input = ProgramInput {
        data_in: Some(pkt),
        data_out: Some(&mut out),
        ..Default::default()
    };
    let o = prog.test_run(input).context("BPF_PROG_TEST_RUN")?;
    let rv = o.return_value;
    let n = o.data.map_or(0, |d| d.len());
    out.truncate(n);
    Ok((rv, out))
}

/// Runs a TC program `repeat` times on `pkt` with `skb->mark` = `mark`;
/// returns the last run's verdict and the mark it left.
fn run_prog_marked(
    prog: &libbpf_rs::ProgramMut<'_>,
    pkt: &[u8],
    mark: u32,
    repeat: u32,
) -> Result<(u32, u32)> {
    // struct __sk_buff up to `mark` (len, pkt_type, mark): the kernel
    // takes a shorter context and zeroes the rest.
    let mut ctx_in = [0u8; 12];
    ctx_in[8..12].copy_from_slice(&mark.to_ne_bytes());
    // The kernel copies out the whole struct __sk_buff (ENOSPC if smaller).
    let mut ctx_out = [0u8; 512];
    let mut out = vec![0u8; pkt.len() + 256];
    let input = ProgramInput {
        data_in: Some(pkt),
        data_out: Some(&mut out),
        context_in: Some(&mut ctx_in),
        context_out: Some(&mut ctx_out),
        repeat,
        ..Default::default()
    };
    let o = prog.test_run(input).context("BPF_PROG_TEST_RUN")?;
    let rv = o.return_value;
    let ctx = o
        .context
        .context("no context back from BPF_PROG_TEST_RUN")?;
    let mark_out = u32::from_ne_bytes(ctx.get(8..12).context("short context")?.try_into()?);
    Ok((rv, mark_out))
}

/// skb->mark bits for a compressed arrival and for a delay request (port.h).
const MARK_COMPRESSED: u32 = 0x4000_0000;
const MARK_DELAY: u32 = 0x1000_0000;

/// The port id the PFC receiver's tests run as (port.bpf.c's
/// `test_port_id`: BPF_PROG_TEST_RUN's device is no port).
const TEST_PORT: u32 = 1;

fn read<T: Copy>(map: &dyn MapCore) -> Result<T> {
    read_at(map, 0)
}

fn read_at<T: Copy>(map: &dyn MapCore, key: u32) -> Result<T> {
    let b = map
        .lookup(&key.to_ne_bytes(), MapFlags::ANY)?
        .with_context(|| format!("map has no entry {key}"))?;
    if b.len() < std::mem::size_of::<T>() {
        bail!("map value too small");
    }
    // SAFETY: `b` holds a plain-old-data `T` (checked length above).
    Ok(unsafe { std::ptr::read_unaligned(b.as_ptr().cast()) })
}

fn write<T: Copy>(map: &dyn MapCore, v: &T) -> Result<()> {
    write_at(map, 0, v)
}

fn write_at<T: Copy>(map: &dyn MapCore, key: u32, v: &T) -> Result<()> {
    // SAFETY: `T` is a plain-old-data C struct; its bytes are initialised.
    let bytes = unsafe {
        std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    map.update(&key.to_ne_bytes(), bytes, MapFlags::ANY)
        .context("map update")
}

/// The PFC receiver (port.bpf.c's `port_ingress`).
/// port.bpf.o loaded for BPF_PROG_TEST_RUN: its programs take every
/// packet as port TEST_PORT's.
fn load_port_skel(
    storage: &mut MaybeUninit<libbpf_rs::OpenObject>,
) -> Result<port_skel::PortSkel<'_>> {
    let mut open = port_skel::PortSkelBuilder::default()
        .open(storage)
        .context("opening port.bpf.o")?;
    open.maps
        .rodata_data
        .as_deref_mut()
        .context("port.bpf.o has no .rodata")?
        .test_port_id = TEST_PORT;
    open.load().context("loading port.bpf.o")
}

fn pfc_tests(t: &mut Tally) -> Result<()> {
    let mut storage = MaybeUninit::uninit();
    let skel = load_port_skel(&mut storage)?;
    // SAFETY: plain-old-data; zeroes are valid.
    let mut cfg: port_cfg = unsafe { std::mem::zeroed() };
    cfg.p.rate_bps = RATE_BPS;
    cfg.p.pfc_class = 3;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let prog = &skel.progs.port_ingress;
    let st = |s: &port_skel::PortSkel| {
        read_at::<port_state>(&s.maps.port_state, TEST_PORT).map(|v| v.stats)
    };

    let t0 = now_ns();
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, t0))?;
    let s = st(&skel)?;
    let want_ns = 100 * 512 * 1_000_000_000 / RATE_BPS;
    t.check(
        "pfc: pause for class 3 is consumed and pauses the port",
        rv == TC_ACT_SHOT && s.paused == 1 && s.pfc_rx_xoff == 1,
        format!(
            "rv {rv}, paused {}, pfc_rx_xoff {}",
            s.paused, s.pfc_rx_xoff
        ),
    );
    t.check(
        "pfc: pause time is quanta x 512 bit times at the port's rate",
        s.pause_until_ns - s.pause_start_ns == want_ns,
        format!(
            "{} ns, expected {want_ns}",
            s.pause_until_ns - s.pause_start_ns
        ),
    );
    t.check(
        "pfc: the pad's stamp gives one tau sample",
        s.tau_n == 1 && s.tau_max_ns < 10_000_000_000,
        format!("tau_n {}, tau_max {}", s.tau_n, s.tau_max_ns),
    );
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, now_ns()))?;
    let s2 = st(&skel)?;
    t.check(
        "pfc: a refresh extends the pause without a new tau sample",
        rv == TC_ACT_SHOT
            && s2.pfc_rx_xoff == 2
            && s2.tau_n == 1
            && s2.pause_until_ns >= s.pause_until_ns,
        format!("rv {rv}, xoff {}, tau_n {}", s2.pfc_rx_xoff, s2.tau_n),
    );
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 0, 0))?;
    let s = st(&skel)?;
    t.check(
        "pfc: quanta 0 resumes and accounts the paused time",
        rv == TC_ACT_SHOT
            && s.paused == 0
            && s.pfc_rx_xon == 1
            && s.paused_ns > 0
            && s.last_resume_ns >= t0,
        format!(
            "rv {rv}, paused {}, xon {}, paused_ns {}",
            s.paused, s.pfc_rx_xon, s.paused_ns
        ),
    );
    // Each would pause class 3 for 100 quanta if it were obeyed. MAC control
    // frames are never forwarded: all are dropped, and counted as bad
    // (malformed) or other (a class this port does not carry).
    let pause = || pfc_frame(0x01, 0x0101, 1 << 3, 100, 0);
    let mut long = pause();
    long.resize(200, 0);
    let mut reserved = pause();
    reserved[16] = 0x01; // class-vector bit 8: reserved
    #[derive(PartialEq)]
    enum Want {
        Bad,
        Other,
        Data,
    }
    let cases: [(&str, Vec<u8>, Want); 7] = [
        (
            "pfc: a frame for another class is consumed and counted",
            pfc_frame(0x01, 0x0101, 1 << 5, 100, 0),
            Want::Other,
        ),
        (
            "pfc: wrong destination address is dropped as bad",
            pfc_frame(0x02, 0x0101, 1 << 3, 100, 0),
            Want::Bad,
        ),
        (
            "pfc: 802.3x PAUSE (opcode 1) is dropped as bad",
            pfc_frame(0x01, 0x0001, 1 << 3, 100, 0),
            Want::Bad,
        ),
        (
            "pfc: a truncated frame is dropped as bad",
            pause()[..30].to_vec(),
            Want::Bad,
        ),
        ("pfc: an oversized frame is dropped as bad", long, Want::Bad),
        (
            "pfc: reserved class-vector bits: dropped as bad",
            reserved,
            Want::Bad,
        ),
        (
            "pfc: RoCEv2 data passes untouched",
            udp_packet(4791, 1),
            Want::Data,
        ),
    ];
    for (name, pkt, want) in cases {
        let before = st(&skel)?;
        let (rv, out) = run_prog(prog, &pkt)?;
        let s = st(&skel)?;
        let same = s.paused == before.paused
            && s.pfc_rx_xoff == before.pfc_rx_xoff
            && s.pfc_rx_xon == before.pfc_rx_xon;
        let (bad, other) = (
            s.pfc_rx_bad - before.pfc_rx_bad,
            s.pfc_rx_other - before.pfc_rx_other,
        );
        let ok = match want {
            Want::Bad => rv == TC_ACT_SHOT && (bad, other) == (1, 0),
            Want::Other => rv == TC_ACT_SHOT && (bad, other) == (0, 1),
            Want::Data => rv == TC_ACT_OK && out == pkt && (bad, other) == (0, 0),
        };
        t.check(
            name,
            ok && same,
            format!(
                "rv {rv}, state changed: {}, bad +{bad}, other +{other}",
                !same
            ),
        );
    }
    // An XON that overtook its XOFF on the way: the XOFF, stamped earlier,
    // is stale once the XON is obeyed, and must not pause the port.
    let t1 = now_ns();
    run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 0, t1 + 2))?;
    let before = st(&skel)?;
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, t1 + 1))?;
    let s = st(&skel)?;
    t.check(
        "pfc: a pause stamped before the last resume obeyed is stale and ignored",
        rv == TC_ACT_SHOT
            && s.paused == 0
            && s.pfc_rx_xoff == before.pfc_rx_xoff
            && s.pfc_rx_stale == before.pfc_rx_stale + 1,
        format!(
            "rv {rv}, paused {}, xoff {} -> {}, stale {}",
            s.paused, before.pfc_rx_xoff, s.pfc_rx_xoff, s.pfc_rx_stale
        ),
    );
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, t1 + 3))?;
    let s = st(&skel)?;
    t.check(
        "pfc: a newer pause after a stale one is obeyed",
        rv == TC_ACT_SHOT && s.paused == 1 && s.pfc_rx_xoff == before.pfc_rx_xoff + 1,
        format!("rv {rv}, paused {}, xoff {}", s.paused, s.pfc_rx_xoff),
    );
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 0, 0))?;
    let s = st(&skel)?;
    t.check(
        "pfc: an unstamped resume (a real switch's) is always obeyed",
        rv == TC_ACT_SHOT && s.paused == 0,
        format!("rv {rv}, paused {}", s.paused),
    );

    // Buffer-based GFC: the same frame carries a stage in its time field.
    // The port slows (rate >> stage at dequeue) but never pauses, and a
    // PFC pause left from before the mode changed ends.
    run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, 0))?;
    cfg.p.fc_mode = 2;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let before = st(&skel)?;
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 3, 0))?;
    let s = st(&skel)?;
    t.check(
        "gfc: a stage is obeyed as a rate, not a pause, and ends a PFC pause",
        rv == TC_ACT_SHOT
            && before.paused == 1
            && s.paused == 0
            && s.gfc_stage == 3
            && s.gfc_rx == before.gfc_rx + 1
            && s.pfc_rx_xoff == before.pfc_rx_xoff,
        format!(
            "rv {rv}, paused {} -> {}, stage {}, gfc_rx {}, xoff {}",
            before.paused, s.paused, s.gfc_stage, s.gfc_rx, s.pfc_rx_xoff
        ),
    );
    std::thread::sleep(std::time::Duration::from_millis(2));
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 0, 0))?;
    let s = st(&skel)?;
    t.check(
        "gfc: stage 0 restores the full rate and counts the time below it",
        rv == TC_ACT_SHOT
            && s.gfc_stage == 0
            && s.gfc_limited_ns >= 2_000_000
            && s.gfc_max_stage == 3,
        format!(
            "rv {rv}, stage {}, limited {} ns, max {}",
            s.gfc_stage, s.gfc_limited_ns, s.gfc_max_stage
        ),
    );
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 24, 0))?;
    let s = st(&skel)?;
    t.check(
        "gfc: the deepest stage (24) is obeyed as a stage",
        rv == TC_ACT_SHOT && s.gfc_stage == 24 && s.paused == 0,
        format!("rv {rv}, stage {}, paused {}", s.gfc_stage, s.paused),
    );
    let before = st(&skel)?;
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 1000, 0))?;
    let s = st(&skel)?;
    t.check(
        "gfc: a time past the deepest stage is a PFC pause (a peer still in PFC mode)",
        rv == TC_ACT_SHOT
            && s.paused == 1
            && s.gfc_stage == 24
            && s.gfc_rx == before.gfc_rx
            && s.pfc_rx_xoff == before.pfc_rx_xoff + 1,
        format!(
            "rv {rv}, paused {}, stage {}, gfc_rx +{}, xoff +{}",
            s.paused,
            s.gfc_stage,
            s.gfc_rx - before.gfc_rx,
            s.pfc_rx_xoff - before.pfc_rx_xoff
        ),
    );
    run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 0, 0))?;
    // Time-based GFC: the time field is the peer's credit limit (FCCL, in
    // 64-byte blocks); it is stored, never a pause, and ends one.
    run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 100, 0))?;
    cfg.p.fc_mode = 3;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let before = st(&skel)?;
    let (rv, _) = run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, 1234, 0))?;
    let s = st(&skel)?;
    t.check(
        "gfc-time: a credit limit is stored, not obeyed as a pause, and ends one",
        rv == TC_ACT_SHOT
            && before.paused == 1
            && s.paused == 0
            && s.gfc_fccl == 1234
            && s.gfc_fccl_valid == 1
            && s.gfc_rx == before.gfc_rx + 1
            && s.pfc_rx_xoff == before.pfc_rx_xoff,
        format!(
            "rv {rv}, paused {} -> {}, fccl {}, valid {}, xoff +{}",
            before.paused,
            s.paused,
            s.gfc_fccl,
            s.gfc_fccl_valid,
            s.pfc_rx_xoff - before.pfc_rx_xoff
        ),
    );
    // Its rate is set on arrival from the credit then (FCCL - FCTBS,
    // App. B's B_m - q(t_k)), linearly up to C at the span B_m - B_0, and
    // held: the dequeue only reads it.
    let fccl_rate = |skel: &port_skel::PortSkel, deq_bytes: u64, fccl: u16| -> Result<u64> {
        let mut full: port_state = read_at(&skel.maps.port_state, TEST_PORT)?;
        full.stats.deq_bytes = deq_bytes;
        write_at(&skel.maps.port_state, TEST_PORT, &full)?;
        run_prog(prog, &pfc_frame(0x01, 0x0101, 1 << 3, fccl, 0))?;
        Ok(st(skel)?.gfc_rate_bps)
    };
    let span = 1000 * 64;
    cfg.p.gfc_span_bytes = span;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let cases: [(&str, u64, u16, u64); 5] = [
        ("a quarter of the span", 0, 250, RATE_BPS / 4),
        (
            "the same limit after 100 blocks sent",
            100 * 64,
            250,
            RATE_BPS * 150 / 1000,
        ),
        ("credit beyond the span", 0, 3000, RATE_BPS),
        ("FCTBS past FCCL (more sent than granted)", 300 * 64, 250, 0),
        (
            "FCCL wrapped past 2^16 blocks",
            65_500 * 64,
            214,
            RATE_BPS / 4,
        ),
    ];
    for (what, deq, fccl, want) in cases {
        let got = fccl_rate(&skel, deq, fccl)?;
        t.check(
            &format!("gfc-time: the rate set on arrival, {what}"),
            got == want,
            format!("{got} b/s, expected {want}"),
        );
    }
    cfg.p.fc_mode = 0;
    cfg.p.gfc_span_bytes = 0;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let mut full: port_state = read_at(&skel.maps.port_state, TEST_PORT)?;
    full.stats.deq_bytes = 0;
    write_at(&skel.maps.port_state, TEST_PORT, &full)?;

    // The arrival clock: at 10 Mb/s a 106-byte frame takes 84.8 us on the
    // link; with 500 us of tolerance, one after a pause is on time, and 20
    // back to back (1.7 ms of link time, delivered in far less) are not.
    cfg.p.rate_bps = 10_000_000;
    cfg.p.stall_ns = 500_000;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    std::thread::sleep(std::time::Duration::from_millis(20));
    let pkt = udp_packet(4791, 1);
    let before = st(&skel)?;
    let (rv, mark) = run_prog_marked(prog, &pkt, MARK_COMPRESSED | 1, 1)?;
    let s = st(&skel)?;
    t.check(
        "arrival: a packet on the link's schedule is not compressed, and an earlier switch's flag is cleared",
        rv == TC_ACT_OK && mark == 1 && s.compressed_pkts == before.compressed_pkts,
        format!("rv {rv}, mark {mark:#x}, compressed {}", s.compressed_pkts),
    );
    let (rv, mark) = run_prog_marked(prog, &pkt, 0, 20)?;
    let s = st(&skel)?;
    t.check(
        "arrival: a burst faster than the link's rate is flagged and counted",
        rv == TC_ACT_OK
            && mark & MARK_COMPRESSED != 0
            && s.compressed_pkts > before.compressed_pkts,
        format!("rv {rv}, mark {mark:#x}, compressed {}", s.compressed_pkts),
    );

    // skb->mark: the switch's upper 16 bits are cleared on arrival (here a
    // foreign value that reads as a delay request), the lower 16 kept.
    let (rv, mark) = run_prog_marked(prog, &pkt, MARK_DELAY | 0x0005_1234, 1)?;
    t.check(
        "mark: the switch's bits are cleared on arrival, other users' kept",
        rv == TC_ACT_OK && mark & !MARK_COMPRESSED == 0x1234,
        format!("rv {rv}, mark {mark:#x}"),
    );
    // A delay rule's request names the rule and the port, and leaves the
    // lower 16 bits as they were.
    // SAFETY: plain-old-data; zeroes are valid.
    let mut rules: port_skel::types::rxecc_inject = unsafe { std::mem::zeroed() };
    rules.rule[0].action = 6; // INJ_DELAY
    rules.rule[0].qpn = u32::MAX;
    rules.rule[0].opcode = u32::MAX;
    rules.rule[0].psn_hi = 0xff_ffff;
    rules.rule[0].delay_us = 100;
    write_at(&skel.maps.inject, TEST_PORT, &rules)?;
    cfg.p.inject_rules = 1;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let (rv, mark) = run_prog_marked(prog, &pkt, 0x1234, 1)?;
    cfg.p.inject_rules = 0;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    let want = MARK_DELAY | TEST_PORT << 16 | 0x1234;
    t.check(
        "mark: a delay rule's request names its rule and port, other users' bits kept",
        rv == TC_ACT_OK && mark & !MARK_COMPRESSED == want,
        format!("rv {rv}, mark {mark:#x}, expected {want:#x}"),
    );
    Ok(())
}

/// A marker case: name, mode, UDP port, ECN in, ECN out, queue, paused,
/// resumed how long ago (ns), queue at that resume, TCD's decision.
type MarkCase = (&'static str, u32, u16, u8, u8, u64, u64, i64, u64, u8);

/// The marker (mark.bpf.c) in every mode.
fn mark_tests(t: &mut Tally) -> Result<()> {
    let mut storage = MaybeUninit::uninit();
    let open = mark_skel::MarkSkelBuilder::default()
        .open(&mut storage)
        .context("opening mark.bpf.o")?;
    let skel = open.load().context("loading mark.bpf.o")?;
    let prog = &skel.progs.mark_egress;
    let set_cfg = |f: &dyn Fn(&mut mark_skel::types::rxecc_port_params)| -> Result<()> {
        let mut c: mark_skel::types::port_cfg = read(&skel.maps.port_cfg)?;
        f(&mut c.p);
        write(&skel.maps.port_cfg, &c)
    };
    let set_state = |qlen: u64, paused: u64, last_resume: u64, resume_qlen: u64| -> Result<()> {
        let mut s: mark_skel::types::port_state = read(&skel.maps.port_state)?;
        s.stats.qlen_bytes = qlen;
        s.stats.resume_qlen_bytes = resume_qlen;
        s.stats.paused = paused;
        s.stats.last_resume_ns = last_resume;
        write(&skel.maps.port_state, &s)
    };
    // (name, mode, dport, ecn in, ecn out, queue, paused, resumed ago ns
    // (negative: a resume that another CPU stored after this packet's
    // program read the clock), queue at that resume, TCD's decision: CE, UE, or 0 for none; a
    // decision to mark UE leaves an upstream CE as it is)
    const CE: u8 = 3;
    const UE: u8 = 2;
    const ECT1: u8 = 1;
    let far = 10_000_000_000i64;
    let cases: &[MarkCase] = &[
        ("mark ce: ECT(1) -> CE", 1, 4791, ECT1, CE, 0, 0, far, 0, 0),
        (
            "mark ce: not-ECT stays not-ECT",
            1,
            4791,
            0,
            0,
            0,
            0,
            far,
            0,
            0,
        ),
        (
            "mark ce: non-RoCE UDP untouched",
            1,
            53,
            ECT1,
            ECT1,
            0,
            0,
            far,
            0,
            0,
        ),
        ("mark ue: ECT(1) -> UE", 2, 4791, ECT1, UE, 0, 0, far, 0, 0),
        (
            "mark ue: CE is never downgraded to UE",
            2,
            4791,
            CE,
            CE,
            0,
            0,
            far,
            0,
            0,
        ),
        (
            "red: queue above Kmax -> CE",
            3,
            4791,
            ECT1,
            CE,
            200_000,
            0,
            far,
            0,
            0,
        ),
        (
            "red: queue below Kmin -> unmarked",
            3,
            4791,
            ECT1,
            ECT1,
            10_000,
            0,
            far,
            0,
            0,
        ),
        (
            "tcd: queue above threshold, ON for long -> CE",
            4,
            4791,
            ECT1,
            CE,
            20_000,
            0,
            far,
            0,
            CE,
        ),
        (
            "tcd: queue above threshold while paused -> UE",
            4,
            4791,
            ECT1,
            UE,
            20_000,
            1,
            far,
            0,
            UE,
        ),
        (
            "tcd: queue above threshold, resumed just now -> UE",
            4,
            4791,
            ECT1,
            UE,
            20_000,
            0,
            0,
            0,
            UE,
        ),
        (
            "tcd: queue above threshold, resumed after the packet read the clock -> UE",
            4,
            4791,
            ECT1,
            UE,
            20_000,
            0,
            -far,
            0,
            UE,
        ),
        (
            "tcd: UE decision keeps an upstream CE",
            4,
            4791,
            CE,
            CE,
            20_000,
            1,
            far,
            0,
            UE,
        ),
        (
            "tcd: queue at threshold -> unmarked",
            4,
            4791,
            ECT1,
            ECT1,
            8_400,
            0,
            far,
            0,
            0,
        ),
        (
            "tcd: ON for long, still draining a pause's backlog -> UE",
            4,
            4791,
            ECT1,
            UE,
            20_000,
            0,
            far,
            50_000,
            UE,
        ),
        (
            "tcd: ON for long, grown by more than the threshold since resume -> CE",
            4,
            4791,
            ECT1,
            CE,
            60_000,
            0,
            far,
            50_000,
            CE,
        ),
        (
            "tcd: ON for long, grown by less than the threshold since resume -> UE",
            4,
            4791,
            ECT1,
            UE,
            55_000,
            0,
            far,
            50_000,
            UE,
        ),
    ];
    for &(name, mode, dport, ein, eout, q, paused, ago, rq, _) in cases {
        set_cfg(&|c| {
            c.mark_mode = mode;
            c.kmin_bytes = 20_000;
            c.kmax_bytes = 100_000;
            c.pmax_permille = 200;
            c.tcd_thresh_bytes = 8_400;
            // Long enough that "resumed just now" holds on a slow (debug)
            // kernel, where setting the state and running the program are
            // milliseconds apart; "long ago" is `far`.
            c.tcd_max_ton_ns = 1_000_000_000;
        })?;
        let now = now_ns();
        set_state(q, paused, now.saturating_add_signed(-ago), rq)?;
        let pkt = udp_packet(dport, ein);
        let (rv, out) = run_prog(prog, &pkt)?;
        let ecn = out.get(15).map_or(255, |b| b & 3);
        let csum_ok = out.len() >= 34 && ip_csum(&out[14..34]) == 0;
        // Only the TOS byte and the IP checksum may change.
        let rest_same = out.len() == pkt.len()
            && out
                .iter()
                .zip(&pkt)
                .enumerate()
                .all(|(i, (a, b))| a == b || matches!(i, 15 | 24 | 25));
        t.check(
            name,
            rv == TC_ACT_OK && ecn == eout && csum_ok && rest_same,
            format!("rv {rv}, ECN {ecn:#b} (want {eout:#b}), IP checksum valid: {csum_ok}"),
        );
    }
    // Queue built by compressed arrivals (upstream catch-up bursts) is not
    // congestion: the growth test discounts their bytes. (The fixture's
    // rate is 0, so the excess does not drain during the test.)
    // Nor is the queue the port's own late dequeues left (lag): an ideal
    // link would have sent it.
    let with_discounts = |q: u64, excess: u64, lag: u64| -> Result<()> {
        set_state(q, 0, now_ns().saturating_add_signed(-far), 0)?;
        let mut st: mark_skel::types::port_state = read(&skel.maps.port_state)?;
        st.stats.excess_bytes = excess;
        st.stats.excess_ns = now_ns();
        st.stats.lag_bytes = lag;
        write(&skel.maps.port_state, &st)
    };
    for (name, excess, lag) in [
        (
            "tcd: a queue that compressed arrivals built is judged without them: unmarked",
            58_000,
            0,
        ),
        (
            "tcd: a queue the port's late dequeues left is judged without it: unmarked",
            0,
            58_000,
        ),
    ] {
        with_discounts(60_000, excess, lag)?;
        let (rv, out) = run_prog(prog, &udp_packet(4791, ECT1))?;
        let ecn = out.get(15).map_or(255, |b| b & 3);
        t.check(
            name,
            rv == TC_ACT_OK && ecn == ECT1,
            format!("rv {rv}, ECN {ecn:#b}"),
        );
    }
    with_discounts(60_000, 0, 0)?;
    let before: mark_skel::types::port_state = read(&skel.maps.port_state)?;
    let (rv, _) = run_prog_marked(prog, &udp_packet(4791, ECT1), MARK_COMPRESSED, 1)?;
    let after: mark_skel::types::port_state = read(&skel.maps.port_state)?;
    t.check(
        "tcd: a compressed arrival adds its bytes to the excess, and real growth stays CE",
        rv == TC_ACT_OK
            && after.stats.tcd_compressed == 1
            && after.stats.excess_bytes > 0
            && after.stats.tcd_ce == before.stats.tcd_ce + 1,
        format!(
            "rv {rv}, compressed {}, excess {} B, CE decisions {} -> {}",
            after.stats.tcd_compressed,
            after.stats.excess_bytes,
            before.stats.tcd_ce,
            after.stats.tcd_ce
        ),
    );

    // The excess drains at the port's rate, to the last byte at 400 Gb/s:
    // two seconds on, 30 GB of it is gone (elapsed * rate/8 wrapped past
    // 2^64 and left at least 11 GB, above the whole queue: unmarked).
    set_cfg(&|c| c.rate_bps = 400_000_000_000)?;
    with_discounts(100_000, 30_000_000_000, 0)?;
    let mut st: mark_skel::types::port_state = read(&skel.maps.port_state)?;
    st.stats.excess_ns = now_ns().saturating_sub(2_000_000_000);
    write(&skel.maps.port_state, &st)?;
    let (rv, out) = run_prog(prog, &udp_packet(4791, ECT1))?;
    set_cfg(&|c| c.rate_bps = 0)?;
    let ecn = out.get(15).map_or(255, |b| b & 3);
    let left: mark_skel::types::port_state = read(&skel.maps.port_state)?;
    t.check(
        "tcd: at 400 Gb/s, 2 s drain 30 GB of excess and real growth is CE",
        rv == TC_ACT_OK && ecn == CE && left.stats.excess_bytes == 0,
        format!(
            "rv {rv}, ECN {ecn:#b}, excess left {} B",
            left.stats.excess_bytes
        ),
    );

    // Every ECN-capable RoCE packet in TCD mode is one decision (and the
    // four above: two unmarked, two CE).
    let tcd = |d: u8| {
        cases
            .iter()
            .filter(|c| c.1 == 4 && c.2 == 4791 && c.3 != 0 && c.9 == d)
            .count() as u64
    };
    let (want_ce, want_ue, want_none) = (tcd(CE) + 2, tcd(UE), tcd(0) + 2);
    let s: mark_skel::types::port_state = read(&skel.maps.port_state)?;
    t.check(
        "tcd: decisions are counted",
        s.stats.tcd_ce == want_ce && s.stats.tcd_ue == want_ue && s.stats.tcd_none == want_none,
        format!(
            "CE {} UE {} none {}, expected {want_ce} {want_ue} {want_none}",
            s.stats.tcd_ce, s.stats.tcd_ue, s.stats.tcd_none
        ),
    );
    Ok(())
}

/// Runs every test; fails if any does.
/// A RoCEv2 packet flagged for INT (TOS 0x04) with an HPCC shim of room
/// for `max_hops` records and `after` bytes behind it (a BTH and an ICRC
/// take 16); the UDP length says what the packet holds.
fn int_packet(max_hops: u8, after: usize) -> Vec<u8> {
    let mut shim = vec![0xc5, 2, 1, 0, 0, max_hops, 0, 0, 0, 0, 0, 0];
    shim.extend(std::iter::repeat_n(0, 16 * usize::from(max_hops)));
    shim.extend(std::iter::repeat_n(0xab, after));
    let mut p = vec![0x02, 0x77, 0, 0, 0, 1, 0x02, 0x77, 0, 0, 0, 2, 0x08, 0x00];
    let mut ip = vec![0x45, 0x04];
    ip.extend_from_slice(&((20 + 8 + shim.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 10, 77, 0, 2, 10, 77, 0, 1]);
    let c = ip_csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&ip);
    p.extend_from_slice(&49152u16.to_be_bytes());
    p.extend_from_slice(&4791u16.to_be_bytes());
    p.extend_from_slice(&((8 + shim.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(&shim);
    p
}

/// HPCC's INT at a port's ingress: a record is stamped only into a shim
/// whose room, and a BTH and ICRC behind it, the packet holds.
fn int_tests(t: &mut Tally) -> Result<()> {
    let mut storage = MaybeUninit::uninit();
    let skel = load_port_skel(&mut storage)?;
    // SAFETY: plain-old-data; zeroes are valid.
    let mut cfg: port_cfg = unsafe { std::mem::zeroed() };
    cfg.p.rate_bps = RATE_BPS;
    cfg.p.int_mode = 1; // INT_HPCC
    cfg.p.int_from = TEST_PORT;
    write_at(&skel.maps.port_cfg, TEST_PORT, &cfg)?;
    // SAFETY: as above.
    let mut deq: port_skel::types::int_deq = unsafe { std::mem::zeroed() };
    deq.deq_ns = now_ns();
    deq.deq_bytes = 12_345;
    deq.qlen_bytes = 4096;
    deq.rate_bps = RATE_BPS;
    write_at(&skel.maps.int_deq, TEST_PORT, &deq)?;
    let prog = &skel.progs.port_ingress;
    let st = || read_at::<port_state>(&skel.maps.port_state, TEST_PORT).map(|v| v.stats);
    let cases: [(&str, Vec<u8>, bool); 2] = [
        (
            "int: a shim with room for 2 records and a BTH behind is stamped",
            int_packet(2, 16),
            true,
        ),
        (
            "int: a shim whose room leaves no BTH behind is refused, not stamped",
            int_packet(2, 0),
            false,
        ),
    ];
    for (name, pkt, stamp) in cases {
        let before = st()?;
        let (rv, out) = run_prog(prog, &pkt)?;
        let after = st()?;
        let stamped = after.int_stamped - before.int_stamped;
        let bad = after.int_bad - before.int_bad;
        let nhops = out.get(14 + 20 + 8 + 4).copied();
        let ok = rv == 0
            && if stamp {
                stamped == 1 && bad == 0 && nhops == Some(1)
            } else {
                stamped == 0 && bad == 1 && out == pkt
            };
        t.check(
            name,
            ok,
            format!("rv {rv}, stamped +{stamped}, bad +{bad}, nhops {nhops:?}"),
        );
    }
    Ok(())
}

pub fn run() -> Result<()> {
    crate::modules::ensure_switch()?;
    let mut t = Tally {
        passed: 0,
        failed: Vec::new(),
    };
    pfc_tests(&mut t)?;
    mark_tests(&mut t)?;
    int_tests(&mut t)?;
    println!("selftest: {} passed, {} failed", t.passed, t.failed.len());
    if !t.failed.is_empty() {
        bail!("failed: {}", t.failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crafted_packets_are_well_formed() {
        let p = udp_packet(4791, 1);
        assert_eq!(ip_csum(&p[14..34]), 0);
        assert_eq!(p[15] & 3, 1);
        let f = pfc_frame(1, 0x0101, 0x08, 7, 0x0102030405060708);
        assert_eq!(f.len(), 60);
        assert_eq!(&f[12..16], &[0x88, 0x08, 0x01, 0x01]);
        assert_eq!(&f[16..18], &[0, 8]);
        assert_eq!(&f[24..26], &[0, 7], "time[3]");
        assert_eq!(&f[34..42], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
