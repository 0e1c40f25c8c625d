/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GFC (SIGCOMM'22), both of its forms, at both ends of a link.
 *
 * Buffer-based: the receiver's ingress queue picks a stage k from its
 * thresholds B_1..B_m and sends it when it changes; the sender's egress
 * runs at rate >> k. Time-based: the receiver advertises a CBFC credit
 * limit (FCCL) every period; the sender's rate is set from the credit
 * left when the limit arrives and held until the next one. The receiving
 * ends' decisions are fc_decide()'s (buffer.h).
 */
#ifndef RXECC_PORT_GFC_H
#define RXECC_PORT_GFC_H

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
	 * credit from the slower period, and that wait was no stall.
	 */
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
	 * stage 0).
	 */
	tau_sample(st, stamp, now);
	if (st->stats.paused)
		pause_end(st, now);
	return true;
}

#endif /* RXECC_PORT_GFC_H */
