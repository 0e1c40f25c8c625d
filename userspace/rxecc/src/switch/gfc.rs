//! GFC's thresholds and settings from the paper's conditions (GFC §4-5):
//! pure arithmetic, unit-tested here; [`super::config`] writes them.

use anyhow::{bail, Result};

/// Time-based GFC's settings for a link (GFC §5.3): the receiver's B_m, the
/// B_0 below which the sender runs at C, and the advertisement period T.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GfcTime {
    pub bm_bytes: u64,
    pub b0_bytes: u64,
    pub period_ns: u64,
}

impl GfcTime {
    /// Settings for a link of `rate_bps` with feedback latency `tau_us`:
    /// T as given, or InfiniBand's default, the time to send 65535 bytes;
    /// B_0 as given, or the highest Theorem 5.1 allows,
    /// B_0 = B_m - (sqrt(tau / T) + 1)^2 C T. An error if it cannot hold.
    pub fn new(
        bm_bytes: u64,
        b0_bytes: Option<u64>,
        period_us: Option<u64>,
        rate_bps: u64,
        tau_us: u64,
    ) -> Result<Self> {
        if rate_bps == 0 {
            bail!("GFC needs a link rate above 0");
        }
        let period_ns = match period_us {
            Some(us) => us.saturating_mul(1000),
            None => 65_535u64.saturating_mul(8_000_000_000) / rate_bps,
        };
        if period_ns == 0 {
            bail!("time-based GFC needs an advertisement period above 0");
        }
        // Userspace arithmetic, once per link: floating point is fine here.
        let t = period_ns as f64 / 1e9;
        let ct = rate_bps as f64 / 8.0 * t;
        let need = ((tau_us as f64 / 1e6 / t).sqrt() + 1.0).powi(2) * ct;
        let max_b0 = bm_bytes as f64 - need;
        if max_b0 < 1.0 {
            bail!(
                "time-based GFC needs B_0 <= B_m - (sqrt(tau/T) + 1)^2 * C * T, and B_m = {bm_bytes} B \
                 leaves no room: that term is {need:.0} B (tau = {tau_us} us, T = {} us, {} Mb/s)",
                period_ns / 1000,
                rate_bps / 1_000_000
            );
        }
        let b0 = b0_bytes.unwrap_or(max_b0 as u64);
        if b0 == 0 || b0 as f64 > max_b0 {
            bail!(
                "time-based GFC needs 0 < B_0 <= B_m - (sqrt(tau/T) + 1)^2 * C * T = {max_b0:.0} B \
                 (tau = {tau_us} us, T = {} us), not {b0} B",
                period_ns / 1000
            );
        }
        Ok(GfcTime {
            bm_bytes,
            b0_bytes: b0,
            period_ns,
        })
    }
}

/// GFC's deepest stage (port.h's `RXECC_GFC_MAX_STAGES`).
pub const GFC_MAX_STAGES: u32 = 24;

/// Buffer-based GFC's thresholds for an ingress port: B_1, B_m, and the
/// number of stages N (GFC §5.2: B_k = B_m - (B_m - B_1) / 2^(k-1), rate
/// C / 2^k). The paper adds stages until two are at most a byte apart; a
/// queue that moves a whole frame at a time cannot tell apart stages
/// closer than a frame, and one frame would jump it to a last stage whose
/// rate is next to zero (C / 2^16 for the paper's N): ON/OFF again, which
/// is what GFC must avoid. So stages stop at `step_bytes` apart, the
/// largest frame (1 reproduces the paper's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GfcThresholds {
    pub b1_bytes: u64,
    pub bm_bytes: u64,
    pub stages: u32,
}

impl GfcThresholds {
    /// Thresholds for a port of rate `rate_bps` with feedback latency
    /// `tau_us`: B_1 as given, or the highest the paper's condition allows,
    /// B_1 = B_m - 2 C tau. An error if the condition cannot hold.
    pub fn new(
        bm_bytes: u64,
        b1_bytes: Option<u64>,
        rate_bps: u64,
        tau_us: u64,
        step_bytes: u64,
    ) -> Result<Self> {
        // 2 C tau, in bytes: what arrives in the round trip of a feedback.
        let headroom = rate_bps
            .saturating_mul(tau_us)
            .saturating_mul(2)
            .div_ceil(8_000_000);
        let Some(max_b1) = bm_bytes.checked_sub(headroom).filter(|b| *b > 0) else {
            bail!(
                "GFC needs B_1 <= B_m - 2*C*tau, and B_m = {bm_bytes} B leaves no room: \
                 2*C*tau is {headroom} B at {} Mb/s and tau = {tau_us} us",
                rate_bps / 1_000_000
            );
        };
        let b1 = b1_bytes.unwrap_or(max_b1);
        if b1 == 0 || b1 > max_b1 {
            bail!(
                "GFC needs 0 < B_1 <= B_m - 2*C*tau = {bm_bytes} - {headroom} = {max_b1} B \
                 (tau = {tau_us} us at {} Mb/s), not {b1} B",
                rate_bps / 1_000_000
            );
        }
        let d1 = bm_bytes - b1;
        // The smallest N with (B_m - B_1) / 2^(N-1) <= step.
        let step = step_bytes.max(1);
        let stages = (1..=GFC_MAX_STAGES)
            .find(|n| d1 <= step.saturating_mul(1u64 << (n - 1)))
            .unwrap_or(GFC_MAX_STAGES);
        Ok(GfcThresholds {
            b1_bytes: b1,
            bm_bytes,
            stages,
        })
    }

    /// The stage of an ingress queue of `q` bytes (port.bpf.c's
    /// gfc_stage_of(), for tests and docs).
    pub fn stage_of(&self, q: u64) -> u32 {
        if q < self.b1_bytes || self.bm_bytes <= self.b1_bytes {
            return 0;
        }
        let (d1, left) = (
            self.bm_bytes - self.b1_bytes,
            self.bm_bytes.saturating_sub(q),
        );
        (1..self.stages.min(GFC_MAX_STAGES))
            .take_while(|i| left <= d1 >> i)
            .last()
            .map_or(1, |i| i + 1)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn gfc_stages_follow_the_paper() {
        use super::GfcThresholds;
        // The GFC testbed's numbers: B_m 1000 KB, B_1 750 KB (in KB units
        // here): B_2 = 875, B_3 = 937.5, B_4 = 968.75.
        let g = GfcThresholds::new(1_000_000, Some(750_000), 10_000_000_000, 10, 1).unwrap();
        assert_eq!(g.stage_of(749_999), 0);
        assert_eq!(g.stage_of(750_000), 1);
        assert_eq!(g.stage_of(874_999), 1);
        assert_eq!(g.stage_of(875_000), 2);
        assert_eq!(g.stage_of(937_500), 3);
        assert_eq!(g.stage_of(968_750), 4);
        assert_eq!(g.stage_of(2_000_000), g.stages);
        // 250000 B halves to 1 B in 18 steps: N = 19.
        assert_eq!(g.stages, 19);
        // B_1 defaults to B_m - 2 C tau: 10 Gb/s x 90 us x 2 = 225000 B.
        let d = GfcThresholds::new(1_000_000, None, 10_000_000_000, 90, 1).unwrap();
        assert_eq!(d.b1_bytes, 775_000);
        // Time-based, the paper's testbed: tau 90 us, T 52 us, B_m 1000 KB:
        // B_0 <= 1e6 - (sqrt(90/52) + 1)^2 * 65000 = 651.5 KB (its 492 KB
        // is below that bound).
        let t = super::GfcTime::new(1_000_000, None, Some(52), 10_000_000_000, 90).unwrap();
        assert!((651_000..652_000).contains(&t.b0_bytes), "{t:?}");
        assert!(super::GfcTime::new(100_000, None, Some(52), 10_000_000_000, 90).is_err());
        // Default T: 65535 B at C.
        let d = super::GfcTime::new(1_000_000, None, None, 10_000_000_000, 90).unwrap();
        assert_eq!(d.period_ns, 52_428);
        // Theorem 4.1's condition, violated: a clear error.
        let e = GfcThresholds::new(1_000_000, Some(800_000), 10_000_000_000, 90, 1).unwrap_err();
        assert!(e.to_string().contains("B_1 <= B_m - 2*C*tau"), "{e}");
        assert!(GfcThresholds::new(100_000, None, 10_000_000_000, 90, 1).is_err());
        // Stages a frame apart: 28 KB over 4170-byte frames gives N = 4
        // (28672 / 8 = 3584 <= 4170 < 7168).
        let f = GfcThresholds::new(102_400, Some(73_728), 50_000_000, 2000, 4170).unwrap();
        assert_eq!(f.stages, 4);
        assert_eq!(f.stage_of(102_400 + 9000), 4);
    }
}
