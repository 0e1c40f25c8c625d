/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queue, pacing and the wire: a port's egress FIFO, drained at the link's
 * rate, and the link it drains into.
 *
 * Data packets wait in data_q, control frames (PFC) in ctl_q, which jumps
 * the queue, the pause and the rate, as MAC control frames do. The head
 * of the queue leaves it when the link is free for it and starts its
 * serialisation; it then spends its serialisation and the link's
 * propagation delay on the wire (wire_q) and is handed to the device when
 * its last bit reaches the peer (store and forward: the veth behind the
 * port delivers at once). So the queue that the marker, INT, PFC's
 * accounting and the reports read holds only packets waiting for the
 * link, as in the HPCC simulator's switch, where a packet leaves the
 * queue as its transmission starts: neither the packet being serialised
 * nor the bytes propagating on the link count as queue. The qdisc
 * watchdog wakes the port for each start and each arrival. Queue lengths
 * are exact, in bytes and packets, and kept over time (qlen_hist).
 *
 * The pacer keeps credit instead of restarting from "now", so that a
 * watchdog that fires late costs no link time: by default one packet's
 * serialisation, which a real link can match; `burst_ns` more where the
 * guest's timers fire milliseconds late (the host clock under TCG).
 */
#ifndef RXECC_PORT_QUEUE_H
#define RXECC_PORT_QUEUE_H

#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01
#define NSEC_PER_SEC		1000000000ULL
#define TC_ACT_OK		0
#define TC_ACT_SHOT		2

static __always_inline struct port_state *state(__u32 id)
{
	return bpf_map_lookup_elem(&port_state, &id);
}

/* The port a qdisc is: its handle is id:0 (rxecc), and a kind this object
 * registers is only ever made a port's root qdisc by rxecc.
 */
static __always_inline __u32 sch_port(const struct Qdisc *sch)
{
	return sch->handle >> 16;
}

/* Each port's egress queue length over time (port.h): ns per bin. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct rxecc_qlen_hist);
} qlen_hist SEC(".maps");

/* Port `id`'s queue changed by `delta` bytes (to 0 if `empty`) at `now`:
 * the time since the last change goes to the bin of the length it had.
 * `now` was read before this lock, so another CPU's later `now` may have
 * come first: since_ns never goes back, and the bins' total is exactly
 * the time from the first change to the last. Each interval given is
 * logged, so that a reader can take back those after its time.
 */
static __always_inline void qlen_hist_change(__u32 id, __s64 delta, bool empty, __u64 now)
{
	struct rxecc_qlen_hist *h = bpf_map_lookup_elem(&qlen_hist, &id);
	__u64 bin;

	if (!h)
		return;
	bpf_spin_lock(&h->lock);
	bin = h->qlen_bytes > 0 ? (__u64)h->qlen_bytes / 1000 : 0;
	if (bin >= RXECC_QLEN_BINS)
		bin = RXECC_QLEN_BINS - 1;
	if (now > h->since_ns) {
		struct rxecc_qlen_interval *iv = &h->log[h->logged & (RXECC_QLEN_LOG - 1)];

		iv->start_ns = h->since_ns;
		iv->bin = bin;
		h->logged++;
		h->ns[bin] += now - h->since_ns;
		h->since_ns = now;
	}
	h->qlen_bytes = empty ? 0 : h->qlen_bytes + delta;
	bpf_spin_unlock(&h->lock);
}

/* The pacer: the link is free from free_ns (0: nothing sent yet), when
 * the last packet's serialisation ended. The head serialises from then (or
 * from when it is due, or a pause ended) at the rate in force, so a GFC
 * stage change applies to it at once, and leaves at the end: store and
 * forward, as the veth behind the port delivers at once. Only the port's
 * dequeue uses it, and a qdisc has one dequeue at a time.
 */
struct pacer {
	__u64 free_ns;
	/* When an ideal link of the configured rate, fed with the packets
	 * as this port released them, would be free, and the largest packet
	 * released: the one packet a window may hold beyond the rate
	 * (rate_viol).
	 */
	__u64 ideal_free_ns;
	__u32 max_len;
	__u32 pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct pacer);
} pacer SEC(".maps");

struct skb_node {
	struct sk_buff __kptr *skb;
	/* When the list's next stage may take it: in the data queue and the
	 * ACK class, its enqueue; held (port/inject.h), its release; a
	 * control frame, its enqueue plus the link delay; on the wire, its
	 * last bit's arrival at the peer.
	 */
	__u64 ready_ns;
	__u32 acct_iif;		/* ingress port charged for it; 0: none */
	__u32 switch_id;
	__u32 len;
	/* Held by fault injection (port/inject.h): released once the port's
	 * enq_pkts reaches this (0: by time only).
	 */
	__u32 hold_enq;
	struct bpf_list_node node;
};

struct skb_list {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(skb_node, node);
};

/* Each port's data packets. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct skb_list);
} data_q SEC(".maps");

/* Each port's control frames (PFC), sent ahead of everything once their
 * link delay has passed; at most RXECC_CTL_MAX_PKTS of them. A frame
 * neither waits for the one being serialised nor queues behind the
 * packets on the wire: at most one packet's serialisation early.
 */
struct ctl_list {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(skb_node, node);
	__u32 n;		/* frames in it; the qdisc's lock orders writers */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct ctl_list);
} ctl_q SEC(".maps");

/* Each port's wire: packets serialising or propagating, in the order they
 * started, each due at its arrival (RXECC_WIRE_MAX_PKTS at most).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct ctl_list);
} wire_q SEC(".maps");

static __always_inline unsigned int pkt_len(const struct sk_buff *skb)
{
	return ((struct qdisc_skb_cb *)skb->cb)->pkt_len;
}

/* One of a port's counters, c, up by one under its lock. */
static __always_inline void stat_inc(struct port_state *st, __u64 *c)
{
	bpf_spin_lock(&st->lock);
	(*c)++;
	bpf_spin_unlock(&st->lock);
}

static __always_inline void count_drop(struct port_state *st)
{
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.drops++;
		bpf_spin_unlock(&st->lock);
	}
}

/* Takes the head node of a list, skb and all; NULL if empty. */
static __always_inline struct skb_node *node_pop(struct bpf_spin_lock *lock,
						 struct bpf_list_head *head)
{
	struct bpf_list_node *node;

	bpf_spin_lock(lock);
	node = bpf_list_pop_front(head);
	bpf_spin_unlock(lock);
	return node ? container_of(node, struct skb_node, node) : NULL;
}

/* Pops the head of a list; NULL if empty. */
static __always_inline struct sk_buff *pop(struct bpf_spin_lock *lock,
					   struct bpf_list_head *head,
					   struct skb_node **out)
{
	struct bpf_list_node *node;
	struct sk_buff *skb = NULL;
	struct skb_node *n;

	bpf_spin_lock(lock);
	node = bpf_list_pop_front(head);
	bpf_spin_unlock(lock);
	if (!node)
		return NULL;
	n = container_of(node, struct skb_node, node);
	skb = bpf_kptr_xchg(&n->skb, skb);
	*out = n;
	return skb;
}

/* Queues a packet on a counted list (the control frames, the ACK class),
 * `max` at most, due at `ready`; counted in the qdisc's length.
 */
static __always_inline int counted_enqueue(struct Qdisc *sch, struct port_state *st,
					   struct ctl_list *l, struct sk_buff *skb,
					   __u32 len, __u32 max, __u64 ready,
					   struct bpf_sk_buff_ptr *to_free)
{
	struct skb_node *n;

	if (l->n >= max)
		goto drop;
	n = bpf_obj_new(typeof(*n));
	if (!n)
		goto drop;
	n->ready_ns = ready;
	n->len = len;
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)
		bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */
	bpf_spin_lock(&l->lock);
	bpf_list_push_back(&l->head, &n->node);
	bpf_spin_unlock(&l->lock);
	l->n++;
	sch->q.qlen++;
	return NET_XMIT_SUCCESS;
drop:
	count_drop(st);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

/* Takes the head of a counted list, with its length; NULL if empty. */
static __always_inline struct sk_buff *counted_pop(struct Qdisc *sch, struct ctl_list *l,
						   __u32 *len)
{
	struct skb_node *n = NULL;
	struct sk_buff *skb;

	skb = pop(&l->lock, &l->head, &n);
	if (n) {
		*len = n->len;
		bpf_obj_drop(n);
	}
	if (!skb)
		return NULL;
	if (l->n)
		l->n--;
	if (sch->q.qlen)
		sch->q.qlen--;
	return skb;
}

/* A list's head packet's time (skb_node.ready_ns) and length; false if
 * the list is empty.
 */
static __always_inline bool head_peek(struct bpf_spin_lock *lock, struct bpf_list_head *head,
				      __u64 *ready, __u32 *len)
{
	struct bpf_list_node *node;

	bpf_spin_lock(lock);
	node = bpf_list_front(head);
	if (node) {
		*ready = container_of(node, struct skb_node, node)->ready_ns;
		*len = container_of(node, struct skb_node, node)->len;
	}
	bpf_spin_unlock(lock);
	return node != NULL;
}

/* Control frames first: not paused, not paced, not counted as data; each
 * once its link delay has passed. Otherwise NULL, with *next the head's
 * time (0: none waits).
 */
static __always_inline struct sk_buff *ctl_dequeue(struct Qdisc *sch,
						   struct port_state *st,
						   struct ctl_list *cq, __u64 now,
						   __u64 *next)
{
	struct sk_buff *skb;
	__u64 ready = 0;
	__u32 len = 0;

	*next = 0;
	if (!cq->n || !head_peek(&cq->lock, &cq->head, &ready, &len))
		return NULL;
	if (now < ready) {
		*next = ready;
		return NULL;
	}
	/* The qdisc's lock orders its ops: the head is still the one peeked. */
	skb = counted_pop(sch, cq, &len);
	if (!skb)
		return NULL;
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.ctl_pkts++;
		bpf_spin_unlock(&st->lock);
	}
	bpf_qdisc_bstats_update(sch, skb);
	return skb;
}

/* The counters of a packet just queued; its length to the histogram. */
static __always_inline void enqueue_account(struct port_state *st, __u32 id,
					    __u32 len, __u64 now)
{
	bpf_spin_lock(&st->lock);
	st->stats.enq_pkts++;
	st->stats.enq_bytes += len;
	st->stats.qlen_pkts++;
	st->stats.qlen_bytes += len;
	if (st->stats.qlen_bytes > st->stats.max_qlen_bytes)
		st->stats.max_qlen_bytes = st->stats.qlen_bytes;
	bpf_spin_unlock(&st->lock);
	qlen_hist_change(id, len, false, now);
}

/* Where a packet's serialisation stands as it leaves the queue (the
 * pacer's input).
 */
struct release {
	__u64 now;
	__u64 next_tx_ns;	/* the link free from (pacer->free_ns) */
	__u64 ready;		/* the packet queued (skb_node.ready_ns) */
	__u64 begin;		/* its serialisation's start, as scheduled */
	__u64 due;		/* ... and end */
	__u64 end;		/* the end the pacer grants (pacer_start()) */
	__u64 ser_ns;		/* its serialisation at the rate in force */
	__u64 rate;		/* that rate, bits/s */
	__u64 resumed_at;	/* the end of the last pause */
	__u64 pace_floor;	/* the pacer banks no credit from before this */
	__u32 len;
	bool timed;		/* time-based GFC held the rate */
	bool slowed;		/* ... below the link's */
};

/*
 * The counters of a packet just taken from the queue, under st->lock;
 * *deq_bytes and *qlen_bytes as they are after it. A port that could have
 * started it long ago, with packets waiting, was not serving: for TCD
 * that is an OFF period, like a pause, not a queue built while free to
 * send.
 */
static __always_inline void dequeue_account(struct port_state *st,
					    const struct rxecc_port_params *cfg,
					    __u32 id, const struct release *r,
					    __u64 *deq_bytes, __u64 *qlen_bytes)
{
	__u64 stall = cfg->stall_ns ?: 2000000;

	bpf_spin_lock(&st->lock);
	if (st->stats.qlen_pkts > 1 && r->next_tx_ns && r->now > r->begin + stall &&
	    r->resumed_at < r->next_tx_ns) {
		st->stats.stalls++;
		st->stats.stall_ns += r->now - r->begin;
		st->stats.last_resume_ns = r->now;
		st->stats.resume_qlen_bytes = st->stats.qlen_bytes;
	}
	if (r->slowed)
		st->stats.gfc_credit_slowed++;
	st->stats.deq_pkts++;
	st->stats.deq_bytes += r->len;
	st->stats.qlen_pkts--;
	st->stats.qlen_bytes -= r->len;
	if (st->stats.lag_bytes > st->stats.qlen_bytes)
		st->stats.lag_bytes = st->stats.qlen_bytes;
	*deq_bytes = st->stats.deq_bytes;
	*qlen_bytes = st->stats.qlen_bytes;
	bpf_spin_unlock(&st->lock);
	qlen_hist_change(id, -(__s64)r->len, false, r->now);
}

/*
 * The pacer as a packet starts: its serialisation ends at r->end, when
 * the link is free again. A late start keeps at most its own
 * serialisation time at the link's rate of credit (burst_ns if set), and
 * none from before a pause or a stall ended (a paused link does not bank
 * time; a stalled one does not burst its backlog out, which TCD
 * downstream would take for congestion: with catch-up after stalls,
 * chain's quiet run got CE). Time lost is counted here too.
 */
static __always_inline void pacer_start(struct pacer *pc, struct port_state *st,
					const struct rxecc_port_params *cfg,
					struct release *r)
{
	__u64 pkt_ns, keep_ns, floor, end, start, lost_from, lost, lag;

	pkt_ns = (__u64)r->len * 8 * NSEC_PER_SEC / (cfg->rate_bps ?: 1);
	keep_ns = cfg->burst_ns ?: pkt_ns;
	floor = r->now + r->ser_ns > keep_ns ? r->now + r->ser_ns - keep_ns : 0;
	end = r->due > floor ? r->due : floor;
	/* Time lost: the link was free (next_tx_ns), this packet there (ready)
	 * and no pause or credit wait held it, yet it ends later: a late
	 * start beyond the credit, or the credit a stall gave up.
	 */
	start = r->next_tx_ns > r->ready ? r->next_tx_ns : r->ready;
	lost_from = (r->pace_floor > start ? r->pace_floor : start) + r->ser_ns;
	if (r->next_tx_ns && !r->timed && end > lost_from) {
		/* At most 1 s (bytes_in_ns()). */
		lost = end - lost_from < NSEC_PER_SEC ? end - lost_from : NSEC_PER_SEC;
		lag = bytes_in_ns(lost, r->rate);
		bpf_spin_lock(&st->lock);
		st->stats.late_ns += end - lost_from;
		lag += st->stats.lag_bytes;
		st->stats.lag_bytes = lag < st->stats.qlen_bytes ? lag : st->stats.qlen_bytes;
		bpf_spin_unlock(&st->lock);
	}
	pc->free_ns = end;
	r->end = end;
}

/* Puts a packet that started serialising on the wire, to arrive at
 * `arrive`. port_dequeue() starts nothing on a full wire, so it holds
 * RXECC_WIRE_MAX_PKTS at most.
 */
static __always_inline void wire_push(struct ctl_list *wq, struct skb_node *n, __u64 arrive)
{
	n->ready_ns = arrive;
	bpf_spin_lock(&wq->lock);
	bpf_list_push_back(&wq->head, &n->node);
	bpf_spin_unlock(&wq->lock);
	wq->n++;
}

/*
 * The wire's head, if its last bit has reached the peer; otherwise NULL,
 * with *next its arrival (0: the wire is empty).
 *
 * The invariant a real link keeps is judged here, on what the peer gets:
 * an ideal link of the rate, fed the same packets, would deliver this one
 * at the last one's delivery plus its own time, or now if it was idle; a
 * delivery more than the largest packet's time before that means a
 * burst. The credit (one packet) never gives one: a busy period's
 * deliveries are at most its first packet ahead.
 */
static __always_inline struct sk_buff *wire_dequeue(struct Qdisc *sch, struct port_state *st,
						    const struct rxecc_port_params *cfg,
						    struct pacer *pc, struct ctl_list *wq,
						    __u64 now, __u64 *next)
{
	__u64 arrive = 0, pkt_ns, one_pkt_ns, ahead;
	struct sk_buff *skb;
	__u32 len = 0;

	*next = 0;
	if (!wq->n || !head_peek(&wq->lock, &wq->head, &arrive, &len))
		return NULL;
	if (now < arrive) {
		*next = arrive;
		return NULL;
	}
	/* The qdisc's lock orders its ops: the head is still the one peeked. */
	skb = counted_pop(sch, wq, &len);
	if (!skb)
		return NULL;
	sch->qstats.backlog -= len;
	bpf_qdisc_bstats_update(sch, skb);

	if (len > pc->max_len)
		pc->max_len = len;
	pkt_ns = (__u64)len * 8 * NSEC_PER_SEC / (cfg->rate_bps ?: 1);
	one_pkt_ns = (__u64)pc->max_len * 8 * NSEC_PER_SEC / (cfg->rate_bps ?: 1);
	ahead = pc->ideal_free_ns + pkt_ns > now ? pc->ideal_free_ns + pkt_ns - now : 0;
	pc->ideal_free_ns = now + ahead;
	if (ahead > one_pkt_ns) {
		bpf_spin_lock(&st->lock);
		st->stats.rate_viol++;
		if (ahead - one_pkt_ns > st->stats.rate_viol_max_ns)
			st->stats.rate_viol_max_ns = ahead - one_pkt_ns;
		bpf_spin_unlock(&st->lock);
	}
	return skb;
}

/* Frees a counted list (the qdisc's reset). The loop's bound is above
 * what any counted list may hold (port.h), so nothing is left.
 */
static __always_inline void counted_free(struct ctl_list *l)
{
	struct skb_node *n;
	struct sk_buff *skb;
	int i;

	bpf_for(i, 0, RXECC_WIRE_MAX_PKTS + 1) {
		n = NULL;
		skb = pop(&l->lock, &l->head, &n);
		if (!n)
			break;
		bpf_obj_drop(n);
		if (skb)
			bpf_kfree_skb(skb);
	}
	l->n = 0;
}

/*
 * Keeps the link's arrival clock for a data packet from the peer. A real
 * link delivers at most its rate; when an upstream port's timer fired late
 * and it caught up on its pacing credit, the packets arrive faster than
 * that. One that arrives more than stall_ns / 2 (1 ms by default) ahead
 * of the link's schedule is flagged in skb->mark for the egress marker, and
 * counted; the flag of an earlier switch is cleared. (A link's own jitter,
 * a few packets batched by the guest, stays well inside that.)
 */
static __always_inline void arrival(struct __sk_buff *skb, struct port_state *st,
				    const struct rxecc_port_params *cfg, __u64 now)
{
	__u64 rate = cfg->rate_bps ?: 1, tol = (cfg->stall_ns ?: 2000000) / 2, vt;
	bool compressed;

	bpf_spin_lock(&st->lock);
	vt = st->stats.arrival_vt_ns;
	if (vt < now)
		vt = now;
	vt += (__u64)skb->len * 8 * NSEC_PER_SEC / rate;
	st->stats.arrival_vt_ns = vt;
	compressed = vt > now + tol;
	if (compressed)
		st->stats.compressed_pkts++;
	bpf_spin_unlock(&st->lock);
	mark_set(skb, compressed ? skb->mark | RXECC_MARK_COMPRESSED :
				   skb->mark & ~RXECC_MARK_COMPRESSED);
}

/* Frees port `id`'s wire (the qdisc's reset). */
static __always_inline void wire_free(__u32 id)
{
	struct ctl_list *wq = bpf_map_lookup_elem(&wire_q, &id);

	if (wq)
		counted_free(wq);
}

#endif /* RXECC_PORT_QUEUE_H */
