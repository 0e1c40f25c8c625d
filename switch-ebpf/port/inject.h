/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection at a port's ingress, as Lumina does with a Tofino: the
 * rules of port.h's struct rxecc_inject select RoCEv2 packets by their BTH
 * and drop them, ECN-mark them, corrupt their ICRC or duplicate them here,
 * or tag them (skb->mark, port.h) for their egress port to delay or
 * reorder (inject_hold() there). Runs only when the port's configuration says rules
 * are in force (inject_rules), so a port without rules pays one branch.
 */
#ifndef RXECC_PORT_INJECT_H
#define RXECC_PORT_INJECT_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct rxecc_inject);
} inject SEC(".maps");

/* A rule's index and a port's id each fit their field of skb->mark. */
_Static_assert(RXECC_INJECT_RULES <= (RXECC_MARK_RULE >> RXECC_MARK_RULE_SHIFT) + 1,
	       "skb->mark cannot name every rule");
_Static_assert(RXECC_MAX_PORTS <= (RXECC_MARK_PORT >> RXECC_MARK_PORT_SHIFT) + 1,
	       "skb->mark cannot name every port");

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
 * matches goes up if the packet is one it selects.
 */
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

#define INJ_HOLDS		(1U << INJ_DELAY | 1U << INJ_REORDER)

/* What the rules that fired ask for: a set of actions, and the first rule
 * that asked for a delay or reorder (its request and its index).
 */
struct inject_acts {
	__u32 acts;
	__u32 hold;		/* RXECC_MARK_DELAY or _REORDER; 0: none */
	__u32 hold_rule;
};

static __always_inline void inject_collect(struct rxecc_inject_rule *r, __u32 i,
					   const struct bth_view *v,
					   struct inject_acts *a)
{
	__u32 bit;

	if (!inject_fires(r, v))
		return;
	bit = 1U << (r->action & 31);
	if ((bit & INJ_HOLDS) && !a->hold) {
		a->hold = r->action == INJ_DELAY ? RXECC_MARK_DELAY : RXECC_MARK_REORDER;
		a->hold_rule = i;
	}
	a->acts |= bit;
}

/* The copy of a duplicated packet: it arrives again at this ingress, just
 * behind the packet, marked so that the rules pass it by (port_ingress()).
 */
static __always_inline void inject_dup(struct __sk_buff *skb, struct port_state *st)
{
	__u32 mark = skb->mark;

	mark_set(skb, (mark & ~RXECC_MARK_MASK) | RXECC_MARK_DUP);
	if (!bpf_clone_redirect(skb, skb->ifindex, BPF_F_INGRESS))
		stat_inc(st, &st->stats.inj_dups);
	mark_set(skb, mark);
}

/*
 * Applies port `id`'s rules to a packet from the link peer: false if it is
 * to be dropped. Each rule that fires acts; a drop ends the packet.
 */
static __always_inline bool inject_apply(struct __sk_buff *skb, struct port_state *st,
					 __u32 id)
{
	struct rxecc_inject *in = bpf_map_lookup_elem(&inject, &id);
	struct inject_acts a = {};
	struct bth_view v;
	__u32 i;
	__u8 b;

	if (!in || !bth_view_get(skb, &v))
		return true;
	bpf_spin_lock(&in->lock);
	for (i = 0; i < RXECC_INJECT_RULES; i++)
		inject_collect(&in->rule[i], i, &v, &a);
	bpf_spin_unlock(&in->lock);
	if (!a.acts)
		return true;
	if (a.acts & (1U << INJ_DROP)) {
		stat_inc(st, &st->stats.inj_drops);
		return false;
	}
	if ((v.tos & ECN_MASK) && (a.acts & (1U << INJ_CE))) {
		inject_ecn(skb, v.tos, ECN_CE);
		stat_inc(st, &st->stats.inj_marks);
	} else if ((v.tos & ECN_MASK) && (v.tos & ECN_MASK) != ECN_CE &&
		   (a.acts & (1U << INJ_UE))) {
		inject_ecn(skb, v.tos, ECN_UE);
		stat_inc(st, &st->stats.inj_marks);
	}
	if ((a.acts & (1U << INJ_ICRC)) && skb->len > ICRC_LEN &&
	    !bpf_skb_load_bytes(skb, skb->len - 1, &b, 1)) {
		b = ~b;
		bpf_skb_store_bytes(skb, skb->len - 1, &b, 1, 0);
		stat_inc(st, &st->stats.inj_corrupts);
	}
	/* The copy is made before the tag: it is not held. */
	if (a.acts & (1U << INJ_DUP))
		inject_dup(skb, st);
	if (a.hold) {
		/* The egress reads the rule's parameters (inject_hold()). */
		mark_set(skb, (skb->mark & ~RXECC_MARK_MASK) | a.hold |
			      a.hold_rule << RXECC_MARK_RULE_SHIFT |
			      id << RXECC_MARK_PORT_SHIFT);
		if (a.hold == RXECC_MARK_DELAY)
			stat_inc(st, &st->stats.inj_delays);
		else
			stat_inc(st, &st->stats.inj_reorders);
	}
	return true;
}

/*
 * The egress side: packets a rule delayed or reordered wait in held_q
 * (not the queue: they are on their way to it) and join the queue, as if
 * they arrived then, once their time has come or, reordered, once `gap`
 * packets that came after them have joined it. One list per port,
 * first in first out: a packet delayed less than one held before it waits
 * for it, so give a port's delays one value.
 */
struct held_list {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(skb_node, node);
	__u32 n;		/* packets held; the qdisc's lock orders writers */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct held_list);
} held_q SEC(".maps");

/* The first held packet, taken off the list; NULL if none. */
static __always_inline struct bpf_list_node *held_pop(struct held_list *h)
{
	struct bpf_list_node *node;

	bpf_spin_lock(&h->lock);
	node = bpf_list_pop_front(&h->head);
	if (node)
		h->n--;
	bpf_spin_unlock(&h->lock);
	return node;
}

/*
 * The hold that skb->mark asks for, from the rule that asked (a rule
 * rewritten since holds the packet by its new values; one removed, not
 * at all): its delay, ns, and for a reorder its gap.
 */
static __always_inline void hold_request(__u32 mark, __u64 *delay_ns, __u32 *gap)
{
	__u32 port = (mark & RXECC_MARK_PORT) >> RXECC_MARK_PORT_SHIFT;
	__u32 i = (mark & RXECC_MARK_RULE) >> RXECC_MARK_RULE_SHIFT;
	struct rxecc_inject *in = bpf_map_lookup_elem(&inject, &port);
	__u32 us = 0, action = 0;

	*gap = 0;
	if (in && i < RXECC_INJECT_RULES) {
		bpf_spin_lock(&in->lock);
		action = in->rule[i].action;
		us = in->rule[i].delay_us;
		*gap = in->rule[i].gap;
		bpf_spin_unlock(&in->lock);
	}
	if (action != INJ_DELAY && action != INJ_REORDER)
		us = 0;
	if ((mark & RXECC_MARK_TAG) == RXECC_MARK_DELAY) {
		*gap = 0;
		us = us < RXECC_DELAY_US_MAX ? us : RXECC_DELAY_US_MAX;
	} else {
		*gap = *gap < RXECC_REORDER_GAP_MAX ? *gap : RXECC_REORDER_GAP_MAX;
		us = us < RXECC_REORDER_US_MAX ? us : RXECC_REORDER_US_MAX;
	}
	*delay_ns = (__u64)us * 1000;
}

/* A packet whose skb->mark asks its egress port to hold it: kept in
 * held_q, counted in the qdisc's length but not the queue's. The list
 * holds as many packets as the queue may (the port's limit): beyond,
 * the port drops.
 */
static __always_inline int inject_hold(struct Qdisc *sch, struct port_state *st,
				       struct sk_buff *skb, __u32 id, __u32 len,
				       __u32 iif, __u32 limit, __u64 now,
				       struct bpf_sk_buff_ptr *to_free)
{
	struct held_list *h = bpf_map_lookup_elem(&held_q, &id);
	__u32 mark = skb->mark, gap;
	struct skb_node *n;
	__u64 delay_ns;

	if (!h || h->n >= limit)
		goto drop;
	n = bpf_obj_new(typeof(*n));
	if (!n)
		goto drop;
	hold_request(mark, &delay_ns, &gap);
	n->ready_ns = now + delay_ns;
	if ((mark & RXECC_MARK_TAG) == RXECC_MARK_REORDER)
		n->hold_enq = ((__u32)st->stats.enq_pkts + gap) ?: 1;
	n->acct_iif = iif;	/* charged when it joins the queue */
	n->len = len;
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)
		bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */
	bpf_spin_lock(&h->lock);
	bpf_list_push_back(&h->head, &n->node);
	h->n++;
	bpf_spin_unlock(&h->lock);
	stat_inc(st, &st->stats.held_pkts);
	sch->q.qlen++;
	return NET_XMIT_SUCCESS;
drop:
	count_drop(st);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

/* A held packet joins the queue now, as port_enqueue() would take it: the
 * packet limit and the shared buffer may still drop it.
 */
static __always_inline void held_admit(struct Qdisc *sch, struct port_state *st,
				       const struct rxecc_port_params *cfg,
				       struct skb_list *dq, struct held_list *h,
				       __u32 id, struct skb_node *n, __u64 now)
{
	__u32 iif = n->acct_iif, len = n->len, sw = 0;
	struct sk_buff *skb;
	int charged = CHARGE_NONE;

	if (st->stats.qlen_pkts >= cfg->limit_pkts)
		goto drop;
	if (iif)
		charged = charge_ingress(sch, iif, len, now, &sw);
	if (charged == CHARGE_DROP)
		goto drop;
	n->ready_ns = now;
	n->acct_iif = charged == CHARGE_DONE ? iif : 0;
	n->switch_id = sw;
	n->hold_enq = 0;
	bpf_spin_lock(&dq->lock);
	bpf_list_push_back(&dq->head, &n->node);
	bpf_spin_unlock(&dq->lock);
	enqueue_account(st, id, len, now);
	sch->qstats.backlog += len;
	return;
drop:
	count_drop(st);
	sch->qstats.drops++;
	if (sch->q.qlen)
		sch->q.qlen--;
	skb = bpf_kptr_xchg(&n->skb, NULL);
	bpf_obj_drop(n);
	if (skb)
		bpf_kfree_skb(skb);
}

/*
 * Port `id`'s held packets whose time or gap has come join its queue (a
 * few per dequeue); returns when the next is due, 0 if none is held.
 */
static __always_inline __u64 held_release(struct Qdisc *sch, struct port_state *st,
					  const struct rxecc_port_params *cfg,
					  struct skb_list *dq, __u32 id, __u64 now)
{
	struct held_list *h = bpf_map_lookup_elem(&held_q, &id);
	__u64 next = now;	/* more due than one dequeue releases */
	int i;

	if (!h || !h->n)
		return 0;
	bpf_for(i, 0, 8) {
		__u32 enq = (__u32)st->stats.enq_pkts;
		struct bpf_list_node *node;
		struct skb_node *n;
		bool due;

		bpf_spin_lock(&h->lock);
		node = bpf_list_front(&h->head);
		if (!node) {
			bpf_spin_unlock(&h->lock);
			next = 0;
			break;
		}
		n = container_of(node, struct skb_node, node);
		due = now >= n->ready_ns ||
		      (n->hold_enq && (__s32)(enq - n->hold_enq) >= 0);
		if (!due) {
			next = n->ready_ns;
			bpf_spin_unlock(&h->lock);
			break;
		}
		bpf_spin_unlock(&h->lock);
		/* The qdisc's lock orders its ops: the head is still this one. */
		node = held_pop(h);
		if (!node)
			break;
		held_admit(sch, st, cfg, dq, h, id,
			   container_of(node, struct skb_node, node), now);
	}
	return next;
}

/* Frees port `id`'s held packets (the qdisc's reset). */
static __always_inline void held_free(__u32 id)
{
	struct held_list *h = bpf_map_lookup_elem(&held_q, &id);
	struct skb_node *n;
	int i;

	if (!h)
		return;
	bpf_for(i, 0, RXECC_LIMIT_PKTS_MAX + 1) {
		struct bpf_list_node *node;
		struct sk_buff *skb;

		node = held_pop(h);
		if (!node)
			break;
		n = container_of(node, struct skb_node, node);
		skb = bpf_kptr_xchg(&n->skb, NULL);
		bpf_obj_drop(n);
		if (skb)
			bpf_kfree_skb(skb);
	}
}

#endif /* RXECC_PORT_INJECT_H */
