//! A recipe's figure: the plot its paper draws, redrawn from the
//! testbed's recording and the model's trace on one chart, in the paper's
//! units when the experiment is a scale model (times divided by k_t,
//! rates multiplied by k_t / k_b).

use crate::config::experiment;
use crate::report::plot::{plot_lines, Line};
use crate::report::{self, Flow, Run};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Which figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The sum over flows of the rates the algorithm sets, against time
    /// from the first flow's start, a line per run (ACC's Fig. 9).
    AggregateRate,
}

/// From the testbed's units to the paper's: testbed ns per plotted ms,
/// plotted rate per testbed b/s, and the axes' units.
struct Units {
    per_ms: f64,
    rate: f64,
    time_unit: &'static str,
    rate_unit: &'static str,
}

impl Units {
    fn of(e: &experiment::Experiment) -> Units {
        match &e.scale {
            Some(p) => {
                let s = p.scale();
                Units {
                    // Testbed ns per paper ms.
                    per_ms: 1e6 * s.k_t,
                    // Testbed b/s to paper Gb/s.
                    rate: s.k_t / s.k_b / 1e9,
                    time_unit: "time (ms, the paper's: the testbed's / k_t)",
                    rate_unit: "Gb/s (the paper's)",
                }
            }
            None => Units {
                per_ms: 1e6,
                rate: 1e-6,
                time_unit: "time (ms)",
                rate_unit: "Mb/s",
            },
        }
    }
}

/// The aggregate rate as steps: (time, rate) at every change, held until
/// the next.
fn aggregate(flows: &[Flow], u: &Units) -> Vec<(f64, f64)> {
    let origin = flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let end = flows.iter().map(|f| f.end_ns).max().unwrap_or(origin);
    let mut times: Vec<u64> = flows
        .iter()
        .flat_map(|f| f.rate.iter().map(|s| s.0).chain([f.start_ns, f.end_ns]))
        .filter(|t| (origin..=end).contains(t))
        .collect();
    times.sort_unstable();
    times.dedup();
    let mut out: Vec<(f64, f64)> = Vec::new();
    for t in times {
        let x = (t - origin) as f64 / u.per_ms;
        let y = report::aggregate_rate(flows, t) as f64 * u.rate;
        if let Some(&(_, last)) = out.last() {
            out.push((x, last));
        }
        out.push((x, y));
    }
    out
}

/// The recording of `run` under `dir`: its own, or its first
/// repetition's.
fn recording(dir: &Path, run: &str) -> Option<PathBuf> {
    [run.to_string(), format!("{run}-1")]
        .iter()
        .map(|l| dir.join(l).join("rec"))
        .find(|p| p.join("rates.csv").is_file())
}

/// Draws `figure` for `runs` into `out/figure.png`: each run's testbed
/// line (from `dir`) solid, the model's (`model`) dashed in its colour.
/// Returns the file written.
pub fn draw(
    figure: Figure,
    title: &str,
    experiment: &Path,
    runs: &[String],
    dir: &Path,
    model: &[Run],
    out: &Path,
) -> Result<PathBuf> {
    let e = experiment::load(experiment)?;
    let u = Units::of(&e);
    let Figure::AggregateRate = figure;
    let mut lines = Vec::new();
    for (i, label) in runs.iter().enumerate() {
        if let Some(rec) = recording(dir, label) {
            let run =
                report::load(label, &rec).with_context(|| format!("loading {}", rec.display()))?;
            lines.push(Line {
                label: format!("{label} (testbed)"),
                points: aggregate(&run.flows, &u),
                color: i,
                dashed: false,
            });
        }
        if let Some(m) = model.iter().find(|m| &m.label == label) {
            lines.push(Line {
                label: format!("{label} (model)"),
                points: aggregate(&m.flows, &u),
                color: i,
                dashed: true,
            });
        }
    }
    let capacity = e
        .report
        .as_ref()
        .map(|r| r.capacity_mbps as f64 * 1e6 * u.rate);
    let path = out.join("figure.png");
    plot_lines(
        &path,
        // The figure's name (the title up to its first colon) fits above
        // the chart; the whole title is the recipe's claims.txt.
        &format!(
            "{}: aggregate rate set by the algorithm",
            title.split(':').next().unwrap_or(title)
        ),
        (u.time_unit, u.rate_unit),
        &lines,
        capacity.map(|c| (c, "bottleneck capacity C")),
    )?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_holds_each_sum_until_the_next_change() {
        let u = Units {
            per_ms: 1e6,
            rate: 1e-6,
            time_unit: "",
            rate_unit: "",
        };
        let flow = |start: u64, steps: &[(u64, u64)]| Flow {
            rate: steps.to_vec(),
            start_ns: start,
            end_ns: 10_000_000,
            ..Default::default()
        };
        // Two flows at 40 Mb/s; the second starts 2 ms late; at 4 ms both
        // are cut to 20.
        let flows = [
            flow(0, &[(0, 40_000_000), (4_000_000, 20_000_000)]),
            flow(
                2_000_000,
                &[(2_000_000, 40_000_000), (4_000_000, 20_000_000)],
            ),
        ];
        let a = aggregate(&flows, &u);
        assert_eq!(a[0], (0.0, 40.0));
        assert!(
            a.contains(&(2.0, 40.0)) && a.contains(&(2.0, 80.0)),
            "{a:?}"
        );
        assert!(
            a.contains(&(4.0, 80.0)) && a.contains(&(4.0, 40.0)),
            "{a:?}"
        );
    }
}
