# A 4->1 incast: four ib_write_bw clients (h1..h4) into one server
# namespace (h0), all through the bridge, with rxe_cc cc=none. Every flow
# completes and reports a positive bandwidth.

#@ suite
test_incast() {
	local size=65536 iters=${INCAST_ITERS:-500} i bw
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up bridge5
	tb_incast 4 "$TEST_OUT" -s $size -n $iters || fail "not every flow completed"
	for ((i = 1; i <= 4; i++)); do
		bw=$(tb_bw_gbits "$TEST_OUT/client$i.txt")
		[ -n "$bw" ] || fail "flow $i: no bandwidth line"
		assert_gt "flow $i bandwidth" "$bw" 0
		assert_eq "flow $i bytes" $((size * iters)) "$(tb_bw_bytes "$TEST_OUT/client$i.txt")"
		info "flow h$i->h0: $bw Gb/s"
	done
	assert_eq "QPs destroyed" 8 "$(tb_cc_total qps_destroyed)"
	assert_eq "bytes acked" $((4 * size * iters)) "$(tb_cc_total acked_bytes)"
}
