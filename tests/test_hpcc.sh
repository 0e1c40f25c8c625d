# HPCC's in-network telemetry end to end: the sender's rxe reserves an INT
# shim on each data packet, every switch port's link peer writes its
# dequeue-time record into it, the responder echoes the records in the
# ACK and rxe_cc's HPCC reads them. The wire stays RoCEv2 (every ICRC
# checks; tshark decodes it with tests/rxecc_int.lua), a shim with no room
# left is counted and never corrupted, and without cc=hpcc no packet
# carries a shim.

# hpcc_flow <tag> <client host> <server host> <messages>: one ib_send_bw
# flow of 64 KB messages; 0 if both ends finished.
hpcc_flow() {
	local port=$((TB_PORT_BASE + 7))
	TB_BW_TOOL=ib_send_bw tb_write_bw_server "$3" $port "$TEST_OUT/$1-server.txt" -s 65536 -n "$4" -e || return 1
	TB_BW_TOOL=ib_send_bw tb_write_bw_client "$2" "$3" $port "$TEST_OUT/$1-client.txt" -s 65536 -n "$4" -e || return 1
	tb_wait_servers
}

# int_pstat <port> <counter>: a counter of `rxecc port stats --json` (all
# test files share one shell: test_port.sh has its own pstat).
int_pstat() {
	rxecc port stats --dev "$1" --json | python3 -c 'import json, sys
print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

test_hpcc_int() {
	local cap=/tmp/hpcc.pcap tpid acks data stamped n=50 hops
	tb_load_rxe patched
	tb_load_cc cc=hpcc line_rate_mbps="$CCI_LINE_MBPS" hpcc_t_us="$CCI_T_US"
	cci_topology hpcc "$TEST_OUT/dumbbell.toml" || fail "cannot derive the topology"
	rxecc testbed up "$TEST_OUT/dumbbell.toml" 2>"$TEST_OUT/up.txt" || fail "testbed up: $(tail -3 "$TEST_OUT/up.txt")"

	# p0 sees the data before h0's NIC stamps p0's record into it, and the
	# ACKs with that record echoed.
	tb_capture_start p0 "$cap" "$TEST_OUT/tshark.log" || fail "tshark did not start capturing in 120 s"
	tpid=$TB_CAPTURE_PID
	hpcc_flow one 1 0 $n || fail "the flow h1 -> h0 failed: $(tail -1 "$TEST_OUT/one-client.txt")"
	sleep 0.5
	kill $tpid
	wait $tpid || true
	rxecc port stats >"$TEST_OUT/ports.txt"
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/rxe_cc-totals.txt"

	data=$(tb_cc_total rx_packets)
	acks=$(tb_cc_total acks)
	stamped=$(int_pstat v0 int_stamped)
	info "one hop: $data data packets, $stamped records stamped at v0 for p0, $acks ACKs;" \
		"$(tb_cc_total int_acks) with INT, $(tb_cc_total int_hops) records; $(tb_cc_total tx_windowed) sends waited on the window"
	assert_eq "bytes acked" $((n * 65536)) "$(tb_cc_total acked_bytes)"
	assert_gt "data packets" "$data" 0
	assert_eq "records stamped at h0's NIC (one per data packet)" "$data" "$stamped"
	assert_eq "ACKs with INT" "$acks" "$(tb_cc_total int_acks)"
	assert_eq "records in ACKs (one hop each)" "$acks" "$(tb_cc_total int_hops)"
	assert_eq "hops without room" 0 "$(tb_cc_total int_overflow)"
	assert_eq "flagged packets not ours at v0" 0 "$(int_pstat v0 int_bad)"
	assert_eq "drops at the bottleneck" 0 "$(int_pstat p0 drops)"

	cp "$cap" "$TEST_OUT/hpcc.pcap"
	python3 "$RXECC_TOP/tests/roce_check.py" "$cap" >"$TEST_OUT/icrc.txt" || { cat "$TEST_OUT/icrc.txt" >&2; fail "ICRC check"; }
	info "capture at p0: $(cat "$TEST_OUT/icrc.txt")"
	assert_gt "packets with an INT shim in the capture" "$(awk '{for (i = 1; i < NF; i++) if ($i == "int_shims") print $(i + 1)}' "$TEST_OUT/icrc.txt")" 0
	# Wireshark's RoCEv2 dissector reads the shim as a BTH (opcode 0xc5);
	# with the Lua dissector it finds the real BTH after it.
	tshark -X lua_script:"$RXECC_TOP/tests/rxecc_int.lua" -r "$cap" -Y infiniband -T fields \
		-e infiniband.bth.opcode -e rxecc_int.nhops >"$TEST_OUT/opcodes.txt" 2>"$TEST_OUT/tshark-read.log"
	assert_gt "ACKs tshark decoded after a shim with one record" "$(awk '$1 == 17 && $2 == 1' "$TEST_OUT/opcodes.txt" | wc -l)" 0
	assert_eq "packets tshark decoded as opcode 0xc5 (the shim as a BTH)" 0 "$(awk '$1 == 197' "$TEST_OUT/opcodes.txt" | wc -l)"

	# Without cc=hpcc the wire is stock: nothing for v0 to stamp.
	rmmod rxe_cc
	tb_load_cc cc=none
	hpcc_flow none 1 0 20 || fail "the cc=none flow failed"
	assert_eq "records stamped for a cc=none flow" "$stamped" "$(int_pstat v0 int_stamped)"
	assert_eq "flagged packets at v0 after a cc=none flow" 0 "$(int_pstat v0 int_bad)"
	rxecc testbed down
	rmmod rxe_cc

	# Three hops (chain: h0 -> s0 -> s1 -> s2 -> h3) into a shim with room
	# for two: the third is counted, not written, and the flow is whole.
	tb_load_cc cc=hpcc line_rate_mbps=150 hpcc_t_us="$CCI_T_US" int_hops=2
	sed -e '/^mark = /d' -e '/^tcd = /d' -e 's/^pfc = true/pfc = true\nint = "hpcc"/' \
		"$RXECC_TOP/testbed/topologies/chain.toml" >"$TEST_OUT/chain.toml"
	[ "$(grep -c '^int = "hpcc"' "$TEST_OUT/chain.toml")" = 3 ] || fail "cannot derive chain with INT"
	rxecc testbed up "$TEST_OUT/chain.toml" 2>"$TEST_OUT/up-chain.txt" || fail "testbed up chain: $(tail -3 "$TEST_OUT/up-chain.txt")"
	hpcc_flow chain 0 3 $n || fail "the flow h0 -> h3 failed: $(tail -1 "$TEST_OUT/chain-client.txt")"
	rxecc port stats >"$TEST_OUT/ports-chain.txt"
	acks=$(tb_cc_total acks)
	hops=$(tb_cc_total int_hops)
	info "three hops, room for two: $acks ACKs, $hops records, $(tb_cc_total int_overflow) hops without room"
	assert_eq "bytes acked on chain" $((n * 65536)) "$(tb_cc_total acked_bytes)"
	assert_eq "records in ACKs (two each)" $((2 * acks)) "$hops"
	assert_eq "hops without room (one per ACK)" "$acks" "$(tb_cc_total int_overflow)"
	assert_eq "overflows counted at h3's NIC" "$(tb_cc_total rx_packets)" "$(int_pstat v3 int_overflow)"
	assert_eq "records stamped at s1 for s0 -> s1" "$(tb_cc_total rx_packets)" "$(int_pstat x1_0 int_stamped)"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
}
