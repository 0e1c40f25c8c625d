//! Checking a topology and planning its testbed.

use super::*;

/// Checks a topology and plans its testbed. `src` is the text `topo` was
/// read from (its names' places are in it), before any settings an
/// experiment laid over it.
pub fn build(file: &Path, src: &str, topo: Topology) -> Result<Built> {
    let cx = Cx {
        file,
        src,
        topo: &topo,
    };
    cx.check_sizes()?;
    let names = cx.names()?;
    let mut links = Links {
        host_port: vec![None; topo.hosts.len()],
        ports: Vec::new(),
        trunks: Vec::new(),
        adj: vec![Vec::new(); topo.switches.len()],
    };
    for l in &topo.links {
        cx.link(l, &names, &mut links)?;
    }
    let host_port = cx.every_host_linked(links.host_port)?;
    let fdb = cx.forwarding(&names, &host_port, &links.adj)?;
    let mut ports = links.ports;
    ports.sort_by_key(|p| p.netns.is_none());
    cx.check_injects(&ports)?;
    let plan = cx.plan(&ports, &host_port, &links.trunks);
    let trunks = links.trunks;
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

/// A topology being checked, with the file and text its errors point into.
struct Cx<'a> {
    file: &'a Path,
    src: &'a str,
    topo: &'a Topology,
}

/// What the links give, as they are read.
struct Links {
    /// Each host's switch and switch port, once its link is read.
    host_port: Vec<Option<(usize, String)>>,
    ports: Vec<PortPlan>,
    trunks: Vec<(usize, usize, String, String)>,
    /// Per switch: its neighbours and the port towards each.
    adj: Vec<Vec<(usize, String)>>,
}

impl Cx<'_> {
    fn at(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        msg: impl std::fmt::Display,
    ) -> anyhow::Error {
        at(self.file, self.src, span, field, msg)
    }

    /// At least one host and switch, and no more than the testbed holds.
    fn check_sizes(&self) -> Result<()> {
        let (file, topo) = (self.file.display(), self.topo);
        if topo.defaults.ack_priority && topo.switches.iter().all(|s| !s.emulate) {
            bail!("{file}: defaults.ack_priority needs emulated ports (every switch here is a plain bridge)");
        }
        if topo.hosts.is_empty() || topo.switches.is_empty() {
            bail!("{file}: a topology needs at least one [[host]] and one [[switch]]");
        }
        if topo.hosts.len() > 200 {
            bail!("{file}: at most 200 hosts, not {}", topo.hosts.len());
        }
        if topo.switches.len() > switch::MAX_SWITCHES as usize {
            bail!("{file}: at most {} switches", switch::MAX_SWITCHES);
        }
        Ok(())
    }

    /// Every host's and switch's name, each a valid device-name part and
    /// unique among both; each switch's settings consistent; each guest's
    /// name valid.
    fn names(&self) -> Result<BTreeMap<String, Node>> {
        let topo = self.topo;
        let mut names: BTreeMap<String, Node> = BTreeMap::new();
        let mut declare = |name: &Spanned<String>, field: &str, node: Node| -> Result<()> {
            let n = name.get_ref();
            let msg = if !valid_name(n, 15) {
                "use 1-15 letters, digits, '-' or '_'".to_string()
            } else if names.insert(n.clone(), node).is_some() {
                format!("'{n}' is declared twice")
            } else {
                return Ok(());
            };
            Err(self.at(name.span(), field, msg))
        };
        for (i, h) in topo.hosts.iter().enumerate() {
            declare(&h.name, "host.name", Node::Host(i))?;
        }
        for (i, s) in topo.switches.iter().enumerate() {
            declare(&s.name, "switch.name", Node::Switch(i))?;
            self.check_switch(s)?;
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
                return Err(self.at(g.span(), field, "use 1-32 letters, digits, '-' or '_'"));
            }
        }
        Ok(names)
    }

    /// A switch's settings that contradict or lack each other.
    fn check_switch(&self, s: &Switch) -> Result<()> {
        let err = |field: &str, msg: &str| Err(self.at(s.name.span(), field, msg));
        if s.pfc && s.flow_control.is_some_and(|m| m != FlowControl::Pfc) {
            return err(
                "switch.flow_control",
                "contradicts pfc = true (give one of them)",
            );
        }
        if matches!(s.fc(), FlowControl::GfcBuffer | FlowControl::GfcTime) && s.gfc_bm_bytes == 0 {
            return err(
                "switch.gfc_bm_bytes",
                "GFC needs B_m, the bytes per ingress port",
            );
        }
        if s.fc() == FlowControl::Pfc && (s.xon_bytes > s.xoff_bytes || s.xoff_bytes == 0) {
            return err("switch.xoff_bytes", "PFC needs 0 < XON <= XOFF");
        }
        if s.mark == MarkMode::Red && s.red.is_none() {
            return err("switch.red", "mark = \"red\" needs a [switch.red] table");
        }
        if s.mark == MarkMode::Tcd && s.tcd.is_none() {
            return err("switch.tcd", "mark = \"tcd\" needs a [switch.tcd] table");
        }
        if let Err(e) = s.icc.validate() {
            return Err(self.at(s.name.span(), "switch.icc", e));
        }
        if !s.emulate {
            if let Some(field) = s.emulated_setting() {
                return err(
                    &format!("switch.{field}"),
                    "needs emulated ports: this switch is a plain bridge (emulate = false)",
                );
            }
        }
        Ok(())
    }

    /// The host or switch a link end or route names.
    fn node(
        &self,
        names: &BTreeMap<String, Node>,
        s: &Spanned<String>,
        field: &str,
    ) -> Result<Node> {
        names.get(s.get_ref()).copied().ok_or_else(|| {
            self.at(
                s.span(),
                field,
                format!("no host or switch named '{}'", s.get_ref()),
            )
        })
    }

    /// One link: a host's NIC and its switch port, or the two ports of a
    /// trunk between switches.
    fn link(&self, l: &Link, names: &BTreeMap<String, Node>, out: &mut Links) -> Result<()> {
        let topo = self.topo;
        let (na, nb) = (
            self.node(names, &l.a, "link.a")?,
            self.node(names, &l.b, "link.b")?,
        );
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
                return Err(self.at(
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
        let rate = l.rate_mbps.unwrap_or(topo.defaults.rate_mbps);
        if rate == 0 {
            return Err(self.at(l.a.span(), "link.rate_mbps", "a link needs a rate above 0"));
        }
        match (na, nb) {
            (Node::Host(h), Node::Switch(s)) | (Node::Switch(s), Node::Host(h)) => {
                if out.host_port[h].is_some() {
                    return Err(self.at(
                        l.a.span(),
                        "link",
                        format!("host '{}' has a second link", topo.hosts[h].name.get_ref()),
                    ));
                }
                let p = self.port(l, rate, format!("p{h}"), None, Some(s), None)?;
                if p.xon_bytes > p.xoff_bytes {
                    return Err(self.at(l.a.span(), "link.xon_bytes", "XON must not exceed XOFF"));
                }
                out.host_port[h] = Some((s, p.dev.clone()));
                if plain {
                    return Ok(());
                }
                let ns = Some(topo.hosts[h].name.get_ref().clone());
                out.ports
                    .push(self.port(l, rate, format!("v{h}"), ns, None, Some(s))?);
                out.ports.push(p);
            }
            (Node::Switch(a), Node::Switch(b)) if a != b => {
                let (da, db) = (format!("x{a}_{b}"), format!("x{b}_{a}"));
                if out.adj[a].iter().any(|(n, _)| *n == b) {
                    return Err(self.at(l.a.span(), "link", "these switches are linked twice"));
                }
                out.adj[a].push((b, da.clone()));
                out.adj[b].push((a, db.clone()));
                out.ports
                    .push(self.port(l, rate, da.clone(), None, Some(a), Some(b))?);
                out.ports
                    .push(self.port(l, rate, db.clone(), None, Some(b), Some(a))?);
                out.trunks.push((a, b, da, db));
            }
            _ => {
                return Err(self.at(
                    l.a.span(),
                    "link",
                    "a link joins a host to a switch, or two switches",
                ))
            }
        }
        Ok(())
    }

    /// The port `dev` of link `l` at `rate` Mb/s: of switch `sw` (none for
    /// a host's NIC), towards switch `peer` (a trunk's, or a NIC's switch).
    fn port(
        &self,
        l: &Link,
        rate: u64,
        dev: String,
        netns: Option<String>,
        sw: Option<usize>,
        peer: Option<usize>,
    ) -> Result<PortPlan> {
        let d = &self.topo.defaults;
        let s = sw.map(|i| &self.topo.switches[i]);
        Ok(PortPlan {
            dev,
            netns,
            switch: sw,
            rate_mbps: rate,
            delay_us: l.delay_us.unwrap_or(d.delay_us),
            limit_pkts: l.limit_pkts.unwrap_or(d.limit_pkts),
            xoff_bytes: l.xoff_bytes.or(s.map(|s| s.xoff_bytes)).unwrap_or(0),
            xon_bytes: l.xon_bytes.or(s.map(|s| s.xon_bytes)).unwrap_or(0),
            peer_switch: peer,
            gfc: self.gfc(sw, rate)?,
            gfc_time: self.gfc_time(sw, rate)?,
            peer_gfc_time: self.gfc_time(peer.or(sw), rate)?,
        })
    }

    /// Buffer-based GFC's thresholds at switch `sw`'s port of a link at
    /// `rate` Mb/s: they depend on the rate, so they are checked per port.
    fn gfc(&self, sw: Option<usize>, rate: u64) -> Result<Option<GfcThresholds>> {
        let Some(s) = sw.map(|i| &self.topo.switches[i]) else {
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
        .map_err(|e| self.at(s.name.span(), "switch.gfc_b1_bytes", e))
    }

    /// Time-based GFC's settings at switch `sw`'s port, as [`Cx::gfc`].
    fn gfc_time(&self, sw: Option<usize>, rate: u64) -> Result<Option<GfcTime>> {
        let Some(s) = sw.map(|i| &self.topo.switches[i]) else {
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
        .map_err(|e| self.at(s.name.span(), "switch.gfc_b0_bytes", e))
    }

    /// Every host's switch and port, or the first host without a link.
    fn every_host_linked(
        &self,
        host_port: Vec<Option<(usize, String)>>,
    ) -> Result<Vec<(usize, String)>> {
        host_port
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: host '{}' has no link",
                        self.file.display(),
                        self.topo.hosts[i].name.get_ref()
                    )
                })
            })
            .collect()
    }

    /// Static forwarding, `(switch, host, port)`: per switch, towards each
    /// host's switch by BFS (fewest hops), then the file's routes on top.
    fn forwarding(
        &self,
        names: &BTreeMap<String, Node>,
        host_port: &[(usize, String)],
        adj: &[Vec<(usize, String)>],
    ) -> Result<Vec<(usize, usize, String)>> {
        let topo = self.topo;
        let n = topo.switches.len();
        let next: Vec<Vec<Option<String>>> = (0..n).map(|src_sw| first_hops(adj, src_sw)).collect();
        let mut fdb = Vec::new();
        for (h, (hs, hp)) in host_port.iter().enumerate() {
            for (s, row) in next.iter().enumerate() {
                let dev = if s == *hs {
                    hp.clone()
                } else {
                    row[*hs].clone().ok_or_else(|| {
                        anyhow::anyhow!(
                            "{}: host '{}' cannot be reached from switch '{}'",
                            self.file.display(),
                            topo.hosts[h].name.get_ref(),
                            topo.switches[s].name.get_ref()
                        )
                    })?
                };
                fdb.push((s, h, dev));
            }
        }
        for r in &topo.routes {
            let Node::Switch(s) = self.node(names, &r.at, "route.at")? else {
                return Err(self.at(r.at.span(), "route.at", "must name a switch"));
            };
            let Node::Host(h) = self.node(names, &r.to, "route.to")? else {
                return Err(self.at(r.to.span(), "route.to", "must name a host"));
            };
            let Node::Switch(v) = self.node(names, &r.via, "route.via")? else {
                return Err(self.at(r.via.span(), "route.via", "must name a switch"));
            };
            let dev = adj[s]
                .iter()
                .find(|(n, _)| *n == v)
                .map(|(_, d)| d.clone())
                .ok_or_else(|| self.at(r.via.span(), "route.via", "is not linked to route.at"))?;
            for e in fdb.iter_mut().filter(|e| e.0 == s && e.1 == h) {
                e.2 = dev.clone();
            }
        }
        Ok(fdb)
    }

    /// Each `[[inject]]` on a port of this topology, and valid.
    fn check_injects(&self, ports: &[PortPlan]) -> Result<()> {
        let file = self.file.display();
        for r in &self.topo.injects {
            if !ports.iter().any(|p| p.dev == r.port) {
                let mut devs: Vec<&str> = ports.iter().map(|p| p.dev.as_str()).collect();
                devs.sort();
                bail!(
                    "{file}: [[inject]] port '{}' is not a port of this topology (ports: {})",
                    r.port,
                    devs.join(" ")
                );
            }
            r.validate()
                .with_context(|| format!("{file}: [[inject]] at {}", r.port))?;
        }
        Ok(())
    }

    /// What `up` creates, in its order.
    fn plan(
        &self,
        ports: &[PortPlan],
        host_port: &[(usize, String)],
        trunks: &[(usize, usize, String, String)],
    ) -> Plan {
        let topo = self.topo;
        Plan {
            file: self.file.to_path_buf(),
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
        }
    }
}

/// From switch `src_sw`, the port of the first hop towards each switch
/// (None for itself and for those it cannot reach), by BFS: fewest hops.
fn first_hops(adj: &[Vec<(usize, String)>], src_sw: usize) -> Vec<Option<String>> {
    let mut first: Vec<Option<String>> = vec![None; adj.len()];
    let mut seen = vec![false; adj.len()];
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
    first
}
