//! Flow completion times: flowgen's records turned into the HPCC
//! simulator's `fct.txt`, and its `fct_analysis.py` (slowdown by flow-size
//! bucket) as a table and plots.
//!
//! `fct.txt` lines are `sip dip sport dport size start_ns fct_ns
//! standalone_fct_ns`, printed `%08x %08x %u %u %lu %lu %lu %lu`, with
//! the simulator's node addresses (0x0b000001 + (id/256)<<16 +
//! (id%256)<<8), source ports numbered per host pair from 10000 in the flow
//! file's order, and standalone FCT = base RTT + the flow's bytes on the
//! wire × 8 / the path's bottleneck rate. docs/workloads.md has every
//! column and how each is measured here.

use crate::config::topology::{self, Topology};
use crate::config::workload::Flow;
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// rxe's payload per packet: the path MTU (4096 on the testbed's 9000-byte
/// links).
pub const PAYLOAD: u64 = 4096;
/// Bytes on the wire per packet besides the payload: Ethernet 14, IPv4 20,
/// UDP 8, BTH 12, ICRC 4 (RETH, INT and the FCS left out, as the simulator
/// leaves out INT).
pub const HEADER: u64 = 58;

/// One line of flowgen's output.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub dport: u32,
    pub op: String,
    pub size: u64,
    pub sched_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status: String,
}

/// A run directory's flow records: flowgen's (`flowgen-h<N>.csv`) or
/// perftest's (`perftest-h<N>.csv`, run/perftest.rs), one file per host.
pub fn record_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if (name.starts_with("flowgen-h") || name.starts_with("perftest-h"))
            && name.ends_with(".csv")
        {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// Reads flowgen's CSV files (one per host), or perftest's as rxecc run
/// writes them.
pub fn read_records(files: &[impl AsRef<Path>]) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for f in files {
        let f = f.as_ref();
        let mut rd =
            csv::Reader::from_path(f).with_context(|| format!("reading {}", f.display()))?;
        for (i, r) in rd.deserialize().enumerate() {
            out.push(r.with_context(|| format!("{}: record {}", f.display(), i + 1))?);
        }
    }
    out.sort_by_key(|r: &Record| r.id);
    Ok(out)
}

/// The simulator's address of node `id`.
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + ((id / 256) << 16) + ((id % 256) << 8)
}

/// Serialisation time, ns, of `size` bytes with their headers at `mbps`.
pub fn wire_ns(size: u64, mbps: u64) -> u64 {
    let pkts = size.saturating_sub(1) / PAYLOAD + 1;
    let bytes = size + pkts * HEADER;
    // The simulator's integer arithmetic: bytes * 8e9 / b.
    bytes.saturating_mul(8000) / mbps.max(1)
}

/// One line of fct.txt.
#[derive(Debug, Clone, PartialEq)]
pub struct Fct {
    pub sip: u32,
    pub dip: u32,
    pub sport: u32,
    pub dport: u32,
    pub size: u64,
    pub start_ns: u64,
    pub fct_ns: u64,
    pub standalone_ns: u64,
}

/// The base RTT to use when none was measured: the least time any flow of
/// the run took beyond its own serialisation (the run's best case).
pub fn min_excess_ns(flows: &[Flow], recs: &[Record], topo: &Topology) -> Result<u64> {
    let mut best = u64::MAX;
    for r in recs.iter().filter(|r| r.status == "ok") {
        let f = flows.get(r.id as usize).context("a record of no flow")?;
        let rate = topology::path_rate_mbps(topo, f.src as usize, f.dst as usize).unwrap_or(1);
        let fct = r.end_ns.saturating_sub(r.start_ns);
        best = best.min(fct.saturating_sub(wire_ns(f.size, rate)));
    }
    ensure!(best != u64::MAX, "no flow completed");
    Ok(best)
}

/// fct.txt's lines for the completed flows, in completion order (as the
/// simulator writes them). A flow's start is its planned start on the flow
/// file's clock plus how late flowgen posted it; its FCT runs from the post.
pub fn fct_lines(
    flows: &[Flow],
    recs: &[Record],
    topo: &Topology,
    base_rtt_ns: u64,
) -> Result<Vec<Fct>> {
    ensure!(
        flows
            .iter()
            .all(|f| (f.src as usize) < topo.hosts.len() && (f.dst as usize) < topo.hosts.len()),
        "the flow file names a host the topology does not have ({} hosts)",
        topo.hosts.len()
    );
    // Source ports per host pair from 10000, in the flow file's order.
    let mut next: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let sports: Vec<u32> = flows
        .iter()
        .map(|f| {
            let p = next.entry((f.src, f.dst)).or_insert(10000);
            let s = *p;
            *p += 1;
            s
        })
        .collect();
    let mut out: Vec<(u64, Fct)> = Vec::new();
    for r in recs.iter().filter(|r| r.status == "ok") {
        let Some(f) = flows.get(r.id as usize) else {
            bail!(
                "record for flow {}, but the flow file has {}",
                r.id,
                flows.len()
            );
        };
        ensure!(
            f.src == r.src && f.dst == r.dst && f.size == r.size,
            "flow {}: the record does not match the flow file",
            r.id
        );
        let rate = topology::path_rate_mbps(topo, f.src as usize, f.dst as usize)
            .with_context(|| format!("no path from host {} to host {}", f.src, f.dst))?;
        let planned = (f.start_s * 1e9).round() as u64;
        out.push((
            r.end_ns,
            Fct {
                sip: node_ip(f.src),
                dip: node_ip(f.dst),
                sport: sports[r.id as usize],
                dport: f.dport,
                size: f.size,
                start_ns: planned + r.start_ns.saturating_sub(r.sched_ns),
                fct_ns: r.end_ns.saturating_sub(r.start_ns),
                standalone_ns: base_rtt_ns + wire_ns(f.size, rate),
            },
        ));
    }
    out.sort_by_key(|(end, _)| *end);
    Ok(out.into_iter().map(|(_, l)| l).collect())
}

pub fn to_text(lines: &[Fct]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(
            s,
            "{:08x} {:08x} {} {} {} {} {} {}",
            l.sip, l.dip, l.sport, l.dport, l.size, l.start_ns, l.fct_ns, l.standalone_ns
        );
    }
    s
}

/// Reads fct.txt (the simulator's or ours).
pub fn parse(name: &str, text: &str) -> Result<Vec<Fct>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let l = (|| {
            if f.len() != 8 {
                return None;
            }
            Some(Fct {
                sip: u32::from_str_radix(f[0], 16).ok()?,
                dip: u32::from_str_radix(f[1], 16).ok()?,
                sport: f[2].parse().ok()?,
                dport: f[3].parse().ok()?,
                size: f[4].parse().ok()?,
                start_ns: f[5].parse().ok()?,
                fct_ns: f[6].parse().ok()?,
                standalone_ns: f[7].parse().ok()?,
            })
        })()
        .with_context(|| {
            format!(
                "{name}:{}: expected 'sip dip sport dport size start_ns fct_ns standalone_ns'",
                i + 1
            )
        })?;
        out.push(l);
    }
    Ok(out)
}

/// Which flows `fct_analysis.py` looks at (its -t).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// dport 100 (its -t 0)
    Normal,
    /// dport 200 (its -t 1)
    Incast,
    /// every flow (its -t 2)
    All,
}

/// One size bucket: flows `pct` to `pct + step` percent of the
/// size-sorted list, the largest size among them, and the median, 95th
/// and 99th percentile of their slowdowns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Bucket {
    pub pct: f64,
    pub max_size: u64,
    pub flows: usize,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// `fct_analysis.py`'s table: slowdown max(1, fct/standalone), flows sorted
/// by size, cut into buckets of `step` percent of the flows, each bucket's
/// percentiles taken at index int(n·p) of its sorted slowdowns. Flows that
/// finish at or after `time_limit_ns` are left out, as there. Two
/// differences: every flow is kept (the script's `split('\n')[:-2]` drops
/// the largest), and an empty bucket is skipped (the script would fail).
pub fn buckets(lines: &[Fct], kind: Kind, step: u32, time_limit_ns: Option<u64>) -> Vec<Bucket> {
    let mut a: Vec<(u64, f64)> = lines
        .iter()
        .filter(|l| match kind {
            Kind::Normal => l.dport == 100,
            Kind::Incast => l.dport == 200,
            Kind::All => true,
        })
        .filter(|l| time_limit_ns.is_none_or(|t| l.start_ns.saturating_add(l.fct_ns) < t))
        .map(|l| {
            let s = l.fct_ns as f64 / l.standalone_ns.max(1) as f64;
            (l.size, if s < 1.0 { 1.0 } else { s })
        })
        .collect();
    a.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let n = a.len();
    let step = step.clamp(1, 100) as usize;
    let mut out = Vec::new();
    for i in (0..100).step_by(step) {
        let (l, r) = (i * n / 100, ((i + step).min(100)) * n / 100);
        if l >= r {
            continue;
        }
        let mut s: Vec<f64> = a[l..r].iter().map(|x| x.1).collect();
        s.sort_by(f64::total_cmp);
        let pct = |p: f64| s[((s.len() as f64 * p) as usize).min(s.len() - 1)];
        out.push(Bucket {
            pct: i as f64 / 100.0,
            max_size: a[r - 1].0,
            flows: r - l,
            p50: pct(0.5),
            p95: pct(0.95),
            p99: pct(0.99),
        });
    }
    out
}

/// One run at a glance: its flows' FCT and slowdown tails, the PFC pause
/// frames the switch and NICs obeyed (pfc.txt's pause lines), and the
/// physical invariants' violations (0 expected): flows faster than their
/// bytes cross the path's slowest link, and port releases faster than the
/// port's rate (`PortStats::rate_violations`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    pub label: String,
    pub flows: usize,
    pub fct_p50_ms: f64,
    pub fct_p99_ms: f64,
    pub fct_max_ms: f64,
    pub slowdown_p99: f64,
    /// The p99 slowdown of the shortest tenth of the flows (by size): the
    /// short flows whose tail HPCC's paper reports.
    pub short_slowdown_p99: f64,
    pub pauses: u64,
    pub drops: u64,
    pub faster_than_wire: usize,
    pub port_rate_violations: u64,
    /// Deadlocks `rxecc record` saw (none if the run was not recorded).
    pub deadlocks: Option<usize>,
    /// After a deadlock was released (flow control off, `rxecc run`):
    /// the drops since, which `drops` leaves out.
    pub drops_after_release: Option<u64>,
    /// The experiment's `[metrics]`, by the names it gave them.
    #[serde(flatten)]
    pub named: BTreeMap<String, Option<f64>>,
}

/// Flows that completed in less time than their bytes on the wire take
/// to cross the path's bottleneck: the standalone FCT less the base RTT
/// it adds (`fct_lines`). A real network has none.
pub fn faster_than_wire(lines: &[Fct], base_rtt_ns: u64) -> usize {
    lines
        .iter()
        .filter(|l| l.fct_ns < l.standalone_ns.saturating_sub(base_rtt_ns))
        .count()
}

/// The nearest-rank percentile the simulator's script takes (element
/// `floor(n p)` of the sorted values); 0 for none.
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

impl RunSummary {
    pub fn new(
        label: &str,
        lines: &[Fct],
        pauses: u64,
        drops: u64,
        base_rtt_ns: u64,
        port_rate_violations: u64,
    ) -> Self {
        let mut f: Vec<f64> = lines.iter().map(|l| l.fct_ns as f64 / 1e6).collect();
        f.sort_by(f64::total_cmp);
        // A flow with no standalone FCT (a plain bridge's, unmeasured base
        // RTT) has no slowdown.
        let mut sd: Vec<f64> = lines
            .iter()
            .filter(|l| l.standalone_ns > 0)
            .map(|l| (l.fct_ns as f64 / l.standalone_ns as f64).max(1.0))
            .collect();
        sd.sort_by(f64::total_cmp);
        let mut by_size: Vec<&Fct> = lines.iter().collect();
        by_size.sort_by_key(|l| l.size);
        let mut short: Vec<f64> = by_size[..by_size.len().div_ceil(10)]
            .iter()
            .filter(|l| l.standalone_ns > 0)
            .map(|l| (l.fct_ns as f64 / l.standalone_ns as f64).max(1.0))
            .collect();
        short.sort_by(f64::total_cmp);
        RunSummary {
            label: label.to_string(),
            flows: lines.len(),
            fct_p50_ms: nearest_rank(&f, 0.5),
            fct_p99_ms: nearest_rank(&f, 0.99),
            fct_max_ms: f.last().copied().unwrap_or(0.0),
            slowdown_p99: nearest_rank(&sd, 0.99),
            short_slowdown_p99: nearest_rank(&short, 0.99),
            pauses,
            drops,
            faster_than_wire: faster_than_wire(lines, base_rtt_ns),
            port_rate_violations,
            deadlocks: None,
            drops_after_release: None,
            named: BTreeMap::new(),
        }
    }
}

/// A row per run: flows, FCT median/p99/max (ms), p99 slowdown, pauses,
/// drops, and the invariants' violations: flows faster than the wire,
/// port releases faster than the rate.
pub fn summary_table(runs: &[RunSummary]) -> String {
    let mut s = format!(
        "{:<10} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8} {:>6} {:>13} {:>13}\n",
        "run",
        "flows",
        "FCT p50 ms",
        "FCT p99 ms",
        "FCT max ms",
        "slowdown p99",
        "pauses",
        "drops",
        "flows<wire",
        "ports>rate"
    );
    for r in runs {
        let _ = writeln!(
            s,
            "{:<10} {:>6} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>8} {:>6} {:>13} {:>13}",
            r.label,
            r.flows,
            r.fct_p50_ms,
            r.fct_p99_ms,
            r.fct_max_ms,
            r.slowdown_p99,
            r.pauses,
            r.drops,
            r.faster_than_wire,
            r.port_rate_violations
        );
    }
    for r in runs {
        let mut extra: Vec<String> = r
            .deadlocks
            .map(|d| format!("deadlocks {d}"))
            .into_iter()
            .chain(
                r.drops_after_release
                    .map(|d| format!("drops after the release {d}")),
            )
            .collect();
        extra.extend(r.named.iter().map(|(k, v)| match v {
            Some(v) if v.fract() == 0.0 => format!("{k} {v:.0}"),
            Some(v) => format!("{k} {v:.1}"),
            None => format!("{k} -"),
        }));
        if !extra.is_empty() {
            let _ = writeln!(s, "{:<10} {}", r.label, extra.join(", "));
        }
    }
    let flows: usize = runs.iter().map(|r| r.faster_than_wire).sum();
    let ports: u64 = runs.iter().map(|r| r.port_rate_violations).sum();
    if ports > 0 {
        let _ = writeln!(
            s,
            "warning: {ports} port releases faster than the port's rate \
             (pacing credit beyond one packet: burst_us, RXECC_CLOCK=host)"
        );
    }
    if flows > 0 {
        let _ = writeln!(
            s,
            "warning: {flows} flows completed faster than their bytes cross the bottleneck \
             (pacing credit beyond one packet: burst_us, RXECC_CLOCK=host)"
        );
    }
    s
}

/// The script's own output: `%.3f %d` then `\t%.3f %.3f %.3f` per run,
/// a line per bucket (runs must have the same flows for the rows to line
/// up, as there).
pub fn script_table(runs: &[(String, Vec<Bucket>)]) -> String {
    let mut s = String::new();
    let Some((_, first)) = runs.first() else {
        return s;
    };
    for (k, b) in first.iter().enumerate() {
        let _ = write!(s, "{:.3} {}", b.pct, b.max_size);
        for (_, bs) in runs {
            if let Some(x) = bs.get(k) {
                let _ = write!(s, "\t{:.3} {:.3} {:.3}", x.p50, x.p95, x.p99);
            }
        }
        s.push('\n');
    }
    s
}

/// A table for people: a row per bucket (its largest flow), and the
/// median, p95 and p99 slowdown of each run.
pub fn table(runs: &[(String, Vec<Bucket>)], step: u32) -> String {
    let mut s = String::new();
    let Some((_, first)) = runs.first() else {
        return s;
    };
    let _ = write!(s, "{:>7} {:>10} {:>6}", "flows", "size <=", "n");
    for (label, _) in runs {
        let _ = write!(s, " | {:^23}", format!("{label} p50/p95/p99"));
    }
    s.push('\n');
    for (k, b) in first.iter().enumerate() {
        let _ = write!(
            s,
            "{:>3}-{:<3} {:>10} {:>6}",
            (b.pct * 100.0).round(),
            ((b.pct * 100.0).round() as u32 + step).min(100),
            b.max_size,
            b.flows
        );
        for (_, bs) in runs {
            match bs.get(k) {
                Some(x) => {
                    let _ = write!(s, " | {:>7.2} {:>7.2} {:>7.2}", x.p50, x.p95, x.p99);
                }
                None => {
                    let _ = write!(s, " | {:>23}", "-");
                }
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::workload;

    fn topo() -> Topology {
        toml::from_str(
            r#"
            [defaults]
            rate_mbps = 100
            [[switch]]
            name = "s0"
            [[switch]]
            name = "s1"
            [[host]]
            name = "h0"
            [[host]]
            name = "h1"
            [[host]]
            name = "h2"
            [[link]]
            a = "h0"
            b = "s0"
            [[link]]
            a = "h1"
            b = "s0"
            rate_mbps = 40
            [[link]]
            a = "s0"
            b = "s1"
            rate_mbps = 60
            [[link]]
            a = "h2"
            b = "s1"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn paths_and_addresses() {
        let t = topo();
        assert_eq!(topology::path_rate_mbps(&t, 0, 1), Some(40));
        assert_eq!(topology::path_rate_mbps(&t, 0, 2), Some(60));
        assert_eq!(topology::path_rate_mbps(&t, 2, 0), Some(60));
        assert_eq!(node_ip(0), 0x0b000001);
        assert_eq!(node_ip(257), 0x0b010101);
        // 4096 B: one packet, 4154 B at 100 Mb/s.
        assert_eq!(wire_ns(4096, 100), 4154 * 8000 / 100);
        assert_eq!(wire_ns(4097, 100), (4097 + 2 * 58) * 8000 / 100);
    }

    #[test]
    fn fct_txt_round_trip() {
        let flows = workload::parse(
            "t",
            "3\n0 1 3 100 1000 2.0\n0 1 3 100 5000 2.1\n2 0 3 200 9000 2.2\n",
        )
        .unwrap();
        let rec = |id: u32, s: u64, e: u64| Record {
            id,
            src: flows[id as usize].src,
            dst: flows[id as usize].dst,
            dport: flows[id as usize].dport,
            op: "write".into(),
            size: flows[id as usize].size,
            sched_ns: s,
            start_ns: s + 10,
            end_ns: e,
            status: "ok".into(),
        };
        let recs = vec![rec(0, 100, 9000), rec(1, 200, 5000), rec(2, 300, 800_000)];
        let lines = fct_lines(&flows, &recs, &topo(), 1000).unwrap();
        // Completion order; ports per pair from 10000.
        assert_eq!(lines[0].sport, 10001);
        assert_eq!(lines[1].sport, 10000);
        assert_eq!(lines[0].start_ns, 2_100_000_010);
        assert_eq!(lines[0].fct_ns, 5000 - 210);
        assert_eq!(lines[2].standalone_ns, 1000 + wire_ns(9000, 60));
        let text = to_text(&lines);
        assert!(text.starts_with("0b000001 0b000101 10001 100 5000 2100000010 4790 "));
        assert_eq!(parse("t", &text).unwrap(), lines);
    }

    #[test]
    fn flows_faster_than_the_wire() {
        // 9000 B at 60 Mb/s: 3 packets, 9174 B on the wire, 1223200 ns.
        let wire = wire_ns(9000, 60);
        assert_eq!(wire, 1_223_200);
        let line = |fct_ns| Fct {
            sip: 0,
            dip: 0,
            sport: 0,
            dport: 100,
            size: 9000,
            start_ns: 0,
            fct_ns,
            standalone_ns: 1000 + wire,
        };
        // The base RTT is no part of the bound: a flow between the wire
        // time and the standalone FCT is no violation.
        let lines = [line(wire - 1), line(wire), line(wire + 500)];
        assert_eq!(faster_than_wire(&lines, 1000), 1);
        let s = RunSummary::new("r", &lines, 0, 0, 1000, 0);
        let t = summary_table(&[s]);
        assert!(t.contains("warning: 1 flows completed faster"));
        assert!(!t.contains("port releases"));
        let ok = RunSummary::new("r", &lines[1..], 0, 0, 1000, 0);
        assert!(!summary_table(std::slice::from_ref(&ok)).contains("warning"));
        assert_eq!(
            summary_table(std::slice::from_ref(&ok)).lines().count(),
            2,
            "no line of extras without any"
        );
        // The extras: deadlocks, drops after a release, named metrics
        // (whole numbers without decimals), in summary.json at the top level.
        let mut x = ok;
        x.deadlocks = Some(1);
        x.drops_after_release = Some(248);
        x.named.insert("ring_pauses".into(), Some(707.0));
        x.named.insert("f0_mbps".into(), Some(9.75));
        x.named.insert("f1_mbps".into(), None);
        let t = summary_table(std::slice::from_ref(&x));
        assert!(
            t.contains("r          deadlocks 1, drops after the release 248, f0_mbps 9.8, f1_mbps -, ring_pauses 707\n"),
            "{t}"
        );
        let j = serde_json::to_value(&x).unwrap();
        assert_eq!(j["ring_pauses"], 707.0);
        assert_eq!(j["f1_mbps"], serde_json::Value::Null);
        assert_eq!(j["deadlocks"], 1);
    }

    #[test]
    fn buckets_as_the_script() {
        // 40 flows, sizes 1..=40, slowdown = size / 10 (1 below 10).
        let lines: Vec<Fct> = (1..=40u64)
            .map(|s| Fct {
                sip: 0,
                dip: 0,
                sport: 0,
                dport: 100,
                size: s,
                start_ns: 0,
                fct_ns: s * 100,
                standalone_ns: 1000,
            })
            .collect();
        let b = buckets(&lines, Kind::Normal, 5, None);
        assert_eq!(b.len(), 20);
        assert_eq!((b[0].max_size, b[0].flows, b[0].p50), (2, 2, 1.0));
        assert_eq!((b[19].max_size, b[19].p50, b[19].p99), (40, 4.0, 4.0));
        assert_eq!(b[10].p50, 2.2);
        assert!(buckets(&lines, Kind::Incast, 5, None).is_empty());
        assert_eq!(buckets(&lines, Kind::All, 50, Some(2001)).len(), 2);
        let t = script_table(&[("a".into(), b.clone()), ("b".into(), b)]);
        assert!(
            t.starts_with("0.000 2\t1.000 1.000 1.000\t1.000 1.000 1.000\n"),
            "{t}"
        );
    }
}
