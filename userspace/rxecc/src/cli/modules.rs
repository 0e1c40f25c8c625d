//! Load or unload the testbed's kernel modules: rdma_rxe, rxe_cc and
//! rxecc_switch (rxecc::modules says where each is found).

use anyhow::Result;
use clap::Subcommand;
use rxecc::modules::{self, Rxe};

#[derive(Subcommand)]
pub enum Cmd {
    /// Load rdma_rxe (and the tunnel modules it needs).
    Rxe {
        #[arg(value_enum)]
        which: Rxe,
        /// The patched builds' GID table length (rxe_glue features/0002).
        #[arg(long, value_parser = clap::value_parser!(u32))]
        gid_tbl_len: Option<u32>,
    },
    /// Load rxe_cc with its parameters, e.g. `cc=acc acc_t_us=10000`.
    Cc {
        #[arg(value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
    /// Unload rxe_cc, rdma_rxe and rxecc_switch, those that are loaded.
    Unload,
    /// Print where rxe_cc.ko is (for modinfo).
    CcPath,
}

pub fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Rxe { which, gid_tbl_len } => modules::load_rxe(which, gid_tbl_len),
        Cmd::Cc { params } => modules::load_cc(&params),
        Cmd::Unload => modules::unload(),
        Cmd::CcPath => {
            println!("{}", modules::cc_ko().display());
            Ok(())
        }
    }
}
