/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rxe_cc tracepoints: a QP's rate at each control period (and each CNP),
 * and the start and end of each ACC source halt. `rxecc record` reads them
 * through BPF on the raw tracepoints (userspace/rxecc/bpf/record.bpf.c,
 * which takes the TP_PROTO arguments in this order: keep them) into CSV;
 * they also show in tracefs (events/rxe_cc/). docs/architecture.md lists the
 * fields. Times are ktime_get_ns(), the clock of every hook's now_ns.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rxe_cc

#if !defined(RXE_CC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RXE_CC_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(rxe_cc_rate,
	TP_PROTO(const char *qp, u64 now_ns, u32 alg, u32 state, u64 rate_bps,
		 u64 tx_bytes, u64 acked_bytes),
	TP_ARGS(qp, now_ns, alg, state, rate_bps, tx_bytes, acked_bytes),
	TP_STRUCT__entry(
		__string(qp, qp)
		__field(u64, now_ns)
		__field(u32, alg)
		__field(u32, state)
		__field(u64, rate_bps)
		__field(u64, tx_bytes)
		__field(u64, acked_bytes)
	),
	TP_fast_assign(
		__assign_str(qp);
		__entry->now_ns = now_ns;
		__entry->alg = alg;
		__entry->state = state;
		__entry->rate_bps = rate_bps;
		__entry->tx_bytes = tx_bytes;
		__entry->acked_bytes = acked_bytes;
	),
	TP_printk("qp=%s ns=%llu alg=%u state=%u rate_bps=%llu tx_bytes=%llu acked_bytes=%llu",
		  __get_str(qp), __entry->now_ns, __entry->alg, __entry->state,
		  __entry->rate_bps, __entry->tx_bytes, __entry->acked_bytes)
);

TRACE_EVENT(rxe_cc_halt_start,
	TP_PROTO(const char *qp, u64 now_ns, u64 planned_ns),
	TP_ARGS(qp, now_ns, planned_ns),
	TP_STRUCT__entry(
		__string(qp, qp)
		__field(u64, now_ns)
		__field(u64, planned_ns)
	),
	TP_fast_assign(
		__assign_str(qp);
		__entry->now_ns = now_ns;
		__entry->planned_ns = planned_ns;
	),
	TP_printk("qp=%s ns=%llu planned_ns=%llu", __get_str(qp),
		  __entry->now_ns, __entry->planned_ns)
);

TRACE_EVENT(rxe_cc_halt_end,
	TP_PROTO(const char *qp, u64 now_ns, u64 halted_ns, u64 planned_ns),
	TP_ARGS(qp, now_ns, halted_ns, planned_ns),
	TP_STRUCT__entry(
		__string(qp, qp)
		__field(u64, now_ns)
		__field(u64, halted_ns)
		__field(u64, planned_ns)
	),
	TP_fast_assign(
		__assign_str(qp);
		__entry->now_ns = now_ns;
		__entry->halted_ns = halted_ns;
		__entry->planned_ns = planned_ns;
	),
	TP_printk("qp=%s ns=%llu halted_ns=%llu planned_ns=%llu", __get_str(qp),
		  __entry->now_ns, __entry->halted_ns, __entry->planned_ns)
);

#endif /* RXE_CC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rxe_cc_trace
#include <trace/define_trace.h>
