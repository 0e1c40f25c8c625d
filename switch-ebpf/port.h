/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State the programs of the emulated switch ports share: the qdisc and the
 * TC ingress program (port.bpf.c, one instance for every port) and the TC
 * egress marker (mark.bpf.c), which reads the queue and the pause state to
 * mark. A port's state is the slot of its port id (rxecc assigns it, and
 * makes it the major number of the port's qdisc handle) in maps of
 * RXECC_MAX_PORTS entries. rxecc pins the maps under /sys/fs/bpf/rxecc/.
 * Include it after <bpf/bpf_helpers.h>.
 */
#ifndef RXECC_PORT_H
#define RXECC_PORT_H

/* Counters, changed only under `lock`: snapshots read with BPF_F_LOCK. */
struct rxecc_port_stats {
	__u64 enq_pkts, enq_bytes;
	__u64 deq_pkts, deq_bytes;
	__u64 drops;			/* egress limit or shared buffer full */
	__u64 qlen_pkts, qlen_bytes;	/* exact: enqueued minus dequeued */
	__u64 max_qlen_bytes;
	/* RED marking: ECN-capable packets that arrived with the queue at or
	 * above Kmax, below Kmin, in between; and how many got CE (none below).
	 */
	__u64 red_above, red_above_marked;
	__u64 red_below;
	__u64 red_between, red_between_marked;
	/* TCD marking: ECN-capable packets this port marked CE, marked UE,
	 * and left alone.
	 */
	__u64 tcd_ce, tcd_ue, tcd_none;
	/* PFC received: this port's egress obeys its link peer. */
	__u64 pfc_rx_xoff, pfc_rx_xon;	/* frames with a pause time, with 0 */
	__u64 pause_expired;		/* pauses that ran out of quanta */
	__u64 paused_ns;		/* total, over finished pauses */
	__u64 paused;			/* 1 while paused */
	__u64 pause_start_ns, pause_until_ns;
	__u64 last_resume_ns;		/* end of the last OFF period (TCD) */
	__u64 resume_qlen_bytes;	/* queue then; 0 once it has drained (TCD) */
	/* Feedback latency: XOFF crossing at the peer to pause applied here. */
	__u64 tau_n, tau_sum_ns, tau_max_ns;
	/* Stamps ahead of this port's clock: the peer is another machine (a
	 * guest of testbed/vms.sh) whose clock runs ahead. With the sum of
	 * how far, the raw mean over all samples is known, and a known
	 * offset between the clocks gives tau.
	 */
	__u64 tau_early_n, tau_early_sum_ns;
	/* PFC frames carry the stamp their sender took when it decided them,
	 * increasing per sender; a frame that overtook a newer one on its way
	 * is stale and ignored (an XOFF arriving after its XON).
	 */
	__u64 pfc_last_stamp, pfc_rx_stale;
	__u64 ctl_pkts;			/* control frames sent out of this port */
	/* Emulation stalls: dequeues that ran more than stall_ns after the
	 * link was free, with packets waiting (late timers under TCG).
	 */
	__u64 stalls, stall_ns;
	/* Arrivals from the link peer (this port's TC ingress): when the last
	 * one would have finished arriving over a real link of this port's
	 * rate, and the packets that came more than stall_ns / 2 ahead of
	 * that (a late upstream timer's catch-up burst, which no real link
	 * can deliver).
	 */
	__u64 arrival_vt_ns, compressed_pkts;
	/* Egress (the marker): compressed arrivals seen, and their bytes not
	 * yet drained at the port's rate, as of excess_ns (TCD).
	 */
	__u64 tcd_compressed, excess_bytes, excess_ns;
	/* MAC control frames (EtherType 0x8808) from the link peer are always
	 * consumed, as 802.1Q requires: those that are not a well-formed PFC
	 * frame (length, destination, opcode, reserved class bits), and
	 * well-formed ones for classes this port does not carry.
	 */
	__u64 pfc_rx_bad, pfc_rx_other;
	/* INT (this port's TC ingress, stamping for its link peer's egress):
	 * records written into HPCC shims, hops that found a full shim, and
	 * flagged packets left alone (no shim of ours, or a UDP checksum
	 * that a rewrite would break).
	 */
	__u64 int_stamped, int_overflow, int_bad;
	/* ICC: ACKs this port's ingress left without feedback (its queue
	 * draining at low utilisation, and feedback given within icc_period).
	 */
	__u64 int_quiet;
	/* PFC events the shared ring buffer had no room for (pfc.txt). */
	__u64 events_lost;
	/* GFC received (port_params.fc_mode FC_GFC_BUFFER): this port's
	 * egress runs at rate >> gfc_stage. Frames obeyed, the highest stage
	 * seen, and the time spent below the full rate (finished intervals;
	 * the current one began at gfc_since_ns).
	 */
	__u64 gfc_stage, gfc_rx, gfc_max_stage;
	__u64 gfc_limited_ns, gfc_since_ns;
	/* Time-based GFC (FC_GFC_TIME): the peer's last credit limit (FCCL,
	 * 64-byte blocks, modulo 2^16) and whether one came yet; dequeues
	 * that found no credit left, and packets sent below the full rate
	 * because the credit was under gfc_span_bytes when it came.
	 */
	__u64 gfc_fccl, gfc_fccl_valid, gfc_credit_waits, gfc_credit_slowed;
	/* Time-based GFC: the rate the last credit limit set on its arrival,
	 * held until the next one (GFC §5.2, Fig. 8).
	 */
	__u64 gfc_rate_bps;
	/* Link time lost to late dequeues (late watchdogs under TCG): time a
	 * packet was waiting and free to go that the pacer did not catch up
	 * on (beyond burst_ns, or given up at a stall). The link's rate over
	 * a run is its configured rate less this share.
	 */
	__u64 late_ns;
	/* The end of the last pause, or of a slower GFC stage: time before it
	 * was not the link's to lose (late_ns). A stall also ends the
	 * pacer's credit (last_resume_ns), and that credit counts as lost.
	 */
	__u64 pace_floor_ns;
	/* How far the queue is behind an ideal link of this rate: the bytes
	 * the link would have sent in the time late_ns counts, kept while
	 * the queue holds that many (an ideal queue empties that much
	 * sooner). TCD judges the queue less this.
	 */
	__u64 lag_bytes;
	/* The invariant a real link keeps: over any window longer than one
	 * packet it sends no more than its rate. Releases that put more than
	 * one (the largest) packet ahead of an ideal link of the configured
	 * rate fed with the same releases (pacing credit spent in a burst),
	 * and the most time beyond that one packet by which one did.
	 */
	__u64 rate_viol, rate_viol_max_ns;
	/* Fault injection (port/inject.h) at this port's ingress: packets
	 * dropped, ECN-marked (CE or UE) and with the ICRC corrupted by a
	 * rule. An injected drop is never counted in `drops`.
	 */
	__u64 inj_drops, inj_marks, inj_corrupts;
	/* ... duplicated, and sent on to their egress port delayed or
	 * reordered; and, at this port's egress, the packets it held so.
	 */
	__u64 inj_dups, inj_delays, inj_reorders, held_pkts;
	/* The priority class (ack_prio): packets and bytes sent out of it. */
	__u64 prio_pkts, prio_bytes;
};

/*
 * PFC frames received, for `rxecc run`'s pfc.txt (the HPCC simulator logs
 * each frame on the device that receives it), from one ring buffer that
 * every port shares (/sys/fs/bpf/rxecc/events).
 */
enum rxecc_event_kind {
	RXECC_EV_PAUSE = 1,	/* a PFC frame with a pause time */
	RXECC_EV_RESUME = 2,	/* a PFC frame with 0 (XON) */
};

struct rxecc_event {
	__u64 t_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 port_id;		/* the receiving port's id (rxecc assigns) */
	__u16 kind;		/* enum rxecc_event_kind */
	__u16 quanta;
};

/* qlen.txt's histogram: time the egress queue spent at each length, ns,
 * in 1000-byte bins (the simulator's KB); the last bin takes the rest.
 */
#define RXECC_QLEN_BINS		2048

/* The last intervals a queue-length histogram was given (a ring): each
 * began at start_ns and ended where the next one began (the newest: at
 * since_ns), at queue length bin. A reader that took its snapshot after
 * the time it reads for takes these back out.
 */
#define RXECC_QLEN_LOG		256

struct rxecc_qlen_interval {
	__u64 start_ns;
	__u32 bin;
	__u32 pad;
};

/* One value with its own lock, so that rxecc reads the bins, the length
 * and the time of its last change as one snapshot (BPF_F_LOCK): the time
 * since `since_ns` is owed to the bin of `qlen_bytes`. The length is kept
 * here, from each change's delta in this lock's order: port_state's is
 * changed under another lock, and the two orders can differ.
 */
struct rxecc_qlen_hist {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 since_ns;
	__s64 qlen_bytes;	/* below 0 for an instant: a dequeue's delta
				 * can come before its packet's enqueue's
				 */
	__u64 logged;		/* intervals given, the last RXECC_QLEN_LOG in log */
	struct rxecc_qlen_interval log[RXECC_QLEN_LOG];
	__u64 ns[RXECC_QLEN_BINS];
};

/*
 * skb->mark on a switch's ports: the switch owns the upper 16 bits and
 * leaves the lower 16 to other users of the mark (firewall marks, policy
 * routing). Every port's TC ingress clears the switch's bits on arrival,
 * so none outlives one switch, even across a link between two switches
 * in the same namespace, and a foreign value there is never read as the
 * switch's; it then sets what the packet's egress needs:
 *   bit 30      a compressed arrival (above), for the egress marker;
 *   bits 28-29  a fault injection request to the egress qdisc
 *               (port/inject.h), with bits 24-26 the index of the rule
 *               that asked and bits 16-23 the ingress port's id, whose
 *               rule the egress reads for the request's parameters.
 */
#define RXECC_MARK_MASK		0xffff0000U
#define RXECC_MARK_COMPRESSED	0x40000000U

struct port_state {
	struct bpf_spin_lock lock;
	struct rxecc_port_stats stats;
};

enum mark_mode {
	MARK_OFF = 0,
	MARK_CE = 1,	/* test fixture: every ECN-capable packet CE */
	MARK_UE = 2,	/* test fixture: every one not CE gets UE */
	MARK_RED = 3,	/* RED on the queue (DCQCN) */
	MARK_TCD = 4,	/* TCD ternary marks (ACC) */
};

/* Port configuration, rewritten by rxecc at run time (no reload, nothing
 * lost). rxecc writes it whole under `lock` (BPF_F_LOCK), and programs copy
 * it under the same lock (port_cfg_get()), so no packet sees half of an
 * update, e.g. a new Kmin with the old Kmax.
 */
struct rxecc_port_params {
	__u64 kmin_bytes;		/* RED */
	__u64 kmax_bytes;
	__u32 pmax_permille;		/* marking probability at Kmax, 1/1000 */
	__u32 mark_mode;		/* enum mark_mode, for the marker */
	__u64 tcd_thresh_bytes;		/* TCD: queue above this is not "non-congested" */
	__u64 tcd_max_ton_ns;		/* TCD: max(T_on) */
	__u64 rate_bps;			/* link rate */
	__u64 delay_ns;			/* propagation delay added at egress */
	__u32 pfc_class;		/* the one priority class RoCE uses */
	__u32 limit_pkts;		/* egress queue limit: drops above */
	__u64 stall_ns;			/* lateness counted as a stall; 0: 2 ms */
	__u32 port_id;			/* index into int_deq; 0: none */
	__u32 int_mode;			/* enum int_mode, at this port's ingress */
	__u32 int_from;			/* port_id of the port stamped for */
	__u32 icc_lu_permille;		/* ICC: utilisation that counts as busy */
	__u64 icc_sample_ns;		/* ICC: queue-growth samples this far apart */
	__u64 icc_period_ns;		/* ICC: feedback at least this often */
	__u32 fc_mode;			/* enum fc_mode: how this port's egress
					 * reads its link peer's frames
					 */
	__u32 ifindex;			/* the port's device (in its namespace) */
	/* Time-based GFC: B_m - B_0 of the peer's ingress (the linear map's
	 * span) and its advertisement period (wait this long for credit).
	 */
	__u64 gfc_span_bytes, gfc_period_ns;
	/* Pacing credit kept: 0, one packet at the link's rate (a late
	 * watchdog costs nothing and the invariant above holds); more for a
	 * clock whose timers fire milliseconds late (testbed/guest.sh's host
	 * clock), which then bursts.
	 */
	__u64 burst_ns;
	/* Fault-injection rules in force at this port's ingress (its slot
	 * of `inject`); 0 skips injection altogether.
	 */
	__u32 inject_rules;
	/* ACKs, NAKs and CNPs in a strict-priority class ahead of data
	 * (port/prio.h); 0: one FIFO for all.
	 */
	__u32 ack_prio;
};

/*
 * Link-level flow control (docs/switch.md). Both ends of a link use the
 * same mode: the downstream ingress port decides the frames (ingress_cfg),
 * the upstream egress port obeys them (rxecc_port_params). PFC pauses;
 * buffer-based GFC sends its stage k in the PFC frame's time field (0:
 * full rate) and the upstream port sends at rate >> k.
 */
enum fc_mode {
	FC_NONE = 0,
	FC_PFC = 1,
	FC_GFC_BUFFER = 2,
	FC_GFC_TIME = 3,
};

/* Time-based GFC counts buffer in blocks of this many bytes, as
 * InfiniBand's credit-based flow control does.
 */
#define RXECC_GFC_BLOCK		64

/* GFC stages go at most this deep: C >> 24 is 3 b/s at 50 Mb/s. */
#define RXECC_GFC_MAX_STAGES	24

/* Values equal the shim kinds each mode writes. */
enum int_mode {
	INT_OFF = 0,
	INT_HPCC = 1,	/* a record per hop on data packets, for the link peer */
	INT_FNCC = 2,	/* a record per hop on ACKs, for this port's egress */
	INT_ICC = 3,	/* one feedback record on ACKs, for this port's egress */
};

/*
 * The INT shim (docs/wire-format.md; rdma_rxe's rxe_cc_hooks.h defines the
 * same): between the UDP header and the BTH of a RoCEv2 packet whose IP
 * TOS has RXE_INT_TOS set. All fields big endian.
 */
#define RXE_INT_TOS		0x04
#define RXE_INT_MAGIC		0xc5
#define RXE_INT_VERSION		2
#define RXE_INT_KIND_HPCC	1
#define RXE_INT_KIND_FNCC	2
#define RXE_INT_KIND_ICC	3
#define RXE_INT_F_ECHO		0x01
#define RXE_INT_MAX_HOPS	5

struct rxe_int_hop {
	__be32 rate_mbps;
	__be32 ts_ns;
	__be32 tx_bytes;
	__be32 qlen;
};

/* ICC's record: the state of the congested port, in the first slot. */
struct rxe_int_icc {
	__be32 rate_mbps;
	__be32 qlen;
	__be32 qlen_rate;	/* signed: queue growth, bytes per ms */
	__be16 lu_permille;	/* link utilisation */
	__be16 flows;		/* flows seen on the port */
};

struct rxe_int_shim {
	__u8 magic, version, kind, flags;
	__u8 nhops, max_hops, overflow, rsvd;
	__be16 n_flows;		/* FNCC: the receiver's active flows (N) */
	__be16 rsvd2;
};

/*
 * A port's egress as of its last dequeue, for the link peer's ingress to
 * stamp into INT records: the packet it sees is the one dequeued then,
 * since a veth delivers at once (docs/switch.md).
 */
struct int_deq {
	struct bpf_spin_lock lock;
	__u64 deq_ns;			/* when the last packet left */
	__u64 deq_bytes;		/* bytes sent, that packet included */
	__u64 qlen_bytes;		/* queue after it left */
	__u64 rate_bps;			/* the link rate */
	/* ICC, kept at dequeue: the queue and bytes sent at the last sample,
	 * the growth rates over the two latest sample intervals (bytes/s,
	 * older and newer) and the utilisation over the latest, in 1/1000.
	 */
	__u64 smp_ns, smp_qlen, smp_bytes;
	__s64 qrate1, qrate2;
	__u64 lu_permille;
	/* ICC, kept at ingress: the last feedback, and the flows whose ACKs
	 * crossed in this flow window and the last (distinct QPs).
	 */
	__u64 fb_ns;
	__u64 flow_epoch, flow_epoch_ns, flows_cur, flows_prev;
};

/*
 * Fault injection at a port's ingress (port/inject.h): each rule selects
 * RoCEv2 packets by their BTH (destination QP, PSN range, opcode) and acts
 * on some of the ones it selects: every n-th, the matches named in
 * nth_mask (bit i: the (i+1)-th, up to 64), with a probability from a
 * seeded generator, or all (each of those left 0). rxecc writes the rules
 * whole under `lock`; counters are kept in place.
 */
#define RXECC_INJECT_RULES	8
#define RXECC_INJECT_ANY	0xffffffffU

enum rxecc_inject_action {
	INJ_DROP = 1,		/* the packet is consumed */
	INJ_CE = 2,		/* ECN CE (0b11), if ECN-capable */
	INJ_UE = 3,		/* TCD's UE (0b10), if ECN-capable and not CE */
	INJ_ICRC = 4,		/* the ICRC's last byte inverted */
	INJ_DUP = 5,		/* a copy follows it, past the rules */
	INJ_DELAY = 6,		/* joins its egress queue delay_us later */
	INJ_REORDER = 7,	/* joins it behind the next `gap` packets there,
				 * delay_us later at most
				 */
};

/* Fault injection's request in skb->mark (the layout is above port_state). */
#define RXECC_MARK_TAG		0x30000000U
#define RXECC_MARK_DELAY	0x10000000U	/* held delay_us */
#define RXECC_MARK_REORDER	0x20000000U	/* held behind `gap` packets */
#define RXECC_MARK_DUP		0x30000000U	/* a copy: no rule applies */
#define RXECC_MARK_RULE_SHIFT	24
#define RXECC_MARK_RULE		0x07000000U
#define RXECC_MARK_PORT_SHIFT	16
#define RXECC_MARK_PORT		0x00ff0000U
/* The longest hold a rule may ask (rxecc checks): */
#define RXECC_DELAY_US_MAX	0xffffffU
#define RXECC_REORDER_US_MAX	0xfffffU
#define RXECC_REORDER_GAP_MAX	15

struct rxecc_inject_rule {
	__u32 action;		/* enum rxecc_inject_action; 0: unused */
	__u32 qpn;		/* destination QP, or RXECC_INJECT_ANY */
	__u32 psn_lo, psn_hi;	/* inclusive */
	__u32 opcode;		/* BTH opcode, or RXECC_INJECT_ANY */
	__u32 every;		/* act on every n-th match; 0: each */
	__u64 nth_mask;		/* act on these matches only; 0: each */
	__u64 prob;		/* act with probability prob / 2^32; 0: always */
	__u64 rng;		/* xorshift64 state, seeded by rxecc (not 0) */
	__u64 matched, applied;	/* packets selected, and acted on */
	__u32 delay_us;		/* INJ_DELAY's delay, INJ_REORDER's longest */
	__u32 gap;		/* INJ_REORDER: packets to let by */
};

struct rxecc_inject {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct rxecc_inject_rule rule[RXECC_INJECT_RULES];
};

struct port_cfg {
	struct bpf_spin_lock lock;
	struct rxecc_port_params p;
};

/*
 * Shared-buffer accounting of a switch, per ingress port (keyed by
 * ifindex; all switch ports live in the guest's root namespace). A packet
 * that entered the switch at port I and waits in any egress queue holds
 * buffer charged to I, from enqueue to dequeue.
 */
struct ingress_cfg {
	__u32 switch_id;		/* index into switch_buf */
	__u32 fc_mode;			/* enum fc_mode: frames this port sends */
	__u64 xoff_bytes, xon_bytes;
	__u64 buffer_bytes;		/* the switch's shared buffer; 0: unlimited */
	__u32 pfc_class;
	__u32 pause_quanta;		/* pause time sent with XOFF */
	__u64 refresh_ns;		/* re-send XOFF this often while it holds */
	/* Buffer-based GFC: B_1, B_m and the number of stages N. */
	__u64 gfc_b1_bytes, gfc_bm_bytes;
	__u32 gfc_stages;
	__u32 pad;
	/* Time-based GFC: advertise FCCL this often (B_m is gfc_bm_bytes). */
	__u64 gfc_period_ns;
};

struct ingress_acct {
	struct bpf_spin_lock lock;
	__u64 bytes, max_bytes, pkts;
	__u64 xoff_active;		/* the peer is paused by us */
	__u64 last_xoff_ns;		/* when XOFF was last sent */
	__u64 pfc_tx_xoff, pfc_tx_xon, pfc_tx_refresh;
	__u64 pfc_tx_failed;		/* frames the kfunc could not send */
	__u64 last_stamp;		/* of the last frame decided (port_ingress) */
	__u64 underflows;		/* releases of more than was charged */
	/* GFC: the stage last sent, frames sent, the highest stage sent. */
	__u64 gfc_stage, gfc_tx, gfc_max_stage;
	/* Time-based GFC: bytes ever received here (ABR) and the last
	 * advertisement.
	 */
	__u64 abr_bytes, last_adv_ns;
};

struct switch_buf {
	struct bpf_spin_lock lock;
	__u64 used_bytes, max_used_bytes;
	__u64 drops;			/* arrivals refused: buffer full */
	__u64 underflows;		/* releases of more than was charged */
};

#define RXECC_MAX_SWITCHES	16
#define RXECC_MAX_PORTS		256
/*
 * The most packets each of a port's lists holds, so that its reset frees
 * them all: the data queue's limit (rxecc refuses a larger one; the qdisc
 * clamps), the held list's and the ACK class's (the same limit), the
 * control list's and the wire's. PFC frames leave ahead of everything, so
 * more than a few waiting means the device is not sending; the newest
 * pause is the one in force anyway. The wire holds a link's
 * bandwidth-delay product: a packet waits in the queue while it is full
 * (65,536 packets of 64 B are 1 s at 34 Mb/s, or 10 ms at 3.4 Gb/s).
 */
#define RXECC_LIMIT_PKTS_MAX	65536
#define RXECC_CTL_MAX_PKTS	64
#define RXECC_WIRE_MAX_PKTS	RXECC_LIMIT_PKTS_MAX
#define RXECC_SWITCH_PORTS	32

/*
 * The ingress ports of each switch (ifindexes, written by rxecc), so that
 * a paused egress queue can refresh every XOFF of its switch on time: a
 * real switch re-sends XOFF while an ingress counter stays above XON,
 * whether or not anything arrives (which is what lets a deadlock hold).
 */
struct switch_ports {
	__u32 n;
	__u32 pad;
	__u64 refresh_ns;		/* the shortest refresh of its ports */
	__u32 iif[RXECC_SWITCH_PORTS];
};

/* Each port's counters and configuration, by port id: each program object
 * declares them; rxecc pins port.bpf.c's and hands the same ones to the
 * markers. A marker on a plain device (a fixture) has its own, and uses
 * slot 0.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_state);
} port_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXECC_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_cfg);
} port_cfg SEC(".maps");

/* Time from t to now, 0 if t is later. A program reads now before it takes
 * a lock, and another CPU may store a later time under that lock first:
 * a plain now - t would then wrap to centuries.
 */
static __always_inline __u64 ns_since(__u64 now, __u64 t)
{
	return now > t ? now - t : 0;
}

/* The bytes a link of rate_bps carries in ns nanoseconds, ns at most 1 s
 * (callers cap it), for any rate: ns * rate_bps / 8e9 taken apart so that
 * no product exceeds 1e9 * 1e9 (a plain ns * (rate_bps / 8) overflows
 * above 147 Gb/s at 1 s).
 */
static __always_inline __u64 bytes_in_ns(__u64 ns, __u64 rate_bps)
{
	__u64 bps = rate_bps / 8;

	return bps / 1000000000ULL * ns + bps % 1000000000ULL * ns / 1000000000ULL;
}

/* skb->mark = v as one 32-bit store: knowing v's bits, clang would write
 * only the half of the word that changes, a narrow store the verifier
 * refuses on the context. The empty asm hides them (barrier_var()).
 */
static __always_inline void mark_set(struct __sk_buff *skb, __u32 v)
{
	asm volatile("" : "+r"(v));
	skb->mark = v;
}

/* Copies port `id`'s configuration as one consistent whole; false if
 * there is no such port.
 */
static __always_inline bool port_cfg_get(__u32 id, struct rxecc_port_params *out)
{
	struct port_cfg *cfg = bpf_map_lookup_elem(&port_cfg, &id);

	if (!cfg)
		return false;
	bpf_spin_lock(&cfg->lock);
	*out = cfg->p;
	bpf_spin_unlock(&cfg->lock);
	return true;
}

#endif /* RXECC_PORT_H */
