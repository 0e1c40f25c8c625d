// SPDX-License-Identifier: GPL-2.0
/*
 * mark: a TC egress program that writes ECN marks on RoCEv2 packets.
 *
 * It runs before the port's qdisc, so it sees the queue each packet joins.
 * Modes, set at load time:
 *   MARK_CE: every ECN-capable packet leaves CE (0b11), a test fixture;
 *   MARK_UE: every ECN-capable packet that is not CE leaves UE (0b10);
 *   MARK_RED: RED on the port's queue, for DCQCN: with q the queue in bytes,
 *     p = 0 below Kmin, Pmax (q - Kmin) / (Kmax - Kmin) up to Kmax, 1 at
 *     or above Kmax. The queue and the thresholds come from the port's maps
 *     (port.h), which the loader shares with this program.
 * Only IPv4/UDP to port 4791 is touched. The IP TOS byte lies outside the
 * RoCE ICRC, so marking keeps the ICRC valid; the IP checksum is fixed up.
 */
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

enum mark_mode {
	MARK_OFF = 0,
	MARK_CE = 1,
	MARK_UE = 2,
	MARK_RED = 3,
};

/* Set by the loader before the program is loaded. */
const volatile __u32 mark_mode = MARK_OFF;

/* Packets seen and marked; index 0 seen, 1 marked. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} mark_stats SEC(".maps");


/* RED's decision for a packet joining a queue of `q` bytes; counts it. */
static __always_inline int red_mark(void)
{
	__u32 zero = 0, r = bpf_get_prandom_u32() % 1000;
	struct port_state *st = bpf_map_lookup_elem(&port_state, &zero);
	struct port_cfg *cfg = bpf_map_lookup_elem(&port_cfg, &zero);
	__u64 q, kmin, kmax, p;
	int mark;

	if (!st || !cfg)
		return 0;
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
	__u8 ecn, want;
	__u16 old, new;

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
	if (mark_mode == MARK_RED) {
		if (!red_mark())
			return TC_ACT_OK;
		want = ECN_CE;
	} else if (mark_mode == MARK_CE)
		want = ECN_CE;
	else if (mark_mode == MARK_UE && ecn != ECN_CE)
		want = ECN_UE;
	else
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
