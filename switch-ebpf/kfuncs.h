/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel functions the switch programs call. The testbed's pahole (1.24)
 * emits no kfunc declarations into vmlinux.h, so they are declared here,
 * with the helper macros the kernel's selftests define around them.
 */
#ifndef RXECC_KFUNCS_H
#define RXECC_KFUNCS_H

extern void *bpf_obj_new_impl(__u64 local_type_id, void *meta) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta) __ksym;
extern int bpf_list_push_back_impl(struct bpf_list_head *head,
				   struct bpf_list_node *node, void *meta,
				   __u64 off) __ksym;
extern struct bpf_list_node *bpf_list_pop_front(struct bpf_list_head *head) __ksym;
extern struct bpf_list_node *bpf_list_front(struct bpf_list_head *head) __ksym;

extern void bpf_qdisc_skb_drop(struct sk_buff *skb,
			       struct bpf_sk_buff_ptr *to_free) __ksym;
extern void bpf_qdisc_watchdog_schedule(struct Qdisc *sch, __u64 expire,
					__u64 delta_ns) __ksym;
extern void bpf_qdisc_bstats_update(struct Qdisc *sch,
				    const struct sk_buff *skb) __ksym;
extern void bpf_kfree_skb(struct sk_buff *skb) __ksym;
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym;

/* From rxecc_switch.ko (switch-ebpf/kmod/), which must be loaded first. */
extern int rxecc_pfc_send(struct Qdisc *sch, __u32 ifindex, __u32 class_vec,
			  __u32 quanta, __u64 stamp_ns) __ksym;
extern void rxecc_port_kick(struct __sk_buff *ctx) __ksym;

#define bpf_obj_new(type) \
	((type *)bpf_obj_new_impl(bpf_core_type_id_local(type), NULL))
#define bpf_obj_drop(kptr) bpf_obj_drop_impl(kptr, NULL)
#define bpf_list_push_back(head, node) \
	bpf_list_push_back_impl(head, node, NULL, 0)

#define __contains(name, node) \
	__attribute__((btf_decl_tag("contains:" #name ":" #node)))

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((void *)(ptr) - __builtin_offsetof(type, member)))
#endif

#endif /* RXECC_KFUNCS_H */
