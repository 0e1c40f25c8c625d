# DCQCN end to end: a marked flow makes the receiver (the notification
# point) send real CNPs, at most one per min_time_between_cnps; the sender
# (the reaction point) gets every one and slows down. A capture of the
# traffic decodes as RoCEv2 in tshark, and every ICRC checks.

# dcqcn_flow <tag> <iters>: h1 -> h0, 64 KiB writes, MiB/s report; prints
# the client's elapsed ms.
dcqcn_flow() {
	local t0 t1
	export TB_REPORT_GBITS=0
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$1" -s 65536 -n "$2" || return 1
	read -r t0 t1 <"$TEST_OUT/$1-client.txt.wall"
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d\n", (b - a) * 1000}'
}

#@ suite debug=skip
test_dcqcn_cnp() {
	local ms sent got clean marked cap=/tmp/dcqcn.pcap interval=1000
	tb_load_rxe patched
	tb_load_cc cc=dcqcn min_time_between_cnps=$interval
	rxecc testbed up bridge2
	dcqcn_flow clean 100 >/dev/null || fail "unmarked flow failed"
	clean=$(tb_bw_mbit "$TEST_OUT/clean-client.txt")
	assert_eq "CNPs without marks" 0 "$(tb_cc_total cnps_sent)"

	# Every data packet to h0 leaves p0 CE-marked.
	rxecc mark --dev p0 --mode ce
	rxecc capture start --dev p0 --pcap "$cap" --log "$TEST_OUT/capture.log"
	ms=$(dcqcn_flow marked 20) || fail "marked flow failed"
	rxecc capture stop "$cap" >&2
	marked=$(tb_bw_mbit "$TEST_OUT/marked-client.txt")
	sent=$(tb_cc_total cnps_sent)
	got=$(tb_cc_total cnps)
	info "unmarked $clean Mb/s; all CE: $marked Mb/s, $sent CNPs sent, $got received in $ms ms" \
		"(at most one per ${interval} us per QP)"
	assert_gt "CNPs sent" "$sent" 0
	assert_eq "CNPs received = sent" "$sent" "$got"
	# Two QPs per flow can be marked (data and ACK direction); the data
	# QP's NP sends at most one per interval over the flow.
	[ "$sent" -le $((ms * 1000 / interval + 2)) ] || fail "$sent CNPs in $ms ms exceed one per $interval us"
	awk -v m="$marked" -v c="$clean" 'BEGIN {exit !(m < c / 2)}' || fail "DCQCN did not slow down: $marked vs $clean Mb/s"

	cp "$cap" "$TEST_OUT/dcqcn.pcap"
	tshark -r "$cap" -Y infiniband -T fields -e infiniband.bth.opcode >"$TEST_OUT/opcodes.txt" 2>/dev/null
	local decoded cnp
	decoded=$(wc -l <"$TEST_OUT/opcodes.txt")
	cnp=$(grep -c -x '129' "$TEST_OUT/opcodes.txt" || true)
	tb_wire_check "$cap" "$TEST_OUT/wire.json" >"$TEST_OUT/wire.txt" || { cat "$TEST_OUT/wire.txt" >&2; fail "ICRC check"; }
	info "capture: tshark decoded $decoded packets as InfiniBand (RoCEv2), $cnp CNPs (opcode 0x81); $(cat "$TEST_OUT/wire.txt")"
	assert_gt "packets tshark decoded as RoCEv2" "$decoded" 0
	assert_gt "CNPs in the capture" "$cnp" 0
}
