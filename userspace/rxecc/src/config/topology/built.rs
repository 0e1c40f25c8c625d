//! What a built topology answers: its hosts' guests, rates, ports and
//! the simulator's numbering.

use super::*;

impl Built {
    /// The guest host `h` runs in under `testbed/vms.sh`.
    pub fn host_guest(&self, h: usize) -> &str {
        let n = &self.topo.hosts[h];
        n.guest.as_ref().unwrap_or(&n.name).get_ref()
    }

    /// The guest switch `s` runs in.
    pub fn switch_guest(&self, s: usize) -> &str {
        let n = &self.topo.switches[s];
        n.guest.as_ref().unwrap_or(&n.name).get_ref()
    }

    /// Every port device's set rate, Mb/s.
    pub fn port_rates_mbps(&self) -> BTreeMap<String, u64> {
        self.ports
            .iter()
            .map(|p| (p.dev.clone(), p.rate_mbps))
            .collect()
    }

    /// Host `h`'s link rate, Mb/s (its NIC's line rate); none on a plain
    /// bridge.
    pub fn host_rate_mbps(&self, h: usize) -> Option<u64> {
        let name = self.topo.hosts.get(h)?.name.get_ref();
        let t = &self.topo;
        let l = t
            .links
            .iter()
            .find(|l| l.a.get_ref() == name || l.b.get_ref() == name)?;
        let other = if l.a.get_ref() == name { &l.b } else { &l.a };
        // A plain bridge's links have no rate: the guest's CPU sets it.
        let plain = t
            .switches
            .iter()
            .any(|s| s.name.get_ref() == other.get_ref() && !s.emulate);
        (!plain).then(|| l.rate_mbps.unwrap_or(t.defaults.rate_mbps))
    }

    /// Every guest, in the order of the file's first node in each.
    pub fn guests(&self) -> Vec<String> {
        let mut g: Vec<String> = Vec::new();
        let all = (0..self.topo.hosts.len())
            .map(|h| self.host_guest(h))
            .chain((0..self.topo.switches.len()).map(|s| self.switch_guest(s)));
        for n in all {
            if !g.iter().any(|x| x == n) {
                g.push(n.to_string());
            }
        }
        g
    }

    /// The NICs of a testbed of several guests: two per link between
    /// guests, on UDP ports from `base_port` up. A link inside a guest
    /// stays a veth pair.
    pub fn vm_nics(&self, base_port: u16) -> Result<Vec<VmNic>> {
        let mut ends: Vec<[(String, String, String); 2]> = Vec::new();
        for (h, (sw, port)) in self.host_port.iter().enumerate() {
            let (gh, gs) = (self.host_guest(h), self.switch_guest(*sw));
            if gh != gs {
                let m = switch_nic_mac(port).context("switch port name")?;
                ends.push([
                    (gh.to_string(), host_mac(h), format!("v{h}")),
                    (gs.to_string(), m, port.clone()),
                ]);
            }
        }
        for (a, b, da, db) in &self.trunks {
            let (ga, gb) = (self.switch_guest(*a), self.switch_guest(*b));
            if ga != gb {
                ends.push([
                    (
                        ga.to_string(),
                        switch_nic_mac(da).context("trunk port")?,
                        da.clone(),
                    ),
                    (
                        gb.to_string(),
                        switch_nic_mac(db).context("trunk port")?,
                        db.clone(),
                    ),
                ]);
            }
        }
        let mut nics = Vec::new();
        for (i, [a, b]) in ends.into_iter().enumerate() {
            let pa = u16::try_from(i * 2)
                .ok()
                .and_then(|k| base_port.checked_add(k))
                .and_then(|p| p.checked_add(1).map(|q| (p, q)))
                .context("too many links between guests for the UDP port range")?;
            nics.push(VmNic {
                guest: a.0,
                mac: a.1,
                dev: a.2,
                local_port: pa.0,
                remote_port: pa.1,
            });
            nics.push(VmNic {
                guest: b.0,
                mac: b.1,
                dev: b.2,
                local_port: pa.1,
                remote_port: pa.0,
            });
        }
        Ok(nics)
    }

    /// Is host `h` built here (all are, unless scoped to a guest)?
    pub(crate) fn host_here(&self, h: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.host_guest(h) == g)
    }

    /// Is switch `s` built here?
    pub(crate) fn switch_here(&self, s: usize) -> bool {
        self.guest
            .as_deref()
            .is_none_or(|g| self.switch_guest(s) == g)
    }

    /// Is port `p` built here?
    pub(crate) fn port_here(&self, p: &PortPlan) -> bool {
        match (
            p.switch,
            p.dev.strip_prefix('v').and_then(|h| h.parse().ok()),
        ) {
            (Some(s), _) => self.switch_here(s),
            (None, Some(h)) => self.host_here(h),
            (None, None) => false,
        }
    }

    /// Narrows what `up` builds and `down` removes to guest `g`'s nodes:
    /// its hosts' namespaces and rxe devices, its switches, their ports,
    /// and the veths of links inside it. A link to another guest is a NIC
    /// that `testbed/vms.sh` gave this guest.
    pub fn scope_to(&mut self, g: &str) -> Result<()> {
        let guests = self.guests();
        if !guests.iter().any(|x| x == g) {
            bail!(
                "{}: no guest '{g}' (its guests: {})",
                self.plan.file.display(),
                guests.join(", ")
            );
        }
        // HPCC's INT is written at the link's far end from the switch
        // port's own state (a shared map): both ends must share a kernel.
        for (h, (sw, _)) in self.host_port.iter().enumerate() {
            if self.topo.switches[*sw].int == IntMode::Hpcc
                && self.host_guest(h) != self.switch_guest(*sw)
            {
                bail!(
                    "switch '{}' stamps INT for HPCC at the far end of its links, which needs host '{}' in its guest (fncc and icc stamp at the switch)",
                    self.topo.switches[*sw].name.get_ref(),
                    self.topo.hosts[h].name.get_ref()
                );
            }
        }
        for (a, b, _, _) in &self.trunks {
            let hpcc = |s: usize| self.topo.switches[s].int == IntMode::Hpcc;
            if (hpcc(*a) || hpcc(*b)) && self.switch_guest(*a) != self.switch_guest(*b) {
                bail!(
                    "switches '{}' and '{}' stamp INT for HPCC across guests, which needs them in one guest",
                    self.topo.switches[*a].name.get_ref(),
                    self.topo.switches[*b].name.get_ref()
                );
            }
        }
        self.guest = Some(g.to_string());
        let hosts: Vec<usize> = (0..self.topo.hosts.len())
            .filter(|h| self.host_here(*h))
            .collect();
        self.plan.guest = Some(g.to_string());
        self.plan.hosts = hosts
            .iter()
            .map(|h| self.topo.hosts[*h].name.get_ref().clone())
            .collect();
        self.plan.rxe = hosts.iter().map(|h| format!("rxe{h}")).collect();
        self.plan.switches = (0..self.topo.switches.len())
            .filter(|s| self.switch_here(*s))
            .map(|s| self.topo.switches[s].name.get_ref().clone())
            .collect();
        let ports: Vec<PortPlan> = self
            .ports
            .iter()
            .filter(|p| self.port_here(p))
            .cloned()
            .collect();
        self.plan.ports = ports
            .iter()
            .map(|p| (p.dev.clone(), p.netns.clone()))
            .collect();
        self.ports = ports;
        self.plan.veths = self
            .host_port
            .iter()
            .enumerate()
            .filter(|(h, (sw, _))| self.host_here(*h) && self.switch_here(*sw))
            .map(|(_, (_, p))| p.clone())
            .chain(
                self.trunks
                    .iter()
                    .filter(|t| self.switch_here(t.0) && self.switch_here(t.1))
                    .map(|t| t.2.clone()),
            )
            .collect();
        Ok(())
    }

    /// This guest's ports on links to other guests.
    pub fn remote_links(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (h, (sw, port)) in self.host_port.iter().enumerate() {
            match (self.host_here(h), self.switch_here(*sw)) {
                (true, false) => v.push(format!("v{h}")),
                (false, true) => v.push(port.clone()),
                _ => {}
            }
        }
        for (a, b, da, db) in &self.trunks {
            match (self.switch_here(*a), self.switch_here(*b)) {
                (true, false) => v.push(da.clone()),
                (false, true) => v.push(db.clone()),
                _ => {}
            }
        }
        v
    }

    /// Host `h`'s port on its switch: its traffic's ingress.
    pub fn host_port(&self, h: usize) -> Option<&str> {
        self.host_port.get(h).map(|(_, d)| d.as_str())
    }

    /// The port device `dev`'s plan.
    pub fn port(&self, dev: &str) -> Option<&PortPlan> {
        self.ports.iter().find(|p| p.dev == dev)
    }

    /// Every switch-to-switch port: (device, its switch, the switch it
    /// sends to), both directions of each link.
    pub fn trunk_ports(&self) -> Vec<(String, usize, usize)> {
        self.trunks
            .iter()
            .flat_map(|(a, b, da, db)| [(da.clone(), *a, *b), (db.clone(), *b, *a)])
            .collect()
    }

    /// Every port's node and device index as the simulator numbers them:
    /// hosts are nodes 0..H-1 (type 0) and switches H.. (type 1), in the
    /// file's order; a node's devices count from 1 (ns-3's 0 is the
    /// loopback), in the file's link order.
    pub fn sim_ports(&self) -> Vec<SimPort> {
        let nh = self.topo.hosts.len() as u32;
        let mut next = vec![1u32; self.topo.switches.len()];
        self.ports
            .iter()
            .filter_map(|p| match (p.switch, p.dev.strip_prefix('v')) {
                (None, Some(h)) => Some(SimPort {
                    dev: p.dev.clone(),
                    node: h.parse().ok()?,
                    node_type: 0,
                    ifindex: 1,
                }),
                (Some(s), _) => {
                    let i = next.get_mut(s)?;
                    *i += 1;
                    Some(SimPort {
                        dev: p.dev.clone(),
                        node: nh + s as u32,
                        node_type: 1,
                        ifindex: *i - 1,
                    })
                }
                _ => None,
            })
            .collect()
    }
}
