# The emulated lossless switch (switch-ebpf/): its programs on crafted
# packets, and PFC, buffers and TCD marks under real RoCE traffic on the
# shipped topologies (testbed/topologies/), brought up by `rxecc testbed up`.

# BPF_PROG_TEST_RUN: the PFC frame parser and receiver, and the marker in
# every mode, on crafted frames and packets.
#@ suite
test_switch_bpf_unit() {
	rxecc selftest >"$TEST_OUT/selftest.txt" 2>&1 || { cat "$TEST_OUT/selftest.txt" >&2; fail "selftest"; }
	info "$(tail -1 "$TEST_OUT/selftest.txt")"
}

# Lossless incast: 8 -> 1 on dumbbell, PFC on, no CC. Nothing is dropped
# anywhere (also across a run-time change of rate and thresholds), pauses
# flow, every pause and resume the switch sent reached a host NIC and was
# obeyed, and every flow completes.
#@ suite debug=skip
test_switch_lossless_incast() {
	# The retune (three rxecc commands) must land well inside the flows,
	# even when the perftests slow it many times over (docs/testing.md,
	# "Measurements behind the harness").
	local size=65536 iters i s=$TEST_OUT/ports.jsonl retuner
	iters=$(tb_volume 500 900)
	tb_load_rxe patched
	rxecc testbed up dumbbell 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	# Mid-run, the bottleneck's rate and every ingress port's thresholds
	# change, as an experimenter would retune them: nothing may be lost.
	# The retune starts once the bottleneck has carried a twentieth of the
	# flows' bytes (perftest's set-up under TCG takes seconds; an ARP
	# alone is not traffic), and what p0 carried by its end is recorded,
	# so that the test can tell that traffic went on after it.
	local flows_bytes=$((8 * iters * size))
	(
		# Cheap polling (no Python): eight perftests share two vCPUs.
		local deq
		for ((i = 0; i < 1200; i++)); do
			deq=$(rxecc port stats --dev p0 --json | grep -o '"deq_bytes":[0-9]*' | cut -d: -f2)
			[ "${deq:-0}" -gt $((flows_bytes / 20)) ] && break
			sleep 0.05
		done
		date +%s%N >"$TEST_OUT/retune-start"
		rxecc port rate --dev p0 --rate-mbps 80
		rxecc port ingress --dev p1,p2,p3,p4,p5,p6,p7,p8 --switch-id 0 --pfc --xoff-bytes 40000 \
			--xon-bytes 20000 --buffer-bytes 2097152
		rxecc port stats --dev p0 --json >"$TEST_OUT/p0-retuned.json"
		date +%s%N >"$TEST_OUT/retuned"
	) &
	retuner=$!
	tb_incast 8 "$TEST_OUT" "${SW_PERF[@]}" -n $iters || fail "not every flow completed"
	local t_end
	t_end=$(date +%s%N)
	wait "$retuner" || fail "retuning the ports failed"
	[ -s "$TEST_OUT/retuned" ] || fail "retuning the ports failed"
	for ((i = 1; i <= 8; i++)); do
		assert_eq "flow $i bytes" $((size * iters)) "$(tb_bw_bytes "$TEST_OUT/client$i.txt")"
	done
	sleep 0.5
	ports_snap "$s"
	# Traffic went on after the retune (at least a tenth of it), at no more
	# than the new rate: the retune landed mid-run, and took effect.
	local at_retune after total rate_after
	at_retune=$(psum "$TEST_OUT/p0-retuned.json" deq_bytes)
	total=$(psum "$s" deq_bytes p0)
	after=$((total - at_retune))
	rate_after=$(awk -v b="$after" -v t="$((t_end - $(cat "$TEST_OUT/retuned")))" 'BEGIN {printf "%.1f", b * 8 * 1000 / t}')
	info "retune landed after $((at_retune / 1024)) KB of $((total / 1024)) KB through p0, and took $((($(cat "$TEST_OUT/retuned") - $(cat "$TEST_OUT/retune-start")) / 1000000)) ms; $rate_after Mb/s after it"
	assert_gt "bytes through p0 before the retune, x20" $((at_retune * 20)) "$flows_bytes"
	assert_gt "bytes through p0 after the retune, x10" $((after * 10)) "$total"
	awk -v r="$rate_after" 'BEGIN {exit !(r <= 80 * 1.05)}' || fail "p0 carried $rate_after Mb/s after being retuned to 80"
	local drops xoff_tx xoff_rx xon_tx xon_rx failed held peak
	drops=$(psum "$s" drops)
	xoff_tx=$(( $(psum "$s" ingress.pfc_tx_xoff 'p*') + $(psum "$s" ingress.pfc_tx_refresh 'p*') ))
	xon_tx=$(psum "$s" ingress.pfc_tx_xon 'p*')
	xoff_rx=$(psum "$s" pfc_rx_xoff 'v*')
	xon_rx=$(psum "$s" pfc_rx_xon 'v*')
	failed=$(psum "$s" ingress.pfc_tx_failed)
	held=$(psum "$s" ingress.bytes)
	peak=$(psum "$s" max:ingress.max_bytes)
	info "8->1 at 100 Mb/s: PFC sent $xoff_tx pause / $xon_tx resume, hosts got $xoff_rx / $xon_rx;" \
		"$drops drops; peak ingress $peak B (XOFF 32768);" \
		"tau mean $(psum "$s" max:tau_mean_ns 'v*') ns max $(psum "$s" max:tau_max_ns 'v*') ns (worst host)"
	# Where a drop happened says why: the shared buffer (headroom too small
	# for the feedback delay) or an egress limit.
	[ "$drops" = 0 ] || info "drops by port: $(psum "$s" list:drops);" \
		"peak ingress by port: $(psum "$s" list:ingress.max_bytes)"
	assert_eq "drops on every port" 0 "$drops"
	assert_gt "pauses sent" "$xoff_tx" 0
	assert_eq "pauses received = sent" "$xoff_tx" "$xoff_rx"
	assert_eq "resumes received = sent" "$xon_tx" "$xon_rx"
	assert_eq "frames the kfunc failed to send" 0 "$failed"
	assert_eq "buffer held after the run" 0 "$held"
	assert_gt "paused time" "$(psum "$s" paused_ns 'v*')" 0
	# Lossless and in order: the receiver's rxe saw no gap in any QP's
	# PSNs (each would cost a NAK and a go-back-N), and nothing twice.
	local ooo dup
	ooo=$(rxe_counter 0 out_of_seq_request) dup=$(rxe_counter 0 duplicate_request)
	info "receiver: $ooo out-of-sequence and $dup duplicate requests"
	assert_eq "out-of-sequence requests at the receiver" 0 "$ooo"
	assert_eq "duplicate requests at the receiver" 0 "$dup"
	rxecc testbed down
	[ -z "$(ip netns list)" ] || fail "down left namespaces: $(ip netns list)"
	[ -z "$(ls /sys/fs/bpf/rxecc)" ] || fail "down left pins: $(ls /sys/fs/bpf/rxecc)"
}

# Lossy contrast: the same incast with PFC off and a 64 KB buffer drops,
# and the counters see it (flows may fail: rxe's retries are not enough).
#@ suite debug=skip
test_switch_lossy_incast() {
	local i s=$TEST_OUT/ports.jsonl topo=$TEST_OUT/lossy.toml
	sed -e 's/^pfc = true/pfc = false/' -e 's/^buffer_bytes = .*/buffer_bytes = 65536/' \
		"$RXECC_TOP/testbed/topologies/dumbbell.toml" >"$topo"
	grep -q '^pfc = false' "$topo" || fail "could not derive the lossy topology"
	tb_load_rxe patched
	rxecc testbed up "$topo" 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	# Flows may fail with PFC off: each client has 120 s, and the incast's
	# status says nothing here.
	TB_PAIR_TIMEOUT_S=120 tb_incast 8 "$TEST_OUT" -s 65536 -n 20 || true
	ports_snap "$s"
	local drops pauses
	drops=$(psum "$s" drops 'p*')
	pauses=$(psum "$s" ingress.pfc_tx_xoff)
	info "PFC off, 64 KB buffer: $drops drops at the switch, $pauses pauses," \
		"$(grep -l 'BW average' "$TEST_OUT"/client*.txt | wc -l)/8 flows completed"
	assert_gt "drops" "$drops" 0
	assert_eq "pauses with PFC off" 0 "$pauses"
	rxecc testbed down
}

# chain_flows <tag> <bursts: 0|1>: F0 h0->h2 and F1 h1->h3 at time 0,
# and with bursts h4..h6 -> h3 at 1 s, RDMA WRITEs that flowgen posts on
# that schedule (its connections are set up before time 0). With perftest
# clients, whose set-up under TCG takes 0.5 to over 15 s, the bursts now and
# then began as F1 ended. All are ECN-capable under data_ecn=1.
# CHAIN_ITERS: F0's and F1's size in 64 KB messages; CHAIN_BURST_ITERS:
# each burst's. Each host's records go to $TEST_OUT/<tag>-h<host>.csv
# (chain_mbit reads them), its log to <tag>-h<host>.log, and when each
# flow ran, from time 0, to $TEST_OUT/<tag>-times.txt.
chain_flows() {
	local tag=$1 bursts=$2 n=${CHAIN_ITERS:-150} nb=${CHAIN_BURST_ITERS:-60} h rc=0
	local flows=$TEST_OUT/$tag-flows.txt hosts=(0 1 2 3)
	{
		echo $((bursts == 1 ? 5 : 2))
		echo "0 2 3 100 $((n * 65536)) 0"
		echo "1 3 3 100 $((n * 65536)) 0"
		if [ "$bursts" = 1 ]; then
			for h in 4 5 6; do echo "$h 3 3 100 $((nb * 65536)) 1"; done
			hosts+=(4 5 6)
		fi
	} >"$flows"
	tb_flowgen "$TEST_OUT/$tag" "$flows" write "${hosts[@]}" || rc=1
	awk -F, -v e="$TB_FLOWGEN_EPOCH" '$1 ~ /^[0-9]+$/ {
		printf "flow %d h%d -> h%d: %s, posted %d ms, done %d ms\n", $1, $2, $3, $10, ($8 - e) / 1e6, ($9 - e) / 1e6}' \
		"$TEST_OUT/$tag"-h?.csv | sort >"$TEST_OUT/$tag-times.txt"
	return $rc
}

# chain_mbit <TEST_OUT>/<tag> <host>: the rate of the flow <host> sent
# (chain_flows), Mb/s, from its post to its completion.
chain_mbit() {
	awk -F, 'NR == 2 && $9 > $8 {printf "%.3f\n", $6 * 8 * 1000 / ($9 - $8); f = 1} END {if (!f) print 0}' "$1-h$2.csv"
}

# TCD on chain: with bursts into h3, F1 gets CE at the root (s2's port to
# h3); F0, a victim of PFC at s0 -> s1, gets UE and (but for emulation
# stalls) never CE. Without bursts, no mark at all.
#@ suite debug=skip
test_switch_tcd_chain() {
	local s=$TEST_OUT/ports.jsonl poll=$TEST_OUT/qps.txt pid
	tb_load_rxe patched
	tb_load_cc cc=none data_ecn=1
	# Without bursts, F1's last hop (s2 -> h3) runs at the trunks' rate, as
	# F0's does. At chain's 50 Mb/s it equals F1's own, so the backlog of
	# every late timer there (a stall) never drains: in one suite run p3
	# stalled 23 times (72 ms), reached 37 KB, paused s1 8 times and marked
	# a CE with no burst at all. The bursts need it at 50 Mb/s (below).
	local topo=${CHAIN_TOPO:-chain}
	[ -f "$topo" ] || topo=$RXECC_TOP/testbed/topologies/$topo.toml
	python3 - "$topo" >"$TEST_OUT/chain-quiet.toml" <<'EOF' || fail "cannot derive the quiet topology from $topo"
import re, sys
s = open(sys.argv[1]).read()
s, n = re.subn(r'(\[\[link\]\]\na = "h3"\nb = "s2"\n)(rate_mbps = \d+\n)?', r'\1rate_mbps = 150\n', s)
sys.exit("no link h3 - s2") if n != 1 else sys.stdout.write(s)
EOF
	rxecc testbed up "$TEST_OUT/chain-quiet.toml" 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }

	chain_flows quiet 0 || fail "F0/F1 without bursts did not complete: $(tail -qn1 "$TEST_OUT"/quiet-h?.log | head -3)"
	ports_snap "$s"
	info "no bursts: TCD CE $(psum "$s" tcd_ce), UE $(psum "$s" tcd_ue), none $(psum "$s" tcd_none);" \
		"receivers counted CE $(tb_cc_total rx_ecn_ce), UE $(tb_cc_total rx_ecn_ue)"
	assert_gt "ECN-capable packets judged" "$(psum "$s" tcd_none)" 0
	assert_eq "CE marks without bursts" 0 "$(psum "$s" tcd_ce)"
	assert_eq "UE marks without bursts" 0 "$(psum "$s" tcd_ue)"
	assert_eq "CE received without bursts" 0 "$(tb_cc_total rx_ecn_ce)"
	assert_eq "UE received without bursts" 0 "$(tb_cc_total rx_ecn_ue)"
	rxecc testbed down
	rxecc testbed up "${CHAIN_TOPO:-chain}" 2>"$TEST_OUT/up2.txt" || fail "testbed up (again)"

	: >"$poll" # a fresh poll: QP names repeat from one run to the next
	poll_qps "$poll" &
	pid=$!
	# F0 and F1 (400 x 64 KB, 5.5 s alone at their 38 Mb/s) outlast the
	# bursts (3 x 60 x 64 KB from 1 s, into F1's 50 Mb/s last hop).
	CHAIN_ITERS=${CHAIN_BURST_F_ITERS:-400} chain_flows burst 1 || fail "flows with bursts did not complete: $(tail -qn1 "$TEST_OUT"/burst-h?.log | head -3)"
	info "burst phase: $(sed 's/$/;/' "$TEST_OUT/burst-times.txt" | tr '\n' ' ')"
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	ports_snap "$s"
	local f0_ce f0_ue f1_ce root_ce up_ue up_ce pauses
	f0_ce=$(qp_marks "$poll" '^rxe2-' rx_ecn_ce)
	f0_ue=$(qp_marks "$poll" '^rxe2-' rx_ecn_ue)
	f1_qp=$(largest_qp "$poll" rxe3)
	f1_ce=$(qp_marks "$poll" "^$f1_qp\$" rx_ecn_ce)
	root_ce=$(psum "$s" tcd_ce p3)
	up_ue=$(psum "$s" tcd_ue 'x0_1' 'x1_2')
	up_ce=$(psum "$s" tcd_ce 'x0_1')
	pauses=$(psum "$s" pfc_rx_xoff 'x0_1')
	info "bursts: root port p3 marked $root_ce CE; F1's receiver QP ($f1_qp) got $f1_ce CE;" \
		"upstream ports x0_1+x1_2 marked $up_ue UE (x0_1: $up_ce CE, $pauses pauses received);" \
		"F0's receiver got $f0_ue UE, $f0_ce CE (CE at s0 -> s1: $up_ce, at s1 -> h2: $(psum "$s" tcd_ce p2));" \
		"emulation stalls (root, s0 -> s1): $(psum "$s" stalls p3), $(psum "$s" stalls x0_1);" \
		"compressed arrivals by port: $(psum "$s" list:compressed_pkts); TCD re-based on them: $(psum "$s" list:tcd_compressed)"
	info "F0 $(chain_mbit "$TEST_OUT/burst" 0) Mb/s with bursts, $(chain_mbit "$TEST_OUT/quiet" 0) Mb/s without"
	# The bursts must meet F1 at the root, or nothing here is tested.
	local ov
	read -r -a ov <<<"$(overlap "$poll" "$f1_qp")"
	info "the bursts' first byte in poll sample ${ov[0]}, F1's last in sample ${ov[1]}"
	assert_gt "F1's last sample, against the bursts' first (they overlap)" "${ov[1]}" "${ov[0]}"
	assert_gt "ECN-capable packets judged at the root" "$(psum "$s" tcd_none p3)" 0
	assert_gt "CE at the root port" "$root_ce" 0
	assert_gt "CE received by F1" "$f1_ce" 0
	assert_gt "pauses at s0 -> s1" "$pauses" 0
	assert_gt "UE at the paused upstream ports" "$up_ue" 0
	assert_gt "UE received by F0" "$f0_ue" 0
	# F0 never crosses the root, so TCD should never give it CE. Under TCG
	# a port upstream of F0 can receive a burst that a late timer released
	# and judge it congestion; allow 1 stray CE per 50 UE (docs/switch.md).
	[ $((f0_ce * 50)) -le "$f0_ue" ] || fail "F0 got $f0_ce CE against $f0_ue UE (more than 1 in 50)"
	assert_eq "drops" 0 "$(psum "$s" drops)"
	rxecc testbed down
}

# topo_state <file>: what a bring-up built, with what changes from one
# build to the next (ifindexes, random MACs of switch ports and bridges,
# timers, qdiscs) taken out.
topo_state() {
	local ns
	{
		ip -d -o link show | grep -E '^[0-9]+: (s[0-9]|sw[0-9]|p[0-9]|x[0-9])' |
			sed -E 's/^[0-9]+: //; s/@if[0-9]+/@if/; s/ qdisc [^ ]+//; s/link\/ether [^ ]+ brd [^ ]+//; s/(designated_bridge|designated_root|bridge_id) [^ ]+//g; s/(forward_delay_timer|gc_timer|hello_timer|tcn_timer|topology_change_timer|hold_timer|message_age_timer) +[0-9.]+//g; s/ (numtxqueues|numrxqueues|gso_max_size|gso_max_segs|gro_max_size|gso_ipv4_max_size|gro_ipv4_max_size|tso_max_size|tso_max_segs|port_id|port_no|designated_port) [^ ]+//g' | sort
		bridge fdb show | grep -v ' permanent' | sort
		for ns in $(ip netns list | awk '{print $1}' | sort); do
			echo "== $ns"
			ip -n "$ns" -d -o link show | sed -E 's/^[0-9]+: //; s/@if[0-9]+/@if/; s/ qdisc [^ ]+//; s/link-netnsid [0-9]+//; s/ (numtxqueues|numrxqueues|gso_max_size|gso_max_segs|gro_max_size|gso_ipv4_max_size|gro_ipv4_max_size|tso_max_size|tso_max_segs) [^ ]+//g' | sort
			ip -n "$ns" -o addr show | sed -E 's/^[0-9]+: //; s/valid_lft.*//' | sort
			ip -n "$ns" neigh show | sort
			ip netns exec "$ns" sh -c 'for d in /sys/class/net/v*; do echo "$(basename $d) rps $(cat $d/queues/rx-0/rps_cpus) no_ipv6 $(cat /proc/sys/net/ipv6/conf/$(basename $d)/disable_ipv6)"; done'
		done
		for d in /sys/class/net/p[0-9]* /sys/class/net/x[0-9]*; do
			[ -e "$d" ] && echo "$(basename "$d") rps $(cat "$d/queues/rx-0/rps_cpus") no_ipv6 $(cat "/proc/sys/net/ipv6/conf/$(basename "$d")/disable_ipv6")"
		done
		rdma link show | sort
	} >"$1" 2>&1
}

# The testbed's plumbing through rtnetlink (userspace/rxecc/src/netlink.rs)
# against iproute2: `rxecc testbed up --dry-run` prints each step as the
# ip/bridge/echo/rdma command that does the same. For chain (three
# switches, trunks, static routes) those commands, run by the shell, and
# `rxecc testbed up` must build the same: links, bridge and bridge-port
# settings (no STP, snooping, learning or flooding), FDB, addresses,
# neighbours, RPS and IPv6 off, rxe devices. Then `down` leaves nothing.
#@ suite debug_timeout=4500
test_topology_netlink() {
	local t=chain ns d
	tb_load_rxe patched
	rxecc testbed up $t --dry-run 2>/dev/null | grep -v '^#' >"$TEST_OUT/by-hand.sh"
	assert_gt "dry-run steps" "$(wc -l <"$TEST_OUT/by-hand.sh")" 10
	bash -e "$TEST_OUT/by-hand.sh" 2>"$TEST_OUT/by-hand.log" || fail "the dry-run's commands failed: $(tail -2 "$TEST_OUT/by-hand.log")"
	topo_state "$TEST_OUT/by-hand.txt"
	# Undo it by hand: no state file was written.
	for d in $(rdma -j link show | python3 -c 'import json, sys; print(" ".join(l["ifname"] for l in json.load(sys.stdin)))'); do
		rdma link delete "$d"
	done
	for ns in $(ip netns list | awk '{print $1}'); do ip netns del "$ns"; done
	for d in $(ip -o link show | awk -F': ' '$2 ~ /^(s[0-9]|x[0-9])/ {sub(/@.*/, "", $2); print $2}'); do
		ip link del "$d" 2>/dev/null || true
	done
	assert_eq "links left by the hand-made chain" 0 "$(ip -o link show | grep -cE ': (s[0-9]|p[0-9]|x[0-9])')"
	rxecc testbed up $t 2>"$TEST_OUT/up.txt" || fail "testbed up: $(tail -2 "$TEST_OUT/up.txt")"
	topo_state "$TEST_OUT/netlink.txt"
	ip netns exec h0 ping -c 2 -W 2 "$(tb_ip 3)" >"$TEST_OUT/ping.txt" 2>&1 || fail "no ping from h0 to h3 across chain"
	rxecc testbed down 2>"$TEST_OUT/down.txt" || fail "testbed down: $(cat "$TEST_OUT/down.txt")"
	diff "$TEST_OUT/by-hand.txt" "$TEST_OUT/netlink.txt" >"$TEST_OUT/state.diff"
	assert_eq "lines that differ between the iproute2 and the rtnetlink bring-up (state.diff)" 0 "$(grep -c '^[<>]' "$TEST_OUT/state.diff")"
	assert_gt "state lines compared" "$(wc -l <"$TEST_OUT/netlink.txt")" 40
	assert_eq "namespaces left after down" 0 "$(ip netns list | wc -l)"
	assert_eq "links left after down" 0 "$(ip -o link show | grep -cE ': (s[0-9]|p[0-9]|x[0-9])')"
}
