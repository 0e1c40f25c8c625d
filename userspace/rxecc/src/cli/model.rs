//! The cargo model (the module's own algorithms) on an incast
//! experiment's scenario, beside the testbed's runs of it: the
//! testbed's row, the model's on an ideal network, then with the
//! testbed's start skew, late period timers, a late pacer and PFC
//! added one at a time (docs/experiments.md, "The model beside the
//! testbed").

use anyhow::Result;
use clap::Args as ClapArgs;
use rxecc::report::model;
use std::path::PathBuf;

#[derive(ClapArgs)]
pub struct Args {
    pub experiment: PathBuf,
    /// The directory `rxecc run` wrote for the experiment
    /// (<DIR>/<label>/rec): the testbed's rows, its flows' start
    /// times and its timers' lateness.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Only these runs (labels).
    #[arg(long, value_delimiter = ',', value_name = "LABEL,...")]
    pub runs: Vec<String>,
    /// The network's propagation round trip: by default a scale model's
    /// paper path times k_t, else the testbed's under QEMU TCG (1.64 ms
    /// median, docs/experiments.md).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub rtt_us: Option<u64>,
    /// The run whose period timers give the lateness (one whose
    /// algorithm has a period timer running all along).
    #[arg(long, default_value = "acc")]
    pub late_from: String,
}

pub fn run(args: Args) -> Result<()> {
    let Args {
        experiment,
        from,
        runs,
        rtt_us,
        late_from,
    } = args;
    print!(
        "{}",
        model::compare(
            &experiment,
            from.as_deref(),
            &runs,
            rtt_us,
            Some(&late_from)
        )?
    );
    Ok(())
}
