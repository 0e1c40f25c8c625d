//! Prints a compact trace of a scenario: `cargo run --example explore -- acc 4`.
use cc_model::{jain, run, Algo, Config};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let algo = match args.get(1).map(String::as_str) {
        Some("dcqcn") => Algo::Dcqcn,
        Some("hpcc") => Algo::Hpcc,
        Some("none") => Algo::None,
        _ => Algo::Acc,
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    let mut cfg = Config::new(algo, n);
    cfg.duration_ns = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let t = run(&cfg);
    for (i, ts) in t.t_ns.iter().enumerate() {
        let r: Vec<String> = t.rate_bps[i]
            .iter()
            .map(|r| format!("{:6.2}", *r as f64 / 1e9))
            .collect();
        let agg: u64 = t.rate_bps[i].iter().sum();
        println!(
            "{:7.0}us q={:7} port={:5.2}G agg={:5.2}G jain={:.3} [{}]",
            *ts as f64 / 1e3,
            t.queue_bytes[i],
            t.port_bytes[i] as f64 * 8.0 / cfg.sample_ns as f64,
            agg as f64 / 1e9,
            jain(&t.rate_bps[i]),
            r.join(" ")
        );
    }
    windows(&t);
    println!("max queue {} B, halts {}", t.max_queue_bytes, t.halts.len());
    for h in t.halts.iter().take(12) {
        println!(
            "  halt flow {} at {}us planned {}us actual {:?}us queue {} ideal {}us",
            h.flow,
            h.at_ns / 1000,
            h.planned_ns / 1000,
            h.actual_ns.map(|a| a / 1000),
            h.queue_bytes,
            h.queue_bytes * 8 / 100_000
        );
    }
}

#[allow(dead_code)]
fn windows(t: &cc_model::Trace) {
    let j = t.windowed_jain(50);
    for (i, x) in j.iter().enumerate().step_by(50) {
        println!("window from {}us: jain {:.4}", t.t_ns[i] / 1000, x);
    }
    for target in [0.95, 0.98, 0.99] {
        println!(
            "converged (1 ms windows, jain >= {target}) at sample {:?}",
            t.converged_at(50, target)
        );
    }
}
