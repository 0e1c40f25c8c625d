//! `rxecc port sum`: one number from saved `rxecc port stats --json`
//! output (one port per line), for the shell tests. A Python start costs
//! about 2 s in the TCG guest, this binary a fraction of that, and the
//! tests read some ninety such numbers.

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// What to make of the matching ports' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Sum,
    Max,
    /// `dev=value` for each port whose value is not 0.
    List,
}

/// Splits `max:KEY` / `list:KEY` / `KEY` into its mode and key.
pub fn parse_key(spec: &str) -> Result<(Mode, &str)> {
    let (mode, key) = match spec.split_once(':') {
        None => (Mode::Sum, spec),
        Some(("max", k)) => (Mode::Max, k),
        Some(("list", k)) => (Mode::List, k),
        Some((m, _)) => bail!("unknown mode '{m}' in '{spec}' (max:KEY, list:KEY or KEY)"),
    };
    if key.is_empty() {
        bail!("no counter named in '{spec}'");
    }
    Ok((mode, key))
}

/// The value at a dotted path (`ingress.max_bytes`); a port without it
/// (a host NIC has no ingress record) counts 0. A value that is there but
/// not a count is an error: a typo must not read as 0.
fn value_at(port: &Value, key: &str) -> Result<u64> {
    let mut v = port;
    for (i, k) in key.split('.').enumerate() {
        match v.get(k) {
            Some(Value::Null) | None if i > 0 => return Ok(0),
            None => bail!("ports have no counter '{key}'"),
            Some(x) => v = x,
        }
    }
    v.as_u64()
        .with_context(|| format!("'{key}' is not a count: {v}"))
}

/// Applies `spec` over the ports in `text` whose names match one of
/// `globs` (all ports if none).
pub fn port_sum(text: &str, spec: &str, globs: &[String]) -> Result<String> {
    let (mode, key) = parse_key(spec)?;
    let pats = globs
        .iter()
        .map(|g| glob::Pattern::new(g).with_context(|| format!("bad port pattern '{g}'")))
        .collect::<Result<Vec<_>>>()?;
    let mut vals = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let port: Value =
            serde_json::from_str(line).with_context(|| format!("line {}: not JSON", n + 1))?;
        let dev = port
            .get("dev")
            .and_then(Value::as_str)
            .with_context(|| format!("line {}: no dev", n + 1))?;
        if !pats.is_empty() && !pats.iter().any(|p| p.matches(dev)) {
            continue;
        }
        vals.push((dev.to_string(), value_at(&port, key)?));
    }
    Ok(match mode {
        Mode::Sum => vals
            .iter()
            .map(|(_, v)| *v)
            .fold(0u64, u64::saturating_add)
            .to_string(),
        Mode::Max => vals.iter().map(|(_, v)| *v).max().unwrap_or(0).to_string(),
        Mode::List => vals
            .iter()
            .filter(|(_, v)| *v != 0)
            .map(|(d, v)| format!("{d}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = concat!(
        r#"{"dev":"p0","drops":2,"tcd_ce":5,"ingress":{"max_bytes":700,"pfc_tx_xoff":3}}"#,
        "\n",
        r#"{"dev":"p1","drops":0,"tcd_ce":1,"ingress":{"max_bytes":900,"pfc_tx_xoff":4}}"#,
        "\n",
        r#"{"dev":"v0","drops":1,"tcd_ce":0,"ingress":null}"#,
        "\n"
    );

    fn run(spec: &str, globs: &[&str]) -> Result<String> {
        let g: Vec<String> = globs.iter().map(|s| s.to_string()).collect();
        port_sum(STATS, spec, &g)
    }

    #[test]
    fn sums_maxes_and_lists_over_the_matching_ports() {
        assert_eq!(run("drops", &[]).unwrap(), "3");
        assert_eq!(run("drops", &["p*"]).unwrap(), "2");
        assert_eq!(run("tcd_ce", &["p1", "v0"]).unwrap(), "1");
        assert_eq!(run("ingress.pfc_tx_xoff", &[]).unwrap(), "7");
        assert_eq!(run("max:ingress.max_bytes", &[]).unwrap(), "900");
        assert_eq!(run("list:drops", &[]).unwrap(), "p0=2 v0=1");
        assert_eq!(run("drops", &["x*"]).unwrap(), "0");
    }

    #[test]
    fn refuses_what_would_silently_read_as_zero() {
        assert!(run("dorps", &[]).is_err());
        assert!(run("ingress", &[]).is_err());
        assert!(run("avg:drops", &[]).is_err());
        assert!(run("max:", &[]).is_err());
        assert!(port_sum("not json\n", "drops", &[]).is_err());
    }
}
