//! Run-to-run spread: the same experiment repeated in separate boots,
//! per metric the median and the range across them, groups (the guest's
//! clocks) side by side. Reads the `report.json` files `rxecc report` and
//! `rxecc run` write (an array of `report::Metrics`).

use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The metrics compared, as report.json names them, with their heading.
pub const METRICS: &[(&str, &str)] = &[
    ("converge_periods", "every flow within 10% of C/n, T"),
    ("settle_periods", "settled in the band, T"),
    ("in_band", "time in band"),
    ("rate_converge_periods", "rates within 10% of C, T"),
    ("rate_settle_periods", "rates settled within 10% of C, T"),
    ("utilisation", "throughput / C"),
    ("wire_utilisation", "bottleneck's wire bytes / C"),
    ("jain", "Jain's fairness"),
    ("pauses", "PFC pauses"),
    ("p95_queue_bytes", "queue p95, B"),
    ("first_round_actual_ms", "first halts, ms"),
];

/// One group's repetitions: per run label and metric, the values seen (a
/// repetition where the metric is null, e.g. never converged, counts as
/// missing).
#[derive(Debug, Default)]
pub struct Group {
    pub reps: usize,
    values: BTreeMap<(String, &'static str), Vec<f64>>,
    /// The run labels, first seen first.
    order: Vec<String>,
}

impl Group {
    /// Adds one repetition's report.json text.
    pub fn add(&mut self, name: &str, text: &str) -> Result<()> {
        let runs: Vec<Value> =
            serde_json::from_str(text).with_context(|| format!("{name}: not a report.json"))?;
        self.reps += 1;
        for r in &runs {
            let label = r
                .get("label")
                .and_then(Value::as_str)
                .with_context(|| format!("{name}: a run without a label"))?;
            if !self.order.iter().any(|l| l == label) {
                self.order.push(label.to_string());
            }
            for (key, _) in METRICS {
                let v = self.values.entry((label.to_string(), key)).or_default();
                if let Some(x) = r.get(*key).and_then(Value::as_f64) {
                    v.push(x);
                }
            }
        }
        Ok(())
    }

    /// "median [min-max] (n/reps)" of one run's metric, or "-".
    fn cell(&self, label: &str, key: &'static str) -> String {
        let Some(v) = self.values.get(&(label.to_string(), key)) else {
            return "-".into();
        };
        if v.is_empty() {
            return format!("none of {}", self.reps);
        }
        let mut s = v.clone();
        let med = median(&mut s);
        let n = s.len();
        let f = |x: f64| num(x, 2);
        let mut c = format!("{} [{}-{}]", f(med), f(s[0]), f(s[n - 1]));
        if n < self.reps {
            let _ = write!(c, " ({n}/{})", self.reps);
        }
        c
    }

    fn labels(&self) -> Vec<String> {
        let mut l: Vec<String> = self.values.keys().map(|(l, _)| l.clone()).collect();
        l.dedup();
        l
    }
}

/// Reads `GROUP=report.json` arguments into groups, in first-seen order.
/// A value for a table cell: whole above 100 or where it is whole, else
/// with `prec` decimals.
fn num(x: f64, prec: usize) -> String {
    if x.abs() >= 100.0 || x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.prec$}")
    }
}

/// The median of `v` (sorted in place; not empty).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A run's metrics by name; None where it had none.
pub type Named = BTreeMap<String, Option<f64>>;

/// One metric of one run across its repetitions.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Across {
    pub run: String,
    pub metric: String,
    /// Repetitions that had the metric, of `reps`.
    pub n: usize,
    pub reps: usize,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The median over the baseline run's median.
    pub of_baseline: Option<f64>,
}

/// An experiment's named metrics per run across its repetitions
/// (`samples`: each repetition's run label and metrics, in the order run),
/// and, with a baseline run, each median as a ratio of the baseline's:
/// the table `rxecc run` prints and the rows of its metrics.json.
pub fn across_runs(samples: &[(&str, &Named)], baseline: Option<&str>) -> (String, Vec<Across>) {
    let mut order: Vec<&str> = Vec::new();
    let mut metrics: Vec<&str> = Vec::new();
    for (run, m) in samples {
        if !order.contains(run) {
            order.push(run);
        }
        for k in m.keys() {
            if !metrics.contains(&k.as_str()) {
                metrics.push(k);
            }
        }
    }
    let stat = |run: &str, key: &str| -> Across {
        let mut v: Vec<f64> = samples
            .iter()
            .filter(|(r, _)| *r == run)
            .filter_map(|(_, m)| m.get(key).copied().flatten())
            .filter(|x| x.is_finite())
            .collect();
        let reps = samples.iter().filter(|(r, _)| *r == run).count();
        let med = (!v.is_empty()).then(|| median(&mut v));
        Across {
            run: run.to_string(),
            metric: key.to_string(),
            n: v.len(),
            reps,
            median: med,
            min: v.first().copied(),
            max: v.last().copied(),
            of_baseline: None,
        }
    };
    let mut rows = Vec::new();
    for run in &order {
        for key in &metrics {
            let mut a = stat(run, key);
            if let (Some(b), Some(m)) = (baseline, a.median) {
                a.of_baseline = stat(b, key).median.filter(|d| *d != 0.0).map(|d| m / d);
            }
            rows.push(a);
        }
    }
    let f = |x: f64| num(x, 3);
    let reps = samples.len().checked_div(order.len().max(1)).unwrap_or(0);
    let mut s = if reps > 1 {
        format!("per run, over {reps} repetitions: median [min-max]")
    } else {
        "per run".to_string()
    };
    if let Some(b) = baseline {
        let _ = write!(s, "; of {b}: the median over {b}'s");
    }
    // The cells first: each column as wide as its widest.
    let cell = |a: &Across| match (a.median, a.min, a.max) {
        (Some(m), Some(lo), Some(hi)) => {
            let mut c = if f(lo) == f(hi) {
                f(m)
            } else {
                format!("{} [{}-{}]", f(m), f(lo), f(hi))
            };
            if a.n < a.reps {
                let _ = write!(c, " ({}/{})", a.n, a.reps);
            }
            c
        }
        _ => "-".into(),
    };
    let ratio = |a: &Across| a.of_baseline.map_or("-".into(), |r| format!("{r:.3}"));
    let mut head = vec!["run".to_string()];
    for key in &metrics {
        head.push(key.to_string());
        if let Some(b) = baseline {
            head.push(format!("of {b}"));
        }
    }
    let mut table = vec![head];
    for run in &order {
        let mut line = vec![run.to_string()];
        for a in rows.iter().filter(|a| a.run == *run) {
            line.push(cell(a));
            if baseline.is_some() {
                line.push(ratio(a));
            }
        }
        table.push(line);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|i| {
            table
                .iter()
                .map(|l| l.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    s.push('\n');
    for line in &table {
        for (i, (c, w)) in line.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(s, "{c:<w$}");
            } else {
                let _ = write!(s, "  {c:>w$}");
            }
        }
        s.push('\n');
    }
    (s, rows)
}

/// Measured rows, a JSON object per line with the run's label (`run`)
/// and its metrics (numbers, or null where a repetition had none), for
/// [`across_runs`]: what a script measured, tabled here.
pub fn read_measured(name: &str, text: &str) -> Result<Vec<(String, Named)>> {
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || format!("{name}:{}", i + 1);
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
        let obj = v
            .as_object()
            .with_context(|| format!("{}: not a JSON object", at()))?;
        let run = obj
            .get("run")
            .and_then(Value::as_str)
            .with_context(|| format!("{}: no \"run\" label", at()))?;
        let mut m = BTreeMap::new();
        for (k, x) in obj.iter().filter(|(k, _)| *k != "run") {
            let n = match x {
                Value::Null => None,
                Value::Number(n) => n.as_f64(),
                _ => anyhow::bail!("{}: {k} = {x}: a number or null", at()),
            };
            m.insert(k.clone(), n);
        }
        rows.push((run.to_string(), m));
    }
    anyhow::ensure!(!rows.is_empty(), "{name}: no rows");
    Ok(rows)
}

/// One group as a row per run (in the reports' order) and a column per
/// metric: the median only, "never" where no repetition had it, and how
/// many did where some did not ("2.9 (2/3)").
pub fn rows(g: &Group) -> String {
    let mut s = format!("median of {} repetitions\n{:<10}", g.reps, "run");
    for (key, _) in METRICS {
        let _ = write!(s, " {:>21}", key);
    }
    s.push('\n');
    for l in &g.order {
        let _ = write!(s, "{l:<10}");
        for (key, _) in METRICS {
            let v = g
                .values
                .get(&(l.clone(), *key))
                .cloned()
                .unwrap_or_default();
            let cell = if v.is_empty() {
                "never".to_string()
            } else {
                let mut v = v;
                let med = median(&mut v);
                let n = v.len();
                let mut c = if med.abs() >= 100.0 || med.fract() == 0.0 {
                    format!("{med:.0}")
                } else {
                    format!("{med:.2}")
                };
                if n < g.reps {
                    let _ = write!(c, " ({n}/{})", g.reps);
                }
                c
            };
            let _ = write!(s, " {cell:>21}");
        }
        s.push('\n');
    }
    s
}

pub fn read(reports: &[String]) -> Result<Vec<(String, Group)>> {
    let mut groups: Vec<(String, Group)> = Vec::new();
    for r in reports {
        let (name, file) = r
            .split_once('=')
            .with_context(|| format!("'{r}': expected GROUP=report.json"))?;
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        let i = match groups.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                groups.push((name.to_string(), Group::default()));
                groups.len() - 1
            }
        };
        groups[i].1.add(file, &text)?;
    }
    Ok(groups)
}

/// The table: a row per run label and metric, a column per group, each
/// cell the median [min-max] over the group's repetitions.
pub fn table(groups: &[(String, Group)]) -> String {
    let mut labels: Vec<String> = groups.iter().flat_map(|(_, g)| g.labels()).collect();
    labels.sort();
    labels.dedup();
    let mut s = format!("{:<8} {:<28}", "run", "metric");
    for (name, g) in groups {
        let _ = write!(s, " | {:<30}", format!("{name} ({} boots)", g.reps));
    }
    s.push('\n');
    for l in &labels {
        for (key, head) in METRICS {
            let _ = write!(s, "{l:<8} {head:<28}");
            for (_, g) in groups {
                let _ = write!(s, " | {:<30}", g.cell(l, key));
            }
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {

    #[test]
    fn measured_rows_are_read_and_tabled() {
        let rows = read_measured(
            "m.jsonl",
            "{\"run\":\"100\",\"wire_mbps\":99.5,\"stalls\":0}\n\n{\"run\":\"200\",\"wire_mbps\":null,\"stalls\":3}\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].1["wire_mbps"], None);
        let samples: Vec<_> = rows.iter().map(|(r, m)| (r.as_str(), m)).collect();
        let (table, _) = across_runs(&samples, None);
        assert!(table.starts_with("per run\n"), "{table}");
        assert!(table.contains("99.500"), "one value, no range: {table}");
        for (text, why) in [
            ("{\"wire_mbps\":1}", "m.jsonl:1: no \"run\" label"),
            (
                "{\"run\":\"a\",\"x\":\"fast\"}",
                "m.jsonl:1: x = \"fast\": a number or null",
            ),
            ("[1]", "m.jsonl:1: not a JSON object"),
            ("", "m.jsonl: no rows"),
        ] {
            let e = read_measured("m.jsonl", text).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn across_runs_takes_medians_and_ratios() {
        let m = |v: Option<f64>| BTreeMap::from([("flow_mbps".to_string(), v)]);
        let (s1, s2, s3) = (m(Some(800.0)), m(Some(600.0)), m(Some(700.0)));
        let (p1, p2, p3) = (m(Some(760.0)), m(None), m(Some(740.0)));
        let samples = [
            ("stock", &s1),
            ("patched", &p1),
            ("stock", &s2),
            ("patched", &p2),
            ("stock", &s3),
            ("patched", &p3),
        ];
        let (table, rows) = across_runs(&samples, Some("stock"));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].median, Some(700.0));
        assert_eq!((rows[0].min, rows[0].max), (Some(600.0), Some(800.0)));
        assert_eq!(rows[0].of_baseline, Some(1.0));
        assert_eq!((rows[1].n, rows[1].reps), (2, 3));
        assert_eq!(rows[1].median, Some(750.0));
        assert_eq!(rows[1].of_baseline, Some(750.0 / 700.0));
        assert!(table.contains("700 [600-800]"), "{table}");
        assert!(table.contains("750 [740-760] (2/3)"), "{table}");
        assert!(table.contains("1.071"), "{table}");
        let (table, rows) = across_runs(&samples, None);
        assert!(rows.iter().all(|r| r.of_baseline.is_none()));
        assert!(!table.contains("of stock"), "{table}");
    }

    use super::*;

    #[test]
    fn median_and_range_per_group() {
        let mut v = Group::default();
        for (c, p) in [(2.2, 40), (18.8, 52), (2.1, 38)] {
            v.add(
                "r",
                &format!(r#"[{{"label": "acc", "converge_periods": {c}, "pauses": {p}}}]"#),
            )
            .unwrap();
        }
        let mut h = Group::default();
        h.add(
            "r",
            r#"[{"label": "acc", "converge_periods": null, "pauses": 9}]"#,
        )
        .unwrap();
        h.add(
            "r",
            r#"[{"label": "acc", "converge_periods": 17.4, "pauses": 11}]"#,
        )
        .unwrap();
        assert_eq!(v.cell("acc", "converge_periods"), "2.20 [2.10-18.80]");
        assert_eq!(v.cell("acc", "pauses"), "40 [38-52]");
        assert_eq!(
            h.cell("acc", "converge_periods"),
            "17.40 [17.40-17.40] (1/2)"
        );
        assert_eq!(h.cell("acc", "pauses"), "10 [9-11]");
        assert_eq!(h.cell("acc", "jain"), "none of 2");
        assert_eq!(h.cell("dcqcn", "jain"), "-");
        let t = table(&[("virtual".into(), v), ("host".into(), h)]);
        assert!(t.contains("virtual (3 boots)"));
        assert!(t
            .lines()
            .any(|l| l.starts_with("acc") && l.contains("PFC pauses")));
        assert!(Group::default().add("r", "{").is_err());
        // One group as rows, in the reports' order.
        let mut g = Group::default();
        for t in [
            r#"[{"label": "none", "pauses": 900}, {"label": "acc", "converge_periods": null, "pauses": 9}]"#,
            r#"[{"label": "none", "pauses": 901}, {"label": "acc", "converge_periods": 17.4, "pauses": 11}]"#,
            r#"[{"label": "none", "pauses": 902}, {"label": "acc", "converge_periods": 3.0, "pauses": 12}]"#,
        ] {
            g.add("r", t).unwrap();
        }
        let r = rows(&g);
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[0], "median of 3 repetitions");
        assert!(
            lines[2].starts_with("none") && lines[2].contains("never"),
            "{r}"
        );
        assert!(lines[2].contains(" 901"), "{r}");
        assert!(lines[3].starts_with("acc"), "{r}");
        assert!(lines[3].contains("10.20 (2/3)"), "{r}");
    }
}
