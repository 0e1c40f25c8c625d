//! The library's parts are layered (issue 47): each may use only the parts
//! below it, so there is no import cycle. A part is a top-level file or a
//! folder of `src/` (the binary's `cli/` and `main.rs` stand above them
//! all); its dependencies are the `crate::<part>` paths its source names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// From the bottom: what each part may use is what comes before it.
const LAYERS: [&str; 8] = [
    "clock", "netlink", "modules", "switch", "config", "testbed", "report", "run",
];

/// The parts a source text names: `crate::x` and `use crate::{x, y}`.
fn names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let list = match rest.strip_prefix('{') {
            Some(r) => &r[..r.find('}').unwrap_or(0)],
            None => rest,
        };
        for part in list.split(',') {
            let m: String = part
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !m.is_empty() {
                out.insert(m);
            }
            if rest.starts_with('{') {
                continue;
            }
            break;
        }
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let part = p.file_stem().unwrap().to_str().unwrap().to_string();
        if ["main", "lib", "cli"].contains(&part.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        if p.is_dir() {
            rs_files(&p, &mut files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p.clone());
        }
        let deps = g.entry(part.clone()).or_default();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            deps.extend(names(&text).into_iter().filter(|d| *d != part));
        }
    }
    g
}

/// Each use of a part not below the user, as "user -> used".
fn breaches(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut out = Vec::new();
    for (m, deps) in g {
        for d in deps {
            match (rank(m), rank(d)) {
                (Some(a), Some(b)) if b < a => {}
                _ => out.push(format!("{m} -> {d}")),
            }
        }
    }
    out
}

#[test]
fn parts_use_only_the_layers_below() {
    let g = graph();
    let parts: BTreeSet<&str> = g.keys().map(String::as_str).collect();
    assert_eq!(
        parts,
        LAYERS.into_iter().collect(),
        "src/ has other parts than LAYERS"
    );
    assert!(g["run"].contains("config"), "{g:?}");
    let b = breaches(&g);
    assert!(
        b.is_empty(),
        "layering broken (a part may use only those below it): {b:?}"
    );
}

#[test]
fn a_breach_is_found() {
    let mut g = graph();
    g.entry("config".into())
        .or_default()
        .insert("report".into());
    assert_eq!(breaches(&g), ["config -> report"]);
    assert_eq!(
        names("use crate::{config::topology, switch};\nlet x = crate::clock::monotonic_ns();"),
        ["clock", "config", "switch"]
            .into_iter()
            .map(String::from)
            .collect()
    );
}
