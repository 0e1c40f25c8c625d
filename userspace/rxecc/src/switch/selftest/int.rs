//! INT records stamped into HPCC's shim, and a full shim left alone.

use super::*;

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
pub(super) fn int_tests(t: &mut Tally) -> Result<()> {
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
