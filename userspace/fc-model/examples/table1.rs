//! The GFC paper's Table 1, at the model's scale: fat trees with 5% of
//! their switch links failed, routed by shortest paths. Networks whose
//! routes hold no cyclic buffer dependency (CBD) cannot deadlock and are
//! filtered out first, as the paper does; each CBD-prone one then runs
//! `reps` random workloads (one flow per host, to a host in another rack)
//! under PFC and under buffer-based GFC, and counts as a deadlock case for
//! a flow control if any of its runs locks. (docs/switch.md)
//!
//! cargo run --release -p fc-model --example table1 -- [networks] [reps] [k...]
//! (FC_MODEL_SLOTS sets the slots per run; FC_MODEL_SCHED=fifo or rr
//! runs one discipline only; FC_MODEL_JSON=FILE also writes the rows as
//! JSON, labelled `k4` (`k4-rr` for round-robin), for the paper recipe
//! testbed/experiments/paper/gfc-table1.toml.)

use fc_model::{cbd, random_flows_across, run, Net, Params, Rng, Sched};

/// The paper's Table 1: deadlock cases of 10,000 networks, PFC and GFC.
fn paper(k: usize) -> Option<(u32, u32)> {
    match k {
        4 => Some((32, 0)),
        8 => Some((12, 0)),
        16 => Some((2, 0)),
        _ => None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (networks, reps) = (arg(0, 10_000), arg(1, 10));
    let ks: Vec<usize> = args.iter().skip(2).filter_map(|s| s.parse().ok()).collect();
    let ks = if ks.is_empty() { vec![4, 8] } else { ks };
    let slots: usize = std::env::var("FC_MODEL_SLOTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let scheds: Vec<Sched> = match std::env::var("FC_MODEL_SCHED").as_deref() {
        Ok("rr") => vec![Sched::RoundRobin],
        Ok("both") => vec![Sched::Fifo, Sched::RoundRobin],
        _ => vec![Sched::Fifo],
    };
    println!(
        "{networks} networks per k, 5% of switch links failed; {reps} random workloads per CBD-prone network, {slots} slots each ({} ms at 10 Gb/s)",
        slots * 8 / 10_000
    );
    println!(
        "{:<4} {:<11} {:>10} {:>10} {:>10} {:>16}",
        "k", "scheduler", "CBD-prone", "PFC", "GFC", "paper PFC/GFC"
    );
    let mut json = Vec::new();
    for &k in &ks {
        // The networks and their CBDs do not depend on the scheduler.
        let nets: Vec<(u64, Net)> = (0..networks)
            .filter_map(|seed| {
                let mut rng = Rng::new(seed.wrapping_add(1_000_003 * k as u64));
                let net = Net::fat_tree(k).fail_links(50, &mut rng);
                cbd(&net).map(|_| (seed, net))
            })
            .collect();
        for &sched in &scheds {
            let (mut pfc, mut gfc) = (0u32, 0u32);
            for (seed, net) in &nets {
                let mut rng = Rng::new(seed ^ 0x5eed);
                let (mut p_lock, mut g_lock) = (false, false);
                for _ in 0..reps {
                    let flows = random_flows_across(net.hosts, k / 2, &mut rng);
                    if !p_lock {
                        p_lock = !run(net, &flows, &Params::paper(false, sched, slots))
                            .cycle
                            .is_empty();
                    }
                    if !g_lock {
                        g_lock = !run(net, &flows, &Params::paper(true, sched, slots))
                            .cycle
                            .is_empty();
                    }
                }
                pfc += u32::from(p_lock);
                gfc += u32::from(g_lock);
            }
            println!(
                "{k:<4} {:<11} {:>10} {pfc:>10} {gfc:>10} {:>16}",
                format!("{sched:?}"),
                nets.len(),
                paper(k).map_or("-".into(), |(p, g)| format!("{p}/{g} of 10000"))
            );
            let label = match sched {
                Sched::Fifo => format!("k{k}"),
                Sched::RoundRobin => format!("k{k}-rr"),
            };
            json.push(format!(
                "{{\"label\": \"{label}\", \"networks\": {networks}, \"cbd_prone\": {}, \
                 \"pfc_deadlocks\": {pfc}, \"gfc_deadlocks\": {gfc}, \
                 \"pfc_share\": {}, \"gfc_share\": {}}}",
                nets.len(),
                f64::from(pfc) / networks as f64,
                f64::from(gfc) / networks as f64
            ));
        }
    }
    if let Ok(path) = std::env::var("FC_MODEL_JSON") {
        let text = format!("[\n  {}\n]\n", json.join(",\n  "));
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("table1: writing {path}: {e}");
            std::process::exit(1);
        }
    }
}
