# Two namespaces, one ib_write_bw flow with rxe_cc cc=none: bandwidth is
# positive, and rxe_cc's counters account for exactly the bytes perftest moved.

#@ suite
test_throughput() {
	local size=65536 iters=${THROUGHPUT_ITERS:-1500}
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up bridge2
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/flow" -s $size -n $iters || fail "the flow failed"

	local bw moved
	bw=$(tb_bw_gbits "$TEST_OUT/flow-client.txt")
	moved=$(tb_bw_bytes "$TEST_OUT/flow-client.txt")
	[ -n "$bw" ] || fail "no bandwidth line in perftest output"
	assert_gt "bandwidth (Gb/s)" "$bw" 0
	assert_eq "perftest bytes" $((size * iters)) "$moved"

	# Both QPs are gone now, so their counters are in the totals.
	cat /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/totals.txt"
	assert_eq "QPs destroyed" 2 "$(tb_cc_total qps_destroyed)"
	assert_eq "bytes acked to the requester" "$moved" "$(tb_cc_total acked_bytes)"
	# The responder's hook sees every request before rxe's PSN check, so a
	# packet resent after rxe's retry timeout (on a loaded or debug kernel:
	# 102 of 24,000 packets on the debug kernel) is taken up twice; rxe
	# counts those as duplicate or out of sequence, each a full 4 KB packet.
	local again rx pkt
	again=$(rxe_taken_again 0)
	rx=$(tb_cc_total rx_bytes)
	pkt=$((rx / $(tb_cc_total rx_packets)))
	((again == 0)) || info "$again packets arrived again (retransmitted), $pkt B each"
	assert_eq "bytes taken up by the responder, less those taken up again" "$moved" $((rx - again * pkt))
	local tx
	tx=$(tb_cc_total tx_bytes)
	# Retransmissions may send some bytes twice, never fewer.
	awk -v t="$tx" -v m="$moved" 'BEGIN {exit !(t >= m && t <= m * 1.05)}' \
		|| fail "tx_bytes $tx is not within [moved, 1.05 x moved] ($moved)"
	info "bw ${bw} Gb/s; perftest moved $moved B; rxe_cc tx $tx B, acked $(tb_cc_total acked_bytes) B, $(tb_cc_total acks) ACKs"
}

# rxecc run switches rdma_rxe builds between runs (stock.toml: the stock
# build, then the patched one with rxe_cc) and puts the caller's modules
# and knobs back at the end; each run's rxe.txt names the build that ran,
# by the loaded module's build ID.
#@ suite
test_run_rxe_builds() {
	local out=$TEST_OUT/run exp=$RXECC_TOP/testbed/experiments/stock.toml
	tb_load_rxe patched
	tb_load_cc cc=none acc_t_us=12345
	rxecc run "$exp" --repetitions 1 --out "$out" >"$TEST_OUT/summary.txt" 2>"$TEST_OUT/run.txt" ||
		fail "rxecc run: $(grep -v '^rxecc: ' "$TEST_OUT/run.txt" | tail -3)"
	cat "$TEST_OUT/summary.txt" >&2
	assert_eq "build of the stock run" stock "$(cut -d' ' -f1 "$out/stock/rxe.txt")"
	assert_eq "build of the patched run" patched "$(cut -d' ' -f1 "$out/patched/rxe.txt")"
	assert_eq "build of the patched-alone run" patched-alone "$(cut -d' ' -f1 "$out/patched-alone/rxe.txt")"
	[ ! -e "$out/patched-alone/rxe_cc-totals.txt" ] || fail "the patched-alone run has rxe_cc counters"
	[ "$(cut -d' ' -f2 "$out/stock/rxe.txt")" != "$(cut -d' ' -f2 "$out/patched/rxe.txt")" ] ||
		fail "the two runs' rdma_rxe have one build ID"
	[ ! -e "$out/stock/rxe_cc-totals.txt" ] || fail "the stock run has rxe_cc counters"
	local bytes tx
	bytes=$(awk 'NR == 2 {print $5}' "$out/flows.txt")
	tx=$(awk '$1 == "tx_bytes" {print $2}' "$out/patched/rxe_cc-totals.txt")
	((${tx:-0} >= bytes)) || fail "rxe_cc sent ${tx:-no} bytes in the patched run, fewer than the flow's $bytes"
	local run
	for run in stock patched-alone patched; do
		assert_eq "$run: repetitions with a rate" 1 "$(jq -r ".[] | select(.run == \"$run\" and .metric == \"flow_mbps\") | .n" "$out/metrics.json")"
		assert_gt "$run: rate, Mb/s" "$(jq -r ".[] | select(.run == \"$run\" and .metric == \"flow_mbps\") | .median" "$out/metrics.json")" 0
	done
	assert_eq "stock over itself" 1 "$(jq -r '.[] | select(.run == "stock") | .of_baseline' "$out/metrics.json")"
	assert_eq "rdma_rxe's build ID after the run" "$(cut -d' ' -f2 "$out/patched/rxe.txt")" \
		"$(od -An -tx1 -j16 /sys/module/rdma_rxe/notes/.note.gnu.build-id | tr -d ' \n')"
	assert_eq "acc_t_us after the run" 12345 "$(cat /sys/module/rxe_cc/parameters/acc_t_us)"
	info "$(grep -A3 '^per run' "$TEST_OUT/summary.txt" | tail -2 | tr -s ' ' | tr '\n' ';')"
}

# QPs per host through rxecc run (scale.toml --qps): each sender's bytes
# split over Q QPs, every one of which completes without a retry; the
# run's CPU metrics measured over its traffic. ACC's period timers fire per
# QP; no CC has none.
#@ suite
test_run_qps() {
	local out=$TEST_OUT/run q=16 exp=$RXECC_TOP/testbed/experiments/scale.toml run
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$exp" --qps $q --runs none,acc --out "$out" >"$TEST_OUT/summary.txt" 2>"$TEST_OUT/run.txt" ||
		fail "rxecc run --qps $q: $(grep -v '^rxecc: ' "$TEST_OUT/run.txt" | tail -3)"
	cat "$TEST_OUT/summary.txt" >&2
	assert_eq "flows in the flow file" $q "$(head -1 "$out/flows.txt")"
	m() { jq -r ".[] | select(.label == \"$1\") | .$2" "$out/summary.json"; }
	for run in none acc; do
		assert_eq "$run: QPs that completed" $q "$(m $run flows)"
		assert_eq "$run: flows faster than the wire" 0 "$(m $run faster_than_wire)"
		assert_gt "$run: goodput, kb/s" "$(m $run all_mbps | jq '. * 1000 | floor')" 0
		assert_gt "$run: kernel CPU, % x 10" "$(m $run kernel_cpu_pct | jq '. * 10 | floor')" 0
		assert_gt "$run: kernel CPU under all of it, % x 10" 1000 "$(m $run kernel_cpu_pct | jq '. * 10 | floor')"
	done
	# scale.toml's 4.3 s ACK timeout: no QP times out waiting behind the
	# others under PAUSE, as they did with rdma_cm's 0.5 to 1 s
	# (docs/experiments.md); the path is lossless, so no NAK retries either.
	for run in none acc; do
		assert_eq "$run: the sender's retries" 0 \
			"$(awk '{for (i = 1; i < NF; i++) if ($i == "completer_retry_err") s += $(i + 1)} END {print s + 0}' "$out/$run/rxe-counters.txt")"
	done
	# Both may pace (the NIC's arbiter holds none's QPs too); only ACC has
	# period timers.
	local -a fires=()
	for run in none acc; do
		fires[${#fires[@]}]=$(awk '$1 == "period_fires" {print $2}' "$out/$run/rxe_cc-totals.txt")
	done
	assert_eq "none's period timer fires" 0 "${fires[0]}"
	assert_gt "acc's period timer fires" "${fires[1]:-0}" 0
	assert_gt "acc: timer fires per second" "$(m acc timer_fires_per_s | jq floor)" 0
	assert_gt "acc: rxe_cc's ns per second per QP" "$(m acc rxe_cc_us_per_qp_s | jq '. * 1000 | floor')" 0
	assert_eq "acc's kernel CPU against none's, tabled" 1 \
		"$(jq '[.[] | select(.run == "acc" and .metric == "kernel_cpu_pct" and .of_baseline != null)] | length' "$out/metrics.json")"
	info "$q QPs: $(grep -A4 '^per run' "$TEST_OUT/summary.txt" | tail -4 | tr -s ' ' | tr '\n' ';')"
}
