// SPDX-License-Identifier: GPL-2.0
/*
 * mark: a TC egress program that writes ECN marks on RoCEv2 packets.
 *
 * It runs before the port's qdisc, so it sees the queue each packet joins.
 * The mode is the port's `mark_mode` (port.h), changed at run time:
 *   MARK_CE: every ECN-capable packet leaves CE (0b11), a test fixture;
 *   MARK_UE: every ECN-capable packet that is not CE leaves UE (0b10);
 *   MARK_RED: RED on the port's queue, for DCQCN: with q the queue in bytes,
 *     p = 0 below Kmin, Pmax (q - Kmin) / (Kmax - Kmin) up to Kmax, 1 at
 *     or above Kmax;
 *   MARK_TCD: TCD's ternary marks for ACC (tcd_mark() below).
 * The queue, the pause state and the thresholds come from the ports' maps,
 * which the loader shares with this program, at the port's id (port_id,
 * set before load); without a port (a fixture on a plain device) the
 * marker has maps of its own, uses slot 0, and only CE/UE make sense.
 * Only IPv4/UDP to port 4791 is touched. The IP TOS byte lies outside the
 * RoCE ICRC, so marking keeps the ICRC valid; the IP checksum is fixed up.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "port.h"

#define ROCE_V2_PORT	4791
#define ECN_MASK	0x3
#define ECN_NOT_ECT	0x0
#define ECN_UE		0x2
#define ECN_CE		0x3
#define NSEC_PER_SEC	1000000000ULL
/* Ethernet, IPv4 without options, UDP. */
#define HDRS_LEN	(sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct udphdr))

/* The port this marker marks for (its slot in port_state and port_cfg). */
const volatile __u32 port_id = 0;

/* Packets seen and marked; index 0 seen, 1 marked. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} mark_stats SEC(".maps");

/* RED's decision for a packet joining the port's queue; counts it. */
static __always_inline int red_mark(struct port_state *st, const struct rxecc_port_params *cfg)
{
	__u32 r = bpf_get_prandom_u32() % 1000;
	__u64 q, kmin, kmax, p;
	int mark;

	kmin = cfg->kmin_bytes;
	kmax = cfg->kmax_bytes;
	bpf_spin_lock(&st->lock);
	q = st->stats.qlen_bytes;
	if (q >= kmax) {
		mark = 1;
		st->stats.red_above++;
		st->stats.red_above_marked++;
	} else if (q < kmin) {
		mark = 0;
		st->stats.red_below++;
	} else {
		p = (__u64)cfg->pmax_permille * (q - kmin) / (kmax - kmin);
		mark = r < p;
		st->stats.red_between++;
		st->stats.red_between_marked += mark;
	}
	bpf_spin_unlock(&st->lock);
	return mark;
}

/*
 * TCD's state of the port for a packet joining its queue (docs/switch.md):
 *   non-congested (no mark): the queue is at or below the threshold;
 *   undetermined (UE): above it, but the port is paused, or was within
 *     max(T_on), or the queue has not grown by more than the threshold
 *     since the last resume (it is draining, or jittering around, the
 *     backlog a pause left): PFC may be what built it;
 *   congestion (CE): above it, ON for longer than max(T_on), and grown by
 *     more than the threshold since the resume - a queue that builds while
 *     the port is free to send.
 * The resume backlog is forgotten once the queue falls to the threshold,
 * so a port that was never paused is judged by the threshold alone.
 * Packets that reached the switch faster than their link could carry them
 * (`compressed`: an upstream port's catch-up burst after a late timer,
 * port/queue.h's arrival()) are queue the emulation built, not congestion:
 * their bytes are kept as `excess`, drained at this port's rate. Nor is
 * the queue this port's own late dequeues left (`lag_bytes`, port.h: an
 * ideal link would have sent it). TCD judges the queue less both. Counts
 * the decision.
 */
static __always_inline __u8 tcd_mark(struct port_state *st, const struct rxecc_port_params *cfg,
				     bool compressed, __u32 len)
{
	__u64 now = bpf_ktime_get_ns(), q, excess, elapsed, drained;
	__u8 want;

	bpf_spin_lock(&st->lock);
	q = st->stats.qlen_bytes;
	/* At most 1 s of draining (bytes_in_ns()). */
	elapsed = ns_since(now, st->stats.excess_ns);
	if (elapsed > NSEC_PER_SEC)
		elapsed = NSEC_PER_SEC;
	drained = bytes_in_ns(elapsed, cfg->rate_bps);
	excess = st->stats.excess_bytes > drained ? st->stats.excess_bytes - drained : 0;
	if (compressed) {
		excess += len;
		st->stats.tcd_compressed++;
	}
	st->stats.excess_bytes = excess;
	st->stats.excess_ns = now;
	excess += st->stats.lag_bytes;
	q = q > excess ? q - excess : 0;
	if (q <= cfg->tcd_thresh_bytes) {
		want = ECN_NOT_ECT;
		st->stats.tcd_none++;
		st->stats.resume_qlen_bytes = 0;
	} else if (st->stats.paused ||
		   ns_since(now, st->stats.last_resume_ns) < cfg->tcd_max_ton_ns ||
		   q - st->stats.resume_qlen_bytes <= cfg->tcd_thresh_bytes ||
		   q < st->stats.resume_qlen_bytes) {
		want = ECN_UE;
		st->stats.tcd_ue++;
	} else {
		want = ECN_CE;
		st->stats.tcd_ce++;
	}
	bpf_spin_unlock(&st->lock);
	return want;
}

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&mark_stats, &idx);

	if (v)
		*v += 1;
}

SEC("tc")
int mark_egress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	struct port_state *st;
	struct rxecc_port_params cfg;
	__u32 id = port_id;
	__u8 ecn, want;
	__u16 old, new;

	/* A NIC's driver may leave only the Ethernet header in the linear area
	 * (virtio-net does for a frame over 128 bytes, so on a testbed of
	 * several guests every RoCE packet from another guest): pull in the
	 * headers read below. A frame shorter than them is not RoCE.
	 */
	if (data + HDRS_LEN > data_end) {
		if (bpf_skb_pull_data(skb, HDRS_LEN))
			return TC_ACT_OK;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		eth = data;
	}
	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		return TC_ACT_OK;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(ROCE_V2_PORT))
		return TC_ACT_OK;

	count(0);
	ecn = ip->tos & ECN_MASK;
	if (ecn == ECN_NOT_ECT)
		return TC_ACT_OK;
	st = bpf_map_lookup_elem(&port_state, &id);
	if (!st || !port_cfg_get(id, &cfg))
		return TC_ACT_OK;
	switch (cfg.mark_mode) {
	case MARK_CE:
		want = ECN_CE;
		break;
	case MARK_UE:
		want = ECN_UE;
		break;
	case MARK_RED:
		want = red_mark(st, &cfg) ? ECN_CE : ECN_NOT_ECT;
		break;
	case MARK_TCD:
		want = tcd_mark(st, &cfg, skb->mark & RXECC_MARK_COMPRESSED, skb->len);
		break;
	default:
		want = ECN_NOT_ECT;
	}
	/* Never unmark, and UE never overwrites CE from an earlier hop. */
	if (want == ECN_NOT_ECT || ecn == ECN_CE)
		return TC_ACT_OK;
	if (ecn == want)
		return TC_ACT_OK;

	/* TOS shares the header's first 16-bit word with version and IHL. */
	old = *(__u16 *)ip;
	ip->tos = (ip->tos & ~ECN_MASK) | want;
	new = *(__u16 *)ip;
	bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old, new, 2);
	count(1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
