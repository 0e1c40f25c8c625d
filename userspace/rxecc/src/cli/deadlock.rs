//! Look for a deadlock: a cycle of switch-to-switch ports, each with
//! bytes queued and nothing dequeued for `--hold-ms`, each waiting on
//! the next one's switch. Exit status 0 either way; the first line
//! says which (`deadlock: ...` or `no deadlock`).

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::testbed::deadlock;

#[derive(ClapArgs)]
pub struct Args {
    /// How long a port must have sent nothing with bytes queued.
    #[arg(long, default_value_t = 1000)]
    pub hold_ms: u64,
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let Args { hold_ms, json } = args;
    let r = deadlock::detect(std::time::Duration::from_millis(hold_ms))?;
    // A reader that stops early (`| head -1`) is not an error.
    use std::io::Write;
    let text = if json {
        format!("{}\n", serde_json::to_string(&r)?)
    } else {
        r.to_string()
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(())
}
