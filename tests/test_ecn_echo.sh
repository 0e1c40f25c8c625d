# Marks and their echo, end to end: h1's data leaves ECT(1) with an ACK
# requested on every packet; the marker on bridge port p0 (towards h0)
# writes CE or UE; h0's responder echoes the mark in each ACK (BTH FECN/BECN)
# and h1's completer reports it. rxe drops packets whose ICRC is wrong, so
# exact byte counts at the responder also show marking keeps the ICRC valid.
# Then again with an ACK every 4 packets: each carries the count of CE
# packets it answers (BTH resv6a), so the echoed count still matches.

# ecn_phase <name> <perftest iterations>: one flow h1 -> h0; prints the
# change of each rxe_cc total as "counter delta" lines into $TEST_OUT/<name>.
ecn_phase() {
	local name=$1 iters=$2 before=$TEST_OUT/$1.before
	cp /sys/kernel/debug/rxe_cc/totals "$before"
	# -u 20: a 4.3 s retry timeout. The counts below are exact, so a
	# retransmission would break them; on the debug kernel (make
	# test-debug) rxe's default of 67 ms ran out, and 317 of one phase's
	# 3200 packets went twice with nothing lost. A real loss still shows.
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$name" -s 65536 -n "$iters" -u 20 || fail "$name: flow failed"
	awk 'NR == FNR {b[$1] = $2; next} {print $1, $2 - b[$1]}' "$before" /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/$name"
}
echo_delta() { awk -v k="$2" '$1 == k {print $2}' "$TEST_OUT/$1"; }

#@ suite
test_ecn_echo() {
	local iters=200 bytes=$((200 * 65536)) pkts=$((200 * 16))
	tb_load_rxe patched
	tb_load_cc cc=none data_ecn=1 ack_every=1
	rxecc testbed up bridge2

	# No marker: ECT(1) data, an ACK per packet, no marks.
	ecn_phase clean $iters
	assert_eq "clean: bytes at the responder" $bytes "$(echo_delta clean rx_bytes)"
	assert_eq "clean: data packets" $pkts "$(echo_delta clean tx_packets)"
	assert_eq "clean: one ACK per packet" "$(echo_delta clean tx_packets)" "$(echo_delta clean acks)"
	assert_eq "clean: CE seen" 0 "$(echo_delta clean rx_ecn_ce)"
	assert_eq "clean: UE echoed" 0 "$(echo_delta clean echo_ue)"

	rxecc mark --dev p0 --mode ce
	ecn_phase ce $iters
	assert_eq "CE: bytes at the responder (ICRC still valid)" $bytes "$(echo_delta ce rx_bytes)"
	assert_eq "CE: every data packet arrived CE" "$(echo_delta ce rx_packets)" "$(echo_delta ce rx_ecn_ce)"
	assert_eq "CE: every ACK echoed CE" "$(echo_delta ce acks)" "$(echo_delta ce echo_ce)"
	assert_eq "CE: no UE" 0 "$(echo_delta ce echo_ue)"

	rxecc mark --dev p0 --mode ue
	ecn_phase ue $iters
	assert_eq "UE: bytes at the responder" $bytes "$(echo_delta ue rx_bytes)"
	assert_eq "UE: every data packet arrived UE" "$(echo_delta ue rx_packets)" "$(echo_delta ue rx_ecn_ue)"
	assert_eq "UE: every ACK echoed UE" "$(echo_delta ue acks)" "$(echo_delta ue echo_ue)"
	assert_eq "UE: no CE" 0 "$(echo_delta ue echo_ce)"

	# Coalesced ACKs: AckReq every 4th packet, all of them CE. Each ACK
	# answers 4 packets and carries their CE count (BTH resv6a), so the
	# packets echoed as CE still match the packets that arrived CE.
	echo 4 >/sys/module/rxe_cc/parameters/ack_every
	rxecc mark --dev p0 --mode ce
	ecn_phase ce4 $iters
	assert_eq "CE, ACK every 4: bytes at the responder" $bytes "$(echo_delta ce4 rx_bytes)"
	assert_eq "CE, ACK every 4: an ACK per 4 packets" "$(($(echo_delta ce4 tx_packets) / 4))" "$(echo_delta ce4 acks)"
	assert_eq "CE, ACK every 4: CE packets echoed, by count" "$(echo_delta ce4 rx_ecn_ce)" "$(echo_delta ce4 echo_ce)"
	assert_gt "CE, ACK every 4: CE packets" "$(echo_delta ce4 echo_ce)" 0

	# Not-ECT data is never marked, and stock ACK frequency returns.
	echo 0 >/sys/module/rxe_cc/parameters/data_ecn
	echo 0 >/sys/module/rxe_cc/parameters/ack_every
	rxecc mark --dev p0 --mode ce
	ecn_phase notect $iters
	assert_eq "not-ECT: bytes" $bytes "$(echo_delta notect rx_bytes)"
	assert_eq "not-ECT: CE seen" 0 "$(echo_delta notect rx_ecn_ce)"
	assert_eq "not-ECT: CE echoed" 0 "$(echo_delta notect echo_ce)"
	# rxe's default asks for an ACK at each message end (16 packets here).
	assert_gt "not-ECT: fewer ACKs than packets" "$(echo_delta notect tx_packets)" "$(( $(echo_delta notect acks) * 8 ))"
	rxecc mark --dev p0 --mode off
	info "per-packet ACKs: $(echo_delta clean acks) for $(echo_delta clean tx_packets) packets; CE echoed on $(echo_delta ce echo_ce)/$(echo_delta ce acks) ACKs, with an ACK every 4 packets $(echo_delta ce4 echo_ce) CE packets echoed by $(echo_delta ce4 acks) ACKs, UE on $(echo_delta ue echo_ue)/$(echo_delta ue acks); stock ACK frequency: $(echo_delta notect acks) for $(echo_delta notect tx_packets)"
}
