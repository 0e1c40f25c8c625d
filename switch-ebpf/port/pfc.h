/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PFC (802.1Qbb): pausing and resuming the link peer, and obeying it.
 *
 * The sending side is the shared buffer's (buffer.h): crossing XOFF at
 * enqueue sends a PAUSE out of the ingress port; falling to XON at dequeue
 * sends the resume. The frames are built and sent by rxecc_switch.ko's
 * kfunc (kfuncs.h): a qdisc program cannot transmit. The receiving side is
 * here: the TC ingress program consumes PFC frames from the link peer, and
 * while it has paused this port, nothing but control frames leaves.
 *
 * Frames carry the stamp their sender took when it decided them: the
 * receiver orders frames by it and measures the feedback latency tau.
 */
#ifndef RXECC_PORT_PFC_H
#define RXECC_PORT_PFC_H

#define ETH_P_PAUSE		0x8808
#define PFC_OPCODE		0x0101
#define PFC_QUANTUM_BITS	512

/* PFC frames received (port.h); pinned and shared like the maps above. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Ends a pause, under st->lock: its time is accounted, and TCD sees the
 * end of an OFF period.
 */
static __always_inline void pause_end(struct port_state *st, __u64 now)
{
	st->stats.paused = 0;
	st->stats.paused_ns += ns_since(now, st->stats.pause_start_ns);
	st->stats.last_resume_ns = now;
	st->stats.pace_floor_ns = now;
	st->stats.resume_qlen_bytes = st->stats.qlen_bytes;
}

/* One sample of the feedback latency tau, under st->lock: from the stamp
 * the link peer took when it decided a frame to its effect here, now.
 */
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
 * Obeys a PFC frame for our class, under st->lock: a time of 0 resumes,
 * any other pauses for that many quanta at the port's rate. True if the
 * port must be kicked: it may send now.
 */
static __always_inline bool pfc_obey(struct port_state *st,
				     const struct rxecc_port_params *cfg,
				     __u32 quanta, __u64 stamp, __u64 now)
{
	__u64 rate = cfg->rate_bps ?: 1, pause_ns;
	bool kick = false;

	pause_ns = (__u64)quanta * PFC_QUANTUM_BITS * NSEC_PER_SEC / rate;
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
	return kick;
}

/* A pause or resume obeyed, to `rxecc record` (pfc.txt) via the ring. */
static __always_inline void pfc_event(struct port_state *st, __u32 port_id,
				      __u32 quanta, __u64 now)
{
	struct rxecc_event ev = {};

	ev.t_ns = now;
	ev.port_id = port_id;
	ev.kind = quanta ? RXECC_EV_PAUSE : RXECC_EV_RESUME;
	ev.quanta = quanta;
	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), 0)) {
		bpf_spin_lock(&st->lock);
		st->stats.events_lost++;
		bpf_spin_unlock(&st->lock);
	}
}

#endif /* RXECC_PORT_PFC_H */
