# Congestion control on real traffic through the emulated switch: the
# 4->1 incast under none, DCQCN and ACC (tests/cc_incast.sh), recorded by
# `rxecc record` and compared by `rxecc report`. The assertions are
# directions with wide margins, not speeds: the machine is shared.

. "$RXECC_TOP/tests/cc_incast.sh"

# rj <label> <key>: a metric of report.json ("null" if absent).
rj() {
	python3 -c 'import json, sys
m = {r["label"]: r for r in json.load(open(sys.argv[1]))}[sys.argv[2]][sys.argv[3]]
print("null" if m is None else m)' "$TEST_OUT/report.json" "$1" "$2"
}

test_cc_incast() {
	local cc
	for cc in none dcqcn acc; do
		cci_run "$cc" "$TEST_OUT/$cc" 4 "${CC_TEST_ITERS:-120}" || fail "cc=$cc: not every flow completed"
	done
	cci_report "$TEST_OUT" none dcqcn acc >&2 || fail "rxecc report"
	for cc in none dcqcn acc; do
		assert_eq "$cc: flows" 4 "$(rj "$cc" flows)"
		assert_eq "$cc: drops (PFC is on)" 0 "$(rj "$cc" drops)"
		[ -s "$TEST_OUT/plots/$cc.png" ] || fail "no plot for $cc"
	done
	# No CC: four flows at line rate keep the bottleneck's queue full and
	# PFC busy, and their rates never come near the bottleneck's.
	assert_eq "none: converged" null "$(rj none converge_periods)"
	assert_gt "none: pauses" "$(rj none pauses)" 0
	# DCQCN reacts to the RED marks: CNPs flow and its rates come down.
	assert_gt "dcqcn: CNPs received" "$(awk '$1 == "cnps" {print $2}' "$TEST_OUT/dcqcn/rxe_cc-totals.txt")" 0
	# ACC halts, brings its aggregate rate to the bottleneck, and needs
	# fewer pauses and a shorter queue than no CC.
	assert_gt "acc: halts" "$(rj acc halts)" 0
	[ "$(rj acc converge_periods)" != null ] || fail "acc: the aggregate rate never came within 10% of the bottleneck"
	assert_gt "acc: pauses below none's" "$(rj none pauses)" "$(rj acc pauses)"
	assert_gt "acc: mean queue below none's" "$(rj none mean_queue_bytes)" "$(rj acc mean_queue_bytes)"
	assert_gt "acc: throughput above half the bottleneck" "$(rj acc throughput_mbps)" $((CCI_RATE_MBPS / 2))
	info "converged in T: dcqcn $(rj dcqcn converge_periods), acc $(rj acc converge_periods);" \
		"pauses none $(rj none pauses), dcqcn $(rj dcqcn pauses), acc $(rj acc pauses);" \
		"mean queue B none $(rj none mean_queue_bytes), dcqcn $(rj dcqcn mean_queue_bytes), acc $(rj acc mean_queue_bytes)"
}
