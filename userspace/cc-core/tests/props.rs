//! Property tests: arbitrary event sequences never panic or overflow, rates
//! stay within [minimum, line], windows within theirs, and an ACC halt
//! never ends before it began.

mod common;
use cc_core::acc::{Acc, AccKnobs};
use cc_core::cc::{AckEvent, CongestionControl, IntHop, IntInfo, IntWidths, LinkParams};
use cc_core::dcqcn::{Dcqcn, DcqcnKnobs};
use cc_core::dctcp::{Dctcp, DctcpKnobs};
use cc_core::fixed::Q32;
use cc_core::fncc::{Fncc, FnccKnobs};
use cc_core::hpcc::{Hpcc, HpccKnobs};
use cc_core::icc::{Icc, IccKnobs};
use cc_core::none::NoCc;
use cc_core::swift::{Swift, SwiftKnobs};
use cc_core::timely::{Timely, TimelyKnobs};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Ev {
    Send(u32),
    Ack {
        bytes: u32,
        ce: bool,
        ue: bool,
        nak: bool,
    },
    IntAck {
        bytes: u32,
        ts: u64,
        tx: u64,
        qlen: u64,
        path: u16,
        n: u16,
        rate: i64,
        lu: u32,
    },
    Cnp,
    Timer,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        (0u32..=65536).prop_map(Ev::Send),
        (0u32..=1 << 20, any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(bytes, ce, ue, nak)| Ev::Ack { bytes, ce, ue, nak }),
        (
            0u32..=1 << 20,
            any::<u64>(),
            any::<u64>(),
            0u64..1 << 40,
            0u16..3,
            any::<u16>(),
            any::<i64>(),
            any::<u32>()
        )
            .prop_map(|(bytes, ts, tx, qlen, path, n, rate, lu)| Ev::IntAck {
                bytes,
                ts,
                tx,
                qlen,
                path,
                n,
                rate,
                lu
            }),
        Just(Ev::Cnp),
        Just(Ev::Timer),
    ]
}

fn link_strategy() -> impl Strategy<Value = LinkParams> {
    (1u64..=400_000, 256u32..=9000).prop_map(|(mbps, mtu)| LinkParams {
        line_rate_bps: mbps * 1_000_000,
        mtu,
    })
}

/// A base RTT (T), ns.
fn rtt_strategy() -> impl Strategy<Value = u64> {
    1u64..10_000_000
}

/// Runs `events` (each with a time step) through `cc`, checking the rate
/// bounds after every event. Returns an error message on a violation.
fn drive(
    cc: &mut dyn CongestionControl,
    line: u64,
    min: u64,
    events: &[(u64, Ev)],
) -> Result<(), String> {
    let mut now = 1_000u64;
    let widths = [
        IntWidths::FULL,
        IntWidths {
            ts_bits: 24,
            tx_bits: 20,
        },
    ];
    for (i, (dt, e)) in events.iter().enumerate() {
        now = now.saturating_add(*dt);
        match e {
            Ev::Send(b) => cc.on_send(now, i as u32, *b),
            Ev::Ack { bytes, ce, ue, nak } => cc.on_ack(&AckEvent {
                now_ns: now,
                psn: i as u32,
                acked_bytes: *bytes,
                acked_psns: i as u32 % 70,
                ce: *ce,
                ce_pkts: *bytes % 70,
                ue: *ue,
                nak: *nak,
                int: None,
            }),
            Ev::IntAck {
                bytes,
                ts,
                tx,
                qlen,
                path,
                n,
                rate,
                lu,
            } => {
                let hops = [IntHop {
                    b_bps: line,
                    ts_ns: *ts,
                    tx_bytes: *tx,
                    qlen: *qlen,
                }; 2];
                let k = (*path as usize) % 2 + 1;
                cc.on_ack(&AckEvent {
                    now_ns: now,
                    psn: i as u32,
                    acked_bytes: *bytes,
                    acked_psns: 1,
                    ce: false,
                    ce_pkts: 0,
                    ue: false,
                    nak: false,
                    int: Some(IntInfo {
                        hops: &hops[..k],
                        path_id: *path,
                        widths: widths[i % 2],
                        n_flows: *n,
                        port_flows: *n,
                        qlen_rate: *rate,
                        lu: Q32(u64::from(*lu)),
                    }),
                })
            }
            Ev::Cnp => cc.on_cnp(now),
            Ev::Timer => cc.on_timer(now),
        }
        let p = cc.pacing(now);
        if p.rate_bps > line || p.rate_bps < min.min(line) {
            return Err(format!(
                "{}: rate {} outside [{min}, {line}] after {e:?}",
                cc.name(),
                p.rate_bps
            ));
        }
    }
    Ok(())
}

fn events() -> impl Strategy<Value = Vec<(u64, Ev)>> {
    prop::collection::vec((0u64..200_000, ev()), 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn acc_bounds_and_halt(link in link_strategy(), t in rtt_strategy(), events in events()) {
        let k = AccKnobs::for_link(&link, t);
        let mut acc = Acc::new(&link, k, 0);
        drive(&mut acc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
        // Halts: a timer that halts sets the next send time in its future.
        let mut acc = Acc::new(&link, k, 0);
        let mut now = 0u64;
        for (dt, e) in &events {
            now = now.saturating_add(*dt);
            let halts = acc.halts();
            match e {
                Ev::Send(b) => acc.on_send(now, 0, *b),
                Ev::Ack { bytes, ce, ue, nak } => acc.on_ack(&AckEvent { now_ns: now, psn: 0, acked_bytes: *bytes, acked_psns: 1, ce: *ce, ce_pkts: u32::from(*ce), ue: *ue, nak: *nak, int: None }),
                _ => acc.on_timer(now),
            }
            if acc.halts() > halts {
                prop_assert!(acc.pacing(now).next_send_ns >= now.saturating_add(acc.last_halt_ns()),
                    "halt ends at {} before now {} + {}", acc.pacing(now).next_send_ns, now, acc.last_halt_ns());
            }
        }
    }

    #[test]
    fn dcqcn_bounds(link in link_strategy(), events in events()) {
        let k = DcqcnKnobs::for_link(&link);
        let mut cc = Dcqcn::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
        prop_assert!(cc.alpha() <= Q32::ONE);
    }

    #[test]
    fn dcqcn_simulator_bounds(link in link_strategy(), events in events()) {
        let k = DcqcnKnobs {
            variant: cc_core::dcqcn::DcqcnVariant::Simulator,
            threshold: 1,
            ..DcqcnKnobs::for_link(&link)
        };
        let mut cc = Dcqcn::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
        prop_assert!(cc.alpha() <= Q32::ONE);
    }

    #[test]
    fn hpcc_bounds(link in link_strategy(), t in rtt_strategy(), events in events()) {
        let mut cc = Hpcc::new(&link, HpccKnobs::for_link(&link, t), 0);
        drive(&mut cc, link.line_rate_bps, 1, &events).map_err(TestCaseError::fail)?;
        let w = cc.window();
        prop_assert!(w >= u64::from(link.mtu).min(w) && w > 0);
    }

    #[test]
    fn fncc_bounds(link in link_strategy(), t in rtt_strategy(), events in events()) {
        let mut cc = Fncc::new(&link, FnccKnobs::for_link(&link, t), 0);
        drive(&mut cc, link.line_rate_bps, 1, &events).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn icc_bounds(link in link_strategy(), t in rtt_strategy(), events in events()) {
        let k = IccKnobs::for_link(&link, t);
        let mut cc = Icc::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn timely_bounds(link in link_strategy(), events in events()) {
        let k = TimelyKnobs::for_link(&link);
        let mut cc = Timely::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn dctcp_bounds(link in link_strategy(), events in events()) {
        let k = DctcpKnobs::for_link(&link);
        let mut cc = Dctcp::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, k.min_rate_bps, &events).map_err(TestCaseError::fail)?;
        prop_assert!(cc.alpha() <= Q32::ONE);
    }

    #[test]
    fn swift_bounds(link in link_strategy(), t in rtt_strategy(), events in events()) {
        let k = SwiftKnobs::for_link(&link, t);
        let mut cc = Swift::new(&link, k, 0);
        drive(&mut cc, link.line_rate_bps, 1, &events).map_err(TestCaseError::fail)?;
        prop_assert!(cc.window() >= k.min_cwnd_bytes && cc.window() <= k.max_cwnd_bytes);
    }

    #[test]
    fn none_bounds(link in link_strategy(), events in events()) {
        let mut cc = NoCc::new(&link);
        drive(&mut cc, link.line_rate_bps, link.line_rate_bps, &events).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn fixed_rate_paces_exactly() {
    use cc_core::fixed_rate::FixedRate;
    // 1000 packets of 4096 B at 100 Mb/s, sent as soon as allowed: the
    // last may leave at 999 packet times, and keeps no more than the burst.
    let mut f = FixedRate::new(100_000_000, 0, 4096, 0);
    let mut now = 0;
    for _ in 0..1000 {
        now = now.max(f.pacing(now).next_send_ns);
        f.on_send(now, 0, 4096);
    }
    assert_eq!(now, 999 * 327_680);
    // A sender that was away for a second gets one burst of credit, no more.
    let later = now + 1_000_000_000;
    f.on_send(later, 0, 4096);
    assert_eq!(f.pacing(later).next_send_ns, later, "one packet of credit");
    f.on_send(later, 0, 4096);
    assert_eq!(f.pacing(later).next_send_ns, later + 327_680);
    // With 1 ms of burst, a sender woken 1 ms late may send 3 packets at once.
    let mut g = FixedRate::new(100_000_000, 1_000_000, 4096, 0);
    g.on_send(0, 0, 4096);
    let late = 327_680 + 1_000_000;
    let mut sent = 0;
    while g.pacing(late).next_send_ns <= late {
        g.on_send(late, 0, 4096);
        sent += 1;
    }
    assert_eq!(sent, 4, "the due packet plus 1 ms (3.05 packets) of credit");
    // A rate set while the flow runs paces the packets after the next one.
    let mut h = FixedRate::new(100_000_000, 0, 4096, 0);
    h.on_send(0, 0, 4096);
    h.set_rate(10_000_000);
    assert_eq!(
        h.pacing(0).next_send_ns,
        327_680,
        "the packet sent keeps its time"
    );
    h.on_send(327_680, 0, 4096);
    assert_eq!(h.pacing(0).next_send_ns, 327_680 + 3_276_800);
    assert_eq!(h.pacing(0).rate_bps, 10_000_000);
}
