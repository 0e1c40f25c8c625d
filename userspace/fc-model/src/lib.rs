//! A slotted model of a lossless fabric's link-level flow control: PFC
//! against buffer-based GFC, on any switch graph, for the question the GFC
//! paper's Table 1 asks: in how many networks does a cyclic buffer
//! dependency (CBD) lock up? (`docs/switch.md`, "Deadlock across many
//! topologies".)
//!
//! The model, kept small on purpose:
//! - every link moves at most one packet per slot each way (one packet
//!   time at C); packets are all one size (a unit of buffer);
//! - a switch keeps an egress FIFO per output link and charges each packet
//!   to the link it came in on until it leaves (as the emulated switch
//!   does); a host is an endless source of packets for its one flow and a
//!   sink for packets to it;
//! - the upstream end of a link sees its downstream ingress counter `tau`
//!   slots late (the feedback latency), and obeys it: PFC stops the link at
//!   XOFF and lets it go at XON; GFC sends at C / 2^k at stage k;
//! - routes are shortest paths over the links that survive, chosen per
//!   destination by a hash among the equal ones; after link failures some
//!   go down and up again, which is what creates CBDs.
//!
//! A network is deadlocked when some links have had packets queued and sent
//! nothing for `hold` slots, each waiting on another such link at the
//! switch it feeds, round a cycle.

use std::collections::VecDeque;

/// Link-level flow control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Stop at `xoff` packets, resume at `xon`.
    Pfc { xoff: u32, xon: u32 },
    /// Stages from B_1 to B_m, `stages` of them (rate C / 2^k).
    Gfc { b1: u32, bm: u32, stages: u32 },
}

impl Flow {
    /// GFC's stage for an ingress counter of `q` packets (the rule of
    /// switch-ebpf/port/gfc.h's gfc_stage_of()).
    pub fn gfc_stage(b1: u32, bm: u32, stages: u32, q: u32) -> u32 {
        if q < b1 || bm <= b1 {
            return 0;
        }
        let (d1, left) = (bm - b1, bm.saturating_sub(q));
        (1..stages.min(31))
            .take_while(|i| left <= d1 >> i)
            .last()
            .map_or(1, |i| i + 1)
    }
}

/// A network: nodes 0..hosts are hosts (one link each), the rest switches.
#[derive(Clone, Debug)]
pub struct Net {
    pub nodes: usize,
    pub hosts: usize,
    /// Undirected links (a, b).
    pub links: Vec<(usize, usize)>,
    /// Static routes that override shortest paths: at switch `.0`,
    /// packets for host `.1` go to node `.2`.
    pub routes: Vec<(usize, usize, usize)>,
}

/// A small deterministic generator (xorshift64*), so that a network is
/// named by its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

impl Net {
    /// A k-ary fat tree (k even): k^3/4 hosts, k^2/2 edge and k^2/2
    /// aggregation switches, (k/2)^2 cores.
    pub fn fat_tree(k: usize) -> Net {
        let h = k * k * k / 4;
        let half = k / 2;
        let (edge0, agg0) = (h, h + k * half);
        let core0 = agg0 + k * half;
        let mut links = Vec::new();
        for pod in 0..k {
            for e in 0..half {
                let edge = edge0 + pod * half + e;
                for j in 0..half {
                    links.push(((pod * half + e) * half + j, edge));
                    links.push((edge, agg0 + pod * half + j));
                }
            }
            for a in 0..half {
                for c in 0..half {
                    links.push((agg0 + pod * half + a, core0 + a * half + c));
                }
            }
        }
        Net {
            nodes: core0 + half * half,
            hosts: h,
            links,
            routes: Vec::new(),
        }
    }

    /// The same network with each switch-to-switch link failed with
    /// probability `permille` / 1000.
    pub fn fail_links(&self, permille: u64, rng: &mut Rng) -> Net {
        let links = self
            .links
            .iter()
            .copied()
            .filter(|&(a, b)| a < self.hosts || b < self.hosts || rng.next_u64() % 1000 >= permille)
            .collect();
        Net {
            links,
            routes: self.routes.clone(),
            ..*self
        }
    }

    /// The same network without these links (either direction).
    pub fn without(&self, gone: &[(usize, usize)]) -> Net {
        Net {
            links: self
                .links
                .iter()
                .copied()
                .filter(|&(a, b)| {
                    !gone
                        .iter()
                        .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
                })
                .collect(),
            routes: self.routes.clone(),
            ..*self
        }
    }

    /// Three switches in a ring, a host on each, every flow routed the
    /// long way round (the GFC paper's testbed; rxe-cc's `triangle`).
    pub fn ring3() -> Net {
        Net {
            nodes: 6,
            hosts: 3,
            links: vec![(0, 3), (1, 4), (2, 5), (3, 4), (4, 5), (5, 3)],
            // h0 -> h2 via s0 -> s1 -> s2, h1 -> h0 via s1 -> s2 -> s0,
            // h2 -> h1 via s2 -> s0 -> s1.
            routes: vec![(3, 2, 4), (4, 0, 5), (5, 1, 3)],
        }
    }
}

/// One flow per host: to the host `shift` places on (a permutation).
pub fn shift_flows(hosts: usize, shift: usize) -> Vec<(usize, usize)> {
    (0..hosts).map(|h| (h, (h + shift) % hosts)).collect()
}

/// One flow per host, to a random other host.
pub fn random_flows(hosts: usize, rng: &mut Rng) -> Vec<(usize, usize)> {
    (0..hosts)
        .map(|h| (h, (h + 1 + rng.below(hosts - 1)) % hosts))
        .collect()
}

/// One flow per host, to a random host under another edge switch (the
/// paper's "a destination in a different rack"; `rack` hosts per edge).
pub fn random_flows_across(hosts: usize, rack: usize, rng: &mut Rng) -> Vec<(usize, usize)> {
    let rack = rack.max(1);
    (0..hosts)
        .map(|h| {
            let others = hosts - rack.min(hosts);
            if others == 0 {
                return (h, (h + 1) % hosts);
            }
            // The i-th host outside h's rack.
            let i = rng.below(others);
            let first = h / rack * rack;
            (h, if i < first { i } else { i + rack })
        })
        .collect()
}

/// What one run found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Links of a deadlocked cycle, as (from, to) nodes; empty if none.
    pub cycle: Vec<(usize, usize)>,
    /// Packets delivered to hosts, per flow.
    pub delivered: Vec<u64>,
    /// The highest ingress counter seen, packets.
    pub peak_ingress: u32,
    /// Flows whose destination cannot be reached (left out).
    pub unroutable: usize,
}

/// How an output link picks its next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// One FIFO, in arrival order: the emulated switch's port (and a
    /// shared-buffer ASIC's egress queue).
    Fifo,
    /// A FIFO per input, served round-robin: an input-buffered switch.
    RoundRobin,
}

/// The model's settings.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub flow: Flow,
    pub sched: Sched,
    /// Feedback latency, slots.
    pub tau: usize,
    pub slots: usize,
    /// A link is stuck after this many slots with packets and no send.
    pub hold: usize,
}

impl Params {
    /// The GFC paper's simulation, in packets of 1 KB at 10 Gb/s (a slot
    /// is 0.8 us): 300 KB buffers per ingress port and a feedback latency
    /// of 8 slots (its 5-7 us). GFC: B_1 = B_m - 2 C tau, stages until
    /// two are a packet apart. PFC: XOFF leaves the same 2 C tau of
    /// headroom and a little more, XON three packets below (as 797/800).
    pub fn paper(gfc: bool, sched: Sched, slots: usize) -> Params {
        let (bm, tau) = (300u32, 8usize);
        let b1 = bm - 2 * tau as u32;
        let d1 = bm - b1;
        // Until two stages are a packet apart (the emulated switch's rule,
        // docs/switch.md; the paper's byte apart would put the last stages
        // where a packet-counting queue never stops).
        let stages = (1..31u32).find(|n| d1 <= 1 << (n - 1)).unwrap_or(31);
        Params {
            flow: if gfc {
                Flow::Gfc { b1, bm, stages }
            } else {
                Flow::Pfc {
                    xoff: b1 - 4,
                    xon: b1 - 7,
                }
            },
            sched,
            tau,
            slots,
            hold: slots / 4,
        }
    }
}

/// An output link's queue: a FIFO per input (the links into the node, and
/// a host's own source last), served round-robin; or, for `Sched::Fifo`,
/// everything in the first FIFO.
struct OutQ {
    fifo: Vec<VecDeque<Pkt>>,
    next: usize,
    len: usize,
    shared: bool,
}

impl OutQ {
    fn new(inputs: usize, sched: Sched) -> Self {
        OutQ {
            fifo: (0..inputs).map(|_| VecDeque::new()).collect(),
            next: 0,
            len: 0,
            shared: sched == Sched::Fifo,
        }
    }
    fn push(&mut self, input: usize, p: Pkt) {
        if let Some(f) = self.fifo.get_mut(if self.shared { 0 } else { input }) {
            f.push_back(p);
            self.len += 1;
        }
    }
    fn pop(&mut self) -> Option<Pkt> {
        let n = self.fifo.len();
        for i in 0..n {
            let k = (self.next + i) % n;
            if let Some(p) = self.fifo[k].pop_front() {
                self.next = (k + 1) % n;
                self.len -= 1;
                return Some(p);
            }
        }
        None
    }
}

struct Pkt {
    dst: usize,
    flow: usize,
    /// The directed link it came in on (its ingress charge); None: from
    /// a host's own source.
    from: Option<usize>,
}

/// A network's forwarding state.
struct Routing {
    /// Directed links: 2i is a -> b, 2i + 1 is b -> a.
    dl: Vec<(usize, usize)>,
    /// Each node's outgoing directed links.
    out_links: Vec<Vec<usize>>,
    /// next[d][u]: the directed link u forwards packets for host d on.
    next: Vec<Vec<Option<usize>>>,
}

impl Routing {
    fn new(net: &Net) -> Routing {
        let dl: Vec<(usize, usize)> = net
            .links
            .iter()
            .flat_map(|&(a, b)| [(a, b), (b, a)])
            .collect();
        let mut out_links: Vec<Vec<usize>> = vec![Vec::new(); net.nodes];
        for (i, &(a, _)) in dl.iter().enumerate() {
            out_links[a].push(i);
        }
        let next = (0..net.hosts)
            .map(|d| routes_to(net, &dl, &out_links, d))
            .collect();
        Routing {
            dl,
            out_links,
            next,
        }
    }

    /// The directed links from host `s` to host `d`, if it is reachable.
    fn path(&self, s: usize, d: usize) -> Option<Vec<usize>> {
        let mut path = Vec::new();
        let mut u = s;
        while u != d {
            let l = (*self.next.get(d)?.get(u)?)?;
            path.push(l);
            u = self.dl[l].1;
            // Routes are loop-free by construction; a bad static route
            // must not hang the model.
            if path.len() > self.dl.len() {
                return None;
            }
        }
        Some(path)
    }
}

/// A cyclic buffer dependency in `net`'s routes between every pair of
/// hosts: a cycle of switch-to-switch links, each feeding the next at a
/// switch for some pair's route (as (from, to) nodes); None if the routes
/// have none, and then no traffic can deadlock it.
pub fn cbd(net: &Net) -> Option<Vec<(usize, usize)>> {
    let r = Routing::new(net);
    let mut dep: Vec<Vec<usize>> = vec![Vec::new(); r.dl.len()];
    // The routes to one host form a tree: walk it from every other host,
    // each node once.
    let mut seen = vec![usize::MAX; net.nodes];
    for d in 0..net.hosts {
        for s in (0..net.hosts).filter(|&s| s != d) {
            let mut u = s;
            while u != d && seen[u] != d {
                seen[u] = d;
                let Some(l) = r.next[d][u] else { break };
                let v = r.dl[l].1;
                if let Some(l2) = r.next[d].get(v).copied().flatten() {
                    depend(&mut dep, l, l2);
                }
                u = v;
            }
        }
    }
    find_cycle(&dep).map(|c| c.into_iter().map(|l| r.dl[l]).collect())
}

/// Link `a` feeds link `b` at a switch (once in the graph).
fn depend(dep: &mut [Vec<usize>], a: usize, b: usize) {
    if !dep[a].contains(&b) {
        dep[a].push(b);
    }
}

/// The same for the routes of `flows` alone.
pub fn cbd_of(net: &Net, flows: &[(usize, usize)]) -> Option<Vec<(usize, usize)>> {
    let r = Routing::new(net);
    let mut dep: Vec<Vec<usize>> = vec![Vec::new(); r.dl.len()];
    for &(s, d) in flows {
        let Some(path) = r.path(s, d) else { continue };
        for w in path.windows(2) {
            depend(&mut dep, w[0], w[1]);
        }
    }
    find_cycle(&dep).map(|c| c.into_iter().map(|l| r.dl[l]).collect())
}

/// Runs `flows` (source host, destination host) over `net` for
/// `p.slots` slots.
pub fn run(net: &Net, flows: &[(usize, usize)], p: &Params) -> Outcome {
    let Routing {
        dl,
        out_links,
        next,
    } = Routing::new(net);
    // Each node's inputs: its incoming links, by position; a host's own
    // source is the input after them.
    let mut in_pos = vec![0usize; dl.len()];
    let mut n_in = vec![0usize; net.nodes];
    for (i, &(_, b)) in dl.iter().enumerate() {
        in_pos[i] = n_in[b];
        n_in[b] += 1;
    }
    let mut q: Vec<OutQ> = dl
        .iter()
        .map(|&(a, _)| OutQ::new(n_in[a] + 1, p.sched))
        .collect();
    // Ingress counters per directed link (at its downstream end), with
    // their history for the feedback latency.
    let mut ing = vec![0u32; dl.len()];
    let mut hist: Vec<VecDeque<u32>> = vec![VecDeque::from(vec![0; p.tau + 1]); dl.len()];
    let mut paused = vec![false; dl.len()];
    // GFC's gap after a link's last packet, at the stage it sees now (so
    // a lower stage applies at once, as the emulated port's dequeue does).
    let mut gap = vec![1usize; dl.len()];
    let mut last_send = vec![0usize; dl.len()];
    let mut sent_any = vec![false; dl.len()];
    let mut out = Outcome {
        delivered: vec![0; flows.len()],
        ..Default::default()
    };
    let mut src: Vec<Option<(usize, usize)>> = vec![None; net.hosts];
    for (fi, &(s, d)) in flows.iter().enumerate() {
        if s < net.hosts && next[d][s].is_some() {
            src[s] = Some((fi, d));
        } else {
            out.unroutable += 1;
        }
    }
    let mut moves: Vec<(usize, Pkt)> = Vec::new();
    for t in 0..p.slots {
        // Sources keep their link's queue topped up.
        for (h, s) in src.iter().enumerate() {
            if let Some((fi, d)) = *s {
                if let Some(l) = next[d][h] {
                    while q[l].len < 2 {
                        let src_input = n_in[h];
                        q[l].push(
                            src_input,
                            Pkt {
                                dst: d,
                                flow: fi,
                                from: None,
                            },
                        );
                    }
                }
            }
        }
        // Each link sends its head if its flow control lets it.
        moves.clear();
        for l in 0..dl.len() {
            if q[l].len == 0 || paused[l] || (sent_any[l] && t < last_send[l] + gap[l]) {
                continue;
            }
            let Some(pkt) = q[l].pop() else { continue };
            last_send[l] = t;
            sent_any[l] = true;
            if let Some(f) = pkt.from {
                ing[f] = ing[f].saturating_sub(1);
            }
            moves.push((l, pkt));
        }
        // Arrivals: delivered at a host, or queued at a switch towards the
        // next hop and charged to the link they came in on.
        for (l, pkt) in moves.drain(..) {
            let v = dl[l].1;
            if v < net.hosts {
                if v == pkt.dst {
                    out.delivered[pkt.flow] += 1;
                }
                continue;
            }
            // Routed at the source, so every switch on the way has a route.
            if let Some(nl) = next[pkt.dst][v] {
                ing[l] += 1;
                out.peak_ingress = out.peak_ingress.max(ing[l]);
                q[nl].push(
                    in_pos[l],
                    Pkt {
                        dst: pkt.dst,
                        flow: pkt.flow,
                        from: Some(l),
                    },
                );
            }
        }
        // Feedback, tau slots late.
        for l in 0..dl.len() {
            hist[l].push_back(ing[l]);
            let seen = hist[l].pop_front().unwrap_or(0);
            if dl[l].1 < net.hosts {
                continue;
            }
            match p.flow {
                Flow::Pfc { xoff, xon } => {
                    if seen >= xoff {
                        paused[l] = true;
                    } else if seen <= xon {
                        paused[l] = false;
                    }
                }
                Flow::Gfc { b1, bm, stages } => {
                    gap[l] = 1 << Flow::gfc_stage(b1, bm, stages, seen).min(30);
                }
            }
        }
    }
    // Stuck links: packets queued, nothing sent for `hold` slots; each
    // waits on the stuck links out of the switch it feeds.
    let end = p.slots.saturating_sub(1);
    let stuck: Vec<bool> = (0..dl.len())
        .map(|l| q[l].len > 0 && end.saturating_sub(last_send[l]) >= p.hold)
        .collect();
    let waits: Vec<Vec<usize>> = (0..dl.len())
        .map(|l| {
            if !stuck[l] || dl[l].1 < net.hosts {
                return Vec::new();
            }
            out_links[dl[l].1]
                .iter()
                .copied()
                .filter(|&m| stuck[m])
                .collect()
        })
        .collect();
    if let Some(c) = find_cycle(&waits) {
        out.cycle = c.into_iter().map(|l| dl[l]).collect();
    }
    out
}

/// For destination host `d`: at each node, the directed link to forward
/// on (shortest paths over the surviving links; among equal next hops, one
/// picked by a hash of node and destination, like per-destination ECMP).
fn routes_to(
    net: &Net,
    dl: &[(usize, usize)],
    out_links: &[Vec<usize>],
    d: usize,
) -> Vec<Option<usize>> {
    let mut dist = vec![usize::MAX; net.nodes];
    dist[d] = 0;
    let mut bfs = VecDeque::from([d]);
    while let Some(u) = bfs.pop_front() {
        for &l in &out_links[u] {
            let v = dl[l].1;
            // Hosts do not forward.
            if dist[v] == usize::MAX && (u == d || u >= net.hosts) {
                dist[v] = dist[u] + 1;
                bfs.push_back(v);
            }
        }
    }
    (0..net.nodes)
        .map(|u| {
            if u == d || dist[u] == usize::MAX {
                return None;
            }
            if let Some(&(_, _, via)) = net.routes.iter().find(|r| r.0 == u && r.1 == d) {
                return out_links[u].iter().copied().find(|&l| dl[l].1 == via);
            }
            let c: Vec<usize> = out_links[u]
                .iter()
                .copied()
                .filter(|&l| dist[dl[l].1] + 1 == dist[u])
                .collect();
            if c.is_empty() {
                return None;
            }
            let h = (u as u64).wrapping_mul(0x9e37_79b9) ^ (d as u64).wrapping_mul(0x85eb_ca6b);
            Some(c[(h % c.len() as u64) as usize])
        })
        .collect()
}

/// One cycle of a directed graph (adjacency lists), if it has one.
pub fn find_cycle(adj: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut color = vec![0u8; adj.len()];
    for root in 0..adj.len() {
        if color[root] != 0 {
            continue;
        }
        let mut path = vec![root];
        let mut stack = vec![(root, 0usize)];
        color[root] = 1;
        while let Some((v, e)) = stack.last_mut() {
            let v = *v;
            if let Some(&w) = adj[v].get(*e) {
                *e += 1;
                if color[w] == 1 {
                    let at = path.iter().position(|&p| p == w)?;
                    return Some(path[at..].to_vec());
                }
                if color[w] == 0 {
                    color[w] = 1;
                    path.push(w);
                    stack.push((w, 0));
                }
            } else {
                color[v] = 2;
                path.pop();
                stack.pop();
            }
        }
    }
    None
}
