#!/usr/bin/env bash
# The guest integration tests. Run inside the guest by tests/run.sh; pass
# test names as arguments to run only those.
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"

# test_fct_incast is not in the list: it is the bench's repeated incast
# (incast-fct.toml, 118 s), whose claim (ACC needs fewer pauses than no CC)
# is about dynamics; test_fct_websearch and test_fct_ops check the FCT
# files. `make bench` runs the same file; run the test by name.
# test_verbs_rdma_cm is not in the list: a perftest -R server takes from
# 30 s to over 3 minutes to start under TCG, inside librdmacm's start-up
# (docs/testing.md); run it by name: tests/run.sh test_verbs_rdma_cm.
ALL_TESTS=(test_params test_readme_by_hand test_throughput test_run_rxe_builds test_run_qps test_incast test_reload test_reload_paced test_reload_gated test_pacing test_ecn_echo test_acc test_port_rate test_port_queue test_port_drops test_port_red test_port_inject test_inject_dcqcn_ce test_inject_dup_delay_reorder test_run_inject_check test_inject_gbn_stock_patched test_switch_bpf_unit test_topology_netlink test_verbs_all_cc test_verbs_ud test_verbs_rw_mix test_qp_reset test_retry_coalesced_ack test_retry_stale_ack test_stress_reload test_stress_qp_churn test_stress_qps_flows test_stress_knobs test_stress_host_gone test_stress_malformed test_switch_lossless_incast test_switch_lossy_incast test_switch_tcd_chain test_dcqcn_cnp test_hpcc_int test_int_on_acks test_fncc_hops test_halt_cpu test_cc_incast test_cc_incast_baselines test_fct_websearch test_fct_ops test_flowgen_timeout test_gfc_ring_pfc_deadlock test_gfc_ring_buffer test_gfc_ring_time test_gfc_ring_acc test_gfc_ring_recipe)
# On the debug kernel (make test-debug: lockdep, KASAN, kmemleak, 20-40x
# slower under TCG) the functional tests run; the experiments that assert
# rates, timing or CC dynamics, and the README's by-hand lines (which load
# the normal build's modules), do not. Nor do the GFC ring tests: they
# assert fair shares and rates at C = 20 Mb/s, ten times what the debug
# guest carries, and what they add to the other tests is the switch's GFC
# in BPF, which neither KASAN nor lockdep sees (JITed programs, and
# bpf_spin_lock is not a lockdep lock); the C that sends their frames
# (rxecc_switch.ko) sends PFC's too, in test_stress_host_gone there.
DEBUG_SKIPPED=(test_readme_by_hand test_pacing test_port_rate test_port_queue test_port_red test_switch_lossless_incast test_switch_lossy_incast test_switch_tcd_chain test_dcqcn_cnp test_fncc_hops test_halt_cpu test_cc_incast test_cc_incast_baselines test_gfc_ring_pfc_deadlock test_gfc_ring_buffer test_gfc_ring_time test_gfc_ring_acc test_gfc_ring_recipe)
if [ -n "${RXECC_DEBUG_KERNEL:-}" ] && [ $# = 0 ]; then
	echo "debug kernel: not running the timing-sensitive ${DEBUG_SKIPPED[*]}" >&2
	set --
	for t in "${ALL_TESTS[@]}"; do
		[[ " ${DEBUG_SKIPPED[*]} " == *" $t "* ]] || set -- "$@" "$t"
	done
fi
# Before the first test clears dmesg: the boot must have left the debug
# kernel's checks on, or no test result says anything about them.
tb_debug_checks_live boot || { echo "debug kernel: its checks are off; not running the suite" >&2; exit 1; }
# On the debug kernel udev can still be on the boot's coldplug when the
# suite starts: virtme-ng-init waits up to 300 s for it and goes on, an
# event takes seconds there, and systemd-udevd then holds most of the
# guest's CPUs under the tests (docs/testing.md, "Measurements behind the
# harness"). The tests need nothing of udev: devtmpfs makes
# /dev/infiniband's nodes, and every device is named by the test that
# makes it. The normal kernel's coldplug is done at boot.
if [ -n "${RXECC_DEBUG_KERNEL:-}" ] && pgrep -x systemd-udevd >/dev/null; then
	echo "debug kernel: stopping systemd-udevd (it can still be on the boot's coldplug there; tests/guest-suite.sh says why)" >&2
	udevadm control --exit || { echo "debug kernel: cannot stop systemd-udevd" >&2; exit 1; }
fi
suite_start=$(date +%s)
for t in "${@:-${ALL_TESTS[@]}}"; do
	tb_run_test "$t"
done
echo "suite: $(($(date +%s) - suite_start)) s of $TB_CLOCK" >&2
tb_summary
