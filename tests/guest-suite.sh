#!/usr/bin/env bash
# The guest integration tests. Run inside the guest by tests/run.sh; pass
# test names as arguments to run only those.
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"
for f in "$RXECC_TOP"/tests/test_*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

ALL_TESTS=(test_params test_readme_by_hand test_throughput test_incast test_reload test_reload_paced test_pacing test_ecn_echo test_acc test_port_rate test_port_queue test_port_drops test_port_red test_switch_bpf_unit test_verbs_all_cc test_verbs_ud test_verbs_rdma_cm test_switch_lossless_incast test_switch_lossy_incast test_switch_tcd_chain test_dcqcn_cnp test_halt_cpu test_cc_incast test_cc_victim)
suite_start=$(date +%s)
for t in "${@:-${ALL_TESTS[@]}}"; do
	tb_run_test "$t"
done
echo "suite: $(($(date +%s) - suite_start)) s in the guest" >&2
tb_summary
