/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict-priority class for ACKs, NAKs and CNPs (port_cfg.ack_prio), as
 * deployments give them and as ACC (§4.3) assumes: they leave ahead of
 * any data waiting at the port, are not paused by the data class's PFC
 * or GFC, and are not charged to the switch's shared buffer (a real
 * switch gives that class its own). They still take the link's time: one
 * starts only once the link is free, and the data behind it starts
 * after its serialisation; then it crosses the wire like data. The data
 * queue's counters, the marker and INT see only data. A packet a fault-injection rule held joins the
 * data queue, whatever it is.
 */
#ifndef RXECC_PORT_PRIO_H
#define RXECC_PORT_PRIO_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct ctl_list);
} prio_q SEC(".maps");

#define BTH_OP_ACK		0x11	/* RC ACKNOWLEDGE (ACK or NAK) */
#define BTH_OP_ATOMIC_ACK	0x12
#define BTH_OP_CNP		0x81

/* Whether a packet at the qdisc is a RoCEv2 ACK, NAK or CNP: IPv4 with no
 * options, UDP to 4791, and the BTH's opcode, past an INT shim if its TOS
 * flags one.
 */
static __always_inline bool is_ack_class(struct sk_buff *skb)
{
	__u8 hdr[ETH_HLEN + IP_HLEN + UDP_HLEN], op;
	struct rxe_int_shim sh;
	__u32 off = SHIM_OFF;
	struct bpf_dynptr p;

	if (bpf_dynptr_from_skb((struct __sk_buff *)skb, 0, &p))
		return false;
	if (bpf_dynptr_read(hdr, sizeof(hdr), &p, 0, 0))
		return false;
	if (hdr[12] != 0x08 || hdr[13] != 0x00 || hdr[ETH_HLEN] != 0x45 ||
	    hdr[ETH_HLEN + 9] != 17)
		return false;
	if (hdr[ETH_HLEN + IP_HLEN + 2] != (ROCE_V2_PORT >> 8) ||
	    hdr[ETH_HLEN + IP_HLEN + 3] != (ROCE_V2_PORT & 0xff))
		return false;
	if (hdr[ETH_HLEN + 1] & RXE_INT_TOS) {
		if (bpf_dynptr_read(&sh, sizeof(sh), &p, SHIM_OFF, 0) ||
		    sh.magic != RXE_INT_MAGIC || sh.max_hops > RXE_INT_MAX_HOPS)
			return false;
		off += sizeof(sh) + sh.max_hops * sizeof(struct rxe_int_hop);
	}
	if (bpf_dynptr_read(&op, 1, &p, off, 0))
		return false;
	return op == BTH_OP_ACK || op == BTH_OP_ATOMIC_ACK || op == BTH_OP_CNP;
}

/* Queues an ACK-class packet; as many as the port's limit, then drops. */
static __always_inline int prio_enqueue(struct Qdisc *sch, struct port_state *st,
					struct ctl_list *pq, struct sk_buff *skb,
					__u32 len, __u32 limit, __u64 ready,
					struct bpf_sk_buff_ptr *to_free)
{
	int rc = counted_enqueue(sch, st, pq, skb, len, limit, ready, to_free);

	if (rc == NET_XMIT_SUCCESS)
		sch->qstats.backlog += len;
	return rc;
}

/*
 * The priority class's head starts, if there is one and the link is free
 * for it: it goes on the wire (true), and the link is busy for its
 * serialisation at the link's rate. Otherwise false, with *wait the time
 * the link is free (0: the class is empty): no data packet may start
 * before the class's head.
 */
static __always_inline bool prio_start(struct Qdisc *sch, struct port_state *st,
				       const struct rxecc_port_params *cfg,
				       struct pacer *pc, struct ctl_list *pq,
				       struct ctl_list *wq, __u64 now, __u64 *wait)
{
	__u64 ready = 0, begin, due, floor, keep;
	struct skb_node *n;
	__u32 len = 0;

	*wait = 0;
	if (!pq->n || !head_peek(&pq->lock, &pq->head, &ready, &len))
		return false;
	begin = pc->free_ns > ready ? pc->free_ns : ready;
	if (now < begin) {
		*wait = begin;
		return false;
	}
	/* The qdisc's lock orders its ops: the head is still the one peeked. */
	n = node_pop(&pq->lock, &pq->head);
	if (!n)
		return false;
	if (pq->n)
		pq->n--;
	/* The link is busy until its last bit is out; a late start keeps at
	 * most the pacer's credit (burst_ns, else this packet's time).
	 */
	due = begin + (__u64)len * 8 * NSEC_PER_SEC / (cfg->rate_bps ?: 1);
	keep = cfg->burst_ns ?: due - begin;
	floor = now + (due - begin) > keep ? now + (due - begin) - keep : 0;
	pc->free_ns = due > floor ? due : floor;
	wire_push(wq, n, pc->free_ns + cfg->delay_ns);
	bpf_spin_lock(&st->lock);
	st->stats.prio_pkts++;
	st->stats.prio_bytes += len;
	bpf_spin_unlock(&st->lock);
	return true;
}

/* Frees port `id`'s priority class (the qdisc's reset). */
static __always_inline void prio_free(__u32 id)
{
	struct ctl_list *pq = bpf_map_lookup_elem(&prio_q, &id);

	if (pq)
		counted_free(pq);
}

#endif /* RXECC_PORT_PRIO_H */
