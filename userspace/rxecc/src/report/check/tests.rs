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
