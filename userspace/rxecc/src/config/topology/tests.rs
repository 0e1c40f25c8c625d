use super::*;

fn p(src: &str) -> Result<Built> {
    parse(Path::new("t.toml"), src)
}

/// The error a file that must be refused gives.
fn err(src: &str) -> String {
    p(src).expect_err("the file was accepted").to_string()
}

const SMALL: &str = r#"
[[switch]]
name = "s0"
pfc = true
xoff_bytes = 100
xon_bytes = 50
[[host]]
name = "h0"
[[host]]
name = "h1"
[[link]]
a = "h0"
b = "s0"
[[link]]
a = "h1"
b = "s0"
rate_mbps = 50
"#;

const PLAIN: &str = r#"
[[switch]]
name = "br0"
emulate = false
[[host]]
name = "h0"
[[host]]
name = "h1"
[[link]]
a = "h0"
b = "br0"
[[link]]
a = "h1"
b = "br0"
"#;

#[test]
fn plain_bridge() {
    let b = p(PLAIN).unwrap();
    assert!(b.ports.is_empty(), "a plain bridge has no emulated port");
    assert!(b.plan.ports.is_empty());
    assert_eq!(b.plan.veths, ["p0", "p1"]);
    assert_eq!(b.host_port(1), Some("p1"));
    // No rate: the guest's CPU sets it.
    assert_eq!(b.host_rate_mbps(1), None);
    assert_eq!(path_rate_mbps(&b.topo, 1, 0), Some(u64::MAX));
    let e = err(&PLAIN.replace(
        "emulate = false",
        "emulate = false\npfc = true\nxoff_bytes = 9",
    ));
    assert!(
        e.contains("switch.flow_control: needs emulated ports"),
        "{e}"
    );
    let e = err(&PLAIN.replace("emulate = false", "emulate = false\nmark = \"ce\""));
    assert!(e.contains("switch.mark"), "{e}");
    let e = err(&format!("[defaults]\nack_priority = true\n{PLAIN}"));
    assert!(e.contains("ack_priority needs emulated ports"), "{e}");
    let e = p(&format!("{PLAIN}rate_mbps = 10\n"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("takes no rate"), "{e}");
    let trunk = PLAIN.replace(
        "[[host]]\nname = \"h0\"",
        "[[switch]]\nname = \"s1\"\n[[host]]\nname = \"h0\"",
    ) + "[[link]]\na = \"s1\"\nb = \"br0\"\n";
    let e = err(&trunk);
    assert!(e.contains("links hosts only"), "{e}");
}

#[test]
fn small_plan() {
    let b = p(SMALL).unwrap();
    assert!(!b.topo.defaults.ack_priority, "one FIFO unless asked");
    let prio = p(&format!("[defaults]\nack_priority = true\n{SMALL}")).unwrap();
    assert!(prio.topo.defaults.ack_priority);
    assert_eq!(b.plan.hosts, ["h0", "h1"]);
    let devs: Vec<&str> = b.ports.iter().map(|p| p.dev.as_str()).collect();
    assert_eq!(devs, ["v0", "v1", "p0", "p1"]);
    assert_eq!(
        b.ports.iter().find(|p| p.dev == "p1").unwrap().rate_mbps,
        50
    );
    assert_eq!(
        b.ports.iter().find(|p| p.dev == "p0").unwrap().xoff_bytes,
        100
    );
    assert_eq!(
        b.fdb,
        vec![(0, 0, "p0".to_string()), (0, 1, "p1".to_string())]
    );
    let sp = b.sim_ports();
    let find = |d: &str| sp.iter().find(|p| p.dev == d).cloned().unwrap();
    assert_eq!(
        (find("v1").node, find("v1").node_type, find("v1").ifindex),
        (1, 0, 1)
    );
    assert_eq!(
        (find("p0").node, find("p0").node_type, find("p0").ifindex),
        (2, 1, 1)
    );
    assert_eq!((find("p1").node, find("p1").ifindex), (2, 2));
}

#[test]
fn errors_name_file_line_and_field() {
    let e = err(&SMALL.replace("b = \"s0\"\nrate_mbps", "b = \"s9\"\nrate_mbps"));
    assert!(e.starts_with("t.toml:16: link.b:"), "{e}");
    assert!(e.contains("'s9'"), "{e}");
    let e = err(&SMALL.replace("xon_bytes = 50", "xon_bytes = 500"));
    assert!(e.starts_with("t.toml:3: switch.xoff_bytes"), "{e}");
    let e = err(&SMALL.replace("rate_mbps = 50", "rate_mbps = \"fast\""));
    assert!(e.starts_with("t.toml:17:"), "{e}");
    let e = err(&SMALL.replace("rate_mbps = 50", "speed = 50"));
    assert!(e.contains("unknown field `speed`"), "{e}");
    // Hosts and switches share one namespace of names.
    let e = err(&SMALL.replace("name = \"h1\"", "name = \"s0\""));
    assert!(
        e.starts_with("t.toml:3: switch.name: 's0' is declared twice"),
        "{e}"
    );
    let e = err(&SMALL.replace("name = \"h1\"", "name = \"h.1\""));
    assert!(e.starts_with("t.toml:10: host.name: use 1-15"), "{e}");
}

#[test]
fn inject_rules_name_a_port_of_the_topology() {
    let rule = "\n[[inject]]\nport = \"p1\"\naction = \"drop\"\nnth = [3, 7]\n";
    let b = p(&format!("{SMALL}{rule}")).unwrap();
    assert_eq!(b.topo.injects.len(), 1);
    assert_eq!(b.topo.injects[0].nth, [3, 7]);
    let e = p(&format!("{SMALL}{}", rule.replace("p1", "p7")))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("'p7' is not a port") && e.contains("p0 p1 v0 v1"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        p(&format!("{SMALL}{}", rule.replace("[3, 7]", "[0]")))
            .err()
            .unwrap()
    );
    assert!(e.contains("1..=64"), "{e}");
    let e = p(&format!("{SMALL}{}", rule.replace("action", "acton")))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("acton"), "{e}");
}

#[test]
fn shipped_topologies_parse() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testbed/topologies"
    ));
    for name in ["dumbbell", "chain", "triangle"] {
        let b = load(&dir.join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(
            b.ports.iter().all(|p| p.dev.len() <= 9),
            "{name}: a device name is too long"
        );
    }
}

/// Three guests: g (sw0 and h0), sw1 (sw1 and h2), and h1 on its own.
pub(crate) const TWO_GUESTS: &str = r#"
            [[switch]]
            name = "sw0"
            guest = "g"
            [[switch]]
            name = "sw1"
            [[host]]
            name = "h0"
            guest = "g"
            [[host]]
            name = "h1"
            [[host]]
            name = "h2"
            guest = "sw1"
            [[link]]
            a = "h0"
            b = "sw0"
            [[link]]
            a = "h1"
            b = "sw0"
            [[link]]
            a = "h2"
            b = "sw1"
            [[link]]
            a = "sw0"
            b = "sw1"
        "#;

#[test]
fn guests_share_by_name_and_link_by_udp() {
    let src = TWO_GUESTS;
    let b = p(src).unwrap();
    assert_eq!(b.guests(), ["g", "h1", "sw1"]);
    let nics = b.vm_nics(47000).unwrap();
    let show: Vec<(&str, &str, &str, u16, u16)> = nics
        .iter()
        .map(|n| {
            (
                n.guest.as_str(),
                n.dev.as_str(),
                n.mac.as_str(),
                n.local_port,
                n.remote_port,
            )
        })
        .collect();
    // h0 shares g with sw0, h2 shares sw1's guest: veths, no NICs.
    assert_eq!(
        show,
        [
            ("h1", "v1", "02:77:00:00:00:02", 47000, 47001),
            ("g", "p1", "02:78:00:00:00:02", 47001, 47000),
            ("g", "x0_1", "02:79:00:00:00:01", 47002, 47003),
            ("sw1", "x1_0", "02:79:00:00:01:00", 47003, 47002),
        ]
    );
    let mut g = p(src).unwrap();
    g.scope_to("g").unwrap();
    assert_eq!(g.plan.hosts, ["h0"]);
    assert_eq!(g.plan.switches, ["sw0"]);
    assert_eq!(g.plan.rxe, ["rxe0"]);
    assert_eq!(g.plan.veths, ["p0"]);
    let devs: Vec<&str> = g.ports.iter().map(|p| p.dev.as_str()).collect();
    assert_eq!(devs, ["v0", "p0", "p1", "x0_1"]);
    assert_eq!(g.remote_links(), ["p1", "x0_1"]);
    let mut h = p(src).unwrap();
    h.scope_to("h1").unwrap();
    assert_eq!((h.plan.hosts.len(), h.plan.switches.len()), (1, 0));
    assert!(h.plan.veths.is_empty());
    assert_eq!(h.ports.len(), 1);
    assert_eq!(h.remote_links(), ["v1"]);
    let e = p(src).unwrap().scope_to("nope").unwrap_err().to_string();
    assert!(
        e.contains("no guest 'nope'") && e.contains("g, h1, sw1"),
        "{e}"
    );
    // HPCC's INT is written at the far end: not across guests.
    let hpcc = src.replace(
        "guest = \"g\"\n            [[switch]]",
        "guest = \"g\"\n            int = \"hpcc\"\n            [[switch]]",
    );
    assert!(hpcc.contains("hpcc"));
    let e = p(&hpcc).unwrap().scope_to("g").unwrap_err().to_string();
    assert!(e.contains("HPCC"), "{e}");
    let bad = src.replacen("guest = \"g\"", "guest = \"a b\"", 1);
    let e = err(&bad);
    assert!(e.contains("t.toml:4: switch.guest"), "{e}");
}

#[test]
fn triangle_routes_form_a_cycle() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testbed/topologies"
    ));
    let b = load(&dir.join("triangle.toml")).unwrap();
    // Each switch sends traffic for the host two hops clockwise through
    // its clockwise neighbour: x0_1, x1_2, x2_0 all carry traffic.
    let trunk_out: Vec<&str> = b
        .fdb
        .iter()
        .filter(|(_, _, d)| d.starts_with('x'))
        .map(|(_, _, d)| d.as_str())
        .collect();
    for d in ["x0_1", "x1_2", "x2_0"] {
        assert!(
            trunk_out.contains(&d),
            "{d} carries no route: {trunk_out:?}"
        );
    }
}
