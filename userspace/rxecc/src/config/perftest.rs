//! perftest as a run's traffic source (`traffic = "perftest"`): how the
//! flows of a flow file become perftest pairs, checked when the
//! experiment loads; run/perftest.rs runs them.

use crate::config::workload::Flow;
use anyhow::{bail, ensure, Result};

/// perftest's message size unless the experiment sets `message_bytes`.
pub const DEFAULT_MESSAGE_BYTES: u64 = 65536;
/// One perftest server and client: the flows with the same source,
/// destination, destination port, size and start, one QP each.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub src: u32,
    pub dst: u32,
    pub dport: u32,
    /// Each flow's bytes.
    pub size: u64,
    pub start_s: f64,
    /// The flows' ids (their lines in the flow file, from 0): one QP each.
    pub ids: Vec<u32>,
    /// Messages per QP (-n).
    pub iters: u64,
}

/// The flows as perftest pairs with messages of `msg` bytes, in order of
/// their first flow. A flow's size must be a whole number of messages.
pub fn pairs(flows: &[Flow], msg: u64) -> Result<Vec<Pair>> {
    ensure!(msg > 0, "perftest: a message of 0 bytes");
    let mut out: Vec<Pair> = Vec::new();
    for (id, f) in flows.iter().enumerate() {
        ensure!(
            f.size >= msg && f.size % msg == 0,
            "perftest: flow {id} ({} -> {}) of {} B is not a whole number of {msg} B messages \
             (message_bytes)",
            f.src,
            f.dst,
            f.size
        );
        let same = |p: &&mut Pair| {
            (p.src, p.dst, p.dport, p.size) == (f.src, f.dst, f.dport, f.size)
                && p.start_s == f.start_s
        };
        match out.iter_mut().find(same) {
            Some(p) => p.ids.push(id as u32),
            None => out.push(Pair {
                src: f.src,
                dst: f.dst,
                dport: f.dport,
                size: f.size,
                start_s: f.start_s,
                ids: vec![id as u32],
                iters: f.size / msg,
            }),
        }
    }
    ensure!(
        out.len() <= 1000,
        "perftest: {} pairs; at most 1000 (one TCP port each)",
        out.len()
    );
    Ok(out)
}

/// The perftest program for a verbs operation.
pub fn tool(op: &str) -> Result<&'static str> {
    Ok(match op {
        "write" => "ib_write_bw",
        "read" => "ib_read_bw",
        "send" => "ib_send_bw",
        _ => bail!("perftest: op '{op}': write, read or send"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(src: u32, dst: u32, size: u64, start_s: f64) -> Flow {
        Flow {
            src,
            dst,
            pg: 3,
            dport: 100,
            size,
            start_s,
        }
    }

    #[test]
    fn alike_flows_share_a_pair() {
        // ring-cc-flows.txt's shape: four QPs per host, hosts apart.
        let mut f = Vec::new();
        for (h, t) in [(0, 0.0), (1, 0.5), (2, 1.0)] {
            for _ in 0..4 {
                f.push(flow(h, (h + 2) % 3, 60 * 65536, t));
            }
        }
        let p = pairs(&f, 65536).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].ids, vec![4, 5, 6, 7]);
        assert_eq!((p[1].src, p[1].dst, p[1].iters), (1, 0, 60));
        // Another start or size: a pair of its own.
        f.push(flow(0, 2, 60 * 65536, 0.1));
        f.push(flow(0, 2, 30 * 65536, 0.0));
        assert_eq!(pairs(&f, 65536).unwrap().len(), 5);
    }

    #[test]
    fn a_flow_must_be_whole_messages() {
        let e = pairs(&[flow(0, 1, 100_000, 0.0)], 65536).unwrap_err();
        assert!(format!("{e}").contains("whole number"), "{e}");
        assert!(pairs(&[flow(0, 1, 1000, 0.0)], 65536).is_err());
        assert!(tool("atomic").is_err());
        assert_eq!(tool("read").unwrap(), "ib_read_bw");
    }
}
