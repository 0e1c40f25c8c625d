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

/* Algorithm ids; keep in sync with `Algorithm` in rxe_cc_main.rs. */
enum rxe_cc_alg {
	RXE_CC_ALG_NONE = 0,
	RXE_CC_ALG_FIXED = 1,
	RXE_CC_NR_ALGS,
};

/* Implemented in C, called from Rust. */
int rxe_cc_glue_register(void *ctx);
void rxe_cc_glue_unregister(void);
void rxe_cc_glue_kick(void *qp);
u64 rxe_cc_glue_now_ns(void);
u32 rxe_cc_param_alg(void);
u32 rxe_cc_param_line_rate_mbps(void);
u32 rxe_cc_param_fixed_rate_mbps(void);
u32 rxe_cc_param_data_ecn(void);

/* Implemented in Rust, called from the glue's hook trampolines. */
void *rxe_cc_rs_qp_create(void *ctx, void *qp, const char *name, u32 qpn,
			  u64 now_ns);
void rxe_cc_rs_qp_destroy(void *priv);
u64 rxe_cc_rs_tx_gate(void *priv, u64 now_ns, u32 psn, u32 payload,
		      u32 wire_bytes);
void rxe_cc_rs_tx_done(void *priv, u64 now_ns, u32 psn, u32 payload,
		       u32 wire_bytes);
void rxe_cc_rs_rx_ack(void *priv, u64 now_ns, u32 psn, u32 acked_psns,
		      u32 acked_bytes, u8 kind, u8 echo);
u8 rxe_cc_rs_rx_data(void *priv, u64 now_ns, u32 psn, u32 payload, u8 ecn);

#endif /* RXE_CC_GLUE_H */
