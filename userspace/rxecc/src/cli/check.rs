//! Judge the hosts' reactions from a capture (classic pcap, e.g.
//! `dumpcap -P`): go-back-N after NAKs, resends of acked data, CE and
//! CNPs per data QP, and every packet's ICRC.

use anyhow::Result;
use clap::Args as ClapArgs;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    pub pcap: PathBuf,
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let Args { pcap, json } = args;
    let rep = rxecc::report::check::judge(&rxecc::report::check::read(&pcap)?);
    if json {
        println!("{}", serde_json::to_string(&rep)?);
    } else {
        rxecc::report::check::print(&rep);
    }
    Ok(())
}
