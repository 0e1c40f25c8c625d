# cc=acc in the kernel, on real traffic: the algorithm core's ACC runs in
# rxe_cc.ko with its period timer and pacer. Unmarked, it never halts; with
# every data packet CE-marked on the bridge port it classifies its periods
# congested and slows down hard (whether it also halts depends on timing:
# a halt needs a period that sent more than the next one acked).

acc_phase() { # <name> <debugfs line to wait for> <perftest length: -n N or -D seconds>
	local name=$1 want=$2 before=$TEST_OUT/$1.before
	shift 2
	cp /sys/kernel/debug/rxe_cc/totals "$before"
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$name" -s 65536 "$@" &
	local flow=$!
	# Snapshot the live QPs' debugfs until a QP shows <want> (10 s at most,
	# perftest's start-up included).
	for _ in $(seq 100); do
		cat /sys/kernel/debug/rxe_cc/qps/*/stats >"$TEST_OUT/$name-qps.txt" 2>/dev/null || true
		grep -q "$want" "$TEST_OUT/$name-qps.txt" && break
		sleep 0.1
	done
	wait "$flow" || fail "$name: flow failed"
	awk 'NR == FNR {b[$1] = $2; next} {print $1, $2 - b[$1]}' "$before" /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/$name"
}
ad() { awk -v k="$2" '$1 == k {print $2}' "$TEST_OUT/$1"; }

#@ suite
test_acc() {
	tb_load_rxe patched
	tb_load_cc cc=acc line_rate_mbps=1000 acc_t_us=2000
	rxecc testbed up bridge2

	acc_phase clean "^tx_packets [1-9]" -n 300
	grep -q "^cc acc" "$TEST_OUT/clean-qps.txt" || fail "no ACC QP in debugfs during the run"
	assert_eq "clean: bytes acked" $((300 * 65536)) "$(ad clean acked_bytes)"
	assert_eq "clean: one ACK per packet" "$(ad clean tx_packets)" "$(ad clean acks)"
	assert_gt "clean: period timer fired" "$(ad clean period_fires)" 0
	assert_eq "clean: halts" 0 "$(ad clean halts)"
	assert_eq "clean: CE echoed" 0 "$(ad clean echo_ce)"

	# Every packet CE with no real congestion is a pathological input: ACC
	# keeps taking its shrinking ACK rate as the available bandwidth. So
	# this phase runs for a fixed time and checks the mechanism, not speed.
	rxecc mark --dev p0 --mode ce
	acc_phase marked "^tx_packets [1-9]" -D 5
	assert_gt "marked: bytes acked" "$(ad marked acked_bytes)" 0
	assert_eq "marked: every ACK echoed CE" "$(ad marked acks)" "$(ad marked echo_ce)"
	assert_gt "marked: periods classified congested" "$(ad marked periods_congested)" 0
	assert_eq "clean: periods classified congested" 0 "$(ad clean periods_congested)"
	assert_gt "clean: periods classified uncongested" "$(ad clean periods_uncongested)" 0
	assert_gt "marked: sends held at the gate" "$(ad marked tx_gated)" 0
	local clean_bw marked_bw
	clean_bw=$(tb_bw_gbits "$TEST_OUT/clean-client.txt")
	marked_bw=$(tb_bw_gbits "$TEST_OUT/marked-client.txt")
	# A rate check: on the debug kernel (make test-debug) the flow is held
	# by the CPU, not by ACC (2.1 Mb/s unmarked there), so it is left out.
	if [ -n "${RXECC_DEBUG_KERNEL:-}" ]; then
		info "debug kernel: the rate under marks is not checked ($marked_bw against $clean_bw Gb/s unmarked)"
	else
		awk -v c="$clean_bw" -v m="$marked_bw" 'BEGIN {exit !(m * 4 < c)}' \
			|| fail "under marks ACC ran at $marked_bw Gb/s, not below a quarter of the unmarked $clean_bw Gb/s"
	fi
	rxecc mark --dev p0 --mode off
	info "clean: $(ad clean period_fires) periods, 0 halts, $(tb_bw_gbits "$TEST_OUT/clean-client.txt") Gb/s; all-CE for 5 s: $(ad marked periods_congested) congested periods, $marked_bw Gb/s, $(ad marked halts) halts, $(ad marked tx_gated) gated sends, $(ad marked acked_bytes) B acked, $(( $(ad marked rx_bytes) - $(ad marked acked_bytes) )) B taken up twice (retransmitted)"
}
