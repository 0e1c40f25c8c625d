//! Compiles the switch's eBPF programs (`switch-ebpf/*.bpf.c`) with clang and
//! generates their libbpf-rs skeletons.

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

const PROGRAMS: &[&str] = &["mark"];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let src_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../switch-ebpf");
    // Debian keeps the asm/ uapi headers under the multiarch directory.
    let multiarch = "/usr/include/x86_64-linux-gnu";
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang-19".to_string());
    for prog in PROGRAMS {
        let src = src_dir.join(format!("{prog}.bpf.c"));
        println!("cargo:rerun-if-changed={}", src.display());
        SkeletonBuilder::new()
            .source(&src)
            .clang(&clang)
            .clang_args(["-I", multiarch, "-Wall", "-Werror", "-O2", "-g"])
            .build_and_generate(out.join(format!("{prog}.skel.rs")))
            .unwrap_or_else(|e| panic!("building {}: {e:#}", src.display()));
    }
}
