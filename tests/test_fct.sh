# Flow completion times on real verbs: a WebSearch flow file (rxecc
# workload) replayed by flowgen on the dumbbell, every flow completed and
# accounted for, fct.txt in the HPCC simulator's format, and `rxecc fct`'s
# slowdown table equal, line for line, to what a copy of the simulator's
# fct_analysis.py (tests/fct_analysis.py) computes from that fct.txt.

. "$RXECC_TOP/tests/fct.sh"

test_fct_websearch() {
	local flows=$TEST_OUT/websearch.txt n mine theirs
	# 4 hosts at 30% of 100 Mb/s for 2 s, WebSearch sizes / 20 (mean
	# 86 KB): some 60 flows, from one packet to 1.5 MB.
	rxecc workload poisson --cdf "$RXECC_TOP/testbed/workloads/WebSearch_distribution.txt" \
		--hosts 4 --load 0.3 --rate-mbps "$CCI_LINE_MBPS" --duration 2 --size-div 20 --seed 7 -o "$flows" 2>&1 |
		tee "$TEST_OUT/workload.txt" >&2
	n=$(head -1 "$flows")
	assert_gt "flows in the flow file" "$n" 10
	fct_run dcqcn "$TEST_OUT/dcqcn" "$flows" write 4 || fail "not every flow completed"
	cat "$TEST_OUT/dcqcn/convert.txt" >&2
	# Every flow once: a line in fct.txt and an "ok" from its flowgen.
	assert_eq "lines in fct.txt" "$n" "$(wc -l <"$TEST_OUT/dcqcn/fct.txt")"
	assert_eq "flows flowgen completed" "$n" "$(cat "$TEST_OUT"/dcqcn/flowgen-h*.csv | grep -c ',ok$')"
	assert_eq "distinct (sip, dip, sport) in fct.txt" "$n" "$(awk '{print $1, $2, $3}' "$TEST_OUT/dcqcn/fct.txt" | sort -u | wc -l)"
	assert_eq "bytes in fct.txt" "$(awk 'NR > 1 {s += $5} END {print s}' "$flows")" \
		"$(awk '{s += $5} END {print s}' "$TEST_OUT/dcqcn/fct.txt")"
	assert_eq "drops (PFC is on)" 0 "$(python3 "$RXECC_TOP/tests/portsum.py" "$TEST_OUT/dcqcn/ports.jsonl" drops)"
	mine=$(rxecc fct report "dcqcn=$TEST_OUT/dcqcn/fct.txt" --script --step 20)
	theirs=$(python3 "$RXECC_TOP/tests/fct_analysis.py" "$TEST_OUT/dcqcn/fct.txt" -s 20)
	printf '%s\n' "$mine" >"$TEST_OUT/rxecc-fct.txt"
	printf '%s\n' "$theirs" >"$TEST_OUT/fct_analysis.txt"
	assert_gt "buckets in the table" "$(printf '%s\n' "$mine" | grep -c .)" 2
	assert_eq "rxecc fct report and fct_analysis.py" "$theirs" "$mine"
	rxecc fct report "dcqcn=$TEST_OUT/dcqcn/fct.txt" --step 20 --plots "$TEST_OUT/plots" >&2 || fail "rxecc fct report"
	[ -s "$TEST_OUT/plots/slowdown.png" ] && [ -s "$TEST_OUT/plots/fct_cdf.png" ] || fail "no plots"
}
