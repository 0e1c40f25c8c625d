// SPDX-License-Identifier: GPL-2.0
/*
 * rxe_cc's tracepoints (rxe_cc_trace.h), and the functions through which
 * the Rust core fires them: Rust cannot expand the TRACE_EVENT macros.
 * Each costs a call and a static-key test while its event is disabled.
 */
#define CREATE_TRACE_POINTS
#include "rxe_cc_trace.h"
#include "glue.h"

void rxe_cc_trace_rate(const char *qp, u64 now_ns, u32 alg, u32 state,
		       u64 rate_bps, u64 tx_bytes, u64 acked_bytes)
{
	trace_rxe_cc_rate(qp, now_ns, alg, state, rate_bps, tx_bytes,
			  acked_bytes);
}

void rxe_cc_trace_halt_start(const char *qp, u64 now_ns, u64 planned_ns)
{
	trace_rxe_cc_halt_start(qp, now_ns, planned_ns);
}

void rxe_cc_trace_halt_end(const char *qp, u64 now_ns, u64 halted_ns,
			   u64 planned_ns)
{
	trace_rxe_cc_halt_end(qp, now_ns, halted_ns, planned_ns);
}
