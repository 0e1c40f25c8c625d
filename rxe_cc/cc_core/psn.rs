// SPDX-License-Identifier: GPL-2.0

//! 24-bit packet sequence numbers (InfiniBand BTH PSN) and wrapping counters.

/// PSNs are 24 bits wide.
pub const PSN_MASK: u32 = 0x00ff_ffff;

/// `a - b` as a signed distance in (-2^23, 2^23]: positive if `a` is after `b`.
pub fn psn_diff(a: u32, b: u32) -> i32 {
    // Move the 24-bit difference to the top of an i32 and shift it back,
    // which sign-extends bit 23.
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// True if `a` comes after `b` in PSN order.
pub fn psn_after(a: u32, b: u32) -> bool {
    psn_diff(a, b) > 0
}

/// `psn + n` modulo 2^24.
pub fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// Forward distance from `old` to `new` of a counter `width` bits wide
/// (1..=64) that wraps; a counter seen going backwards has wrapped once.
pub fn wrapping_delta(new: u64, old: u64, width: u32) -> u64 {
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width).wrapping_sub(1)
    };
    new.wrapping_sub(old) & mask
}
