//! Loading, configuring and reading the switch's eBPF programs
//! (`switch-ebpf/`).
//!
//! One instance of `port.bpf.c` serves every port: its qdisc (kind
//! `rxecc_port`, with handle `<port id>:`) and its TC ingress program, with
//! each port's state in its id's slot of the maps, all pinned under
//! `/sys/fs/bpf/rxecc/`; a port's directory `/sys/fs/bpf/rxecc/<dev>/` says
//! that it is one. The marker (`mark.bpf.c`) is a TC egress program, one
//! per port, that reuses the ports' maps at its port's slot.
//!
//! - [`loader`]: loading and pinning the programs, making a device a port
//!   or a marker's, network namespaces;
//! - [`config`]: each feature's settings (rate, marking, INT and ICC, flow
//!   control and the shared buffer), written into a loaded port's maps;
//! - [`gfc`]: GFC's thresholds from the paper's conditions (pure);
//! - [`inject`]: fault-injection rules at a port's ingress;
//! - [`stats`]: reading counters, queue-length histograms and PFC events.

use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::path::Path;

pub mod config;
pub mod gfc;
pub mod inject;
pub mod loader;
pub mod portsum;
pub mod selftest;
pub mod stats;

pub use config::*;
pub use gfc::*;
pub use inject::*;
pub use loader::*;
pub use stats::*;

pub(crate) mod mark_skel {
    include!(concat!(env!("OUT_DIR"), "/mark.skel.rs"));
}
pub(crate) mod port_skel {
    include!(concat!(env!("OUT_DIR"), "/port.skel.rs"));
}
use port_skel::types::{ingress_cfg, port_state, rxecc_qlen_hist};

/// Root of everything rxecc pins.
pub const PIN_ROOT: &str = "/sys/fs/bpf/rxecc";
/// Maps shared by all ports, pinned under [`PIN_ROOT`].
const SHARED_MAPS: [&str; 6] = [
    "ingress_cfg",
    "ingress_acct",
    "switch_buf",
    "switch_ports",
    "int_deq",
    "events",
];
/// Where each switch port's ifindex is remembered (bpffs holds no files).
const IFINDEX_DIR: &str = "/run/rxecc/ifindex";
/// Each port's id (its slot in the shared `int_deq` map), by device name.
const PORT_ID_DIR: &str = "/run/rxecc/portid";
/// Port ids are 1..MAX_PORTS (`RXECC_MAX_PORTS`); 0 means none.
const MAX_PORTS: u32 = 256;
/// How many switches the shared buffer map holds.
pub const MAX_SWITCHES: u32 = 16;

/// Views a plain-old-data value as bytes, for a map update.
fn pod_bytes<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: `T` is a `Copy` C struct generated from BTF (no padding is
    // read as anything but bytes, and no references are formed to it).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// Reads a plain-old-data value out of map bytes.
fn from_bytes<T: Copy>(bytes: &[u8], what: &str) -> Result<T> {
    if bytes.len() < std::mem::size_of::<T>() {
        bail!(
            "{what}: map value is {} bytes, expected {}",
            bytes.len(),
            std::mem::size_of::<T>()
        );
    }
    // SAFETY: `bytes` holds at least one `T`, a plain-old-data C struct
    // generated from the object's BTF; read_unaligned copies it out.
    Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) })
}

fn pinned(path: &str, what: &str) -> Result<MapHandle> {
    MapHandle::from_pinned_path(path).with_context(|| format!("{what} (no {path})"))
}

/// Where the one loaded port.bpf.c pins `name` (loader's OBJ_PINS).
fn obj_pin(name: &str) -> String {
    format!("{PIN_ROOT}/{name}")
}

/// bpffs directory of a port's pinned objects.
fn pin_dir(dev: &str) -> String {
    format!("{PIN_ROOT}/{dev}")
}

/// One of the ports' maps (pinned by [`load_port_object`]) and `dev`'s key
/// in it, its port id.
fn port_slot(dev: &str, map: &str) -> Result<(MapHandle, [u8; 4])> {
    let id = port_id(dev)
        .filter(|_| is_port(dev))
        .with_context(|| format!("{dev} is not a port"))?;
    Ok((
        pinned(&obj_pin(map), "the ports' programs are not loaded")?,
        id.to_ne_bytes(),
    ))
}

/// True if `dev` is an emulated port.
pub fn is_port(dev: &str) -> bool {
    Path::new(&pin_dir(dev)).exists()
}

/// The id of port `dev` (its slot in `int_deq`), if it is a port.
pub fn port_id(dev: &str) -> Option<u32> {
    std::fs::read_to_string(format!("{PORT_ID_DIR}/{dev}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Every attached port, by name.
pub fn ports() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(PIN_ROOT)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
