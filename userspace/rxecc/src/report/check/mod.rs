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
mod tests;
