# The newcomer's path: the README's "A topology by hand", run exactly as
# written. The lines are read from README.md, not copied here, so the two
# cannot drift apart.

#@ suite debug=skip
test_readme_by_hand() {
	local script=$TEST_OUT/by-hand.sh out=$TEST_OUT/by-hand.txt flows tput
	awk '/^## A topology by hand/ {sec = 1; next}
		sec && /^## / {exit}
		sec && /^```sh$/ {code = 1; next}
		code && /^```$/ {exit}
		code {print}' "$RXECC_TOP/README.md" >"$script"
	[ -s "$script" ] || fail "README.md has no sh block under 'A topology by hand'"
	rm -rf /tmp/rec /tmp/flow-*.txt*
	(cd "$RXECC_TOP" && bash -e "$script") >"$out" 2>&1 || {
		tail -20 "$out" >&2
		fail "the README's lines failed"
	}
	# The report saw the flow the lines ran, while it ran.
	flows=$(awk '/ flows into / {print $1; exit}' "$out")
	# Throughput is the column after "in band", the one that ends in %.
	tput=$(awk '$1 == "run" {for (i = 2; i < NF; i++) if ($i ~ /%$/) {print $(i + 1); exit}}' "$out")
	info "by hand: report of $flows flow(s), $tput Mb/s; perftest $(tb_bw_mbit /tmp/flow-client.txt) Mb/s"
	assert_eq "flows in the report" 1 "$flows"
	assert_gt "throughput in the report (Mb/s)" "$tput" 0
}
