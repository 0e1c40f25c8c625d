// SPDX-License-Identifier: GPL-2.0
/*
 * rxe_cc C glue: module parameters and the rdma_rxe hook trampolines.
 *
 * Rust module parameters are read-only in 7.2, so the knobs live here as
 * module_param_cb() parameters whose setters validate: a bad value fails
 * insmod, and a bad sysfs write returns -EINVAL and keeps the old value.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <rdma/ib_verbs.h>

#include <rxe_cc_hooks.h>
#include "glue.h"

/*
 * What C and Rust share, checked on both sides against the same numbers
 * (the `const _` block in rxe_cc_main.rs), so that neither can drift.
 */
static_assert(RXE_CC_INT_MAX_HOPS == 5);
static_assert(sizeof(struct rxe_cc_int_rec) == 32);
static_assert(offsetof(struct rxe_cc_int_rec, qlen) == 24);
static_assert(sizeof(struct rxe_cc_int_shim_info) == 192);
static_assert(offsetof(struct rxe_cc_int_shim_info, kind) == 160);
static_assert(offsetof(struct rxe_cc_int_shim_info, lu_permille) == 180);
static_assert(offsetof(struct rxe_cc_int_shim_info, qlen_rate) == 184);

/* ---- parameters ---------------------------------------------------------- */

/* In id order, as enum rxe_cc_alg takes them from the same list. */
#define RXE_CC_ALG_NAME(id, name) #name,
static const char *const rxe_cc_alg_names[RXE_CC_NR_ALGS] = {
	RXE_CC_ALGS(RXE_CC_ALG_NAME)
};
#undef RXE_CC_ALG_NAME

static int rxe_cc_alg = RXE_CC_ALG_NONE;

static int cc_set(const char *val, const struct kernel_param *kp)
{
	char names[128] = "";
	int i = sysfs_match_string(rxe_cc_alg_names, val);

	if (i >= 0) {
		WRITE_ONCE(rxe_cc_alg, i);
		return 0;
	}
	for (i = 0; i < RXE_CC_NR_ALGS; i++) {
		if (i)
			strlcat(names, ", ", sizeof(names));
		strlcat(names, rxe_cc_alg_names[i], sizeof(names));
	}
	pr_err("rxe_cc: unknown cc '%.*s'; valid names: %s\n",
	       (int)strcspn(val, "\n"), val, names);
	return -EINVAL;
}

static int cc_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 rxe_cc_alg_names[READ_ONCE(rxe_cc_alg)]);
}

static const struct kernel_param_ops cc_ops = {
	.set = cc_set,
	.get = cc_get,
};
module_param_cb(cc, &cc_ops, NULL, 0644);
#define RXE_CC_ALG_LIST(id, name) " " #name
MODULE_PARM_DESC(cc, "congestion control for new QPs, one of:" RXE_CC_ALGS(RXE_CC_ALG_LIST));
#undef RXE_CC_ALG_LIST

/* An unsigned knob with an inclusive valid range. */
struct rxe_cc_knob {
	u32 val;
	u32 min;
	u32 max;
};

static int knob_set(const char *val, const struct kernel_param *kp)
{
	struct rxe_cc_knob *k = kp->arg;
	u32 v;

	if (kstrtou32(val, 0, &v) || v < k->min || v > k->max) {
		pr_err("rxe_cc: %s: '%.*s' is not an integer in [%u, %u]\n",
		       kp->name, (int)strcspn(val, "\n"), val, k->min, k->max);
		return -EINVAL;
	}
	WRITE_ONCE(k->val, v);
	return 0;
}

static int knob_get(char *buf, const struct kernel_param *kp)
{
	const struct rxe_cc_knob *k = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(k->val));
}

static const struct kernel_param_ops knob_ops = {
	.set = knob_set,
	.get = knob_get,
};

/*
 * A writable knob: /sys/module/rxe_cc/parameters/<name>, one per entry of
 * knobs.h (generated from rxe_cc/cc_core/knobs.rs, where each is described).
 */
#define RXE_CC_KNOB(id, name, def, lo, hi, desc)			\
	static struct rxe_cc_knob knob_##name = { def, lo, hi };	\
	module_param_cb(name, &knob_ops, &knob_##name, 0644);		\
	MODULE_PARM_DESC(name, desc " [" #lo ".." #hi "], default " #def);
RXE_CC_KNOBS(RXE_CC_KNOB)
#undef RXE_CC_KNOB

/* For rxe_cc_knob(), by enum rxe_cc_knob_id. */
#define RXE_CC_KNOB_PTR(id, name, def, lo, hi, desc)	\
	[RXE_CC_KNOB_##id] = &knob_##name,
static struct rxe_cc_knob *const rxe_cc_knobs[RXE_CC_NR_KNOBS] = {
	RXE_CC_KNOBS(RXE_CC_KNOB_PTR)
};
#undef RXE_CC_KNOB_PTR

u32 rxe_cc_param_alg(void)
{
	return READ_ONCE(rxe_cc_alg);
}

u32 rxe_cc_knob(u32 id)
{
	return id < RXE_CC_NR_KNOBS ? READ_ONCE(rxe_cc_knobs[id]->val) : 0;
}

/* ---- hook trampolines: unpack the ABI structs into plain values ---------- */

static void *rxe_cc_ctx;

static void *glue_qp_create(struct rxe_cc_qp *qp, struct rxe_cc_qp_info *info)
{
	char name[48];

	/* Only RC QPs have acks to drive congestion control. */
	if (info->qp_type != IB_QPT_RC)
		return NULL;
	snprintf(name, sizeof(name), "%s-qp%u", info->dev_name, info->qpn);
	info->data_ecn = rxe_cc_knob(RXE_CC_KNOB_DATA_ECN);
	info->ack_every = rxe_cc_knob(RXE_CC_KNOB_ACK_EVERY);
	info->int_kind = RXE_CC_INT_NONE;
	info->int_hops = 0;
	return rxe_cc_rs_qp_create(rxe_cc_ctx, qp, name, info->dev_name,
				   info->qpn, info->now_ns, &info->data_ecn,
				   &info->ack_every, &info->int_kind,
				   &info->int_hops);
}

static void glue_qp_destroy(void *priv)
{
	rxe_cc_rs_qp_destroy(priv);
}

static u64 glue_tx_gate(void *priv, const struct rxe_cc_tx *tx)
{
	return rxe_cc_rs_tx_gate(priv, tx->now_ns, tx->psn, tx->payload,
				 tx->wire_bytes);
}

static void glue_tx_done(void *priv, const struct rxe_cc_tx *tx)
{
	rxe_cc_rs_tx_done(priv, tx->now_ns, tx->psn, tx->psns, tx->payload,
			  tx->wire_bytes);
}

/* Unpacks the INT shim an ACK carries; rdma_rxe checked its length. */
static void glue_unpack_int(const struct rxe_cc_int_shim *shim,
			    struct rxe_cc_int_shim_info *info)
{
	const struct rxe_cc_int_icc *icc = (const void *)shim->hop;
	u32 i;

	memset(info, 0, sizeof(*info));
	info->kind = shim->kind;
	info->overflow = shim->overflow;
	info->nhops = min_t(u32, shim->nhops, RXE_CC_INT_MAX_HOPS);
	if (shim->kind == RXE_CC_INT_ICC) {
		if (!info->nhops)
			return;
		info->nhops = 1;
		info->hop[0].b_bps = (u64)be32_to_cpu(icc->rate_mbps) * 1000000;
		info->hop[0].qlen = be32_to_cpu(icc->qlen);
		info->qlen_rate = (s64)(s32)be32_to_cpu(icc->qlen_rate) * 1000;
		info->lu_permille = be16_to_cpu(icc->lu_permille);
		info->port_flows = be16_to_cpu(icc->flows);
		return;
	}
	info->n_flows = be16_to_cpu(shim->n_flows);
	for (i = 0; i < info->nhops; i++) {
		info->hop[i].b_bps = (u64)be32_to_cpu(shim->hop[i].rate_mbps) *
				     1000000;
		info->hop[i].ts_ns = be32_to_cpu(shim->hop[i].ts_ns);
		info->hop[i].tx_bytes = be32_to_cpu(shim->hop[i].tx_bytes);
		info->hop[i].qlen = be32_to_cpu(shim->hop[i].qlen);
	}
}

static void glue_rx_ack(void *priv, const struct rxe_cc_ack *ack)
{
	struct rxe_cc_int_shim_info info;

	if (ack->int_shim)
		glue_unpack_int(ack->int_shim, &info);
	rxe_cc_rs_rx_ack(priv, ack->now_ns, ack->psn, ack->acked_psns,
			 ack->acked_bytes, ack->kind, ack->echo, ack->ce_pkts,
			 ack->int_shim ? &info : NULL);
}

static void glue_poll(void *priv, u64 now_ns)
{
	rxe_cc_rs_poll(priv, now_ns);
}

static u8 glue_rx_data(void *priv, struct rxe_cc_rx *rx)
{
	return rxe_cc_rs_rx_data(priv, rx->now_ns, rx->psn, rx->payload,
				 rx->ecn, &rx->int_flows);
}

static const struct rxe_cc_ops rxe_cc_glue_ops = {
	.abi_version = RXE_CC_ABI_VERSION,
	.name = "rxe_cc",
	.qp_create = glue_qp_create,
	.qp_destroy = glue_qp_destroy,
	.tx_gate = glue_tx_gate,
	.tx_done = glue_tx_done,
	.rx_ack = glue_rx_ack,
	.poll = glue_poll,
	.rx_data = glue_rx_data,
};

int rxe_cc_glue_register(void *ctx)
{
	rxe_cc_ctx = ctx;
	return rxe_cc_register(&rxe_cc_glue_ops);
}

void rxe_cc_glue_unregister(void)
{
	rxe_cc_unregister(&rxe_cc_glue_ops);
}

void rxe_cc_glue_kick(void *qp)
{
	rxe_cc_kick(qp);
}

/* The clock every hook's now_ns comes from. */
u64 rxe_cc_glue_now_ns(void)
{
	return ktime_get_ns();
}
