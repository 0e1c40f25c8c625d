//! Each link rate written once, in the topology: the runs' line_rate_mbps
//! knobs, the report's capacity and a Poisson workload's rate from it.

use super::*;
use crate::config::lines::Lines;

/// The hosts that send: the flow file's sources, the incast's senders,
/// every host of a Poisson workload (or of the topology, with none).
pub(super) fn senders_of(
    workload: &Option<Workload>,
    hosts: Option<u32>,
    b: &topology::Built,
    flows: Option<&[workload::Flow]>,
) -> Vec<usize> {
    let all = || (0..hosts.map_or(b.topo.hosts.len(), |n| n as usize)).collect();
    let mut v: Vec<usize> = match (workload, flows) {
        // A flow file's sources (`workload` None: a run's own file).
        (Some(Workload::File { .. }) | None, Some(f)) => f.iter().map(|f| f.src as usize).collect(),
        (Some(Workload::Incast { senders, .. }), _) => {
            senders.iter().map(|h| *h as usize).collect()
        }
        _ => all(),
    };
    v.sort_unstable();
    v.dedup();
    v
}

/// An experiment's hosts are NICs: their QPs wait in the NIC's arbiter,
/// with this many packets queued on its line, instead of handing up to 64
/// packets each to the device's queue (rxe_cc's `nic_queue_pkts`, off in
/// the module itself, where no topology gives the line). Two: one on the
/// wire and one ready, as an RNIC's scheduler keeps it busy.
pub(super) const NIC_QUEUE_PKTS: i64 = 2;

/// A link rate is written once, in the topology (or the experiment's
/// `links`): each run's `line_rate_mbps` knob is its senders' link rate
/// (the fastest, where they differ: one value serves every QP),
/// `[report] capacity_mbps` the bottleneck port's and a Poisson
/// workload's `rate_mbps` the senders'. A value the file gives that
/// disagrees is an error naming both places.
pub(super) fn resolve_rates(
    e: &mut Experiment,
    path: &Path,
    text: &str,
    scenarios: &[Scenario],
    flows: Option<&[workload::Flow]>,
) -> Result<()> {
    let lines = Lines::new(text);
    let mut senders_rate = None;
    for (r, sc) in e.runs.iter_mut().zip(scenarios) {
        let (file, b) = (&sc.file, &sc.built);
        // A run's own flow file names its senders, as a file workload's.
        let hosts = match &sc.flows {
            Some((_, own)) => senders_of(&None, e.hosts, b, Some(own)),
            None => senders_of(&e.workload, e.hosts, b, flows),
        };
        let mut rates: Vec<(usize, u64)> = hosts
            .iter()
            .filter_map(|h| Some((*h, b.host_rate_mbps(*h)?)))
            .collect();
        rates.sort_by_key(|(_, r)| *r);
        let Some(hi) = rates.last() else {
            continue;
        };
        let given = r
            .knobs
            .get("line_rate_mbps")
            .and_then(toml::Value::as_integer);
        let list = || {
            rates
                .iter()
                .map(|(h, v)| format!("h{h} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match given {
            // The stock rdma_rxe has no rxe_cc to tell.
            None if !r.rxe.has_cc() => {}
            None => {
                r.knobs
                    .insert("line_rate_mbps".into(), toml::Value::Integer(hi.1 as i64));
            }
            Some(k) if !rates.iter().any(|(_, v)| *v as i64 == k) => bail!(
                "{}:{}: run {}: knobs.line_rate_mbps = {k}, but its senders' links run at {} Mb/s ({}); leave the knob out, the topology gives it",
                path.display(),
                lines.run(&r.label, &["knobs", "line_rate_mbps"]),
                r.label,
                list(),
                file.display()
            ),
            Some(_) => {}
        }
        if r.rxe.has_cc() {
            r.knobs
                .entry("nic_queue_pkts".into())
                .or_insert(toml::Value::Integer(NIC_QUEUE_PKTS));
        }
        senders_rate.get_or_insert(hi.1);
    }
    if let Some(Workload::Poisson { rate_mbps, .. }) = &mut e.workload {
        match (*rate_mbps, senders_rate) {
            (Some(x), Some(s)) if x != s => bail!(
                "{}:{}: workload.rate_mbps = {x}, but the senders' links run at {s} Mb/s; leave it out, the topology gives it",
                path.display(),
                lines.of(&["workload", "rate_mbps"]),
            ),
            (None, s) => *rate_mbps = s,
            _ => {}
        }
    }
    if let (Some(rep), Some(Scenario { file, built: b, .. })) = (&mut e.report, scenarios.first()) {
        let port = b.port(&rep.bottleneck).with_context(|| {
            format!(
                "{}: [report] bottleneck '{}' is not a port of {} (its ports: {})",
                path.display(),
                rep.bottleneck,
                file.display(),
                b.plan
                    .ports
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        match rep.capacity_mbps {
            0 => rep.capacity_mbps = port.rate_mbps,
            c if c != port.rate_mbps => bail!(
                "{}:{}: [report] capacity_mbps = {c}, but its bottleneck {} runs at {} Mb/s ({}); leave it out, the topology gives it",
                path.display(),
                lines.of(&["report", "capacity_mbps"]),
                rep.bottleneck,
                port.rate_mbps,
                file.display()
            ),
            _ => {}
        }
    }
    Ok(())
}
