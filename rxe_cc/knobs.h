/* SPDX-License-Identifier: GPL-2.0 */
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

#define RXE_CC_ALGS(X) \
	X(NONE, none) \
	X(FIXED, fixed) \
	X(ACC, acc) \
	X(DCQCN, dcqcn) \
	X(HPCC, hpcc) \
	X(FNCC, fncc) \
	X(ICC, icc) \
	X(TIMELY, timely) \
	X(DCTCP, dctcp) \
	X(SWIFT, swift) \

#define RXE_CC_KNOBS(X) \
	X(LINE_RATE_MBPS, line_rate_mbps, 100, 1, 400000, \
	  "link rate the algorithms assume, Mb/s") \
	X(FIXED_RATE_MBPS, fixed_rate_mbps, 100, 1, 400000, \
	  "payload rate of cc=fixed QPs, Mb/s") \
	X(DATA_ECN, data_ecn, 0, 0, 2, \
	  "IP ECN codepoint of new QPs' data: 0 not-ECT, 1 ECT(1), 2 ECT(0); cc=acc uses ECT(1) when 0") \
	X(ACK_EVERY, ack_every, 0, 0, 64, \
	  "new QPs ask for an ACK at least every n packets, 0 = rxe's default; cc=acc uses 1 when 0") \
	X(ACC_T_US, acc_t_us, 1000, 1, 1000000, \
	  "ACC: control period T, us") \
	X(ACC_RI_LOW_MBPS, acc_ri_low_mbps, 0, 0, 400000, \
	  "ACC: first-stage increase RI_low, Mb/s; 0 = line/250") \
	X(ACC_RI_HIGH_MBPS, acc_ri_high_mbps, 0, 0, 400000, \
	  "ACC: second-stage increase RI_high, Mb/s; 0 = 10 x RI_low") \
	X(ACC_P_THRESH, acc_p_thresh, 1, 0, 1000, \
	  "ACC: periods with UE before a victim halves its rate") \
	X(ACC_CE_PERMILLE, acc_ce_permille, 900, 1, 1000, \
	  "ACC: share of CE-marked ACKs, in 1/1000, that makes a period congested") \
	X(RPG_AI_RATE, rpg_ai_rate, 0, 0, 400000, \
	  "DCQCN: additive increase R_AI, Mb/s; 0 = 5 Mb/s per 25 Gb/s of line rate") \
	X(RPG_HAI_RATE, rpg_hai_rate, 0, 0, 400000, \
	  "DCQCN: hyper increase R_HAI, Mb/s; 0 = 10 x R_AI") \
	X(RPG_MIN_RATE, rpg_min_rate, 0, 0, 400000, \
	  "DCQCN: minimum rate, Mb/s; 0 = line/100") \
	X(RPG_TIME_RESET, rpg_time_reset, 1100, 1, 10000000, \
	  "DCQCN: rate increase timer, us") \
	X(RPG_BYTE_RESET, rpg_byte_reset, 262144, 1, 1000000000, \
	  "DCQCN: bytes sent per byte-counter increase event") \
	X(RPG_THRESHOLD, rpg_threshold, 5, 1, 1000, \
	  "DCQCN: increase events before additive and hyper increase (F)") \
	X(DCE_TCP_G, dce_tcp_g, 4, 1, 1024, \
	  "DCQCN: alpha gain g, in 1/1024") \
	X(DCE_TCP_RTT, dce_tcp_rtt, 1100, 1, 1000000, \
	  "DCQCN: alpha decay period without CNPs, us") \
	X(MIN_TIME_BETWEEN_CNPS, min_time_between_cnps, 1000, 0, 1000000, \
	  "DCQCN: notification point sends at most one CNP per QP per this many us") \
	X(PACING_BURST_US, pacing_burst_us, 0, 0, 100000, \
	  "pacing credit a late-woken sender may catch up on, us; 0 = the algorithm's own (one MTU at the line rate; cc=fixed 2000)") \
	X(HPCC_ETA_PERMILLE, hpcc_eta_permille, 950, 1, 1000, \
	  "HPCC: target utilisation eta, in 1/1000") \
	X(HPCC_MAX_STAGE, hpcc_max_stage, 5, 0, 1000, \
	  "HPCC: additive-increase RTTs before a multiplicative step (maxStage)") \
	X(HPCC_W_AI_BYTES, hpcc_w_ai_bytes, 0, 0, 1000000, \
	  "HPCC: additive increase W_AI, bytes; 0 = W_init x (1 - eta) / 100") \
	X(HPCC_T_US, hpcc_t_us, 1000, 1, 1000000, \
	  "HPCC: base RTT T, us") \
	X(INT_HOPS, int_hops, 5, 1, 5, \
	  "INT: hop records an HPCC QP's data packets, or an FNCC QP's ACKs, have room for (RXE_CC_INT_MAX_HOPS)") \
	X(FNCC_ALPHA_PERMILLE, fncc_alpha_permille, 1050, 1000, 10000, \
	  "FNCC: last-hop utilisation above which LHCS jumps to the fair window (alpha), in 1/1000") \
	X(FNCC_BETA_PERMILLE, fncc_beta_permille, 900, 1, 1000, \
	  "FNCC: share of the fair window LHCS jumps to (beta), in 1/1000") \
	X(ICC_T_US, icc_t_us, 1000, 1, 1000000, \
	  "ICC: base RTT T, us") \
	X(ICC_QD_BYTES, icc_qd_bytes, 0, 0, 100000000, \
	  "ICC: queue the V_max bound aims below (Q_d), bytes; 0 = one BDP of the reporting port") \
	X(PACING_CATCHUP_US, pacing_catchup_us, 0, 0, 100000, \
	  "pacing time a sender held at the gate may catch up on when its timer or send task ran late, us; 0 = the algorithm's own (cc=fixed 10000, others none)") \
	X(ACC_MIXED_INCREASE, acc_mixed_increase, 0, 0, 1, \
	  "ACC: 1 = a period with some CE, too few to be congested, raises the rate as an uncongested one; 0 = holds it (the paper)") \
	X(FNCC_LHCS_COMPUTEWIND, fncc_lhcs_computewind, 0, 0, 1, \
	  "FNCC: 1 = LHCS sets the reference window and runs COMPUTEWIND on it (Algorithm 3); 0 = sets the window directly (section 3.2.2)") \
	X(DCQCN_VARIANT, dcqcn_variant, 0, 0, 1, \
	  "DCQCN: 0 = the SIGCOMM'15 rules; 1 = the HPCC simulator's (rdma-hw.cc: alpha on a timer, a cut at most once per dcqcn_dec_us, no byte counter, constant R_HAI)") \
	X(DCQCN_DEC_US, dcqcn_dec_us, 80, 1, 1000000, \
	  "DCQCN (dcqcn_variant=1): rate-decrease check period, us (the simulator's 4 us, scaled as the other DCQCN times)") \
	X(TIMELY_T_LOW_US, timely_t_low_us, 1000, 1, 1000000, \
	  "TIMELY: T_low, below which the rate rises whatever the gradient, us (the paper's 50 us, scaled)") \
	X(TIMELY_T_HIGH_US, timely_t_high_us, 10000, 1, 1000000, \
	  "TIMELY: T_high, above which the rate falls whatever the gradient, us (the paper's 500 us, scaled)") \
	X(TIMELY_MIN_RTT_US, timely_min_rtt_us, 400, 1, 1000000, \
	  "TIMELY: minRTT, the gradient's normaliser, us (the paper's 20 us, scaled)") \
	X(TIMELY_AI_MBPS, timely_ai_mbps, 0, 0, 400000, \
	  "TIMELY: additive increase delta, Mb/s; 0 = line/1000 (the paper's 10 Mb/s at 10 Gb/s)") \
	X(TIMELY_ALPHA_PERMILLE, timely_alpha_permille, 875, 1, 1000, \
	  "TIMELY: EWMA weight alpha of a new RTT difference, in 1/1000") \
	X(TIMELY_BETA_PERMILLE, timely_beta_permille, 800, 1, 1000, \
	  "TIMELY: multiplicative decrease factor beta, in 1/1000") \
	X(DCTCP_G, dctcp_g, 64, 1, 1024, \
	  "DCTCP: alpha gain g, in 1/1024") \
	X(DCTCP_AI_MBPS, dctcp_ai_mbps, 0, 0, 400000, \
	  "DCTCP: additive increase per window R_AI, Mb/s; 0 = line/100 (the HPCC simulator's 1 Gb/s at 100 Gb/s)") \
	X(SWIFT_TARGET_US, swift_target_us, 0, 0, 1000000, \
	  "Swift: the fabric's base target delay, us; 0 = 2 x hpcc_t_us") \
	X(SWIFT_FS_RANGE_US, swift_fs_range_us, 0, 0, 1000000, \
	  "Swift: flow scaling's range above the base target, us; 0 = 4 x hpcc_t_us") \
	X(SWIFT_AI_PERMILLE, swift_ai_permille, 1000, 1, 100000, \
	  "Swift: additive increase ai, in 1/1000 packet per window of ACKs") \
	X(SWIFT_BETA_PERMILLE, swift_beta_permille, 800, 1, 1000, \
	  "Swift: multiplicative decrease gain beta, in 1/1000") \
	X(SWIFT_MAX_MDF_PERMILLE, swift_max_mdf_permille, 500, 1, 1000, \
	  "Swift: the largest share one decrease takes (max_mdf), in 1/1000") \
	X(NIC_QUEUE_PKTS, nic_queue_pkts, 0, 0, 64, \
	  "a device's QPs share its line_rate_mbps as a NIC's arbiter does: a QP waits at the gate while the device's wire clock is more than this many of its packets ahead; 0 = off (rxe hands each QP's packets to the NIC's queue)") \

#endif /* RXE_CC_KNOBS_H */
