//! ACC against the equations of Algorithm 1.

mod common;
use cc_core::acc::{Acc, AccClass, AccKnobs};
use cc_core::cc::CongestionControl;
use cc_core::fixed::tx_time_ns;
use common::*;

const MTU: u32 = 4096;

/// One period: send `sent` packets, receive `acks` ACKs of one MTU each,
/// `ce` of them CE-marked, spread over the period; then the timer fires.
fn period(acc: &mut Acc, start: u64, t: u64, sent: u32, acks: u32, ce: u32, ue: u32) -> u64 {
    for i in 0..sent {
        acc.on_send(start + u64::from(i), i, MTU);
    }
    for i in 0..acks {
        let at = start + 1 + u64::from(i) * (t - 2) / u64::from(acks.max(1));
        acc.on_ack(&ack(at, MTU, i < ce, i >= ce && i < ce + ue));
    }
    acc.on_timer(start + t);
    start + t
}

fn setup() -> (Acc, AccKnobs, u64) {
    let (l, t) = (link(10), 50 * US);
    let k = AccKnobs::for_link(&l, t);
    (Acc::new(&l, k, 0), k, k.period_ns)
}

#[test]
fn defaults_follow_the_paper() {
    let (_, k, t) = setup();
    assert_eq!(t, 50_000);
    assert_eq!(k.ri_low_bps, 10 * GBPS / 250);
    assert_eq!(k.ri_high_bps, 10 * k.ri_low_bps);
    assert_eq!(k.p_thresh, 1);
}

#[test]
fn halt_time_is_excess_over_ack_rate() {
    let (mut acc, _, t) = setup();
    // Period A: 20 packets out, 5 clean ACKs. Period B: 5 more out, 8 ACKs all CE.
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let now = period(&mut acc, now, t, 5, 8, 8, 0);
    assert_eq!(acc.class(), AccClass::Congested);
    // R = ΔA/T = 8·MTU/T; t_halt = (ΔS_A − ΔA_B)/R.
    let r = 8 * u64::from(MTU) * 8 * 1_000_000_000 / t;
    assert_eq!(acc.ack_rate_bps(), r);
    let want = tx_time_ns(12 * u64::from(MTU), r);
    assert_eq!(acc.last_halt_ns(), want);
    assert!(acc.halted());
    let p = acc.pacing(now);
    assert!(
        p.next_send_ns >= now + want,
        "halt ends at {} < {}",
        p.next_send_ns,
        now + want
    );
    assert_eq!(p.rate_bps, r);
}

#[test]
fn halt_is_extended_by_the_old_rate_excess() {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let now = period(&mut acc, now, t, 5, 8, 8, 0);
    let halt = acc.last_halt_ns();
    let end = acc.pacing(now).next_send_ns;
    let r = acc.ack_rate_bps();
    let line = 10 * GBPS;
    // Period C (halted): CE ACKs keep coming. ΔS of B was 5 packets sent at R_s = line.
    let now2 = period(&mut acc, now, t, 0, 4, 4, 0);
    let ds = 5 * u64::from(MTU);
    let excess = ds - ds * r / line;
    let ext = tx_time_ns(excess, r);
    assert_eq!(acc.last_halt_ns(), halt + ext);
    assert_eq!(acc.pacing(now2).next_send_ns, end + ext);
    assert!(!acc.halted(), "halt ends after its one extension");
}

/// A coalesced ACK answering `psns` packets of one MTU each, with FECN if
/// `ce`, and the responder's count of CE packets.
fn coalesced(at: u64, psns: u32, ce: bool, ce_pkts: u32) -> cc_core::cc::AckEvent<'static> {
    let mut a = ack(at, psns * MTU, ce, false);
    a.acked_psns = psns;
    a.ce_pkts = ce_pkts;
    a
}

/// The class after period A (20 out, 5 clean ACKs) and a period B whose
/// ACKs are `acks` (packets, FECN, count).
fn class_after(acks: &[(u32, bool, u32)]) -> AccClass {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    for (i, &(psns, ce, n)) in acks.iter().enumerate() {
        acc.on_ack(&coalesced(now + 1 + i as u64, psns, ce, n));
    }
    acc.on_timer(now + t);
    acc.class()
}

#[test]
fn coalesced_acks_count_packets_not_acks() {
    let (mut per_pkt, _, t) = setup();
    let (mut coal, _, _) = setup();
    // Period B: 8 packets acked, all CE, as 8 ACKs or as 2 ACKs of 4. Same
    // class, same ack rate, same halt.
    let now = period(&mut per_pkt, 0, t, 20, 5, 0, 0);
    period(&mut per_pkt, now, t, 5, 8, 8, 0);
    let now_c = period(&mut coal, 0, t, 20, 5, 0, 0);
    for i in 0..5 {
        coal.on_send(now_c + u64::from(i), i, MTU);
    }
    coal.on_ack(&coalesced(now_c + t / 3, 4, true, 4));
    coal.on_ack(&coalesced(now_c + 2 * t / 3, 4, true, 4));
    coal.on_timer(now_c + t);
    assert_eq!(coal.class(), AccClass::Congested);
    assert_eq!(coal.ack_rate_bps(), per_pkt.ack_rate_bps());
    assert_eq!(coal.last_halt_ns(), per_pkt.last_halt_ns());

    // 6 of 8 packets CE is 75%, under the 90% rule: mixed, though both ACKs
    // carry FECN (counting ACKs would make it congested).
    assert_eq!(class_after(&[(4, true, 3), (4, true, 3)]), AccClass::Mixed);
    // 9 of 10 meets it.
    assert_eq!(class_after(&[(10, true, 9)]), AccClass::Congested);
    // FECN from a responder that does not count stands for one packet.
    assert_eq!(class_after(&[(10, true, 0)]), AccClass::Mixed);
    // A count above the packets answered counts as all of them, no more:
    // with 10 clean packets after it, 4 of 14 are CE.
    assert_eq!(
        class_after(&[(4, true, 63), (10, false, 0)]),
        AccClass::Mixed
    );
}

#[test]
fn ack_rate_uses_long_inter_arrival() {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 10, 1, 0, 0);
    // Two silent periods, then one CE ACK: the gap is about 3T, not T.
    let now = period(&mut acc, now, t, 0, 0, 0, 0);
    let now = period(&mut acc, now, t, 0, 0, 0, 0);
    acc.on_ack(&ack(now + t - 1, MTU, true, false));
    acc.on_timer(now + t);
    let gap = (now + t - 1) - 1;
    let want = u64::from(MTU) * 8 * 1_000_000_000 / gap;
    assert_eq!(acc.ack_rate_bps(), want);
}

#[test]
fn ack_rate_is_over_the_period_as_it_ran() {
    // A kernel runs a period at the QP's first event after the timer: here
    // three periods' worth of ACKs arrive before one late `on_timer`. R is
    // what arrived over the 3T that really passed, not over T.
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let now = period(&mut acc, now, 3 * t, 10, 12, 12, 0);
    assert_eq!(acc.class(), AccClass::Congested);
    assert_eq!(
        acc.ack_rate_bps(),
        12 * u64::from(MTU) * 8 * 1_000_000_000 / (3 * t)
    );
    assert!(acc.pacing(now).next_send_ns > now);
}

#[test]
fn two_stage_rate_increase() {
    let (mut acc, k, t) = setup();
    let line = 10 * GBPS;
    // Halve the rate first via two UE periods (P_thresh = 1).
    let mut now = period(&mut acc, 0, t, 1, 1, 0, 1);
    now = period(&mut acc, now, t, 1, 1, 0, 1);
    assert_eq!(acc.pacing(now).rate_bps, line / 2);
    let mut r = line / 2;
    for (i, ri) in [k.ri_low_bps, k.ri_low_bps, k.ri_high_bps, k.ri_high_bps]
        .into_iter()
        .enumerate()
    {
        now = period(&mut acc, now, t, 1, 1, 0, 0);
        r += (line - r) * ri / line;
        assert_eq!(acc.pacing(now).rate_bps, r, "uncongested period {}", i + 1);
    }
}

#[test]
fn victims_halve_after_p_thresh_periods_of_ue() {
    let (mut acc, _, t) = setup();
    let line = 10 * GBPS;
    let now = period(&mut acc, 0, t, 1, 4, 0, 4);
    assert_eq!(acc.class(), AccClass::Undetermined);
    assert_eq!(acc.pacing(now).rate_bps, line, "N_v = 1 = P_thresh: hold");
    let now = period(&mut acc, now, t, 1, 4, 0, 1);
    assert_eq!(
        acc.pacing(now).rate_bps,
        line / 2,
        "N_v = 2 > P_thresh: halve"
    );
    // A clean period resets N_v; the next UE period holds again.
    let now = period(&mut acc, now, t, 1, 4, 0, 0);
    let r = acc.pacing(now).rate_bps;
    let now = period(&mut acc, now, t, 1, 4, 0, 2);
    assert_eq!(acc.pacing(now).rate_bps, r);
}

/// Halves the rate with two UE periods (P_thresh = 1), so that a hold and
/// an increase differ; returns the time.
fn below_line(acc: &mut Acc, t: u64) -> u64 {
    let now = period(acc, 0, t, 1, 1, 0, 1);
    period(acc, now, t, 1, 1, 0, 1)
}

#[test]
fn some_ce_below_ninety_percent_holds() {
    let (mut acc, _, t) = setup();
    let now = below_line(&mut acc, t);
    let r = acc.pacing(now).rate_bps;
    assert_eq!(r, 5 * GBPS);
    let now = period(&mut acc, now, t, 20, 10, 8, 0);
    assert_eq!(acc.class(), AccClass::Mixed);
    assert_eq!(
        acc.pacing(now).rate_bps,
        r,
        "§4.1: only no CE and no UE is uncongested"
    );
    // A clean period after it is the first of a run: RI_low.
    let now = period(&mut acc, now, t, 1, 1, 0, 0);
    let line = 10 * GBPS;
    let k = AccKnobs::for_link(&link(10), 50 * US);
    assert_eq!(
        acc.pacing(now).rate_bps,
        r + (line - r) * k.ri_low_bps / line
    );
    let _ = period(&mut acc, now, t, 20, 10, 9, 0);
    assert_eq!(acc.class(), AccClass::Congested);
}

/// `acc_mixed_increase=1`: a mixed period raises the rate as a clean one.
#[test]
fn mixed_increase_knob_raises_the_rate() {
    use cc_core::acc::MixedPeriod;
    let (l, t) = (link(10), 50 * US);
    let k = AccKnobs {
        mixed: MixedPeriod::Increase,
        ..AccKnobs::for_link(&l, t)
    };
    let t = k.period_ns;
    let mut acc = Acc::new(&l, k, 0);
    let now = below_line(&mut acc, t);
    let r = acc.pacing(now).rate_bps;
    let now = period(&mut acc, now, t, 20, 10, 8, 0);
    assert_eq!(acc.class(), AccClass::Mixed);
    let line = 10 * GBPS;
    assert_eq!(
        acc.pacing(now).rate_bps,
        r + (line - r) * k.ri_low_bps / line
    );
}

#[test]
fn no_halt_before_acks_of_post_halt_data() {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let now = period(&mut acc, now, t, 5, 8, 8, 0);
    let now = period(&mut acc, now, t, 0, 4, 4, 0); // extension, halt ends
    let halts = acc.halts();
    // More CE periods whose ACKs are for pre-halt data: snd_una <= snd_nxt_start.
    let _ = period(&mut acc, now, t, 0, 2, 2, 0);
    assert_eq!(acc.halts(), halts);
}

/// Algorithm 1 line 4: only ACKs of data sent after the halt
/// (`snd_una > snd_nxt_start`) may set the rate and halt again. The
/// periods after the halt send, so that a wrong rule would both cut the
/// rate to the ACK rate and halt for the excess.
#[test]
fn acks_of_pre_halt_data_neither_cut_nor_halt() {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let now = period(&mut acc, now, t, 5, 8, 8, 0);
    assert_eq!(acc.halts(), 1);
    let now = period(&mut acc, now, t, 0, 4, 4, 0); // extension, halt ends
    assert!(!acc.halted());
    let rate = acc.pacing(now).rate_bps;
    // 17 of 25 packets acked; these periods ack 2 more each, all pre-halt,
    // while sending 10: ΔS > ΔA, the rule's excess.
    let now = period(&mut acc, now, t, 10, 2, 2, 0);
    assert_eq!(acc.class(), AccClass::Congested);
    assert_eq!(acc.pacing(now).rate_bps, rate, "rate kept");
    let now = period(&mut acc, now, t, 10, 2, 2, 0);
    assert_eq!(acc.halts(), 1, "no new halt");
    assert_eq!(acc.pacing(now).rate_bps, rate, "rate kept");
}

/// A mixed period ends a run of uncongested ones (§4.1: N_u counts
/// consecutive uncongested periods), so the clean period after it steps by
/// RI_low again, not RI_high.
#[test]
fn a_mixed_period_restarts_the_increase_at_ri_low() {
    let (mut acc, k, t) = setup();
    let line = 10 * GBPS;
    let mut now = below_line(&mut acc, t);
    for _ in 0..3 {
        now = period(&mut acc, now, t, 1, 1, 0, 0);
    }
    let now = period(&mut acc, now, t, 20, 10, 8, 0);
    assert_eq!(acc.class(), AccClass::Mixed);
    let r = acc.pacing(now).rate_bps;
    let now = period(&mut acc, now, t, 1, 1, 0, 0);
    assert_eq!(
        acc.pacing(now).rate_bps,
        r + (line - r) * k.ri_low_bps / line,
        "RI_low after a mixed period"
    );
}

/// A halt ends at the end of the next period with its extension, whatever
/// that period shows (§4.2: the excess is inferred without waiting for
/// ACKs); a later congestion halts anew instead of extending it.
#[test]
fn a_halt_ends_after_one_period_with_its_extension() {
    for clean_acks in [0, 4] {
        let (mut acc, _, t) = setup();
        let now = period(&mut acc, 0, t, 20, 5, 0, 0);
        let now = period(&mut acc, now, t, 5, 8, 8, 0);
        assert!(acc.halted());
        let halt = acc.last_halt_ns();
        let end = acc.pacing(now).next_send_ns;
        let r = acc.ack_rate_bps();
        // The next period: no ACKs, or clean ones. ΔS of B was 5 packets
        // sent at R_s = line.
        let now = period(&mut acc, now, t, 0, clean_acks, 0, 0);
        assert!(!acc.halted(), "{clean_acks} clean ACKs: the halt ended");
        let ds = 5 * u64::from(MTU);
        let ext = tx_time_ns(ds - ds * r / (10 * GBPS), r);
        assert_eq!(
            acc.last_halt_ns(),
            halt + ext,
            "{clean_acks} clean ACKs: extended"
        );
        assert_eq!(acc.pacing(now).next_send_ns, end + ext);
        // Post-halt data acked (snd_una passes snd_nxt_start), then congestion.
        let now = period(&mut acc, now, t, 10, 14, 0, 0);
        let now = period(&mut acc, now, t, 5, 8, 8, 0);
        assert_eq!(acc.class(), AccClass::Congested);
        assert_eq!(
            acc.halts(),
            2,
            "{clean_acks} clean ACKs: a new congestion halts anew"
        );
        assert!(acc.halted());
        assert!(acc.pacing(now).next_send_ns > now);
    }
}

#[test]
fn acks_of_nothing_new_are_no_information() {
    let (mut acc, _, t) = setup();
    let now = period(&mut acc, 0, t, 20, 5, 0, 0);
    let rate = acc.pacing(now).rate_bps;
    // A period of CE-marked ACKs that acknowledge no new byte: R would be 0.
    for i in 0..4 {
        acc.on_ack(&ack(now + 1 + i, 0, true, false));
    }
    acc.on_timer(now + t);
    assert_eq!(acc.class(), AccClass::NoInfo);
    assert!(!acc.halted());
    assert_eq!(acc.pacing(now + t).rate_bps, rate);
    // The next informative congested period halts for the excess sent before.
    let now = period(&mut acc, now + t, t, 5, 8, 8, 0);
    assert_eq!(acc.class(), AccClass::Congested);
    let r = 8 * u64::from(MTU) * 8 * 1_000_000_000 / t;
    assert_eq!(acc.last_halt_ns(), tx_time_ns(12 * u64::from(MTU), r));
    assert!(acc.pacing(now).next_send_ns >= now);
}

/// The module's knobs at 0 give the link's defaults (RI_high follows
/// RI_low); set ones win, and the pacing credit never falls below a packet.
#[test]
fn settings_default_to_the_link() {
    use cc_core::acc::AccSettings;
    let link = cc_core::cc::LinkParams {
        line_rate_bps: 100_000_000,
        mtu: MTU,
    };
    let t = 10_000_000;
    let base = AccKnobs::for_link(&link, t);
    let k = AccKnobs::from_settings(
        &link,
        t,
        &AccSettings {
            p_thresh: 1,
            ce_permille: 900,
            ..Default::default()
        },
    );
    assert_eq!(
        (k.ri_low_bps, k.ri_high_bps, k.burst_ns),
        (base.ri_low_bps, base.ri_high_bps, base.burst_ns)
    );
    assert_eq!(k.ce_fraction, base.ce_fraction);
    assert_eq!(k.mixed, cc_core::acc::MixedPeriod::Hold);
    let k = AccKnobs::from_settings(
        &link,
        t,
        &AccSettings {
            ri_low_bps: 2_000_000,
            p_thresh: 3,
            ce_permille: 500,
            burst_ns: 1,
            mixed_increase: true,
            ..Default::default()
        },
    );
    assert_eq!(k.mixed, cc_core::acc::MixedPeriod::Increase);
    assert_eq!(
        (k.ri_low_bps, k.ri_high_bps, k.p_thresh),
        (2_000_000, 20_000_000, 3)
    );
    assert_eq!(k.burst_ns, tx_time_ns(u64::from(MTU), link.line_rate_bps));
}
