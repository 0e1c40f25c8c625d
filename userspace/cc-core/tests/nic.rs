//! The NIC's arbiter (`nic_queue_pkts`): QPs of one device share its line.

use cc_core::cc::{advance_pacing, nic_gate};

/// Four QPs that each want the whole line of a 20 Mb/s device: with the
/// arbiter, the device's queue never holds more than `queue_ns` of wire
/// time, and the four together send at the line rate.
#[test]
fn four_qps_share_one_line() {
    let rate_bps = 20_000_000;
    let wire = 4096 * 8 * 1_000_000_000 / rate_bps; // 1.64 ms a packet
    let queue_ns = 2 * wire;
    let (mut nic, mut now, mut sent) = (0u64, 0u64, 0u64);
    let mut ready = [0u64; 4];
    while now < 1_000_000_000 {
        for t in &mut ready {
            if *t > now {
                continue;
            }
            match nic_gate(nic, now, queue_ns) {
                Some(until) => *t = until,
                None => {
                    nic = advance_pacing(nic, now, 4096, rate_bps, 0);
                    sent += 1;
                    assert!(
                        nic <= now + queue_ns + wire,
                        "the device queue grew past its bound"
                    );
                }
            }
        }
        now += 100_000;
    }
    // One second at the line: 610 packets, give or take the queue.
    let line = 1_000_000_000 / wire;
    assert!(
        sent >= line && sent <= line + 3,
        "{sent} packets, the line carries {line}"
    );
}

#[test]
fn gate_opens_when_the_clock_is_near() {
    assert_eq!(nic_gate(0, 5, 0), None, "an idle device");
    assert_eq!(nic_gate(100, 50, 60), None, "within the queue");
    assert_eq!(nic_gate(200, 50, 60), Some(140));
    assert_eq!(nic_gate(u64::MAX, 0, u64::MAX), None);
}
