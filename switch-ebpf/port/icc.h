/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ICC's switch: the egress sampled at dequeues (queue growth, utilisation)
 * and the distinct flows per period, fed back on the ACKs in one INT slot.
 */
#ifndef RXECC_PORT_ICC_H
#define RXECC_PORT_ICC_H

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
	/* After 10 s without a dequeue the port starts afresh, so that the
	 * products below fit in 64 bits up to 400 Gb/s.
	 */
	if (d->smp_ns && dt && dt < 10 * NSEC_PER_SEC) {
		d->qrate1 = d->qrate2;
		if (qlen_bytes >= d->smp_qlen) {
			grow = (qlen_bytes - d->smp_qlen) * NSEC_PER_SEC / dt;
			d->qrate2 = (__s64)grow;
		} else {
			grow = (d->smp_qlen - qlen_bytes) * NSEC_PER_SEC / dt;
			d->qrate2 = -(__s64)grow;
		}
		/* Bits the link could have sent in dt, and those it did: in kb/s
		 * and us, as rate_bps * dt overflows from 1.8 Gb/s at 10 s.
		 */
		cap = (cfg->rate_bps / 1000 ?: 1) * dt / (NSEC_PER_SEC / 1000) ?: 1;
		d->lu_permille = (deq_bytes - d->smp_bytes) * 8 * 1000 / cap;
	}
	d->smp_ns = now;
	d->smp_qlen = qlen_bytes;
	d->smp_bytes = deq_bytes;
}

/* A flow, as ICC counts them on a port: an ACK's destination (the sender's
 * address and QP).
 */
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
		stat_inc(st, &st->stats.int_overflow);
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
		stat_inc(st, &st->stats.int_quiet);
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
	stat_inc(st, &st->stats.int_stamped);
}
#endif /* RXECC_PORT_ICC_H */
