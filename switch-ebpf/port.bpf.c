// SPDX-License-Identifier: GPL-2.0
/*
 * port: one emulated switch port (or host NIC), as a BPF qdisc (struct_ops
 * Qdisc_ops) plus a TC ingress program.
 *
 * Egress (the qdisc): a FIFO drained at the port's link rate, enforced at
 * dequeue with the qdisc watchdog, with exact byte and packet counts, an
 * optional propagation delay, and PFC: while the link peer has paused this
 * port, nothing but control frames leaves. Control frames (PFC) jump the
 * queue, the pause and the rate, as MAC control frames do.
 *
 * Shared buffer (switch ports): a packet that entered the switch at port I
 * is charged to I from enqueue to dequeue, in the maps all ports share.
 * Crossing XOFF at enqueue sends an 802.1Qbb PAUSE out of I; falling to XON
 * at dequeue sends the resume. The frames are built and sent by
 * rxecc_switch.ko's kfunc: a qdisc program cannot transmit.
 *
 * Ingress (TC): consumes PFC frames from the link peer and pauses or
 * resumes this port's egress.
 *
 * One instance serves every port: one Qdisc_ops (kind rxecc_port), one
 * ingress program. A port is known by its id, which rxecc makes the major
 * number of the port's qdisc handle (id:0); every per-port state is that
 * slot of a map. Loading and verifying an instance per port took most of a
 * topology's bring-up (0.4 s of CPU per port, 14 to 17 s on the debug
 * kernel).
 *
 * The pacer keeps credit instead of restarting from "now", so that a
 * watchdog that fires late costs no link time: by default one packet's
 * serialisation, which a real link can match; `burst_ns` more where the
 * guest's timers fire milliseconds late (the host clock under TCG).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kfuncs.h"
#include "port.h"

#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01
#define NSEC_PER_SEC		1000000000ULL
#define TC_ACT_OK		0
#define TC_ACT_SHOT		2
#define ETH_P_PAUSE		0x8808
#define PFC_OPCODE		0x0101
#define PFC_QUANTUM_BITS	512

char _license[] SEC("license") = "GPL";

/* `rxecc selftest` only, which sets it before load: the port its
 * BPF_PROG_TEST_RUN packets arrive at (their device is no port). */
const volatile __u32 test_port_id = 0;

/* Shared by every port: rxecc pins them once and reuses them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct ingress_cfg);
} ingress_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct ingress_acct);
} ingress_acct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_SWITCHES);
	__type(key, __u32);
	__type(value, struct switch_buf);
} switch_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_SWITCHES);
	__type(key, __u32);
	__type(value, struct switch_ports);
} switch_ports SEC(".maps");

/* Each port's egress at its last dequeue, indexed by port_id. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct int_deq);
} int_deq SEC(".maps");

/* PFC frames received (port.h); pinned and shared like the maps above. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

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
 * logged, so that a reader can take back those after its time. */
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

static __always_inline struct port_state *state(__u32 id)
{
	return bpf_map_lookup_elem(&port_state, &id);
}

/* The port a qdisc is: its handle is id:0 (rxecc), and a kind this object
 * registers is only ever made a port's root qdisc by rxecc. */
static __always_inline __u32 sch_port(const struct Qdisc *sch)
{
	return sch->handle >> 16;
}

/* Ends a pause, under st->lock: its time is accounted, and TCD sees the
 * end of an OFF period. */
static __always_inline void pause_end(struct port_state *st, __u64 now)
{
	st->stats.paused = 0;
	st->stats.paused_ns += ns_since(now, st->stats.pause_start_ns);
	st->stats.last_resume_ns = now;
	st->stats.pace_floor_ns = now;
	st->stats.resume_qlen_bytes = st->stats.qlen_bytes;
}

/* One sample of the feedback latency tau, under st->lock: from the stamp
 * the link peer took when it decided a frame to its effect here, now. */
static __always_inline void tau_sample(struct port_state *st, __u64 stamp, __u64 now)
{
	if (!stamp)
		return;
	if (stamp > now) {
		st->stats.tau_early_n++;
		st->stats.tau_early_sum_ns += stamp - now;
		return;
	}
	st->stats.tau_n++;
	st->stats.tau_sum_ns += now - stamp;
	if (now - stamp > st->stats.tau_max_ns)
		st->stats.tau_max_ns = now - stamp;
}

/* The pacer: the link is free from free_ns (0: nothing sent yet), when
 * the last packet's serialisation ended. The head serialises from then (or
 * from when it is due, or a pause ended) at the rate in force, so a GFC
 * stage change applies to it at once, and leaves at the end: store and
 * forward, as the veth behind the port delivers at once. Only the port's
 * dequeue uses it, and a qdisc has one dequeue at a time. */
struct pacer {
	__u64 free_ns;
	/* When an ideal link of the configured rate, fed with the packets
	 * as this port released them, would be free, and the largest packet
	 * released: the one packet a window may hold beyond the rate
	 * (rate_viol). */
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
	__u64 ready_ns;		/* enqueue time plus the link delay */
	__u32 acct_iif;		/* ingress port charged for it; 0: none */
	__u32 switch_id;
	__u32 len;
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

/* Each port's control frames (PFC), sent ahead of everything. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct skb_list);
} ctl_q SEC(".maps");

static __always_inline unsigned int pkt_len(const struct sk_buff *skb)
{
	return ((struct qdisc_skb_cb *)skb->cb)->pkt_len;
}

static __always_inline void count_drop(struct port_state *st)
{
	if (st) {
		bpf_spin_lock(&st->lock);
		st->stats.drops++;
		bpf_spin_unlock(&st->lock);
	}
}


/*
 * The stamp of a frame just decided, under ia->lock. Frames are decided in
 * one order (under the lock) but queued for sending after it is released,
 * possibly on two CPUs, so an XON may reach the peer before the XOFF it
 * follows. Stamps increase per ingress port in the order of the decisions,
 * and the receiver ignores a frame older than one it has already obeyed.
 * The stamp stays close to `now`, so the receiver also measures tau by it.
 */
static __always_inline __u64 pfc_stamp(struct ingress_acct *ia, __u64 now)
{
	__u64 stamp = now > ia->last_stamp ? now : ia->last_stamp + 1;

	ia->last_stamp = stamp;
	return stamp;
}

static __always_inline void pfc_send(struct Qdisc *sch, __u32 iif,
				     struct ingress_cfg *ic,
				     struct ingress_acct *ia, __u32 quanta,
				     __u64 stamp)
{
	if (rxecc_pfc_send(sch, iif, 1U << (ic->pfc_class & 7), quanta, stamp)) {
		bpf_spin_lock(&ia->lock);
		ia->pfc_tx_failed++;
		bpf_spin_unlock(&ia->lock);
	}
}

/* Takes `len` from a counter that never goes below zero: a release of
 * bytes that were never charged here (an account recreated under traffic)
 * is counted, not wrapped into a huge backlog that would pause for good. */
static __always_inline void release_bytes(__u64 *bytes, __u64 len, __u64 *underflows)
{
	if (*bytes >= len) {
		*bytes -= len;
	} else {
		*bytes = 0;
		(*underflows)++;
	}
}

/*
 * Buffer-based GFC's stage for an ingress queue of q bytes: 0 below B_1,
 * else the k in 1..N with B_k <= q, B_k = B_m - (B_m - B_1) / 2^(k-1).
 * q >= B_k is B_m - q <= (B_m - B_1) >> (k - 1): no division.
 */
static __always_inline __u64 gfc_stage_of(const struct ingress_cfg *ic, __u64 q)
{
	__u64 d1, left, k = 1;
	int i;

	if (q < ic->gfc_b1_bytes || ic->gfc_bm_bytes <= ic->gfc_b1_bytes)
		return 0;
	d1 = ic->gfc_bm_bytes - ic->gfc_b1_bytes;
	left = q < ic->gfc_bm_bytes ? ic->gfc_bm_bytes - q : 0;
	for (i = 1; i < RXECC_GFC_MAX_STAGES; i++) {
		if (i >= ic->gfc_stages || left > (d1 >> i))
			break;
		k = i + 1;
	}
	return k;
}

/*
 * What ingress port `ia` tells its link peer after its queue changed, under
 * ia->lock: true with *quanta (PFC: pause time, 0 resumes; GFC: the stage)
 * and *stamp set if a frame is due. `arrival`: the queue grew (enqueue),
 * else it shrank (dequeue). A mode changed at run time first releases
 * what the old mode holds (a pause, a stage), so nothing stays throttled.
 */
static __always_inline bool fc_decide(const struct ingress_cfg *ic,
				      struct ingress_acct *ia, __u64 now,
				      bool arrival, __u32 *quanta, __u64 *stamp)
{
	bool send = false, force = false;
	__u64 k;

	/* The mode changed at run time, and the old one holds the peer (a
	 * pause, a stage): the new mode's own frame goes now and releases it
	 * as it lands, with no moment at full rate in between (a stage or a
	 * credit limit ends a pause at a GFC receiver; time 0 resumes any). */
	if (ia->xoff_active && ic->fc_mode != FC_PFC) {
		ia->xoff_active = 0;
		ia->pfc_tx_xon++;
		force = true;
	}
	if (ia->gfc_stage && ic->fc_mode != FC_GFC_BUFFER) {
		ia->gfc_stage = 0;
		force = true;
	}
	if (ic->fc_mode == FC_PFC) {
		if (arrival && !ia->xoff_active && ia->bytes >= ic->xoff_bytes) {
			ia->xoff_active = 1;
			ia->last_xoff_ns = now;
			ia->pfc_tx_xoff++;
			*quanta = ic->pause_quanta;
			send = true;
		} else if (arrival && ia->xoff_active &&
			   ns_since(now, ia->last_xoff_ns) >= ic->refresh_ns) {
			ia->last_xoff_ns = now;
			ia->pfc_tx_refresh++;
			*quanta = ic->pause_quanta;
			send = true;
		} else if (!arrival && ia->xoff_active && ia->bytes <= ic->xon_bytes) {
			ia->xoff_active = 0;
			ia->pfc_tx_xon++;
			*quanta = 0;
			send = true;
		}
	} else if (ic->fc_mode == FC_GFC_TIME) {
		/* CBFC's advertisement every period: FCCL = ABR + the space
		 * left of B_m, in blocks, modulo 2^16 (GFC §5.3). */
		if (force || !ia->last_adv_ns ||
		    ns_since(now, ia->last_adv_ns) >= ic->gfc_period_ns) {
			k = ic->gfc_bm_bytes > ia->bytes ? ic->gfc_bm_bytes - ia->bytes : 0;
			ia->last_adv_ns = now;
			ia->gfc_tx++;
			*quanta = ((ia->abr_bytes + k) / RXECC_GFC_BLOCK) & 0xffff;
			send = true;
		}
	} else if (ic->fc_mode == FC_GFC_BUFFER) {
		/* Feedback only when the stage changes (GFC §5.2). */
		k = gfc_stage_of(ic, ia->bytes);
		if (force || k != ia->gfc_stage) {
			ia->gfc_stage = k;
			ia->gfc_tx++;
			if (k > ia->gfc_max_stage)
				ia->gfc_max_stage = k;
			*quanta = k;
			send = true;
		}
	}
	if (force && !send) {
		*quanta = 0;
		send = true;
	}
	if (send)
		*stamp = pfc_stamp(ia, now);
	return send;
}

/*
 * Re-sends, on time, every XOFF of switch `sw` that is due (refresh_ns
 * since the last), arrivals or not. Called by a paused egress queue of
 * that switch while it waits: its bytes hold its switch's ingress
 * counters up, and only time can renew their pauses then. For the same
 * reason, an XOFF whose port has left PFC (flow control changed at run
 * time) is released here by the new mode's frame: in a deadlock nothing
 * arrives or leaves to release it, and it would hold until it ran out.
 */
static __always_inline void pfc_refresh_switch(struct Qdisc *sch, __u32 sw,
					       __u64 now)
{
	struct switch_ports *sp = bpf_map_lookup_elem(&switch_ports, &sw);
	struct ingress_acct *ia;
	struct ingress_cfg *ic;
	__u64 stamp;
	__u32 iif, quanta;
	bool send;
	int i;

	if (!sp)
		return;
	/* An open-coded iterator, not a bounded loop: the verifier then checks
	 * the body (fc_decide() and all) until its states converge, not once
	 * per port, which made port_dequeue most of every port's load time. */
	bpf_for(i, 0, RXECC_SWITCH_PORTS) {
		if (i >= sp->n)
			break;
		iif = sp->iif[i];
		ic = bpf_map_lookup_elem(&ingress_cfg, &iif);
		ia = bpf_map_lookup_elem(&ingress_acct, &iif);
		if (!ic || !ia)
			continue;
		send = false;
		stamp = 0;
		quanta = ic->pause_quanta;
		bpf_spin_lock(&ia->lock);
		if (ic->fc_mode != FC_PFC) {
			if (ia->xoff_active)
				send = fc_decide(ic, ia, now, false, &quanta, &stamp);
		} else if (ia->xoff_active &&
			   ns_since(now, ia->last_xoff_ns) >= ic->refresh_ns) {
			ia->last_xoff_ns = now;
			ia->pfc_tx_refresh++;
			stamp = pfc_stamp(ia, now);
			send = true;
		}
		bpf_spin_unlock(&ia->lock);
		if (send)
			pfc_send(sch, iif, ic, ia, quanta, stamp);
	}
}

enum charge { CHARGE_DROP = -1, CHARGE_NONE = 0, CHARGE_DONE = 1 };

/*
 * Charges `len` bytes to ingress port `iif` of its switch: CHARGE_DONE, or
 * CHARGE_NONE if `iif` is not a switch's ingress port (a host NIC, or a
 * port without accounting), or CHARGE_DROP when the switch's shared buffer
 * cannot take them. Only a charged packet may be released at dequeue.
 */
static __always_inline int charge_ingress(struct Qdisc *sch, __u32 iif,
					   __u32 len, __u64 now,
					   __u32 *switch_id)
{
	struct ingress_cfg *ic = bpf_map_lookup_elem(&ingress_cfg, &iif);
	struct ingress_acct *ia;
	struct switch_buf *sb;
	__u64 stamp = 0;
	__u32 sw, quanta = 0;
	bool ok = true, send;

	if (!ic)
		return CHARGE_NONE;
	ia = bpf_map_lookup_elem(&ingress_acct, &iif);
	sw = ic->switch_id;
	sb = bpf_map_lookup_elem(&switch_buf, &sw);
	if (!ia || !sb)
		return CHARGE_NONE;
	bpf_spin_lock(&sb->lock);
	if (ic->buffer_bytes && sb->used_bytes + len > ic->buffer_bytes) {
		sb->drops++;
		ok = false;
	} else {
		sb->used_bytes += len;
		if (sb->used_bytes > sb->max_used_bytes)
			sb->max_used_bytes = sb->used_bytes;
	}
	bpf_spin_unlock(&sb->lock);
	if (!ok)
		return CHARGE_DROP;

	bpf_spin_lock(&ia->lock);
	ia->bytes += len;
	ia->abr_bytes += len;
	ia->pkts++;
	if (ia->bytes > ia->max_bytes)
		ia->max_bytes = ia->bytes;
	send = fc_decide(ic, ia, now, true, &quanta, &stamp);
	bpf_spin_unlock(&ia->lock);
	*switch_id = sw;
	if (send)
		pfc_send(sch, iif, ic, ia, quanta, stamp);
	return CHARGE_DONE;
}

/* Returns what a dequeued packet held back to its ingress port and switch. */
static __always_inline void release_ingress(struct Qdisc *sch, __u32 iif,
					    __u32 sw, __u32 len, __u64 now)
{
	struct ingress_cfg *ic = bpf_map_lookup_elem(&ingress_cfg, &iif);
	struct ingress_acct *ia = bpf_map_lookup_elem(&ingress_acct, &iif);
	struct switch_buf *sb = bpf_map_lookup_elem(&switch_buf, &sw);
	__u32 quanta = 0;
	__u64 stamp = 0;
	bool send = false;

	if (sb) {
		bpf_spin_lock(&sb->lock);
		release_bytes(&sb->used_bytes, len, &sb->underflows);
		bpf_spin_unlock(&sb->lock);
	}
	if (!ia)
		return;
	bpf_spin_lock(&ia->lock);
	release_bytes(&ia->bytes, len, &ia->underflows);
	if (ic)
		send = fc_decide(ic, ia, now, false, &quanta, &stamp);
	bpf_spin_unlock(&ia->lock);
	if (send && ic)
		pfc_send(sch, iif, ic, ia, quanta, stamp);
}

SEC("struct_ops")
int BPF_PROG(port_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	__u32 id = sch_port(sch);
	struct port_state *st = state(id);
	struct rxecc_port_params cfg;
	__u64 now = bpf_ktime_get_ns();
	__u32 len = pkt_len(skb), iif = skb->skb_iif, sw = 0;
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct skb_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct skb_node *n;
	int charged;

	if (!st || !dq || !cq || !port_cfg_get(id, &cfg))
		goto drop;
	if (skb->protocol == bpf_htons(ETH_P_PAUSE)) {
		n = bpf_obj_new(typeof(*n));
		if (!n)
			goto drop;
		n->len = len;
		skb = bpf_kptr_xchg(&n->skb, skb);
		if (skb)
			bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */
		bpf_spin_lock(&cq->lock);
		bpf_list_push_back(&cq->head, &n->node);
		bpf_spin_unlock(&cq->lock);
		sch->q.qlen++;
		return NET_XMIT_SUCCESS;
	}
	if (sch->q.qlen >= cfg.limit_pkts)
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
	n->ready_ns = now + cfg.delay_ns;
	n->acct_iif = charged == CHARGE_DONE ? iif : 0;
	n->switch_id = sw;
	n->len = len;
	skb = bpf_kptr_xchg(&n->skb, skb);
	if (skb)
		bpf_qdisc_skb_drop(skb, to_free);	/* cannot happen: n is new */

	bpf_spin_lock(&dq->lock);
	bpf_list_push_back(&dq->head, &n->node);
	bpf_spin_unlock(&dq->lock);

	bpf_spin_lock(&st->lock);
	st->stats.enq_pkts++;
	st->stats.enq_bytes += len;
	st->stats.qlen_pkts++;
	st->stats.qlen_bytes += len;
	if (st->stats.qlen_bytes > st->stats.max_qlen_bytes)
		st->stats.max_qlen_bytes = st->stats.qlen_bytes;
	bpf_spin_unlock(&st->lock);
	qlen_hist_change(id, len, false, now);

	sch->q.qlen++;
	sch->qstats.backlog += len;
	return NET_XMIT_SUCCESS;
drop:
	count_drop(st);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
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

/*
 * ICC's view of the port's egress, sampled at dequeues at least
 * icc_sample_ns apart, under d->lock: the queue's growth over the last two
 * intervals (the paper's qlenrate1 and qlenrate2) and the link utilisation
 * over the last one. Signed division is avoided (BPF ISA v3).
 */
static __always_inline void icc_sample(struct int_deq *d,
				       const struct rxecc_port_params *cfg,
				       __u64 now, __u64 deq_bytes,
				       __u64 qlen_bytes)
{
	__u64 dt = ns_since(now, d->smp_ns), cap, grow;

	if (d->smp_ns && dt < (cfg->icc_sample_ns ?: 1))
		return;
	/* After 10 s without a dequeue the port starts afresh (and rate * dt
	 * cannot overflow). */
	if (d->smp_ns && dt && dt < 10 * NSEC_PER_SEC) {
		d->qrate1 = d->qrate2;
		if (qlen_bytes >= d->smp_qlen) {
			grow = (qlen_bytes - d->smp_qlen) * NSEC_PER_SEC / dt;
			d->qrate2 = (__s64)grow;
		} else {
			grow = (d->smp_qlen - qlen_bytes) * NSEC_PER_SEC / dt;
			d->qrate2 = -(__s64)grow;
		}
		/* Bits the link could have sent in dt, and those it did. */
		cap = (cfg->rate_bps ?: 1) * dt / NSEC_PER_SEC ?: 1;
		d->lu_permille = (deq_bytes - d->smp_bytes) * 8 * 1000 / cap;
	}
	d->smp_ns = now;
	d->smp_qlen = qlen_bytes;
	d->smp_bytes = deq_bytes;
}

/* What INT stamping reads (int_ingress()): this port's egress as of this
 * dequeue. */
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

/*
 * Time-based GFC, under st->lock: the credit left in bytes, FCCL - FCTBS
 * (bytes sent, in blocks) modulo 2^16; "negative" (more sent than
 * granted) is none.
 */
static __always_inline __u64 gfc_credit_left(const struct port_state *st)
{
	__u64 credit = (st->stats.gfc_fccl -
			st->stats.deq_bytes / RXECC_GFC_BLOCK) & 0xffff;

	return credit >= 0x8000 ? 0 : credit * RXECC_GFC_BLOCK;
}

SEC("struct_ops")
struct sk_buff *BPF_PROG(port_dequeue, struct Qdisc *sch)
{
	__u32 id = sch_port(sch);
	struct port_state *st = state(id);
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct skb_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct pacer *pc = bpf_map_lookup_elem(&pacer, &id);
	struct rxecc_port_params cfg;
	__u64 now = bpf_ktime_get_ns(), start, floor, until = 0, ready = 0;
	__u64 rate, resumed_at = 0, stall, deq_bytes, qlen_bytes;
	__u64 next_tx_ns = 0, stage = 0, wake, credit = 0, lost_from, pace_floor = 0, lost, lag;
	__u64 timed_rate = 0;
	__u64 keep_ns, pkt_ns, ahead, one_pkt_ns, begin, due, end, ser_ns;
	bool timed = false, slowed = false;
	struct bpf_list_node *node;
	struct switch_ports *sp;
	struct sk_buff *skb;
	struct skb_node *n = NULL;
	__u32 len, iif, sw = 0, head_iif = 0, head_len = 0;
	bool paused = false;

	if (!dq || !cq || !pc)
		return NULL;
	/* Control frames first: not paused, not paced, not counted. */
	skb = pop(&cq->lock, &cq->head, &n);
	if (n)
		bpf_obj_drop(n);
	if (skb) {
		sch->q.qlen--;
		if (st) {
			bpf_spin_lock(&st->lock);
			st->stats.ctl_pkts++;
			bpf_spin_unlock(&st->lock);
		}
		bpf_qdisc_bstats_update(sch, skb);
		return skb;
	}
	if (!st || !port_cfg_get(id, &cfg))
		return NULL;

	/* PFC: the peer paused us; the pause ends by a resume frame (the
	 * ingress program) or when its quanta run out (here). */
	bpf_spin_lock(&st->lock);
	if (st->stats.paused) {
		if (now >= st->stats.pause_until_ns) {
			pause_end(st, now);
			st->stats.pause_expired++;
		} else {
			paused = true;
			until = st->stats.pause_until_ns;
		}
	}
	resumed_at = st->stats.last_resume_ns;
	pace_floor = st->stats.pace_floor_ns;
	if (cfg.fc_mode == FC_GFC_BUFFER)
		stage = st->stats.gfc_stage;
	if (cfg.fc_mode == FC_GFC_TIME && st->stats.gfc_fccl_valid) {
		credit = gfc_credit_left(st);
		timed_rate = st->stats.gfc_rate_bps;
		timed = true;
	}
	bpf_spin_unlock(&st->lock);
	if (paused) {
		/* While it waits, its switch's XOFFs are renewed on time. */
		bpf_spin_lock(&dq->lock);
		node = bpf_list_front(&dq->head);
		if (node) {
			head_iif = container_of(node, struct skb_node, node)->acct_iif;
			sw = container_of(node, struct skb_node, node)->switch_id;
		}
		bpf_spin_unlock(&dq->lock);
		wake = until;
		if (head_iif) {
			pfc_refresh_switch(sch, sw, now);
			sp = bpf_map_lookup_elem(&switch_ports, &sw);
			if (sp && sp->refresh_ns && now + sp->refresh_ns < wake)
				wake = now + sp->refresh_ns;
		}
		bpf_qdisc_watchdog_schedule(sch, wake, 0);
		return NULL;
	}

	/* GFC: the link peer's stage k leaves this port rate >> k; time-based,
	 * the rate the last advertisement set (gfc_credit()). */
	rate = (cfg.rate_bps ?: 1) >> (stage < RXECC_GFC_MAX_STAGES ? stage : RXECC_GFC_MAX_STAGES);
	if (timed && timed_rate < rate) {
		rate = timed_rate;
		slowed = true;
	}
	if (!rate)
		rate = 1;
	next_tx_ns = pc->free_ns;

	/* The head serialises once the link is free, the head is due (the
	 * link's propagation delay) and any pause has ended, and leaves when
	 * its last bit is out. */
	bpf_spin_lock(&dq->lock);
	node = bpf_list_front(&dq->head);
	if (node) {
		ready = container_of(node, struct skb_node, node)->ready_ns;
		head_len = container_of(node, struct skb_node, node)->len;
	}
	bpf_spin_unlock(&dq->lock);
	if (!node)
		return NULL;
	/* CBFC's own rule stays: no packet beyond the credit limit; it waits
	 * for the next advertisement. */
	if (timed && (!timed_rate || credit < head_len)) {
		bpf_spin_lock(&st->lock);
		st->stats.gfc_credit_waits++;
		bpf_spin_unlock(&st->lock);
		bpf_qdisc_watchdog_schedule(sch, now + (cfg.gfc_period_ns ?: 1000000), 0);
		return NULL;
	}
	begin = next_tx_ns > ready ? next_tx_ns : ready;
	if (resumed_at > begin)
		begin = resumed_at;
	ser_ns = (__u64)head_len * 8 * NSEC_PER_SEC / rate;
	due = begin + ser_ns;
	if (now < due) {
		bpf_qdisc_watchdog_schedule(sch, due, 0);
		return NULL;
	}

	n = NULL;
	skb = pop(&dq->lock, &dq->head, &n);
	if (!n)
		return NULL;
	iif = n->acct_iif;
	sw = n->switch_id;
	len = n->len;
	bpf_obj_drop(n);
	if (!skb)
		return NULL;

	sch->q.qlen--;
	sch->qstats.backlog -= len;
	stall = cfg.stall_ns ?: 2000000;
	bpf_spin_lock(&st->lock);
	/* A port that could have sent long ago, with packets waiting, was not
	 * serving: for TCD that is an OFF period, like a pause, not a queue
	 * built while free to send. */
	if (st->stats.qlen_pkts > 1 && next_tx_ns && now > due + stall &&
	    resumed_at < next_tx_ns) {
		st->stats.stalls++;
		st->stats.stall_ns += now - due;
		st->stats.last_resume_ns = now;
		st->stats.resume_qlen_bytes = st->stats.qlen_bytes;
	}
	if (slowed)
		st->stats.gfc_credit_slowed++;
	st->stats.deq_pkts++;
	st->stats.deq_bytes += len;
	st->stats.qlen_pkts--;
	st->stats.qlen_bytes -= len;
	if (st->stats.lag_bytes > st->stats.qlen_bytes)
		st->stats.lag_bytes = st->stats.qlen_bytes;
	deq_bytes = st->stats.deq_bytes;
	qlen_bytes = st->stats.qlen_bytes;
	bpf_spin_unlock(&st->lock);
	qlen_hist_change(id, -(__s64)len, false, now);
	if (iif)
		release_ingress(sch, iif, sw, len, now);
	publish_deq(&cfg, now, deq_bytes, qlen_bytes);

	/* The link is free again when this packet's serialisation ended
	 * (due), keeping at most its own serialisation time at the link's
	 * rate of credit for a late dequeue (burst_ns if set), and none from
	 * before a pause or a stall ended (begin: a paused link does not bank
	 * time; a stalled one does not burst its backlog out, which TCD
	 * downstream would take for congestion: with catch-up after stalls,
	 * chain's quiet run got CE). */
	pkt_ns = (__u64)len * 8 * NSEC_PER_SEC / (cfg.rate_bps ?: 1);
	keep_ns = cfg.burst_ns ?: pkt_ns;
	floor = now > keep_ns ? now - keep_ns : 0;
	end = due > floor ? due : floor;
	/* Time lost: the link was free (next_tx_ns), this packet there (ready)
	 * and no pause or credit wait held it, yet it ends later: a late
	 * dequeue beyond the credit, or the credit a stall gave up. */
	start = next_tx_ns > ready ? next_tx_ns : ready;
	lost_from = (pace_floor > start ? pace_floor : start) + ser_ns;
	if (next_tx_ns && !timed && end > lost_from) {
		/* At most 1 s: 1e9 ns x 1.25e10 B/s (100 Gb/s) fits. */
		lost = end - lost_from < NSEC_PER_SEC ? end - lost_from : NSEC_PER_SEC;
		lag = lost * (rate / 8) / NSEC_PER_SEC;
		bpf_spin_lock(&st->lock);
		st->stats.late_ns += end - lost_from;
		lag += st->stats.lag_bytes;
		st->stats.lag_bytes = lag < st->stats.qlen_bytes ? lag : st->stats.qlen_bytes;
		bpf_spin_unlock(&st->lock);
	}
	if (start < floor)
		start = floor;

	/* The invariant, judged on the release itself: an ideal link of the
	 * rate, fed the same packets, would end this one's serialisation at
	 * the last one's end plus its own time, or now if it was idle; a
	 * release more than the largest packet's time before that means a
	 * burst. The credit above (one packet) never gives one: a busy
	 * period's releases are at most its first packet ahead. */
	if (len > pc->max_len)
		pc->max_len = len;
	one_pkt_ns = (__u64)pc->max_len * 8 * NSEC_PER_SEC / (cfg.rate_bps ?: 1);
	ahead = pc->ideal_free_ns + pkt_ns > now ? pc->ideal_free_ns + pkt_ns - now : 0;
	pc->ideal_free_ns = now + ahead;
	if (ahead > one_pkt_ns) {
		bpf_spin_lock(&st->lock);
		st->stats.rate_viol++;
		if (ahead - one_pkt_ns > st->stats.rate_viol_max_ns)
			st->stats.rate_viol_max_ns = ahead - one_pkt_ns;
		bpf_spin_unlock(&st->lock);
	}
	pc->free_ns = end;

	bpf_qdisc_bstats_update(sch, skb);
	return skb;
}

SEC("struct_ops")
int BPF_PROG(port_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	struct rxecc_port_params cfg;
	struct pacer *pc;
	__u32 id = sch_port(sch);

	/* Not a port rxecc configured (a handle it did not choose, or a slot
	 * no port holds). */
	if (!id || !port_cfg_get(id, &cfg) || !cfg.ifindex)
		return -22;	/* -EINVAL */
	pc = bpf_map_lookup_elem(&pacer, &id);
	if (pc) {
		pc->free_ns = 0;
		pc->ideal_free_ns = 0;
		pc->max_len = 0;
	}
	sch->limit = cfg.limit_pkts;
	return 0;
}

/* Frees every queued packet, returning its buffer to its ingress port. */
SEC("struct_ops")
void BPF_PROG(port_reset, struct Qdisc *sch)
{
	__u32 id = sch_port(sch);
	struct skb_list *dq = bpf_map_lookup_elem(&data_q, &id);
	struct skb_list *cq = bpf_map_lookup_elem(&ctl_q, &id);
	struct port_state *st;
	struct skb_node *n;
	int i;

	if (!dq || !cq)
		return;
	bpf_for(i, 0, 100000) {
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
	bpf_for(i, 0, 1000) {
		struct sk_buff *skb;

		n = NULL;
		skb = pop(&cq->lock, &cq->head, &n);
		if (!n)
			break;
		bpf_obj_drop(n);
		if (skb)
			bpf_kfree_skb(skb);
	}
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

/* An 802.1Qbb PFC frame, less the FCS. */
struct pfc_frame {
	__u8 dst[6];
	__u8 src[6];
	__be16 proto;		/* 0x8808, MAC control */
	__be16 opcode;		/* 0x0101, PFC */
	__be16 class_vec;	/* bit n: time[n] is valid */
	__be16 time[8];		/* pause quanta per class; 0 resumes */
	__u8 stamp[8];		/* rxe-cc: sender's XOFF time (pad in 802.1Qbb) */
} __attribute__((packed));

/* A PFC frame is padded to the minimum Ethernet frame; 64 if the FCS is kept. */
#define PFC_LEN_MIN		60
#define PFC_LEN_MAX		64

enum pfc_kind {
	PFC_NOT_CTL,		/* not a MAC control frame: data */
	PFC_BAD,		/* MAC control, but not a well-formed PFC frame */
	PFC_OTHER,		/* PFC that does not name our class */
	PFC_OURS,		/* PFC for our class: *quanta and *stamp set */
};

/*
 * Parses a frame from the link peer for PFC class `cls`. A frame that claims
 * to be MAC control but is short, long, not addressed to the PFC group, of
 * another opcode (802.3x PAUSE included) or with reserved class-vector bits
 * set is PFC_BAD: the caller counts and drops it, and it never pauses.
 */
static __always_inline enum pfc_kind pfc_parse(struct __sk_buff *skb, __u32 cls,
					       __u32 *quanta, __u64 *stamp)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct pfc_frame *f = data;
	__u16 vec;
	__u64 s = 0;
	int i;

	if (skb->protocol != bpf_htons(ETH_P_PAUSE))
		return PFC_NOT_CTL;
	/* Only the Ethernet header may be linear (mark.bpf.c says why). */
	if ((void *)(f + 1) > data_end && skb->len >= sizeof(*f)) {
		if (bpf_skb_pull_data(skb, sizeof(*f)))
			return PFC_BAD;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		f = data;
	}
	if ((void *)(f + 1) > data_end || skb->len < PFC_LEN_MIN || skb->len > PFC_LEN_MAX)
		return PFC_BAD;
	if (f->proto != bpf_htons(ETH_P_PAUSE) || f->opcode != bpf_htons(PFC_OPCODE))
		return PFC_BAD;
	if (f->dst[0] != 0x01 || f->dst[1] != 0x80 || f->dst[2] != 0xc2 ||
	    f->dst[3] != 0x00 || f->dst[4] != 0x00 || f->dst[5] != 0x01)
		return PFC_BAD;
	vec = bpf_ntohs(f->class_vec);
	if (vec & 0xff00)
		return PFC_BAD;
	cls &= 7;
	if (!(vec & (1U << cls)))
		return PFC_OTHER;
	/* Constant offsets only: the verifier cannot bound f->time[cls]. */
#pragma unroll
	for (i = 0; i < 8; i++)
		if (i == cls)
			*quanta = bpf_ntohs(f->time[i]);
#pragma unroll
	for (i = 0; i < 8; i++)
		s = (s << 8) | f->stamp[i];
	*stamp = s;
	return PFC_OURS;
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
	if (compressed)
		skb->mark |= RXECC_MARK_COMPRESSED;
	else
		skb->mark &= ~RXECC_MARK_COMPRESSED;
}

#define ETH_HLEN		14
#define IP_HLEN			20
#define UDP_HLEN		8
#define ROCE_V2_PORT		4791
#define SHIM_OFF		(ETH_HLEN + IP_HLEN + UDP_HLEN)

static __always_inline void int_count(struct port_state *st, __u64 *c)
{
	bpf_spin_lock(&st->lock);
	(*c)++;
	bpf_spin_unlock(&st->lock);
}

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
		int_count(st, &st->stats.int_bad);
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
		int_count(st, &st->stats.int_overflow);
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
	int_count(st, &st->stats.int_stamped);
}

/* A flow, as ICC counts them on a port: an ACK's destination (the sender's
 * address and QP). */
struct icc_flow_key {
	__u32 port_id;
	__u32 daddr;
	__u32 qpn;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct icc_flow_key);
	__type(value, __u64);		/* the flow window it was last counted in */
} icc_flows SEC(".maps");

/*
 * ICC's switch (docs/algorithms.md): on an ACK crossing port `d` back
 * towards the sender, feeds back the state of d's egress, which carries the
 * data, unless its queue is draining at low utilisation and feedback went
 * out within icc_period_ns. The shim has one slot: a port writes it if it
 * is empty or reports a shorter queue, so the sender hears of the most
 * congested port on the path.
 */
static __always_inline void icc_feedback(struct __sk_buff *skb, struct port_state *st,
					 const struct rxecc_port_params *cfg,
					 const struct rxe_int_shim *sh, __u32 daddr,
					 __u64 now)
{
	__u32 id = cfg->int_from, off = SHIM_OFF + sizeof(*sh);
	__u64 period = cfg->icc_period_ns ?: 1, epoch, *seen, qlen, rate, lu, flows;
	__u64 deq_ns, mag, since;
	struct icc_flow_key k = { .port_id = id, .daddr = daddr };
	struct rxe_int_icc rec;
	__u8 bth[8], one = 1;
	__s64 qrate;
	__be32 prev;
	bool quiet;
	struct int_deq *d;

	if (!sh->max_hops) {
		int_count(st, &st->stats.int_overflow);
		return;
	}
	d = id ? bpf_map_lookup_elem(&int_deq, &id) : NULL;
	if (!d || bpf_skb_load_bytes(skb, off + sh->max_hops * sizeof(rec), bth, sizeof(bth)))
		return;
	k.qpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];

	/* Distinct flows per window of icc_period_ns, counted by ACKs. */
	bpf_spin_lock(&d->lock);
	since = ns_since(now, d->flow_epoch_ns);
	if (since >= period) {
		d->flows_prev = since < 2 * period ? d->flows_cur : 0;
		d->flows_cur = 0;
		d->flow_epoch++;
		d->flow_epoch_ns = now;
	}
	epoch = d->flow_epoch;
	bpf_spin_unlock(&d->lock);
	seen = bpf_map_lookup_elem(&icc_flows, &k);
	if (!seen || *seen != epoch) {
		bpf_map_update_elem(&icc_flows, &k, &epoch, BPF_ANY);
		bpf_spin_lock(&d->lock);
		if (d->flow_epoch == epoch)
			d->flows_cur++;
		bpf_spin_unlock(&d->lock);
	}

	bpf_spin_lock(&d->lock);
	deq_ns = d->deq_ns;
	qlen = d->qlen_bytes;
	rate = d->rate_bps;
	lu = d->lu_permille;
	/* Growth only if both samples grew: a one-sample spike is not. */
	qrate = d->qrate1 < d->qrate2 ? d->qrate1 : d->qrate2;
	flows = d->flows_cur > d->flows_prev ? d->flows_cur : d->flows_prev;
	quiet = qlen && d->qrate2 < 0 && lu < cfg->icc_lu_permille &&
		ns_since(now, d->fb_ns) < period;
	if (!quiet)
		d->fb_ns = now;
	bpf_spin_unlock(&d->lock);
	if (!deq_ns)
		return;		/* nothing dequeued yet: nothing to report */
	if (quiet) {
		int_count(st, &st->stats.int_quiet);
		return;
	}
	if (sh->nhops) {
		if (bpf_skb_load_bytes(skb, off + 4, &prev, sizeof(prev)) ||
		    bpf_ntohl(prev) >= sat32(qlen))
			return;
	}
	/* bytes/s to bytes/ms, clamped to 32 signed bits, without sdiv. */
	mag = qrate < 0 ? (__u64)-qrate : (__u64)qrate;
	mag /= 1000;
	if (mag > 0x7fffffffULL)
		mag = 0x7fffffffULL;
	qrate = qrate < 0 ? -(__s64)mag : (__s64)mag;
	rec.rate_mbps = bpf_htonl(rate / 1000000);
	rec.qlen = bpf_htonl(sat32(qlen));
	rec.qlen_rate = bpf_htonl((__u32)(__s32)qrate);
	rec.lu_permille = bpf_htons(lu > 0xffff ? 0xffff : lu);
	rec.flows = bpf_htons(flows > 0xffff ? 0xffff : flows);
	if (bpf_skb_store_bytes(skb, off, &rec, sizeof(rec), 0))
		return;
	bpf_skb_store_bytes(skb, SHIM_OFF + 4, &one, 1, 0);
	int_count(st, &st->stats.int_stamped);
}

/* INT at this port's ingress: shims of the kind the port's mode writes,
 * never a responder's echo. */
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

/*
 * Buffer-based GFC at the upstream end, under st->lock: the peer's stage
 * sets this port's egress rate (port_dequeue). A pause left over from PFC
 * (the mode changed at run time) ends here. True if the port must be
 * kicked: it may now send sooner than its watchdog was set for.
 */
static __always_inline bool gfc_obey(struct port_state *st, __u32 stage,
				     __u64 stamp, __u64 now)
{
	__u64 old = st->stats.gfc_stage;
	bool kick = false;

	st->stats.gfc_rx++;
	if (st->stats.paused) {
		pause_end(st, now);
		kick = true;
	}
	if (!old && stage) {
		st->stats.gfc_since_ns = now;
		/* Feedback latency: the stage's decision to its effect here. */
		tau_sample(st, stamp, now);
	} else if (old && !stage) {
		st->stats.gfc_limited_ns += ns_since(now, st->stats.gfc_since_ns);
	}
	/* A faster rate starts now, as after a pause: the pacer banks no
	 * credit from the slower period, and that wait was no stall. */
	if (stage < old) {
		st->stats.last_resume_ns = now;
		st->stats.pace_floor_ns = now;
		st->stats.resume_qlen_bytes = st->stats.qlen_bytes;
	}
	if (stage > st->stats.gfc_max_stage)
		st->stats.gfc_max_stage = stage;
	st->stats.gfc_stage = stage;
	return kick || stage < old;
}

/*
 * Time-based GFC at the upstream end, under st->lock: a new credit limit.
 * Its rate is set here, on arrival, and held until the next one (GFC §5.2,
 * Fig. 8; App. B's q(t_k) is the buffer at the advertisement): the credit
 * maps linearly to the rate, C at B_m - B_0 or more (§5.3). A PFC pause
 * left from before ends. Always kicks: the port may have been waiting.
 */
static __always_inline bool gfc_credit(struct port_state *st,
				       const struct rxecc_port_params *cfg,
				       __u32 fccl, __u64 stamp, __u64 now)
{
	__u64 rate = cfg->rate_bps ?: 1, credit;

	st->stats.gfc_rx++;
	st->stats.gfc_fccl = fccl;
	st->stats.gfc_fccl_valid = 1;
	credit = gfc_credit_left(st);
	if (cfg->gfc_span_bytes && credit < cfg->gfc_span_bytes)
		rate = rate * credit / cfg->gfc_span_bytes;
	st->stats.gfc_rate_bps = rate;
	/* Feedback latency: every credit frame is a decision that takes
	 * effect on arrival (buffer-based GFC samples its steps out of
	 * stage 0). */
	tau_sample(st, stamp, now);
	if (st->stats.paused) {
		pause_end(st, now);
	}
	return true;
}

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
	__u64 now = bpf_ktime_get_ns(), stamp = 0, pause_ns, rate;
	struct rxecc_event ev = {};
	__u32 quanta = 0;
	bool kick = false;
	enum pfc_kind k;

	if (!id || !st)
		return TC_ACT_OK;
	k = pfc_parse(skb, cfg.pfc_class, &quanta, &stamp);
	if (k == PFC_NOT_CTL) {
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
	rate = cfg.rate_bps ?: 1;
	pause_ns = (__u64)quanta * PFC_QUANTUM_BITS * NSEC_PER_SEC / rate;

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
	 * the other), obeyed as one. */
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
	if (quanta == 0) {
		st->stats.pfc_rx_xon++;
		if (st->stats.paused) {
			pause_end(st, now);
			kick = true;
		}
	} else {
		st->stats.pfc_rx_xoff++;
		if (!st->stats.paused) {
			st->stats.paused = 1;
			st->stats.pause_start_ns = now;
			tau_sample(st, stamp, now);
		}
		st->stats.pause_until_ns = now + pause_ns;
	}
	bpf_spin_unlock(&st->lock);
	if (kick)
		rxecc_port_kick(skb);
	ev.t_ns = now;
	ev.port_id = cfg.port_id;
	ev.kind = quanta ? RXECC_EV_PAUSE : RXECC_EV_RESUME;
	ev.quanta = quanta;
	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), 0)) {
		bpf_spin_lock(&st->lock);
		st->stats.events_lost++;
		bpf_spin_unlock(&st->lock);
	}
	return TC_ACT_SHOT;
}
