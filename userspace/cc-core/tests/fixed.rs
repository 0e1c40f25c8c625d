//! Fixed-point and sequence arithmetic against exact references.

use cc_core::fixed::{mul_div, mul_div_ceil, rate_bps, tx_time_ns, Q32};
use cc_core::psn::{psn_add, psn_after, psn_diff, wrapping_delta, PSN_MASK};
use proptest::prelude::*;

fn exact(a: u64, b: u64, c: u64) -> u64 {
    if c == 0 {
        return u64::MAX;
    }
    let q = (a as u128 * b as u128) / c as u128;
    q.min(u64::MAX as u128) as u64
}

#[test]
fn mul_div_examples() {
    assert_eq!(mul_div(6, 7, 2), 21);
    assert_eq!(mul_div(u64::MAX, u64::MAX, u64::MAX), u64::MAX);
    assert_eq!(mul_div(u64::MAX, 2, 4), u64::MAX / 2);
    assert_eq!(mul_div(1, 1, 0), u64::MAX);
    assert_eq!(mul_div(u64::MAX, 3, 2), u64::MAX); // saturates
    assert_eq!(mul_div_ceil(7, 1, 2), 4);
    assert_eq!(mul_div_ceil(8, 1, 2), 4);
}

#[test]
fn rates_and_times() {
    // 4096 B at 100 Mb/s: 327.68 us, rounded up to the ns.
    assert_eq!(tx_time_ns(4096, 100_000_000), 327_680);
    assert_eq!(tx_time_ns(1, 3), 2_666_666_667);
    assert_eq!(rate_bps(12_500_000, 1_000_000_000), 100_000_000);
    assert_eq!(Q32::ratio(1, 2).mul_int(1000), 500);
    assert_eq!(Q32::from_milli(950).to_micro(), 949_999); // 2^-32 precision, rounded down
}

#[test]
fn psn_wrap() {
    assert_eq!(psn_diff(0, PSN_MASK), 1);
    assert_eq!(psn_diff(PSN_MASK, 0), -1);
    assert!(psn_after(2, PSN_MASK - 1));
    assert_eq!(psn_add(PSN_MASK, 2), 1);
    assert_eq!(wrapping_delta(5, (1 << 20) - 3, 20), 8);
    assert_eq!(wrapping_delta(5, 3, 64), 2);
}

proptest! {
    #[test]
    fn mul_div_is_exact(a: u64, b: u64, c: u64) {
        prop_assert_eq!(mul_div(a, b, c), exact(a, b, c));
    }

    #[test]
    fn mul_div_ceil_is_exact(a: u64, b: u64, c in 1u64..) {
        let p = a as u128 * b as u128;
        let q = p.div_ceil(c as u128).min(u64::MAX as u128) as u64;
        prop_assert_eq!(mul_div_ceil(a, b, c), q);
    }

    #[test]
    fn q16_rounding_error_is_bounded(x in 0u64..(1 << 40), num in 0u64..1_000_000, den in 1u64..1_000_000) {
        // x * (num/den) through Q32 is off by at most x * 2^-32 + 1.
        let f = Q32::ratio(num, den);
        let got = f.mul_int(x) as i128;
        let want = (x as i128 * num as i128) / den as i128;
        let bound = (x as i128 >> 32) + 1;
        prop_assert!((got - want).abs() <= bound, "got {got} want {want} bound {bound}");
    }

    #[test]
    fn psn_diff_inverts_add(p in 0u32..=PSN_MASK, n in 0u32..(1 << 23)) {
        prop_assert_eq!(psn_diff(psn_add(p, n), p), n as i32);
    }
}
