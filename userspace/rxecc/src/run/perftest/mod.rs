//! perftest as a run's traffic source (`traffic = "perftest"`): the flows
//! of the flow file, grouped into perftest pairs (one server, one client,
//! a QP per flow), started at their times, and recorded in flowgen's CSV
//! format (`perftest-h<N>.csv`), so that fct.txt, the summary and the
//! named metrics read them as they read flowgen's.
//!
//! A record's start is when the client was started, its end when the
//! client exited: perftest's own set-up (its TCP exchange and the QPs'
//! connection) is inside the time, and the end is known to a poll (at
//! most 50 ms late). perftest's report of each pair is kept beside it.

pub mod flow;

use crate::clock::monotonic_ns;
use crate::config::perftest::{tool, Pair};
use crate::config::topology;
use anyhow::{bail, ensure, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The first pair's TCP port; pair k listens on BASE_PORT + k.
const BASE_PORT: u32 = 18700;
/// perftest busy-polls its completion queue; niced, it leaves the
/// kworkers that run rxe and the switch's ports their CPU (as
/// testbed/netns.sh's clients).
pub const NICE: u32 = 19;

/// The index of rxe device `dev`'s RoCE v2 GID for its IPv4 address.
pub fn gid_index(dev: &str) -> Result<String> {
    let port = Path::new("/sys/class/infiniband").join(dev).join("ports/1");
    let mut idx: Vec<u32> = std::fs::read_dir(port.join("gids"))
        .with_context(|| format!("{dev}: reading its GIDs"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    idx.sort_unstable();
    for i in idx {
        let gid = std::fs::read_to_string(port.join(format!("gids/{i}"))).unwrap_or_default();
        let kind =
            std::fs::read_to_string(port.join(format!("gid_attrs/types/{i}"))).unwrap_or_default();
        if gid.starts_with("0000:0000:0000:0000:0000:ffff:") && kind.trim() == "RoCE v2" {
            return Ok(i.to_string());
        }
    }
    bail!("{dev} has no IPv4 RoCE v2 GID")
}

/// True once `pid` runs `comm` (so `ip netns exec` and the wrappers have
/// exec'd it) and a TCP socket of its namespace listens on `port`.
pub fn listening(pid: u32, comm: &str, port: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let running = std::fs::read_to_string(proc.join("comm"))
        .is_ok_and(|c| c.trim_end() == &comm[..comm.len().min(15)]);
    let hex = format!(":{port:04X}");
    running
        && ["net/tcp", "net/tcp6"].iter().any(|f| {
            std::fs::read_to_string(proc.join(f)).is_ok_and(|t| {
                t.lines().skip(1).any(|l| {
                    let mut w = l.split_whitespace().skip(1);
                    let local = w.next().unwrap_or("");
                    let state = w.nth(1).unwrap_or("");
                    local.ends_with(&hex) && state == "0A"
                })
            })
        })
}

/// What one run's perftest pairs are doing.
pub struct Runner {
    pairs: Vec<Pair>,
    tool: &'static str,
    /// Arguments both sides take (message size, ACK timeout, report unit).
    common: Vec<String>,
    /// Each host's network namespace.
    ns: Vec<String>,
    /// The GID index of each host the pairs use (`-x`), read once.
    gids: BTreeMap<u32, String>,
    /// vCPUs to pin to: clients by host, servers by port.
    ncpu: u32,
    out: PathBuf,
    servers: Vec<Child>,
    /// Per pair: the client while it runs, when it started and ended,
    /// and how it ended.
    clients: Vec<Option<Child>>,
    started: Vec<Option<u64>>,
    ended: Vec<Option<(u64, String)>>,
    epoch: u64,
    /// The flow file's time of the epoch (its earliest start), ns.
    t0_ns: u64,
    deadline: u64,
}

/// A run's settings for its perftest pairs.
pub struct Settings<'a> {
    pub op: &'a str,
    pub message_bytes: u64,
    pub ack_timeout: Option<u8>,
    pub setup_s: u64,
    pub timeout_s: u64,
}

impl Runner {
    /// Starts every pair's server, waits until each listens (up to
    /// `setup_s`), and sets the epoch a quarter second later, as flowgen
    /// does once its QPs are connected. The epoch is written to
    /// `epoch_file` for the run's other readers.
    pub fn start(
        pairs: Vec<Pair>,
        ns: &[String],
        s: &Settings<'_>,
        out: &Path,
        epoch_file: &Path,
    ) -> Result<Self> {
        let tool = tool(s.op)?;
        let mut common = vec![
            "-s".to_string(),
            s.message_bytes.to_string(),
            "-F".into(),
            "--report_gbits".into(),
        ];
        if let Some(t) = s.ack_timeout {
            common.extend(["-u".into(), t.to_string()]);
        }
        let mut gids = BTreeMap::new();
        for h in pairs.iter().flat_map(|p| [p.src, p.dst]) {
            if let std::collections::btree_map::Entry::Vacant(v) = gids.entry(h) {
                v.insert(gid_index(&format!("rxe{h}"))?);
            }
        }
        let mut r = Runner {
            tool,
            common,
            ns: ns.to_vec(),
            gids,
            ncpu: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            out: out.to_path_buf(),
            servers: Vec::new(),
            clients: (0..pairs.len()).map(|_| None).collect(),
            started: vec![None; pairs.len()],
            ended: vec![None; pairs.len()],
            epoch: 0,
            t0_ns: pairs
                .iter()
                .map(|p| (p.start_s * 1e9).round() as u64)
                .min()
                .unwrap_or(0),
            deadline: 0,
            pairs,
        };
        let started = (|| -> Result<()> {
            for k in 0..r.pairs.len() {
                let port = BASE_PORT + k as u32;
                let p = &r.pairs[k];
                let log = std::fs::File::create(out.join(format!("perftest-p{k}-server.txt")))?;
                let child = r
                    .command(p.dst, port % r.ncpu, port, p)
                    .stdout(log.try_clone()?)
                    .stderr(log)
                    .spawn()
                    .with_context(|| format!("starting {} (ip netns exec ...)", r.tool))?;
                r.servers.push(child);
            }
            let limit = monotonic_ns() + s.setup_s.saturating_mul(1_000_000_000);
            for (k, c) in r.servers.iter_mut().enumerate() {
                let port = BASE_PORT + k as u32;
                while !listening(c.id(), tool, port) {
                    if c.try_wait()?.is_some() {
                        bail!(
                            "perftest: the server of pair {k} (h{}) exited before listening (see \
                             perftest-p{k}-server.txt)",
                            r.pairs[k].dst
                        );
                    }
                    ensure!(
                        monotonic_ns() < limit,
                        "perftest: the server of pair {k} (h{}) did not listen on port {port} in \
                         {} s (setup_s)",
                        r.pairs[k].dst,
                        s.setup_s
                    );
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            Ok(())
        })();
        if let Err(e) = started {
            r.kill();
            return Err(e);
        }
        r.epoch = monotonic_ns() + 250_000_000;
        r.deadline = r.epoch + s.timeout_s.saturating_mul(1_000_000_000);
        std::fs::write(epoch_file, format!("{}\n", r.epoch))
            .with_context(|| format!("writing {}", epoch_file.display()))?;
        Ok(r)
    }

    /// `ip netns exec h<host> nice taskset -c <cpu> <tool> ...` for pair
    /// `p`'s side on `host`: the server without an address, the client
    /// with the server's.
    fn command(&self, host: u32, cpu: u32, port: u32, p: &Pair) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns[host as usize]])
            .args([
                "nice",
                "-n",
                &NICE.to_string(),
                "taskset",
                "-c",
                &cpu.to_string(),
            ])
            .arg(self.tool)
            .args(["-d", &format!("rxe{host}"), "-x", &self.gids[&host]])
            .args(["-p", &port.to_string()])
            .args(["-q", &p.ids.len().to_string()])
            .args(["-n", &p.iters.to_string()])
            .args(&self.common)
            .stdin(Stdio::null());
        cmd
    }

    /// When pair `p` is due: the epoch plus its start in the flow file.
    fn due_ns(&self, p: &Pair) -> u64 {
        self.epoch + ((p.start_s * 1e9).round() as u64).saturating_sub(self.t0_ns)
    }

    /// Starts the clients that are due, and notes those that ended. A
    /// client past the run's timeout is killed.
    pub fn poll(&mut self) -> Result<()> {
        let now = monotonic_ns();
        for k in 0..self.pairs.len() {
            let p = &self.pairs[k];
            if self.started[k].is_none() && now >= self.due_ns(p) {
                let log = std::fs::File::create(self.out.join(format!("perftest-p{k}.txt")))?;
                let mut cmd = self.command(p.src, p.src % self.ncpu, BASE_PORT + k as u32, p);
                cmd.arg(topology::host_ip(p.dst as usize))
                    .stdout(log.try_clone()?)
                    .stderr(log);
                self.started[k] = Some(monotonic_ns());
                match cmd.spawn() {
                    Ok(c) => self.clients[k] = Some(c),
                    Err(e) => self.ended[k] = Some((monotonic_ns(), format!("spawn: {e}"))),
                }
            }
            if let Some(c) = &mut self.clients[k] {
                let status = match c.try_wait()? {
                    Some(st) if st.success() => Some("ok".to_string()),
                    Some(st) => Some(format!("exit {}", st.code().unwrap_or(-1))),
                    None if now >= self.deadline => {
                        let _ = c.kill();
                        let _ = c.wait();
                        Some("timeout".to_string())
                    }
                    None => None,
                };
                if let Some(s) = status {
                    self.ended[k] = Some((monotonic_ns(), s));
                    self.clients[k] = None;
                }
            }
        }
        Ok(())
    }

    /// True while a client is due or running.
    pub fn running(&self) -> bool {
        self.ended.iter().any(Option::is_none)
    }

    /// Hosts whose clients did not end well.
    pub fn failed_hosts(&self) -> Vec<u32> {
        let mut h: Vec<u32> = self
            .pairs
            .iter()
            .zip(&self.ended)
            .filter(|(_, e)| e.as_ref().is_some_and(|(_, s)| s != "ok"))
            .map(|(p, _)| p.src)
            .collect();
        h.sort_unstable();
        h.dedup();
        h
    }

    fn kill(&mut self) {
        for c in self.clients.iter_mut().flatten().chain(&mut self.servers) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops what still runs, waits for the servers, and writes each
    /// source host's records (`perftest-h<N>.csv`, flowgen's columns).
    pub fn finish(mut self, op: &str) -> Result<()> {
        for c in self.clients.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // A server whose client ended has ended too, or does so at once.
        let limit = monotonic_ns() + 10_000_000_000;
        for c in &mut self.servers {
            while c.try_wait()?.is_none() && monotonic_ns() < limit {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        let mut hosts: Vec<u32> = self.pairs.iter().map(|p| p.src).collect();
        hosts.sort_unstable();
        hosts.dedup();
        for h in hosts {
            let mut csv =
                String::from("id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n");
            for (k, p) in self.pairs.iter().enumerate().filter(|(_, p)| p.src == h) {
                let start = self.started[k].unwrap_or(0);
                let (end, status) = self.ended[k]
                    .clone()
                    .unwrap_or((0, "not started".to_string()));
                for id in &p.ids {
                    csv.push_str(&format!(
                        "{id},{},{},{},{op},{},{},{start},{end},{status}\n",
                        p.src,
                        p.dst,
                        p.dport,
                        p.size,
                        self.due_ns(p)
                    ));
                }
            }
            std::fs::write(self.out.join(format!("perftest-h{h}.csv")), csv)?;
        }
        Ok(())
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.kill();
    }
}
