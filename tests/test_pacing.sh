# The transmit gate and the hrtimer pacer on real traffic: with cc=fixed the
# QP is held at the gate and kicked by its timer, so goodput follows the
# pinned rate. The gate must really stop the requester (tx_gated > 0, timer
# fires > 0), and the pacer must never run faster than the set rate.
#
# TCG timers fire late, by more on a loaded host: a held QP catches up on
# that (pacing_catchup_us) and the pacer counts what it could not
# (pacer_lost_ns). So the goodput must reach 90% of the rate less the share
# of the run lost; `make bench` reports the exact accuracy.

#@ suite debug=skip
test_pacing() {
	local size=65536 rate iters bw lost lost0=0 share try cap held held0=0 sent sent0=0
	# late_us: the pacer timers' mean lateness so far.
	late_us() { echo $(($(tb_cc_total pacer_late_ns) / ($(tb_cc_total pacer_fires) + 1) / 1000)); }
	tb_load_rxe patched
	tb_load_cc cc=fixed
	rxecc testbed up bridge2
	export TB_REPORT_GBITS=0
	local t0
	t0=$(date +%s%N)
	# What this guest carries through the same gated path with the pin far
	# above it: a pinned rate near that is the CPU's to miss, not the
	# pacer's (a CI host that carried 220 Mb/s unpinned reached 142 and
	# 173 of a pinned 200). Rates above half of it are judged at half.
	# unpinned <tag>: that rate, Mb/s.
	unpinned() {
		echo 400000 >/sys/module/rxe_cc/parameters/fixed_rate_mbps
		tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$1" -s $size -n 1000 || return 1
		tb_bw_mbit "$TEST_OUT/$1-client.txt"
	}
	# judged_cap: half of $cap, the highest rate judged, into $half.
	judged_cap() {
		half=$(awk -v c="$cap" 'BEGIN {printf "%d", c / 2}')
		((half >= 50)) || fail "the guest carries only $cap Mb/s unpinned: too slow to judge pacing"
	}
	# counters0: the counters a try is measured from.
	counters0() { lost0=$(tb_cc_total pacer_lost_ns) held0=$(tb_cc_total tx_gated) sent0=$(tb_cc_total tx_packets); }
	cap=$(unpinned cap) || fail "the unpinned run failed"
	assert_gt "unpinned rate (Mb/s)" "${cap%.*}" 0
	local rates=() half
	judged_cap
	for rate in ${PACING_RATES:-50 100 200}; do
		if ((rate > half)); then
			info "fixed_rate_mbps=$rate is above half of the unpinned $cap Mb/s: judged at $half"
			rate=$half
		fi
		[[ " ${rates[*]} " == *" $rate "* ]] || rates+=("$rate")
	done
	info "unpinned: $cap Mb/s; judged at ${rates[*]} Mb/s"
	counters0
	for rate in "${rates[@]}"; do
		# A second try only if the first fell short: once in a full suite a
		# 200 Mb/s run averaged 112 with its peak at 206 and only 6% of it
		# counted lost, a stall of the guest outside the pacer. A wrong
		# pacer falls short twice.
		for try in 1 2; do
			echo "$rate" >/sys/module/rxe_cc/parameters/fixed_rate_mbps
			# About 2 s of traffic at the set rate.
			iters=$((rate * 1000000 * 2 / 8 / size + 1))
			tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$rate" -s $size -n $iters || fail "the flow at $rate Mb/s failed"
			bw=$(tb_bw_mbit "$TEST_OUT/$rate-client.txt")
			[ -n "$bw" ] || fail "no bandwidth at $rate Mb/s"
			# Time the pacer lost beyond its catch-up (pacing_catchup_us), as
			# a share of the run: the rate falls short by that much, no more.
			lost=$lost0 held=$held0 sent=$sent0
			counters0
			lost=$((lost0 - lost)) held=$((held0 - held)) sent=$((sent0 - sent))
			share=$(awk -v l="$lost" -v b="$bw" -v n=$((size * iters)) 'BEGIN {printf "%.3f", l / 1e9 / (n * 8 / (b * 1e6))}')
			info "fixed_rate_mbps=$rate (try $try): goodput $bw Mb/s ($(awk -v b="$bw" -v r="$rate" 'BEGIN {printf "%+.1f%%", (b - r) * 100 / r}')); pacer timers $(late_us) us late on average, $(awk -v s="$share" 'BEGIN {printf "%.1f%%", s * 100}') of the run lost beyond the catch-up; $held of $sent packets held at the gate"
			awk -v b="$bw" -v r="$rate" 'BEGIN {exit !(b <= r * 1.03)}' || fail "goodput $bw Mb/s exceeds the pinned $rate Mb/s by more than 3%"
			awk -v b="$bw" -v r="$rate" -v s="$share" 'BEGIN {exit !(s <= 0.5 && b >= r * (1 - s) * 0.9)}' && break
			if [ "$try" = 1 ]; then
				# The guest's capacity drifts on a shared host, by a factor
				# of two within hours (docs/testing.md, "Measurements
				# behind the harness"): measured again beside the second
				# try, which is judged at half of it if that is lower.
				cap=$(unpinned "cap-$rate") || fail "the unpinned run failed"
				judged_cap
				if ((rate > half)); then
					info "the guest now carries $cap Mb/s unpinned: try 2 judged at $half"
					rate=$half
				fi
				counters0
				continue
			fi
			awk -v s="$share" 'BEGIN {exit !(s <= 0.5)}' || fail "the guest's timers lost more than half the run: too late to judge pacing"
			fail "goodput $bw Mb/s is below 90% of the pinned $rate Mb/s less the time lost, twice"
		done
	done
	cat /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/totals.txt"
	assert_gt "sends held at the gate" "$(tb_cc_total tx_gated)" 0
	assert_gt "pacer timer fires" "$(tb_cc_total pacer_fires)" 0
	info "gate held $(tb_cc_total tx_gated) sends; timer fired $(tb_cc_total pacer_fires) times, mean lateness $(late_us) us"
	# rxe_cc's own CPU (hook_ns, timer_ns): time the hooks and the timer
	# callbacks took. Both ran, and together they cannot exceed the CPU
	# time there was since the QPs came up.
	# Hook calls: tx_gate for each send and each hold, tx_done for each
	# send, rx_ack for each ACK, rx_data for each request received.
	local hook timer wall calls
	hook=$(tb_cc_total hook_ns) timer=$(tb_cc_total timer_ns)
	calls=$((2 * $(tb_cc_total tx_packets) + $(tb_cc_total tx_gated) + $(tb_cc_total acks) + $(tb_cc_total rx_packets)))
	wall=$(($(date +%s%N) - t0))
	info "rxe_cc's own CPU: $((hook / 1000)) us in hooks ($calls calls, $((hook / (calls + 1))) ns each), $((timer / 1000)) us in timer callbacks, over $((wall / 1000000)) ms"
	assert_gt "ns in rxe_cc's hooks" "$hook" 0
	assert_gt "ns in rxe_cc's timer callbacks" "$timer" 0
	assert_gt "CPU time there was ($(nproc) CPUs) against rxe_cc's own, ns" $((wall * $(nproc))) $((hook + timer))
}

# The NIC's arbiter (rxe_cc's nic_queue_pkts, which rxecc run sets for an
# experiment's hosts): an unpaced QP (cc=none) on a 100 Mb/s host link
# waits at the gate with a few packets in the host NIC's queue, where
# without it rxe hands the queue up to 64 packets. Same throughput.
#
# The arbiter is open loop: it keeps a wire clock at the line rate, and a
# port that lags behind its rate (its timers late under TCG on a loaded
# host) queues what that clock let through. Once in a full suite the
# arbiter's run delivered 75.5 Mb/s against the FIFO's 91.0 and its queue
# came near the FIFO's (docs/architecture.md). So a second try if the
# first misses; a wrong arbiter misses twice.
#@ suite
test_nic_arbiter() {
	local try judged=
	tb_load_rxe patched
	tb_load_cc cc=none
	for try in 1 2; do
		nic_arbiter_runs "$TEST_OUT/try$try" || return 1
		if nic_arbiter_judged "$try"; then
			judged=ok
			break
		fi
		if ((try == 1)); then info "try 1 missed (above): once more"; fi
	done
	rxecc modules unload
	[ -n "$judged" ]
}

# nic_arbiter_runs <dir>: one run with the arbiter, one without.
nic_arbiter_runs() {
	local exp=$1.toml
	mkdir -p "$1"
	cat >"$exp" <<-END
		description = "one unpaced WRITE on a 100 Mb/s host link, with and without the NIC's arbiter"
		topology = "dumbbell"
		hosts = 2
		rate_mbps = 100
		slowdown_table = false
		record_interval_ms = 5
		[report]
		bottleneck = "v1"
		period_us = 10000
		[workload]
		kind = "incast"
		senders = [1]
		receiver = 0
		size = $(tb_volume 4194304 16777216 1048576)
		period_s = 1
		rounds = 1
		[metrics]
		flows = { flow = 0 }
		[[run]]
		label = "arbiter"
		cc = "none"
		[[run]]
		label = "fifo"
		cc = "none"
		knobs = { nic_queue_pkts = 0 }
	END
	rxecc run "$exp" --out "$1/run" >"$1/stdout.txt" 2>"$1/run.txt" \
		|| fail "rxecc run: $(tail -3 "$1/run.txt")"
}

# nic_arbiter_judged <try>: the runs of that try against the bounds; a
# first try that misses says so, the second fails the test.
nic_arbiter_judged() {
	local run dir=$TEST_OUT/try$1 rep=$TEST_OUT/try$1/run/report.json check=assert_gt
	declare -A held p95 mean mbps
	for run in arbiter fifo; do
		held[$run]=$(awk '$1 == "tx_nic_held" {print $2}' "$dir/run/$run/rxe_cc-totals.txt")
		p95[$run]=$(sj "$rep" "$run" p95_queue_bytes)
		mean[$run]=$(sj "$rep" "$run" mean_queue_bytes)
		mbps[$run]=$(sj "$dir/run/summary.json" "$run" flow_mbps)
		info "try $1: $run: h1's NIC queue (v1) mean ${mean[$run]} B, p95 ${p95[$run]} B; ${held[$run]} sends held at the gate; ${mbps[$run]} Mb/s"
	done
	assert_gt "sends the arbiter held" "${held[arbiter]}" 0 || return 1
	assert_eq "sends held without it" 0 "${held[fifo]}" || return 1
	# A first try's miss is said, not failed.
	(($1 == 2)) || check=nic_arbiter_missed
	# Both queues from one run each, side by side: the arbiter's a small
	# fraction of the FIFO's, which sits at rxe's 64-skb cap. The arbiter's
	# peaks are the port's own lag under TCG, so its p95 has the looser
	# bound (ratios measured in docs/testing.md); the stock FIFO planted
	# as the default gives 1 for both.
	$check "the FIFO's p95 NIC queue against 2 x the arbiter's" "${p95[fifo]}" "$((2 * ${p95[arbiter]%.*}))" || return 1
	$check "the FIFO's mean NIC queue against 3 x the arbiter's" "${mean[fifo]}" "$((3 * ${mean[arbiter]%.*}))" || return 1
	$check "the arbiter's throughput against 0.9 x the FIFO's" "${mbps[arbiter]}" "$(awk -v f="${mbps[fifo]}" 'BEGIN {print 0.9 * f}')"
}

# nic_arbiter_missed <what> <a> <b>: assert_gt's test, said as info.
nic_arbiter_missed() {
	awk -v a="$2" -v b="$3" 'BEGIN {exit !(a + 0 > b + 0)}' || { info "$1: $2 is not > $3"; return 1; }
}
