//! The CLI's modules form no import cycle (issue 47): a module's
//! dependencies are the `crate::<module>` paths its source names, a
//! folder module (`switch/`) counting as one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules a source text names: `crate::x` and `use crate::{x, y}`.
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

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut add = |module: &str, path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        let deps = g.entry(module.to_string()).or_default();
        deps.extend(names(&text).into_iter().filter(|d| d != module));
    };
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let module = p.file_name().unwrap().to_str().unwrap().to_string();
            for f in std::fs::read_dir(&p).unwrap() {
                add(&module, &f.unwrap().path());
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
            if stem != "main" && stem != "lib" {
                add(&stem, &p);
            }
        }
    }
    g
}

/// A cycle through `start`, if any (depth-first).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let last = path.last().cloned().unwrap_or_default();
        for d in g.get(&last).into_iter().flatten() {
            if d == start {
                path.push(d.clone());
                return true;
            }
            if seen.insert(d.clone()) {
                path.push(d.clone());
                if walk(g, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(g, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn no_import_cycles() {
    let g = graph();
    assert!(g.len() > 10, "only {} modules found", g.len());
    assert!(g["experiment"].contains("topology"), "{g:?}");
    for m in g.keys() {
        if let Some(c) = cycle(&g, m) {
            panic!("import cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn a_cycle_is_found() {
    let mut g = graph();
    g.entry("plot".into()).or_default().insert("report".into());
    g.entry("report".into()).or_default().insert("plot".into());
    assert!(cycle(&g, "report").is_some());
    assert_eq!(
        names("use crate::{fct, switch};\nlet x = crate::record::monotonic_ns();"),
        ["fct", "record", "switch"]
            .into_iter()
            .map(String::from)
            .collect()
    );
}
