//! The port program's ingress of MAC control frames: malformed and
//! foreign ones dropped, stale PAUSEs ignored, GFC's stages and credit
//! limits, the arrival clock, and skb->mark's bits for injection.

use super::*;

pub(super) fn pfc_tests(t: &mut Tally) -> Result<()> {
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
