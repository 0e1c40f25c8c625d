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
# glue's fix 0001 lets such an ACK move the completer past the WQE, and
# the requester skip what was acknowledged.
#
# Here (Lumina-style, experiment (b) of docs/switch.md), through `rxecc
# run` (testbed/experiments/livelock.toml): cc=fixed paces a flow of 16 KB
# messages at 20 Mb/s while the switch holds h0's packets (the ACKs) far
# beyond the QP's timeout (16.8 ms) by a delay rule at p0's ingress; once
# retries have started the pace drops to 1 Mb/s, whose packet gap exceeds
# the timeout; when the held ACKs are out and the rule is gone, the flow
# must move at that pace. The same run on rxe without the go-back-N fix must be
# stuck: the livelock, reproduced.
RETRY_EXP=$RXECC_TOP/testbed/experiments/livelock.toml
#@ suite
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
	for name in without-fix patched; do
		info "$name: retries until the held ACKs were out: $(get $name retries); in ${window} s at $rate Mb/s: $(get $name sent_pkts) packets sent, $(get $name acked_bytes) bytes acknowledged (half the pace: $want)"
		assert_gt "$name: retries until the held ACKs were out" "$(get $name retries)" 0
		assert_eq "$name: the switch's drops" 0 "$(get $name drops)"
		assert_gt "$name: ACKs the switch held" "$(psum "$d/$name/ports.jsonl" held_pkts)" 0
		assert_gt "$name: packets sent in the window" "$(get $name sent_pkts)" 0
		assert_eq "$name: the flow completed once the pace was lifted" 1 "$(get $name flows)"
	done
	assert_gt "patched: bytes acknowledged at $rate Mb/s after the retries (half the pace)" "$(get patched acked_bytes)" "$want"
	# The livelock: packets go, and no byte is acknowledged.
	assert_eq "without the go-back-N fix: bytes acknowledged while it resends" 0 "$(get without-fix acked_bytes)"
}

# The other side of that fix: only an ACK during a retry, of a packet sent
# before it, may move the completer, and the requester skips only PSNs
# below both the completer's and the highest it has sent. A stale or forged ACK past a WQE that
# is still being sent for the first time (cc=fixed at 1 Mb/s holds it
# mid-WQE, and -t 1 keeps that WQE the oldest; timeout 0 means no retry
# ever starts) is dropped, as by stock
# rxe, and every byte of every WQE still reaches the responder. Before the
# gate, such an ACK completed the WQE with its tail never sent.
#@ suite
test_retry_stale_ack() {
	local size=262144 iters=5 rate=1 gated qpn flow rc=0
	tb_load_rxe patched
	tb_load_cc cc=fixed fixed_rate_mbps=$rate
	rxecc testbed up bridge2
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/flow" -s $size -n $iters -u 0 -t 1 &
	flow=$!
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
	tb_wait_or_kill "$flow" 60 $TB_PORT_BASE ||
		{ fail "the flow did not complete within 60 s of the forged ACK"; return 1; }
	wait "$flow" || rc=$?
	[ "$rc" = 0 ] || fail "the flow failed after the forged ACK (exit $rc)" || return 1
	# Every request byte reached the responder (rx_bytes of the destroyed
	# QPs: the responder's; the requester receives no request).
	assert_eq "request bytes the responder received" $((size * iters)) "$(tb_cc_total rx_bytes)" || return 1
	rmmod rxe_cc || return 1
	# The same ACK inside the WQE's unsent part: stock rxe moves the
	# completer past the requester, which must send those packets anyway.
	# Without rxe_cc (the series must change nothing then), and with
	# cc=none from a send PSN just before the PSN space wraps, so that the
	# WQE and the forged PSN straddle it.
	stale_ack_in_wqe no-module 1000 || return 1
	tb_load_cc cc=none || return 1
	stale_ack_in_wqe cc-none 0xffffc0
}

# stale_ack_in_wqe <label> <send PSN>: one 1 MB WRITE (256 packets) of a
# pattern from h1 (rw_mix.py write-check, no retransmit timer) while
# netem holds h0's ACKs for 5 s: rxe stops the requester 128 PSNs past
# the last acknowledged one, mid-WQE. (Holding h1's packets instead stops
# nothing: netem orphans them, so rxe's count of skbs not yet out of the
# host falls at once.) An ACK 10 packets past the next PSN the requester
# would send then lands in the WQE's unsent part; the WRITE must complete
# with every chunk in place at h0.
stale_ack_in_wqe() {
	local label=$1 psn=$2 size=1048576 port=$((TB_PORT_BASE + 61)) out=$TEST_OUT/$1 server client qpn i \
		now=0 before=-1 rc=0
	ip netns exec h0 /usr/bin/python3 "$RXECC_TOP/tests/rw_mix.py" server rxe0 "$(tb_gid 0)" $port \
		2>"$out-server.txt" &
	server=$!
	for ((i = 0; i < 300; i++)); do
		tb_listening $server python3 $port && break
		tb_nap 0.1
	done
	ip netns exec h0 tc qdisc replace dev v0 root netem delay 5s limit 100000 || return 1
	ip netns exec h1 /usr/bin/python3 "$RXECC_TOP/tests/rw_mix.py" write-check rxe1 "$(tb_gid 1)" \
		"$(tb_ip 0)" $port $size "$psn" >"$out.json" 2>"$out-client.txt" &
	client=$!
	for ((i = 0; i < 300; i++)); do
		qpn=$(jq -r 'select(.qpn) | .qpn' "$out.json" 2>/dev/null | head -1)
		[ -n "$qpn" ] && break
		tb_nap 0.1
	done
	[ -n "$qpn" ] || fail "$label: rw_mix.py printed no QPN: $(tail -3 "$out-client.txt")" || return 1
	# Stopped: the next PSN stays put between two looks.
	for ((i = 0; i < 50 && now != before; i++)); do
		before=$now
		tb_nap 0.2
		now=$(rdma -j resource show qp link rxe1/1 lqpn "$qpn" | jq '.[0]["sq-psn"]')
	done
	info "$label: the requester stopped at PSN $(printf %#x "$now"), $((((now - psn) & 0xffffff))) packets into the WQE of $((size / 4096))"
	if ((((now - psn) & 0xffffff) >= size / 4096 - 10)); then
		kill "$client" "$server" 2>/dev/null
		wait "$client" "$server" 2>/dev/null
		ip netns exec h0 tc qdisc del dev v0 root
		fail "$label: the requester did not stop 10 packets or more before the WQE's end"
		return 1
	fi
	python3 "$RXECC_TOP/tests/malformed.py" ack 1 "$qpn" 0 10 >"$out-ack.txt" 2>&1 ||
		{ cat "$out-ack.txt" >&2; fail "$label: sending the ACK failed"; }
	info "$label: $(cat "$out-ack.txt")"
	wait "$client" || rc=$?
	ip netns exec h0 tc qdisc del dev v0 root
	if ((rc != 0)); then
		kill "$server" 2>/dev/null
		wait "$server"
		fail "$label: $(tail -1 "$out-client.txt")"
		return 1
	fi
	wait "$server" || fail "$label: the server failed: $(tail -3 "$out-server.txt")" || return 1
	info "$label: $(tail -1 "$out.json")"
	assert_eq "$label: the WRITE's chunks in place at the responder" true "$(tail -1 "$out.json" | jq .ok)"
}
