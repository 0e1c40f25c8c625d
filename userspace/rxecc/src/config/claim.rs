//! A claim about runs: a metric of a run (a `report.json` field), or a
//! ratio of two, against a bound. The paper recipes' claims
//! (run/paper.rs) and an experiment file's `[[expect]]` entries share it.

use anyhow::{ensure, Result};
use serde::Deserialize;

/// One claim: a metric of a run (a `report.json` field), or the ratio of
/// another run's metric to it, against a bound. A recipe's claims are a
/// paper's; an experiment file's `[[expect]]` entries are the same, the
/// testbed's own expectations of its runs (`rxecc run --check`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// What the paper says, in its words.
    pub says: String,
    /// The run the claim is about.
    pub run: String,
    /// A field of that run's `report.json` entry, e.g. `converge_periods`.
    pub metric: String,
    /// If set, the claim is about `metric(of) / metric(run)`: how many
    /// times better `run` does than `of` (fewer pauses, faster).
    pub of: Option<String>,
    /// If set, the claim is about `metric(run) / over(run)`, two metrics
    /// of one run (a halt's actual length over its ideal).
    pub over: Option<String>,
    /// Bounds on the value, at least one: inclusive, or strict (`above`,
    /// `below`: "fewer pauses than no CC" is `of = "none"`, `above = 1`);
    /// or `absent`, met when the run has no value (it never converged).
    pub at_most: Option<f64>,
    pub at_least: Option<f64>,
    pub above: Option<f64>,
    pub below: Option<f64>,
    #[serde(default)]
    pub absent: bool,
    /// The paper's number, as it printed it, for the table (required of a
    /// recipe's claims).
    #[serde(default)]
    pub paper: String,
    /// Over a run's repetitions: the median (default) of the metric, its
    /// min, max or mean, or the share of repetitions where it is above 0
    /// ("3 of 50 runs deadlocked"). A ratio (`of`, `over`) is taken
    /// between the two aggregates.
    #[serde(default)]
    pub across: Across,
}

/// How a claim takes a metric over a run's repetitions.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Across {
    #[default]
    Median,
    Min,
    Max,
    Mean,
    Share,
}

impl Claim {
    /// The claim names only runs among `runs`, not both `of` and `over`,
    /// and has a bound (or `absent`, alone).
    pub fn check(&self, runs: &[String]) -> Result<()> {
        for run in self.runs() {
            ensure!(
                runs.contains(run),
                "names run '{run}', not among runs {runs:?}"
            );
        }
        ensure!(
            self.of.is_none() || self.over.is_none(),
            "has both of and over"
        );
        let bounds = [self.at_most, self.at_least, self.above, self.below];
        let n = bounds.iter().filter(|b| b.is_some()).count();
        ensure!(
            n > 0 || self.absent,
            "has no bound (at_most, at_least, above, below) and is not `absent`"
        );
        ensure!(!(n > 0 && self.absent), "has a bound and `absent` both");
        Ok(())
    }

    /// Whether a value (None: the run has none) meets the claim.
    pub fn met_by(&self, value: Option<f64>) -> bool {
        match value {
            None => self.absent,
            Some(v) => {
                !self.absent
                    && self.at_most.is_none_or(|b| v <= b)
                    && self.at_least.is_none_or(|b| v >= b)
                    && self.above.is_none_or(|b| v > b)
                    && self.below.is_none_or(|b| v < b)
            }
        }
    }

    /// Its bounds as text ("> 1, <= 5"; "none" for `absent`), for the
    /// table's second column when it has no paper value.
    pub fn bounds_text(&self) -> String {
        if self.absent {
            return "none".to_string();
        }
        [
            (">=", self.at_least),
            (">", self.above),
            ("<=", self.at_most),
            ("<", self.below),
        ]
        .iter()
        .filter_map(|(op, b)| b.map(|b| format!("{op} {b}")))
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// The runs it reads.
    pub fn runs(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.run).chain(self.of.iter())
    }
}
