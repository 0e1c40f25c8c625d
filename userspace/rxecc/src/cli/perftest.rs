//! `rxecc perftest pair|incast|server|client|gid`: one perftest flow between two
//! testbed hosts (h<i>, rxe<i>), for scripts (run/perftest/flow.rs).

use anyhow::Result;
use clap::{Args as ClapArgs, Subcommand};
use rxecc::run::perftest::{self, flow};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Subcommand)]
pub enum Cmd {
    /// One flow: a server on SERVER, once it listens a client on CLIENT,
    /// and both waited for (a server whose client failed is killed after
    /// 10 s). Writes <OUT>-server.txt, <OUT>-client.txt and
    /// <OUT>-client.txt.wall (the client's start and end, wall clock s).
    Pair {
        /// The sending host: h<CLIENT>, rxe<CLIENT>.
        client: u32,
        /// The receiving host.
        server: u32,
        /// Output files' prefix, e.g. /tmp/t/clean.
        #[arg(long)]
        out: String,
        #[command(flatten)]
        side: SideArgs,
        /// Kill the client after this many seconds.
        #[arg(long)]
        timeout_s: Option<u64>,
        /// perftest's own arguments, after `--` (-s 65536 -n 100 ...).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// An incast: each of --from sends to --to at once, sender i to port
    /// PORT + i; every server first, every client once all listen.
    /// Writes <OUT>/server<i>.txt and <OUT>/client<i>.txt.
    Incast {
        #[arg(long, value_delimiter = ',', required = true)]
        from: Vec<u32>,
        #[arg(long)]
        to: u32,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        side: SideArgs,
        #[arg(long)]
        timeout_s: Option<u64>,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// A server on HOST, started in the background; returns once it
    /// listens (for a client in another guest: docs/vms.md).
    Server {
        host: u32,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        side: SideArgs,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// A client on HOST to SERVER, waited for; also writes <OUT>.wall.
    Client {
        host: u32,
        /// The host whose server it connects to.
        server: u32,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        side: SideArgs,
        #[arg(long)]
        timeout_s: Option<u64>,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The index of rxe<HOST>'s RoCE v2 GID for its IPv4 address.
    Gid { host: u32 },
}

#[derive(ClapArgs)]
pub struct SideArgs {
    /// The server's TCP port (an incast's first: sender i's is PORT + i).
    #[arg(long)]
    port: u32,
    #[arg(long, default_value = "ib_write_bw", value_parser = [
        "ib_write_bw", "ib_send_bw", "ib_read_bw", "ib_atomic_bw",
        "ib_write_lat", "ib_send_lat", "ib_read_lat", "ib_atomic_lat",
    ])]
    tool: String,
    /// perftest busy-polls its completion queue: niced, it leaves rxe's
    /// and the ports' kworkers their CPU.
    #[arg(long, default_value_t = perftest::NICE)]
    nice: u32,
    /// Report MiB/s (finer at low rates) instead of Gb/s.
    #[arg(long)]
    mbytes: bool,
    /// How long a server may take to listen (its start-up is 8 s of CPU
    /// on the debug kernel, 0.8 s on the normal one).
    #[arg(long, default_value_t = 30)]
    listen_timeout_s: u64,
    /// A perftest argument for the server only (repeat it for more),
    /// e.g. --server-arg=-e.
    #[arg(long = "server-arg", allow_hyphen_values = true)]
    server_args: Vec<String>,
}

impl SideArgs {
    fn side<'a>(&'a self, args: &'a [String]) -> flow::Side<'a> {
        flow::Side {
            tool: &self.tool,
            nice: self.nice,
            mbytes: self.mbytes,
            args,
            server_args: &self.server_args,
        }
    }

    fn limits(&self, timeout_s: Option<u64>) -> flow::Limits {
        flow::Limits {
            listen: Duration::from_secs(self.listen_timeout_s),
            client: timeout_s.map(Duration::from_secs),
        }
    }
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Pair {
            client,
            server,
            out,
            side,
            timeout_s,
            args,
        } => side
            .side(&args)
            .pair(client, server, side.port, &out, &side.limits(timeout_s)),
        Cmd::Incast {
            from,
            to,
            out,
            side,
            timeout_s,
            args,
        } => side
            .side(&args)
            .incast(&from, to, side.port, &out, &side.limits(timeout_s)),
        Cmd::Server {
            host,
            out,
            side,
            args,
        } => {
            let limits = side.limits(None);
            // Left running: its client, in another guest, ends it.
            side.side(&args)
                .server(host, side.port, &out, limits.listen)
                .map(drop)
        }
        Cmd::Client {
            host,
            server,
            out,
            side,
            timeout_s,
            args,
        } => side
            .side(&args)
            .client(host, server, side.port, &out, side.limits(timeout_s).client),
        Cmd::Gid { host } => {
            println!("{}", perftest::gid_index(&format!("rxe{host}"))?);
            Ok(())
        }
    }
}
