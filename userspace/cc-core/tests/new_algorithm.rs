//! docs/new-algorithm.md lists the files that name an algorithm in the
//! module's and the CLI's source. For the algorithms added that way, no
//! other source file names them: the walkthrough is the whole change.

use std::fs;
use std::path::{Path, PathBuf};

/// Added by the walkthrough, after the module's own tables existed.
const WALKTHROUGH_ALGS: [&str; 3] = ["timely", "dctcp", "swift"];

/// Where the module's and the CLI's source lives.
const ROOTS: [&str; 7] = [
    "rxe_cc",
    "switch-ebpf",
    "userspace/cc-core",
    "userspace/cc-model",
    "userspace/fc-model",
    "userspace/flowgen",
    "userspace/rxecc",
];

fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fenced list under "## The files".
fn listed(doc: &str) -> Vec<String> {
    let after = doc
        .split("## The files")
        .nth(1)
        .expect("no '## The files' section");
    let block = after.split("```text\n").nth(1).expect("no file list");
    let block = block.split("```").next().unwrap_or("");
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != "build" {
                sources(&p, out);
            }
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("rs" | "c" | "h" | "toml")
        ) {
            out.push(p);
        }
    }
}

/// True if `text` has `alg` as a word, or as a knob's prefix (`swift_`).
fn names(text: &str, alg: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_ascii_lowercase)
        .any(|w| w == alg || w.starts_with(&format!("{alg}_")))
}

#[test]
fn only_the_listed_files_name_an_added_algorithm() {
    let top = top();
    let doc = fs::read_to_string(top.join("docs/new-algorithm.md")).expect("docs/new-algorithm.md");
    let list = listed(&doc);
    assert!(
        list.len() >= 5,
        "the file list is too short to be it: {list:?}"
    );
    let mut files = Vec::new();
    for r in ROOTS {
        sources(&top.join(r), &mut files);
    }
    assert!(files.len() > 20, "found only {} source files", files.len());
    for alg in WALKTHROUGH_ALGS {
        let allowed: Vec<PathBuf> = list
            .iter()
            .map(|f| top.join(f.replace("<alg>", alg)))
            .collect();
        for a in &allowed {
            assert!(
                a.exists(),
                "{alg}: the walkthrough lists {}, which does not exist",
                a.display()
            );
        }
        let mut named = 0;
        for f in files
            .iter()
            .filter(|f| !f.ends_with("tests/new_algorithm.rs"))
        {
            let text = fs::read_to_string(f).unwrap_or_default();
            if !names(&text, alg) {
                continue;
            }
            named += 1;
            assert!(
                allowed
                    .iter()
                    .any(|a| a.canonicalize().ok() == f.canonicalize().ok()),
                "{alg} is named in {}, which docs/new-algorithm.md does not list",
                f.display()
            );
        }
        assert!(
            named >= 4,
            "{alg}: named in only {named} files; is the scan looking in the right place?"
        );
    }
}
