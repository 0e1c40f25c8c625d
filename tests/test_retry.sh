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
# Here (Lumina-style, experiment (b) of docs/switch.md): cc=fixed paces a
# flow at rate_hi while the switch holds h0's RoCE packets (the ACKs) far
# beyond the QP's timeout (-u 12: 16.8 ms), by a delay rule at p0's
# ingress; once retries have started the pace drops to rate_lo, whose
# packet gap exceeds the timeout; when the held ACKs are out and the rule
# is gone, the flow must move at rate_lo. The same run on rxe without fix
# 2 must be stuck: the livelock, reproduced.
# retry_delayed_acks <rdma_rxe: patched or without-fix2>: writes
# "<retries> <bytes acked in the window> <packets sent in it>" to
# $TEST_OUT/<rdma_rxe>.result; 0 if the flow then completed.
retry_delayed_acks() {
	local size=16384 iters=2000 timeout=12 delay_ms=2000 client acked0 sent0 i rc=0
	# acked: bytes acknowledged to h1's QPs so far (rxe_cc's per-QP stats).
	acked() { cat /sys/kernel/debug/rxe_cc/qps/rxe1-*/stats | awk '$1 == "acked_bytes" {s += $2} END {print s + 0}'; }
	# sent: h1's RoCE packets so far (a builtin read: polled).
	sent() { local n; read -r n </sys/class/infiniband/rxe1/ports/1/hw_counters/sent_pkts && echo "$n"; }
	tb_load_rxe "$1"
	# An ACK per packet, as ACC asks: otherwise rxe asks for one per
	# message only, and at a gap past the timeout each packet would be
	# sent twice (the timeout resends it, and only the duplicate is ACKed).
	tb_load_cc cc=fixed ack_every=1
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 1000
	rxecc port attach --dev p1 --rate-mbps 1000
	export TB_REPORT_GBITS=0
	echo "$RETRY_RATE_HI" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/$1-server.txt" -s $size -n $iters -u $timeout || return 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/$1-client.txt" -s $size -n $iters -u $timeout &
	client=$!
	for ((i = 0; i < 3000; i++)); do
		(($(sent) > 0)) && break
		sleep 0.01
	done
	(($(sent) > 0)) || { echo "the client sent nothing in 30 s: $(tail -3 "$TEST_OUT/$1-client.txt")" >&2; return 1; }
	rxecc port inject --dev p0 --action delay --delay-us $((delay_ms * 1000)) 2>/dev/null || return 1
	sleep 0.5
	cat /sys/class/infiniband/rxe1/ports/1/hw_counters/completer_retry_err >"$TEST_OUT/$1-retries.txt"
	echo "$RETRY_RATE_LO" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	sleep "$((delay_ms / 1000 + 1))"
	rxecc port inject --dev p0 --clear
	# The ACKs held before the rule went are out after one more delay.
	sleep "$((delay_ms / 1000 + 1))"
	rxecc port stats --dev p0 --json >"$TEST_OUT/$1-p0.json"
	rxecc port stats --dev p1 --json >"$TEST_OUT/$1-p1.json"
	acked0=$(acked)
	sent0=$(sent)
	sleep "$RETRY_WINDOW_S"
	echo "$(cat "$TEST_OUT/$1-retries.txt") $(($(acked) - acked0)) $(($(sent) - sent0))" >"$TEST_OUT/$1.result"
	# Unpaced, the rest goes at once (stock go-back-N too: each WQE is
	# resent in full before its ACKs come).
	echo 400000 >/sys/module/rxe_cc/parameters/fixed_rate_mbps
	tb_wait_or_kill "$client" 120 $TB_PORT_BASE || rc=1
	wait "$client" || rc=1
	tb_wait_servers || rc=1
	grep -v ':0$' /sys/class/infiniband/rxe*/ports/1/hw_counters/* >"$TEST_OUT/$1-hw_counters.txt"
	return $rc
}
RETRY_RATE_HI=20
RETRY_RATE_LO=1
RETRY_WINDOW_S=4
test_retry_coalesced_ack() {
	local timeout_us gap_us want r moved sent name rc
	# The low rate must leave a gap between packets (4 KB MTU) longer than
	# the timeout (4.096 us << 12), or the resend of a WQE completes.
	timeout_us=$(((4096 << 12) / 1000))
	gap_us=$((4096 * 8 / RETRY_RATE_LO))
	((gap_us > timeout_us)) || fail "rate_lo $RETRY_RATE_LO Mb/s sends a packet every $gap_us us, within the $timeout_us us timeout"
	# Half the rate: under TCG an ACK now and then comes after the
	# timeout, and the retry costs a slot.
	want=$((RETRY_RATE_LO * 1000000 / 8 * RETRY_WINDOW_S / 2))
	for name in without-fix2 patched; do
		rc=0
		retry_delayed_acks $name || rc=$?
		read -r r moved sent <"$TEST_OUT/$name.result" || fail "$name: the run did not get to its window" || return 1
		info "$name: retries while the ACKs were held: $r; in ${RETRY_WINDOW_S} s at $RETRY_RATE_LO Mb/s: $sent packets sent, $moved bytes acknowledged (half the rate: $want)"
		assert_gt "$name: retries while the ACKs were held" "$r" 0
		assert_eq "$name: p0's switch drops" 0 "$(rxecc port sum "$TEST_OUT/$name-p0.json" drops)"
		assert_gt "$name: ACKs p1 held" "$(rxecc port sum "$TEST_OUT/$name-p1.json" held_pkts)" 0
		assert_gt "$name: packets sent in the window" "$sent" 0
		if [ $name = patched ]; then
			assert_gt "patched: bytes acknowledged at $RETRY_RATE_LO Mb/s after the retries (half the rate)" "$moved" "$want"
			assert_eq "patched: the flow completed" 0 "$rc"
			assert_eq "patched: bytes moved" "$(tb_bw_bytes "$TEST_OUT/$name-client.txt")" $((16384 * 2000))
		else
			# The livelock: packets go, and no byte is acknowledged.
			assert_eq "without fix 2: bytes acknowledged while it resends" 0 "$moved"
			tb_reset
		fi
	done
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
