# rmmod rxe_cc while traffic runs, then insmod it again: the flow completes
# (its QPs fall back to stock rxe, docs/architecture.md), the kernel stays
# clean, and QPs created after the reload attach to the new instance.

#@ suite
test_reload() {
	local size=65536 cc secs=4 sent
	# perftest -D counts only the middle of its run (a margin at each
	# end): on the debug kernel, where stock rxe takes seconds to resume
	# what the unload interrupted, a 4 s run counted no iteration.
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || secs=12
	tb_load_rxe patched
	rxecc testbed up bridge2
	# Each keeps different state that the unload must take away from a
	# live QP: `make test` takes one of each kind (none; ACC's period and
	# halt timers; DCQCN's CNP-driven timers; HPCC's window and INT),
	# `make test-long` every one (fixed's pacer alone, FNCC's and ICC's
	# INT variants).
	for cc in $(tb_volume "none acc dcqcn hpcc" "none fixed acc dcqcn hpcc fncc icc"); do
		tb_load_cc cc=$cc
		tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$cc" -s $size -D $secs &
		local flow=$!
		# Until data flows (perftest's set-up under TCG takes from half a
		# second to 40 s on the debug kernel), then a second of traffic.
		sent=$(tb_qps_wait tx_bytes 120)
		assert_gt "cc=$cc: bytes sent before the unload" "$sent" 0
		tb_nap 1
		ls /sys/kernel/debug/rxe_cc/qps >"$TEST_OUT/qps-$cc.txt"
		[ "$(wc -l <"$TEST_OUT/qps-$cc.txt")" = 2 ] || fail "cc=$cc: expected 2 live QPs, saw: $(cat "$TEST_OUT/qps-$cc.txt")"
		rmmod rxe_cc || fail "cc=$cc: rmmod rxe_cc during traffic failed"
		local rc=0
		wait "$flow" || rc=$?
		info "cc=$cc: flow across the unload: exit $rc, $(tb_bw_gbits "$TEST_OUT/$cc-client.txt") Gb/s"
		# The QPs fell back to stock rxe: the flow goes on, it does not fail.
		[ "$rc" = 0 ] || fail "cc=$cc: the flow across the unload failed (exit $rc)"
		assert_gt "cc=$cc: bandwidth across the unload" "$(tb_bw_gbits "$TEST_OUT/$cc-client.txt")" 0
	done

	tb_load_cc cc=none || fail "reload failed"
	# The old QPs went back to stock rxe; the new instance has none yet.
	assert_eq "QPs on the new instance" 0 "$(tb_cc_total qps_created)"
	# New traffic attaches to the reloaded module.
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/after" -s $size -n 200 || fail "flow after reload failed"
	assert_eq "QPs after reload" 2 "$(tb_cc_total qps_destroyed)"
	assert_eq "bytes acked after reload" $((size * 200)) "$(tb_cc_total acked_bytes)"
	# And a second unload with nothing running is clean too.
	rmmod rxe_cc
}

# A QP that rxe_cc holds back at the gate when it goes: only its pacer, now
# cancelled, would have rescheduled it, and with the QP's retry timer off
# (timeout 0 is infinite) nothing else does. The unload must kick it
# (rxe_glue 0001), and the message completes at stock rxe's speed.
#@ suite
test_reload_gated() {
	local size=1048576 n=5 rate=1 gated rc=0
	tb_load_rxe patched
	tb_load_cc cc=fixed fixed_rate_mbps=$rate
	rxecc testbed up bridge2
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/held" -s $size -n $n -u 0 &
	local flow=$!
	gated=$(tb_qps_wait tx_gated 60)
	assert_gt "sends held at the gate before the unload" "$gated" 0
	local sent
	sent=$(tb_qps_sum tx_bytes)
	rmmod rxe_cc || fail "rmmod rxe_cc with a held QP failed"
	# At the paced rate the rest would take (n·size − sent)·8/rate s;
	# stock rxe moves it in about a second. Wait half the paced time.
	local paced_s=$(((n * size - sent) * 8 / (rate * 1000000)))
	tb_wait_or_kill "$flow" $((paced_s / 2)) $TB_PORT_BASE || {
		fail "the held QP's message did not complete within $((paced_s / 2)) s of the unload (paced, it needed $paced_s s)"
		return 1
	}
	wait "$flow" || rc=$?
	info "held QP across the unload: $sent of $((n * size)) bytes sent before it, exit $rc"
	[ "$rc" = 0 ] || fail "the held QP's flow failed (exit $rc)"
}

# The same with paced QPs: their hrtimers are live when rxe_cc goes, so the
# unload must cancel them before the module text disappears.
#@ suite
test_reload_paced() {
	local size=65536 rate=50 secs=6
	# The debug kernel's guest carries about 17 Mb/s (virtual clock), too
	# little for a 50 Mb/s pacer to hold a packet, and so to fire.
	# And a longer run: test_reload says why.
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || { rate=1; secs=12; }
	tb_load_rxe patched
	tb_load_cc cc=fixed fixed_rate_mbps=$rate
	rxecc testbed up bridge2
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/paced" -s $size -D $secs &
	local flow=$! fires
	# Until the pacer has fired: perftest's set-up under TCG takes from
	# 0.5 s to 40 s (debug kernel). By the clock, not a count of polls: a
	# poll took seconds on the debug kernel.
	fires=$(tb_qps_wait pacer_fires 120)
	assert_gt "pacer fires before the unload (waited up to 120 s)" "$fires" 0
	rmmod rxe_cc || fail "rmmod rxe_cc with paced QPs failed"
	local rc=0
	wait "$flow" || rc=$?
	info "paced flow across the unload: exit $rc, $(tb_bw_gbits "$TEST_OUT/paced-client.txt") Gb/s after $fires timer fires"
	# Unpaced now, the flow goes on and completes.
	[ "$rc" = 0 ] || fail "the paced flow across the unload failed (exit $rc)"
	assert_gt "bandwidth across the unload" "$(tb_bw_gbits "$TEST_OUT/paced-client.txt")" 0
	tb_load_cc cc=none || fail "reload failed"
}
