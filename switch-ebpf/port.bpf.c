// SPDX-License-Identifier: GPL-2.0
/*
 * port: one emulated switch port, as a BPF qdisc (struct_ops Qdisc_ops).
 *
 * A FIFO egress queue drained at the port's link rate, enforced at dequeue
 * with the qdisc watchdog, with exact byte and packet counts. Each port
 * loads its own instance of this object (its own globals and its own
 * Qdisc_ops id), so no state is shared between ports.
 *
 * The pacer keeps credit up to `burst_ns` instead of restarting from "now":
 * under QEMU TCG the watchdog fires late, and that lateness would be lost.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kfuncs.h"
#include "port.h"

#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01
#define NSEC_PER_SEC		1000000000ULL

char _license[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile __u64 rate_bps = 100000000;	/* link rate */
const volatile __u64 burst_ns = 1000000;	/* pacing credit kept */
const volatile __u32 limit_pkts = 10000;	/* queue limit: drops above */


static __always_inline struct port_state *state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&port_state, &zero);
}
__u64 next_tx_ns;

struct skb_node {
	struct sk_buff __kptr *skb;
	struct bpf_list_node node;
};

private(Q) struct bpf_spin_lock q_lock;
private(Q) struct bpf_list_head q_head __contains(skb_node, node);

static __always_inline unsigned int pkt_len(const struct sk_buff *skb)
{
	return ((struct qdisc_skb_cb *)skb->cb)->pkt_len;
}

SEC("struct_ops")
int BPF_PROG(port_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	struct port_state *st = state();
	struct skb_node *n;
	__u32 len = pkt_len(skb);

	if (!st || sch->q.qlen >= limit_pkts)
		goto drop;
	n = bpf_obj_new(typeof(*n));
	if (!n)
		goto drop;
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)
		bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */

	bpf_spin_lock(&q_lock);
	bpf_list_push_back(&q_head, &n->node);
	bpf_spin_unlock(&q_lock);

	bpf_spin_lock(&st->lock);
	st->stats.enq_pkts++;
	st->stats.enq_bytes += len;
	st->stats.qlen_pkts++;
	st->stats.qlen_bytes += len;
	if (st->stats.qlen_bytes > st->stats.max_qlen_bytes)
		st->stats.max_qlen_bytes = st->stats.qlen_bytes;
	bpf_spin_unlock(&st->lock);

	sch->q.qlen++;
	sch->qstats.backlog += len;
	return NET_XMIT_SUCCESS;
drop:
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.drops++;
		bpf_spin_unlock(&st->lock);
	}
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

SEC("struct_ops")
struct sk_buff *BPF_PROG(port_dequeue, struct Qdisc *sch)
{
	struct bpf_list_node *node;
	struct sk_buff *skb = NULL;
	struct port_state *st;
	struct skb_node *n;
	__u64 now = bpf_ktime_get_ns(), start;
	__u32 len;

	if (now < next_tx_ns) {
		bpf_qdisc_watchdog_schedule(sch, next_tx_ns, 0);
		return NULL;
	}

	bpf_spin_lock(&q_lock);
	node = bpf_list_pop_front(&q_head);
	bpf_spin_unlock(&q_lock);
	if (!node)
		return NULL;
	n = container_of(node, struct skb_node, node);
	skb = bpf_kptr_xchg(&n->skb, skb);
	bpf_obj_drop(n);
	if (!skb)
		return NULL;

	len = pkt_len(skb);
	sch->q.qlen--;
	sch->qstats.backlog -= len;
	st = state();
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.deq_pkts++;
		st->stats.deq_bytes += len;
		st->stats.qlen_pkts--;
		st->stats.qlen_bytes -= len;
		bpf_spin_unlock(&st->lock);
	}

	/* Next departure: this packet's serialisation after the last one,
	 * keeping at most burst_ns of credit. */
	start = next_tx_ns;
	if (start + burst_ns < now)
		start = now - burst_ns;
	next_tx_ns = start + (__u64)len * 8 * NSEC_PER_SEC / rate_bps;

	bpf_qdisc_bstats_update(sch, skb);
	return skb;
}

SEC("struct_ops")
int BPF_PROG(port_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	sch->limit = limit_pkts;
	return 0;
}

SEC("struct_ops")
void BPF_PROG(port_reset, struct Qdisc *sch)
{
	struct bpf_list_node *node;
	struct port_state *st;
	struct skb_node *n;
	int i;

	bpf_for(i, 0, 100000) {
		struct sk_buff *skb = NULL;

		bpf_spin_lock(&q_lock);
		node = bpf_list_pop_front(&q_head);
		bpf_spin_unlock(&q_lock);
		if (!node)
			break;
		n = container_of(node, struct skb_node, node);
		skb = bpf_kptr_xchg(&n->skb, skb);
		if (skb)
			bpf_kfree_skb(skb);
		bpf_obj_drop(n);
	}
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	st = state();
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.qlen_pkts = 0;
		st->stats.qlen_bytes = 0;
		bpf_spin_unlock(&st->lock);
	}
}

SEC("struct_ops")
void BPF_PROG(port_destroy, struct Qdisc *sch)
{
}

SEC(".struct_ops.link")
struct Qdisc_ops port = {
	.enqueue = (void *)port_enqueue,
	.dequeue = (void *)port_dequeue,
	.init = (void *)port_init,
	.reset = (void *)port_reset,
	.destroy = (void *)port_destroy,
	.id = "rxecc_port",
};
