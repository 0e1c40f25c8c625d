# rxe_cc's module parameters: bad values fail insmod or are refused by sysfs
# with EINVAL, and the old value stays.

#@ suite
test_params() {
	local p=/sys/module/rxe_cc/parameters len
	# rdma_rxe's gid_tbl_len (rxe_glue features/0002): out of 2..1024, no load.
	for len in 1 1025; do
		if TB_RXE_GID_TBL_LEN=$len tb_load_rxe patched 2>/dev/null; then fail "insmod rdma_rxe gid_tbl_len=$len succeeded"; fi
		dmesg | grep -q "gid_tbl_len=$len: must be 2 to 1024" || fail "no message for gid_tbl_len=$len"
	done
	tb_load_rxe patched
	assert_eq "rdma_rxe's gid_tbl_len" "${TB_RXE_GID_TBL_LEN:-16}" "$(cat /sys/module/rdma_rxe/parameters/gid_tbl_len)"

	# An unknown algorithm fails the load and names the valid ones.
	if tb_load_cc cc=bogus 2>"$TEST_OUT/insmod.err"; then
		fail "insmod cc=bogus succeeded"
	fi
	dmesg | grep -q "unknown cc 'bogus'; valid names: none, fixed, acc" || fail "no message listing valid names"
	[ ! -d /sys/module/rxe_cc ] || fail "rxe_cc loaded after a bad cc"
	if tb_load_cc line_rate_mbps=0 2>/dev/null; then fail "insmod line_rate_mbps=0 succeeded"; fi

	tb_load_cc cc=none line_rate_mbps=250
	assert_eq "cc" none "$(cat $p/cc)"
	assert_eq "line_rate_mbps" 250 "$(cat $p/line_rate_mbps)"
	[ "$(stat -c %a $p/cc)" = 644 ] || fail "cc is not writable (mode $(stat -c %a $p/cc))"

	# Bad writes: refused with EINVAL, old value kept.
	local bad
	for bad in bogus "" "none2"; do
		if param_write cc "$bad"; then fail "cc accepted '$bad'"; fi
		grep -q "Invalid argument" "$TEST_OUT/write.err" || fail "cc '$bad': not EINVAL: $(cat "$TEST_OUT/write.err")"
		assert_eq "cc after bad write '$bad'" none "$(cat $p/cc)"
	done
	for bad in 0 -1 abc 400001 99999999999 1.5; do
		if param_write line_rate_mbps "$bad"; then fail "line_rate_mbps accepted '$bad'"; fi
		grep -q "Invalid argument" "$TEST_OUT/write.err" || fail "line_rate_mbps '$bad': not EINVAL"
		assert_eq "line_rate_mbps after bad write '$bad'" 250 "$(cat $p/line_rate_mbps)"
	done

	# Every knob: a value past each end of its range is refused.
	local knob lo hi old n=0
	while read -r knob lo hi; do
		n=$((n + 1))
		old=$(cat $p/$knob)
		for bad in $((lo - 1)) $((hi + 1)) x; do
			[ "$bad" -ge 0 ] 2>/dev/null || [ "$bad" = x ] || continue
			if param_write "$knob" "$bad"; then fail "$knob accepted '$bad'"; fi
			assert_eq "$knob after bad write '$bad'" "$old" "$(cat $p/$knob)"
		done
		param_write "$knob" "$hi" || fail "$knob refused its maximum $hi"
		param_write "$knob" "$old"
	done < <(cc_knob_ranges)
	param_write cc dcqcn || fail "cc refused dcqcn"
	param_write cc acc || fail "cc refused acc"
	param_write cc fixed || fail "cc refused fixed"
	param_write cc hpcc || fail "cc refused hpcc"
	param_write cc fncc || fail "cc refused fncc"
	param_write cc icc || fail "cc refused icc"
	# The list above is complete: a new knob gets its range checked too.
	local known extra
	known=$(cc_knob_ranges | awk '{print $1}' | sort | tr '\n' ' ')
	extra=$(find $p -mindepth 1 -maxdepth 1 ! -name cc -printf '%f\n' | sort | tr '\n' ' ')
	assert_eq "knobs in sysfs (less cc) vs. cc_knob_ranges" "$known" "$extra"

	# Good writes take effect.
	param_write line_rate_mbps 400000 || fail "line_rate_mbps refused 400000"
	assert_eq "line_rate_mbps" 400000 "$(cat $p/line_rate_mbps)"
	param_write cc none || fail "cc refused none"
	info "bad values refused: insmod rdma_rxe gid_tbl_len=1 and 1025, rxe_cc cc=bogus and line_rate_mbps=0; bad writes to cc, line_rate_mbps and all $n knobs, each at both ends of its range"
}

# rdma_rxe's in-flight limits (rxe_glue features/0003): refused out of
# range, and what they limit. One 8 MB WRITE over an 80 ms round trip at
# 100 Mb/s (a BDP of about 250 packets): under the default 128 PSNs it is
# window-bound, at most 128 packets per round trip; with both limits at
# 512 it fills the link. The experiment's rxe_params set them for one run
# and put them back after. A DCQCN run under the defaults checks that its
# control periods end on time while the PSN window stops the requester
# (the kick's poll hook, cc/0006).
#@ suite debug=skip
test_rxe_inflight_limits() {
	local p=/sys/module/rdma_rxe/parameters name bad d_us=20000 rate=100 exp=$TEST_OUT/long.toml
	# DCQCN's control period, well inside the round trip.
	local period_us=$((d_us / 4))
	tb_load_rxe patched
	for name in max_unacked_psns:1:1023:128 max_inflight_skbs:4:4096:64; do
		IFS=: read -r name lo hi def <<<"$name"
		assert_eq "$name's default" "$def" "$(cat $p/$name)"
		for bad in $((lo - 1)) $((hi + 1)) x; do
			if echo "$bad" 2>/dev/null >$p/$name; then fail "$name accepted '$bad'"; fi
			assert_eq "$name after bad write '$bad'" "$def" "$(cat $p/$name)"
		done
	done
	tb_load_cc cc=none
	cat >"$exp" <<-END
		description = "one WRITE over an 80 ms round trip, under rxe's default and raised in-flight limits"
		topology = "dumbbell"
		hosts = 2
		rate_mbps = $rate
		links = [{ a = "h0", b = "sw0", delay_us = $d_us }, { a = "h1", b = "sw0", delay_us = $d_us }]
		slowdown_table = false
		[workload]
		kind = "incast"
		senders = [1]
		receiver = 0
		size = 8388608
		period_s = 1
		rounds = 1
		[metrics]
		flows = { flow = 0 }
		[[run]]
		label = "default"
		cc = "none"
		[[run]]
		label = "raised"
		cc = "none"
		rxe_params = { max_unacked_psns = 512, max_inflight_skbs = 512 }
		[[run]]
		label = "dcqcn"
		cc = "dcqcn"
		knobs = { dce_tcp_rtt = $period_us, rpg_time_reset = $period_us }
	END
	rxecc run "$exp" --out "$TEST_OUT/run" >"$TEST_OUT/stdout.txt" 2>"$TEST_OUT/run.txt" \
		|| fail "rxecc run: $(tail -3 "$TEST_OUT/run.txt")"
	assert_eq "max_unacked_psns after the runs" 128 "$(cat $p/max_unacked_psns)"
	assert_eq "max_inflight_skbs after the runs" 64 "$(cat $p/max_inflight_skbs)"
	rxecc modules unload
	local sum=$TEST_OUT/run/summary.json def raised bound
	def=$(sj "$sum" default flow_mbps)
	raised=$(sj "$sum" raised flow_mbps)
	# 128 packets of 4096 B per round trip of at least four links' delay.
	bound=$(awk -v d=$d_us 'BEGIN {printf "%.1f", 128 * 4096 * 8 / (4 * d)}')
	info "one flow, $rate Mb/s, $((4 * d_us / 1000)) ms round trip: $def Mb/s under 128 PSNs (bound $bound), $raised Mb/s under 512"
	awk -v x="$def" -v b="$bound" 'BEGIN {exit !(x <= b)}' || fail "$def Mb/s under 128 PSNs: above the window's bound $bound"
	awk -v x="$raised" -v y="$def" 'BEGIN {exit !(x >= 1.5 * y)}' || fail "raised limits: $raised Mb/s, not 1.5 x $def"
	# The PSN window stops the requester before its gate for most of each
	# round trip; a period that ends then must run at once (the kick's
	# poll), not at the next ACK, up to a round trip later.
	local tot=$TEST_OUT/run/dcqcn/rxe_cc-totals.txt runs late
	runs=$(awk '$1 == "period_runs" {print $2}' "$tot")
	late=$(awk '$1 == "period_late_ns" {print $2}' "$tot")
	[ "${runs:-0}" -gt 0 ] || { fail "DCQCN ran no control period"; return 1; }
	late=$((late / runs / 1000))
	info "DCQCN under the PSN window: $runs periods of $period_us us, $late us late on average"
	assert_gt "half a period (us) against DCQCN's mean period lateness" "$((period_us / 2))" "$late"
}
