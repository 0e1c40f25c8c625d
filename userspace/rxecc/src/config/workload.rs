//! Workloads in the HPCC simulator's flow-file format
//! (`../shared/hpcc-sim-formats.md`): Poisson arrivals with sizes drawn from
//! a CDF file, as its `traffic_gen.py` does, and a repeated incast.
//!
//! A flow file is `N`, then one line per flow, `src dst pg dport size
//! start_s`, in start order. Hosts are numbered as in the topology file
//! (its first `[[host]]` is 0). Unlike `traffic_gen.py`, the count in the
//! header is always exact.

use anyhow::{bail, ensure, Context, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use std::fmt::Write as _;
use std::path::Path;

/// `traffic_gen.py` starts every flow 2 s into the simulation.
pub const BASE_S: f64 = 2.0;
/// The simulator's priority group and destination ports: 100 for
/// ordinary flows, 200 for incast (its `fct_analysis.py -t 1`).
pub const PG: u32 = 3;
pub const DPORT: u32 = 100;
pub const DPORT_INCAST: u32 = 200;

/// A size distribution: `size percentile` points, percentile 0 to 100.
#[derive(Debug, Clone)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses and checks a CDF file's text: at least two points, the first
    /// at percentile 0 and the last at 100, both columns strictly
    /// increasing (the simulator's `testCdf`).
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let num = |s: &str, what: &str| -> Result<f64> {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .with_context(|| format!("{name}:{}: {what} '{s}' is not a number", i + 1))
            };
            ensure!(
                f.len() == 2,
                "{name}:{}: expected 'size percentile', got '{line}'",
                i + 1
            );
            let (x, y) = (num(f[0], "size")?, num(f[1], "percentile")?);
            if let Some(&(px, py)) = points.last() {
                ensure!(
                    x > px && y > py,
                    "{name}:{}: sizes and percentiles must both increase ({px} {py} then {x} {y})",
                    i + 1
                );
            }
            points.push((x, y));
        }
        ensure!(points.len() >= 2, "{name}: a CDF needs at least two points");
        ensure!(
            points[0].1 == 0.0 && points[points.len() - 1].1 == 100.0,
            "{name}: percentiles must run from 0 to 100"
        );
        ensure!(points[0].0 >= 0.0, "{name}: a negative size");
        Ok(Cdf { points })
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// The mean size, by the trapezoid rule (the simulator's `getAvg`).
    pub fn mean(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum::<f64>()
            / 100.0
    }

    /// The size at percentile `p` (0 to 100), interpolated linearly.
    pub fn at(&self, p: f64) -> f64 {
        for w in self.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if p <= y1 {
                return x0 + (x1 - x0) / (y1 - y0) * (p - y0);
            }
        }
        self.points[self.points.len() - 1].0
    }
}

/// One line of a flow file.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub pg: u32,
    pub dport: u32,
    pub size: u64,
    pub start_s: f64,
}

/// Poisson arrivals per host at `load` of each host's own link, with sizes
/// from `cdf` times `size_factor` (below 1 to fit the testbed's rates, the
/// byte factor k_b in a scale model), for
/// `duration_s`. Destinations follow a traffic matrix that offers every
/// link `load` in both directions ([`destinations`]): uniform over the
/// other hosts when their links are equal, as `traffic_gen.py`'s, and
/// weighted so that a slower host receives only its share when not.
pub struct Poisson<'a> {
    pub cdf: &'a Cdf,
    /// Host i's link rate, Mb/s; hosts 0..len send and receive.
    pub rates_mbps: &'a [u64],
    pub load: f64,
    pub duration_s: f64,
    pub size_factor: f64,
    pub seed: u64,
}

/// The destination probabilities P(j | i) of a traffic matrix with no
/// host sending to itself whose row i and column i both sum to `rates[i]`,
/// found by alternately scaling rows and columns (Sinkhorn) from
/// `rates[i]·rates[j]`. It exists when no link is faster than all the
/// others together (a host's share must fit the rest's links).
pub fn destinations(rates: &[u64]) -> Result<Vec<Vec<f64>>> {
    let n = rates.len();
    let total: u64 = rates.iter().sum();
    for (i, r) in rates.iter().enumerate() {
        ensure!(
            2 * r <= total,
            "host {i}'s link ({r} Mb/s) is faster than all the other hosts' together ({} Mb/s): no destinations offer it its load in both directions",
            total - r
        );
    }
    let r: Vec<f64> = rates.iter().map(|&x| x as f64).collect();
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { 0.0 } else { r[i] * r[j] })
                .collect()
        })
        .collect();
    for _ in 0..10_000 {
        for (i, row) in m.iter_mut().enumerate() {
            let s: f64 = row.iter().sum();
            row.iter_mut().for_each(|x| *x *= r[i] / s);
        }
        let mut worst = 0f64;
        for j in 0..n {
            let s: f64 = m.iter().map(|row| row[j]).sum();
            worst = worst.max((s / r[j] - 1.0).abs());
            m.iter_mut().for_each(|row| row[j] *= r[j] / s);
        }
        if worst < 1e-12 {
            break;
        }
    }
    Ok(m.into_iter()
        .zip(&r)
        .map(|(row, ri)| row.into_iter().map(|x| x / ri).collect())
        .collect())
}

impl Poisson<'_> {
    pub fn generate(&self) -> Result<Vec<Flow>> {
        let hosts = self.rates_mbps.len();
        ensure!(hosts >= 2, "a workload needs at least two hosts");
        ensure!(
            self.load > 0.0 && self.load <= 1.0,
            "load {} is not in (0, 1]",
            self.load
        );
        ensure!(
            self.rates_mbps.iter().all(|&r| r > 0),
            "every host's link rate must be positive (got {:?} Mb/s)",
            self.rates_mbps
        );
        ensure!(self.duration_s > 0.0, "the duration must be positive");
        ensure!(
            self.size_factor.is_finite() && self.size_factor > 0.0,
            "the size factor {} is not a positive number",
            self.size_factor
        );
        let mean = self.cdf.mean() * self.size_factor;
        ensure!(mean >= 1.0, "the mean flow size, scaled, is under a byte");
        let uniform = self.rates_mbps.iter().all(|&r| r == self.rates_mbps[0]);
        let dest = if uniform {
            Vec::new()
        } else {
            destinations(self.rates_mbps)?
        };
        let mut rng = StdRng::seed_from_u64(self.seed);
        let mut flows = Vec::new();
        for (src, &rate) in self.rates_mbps.iter().enumerate() {
            // Mean gap between this host's flows, s: its share of its link.
            let gap = mean * 8.0 / (rate as f64 * 1e6 * self.load);
            let exp = Exp::new(1.0 / gap).context("arrival rate")?;
            let mut t = exp.sample(&mut rng);
            while t <= self.duration_s {
                let dst = if uniform {
                    // traffic_gen.py's draw, kept for equal links.
                    let d = rng.gen_range(0..hosts - 1);
                    d + usize::from(d >= src)
                } else {
                    let u: f64 = rng.gen();
                    let mut acc = 0.0;
                    let row = &dest[src];
                    (0..hosts)
                        .find(|&j| {
                            acc += row[j];
                            j != src && u < acc
                        })
                        .unwrap_or_else(|| (0..hosts).rev().find(|&j| j != src).unwrap_or(0))
                };
                let size = (self.cdf.at(rng.gen::<f64>() * 100.0) * self.size_factor) as u64;
                flows.push(Flow {
                    src: src as u32,
                    dst: dst as u32,
                    pg: PG,
                    dport: DPORT,
                    size: size.max(1),
                    start_s: BASE_S + t,
                });
                t += exp.sample(&mut rng);
            }
        }
        flows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        Ok(flows)
    }
}

/// One host link's offered load: the bytes its flows send and receive
/// over `span_s`, as shares of its rate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinkLoad {
    pub host: u32,
    pub rate_mbps: u64,
    /// Host to switch.
    pub out: f64,
    /// Switch to host.
    #[serde(rename = "in")]
    pub inn: f64,
}

/// Each host link's offered load from a flow file over `span_s` (a
/// Poisson workload's duration), for the hosts whose rate is known
/// (`rates[h]`: None for a plain bridge's, which has none).
pub fn offered_load(flows: &[Flow], rates: &[Option<u64>], span_s: f64) -> Vec<LinkLoad> {
    let mut out = vec![0u64; rates.len()];
    let mut inn = vec![0u64; rates.len()];
    for f in flows {
        if let Some(b) = out.get_mut(f.src as usize) {
            *b += f.size;
        }
        if let Some(b) = inn.get_mut(f.dst as usize) {
            *b += f.size;
        }
    }
    let share = |bytes: u64, rate: u64| bytes as f64 * 8.0 / (span_s * rate as f64 * 1e6);
    rates
        .iter()
        .enumerate()
        .filter_map(|(h, r)| {
            let r = (*r)?;
            (r > 0 && span_s > 0.0).then(|| LinkLoad {
                host: h as u32,
                rate_mbps: r,
                out: share(out[h], r),
                inn: share(inn[h], r),
            })
        })
        .collect()
}

/// `senders` each send `size` bytes to `receiver` at once, every
/// `period_s`, `rounds` times (destination port 200: incast), each
/// sender's bytes split over `qps` flows (QPs: flowgen gives every flow
/// its own) that start together, the first `size % qps` a byte longer.
pub fn incast(
    senders: &[u32],
    receiver: u32,
    size: u64,
    qps: u32,
    period_s: f64,
    rounds: u32,
) -> Result<Vec<Flow>> {
    ensure!(!senders.is_empty(), "an incast needs senders");
    ensure!(
        !senders.contains(&receiver),
        "host {receiver} is both a sender and the receiver"
    );
    ensure!(size > 0 && rounds > 0, "size and rounds must be positive");
    ensure!(period_s > 0.0, "the period must be positive");
    ensure!(
        qps >= 1 && size >= u64::from(qps),
        "{qps} QPs per sender: at least 1, and at most the size ({size} bytes)"
    );
    let (each, longer) = (size / u64::from(qps), size % u64::from(qps));
    let mut flows = Vec::new();
    for r in 0..rounds {
        for &src in senders {
            for q in 0..u64::from(qps) {
                flows.push(Flow {
                    src,
                    dst: receiver,
                    pg: PG,
                    dport: DPORT_INCAST,
                    size: each + u64::from(q < longer),
                    start_s: BASE_S + f64::from(r) * period_s,
                });
            }
        }
    }
    Ok(flows)
}

/// The flow file's text: the exact count, then the flows as
/// `traffic_gen.py` prints them.
pub fn to_text(flows: &[Flow]) -> String {
    let mut s = format!("{}\n", flows.len());
    for f in flows {
        let _ = writeln!(
            s,
            "{} {} {} {} {} {:.9}",
            f.src, f.dst, f.pg, f.dport, f.size, f.start_s
        );
    }
    s
}

/// A flow file written in a paper's units, as a scale model runs it:
/// each size times k_b (at least a byte), and each start's offset from
/// the file's first start times k_t (the first keeps its time: the
/// simulator's files start at 2 s by convention).
pub fn scale_flows(flows: &mut [Flow], k_t: f64, k_b: f64) {
    let first = flows
        .iter()
        .map(|f| f.start_s)
        .fold(f64::INFINITY, f64::min);
    for f in flows {
        f.size = ((f.size as f64 * k_b).round() as u64).max(1);
        f.start_s = first + (f.start_s - first) * k_t;
    }
}

/// Reads a flow file: the simulator's, or ConWeave's (no dport).
pub fn parse(name: &str, text: &str) -> Result<Vec<Flow>> {
    let mut lines = text.lines().enumerate();
    let n: usize = lines
        .next()
        .and_then(|(_, l)| l.trim().parse().ok())
        .with_context(|| format!("{name}:1: expected the flow count"))?;
    let mut flows = Vec::with_capacity(n.min(1 << 20));
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("{name}:{}: expected 'src dst pg dport size start_s'", i + 1);
        let int = |s: &str| s.parse::<u64>().ok();
        let (src, dst, pg, dport, size, start) = match f.len() {
            6 => (f[0], f[1], f[2], Some(f[3]), f[4], f[5]),
            5 => (f[0], f[1], f[2], None, f[3], f[4]),
            _ => bail!(bad()),
        };
        let flow = (|| {
            Some(Flow {
                src: u32::try_from(int(src)?).ok()?,
                dst: u32::try_from(int(dst)?).ok()?,
                pg: u32::try_from(int(pg)?).ok()?,
                dport: match dport {
                    Some(d) => u32::try_from(int(d)?).ok()?,
                    None => DPORT,
                },
                size: int(size)?,
                start_s: start.parse::<f64>().ok().filter(|s| s.is_finite())?,
            })
        })()
        .with_context(bad)?;
        flows.push(flow);
    }
    ensure!(
        flows.len() == n,
        "{name}: the header says {n} flows, the file has {}",
        flows.len()
    );
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEB: &str = include_str!("../../../../testbed/workloads/WebSearch_distribution.txt");

    #[test]
    fn cdf_checks_and_interpolates() {
        assert!(Cdf::parse("t", "0 0\n10 50\n20 100\n").is_ok());
        assert!(Cdf::parse("t", "0 1\n10 100\n").is_err(), "must start at 0");
        assert!(Cdf::parse("t", "0 0\n10 90\n").is_err(), "must end at 100");
        assert!(
            Cdf::parse("t", "0 0\n10 50\n10 100\n").is_err(),
            "sizes increase"
        );
        assert!(Cdf::parse("t", "0 0\n10 x\n").is_err());
        let c = Cdf::parse("t", "0 0\n10 50\n20 100\n").unwrap();
        assert_eq!(c.at(25.0), 5.0);
        assert_eq!(c.at(75.0), 15.0);
        assert_eq!(c.mean(), 10.0);
    }

    #[test]
    fn websearch_mean() {
        // The simulator's getAvg() on its WebSearch file: 1,711,250 B
        // (sum of segment midpoints times their percentile widths).
        let c = Cdf::parse("web", WEB).unwrap();
        assert!((c.mean() - 1_711_250.0).abs() < 1.0, "{}", c.mean());
    }

    #[test]
    fn sizes_multiply_as_well_as_divide() {
        // A scale model's k_b above 1: every size and every gap grows by
        // it, so the load stays; below 1 (a divisor), they shrink alike.
        let c = Cdf::parse("web", WEB).unwrap();
        let gen = |size_factor: f64| {
            Poisson {
                cdf: &c,
                rates_mbps: &[100; 4],
                load: 0.5,
                duration_s: 50.0,
                size_factor,
                seed: 3,
            }
            .generate()
            .unwrap()
        };
        let (small, big) = (gen(0.01), gen(0.0256));
        // Host 0 draws first: its flows use the same random numbers.
        let first = |f: &[Flow]| {
            f.iter()
                .filter(|f| f.src == 0)
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
        };
        let (a, b) = (first(&small), first(&big));
        assert_eq!(b.len(), 20);
        for (x, y) in a.iter().zip(&b) {
            let ratio = y.size as f64 / x.size as f64;
            assert!((ratio - 2.56).abs() < 0.01 || x.size < 1000, "{x:?} {y:?}");
            assert!(((y.start_s - BASE_S) / (x.start_s - BASE_S) - 2.56).abs() < 1e-6);
        }
        for bad in [0.0, -1.0, f64::NAN] {
            let p = Poisson {
                cdf: &c,
                rates_mbps: &[100; 4],
                load: 0.5,
                duration_s: 1.0,
                size_factor: bad,
                seed: 3,
            };
            assert!(p.generate().is_err(), "{bad}");
        }
    }

    #[test]
    fn poisson_offers_the_load() {
        let c = Cdf::parse("web", WEB).unwrap();
        let p = Poisson {
            cdf: &c,
            rates_mbps: &[100; 8],
            load: 0.5,
            duration_s: 200.0,
            size_factor: 0.01,
            seed: 1,
        };
        let flows = p.generate().unwrap();
        let bytes: u64 = flows.iter().map(|f| f.size).sum();
        let offered = bytes as f64 * 8.0 / 200.0 / (8.0 * 100e6);
        assert!((offered - 0.5).abs() < 0.05, "offered load {offered}");
        assert!(flows.windows(2).all(|w| w[0].start_s <= w[1].start_s));
        assert!(flows.iter().all(|f| f.src != f.dst && f.dst < 8));
        // Same seed, same flows; and the text round-trips exactly.
        assert_eq!(flows, p.generate().unwrap());
        let text = to_text(&flows);
        assert!(text.starts_with(&format!("{}\n", flows.len())));
        let back = parse("t", &text).unwrap();
        assert_eq!(back.len(), flows.len());
        assert_eq!(to_text(&back), text);
    }

    /// star4's WebSearch: h0's link at 40 Mb/s, the others at 100. Each
    /// link, both ways, offered its own load (the old generator offered
    /// h0's 1.25 of its link inbound: every host at the senders' rate,
    /// destinations uniform).
    #[test]
    fn poisson_offers_each_link_its_load_both_ways() {
        let c = Cdf::parse("web", WEB).unwrap();
        let rates = [40, 100, 100, 100];
        let m = destinations(&rates).unwrap();
        for (i, row) in m.iter().enumerate() {
            assert_eq!(row[i], 0.0);
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let inbound: f64 = (0..4).map(|s| rates[s] as f64 * m[s][i]).sum();
            assert!(
                (inbound / rates[i] as f64 - 1.0).abs() < 1e-9,
                "host {i}: {inbound}"
            );
        }
        let p = Poisson {
            cdf: &c,
            rates_mbps: &rates,
            load: 0.5,
            duration_s: 400.0,
            size_factor: 0.01,
            seed: 1,
        };
        let flows = p.generate().unwrap();
        let known: Vec<Option<u64>> = rates.iter().map(|r| Some(*r)).collect();
        for l in offered_load(&flows, &known, 400.0) {
            assert!((l.out - 0.5).abs() < 0.06, "{l:?}");
            assert!((l.inn - 0.5).abs() < 0.06, "{l:?}");
        }
        // A link faster than the rest together cannot receive its share.
        let err = destinations(&[400, 100, 100]).unwrap_err().to_string();
        assert!(err.contains("host 0's link (400 Mb/s)"), "{err}");
    }

    #[test]
    fn flow_file_formats() {
        let f = parse("t", "2\n0 1 3 100 1000 2.000000001\n1 0 3 200 5 2.5\n").unwrap();
        assert_eq!(f[1].dport, 200);
        let cw = parse("t", "1\n0 1 3 1000 2.0\n").unwrap();
        assert_eq!((cw[0].dport, cw[0].size), (DPORT, 1000));
        assert!(parse("t", "3\n0 1 3 100 1000 2.0\n").is_err(), "count");
        assert!(parse("t", "1\n0 1 3 100 x 2.0\n").is_err());
        let inc = incast(&[1, 2], 0, 1000, 1, 0.1, 3).unwrap();
        assert_eq!(inc.len(), 6);
        assert!(incast(&[0, 1], 0, 1, 1, 0.1, 1).is_err());
        // Each sender's bytes over its QPs, none lost.
        let q = incast(&[1, 2], 0, 1003, 4, 0.1, 1).unwrap();
        assert_eq!(q.len(), 8);
        assert_eq!(
            q.iter().filter(|f| f.src == 1).map(|f| f.size).sum::<u64>(),
            1003
        );
        assert_eq!((q[0].size, q[3].size), (251, 250));
        assert!(
            incast(&[1], 0, 3, 4, 0.1, 1).is_err(),
            "more QPs than bytes"
        );
        assert!(incast(&[1], 0, 3, 0, 0.1, 1).is_err(), "no QP");
    }
    #[test]
    fn a_paper_flow_file_scales_sizes_by_k_b_and_offsets_by_k_t() {
        let mut f = parse("f", "2\n1 3 3 100 1000 2.0\n2 3 3 100 4400 2.0003\n").unwrap();
        scale_flows(&mut f, 8000.0, 2.7);
        assert_eq!((f[0].size, f[1].size), (2700, 11880));
        // The first keeps 2 s; the join 300 us later is 2.4 s later.
        assert_eq!(f[0].start_s, 2.0);
        assert!((f[1].start_s - 4.4).abs() < 1e-9, "{}", f[1].start_s);
    }
}
