#!/usr/bin/env bash
# make demo: boot the testbed and run the 4->1 incast (h1..h4 -> h0 through
# the bridge) with rxe_cc, printing per-flow throughput.
# Later issues add the ACC / DCQCN / no-CC comparison and plots.
set -uo pipefail
. "$RXECC_TOP/testbed/netns.sh"
. "$RXECC_TOP/tests/test_incast.sh"
SIZE=65536
ITERS=${DEMO_ITERS:-1000}
out=$RESULTS/demo
rm -rf "$out" && mkdir -p "$out"

for cc in none; do
	echo "==> demo: 4->1 incast with rxe_cc cc=$cc ($ITERS x $SIZE B per flow)" >&2
	tb_load_rxe patched
	tb_load_cc cc=$cc
	tb_up 5
	mkdir -p "$out/$cc"
	tb_incast 4 "$out/$cc" -s $SIZE -n "$ITERS" || echo "warning: not every flow completed" >&2
	rxecc flows --label "cc=$cc: 4->1 incast into h0" "$out/$cc"/client{1..4}.txt | tee "$out/$cc/table.txt"
	rxecc flows --json "$out/$cc"/client{1..4}.txt >"$out/$cc/flows.json"
	cp /sys/kernel/debug/rxe_cc/totals "$out/$cc/rxe_cc-totals.txt"
	tb_down
	rmmod rxe_cc
	rmmod rdma_rxe
done
echo "results in $out" >&2
