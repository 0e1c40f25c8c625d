//! What a run is measured against: the base RTT of the standalone FCT,
//! a scale model's regime table, and each host link's offered load.

use super::one::run_one;
use crate::config::experiment::{scenario_for, Experiment, Run, Traffic, Workload};
use crate::config::{scale, workload};
use crate::modules::Rxe;
use crate::report::fct;
use anyhow::{ensure, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// `n` one-packet flows, 20 ms apart on the idle testbed with no CC, each
/// the next of `kinds` (source, destination, bytes) in turn, into
/// `out/<name>`: their FCT lines.
fn probe_flows(
    e: &Experiment,
    path: &Path,
    out: &Path,
    name: &str,
    kinds: &[(u32, u32, u64)],
    n: u32,
) -> Result<Vec<fct::Fct>> {
    let dir = out.join(name);
    std::fs::create_dir_all(&dir)?;
    let flows: Vec<workload::Flow> = (0..n)
        .zip(kinds.iter().cycle())
        .map(|(i, &(src, dst, size))| workload::Flow {
            src,
            dst,
            pg: workload::PG,
            dport: workload::DPORT,
            size,
            start_s: workload::BASE_S + f64::from(i) * 0.02,
        })
        .collect();
    let file = dir.join("flows.txt");
    std::fs::write(&file, workload::to_text(&flows))?;
    let probe = Run {
        label: name.into(),
        cc: "none".into(),
        knobs: BTreeMap::new(),
        paper_knobs: BTreeMap::new(),
        rxe_params: BTreeMap::new(),
        switch: Default::default(),
        inject: Vec::new(),
        rxe: Rxe::Patched,
        rate_mbps: None,
        flows: None,
        deadlock_release: None,
        deadlock_release_s: None,
        events: Vec::new(),
        // One-packet flows, timed by flowgen whatever the runs use.
        traffic: Some(Traffic::Flowgen),
    };
    // The file loaded already: its text is needed for no error's place.
    let sc = scenario_for(e, &probe, path, "")?;
    let lines = run_one(e, &probe, &sc, &file, &flows, &dir, 0)?.fct;
    ensure!(
        lines.len() == flows.len(),
        "{name}: only {} of {n} probe flows completed",
        lines.len()
    );
    Ok(lines)
}

/// The base RTT of the standalone FCT, measured: 20 one-packet flows
/// between hosts 0 and 1, 20 ms apart on the idle testbed with no CC;
/// the least of their FCT less their serialisation, so that the
/// standalone FCT is a lower bound, as the simulator's is (a median let
/// slowdowns below 1 be clipped away). Every run's fct.txt uses it, so
/// their slowdowns compare.
pub(super) fn measure_base_rtt(e: &Experiment, path: &Path, out: &Path) -> Result<u64> {
    eprintln!("rxecc run: measuring the base RTT (20 one-packet flows, h0 <-> h1, no CC) ...");
    let lines = probe_flows(e, path, out, "base-rtt", &[(0, 1, 64), (1, 0, 64)], 20)?;
    let mut excess: Vec<u64> = lines
        .iter()
        .map(|l| l.fct_ns.saturating_sub(l.standalone_ns))
        .collect();
    excess.sort_unstable();
    let rtt = excess[0];
    eprintln!(
        "rxecc run: base RTT {} us, the least of 20 probes (median {}, max {})",
        rtt / 1000,
        excess[excess.len() / 2] / 1000,
        excess[excess.len() - 1] / 1000
    );
    std::fs::write(out.join("base_rtt_ns.txt"), format!("{rtt}\n"))?;
    Ok(rtt)
}

/// A scale model's regime table: the paper's groups against the
/// testbed's, whose base RTT is measured on the first run's testbed with
/// full-MTU one-packet flows from the first sender to its receiver (the
/// least of 10; 64-byte probes beside them show the intrinsic part).
pub(super) fn scaled_regime(
    e: &Experiment,
    p: &scale::PaperSetting,
    path: &Path,
    out: &Path,
    flows: &[workload::Flow],
) -> Result<scale::Regime> {
    use scale::{Rate, Size, Span};
    let d = e.derived.as_ref().context("[scale] not derived")?;
    let first = flows.first().context("no flows")?;
    let pair = (first.src, first.dst);
    let senders: std::collections::BTreeSet<u32> = flows.iter().map(|f| f.src).collect();
    let n = senders.len() as u32;
    eprintln!(
        "rxecc run: measuring the testbed's base RTT, h{} -> h{}: 10 one-packet flows of {} B and 10 of 64 B, no CC ...",
        pair.0,
        pair.1,
        scale::TESTBED_MTU
    );
    let mtu = scale::TESTBED_MTU;
    let lines = probe_flows(
        e,
        path,
        out,
        "regime-rtt",
        &[(pair.0, pair.1, mtu), (pair.0, pair.1, 64)],
        20,
    )?;
    let least = |size: u64| {
        lines
            .iter()
            .filter(|l| l.size == size)
            .map(|l| l.fct_ns)
            .min()
            .unwrap_or(0)
    };
    let (full, small) = (least(mtu), least(64));
    let paper = p.paper_point(n);
    let lo = d.links.iter().map(|l| l.2).fold(d.rate_mbps, u64::min);
    let size = |x: Option<u64>| x.map(|b| Size::bytes(b as f64));
    let testbed = scale::Point {
        mtu: Size::bytes(scale::TESTBED_MTU as f64),
        bottleneck: Rate::mbps(lo as f64),
        sender: Rate::mbps(d.rate_mbps as f64),
        rtt: Span::ns(full as f64),
        t: d.t_us.map(|t| Span::us(t as f64)),
        buffer: size(d.buffer_bytes),
        xoff: size(d.xoff_bytes),
        xon: size(d.xon_bytes),
        kmin: size(d.red.map(|r| r.0)),
        kmax: size(d.red.map(|r| r.1)),
        tcd: size(d.tcd.map(|t| t.0)),
        flows: n,
    };
    let how = format!(
        "measured: {:.0} us with {} B packets, {:.0} us with 64 B; k_t x the paper's: {:.0} us",
        full as f64 / 1e3,
        scale::TESTBED_MTU,
        small as f64 / 1e3,
        p.scale().time(paper.rtt).as_us()
    );
    Ok(scale::Regime::new(p, &paper, &testbed, &how))
}

/// Each host link's offered load, both ways, from the flows: over a
/// Poisson workload's duration, or a flow file's span of start times. An
/// incast's bursts are meant to overload the link: none. A link offered
/// more than its rate is refused for a Poisson workload (its generator
/// cannot have meant it) and warned about for a flow file: its queue grows
/// for the whole run, and its FCTs measure the overload, not the CC.
pub(super) fn offered_load(
    e: &Experiment,
    w: &Workload,
    flows: &[workload::Flow],
) -> Result<Vec<workload::LinkLoad>> {
    let span = match w {
        Workload::Poisson { duration_s, .. } => *duration_s,
        Workload::File { .. } => {
            let (lo, hi) = flows.iter().fold((f64::MAX, f64::MIN), |(lo, hi), f| {
                (lo.min(f.start_s), hi.max(f.start_s))
            });
            hi - lo
        }
        Workload::Incast { .. } => return Ok(Vec::new()),
    };
    let built = &e.scenario(&e.runs[0].label)?.built;
    let rates: Vec<Option<u64>> = (0..built.topo.hosts.len())
        .map(|h| built.host_rate_mbps(h))
        .collect();
    let loads = workload::offered_load(flows, &rates, span);
    let over: Vec<String> = loads
        .iter()
        .flat_map(|l| {
            [("out", l.out), ("in", l.inn)]
                .into_iter()
                .filter(|(_, x)| *x > 1.0)
                .map(move |(dir, x)| format!("h{} {dir} {x:.2}", l.host))
        })
        .collect();
    if !over.is_empty() {
        let msg = format!(
            "host links offered more than their rate over {span:.1} s of the flow file: {}",
            over.join(", ")
        );
        ensure!(!matches!(w, Workload::Poisson { .. }), "{msg}");
        eprintln!("rxecc run: WARNING: {msg}: their queues grow for the whole run");
    }
    if let Some(line) = offered_line(&loads) {
        eprintln!("rxecc run: {line}");
    }
    Ok(loads)
}

/// `offered load (out/in): h0 0.49/0.51, ...`, or None with none known.
pub(super) fn offered_line(loads: &[workload::LinkLoad]) -> Option<String> {
    (!loads.is_empty()).then(|| {
        let each: Vec<String> = loads
            .iter()
            .map(|l| format!("h{} {:.2}/{:.2}", l.host, l.out, l.inn))
            .collect();
        format!(
            "offered load of each host link (out/in, of its rate): {}",
            each.join(", ")
        )
    })
}
