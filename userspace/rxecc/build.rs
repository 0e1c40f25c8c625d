//! Compiles the switch's eBPF programs (`switch-ebpf/*.bpf.c`) and `rxecc
//! record`'s (`bpf/record.bpf.c`) with clang and generates their libbpf-rs
//! skeletons.

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

/// (program, directory, CO-RE). `mark` and `record` use only uapi headers;
/// `port` is CO-RE against the testbed kernel (its vmlinux.h and libbpf
/// headers come from RXECC_BPF_INCLUDE, which `make` sets).
const PROGRAMS: &[(&str, &str, bool)] = &[
    ("mark", "../../switch-ebpf", false),
    ("port", "../../switch-ebpf", true),
    ("record", "bpf", false),
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let src_dir = manifest.join("../../switch-ebpf");
    // Debian keeps the asm/ uapi headers under the multiarch directory.
    let multiarch = "/usr/include/x86_64-linux-gnu".to_string();
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang-19".to_string());
    println!("cargo:rerun-if-env-changed=RXECC_BPF_INCLUDE");
    // port.h and kfuncs.h, and port.bpf.c's feature headers in port/.
    for h in ["kfuncs.h", "port.h", "port"] {
        println!("cargo:rerun-if-changed={}", src_dir.join(h).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("bpf/record.h").display()
    );
    let core_includes: Vec<String> = std::env::var("RXECC_BPF_INCLUDE")
        .unwrap_or_default()
        .split(':')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    for (prog, dir, core) in PROGRAMS {
        let src = manifest.join(dir).join(format!("{prog}.bpf.c"));
        println!("cargo:rerun-if-changed={}", src.display());
        let mut args = vec![
            "-Wall".to_string(),
            "-Werror".into(),
            "-O2".into(),
            "-g".into(),
        ];
        if *core {
            if core_includes.is_empty() {
                panic!(
                    "{prog}.bpf.c needs the testbed kernel's vmlinux.h: build through make \
                     (it sets RXECC_BPF_INCLUDE), e.g. `make userspace`"
                );
            }
            // vmlinux.h from BTF declares some structs it never defines.
            args.push("-Wno-missing-declarations".into());
            for dir in &core_includes {
                args.extend(["-I".to_string(), dir.clone()]);
                println!("cargo:rerun-if-changed={dir}");
            }
        } else {
            args.extend(["-I".to_string(), multiarch.clone()]);
        }
        SkeletonBuilder::new()
            .source(&src)
            .clang(&clang)
            .clang_args(args)
            .build_and_generate(out.join(format!("{prog}.skel.rs")))
            .unwrap_or_else(|e| panic!("building {}: {e:#}", src.display()));
    }
}
