//! One perftest flow for scripts (`rxecc perftest pair|server|client`):
//! a server in one host's namespace and a client in another's, pinned and
//! niced as a run's pairs are (mod.rs), each side's report in a file. The
//! guest tests drive their traffic through these.

use super::{gid_index, listening};
use crate::config::topology;
use anyhow::{anyhow, bail, ensure, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// How both sides of a flow run.
pub struct Side<'a> {
    /// The perftest program (ib_write_bw, ib_send_bw, ib_write_lat, ...).
    pub tool: &'a str,
    pub nice: u32,
    /// perftest's rate in MiB/s (2 decimals, finer at low rates) instead
    /// of Gb/s.
    pub mbytes: bool,
    /// The program's own arguments (message size, iterations, ...).
    pub args: &'a [String],
    /// More of them for the server only (e.g. -e: sleep on completion
    /// events while the client polls).
    pub server_args: &'a [String],
}

/// A client that does not end within `timeout` is killed.
pub struct Limits {
    /// How long a server may take to listen (its start-up is ten times
    /// slower on the debug kernel).
    pub listen: Duration,
    pub client: Option<Duration>,
}

/// How long a server may take to end once its client has.
const SERVER_GRACE: Duration = Duration::from_secs(10);

impl Side<'_> {
    /// `ip netns exec h<host> nice taskset -c <cpu> <tool> ...`: the
    /// server without an address, the client with the server's. perftest
    /// times itself with the TSC, and under TCG the vCPUs' TSCs are not in
    /// step, so each side stays on one vCPU: clients by host, servers by
    /// port.
    fn command(&self, host: u32, port: u32, server: Option<u32>, out: &Path) -> Result<Command> {
        let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let cpu = match server {
            Some(_) => host % ncpu,
            None => port % ncpu,
        };
        let dev = format!("rxe{host}");
        let log =
            std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &format!("h{host}")])
            .args(["nice", "-n", &self.nice.to_string()])
            .args(["taskset", "-c", &cpu.to_string()])
            .arg(self.tool)
            .args(["-d", &dev, "-x", &gid_index(&dev)?])
            .args(["-p", &port.to_string(), "-F"])
            .args((!self.mbytes).then_some("--report_gbits"))
            .args(self.args)
            .args(if server.is_none() {
                self.server_args
            } else {
                &[]
            })
            .args(server.map(|s| topology::host_ip(s as usize)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        Ok(cmd)
    }

    /// Starts a server on `host` and returns once it listens on `port` (a
    /// client that comes earlier fails at once: perftest does not retry).
    pub fn server(&self, host: u32, port: u32, out: &Path, listen: Duration) -> Result<Child> {
        let mut child = self.spawn_server(host, port, out)?;
        if let Err(e) = self.await_listening(&mut child, host, port, out, Instant::now() + listen) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok(child)
    }

    fn spawn_server(&self, host: u32, port: u32, out: &Path) -> Result<Child> {
        self.command(host, port, None, out)?
            .spawn()
            .with_context(|| format!("starting {} on h{host}", self.tool))
    }

    fn await_listening(
        &self,
        child: &mut Child,
        host: u32,
        port: u32,
        out: &Path,
        deadline: Instant,
    ) -> Result<()> {
        while !listening(child.id(), self.tool, port) {
            if child.try_wait()?.is_some() {
                bail!(
                    "{} on h{host} exited before listening: {}",
                    self.tool,
                    last_lines(out, 1)
                );
            }
            ensure!(
                Instant::now() < deadline,
                "{} on h{host} did not listen on port {port} in time",
                self.tool
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// Runs a client on `host` to `server`'s `port` until it ends (or
    /// `timeout`). Writes `<out>.wall`: its start and end on the wall clock
    /// (s), against which a reader checks perftest's own timing.
    pub fn client(
        &self,
        host: u32,
        server: u32,
        port: u32,
        out: &Path,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let t0 = wall_s();
        let mut child = self
            .command(host, port, Some(server), out)?
            .spawn()
            .with_context(|| format!("starting {} on h{host}", self.tool))?;
        let status = wait_for(&mut child, timeout.map(|t| Instant::now() + t))?;
        let wall = PathBuf::from(format!("{}.wall", out.display()));
        std::fs::write(&wall, format!("{t0:.6} {:.6}\n", wall_s()))
            .with_context(|| format!("writing {}", wall.display()))?;
        match status {
            Some(st) if st.success() => Ok(()),
            Some(st) => bail!(
                "the client on h{host} failed ({st}): {}",
                last_lines(out, 2)
            ),
            None => bail!(
                "the client on h{host} did not end in {} s: killed",
                timeout.map_or(0, |t| t.as_secs())
            ),
        }
    }

    /// One flow from `client` to `server` on `port`: the server, once it
    /// listens the client, and both waited for. Writes
    /// `<prefix>-server.txt` and `<prefix>-client.txt` (and its `.wall`).
    pub fn pair(
        &self,
        client: u32,
        server: u32,
        port: u32,
        prefix: &str,
        limits: &Limits,
    ) -> Result<()> {
        self.flows(
            &[Flow {
                client,
                server,
                port,
                server_out: PathBuf::from(format!("{prefix}-server.txt")),
                client_out: PathBuf::from(format!("{prefix}-client.txt")),
            }],
            limits,
        )
    }

    /// `senders` each send to `receiver` at once, sender i to port
    /// `port_base + i`: every server first, then, once all listen, every
    /// client together. Writes `server<i>.txt` and `client<i>.txt` into
    /// `dir`.
    pub fn incast(
        &self,
        senders: &[u32],
        receiver: u32,
        port_base: u32,
        dir: &Path,
        limits: &Limits,
    ) -> Result<()> {
        ensure!(!senders.is_empty(), "an incast needs senders");
        ensure!(
            !senders.contains(&receiver),
            "h{receiver} is both a sender and the receiver"
        );
        let flows: Vec<Flow> = senders
            .iter()
            .map(|&i| Flow {
                client: i,
                server: receiver,
                port: port_base.saturating_add(i),
                server_out: dir.join(format!("server{i}.txt")),
                client_out: dir.join(format!("client{i}.txt")),
            })
            .collect();
        self.flows(&flows, limits)
    }

    /// Every flow's server, then (once all listen) every client at once,
    /// then the servers waited for. Every flow runs to its end; the error
    /// names each that failed.
    fn flows(&self, flows: &[Flow], limits: &Limits) -> Result<()> {
        let mut servers = Vec::new();
        let started = (|| -> Result<()> {
            for f in flows {
                servers.push(self.spawn_server(f.server, f.port, &f.server_out)?);
            }
            let deadline = Instant::now() + limits.listen;
            for (f, c) in flows.iter().zip(&mut servers) {
                self.await_listening(c, f.server, f.port, &f.server_out, deadline)?;
            }
            Ok(())
        })();
        if let Err(e) = started {
            for c in &mut servers {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(e);
        }
        let sent: Vec<Result<()>> = std::thread::scope(|s| {
            let clients: Vec<_> = flows
                .iter()
                .map(|f| {
                    s.spawn(move || {
                        self.client(f.client, f.server, f.port, &f.client_out, limits.client)
                    })
                })
                .collect();
            clients
                .into_iter()
                .map(|c| {
                    c.join()
                        .unwrap_or_else(|_| Err(anyhow!("a client's thread panicked")))
                })
                .collect()
        });
        let mut failed: Vec<String> = Vec::new();
        // A failed client leaves its server waiting for ever.
        let grace = Instant::now() + SERVER_GRACE;
        for ((f, c), sent) in flows.iter().zip(&mut servers).zip(sent) {
            if let Err(e) = sent {
                failed.push(format!("{e:#}"));
            }
            match wait_for(c, Some(grace))? {
                Some(st) if st.success() => {}
                Some(st) => failed.push(format!(
                    "the server on h{} failed ({st}): {}",
                    f.server,
                    last_lines(&f.server_out, 2)
                )),
                None => failed.push(format!(
                    "the server on h{} was still running {} s after its client ended: killed",
                    f.server,
                    SERVER_GRACE.as_secs()
                )),
            }
        }
        ensure!(failed.is_empty(), "{}", failed.join("\n"));
        Ok(())
    }
}

/// One flow of [`Side::flows`].
struct Flow {
    client: u32,
    server: u32,
    port: u32,
    server_out: PathBuf,
    client_out: PathBuf,
}

/// Waits for `child` until `deadline` (for ever without one); kills it
/// past that (None).
fn wait_for(child: &mut Child, deadline: Option<Instant>) -> Result<Option<ExitStatus>> {
    let Some(deadline) = deadline else {
        return Ok(Some(child.wait()?));
    };
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wall_s() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The last `n` lines of a perftest report that say something (not its
/// dashed rules), for an error.
fn last_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("---"))
        .collect();
    let said = lines[lines.len().saturating_sub(n)..].join(" / ");
    if said.is_empty() {
        format!("{} is empty", path.display())
    } else {
        format!("{said} ({})", path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_skips_rules_and_names_the_file() {
        let dir = std::env::temp_dir().join(format!("rxecc-flow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.txt");
        std::fs::write(&f, "a\n---------\n Couldn't connect to 10.77.0.1:18515\n\n").unwrap();
        assert_eq!(
            last_lines(&f, 2),
            format!("a / Couldn't connect to 10.77.0.1:18515 ({})", f.display())
        );
        std::fs::write(&f, "").unwrap();
        assert!(last_lines(&f, 2).ends_with("is empty"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_child_past_its_limit_is_killed() {
        let mut c = Command::new("sleep").arg("5").spawn().unwrap();
        let t = Instant::now();
        assert!(wait_for(&mut c, Some(t + Duration::from_millis(100)))
            .unwrap()
            .is_none());
        assert!(t.elapsed() < Duration::from_secs(4));
        let mut c = Command::new("true").spawn().unwrap();
        assert!(
            wait_for(&mut c, Some(Instant::now() + Duration::from_secs(5)))
                .unwrap()
                .is_some_and(|s| s.success())
        );
    }
}
