// SPDX-License-Identifier: GPL-2.0

//! rxe_cc's numeric knobs, defined once: the kernel module's C glue takes
//! its module parameters from this table (`rxe_cc/knobs.h` is generated
//! from it, and `cargo test` fails if it is stale), the module reads them
//! through [`KnobSource`], and so does the cargo model with its own values.

/// A knob's id: its index in [`KNOBS`] and in C's `enum rxe_cc_knob_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Knob {
    /// `line_rate_mbps`.
    LineRateMbps = 0,
    /// `fixed_rate_mbps`.
    FixedRateMbps = 1,
    /// `data_ecn`.
    DataEcn = 2,
    /// `ack_every`.
    AckEvery = 3,
    /// `acc_t_us`.
    AccTUs = 4,
    /// `acc_ri_low_mbps`.
    AccRiLowMbps = 5,
    /// `acc_ri_high_mbps`.
    AccRiHighMbps = 6,
    /// `acc_p_thresh`.
    AccPThresh = 7,
    /// `acc_ce_permille`.
    AccCePermille = 8,
    /// `rpg_ai_rate`.
    RpgAiRate = 9,
    /// `rpg_hai_rate`.
    RpgHaiRate = 10,
    /// `rpg_min_rate`.
    RpgMinRate = 11,
    /// `rpg_time_reset`.
    RpgTimeReset = 12,
    /// `rpg_byte_reset`.
    RpgByteReset = 13,
    /// `rpg_threshold`.
    RpgThreshold = 14,
    /// `dce_tcp_g`.
    DceTcpG = 15,
    /// `dce_tcp_rtt`.
    DceTcpRtt = 16,
    /// `min_time_between_cnps`.
    MinTimeBetweenCnps = 17,
    /// `pacing_burst_us`.
    PacingBurstUs = 18,
    /// `hpcc_eta_permille`.
    HpccEtaPermille = 19,
    /// `hpcc_max_stage`.
    HpccMaxStage = 20,
    /// `hpcc_w_ai_bytes`.
    HpccWAiBytes = 21,
    /// `hpcc_t_us`.
    HpccTUs = 22,
    /// `int_hops`.
    IntHops = 23,
    /// `fncc_alpha_permille`.
    FnccAlphaPermille = 24,
    /// `fncc_beta_permille`.
    FnccBetaPermille = 25,
    /// `icc_t_us`.
    IccTUs = 26,
    /// `icc_qd_bytes`.
    IccQdBytes = 27,
    /// `pacing_catchup_us`.
    PacingCatchupUs = 28,
    /// `acc_mixed_increase`.
    AccMixedIncrease = 29,
    /// `fncc_lhcs_computewind`.
    FnccLhcsComputeWind = 30,
    /// `dcqcn_variant`.
    DcqcnVariant = 31,
    /// `dcqcn_dec_us`.
    DcqcnDecUs = 32,
    /// `timely_t_low_us`.
    TimelyTLowUs = 33,
    /// `timely_t_high_us`.
    TimelyTHighUs = 34,
    /// `timely_min_rtt_us`.
    TimelyMinRttUs = 35,
    /// `timely_ai_mbps`.
    TimelyAiMbps = 36,
    /// `timely_alpha_permille`.
    TimelyAlphaPermille = 37,
    /// `timely_beta_permille`.
    TimelyBetaPermille = 38,
    /// `dctcp_g`.
    DctcpG = 39,
    /// `dctcp_ai_mbps`.
    DctcpAiMbps = 40,
    /// `swift_target_us`.
    SwiftTargetUs = 41,
    /// `swift_fs_range_us`.
    SwiftFsRangeUs = 42,
    /// `swift_ai_permille`.
    SwiftAiPermille = 43,
    /// `swift_beta_permille`.
    SwiftBetaPermille = 44,
    /// `swift_max_mdf_permille`.
    SwiftMaxMdfPermille = 45,
    /// `nic_queue_pkts`.
    NicQueuePkts = 46,
}

/// How many knobs there are (`RXE_CC_NR_KNOBS`).
pub const NR_KNOBS: usize = 47;

/// One knob: its sysfs name, default and range (inclusive), and what it does.
#[derive(Clone, Copy, Debug)]
pub struct KnobDef {
    /// The id, equal to the entry's index in [`KNOBS`].
    pub knob: Knob,
    /// `/sys/module/rxe_cc/parameters/<name>`.
    pub name: &'static str,
    /// Its value at load.
    pub default: u32,
    /// The lowest value a write may set.
    pub min: u32,
    /// The highest value a write may set.
    pub max: u32,
    /// What its value measures, and so how a scale model derives it
    /// from a paper's value (docs/scale-model.md).
    pub unit: Unit,
    /// `modinfo`'s description.
    pub help: &'static str,
}

/// What a knob's value measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count, a ratio or a switch: the same in any scale model.
    Count,
    /// A time, microseconds.
    Us,
    /// A size, bytes.
    Bytes,
    /// A rate, Mb/s.
    Mbps,
}

/// Every knob, in id order.
pub const KNOBS: [KnobDef; NR_KNOBS] = [
    KnobDef {
        knob: Knob::LineRateMbps,
        name: "line_rate_mbps",
        unit: Unit::Mbps,
        default: 100,
        min: 1,
        max: 400000,
        help: "link rate the algorithms assume, Mb/s",
    },
    KnobDef {
        knob: Knob::FixedRateMbps,
        name: "fixed_rate_mbps",
        unit: Unit::Mbps,
        default: 100,
        min: 1,
        max: 400000,
        help: "payload rate of cc=fixed QPs, Mb/s",
    },
    KnobDef {
        knob: Knob::DataEcn,
        name: "data_ecn",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 2,
        help: "IP ECN codepoint of new QPs' data: 0 not-ECT, 1 ECT(1), 2 ECT(0); cc=acc uses ECT(1) when 0",
    },
    KnobDef {
        knob: Knob::AckEvery,
        name: "ack_every",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 64,
        help: "new QPs ask for an ACK at least every n packets, 0 = rxe's default; cc=acc uses 1 when 0",
    },
    KnobDef {
        knob: Knob::AccTUs,
        name: "acc_t_us",
        unit: Unit::Us,
        default: 1000,
        min: 1,
        max: 1000000,
        help: "ACC: control period T, us",
    },
    KnobDef {
        knob: Knob::AccRiLowMbps,
        name: "acc_ri_low_mbps",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "ACC: first-stage increase RI_low, Mb/s; 0 = line/250",
    },
    KnobDef {
        knob: Knob::AccRiHighMbps,
        name: "acc_ri_high_mbps",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "ACC: second-stage increase RI_high, Mb/s; 0 = 10 x RI_low",
    },
    KnobDef {
        knob: Knob::AccPThresh,
        name: "acc_p_thresh",
        unit: Unit::Count,
        default: 1,
        min: 0,
        max: 1000,
        help: "ACC: periods with UE before a victim halves its rate",
    },
    KnobDef {
        knob: Knob::AccCePermille,
        name: "acc_ce_permille",
        unit: Unit::Count,
        default: 900,
        min: 1,
        max: 1000,
        help: "ACC: share of CE-marked ACKs, in 1/1000, that makes a period congested",
    },
    KnobDef {
        knob: Knob::RpgAiRate,
        name: "rpg_ai_rate",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "DCQCN: additive increase R_AI, Mb/s; 0 = 5 Mb/s per 25 Gb/s of line rate",
    },
    KnobDef {
        knob: Knob::RpgHaiRate,
        name: "rpg_hai_rate",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "DCQCN: hyper increase R_HAI, Mb/s; 0 = 10 x R_AI",
    },
    KnobDef {
        knob: Knob::RpgMinRate,
        name: "rpg_min_rate",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "DCQCN: minimum rate, Mb/s; 0 = line/100",
    },
    KnobDef {
        knob: Knob::RpgTimeReset,
        name: "rpg_time_reset",
        unit: Unit::Us,
        default: 1100,
        min: 1,
        max: 10000000,
        help: "DCQCN: rate increase timer, us",
    },
    KnobDef {
        knob: Knob::RpgByteReset,
        name: "rpg_byte_reset",
        unit: Unit::Bytes,
        default: 262144,
        min: 1,
        max: 1000000000,
        help: "DCQCN: bytes sent per byte-counter increase event",
    },
    KnobDef {
        knob: Knob::RpgThreshold,
        name: "rpg_threshold",
        unit: Unit::Count,
        default: 5,
        min: 1,
        max: 1000,
        help: "DCQCN: increase events before additive and hyper increase (F)",
    },
    KnobDef {
        knob: Knob::DceTcpG,
        name: "dce_tcp_g",
        unit: Unit::Count,
        default: 4,
        min: 1,
        max: 1024,
        help: "DCQCN: alpha gain g, in 1/1024",
    },
    KnobDef {
        knob: Knob::DceTcpRtt,
        name: "dce_tcp_rtt",
        unit: Unit::Us,
        default: 1100,
        min: 1,
        max: 1000000,
        help: "DCQCN: alpha decay period without CNPs, us",
    },
    KnobDef {
        knob: Knob::MinTimeBetweenCnps,
        name: "min_time_between_cnps",
        unit: Unit::Us,
        default: 1000,
        min: 0,
        max: 1000000,
        help: "DCQCN: notification point sends at most one CNP per QP per this many us",
    },
    KnobDef {
        knob: Knob::PacingBurstUs,
        name: "pacing_burst_us",
        unit: Unit::Us,
        default: 0,
        min: 0,
        max: 100000,
        help: "pacing credit a late-woken sender may catch up on, us; 0 = the algorithm's own (one MTU at the line rate; cc=fixed 2000)",
    },
    KnobDef {
        knob: Knob::HpccEtaPermille,
        name: "hpcc_eta_permille",
        unit: Unit::Count,
        default: 950,
        min: 1,
        max: 1000,
        help: "HPCC: target utilisation eta, in 1/1000",
    },
    KnobDef {
        knob: Knob::HpccMaxStage,
        name: "hpcc_max_stage",
        unit: Unit::Count,
        default: 5,
        min: 0,
        max: 1000,
        help: "HPCC: additive-increase RTTs before a multiplicative step (maxStage)",
    },
    KnobDef {
        knob: Knob::HpccWAiBytes,
        name: "hpcc_w_ai_bytes",
        unit: Unit::Bytes,
        default: 0,
        min: 0,
        max: 1000000,
        help: "HPCC: additive increase W_AI, bytes; 0 = W_init x (1 - eta) / 100",
    },
    KnobDef {
        knob: Knob::HpccTUs,
        name: "hpcc_t_us",
        unit: Unit::Us,
        default: 1000,
        min: 1,
        max: 1000000,
        help: "HPCC: base RTT T, us",
    },
    KnobDef {
        knob: Knob::IntHops,
        name: "int_hops",
        unit: Unit::Count,
        default: 5,
        min: 1,
        max: 5,
        help: "INT: hop records an HPCC QP's data packets, or an FNCC QP's ACKs, have room for (RXE_CC_INT_MAX_HOPS)",
    },
    KnobDef {
        knob: Knob::FnccAlphaPermille,
        name: "fncc_alpha_permille",
        unit: Unit::Count,
        default: 1050,
        min: 1000,
        max: 10000,
        help: "FNCC: last-hop utilisation above which LHCS jumps to the fair window (alpha), in 1/1000",
    },
    KnobDef {
        knob: Knob::FnccBetaPermille,
        name: "fncc_beta_permille",
        unit: Unit::Count,
        default: 900,
        min: 1,
        max: 1000,
        help: "FNCC: share of the fair window LHCS jumps to (beta), in 1/1000",
    },
    KnobDef {
        knob: Knob::IccTUs,
        name: "icc_t_us",
        unit: Unit::Us,
        default: 1000,
        min: 1,
        max: 1000000,
        help: "ICC: base RTT T, us",
    },
    KnobDef {
        knob: Knob::IccQdBytes,
        name: "icc_qd_bytes",
        unit: Unit::Bytes,
        default: 0,
        min: 0,
        max: 100000000,
        help: "ICC: queue the V_max bound aims below (Q_d), bytes; 0 = one BDP of the reporting port",
    },
    KnobDef {
        knob: Knob::PacingCatchupUs,
        name: "pacing_catchup_us",
        unit: Unit::Us,
        default: 0,
        min: 0,
        max: 100000,
        help: "pacing time a sender held at the gate may catch up on when its timer or send task ran late, us; 0 = the algorithm's own (cc=fixed 10000, others none)",
    },
    KnobDef {
        knob: Knob::AccMixedIncrease,
        name: "acc_mixed_increase",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 1,
        help: "ACC: 1 = a period with some CE, too few to be congested, raises the rate as an uncongested one; 0 = holds it (the paper)",
    },
    KnobDef {
        knob: Knob::FnccLhcsComputeWind,
        name: "fncc_lhcs_computewind",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 1,
        help: "FNCC: 1 = LHCS sets the reference window and runs COMPUTEWIND on it (Algorithm 3); 0 = sets the window directly (section 3.2.2)",
    },
    KnobDef {
        knob: Knob::DcqcnVariant,
        name: "dcqcn_variant",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 1,
        help: "DCQCN: 0 = the SIGCOMM'15 rules; 1 = the HPCC simulator's (rdma-hw.cc: alpha on a timer, a cut at most once per dcqcn_dec_us, no byte counter, constant R_HAI)",
    },
    KnobDef {
        knob: Knob::DcqcnDecUs,
        name: "dcqcn_dec_us",
        unit: Unit::Us,
        default: 80,
        min: 1,
        max: 1000000,
        help: "DCQCN (dcqcn_variant=1): rate-decrease check period, us (the simulator's 4 us, scaled as the other DCQCN times)",
    },
    KnobDef {
        knob: Knob::TimelyTLowUs,
        name: "timely_t_low_us",
        unit: Unit::Us,
        default: 1000,
        min: 1,
        max: 1000000,
        help: "TIMELY: T_low, below which the rate rises whatever the gradient, us (the paper's 50 us, scaled)",
    },
    KnobDef {
        knob: Knob::TimelyTHighUs,
        name: "timely_t_high_us",
        unit: Unit::Us,
        default: 10000,
        min: 1,
        max: 1000000,
        help: "TIMELY: T_high, above which the rate falls whatever the gradient, us (the paper's 500 us, scaled)",
    },
    KnobDef {
        knob: Knob::TimelyMinRttUs,
        name: "timely_min_rtt_us",
        unit: Unit::Us,
        default: 400,
        min: 1,
        max: 1000000,
        help: "TIMELY: minRTT, the gradient's normaliser, us (the paper's 20 us, scaled)",
    },
    KnobDef {
        knob: Knob::TimelyAiMbps,
        name: "timely_ai_mbps",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "TIMELY: additive increase delta, Mb/s; 0 = line/1000 (the paper's 10 Mb/s at 10 Gb/s)",
    },
    KnobDef {
        knob: Knob::TimelyAlphaPermille,
        name: "timely_alpha_permille",
        unit: Unit::Count,
        default: 875,
        min: 1,
        max: 1000,
        help: "TIMELY: EWMA weight alpha of a new RTT difference, in 1/1000",
    },
    KnobDef {
        knob: Knob::TimelyBetaPermille,
        name: "timely_beta_permille",
        unit: Unit::Count,
        default: 800,
        min: 1,
        max: 1000,
        help: "TIMELY: multiplicative decrease factor beta, in 1/1000",
    },
    KnobDef {
        knob: Knob::DctcpG,
        name: "dctcp_g",
        unit: Unit::Count,
        default: 64,
        min: 1,
        max: 1024,
        help: "DCTCP: alpha gain g, in 1/1024",
    },
    KnobDef {
        knob: Knob::DctcpAiMbps,
        name: "dctcp_ai_mbps",
        unit: Unit::Mbps,
        default: 0,
        min: 0,
        max: 400000,
        help: "DCTCP: additive increase per window R_AI, Mb/s; 0 = line/100 (the HPCC simulator's 1 Gb/s at 100 Gb/s)",
    },
    KnobDef {
        knob: Knob::SwiftTargetUs,
        name: "swift_target_us",
        unit: Unit::Us,
        default: 0,
        min: 0,
        max: 1000000,
        help: "Swift: the fabric's base target delay, us; 0 = 2 x hpcc_t_us",
    },
    KnobDef {
        knob: Knob::SwiftFsRangeUs,
        name: "swift_fs_range_us",
        unit: Unit::Us,
        default: 0,
        min: 0,
        max: 1000000,
        help: "Swift: flow scaling's range above the base target, us; 0 = 4 x hpcc_t_us",
    },
    KnobDef {
        knob: Knob::SwiftAiPermille,
        name: "swift_ai_permille",
        unit: Unit::Count,
        default: 1000,
        min: 1,
        max: 100000,
        help: "Swift: additive increase ai, in 1/1000 packet per window of ACKs",
    },
    KnobDef {
        knob: Knob::SwiftBetaPermille,
        name: "swift_beta_permille",
        unit: Unit::Count,
        default: 800,
        min: 1,
        max: 1000,
        help: "Swift: multiplicative decrease gain beta, in 1/1000",
    },
    KnobDef {
        knob: Knob::SwiftMaxMdfPermille,
        name: "swift_max_mdf_permille",
        unit: Unit::Count,
        default: 500,
        min: 1,
        max: 1000,
        help: "Swift: the largest share one decrease takes (max_mdf), in 1/1000",
    },
    KnobDef {
        knob: Knob::NicQueuePkts,
        name: "nic_queue_pkts",
        unit: Unit::Count,
        default: 0,
        min: 0,
        max: 64,
        help: "a device's QPs share its line_rate_mbps as a NIC's arbiter does: a QP waits at the gate while the device's wire clock is more than this many of its packets ahead; 0 = off (rxe hands each QP's packets to the NIC's queue)",
    },
];

// Each entry sits at its id.
const _: () = {
    let mut i = 0;
    while i < NR_KNOBS {
        assert!(KNOBS[i].knob as usize == i);
        i += 1;
    }
};

/// Where an algorithm reads its knobs: the module's parameters in the
/// kernel, a run's settings in the model.
pub trait KnobSource {
    /// The knob's current value.
    fn get(&self, knob: Knob) -> u32;

    /// The value in Mb/s as b/s.
    fn bps(&self, knob: Knob) -> u64 {
        u64::from(self.get(knob)).saturating_mul(1_000_000)
    }

    /// The value in us as ns.
    fn us_ns(&self, knob: Knob) -> u64 {
        u64::from(self.get(knob)).saturating_mul(1000)
    }
}

/// The defaults, as a source (`KNOBS`' `default` column).
pub struct Defaults;

impl KnobSource for Defaults {
    fn get(&self, knob: Knob) -> u32 {
        KNOBS.get(knob as usize).map_or(0, |d| d.default)
    }
}
