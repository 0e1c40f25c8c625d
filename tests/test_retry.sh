# rxe's go-back-N after a spurious retransmit timeout, at a paced rate.
#
# A retry resets the send queue to the first unacknowledged PSN while the
# ACKs of the first transmission are still on their way. When they come,
# they acknowledge packets beyond the WQE being resent, and stock rxe's
# completer drops such an ACK unless that WQE has been sent in full again.
# A QP paced more slowly than its retransmit timeout never gets that far:
# each timeout sends it back to the WQE's first packet, whose ACK is dropped
# in turn. The flow stops for good while every packet is answered (across
# guests, one ACC sender in three stuck at its floor: docs/vms.md). The
# glue's fix 0002 lets such an ACK move the completer past the WQE, and
# the requester skip what was acknowledged.
#
# Here: cc=fixed paces a flow at rate_hi while h0's RoCE transmit (the
# ACKs) is delayed far beyond the QP's timeout (-u 12: 16.8 ms); once
# retries have started the pace drops to rate_lo, whose packet gap exceeds
# the timeout; when the delayed ACKs are in and the delay is gone, the flow
# must move at rate_lo. Stock rxe moves nothing in that window.
test_retry_coalesced_ack() {
	local size=16384 iters=2000 timeout=12 rate_hi=20 rate_lo=1 delay_ms=2000 window_s=4
	local gap_us timeout_us client acked0 acked1 sent0 want moved i
	# acked: bytes acknowledged to h1's QPs so far (rxe_cc's per-QP stats).
	acked() { cat /sys/kernel/debug/rxe_cc/qps/rxe1-*/stats | awk '$1 == "acked_bytes" {s += $2} END {print s + 0}'; }
	# sent: h1's RoCE packets so far (a builtin read: polled).
	sent() { local n; read -r n </sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts && echo "$n"; }
	tb_load_rxe patched
	# An ACK per packet, as ACC asks: otherwise rxe asks for one per
	# message only, and at a gap past the timeout each packet would be
	# sent twice (the timeout resends it, and only the duplicate is ACKed).
	tb_load_cc cc=fixed ack_every=1
	tb_up 2
	export TB_REPORT_GBITS=0
	# The low rate must leave a gap between packets (4 KB MTU) longer than
	# the timeout (4.096 us << timeout), or the resend of a WQE completes.
	timeout_us=$(((4096 << timeout) / 1000))
	gap_us=$((4096 * 8 / rate_lo))
	((gap_us > timeout_us)) || fail "rate_lo $rate_lo Mb/s sends a packet every $gap_us us, within the $timeout_us us timeout"
	echo "$rate_hi" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server.txt" -s $size -n $iters -u $timeout || return 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client.txt" -s $size -n $iters -u $timeout &
	client=$!
	# Delay h0's transmit once the flow runs (before, perftest's TCP
	# exchange would wait on it too).
	for ((i = 0; i < 3000; i++)); do
		(($(sent) > 0)) && break
		sleep 0.01
	done
	(($(sent) > 0)) || fail "the client sent nothing in 30 s: $(tail -3 "$TEST_OUT/client.txt")" || return 1
	ip netns exec h0 tc qdisc add dev v0 root netem delay "${delay_ms}ms" limit 100000 || return 1
	sleep 0.5
	cat /sys/class/infiniband/rxe1/ports/1/hw_counters/completer_retry_err >"$TEST_OUT/retries-hi.txt"
	echo "$rate_lo" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	sleep "$((delay_ms / 1000 + 1))"
	ip netns exec h0 tc qdisc del dev v0 root || return 1
	sleep 1
	acked0=$(acked)
	sent0=$(sent)
	sleep "$window_s"
	acked1=$(acked)
	moved=$((acked1 - acked0))
	# Half the rate: under TCG an ACK now and then comes after the
	# timeout, and the retry costs a slot; stock rxe moves nothing.
	want=$((rate_lo * 1000000 / 8 * window_s / 2))
	info "retries before the drop to $rate_lo Mb/s: $(cat "$TEST_OUT/retries-hi.txt"); in ${window_s} s at $rate_lo Mb/s: $(($(sent) - sent0)) packets sent, $moved bytes acknowledged (half the rate: $want)"
	echo 400000 >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	wait "$client" || fail "client failed: $(tail -3 "$TEST_OUT/client.txt")" || return 1
	tb_wait_servers || fail "server failed" || return 1
	grep -v ':0$' /sys/class/infiniband/rxe*/ports/1/hw_counters/* >"$TEST_OUT/hw_counters.txt"
	assert_gt "retries while the ACKs were delayed" "$(cat "$TEST_OUT/retries-hi.txt")" 0 || return 1
	assert_gt "bytes acknowledged at $rate_lo Mb/s after the retries (half the rate)" "$moved" "$want" || return 1
	assert_eq "bytes moved" "$(tb_bw_bytes "$TEST_OUT/client.txt")" $((size * iters))
}

# The other side of that fix: only an ACK during a retry, of a packet sent
# before it, may move the completer. A stale or forged ACK past a WQE that
# is still being sent for the first time (cc=fixed at 1 Mb/s holds it
# mid-WQE, and -t 1 keeps that WQE the oldest; timeout 0 means no retry
# ever starts) is dropped, as by stock
# rxe, and every byte of every WQE still reaches the responder. Before the
# gate, such an ACK completed the WQE with its tail never sent.
test_retry_stale_ack() {
	local size=262144 iters=5 rate=1 gated qpn client rc=0
	tb_load_rxe patched
	tb_load_cc cc=fixed fixed_rate_mbps=$rate
	tb_up 2
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server.txt" -s $size -n $iters -u 0 -t 1 || return 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client.txt" -s $size -n $iters -u 0 -t 1 &
	client=$!
	gated=$(tb_qps_wait tx_gated 60)
	assert_gt "sends held at the gate (the first WQE is mid-way)" "$gated" 0 || return 1
	qpn=$(ls /sys/kernel/debug/rxe_cc/qps | sed -n 's/^rxe1-qp//p' | head -1)
	[ -n "$qpn" ] || fail "no QP of rxe1 in rxe_cc's debugfs" || return 1
	# 100 packets ahead: past the WQE's last packet (64 of 4 KB), and past
	# anything the QP has sent.
	python3 "$RXECC_TOP/tests/malformed.py" ack 1 "$qpn" 0 100 >"$TEST_OUT/ack.txt" 2>&1 ||
		{ cat "$TEST_OUT/ack.txt" >&2; fail "sending the ACK failed"; return 1; }
	info "$(cat "$TEST_OUT/ack.txt")"
	echo 400000 >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	# Unpaced, the rest takes about a second; a QP that skipped packets
	# the responder lacks waits forever (no retry timer).
	tb_wait_or_kill "$client" 60 $TB_PORT_BASE ||
		{ fail "the flow did not complete within 60 s of the forged ACK"; return 1; }
	wait "$client" || rc=$?
	[ "$rc" = 0 ] || fail "the client failed after the forged ACK (exit $rc): $(tail -3 "$TEST_OUT/client.txt")" || return 1
	tb_wait_servers || fail "server failed" || return 1
	# Every request byte reached the responder (rx_bytes of the destroyed
	# QPs: the responder's; the requester receives no request).
	assert_eq "request bytes the responder received" $((size * iters)) "$(tb_cc_total rx_bytes)"
}
