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

mod int;
mod mark;
mod pfc;

/// Runs every test; fails if any does.
pub fn run() -> Result<()> {
    crate::modules::ensure_switch()?;
    let mut t = Tally {
        passed: 0,
        failed: Vec::new(),
    };
    pfc::pfc_tests(&mut t)?;
    mark::mark_tests(&mut t)?;
    int::int_tests(&mut t)?;
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
