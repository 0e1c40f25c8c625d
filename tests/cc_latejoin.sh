# FNCC's late joiner (its paper's Fig. 13, scaled): on `dumbbell`, h1
# sends to h0 alone until it holds the bottleneck; then h2 joins. How soon
# does h1's flow first slow down after h2's first packet? FNCC's INT rides
# on the ACKs' way back, so it should hear of the joiner sooner than HPCC,
# whose records travel with the data and come back an RTT later (the
# paper: 300 us against 330 us at 100 G). Uses the incast experiment's
# topology and knobs (cc_incast.sh); `rxecc record` samples every QP's rate every CCL_INTERVAL_MS.

CCL_INTERVAL_MS=${CCL_INTERVAL_MS:-2}
# ib_send_bw sleeps on completion events (-e; ib_write_bw cannot) instead
# of polling, which would starve the switch's qdisc timers on two vCPUs.
# -u 20: see SW_PERF in test_switch.sh.
CCL_PERF=(-s 65536 -u 20 -e)

# ccl_run <cc> <out>: one run; the summary is cc_latejoin.py's.
ccl_run() {
	# shellcheck disable=SC2034 # TB_BW_TOOL: read by tb_write_bw_server/client
	local cc=$1 out=$2 rec rc=0 pid TB_BW_TOOL=ib_send_bw
	tb_fresh_dir "$out"
	echo "==> late joiner with cc=$cc (results in $out)" >&2
	tb_load_rxe patched || return 1
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(cci_knobs "$cc") || return 1
	cci_topology "$cc" "$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	tb_write_bw_server 0 $((TB_PORT_BASE + 1)) "$out/server1.txt" "${CCL_PERF[@]}" -n 300 || rc=1
	tb_write_bw_server 0 $((TB_PORT_BASE + 2)) "$out/server2.txt" "${CCL_PERF[@]}" -n 100 || rc=1
	rxecc record --out "$out/rec" --interval-ms "$CCL_INTERVAL_MS" 2>"$out/record.log" &
	rec=$!
	sleep 0.5
	tb_write_bw_client 1 0 $((TB_PORT_BASE + 1)) "$out/client1.txt" "${CCL_PERF[@]}" -n 300 &
	pid=$!
	# h1 alone for 2 s: long past its start-up, well before its end.
	sleep 2
	tb_write_bw_client 2 0 $((TB_PORT_BASE + 2)) "$out/client2.txt" "${CCL_PERF[@]}" -n 100 || rc=1
	wait "$pid" || rc=1
	kill -INT "$rec"
	wait "$rec" || { cat "$out/record.log" >&2; rc=1; }
	tb_wait_servers || rc=1
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	rmmod rxecc_switch 2>/dev/null || true
	return $rc
}
