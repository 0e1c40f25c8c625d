//! Paper recipes (`testbed/experiments/paper/*.toml`): which runs of an
//! experiment file (or which rows of a model's output) reproduce a
//! paper's figure or table, and the paper's
//! claims about it, each judged against the runs' `report.json` and
//! printed side by side: claim, paper, testbed, met or missed.

use crate::config::claim::{Across, Claim};
use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One recipe file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The figure or table, e.g. "ACC (NSDI'24) Fig. 9".
    pub title: String,
    /// The experiment file it runs, relative to the recipe.
    pub experiment: Option<PathBuf>,
    /// Or a model, run on the host: a shell command, in the repository's
    /// `userspace/`, that writes the rows' metrics (labelled as `runs`) to
    /// `$RXECC_PAPER_OUT/summary.json` (GFC's Table 1 through fc-model).
    pub model: Option<String>,
    /// The experiment's runs it needs.
    pub runs: Vec<String>,
    /// Run each this many times (labels `<run>-1`, ...) instead of the
    /// experiment file's `repetitions`; the claims then take `across`.
    pub repetitions: Option<u32>,
    /// How the paper's setting was scaled to the testbed.
    #[serde(default)]
    pub scaling: String,
    /// The paper's figure to redraw (`figure.png`), testbed and model.
    pub figure: Option<crate::run::figure::Figure>,
    #[serde(rename = "claim")]
    pub claims: Vec<Claim>,
}

impl Across {
    /// The aggregate of `v` (the repetitions that have the metric).
    fn of(self, v: &mut [f64]) -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(match self {
            Across::Median => crate::report::spread::median(v),
            Across::Min => v[0],
            Across::Max => v[n - 1],
            Across::Mean => v.iter().sum::<f64>() / n as f64,
            Across::Share => v.iter().filter(|x| **x > 0.0).count() as f64 / n as f64,
        })
    }
}

/// A claim judged.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub says: String,
    pub paper: String,
    /// The testbed's value, if it has one.
    pub testbed: Option<f64>,
    pub met: bool,
    /// Why it was missed without a value (e.g. never converged).
    pub reason: String,
    /// How the value was taken over the run's repetitions ("median of
    /// 3"); empty for one.
    pub across: String,
    /// The least and greatest over the repetitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
    /// The model's, on an ideal network (a recipe's, when the model has
    /// the claim's runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelVerdict>,
}

/// A claim judged on the model.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct ModelVerdict {
    pub value: Option<f64>,
    pub met: bool,
}

impl Recipe {
    /// Reads and checks a recipe: its experiment file exists and every
    /// claim names one of its runs and one bound.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut r: Recipe = toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
        match (&mut r.experiment, &r.model) {
            (Some(e), None) => {
                *e = path.parent().unwrap_or(Path::new(".")).join(&*e);
                ensure!(
                    e.is_file(),
                    "{}: experiment {} does not exist",
                    path.display(),
                    e.display()
                );
            }
            (None, Some(_)) => ensure!(
                r.repetitions.is_none(),
                "{}: repetitions are an experiment's, not a model's",
                path.display()
            ),
            _ => bail!(
                "{}: name an experiment file or a model, one of them",
                path.display()
            ),
        }
        ensure!(!r.claims.is_empty(), "{}: no [[claim]]", path.display());
        for (i, c) in r.claims.iter().enumerate() {
            let at = || format!("{}: claim {} ('{}')", path.display(), i + 1, c.says);
            c.check(&r.runs).with_context(at)?;
            ensure!(!c.paper.is_empty(), "{}: no paper value", at());
        }
        Ok(r)
    }
}

/// The value of `metric` for `run` in a `report.json` array: its one
/// entry's, or `across` its repetitions (`<run>-1`, `<run>-2`, ...) that
/// have it.
fn metric(
    report: &serde_json::Value,
    run: &str,
    metric: &str,
    across: Across,
) -> Result<Option<f64>> {
    let entries = entries_of(report, run);
    if entries.is_empty() {
        bail!("report.json has no run '{run}'");
    }
    let mut values = Vec::new();
    for e in &entries {
        match e.get(metric) {
            None => bail!("report.json has no metric '{metric}' (run '{run}')"),
            Some(v) => values.extend(v.as_f64()),
        }
    }
    Ok(across.of(&mut values))
}

/// The entries of `run` in a report: its own, or its repetitions'.
fn entries_of<'a>(report: &'a serde_json::Value, run: &str) -> Vec<&'a serde_json::Value> {
    report
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            e["label"]
                .as_str()
                .is_some_and(|l| l == run || crate::config::experiment::is_repetition_of(l, run))
        })
        .collect()
}

/// How many repetitions of `run` a report holds (1 without repetitions).
fn repetitions(report: &serde_json::Value, run: &str) -> usize {
    entries_of(report, run).len()
}

/// The runs' metrics in an `rxecc run` results directory: each run's
/// `report.json` entry (a recorded experiment's) merged with its
/// `summary.json` one (FCTs, pauses), by label.
pub fn metrics_of(dir: &Path) -> Result<serde_json::Value> {
    let mut runs: Vec<serde_json::Map<String, serde_json::Value>> = Vec::new();
    let mut found = false;
    for name in ["report.json", "summary.json"] {
        let p = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        found = true;
        let v: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?;
        for e in v.as_array().into_iter().flatten() {
            let Some(obj) = e.as_object() else { continue };
            match runs.iter_mut().find(|r| r.get("label") == obj.get("label")) {
                Some(r) => {
                    for (k, v) in obj {
                        r.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                None => runs.push(obj.clone()),
            }
        }
    }
    ensure!(
        found,
        "{}: no report.json or summary.json (not an rxecc run results directory?)",
        dir.display()
    );
    Ok(serde_json::Value::Array(
        runs.into_iter().map(serde_json::Value::Object).collect(),
    ))
}

/// The runs' metrics of several results directories, one repetition
/// each: every run of the k-th (from 1) labelled `<run>-k`.
pub fn repetitions_of(dirs: &[PathBuf]) -> Result<serde_json::Value> {
    let mut all = Vec::new();
    for (k, d) in dirs.iter().enumerate() {
        for mut e in metrics_of(d)?.as_array().cloned().unwrap_or_default() {
            let Some(label) = e["label"].as_str().map(str::to_string) else {
                continue;
            };
            e["label"] = serde_json::Value::String(format!("{label}-{}", k + 1));
            all.push(e);
        }
    }
    Ok(serde_json::Value::Array(all))
}

/// Judges every claim of `recipe` against `report` (the runs' metrics,
/// [`metrics_of`]).
pub fn judge(recipe: &Recipe, report: &serde_json::Value) -> Result<Vec<Verdict>> {
    judge_claims(&recipe.claims, report)
}

/// The value a claim is about in `report`, or why there is none.
fn value(c: &Claim, report: &serde_json::Value) -> Result<(Option<f64>, String)> {
    let mine = metric(report, &c.run, &c.metric, c.across)?;
    Ok(match (&c.of, &c.over) {
        (None, None) => (mine, format!("{} has no {}", c.run, c.metric)),
        (_, Some(over)) => {
            let den = metric(report, &c.run, over, c.across)?;
            match (mine, den) {
                (Some(m), Some(d)) if d > 0.0 => (Some(m / d), String::new()),
                (Some(_), Some(_)) => (None, format!("{over} of {} is 0", c.run)),
                (None, _) => (None, format!("{} has no {}", c.run, c.metric)),
                (_, None) => (None, format!("{} has no {over}", c.run)),
            }
        }
        (Some(of), None) => {
            let theirs = metric(report, of, &c.metric, c.across)?;
            match (theirs, mine) {
                (Some(t), Some(m)) if m > 0.0 => (Some(t / m), String::new()),
                // None against some: as far better as it gets; none
                // against none: no better.
                (Some(t), Some(_)) if t > 0.0 => (Some(f64::INFINITY), String::new()),
                (Some(_), Some(_)) => (Some(1.0), String::new()),
                // A time to converge or settle that the other run never
                // reached is longer than any this one took.
                (None, Some(_)) if never_when_absent(&c.metric) => {
                    (Some(f64::INFINITY), String::new())
                }
                (None, _) => (None, format!("{of} has no {}", c.metric)),
                (_, None) => (None, format!("{} has no {}", c.run, c.metric)),
            }
        }
    })
}

/// Metrics a run has none of when it never got there: the periods until
/// its rates converged or settled.
fn never_when_absent(metric: &str) -> bool {
    metric.ends_with("converge_periods") || metric.ends_with("settle_periods")
}

/// The repetitions `report` holds, each as a report of its own with the
/// runs' plain labels (`acc-2` becomes `acc` in the second): empty
/// unless there are at least two.
fn by_repetition(report: &serde_json::Value) -> Vec<serde_json::Value> {
    let split = |l: &str| -> Option<(String, u32)> {
        let (base, k) = l.rsplit_once('-')?;
        Some((base.to_string(), k.parse().ok()?))
    };
    let entries: Vec<&serde_json::Value> = report.as_array().into_iter().flatten().collect();
    let mut ks: Vec<u32> = entries
        .iter()
        .filter_map(|e| split(e["label"].as_str()?).map(|x| x.1))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    if ks.len() < 2 {
        return Vec::new();
    }
    ks.iter()
        .map(|&k| {
            serde_json::Value::Array(
                entries
                    .iter()
                    .filter_map(|e| {
                        let (base, j) = split(e["label"].as_str()?)?;
                        (j == k).then(|| {
                            let mut e = (*e).clone();
                            e["label"] = serde_json::Value::String(base);
                            e
                        })
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The least and greatest value of a claim over the repetitions that
/// have one, when there are at least two.
fn range(c: &Claim, reps: &[serde_json::Value]) -> Option<(f64, f64)> {
    let one = Claim {
        across: Across::Median,
        ..c.clone()
    };
    let v: Vec<f64> = reps.iter().filter_map(|r| value(&one, r).ok()?.0).collect();
    (v.len() >= 2).then(|| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(*x), b.max(*x))
            })
    })
}

/// Judges `claims` against `report`.
pub fn judge_claims(claims: &[Claim], report: &serde_json::Value) -> Result<Vec<Verdict>> {
    let reps = by_repetition(report);
    let mut out = Vec::new();
    for c in claims {
        let (value, reason) = value(c, report)?;
        let met = c.met_by(value);
        out.push(Verdict {
            says: c.says.clone(),
            paper: if c.paper.is_empty() {
                c.bounds_text()
            } else {
                c.paper.clone()
            },
            testbed: value,
            met,
            reason: if value.is_some() || c.absent {
                String::new()
            } else {
                reason
            },
            across: match repetitions(report, &c.run) {
                0 | 1 => String::new(),
                n => format!("{} of {n}", format!("{:?}", c.across).to_lowercase()),
            },
            range: range(c, &reps),
            model: None,
        });
    }
    Ok(out)
}

/// Adds the model's value and verdict to each claim it can judge:
/// `model` holds the model's metrics of the recipe's runs (those of its
/// algorithms), with the runs' labels.
pub fn judge_model(claims: &[Claim], verdicts: &mut [Verdict], model: &serde_json::Value) {
    for (c, v) in claims.iter().zip(verdicts.iter_mut()) {
        // An error: the model lacks one of the claim's runs.
        v.model = value(c, model).ok().map(|(x, _)| ModelVerdict {
            value: x,
            met: c.met_by(x),
        });
    }
}

/// The side-by-side table.
pub fn table(recipe: &Recipe, verdicts: &[Verdict]) -> String {
    let mut s = format!("{}\n", recipe.title);
    if !recipe.scaling.is_empty() {
        s.push_str(&format!("scaling: {}\n", recipe.scaling));
    }
    s.push_str(&verdict_table(verdicts, "claim", "paper"));
    s
}

/// The verdicts' rows under a header (`first`: the claims' column,
/// `second`: what they were held against), and the count met.
pub fn verdict_table(verdicts: &[Verdict], first: &str, second: &str) -> String {
    let num = |x: f64| format!("{x:.2}");
    let cells: Vec<(String, Option<String>, String)> = verdicts
        .iter()
        .map(|v| {
            let mut tb = v.testbed.map_or_else(|| "-".to_string(), num);
            if let Some((lo, hi)) = v.range {
                tb = format!("{tb} [{}-{}]", num(lo), num(hi));
            }
            if !v.across.is_empty() {
                tb = format!("{tb} ({})", v.across);
            }
            let model = v.model.as_ref().map(|m| {
                let x = m.value.map_or_else(|| "-".to_string(), num);
                format!("{x} {}", if m.met { "met" } else { "missed" })
            });
            let verdict = match (v.met, v.reason.is_empty()) {
                (true, _) => "met".to_string(),
                (false, true) => "missed".to_string(),
                (false, false) => format!("missed ({})", v.reason),
            };
            (tb, model, verdict)
        })
        .collect();
    let with_model = cells.iter().any(|c| c.1.is_some());
    let w = verdicts
        .iter()
        .map(|v| v.says.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let tw = cells.iter().map(|c| c.0.len()).max().unwrap_or(7).max(7);
    let mw = cells
        .iter()
        .filter_map(|c| c.1.as_ref().map(String::len))
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = format!("{first:<w$}  {second:>12}  {:>tw$}  ", "testbed");
    if with_model {
        s.push_str(&format!("{:>mw$}  ", "model"));
    }
    s.push_str("verdict\n");
    for (v, (tb, model, verdict)) in verdicts.iter().zip(&cells) {
        s.push_str(&format!("{:<w$}  {:>12}  {tb:>tw$}  ", v.says, v.paper));
        if with_model {
            s.push_str(&format!("{:>mw$}  ", model.as_deref().unwrap_or("-")));
        }
        s.push_str(verdict);
        s.push('\n');
    }
    let met = verdicts.iter().filter(|v| v.met).count();
    s.push_str(&format!("{met} of {} {first}s met", verdicts.len()));
    if with_model {
        let by_model = verdicts
            .iter()
            .filter(|v| v.model.as_ref().is_some_and(|m| m.met))
            .count();
        s.push_str(&format!(
            " (the model, on an ideal network: {by_model} of {})",
            verdicts.iter().filter(|v| v.model.is_some()).count()
        ));
    }
    s.push('\n');
    s
}

/// `rxecc paper`: runs the recipe's runs of its experiment into `out`
/// (unless `from` holds them already), then judges and prints the claims
/// (`out/claims.txt`, `out/claims.json`).
pub fn run(path: &Path, out: &Path, from: &[PathBuf]) -> Result<()> {
    let recipe = Recipe::load(path)?;
    let dir = match (from.first(), &recipe.experiment, &recipe.model) {
        (Some(d), _, _) => d.to_path_buf(),
        (None, None, Some(model)) => {
            std::fs::create_dir_all(out)?;
            let userspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            eprintln!("rxecc paper: {}: {model}", recipe.title);
            let st = std::process::Command::new("sh")
                .arg("-c")
                .arg(model)
                .current_dir(&userspace)
                .env("RXECC_PAPER_OUT", out.canonicalize()?)
                .status()
                .with_context(|| format!("running {model}"))?;
            ensure!(st.success(), "{model}: {st}");
            out.to_path_buf()
        }
        (None, None, None) => bail!("{}: no experiment and no model", path.display()),
        (None, Some(experiment), _) => {
            eprintln!(
                "rxecc paper: {}: runs {} of {}",
                recipe.title,
                recipe.runs.join(","),
                experiment.display()
            );
            crate::run::experiment::run(
                experiment,
                out,
                &crate::run::experiment::Overrides {
                    runs: Some(recipe.runs.clone()),
                    repetitions: recipe.repetitions,
                    ..Default::default()
                },
            )?;
            out.to_path_buf()
        }
    };
    let report = if from.len() > 1 {
        repetitions_of(from)?
    } else {
        metrics_of(&dir)?
    };
    let mut verdicts = judge(&recipe, &report).with_context(|| {
        format!(
            "{}: the recipe needs runs {}",
            dir.display(),
            recipe.runs.join(",")
        )
    })?;
    // The model on the same setting, ideal network: its verdicts beside
    // the testbed's, and its lines in the figure.
    let mut model_runs = Vec::new();
    if let Some(e) = &recipe.experiment {
        match crate::report::model::ideal(e, &recipe.runs) {
            Ok((runs, _)) if !runs.is_empty() => {
                let m: Vec<&crate::report::Metrics> = runs.iter().map(|r| &r.1).collect();
                judge_model(&recipe.claims, &mut verdicts, &serde_json::to_value(m)?);
                model_runs = runs.into_iter().map(|r| r.0).collect();
            }
            Ok(_) => {}
            Err(err) => eprintln!("rxecc paper: no model beside the testbed: {err:#}"),
        }
    }
    std::fs::create_dir_all(out)?;
    if let (Some(f), Some(e)) = (recipe.figure, &recipe.experiment) {
        let p = crate::run::figure::draw(f, &recipe.title, e, &recipe.runs, &dir, &model_runs, out)
            .context("drawing the recipe's figure")?;
        eprintln!("rxecc paper: the figure: {}", p.display());
    }
    let mut t = table(&recipe, &verdicts);
    // The regime the runs were in, paper against testbed, when the
    // experiment is a scale model; else the recipe's own words only.
    match std::fs::read_to_string(dir.join("regime.txt")) {
        Ok(r) => t.push_str(&r),
        Err(_) if recipe.experiment.is_some() => {
            t.push_str("regime: not a scale model (its experiment has no [scale])\n")
        }
        Err(_) => {}
    }
    print!("{t}");
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("claims.txt"), &t)?;
    std::fs::write(
        out.join("claims.json"),
        serde_json::to_string_pretty(&verdicts)?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(claims: &str) -> Recipe {
        let text = format!(
            "title = \"t\"\nexperiment = \"x.toml\"\nruns = [\"none\", \"dcqcn\", \"acc\"]\n{claims}"
        );
        toml::from_str(&text).unwrap()
    }

    fn report() -> serde_json::Value {
        serde_json::json!([
            {"label": "none", "pauses": 900, "converge_periods": null},
            {"label": "dcqcn", "pauses": 100, "converge_periods": 20.0},
            {"label": "acc", "pauses": 25, "converge_periods": 2.5, "actual_ms": 6.0, "ideal_ms": 5.0},
        ])
    }

    #[test]
    fn strict_bounds_and_absent_values() {
        // A value on the bound: met by the inclusive bound, not the strict.
        let c = |extra: &str| -> Claim {
            toml::from_str(&format!(
                "says = \"s\"\nrun = \"acc\"\nmetric = \"pauses\"\n{extra}"
            ))
            .unwrap()
        };
        let at_least = c("at_least = 25.0");
        let above = c("above = 25.0");
        let below = c("below = 25.0");
        let at_most = c("at_most = 25.0");
        let absent = c("absent = true");
        let v = judge_claims(&[at_least, above, below, at_most, absent], &report()).unwrap();
        let met: Vec<bool> = v.iter().map(|v| v.met).collect();
        assert_eq!(met, [true, false, false, true, false]);
        assert_eq!(v[1].paper, "> 25");
        assert_eq!(v[4].paper, "none");
        // `absent` is met by a run without the value, and only then.
        let never: Claim = toml::from_str(
            "says = \"s\"\nrun = \"none\"\nmetric = \"converge_periods\"\nabsent = true",
        )
        .unwrap();
        let v = judge_claims(&[never], &report()).unwrap();
        assert!(v[0].met && v[0].reason.is_empty(), "{v:?}");
        // A claim needs a bound or `absent`, not both.
        let runs = ["acc".to_string()];
        assert!(c("").check(&runs).is_err());
        assert!(c("absent = true\nat_most = 1.0").check(&runs).is_err());
        assert!(c("below = 1.0").check(&runs).is_ok());
    }

    #[test]
    fn bounds_and_ratios() {
        let r = recipe(
            r#"
            [[claim]]
            says = "ACC within 10% in about 2 T"
            run = "acc"
            metric = "converge_periods"
            at_most = 2.0
            paper = "2 T"
            [[claim]]
            says = "10x faster than DCQCN"
            run = "acc"
            of = "dcqcn"
            metric = "converge_periods"
            at_least = 5.0
            paper = "10x"
            [[claim]]
            says = "fewer pauses"
            run = "acc"
            of = "dcqcn"
            metric = "pauses"
            at_least = 5.0
            paper = "5x"
            [[claim]]
            says = "none converges"
            run = "none"
            metric = "converge_periods"
            at_most = 100.0
            paper = "-"
            [[claim]]
            says = "halt close to ideal"
            run = "acc"
            metric = "actual_ms"
            over = "ideal_ms"
            at_least = 0.8
            at_most = 1.25
            paper = "close"
            "#,
        );
        let v = judge(&r, &report()).unwrap();
        assert_eq!(v[0].testbed, Some(2.5));
        assert!(!v[0].met, "2.5 T is more than 2");
        assert_eq!(v[1].testbed, Some(8.0));
        assert!(v[1].met);
        assert_eq!(v[2].testbed, Some(4.0));
        assert!(!v[2].met);
        assert_eq!(v[3].testbed, None);
        assert!(!v[3].met);
        assert_eq!(v[3].reason, "none has no converge_periods");
        assert_eq!(v[4].testbed, Some(1.2));
        assert!(v[4].met);
        let t = table(&r, &v);
        assert!(t.contains("missed (none has no converge_periods)"), "{t}");
        assert!(t.ends_with("2 of 5 claims met\n"), "{t}");
    }

    #[test]
    fn a_time_the_other_run_never_reached_is_longer_than_any() {
        let r = recipe(
            r#"
            [[claim]]
            says = "ACC converges before none"
            run = "acc"
            of = "none"
            metric = "converge_periods"
            above = 1.0
            paper = "-"
            "#,
        );
        let v = judge(&r, &report()).unwrap();
        assert_eq!(v[0].testbed, Some(f64::INFINITY));
        assert!(v[0].met, "none never converged: ACC did first");
        assert!(!never_when_absent("pauses") && never_when_absent("rate_converge_periods"));
    }

    #[test]
    fn report_and_summary_merge_by_label() {
        let dir = std::env::temp_dir().join(format!("rxecc-paper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(
            metrics_of(&dir).is_err(),
            "an empty directory has no metrics"
        );
        std::fs::write(
            dir.join("report.json"),
            r#"[{"label": "acc", "pauses": 3, "jain": 0.9}]"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("summary.json"),
            r#"[{"label": "acc", "pauses": 4, "fct_p50_ms": 2.0}, {"label": "none", "pauses": 9}]"#,
        )
        .unwrap();
        let m = metrics_of(&dir).unwrap();
        // Two directories: two repetitions of each run.
        let reps = repetitions_of(&[dir.clone(), dir.clone()]).unwrap();
        assert_eq!(repetitions(&reps, "acc"), 2);
        assert_eq!(reps[3]["label"], "none-2");
        assert_eq!(
            metric(&reps, "none", "pauses", Across::Median).unwrap(),
            Some(9.0)
        );
        assert_eq!(
            metric(&m, "acc", "pauses", Across::Median).unwrap(),
            Some(3.0),
            "report.json first"
        );
        assert_eq!(
            metric(&m, "acc", "fct_p50_ms", Across::Median).unwrap(),
            Some(2.0)
        );
        assert_eq!(
            metric(&m, "none", "pauses", Across::Median).unwrap(),
            Some(9.0)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn repetitions_are_aggregated() {
        let report = serde_json::json!([
            {"label": "acc-1", "deadlocks": 0, "pauses": 30},
            {"label": "acc-2", "deadlocks": 0, "pauses": 10},
            {"label": "acc-3", "deadlocks": 0, "pauses": 20},
            {"label": "acc-inc", "deadlocks": 9, "pauses": 1},
            {"label": "dcqcn-1", "deadlocks": 1, "pauses": 40, "f0": null},
            {"label": "dcqcn-2", "deadlocks": 0, "pauses": 80, "f0": 3.0},
            {"label": "dcqcn-3", "deadlocks": 2, "pauses": 60, "f0": 5.0},
            {"label": "dcqcn-4", "deadlocks": 0, "pauses": 70, "f0": null},
        ]);
        let m = |run, metric, a| super::metric(&report, run, metric, a).unwrap();
        // acc-inc is another run, not a repetition of acc.
        assert_eq!(m("acc", "pauses", Across::Median), Some(20.0));
        assert_eq!(m("acc", "deadlocks", Across::Max), Some(0.0));
        assert_eq!(m("dcqcn", "pauses", Across::Median), Some(65.0));
        assert_eq!(m("dcqcn", "pauses", Across::Min), Some(40.0));
        assert_eq!(m("dcqcn", "pauses", Across::Mean), Some(62.5));
        assert_eq!(m("dcqcn", "deadlocks", Across::Share), Some(0.5));
        // Null repetitions (a flow that never completed) are left out.
        assert_eq!(m("dcqcn", "f0", Across::Median), Some(4.0));
        assert_eq!(repetitions(&report, "dcqcn"), 4);
        assert_eq!(repetitions(&report, "acc"), 3);
        let r = recipe(
            r#"
            [[claim]]
            says = "ACC: 0 runs deadlock"
            run = "acc"
            metric = "deadlocks"
            across = "max"
            at_most = 0.0
            paper = "0 of 50"
            [[claim]]
            says = "DCQCN pauses more"
            run = "acc"
            of = "dcqcn"
            metric = "pauses"
            at_least = 3.0
            paper = "more"
            "#,
        );
        let v = judge(&r, &report).unwrap();
        assert!(v[0].met);
        assert_eq!(v[0].across, "max of 3");
        assert_eq!(v[1].testbed, Some(65.0 / 20.0));
        assert!(v[1].met);
        // The range: the ratio within each repetition (30 against 40, 10
        // against 80, 20 against 60; dcqcn-4 has no acc-4).
        assert_eq!(v[1].range, Some((40.0 / 30.0, 8.0)));
        assert_eq!(v[0].range, Some((0.0, 0.0)));
        let t = table(&r, &v);
        assert!(t.contains("3.25 [1.33-8.00] (median of 3)"), "{t}");
        assert!(!t.contains("model"), "{t}");
        // The model's verdicts beside: one it can judge, one it cannot
        // (no dcqcn there).
        let mut v = v;
        judge_model(
            &r.claims,
            &mut v,
            &serde_json::json!([{"label": "acc", "deadlocks": 1, "pauses": 5}]),
        );
        assert_eq!(
            v[0].model,
            Some(ModelVerdict {
                value: Some(1.0),
                met: false
            })
        );
        assert_eq!(v[1].model, None);
        let t = table(&r, &v);
        assert!(t.contains("1.00 missed"), "{t}");
        assert!(
            t.contains("(the model, on an ideal network: 0 of 1)"),
            "{t}"
        );
        // Against a run with none of the metric: infinitely better, or,
        // if the other has none either, no better.
        let zero = serde_json::json!([
            {"label": "acc", "pauses": 0}, {"label": "dcqcn", "pauses": 5}, {"label": "none", "pauses": 0},
        ]);
        let r = recipe(
            r#"
            [[claim]]
            says = "fewer than DCQCN"
            run = "acc"
            of = "dcqcn"
            metric = "pauses"
            at_least = 2.0
            paper = "fewer"
            [[claim]]
            says = "fewer than none"
            run = "acc"
            of = "none"
            metric = "pauses"
            at_least = 2.0
            paper = "fewer"
            "#,
        );
        let v = judge(&r, &zero).unwrap();
        assert_eq!(v[0].testbed, Some(f64::INFINITY));
        assert!(v[0].met);
        assert_eq!(v[1].testbed, Some(1.0));
        assert!(!v[1].met);
    }

    #[test]
    fn unknown_metric_or_run_is_an_error() {
        let r = recipe(
            r#"
            [[claim]]
            says = "x"
            run = "acc"
            metric = "convergence"
            at_most = 2.0
            paper = "2"
            "#,
        );
        let e = judge(&r, &report()).unwrap_err().to_string();
        assert!(e.contains("no metric 'convergence'"), "{e}");
        let e = judge(&r, &serde_json::json!([])).unwrap_err().to_string();
        assert!(e.contains("no run 'acc'"), "{e}");
    }

    #[test]
    fn shipped_recipes_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbed/experiments/paper");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let r = Recipe::load(&p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
                n += 1;
                let Some(e) = &r.experiment else { continue };
                // Every run it needs is in its experiment file.
                let exp = crate::config::experiment::load(e).unwrap();
                for run in &r.runs {
                    assert!(
                        exp.runs.iter().any(|x| &x.label == run),
                        "{}: run {run} is not in {}",
                        p.display(),
                        e.display()
                    );
                }
            }
        }
        assert!(n >= 3, "only {n} recipes in {}", dir.display());
    }
}
