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
# Here (Lumina-style, experiment (b) of docs/switch.md), through `rxecc
# run` (testbed/experiments/livelock.toml): cc=fixed paces a flow of 16 KB
# messages at 20 Mb/s while the switch holds h0's packets (the ACKs) far
# beyond the QP's timeout (16.8 ms) by a delay rule at p0's ingress; once
# retries have started the pace drops to 1 Mb/s, whose packet gap exceeds
# the timeout; when the held ACKs are out and the rule is gone, the flow
# must move at that pace. The same run on rxe without fix 2 must be
# stuck: the livelock, reproduced.
RETRY_EXP=$RXECC_TOP/testbed/experiments/livelock.toml
test_retry_coalesced_ack() {
	local d=$TEST_OUT/livelock rate window want timeout_us gap_us name
	# The low pace must leave a gap between packets (4 KB MTU) longer than
	# the timeout (4.096 us << ack_timeout), or the resend of a message
	# completes.
	# The events, by their place in the file: 1 the low pace, 3 and 4 the
	# window's snapshots.
	rate=$(rxecc experiment get "$RETRY_EXP" events.1.knobs.fixed_rate_mbps)
	timeout_us=$(((4096 << $(rxecc experiment get "$RETRY_EXP" ack_timeout)) / 1000))
	gap_us=$((4096 * 8 / rate))
	((gap_us > timeout_us)) || fail "the low pace, $rate Mb/s, sends a packet every $gap_us us, within the $timeout_us us timeout"
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RETRY_EXP" --out "$d" >"$TEST_OUT/run.txt" 2>"$TEST_OUT/run.log" ||
		fail "rxecc run livelock.toml: $(grep -v '^rxecc run: /' "$TEST_OUT/run.log" | tail -3)"
	get() { sj "$d/summary.json" "$1" "$2"; }
	window=$(jq -n "$(rxecc experiment get "$RETRY_EXP" events.4.t_s) - $(rxecc experiment get "$RETRY_EXP" events.3.t_s)")
	# Half the pace: under TCG an ACK now and then comes after the
	# timeout, and the retry costs a slot.
	want=$(awk -v r="$rate" -v w="$window" 'BEGIN {printf "%d", r * 1e6 / 8 * w / 2}')
	for name in without-fix2 patched; do
		info "$name: retries until the held ACKs were out: $(get $name retries); in ${window} s at $rate Mb/s: $(get $name sent_pkts) packets sent, $(get $name acked_bytes) bytes acknowledged (half the pace: $want)"
		assert_gt "$name: retries until the held ACKs were out" "$(get $name retries)" 0
		assert_eq "$name: the switch's drops" 0 "$(get $name drops)"
		assert_gt "$name: ACKs the switch held" "$(psum "$d/$name/ports.jsonl" held_pkts)" 0
		assert_gt "$name: packets sent in the window" "$(get $name sent_pkts)" 0
		assert_eq "$name: the flow completed once the pace was lifted" 1 "$(get $name flows)"
	done
	assert_gt "patched: bytes acknowledged at $rate Mb/s after the retries (half the pace)" "$(get patched acked_bytes)" "$want"
	# The livelock: packets go, and no byte is acknowledged.
	assert_eq "without fix 2: bytes acknowledged while it resends" 0 "$(get without-fix2 acked_bytes)"
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
	rxecc testbed up bridge2
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
