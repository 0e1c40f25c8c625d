//! Checking a topology and planning its testbed.

use super::*;

/// Checks a topology and plans its testbed. `src` is the text `topo` was
/// read from (its names' places are in it), before any settings an
/// experiment laid over it.
pub fn build(file: &Path, src: &str, topo: Topology) -> Result<Built> {
    if topo.defaults.ack_priority && topo.switches.iter().all(|s| !s.emulate) {
        bail!(
            "{}: defaults.ack_priority needs emulated ports (every switch here is a plain bridge)",
            file.display()
        );
    }
    if topo.hosts.is_empty() || topo.switches.is_empty() {
        bail!(
            "{}: a topology needs at least one [[host]] and one [[switch]]",
            file.display()
        );
    }
    if topo.hosts.len() > 200 {
        bail!(
            "{}: at most 200 hosts, not {}",
            file.display(),
            topo.hosts.len()
        );
    }
    if topo.switches.len() > switch::MAX_SWITCHES as usize {
        bail!(
            "{}: at most {} switches",
            file.display(),
            switch::MAX_SWITCHES
        );
    }
    let mut names: BTreeMap<String, Node> = BTreeMap::new();
    // A host's or switch's name: a valid device-name part, unique among both.
    let mut declare = |name: &Spanned<String>, field: &str, node: Node| -> Result<()> {
        let n = name.get_ref();
        let msg = if !valid_name(n, 15) {
            "use 1-15 letters, digits, '-' or '_'".to_string()
        } else if names.insert(n.clone(), node).is_some() {
            format!("'{n}' is declared twice")
        } else {
            return Ok(());
        };
        Err(at(file, src, name.span(), field, msg))
    };
    for (i, h) in topo.hosts.iter().enumerate() {
        declare(&h.name, "host.name", Node::Host(i))?;
    }
    for (i, s) in topo.switches.iter().enumerate() {
        declare(&s.name, "switch.name", Node::Switch(i))?;
        if s.pfc && s.flow_control.is_some_and(|m| m != FlowControl::Pfc) {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.flow_control",
                "contradicts pfc = true (give one of them)",
            ));
        }
        if matches!(s.fc(), FlowControl::GfcBuffer | FlowControl::GfcTime) && s.gfc_bm_bytes == 0 {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.gfc_bm_bytes",
                "GFC needs B_m, the bytes per ingress port",
            ));
        }
        if s.fc() == FlowControl::Pfc && (s.xon_bytes > s.xoff_bytes || s.xoff_bytes == 0) {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.xoff_bytes",
                "PFC needs 0 < XON <= XOFF",
            ));
        }
        if s.mark == MarkMode::Red && s.red.is_none() {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.red",
                "mark = \"red\" needs a [switch.red] table",
            ));
        }
        if s.mark == MarkMode::Tcd && s.tcd.is_none() {
            return Err(at(
                file,
                src,
                s.name.span(),
                "switch.tcd",
                "mark = \"tcd\" needs a [switch.tcd] table",
            ));
        }
        if let Err(e) = s.icc.validate() {
            return Err(at(file, src, s.name.span(), "switch.icc", e));
        }
        if !s.emulate {
            if let Some(field) = s.emulated_setting() {
                return Err(at(
                    file,
                    src,
                    s.name.span(),
                    &format!("switch.{field}"),
                    "needs emulated ports: this switch is a plain bridge (emulate = false)",
                ));
            }
        }
    }
    for (g, field) in topo
        .hosts
        .iter()
        .filter_map(|h| h.guest.as_ref().map(|g| (g, "host.guest")))
        .chain(
            topo.switches
                .iter()
                .filter_map(|s| s.guest.as_ref().map(|g| (g, "switch.guest"))),
        )
    {
        if !valid_name(g.get_ref(), 32) {
            return Err(at(
                file,
                src,
                g.span(),
                field,
                "use 1-32 letters, digits, '-' or '_'",
            ));
        }
    }
    let node = |s: &Spanned<String>, field: &str| -> Result<Node> {
        names.get(s.get_ref()).copied().ok_or_else(|| {
            at(
                file,
                src,
                s.span(),
                field,
                format!("no host or switch named '{}'", s.get_ref()),
            )
        })
    };
    let d = &topo.defaults;
    let mut host_port: Vec<Option<(usize, String)>> = vec![None; topo.hosts.len()];
    let mut ports = Vec::new();
    let mut trunks = Vec::new();
    let mut adj: Vec<Vec<(usize, String)>> = vec![Vec::new(); topo.switches.len()];
    for l in &topo.links {
        let (na, nb) = (node(&l.a, "link.a")?, node(&l.b, "link.b")?);
        let plain = [na, nb]
            .iter()
            .any(|n| matches!(n, Node::Switch(s) if !topo.switches[*s].emulate));
        if plain {
            let trunk = matches!((na, nb), (Node::Switch(_), Node::Switch(_)));
            let set = l.rate_mbps.is_some()
                || l.delay_us.is_some()
                || l.limit_pkts.is_some()
                || l.xoff_bytes.is_some()
                || l.xon_bytes.is_some();
            if trunk || set {
                return Err(at(
                    file,
                    src,
                    l.a.span(),
                    "link",
                    if trunk {
                        "a plain bridge (emulate = false) links hosts only"
                    } else {
                        "a link to a plain bridge (emulate = false) takes no rate, delay, limit or thresholds"
                    },
                ));
            }
        }
        let rate = l.rate_mbps.unwrap_or(d.rate_mbps);
        if rate == 0 {
            return Err(at(
                file,
                src,
                l.a.span(),
                "link.rate_mbps",
                "a link needs a rate above 0",
            ));
        }
        // GFC's thresholds depend on the link's rate: checked per port.
        let gfc = |sw: Option<usize>| -> Result<Option<GfcThresholds>> {
            let Some(s) = sw.map(|i| &topo.switches[i]) else {
                return Ok(None);
            };
            if s.fc() != FlowControl::GfcBuffer {
                return Ok(None);
            }
            GfcThresholds::new(
                s.gfc_bm_bytes,
                s.gfc_b1_bytes,
                rate.saturating_mul(1_000_000),
                s.tau_us,
                s.gfc_step_bytes,
            )
            .map(Some)
            .map_err(|e| at(file, src, s.name.span(), "switch.gfc_b1_bytes", e))
        };
        let gfc_time = |sw: Option<usize>| -> Result<Option<GfcTime>> {
            let Some(s) = sw.map(|i| &topo.switches[i]) else {
                return Ok(None);
            };
            if s.fc() != FlowControl::GfcTime {
                return Ok(None);
            }
            GfcTime::new(
                s.gfc_bm_bytes,
                s.gfc_b0_bytes,
                s.gfc_period_us,
                rate.saturating_mul(1_000_000),
                s.tau_us,
            )
            .map(Some)
            .map_err(|e| at(file, src, s.name.span(), "switch.gfc_b0_bytes", e))
        };
        let mk = |dev: String, netns: Option<String>, sw: Option<usize>, peer: Option<usize>| {
            let s = sw.map(|i| &topo.switches[i]);
            Ok::<_, anyhow::Error>(PortPlan {
                dev,
                netns,
                switch: sw,
                rate_mbps: rate,
                delay_us: l.delay_us.unwrap_or(d.delay_us),
                limit_pkts: l.limit_pkts.unwrap_or(d.limit_pkts),
                xoff_bytes: l.xoff_bytes.or(s.map(|s| s.xoff_bytes)).unwrap_or(0),
                xon_bytes: l.xon_bytes.or(s.map(|s| s.xon_bytes)).unwrap_or(0),
                peer_switch: peer,
                gfc: gfc(sw)?,
                gfc_time: gfc_time(sw)?,
                peer_gfc_time: gfc_time(peer.or(sw))?,
            })
        };
        match (na, nb) {
            (Node::Host(h), Node::Switch(s)) | (Node::Switch(s), Node::Host(h)) => {
                if host_port[h].is_some() {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link",
                        format!("host '{}' has a second link", topo.hosts[h].name.get_ref()),
                    ));
                }
                let p = mk(format!("p{h}"), None, Some(s), None)?;
                if p.xon_bytes > p.xoff_bytes {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link.xon_bytes",
                        "XON must not exceed XOFF",
                    ));
                }
                host_port[h] = Some((s, p.dev.clone()));
                if plain {
                    continue;
                }
                ports.push(mk(
                    format!("v{h}"),
                    Some(topo.hosts[h].name.get_ref().clone()),
                    None,
                    Some(s),
                )?);
                ports.push(p);
            }
            (Node::Switch(a), Node::Switch(b)) if a != b => {
                let (da, db) = (format!("x{a}_{b}"), format!("x{b}_{a}"));
                if adj[a].iter().any(|(n, _)| *n == b) {
                    return Err(at(
                        file,
                        src,
                        l.a.span(),
                        "link",
                        "these switches are linked twice",
                    ));
                }
                adj[a].push((b, da.clone()));
                adj[b].push((a, db.clone()));
                ports.push(mk(da.clone(), None, Some(a), Some(b))?);
                ports.push(mk(db.clone(), None, Some(b), Some(a))?);
                trunks.push((a, b, da, db));
            }
            _ => {
                return Err(at(
                    file,
                    src,
                    l.a.span(),
                    "link",
                    "a link joins a host to a switch, or two switches",
                ))
            }
        }
    }
    let host_port: Vec<(usize, String)> = host_port
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            p.ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: host '{}' has no link",
                    file.display(),
                    topo.hosts[i].name.get_ref()
                )
            })
        })
        .collect::<Result<_>>()?;

    // Static forwarding: per switch, towards each host's switch by BFS
    // (fewest hops), then the file's routes on top.
    let mut next: Vec<Vec<Option<String>>> =
        vec![vec![None; topo.switches.len()]; topo.switches.len()];
    for (src_sw, row) in next.iter_mut().enumerate() {
        let mut first: Vec<Option<String>> = vec![None; topo.switches.len()];
        let mut seen = vec![false; topo.switches.len()];
        let mut q = VecDeque::from([src_sw]);
        seen[src_sw] = true;
        while let Some(u) = q.pop_front() {
            for (v, dev) in &adj[u] {
                if !seen[*v] {
                    seen[*v] = true;
                    first[*v] = if u == src_sw {
                        Some(dev.clone())
                    } else {
                        first[u].clone()
                    };
                    q.push_back(*v);
                }
            }
        }
        *row = first;
    }
    let mut fdb = Vec::new();
    for (h, (hs, hp)) in host_port.iter().enumerate() {
        for (s, row) in next.iter().enumerate() {
            let dev = if s == *hs {
                hp.clone()
            } else {
                row[*hs].clone().ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: host '{}' cannot be reached from switch '{}'",
                        file.display(),
                        topo.hosts[h].name.get_ref(),
                        topo.switches[s].name.get_ref()
                    )
                })?
            };
            fdb.push((s, h, dev));
        }
    }
    for r in &topo.routes {
        let Node::Switch(s) = node(&r.at, "route.at")? else {
            return Err(at(file, src, r.at.span(), "route.at", "must name a switch"));
        };
        let Node::Host(h) = node(&r.to, "route.to")? else {
            return Err(at(file, src, r.to.span(), "route.to", "must name a host"));
        };
        let Node::Switch(v) = node(&r.via, "route.via")? else {
            return Err(at(
                file,
                src,
                r.via.span(),
                "route.via",
                "must name a switch",
            ));
        };
        let dev = adj[s]
            .iter()
            .find(|(n, _)| *n == v)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| {
                at(
                    file,
                    src,
                    r.via.span(),
                    "route.via",
                    "is not linked to route.at",
                )
            })?;
        for e in fdb.iter_mut().filter(|e| e.0 == s && e.1 == h) {
            e.2 = dev.clone();
        }
    }
    ports.sort_by_key(|p| p.netns.is_none());
    for r in &topo.injects {
        if !ports.iter().any(|p| p.dev == r.port) {
            let mut devs: Vec<&str> = ports.iter().map(|p| p.dev.as_str()).collect();
            devs.sort();
            bail!(
                "{}: [[inject]] port '{}' is not a port of this topology (ports: {})",
                file.display(),
                r.port,
                devs.join(" ")
            );
        }
        r.validate()
            .with_context(|| format!("{}: [[inject]] at {}", file.display(), r.port))?;
    }
    let plan = Plan {
        file: file.to_path_buf(),
        hosts: topo
            .hosts
            .iter()
            .map(|h| h.name.get_ref().clone())
            .collect(),
        switches: topo
            .switches
            .iter()
            .map(|s| s.name.get_ref().clone())
            .collect(),
        ports: ports
            .iter()
            .map(|p| (p.dev.clone(), p.netns.clone()))
            .collect(),
        veths: host_port
            .iter()
            .map(|(_, p)| p.clone())
            .chain(trunks.iter().map(|t| t.2.clone()))
            .collect(),
        rxe: (0..topo.hosts.len()).map(|h| format!("rxe{h}")).collect(),
        guest: None,
    };
    Ok(Built {
        topo,
        plan,
        ports,
        fdb,
        trunks,
        host_port,
        guest: None,
        nic_devs: BTreeMap::new(),
    })
}
