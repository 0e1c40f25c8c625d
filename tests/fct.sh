# Flow-completion-time runs: a flow file replayed on real verbs by flowgen
# (userspace/flowgen), one process per host namespace, on the incast's
# dumbbell (tests/cc_incast.sh: h0's link is the CCI_RATE_MBPS bottleneck,
# the others CCI_LINE_MBPS, marking and INT as each algorithm needs), then
# turned into the HPCC simulator's fct.txt. Shared by test_fct.sh and
# make bench.

. "$RXECC_TOP/tests/cc_incast.sh"

# Seconds between starting the flowgens and the flow file's time 0: every
# QP connects before it (librdmacm under TCG: tens of ms per connection).
FCT_SETUP_S=${FCT_SETUP_S:-20}
FCT_TIMEOUT_S=${FCT_TIMEOUT_S:-300}

# fct_run <cc> <out> <flow file> [op] [hosts]: one run; <out>/fct.txt and
# flowgen's per-host CSVs. Hosts 0..hosts-1 run flowgen (default: 4).
fct_run() {
	local cc=$1 out=$2 flows=$3 op=${4:-write} n=${5:-4} h ips='' epoch pids=() rc=0
	rm -rf "$out" && mkdir -p "$out"
	echo "==> flows of $flows with cc=$cc, $op, hosts 0-$((n - 1)) (results in $out)" >&2
	tb_load_rxe patched || return 1
	tb_load_cc cc="$cc" line_rate_mbps=$CCI_LINE_MBPS acc_t_us="$CCI_T_US" hpcc_t_us="$CCI_T_US" icc_t_us="$CCI_T_US" icc_qd_bytes="$CCI_ICC_QD" \
		"${CCI_DCQCN_KNOBS[@]}" $CCI_KNOBS || return 1
	cci_topology "$cc" "$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	for ((h = 0; h < n; h++)); do ips+=${ips:+,}$(tb_ip "$h"); done
	epoch=$(($(flowgen --now) + FCT_SETUP_S * 1000000000))
	for ((h = 0; h < n; h++)); do
		ip netns exec "h$h" flowgen --host "$h" --hosts "$ips" --flows "$flows" --epoch "$epoch" \
			--op "$op" --timeout "$FCT_TIMEOUT_S" --out "$out/flowgen-h$h.csv" 2>"$out/flowgen-h$h.log" &
		pids+=($!)
	done
	for h in "${!pids[@]}"; do
		wait "${pids[$h]}" || { rc=1; echo "fct_run: flowgen on h$h: $(tail -2 "$out/flowgen-h$h.log")" >&2; }
	done
	rxecc port stats --json >"$out/ports.jsonl"
	[ ! -f /sys/kernel/debug/rxe_cc/totals ] || cp /sys/kernel/debug/rxe_cc/totals "$out/rxe_cc-totals.txt"
	rxecc fct convert --flows "$flows" --topology "$out/topology.toml" -o "$out/fct.txt" "$out"/flowgen-h*.csv \
		2>"$out/convert.txt" || { cat "$out/convert.txt" >&2; rc=1; }
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	rmmod rxecc_switch 2>/dev/null || true
	return $rc
}
