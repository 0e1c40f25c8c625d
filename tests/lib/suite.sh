# shellcheck shell=bash
# The guest suite's tests, read by tests/guest-suite.sh in the guest and by
# tests/run.sh on the host, which splits them between guests.
#
# Heaviest first (host time in docs/testing.md): two guests that take the
# next test from one queue then end close together.
#
# test_fct_incast is not in the list: it is the bench's repeated incast
# (incast-fct.toml, 118 s), whose claim (ACC needs fewer pauses than no CC)
# is about dynamics; test_fct_websearch and test_fct_ops check the FCT
# files. `make bench` runs the same file; run the test by name.
# test_verbs_rdma_cm is not in the list: a perftest -R server takes from
# 30 s to over 3 minutes to start under TCG, inside librdmacm's start-up
# (docs/testing.md); run it by name: tests/run.sh test_verbs_rdma_cm.
ALL_TESTS=(test_verbs_all_cc test_reload test_switch_lossless_incast test_stress_malformed
	test_cc_incast test_cc_incast_baselines test_gfc_ring_acc test_stress_reload test_gfc_ring_recipe
	test_run_inject_check test_stress_qps_flows test_inject_dcqcn_ce test_inject_dup_delay_reorder
	test_fncc_hops test_topology_netlink test_retry_coalesced_ack test_run_qps
	test_params test_readme_by_hand test_throughput test_run_rxe_builds test_incast
	test_reload_paced test_reload_gated test_pacing test_ecn_echo test_acc test_port_rate
	test_port_queue test_port_drops test_port_red test_port_inject test_inject_gbn_stock_patched
	test_switch_bpf_unit test_verbs_ud test_verbs_rw_mix test_qp_reset test_retry_stale_ack
	test_stress_qp_churn test_stress_knobs test_stress_host_gone test_switch_lossy_incast
	test_switch_tcd_chain test_dcqcn_cnp test_hpcc_int test_int_on_acks test_halt_cpu
	test_fct_websearch test_fct_ops test_flowgen_timeout test_gfc_ring_pfc_deadlock)
# On the debug kernel (make test-debug: lockdep, KASAN, kmemleak, 20-40x
# slower under TCG) the functional tests run; the experiments that assert
# rates, timing or CC dynamics, and the README's by-hand lines (which load
# the normal build's modules), do not. Nor do the GFC ring tests: they
# assert fair shares and rates at C = 20 Mb/s, ten times what the debug
# guest carries, and what they add to the other tests is the switch's GFC
# in BPF, which neither KASAN nor lockdep sees (JITed programs, and
# bpf_spin_lock is not a lockdep lock); the C that sends their frames
# (rxecc_switch.ko) sends PFC's too, in test_stress_host_gone there.
DEBUG_SKIPPED=(test_readme_by_hand test_pacing test_port_rate test_port_queue test_port_red test_switch_lossless_incast test_switch_lossy_incast test_switch_tcd_chain test_dcqcn_cnp test_fncc_hops test_halt_cpu test_cc_incast test_cc_incast_baselines test_gfc_ring_pfc_deadlock test_gfc_ring_acc test_gfc_ring_recipe)

# tb_suite_tests: the tests a run without names runs, one per line: all
# of them, or on the debug kernel (RXECC_DEBUG_KERNEL) the functional ones.
tb_suite_tests() {
	local t
	for t in "${ALL_TESTS[@]}"; do
		[ -n "${RXECC_DEBUG_KERNEL:-}" ] && [[ " ${DEBUG_SKIPPED[*]} " == *" $t "* ]] && continue
		echo "$t"
	done
}
