//! Parsing of perftest (`ib_write_bw` and friends) reports.

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// The result line of one perftest bandwidth run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BwReport {
    /// Message size in bytes.
    pub msg_bytes: u64,
    /// Messages sent.
    pub iterations: u64,
    /// Peak and average bandwidth in Gb/s.
    pub peak_gbps: f64,
    pub avg_gbps: f64,
    /// Message rate in millions of messages per second.
    pub msg_rate_mpps: f64,
}

impl BwReport {
    /// Bytes the run moved: message size times iterations.
    pub fn bytes(&self) -> u64 {
        self.msg_bytes.saturating_mul(self.iterations)
    }
}

/// Parses a report written with `--report_gbits`. Its result row follows the
/// header line `#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]`.
pub fn parse_bw(text: &str) -> Result<BwReport> {
    let mut lines = text.lines();
    let header = lines
        .by_ref()
        .find(|l| l.contains("BW average"))
        .context("no 'BW average' header: not a perftest bandwidth report, or the run failed")?;
    if !header.contains("Gb/sec") {
        bail!("report is not in Gb/s: run perftest with --report_gbits");
    }
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 || !f[0].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let num = |i: usize, what: &str| -> Result<f64> {
            f[i].parse::<f64>()
                .with_context(|| format!("bad {what} '{}' in '{line}'", f[i]))
        };
        return Ok(BwReport {
            msg_bytes: f[0]
                .parse()
                .with_context(|| format!("bad size in '{line}'"))?,
            iterations: f[1]
                .parse()
                .with_context(|| format!("bad iterations in '{line}'"))?,
            peak_gbps: num(2, "peak")?,
            avg_gbps: num(3, "average")?,
            msg_rate_mpps: num(4, "message rate")?,
        });
    }
    bail!("no result row after the 'BW average' header")
}

/// Jain's fairness index of a set of rates: 1 when all are equal, 1/n when
/// one flow has everything.
pub fn jain_index(rates: &[f64]) -> Option<f64> {
    let sum: f64 = rates.iter().sum();
    let sq: f64 = rates.iter().map(|r| r * r).sum();
    if rates.is_empty() || sq == 0.0 {
        return None;
    }
    Some(sum * sum / (rates.len() as f64 * sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : rxe1
 Number of qps   : 1\t\tTransport type : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      1500             0.62               0.58   \t\t   0.001106
---------------------------------------------------------------------------------------
";

    #[test]
    fn parses_result_row() {
        let r = parse_bw(REPORT).unwrap();
        assert_eq!(r.msg_bytes, 65536);
        assert_eq!(r.iterations, 1500);
        assert_eq!(r.avg_gbps, 0.58);
        assert_eq!(r.peak_gbps, 0.62);
        assert_eq!(r.bytes(), 65536 * 1500);
    }

    #[test]
    fn rejects_failed_run() {
        let err = parse_bw(" Couldn't connect to 10.77.0.1:18515\n").unwrap_err();
        assert!(err.to_string().contains("no 'BW average' header"), "{err}");
    }

    #[test]
    fn rejects_mb_reports() {
        let text = REPORT.replace("Gb/sec", "MB/sec");
        assert!(parse_bw(&text)
            .unwrap_err()
            .to_string()
            .contains("--report_gbits"));
    }

    #[test]
    fn rejects_header_without_row() {
        let text: String = REPORT.lines().take(6).collect::<Vec<_>>().join("\n");
        assert!(parse_bw(&text)
            .unwrap_err()
            .to_string()
            .contains("no result row"));
    }

    #[test]
    fn jain() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain_index(&[4.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain_index(&[]), None);
        let j = jain_index(&[1.0, 2.0]).unwrap();
        assert!((j - 0.9).abs() < 1e-12, "{j}");
    }
}
