# QPs per host (issue 16, `make bench` part `scale`): Q QPs in one perftest
# from h1 to h0 through the incast's bottleneck (dumbbell, h0's link at
# 40 Mb/s, each algorithm's marking and knobs from incast.toml), for
# CCS_SECS seconds. Per run: the aggregate rate, rxe_cc's timer fires per
# second (period timers and pacer), the guest's kernel CPU (system, irq and
# softirq time from /proc/stat, over the client's whole run, its set-up
# included), the QPs that moved data by the end, and rxe_cc's own CPU per
# QP (the time inside its hooks and timer callbacks, debugfs hook_ns and
# timer_ns, in us per second of the run per QP).
# Uses cc_incast.sh's helpers.

CCS_SECS=${BENCH_SCALE_SECS:-8}
# perftest cannot time a run (-D) while it sleeps on events (-e), so each
# run sends about CCS_SECS' worth of messages at the bottleneck's rate,
# split over the QPs (at least 5 each, perftest's minimum). Prints
# perftest's "-n <iterations> -Q <cq_mod>" (tb_perf_iters says why -Q).
ccs_iters() { # <qps>
	local total=$((CCI_RATE_MBPS * 1000000 * CCS_SECS / 8 / 16384)) n cq
	n=$((total / $1))
	read -r n cq < <(tb_perf_iters $((n < 5 ? 5 : n)))
	echo "-n $n -Q $cq"
}
# ib_send_bw sleeps on completion events (-e) instead of polling, so the
# CPU counted is the stack's, not perftest's spinning. 16 KB messages: at
# 40 Mb/s a 64 KB message per QP would leave 256 QPs a message or two each.
# -u 20: see SW_PERF in test_switch.sh (256 QPs queue far longer than 67 ms).
CCS_PERF=(-s 16384 -e -u 20)

# ccs_cpu: "<kernel jiffies> <all busy jiffies>" of the whole guest so far.
ccs_cpu() {
	awk '$1 == "cpu" {print $4 + $7 + $8, $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat
}

# ccs_cc_cpu_ns: rxe_cc's own CPU so far (destroyed QPs), ns.
ccs_cc_cpu_ns() {
	echo $(($(tb_cc_total hook_ns) + $(tb_cc_total timer_ns)))
}

# ccs_run <cc> <qps> <out>: one run; prints its measurements as
# name=value words (measured_row's): the aggregate rate (fail if the run
# failed), rxe_cc's timer fires per second, the guest's kernel CPU share,
# the QPs that moved data, and rxe_cc's own CPU per QP (us per second).
ccs_run() {
	# shellcheck disable=SC2034 # TB_BW_TOOL: read by tb_write_bw_server/client
	local cc=$1 q=$2 out=$3 TB_BW_TOOL=ib_send_bw TB_REPORT_GBITS=0
	local f0 f1 c0 c1 t0 t1 k0 k1 moved=0 bw rc=0
	tb_fresh_dir "$out"
	echo "==> scale: cc=$cc with $q QPs (results in $out)" >&2
	tb_load_rxe patched || return 1
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(cci_knobs "$cc") || return 1
	cci_topology "$cc" "$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	f0=$(($(tb_cc_total period_fires) + $(tb_cc_total pacer_fires)))
	k0=$(ccs_cc_cpu_ns)
	# shellcheck disable=SC2046 # ccs_iters prints flags and their values
	tb_write_bw_server 0 $TB_PORT_BASE "$out/server.txt" "${CCS_PERF[@]}" -q "$q" $(ccs_iters "$q") || rc=1
	t0=$(date +%s%N)
	read -r c0 _ < <(ccs_cpu)
	# shellcheck disable=SC2046 # as above
	tb_write_bw_client 1 0 $TB_PORT_BASE "$out/client.txt" "${CCS_PERF[@]}" -q "$q" $(ccs_iters "$q") &
	local pid=$!
	# While the QPs live: how many senders (rxe1's QPs) have had data
	# acked, the most seen in a second's polls (they vanish as perftest
	# ends). A QP stuck without a kick stays at 0.
	# A run that takes ten times its share of the link (and two minutes
	# for set-up) has a stuck QP: stop it and report the run as failed.
	local m limit=$((10 * CCS_SECS + 120)) s0=$SECONDS
	while kill -0 "$pid" 2>/dev/null; do
		m=$(grep -l '^acked_bytes [1-9]' /sys/kernel/debug/rxe_cc/qps/rxe1-qp*/stats 2>/dev/null | wc -l || true)
		((m > moved)) && moved=$m
		if ((SECONDS - s0 > limit)); then
			echo "==> scale: cc=$cc with $q QPs still running after $limit s: stopped (at most $moved QPs had data acked)" >&2
			pkill -f "ib_send_bw -d rxe" || true
			rc=1
			break
		fi
		sleep 1
	done
	wait "$pid" || rc=1
	read -r c1 _ < <(ccs_cpu)
	t1=$(date +%s%N)
	tb_wait_servers || rc=1
	# The QPs are gone: totals hold all their counts.
	f1=$(($(tb_cc_total period_fires) + $(tb_cc_total pacer_fires)))
	k1=$(ccs_cc_cpu_ns)
	rxecc testbed down
	rxecc modules unload
	bw=$(tb_bw_mbit "$out/client.txt")
	[ "$rc" = 0 ] && [ -n "$bw" ] || bw=fail
	local secs
	secs=$(jq -n "($t1 - $t0) / 1e9")
	echo "mbps=$bw fires_per_s=$(jq -n "$((f1 - f0)) / $secs")" \
		"kernel_cpu=$(jq -n "$((c1 - c0)) / $(getconf CLK_TCK) / $secs / $(nproc)")" \
		"qps_moved=$moved rxe_cc_us_per_s_per_qp=$(jq -n "$((k1 - k0)) / 1e3 / $secs / $q")"
}
