// SPDX-License-Identifier: GPL-2.0
/*
 * record: rxe_cc's tracepoints (rxe_cc/rxe_cc_trace.h) into a BPF ring
 * buffer, for `rxecc record`, in binary: no text formatting in the kernel
 * and no parsing of trace_pipe lines in userspace.
 *
 * Raw tracepoints get the TP_PROTO arguments as they are, so this needs no
 * BTF of the module: the argument order is the ABI, and it is the one in
 * rxe_cc_trace.h. A record that finds the ring full is counted in `lost`.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "record.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

/* Records the ring had no room for. */
__u64 lost = 0;

static __always_inline int emit(__u32 kind, const char *qp, __u64 now_ns, __u32 alg, __u32 state,
				__u64 a, __u64 b, __u64 c)
{
	struct rxecc_trace_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->kind = kind;
	e->alg = alg;
	e->state = state;
	e->pad = 0;
	e->now_ns = now_ns;
	e->a = a;
	e->b = b;
	e->c = c;
	if (bpf_probe_read_kernel_str(e->qp, sizeof(e->qp), qp) < 0)
		e->qp[0] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* TP_PROTO(const char *qp, u64 now_ns, u32 alg, u32 state, u64 rate_bps,
 *          u64 tx_bytes, u64 acked_bytes) */
SEC("raw_tp/rxe_cc_rate")
int on_rate(struct bpf_raw_tracepoint_args *ctx)
{
	return emit(RXECC_TRACE_RATE, (const char *)ctx->args[0], ctx->args[1], ctx->args[2],
		    ctx->args[3], ctx->args[4], ctx->args[5], ctx->args[6]);
}

/* TP_PROTO(const char *qp, u64 now_ns, u64 planned_ns) */
SEC("raw_tp/rxe_cc_halt_start")
int on_halt_start(struct bpf_raw_tracepoint_args *ctx)
{
	return emit(RXECC_TRACE_HALT_START, (const char *)ctx->args[0], ctx->args[1], 0, 0,
		    ctx->args[2], 0, 0);
}

/* TP_PROTO(const char *qp, u64 now_ns, u64 halted_ns, u64 planned_ns) */
SEC("raw_tp/rxe_cc_halt_end")
int on_halt_end(struct bpf_raw_tracepoint_args *ctx)
{
	return emit(RXECC_TRACE_HALT_END, (const char *)ctx->args[0], ctx->args[1], 0, 0,
		    ctx->args[2], ctx->args[3], 0);
}

char LICENSE[] SEC("license") = "GPL";
