# The congestion-control incast (the ACC paper's Fig. 9, scaled): N senders
# (h1..hN) into h0 on `dumbbell`, under one rxe_cc algorithm, recorded by
# `rxecc record`. Shared by make demo, make bench and test_cc_incast.
#
# The switch marks as each algorithm expects: TCD (CE/UE) for acc, RED on
# the queue for dcqcn, nothing for none, and stamps INT for hpcc, fncc and
# icc. Knobs:
# docs/experiments.md.

# The senders' links run at dumbbell's 100 Mb/s (rxe_cc's line_rate_mbps);
# the bottleneck, h0's link, at 40 Mb/s: well below the 60-70 Mb/s that
# four flows reach in the guest, so that the link, not the CPU, limits.
# CCI_LINE_MBPS=40 runs every link at the bottleneck's rate, as on the
# paper's testbed, where RI is a smaller share of C (docs/experiments.md).
CCI_RATE_MBPS=${CCI_RATE_MBPS:-40}
CCI_LINE_MBPS=${CCI_LINE_MBPS:-100}
# ACC's T: about 3 packets per flow per period at the fair share, as on the
# paper's testbed (4 flows at 10 Gb/s, T = 50 us: 3.8 packets). HPCC's T
# too: its window can go no lower than one packet, so at a T of the
# guest's real RTT (about 1 ms) a flow could not go below 4 KB per ms,
# 33 Mb/s, four times its fair share; at 10 ms the fair share is 3 packets.
CCI_T_US=${CCI_T_US:-10000}
# TCD's CE threshold is half of dumbbell's PFC XOFF (32 KB), so that the
# senders hear of the queue before the ingress ports pause.
CCI_TCD='tcd = { thresh_bytes = 16384, max_ton_us = 3000, stall_us = 5000 }'
CCI_RED='red = { kmin_bytes = 5120, kmax_bytes = 204800, pmax_permille = 200 }'

# ib_send_bw sleeps on completion events (-e; ib_write_bw cannot) instead
# of polling: eight polling processes starve the switch's qdisc timers on
# two vCPUs (a third of the bottleneck's service time was lost). -u 20: see
# SW_PERF in test_switch.sh.
# (cci_run sets TB_BW_TOOL for itself only: other tests keep ib_write_bw.)
CCI_PERF=(-s 65536 -u 20 -e)

# DCQCN's timers scaled to the bottleneck's packet rate, not just its RTT:
# at its fair share (10 Mb/s, a 4 KB packet every 3.3 ms) and ~10% marks a
# flow gets a CNP every ~30 ms, so with the module's 1.1 ms timers it
# recovers dozens of times between two CNPs and never comes down. In the
# paper's regime the CNP interval and the timers are about equal.
read -ra CCI_DCQCN_KNOBS <<<"${CCI_DCQCN_KNOBS:-rpg_time_reset=20000 dce_tcp_rtt=20000}"
# ICC's Q_d, the queue it keeps below PFC's threshold: half of dumbbell's
# XOFF (32 KB per ingress port), as TCD's threshold for ACC.
CCI_ICC_QD=${CCI_ICC_QD:-16384}
# Any other rxe_cc parameters, for every algorithm (e.g. pacing_burst_us=0).
CCI_KNOBS=${CCI_KNOBS:-}

# cci_topology <cc> <file>: dumbbell with that algorithm's marking.
cci_topology() {
	local mark=off extra=
	case $1 in
	acc) mark=tcd extra=$CCI_TCD ;;
	dcqcn) mark=red extra=$CCI_RED ;;
	hpcc | fncc) extra="int = \"$1\"" ;;
	# ICC's 5 us between queue-growth samples and 15 us between feedbacks,
	# at its paper's T of 13 us, scaled to CCI_T_US.
	icc) extra="int = \"icc\"\\nicc = { sample_us = $((CCI_T_US * 5 / 13)), period_us = $((CCI_T_US * 15 / 13)) }" ;;
	esac
	awk -v mark="$mark" -v extra="$extra" '
		/^\[/ {defaults = ($0 == "[defaults]")}
		defaults && /^rate_mbps = / {print "rate_mbps = " line; next}
		{print}
		/^xon_bytes = / && !done {print "mark = \"" mark "\""; if (extra != "") print extra; done = 1}
		/^a = "h0"$/ {print "rate_mbps = " rate}
	' rate="$CCI_RATE_MBPS" line="$CCI_LINE_MBPS" "$RXECC_TOP/testbed/topologies/dumbbell.toml" >"$2"
	grep -q "^mark = \"$mark\"" "$2" && grep -q "^rate_mbps = $CCI_RATE_MBPS" "$2" \
		|| { echo "cci_topology: could not derive the topology" >&2; return 1; }
}

# cci_run <cc> <out> [senders] [messages]: one recorded incast. Each flow
# sends <messages> of 64 KB (perftest's duration mode cannot sleep on
# events); the flows start together as far as perftest allows (each takes
# a while to set up under TCG).
cci_run() {
	# shellcheck disable=SC2034 # TB_BW_TOOL: read by tb_write_bw_server/client
	local cc=$1 out=$2 n=${3:-4} iters=${4:-150} i rec pids=() rc=0 TB_BW_TOOL=ib_send_bw
	rm -rf "$out" && mkdir -p "$out"
	echo "==> incast $n->1 with cc=$cc, $iters x 64 KB per flow (results in $out)" >&2
	tb_load_rxe patched || return 1
	tb_load_cc cc="$cc" line_rate_mbps=$CCI_LINE_MBPS acc_t_us="$CCI_T_US" hpcc_t_us="$CCI_T_US" icc_t_us="$CCI_T_US" icc_qd_bytes="$CCI_ICC_QD" \
		"${CCI_DCQCN_KNOBS[@]}" $CCI_KNOBS || return 1
	cci_topology "$cc" "$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	for ((i = 1; i <= n; i++)); do
		tb_write_bw_server 0 $((TB_PORT_BASE + i)) "$out/server$i.txt" "${CCI_PERF[@]}" -n "$iters" || rc=1
	done
	rxecc record --out "$out/rec" --interval-ms "${CCI_INTERVAL_MS:-20}" 2>"$out/record.log" &
	rec=$!
	sleep 0.5
	for ((i = 1; i <= n; i++)); do
		tb_write_bw_client "$i" 0 $((TB_PORT_BASE + i)) "$out/client$i.txt" "${CCI_PERF[@]}" -n "$iters" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	((rc == 0)) || pkill -x ib_send_bw
	sleep 0.5
	kill -INT "$rec"
	wait "$rec" || { cat "$out/record.log" >&2; rc=1; }
	tb_wait_servers || rc=1
	rxecc port stats --json >"$out/ports.jsonl"
	cp /sys/kernel/debug/rxe_cc/totals "$out/rxe_cc-totals.txt"
	# rxe's own counters say why a NAK or a retransmission happened (RNR,
	# sequence error, timeout).
	for ((i = 0; i <= n; i++)); do
		ip netns exec "h$i" rdma statistic show link "rxe$i/1" 2>&1
	done >"$out/rxe-counters.txt"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	rmmod rxecc_switch 2>/dev/null || true
	((rc == 0)) || echo "cci_run: cc=$cc: not every flow completed: $(grep -L 'BW average' "$out"/client*.txt | tr '\n' ' ')" >&2
	return $rc
}

# cci_report <outdir> <labels...>: the side-by-side table, report.json and
# plots of runs <outdir>/<label>.
cci_report() {
	local dir=$1 l runs=()
	shift
	for l in "$@"; do runs+=("$l=$dir/$l/rec"); done
	rxecc report --capacity-mbps $CCI_RATE_MBPS --bottleneck p0 --period-us "$CCI_T_US" \
		--plots "$dir/plots" --json "$dir/report.json" "${runs[@]}" | tee "$dir/table.txt"
}
