//! Deadlock detection (`rxecc deadlock`).
//!
//! A PFC deadlock is a cycle of switch-to-switch ports, each paused by the
//! next switch, whose ingress buffer is full of bytes waiting in the next
//! port of the cycle. Seen from the counters: every port of the cycle has
//! bytes queued and sends nothing, for as long as one looks. rxecc reads
//! every trunk port twice, `hold` apart; a port is stuck if its queue was
//! non-empty both times and it dequeued nothing in between, and a stuck
//! port waits on the stuck ports of the switch it sends to. A cycle in that
//! wait-for graph is a deadlock.

use crate::{switch, topology};
use anyhow::Result;
use serde::Serialize;
use std::time::Duration;

/// A switch-to-switch port that sent nothing with bytes queued.
#[derive(Clone, Debug, Serialize)]
pub struct StuckPort {
    pub dev: String,
    /// Its switch, and the switch it sends to.
    pub from: String,
    pub to: String,
    pub qlen_bytes: u64,
    /// Paused by PFC at the second reading.
    pub paused: bool,
    /// The GFC stage it was held at (rate C >> stage); 0 without GFC.
    pub gfc_stage: u64,
}

/// What one look found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub hold_ms: u64,
    /// Trunk ports looked at.
    pub ports: usize,
    pub stuck: Vec<StuckPort>,
    /// The ports of one deadlocked cycle, in wait order; empty if none.
    pub cycle: Vec<String>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cycle.is_empty() {
            writeln!(
                f,
                "no deadlock: {} of {} switch-to-switch ports stuck for {} ms",
                self.stuck.len(),
                self.ports,
                self.hold_ms
            )?;
        } else {
            writeln!(
                f,
                "deadlock: {} -> {} (each with bytes queued and nothing sent for {} ms)",
                self.cycle.join(" -> "),
                self.cycle[0],
                self.hold_ms
            )?;
        }
        for s in &self.stuck {
            writeln!(
                f,
                "  {} ({} -> {}): {} B queued, {}",
                s.dev,
                s.from,
                s.to,
                s.qlen_bytes,
                if s.paused {
                    "paused".to_string()
                } else if s.gfc_stage > 0 {
                    format!("GFC stage {}", s.gfc_stage)
                } else {
                    "not paused".to_string()
                }
            )?;
        }
        Ok(())
    }
}

/// Looks at the topology that is up for `hold`.
pub fn detect(hold: Duration) -> Result<Report> {
    let plan = topology::current()?;
    let built = topology::load(&plan.file)?;
    let trunks = built.trunk_ports();
    let read = || -> Result<Vec<switch::PortStats>> {
        trunks
            .iter()
            .map(|(d, _, _)| switch::port_stats(d))
            .collect()
    };
    let before = read()?;
    std::thread::sleep(hold);
    let after = read()?;
    let stuck: Vec<bool> = before
        .iter()
        .zip(&after)
        .map(|(a, b)| a.qlen_bytes > 0 && b.qlen_bytes > 0 && a.deq_pkts == b.deq_pkts)
        .collect();
    // Stuck port i waits on every stuck port of the switch it sends to.
    let waits: Vec<Vec<usize>> = (0..trunks.len())
        .map(|i| {
            (0..trunks.len())
                .filter(|&j| stuck[i] && stuck[j] && trunks[j].1 == trunks[i].2)
                .collect()
        })
        .collect();
    let cycle = find_cycle(&waits)
        .map(|c| c.into_iter().map(|i| trunks[i].0.clone()).collect())
        .unwrap_or_default();
    let name = |s: usize| plan.switches.get(s).cloned().unwrap_or_default();
    Ok(Report {
        hold_ms: hold.as_millis() as u64,
        ports: trunks.len(),
        stuck: (0..trunks.len())
            .filter(|&i| stuck[i])
            .map(|i| StuckPort {
                dev: trunks[i].0.clone(),
                from: name(trunks[i].1),
                to: name(trunks[i].2),
                qlen_bytes: after[i].qlen_bytes,
                paused: after[i].paused != 0,
                gfc_stage: after[i].gfc_stage,
            })
            .collect(),
        cycle,
    })
}

/// One cycle of a directed graph (adjacency lists), in edge order, if it
/// has one.
pub fn find_cycle(adj: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut color = vec![0u8; adj.len()];
    let mut path: Vec<usize> = Vec::new();
    for root in 0..adj.len() {
        if color[root] != 0 {
            continue;
        }
        // Iterative DFS: (node, next edge to try).
        let mut stack = vec![(root, 0usize)];
        color[root] = 1;
        path.push(root);
        while let Some((v, e)) = stack.last_mut() {
            let v = *v;
            match adj[v].get(*e) {
                Some(&w) => {
                    *e += 1;
                    match color.get(w) {
                        Some(1) => {
                            let at = path.iter().position(|&p| p == w)?;
                            return Some(path[at..].to_vec());
                        }
                        Some(0) => {
                            color[w] = 1;
                            path.push(w);
                            stack.push((w, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    color[v] = 2;
                    path.pop();
                    stack.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn cycles_are_found_and_only_cycles() {
        // The triangle's ring: 0 -> 1 -> 2 -> 0.
        assert_eq!(
            find_cycle(&[vec![1], vec![2], vec![0]]),
            Some(vec![0, 1, 2])
        );
        // A chain that ends: no cycle.
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![]]), None);
        // A tail into a cycle: the cycle alone.
        assert_eq!(
            find_cycle(&[vec![1], vec![2], vec![3], vec![1]]),
            Some(vec![1, 2, 3])
        );
        // A self-wait counts (a port waiting on its own switch).
        assert_eq!(find_cycle(&[vec![0]]), Some(vec![0]));
        assert_eq!(find_cycle(&[]), None);
        // Diamond without a cycle.
        assert_eq!(find_cycle(&[vec![1, 2], vec![3], vec![3], vec![]]), None);
    }
}
