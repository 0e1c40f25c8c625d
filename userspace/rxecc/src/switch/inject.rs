//! Fault injection at a port's ingress (`switch-ebpf/port/inject.h`): rules
//! that select RoCEv2 packets by their BTH and drop them, ECN-mark them,
//! corrupt their ICRC, duplicate them, or have their egress port delay or
//! reorder them. Up to [`MAX_RULES`] per port, off by default.

use super::*;
use anyhow::bail;
use port_skel::types::{rxecc_inject, rxecc_inject_rule};

/// Rules a port holds at once (port.h's `RXECC_INJECT_RULES`).
pub const MAX_RULES: usize = 8;
/// "Any" for a rule's QP and opcode (port.h's `RXECC_INJECT_ANY`).
const ANY: u32 = u32::MAX;
/// PSNs are 24 bits.
const PSN_MAX: u32 = 0xff_ffff;
/// The longest delay (port.h's `RXECC_DELAY_US_MAX`) and reorder hold
/// (`RXECC_REORDER_US_MAX`), microseconds, and the largest gap.
const DELAY_US_MAX: u32 = 0xff_ffff;
const REORDER_US_MAX: u32 = 0xf_ffff;
const REORDER_GAP_MAX: u32 = 15;
/// A reorder's defaults: one packet overtakes, held 10 ms at most.
const REORDER_GAP: u32 = 1;
const REORDER_US: u32 = 10_000;

/// What a rule does to the packets it acts on (port.h's
/// `enum rxecc_inject_action`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum InjectAction {
    /// Consume the packet (counted as injected, never as a switch drop).
    Drop,
    /// ECN congestion experienced (0b11), on ECN-capable packets.
    Ce,
    /// TCD's undetermined (0b10), on ECN-capable packets that are not CE.
    Ue,
    /// Invert the ICRC's last byte: the receiver must discard the packet.
    Icrc,
    /// Send a copy right behind the packet (the copy passes the rules).
    Dup,
    /// The packet reaches its egress queue `delay_us` later; packets not
    /// delayed overtake it.
    Delay,
    /// The next `gap` packets to the same egress queue overtake it (held
    /// `delay_us` at most).
    Reorder,
}

impl InjectAction {
    fn code(self) -> u32 {
        match self {
            InjectAction::Drop => 1,
            InjectAction::Ce => 2,
            InjectAction::Ue => 3,
            InjectAction::Icrc => 4,
            InjectAction::Dup => 5,
            InjectAction::Delay => 6,
            InjectAction::Reorder => 7,
        }
    }

    fn from_code(c: u32) -> Option<Self> {
        [
            Self::Drop,
            Self::Ce,
            Self::Ue,
            Self::Icrc,
            Self::Dup,
            Self::Delay,
            Self::Reorder,
        ]
        .into_iter()
        .find(|a| a.code() == c)
    }
}

/// One rule: which packets it selects, and which of those it acts on.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct InjectRule {
    /// The port it acts at, in a topology's `[[inject]]` (the command
    /// line names it with --dev).
    #[serde(default)]
    pub port: String,
    pub action: Option<InjectAction>,
    /// The BTH's destination QP; any if absent.
    pub qpn: Option<u32>,
    /// PSNs from..=to; any if absent.
    pub psn: Option<(u32, u32)>,
    /// The BTH opcode; any if absent.
    pub opcode: Option<u32>,
    /// Act on every n-th selected packet (1: each).
    #[serde(default)]
    pub every: u32,
    /// Act only on these selected packets (1 is the first), up to 64.
    #[serde(default)]
    pub nth: Vec<u32>,
    /// Act with this probability (0 < p <= 1), from the seeded generator.
    pub prob: Option<f64>,
    /// The generator's seed (with the rule's slot mixed in).
    #[serde(default)]
    pub seed: u64,
    /// delay: the delay, us; reorder: the longest hold (default 10 ms).
    pub delay_us: Option<u32>,
    /// reorder: the packets that overtake (default 1).
    pub gap: Option<u32>,
}

/// A number as written by a user: decimal, or hex with 0x.
pub fn parse_u32(s: &str) -> Result<u32> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.with_context(|| format!("'{s}' is not a number (decimal, or hex with 0x)"))
}

/// A PSN or a range of them: `100` or `100-120`.
pub fn parse_psn_range(s: &str) -> Result<(u32, u32)> {
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) => (parse_u32(a)?, parse_u32(b)?),
        None => {
            let p = parse_u32(s)?;
            (p, p)
        }
    };
    if lo > hi || hi > PSN_MAX {
        bail!("PSN range '{s}' must be FROM-TO with FROM <= TO <= {PSN_MAX} (PSNs are 24 bits)");
    }
    Ok((lo, hi))
}

/// Match ordinals: `3,7`.
pub fn parse_nth(s: &str) -> Result<Vec<u32>> {
    s.split(',').map(parse_u32).collect()
}

impl InjectRule {
    /// Checks the rule, with a message that says which value is wrong.
    pub fn validate(&self) -> Result<()> {
        if self.action.is_none() {
            bail!("an injection rule needs an action (drop, ce, ue, icrc, dup, delay or reorder)");
        }
        let act = self.action.unwrap_or(InjectAction::Drop);
        match (act, self.delay_us) {
            (InjectAction::Delay, None) => bail!("a delay rule needs delay_us (--delay-us)"),
            (InjectAction::Delay, Some(d)) if d == 0 || d > DELAY_US_MAX => {
                bail!("delay_us {d} is not in 1..={DELAY_US_MAX} (16.7 s)")
            }
            (InjectAction::Reorder, Some(d)) if d == 0 || d > REORDER_US_MAX => {
                bail!("a reorder's delay_us (its longest hold) {d} is not in 1..={REORDER_US_MAX} (1.05 s)")
            }
            (InjectAction::Delay | InjectAction::Reorder, _) => {}
            (_, Some(_)) => bail!("delay_us is for delay and reorder rules only"),
            (_, None) => {}
        }
        match (act, self.gap) {
            (InjectAction::Reorder, Some(g)) if g == 0 || g > REORDER_GAP_MAX => {
                bail!("gap {g} is not in 1..={REORDER_GAP_MAX}")
            }
            (InjectAction::Reorder, _) | (_, None) => {}
            (_, Some(_)) => bail!("gap is for reorder rules only"),
        }
        if let Some(q) = self.qpn {
            if q > PSN_MAX {
                bail!("QP number {q:#x} is above 24 bits");
            }
        }
        if let Some((lo, hi)) = self.psn {
            if lo > hi || hi > PSN_MAX {
                bail!("PSN range {lo}-{hi} must have FROM <= TO <= {PSN_MAX}");
            }
        }
        if let Some(o) = self.opcode {
            if o > 0xff {
                bail!("opcode {o:#x} is above 8 bits");
            }
        }
        if let Some(n) = self.nth.iter().find(|n| **n == 0 || **n > 64) {
            bail!("nth {n}: the selected packets are counted 1..=64");
        }
        if let Some(p) = self.prob {
            if !(p > 0.0 && p <= 1.0) {
                bail!("probability {p} is not in (0, 1]");
            }
        }
        Ok(())
    }

    /// The rule as `rxecc port inject`'s options (what a dry run prints).
    pub fn to_args(&self) -> String {
        let mut a = Vec::new();
        if let Some(act) = self.action {
            a.push(format!("--action {}", format!("{act:?}").to_lowercase()));
        }
        if let Some(q) = self.qpn {
            a.push(format!("--qpn {q:#x}"));
        }
        if let Some((lo, hi)) = self.psn {
            a.push(format!("--psn {lo}-{hi}"));
        }
        if let Some(o) = self.opcode {
            a.push(format!("--opcode {o:#04x}"));
        }
        if self.every > 0 {
            a.push(format!("--every {}", self.every));
        }
        if !self.nth.is_empty() {
            let n: Vec<String> = self.nth.iter().map(u32::to_string).collect();
            a.push(format!("--nth {}", n.join(",")));
        }
        if let Some(p) = self.prob {
            a.push(format!("--prob {p} --seed {}", self.seed));
        }
        if let Some(d) = self.delay_us {
            a.push(format!("--delay-us {d}"));
        }
        if let Some(g) = self.gap {
            a.push(format!("--gap {g}"));
        }
        a.join(" ")
    }

    /// The rule as port.h lays it out, in slot `slot` (its seed mixed
    /// with the slot, so that two rules draw different sequences).
    fn to_c(&self, slot: usize) -> rxecc_inject_rule {
        let (psn_lo, psn_hi) = self.psn.unwrap_or((0, PSN_MAX));
        let prob = self.prob.map_or(0, |p| {
            ((p * 4_294_967_296.0).round() as u64).clamp(1, 1 << 32)
        });
        let rng = (self.seed ^ (slot as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1);
        let reorder = self.action == Some(InjectAction::Reorder);
        let delay_us = match self.delay_us {
            Some(d) => d,
            None if reorder => REORDER_US,
            None => 0,
        };
        let gap = match self.gap {
            Some(g) => g,
            None if reorder => REORDER_GAP,
            None => 0,
        };
        rxecc_inject_rule {
            action: self.action.map_or(0, InjectAction::code),
            qpn: self.qpn.unwrap_or(ANY),
            psn_lo,
            psn_hi,
            opcode: self.opcode.unwrap_or(ANY),
            every: self.every,
            nth_mask: self.nth.iter().fold(0u64, |m, n| m | 1 << (n - 1)),
            prob,
            rng,
            matched: 0,
            applied: 0,
            delay_us,
            gap,
        }
    }

    /// Reads a rule back from port.h's layout.
    fn from_c(c: &rxecc_inject_rule) -> Self {
        InjectRule {
            port: String::new(),
            action: InjectAction::from_code(c.action),
            qpn: (c.qpn != ANY).then_some(c.qpn),
            psn: (c.psn_lo != 0 || c.psn_hi != PSN_MAX).then_some((c.psn_lo, c.psn_hi)),
            opcode: (c.opcode != ANY).then_some(c.opcode),
            every: c.every,
            nth: (1..=64)
                .filter(|n| c.nth_mask & (1 << (n - 1)) != 0)
                .collect(),
            prob: (c.prob != 0).then(|| c.prob as f64 / 4_294_967_296.0),
            seed: 0,
            delay_us: (c.delay_us != 0).then_some(c.delay_us),
            gap: (c.gap != 0).then_some(c.gap),
        }
    }
}

/// A rule in force, with what it has done.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InjectStatus {
    pub slot: usize,
    pub rule: InjectRule,
    /// Packets the rule selected.
    pub matched: u64,
    /// Packets it acted on.
    pub applied: u64,
}

fn read_rules(map: &MapHandle, key: &[u8; 4]) -> Result<rxecc_inject> {
    from_bytes(
        &map.lookup(key, MapFlags::LOCK)?
            .context("the port has no injection slot")?,
        "inject",
    )
}

/// Adds `rule` to `dev`'s ingress; it acts from the next packet. Returns
/// its slot.
pub fn add_inject_rule(dev: &str, rule: &InjectRule) -> Result<usize> {
    rule.validate()?;
    let (map, key) = port_slot(dev, "inject")?;
    let mut all = read_rules(&map, &key)?;
    let Some(slot) = all.rule.iter().position(|r| r.action == 0) else {
        bail!("{dev} holds {MAX_RULES} injection rules already: clear them first");
    };
    all.rule[slot] = rule.to_c(slot);
    map.update(&key, pod_bytes(&all), MapFlags::LOCK)
        .context("writing the injection rule")?;
    let n = all.rule.iter().filter(|r| r.action != 0).count() as u32;
    update_port_cfg(dev, |c| c.inject_rules = n)?;
    Ok(slot)
}

/// Removes every rule from `dev`'s ingress.
pub fn clear_inject_rules(dev: &str) -> Result<()> {
    update_port_cfg(dev, |c| c.inject_rules = 0)?;
    let (map, key) = port_slot(dev, "inject")?;
    // SAFETY: plain-old-data C struct generated from BTF; zeroes are valid.
    let zero: rxecc_inject = unsafe { std::mem::zeroed() };
    map.update(&key, pod_bytes(&zero), MapFlags::LOCK)
        .context("clearing the injection rules")
}

/// The rules in force at `dev`'s ingress, with their counts.
pub fn inject_rules(dev: &str) -> Result<Vec<InjectStatus>> {
    let (map, key) = port_slot(dev, "inject")?;
    let all = read_rules(&map, &key)?;
    Ok(all
        .rule
        .iter()
        .enumerate()
        .filter(|(_, r)| r.action != 0)
        .map(|(slot, r)| InjectStatus {
            slot,
            rule: InjectRule::from_c(r),
            matched: r.matched,
            applied: r.applied,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_round_trip() {
        assert_eq!(parse_u32("0x11").unwrap(), 17);
        assert_eq!(parse_psn_range("100-120").unwrap(), (100, 120));
        assert_eq!(parse_psn_range("7").unwrap(), (7, 7));
        assert!(parse_psn_range("120-100").is_err());
        assert!(parse_psn_range("0-16777216").is_err());
        assert_eq!(parse_nth("3,7").unwrap(), vec![3, 7]);
        let r = InjectRule {
            action: Some(InjectAction::Drop),
            qpn: Some(0x11),
            psn: Some((100, 120)),
            nth: vec![3, 7],
            prob: Some(0.25),
            ..Default::default()
        };
        r.validate().unwrap();
        let c = r.to_c(2);
        assert_eq!(c.nth_mask, 0b100_0100);
        assert_eq!(c.prob, 1 << 30);
        assert_ne!(c.rng, 0);
        assert_ne!(c.rng, r.to_c(3).rng);
        assert_eq!(c.opcode, ANY);
        let back = InjectRule::from_c(&c);
        assert_eq!(back, r);
        assert_eq!(
            r.to_args(),
            "--action drop --qpn 0x11 --psn 100-120 --nth 3,7 --prob 0.25 --seed 0"
        );
        // Always: p = 1 is 2^32, which no 32-bit draw reaches.
        let all = InjectRule {
            prob: Some(1.0),
            ..r.clone()
        };
        assert_eq!(all.to_c(0).prob, 1 << 32);

        // A reorder's defaults are written out, and read back as such.
        let ro = InjectRule {
            action: Some(InjectAction::Reorder),
            psn: Some((7, 7)),
            ..Default::default()
        };
        ro.validate().unwrap();
        let c = ro.to_c(0);
        assert_eq!((c.action, c.gap, c.delay_us), (7, REORDER_GAP, REORDER_US));
        let back = InjectRule::from_c(&c);
        assert_eq!((back.gap, back.delay_us), (Some(1), Some(10_000)));
        let d = InjectRule {
            action: Some(InjectAction::Delay),
            delay_us: Some(2000),
            ..Default::default()
        };
        assert_eq!(d.to_c(0).delay_us, 2000);
        assert_eq!(InjectRule::from_c(&d.to_c(0)), d);
        assert_eq!(d.to_args(), "--action delay --delay-us 2000");
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        let no_action = InjectRule::default().validate().unwrap_err();
        assert!(
            no_action.to_string().contains("needs an action"),
            "{no_action}"
        );
        let base = InjectRule {
            action: Some(InjectAction::Ce),
            ..Default::default()
        };
        for (bad, says) in [
            (
                InjectRule {
                    nth: vec![65],
                    ..base.clone()
                },
                "1..=64",
            ),
            (
                InjectRule {
                    nth: vec![0],
                    ..base.clone()
                },
                "1..=64",
            ),
            (
                InjectRule {
                    prob: Some(0.0),
                    ..base.clone()
                },
                "not in (0, 1]",
            ),
            (
                InjectRule {
                    prob: Some(1.5),
                    ..base.clone()
                },
                "not in (0, 1]",
            ),
            (
                InjectRule {
                    opcode: Some(256),
                    ..base.clone()
                },
                "8 bits",
            ),
            (
                InjectRule {
                    qpn: Some(1 << 24),
                    ..base.clone()
                },
                "24 bits",
            ),
            (
                InjectRule {
                    delay_us: Some(10),
                    ..base.clone()
                },
                "delay and reorder rules only",
            ),
            (
                InjectRule {
                    gap: Some(2),
                    ..base.clone()
                },
                "reorder rules only",
            ),
            (
                InjectRule {
                    action: Some(InjectAction::Delay),
                    ..base.clone()
                },
                "needs delay_us",
            ),
            (
                InjectRule {
                    action: Some(InjectAction::Delay),
                    delay_us: Some(1 << 24),
                    ..base.clone()
                },
                "16.7 s",
            ),
            (
                InjectRule {
                    action: Some(InjectAction::Reorder),
                    gap: Some(16),
                    ..base.clone()
                },
                "1..=15",
            ),
            (
                InjectRule {
                    action: Some(InjectAction::Reorder),
                    delay_us: Some(1 << 20),
                    ..base.clone()
                },
                "1.05 s",
            ),
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains(says), "{e} lacks {says}");
        }
    }
}
