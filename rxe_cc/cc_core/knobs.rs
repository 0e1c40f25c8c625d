// SPDX-License-Identifier: GPL-2.0

//! rxe_cc's numeric knobs, defined once: the kernel module's C glue takes
//! its module parameters from this table (`rxe_cc/knobs.h` is generated
//! from it, and `cargo test` fails if it is stale), the module reads them
//! through [`KnobSource`], and so does the cargo model with its own values.

/// Writes each knob once: its id (the `Knob` variant, numbered in order
/// from 0, which is also C's `enum rxe_cc_knob_id`), its sysfs name, unit,
/// default, range and help. It defines [`Knob`], [`KNOBS`] and [`NR_KNOBS`].
macro_rules! knobs {
    ($($variant:ident: $name:literal, $unit:ident, $default:literal,
       $min:literal..=$max:literal, $help:literal;)*) => {
        /// A knob's id: its index in [`KNOBS`] and in C's `enum rxe_cc_knob_id`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum Knob {
            $(#[doc = concat!("`", $name, "`.")] $variant,)*
        }

        /// How many knobs there are (`RXE_CC_NR_KNOBS`).
        pub const NR_KNOBS: usize = [$($name),*].len();

        /// Every knob, in id order.
        pub const KNOBS: [KnobDef; NR_KNOBS] = [$(KnobDef {
            knob: Knob::$variant,
            name: $name,
            unit: Unit::$unit,
            default: $default,
            min: $min,
            max: $max,
            help: $help,
        },)*];
    };
}

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

knobs! {
    LineRateMbps: "line_rate_mbps", Mbps, 100, 1..=400000,
        "link rate the algorithms assume, Mb/s";
    FixedRateMbps: "fixed_rate_mbps", Mbps, 100, 1..=400000,
        "payload rate of cc=fixed QPs, Mb/s";
    DataEcn: "data_ecn", Count, 0, 0..=2,
        "IP ECN codepoint of new QPs' data: 0 not-ECT, 1 ECT(1), 2 ECT(0); cc=acc uses ECT(1) when 0";
    AckEvery: "ack_every", Count, 0, 0..=64,
        "new QPs ask for an ACK at least every n packets, 0 = rxe's default; cc=acc uses 1 when 0";
    AccTUs: "acc_t_us", Us, 1000, 1..=1000000,
        "ACC: control period T, us";
    AccRiLowMbps: "acc_ri_low_mbps", Mbps, 0, 0..=400000,
        "ACC: first-stage increase RI_low, Mb/s; 0 = line/250";
    AccRiHighMbps: "acc_ri_high_mbps", Mbps, 0, 0..=400000,
        "ACC: second-stage increase RI_high, Mb/s; 0 = 10 x RI_low";
    AccPThresh: "acc_p_thresh", Count, 1, 0..=1000,
        "ACC: periods with UE before a victim halves its rate";
    AccCePermille: "acc_ce_permille", Count, 900, 1..=1000,
        "ACC: share of CE-marked ACKs, in 1/1000, that makes a period congested";
    RpgAiRate: "rpg_ai_rate", Mbps, 0, 0..=400000,
        "DCQCN: additive increase R_AI, Mb/s; 0 = 5 Mb/s per 25 Gb/s of line rate";
    RpgHaiRate: "rpg_hai_rate", Mbps, 0, 0..=400000,
        "DCQCN: hyper increase R_HAI, Mb/s; 0 = 10 x R_AI";
    RpgMinRate: "rpg_min_rate", Mbps, 0, 0..=400000,
        "DCQCN: minimum rate, Mb/s; 0 = line/100";
    RpgTimeReset: "rpg_time_reset", Us, 1100, 1..=10000000,
        "DCQCN: rate increase timer, us";
    RpgByteReset: "rpg_byte_reset", Bytes, 262144, 1..=1000000000,
        "DCQCN: bytes sent per byte-counter increase event";
    RpgThreshold: "rpg_threshold", Count, 5, 1..=1000,
        "DCQCN: increase events before additive and hyper increase (F)";
    DceTcpG: "dce_tcp_g", Count, 4, 1..=1024,
        "DCQCN: alpha gain g, in 1/1024";
    DceTcpRtt: "dce_tcp_rtt", Us, 1100, 1..=1000000,
        "DCQCN: alpha decay period without CNPs, us";
    MinTimeBetweenCnps: "min_time_between_cnps", Us, 1000, 0..=1000000,
        "DCQCN: notification point sends at most one CNP per QP per this many us";
    PacingBurstUs: "pacing_burst_us", Us, 0, 0..=100000,
        "pacing credit a late-woken sender may catch up on, us; 0 = the algorithm's own (one MTU at the line rate; cc=fixed 2000)";
    HpccEtaPermille: "hpcc_eta_permille", Count, 950, 1..=1000,
        "HPCC: target utilisation eta, in 1/1000";
    HpccMaxStage: "hpcc_max_stage", Count, 5, 0..=1000,
        "HPCC: additive-increase RTTs before a multiplicative step (maxStage)";
    HpccWAiBytes: "hpcc_w_ai_bytes", Bytes, 0, 0..=1000000,
        "HPCC: additive increase W_AI, bytes; 0 = W_init x (1 - eta) / 100";
    HpccTUs: "hpcc_t_us", Us, 1000, 1..=1000000,
        "HPCC: base RTT T, us";
    IntHops: "int_hops", Count, 5, 1..=5,
        "INT: hop records an HPCC QP's data packets, or an FNCC QP's ACKs, have room for (RXE_CC_INT_MAX_HOPS)";
    FnccAlphaPermille: "fncc_alpha_permille", Count, 1050, 1000..=10000,
        "FNCC: last-hop utilisation above which LHCS jumps to the fair window (alpha), in 1/1000";
    FnccBetaPermille: "fncc_beta_permille", Count, 900, 1..=1000,
        "FNCC: share of the fair window LHCS jumps to (beta), in 1/1000";
    IccTUs: "icc_t_us", Us, 1000, 1..=1000000,
        "ICC: base RTT T, us";
    IccQdBytes: "icc_qd_bytes", Bytes, 0, 0..=100000000,
        "ICC: queue the V_max bound aims below (Q_d), bytes; 0 = one BDP of the reporting port";
    PacingCatchupUs: "pacing_catchup_us", Us, 0, 0..=100000,
        "pacing time a sender held at the gate may catch up on when its timer or send task ran late, us; 0 = the algorithm's own (cc=fixed 10000, others none)";
    AccMixedIncrease: "acc_mixed_increase", Count, 0, 0..=1,
        "ACC: 1 = a period with some CE, too few to be congested, raises the rate as an uncongested one; 0 = holds it (the paper)";
    FnccLhcsComputeWind: "fncc_lhcs_computewind", Count, 0, 0..=1,
        "FNCC: 1 = LHCS sets the reference window and runs COMPUTEWIND on it (Algorithm 3); 0 = sets the window directly (section 3.2.2)";
    DcqcnVariant: "dcqcn_variant", Count, 0, 0..=1,
        "DCQCN: 0 = the SIGCOMM'15 rules; 1 = the HPCC simulator's (rdma-hw.cc: alpha on a timer, a cut at most once per dcqcn_dec_us, no byte counter, constant R_HAI)";
    DcqcnDecUs: "dcqcn_dec_us", Us, 80, 1..=1000000,
        "DCQCN (dcqcn_variant=1): rate-decrease check period, us (the simulator's 4 us, scaled as the other DCQCN times)";
    TimelyTLowUs: "timely_t_low_us", Us, 1000, 1..=1000000,
        "TIMELY: T_low, below which the rate rises whatever the gradient, us (the paper's 50 us, scaled)";
    TimelyTHighUs: "timely_t_high_us", Us, 10000, 1..=1000000,
        "TIMELY: T_high, above which the rate falls whatever the gradient, us (the paper's 500 us, scaled)";
    TimelyMinRttUs: "timely_min_rtt_us", Us, 400, 1..=1000000,
        "TIMELY: minRTT, the gradient's normaliser, us (the paper's 20 us, scaled)";
    TimelyAiMbps: "timely_ai_mbps", Mbps, 0, 0..=400000,
        "TIMELY: additive increase delta, Mb/s; 0 = line/1000 (the paper's 10 Mb/s at 10 Gb/s)";
    TimelyAlphaPermille: "timely_alpha_permille", Count, 875, 1..=1000,
        "TIMELY: EWMA weight alpha of a new RTT difference, in 1/1000";
    TimelyBetaPermille: "timely_beta_permille", Count, 800, 1..=1000,
        "TIMELY: multiplicative decrease factor beta, in 1/1000";
    DctcpG: "dctcp_g", Count, 64, 1..=1024,
        "DCTCP: alpha gain g, in 1/1024";
    DctcpAiMbps: "dctcp_ai_mbps", Mbps, 0, 0..=400000,
        "DCTCP: additive increase per window R_AI, Mb/s; 0 = line/100 (the HPCC simulator's 1 Gb/s at 100 Gb/s)";
    SwiftTargetUs: "swift_target_us", Us, 0, 0..=1000000,
        "Swift: the fabric's base target delay, us; 0 = 2 x hpcc_t_us";
    SwiftFsRangeUs: "swift_fs_range_us", Us, 0, 0..=1000000,
        "Swift: flow scaling's range above the base target, us; 0 = 4 x hpcc_t_us";
    SwiftAiPermille: "swift_ai_permille", Count, 1000, 1..=100000,
        "Swift: additive increase ai, in 1/1000 packet per window of ACKs";
    SwiftBetaPermille: "swift_beta_permille", Count, 800, 1..=1000,
        "Swift: multiplicative decrease gain beta, in 1/1000";
    SwiftMaxMdfPermille: "swift_max_mdf_permille", Count, 500, 1..=1000,
        "Swift: the largest share one decrease takes (max_mdf), in 1/1000";
    NicQueuePkts: "nic_queue_pkts", Count, 0, 0..=64,
        "a device's QPs share its line_rate_mbps as a NIC's arbiter does: a QP waits at the gate while the device's wire clock is more than this many of its packets ahead; 0 = off (rxe hands each QP's packets to the NIC's queue)";
}

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
