//! The knob table is defined once, in `cc_core::knobs`; the kernel module's
//! C glue takes its module parameters from `rxe_cc/knobs.h`, generated
//! from it here. `RXECC_WRITE_KNOBS_H=1 cargo test -p cc-core --test knobs`
//! rewrites the header; without it the test fails while the header is stale.

use cc_core::alg::ALGS;
use cc_core::knobs::{Defaults, Knob, KnobSource, KNOBS, NR_KNOBS};
use std::path::Path;

fn c_header() -> String {
    let mut s = String::from(
        "/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rxe_cc's algorithms and numeric knobs, generated from their one
 * definition (rxe_cc/cc_core/alg.rs's ALGS, rxe_cc/cc_core/knobs.rs) by
 * userspace/cc-core/tests/knobs.rs, which fails while this file is stale
 * (RXECC_WRITE_KNOBS_H=1 rewrites it). Do not edit.
 *
 * RXE_CC_ALGS(X) calls X(ID, name) for every algorithm, in id order.
 * RXE_CC_KNOBS(X) calls X(ID, name, default, min, max, description) for
 * every knob, in id order.
 */
#ifndef RXE_CC_KNOBS_H
#define RXE_CC_KNOBS_H

#define RXE_CC_ALGS(X) \\\n",
    );
    for a in ALGS.iter() {
        s.push_str(&format!(
            "\tX({}, {}) \\\n",
            a.name().to_uppercase(),
            a.name()
        ));
    }
    s.push_str("\n#define RXE_CC_KNOBS(X) \\\n");
    for k in KNOBS.iter() {
        let help = k.help.replace('\\', "\\\\").replace('"', "\\\"");
        s.push_str(&format!(
            "\tX({}, {}, {}, {}, {}, \\\n\t  \"{}\") \\\n",
            k.name.to_uppercase(),
            k.name,
            k.default,
            k.min,
            k.max,
            help
        ));
    }
    s.push_str("\n#endif /* RXE_CC_KNOBS_H */\n");
    s
}

#[test]
fn c_header_is_generated_from_the_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rxe_cc/knobs.h");
    let want = c_header();
    if std::env::var_os("RXECC_WRITE_KNOBS_H").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run RXECC_WRITE_KNOBS_H=1 cargo test -p cc-core --test knobs",
        path.display()
    );
}

#[test]
fn table_is_sane() {
    assert_eq!(KNOBS.len(), NR_KNOBS);
    let mut names: Vec<_> = KNOBS.iter().map(|k| k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), NR_KNOBS, "a name twice");
    for (i, k) in KNOBS.iter().enumerate() {
        assert_eq!(k.knob as usize, i, "{}", k.name);
        assert!(
            k.min <= k.default && k.default <= k.max,
            "{}: default out of range",
            k.name
        );
        assert!(!k.help.is_empty(), "{}: no description", k.name);
    }
    assert_eq!(Defaults.get(Knob::AccCePermille), 900);
    assert_eq!(Defaults.bps(Knob::LineRateMbps), 100_000_000);
}
