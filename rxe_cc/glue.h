/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The boundary between rxe_cc's C glue and its Rust core.
 *
 * The glue owns everything that knows a C layout: the rdma_rxe hook ABI
 * (rxe_cc_hooks.h) and the module parameters. Rust sees plain integers and
 * two opaque pointers: the per-QP handle it passes back to kick the QP, and
 * its own per-QP state.
 */
#ifndef RXE_CC_GLUE_H
#define RXE_CC_GLUE_H

#include <linux/types.h>
#include <rxe_cc_hooks.h>	/* RXE_CC_INT_MAX_HOPS */
#include "knobs.h"

/* Algorithm ids, as cc_core::alg::AlgId's (knobs.h). */
#define RXE_CC_ALG_ID(id, name) RXE_CC_ALG_##id,
enum rxe_cc_alg {
	RXE_CC_ALGS(RXE_CC_ALG_ID)
	RXE_CC_NR_ALGS,
};
#undef RXE_CC_ALG_ID

/* Numeric knobs, by id: cc_core::knobs::Knob (knobs.h). */
#define RXE_CC_KNOB_ID(id, name, def, lo, hi, desc) RXE_CC_KNOB_##id,
enum rxe_cc_knob_id {
	RXE_CC_KNOBS(RXE_CC_KNOB_ID)
	RXE_CC_NR_KNOBS,
};
#undef RXE_CC_KNOB_ID

/*
 * One hop's INT record, unpacked from the wire (rxe_cc_hooks.h); keep in
 * `IntRec` in abi.rs (asserted on both sides). ts_ns and tx_bytes wrap at 2^32.
 */
struct rxe_cc_int_rec {
	u64 b_bps;
	u64 ts_ns;
	u64 tx_bytes;
	u64 qlen;
};

/*
 * An ACK's INT shim, unpacked; keep in sync with `IntShim` in
 * rxe_cc_main.rs. HPCC and FNCC fill hop[] (FNCC in ACK order); ICC fills
 * hop[0].b_bps and .qlen and the fields marked ICC.
 */
struct rxe_cc_int_shim_info {
	struct rxe_cc_int_rec hop[RXE_CC_INT_MAX_HOPS];
	u32 kind;		/* enum rxe_cc_int_kind */
	u32 nhops;
	u32 overflow;
	u32 n_flows;		/* FNCC: the receiver's N */
	u32 port_flows;		/* ICC: flows on the reporting port */
	u32 lu_permille;	/* ICC: its link utilisation */
	s64 qlen_rate;		/* ICC: its queue growth, bytes per second */
};

/* Implemented in C, called from Rust. */
int rxe_cc_glue_register(void *ctx);
void rxe_cc_glue_unregister(void);
void rxe_cc_glue_kick(void *qp);
u64 rxe_cc_glue_now_ns(void);
u32 rxe_cc_param_alg(void);
u32 rxe_cc_knob(u32 id);
void rxe_cc_trace_rate(const char *qp, u64 now_ns, u32 alg, u32 state,
		       u64 rate_bps, u64 tx_bytes, u64 acked_bytes);
void rxe_cc_trace_halt_start(const char *qp, u64 now_ns, u64 planned_ns);
void rxe_cc_trace_halt_end(const char *qp, u64 now_ns, u64 halted_ns,
			   u64 planned_ns);

/* Implemented in Rust, called from the glue's hook trampolines. */
void *rxe_cc_rs_qp_create(void *ctx, void *qp, const char *name,
			  const char *dev, u32 qpn, u64 now_ns, u8 *data_ecn,
			  u16 *ack_every, u8 *int_kind, u8 *int_hops);
void rxe_cc_rs_qp_destroy(void *priv);
u64 rxe_cc_rs_tx_gate(void *priv, u64 now_ns, u32 psn, u32 payload,
		      u32 wire_bytes);
void rxe_cc_rs_tx_done(void *priv, u64 now_ns, u32 psn, u32 psns,
		       u32 payload, u32 wire_bytes);
void rxe_cc_rs_poll(void *priv, u64 now_ns);
void rxe_cc_rs_rx_ack(void *priv, u64 now_ns, u32 psn, u32 acked_psns,
		      u32 acked_bytes, u8 kind, u8 echo, u8 ce_pkts,
		      const struct rxe_cc_int_shim_info *int_info);
u8 rxe_cc_rs_rx_data(void *priv, u64 now_ns, u32 psn, u32 payload, u8 ecn,
		     u16 *int_flows);

#endif /* RXE_CC_GLUE_H */
