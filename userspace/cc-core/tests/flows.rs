//! FNCC's receiver-side flow count (`cc_core::flows`).

use cc_core::flows::ActiveFlows;

const T: u64 = 1_000_000;

#[test]
fn counts_distinct_flows_once_per_window() {
    let mut f = ActiveFlows::new();
    let mut marks = [0u32; 4];
    let mut n = 0;
    for round in 0..10u64 {
        for m in marks.iter_mut() {
            n = f.on_data(round * 1000, T, m);
        }
    }
    assert_eq!(n, 4, "4 flows, many packets each, in one window");
}

#[test]
fn a_flow_that_stops_leaves_the_count_after_two_windows() {
    let mut f = ActiveFlows::new();
    let (mut a, mut b) = (0u32, 0u32);
    f.on_data(0, T, &mut a);
    assert_eq!(f.on_data(10, T, &mut b), 2);
    // b stops; a goes on.
    assert_eq!(
        f.on_data(T + 10, T, &mut a),
        2,
        "b was active in the last window"
    );
    assert_eq!(
        f.on_data(2 * T + 20, T, &mut a),
        1,
        "b is gone after a window without data"
    );
}

#[test]
fn an_idle_gap_forgets_everything() {
    let mut f = ActiveFlows::new();
    let mut marks = [0u32; 3];
    for m in marks.iter_mut() {
        f.on_data(0, T, m);
    }
    let mut late = 0u32;
    assert_eq!(
        f.on_data(10 * T, T, &mut late),
        1,
        "nothing from 10 windows ago counts"
    );
}

#[test]
fn never_zero_and_saturates() {
    let mut f = ActiveFlows::new();
    assert_eq!(f.count(), 1);
    let mut n = 0;
    for _ in 0..70_000u32 {
        let mut m = 0u32;
        n = f.on_data(5, T, &mut m);
    }
    assert_eq!(n, u16::MAX);
}
