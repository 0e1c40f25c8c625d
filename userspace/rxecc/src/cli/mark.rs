//! Attach the ECN marker (switch-ebpf/mark.bpf.c) to a port's egress:
//! every ECN-capable RoCEv2 packet leaving `dev` gets the mark.

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::switch;

#[derive(ClapArgs)]
pub struct Args {
    /// Network device, e.g. a bridge port.
    #[arg(long)]
    pub dev: String,
    #[arg(long, value_enum)]
    pub mode: switch::MarkMode,
}

pub fn run(args: Args) -> Result<()> {
    let Args { dev, mode } = args;
    switch::attach_marker(&dev, mode)?;
    Ok(())
}
