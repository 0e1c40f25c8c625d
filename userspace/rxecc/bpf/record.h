/* SPDX-License-Identifier: GPL-2.0 */
/* One rxe_cc trace event as record.bpf.c writes it to the ring buffer;
 * record.rs reads the same layout (TraceEvent). */
#ifndef RXECC_RECORD_H
#define RXECC_RECORD_H

#include <linux/types.h>

enum {
	RXECC_TRACE_RATE = 1,		/* a: rate_bps, b: tx_bytes, c: acked_bytes */
	RXECC_TRACE_HALT_START = 2,	/* a: planned_ns */
	RXECC_TRACE_HALT_END = 3,	/* a: halted_ns, b: planned_ns */
};

#define RXECC_TRACE_QP_LEN 32

struct rxecc_trace_event {
	__u32 kind;
	__u32 alg;
	__u32 state;
	__u32 pad;
	__u64 now_ns;
	__u64 a, b, c;
	char qp[RXECC_TRACE_QP_LEN];
};

#endif
