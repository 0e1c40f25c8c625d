//! The kernel modules the testbed runs on, loaded in one place: rdma_rxe
//! (rxe_glue's patched build, the kernel's stock one, or the patched one
//! without fix 2), rxe_cc with its knobs, and rxecc_switch (the switch's
//! kfuncs). `rxecc modules ...` on the command line; the tests' harness
//! (tb_load_rxe, tb_load_cc) and `rxecc testbed up` call the same code.
//!
//! Where each module is: next to the source tree (`$RXECC_TOP`, else the
//! tree this binary was built from), the kernel's build tree (`$KDIR`, else
//! the one `build/kdir` names), or where `$RXECC_RXE_KO`,
//! `$RXECC_RXE_WITHOUT_FIX2_KO`, `$RXECC_CC_KO` or `$RXECC_SWITCH_KO` say
//! (the debug kernel's builds).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Which rdma_rxe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Rxe {
    /// rxe_glue's build, with the CC hooks and fixes.
    Patched,
    /// The patched build but for fix 2 (go-back-N past a retried WQE).
    WithoutFix2,
    /// The kernel's own.
    Stock,
}

/// The GID table a patched rdma_rxe gets (rxe_glue fix 3): a host here
/// has one address, and rxe's 1024 entries are 3072 sysfs attributes per
/// device, which made each `rdma link add` take close to a minute on the
/// debug kernel (docs/testing.md).
pub const GID_TBL_LEN: u32 = 16;

fn top() -> PathBuf {
    std::env::var_os("RXECC_TOP").map_or_else(
        || {
            let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            p.canonicalize().unwrap_or(p)
        },
        PathBuf::from,
    )
}

fn kdir() -> Result<PathBuf> {
    if let Some(k) = std::env::var_os("KDIR") {
        return Ok(PathBuf::from(k));
    }
    let f =
        std::env::var_os("RXECC_KDIR_FILE").map_or_else(|| top().join("build/kdir"), PathBuf::from);
    let k = std::fs::read_to_string(&f)
        .with_context(|| format!("no $KDIR, and {} is missing: run `make`", f.display()))?;
    Ok(PathBuf::from(k.trim()))
}

fn from_env(var: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(var).map_or(default, PathBuf::from)
}

fn loaded(name: &str) -> bool {
    Path::new("/sys/module").join(name).exists()
}

/// insmod `ko` with `params`; insmod's own message on failure.
fn insmod(ko: &Path, params: &[String]) -> Result<()> {
    if !ko.exists() {
        bail!("{} does not exist: run `make modules`", ko.display());
    }
    let out = std::process::Command::new("insmod")
        .arg(ko)
        .args(params)
        .output()
        .context("running insmod")?;
    if !out.status.success() {
        bail!(
            "insmod {} {}: {}",
            ko.display(),
            params.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Loads rdma_rxe, `which` build, after the tunnel modules it needs where
/// the kernel builds them as modules. `gid_tbl_len`: the patched builds'
/// GID table (default [`GID_TBL_LEN`]); the stock one takes none.
pub fn load_rxe(which: Rxe, gid_tbl_len: Option<u32>) -> Result<()> {
    let k = kdir()?;
    for dep in ["net/ipv4/udp_tunnel", "net/ipv6/ip6_udp_tunnel"] {
        let ko = k.join(format!("{dep}.ko"));
        let name = dep.rsplit('/').next().unwrap_or(dep);
        if ko.exists() && !loaded(name) {
            // Built in, or loaded since: insmod's complaint is not ours.
            let _ = insmod(&ko, &[]);
        }
    }
    let (ko, params) = match which {
        Rxe::Patched => (
            from_env("RXECC_RXE_KO", top().join("build/rxe/rdma_rxe.ko")),
            true,
        ),
        Rxe::WithoutFix2 => (
            from_env(
                "RXECC_RXE_WITHOUT_FIX2_KO",
                top().join("build/rxe-without-fix2/rdma_rxe.ko"),
            ),
            true,
        ),
        Rxe::Stock => (k.join("drivers/infiniband/sw/rxe/rdma_rxe.ko"), false),
    };
    match (params, gid_tbl_len) {
        (true, n) => insmod(&ko, &[format!("gid_tbl_len={}", n.unwrap_or(GID_TBL_LEN))]),
        (false, None) => insmod(&ko, &[]),
        (false, Some(_)) => bail!("the stock rdma_rxe takes no gid_tbl_len"),
    }
}

/// Where rxe_cc.ko is (for `modinfo`: its knobs and algorithms).
pub fn cc_ko() -> PathBuf {
    from_env("RXECC_CC_KO", top().join("rxe_cc/rxe_cc.ko"))
}

/// Loads rxe_cc with module parameters (`cc=acc`, `acc_t_us=10000`, ...).
pub fn load_cc(params: &[String]) -> Result<()> {
    if !loaded("rdma_rxe") {
        bail!("rdma_rxe is not loaded (rxecc modules rxe patched)");
    }
    insmod(&cc_ko(), params)
}

/// Makes sure `rxecc_switch.ko` (the PFC kfuncs) is loaded: the port's
/// programs cannot load without it.
pub fn ensure_switch() -> Result<()> {
    if loaded("rxecc_switch") {
        return Ok(());
    }
    insmod(
        &from_env(
            "RXECC_SWITCH_KO",
            top().join("switch-ebpf/kmod/rxecc_switch.ko"),
        ),
        &[],
    )
}

/// Unloads whichever of rxe_cc, rdma_rxe and rxecc_switch are loaded, in
/// that order (rxe_cc uses rdma_rxe).
pub fn unload() -> Result<()> {
    for m in ["rxe_cc", "rdma_rxe", "rxecc_switch"] {
        if !loaded(m) {
            continue;
        }
        let out = std::process::Command::new("rmmod")
            .arg(m)
            .output()
            .context("running rmmod")?;
        if !out.status.success() {
            bail!("rmmod {m}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
    }
    Ok(())
}
