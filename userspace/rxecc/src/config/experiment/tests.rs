use super::*;

const EXP: &str = r#"
        topology = "dumbbell"
        hosts = 4
        links = [{ a = "h0", b = "sw0", rate_mbps = 40 }]
        [switch]
        pfc = true
        [workload]
        kind = "poisson"
        cdf = "WebSearch_distribution.txt"
        load = 0.3
        duration_s = 2
        size_div = 20
        [[run]]
        label = "dcqcn"
        cc = "dcqcn"
        knobs = { rpg_time_reset = 20000 }
        switch = { mark = "red", red = { kmin_bytes = 5120, kmax_bytes = 204800, pmax_permille = 200 } }
        [[run]]
        label = "none"
        cc = "none"
    "#;

/// EXP with a `[report]` on p0 (and the recording it needs).
fn with_report() -> String {
    EXP.replace(
        "[switch]",
        "[report]\nbottleneck = \"p0\"\nperiod_us = 10000\n[switch]",
    )
    .replace("hosts = 4", "hosts = 4\nrecord_interval_ms = 20")
}

/// Every shipped experiment's runs: the topology a run records (its
/// settings written out) brings up the same testbed as the one the
/// file resolved.
#[test]
fn each_run_records_its_testbed() {
    let dir = std::env::temp_dir().join(format!("rxecc-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    for sub in ["testbed/experiments", "tests"] {
        for f in std::fs::read_dir(repo_dir(sub)).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let e = load(&f).unwrap_or_else(|err| panic!("{}: {err:#}", f.display()));
            for sc in &e.scenarios {
                let t = dir.join("topology.toml");
                std::fs::write(&t, &sc.text).unwrap();
                let b = topology::load(&t).unwrap();
                let json = |b: &topology::Built| {
                    serde_json::to_string(&(&b.plan.ports, &b.ports)).unwrap()
                };
                assert_eq!(json(&b), json(&sc.built), "{} {}", f.display(), sc.label);
                n += 1;
            }
        }
    }
    assert!(n > 40, "only {n} runs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn experiment_merges_into_the_topology() {
    let dir = std::env::temp_dir().join(format!("rxecc-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    std::fs::write(&p, EXP).unwrap();
    let e = load(&p).unwrap();
    assert_eq!(e.runs.len(), 2);
    // Each run's testbed, resolved as the file loaded, by label (the
    // order `--runs` may change).
    assert_eq!(e.scenarios.len(), 2);
    let b = &e.scenario("dcqcn").unwrap().built;
    let sw = &b.topo.switches[0];
    assert!(sw.red.is_some() && sw.pfc);
    assert_eq!(b.topo.links[0].rate_mbps, Some(40));
    assert_eq!(topology::path_rate_mbps(&b.topo, 0, 1), Some(40));
    // hosts = 4: dumbbell's other five hosts and their links are gone.
    assert_eq!(b.topo.hosts.len(), 4);
    assert_eq!(b.topo.links.len(), 4);
    assert!(b
        .topo
        .links
        .iter()
        .all(|l| *l.a.get_ref() != "h4" && *l.b.get_ref() != "h4"));
    let none = e.scenario("none").unwrap();
    assert!(none.built.topo.switches[0].red.is_none());
    assert!(none.file.ends_with("dumbbell.toml"));
    // What the run records as its topology.toml is the same testbed.
    let t = dir.join("t.toml");
    std::fs::write(&t, &none.text).unwrap();
    assert_eq!(
        topology::load(&t).unwrap().plan.ports,
        none.built.plan.ports
    );
    assert!(e.scenario("acc").is_err());

    for (bad, why) in [
        (
            EXP.replace("label = \"none\"", "label = \"dcqcn\""),
            "twice",
        ),
        (
            EXP.replace("kind = \"poisson\"", "kind = \"bursty\""),
            "unknown variant",
        ),
        (EXP.replace("rpg_time_reset", "cc"), "knob 'cc'"),
        (
            EXP.replace("label = \"none\"", "label = \"dcqcn-2\""),
            "run label 'dcqcn-2' reads as a repetition of run 'dcqcn'",
        ),
        (
            EXP.replace("hosts = 4", "hosts = 4\nbogus = 1"),
            "unknown field",
        ),
        // Knobs and algorithms against rxe_cc's tables, with the line.
        (
            EXP.replace("rpg_time_reset", "rpg_time_rest"),
            "e.toml:16: run dcqcn: 'rpg_time_rest' is not a knob of rxe_cc",
        ),
        (
            EXP.replace("20000 }", "0 }"),
            "rpg_time_reset = 0: an integer in [1, 10000000]",
        ),
        (
            EXP.replace("cc = \"none\"", "cc = \"nil\""),
            "run none: cc 'nil' is not one of rxe_cc's: none, fixed",
        ),
        // The settings laid over the topology are typed where they
        // are written: a misspelt one, with the experiment's line.
        (
            EXP.replace("pfc = true", "pfc_on = true"),
            "e.toml:6: unknown field `pfc_on`",
        ),
        (
            EXP.replace("rate_mbps = 40 }", "rate = 40 }"),
            "e.toml:4: unknown field `rate`",
        ),
        (
            EXP.replace("b = \"sw0\"", "b = \"sw1\""),
            "e.toml:4: links: h0 - sw1: no such link in",
        ),
        // Events: knobs, ports and times checked as the file loads.
        (
            EXP.replace(
                "hosts = 4",
                "hosts = 4\nevents = [{ t_s = 1, knobs = { nope = 1 } }]",
            ),
            "e.toml:4: run dcqcn: events: 'nope' is not a knob of rxe_cc",
        ),
        (
            EXP.replace(
                "hosts = 4",
                "hosts = 4\nevents = [{ t_s = 1, clear_inject = [\"p9\"] }]",
            ),
            "run dcqcn: events: no port 'p9'",
        ),
        (
            EXP.replace(
                "hosts = 4",
                "hosts = 4\nevents = [{ t_s = -1, snapshot = \"a\" }]",
            ),
            "t_s = -1: seconds from time 0",
        ),
        (
            EXP.replace(
                "hosts = 4",
                "hosts = 4\nop = \"send\"\nmessage_bytes = 4096",
            ),
            "message_bytes = 4096: above 0, with op write or read",
        ),
        // A setting the topology's check refuses names the run.
        (
            EXP.replace("pfc = true", "flow_control = \"gfc-buffer\""),
            "run dcqcn: ",
        ),
    ] {
        std::fs::write(&p, bad).unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn get_and_rate_for_scripts() {
    let dir = std::env::temp_dir().join(format!("rxecc-get-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    std::fs::write(&p, with_report()).unwrap();
    // From the topology: p0 is h0's link, at 40 Mb/s here.
    assert_eq!(get(&p, "report.capacity_mbps").unwrap(), "40");
    assert_eq!(get(&p, "report.bottleneck").unwrap(), "p0");
    assert_eq!(
        get(&p, "workload.cdf").unwrap(),
        "WebSearch_distribution.txt"
    );
    assert_eq!(get(&p, "switch.pfc").unwrap(), "true");
    for (key, why) in [
        (
            "report.capacity",
            "no 'capacity' in 'report.capacity' (there: bottleneck, capacity_mbps, period_us)",
        ),
        ("report", "'report' is a table; name one of its keys"),
        ("run", "'run' holds tables"),
        ("hosts.x", "'x' is below a value"),
    ] {
        let e = format!("{:#}", get(&p, key).unwrap_err());
        assert!(e.contains(why), "{key}: {e}");
    }
    // dumbbell's links run at 100 Mb/s, but for h0's, at 40 here.
    assert_eq!(run_rate_mbps(&p, "none").unwrap(), 100);
    std::fs::write(&p, "senders = [1, 2]\n").unwrap();
    assert!(
        get(&p, "senders").is_err(),
        "an experiment file that does not load"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// ACC's testbed at k_t 256 on dumbbell: every quantity from `[scale]`.
const SCALED: &str = r#"
topology = "dumbbell"
hosts = 5
record_interval_ms = 20
[scale]
source = "ACC testbed"
k_t = 256
mtu_bytes = 4000
link_gbps = 10
base_rtt_us = 20
t_us = 50
xoff_bytes = 256000
xon_bytes = 128000
tcd = { thresh_bytes = 8000, max_ton_us = 24 }
red = { kmin_bytes = 5000, kmax_bytes = 200000, pmax = 0.2 }
flow_bytes = 10000000
knobs = { rpg_time_reset = 55 }
[workload]
kind = "incast"
senders = [1, 2, 3, 4]
receiver = 0
period_s = 1
rounds = 1
[report]
bottleneck = "p0"
[[run]]
label = "dcqcn"
cc = "dcqcn"
paper_knobs = { dce_tcp_rtt = 50 }
switch = { mark = "red" }
[[run]]
label = "acc"
cc = "acc"
switch = { mark = "tcd" }
"#;

#[test]
fn a_scale_models_cdf_sizes_are_the_papers_bytes() {
    let dir = std::env::temp_dir().join(format!("rxecc-scale-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    let poisson = SCALED.replace("flow_bytes = 10000000\n", "").replace(
        "kind = \"incast\"\nsenders = [1, 2, 3, 4]\nreceiver = 0\nperiod_s = 1\nrounds = 1",
        "kind = \"poisson\"\ncdf = \"WebSearch_distribution.txt\"\nload = 0.5\nduration_s = 1",
    );
    std::fs::write(&p, &poisson).unwrap();
    let e = load(&p).unwrap();
    match &e.workload {
        Some(Workload::Poisson { size_mul, .. }) => {
            assert_eq!(*size_mul, Some(4096.0 / 4000.0))
        }
        w => panic!("{w:?}"),
    }
    for (extra, why) in [
        (
            "size_div = 20",
            "e.toml:22: [workload] size_div is written in the testbed's units",
        ),
        (
            "size_mul = 2.0",
            "e.toml:22: [workload] size_mul is written in the testbed's units",
        ),
    ] {
        let text = poisson.replace("duration_s = 1", &format!("duration_s = 1\n{extra}"));
        std::fs::write(&p, &text).unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(err.contains(why), "{why}\n{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_scale_model_derives_every_quantity_once() {
    let dir = std::env::temp_dir().join(format!("rxecc-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    std::fs::write(&p, SCALED).unwrap();
    let e = load(&p).unwrap();
    let (acc, dcqcn) = (e.scenario("acc").unwrap(), e.scenario("dcqcn").unwrap());
    let text = &acc.text;
    assert!(text.contains("rate_mbps = 40"), "{text}");
    assert!(text.contains("delay_us = 870"), "{text}");
    assert!(text.contains("xoff_bytes = 262144"), "{text}");
    assert!(text.contains("thresh_bytes = 8192"), "{text}");
    assert!(dcqcn.text.contains("kmax_bytes = 204800"), "{}", dcqcn.text);
    for r in &e.runs {
        assert_eq!(r.knobs["acc_t_us"].as_integer(), Some(12800), "{}", r.label);
        assert_eq!(r.knobs["rpg_time_reset"].as_integer(), Some(14080));
        assert_eq!(r.knobs["line_rate_mbps"].as_integer(), Some(40));
    }
    assert_eq!(e.runs[0].knobs["dce_tcp_rtt"].as_integer(), Some(12800));
    assert_eq!(e.report.as_ref().unwrap().period_us, 12800);
    // Scripts read the derived T as they read the derived rate.
    assert_eq!(get(&p, "report.period_us").unwrap(), "12800");
    assert!(matches!(
        e.workload,
        Some(Workload::Incast { size: 10240000, .. })
    ));
    // Written both ways: refused, both places named.
    for (from, to, why) in [
            ("hosts = 5", "hosts = 5\nrate_mbps = 40", "e.toml:4: rate_mbps is written in the testbed's units, and [scale] (line 6)"),
            ("bottleneck = \"p0\"", "bottleneck = \"p0\"\nperiod_us = 12800", "e.toml:26: [report] period_us is written in the testbed's units, and [scale] (line 5)"),
            ("cc = \"acc\"", "cc = \"acc\"\nknobs = { acc_t_us = 12800 }", "e.toml:34: run acc: knobs.acc_t_us is written"),
            ("switch = { mark = \"tcd\" }", "switch = { mark = \"tcd\", tcd = { thresh_bytes = 8192, max_ton_us = 6144 } }", "run acc: switch tcd"),
            ("rounds = 1", "rounds = 1\nsize = 10240000", "[workload] size"),
            ("paper_knobs = { dce_tcp_rtt = 50 }", "paper_knobs = { rpg_time_reset = 50 }", "paper_knobs.rpg_time_reset, and [scale] knobs.rpg_time_reset"),
            ("base_rtt_us = 20", "base_rtt_us = 20\ndelay_us = 3", "delay_us (per link) or base_rtt_us"),
            // A knob in range in the paper's units but not once scaled:
            // the [scale] line, not a line of the run that lacks it.
            ("rpg_time_reset = 55 }", "rpg_time_reset = 50000 }", "e.toml:5: [scale] knobs, scaled to the testbed, for run dcqcn: rpg_time_reset = 12800000"),
        ] {
            let text = SCALED.replace(from, to);
            std::fs::write(&p, &text).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(why), "{why}\n{err}");
        }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn link_rates_are_written_once() {
    let dir = std::env::temp_dir().join(format!("rxecc-rates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    let with_report = with_report();
    std::fs::write(&p, &with_report).unwrap();
    let e = load(&p).unwrap();
    // The senders (every host of a Poisson workload) run at 100 Mb/s
    // but h0, at 40: the fastest is the algorithms' line rate.
    for r in &e.runs {
        assert_eq!(
            r.knobs["line_rate_mbps"].as_integer(),
            Some(100),
            "{}",
            r.label
        );
    }
    assert!(matches!(
        e.workload,
        Some(Workload::Poisson {
            rate_mbps: Some(100),
            ..
        })
    ));
    assert_eq!(e.report.as_ref().unwrap().capacity_mbps, 40);
    // Hosts are NICs with an arbiter unless the experiment says otherwise.
    assert_eq!(
        run_knobs(&p, "none").unwrap(),
        ["cc=none", "line_rate_mbps=100", "nic_queue_pkts=2"]
    );
    std::fs::write(
        &p,
        with_report.replace("rpg_time_reset", "nic_queue_pkts = 0, rpg_time_reset"),
    )
    .unwrap();
    let e = load(&p).unwrap();
    let arbiter: Vec<_> = e
        .runs
        .iter()
        .map(|r| r.knobs["nic_queue_pkts"].as_integer())
        .collect();
    assert_eq!(arbiter, [Some(0), Some(2)], "dcqcn's own 0 is kept");
    // A value given that agrees is taken; one that does not names both
    // places.
    for (text, ok) in [
        (
            with_report.replace("rpg_time_reset", "line_rate_mbps = 40, rpg_time_reset"),
            true,
        ),
        (
            with_report.replace("period_us", "capacity_mbps = 40\nperiod_us"),
            true,
        ),
        (
            with_report.replace("size_div", "rate_mbps = 100\nsize_div"),
            true,
        ),
    ] {
        std::fs::write(&p, &text).unwrap();
        assert_eq!(load(&p).is_ok(), ok, "{text}");
    }
    for (text, why) in [
            (
                with_report.replace("rpg_time_reset", "line_rate_mbps = 50, rpg_time_reset"),
                "e.toml:20: run dcqcn: knobs.line_rate_mbps = 50, but its senders' links run at h0 40, h1 100, h2 100, h3 100 Mb/s",
            ),
            (
                with_report.replace("period_us", "capacity_mbps = 100\nperiod_us"),
                "[report] capacity_mbps = 100, but its bottleneck p0 runs at 40 Mb/s",
            ),
            (
                with_report.replace("size_div", "rate_mbps = 40\nsize_div"),
                "workload.rate_mbps = 40, but the senders' links run at 100 Mb/s",
            ),
            (
                with_report.replace("\"p0\"", "\"p9\""),
                "[report] bottleneck 'p9' is not a port of",
            ),
        ] {
            std::fs::write(&p, &text).unwrap();
            let e = format!("{:#}", load(&p).unwrap_err());
            assert!(e.contains(why), "{e}");
            assert!(e.contains("dumbbell.toml") || why.contains("workload"), "names the topology: {e}");
        }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_rate_and_knobs_for_every_run() {
    let dir = std::env::temp_dir().join(format!("rxecc-every-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    // Every link at 60 but h0's (the override on top), and one knob
    // for both runs, which dcqcn's own replaces.
    let every = EXP.replace(
        "hosts = 4\n",
        "hosts = 4\nrate_mbps = 60\nknobs = { rpg_time_reset = 7, dce_tcp_rtt = 9 }\n",
    );
    std::fs::write(&p, &every).unwrap();
    let e = load(&p).unwrap();
    let b = &e.scenario("none").unwrap().built;
    let rates: Vec<_> = b
        .topo
        .links
        .iter()
        .map(|l| l.rate_mbps.unwrap_or(b.topo.defaults.rate_mbps))
        .collect();
    assert_eq!(rates, [40, 60, 60, 60]);
    let knob = |run: &str, k: &str| {
        let r = e.runs.iter().find(|r| r.label == run).unwrap();
        r.knobs.get(k).and_then(toml::Value::as_integer)
    };
    assert_eq!(knob("dcqcn", "rpg_time_reset"), Some(20000));
    assert_eq!(knob("none", "rpg_time_reset"), Some(7));
    assert_eq!(
        (knob("dcqcn", "dce_tcp_rtt"), knob("none", "dce_tcp_rtt")),
        (Some(9), Some(9))
    );
    assert_eq!(
        knob("none", "line_rate_mbps"),
        Some(60),
        "derived from the links"
    );
    for (bad, why) in [
        (
            every.replace("dce_tcp_rtt = 9", "dce_tcp_rt = 9"),
            "e.toml:5: knobs: 'dce_tcp_rt' is not a knob of rxe_cc",
        ),
        (
            every.replace("rate_mbps = 60", "rate_mbps = 0"),
            "rate_mbps = 0: a link needs a rate",
        ),
        (
            every.replace("hosts = 4", "hosts = 4\nack_timeout = 32"),
            "ack_timeout = 32: an exponent from 1 to 31",
        ),
        (
            every.replace("hosts = 4", "hosts = 4\nsettle_s = -1.0"),
            "settle_s = -1: 0 to 600 seconds",
        ),
    ] {
        std::fs::write(&p, bad).unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn other_rxe_builds_and_metrics_across_runs() {
    let dir = std::env::temp_dir().join(format!("rxecc-rxe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    let stock = EXP.replace(
            "label = \"none\"\n        cc = \"none\"",
            "label = \"stock\"\n        cc = \"none\"\n        rxe = \"stock\"",
        ) + "\n[metrics]\nbaseline = \"stock\"\ncounters = { acks_per_packet = [\"acks\", \"tx_packets\"] }\n";
    std::fs::write(&p, &stock).unwrap();
    let e = load(&p).unwrap();
    assert_eq!(e.runs[1].rxe, crate::modules::Rxe::Stock);
    assert_eq!(e.runs[0].rxe, crate::modules::Rxe::Patched);
    // No rxe_cc on the stock build: no line rate to give it.
    assert!(e.runs[1].knobs.is_empty());
    assert_eq!(e.metrics.baseline.as_deref(), Some("stock"));
    assert!(run_knobs(&p, "stock")
        .unwrap_err()
        .to_string()
        .contains("run stock is on the stock rdma_rxe: no rxe_cc, no knobs"));
    // The patched build's in-flight limits: the experiment's, under
    // a run's own; not on the stock build.
    let limits = stock.replace(
        "rxe = \"stock\"",
        "rxe = \"patched\"\nrxe_params = { max_unacked_psns = 512 }",
    );
    let limits = limits.replacen(
        "hosts = 4",
        "hosts = 4\nrxe_params = { max_inflight_skbs = 256 }",
        1,
    );
    std::fs::write(&p, &limits).unwrap();
    let e = load(&p).unwrap();
    let want: BTreeMap<String, u64> = [
        ("max_inflight_skbs".to_string(), 256),
        ("max_unacked_psns".to_string(), 512),
    ]
    .into();
    assert_eq!(e.runs[1].rxe_params, want);
    assert_eq!(e.runs[0].rxe_params.len(), 1);
    for (text, why) in [
        (
            stock.replace(
                "rxe = \"stock\"",
                "rxe = \"stock\"\nknobs = { acc_t_us = 100 }",
            ),
            "run stock: the stock rdma_rxe has no rxe_cc",
        ),
        (
            stock.replace(
                "rxe = \"stock\"",
                "rxe = \"stock\"\nrxe_params = { max_unacked_psns = 512 }",
            ),
            "run stock: the stock rdma_rxe has no rxe_params",
        ),
        (
            limits.replace("512", "1024"),
            "rxe_params: max_unacked_psns = 1024: 1 to 1023",
        ),
        (
            limits.replace("max_unacked_psns", "max_psns"),
            "'max_psns' is not a parameter of the patched rdma_rxe",
        ),
        (
            stock.replace("baseline = \"stock\"", "baseline = \"stok\""),
            "has no run 'stok' (it has dcqcn, stock)",
        ),
        (
            stock.replace(
                "\"acks\", \"tx_packets\"",
                "\"acks\", \"tx_packets\", \"naks\"",
            ),
            "counters.acks_per_packet: one counter of rxe_cc's totals, or two",
        ),
        (
            stock.replace("rxe = \"stock\"", "rxe = \"stcok\""),
            "unknown variant `stcok`",
        ),
    ] {
        std::fs::write(&p, &text).unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains(why), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn perftest_runs_take_whole_messages() {
    let dir = std::env::temp_dir().join(format!("rxecc-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.toml");
    let flows = |size: u64| format!("2\n1 0 3 100 {size} 0\n1 0 3 100 {size} 0\n");
    let exp = EXP.replace(
            "label = \"none\"\n        cc = \"none\"",
            "label = \"none\"\n        cc = \"none\"\n        traffic = \"perftest\"\n        flows = \"f.txt\"",
        );
    std::fs::write(&p, &exp).unwrap();
    std::fs::write(dir.join("f.txt"), flows(2 * 65536)).unwrap();
    let e = load(&p).unwrap();
    assert_eq!(e.traffic_of(&e.runs[1]), Traffic::Perftest);
    assert_eq!(e.traffic_of(&e.runs[0]), Traffic::Flowgen);
    std::fs::write(dir.join("f.txt"), flows(100_000)).unwrap();
    let err = format!("{:#}", load(&p).unwrap_err());
    assert!(
        err.contains("run none: perftest: flow 0 (1 -> 0) of 100000 B is not a whole number"),
        "{err}"
    );
    std::fs::write(&p, exp.replace("\"perftest\"", "\"iperf\"")).unwrap();
    let err = format!("{:#}", load(&p).unwrap_err());
    assert!(err.contains("unknown variant `iperf`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
