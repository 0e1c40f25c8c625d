// SPDX-License-Identifier: GPL-2.0

//! Fixed-point arithmetic for rates, times and ratios.
//!
//! - Rates are `u64` bits per second (precision 1 b/s; 400 Gb/s is 2^38.5).
//! - Times are `u64` nanoseconds.
//! - Ratios are [`Q32`]: unsigned Q32.32, 1.0 = 2^32 (precision 2^-32).
//!
//! The kernel has no 128-bit division (`__udivti3` panics there), so
//! [`mul_div`] does the exact 64x64/64 product-quotient with 64-bit halves.
//! All operations saturate instead of overflowing.

/// Nanoseconds per second.
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// `floor(a * b / c)`, exact, saturating at `u64::MAX`; `u64::MAX` if `c == 0`.
pub fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    if c == 0 {
        return u64::MAX;
    }
    let (hi, lo) = mul_wide(a, b);
    if hi >= c {
        return u64::MAX; // The quotient does not fit in 64 bits.
    }
    // Long division of hi:lo by c; the remainder stays below c.
    let mut rem = hi;
    let mut q = 0u64;
    for i in (0..64u32).rev() {
        let carry = rem >> 63;
        rem = (rem << 1) | ((lo >> i) & 1);
        if carry == 1 || rem >= c {
            // With the carry the true value is 2^64 + rem >= c, and the
            // difference fits in 64 bits, so the wrapping subtraction is exact.
            rem = rem.wrapping_sub(c);
            q |= 1u64 << i;
        }
    }
    q
}

/// The full 128-bit product of `a` and `b` as (high, low) 64-bit halves.
fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    const M: u64 = 0xffff_ffff;
    let (a1, a0) = (a >> 32, a & M);
    let (b1, b0) = (b >> 32, b & M);
    // None of these wraps: each partial product of two 32-bit halves fits
    // in 64 bits, the middle column is at most 3 * (2^32 - 1), and `hi` is
    // the high half of a product that fits in 128 bits.
    let p00 = a0.wrapping_mul(b0);
    let p01 = a0.wrapping_mul(b1);
    let p10 = a1.wrapping_mul(b0);
    let p11 = a1.wrapping_mul(b1);
    let mid = (p00 >> 32).wrapping_add(p01 & M).wrapping_add(p10 & M);
    let lo = (p00 & M) | (mid << 32);
    let hi = p11
        .wrapping_add(p01 >> 32)
        .wrapping_add(p10 >> 32)
        .wrapping_add(mid >> 32);
    (hi, lo)
}

/// `ceil(a * b / c)`, saturating; `u64::MAX` if `c == 0`.
pub fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    let q = mul_div(a, b, c);
    if q == u64::MAX || mul_wide(q, c) == mul_wide(a, b) {
        q
    } else {
        q.saturating_add(1)
    }
}

/// Time in ns to send `bytes` at `rate_bps`, rounded up so that pacing never
/// runs faster than the rate; saturating. A zero rate counts as 1 b/s.
pub fn tx_time_ns(bytes: u64, rate_bps: u64) -> u64 {
    mul_div_ceil(bytes.saturating_mul(8), NSEC_PER_SEC, rate_bps.max(1))
}

/// Rate in b/s of `bytes` moved in `ns`; saturating, `u64::MAX` if `ns == 0`.
pub fn rate_bps(bytes: u64, ns: u64) -> u64 {
    mul_div(bytes.saturating_mul(8), NSEC_PER_SEC, ns)
}

/// Bytes that `rate_bps` moves in `ns`, rounded down.
pub fn bytes_in(rate_bps: u64, ns: u64) -> u64 {
    mul_div(rate_bps, ns, 8 * NSEC_PER_SEC)
}

/// An unsigned Q32.32 fixed-point ratio: `Q32(1 << 32)` is 1.0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Q32(pub u64);

impl Q32 {
    /// Fractional bits.
    pub const SHIFT: u32 = 32;
    /// 0.0
    pub const ZERO: Q32 = Q32(0);
    /// 1.0
    pub const ONE: Q32 = Q32(1 << 32);

    /// `num / den`, rounded down; saturating, `Q32(u64::MAX)` if `den == 0`.
    pub fn ratio(num: u64, den: u64) -> Q32 {
        Q32(mul_div(num, 1 << Self::SHIFT, den))
    }

    /// `n / 1000` (for knobs given in thousandths).
    pub fn from_milli(n: u64) -> Q32 {
        Self::ratio(n, 1000)
    }

    /// `x * self`, rounded down; saturating.
    pub fn mul_int(self, x: u64) -> u64 {
        mul_div(x, self.0, 1 << Self::SHIFT)
    }

    /// `x / self`, rounded down; saturating, `u64::MAX` if `self` is 0.
    pub fn div_int(self, x: u64) -> u64 {
        mul_div(x, 1 << Self::SHIFT, self.0)
    }

    /// `self * other`, rounded down; saturating.
    pub fn saturating_mul(self, other: Q32) -> Q32 {
        Q32(mul_div(self.0, other.0, 1 << Self::SHIFT))
    }

    /// `self / other`, rounded down; saturating.
    pub fn saturating_div(self, other: Q32) -> Q32 {
        Q32(mul_div(self.0, 1 << Self::SHIFT, other.0))
    }

    /// `self + other`, saturating.
    pub fn saturating_add(self, other: Q32) -> Q32 {
        Q32(self.0.saturating_add(other.0))
    }

    /// `self - other`, saturating at zero.
    pub fn saturating_sub(self, other: Q32) -> Q32 {
        Q32(self.0.saturating_sub(other.0))
    }

    /// The value in millionths, for reports.
    pub fn to_micro(self) -> u64 {
        mul_div(self.0, 1_000_000, 1 << Self::SHIFT)
    }
}
