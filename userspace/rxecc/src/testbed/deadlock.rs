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

use crate::{config::topology, switch};
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

/// The trunk ports of the topology that is up, to be read and judged.
pub struct Watch {
    /// (device, its switch, the switch it sends to).
    trunks: Vec<(String, usize, usize)>,
    switches: Vec<String>,
}

/// One reading of a port, for the judge.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    pub qlen_bytes: u64,
    pub deq_pkts: u64,
    pub paused: bool,
    pub gfc_stage: u64,
}

impl From<&switch::PortStats> for Reading {
    fn from(p: &switch::PortStats) -> Self {
        Reading {
            qlen_bytes: p.qlen_bytes,
            deq_pkts: p.deq_pkts,
            paused: p.paused != 0,
            gfc_stage: p.gfc_stage,
        }
    }
}

impl Watch {
    /// The topology that is up; an error if none is.
    pub fn new() -> Result<Watch> {
        let plan = crate::testbed::current()?;
        let built = topology::load(&plan.file)?;
        Ok(Watch {
            trunks: built.trunk_ports(),
            switches: plan.switches,
        })
    }

    /// The topology that is up, if it has switch-to-switch ports.
    pub fn of_current() -> Option<Watch> {
        Watch::new().ok().filter(|w| !w.trunks.is_empty())
    }

    /// The trunk ports' devices, in the order readings are taken.
    pub fn devs(&self) -> impl Iterator<Item = &str> {
        self.trunks.iter().map(|(d, _, _)| d.as_str())
    }

    /// Reads every trunk port now.
    pub fn read(&self) -> Result<Vec<Reading>> {
        self.trunks
            .iter()
            .map(|(d, _, _)| switch::port_stats(d).map(|p| Reading::from(&p)))
            .collect()
    }

    /// What two readings `hold` apart show: a port is stuck if its queue
    /// was non-empty both times and it dequeued nothing in between, and a
    /// stuck port waits on the stuck ports of the switch it sends to.
    pub fn judge(&self, before: &[Reading], after: &[Reading], hold: Duration) -> Report {
        let n = self.trunks.len().min(before.len()).min(after.len());
        let stuck: Vec<bool> = (0..n)
            .map(|i| {
                let (a, b) = (&before[i], &after[i]);
                a.qlen_bytes > 0 && b.qlen_bytes > 0 && a.deq_pkts == b.deq_pkts
            })
            .collect();
        let waits: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| stuck[i] && stuck[j] && self.trunks[j].1 == self.trunks[i].2)
                    .collect()
            })
            .collect();
        let cycle = find_cycle(&waits)
            .map(|c| c.into_iter().map(|i| self.trunks[i].0.clone()).collect())
            .unwrap_or_default();
        let name = |s: usize| self.switches.get(s).cloned().unwrap_or_default();
        Report {
            hold_ms: hold.as_millis() as u64,
            ports: n,
            stuck: (0..n)
                .filter(|&i| stuck[i])
                .map(|i| StuckPort {
                    dev: self.trunks[i].0.clone(),
                    from: name(self.trunks[i].1),
                    to: name(self.trunks[i].2),
                    qlen_bytes: after[i].qlen_bytes,
                    paused: after[i].paused,
                    gfc_stage: after[i].gfc_stage,
                })
                .collect(),
            cycle,
        }
    }
}

/// Looks at the topology that is up for `hold`.
pub fn detect(hold: Duration) -> Result<Report> {
    let w = Watch::new()?;
    let before = w.read()?;
    std::thread::sleep(hold);
    let after = w.read()?;
    Ok(w.judge(&before, &after, hold))
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
    use super::*;

    /// The triangle's ring: port i of switch i sends to switch i+1.
    fn ring() -> Watch {
        Watch {
            trunks: (0..3)
                .map(|i| (format!("x{i}_{}", (i + 1) % 3), i, (i + 1) % 3))
                .collect(),
            switches: vec!["s0".into(), "s1".into(), "s2".into()],
        }
    }

    fn r(qlen_bytes: u64, deq_pkts: u64) -> Reading {
        Reading {
            qlen_bytes,
            deq_pkts,
            paused: true,
            gfc_stage: 0,
        }
    }

    #[test]
    fn the_judge_needs_every_port_of_the_cycle_stuck() {
        let w = ring();
        let hold = Duration::from_millis(500);
        let before = [r(100, 5), r(100, 7), r(100, 9)];
        let rep = w.judge(&before, &[r(100, 5), r(90, 7), r(100, 9)], hold);
        assert_eq!(rep.cycle, ["x0_1", "x1_2", "x2_0"]);
        assert_eq!(rep.stuck.len(), 3);
        assert_eq!(
            (rep.stuck[1].from.as_str(), rep.stuck[1].to.as_str()),
            ("s1", "s2")
        );
        // One port sent a packet: the others wait on a port that moves.
        let rep = w.judge(&before, &[r(100, 5), r(100, 8), r(100, 9)], hold);
        assert!(rep.cycle.is_empty());
        assert_eq!(rep.stuck.len(), 2);
        // An empty queue is idle, not stuck.
        let rep = w.judge(&before, &[r(100, 5), r(0, 7), r(100, 9)], hold);
        assert!(rep.cycle.is_empty());
        assert!(rep.to_string().starts_with("no deadlock: 2 of 3"));
        // Readings of fewer ports than the topology has are judged as far
        // as they go.
        assert_eq!(w.judge(&before[..1], &before[..1], hold).ports, 1);
    }

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
