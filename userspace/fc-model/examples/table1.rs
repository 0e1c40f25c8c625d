//! The GFC paper's Table 1, at the model's scale: fat trees with random
//! link failures, one flow per host to a random other host; in how many
//! networks does PFC deadlock, and GFC? (docs/switch.md)
//!
//! cargo run --release -p fc-model --example table1 -- [networks] [k...]
//! (FC_MODEL_SLOTS sets the slots per run; FC_MODEL_SCHED=fifo or rr
//! runs one discipline only.)

use fc_model::{random_flows, run, Net, Params, Rng, Sched};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let networks: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let ks: Vec<usize> = args.iter().skip(1).filter_map(|s| s.parse().ok()).collect();
    let ks = if ks.is_empty() { vec![4, 8] } else { ks };
    let slots: usize = std::env::var("FC_MODEL_SLOTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let scheds: Vec<Sched> = match std::env::var("FC_MODEL_SCHED").as_deref() {
        Ok("fifo") => vec![Sched::Fifo],
        Ok("rr") => vec![Sched::RoundRobin],
        _ => vec![Sched::Fifo, Sched::RoundRobin],
    };
    println!(
        "{networks} networks per row, 5% of switch links failed, {slots} slots each ({} ms at 10 Gb/s)",
        slots * 8 / 10_000
    );
    println!(
        "{:<4} {:<12} {:>10} {:>10} {:>12}",
        "k", "scheduler", "PFC", "GFC", "unroutable"
    );
    for &k in &ks {
        for &sched in &scheds {
            let (mut pfc, mut gfc, mut unroutable) = (0, 0, 0);
            for seed in 0..networks {
                let mut rng = Rng::new(seed.wrapping_add(1_000_003 * k as u64));
                let net = Net::fat_tree(k).fail_links(50, &mut rng);
                let flows = random_flows(net.hosts, &mut rng);
                let o = run(&net, &flows, &Params::paper(false, sched, slots));
                pfc += u64::from(!o.cycle.is_empty());
                unroutable += o.unroutable;
                let o = run(&net, &flows, &Params::paper(true, sched, slots));
                gfc += u64::from(!o.cycle.is_empty());
            }
            println!(
                "{k:<4} {:<12} {pfc:>10} {gfc:>10} {unroutable:>12}",
                format!("{sched:?}")
            );
        }
    }
}
