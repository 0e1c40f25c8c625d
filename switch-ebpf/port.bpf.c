// SPDX-License-Identifier: GPL-2.0
/*
 * port: one emulated switch port (or host NIC), as a BPF qdisc (struct_ops
 * Qdisc_ops) plus a TC ingress program. This file holds their entry
 * points; each feature is a header of port/, to be read on its own:
 *
 *   queue.h   the egress FIFO, drained at the link's rate (the pacer)
 *   pfc.h     802.1Qbb pause frames: obeying the link peer's
 *   gfc.h     GFC, buffer- and time-based, at both ends of a link
 *   buffer.h  a switch's shared buffer: charging ingress ports, and the
 *             flow-control frames each change of their bytes sends
 *   int.h     INT hop records for HPCC and FNCC
 *   icc.h     ICC's switch feedback
 *   inject.h  fault injection: drops, marks, corruption, copies, delays
 *             and reordering, by rule
 *   prio.h    the ACK class: ACKs, NAKs and CNPs ahead of data
 *
 * ECN marking (RED, TCD) is the TC egress program of mark.bpf.c.
 *
 * One instance serves every port: one Qdisc_ops (kind rxecc_port), one
 * ingress program. A port is known by its id, which rxecc makes the major
 * number of the port's qdisc handle (id:0); every per-port state is that
 * slot of a map. Loading and verifying an instance per port took most of a
 * topology's bring-up (0.4 s of CPU per port, 14 to 17 s on the debug
 * kernel).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kfuncs.h"
#include "port.h"
#include "port/queue.h"
#include "port/pfc.h"
#include "port/gfc.h"
#include "port/buffer.h"
#include "port/int.h"
#include "port/icc.h"
#include "port/inject.h"
#include "port/prio.h"

char _license[] SEC("license") = "GPL";

/* `rxecc selftest` only, which sets it before load: the port its
 * BPF_PROG_TEST_RUN packets arrive at (their device is no port).
 */
const volatile __u32 test_port_id = 0;

SEC("struct_ops")
int BPF_PROG(port_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	__u32 id = sch_port(sch);
	struct port_state *st = state(id);
	struct rxecc_port_params cfg;
	__u64 now = bpf_ktime_get_ns();
	__u32 len = pkt_len(skb), iif = skb->skb_iif, sw = 0, tag, limit;
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct ctl_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct ctl_list *pq = bpf_map_lookup_elem(&prio_q, &id);
	struct skb_node *n;
	int charged;

	if (!st || !dq || !cq || !pq || !port_cfg_get(id, &cfg))
		goto drop;
	limit = cfg.limit_pkts < RXECC_LIMIT_PKTS_MAX ? cfg.limit_pkts : RXECC_LIMIT_PKTS_MAX;
	if (skb->protocol == bpf_htons(ETH_P_PAUSE))
		return counted_enqueue(sch, st, cq, skb, len, RXECC_CTL_MAX_PKTS,
				       now + cfg.delay_ns, to_free);
	/* A rule at the ingress asked for a delay or reorder (port/inject.h). */
	tag = skb->mark & RXECC_MARK_TAG;
	if (tag == RXECC_MARK_DELAY || tag == RXECC_MARK_REORDER)
		return inject_hold(sch, st, skb, id, len, iif, limit, now, to_free);
	if (cfg.ack_prio && is_ack_class(skb))
		return prio_enqueue(sch, st, pq, skb, len, limit, now, to_free);
	if (st->stats.qlen_pkts >= limit)
		goto drop;
	charged = iif ? charge_ingress(sch, iif, len, now, &sw) : CHARGE_NONE;
	if (charged == CHARGE_DROP)
		goto drop;
	n = bpf_obj_new(typeof(*n));
	if (!n) {
		if (charged == CHARGE_DONE)
			release_ingress(sch, iif, sw, len, now);
		goto drop;
	}
	n->ready_ns = now;
	n->acct_iif = charged == CHARGE_DONE ? iif : 0;
	n->switch_id = sw;
	n->len = len;
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)
		bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */

	bpf_spin_lock(&dq->lock);
	bpf_list_push_back(&dq->head, &n->node);
	bpf_spin_unlock(&dq->lock);
	enqueue_account(st, id, len, now);

	sch->q.qlen++;
	sch->qstats.backlog += len;
	return NET_XMIT_SUCCESS;
drop:
	count_drop(st);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

/* What INT stamping reads (int_ingress()): this port's egress as of this
 * dequeue.
 */
static __always_inline void publish_deq(const struct rxecc_port_params *cfg,
					__u64 now, __u64 deq_bytes,
					__u64 qlen_bytes)
{
	__u32 id = cfg->port_id;
	struct int_deq *d;

	if (!id)
		return;
	d = bpf_map_lookup_elem(&int_deq, &id);
	if (!d)
		return;
	bpf_spin_lock(&d->lock);
	d->deq_ns = now;
	d->deq_bytes = deq_bytes;
	d->qlen_bytes = qlen_bytes;
	d->rate_bps = cfg->rate_bps;
	if (cfg->int_mode == INT_ICC)
		icc_sample(d, cfg, now, deq_bytes, qlen_bytes);
	bpf_spin_unlock(&d->lock);
}

/* INT at this port's ingress: shims of the kind the port's mode writes,
 * never a responder's echo.
 */
static __always_inline void int_ingress(struct __sk_buff *skb, struct port_state *st,
					const struct rxecc_port_params *cfg, __u64 now)
{
	struct rxe_int_shim sh;
	__u32 daddr = 0;

	if (int_shim_get(skb, st, &sh, &daddr) <= 0)
		return;
	if (sh.kind != cfg->int_mode || (sh.flags & RXE_INT_F_ECHO))
		return;
	if (sh.kind == RXE_INT_KIND_ICC)
		icc_feedback(skb, st, cfg, &sh, daddr, now);
	else
		int_hop_stamp(skb, st, cfg, &sh);
}

/* What flow control lets the egress do now, read under st->lock. */
struct egress_fc {
	bool paused;		/* PFC: paused until `until` */
	bool timed;		/* time-based GFC: a credit limit in force */
	__u64 until;
	__u64 resumed_at, pace_floor;
	__u64 stage;		/* buffer-based GFC: the peer's stage */
	__u64 credit;		/* time-based GFC: bytes left, at timed_rate */
	__u64 timed_rate;
};

/* PFC: the peer paused us; the pause ends by a resume frame (the ingress
 * program) or when its quanta run out (here).
 */
static __always_inline void egress_fc_get(struct port_state *st,
					  const struct rxecc_port_params *cfg,
					  __u64 now, struct egress_fc *fc)
{
	bpf_spin_lock(&st->lock);
	if (st->stats.paused) {
		if (now >= st->stats.pause_until_ns) {
			pause_end(st, now);
			st->stats.pause_expired++;
		} else {
			fc->paused = true;
			fc->until = st->stats.pause_until_ns;
		}
	}
	fc->resumed_at = st->stats.last_resume_ns;
	fc->pace_floor = st->stats.pace_floor_ns;
	if (cfg->fc_mode == FC_GFC_BUFFER)
		fc->stage = st->stats.gfc_stage;
	if (cfg->fc_mode == FC_GFC_TIME && st->stats.gfc_fccl_valid) {
		fc->credit = gfc_credit_left(st);
		fc->timed_rate = st->stats.gfc_rate_bps;
		fc->timed = true;
	}
	bpf_spin_unlock(&st->lock);
}

/* A paused port waits for its pause to end; meanwhile the XOFFs of the
 * switch its head packet came through are renewed on time. Returns when
 * to look again.
 */
static __always_inline __u64 pause_wait(struct Qdisc *sch, struct skb_list *dq,
					__u64 now, __u64 until)
{
	struct bpf_list_node *node;
	struct switch_ports *sp;
	__u32 head_iif = 0, sw = 0;
	__u64 wake = until;

	bpf_spin_lock(&dq->lock);
	node = bpf_list_front(&dq->head);
	if (node) {
		head_iif = container_of(node, struct skb_node, node)->acct_iif;
		sw = container_of(node, struct skb_node, node)->switch_id;
	}
	bpf_spin_unlock(&dq->lock);
	if (head_iif) {
		pfc_refresh_switch(sch, sw, now);
		sp = bpf_map_lookup_elem(&switch_ports, &sw);
		if (sp && sp->refresh_ns && now + sp->refresh_ns < wake)
			wake = now + sp->refresh_ns;
	}
	return wake;
}

/* The earlier of two times to look again (0: none). */
static __always_inline __u64 earlier(__u64 a, __u64 b)
{
	return a && (!b || a < b) ? a : b;
}

/*
 * Starts the next packet, if the link is free for it: the ACK class's
 * head, else the data queue's once flow control lets it. It leaves the
 * queue (its counters, its ingress port's buffer, INT's view) and goes on
 * the wire (true). Either way *next is when to look again (0: on an
 * enqueue or a frame from the peer).
 */
static __always_inline bool data_start(struct Qdisc *sch, struct port_state *st,
				       const struct rxecc_port_params *cfg,
				       struct pacer *pc, struct skb_list *dq,
				       struct ctl_list *pq, struct ctl_list *wq,
				       __u32 id, __u64 now, __u64 *next)
{
	__u64 deq_bytes, qlen_bytes, held_next, prio_next;
	struct egress_fc fc = {};
	struct release r = {};
	struct skb_node *n;
	__u32 head_len = 0, iif, sw;

	/* The ACK class first: its head holds data back. */
	if (prio_start(sch, st, cfg, pc, pq, wq, now, &prio_next)) {
		*next = pc->free_ns;
		return true;
	}
	*next = prio_next;
	if (prio_next)
		return false;
	held_next = held_release(sch, st, cfg, dq, id, now);
	*next = held_next;
	egress_fc_get(st, cfg, now, &fc);
	if (fc.paused) {
		*next = earlier(pause_wait(sch, dq, now, fc.until), held_next);
		return false;
	}

	/* GFC: the link peer's stage k leaves this port rate >> k; time-based,
	 * the rate the last advertisement set (gfc_credit()).
	 */
	r.now = now;
	r.rate = (cfg->rate_bps ?: 1) >>
		 (fc.stage < RXECC_GFC_MAX_STAGES ? fc.stage : RXECC_GFC_MAX_STAGES);
	if (fc.timed && fc.timed_rate < r.rate) {
		r.rate = fc.timed_rate;
		r.slowed = true;
	}
	if (!r.rate)
		r.rate = 1;
	r.timed = fc.timed;
	r.next_tx_ns = pc->free_ns;
	r.resumed_at = fc.resumed_at;
	r.pace_floor = fc.pace_floor;

	/* The head starts once the link is free and any pause has ended. */
	if (!head_peek(&dq->lock, &dq->head, &r.ready, &head_len))
		return false;
	/* CBFC's own rule stays: no packet beyond the credit limit; it waits
	 * for the next advertisement.
	 */
	if (fc.timed && (!fc.timed_rate || fc.credit < head_len)) {
		stat_inc(st, &st->stats.gfc_credit_waits);
		*next = earlier(now + (cfg->gfc_period_ns ?: 1000000), held_next);
		return false;
	}
	r.begin = r.next_tx_ns > r.ready ? r.next_tx_ns : r.ready;
	if (r.resumed_at > r.begin)
		r.begin = r.resumed_at;
	if (now < r.begin) {
		*next = earlier(r.begin, held_next);
		return false;
	}
	r.ser_ns = (__u64)head_len * 8 * NSEC_PER_SEC / r.rate;
	r.due = r.begin + r.ser_ns;

	/* The qdisc's lock orders its ops: the head is still the one peeked. */
	n = node_pop(&dq->lock, &dq->head);
	if (!n)
		return false;
	iif = n->acct_iif;
	sw = n->switch_id;
	r.len = n->len;
	dequeue_account(st, cfg, id, &r, &deq_bytes, &qlen_bytes);
	if (iif)
		release_ingress(sch, iif, sw, r.len, now);
	publish_deq(cfg, now, deq_bytes, qlen_bytes);
	pacer_start(pc, st, cfg, &r);
	wire_push(wq, n, r.end + cfg->delay_ns);
	/* The next may start once the link is free (now, after a late wake). */
	*next = earlier(pc->free_ns, held_next);
	return true;
}

/*
 * A control frame whose link delay has passed, else the wire's head once
 * it has reached the peer; first, the next packet starts if it may. The
 * watchdog wakes the port at the earliest of the times each step gives.
 */
SEC("struct_ops")
struct sk_buff *BPF_PROG(port_dequeue, struct Qdisc *sch)
{
	__u32 id = sch_port(sch);
	struct port_state *st = state(id);
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct ctl_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct ctl_list *pq = bpf_map_lookup_elem(&prio_q, &id);
	struct ctl_list *wq = bpf_map_lookup_elem(&wire_q, &id);
	struct pacer *pc = bpf_map_lookup_elem(&pacer, &id);
	__u64 now = bpf_ktime_get_ns(), ctl_next, start_next = 0, wire_next, wake;
	struct rxecc_port_params cfg;
	struct sk_buff *skb;

	if (!dq || !cq || !pq || !wq || !pc)
		return NULL;
	skb = ctl_dequeue(sch, st, cq, now, &ctl_next);
	if (skb)
		return skb;
	if (!st || !port_cfg_get(id, &cfg))
		return NULL;
	/* A full wire starts nothing until its head arrives. */
	if (wq->n < RXECC_WIRE_MAX_PKTS)
		data_start(sch, st, &cfg, pc, dq, pq, wq, id, now, &start_next);
	skb = wire_dequeue(sch, st, &cfg, pc, wq, now, &wire_next);
	if (skb)
		return skb;
	wake = earlier(earlier(ctl_next, start_next), wire_next);
	if (wake)
		bpf_qdisc_watchdog_schedule(sch, wake, 0);
	return NULL;
}

SEC("struct_ops")
int BPF_PROG(port_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	struct rxecc_port_params cfg;
	struct pacer *pc;
	__u32 id = sch_port(sch);

	/* Not a port rxecc configured (a handle it did not choose, or a slot
	 * no port holds).
	 */
	if (!id || !port_cfg_get(id, &cfg) || !cfg.ifindex)
		return -22;	/* -EINVAL */
	/* Nor on another device: a second qdisc with the port's handle would
	 * share its queues and send the port's packets out of that device.
	 */
	if (sch->dev_queue->dev->ifindex != cfg.ifindex)
		return -22;
	pc = bpf_map_lookup_elem(&pacer, &id);
	if (pc) {
		pc->free_ns = 0;
		pc->ideal_free_ns = 0;
		pc->max_len = 0;
	}
	sch->limit = cfg.limit_pkts < RXECC_LIMIT_PKTS_MAX ? cfg.limit_pkts : RXECC_LIMIT_PKTS_MAX;
	return 0;
}

/* Frees every queued packet, returning its buffer to its ingress port.
 * The loops' bounds are above what each list may hold (port.h), so none
 * is left: a leftover would later take the qdisc's length below 0.
 */
SEC("struct_ops")
void BPF_PROG(port_reset, struct Qdisc *sch)
{
	__u32 id = sch_port(sch);
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct ctl_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct port_state *st;
	struct skb_node *n;
	int i;

	if (!dq || !cq)
		return;
	bpf_for(i, 0, RXECC_LIMIT_PKTS_MAX + 1) {
		struct sk_buff *skb;

		n = NULL;
		skb = pop(&dq->lock, &dq->head, &n);
		if (!n)
			break;
		if (n->acct_iif)
			release_ingress(sch, n->acct_iif, n->switch_id, n->len, 0);
		bpf_obj_drop(n);
		if (skb)
			bpf_kfree_skb(skb);
	}
	bpf_for(i, 0, RXECC_CTL_MAX_PKTS + 1) {
		struct sk_buff *skb;

		n = NULL;
		skb = pop(&cq->lock, &cq->head, &n);
		if (!n)
			break;
		bpf_obj_drop(n);
		if (skb)
			bpf_kfree_skb(skb);
	}
	cq->n = 0;
	held_free(id);
	prio_free(id);
	wire_free(id);
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	st = state(id);
	if (st) {
		__u64 now = bpf_ktime_get_ns();

		bpf_spin_lock(&st->lock);
		st->stats.qlen_pkts = 0;
		st->stats.qlen_bytes = 0;
		bpf_spin_unlock(&st->lock);
		qlen_hist_change(id, 0, true, now);
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
	.id = "rxecc_port",	/* every port's qdisc kind */
};

/*
 * The port whose ingress this is: the one whose qdisc is its device's
 * root (handle id:0), if that port is configured for this device. A
 * device whose root qdisc is not a port's (the port detached, its ingress
 * program not yet) gives 0, and its packets pass untouched.
 */
static __always_inline __u32 skb_port(struct __sk_buff *skb, struct rxecc_port_params *cfg)
{
	struct sk_buff *kskb;
	__u32 id;

	if (test_port_id)
		return port_cfg_get(test_port_id, cfg) ? test_port_id : 0;
	kskb = bpf_cast_to_kern_ctx(skb);
	id = BPF_CORE_READ(kskb, dev, qdisc, handle) >> 16;
	if (!id || !port_cfg_get(id, cfg) || cfg->ifindex != skb->ifindex)
		return 0;
	return id;
}

SEC("tc")
int port_ingress(struct __sk_buff *skb)
{
	struct rxecc_port_params cfg;
	__u32 id = skb_port(skb, &cfg);
	struct port_state *st = state(id);
	__u64 now = bpf_ktime_get_ns(), stamp = 0;
	__u32 quanta = 0;
	bool kick = false;
	enum pfc_kind k;

	if (!id || !st)
		return TC_ACT_OK;
	k = pfc_parse(skb, cfg.pfc_class, &quanta, &stamp);
	if (k == PFC_NOT_CTL) {
		/* A packet injection drops never arrived; the copy of one it
		 * duplicated arrives, but no rule sees it. The switch's bits
		 * of the mark are this port's from here (port.h).
		 */
		bool dup = (skb->mark & RXECC_MARK_TAG) == RXECC_MARK_DUP;

		mark_set(skb, skb->mark & ~RXECC_MARK_MASK);
		if (!dup && cfg.inject_rules && !inject_apply(skb, st, id))
			return TC_ACT_SHOT;
		arrival(skb, st, &cfg, now);
		if (cfg.int_mode != INT_OFF)
			int_ingress(skb, st, &cfg, now);
		return TC_ACT_OK;
	}
	if (k != PFC_OURS) {
		bpf_spin_lock(&st->lock);
		if (k == PFC_BAD)
			st->stats.pfc_rx_bad++;
		else
			st->stats.pfc_rx_other++;
		bpf_spin_unlock(&st->lock);
		return TC_ACT_SHOT;
	}

	bpf_spin_lock(&st->lock);
	/* Stamp 0: a sender that does not stamp (a real switch); obey all. */
	if (stamp && stamp <= st->stats.pfc_last_stamp) {
		st->stats.pfc_rx_stale++;
		bpf_spin_unlock(&st->lock);
		return TC_ACT_SHOT;
	}
	if (stamp)
		st->stats.pfc_last_stamp = stamp;
	/* A time past the deepest stage is no GFC stage: it is a PFC pause
	 * from a peer still in PFC mode (the two ends change mode one after
	 * the other), obeyed as one.
	 */
	if (cfg.fc_mode == FC_GFC_TIME) {
		kick = gfc_credit(st, &cfg, quanta, stamp, now);
		bpf_spin_unlock(&st->lock);
		if (kick)
			rxecc_port_kick(skb);
		return TC_ACT_SHOT;
	}
	if (cfg.fc_mode == FC_GFC_BUFFER && quanta <= RXECC_GFC_MAX_STAGES) {
		kick = gfc_obey(st, quanta, stamp, now);
		bpf_spin_unlock(&st->lock);
		if (kick)
			rxecc_port_kick(skb);
		return TC_ACT_SHOT;
	}
	kick = pfc_obey(st, &cfg, quanta, stamp, now);
	bpf_spin_unlock(&st->lock);
	if (kick)
		rxecc_port_kick(skb);
	pfc_event(st, cfg.port_id, quanta, now);
	return TC_ACT_SHOT;
}
