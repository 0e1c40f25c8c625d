//! The marker (mark.bpf.c) in every mode.

use super::*;

/// A marker case: name, mode, UDP port, ECN in, ECN out, queue, paused,
/// resumed how long ago (ns), queue at that resume, TCD's decision.
type MarkCase = (&'static str, u32, u16, u8, u8, u64, u64, i64, u64, u8);

/// The marker (mark.bpf.c) in every mode.
pub(super) fn mark_tests(t: &mut Tally) -> Result<()> {
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
