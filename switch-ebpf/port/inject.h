/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection at a port's ingress, as Lumina does with a Tofino: the
 * rules of port.h's struct rxecc_inject select RoCEv2 packets by their BTH
 * and drop them, ECN-mark them or corrupt their ICRC. Runs only when the
 * port's configuration says rules are in force (inject_rules), so a port
 * without rules pays one branch.
 */
#ifndef RXECC_PORT_INJECT_H
#define RXECC_PORT_INJECT_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct rxecc_inject);
} inject SEC(".maps");

#define ECN_MASK		0x03
#define ECN_UE			0x02
#define ECN_CE			0x03
#define ICRC_LEN		4

/* What a RoCEv2 packet is, for the rules: its BTH's fields. */
struct bth_view {
	__u32 qpn, psn, opcode;
	__u8 tos;
};

/*
 * The BTH of an IPv4 RoCEv2 packet (past an INT shim, if its TOS flags
 * one); false for anything else.
 */
static __always_inline bool bth_view_get(struct __sk_buff *skb, struct bth_view *v)
{
	struct rxe_int_shim sh;
	__u32 off = SHIM_OFF;
	__u8 ip[IP_HLEN], bth[12];
	__be16 dport;

	if (skb->protocol != bpf_htons(0x0800))
		return false;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, sizeof(ip)) ||
	    ip[0] != 0x45 || ip[9] != 17)
		return false;
	if (bpf_skb_load_bytes(skb, ETH_HLEN + IP_HLEN + 2, &dport, sizeof(dport)) ||
	    dport != bpf_htons(ROCE_V2_PORT))
		return false;
	if (ip[1] & RXE_INT_TOS) {
		if (bpf_skb_load_bytes(skb, SHIM_OFF, &sh, sizeof(sh)) ||
		    sh.magic != RXE_INT_MAGIC || sh.max_hops > RXE_INT_MAX_HOPS)
			return false;
		off += sizeof(sh) + sh.max_hops * sizeof(struct rxe_int_hop);
	}
	if (bpf_skb_load_bytes(skb, off, bth, sizeof(bth)))
		return false;
	v->opcode = bth[0];
	v->qpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	v->psn = (__u32)bth[9] << 16 | (__u32)bth[10] << 8 | bth[11];
	v->tos = ip[1];
	return true;
}

/* xorshift64 (Marsaglia): the rule's own sequence, from rxecc's seed. */
static __always_inline __u64 inject_rng(__u64 *s)
{
	__u64 x = *s ?: 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Whether rule `r` acts on packet `v`, under the rules' lock: its count of
 * matches goes up if the packet is one it selects. */
static __always_inline bool inject_fires(struct rxecc_inject_rule *r,
					 const struct bth_view *v)
{
	__u64 k;

	if (!r->action)
		return false;
	if (r->qpn != RXECC_INJECT_ANY && r->qpn != v->qpn)
		return false;
	if (r->opcode != RXECC_INJECT_ANY && r->opcode != v->opcode)
		return false;
	if (v->psn < r->psn_lo || v->psn > r->psn_hi)
		return false;
	k = ++r->matched;
	if (r->nth_mask && (k > 64 || !(r->nth_mask & (1ULL << (k - 1)))))
		return false;
	if (r->every > 1 && k % r->every)
		return false;
	if (r->prob && (inject_rng(&r->rng) >> 32) >= r->prob)
		return false;
	r->applied++;
	return true;
}

/* ECN bits `ecn` into the IP TOS, with the IP checksum fixed up. */
static __always_inline void inject_ecn(struct __sk_buff *skb, __u8 tos, __u8 ecn)
{
	__u8 new_tos = (tos & ~ECN_MASK) | ecn;

	/* The TOS is the low byte of the IP header's first 16-bit word. */
	bpf_l3_csum_replace(skb, ETH_HLEN + 10, bpf_htons(tos), bpf_htons(new_tos), 2);
	bpf_skb_store_bytes(skb, ETH_HLEN + 1, &new_tos, 1, 0);
}

/*
 * Applies port `id`'s rules to a packet from the link peer: false if it is
 * to be dropped. Each rule that fires acts; a drop ends the packet.
 */
static __always_inline bool inject_apply(struct __sk_buff *skb, struct port_state *st,
					 __u32 id)
{
	struct rxecc_inject *in = bpf_map_lookup_elem(&inject, &id);
	__u32 acts = 0, i;
	struct bth_view v;
	__u8 b;

	if (!in || !bth_view_get(skb, &v))
		return true;
	bpf_spin_lock(&in->lock);
	for (i = 0; i < RXECC_INJECT_RULES; i++)
		if (inject_fires(&in->rule[i], &v))
			acts |= 1U << in->rule[i].action;
	bpf_spin_unlock(&in->lock);
	if (!acts)
		return true;
	if (acts & (1U << INJ_DROP)) {
		stat_inc(st, &st->stats.inj_drops);
		return false;
	}
	if ((v.tos & ECN_MASK) && (acts & (1U << INJ_CE))) {
		inject_ecn(skb, v.tos, ECN_CE);
		stat_inc(st, &st->stats.inj_marks);
	} else if ((v.tos & ECN_MASK) && (v.tos & ECN_MASK) != ECN_CE &&
		   (acts & (1U << INJ_UE))) {
		inject_ecn(skb, v.tos, ECN_UE);
		stat_inc(st, &st->stats.inj_marks);
	}
	if ((acts & (1U << INJ_ICRC)) && skb->len > ICRC_LEN &&
	    !bpf_skb_load_bytes(skb, skb->len - 1, &b, 1)) {
		b = ~b;
		bpf_skb_store_bytes(skb, skb->len - 1, &b, 1, 0);
		stat_inc(st, &st->stats.inj_corrupts);
	}
	return true;
}

#endif /* RXECC_PORT_INJECT_H */
