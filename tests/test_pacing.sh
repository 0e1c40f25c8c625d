# The transmit gate and the hrtimer pacer on real traffic: with cc=fixed the
# QP is held at the gate and kicked by its timer, so goodput follows the
# pinned rate. The gate must really stop the requester (tx_gated > 0, timer
# fires > 0), and the pacer must never run faster than the set rate.
#
# The pass band is wide on the low side (the guest shares a noisy host, and
# TCG timers fire late); `make bench` reports the exact accuracy.

test_pacing() {
	local size=65536 rate iters bw
	tb_load_rxe patched
	tb_load_cc cc=fixed
	tb_up 2
	export TB_REPORT_GBITS=0
	for rate in ${PACING_RATES:-50 100 200}; do
		echo "$rate" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
		# About 2 s of traffic at the set rate.
		iters=$((rate * 1000000 * 2 / 8 / size + 1))
		tb_write_bw_server 0 $TB_PORT_BASE "$TEST_OUT/server-$rate.txt" -s $size -n $iters
		sleep 1
		tb_write_bw_client 1 0 $TB_PORT_BASE "$TEST_OUT/client-$rate.txt" -s $size -n $iters \
			|| fail "client at $rate Mb/s failed: $(tail -3 "$TEST_OUT/client-$rate.txt")"
		tb_wait_servers || fail "server at $rate Mb/s failed"
		bw=$(tb_bw_mbit "$TEST_OUT/client-$rate.txt")
		[ -n "$bw" ] || fail "no bandwidth at $rate Mb/s"
		info "fixed_rate_mbps=$rate: goodput $bw Mb/s ($(awk -v b="$bw" -v r="$rate" 'BEGIN {printf "%+.1f%%", (b - r) * 100 / r}'))"
		awk -v b="$bw" -v r="$rate" 'BEGIN {exit !(b <= r * 1.03)}' || fail "goodput $bw Mb/s exceeds the pinned $rate Mb/s by more than 3%"
		awk -v b="$bw" -v r="$rate" 'BEGIN {exit !(b >= r * 0.75)}' || fail "goodput $bw Mb/s is below 75% of the pinned $rate Mb/s"
	done
	cat /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/totals.txt"
	assert_gt "sends held at the gate" "$(tb_cc_total tx_gated)" 0
	assert_gt "pacer timer fires" "$(tb_cc_total pacer_fires)" 0
	info "gate held $(tb_cc_total tx_gated) sends; timer fired $(tb_cc_total pacer_fires) times, mean lateness $(( $(tb_cc_total pacer_late_ns) / $(tb_cc_total pacer_fires) / 1000 )) us"
}
