# Two namespaces, one ib_write_bw flow with rxe_cc cc=none: bandwidth is
# positive, and rxe_cc's counters account for exactly the bytes perftest moved.

test_throughput() {
	local size=65536 iters=${THROUGHPUT_ITERS:-1500}
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up bridge2
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server.txt" -s $size -n $iters
	sleep 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client.txt" -s $size -n $iters \
		|| fail "client failed: $(tail -3 "$TEST_OUT/client.txt")"
	tb_wait_servers || fail "server failed: $(tail -3 "$TEST_OUT/server.txt")"

	local bw moved
	bw=$(tb_bw_gbits "$TEST_OUT/client.txt")
	moved=$(tb_bw_bytes "$TEST_OUT/client.txt")
	[ -n "$bw" ] || fail "no bandwidth line in perftest output"
	assert_gt "bandwidth (Gb/s)" "$bw" 0
	assert_eq "perftest bytes" $((size * iters)) "$moved"

	# Both QPs are gone now, so their counters are in the totals.
	cat /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/totals.txt"
	assert_eq "QPs destroyed" 2 "$(tb_cc_total qps_destroyed)"
	assert_eq "bytes acked to the requester" "$moved" "$(tb_cc_total acked_bytes)"
	# The responder's hook sees every request before rxe's PSN check, so a
	# packet resent after rxe's retry timeout (on a loaded or debug kernel:
	# 102 of 24,000 packets on the debug kernel) is taken up twice; rxe
	# counts those as duplicate or out of sequence, each a full 4 KB packet.
	local again rx pkt
	again=$(rxe_taken_again 0)
	rx=$(tb_cc_total rx_bytes)
	pkt=$((rx / $(tb_cc_total rx_packets)))
	((again == 0)) || info "$again packets arrived again (retransmitted), $pkt B each"
	assert_eq "bytes taken up by the responder, less those taken up again" "$moved" $((rx - again * pkt))
	local tx
	tx=$(tb_cc_total tx_bytes)
	# Retransmissions may send some bytes twice, never fewer.
	awk -v t="$tx" -v m="$moved" 'BEGIN {exit !(t >= m && t <= m * 1.05)}' \
		|| fail "tx_bytes $tx is not within [moved, 1.05 x moved] ($moved)"
	info "bw ${bw} Gb/s; perftest moved $moved B; rxe_cc tx $tx B, acked $(tb_cc_total acked_bytes) B, $(tb_cc_total acks) ACKs"
}
