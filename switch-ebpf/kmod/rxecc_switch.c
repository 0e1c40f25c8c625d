// SPDX-License-Identifier: GPL-2.0
/*
 * rxecc_switch: two kfuncs for the emulated switch (switch-ebpf/).
 *
 * A BPF qdisc cannot transmit, yet PFC's XOFF is crossed at enqueue and its
 * XON at dequeue, both inside qdisc programs. rxecc_pfc_send() builds a real
 * 802.1Qbb frame there and hands it to a BH workqueue, which transmits it
 * out of the ingress port a moment later, outside the qdisc's locks. The
 * peer's TC ingress program consumes the frame; when it resumes the peer's
 * egress it calls rxecc_port_kick(), since a paused qdisc sleeps on its
 * watchdog and would otherwise notice the resume only when that fires.
 *
 * BPF programs that call these hold a reference on this module, so it
 * cannot go away under them.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>

#define PFC_OPCODE	0x0101
#define PFC_FRAME_LEN	60	/* minimum Ethernet frame, less the FCS */

static const u8 pfc_dest[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

/* Frames built in qdisc context, waiting for the worker to send them. */
static struct sk_buff_head pfc_pending;
static void pfc_send_work(struct work_struct *work);
static DECLARE_WORK(pfc_work, pfc_send_work);

static void pfc_send_work(struct work_struct *work)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&pfc_pending))) {
		struct net_device *dev = skb->dev;

		/* dev_queue_xmit consumes the skb; the hold taken in
		 * rxecc_pfc_send() keeps dev valid until then.
		 */
		dev_queue_xmit(skb);
		dev_put(dev);
	}
}

__bpf_kfunc_start_defs();

/**
 * rxecc_pfc_send - send an 802.1Qbb PFC frame out of a port
 * @sch: the calling qdisc; names the network namespace of @ifindex
 * @ifindex: the port to send from (the ingress port being paused/resumed)
 * @class_vec: class-enable vector (bit n: time field n is valid)
 * @quanta: pause time for the enabled classes, in 512-bit-time quanta;
 *	0 resumes them
 * @stamp_ns: written into the frame's pad (big endian, CLOCK_MONOTONIC ns),
 *	so the receiver can measure the feedback latency; real switches send
 *	zeros there
 *
 * Callable from any context: the frame is transmitted by a BH work item.
 * Return: 0, or -ENODEV / -ENOMEM, in which case nothing is sent.
 */
__bpf_kfunc int rxecc_pfc_send(struct Qdisc *sch, u32 ifindex, u32 class_vec,
			       u32 quanta, u64 stamp_ns)
{
	struct net_device *dev;
	struct sk_buff *skb;
	struct ethhdr *eth;
	__be16 *p;
	int i;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(dev_net(qdisc_dev(sch)), ifindex);
	if (dev)
		dev_hold(dev);
	rcu_read_unlock();
	if (!dev)
		return -ENODEV;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + PFC_FRAME_LEN, GFP_ATOMIC);
	if (!skb) {
		dev_put(dev);
		return -ENOMEM;
	}
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	eth = skb_put_zero(skb, PFC_FRAME_LEN);
	ether_addr_copy(eth->h_dest, pfc_dest);
	ether_addr_copy(eth->h_source, dev->dev_addr);
	eth->h_proto = htons(ETH_P_PAUSE);
	p = (__be16 *)(eth + 1);
	*p++ = htons(PFC_OPCODE);
	*p++ = htons(class_vec & 0xff);
	for (i = 0; i < 8; i++)
		*p++ = htons(class_vec & BIT(i) ? quanta & 0xffff : 0);
	put_unaligned_be64(stamp_ns, p);

	skb_reset_mac_header(skb);
	skb_reset_network_header(skb);
	skb->protocol = htons(ETH_P_PAUSE);
	skb->priority = TC_PRIO_CONTROL;
	skb->dev = dev;
	skb_queue_tail(&pfc_pending, skb);
	queue_work(system_bh_highpri_wq, &pfc_work);
	return 0;
}

/**
 * rxecc_port_kick - run the qdisc of the device a packet arrived on
 * @ctx: the TC program's packet
 *
 * For a TC ingress program that has just resumed its own port's egress.
 */
__bpf_kfunc void rxecc_port_kick(struct __sk_buff *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx;
	struct net_device *dev = skb->dev;
	struct netdev_queue *txq;
	struct Qdisc *q;

	if (!dev || !dev->num_tx_queues)
		return;
	txq = netdev_get_tx_queue(dev, 0);
	rcu_read_lock();
	q = rcu_dereference(txq->qdisc);
	/* noop and noqueue have nothing to run. */
	if (q && !(q->flags & TCQ_F_BUILTIN) && q->enqueue)
		netif_schedule_queue(txq);
	rcu_read_unlock();
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(rxecc_qdisc_kfunc_ids)
BTF_ID_FLAGS(func, rxecc_pfc_send)
BTF_KFUNCS_END(rxecc_qdisc_kfunc_ids)

static const struct btf_kfunc_id_set rxecc_qdisc_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &rxecc_qdisc_kfunc_ids,
};

BTF_KFUNCS_START(rxecc_tc_kfunc_ids)
BTF_ID_FLAGS(func, rxecc_port_kick)
BTF_KFUNCS_END(rxecc_tc_kfunc_ids)

static const struct btf_kfunc_id_set rxecc_tc_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &rxecc_tc_kfunc_ids,
};

static int __init rxecc_switch_init(void)
{
	int ret;

	skb_queue_head_init(&pfc_pending);
	ret = register_btf_kfunc_id_set(BPF_PROG_TYPE_STRUCT_OPS, &rxecc_qdisc_kfunc_set);
	if (!ret)
		ret = register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS, &rxecc_tc_kfunc_set);
	if (ret)
		pr_err("rxecc_switch: registering kfuncs failed: %d\n", ret);
	return ret;
}

static void __exit rxecc_switch_exit(void)
{
	struct sk_buff *skb;

	cancel_work_sync(&pfc_work);
	while ((skb = skb_dequeue(&pfc_pending))) {
		dev_put(skb->dev);
		kfree_skb(skb);
	}
}

module_init(rxecc_switch_init);
module_exit(rxecc_switch_exit);
MODULE_DESCRIPTION("rxe-cc emulated switch: PFC frame and qdisc kick kfuncs");
MODULE_LICENSE("GPL");
