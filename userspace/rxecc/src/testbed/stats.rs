//! rxe_cc's debugfs statistics: `/sys/kernel/debug/rxe_cc/totals` and
//! `/sys/kernel/debug/rxe_cc/qps/<dev>-qp<N>/stats`, one `key value` per line.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub const DEBUGFS_ROOT: &str = "/sys/kernel/debug/rxe_cc";

/// One stats file: numeric counters, and text fields such as `cc` and `state`.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub counters: BTreeMap<String, u64>,
    pub fields: BTreeMap<String, String>,
}

impl Stats {
    pub fn get(&self, key: &str) -> Option<u64> {
        self.counters.get(key).copied()
    }
}

pub fn parse(text: &str) -> Result<Stats> {
    let mut s = Stats::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once(' ') else {
            bail!("line {}: expected 'key value', got '{line}'", n + 1);
        };
        match v.trim().parse::<u64>() {
            Ok(x) => s.counters.insert(k.to_string(), x).map(|_| ()),
            Err(_) => s
                .fields
                .insert(k.to_string(), v.trim().to_string())
                .map(|_| ()),
        };
    }
    Ok(s)
}

#[derive(Debug, Serialize)]
pub struct Snapshot {
    pub totals: Stats,
    pub qps: BTreeMap<String, Stats>,
}

/// Reads the module totals and every live QP's stats.
pub fn snapshot(root: &Path) -> Result<Snapshot> {
    let read = |p: &Path| -> Result<Stats> {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        parse(&text).with_context(|| format!("in {}", p.display()))
    };
    let totals = read(&root.join("totals")).context(
        "is rxe_cc loaded and debugfs mounted (mount -t debugfs none /sys/kernel/debug)?",
    )?;
    let mut qps = BTreeMap::new();
    let dir = root.join("qps");
    for e in std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        // A QP destroyed while we list it is simply gone.
        if let Ok(s) = read(&e.path().join("stats")) {
            qps.insert(e.file_name().to_string_lossy().into_owned(), s);
        }
    }
    Ok(Snapshot { totals, qps })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_qp_stats() {
        let s = parse("cc none\nqpn 17\nstate pass-through\ntx_bytes 98304000\nacks 12\n").unwrap();
        assert_eq!(s.get("qpn"), Some(17));
        assert_eq!(s.get("tx_bytes"), Some(98_304_000));
        assert_eq!(s.fields["cc"], "none");
        assert_eq!(s.fields["state"], "pass-through");
        assert_eq!(s.get("missing"), None);
    }

    #[test]
    fn rejects_garbage() {
        let err = parse("tx_bytes 1\nnonsense\n").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn snapshot_of_a_fake_tree() {
        let dir = std::env::temp_dir().join(format!("rxecc-stats-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("qps/rxe0-qp17")).unwrap();
        std::fs::write(
            dir.join("totals"),
            "qps_created 2\nqps_destroyed 1\ntx_bytes 5\n",
        )
        .unwrap();
        std::fs::write(dir.join("qps/rxe0-qp17/stats"), "cc none\ntx_bytes 3\n").unwrap();
        let s = snapshot(&dir).unwrap();
        assert_eq!(s.totals.get("qps_created"), Some(2));
        assert_eq!(s.qps["rxe0-qp17"].get("tx_bytes"), Some(3));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(snapshot(&dir)
            .unwrap_err()
            .to_string()
            .contains("is rxe_cc loaded"));
    }
}
