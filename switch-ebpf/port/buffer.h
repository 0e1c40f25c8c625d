/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared buffer of a switch: a packet that entered the switch at port
 * I is charged to I from enqueue to dequeue, in the maps all ports share.
 * Each change of I's bytes may send its link peer a flow-control frame
 * (fc_decide(): PFC's XOFF and XON, GFC's stage or credit limit); a full
 * buffer drops (lossy switches only: lossless ones pause first).
 */
#ifndef RXECC_PORT_BUFFER_H
#define RXECC_PORT_BUFFER_H

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

/* Takes `len` from a counter that never goes below zero: a release of
 * bytes that were never charged here (an account recreated under traffic)
 * is counted, not wrapped into a huge backlog that would pause for good.
 */
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
	 * credit limit ends a pause at a GFC receiver; time 0 resumes any).
	 */
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
		 * left of B_m, in blocks, modulo 2^16 (GFC §5.3).
		 */
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
	 * per port, which made port_dequeue most of every port's load time.
	 */
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
#endif /* RXECC_PORT_BUFFER_H */
