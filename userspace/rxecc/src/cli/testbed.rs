//! Bring a topology up or down (namespaces, bridges, rxe, ports).

use anyhow::Result;
use clap::Subcommand;
use rxecc::{switch, testbed};

#[derive(Subcommand)]
pub enum Cmd {
    /// Build a topology from its TOML file (see testbed/topologies/).
    Up {
        /// A topology file, or the name of one in testbed/topologies/.
        topology: String,
        /// Print what would be run instead of running it.
        #[arg(long)]
        dry_run: bool,
        /// Build only this guest's part of a testbed of several guests
        /// (run by testbed/vms.sh in each guest it boots).
        #[arg(long)]
        guest: Option<String>,
        /// With --guest: the device that plays a port on a link to another
        /// guest or machine, PORT=DEV (e.g. --nic p1=enp3s0, --nic
        /// v1=eth1); a port not named is the NIC with its MAC (vms.sh).
        #[arg(long, value_name = "PORT=DEV")]
        nic: Vec<String>,
    },
    /// The guests of a testbed of several (testbed/vms.sh), a line each:
    /// `file PATH` (the topology's), `hosts N`, `guest NAME NODE...`, then
    /// per NIC `nic GUEST DEV MAC LOCAL_PORT
    /// REMOTE_PORT` (QEMU dgram netdevs on 127.0.0.1).
    Guests {
        topology: String,
        /// The first UDP port of the links between guests.
        #[arg(long, default_value_t = 47000)]
        base_port: u16,
    },
    /// Tear down what `up` built.
    Down,
    /// Print the topology that is up (JSON).
    Show,
    /// Change every switch's flow control while the testbed runs: each
    /// port's egress first learns the new mode, then each ingress port
    /// sends by it; thresholds come from the topology file (GFC needs
    /// `gfc_bm_bytes` there). Nothing is dropped for the change.
    FlowControl {
        #[arg(long, value_enum)]
        mode: switch::FlowControl,
    },
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Up {
            topology,
            dry_run,
            guest,
            nic,
        } => testbed::up_logged(&topology, dry_run, true, guest.as_deref(), &nic)?,
        Cmd::Guests {
            topology,
            base_port,
        } => print!("{}", testbed::guests_text(&topology, base_port)?),
        Cmd::Down => testbed::down()?,
        Cmd::FlowControl { mode } => testbed::set_flow_control(mode)?,
        Cmd::Show => {
            println!("{}", serde_json::to_string_pretty(&testbed::current()?)?)
        }
    }
    Ok(())
}
