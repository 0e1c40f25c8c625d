# rmmod rxe_cc while traffic runs, then insmod it again: the flow completes
# (its QPs fall back to stock rxe, docs/architecture.md), the kernel stays
# clean, and QPs created after the reload attach to the new instance.

test_reload() {
	local size=65536
	tb_load_rxe patched
	tb_load_cc cc=none
	tb_up 2
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server.txt" -s $size -D 8
	sleep 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client.txt" -s $size -D 8 &
	local client=$! i
	# Until both QPs exist (perftest's set-up under TCG varies by seconds),
	# then a second of traffic.
	for ((i = 0; i < 300; i++)); do
		[ "$(ls /sys/kernel/debug/rxe_cc/qps | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	sleep 1
	ls /sys/kernel/debug/rxe_cc/qps >"$TEST_OUT/qps-before.txt"
	[ "$(wc -l <"$TEST_OUT/qps-before.txt")" = 2 ] || fail "expected 2 live QPs, saw: $(cat "$TEST_OUT/qps-before.txt")"
	rmmod rxe_cc || fail "rmmod rxe_cc during traffic failed"
	sleep 1
	tb_load_cc cc=none || fail "reload failed"
	local rc=0
	wait "$client" || rc=$?
	info "flow across the unload: exit $rc, $(tb_bw_gbits "$TEST_OUT/client.txt") Gb/s"
	# The QPs fell back to stock rxe: the flow goes on, it does not fail.
	[ "$rc" = 0 ] || fail "the flow across the unload failed (exit $rc): $(tail -2 "$TEST_OUT/client.txt")"
	tb_wait_servers || fail "the server across the unload failed"
	assert_gt "bandwidth across the reload" "$(tb_bw_gbits "$TEST_OUT/client.txt")" 0
	# The old QPs went back to stock rxe; the new instance has none yet.
	assert_eq "QPs on the new instance" 0 "$(tb_cc_total qps_created)"

	# New traffic attaches to the reloaded module.
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server2.txt" -s $size -n 200
	sleep 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client2.txt" -s $size -n 200 || fail "flow after reload failed"
	tb_wait_servers || fail "server after reload failed"
	assert_eq "QPs after reload" 2 "$(tb_cc_total qps_destroyed)"
	assert_eq "bytes acked after reload" $((size * 200)) "$(tb_cc_total acked_bytes)"
	# And a second unload with nothing running is clean too.
	rmmod rxe_cc
}

# The same with paced QPs: their hrtimers are live when rxe_cc goes, so the
# unload must cancel them before the module text disappears.
test_reload_paced() {
	local size=65536 rate=50
	# The debug kernel's guest carries about 2 Mb/s, where a 50 Mb/s pacer
	# never holds a packet and so never fires.
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || rate=1
	tb_load_rxe patched
	tb_load_cc cc=fixed fixed_rate_mbps=$rate
	tb_up 2
	tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server.txt" -s $size -D 6
	sleep 1
	tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client.txt" -s $size -D 6 &
	local client=$! fires=0 deadline=$((SECONDS + 30))
	# Until the pacer has fired: perftest's set-up under TCG takes from
	# 0.5 s to several, and once a fixed 2 s found no QP yet. By the clock,
	# not a count of polls: a poll took seconds on the debug kernel.
	while ((SECONDS < deadline)); do
		fires=$({ cat /sys/kernel/debug/rxe_cc/qps/*/stats 2>/dev/null || true; } |
			awk '$1 == "pacer_fires" {s += $2} END {print s + 0}')
		((fires > 0)) && break
		sleep 0.1
	done
	assert_gt "pacer fires before the unload (waited up to 30 s)" "$fires" 0
	rmmod rxe_cc || fail "rmmod rxe_cc with paced QPs failed"
	local rc=0
	wait "$client" || rc=$?
	info "paced flow across the unload: exit $rc, $(tb_bw_gbits "$TEST_OUT/client.txt") Gb/s after $fires timer fires"
	# Unpaced now, the flow goes on and completes.
	[ "$rc" = 0 ] || fail "the paced flow across the unload failed (exit $rc): $(tail -2 "$TEST_OUT/client.txt")"
	tb_wait_servers || fail "the paced flow's server failed"
	assert_gt "bandwidth across the unload" "$(tb_bw_gbits "$TEST_OUT/client.txt")" 0
	tb_load_cc cc=none || fail "reload failed"
}
