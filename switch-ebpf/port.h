/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State one emulated switch port shares between its programs: the qdisc
 * (port.bpf.c) counts the queue, the TC egress marker (mark.bpf.c) reads it
 * to mark. rxecc pins both maps under /sys/fs/bpf/rxecc/<dev>/. Include it
 * after <bpf/bpf_helpers.h>.
 */
#ifndef RXECC_PORT_H
#define RXECC_PORT_H

/* Counters, changed only under `lock`: snapshots read with BPF_F_LOCK. */
struct rxecc_port_stats {
	__u64 enq_pkts, enq_bytes;
	__u64 deq_pkts, deq_bytes;
	__u64 drops;
	__u64 qlen_pkts, qlen_bytes;	/* exact: enqueued minus dequeued */
	__u64 max_qlen_bytes;
	/* RED marking: ECN-capable packets that arrived with the queue at or
	 * above Kmax, below Kmin, in between; and how many got CE (none below). */
	__u64 red_above, red_above_marked;
	__u64 red_below;
	__u64 red_between, red_between_marked;
};

struct port_state {
	struct bpf_spin_lock lock;
	struct rxecc_port_stats stats;
};

/* Marking configuration, rewritten by rxecc at run time. */
struct port_cfg {
	__u64 kmin_bytes;
	__u64 kmax_bytes;
	__u32 pmax_permille;	/* marking probability at Kmax, 1/1000 */
	__u32 pad;
};

/* The port's maps: each program object declares them; rxecc pins the
 * qdisc's and hands the same ones to the marker. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct port_state);
} port_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct port_cfg);
} port_cfg SEC(".maps");

#endif /* RXECC_PORT_H */
