//! Scale models (docs/scale-model.md): an experiment's `[scale]` table
//! states the paper's setting in the paper's own units and one time factor
//! k_t; every testbed quantity it implies is derived here, once: times ×
//! k_t, bytes × k_b (the testbed's MTU over the paper's), rates × k_b/k_t,
//! counts and ratios unchanged. Every dimensionless group of the setting
//! (the BDP in packets, thresholds in BDPs, T in RTTs, ...) is then kept by
//! construction, and [`Regime`] shows how far the testbed, measured, is
//! from it.

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The testbed's MTU: rxe's path MTU, payload bytes per packet.
pub const TESTBED_MTU: u64 = 4096;

/// A rate.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Rate {
    bps: f64,
}

/// A time.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Span {
    s: f64,
}

/// A size.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Size {
    bytes: f64,
}

impl Rate {
    pub fn gbps(x: f64) -> Rate {
        Rate { bps: x * 1e9 }
    }
    pub fn mbps(x: f64) -> Rate {
        Rate { bps: x * 1e6 }
    }
    pub fn as_gbps(self) -> f64 {
        self.bps / 1e9
    }
    pub fn as_mbps(self) -> f64 {
        self.bps / 1e6
    }
    /// The bytes this rate carries in `t`.
    pub fn over(self, t: Span) -> Size {
        Size::bytes(self.bps * t.s / 8.0)
    }
}

impl Span {
    pub fn us(x: f64) -> Span {
        Span { s: x * 1e-6 }
    }
    pub fn ns(x: f64) -> Span {
        Span { s: x * 1e-9 }
    }
    pub fn as_us(self) -> f64 {
        self.s * 1e6
    }
    /// How many of `other` this is.
    pub fn per(self, other: Span) -> f64 {
        self.s / other.s
    }
}

impl Size {
    pub fn bytes(x: f64) -> Size {
        Size { bytes: x }
    }
    pub fn as_bytes(self) -> f64 {
        self.bytes
    }
    /// How many of `other` this is.
    pub fn per(self, other: Size) -> f64 {
        self.bytes / other.bytes
    }
    /// Its serialisation at `r`.
    pub fn at(self, r: Rate) -> Span {
        Span {
            s: self.bytes * 8.0 / r.bps,
        }
    }
}

/// One time factor and one byte factor.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Scale {
    pub k_t: f64,
    pub k_b: f64,
}

impl Scale {
    pub fn time(&self, t: Span) -> Span {
        Span { s: t.s * self.k_t }
    }
    pub fn size(&self, b: Size) -> Size {
        Size {
            bytes: b.bytes * self.k_b,
        }
    }
    pub fn rate(&self, r: Rate) -> Rate {
        Rate {
            bps: r.bps * self.k_b / self.k_t,
        }
    }
}

/// A link of the paper's setting whose rate is not `link_gbps`, named as
/// the experiment's topology names it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperLink {
    pub a: String,
    pub b: String,
    pub gbps: f64,
}

/// RED as the paper sets it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRed {
    pub kmin_bytes: f64,
    pub kmax_bytes: f64,
    /// P_max, 0 to 1.
    pub pmax: f64,
}

/// TCD as the paper sets it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperTcd {
    pub thresh_bytes: f64,
    pub max_ton_us: f64,
}

/// `[scale]`: the paper's setting, in the paper's units, and k_t.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperSetting {
    /// Where the setting is from (paper, section, figure).
    pub source: String,
    /// The time factor: every time of the paper's setting × k_t.
    pub k_t: f64,
    /// The paper's MTU, payload bytes: k_b = the testbed's (4096) over it.
    pub mtu_bytes: f64,
    /// Every link's rate, Gb/s, but those in `links`.
    pub link_gbps: f64,
    #[serde(default)]
    pub links: Vec<PaperLink>,
    /// Every link's propagation delay, us; or
    pub delay_us: Option<f64>,
    /// the base RTT, us, from which it follows: the path's propagation
    /// both ways plus one MTU's serialisation per link (bottleneck rate).
    pub base_rtt_us: Option<f64>,
    /// Links between a sender and its receiver (2: one switch).
    #[serde(default = "two")]
    pub path_links: u32,
    /// The control period T, us: every algorithm's period knob
    /// (acc_t_us, hpcc_t_us, icc_t_us) and `[report] period_us`.
    pub t_us: Option<f64>,
    /// The switch's shared buffer, PFC's XOFF and XON per ingress port.
    pub buffer_bytes: Option<f64>,
    pub xoff_bytes: Option<f64>,
    pub xon_bytes: Option<f64>,
    /// Marking, for the runs that mark with RED or TCD.
    pub red: Option<PaperRed>,
    pub tcd: Option<PaperTcd>,
    /// An incast's bytes per sender and round.
    pub flow_bytes: Option<f64>,
    /// rxe_cc knobs of every run in the paper's units: a time in us, a
    /// size in bytes, a rate in Mb/s, by the knob's unit (cc_core's
    /// table); a count as it is.
    #[serde(default)]
    pub knobs: BTreeMap<String, f64>,
    /// Groups this model cannot keep, each with why: flagged in the
    /// regime table, but no error under `rxecc run --check`.
    #[serde(default)]
    pub unkept: BTreeMap<String, String>,
}

fn two() -> u32 {
    2
}

/// What a `[scale]` table gives the testbed, in its units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    pub rate_mbps: u64,
    /// (a, b, Mb/s) for the links with a rate of their own.
    pub links: Vec<(String, String, u64)>,
    pub delay_us: u64,
    pub t_us: Option<u64>,
    pub buffer_bytes: Option<u64>,
    pub xoff_bytes: Option<u64>,
    pub xon_bytes: Option<u64>,
    /// (Kmin, Kmax, P_max in 1/1000).
    pub red: Option<(u64, u64, u32)>,
    /// (threshold, max(T_on) in us).
    pub tcd: Option<(u64, u64)>,
    pub flow_bytes: Option<u64>,
    pub knobs: BTreeMap<String, u64>,
    /// Knobs whose whole units are too coarse for the scaled value (more
    /// than the regime's tolerance off): (name, the value wanted, the
    /// value set).
    pub coarse: Vec<(String, f64, u64)>,
}

/// A value rounded to a testbed integer, at least 1 where the paper's is
/// above 0 (a 0.4 us delay does not vanish).
fn whole(x: f64) -> u64 {
    if x > 0.0 && x < 1.0 {
        1
    } else {
        x.round() as u64
    }
}

impl PaperSetting {
    pub fn scale(&self) -> Scale {
        Scale {
            k_t: self.k_t,
            k_b: TESTBED_MTU as f64 / self.mtu_bytes,
        }
    }

    /// Its values are numbers a network has.
    pub fn check(&self) -> Result<()> {
        let pos = |what: &str, x: f64| -> Result<()> {
            ensure!(x.is_finite() && x > 0.0, "[scale] {what} = {x}: above 0");
            Ok(())
        };
        let nonneg = |what: &str, x: f64| -> Result<()> {
            ensure!(x.is_finite() && x >= 0.0, "[scale] {what} = {x}: 0 or more");
            Ok(())
        };
        pos("k_t", self.k_t)?;
        pos("mtu_bytes", self.mtu_bytes)?;
        pos("link_gbps", self.link_gbps)?;
        match (self.delay_us, self.base_rtt_us) {
            (Some(d), None) => nonneg("delay_us", d)?,
            (None, Some(r)) => {
                pos("base_rtt_us", r)?;
                ensure!(
                    self.link_delay_us() >= 0.0,
                    "[scale] base_rtt_us = {r}: below the path's serialisation alone"
                );
            }
            _ => anyhow::bail!("[scale]: delay_us (per link) or base_rtt_us, one of them"),
        }
        ensure!(self.path_links >= 1, "[scale] path_links: at least 1");
        for l in &self.links {
            pos(&format!("links {} - {}: gbps", l.a, l.b), l.gbps)?;
        }
        for (what, v) in [
            ("t_us", self.t_us),
            ("buffer_bytes", self.buffer_bytes),
            ("xoff_bytes", self.xoff_bytes),
            ("xon_bytes", self.xon_bytes),
            ("flow_bytes", self.flow_bytes),
        ] {
            if let Some(x) = v {
                pos(what, x)?;
            }
        }
        if let (Some(on), Some(off)) = (self.xon_bytes, self.xoff_bytes) {
            ensure!(
                on <= off,
                "[scale] xon_bytes {on} is above xoff_bytes {off}"
            );
        }
        if let Some(r) = &self.red {
            nonneg("red.kmin_bytes", r.kmin_bytes)?;
            ensure!(
                r.kmax_bytes >= r.kmin_bytes && r.pmax > 0.0 && r.pmax <= 1.0,
                "[scale] red: kmax_bytes at least kmin_bytes, pmax in (0, 1]"
            );
        }
        if let Some(t) = &self.tcd {
            pos("tcd.thresh_bytes", t.thresh_bytes)?;
            pos("tcd.max_ton_us", t.max_ton_us)?;
        }
        for (k, v) in &self.knobs {
            let def = cc_core::knobs::KNOBS.iter().find(|d| d.name == k);
            ensure!(
                def.is_some(),
                "[scale] knobs: '{k}' is not a knob of rxe_cc"
            );
            nonneg(&format!("knobs.{k}"), *v)?;
        }
        for g in self.unkept.keys() {
            ensure!(
                GROUPS.iter().any(|(n, _)| n == g),
                "[scale] unkept: '{g}' is not a group of the regime table ({})",
                GROUPS.map(|(n, _)| n).join(", ")
            );
        }
        Ok(())
    }

    /// A knob's testbed value from the paper's, by its unit, unrounded.
    pub fn knob(&self, name: &str, paper: f64) -> Result<f64> {
        use cc_core::knobs::Unit;
        let def = cc_core::knobs::KNOBS.iter().find(|d| d.name == name);
        let Some(def) = def else {
            anyhow::bail!("'{name}' is not a knob of rxe_cc");
        };
        let s = self.scale();
        Ok(match def.unit {
            Unit::Count => paper,
            Unit::Us => s.time(Span::us(paper)).as_us(),
            Unit::Bytes => s.size(Size::bytes(paper)).as_bytes(),
            Unit::Mbps => s.rate(Rate::mbps(paper)).as_mbps(),
        })
    }

    /// The paper's bottleneck: its slowest link.
    fn bottleneck_gbps(&self) -> f64 {
        self.links
            .iter()
            .map(|l| l.gbps)
            .fold(self.link_gbps, f64::min)
    }

    /// Every link's propagation delay in the paper, us.
    pub fn link_delay_us(&self) -> f64 {
        match (self.delay_us, self.base_rtt_us) {
            (Some(d), _) => d,
            (None, Some(rtt)) => {
                let links = f64::from(self.path_links.max(1));
                let ser = Size::bytes(self.mtu_bytes).at(Rate::gbps(self.bottleneck_gbps()));
                (rtt - links * ser.as_us()) / (2.0 * links)
            }
            (None, None) => 0.0,
        }
    }

    /// Every testbed quantity the setting implies.
    pub fn derive(&self) -> Result<Derived> {
        self.check()?;
        let s = self.scale();
        let rate = |gbps: f64| whole(s.rate(Rate::gbps(gbps)).as_mbps());
        let bytes = |b: f64| whole(s.size(Size::bytes(b)).as_bytes());
        let us = |t: f64| whole(s.time(Span::us(t)).as_us());
        let (mut knobs, mut coarse) = (BTreeMap::new(), Vec::new());
        for (k, v) in &self.knobs {
            let want = self.knob(k, *v)?;
            let got = whole(want);
            if want > 0.0 && (got as f64 / want - 1.0).abs() > TOLERANCE {
                coarse.push((k.clone(), want, got));
            }
            knobs.insert(k.clone(), got);
        }
        Ok(Derived {
            rate_mbps: rate(self.link_gbps),
            links: self
                .links
                .iter()
                .map(|l| (l.a.clone(), l.b.clone(), rate(l.gbps)))
                .collect(),
            delay_us: if self.link_delay_us() > 0.0 {
                us(self.link_delay_us())
            } else {
                0
            },
            t_us: self.t_us.map(us),
            buffer_bytes: self.buffer_bytes.map(bytes),
            xoff_bytes: self.xoff_bytes.map(bytes),
            xon_bytes: self.xon_bytes.map(bytes),
            red: self.red.as_ref().map(|r| {
                (
                    bytes(r.kmin_bytes),
                    bytes(r.kmax_bytes),
                    (r.pmax * 1000.0).round() as u32,
                )
            }),
            tcd: self
                .tcd
                .as_ref()
                .map(|t| (bytes(t.thresh_bytes), us(t.max_ton_us))),
            flow_bytes: self.flow_bytes.map(bytes),
            knobs,
            coarse,
        })
    }

    /// The paper's side of the regime table: its base RTT is the path's
    /// propagation both ways plus one MTU's serialisation per link.
    pub fn paper_point(&self, flows: u32) -> Point {
        let mtu = Size::bytes(self.mtu_bytes);
        let bottleneck = Rate::gbps(self.bottleneck_gbps());
        let sender = Rate::gbps(self.link_gbps);
        let links = f64::from(self.path_links);
        let rtt = Span::us(2.0 * links * self.link_delay_us() + links * mtu.at(bottleneck).as_us());
        Point {
            mtu,
            bottleneck,
            sender,
            rtt,
            t: self.t_us.map(Span::us),
            buffer: self.buffer_bytes.map(Size::bytes),
            xoff: self.xoff_bytes.map(Size::bytes),
            xon: self.xon_bytes.map(Size::bytes),
            kmin: self.red.as_ref().map(|r| Size::bytes(r.kmin_bytes)),
            kmax: self.red.as_ref().map(|r| Size::bytes(r.kmax_bytes)),
            tcd: self.tcd.as_ref().map(|t| Size::bytes(t.thresh_bytes)),
            flows,
        }
    }
}

/// A setting, paper's or testbed's, in common units: what the regime's
/// groups are computed from.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub mtu: Size,
    pub bottleneck: Rate,
    /// A sender's link.
    pub sender: Rate,
    pub rtt: Span,
    pub t: Option<Span>,
    pub buffer: Option<Size>,
    pub xoff: Option<Size>,
    pub xon: Option<Size>,
    pub kmin: Option<Size>,
    pub kmax: Option<Size>,
    pub tcd: Option<Size>,
    pub flows: u32,
}

/// The groups, and what each says.
pub const GROUPS: [(&str, &str); 12] = [
    ("bdp_mtu", "BDP (bottleneck x base RTT) in MTUs"),
    ("buffer_bdp", "shared buffer in BDPs"),
    ("xoff_bdp", "PFC XOFF in BDPs"),
    ("xon_bdp", "PFC XON in BDPs"),
    ("kmin_bdp", "RED Kmin in BDPs"),
    ("kmax_bdp", "RED Kmax in BDPs"),
    ("tcd_bdp", "TCD threshold in BDPs"),
    ("t_rtt", "T in base RTTs"),
    ("pkts_flow_t", "packets per flow per T at the fair share"),
    (
        "overshoot_xoff",
        "first T's excess per ingress (line rate beyond the fair share) over XOFF",
    ),
    ("flows", "flows"),
    ("base_rtt_us", "base RTT, us (testbed: scaled back by k_t)"),
];

impl Point {
    /// Each group's value, None where the setting lacks what it needs.
    pub fn groups(&self, k_t: f64) -> BTreeMap<&'static str, Option<f64>> {
        let bdp = self.bottleneck.over(self.rtt);
        let in_bdp = |x: Option<Size>| x.map(|x| x.per(bdp));
        let fair = Rate {
            bps: self.bottleneck.bps / f64::from(self.flows.max(1)),
        };
        let mut g = BTreeMap::new();
        g.insert("bdp_mtu", Some(bdp.per(self.mtu)));
        g.insert("buffer_bdp", in_bdp(self.buffer));
        g.insert("xoff_bdp", in_bdp(self.xoff));
        g.insert("xon_bdp", in_bdp(self.xon));
        g.insert("kmin_bdp", in_bdp(self.kmin));
        g.insert("kmax_bdp", in_bdp(self.kmax));
        g.insert("tcd_bdp", in_bdp(self.tcd));
        g.insert("t_rtt", self.t.map(|t| t.per(self.rtt)));
        g.insert("pkts_flow_t", self.t.map(|t| fair.over(t).per(self.mtu)));
        g.insert(
            "overshoot_xoff",
            match (self.t, self.xoff) {
                (Some(t), Some(x)) => Some(
                    Rate {
                        bps: (self.sender.bps - fair.bps).max(0.0),
                    }
                    .over(t)
                    .per(x),
                ),
                _ => None,
            },
        );
        g.insert("flows", Some(f64::from(self.flows)));
        g.insert("base_rtt_us", Some(self.rtt.as_us() / k_t));
        g
    }
}

/// One row of the regime table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Group {
    pub group: String,
    pub what: String,
    pub paper: f64,
    pub testbed: f64,
    /// testbed / paper - 1.
    pub off: f64,
    /// More than 25% off.
    pub flagged: bool,
    /// Why the model cannot keep it, as `[scale] unkept` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unkept: Option<String>,
}

/// The regime table: the paper's groups against the testbed's.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Regime {
    pub source: String,
    pub scale: Scale,
    /// How the testbed's base RTT was had.
    pub rtt_from: String,
    pub groups: Vec<Group>,
}

/// How far a group may be from the paper's before it is flagged.
pub const TOLERANCE: f64 = 0.25;

impl Regime {
    pub fn new(p: &PaperSetting, paper: &Point, testbed: &Point, rtt_from: &str) -> Regime {
        let s = p.scale();
        let a = paper.groups(1.0);
        let b = testbed.groups(s.k_t);
        let groups = GROUPS
            .iter()
            .filter_map(|(name, what)| {
                let (x, y) = (
                    a.get(name).copied().flatten()?,
                    b.get(name).copied().flatten()?,
                );
                let off = if x == 0.0 { 0.0 } else { y / x - 1.0 };
                Some(Group {
                    group: (*name).into(),
                    what: (*what).into(),
                    paper: x,
                    testbed: y,
                    off,
                    flagged: off.abs() > TOLERANCE,
                    unkept: p.unkept.get(*name).cloned(),
                })
            })
            .collect();
        Regime {
            source: p.source.clone(),
            scale: s,
            rtt_from: rtt_from.into(),
            groups,
        }
    }

    /// The groups flagged that `[scale] unkept` does not explain.
    pub fn unexplained(&self) -> Vec<&Group> {
        self.groups
            .iter()
            .filter(|g| g.flagged && g.unkept.is_none())
            .collect()
    }

    pub fn table(&self) -> String {
        let mut s = format!(
            "regime: a scale model of {} at k_t {}, k_b {:.3} (testbed base RTT {})\n",
            self.source, self.scale.k_t, self.scale.k_b, self.rtt_from
        );
        s.push_str(&format!(
            "  {:<16} {:>10} {:>10} {:>8}\n",
            "group", "paper", "testbed", "off"
        ));
        for g in &self.groups {
            let mark = match (&g.unkept, g.flagged) {
                (Some(why), true) => format!("  not kept: {why}"),
                (None, true) => format!("  MORE THAN {:.0}% OFF", TOLERANCE * 100.0),
                _ => String::new(),
            };
            s.push_str(&format!(
                "  {:<16} {:>10.3} {:>10.3} {:>+7.1}%{mark}\n",
                g.group,
                g.paper,
                g.testbed,
                g.off * 100.0
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACC's testbed (§5.1, Fig. 9): 4 x 10 GbE into one, base RTT about
    /// 20 us (3.4 us per link beside 3.2 us of serialisation), T 50 us,
    /// MTU 4000, TCD 2 MTU, XOFF 256 KB.
    fn acc_testbed(k_t: f64) -> PaperSetting {
        toml::from_str(&format!(
            r#"
            source = "ACC testbed"
            k_t = {k_t}
            mtu_bytes = 4000
            link_gbps = 10
            base_rtt_us = 20
            t_us = 50
            xoff_bytes = 256000
            xon_bytes = 128000
            tcd = {{ thresh_bytes = 8000, max_ton_us = 24 }}
            knobs = {{ rpg_time_reset = 55, rpg_byte_reset = 10485760, rpg_ai_rate = 40, rpg_threshold = 5 }}
            "#
        ))
        .unwrap()
    }

    #[test]
    fn times_bytes_and_rates_scale_by_one_factor_each() {
        let p = acc_testbed(256.0);
        let d = p.derive().unwrap();
        // 10 Gb/s x 1.024 / 256 = 40 Mb/s.
        assert_eq!(d.rate_mbps, 40);
        // (20 - 2 x 3.2) / 4 = 3.4 us per link.
        assert_eq!(d.delay_us, 870);
        assert_eq!(d.t_us, Some(12800));
        assert_eq!(d.xoff_bytes, Some(262144));
        assert_eq!(d.tcd, Some((8192, 6144)));
        // A time knob x k_t, a size x k_b, a rate x k_b/k_t, a count as is.
        assert_eq!(d.knobs["rpg_time_reset"], 14080);
        assert_eq!(d.knobs["rpg_byte_reset"], 10737418);
        assert_eq!(d.knobs["rpg_threshold"], 5);
        // 40 Mb/s x 1.024 / 256 = 0.16 Mb/s: the knob's whole Mb/s cannot
        // hold it, and the derivation says so.
        assert_eq!(d.knobs["rpg_ai_rate"], 1);
        assert_eq!(d.coarse.len(), 1, "{:?}", d.coarse);
        assert_eq!(d.coarse[0].0, "rpg_ai_rate");
    }

    #[test]
    fn a_faithful_model_keeps_every_group() {
        let p = acc_testbed(256.0);
        let d = p.derive().unwrap();
        let paper = p.paper_point(4);
        let s = p.scale();
        // The testbed as derived, its RTT exactly k_t times the paper's.
        let testbed = Point {
            mtu: Size::bytes(TESTBED_MTU as f64),
            bottleneck: Rate::mbps(d.rate_mbps as f64),
            sender: Rate::mbps(d.rate_mbps as f64),
            rtt: s.time(paper.rtt),
            t: d.t_us.map(|t| Span::us(t as f64)),
            buffer: None,
            xoff: d.xoff_bytes.map(|x| Size::bytes(x as f64)),
            xon: d.xon_bytes.map(|x| Size::bytes(x as f64)),
            kmin: None,
            kmax: None,
            tcd: d.tcd.map(|(x, _)| Size::bytes(x as f64)),
            flows: 4,
        };
        let r = Regime::new(&p, &paper, &testbed, "derived");
        assert!(r.groups.len() >= 8, "{}", r.table());
        // Rounding to whole us and bytes keeps each within 0.1%.
        for g in &r.groups {
            assert!(g.off.abs() < 0.001, "{}", r.table());
        }
        // ACC's testbed: BDP 6.25 packets, T 2.5 RTTs.
        let g = |n: &str| r.groups.iter().find(|g| g.group == n).unwrap().paper;
        assert!((g("bdp_mtu") - 6.25).abs() < 1e-9, "{}", r.table());
        assert!((g("t_rtt") - 2.5).abs() < 1e-9, "{}", r.table());
    }

    #[test]
    fn a_mis_scaled_testbed_is_flagged() {
        // Today's incast: 127 us of intrinsic RTT, no delay, 40 Mb/s, T 10 ms.
        let p = acc_testbed(256.0);
        let paper = p.paper_point(4);
        let testbed = Point {
            mtu: Size::bytes(4096.0),
            bottleneck: Rate::mbps(40.0),
            sender: Rate::mbps(100.0),
            rtt: Span::us(127.0),
            t: Some(Span::us(10000.0)),
            buffer: None,
            xoff: Some(Size::bytes(32768.0)),
            xon: Some(Size::bytes(16384.0)),
            kmin: None,
            kmax: None,
            tcd: Some(Size::bytes(16384.0)),
            flows: 4,
        };
        let r = Regime::new(&p, &paper, &testbed, "measured");
        let flagged: Vec<&str> = r.unexplained().iter().map(|g| g.group.as_str()).collect();
        for g in ["bdp_mtu", "t_rtt", "overshoot_xoff", "xoff_bdp"] {
            assert!(flagged.contains(&g), "{g} not flagged:\n{}", r.table());
        }
        assert!(!flagged.contains(&"flows"), "{}", r.table());
        assert!(r.table().contains("MORE THAN 25% OFF"));
    }

    #[test]
    fn unkept_groups_are_named_and_checked() {
        let mut p = acc_testbed(256.0);
        p.unkept
            .insert("t_rtt".into(), "ACC's period end is late".into());
        p.check().unwrap();
        p.unkept.insert("bdp".into(), "no such group".into());
        let e = p.check().unwrap_err().to_string();
        assert!(e.contains("'bdp' is not a group"), "{e}");
    }

    #[test]
    fn nonsense_is_refused() {
        let mut p = acc_testbed(256.0);
        p.k_t = 0.0;
        assert!(p.derive().unwrap_err().to_string().contains("k_t"));
        let mut p = acc_testbed(256.0);
        p.xon_bytes = Some(300000.0);
        assert!(p.derive().unwrap_err().to_string().contains("xon_bytes"));
        let mut p = acc_testbed(256.0);
        p.knobs.insert("acc_t".into(), 1.0);
        assert!(p.derive().unwrap_err().to_string().contains("'acc_t'"));
    }
}
