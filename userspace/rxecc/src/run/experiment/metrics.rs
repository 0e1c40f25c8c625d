//! What is worked out from a run's outcome: the named metrics of its
//! `[metrics]` table, the guest's CPU use, rxe_cc's totals, and whether
//! the algorithm acted.

use super::one::RunOutcome;
use crate::config::experiment::NamedMetrics;
use crate::report::fct;
use crate::switch::PortStats;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// The named metrics of one run, from what it measured.
pub(super) fn named_metrics(
    nm: &NamedMetrics,
    run: &RunOutcome,
    n_flows: usize,
    rates_mbps: &BTreeMap<String, u64>,
) -> Result<BTreeMap<String, Option<f64>>> {
    let mut m = BTreeMap::new();
    if nm.is_empty() {
        return Ok(m);
    }
    // One counter of the ports named, each that has it.
    let of = |devs: &[String], key: fn(&PortStats) -> Option<u64>| -> Vec<u64> {
        run.ports
            .iter()
            .filter(|p| devs.contains(&p.dev))
            .filter_map(key)
            .collect()
    };
    for (name, devs) in &nm.ports {
        let pauses: u64 = of(devs, |p| Some(p.pfc_rx_xoff)).iter().sum();
        let paused: u64 = of(devs, |p| Some(p.paused_ns)).iter().sum();
        m.insert(format!("{name}_pauses"), Some(pauses as f64));
        m.insert(format!("{name}_paused_ms"), Some(paused as f64 / 1e6));
    }
    for (name, devs) in &nm.peak_ingress {
        let peak = of(devs, |p| p.ingress.map(|i| i.max_bytes))
            .into_iter()
            .max();
        m.insert(format!("{name}_peak_kb"), peak.map(|b| b as f64 / 1024.0));
    }
    if !nm.flows.is_empty() || !nm.wire.is_empty() {
        let recs = &run.records;
        for (name, sel) in &nm.flows {
            let ids = sel.ids(n_flows);
            let done: Vec<&fct::Record> = ids
                .iter()
                .filter_map(|id| recs.iter().find(|r| r.id == *id && r.status == "ok"))
                .collect();
            let start = done.iter().map(|r| r.start_ns).min().unwrap_or(0);
            let end = done.iter().map(|r| r.end_ns).max().unwrap_or(0);
            let bytes: u64 = done.iter().map(|r| r.size).sum();
            let rate = (done.len() == ids.len() && end > start)
                .then(|| bytes as f64 * 8e3 / (end - start) as f64);
            m.insert(format!("{name}_mbps"), rate);
        }
        // The flows' span, all of them complete or none counted.
        let ok: Vec<&fct::Record> = recs.iter().filter(|r| r.status == "ok").collect();
        let span_ns = (ok.len() == n_flows && n_flows > 0)
            .then(|| {
                let start = ok.iter().map(|r| r.start_ns).min()?;
                let end = ok.iter().map(|r| r.end_ns).max()?;
                (end > start).then(|| end - start)
            })
            .flatten();
        for (name, dev) in &nm.wire {
            let devs = std::slice::from_ref(dev);
            let bytes = of(devs, |p| Some(p.deq_bytes)).first().copied();
            let wire = bytes.zip(span_ns).map(|(b, ns)| b as f64 * 8e3 / ns as f64);
            let set = rates_mbps.get(dev).copied().filter(|r| *r > 0);
            m.insert(format!("{name}_wire_mbps"), wire);
            m.insert(
                format!("{name}_of_set"),
                wire.zip(set).map(|(w, r)| w / r as f64),
            );
            m.insert(
                format!("{name}_stalls"),
                of(devs, |p| Some(p.stalls)).first().map(|s| *s as f64),
            );
        }
    }
    for (name, w) in &nm.window {
        let at = |snap: &str| run.snapshots.get(snap);
        let v = match (w.as_slice(), at(&w[0]), at(&w[1])) {
            ([_, _, c], Some(a), Some(b)) => b
                .get(c)
                .zip(a.get(c))
                .map(|(b, a)| b.saturating_sub(*a) as f64),
            _ => None,
        };
        m.insert(name.clone(), v);
    }
    // Absent on the stock rdma_rxe: no rxe_cc, no counters.
    let totals = &run.totals;
    if nm.cpu {
        let cpu = run
            .cpu
            .as_ref()
            .context("the run did not measure its CPU (it never reached time 0)")?;
        let secs = cpu.secs();
        m.insert(
            "kernel_cpu_pct".into(),
            cpu.kernel_share().map(|x| x * 100.0),
        );
        let of = |keys: &[&str]| -> Option<f64> {
            let t = totals.as_ref()?;
            Some(
                keys.iter()
                    .map(|k| t.get(*k).copied().unwrap_or(0))
                    .sum::<u64>() as f64,
            )
        };
        m.insert(
            "timer_fires_per_s".into(),
            of(&["period_fires", "pacer_fires"])
                .zip(secs)
                .map(|(f, s)| f / s),
        );
        m.insert(
            "rxe_cc_us_per_qp_s".into(),
            of(&["hook_ns", "timer_ns"])
                .zip(secs)
                .filter(|_| n_flows > 0)
                .map(|(ns, s)| ns / 1e3 / s / n_flows as f64),
        );
    }
    if !nm.counters.is_empty() {
        for (name, c) in &nm.counters {
            let Some(t) = &totals else {
                m.insert(name.clone(), None);
                continue;
            };
            let get = |k: &String| {
                t.get(k).copied().with_context(|| {
                    format!(
                        "counters.{name}: rxe_cc's totals have no '{k}' (they have {})",
                        t.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                })
            };
            let v = match c.as_slice() {
                [a] => Some(get(a)? as f64),
                [a, b] => {
                    let (a, b) = (get(a)?, get(b)?);
                    (b > 0).then(|| a as f64 / b as f64)
                }
                _ => bail!("counters.{name}: one counter or two"),
            };
            m.insert(name.clone(), v);
        }
    }
    Ok(m)
}

/// The guest's CPU time over a run's traffic, from two reads of
/// `/proc/stat`: its `cpu.txt` (`name value` lines).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct CpuUse {
    window_ns: u64,
    /// System, irq and softirq time, in clock ticks.
    kernel_ticks: u64,
    /// All but idle and iowait.
    busy_ticks: u64,
    ticks_per_s: u64,
    cpus: u64,
}

/// `/proc/stat`'s `cpu` line: (kernel, busy) ticks, and the CPU count.
fn proc_stat(text: &str) -> Option<(u64, u64, u64)> {
    let f: Vec<u64> = text
        .lines()
        .find(|l| l.starts_with("cpu "))?
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal ...
    let g = |i: usize| f.get(i).copied().unwrap_or(0);
    let kernel = g(2) + g(5) + g(6);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count() as u64;
    Some((kernel, kernel + g(0) + g(1) + g(7), cpus))
}

impl CpuUse {
    pub(super) fn between(a: &str, b: &str, window_ns: u64) -> Option<Self> {
        let ((k0, b0, _), (k1, b1, cpus)) = (proc_stat(a)?, proc_stat(b)?);
        // SAFETY: sysconf(3) reads a constant; no memory is passed.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Some(CpuUse {
            window_ns,
            kernel_ticks: k1.saturating_sub(k0),
            busy_ticks: b1.saturating_sub(b0),
            ticks_per_s: u64::try_from(hz).ok()?,
            cpus,
        })
    }

    pub(super) fn to_text(&self) -> String {
        format!(
            "window_ns {}\nkernel_ticks {}\nbusy_ticks {}\nticks_per_s {}\ncpus {}\n",
            self.window_ns, self.kernel_ticks, self.busy_ticks, self.ticks_per_s, self.cpus
        )
    }

    #[cfg(test)]
    pub(crate) fn parse(text: &str) -> Result<Self> {
        let t = parse_totals(text);
        let get = |k: &str| t.get(k).copied().with_context(|| format!("no {k}"));
        Ok(CpuUse {
            window_ns: get("window_ns")?,
            kernel_ticks: get("kernel_ticks")?,
            busy_ticks: get("busy_ticks")?,
            ticks_per_s: get("ticks_per_s")?,
            cpus: get("cpus")?,
        })
    }

    fn secs(&self) -> Option<f64> {
        (self.window_ns > 0).then(|| self.window_ns as f64 / 1e9)
    }

    /// Kernel time as a share of all CPUs' time over the window.
    fn kernel_share(&self) -> Option<f64> {
        let all = self.secs()? * (self.ticks_per_s * self.cpus) as f64;
        (all > 0.0).then(|| self.kernel_ticks as f64 / all)
    }

    /// Busy time as a share of all CPUs' time over the window.
    pub(crate) fn busy_share(&self) -> Option<f64> {
        let all = self.secs()? * (self.ticks_per_s * self.cpus) as f64;
        (all > 0.0).then(|| self.busy_ticks as f64 / all)
    }
}

/// rxe_cc's `totals` (counters of every QP destroyed since it loaded).
pub(super) fn read_totals() -> BTreeMap<String, u64> {
    parse_totals(&std::fs::read_to_string("/sys/kernel/debug/rxe_cc/totals").unwrap_or_default())
}

/// `name count` lines.
pub(crate) fn parse_totals(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// Whether a run's algorithm acted, from rxe_cc's totals for the run: a
/// `cc=` run that shows none of its signals (DCQCN with no CNP, HPCC with
/// no INT record) is an experiment set up wrong, not a result.
#[derive(Debug, PartialEq)]
pub struct Engagement {
    /// None: the algorithm acts on nothing (`none`), or is not known here.
    pub engaged: Option<bool>,
    /// Each signal counter of the algorithm, with its count in the run.
    pub signals: Vec<(String, u64)>,
}

impl Engagement {
    /// The counters that show `cc` acting (`AlgId::signals`).
    fn signals(cc: &str) -> Option<&'static [&'static str]> {
        cc_core::alg::AlgId::from_name(cc).map(cc_core::alg::AlgId::signals)
    }

    /// Judges `cc`'s run from rxe_cc's totals for it (none: all 0).
    pub fn judge(cc: &str, totals: Option<&BTreeMap<String, u64>>) -> Self {
        let get = |k: &str| totals.and_then(|t| t.get(k)).copied().unwrap_or(0);
        match Self::signals(cc) {
            None | Some([]) => Engagement {
                engaged: None,
                signals: Vec::new(),
            },
            Some(keys) => {
                let signals: Vec<(String, u64)> =
                    keys.iter().map(|k| (k.to_string(), get(k))).collect();
                Engagement {
                    engaged: Some(signals.iter().any(|(_, n)| *n > 0)),
                    signals,
                }
            }
        }
    }

    /// One line for the run's summary.
    pub fn line(&self, label: &str, cc: &str) -> String {
        let counts: Vec<String> = self
            .signals
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        match self.engaged {
            Some(true) => format!("engaged: {label} (cc={cc}): {}", counts.join(", ")),
            Some(false) => format!(
                "{label} (cc={cc}) shows none of its signals ({}): the algorithm never acted; check the switch's marking, INT and knobs",
                counts.join(", ")
            ),
            None if Self::signals(cc).is_none() => {
                format!("engaged: {label} (cc={cc}): no signals known for this algorithm")
            }
            None => format!("engaged: {label} (cc={cc}): nothing to act on"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::experiment::load;
    use crate::switch::IngressStats;

    /// rxe_cc's totals from `name count` lines.
    fn totals(text: &str) -> Option<BTreeMap<String, u64>> {
        Some(parse_totals(text))
    }

    /// flowgen's records from its CSV.
    fn records(csv: &str) -> Vec<fct::Record> {
        let dir = std::env::temp_dir().join(format!("rxecc-recs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("flowgen-h0.csv"), csv).unwrap();
        let r = fct::read_records(&fct::record_files(&dir).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    fn port(dev: &str) -> PortStats {
        PortStats {
            dev: dev.into(),
            ..Default::default()
        }
    }

    #[test]
    fn engagement_needs_one_signal_of_the_algorithm() {
        let t = totals("cnps 0\ncnps_sent 0\nint_acks 12\nhalts 0\n");
        let t = t.as_ref();
        let d = Engagement::judge("dcqcn", t);
        assert_eq!(d.engaged, Some(false));
        assert!(d
            .line("x", "dcqcn")
            .contains("none of its signals (cnps 0)"));
        assert_eq!(Engagement::judge("hpcc", t).engaged, Some(true));
        assert_eq!(Engagement::judge("acc", t).engaged, Some(false));
        assert_eq!(
            Engagement::judge("acc", totals("periods_mixed 3\n").as_ref()).engaged,
            Some(true)
        );
        assert_eq!(Engagement::judge("none", t).engaged, None);
        assert_eq!(Engagement::judge("dcqcn", None).engaged, Some(false));
        // Every algorithm but none has a signal, and one is enough.
        for alg in cc_core::alg::ALGS {
            let first = alg.signals().first().map(|k| format!("{k} 1\n"));
            let want = first.as_ref().map(|_| true);
            let t = totals(first.as_deref().unwrap_or(""));
            let got = Engagement::judge(alg.name(), t.as_ref()).engaged;
            assert_eq!(got, want, "{}", alg.name());
        }
        assert!(Engagement::judge("bbr", t)
            .line("x", "bbr")
            .contains("no signals known"));
    }

    #[test]
    fn wire_rate_is_a_ports_bytes_over_the_flows_span() {
        let dir = std::env::temp_dir().join(format!("rxecc-wire-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("flows.txt"),
            "2\n1 0 3 100 1000000 0\n1 0 3 100 1000000 0\n",
        )
        .unwrap();
        // The second run is at 400 Mb/s, the first at the file's 200.
        let exp = r#"
            topology = "dumbbell"
            hosts = 2
            rate_mbps = 200
            [workload]
            kind = "file"
            flows = "flows.txt"
            [metrics]
            wire = { port = "p0" }
            [[run]]
            label = "r200"
            cc = "none"
            [[run]]
            label = "r400"
            cc = "none"
            rate_mbps = 400
        "#;
        let p = dir.join("e.toml");
        std::fs::write(&p, exp).unwrap();
        let e = load(&p).unwrap();
        let rate = |label: &str| e.scenario(label).unwrap().built.port_rates_mbps();
        assert_eq!(rate("r200")["p0"], 200);
        assert_eq!(rate("r400")["p0"], 400);
        assert_eq!(rate("r400")["v1"], 400);
        for (bad, why) in [
            (
                exp.replace("\"p0\"", "\"p7\""),
                "[metrics] port: no port p7",
            ),
            (
                exp.replace("rate_mbps = 400", "rate_mbps = 0"),
                "run r400: rate_mbps = 0: a link needs a rate",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        // 2 MB of frames in 80 ms (the first post at 1 ms, the last end at
        // 81 ms): 200 Mb/s, half of a 400 Mb/s port.
        let csv = "id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n\
                   0,1,0,100,write,1000000,0,1000000,61000000,ok\n\
                   1,1,0,100,write,1000000,0,2000000,81000000,ok\n";
        let mut run = RunOutcome {
            ports: vec![PortStats {
                deq_bytes: 2_000_000,
                stalls: 3,
                ..port("p0")
            }],
            records: records(csv),
            ..Default::default()
        };
        let m = named_metrics(&e.metrics, &run, 2, &rate("r400")).unwrap();
        assert_eq!(m["port_wire_mbps"], Some(200.0));
        assert_eq!(m["port_of_set"], Some(0.5));
        assert_eq!(m["port_stalls"], Some(3.0));
        // A flow that did not complete: no span, no rate.
        run.records = records(&csv.replace("81000000,ok", "81000000,failed"));
        let m = named_metrics(&e.metrics, &run, 2, &rate("r400")).unwrap();
        assert_eq!(m["port_wire_mbps"], None);
        assert_eq!(m["port_of_set"], None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn named_metrics_are_checked_and_computed() {
        let dir = std::env::temp_dir().join(format!("rxecc-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("flows.txt"),
            "3\n0 1 3 100 1000000 0\n2 1 3 100 500 0\n2 1 3 100 1000000 0.04\n",
        )
        .unwrap();
        let exp = r#"
            topology = "dumbbell"
            hosts = 3
            [workload]
            kind = "file"
            flows = "flows.txt"
            [metrics]
            ports = { trunk = ["p0", "v1"] }
            peak_ingress = { any = ["p0", "p1"] }
            flows = { big = 0, small = 1, both = [0, 1], big2 = [0], pair = [0, 2], all = "all" }
            counters = { acks = ["acks"], acks_per_packet = ["acks", "tx_packets"] }
            [[run]]
            label = "none"
            cc = "none"
        "#;
        let p = dir.join("e.toml");
        std::fs::write(&p, exp).unwrap();
        let e = load(&p).unwrap();
        for (bad, why) in [
            (
                exp.replace("\"v1\"", "\"v9\""),
                "[metrics] trunk: no port v9",
            ),
            (
                exp.replace("small = 1", "small = 3"),
                "flows.small: flow 3, but the workload has 3 flows",
            ),
            (
                exp.replace("\"all\" }", "\"every\" }"),
                "flows.all: \"every\": a flow's line in the flow file (0 = the first), a list of them, or \"all\"",
            ),
        ] {
            std::fs::write(&p, bad).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{err}");
        }
        // A run's directory: its ports and flowgen's records (flow 0 took
        // 80 ms for 1 MB: 100 Mb/s; flow 1 failed).
        let ingress = |max_bytes| {
            Some(IngressStats {
                max_bytes,
                ..Default::default()
            })
        };
        let mut run = RunOutcome {
            ports: vec![
                PortStats {
                    pfc_rx_xoff: 3,
                    paused_ns: 2_500_000,
                    ingress: ingress(4096),
                    ..port("p0")
                },
                PortStats {
                    pfc_rx_xoff: 2,
                    paused_ns: 500_000,
                    ..port("v1")
                },
                PortStats {
                    pfc_rx_xoff: 7,
                    paused_ns: 9,
                    ingress: ingress(10240),
                    ..port("p1")
                },
            ],
            records: records(
                "id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n\
                 0,0,1,100,write,1000000,0,1000,80001000,ok\n\
                 1,2,1,100,write,500,0,0,10,failed\n\
                 2,2,1,100,write,1000000,0,41000000,160001000,ok\n",
            ),
            ..Default::default()
        };
        let m = named_metrics(&e.metrics, &run, 3, &BTreeMap::new()).unwrap();
        assert_eq!(m["trunk_pauses"], Some(5.0));
        assert_eq!(m["trunk_paused_ms"], Some(3.0));
        assert_eq!(m["any_peak_kb"], Some(10.0));
        assert_eq!(m["big_mbps"], Some(100.0));
        assert_eq!(m["small_mbps"], None);
        assert_eq!(m["both_mbps"], None, "one of them failed");
        assert_eq!(m["big2_mbps"], Some(100.0));
        // 2 MB from the first post (1 us) to the last completion (160 ms).
        assert_eq!(m["pair_mbps"], Some(100.0));
        assert_eq!(m["all_mbps"], None, "flow 1 failed");
        // A run on the stock rdma_rxe: no rxe_cc, no counters.
        assert_eq!(m["acks"], None);
        run.totals = totals("tx_packets 400\nacks 100\n");
        let m = named_metrics(&e.metrics, &run, 3, &BTreeMap::new()).unwrap();
        assert_eq!(m["acks"], Some(100.0));
        assert_eq!(m["acks_per_packet"], Some(0.25));
        run.totals = totals("tx_packets 400\n");
        let err = format!(
            "{:#}",
            named_metrics(&e.metrics, &run, 3, &BTreeMap::new()).unwrap_err()
        );
        assert!(
            err.contains("rxe_cc's totals have no 'acks' (they have tx_packets)"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cpu_use_over_a_window() {
        let stat = |user: u64, sys: u64, idle: u64, irq: u64, soft: u64| {
            format!(
                "cpu  {user} 0 {sys} {idle} 5 {irq} {soft} 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 7\n"
            )
        };
        // 2 s on 2 CPUs at 100 ticks/s: 400 ticks; 40 of them kernel.
        let mut c = CpuUse::between(
            &stat(10, 20, 30, 1, 2),
            &stat(70, 50, 300, 5, 8),
            2_000_000_000,
        )
        .unwrap();
        c.ticks_per_s = 100;
        assert_eq!((c.kernel_ticks, c.busy_ticks, c.cpus), (40, 100, 2));
        assert_eq!(c.kernel_share(), Some(0.1));
        assert_eq!(CpuUse::parse(&c.to_text()).unwrap(), c);
        assert!(CpuUse::parse("window_ns 1\n").is_err());
        assert!(CpuUse::between("intr 7\n", &stat(1, 1, 1, 1, 1), 1).is_none());
        // The metrics: fires and rxe_cc's time per second, per flow.
        let nm = NamedMetrics {
            cpu: true,
            ..Default::default()
        };
        let mut run = RunOutcome::default();
        assert!(named_metrics(&nm, &run, 4, &BTreeMap::new()).is_err());
        run.cpu = Some(c);
        let m = named_metrics(&nm, &run, 4, &BTreeMap::new()).unwrap();
        assert_eq!(m["kernel_cpu_pct"], Some(10.0));
        assert_eq!(m["timer_fires_per_s"], None, "stock: no rxe_cc");
        run.totals =
            totals("period_fires 300\npacer_fires 100\nhook_ns 6000000\ntimer_ns 2000000\n");
        let m = named_metrics(&nm, &run, 4, &BTreeMap::new()).unwrap();
        assert_eq!(m["timer_fires_per_s"], Some(200.0));
        // 8 ms over 2 s and 4 flows: 1000 us per second per flow.
        assert_eq!(m["rxe_cc_us_per_qp_s"], Some(1000.0));
    }

    /// `[metrics] window`: a counter's rise between two event snapshots,
    /// null where a snapshot or the counter is missing.
    #[test]
    fn window_metric_between_snapshots() {
        let run = RunOutcome {
            snapshots: BTreeMap::from([
                (
                    "from".into(),
                    parse_totals("acked_bytes 1000\nrxe1.sent_pkts 7\n"),
                ),
                (
                    "to".into(),
                    parse_totals("acked_bytes 5096\nrxe1.sent_pkts 10\n"),
                ),
            ]),
            ..Default::default()
        };
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let nm = NamedMetrics {
            window: BTreeMap::from([
                ("acked".to_string(), w(&["from", "to", "acked_bytes"])),
                ("sent".to_string(), w(&["from", "to", "rxe1.sent_pkts"])),
                ("none".to_string(), w(&["from", "to", "naks"])),
                ("later".to_string(), w(&["from", "end", "acked_bytes"])),
            ]),
            ..Default::default()
        };
        let m = named_metrics(&nm, &run, 1, &BTreeMap::new()).unwrap();
        assert_eq!(m["acked"], Some(4096.0));
        assert_eq!(m["sent"], Some(3.0));
        assert_eq!(m["none"], None);
        assert_eq!(m["later"], None);
    }
}
