/* SPDX-License-Identifier: GPL-2.0 */
/*
 * INT for HPCC and FNCC: a port's ingress writes a hop record, the egress
 * state of a port at its last dequeue (publish_deq() in port.bpf.c), into
 * the INT shim that rxe_glue puts after the UDP header of flagged RoCEv2
 * packets (rxe_int.h's layout, mirrored in port.h).
 */
#ifndef RXECC_PORT_INT_H
#define RXECC_PORT_INT_H

/* Each port's egress at its last dequeue, indexed by port_id. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct int_deq);
} int_deq SEC(".maps");

#define ETH_HLEN		14
#define IP_HLEN			20
#define UDP_HLEN		8
#define ROCE_V2_PORT		4791
#define SHIM_OFF		(ETH_HLEN + IP_HLEN + UDP_HLEN)
#define INT_BTH_LEN		12
#define INT_ICRC_LEN		4

/*
 * The INT shim of a RoCEv2 packet whose TOS flags one: 1 with *sh and
 * *daddr filled in, 0 if the packet is not flagged, and -1 (counted in
 * int_bad) if the shim is not one of ours or a rewrite would break the UDP
 * checksum.
 */
static __always_inline int int_shim_get(struct __sk_buff *skb, struct port_state *st,
					struct rxe_int_shim *sh, __u32 *daddr)
{
	__u8 ip[IP_HLEN];
	struct {
		__be16 source, dest, len, check;
	} udp;
	__u32 need;

	if (skb->protocol != bpf_htons(0x0800))
		return 0;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, sizeof(ip)))
		return 0;
	/* IPv4 without options, UDP, with the INT bit in its TOS. */
	if (ip[0] != 0x45 || ip[9] != 17 || !(ip[1] & RXE_INT_TOS))
		return 0;
	if (bpf_skb_load_bytes(skb, ETH_HLEN + IP_HLEN, &udp, sizeof(udp)) ||
	    udp.dest != bpf_htons(ROCE_V2_PORT))
		return 0;
	if (bpf_skb_load_bytes(skb, SHIM_OFF, sh, sizeof(*sh)) ||
	    sh->magic != RXE_INT_MAGIC || sh->version != RXE_INT_VERSION ||
	    sh->max_hops > RXE_INT_MAX_HOPS || sh->nhops > sh->max_hops ||
	    udp.check) {
		stat_inc(st, &st->stats.int_bad);
		return -1;
	}
	/* The shim's room for max_hops records, then a BTH and an ICRC, must
	 * be in the packet: a record stamped past a short one's room would
	 * land on its BTH.
	 */
	need = sizeof(*sh) + sh->max_hops * sizeof(struct rxe_int_hop) +
	       INT_BTH_LEN + INT_ICRC_LEN;
	if (bpf_ntohs(udp.len) < UDP_HLEN + need || skb->len < SHIM_OFF + need) {
		stat_inc(st, &st->stats.int_bad);
		return -1;
	}
	__builtin_memcpy(daddr, ip + 16, sizeof(*daddr));
	return 1;
}

/* The egress state of port `id` at its last dequeue; false if none yet. */
static __always_inline bool int_deq_get(__u32 id, __u64 *deq_ns, __u64 *deq_bytes,
					__u64 *qlen, __u64 *rate)
{
	struct int_deq *d = id ? bpf_map_lookup_elem(&int_deq, &id) : NULL;

	if (!d)
		return false;
	bpf_spin_lock(&d->lock);
	*deq_ns = d->deq_ns;
	*deq_bytes = d->deq_bytes;
	*qlen = d->qlen_bytes;
	*rate = d->rate_bps;
	bpf_spin_unlock(&d->lock);
	return *deq_ns != 0;
}

static __always_inline __u32 sat32(__u64 v)
{
	return v > 0xffffffffULL ? 0xffffffffU : (__u32)v;
}

/*
 * HPCC and FNCC: writes the next hop record of a shim with the egress state
 * of port int_from at its last dequeue: for HPCC the link peer that sent
 * this data packet, for FNCC this port, whose egress carries the data this
 * ACK answers. Only a shim with room left is written; a full one has its
 * overflow count raised instead, so that no packet is ever corrupted.
 */
static __always_inline void int_hop_stamp(struct __sk_buff *skb, struct port_state *st,
					  const struct rxecc_port_params *cfg,
					  const struct rxe_int_shim *sh)
{
	struct rxe_int_hop hop;
	__u64 deq_ns, deq_bytes, qlen, rate;
	__u8 n;

	if (sh->nhops == sh->max_hops) {
		n = sh->overflow < 255 ? sh->overflow + 1 : 255;
		bpf_skb_store_bytes(skb, SHIM_OFF + 6, &n, 1, 0);
		stat_inc(st, &st->stats.int_overflow);
		return;
	}
	if (!int_deq_get(cfg->int_from, &deq_ns, &deq_bytes, &qlen, &rate))
		return;
	hop.rate_mbps = bpf_htonl(rate / 1000000);
	hop.ts_ns = bpf_htonl((__u32)deq_ns);
	hop.tx_bytes = bpf_htonl((__u32)deq_bytes);
	hop.qlen = bpf_htonl(sat32(qlen));
	n = sh->nhops;
	if (n >= RXE_INT_MAX_HOPS)
		return;
	if (bpf_skb_store_bytes(skb, SHIM_OFF + sizeof(*sh) + n * sizeof(hop), &hop,
				sizeof(hop), 0))
		return;
	n++;
	bpf_skb_store_bytes(skb, SHIM_OFF + 4, &n, 1, 0);
	stat_inc(st, &st->stats.int_stamped);
}
#endif /* RXECC_PORT_INT_H */
