//! `rxecc check`: what the hosts did, judged from a capture, as Lumina's
//! analyzers judge a NIC from mirrored traffic. Per data QP (requests from
//! one host to another's QP), from the requests and the responses that
//! answer them:
//! - NAK sequence errors, and whether the requester went back to the PSN
//!   each one named (go-back-N), with how long it took;
//! - requests sent again after an ACK had covered them;
//! - CE-marked requests, and the CNPs that answered them with the
//!   shortest gap between two;
//! - every packet's ICRC (IBTA's RoCEv2 rules: the masked fields as 1s;
//!   an INT shim, docs/wire-format.md, lies outside it), the packets by
//!   BTH opcode, and the INT shims with the hop records they hold.
//!
//! The capture is a classic pcap (`dumpcap -P`, `tshark -F pcap`) of
//! Ethernet frames. Taken at the requester's switch port, it sees the
//! requests before anything downstream drops them, and the responses as
//! they reach the requester.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

const ROCE_V2_PORT: u16 = 4791;
const ETH_HLEN: usize = 14;
const UDP_HLEN: usize = 8;
const BTH_LEN: usize = 12;
const ICRC_LEN: usize = 4;
/// docs/wire-format.md: the INT shim after the UDP header, when the TOS
/// has this bit; its length is 12 bytes and 16 per hop slot.
const INT_TOS: u8 = 0x04;
const INT_MAGIC: u8 = 0xc5;
const INT_VERSION: u8 = 2;
const INT_HDR: usize = 12;
const INT_HOP: usize = 16;
const INT_MAX_HOPS: u8 = 5;
const OP_CNP: u8 = 0x81;
/// PSNs are 24 bits and wrap.
const PSN_MASK: u32 = 0xff_ffff;

/// One RoCEv2 packet, as the checks see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Roce {
    pub t_ns: u64,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ecn: u8,
    pub opcode: u8,
    pub qpn: u32,
    pub psn: u32,
    /// AETH's syndrome, for the opcodes that carry one.
    pub aeth: Option<u8>,
    /// The hop records an INT shim holds, if one is there.
    pub int_hops: Option<u8>,
    /// An INT shim (flag and magic) with a wrong version or hop counts:
    /// its length is unknown, so the ICRC counts as bad too.
    pub int_bad: bool,
    pub icrc_ok: bool,
}

/// The ICRC over an IPv4 packet (IP header to its end, the last 4 bytes
/// the ICRC field): CRC-32 of 8 bytes of 1s (the LRH, masked) and the
/// packet with TOS, TTL, the IP and UDP checksums and BTH byte 4 as 1s,
/// the INT shim left out. Stored little-endian.
fn icrc(ip: &[u8], ihl: usize, shim: usize) -> Option<u32> {
    let body = ip.len().checked_sub(ICRC_LEN)?;
    let mut p: Vec<u8> = Vec::with_capacity(body + 8);
    p.extend_from_slice(&[0xff; 8]);
    p.extend_from_slice(ip.get(..ihl + UDP_HLEN)?);
    p.extend_from_slice(ip.get(ihl + UDP_HLEN + shim..body)?);
    let (tos, ttl, csum) = (8 + 1, 8 + 8, 8 + 10);
    p[tos] = 0xff;
    p[ttl] = 0xff;
    p[csum..csum + 2].copy_from_slice(&[0xff, 0xff]);
    let udp_csum = 8 + ihl + 6;
    p[udp_csum..udp_csum + 2].copy_from_slice(&[0xff, 0xff]);
    *p.get_mut(8 + ihl + UDP_HLEN + 4)? = 0xff;
    Some(crc32fast::hash(&p))
}

/// Whether a BTH opcode carries an AETH (RC and UC acknowledge, atomic
/// acknowledge, and the RDMA READ responses but the middle one).
fn has_aeth(op: u8) -> bool {
    matches!(op, 0x0d | 0x0f | 0x10 | 0x11 | 0x12)
}

/// Whether a BTH opcode is a response (RC: READ responses, ACKs).
fn is_response(op: u8) -> bool {
    op < 0x20 && (0x0d..=0x12).contains(&op)
}

/// Parses an Ethernet frame; None if it is not IPv4 RoCEv2.
pub fn parse(frame: &[u8], t_ns: u64) -> Option<Roce> {
    if frame.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let ip = frame.get(ETH_HLEN..)?;
    let ihl = usize::from(ip.first()? & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
    // Ethernet pads short frames: the IP length says where it ends.
    let ip = ip.get(..total)?;
    if *ip.get(9)? != 17
        || u16::from_be_bytes([*ip.get(ihl + 2)?, *ip.get(ihl + 3)?]) != ROCE_V2_PORT
    {
        return None;
    }
    let tos = *ip.get(1)?;
    let (mut shim, mut int_hops, mut int_bad) = (0, None, false);
    if tos & INT_TOS != 0 && *ip.get(ihl + UDP_HLEN)? == INT_MAGIC {
        let h = ip.get(ihl + UDP_HLEN..ihl + UDP_HLEN + INT_HDR)?;
        let (nhops, max_hops) = (h[4], h[5]);
        int_bad = h[1] != INT_VERSION || max_hops > INT_MAX_HOPS || nhops > max_hops;
        shim = INT_HDR + INT_HOP * usize::from(max_hops);
        int_hops = Some(nhops);
    }
    let bth = ip.get(ihl + UDP_HLEN + shim..ihl + UDP_HLEN + shim + BTH_LEN)?;
    let opcode = bth[0];
    let aeth = if has_aeth(opcode) {
        ip.get(ihl + UDP_HLEN + shim + BTH_LEN).copied()
    } else {
        None
    };
    let stored = u32::from_le_bytes(ip.get(ip.len() - ICRC_LEN..)?.try_into().ok()?);
    Some(Roce {
        t_ns,
        src: ip.get(12..16)?.try_into().ok()?,
        dst: ip.get(16..20)?.try_into().ok()?,
        ecn: tos & 0x03,
        opcode,
        qpn: u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
        psn: u32::from_be_bytes([0, bth[9], bth[10], bth[11]]),
        aeth,
        int_hops,
        int_bad,
        icrc_ok: !int_bad && icrc(ip, ihl, shim) == Some(stored),
    })
}

/// Reads every RoCEv2 packet of a classic pcap.
pub fn read(path: &Path) -> Result<Vec<Roce>> {
    let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut r =
        pcap_file::pcap::PcapReader::new(std::io::BufReader::new(f)).with_context(|| {
            format!(
                "{}: not a classic pcap (write it with dumpcap -P or tshark -F pcap)",
                path.display()
            )
        })?;
    if r.header().datalink != pcap_file::DataLink::ETHERNET {
        bail!("{}: its link type is not Ethernet", path.display());
    }
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.with_context(|| format!("{}: a truncated record", path.display()))?;
        let t = u64::try_from(p.timestamp.as_nanos()).unwrap_or(u64::MAX);
        out.extend(parse(&p.data, t));
    }
    Ok(out)
}

/// `a` is after `b` in PSN order (within half the space).
fn psn_after(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b) & PSN_MASK;
    d != 0 && d <= PSN_MASK / 2
}

/// What one data QP's requests and their responses show. `gbn_ok`: NAKs
/// whose PSN the requester went back to (one go-back answers every NAK
/// pending when it starts at one's PSN: it resends the later ones, and a
/// later NAK acknowledged the earlier ones' PSNs); `gbn_covered`: NAKs
/// that a go-back under way had answered already; `gbn_wrong`: NAKs after
/// which it stepped back to another PSN; `gbn_none`: NAKs it never
/// answered in the capture.
///
/// A step back to a PSN the capture had not seen is a retransmission
/// unless the next request resumes where the requests before it stopped:
/// then it was a packet the network reordered (`reordered`), neither a
/// resend nor an answer to a NAK.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct QpReport {
    /// Requester and responder addresses, and the responder's QP.
    pub flow: String,
    pub requests: u64,
    /// Requests whose PSN was sent before.
    pub resent: u64,
    /// Requests that arrived behind later ones without being resent.
    pub reordered: u64,
    pub acks: u64,
    pub nak_seq: u64,
    /// NAK sequence errors past the PSN the requester expected a response
    /// for (the last ACK's + 1, or the last NAK's): the ones rxe counts in
    /// `rcvd_seq_err` (rxe_comp.c, check_ack). A NAK right after the ACK
    /// of the PSN before its own is answered all the same.
    pub nak_seq_new: u64,
    pub gbn_ok: u64,
    /// NAKs whose PSN a go-back already under way had resent, or was
    /// about to, when the NAK passed: the requester rightly goes on.
    pub gbn_covered: u64,
    pub gbn_wrong: u64,
    /// NAKs with no request after them in the capture.
    pub gbn_none: u64,
    /// NAK to the request that answered it, mean and most.
    pub gbn_mean_us: f64,
    pub gbn_max_us: f64,
    /// Requests sent again after an ACK had covered their PSN.
    pub resent_after_ack: u64,
    pub ce: u64,
    pub cnps: u64,
    /// The shortest time between two CNPs to the requester's QP.
    pub cnp_min_gap_us: Option<f64>,
}

/// The whole capture.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub packets: u64,
    pub icrc_bad: u64,
    /// Packets by BTH opcode ("0x11": ...).
    pub opcodes: BTreeMap<String, u64>,
    /// Packets with an INT shim, the hop records those held, and shims
    /// malformed (counted in `icrc_bad` too).
    pub int_shims: u64,
    pub int_hops: u64,
    pub int_bad: u64,
    pub qps: Vec<QpReport>,
}

/// NAKs pending: (time, the PSN each names, whether the go-back under way
/// had resent that PSN when the NAK passed).
type Naks = Vec<(u64, u32, bool)>;

#[derive(Default)]
struct QpState {
    r: QpReport,
    /// The highest PSN sent and the first; the last PSN an ACK covered.
    max_psn: Option<u32>,
    first_psn: u32,
    acked: Option<u32>,
    /// The PSN the requester expects a response for next (rxe's
    /// `comp.psn`).
    expected: Option<u32>,
    /// NAKs waiting for the request that answers them: (time, the PSN
    /// each names); and the last request's PSN.
    naks: Naks,
    last_psn: Option<u32>,
    /// PSNs the capture has seen requested.
    seen: HashSet<u32>,
    /// A step back to an unseen PSN, judged by the request after it: its
    /// time, PSN, the last PSN before it, and the NAKs it would answer.
    step: Option<(u64, u32, u32, Naks)>,
    /// The go-back under way: where it started and the highest PSN sent
    /// before it; none once an ACK passes. Until an ACK, rxe's completer
    /// starts no other go-back for a NAK (rxe_comp.c, `started_retry`).
    gbn: Option<(u32, u32)>,
    gbn_sum_ns: u64,
    /// The requester's own QP, learnt from the responses' destination.
    req_qp: Option<u32>,
    last_cnp: Option<u64>,
}

impl QpState {
    /// A CNP to the requester's QP at time `t`.
    fn cnp(&mut self, t: u64) {
        self.r.cnps += 1;
        if let Some(last) = self.last_cnp {
            let gap = t.saturating_sub(last) as f64 / 1e3;
            self.r.cnp_min_gap_us = Some(self.r.cnp_min_gap_us.map_or(gap, |g| g.min(gap)));
        }
        self.last_cnp = Some(t);
    }

    /// A step back at time `t` to `psn`, with `naks` pending: the answer
    /// to all if it goes back to one's PSN (a later NAK acknowledges the
    /// PSNs before its own, so the requester rightly starts there; an
    /// earlier one's go-back resends the later ones' too); else the
    /// stale ones were covered by the go-back before and the rest were
    /// answered wrong.
    fn answered(&mut self, naks: &[(u64, u32, bool)], t: u64, psn: u32) {
        let hit = naks.iter().any(|&(_, want, _)| want == psn);
        for &(t_nak, _, stale) in naks {
            if hit {
                self.r.gbn_ok += 1;
                let d = t.saturating_sub(t_nak);
                self.gbn_sum_ns += d;
                self.r.gbn_max_us = self.r.gbn_max_us.max(d as f64 / 1e3);
            } else if stale {
                self.r.gbn_covered += 1;
            } else {
                self.r.gbn_wrong += 1;
            }
        }
    }
}

/// Judges the packets (in capture order).
pub fn judge(pkts: &[Roce]) -> Report {
    let mut rep = Report::default();
    // Data QPs by (requester, responder, responder's QP).
    let mut qps: BTreeMap<([u8; 4], [u8; 4], u32), QpState> = BTreeMap::new();
    // CNPs not yet attributed, by (requester, responder, requester's QP).
    let mut early_cnps: BTreeMap<([u8; 4], [u8; 4], u32), Vec<u64>> = BTreeMap::new();
    for p in pkts {
        rep.packets += 1;
        if !p.icrc_ok {
            rep.icrc_bad += 1;
        }
        *rep.opcodes.entry(format!("{:#04x}", p.opcode)).or_default() += 1;
        if p.int_bad {
            rep.int_bad += 1;
        } else if let Some(h) = p.int_hops {
            rep.int_shims += 1;
            rep.int_hops += u64::from(h);
        }
        if p.opcode == OP_CNP || is_response(p.opcode) {
            // To the requester (p.dst) from the responder (p.src): the data
            // QP whose PSNs hold this one, or whose requester QP it is.
            let owner = qps.iter_mut().find(|((req, resp, _), s)| {
                *req == p.dst
                    && *resp == p.src
                    && (s.req_qp == Some(p.qpn)
                        || (s.req_qp.is_none()
                            && s.max_psn.is_some_and(|m| {
                                !psn_after(p.psn, m) && !psn_after(s.first_psn, p.psn)
                            })))
            });
            let Some((_, s)) = owner else {
                // A CNP before the first response has shown which data QP
                // the requester's QP is: counted once one does.
                if p.opcode == OP_CNP {
                    early_cnps
                        .entry((p.dst, p.src, p.qpn))
                        .or_default()
                        .push(p.t_ns);
                }
                continue;
            };
            if p.opcode == OP_CNP {
                // A CNP carries no PSN of the flow: the QP is what names it.
                s.cnp(p.t_ns);
                continue;
            }
            if s.req_qp.is_none() {
                s.req_qp = Some(p.qpn);
                for t in early_cnps
                    .remove(&(p.dst, p.src, p.qpn))
                    .unwrap_or_default()
                {
                    s.cnp(t);
                }
            }
            s.r.acks += 1;
            match p.aeth.map(|a| (a >> 5, a & 0x1f)) {
                // A NAK, PSN sequence error: the PSN is the one expected.
                Some((3, 0)) => {
                    s.r.nak_seq += 1;
                    if s.expected.is_none_or(|e| psn_after(p.psn, e)) {
                        s.r.nak_seq_new += 1;
                        s.expected = Some(p.psn);
                    }
                    let stale = s.gbn.is_some_and(|(from, top)| {
                        !psn_after(from, p.psn) && !psn_after(p.psn, top)
                    }) && s.last_psn.is_some_and(|l| !psn_after(p.psn, l));
                    s.naks.push((p.t_ns, p.psn, stale));
                }
                // An ACK covers its PSN and all before it.
                Some((0, _)) => {
                    if s.acked.is_none_or(|a| psn_after(p.psn, a)) {
                        s.acked = Some(p.psn);
                    }
                    let next = p.psn.wrapping_add(1) & PSN_MASK;
                    if s.expected.is_none_or(|e| psn_after(next, e)) {
                        s.expected = Some(next);
                        s.gbn = None;
                    }
                }
                _ => {}
            }
            continue;
        }
        // Data QPs are RC (opcodes 0x00-0x1f): not the GSI's UD MADs of
        // the connection manager.
        if p.opcode >= 0x20 {
            continue;
        }
        let s = qps.entry((p.src, p.dst, p.qpn)).or_default();
        if s.r.flow.is_empty() {
            s.r.flow = format!(
                "{} -> {} qp {:#x}",
                std::net::Ipv4Addr::from(p.src),
                std::net::Ipv4Addr::from(p.dst),
                p.qpn
            );
            s.first_psn = p.psn;
        }
        s.r.requests += 1;
        if p.ecn == 3 {
            s.r.ce += 1;
        }
        // The step back before this request: a reordered packet if this
        // one resumes where the requests before it stopped.
        if let Some((t, psn, before, naks)) = s.step.take() {
            // (or the go-back sends that PSN right after it)
            if p.psn == before.wrapping_add(1) & PSN_MASK || p.psn == psn {
                s.r.resent -= 1;
                s.r.reordered += 1;
                // NAKs that passed after the late packet (it caused them)
                // wait with the ones before it.
                let since = std::mem::replace(&mut s.naks, naks);
                s.naks.extend(since);
            } else {
                s.gbn = Some((psn, s.max_psn.unwrap_or(psn)));
                s.answered(&naks, t, psn);
            }
        }
        let unseen = s.seen.insert(p.psn);
        match s.max_psn {
            Some(m) if !psn_after(p.psn, m) => s.r.resent += 1,
            _ => s.max_psn = Some(p.psn),
        }
        if s.acked.is_some_and(|a| !psn_after(p.psn, a)) {
            s.r.resent_after_ack += 1;
        }
        // After a NAK the requester goes back to its PSN; requests it had
        // queued before the NAK reached it still come first, going on
        // from the last one, so only a step back is its answer.
        let last = s.last_psn;
        s.last_psn = Some(p.psn);
        let Some(l) = last.filter(|l| !psn_after(p.psn, *l)) else {
            continue;
        };
        let naks = std::mem::take(&mut s.naks);
        if unseen {
            s.step = Some((p.t_ns, p.psn, l, naks));
        } else {
            s.gbn = Some((p.psn, s.max_psn.unwrap_or(p.psn)));
            s.answered(&naks, p.t_ns, p.psn);
        }
    }
    for (_, mut s) in qps {
        if let Some((t, psn, _, naks)) = s.step.take() {
            s.answered(&naks, t, psn);
        }
        for &(_, _, stale) in &s.naks {
            if stale {
                s.r.gbn_covered += 1;
            } else {
                s.r.gbn_none += 1;
            }
        }
        if s.r.gbn_ok > 0 {
            s.r.gbn_mean_us = s.gbn_sum_ns as f64 / s.r.gbn_ok as f64 / 1e3;
        }
        rep.qps.push(s.r);
    }
    rep
}

/// `rxecc check`'s table.
pub fn print(rep: &Report) {
    println!(
        "{} RoCEv2 packets, {} with a bad ICRC; by opcode {}; {} INT shims holding {} hop records, {} malformed",
        rep.packets,
        rep.icrc_bad,
        rep.opcodes
            .iter()
            .map(|(op, n)| format!("{op}:{n}"))
            .collect::<Vec<_>>()
            .join(","),
        rep.int_shims,
        rep.int_hops,
        rep.int_bad
    );
    println!(
        "{:<34} {:>8} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>12} {:>7} {:>6} {:>6} {:>10}",
        "data QP",
        "requests",
        "resent",
        "reorder",
        "acks",
        "NAKs",
        "GBN ok",
        "covered",
        "wrong",
        "GBN us mean",
        "re-ack",
        "CE",
        "CNPs",
        "CNP gap us"
    );
    for q in &rep.qps {
        println!(
            "{:<34} {:>8} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>12.1} {:>7} {:>6} {:>6} {:>10}",
            q.flow,
            q.requests,
            q.resent,
            q.reordered,
            q.acks,
            q.nak_seq,
            q.gbn_ok,
            q.gbn_covered,
            q.gbn_wrong + q.gbn_none,
            q.gbn_mean_us,
            q.resent_after_ack,
            q.ce,
            q.cnps,
            q.cnp_min_gap_us.map_or("-".into(), |g| format!("{g:.1}"))
        );
    }
}

/// Every data QP of a capture in one row (`rxecc run`'s check table): the
/// counts summed, the go-back-N mean weighted by the NAKs it answered,
/// the most and the shortest CNP gap over all.
pub fn total(rep: &Report) -> QpReport {
    let mut t = QpReport {
        flow: format!("{} QPs", rep.qps.len()),
        ..Default::default()
    };
    let mut gbn_ns = 0.0;
    for q in &rep.qps {
        t.requests += q.requests;
        t.resent += q.resent;
        t.reordered += q.reordered;
        t.acks += q.acks;
        t.nak_seq += q.nak_seq;
        t.nak_seq_new += q.nak_seq_new;
        t.gbn_ok += q.gbn_ok;
        t.gbn_covered += q.gbn_covered;
        t.gbn_wrong += q.gbn_wrong;
        t.gbn_none += q.gbn_none;
        gbn_ns += q.gbn_mean_us * q.gbn_ok as f64;
        t.gbn_max_us = t.gbn_max_us.max(q.gbn_max_us);
        t.resent_after_ack += q.resent_after_ack;
        t.ce += q.ce;
        t.cnps += q.cnps;
        t.cnp_min_gap_us = match (t.cnp_min_gap_us, q.cnp_min_gap_us) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    if t.gbn_ok > 0 {
        t.gbn_mean_us = gbn_ns / t.gbn_ok as f64;
    }
    t
}

/// The check table of `rxecc run`: one row per run and captured port,
/// with the packets the switch's rules acted on in that run (`injected`).
pub fn run_table(rows: &[(String, String, u64, Report)]) -> String {
    let mut out = format!(
        "{:<16} {:<6} {:>8} {:>8} {:>6} {:>8} {:>7} {:>7} {:>5} {:>7} {:>6} {:>6} {:>9} {:>6} {:>6} {:>6} {:>10} {:>8}\n",
        "run",
        "port",
        "injected",
        "requests",
        "QPs",
        "resent",
        "reorder",
        "NAKs",
        "GBN",
        "covered",
        "wrong",
        "none",
        "GBN us",
        "re-ack",
        "CE",
        "CNPs",
        "CNP gap us",
        "bad ICRC"
    );
    for (run, port, injected, rep) in rows {
        let t = total(rep);
        out.push_str(&format!(
            "{:<16} {:<6} {:>8} {:>8} {:>6} {:>8} {:>7} {:>7} {:>5} {:>7} {:>6} {:>6} {:>9.1} {:>6} {:>6} {:>6} {:>10} {:>8}\n",
            run,
            port,
            injected,
            t.requests,
            rep.qps.len(),
            t.resent,
            t.reordered,
            t.nak_seq,
            t.gbn_ok,
            t.gbn_covered,
            t.gbn_wrong,
            t.gbn_none,
            t.gbn_mean_us,
            t.resent_after_ack,
            t.ce,
            t.cnps,
            t.cnp_min_gap_us.map_or("-".into(), |g| format!("{g:.1}")),
            rep.icrc_bad
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 RoCEv2 frame with a valid ICRC.
    fn frame(src: u8, dst: u8, op: u8, qpn: u32, psn: u32, aeth: Option<u8>, ecn: u8) -> Vec<u8> {
        let mut payload = vec![op, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0];
        payload[5..8].copy_from_slice(&qpn.to_be_bytes()[1..]);
        payload[9..12].copy_from_slice(&psn.to_be_bytes()[1..]);
        if let Some(a) = aeth {
            payload.extend_from_slice(&[a, 0, 0, 1]);
        } else {
            payload.extend_from_slice(&[0xab; 32]);
        }
        let udp_len = 8 + payload.len() + ICRC_LEN;
        let total = 20 + udp_len;
        let mut ip = vec![0x45, ecn, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0];
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip.extend_from_slice(&[10, 0, 0, src, 10, 0, 0, dst]);
        ip.extend_from_slice(&[0xc0, 0x00, 0x12, 0xb7]);
        ip.extend_from_slice(&(udp_len as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0]);
        ip.extend_from_slice(&payload);
        ip.extend_from_slice(&[0; 4]);
        let c = icrc(&ip, 20, 0).unwrap();
        let n = ip.len();
        ip[n - 4..].copy_from_slice(&c.to_le_bytes());
        let mut f = vec![0; 12];
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&ip);
        f
    }

    #[test]
    fn go_back_n_and_acked_data_are_judged() {
        let data = |psn, t| parse(&frame(2, 1, 0x07, 0x11, psn, None, 2), t).unwrap();
        let ack = |psn, syn, t| parse(&frame(1, 2, 0x11, 0x22, psn, Some(syn), 0), t).unwrap();
        // 100..=104 sent, 102 lost: the responder NAKs 102 at t=50, the
        // requester resends from 102 at t=80; 100 acked, then sent again.
        let pkts = vec![
            data(100, 0),
            data(101, 10),
            data(103, 20),
            ack(100, 0x1f, 30),
            data(104, 40),
            ack(102, 0x60, 50),
            data(102, 80_080),
            data(103, 80_090),
            data(100, 80_100),
        ];
        let r = judge(&pkts);
        assert_eq!((r.packets, r.icrc_bad), (9, 0));
        let q = &r.qps[0];
        assert_eq!(q.flow, "10.0.0.2 -> 10.0.0.1 qp 0x11");
        assert_eq!((q.requests, q.resent, q.acks, q.nak_seq), (7, 3, 2, 1));
        assert_eq!(q.nak_seq_new, 1);
        assert_eq!((q.gbn_ok, q.gbn_wrong, q.gbn_none), (1, 0, 0));
        assert!((q.gbn_mean_us - 80.03).abs() < 1e-9, "{}", q.gbn_mean_us);
        assert_eq!(q.resent_after_ack, 1);
        // Going back to another PSN is wrong.
        let wrong = judge(&[data(100, 0), data(101, 1), ack(101, 0x60, 2), data(100, 3)]);
        assert_eq!((wrong.qps[0].gbn_ok, wrong.qps[0].gbn_wrong), (0, 1));
        // Requests queued before the NAK arrived go on first.
        let queued = judge(&[
            data(100, 0),
            data(102, 1),
            ack(101, 0x60, 2),
            data(103, 3),
            data(104, 4),
            data(101, 9),
        ]);
        let q = &queued.qps[0];
        assert_eq!((q.gbn_ok, q.gbn_wrong, q.gbn_none), (1, 0, 0));
        assert!((q.gbn_max_us - 0.007).abs() < 1e-9, "{}", q.gbn_max_us);
        // Never answered.
        let none = judge(&[data(100, 0), ack(100, 0x60, 1), data(101, 2)]);
        assert_eq!(none.qps[0].gbn_none, 1);
        // 102 reordered behind 103 and 104 (a switch held it): NAK 102,
        // 102 arrives late and 105 goes on, NAK 103 for the 104 taken as
        // lost; the one go-back to 102 answers both.
        let reordered = judge(&[
            data(101, 0),
            data(103, 1),
            ack(102, 0x60, 2),
            data(104, 3),
            data(102, 4),
            data(105, 5),
            ack(103, 0x60, 6),
            data(106, 7),
            data(102, 10),
            data(103, 11),
        ]);
        let q = &reordered.qps[0];
        assert_eq!((q.reordered, q.resent), (1, 2));
        assert_eq!((q.nak_seq, q.gbn_ok, q.gbn_wrong, q.gbn_none), (2, 2, 0, 0));
        assert!((q.gbn_max_us - 0.008).abs() < 1e-9, "{}", q.gbn_max_us);
        // A NAK that passes after the go-back under way resent its PSN
        // (stale) is covered by it if the requester does not go back to it
        // again; the UD MADs of QP 1 are no data QP.
        let covered = judge(&[
            data(100, 0),
            data(102, 1),
            ack(101, 0x60, 2),
            data(101, 3),
            data(102, 4),
            ack(102, 0x60, 5),
            data(103, 6),
            parse(&frame(2, 1, 0x64, 1, 7, None, 0), 7).unwrap(),
        ]);
        assert_eq!(covered.qps.len(), 1);
        let q = &covered.qps[0];
        assert_eq!(
            (q.nak_seq, q.gbn_ok, q.gbn_covered, q.gbn_wrong, q.gbn_none),
            (2, 1, 1, 0, 0)
        );
        // The same NAK, then a step back to its PSN: the resent packet was
        // lost again, and this go-back answers it.
        let again = judge(&[
            data(100, 0),
            data(102, 1),
            ack(101, 0x60, 2),
            data(101, 3),
            data(102, 4),
            ack(102, 0x60, 5),
            data(103, 6),
            data(102, 9),
        ]);
        let q = &again.qps[0];
        assert_eq!((q.gbn_ok, q.gbn_covered, q.gbn_wrong), (2, 0, 0));
        // NAK 101, then NAK 102 (101 arrived late): going back to 102
        // answers both, 101 being acknowledged by the second.
        let later = judge(&[
            data(100, 0),
            data(102, 1),
            ack(101, 0x60, 2),
            data(101, 3),
            data(103, 4),
            ack(102, 0x60, 5),
            data(104, 6),
            data(102, 9),
        ]);
        let q = &later.qps[0];
        assert_eq!(
            (q.reordered, q.gbn_ok, q.gbn_wrong, q.gbn_none),
            (1, 2, 0, 0)
        );
        // The late packet followed at once by the go-back to it.
        let at_once = judge(&[
            data(100, 0),
            data(102, 1),
            ack(101, 0x60, 2),
            data(101, 3),
            data(101, 4),
            data(102, 5),
        ]);
        let q = &at_once.qps[0];
        assert_eq!((q.reordered, q.resent, q.gbn_ok, q.gbn_none), (1, 2, 1, 0));
        // The late packet passes before the NAK it caused: 101 held
        // behind 102 and 103, NAK
        // 101, 104 goes on, the go-back to 101 answers the NAK, and NAK
        // 102 (104 taken as lost after the late 101) passes after the
        // go-back resent 102.
        let nak_after_late = judge(&[
            data(100, 0),
            data(102, 1),
            data(103, 2),
            data(101, 3),
            ack(101, 0x60, 4),
            data(104, 5),
            data(101, 9),
            data(102, 10),
            ack(102, 0x60, 11),
            data(103, 12),
        ]);
        let q = &nak_after_late.qps[0];
        assert_eq!((q.reordered, q.resent), (1, 3));
        assert_eq!(q.nak_seq_new, 2);
        assert_eq!(
            (q.nak_seq, q.gbn_ok, q.gbn_covered, q.gbn_wrong, q.gbn_none),
            (2, 1, 1, 0, 0)
        );
        // A NAK right after the ACK of the PSN before its own (102 lost,
        // 101 acked first): answered, but not past what the requester
        // expected, so rxe does not count it.
        let after_ack = judge(&[
            data(100, 0),
            data(101, 1),
            ack(101, 0x1f, 2),
            data(103, 3),
            ack(102, 0x60, 4),
            data(102, 9),
            data(103, 10),
        ]);
        let q = &after_ack.qps[0];
        assert_eq!((q.nak_seq, q.nak_seq_new, q.gbn_ok), (1, 0, 1));
        // A NAK while a go-back is under way, for a PSN it resent before
        // requests passed the highest sent before it, and no ACK since:
        // rxe starts no second go-back, and the first covered it.
        let under_way = judge(&[
            data(100, 0),
            data(101, 1),
            ack(100, 0x60, 2),
            data(102, 3),
            data(100, 4),
            data(101, 5),
            data(102, 6),
            data(103, 7),
            data(104, 8),
            ack(101, 0x60, 9),
            data(105, 10),
            ack(100, 0x1f, 11),
            data(106, 12),
            ack(106, 0x1f, 13),
        ]);
        let q = &under_way.qps[0];
        assert_eq!(
            (q.nak_seq, q.gbn_ok, q.gbn_covered, q.gbn_wrong, q.gbn_none),
            (2, 1, 1, 0, 0)
        );
    }

    #[test]
    fn a_run_row_sums_its_qps() {
        let data = |qp, psn, t| parse(&frame(2, 1, 0x07, qp, psn, None, 3), t).unwrap();
        let nak = |psn, t| parse(&frame(1, 2, 0x11, 0x22, psn, Some(0x60), 0), t).unwrap();
        // QP 0x11: a NAK answered 10 ns later; QP 0x33: one answered 30
        // ns later (its responses go to another requester QP).
        let other = |psn, t| parse(&frame(1, 2, 0x11, 0x44, psn, Some(0x60), 0), t).unwrap();
        let rep = judge(&[
            data(0x11, 100, 0),
            data(0x11, 102, 1),
            nak(101, 2),
            data(0x11, 101, 12),
            data(0x33, 5000, 20),
            data(0x33, 5002, 21),
            other(5001, 22),
            data(0x33, 5001, 52),
        ]);
        assert_eq!(rep.qps.len(), 2);
        let t = total(&rep);
        assert_eq!((t.requests, t.nak_seq, t.gbn_ok, t.ce), (6, 2, 2, 6));
        assert_eq!(t.nak_seq_new, 2);
        assert!((t.gbn_mean_us - 0.020).abs() < 1e-9, "{}", t.gbn_mean_us);
        assert!((t.gbn_max_us - 0.030).abs() < 1e-9, "{}", t.gbn_max_us);
        let table = run_table(&[("acc".into(), "p1".into(), 2, rep)]);
        let row = table.lines().nth(1).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cols[..6], ["acc", "p1", "2", "6", "2", "2"], "{row}");
    }

    #[test]
    fn icrc_catches_a_flipped_byte_but_not_marks() {
        let f = frame(2, 1, 0x07, 0x11, 5, None, 2);
        assert!(parse(&f, 0).unwrap().icrc_ok);
        // A CE mark (TOS) and a new TTL are masked out.
        let mut marked = f.clone();
        marked[ETH_HLEN + 1] = 3;
        marked[ETH_HLEN + 8] = 1;
        assert!(parse(&marked, 0).unwrap().icrc_ok);
        let mut bad = f;
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        assert!(!parse(&bad, 0).unwrap().icrc_ok);
    }

    /// `f` with an INT shim after its UDP header: `nhops` of `max_hops`
    /// records written, version `version`; lengths and ICRC made right.
    fn with_shim(f: &[u8], nhops: u8, max_hops: u8, version: u8) -> Vec<u8> {
        let at = ETH_HLEN + 20 + UDP_HLEN;
        let mut shim = vec![INT_MAGIC, version, 0, 0, nhops, max_hops, 0, 0, 0, 0, 0, 0];
        shim.extend(std::iter::repeat_n(0x5a, INT_HOP * usize::from(max_hops)));
        let mut g = f[..at].to_vec();
        g.extend_from_slice(&shim);
        g.extend_from_slice(&f[at..]);
        g[ETH_HLEN + 1] |= INT_TOS;
        let ip_len = (g.len() - ETH_HLEN) as u16;
        g[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&ip_len.to_be_bytes());
        g[ETH_HLEN + 24..ETH_HLEN + 26].copy_from_slice(&(ip_len - 20).to_be_bytes());
        let n = g.len();
        let c = icrc(&g[ETH_HLEN..], 20, shim.len()).unwrap();
        g[n - 4..].copy_from_slice(&c.to_le_bytes());
        g
    }

    #[test]
    fn int_shims_and_opcodes_are_counted_and_a_bad_shim_is_a_bad_icrc() {
        let ack = frame(1, 2, 0x11, 0x22, 7, Some(0x1f), 0);
        let stamped = parse(&with_shim(&ack, 2, 3, INT_VERSION), 0).unwrap();
        assert_eq!(
            (stamped.opcode, stamped.psn, stamped.int_hops),
            (0x11, 7, Some(2))
        );
        assert!(stamped.icrc_ok && !stamped.int_bad);
        // More hops written than room, or another version: malformed.
        let overfull = parse(&with_shim(&ack, 4, 3, INT_VERSION), 0).unwrap();
        let v1 = parse(&with_shim(&ack, 1, 3, 1), 0).unwrap();
        assert!(overfull.int_bad && !overfull.icrc_ok && v1.int_bad && !v1.icrc_ok);
        let data = parse(&frame(2, 1, 0x07, 0x11, 7, None, 2), 0).unwrap();
        let r = judge(&[data, stamped, overfull, v1]);
        assert_eq!((r.packets, r.icrc_bad), (4, 2));
        assert_eq!((r.int_shims, r.int_hops, r.int_bad), (1, 2, 2));
        let ops: Vec<_> = r.opcodes.iter().map(|(o, n)| (o.as_str(), *n)).collect();
        assert_eq!(ops, [("0x07", 1), ("0x11", 3)]);
    }

    #[test]
    fn cnps_count_per_requester_qp_with_their_gap() {
        let data = |psn, t| parse(&frame(2, 1, 0x07, 0x11, psn, None, 3), t).unwrap();
        let cnp = |t| parse(&frame(1, 2, OP_CNP, 0x22, 0, None, 0), t).unwrap();
        let ack = |psn, t| parse(&frame(1, 2, 0x11, 0x22, psn, Some(0x1f), 0), t).unwrap();
        let r = judge(&[
            data(1, 0),
            ack(1, 5),
            cnp(10),
            data(2, 20),
            cnp(1_010),
            cnp(5_010),
        ]);
        let q = &r.qps[0];
        assert_eq!((q.ce, q.cnps), (2, 3));
        assert_eq!(q.cnp_min_gap_us, Some(1.0));
        // CNPs before the first ACK names the requester's QP count too.
        let early = judge(&[data(1, 0), cnp(10), cnp(3_010), ack(1, 4_000), cnp(9_010)]);
        let q = &early.qps[0];
        assert_eq!(q.cnps, 3);
        assert_eq!(q.cnp_min_gap_us, Some(3.0));
    }
}
