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
