# Stress and faults, each with a bounded count: rxe_cc reloaded under
# traffic, QPs created and destroyed by the thousand, every knob written
# with boundary and random values under traffic, and a host that vanishes
# mid-flow. Nothing may be lost, no pause may stay stuck, and dmesg must
# stay clean (tb_run_test checks it after every test).

. "$RXECC_TOP/tests/cc_incast.sh"

# The algorithms the reload cycles go through, in turn: every one that
# rxe_cc.ko offers (verbs_ccs, tests/lib/verbs.sh); STRESS_CCS="none acc"
# picks some.
stress_ccs() { echo "${STRESS_CCS:-$(VERBS_CCS='' verbs_ccs)}"; }

# stress_traffic <out dir> <stop file>: one short ib_write_bw flow h1 -> h0
# after another until <stop file> exists; a line per flow, "ok <bytes>"
# or "fail <n>", in <out dir>/flows.txt.
stress_traffic() {
	local out=$1 stop=$2 k=0
	while [ ! -f "$stop" ]; do
		k=$((k + 1))
		if verbs_flow ib_write_bw "$out/flow$k" -s 65536 -n 100 2>>"$out/flows.err"; then
			echo "ok $(tb_bw_bytes "$out/flow$k-client.txt")"
			rm -f "$out/flow$k"-*.txt
		else
			echo "fail $k"
		fi
	done >"$out/flows.txt"
}

# stress_check_flows <out dir>: every flow completed with all its bytes.
stress_check_flows() {
	local n bad
	n=$(grep -c '^ok' "$1/flows.txt" || true)
	bad=$(grep -vc "^ok $((65536 * 100))\$" "$1/flows.txt" || true)
	info "$n flows completed during the stress"
	assert_gt "flows completed during the stress" "$n" 0
	assert_eq "flows failed or short" 0 "$bad"
}

# rmmod/insmod of rxe_cc while flows come and go, switching cc= each time:
# each algorithm twice in `make test`, ten times in `make test-long`, once
# on the debug kernel.
#@ suite
test_stress_reload() {
	local k cycles stop=$TEST_OUT/stop traffic ccs
	read -ra ccs <<<"$(stress_ccs)"
	((${#ccs[@]} > 0)) || { fail "no algorithm to cycle through (modinfo of rxe_cc.ko)"; return 1; }
	cycles=${STRESS_RELOADS:-$(tb_volume $((2 * ${#ccs[@]})) $((10 * ${#ccs[@]})) ${#ccs[@]})}
	rm -f "$stop" # a results directory may hold an earlier run's
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up bridge2
	stress_traffic "$TEST_OUT" "$stop" &
	traffic=$!
	for ((k = 1; k <= cycles; k++)); do
		rmmod rxe_cc || fail "cycle $k: rmmod rxe_cc"
		tb_load_cc cc="${ccs[k % ${#ccs[@]}]}" || fail "cycle $k: insmod cc=${ccs[k % ${#ccs[@]}]}"
		# Vary the phase against the flows' set-up and teardown.
		sleep "0.$((RANDOM % 5))"
	done
	touch "$stop"
	wait "$traffic" || fail "the traffic loop failed"
	info "$cycles reloads, cc cycling through ${ccs[*]}"
	stress_check_flows "$TEST_OUT"
}

# Thousands of RC QPs created and destroyed (pyverbs, rdma-core's Python
# bindings): rxe_cc takes each on and lets each go, and holds none after.
#@ suite
test_stress_qp_churn() {
	local n=${STRESS_QPS:-10000} created destroyed
	tb_load_rxe patched
	tb_load_cc cc=acc
	rxecc testbed up bridge2
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/before"
	ip netns exec h0 /usr/bin/python3 "$RXECC_TOP/tests/qp_churn.py" rxe0 "$n" 2>"$TEST_OUT/churn.txt" \
		|| { tail -5 "$TEST_OUT/churn.txt" >&2; fail "qp_churn.py"; }
	created=$(verbs_delta "$TEST_OUT/before" qps_created)
	destroyed=$(verbs_delta "$TEST_OUT/before" qps_destroyed)
	info "$n QPs: rxe_cc took on $created and let go of $destroyed; $(tail -1 "$TEST_OUT/churn.txt")"
	assert_eq "QPs rxe_cc took on" "$n" "$created"
	assert_eq "QPs rxe_cc let go" "$n" "$destroyed"
	assert_eq "QPs rxe_cc still holds" 0 "$(find /sys/kernel/debug/rxe_cc/qps -mindepth 1 -maxdepth 1 | wc -l)"
	# On the debug kernel, kmemleak looks for what was not freed.
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak || fail "kmemleak refused a scan: it has disabled itself"
		cat /sys/kernel/debug/kmemleak >"$TEST_OUT/kmemleak.txt"
		! grep -q rxe "$TEST_OUT/kmemleak.txt" || fail "kmemleak: $(grep -m3 rxe "$TEST_OUT/kmemleak.txt")"
	fi
}

# Every knob written while an ACC flow runs: out of range (refused, the
# old value kept), both ends of its range and a random value in it (each
# taken, then the old value back). The flow completes with all its bytes.
#@ suite
test_stress_knobs() {
	local p=/sys/module/rxe_cc/parameters knob lo hi old v writes=0 flow rc
	tb_load_rxe patched
	tb_load_cc cc=acc
	rxecc testbed up bridge2
	tb_pair 1 0 "$TB_PORT_BASE" "$TEST_OUT/flow" -s 65536 -n 1500 &
	flow=$!
	for _ in 1 2 3; do
		while read -r knob lo hi; do
			old=$(param_read "$knob")
			for v in $((lo - 1)) $((hi + 1)) 18446744073709551616 -1 x ""; do
				[ "$v" = -1 ] && [ "$lo" = 0 ] && continue
				[ "$v" = "$((lo - 1))" ] && [ "$lo" = 0 ] && continue
				if param_write "$knob" "$v"; then fail "$knob accepted '$v'"; fi
				assert_eq "$knob after '$v'" "$old" "$(param_read "$knob")"
				writes=$((writes + 1))
			done
			for v in "$lo" "$hi" $((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1))); do
				# Each value taken, in order (the random ones differ per
				# run): what a flow that stalls was put through.
				echo "$knob $v" >>"$TEST_OUT/taken.txt"
				param_write "$knob" "$v" || fail "$knob refused $v (range $lo..$hi)"
				assert_eq "$knob after writing $v" "$v" "$(param_read "$knob")"
				param_write "$knob" "$old" || fail "$knob refused its old value $old"
				writes=$((writes + 2))
			done
		done < <(cc_knob_ranges)
	done
	rc=0
	wait "$flow" || rc=$?
	[ "$rc" = 0 ] || fail "the flow under the knob writes failed (values taken: taken.txt)"
	assert_eq "bytes the flow moved" $((65536 * 1500)) "$(tb_bw_bytes "$TEST_OUT/flow-client.txt")"
	info "$writes knob writes during the flow; it moved $(tb_bw_bytes "$TEST_OUT/flow-client.txt") B at $(tb_bw_mbit "$TEST_OUT/flow-client.txt") Mb/s"
}

# A host that vanishes mid-flow (its processes killed, its namespace
# deleted) on dumbbell with PFC: the other flow completes, no port is left
# paused, no buffer left held, and the testbed still comes down.
#@ suite
test_stress_host_gone() {
	local s=$TEST_OUT/ports.jsonl i c1 c2 rc topo=dumbbell n1=600 n2=300
	if [ -n "${RXECC_DEBUG_KERNEL:-}" ]; then
		# The debug kernel's guest carries only about 2 Mb/s: 1 Mb/s links,
		# so that two flows still oversubscribe h0's, and shorter flows.
		topo=$TEST_OUT/dumbbell-1mbit.toml
		sed 's/^rate_mbps = 100$/rate_mbps = 1/' "$RXECC_TOP/testbed/topologies/dumbbell.toml" >"$topo"
		n1=60 n2=30
	fi
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up "$topo" 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	tb_pair 1 0 $((TB_PORT_BASE + 1)) "$TEST_OUT/flow1" "${SW_PERF[@]}" -n $n1 &
	c1=$!
	tb_pair 2 0 $((TB_PORT_BASE + 2)) "$TEST_OUT/flow2" "${SW_PERF[@]}" -n $n2 &
	c2=$!
	# Until both flows load the bottleneck enough to pause their hosts.
	for ((i = 0; i < 600; i++)); do
		rxecc port stats --json >"$s"
		[ "$(psum "$s" pfc_rx_xoff v1)" -gt 0 ] && [ "$(psum "$s" pfc_rx_xoff v2)" -gt 0 ] && break
		sleep 0.1
	done
	assert_gt "pauses at h1 before it vanishes" "$(psum "$s" pfc_rx_xoff v1)" 0
	# h1 goes: its processes, then its namespace (with v1, and rxe1 on it).
	# A PID listed here may exit before the kill reaches it; that is not a
	# failure. h1's server, in h0, waits for a peer that is gone: its pair
	# kills it (rxecc perftest pair).
	local p
	for p in $(ip netns pids h1); do kill -9 "$p" 2>/dev/null || true; done
	# Gone before its namespace goes, as the client's own wait did when the
	# helpers were bash (its QPs torn down in its exit).
	for ((i = 0; i < 100; i++)); do
		[ -z "$(ip netns pids h1)" ] && break
		tb_nap 0.1
	done
	ip netns del h1
	rc=0
	wait "$c2" || rc=$?
	[ "$rc" = 0 ] || fail "h2's flow failed after h1 vanished"
	assert_eq "h2's bytes" $((65536 * n2)) "$(tb_bw_bytes "$TEST_OUT/flow2-client.txt")"
	wait "$c1" 2>/dev/null || true
	sleep 1
	rxecc port stats --json >"$s"
	info "after h1 vanished: paused ports: $(psum "$s" list:paused); held buffer: $(psum "$s" list:ingress.bytes);" \
		"underflows: $(psum "$s" ingress.underflows)"
	assert_eq "ports still paused" 0 "$(psum "$s" paused)"
	assert_eq "buffer still held" 0 "$(psum "$s" ingress.bytes)"
	rxecc testbed down 2>"$TEST_OUT/down.txt" || fail "testbed down after a host vanished: $(cat "$TEST_OUT/down.txt")"
	[ -z "$(ip netns list)" ] || fail "down left namespaces: $(ip netns list)"
}

# stress_busy_qpn <rxe dev> <counter>: the number of a QP of that device
# whose rxe_cc counter is not 0, or nothing (yet).
stress_busy_qpn() {
	local f
	for f in /sys/kernel/debug/rxe_cc/qps/"$1"-qp*/stats; do
		grep -q "^$2 [1-9]" "$f" 2>/dev/null || continue
		f=${f%/stats}
		echo "${f##*-qp}"
		return 0
	done
}

# Malformed packets from raw sockets (tests/malformed.py), each kind ten
# times: garbage PFC frames into every port type (a host NIC, a switch's
# host port, both ends of an inter-switch link) with no traffic, then, while
# an RC flow h0 -> h3 runs under dcqcn, bad CNPs, BTHs and INT shims into the
# requester and CE-marked non-RoCE traffic into the responder. Each must be
# dropped and counted (rxecc port stats pfc_rx_bad/pfc_rx_other, rxe's
# rcvd_dropped, the netns's SNMP counters), never pause a port or reach
# rxe_cc's QP state; a valid frame of each family, sent last, shows that
# the counters would see one obeyed. The flow must still move every byte.
# The chain topology without marking, so that no real CE or CNP mixes in.
#@ suite
test_stress_malformed() {
	local topo=$TEST_OUT/chain-nomark.toml req_qpn resp_qpn i rc n stock_n
	# Each flow must outlast the cases it carries, about twice over
	# (docs/testing.md, "Measurements behind the harness").
	n=$(tb_volume 2000 4000) stock_n=$(tb_volume 900 1500)
	grep -v -e '^mark = ' -e '^tcd = ' "$RXECC_TOP/testbed/topologies/chain.toml" >"$topo"
	tb_load_rxe patched
	tb_load_cc cc=dcqcn
	rxecc testbed up "$topo" 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	python3 "$RXECC_TOP/tests/malformed.py" pfc v0:p0 p0:v0@h0 x0_1:x1_0 x1_0:x0_1 >"$TEST_OUT/pfc.txt" 2>&1 ||
		{ cat "$TEST_OUT/pfc.txt" >&2; fail "malformed PFC frames"; }
	tb_pair 0 3 $((TB_PORT_BASE + 1)) "$TEST_OUT/flow" "${SW_PERF[@]}" -n "$n" &
	local c=$!
	# The flow's QPs: rxe_cc names them <dev>-qp<N> once they carry traffic.
	for ((i = 0; i < 300; i++)); do
		req_qpn=$(stress_busy_qpn rxe0 tx_packets)
		resp_qpn=$(stress_busy_qpn rxe3 rx_packets)
		[ -n "$req_qpn" ] && [ -n "$resp_qpn" ] && break
		sleep 0.1
	done
	[ -n "$req_qpn" ] && [ -n "$resp_qpn" ] || fail "the flow's QPs never carried traffic"
	rc=0
	python3 "$RXECC_TOP/tests/malformed.py" roce 0 "$req_qpn" 3 "$resp_qpn" >"$TEST_OUT/roce.txt" 2>&1 || rc=$?
	wait "$c" || fail "the flow failed"
	[ "$rc" = 0 ] || { cat "$TEST_OUT/roce.txt" >&2; fail "malformed RoCE packets"; }
	cat "$TEST_OUT/pfc.txt" "$TEST_OUT/roce.txt" | sed 's/^/    /' >&2
	assert_eq "the flow's bytes" $((65536 * n)) "$(tb_bw_bytes "$TEST_OUT/flow-client.txt")"
	rxecc port stats --json >"$TEST_OUT/ports.jsonl"
	assert_eq "ports left paused" 0 "$(psum "$TEST_OUT/ports.jsonl" paused)"
	# rdma_rxe alone, as stock: a CNP is an unknown opcode and an INT shim
	# a BTH it cannot parse, both dropped and counted, while a flow runs.
	rmmod rxe_cc || return 1
	tb_pair 0 3 $((TB_PORT_BASE + 2)) "$TEST_OUT/stock" "${SW_PERF[@]}" -n "$stock_n" &
	c=$!
	req_qpn=
	for ((i = 0; i < 300; i++)); do
		req_qpn=$(rdma -j resource show qp link rxe0/1 |
			jq -r '[.[] | select(.type == "RC" and .state == "RTS")][0].lqpn // empty')
		[ -n "$req_qpn" ] && break
		sleep 0.1
	done
	rc=0
	python3 "$RXECC_TOP/tests/malformed.py" stock 0 "$req_qpn" 3 >"$TEST_OUT/stock.txt" 2>&1 || rc=$?
	wait "$c" || fail "the stock flow failed"
	sed 's/^/    /' "$TEST_OUT/stock.txt" >&2
	[ "$rc" = 0 ] || fail "CNPs and INT shims without rxe_cc"
	rxecc testbed down 2>"$TEST_OUT/down.txt" || fail "testbed down: $(cat "$TEST_OUT/down.txt")"
}

# Many QPs at once (issue 16), under ACC through the incast's bottleneck
# (dumbbell, h0's link at 40 Mb/s, TCD and PFC), each QP in one perftest
# from h1 to h0:
# - STRESS_FLOW_QPS (256; 64 on the debug kernel, where 256 QPs took 12
#   minutes) QPs sending a few messages each;
# - 16 QPs sending more messages each than perftest keeps posted (its TX
#   depth, 128), so that every QP must go on after a completion: with
#   ACC's ACK per packet this once looked like a stuck QP, and was
#   perftest's count of completions (tb_perf_iters).
# A QP whose pacer kick were lost would never finish and perftest would
# hang, so the client runs under a time limit. Every byte acked, no drop,
# and rxe_cc lets go of every QP.
# Its debug_timeout: two bring-ups of dumbbell and two runs of up to
# 1800 s each.
#@ suite debug_timeout=5400
test_stress_qps_flows() {
	tb_load_rxe patched
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(cci_knobs acc)
	cci_topology acc "$TEST_OUT/topology.toml"
	sqf_run "${STRESS_FLOW_QPS:-$(tb_volume 256 256 64)}" 5 few
	sqf_run 16 200 many
}

# sqf_run <qps> <messages per QP> <label>: one such perftest.
sqf_run() {
	# shellcheck disable=SC2034 # TB_BW_TOOL: read by tb_perftest
	local q=$1 iters cq size=16384 out=$TEST_OUT/$3 pid m moved=0 t0 TB_BW_TOOL=ib_send_bw limit=600
	# The debug kernel's guest carries about 2 Mb/s: 256 QPs' 20 MB took
	# 12 minutes there, set-up included. STRESS_FLOW_LIMIT overrides.
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || limit=1800
	limit=${STRESS_FLOW_LIMIT:-$limit}
	read -r iters cq < <(tb_perf_iters "$2")
	mkdir -p "$out"
	rxecc testbed up "$TEST_OUT/topology.toml" 2>"$out/up.txt" || { fail "testbed up: $(tail -1 "$out/up.txt")"; return 1; }
	cp /sys/kernel/debug/rxe_cc/totals "$out/before"
	t0=$(date +%s)
	# The server sleeps on completion events (-e); the client polls. Debian 12's perftest (4.5-0.17) sleeps for
	# an event before each poll of at most 16 send completions, so more
	# than 16 queued at its last event are never polled (fixed upstream in
	# 23.07, "Fix BW tests stuck pending completion event"). On the debug
	# kernel the 256-QP client slept on past its server's end. Polling
	# cost nothing measurable on the normal kernel (190 s for the test,
	# 204 s with -e, one after the other on a host busy with a second
	# guest). The server drains its CQ before it sleeps.
	tb_perftest pair 1 0 --port "$TB_PORT_BASE" --out "$out/flow" --server-arg=-e -- \
		-s $size -u 20 -q "$q" -n "$iters" -Q "$cq" &
	pid=$!
	# Senders (rxe1's QPs) with data acked, the most seen in a second's
	# polls: how far the QPs got if one hangs. A run takes well under a
	# minute; past the limit its client is stopped and the test fails.
	while kill -0 "$pid" 2>/dev/null; do
		m=$(grep -l '^acked_bytes [1-9]' /sys/kernel/debug/rxe_cc/qps/rxe1-qp*/stats 2>/dev/null | wc -l || true)
		((m > moved)) && moved=$m
		if (($(date +%s) - t0 > limit)); then
			# Where each sender stood, for the failure below: rxe's QPs
			# on both ends (PSNs) and the sender's counters (retries,
			# timeouts), and rxe_cc's counters of each sending QP.
			{
				rdma -d res show qp link rxe1/1
				rdma -d res show qp link rxe0/1
				rdma statistic show link rxe1/1
				grep -H . /sys/kernel/debug/rxe_cc/qps/rxe1-qp*/stats
			} >"$out/qps-at-limit.txt" 2>&1 || true
			pkill -f "ib_send_bw -d rxe" || true
			break
		fi
		sleep 1
	done
	wait "$pid" || fail "$q QPs: the flow failed or hung (at most $moved QPs had data acked; each sender's counters at the limit in $out/qps-at-limit.txt)"
	ports_snap "$out/ports.json"
	info "$q QPs x $iters messages of $size B in $(($(date +%s) - t0)) s (set-up included); at most $moved senders seen with data acked in one poll; $(tb_bw_mbit "$out/flow-client.txt") Mb/s"
	assert_eq "bytes acked to $q QPs" $((q * iters * size)) "$(verbs_delta "$out/before" acked_bytes)"
	assert_eq "drops on every port" 0 "$(psum "$out/ports.json" drops)"
	rxecc testbed down
	assert_eq "QPs rxe_cc still holds" 0 "$(find /sys/kernel/debug/rxe_cc/qps -mindepth 1 -maxdepth 1 | wc -l)"
}
