//! The kernel modules the testbed runs on, loaded in one place: rdma_rxe
//! (rxe_glue's patched build, the kernel's stock one, or the patched one
//! without the go-back-N fix), rxe_cc with its knobs, and rxecc_switch (the switch's
//! kfuncs). `rxecc modules ...` on the command line; the tests' harness
//! (tb_load_rxe, tb_load_cc) and `rxecc testbed up` call the same code.
//!
//! Where each module is: next to the source tree (`$RXECC_TOP`, else the
//! tree this binary was built from), the kernel's build tree (`$KDIR`, else
//! the one `build/kdir` names), or where `$RXECC_RXE_KO`,
//! `$RXECC_RXE_WITHOUT_FIX_KO`, `$RXECC_CC_KO` or `$RXECC_SWITCH_KO` say
//! (the debug kernel's builds).

use anyhow::{bail, ensure, Context, Result};
use std::path::{Path, PathBuf};

/// Which rdma_rxe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rxe {
    /// rxe_glue's build, with the CC hooks and fixes.
    #[default]
    Patched,
    /// The patched build but for its one fix (go-back-N past a retried WQE).
    WithoutFix,
    /// The kernel's own.
    Stock,
    /// rxe_glue's build with no CC module registered: it must behave as
    /// stock (`make bench`'s stock part measures it).
    PatchedAlone,
}

impl Rxe {
    /// As the command line and experiment files name it.
    pub fn name(self) -> &'static str {
        match self {
            Rxe::Patched => "patched",
            Rxe::WithoutFix => "without-fix",
            Rxe::Stock => "stock",
            Rxe::PatchedAlone => "patched-alone",
        }
    }

    /// Whether rxe_cc is loaded on top of it.
    pub fn has_cc(self) -> bool {
        !matches!(self, Rxe::Stock | Rxe::PatchedAlone)
    }
}

/// The GID table a patched rdma_rxe gets (rxe_glue features/0002): a host here
/// has one address, and rxe's 1024 entries are 3072 sysfs attributes per
/// device, which made each `rdma link add` take close to a minute on the
/// debug kernel (docs/testing.md).
pub const GID_TBL_LEN: u32 = 16;

/// The patched rdma_rxe's writable limits (rxe_glue features/0003): the
/// requester's in-flight PSNs and the packets a QP may have in the host,
/// each with its range. Both count packets, so a scale model whose BDP in
/// packets exceeds the defaults (128, 64) raises them.
pub const RXE_PARAMS: [(&str, u64, u64); 2] = [
    ("max_unacked_psns", 1, 1023),
    ("max_inflight_skbs", 4, 4096),
];

/// Whether `name = value` is one of [`RXE_PARAMS`] within its range.
pub fn check_rxe_param(name: &str, value: u64) -> Result<()> {
    let Some((_, lo, hi)) = RXE_PARAMS.iter().find(|(n, _, _)| *n == name) else {
        bail!(
            "'{name}' is not a parameter of the patched rdma_rxe (it has {})",
            RXE_PARAMS.map(|p| p.0).join(", ")
        );
    };
    if value < *lo || value > *hi {
        bail!("{name} = {value}: {lo} to {hi}");
    }
    Ok(())
}

/// rxe_cc's knobs (its module parameters, writable at run time).
const CC_KNOBS: &str = "/sys/module/rxe_cc/parameters";

/// Sets one of rxe_cc's knobs.
pub fn set_knob(name: &str, value: &str) -> Result<()> {
    let p = Path::new(CC_KNOBS).join(name);
    ensure!(p.exists(), "rxe_cc has no knob '{name}' ({})", p.display());
    std::fs::write(&p, value).with_context(|| format!("rxe_cc refused {name} = {value}"))
}

/// rxe_cc's knobs as they stood when saved: put back by `restore`, and
/// when the guard drops, however the runs that changed them ended.
pub struct KnobGuard {
    saved: std::collections::BTreeMap<String, String>,
}

impl KnobGuard {
    /// Every knob's current value.
    pub fn save() -> Result<Self> {
        let mut saved = std::collections::BTreeMap::new();
        let rd = std::fs::read_dir(CC_KNOBS)
            .with_context(|| format!("{CC_KNOBS}: is rxe_cc loaded? (insmod rxe_cc.ko)"))?;
        for d in rd {
            let d = d?;
            let name = d.file_name().to_string_lossy().into_owned();
            if let Ok(v) = std::fs::read_to_string(d.path()) {
                saved.insert(name, v.trim().to_string());
            }
        }
        Ok(KnobGuard { saved })
    }

    /// Puts every knob back (those rxe_cc, reloaded, no longer has or
    /// refuses are left as they are).
    pub fn restore(&self) {
        for (name, v) in &self.saved {
            let _ = std::fs::write(Path::new(CC_KNOBS).join(name), v);
        }
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Writes the loaded rdma_rxe's parameters; returns the values they had,
/// to put back with the same call.
pub fn set_rxe_params(
    params: &std::collections::BTreeMap<String, u64>,
) -> Result<std::collections::BTreeMap<String, u64>> {
    let dir = Path::new("/sys/module/rdma_rxe/parameters");
    let mut old = std::collections::BTreeMap::new();
    for (name, v) in params {
        check_rxe_param(name, *v)?;
        let p = dir.join(name);
        let was = std::fs::read_to_string(&p)
            .with_context(|| format!("{}: is the patched rdma_rxe loaded?", p.display()))?;
        old.insert(name.clone(), was.trim().parse()?);
        std::fs::write(&p, v.to_string())
            .with_context(|| format!("rdma_rxe refused {name} = {v}"))?;
    }
    Ok(old)
}

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
    let ko = rxe_ko(which)?;
    match (which != Rxe::Stock, gid_tbl_len) {
        (true, n) => insmod(&ko, &[format!("gid_tbl_len={}", n.unwrap_or(GID_TBL_LEN))]),
        (false, None) => insmod(&ko, &[]),
        (false, Some(_)) => bail!("the stock rdma_rxe takes no gid_tbl_len"),
    }
}

/// Where `which` rdma_rxe.ko is.
fn rxe_ko(which: Rxe) -> Result<PathBuf> {
    Ok(match which {
        Rxe::Patched | Rxe::PatchedAlone => {
            from_env("RXECC_RXE_KO", top().join("build/rxe/rdma_rxe.ko"))
        }
        Rxe::WithoutFix => from_env(
            "RXECC_RXE_WITHOUT_FIX_KO",
            top().join("build/rxe-without-fix/rdma_rxe.ko"),
        ),
        Rxe::Stock => kdir()?.join("drivers/infiniband/sw/rxe/rdma_rxe.ko"),
    })
}

/// The loaded rdma_rxe's GNU build ID (hex), from the note the kernel
/// shows (`/sys/module/rdma_rxe/notes/.note.gnu.build-id`); None if none
/// is loaded. (The testbed kernel gives modules no `srcversion`.)
pub fn rxe_build_id() -> Option<String> {
    let note = std::fs::read("/sys/module/rdma_rxe/notes/.note.gnu.build-id").ok()?;
    build_id_in(&note).map(hex)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The descriptor of the first GNU build ID note in `bytes` (an ELF file,
/// or the note alone), found by the note's fixed header (name size 4,
/// type NT_GNU_BUILD_ID, name "GNU") rather than by parsing the ELF.
fn build_id_in(bytes: &[u8]) -> Option<&[u8]> {
    const TAIL: [u8; 8] = [3, 0, 0, 0, b'G', b'N', b'U', 0];
    let at = bytes
        .windows(TAIL.len())
        .enumerate()
        .filter(|(i, w)| *w == TAIL && *i >= 8)
        .map(|(i, _)| i)
        .find(|i| bytes[i - 8..i - 4] == [4, 0, 0, 0])?;
    let len = u32::from_le_bytes(bytes[at - 4..at].try_into().ok()?) as usize;
    bytes.get(at + TAIL.len()..at + TAIL.len() + len)
}

/// Which build the loaded rdma_rxe is: the one whose .ko file has the
/// loaded module's build ID (the patched one alone while rxe_cc is not
/// loaded); None if none is loaded or it is none of them. A build's ID is read from its file (9 MB) once per process, and
/// only when the builds before it did not match.
pub fn loaded_rxe() -> Option<Rxe> {
    use std::sync::OnceLock;
    static IDS: [OnceLock<Option<String>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let id = rxe_build_id()?;
    [Rxe::Patched, Rxe::WithoutFix, Rxe::Stock]
        .into_iter()
        .zip(&IDS)
        .find(|(w, cell)| {
            cell.get_or_init(|| {
                let ko = rxe_ko(*w).ok().and_then(|ko| std::fs::read(ko).ok())?;
                build_id_in(&ko).map(hex)
            })
            .as_deref()
                == Some(id.as_str())
        })
        .map(|(w, _)| match w {
            Rxe::Patched if !loaded("rxe_cc") => Rxe::PatchedAlone,
            w => w,
        })
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
    rmmod(&["rxe_cc", "rdma_rxe", "rxecc_switch"])
}

/// Puts `which` rdma_rxe in place of the one loaded, with rxe_cc (its
/// knobs at their defaults) on a patched build: `rxecc run`'s runs of
/// another build. No rxe device may exist (the testbed is down).
pub fn switch_rxe(which: Rxe) -> Result<()> {
    rmmod(&["rxe_cc", "rdma_rxe"])?;
    load_rxe(which, None)?;
    if which.has_cc() {
        load_cc(&[])?;
    }
    Ok(())
}

fn rmmod(modules: &[&str]) -> Result<()> {
    for m in modules.iter().copied() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_by_its_note() {
        // A note as the kernel shows it, and inside other bytes.
        let mut note = vec![4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, b'G', b'N', b'U', 0];
        note.extend([0xab, 0xcd, 0xef]);
        assert_eq!(build_id_in(&note), Some(&[0xab, 0xcd, 0xef][..]));
        let mut file = vec![3, 0, 0, 0, b'G', b'N', b'U', 0, 9, 9];
        file.extend(&note);
        file.extend([1, 2, 3]);
        assert_eq!(build_id_in(&file).map(hex).as_deref(), Some("abcdef"));
        // Cut short, or no note.
        assert_eq!(build_id_in(&note[..17]), None);
        assert_eq!(build_id_in(b"no note here"), None);
    }
}
