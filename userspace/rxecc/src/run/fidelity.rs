//! How faithfully the emulator ran a run: the guest's CPU share and the
//! lateness of rxe_cc's timers. A scale model keeps its groups only while
//! the guest is not its own bottleneck (its backlog is a queue no one
//! emulates) and its timers fire close to when the algorithm asked.

use serde::Serialize;
use std::collections::BTreeMap;

use super::experiment::CpuUse;

/// Above this busy share of the guest's CPU, its own backlog delays
/// packets and timers (docs/scale-model.md).
pub const CPU_MAX: f64 = 0.70;
/// A period end later than this share of T is a different algorithm.
pub const PERIOD_LATE_MAX: f64 = 0.05;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fidelity {
    /// The guest's busy share of its CPUs over the run's traffic.
    pub cpu_busy: Option<f64>,
    /// Mean time from a control period's nominal end to the hook that ran
    /// it (rxe_cc's `period_late_ns / period_runs`), us.
    pub period_late_us: Option<f64>,
    /// The same over the scaled T.
    pub period_late_of_t: Option<f64>,
    /// Mean lateness of the pacer's timer (`pacer_late_ns / pacer_fires`), us.
    pub pacer_late_us: Option<f64>,
}

impl Fidelity {
    /// From a run's CPU use and rxe_cc's totals for it (None on the stock
    /// rdma_rxe), T being the run's control period in us when it has one.
    pub(crate) fn of(
        cpu: Option<&CpuUse>,
        totals: Option<&BTreeMap<String, u64>>,
        t_us: Option<u64>,
    ) -> Fidelity {
        let mean = |sum: &str, n: &str| {
            let t = totals?;
            let (sum, n) = (*t.get(sum)?, *t.get(n)?);
            (n > 0).then(|| sum as f64 / n as f64 / 1e3)
        };
        let period_late_us = mean("period_late_ns", "period_runs");
        Fidelity {
            cpu_busy: cpu.and_then(CpuUse::busy_share),
            period_late_us,
            period_late_of_t: period_late_us
                .zip(t_us.filter(|t| *t > 0))
                .map(|(l, t)| l / t as f64),
            pacer_late_us: mean("pacer_late_ns", "pacer_fires"),
        }
    }

    /// What makes the run unfaithful, one line each.
    pub fn flags(&self) -> Vec<String> {
        let mut f = Vec::new();
        if let Some(c) = self.cpu_busy.filter(|c| *c > CPU_MAX) {
            f.push(format!(
                "the guest's CPU was {:.0}% busy (above {:.0}%: its own backlog is a queue the model does not have)",
                c * 100.0,
                CPU_MAX * 100.0
            ));
        }
        if let Some(l) = self.period_late_of_t.filter(|l| *l > PERIOD_LATE_MAX) {
            f.push(format!(
                "control periods ended {:.1}% of T late on average (above {:.0}%)",
                l * 100.0,
                PERIOD_LATE_MAX * 100.0
            ));
        }
        f
    }
}

/// One line per run: its CPU share and timers' lateness.
pub fn table(runs: &[(String, Fidelity)]) -> String {
    let opt = |v: Option<f64>, scale: f64, prec: usize, unit: &str| {
        v.map_or("-".to_string(), |x| format!("{:.*}{unit}", prec, x * scale))
    };
    let mut s = format!(
        "{:<10} {:>9} {:>16} {:>14} {:>15}\n",
        "emulator", "cpu busy", "period late us", "period late T", "pacer late us"
    );
    for (label, f) in runs {
        s.push_str(&format!(
            "{:<10} {:>9} {:>16} {:>14} {:>15}\n",
            label,
            opt(f.cpu_busy, 100.0, 0, "%"),
            opt(f.period_late_us, 1.0, 1, ""),
            opt(f.period_late_of_t, 100.0, 2, "%"),
            opt(f.pacer_late_us, 1.0, 1, ""),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::run::experiment::parse_totals;

    /// A run's measures: 10 s of one CPU's ticks, `busy` of them busy,
    /// and rxe_cc's totals.
    fn run_of(busy: u64, totals: &str) -> (CpuUse, BTreeMap<String, u64>) {
        let cpu = format!(
            "window_ns 10000000000\nkernel_ticks 500\nbusy_ticks {busy}\nticks_per_s 100\ncpus 1\n"
        );
        (CpuUse::parse(&cpu).unwrap(), parse_totals(totals))
    }

    #[test]
    fn a_busy_guest_and_late_periods_are_flagged() {
        // 8 s of 10 busy, periods 1 ms late on a 12.8 ms T: 7.8%.
        let (cpu, totals) = run_of(
            800,
            "period_runs 10\nperiod_late_ns 10000000\npacer_fires 4\npacer_late_ns 400000\n",
        );
        let f = Fidelity::of(Some(&cpu), Some(&totals), Some(12_800));
        assert_eq!(f.cpu_busy, Some(0.8));
        assert_eq!(f.period_late_us, Some(1000.0));
        assert_eq!(f.pacer_late_us, Some(100.0));
        let flags = f.flags();
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert!(flags[1].contains("7.8% of T"), "{flags:?}");
        let t = table(&[("acc".into(), f)]);
        assert!(
            t.contains("acc              80%           1000.0          7.81%           100.0"),
            "{t}"
        );
    }

    #[test]
    fn within_the_limits_nothing_is_flagged() {
        // 6.9 s of 10 busy; 0.5 ms late on 12.8 ms is 3.9%.
        let (cpu, totals) = run_of(690, "period_runs 10\nperiod_late_ns 5000000\n");
        let f = Fidelity::of(Some(&cpu), Some(&totals), Some(12_800));
        assert!(f.flags().is_empty(), "{:?}", f.flags());
        // Without T, lateness is reported but not judged.
        let f = Fidelity::of(Some(&cpu), Some(&totals), None);
        assert_eq!(f.period_late_of_t, None);
        assert_eq!(f.pacer_late_us, None);
    }
}
