# Every verb under every algorithm: each perftest program, bandwidth and
# latency, one flow h1 -> h0 through the emulated switch (`dumbbell`, PFC
# on), under each cc= that rxe_cc offers. Perftest's byte counts must be
# exact, and for the verbs whose payload the requester sends (WRITE, SEND)
# rxe_cc's counters must account for exactly those bytes. UD QPs, which
# rxe_cc leaves alone, and RDMA CM connections (-R) too.

# The programs in two rounds per algorithm, each round's programs at once
# between their own hosts: perftest's start-up under TCG is most of each
# run's time (docs/testing.md, "Measurements behind the harness").
# rxe_cc's counters are the module's totals, so a round's bytes are
# checked as a sum: WRITE and SEND, whose payloads the requesters send, run
# together, h1 -> h0 and h3 -> h2, with nothing else; the other six (no
# byte count of rxe_cc to check) share the second round.
VERBS_ROUNDS=("ib_write_bw ib_send_bw" "ib_read_bw ib_atomic_bw ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat")
# A round's i-th program runs between VERBS_HOSTS[i] ("client server
# port offset") on dumbbell.
VERBS_HOSTS=("1 0 0" "3 2 1" "5 4 2" "7 6 3" "8 0 4" "4 8 5")

#@ suite debug_timeout=12600
test_verbs_all_cc() {
	local cc tool round args want expect bytes runs=0 acked rx again0 again pkt tag pids rc i
	local tools ccs every_round
	read -ra tools <<<"${VERBS_ROUNDS[*]}"
	# On the debug kernel, whose checks look at the kernel's side (the
	# glue, timers, locks), one algorithm of each kind of kernel state:
	# none, ACC's period timers, DCQCN's CNPs, HPCC's INT, Swift's window
	# and pacer; VERBS_CCS picks others.
	read -ra ccs <<<"$(tb_volume "$(verbs_ccs)" "$(verbs_ccs)" "${VERBS_CCS:-none acc dcqcn hpcc swift}")"
	# The first round, whose bytes rxe_cc must account for, runs under
	# every algorithm. The second's READ responses, atomic ACKs and
	# ping-pongs reach each algorithm through the same glue as the first
	# round's ACKs (an ACK with its acked bytes), so `make test` runs it
	# under three that answer an ACK differently: none, a rate set from
	# INT (hpcc) and a paced window (swift); `make test-long` under all.
	every_round=" $(tb_volume "none hpcc swift" "${ccs[*]}") "
	# VERBS_CCS (a few at a time: the debug kernel takes 8 to 12 minutes per
	# algorithm) or every algorithm, none among them.
	[ -n "${VERBS_CCS:-}" ] || [[ " ${ccs[*]} " == *" none "* ]] ||
		fail "cannot read rxe_cc's algorithms from modinfo: '${ccs[*]}'"
	tb_load_rxe patched
	rxecc testbed up dumbbell 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	for cc in "${ccs[@]}"; do
		rmmod rxe_cc 2>/dev/null || true
		tb_load_cc cc="$cc" || fail "insmod rxe_cc cc=$cc"
		for round in "${VERBS_ROUNDS[@]}"; do
			[ "$round" = "${VERBS_ROUNDS[0]}" ] || [[ "$every_round" == *" $cc "* ]] || continue
			read -ra round <<<"$round"
			tag="$cc-${round[0]}"
			cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/$tag.before"
			again0=$(verbs_again)
			pids=()
			for i in "${!round[@]}"; do
				tool=${round[$i]}
				read -ra args <<<"$(verbs_args "$tool")"
				VERBS_PAIR=${VERBS_HOSTS[$i]} verbs_flow "$tool" "$TEST_OUT/$cc-$tool" "${args[@]}" &
				pids+=($!)
			done
			rc=0
			for i in "${!round[@]}"; do
				wait "${pids[$i]}" || { rc=1; info "cc=$cc ${round[$i]} failed: $(tail -2 "$TEST_OUT/$cc-${round[$i]}-client.txt")"; }
			done
			((rc == 0)) || fail "cc=$cc: ${round[*]} did not all complete"
			want=0
			for tool in "${round[@]}"; do
				case $tool in
				*_bw)
					bytes=$(tb_bw_bytes "$TEST_OUT/$cc-$tool-client.txt")
					if [ "$tool" = ib_atomic_bw ]; then expect=$((8 * 200)); else expect=$((65536 * 40)); fi
					assert_eq "cc=$cc $tool: bytes perftest moved" "$expect" "$bytes"
					case $tool in ib_write_bw | ib_send_bw) want=$((want + expect)) ;; esac
					;;
				*_lat)
					assert_eq "cc=$cc $tool: iterations" 100 "$(verbs_lat_iters "$TEST_OUT/$cc-$tool-client.txt")"
					;;
				esac
				runs=$((runs + 1))
			done
			# Every QP (two per program) is destroyed, so their counters
			# are in the totals.
			assert_eq "cc=$cc ${round[*]}: QPs rxe_cc saw destroyed" $((2 * ${#round[@]})) "$(verbs_delta "$TEST_OUT/$tag.before" qps_destroyed)"
			((want > 0)) || continue
			acked=$(verbs_delta "$TEST_OUT/$tag.before" acked_bytes)
			rx=$(verbs_delta "$TEST_OUT/$tag.before" rx_bytes)
			assert_eq "cc=$cc ${round[*]}: bytes acked to the requesters" "$want" "$acked"
			# The responder's hook sees every request before its PSN check,
			# so a retransmission (rxe's timeout under TCG) is seen twice:
			# the packets rxe counted as duplicate or out of sequence, each
			# a full packet here (64 KB messages).
			again=$(($(verbs_again) - again0))
			pkt=$((rx / $(verbs_delta "$TEST_OUT/$tag.before" rx_packets)))
			((again == 0)) || info "cc=$cc ${round[*]}: $again packets arrived again (retransmitted), $pkt B each"
			assert_eq "cc=$cc ${round[*]}: bytes taken up by the responders, less those taken up again" "$want" $((rx - again * pkt))
		done
		if [[ "$every_round" == *" $cc "* ]]; then
			info "cc=$cc: ${#tools[@]} programs completed in ${#VERBS_ROUNDS[@]} rounds; write $(tb_bw_mbit "$TEST_OUT/$cc-ib_write_bw-client.txt") Mb/s," \
				"read $(tb_bw_mbit "$TEST_OUT/$cc-ib_read_bw-client.txt") Mb/s"
		else
			info "cc=$cc: the first round's programs completed; write $(tb_bw_mbit "$TEST_OUT/$cc-ib_write_bw-client.txt") Mb/s"
		fi
		# Each algorithm's kernel record on its own, so that a run stopped
		# in a later one (8 to 12 minutes per algorithm on the debug kernel)
		# still shows this one's was clean. The suite checks the whole
		# test again at its end.
		! tb_kernel_reported "$TEST_OUT/dmesg-$cc.txt" || fail "cc=$cc: kernel warning in dmesg"
		tb_debug_checks_live || fail "cc=$cc: the debug kernel's checks went off"
		info "cc=$cc: dmesg clean so far${RXECC_DEBUG_KERNEL:+, lockdep and kmemleak still on}"
	done
	local first full=0
	read -ra first <<<"${VERBS_ROUNDS[0]}"
	for cc in "${ccs[@]}"; do [[ "$every_round" != *" $cc "* ]] || full=$((full + 1)); done
	assert_eq "runs" $((full * ${#tools[@]} + (${#ccs[@]} - full) * ${#first[@]})) "$runs"
	local s=$TEST_OUT/ports.jsonl
	rxecc port stats --json >"$s"
	assert_eq "drops at the switch" 0 "$(psum "$s" drops)"
}

# UD QPs carry datagrams without acknowledgements; rxe_cc has nothing to
# control there and must leave them alone (no state, stock behaviour), under
# an algorithm that changes RC QPs (ACC: ECN-capable data, an ACK per packet).
#@ suite
test_verbs_ud() {
	tb_load_rxe patched
	tb_load_cc cc=acc
	rxecc testbed up bridge2
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/before"
	verbs_flow ib_send_bw "$TEST_OUT/ud" -c UD -s 2048 -n 500 \
		|| fail "UD ib_send_bw failed: $(tail -2 "$TEST_OUT/ud-client.txt")"
	assert_eq "UD: bytes perftest reported" $((2048 * 500)) "$(tb_bw_bytes "$TEST_OUT/ud-client.txt")"
	assert_eq "UD: QPs rxe_cc took on" 0 "$(verbs_delta "$TEST_OUT/before" qps_created)"
	assert_eq "UD: packets rxe_cc saw" 0 "$(verbs_delta "$TEST_OUT/before" tx_packets)"
	# And RC beside it is still controlled.
	verbs_flow ib_send_bw "$TEST_OUT/rc" -s 65536 -n 20 || fail "RC ib_send_bw after UD failed"
	assert_eq "RC after UD: QPs rxe_cc took on" 2 "$(verbs_delta "$TEST_OUT/before" qps_created)"
}

# RDMA CM: perftest connects with rdma_cm (-R) instead of its TCP
# exchange; the QPs are created and moved through their states by the CM.
# Under ACC, the algorithm that changes RC QPs most, and none. Each
# perftest -R server takes from 30 s to over 3 minutes under TCG to open
# rdma_cm before it listens (seen with strace: the time goes inside
# librdmacm's start-up, right after it opens /dev/infiniband/rdma_cm, not
# in rxe_cc), so this test is not in the default suite: run it by name.
#@ by-name
test_verbs_rdma_cm() {
	local cc acked
	tb_load_rxe patched
	rxecc testbed up bridge2
	for cc in none acc; do
		rmmod rxe_cc 2>/dev/null || true
		tb_load_cc cc="$cc"
		cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/$cc.before"
		# The server listens with rdma_cm, not on TCP, so readiness is
		# seen in its output, not with ss.
		ip netns exec h0 nice -n "$TB_NICE" stdbuf -oL ib_write_bw -R -d rxe0 -s 65536 -n 40 -F >"$TEST_OUT/$cc-server.txt" 2>&1 &
		local server=$! i
		for ((i = 0; i < 1200; i++)); do
			grep -q "Waiting for client rdma_cm QP" "$TEST_OUT/$cc-server.txt" && break
			kill -0 "$server" 2>/dev/null || break
			sleep 0.1
		done
		ip netns exec h1 nice -n "$TB_NICE" ib_write_bw -R -d rxe1 -s 65536 -n 40 -F "$(tb_ip 0)" \
			>"$TEST_OUT/$cc-client.txt" 2>&1 || { kill "$server" 2>/dev/null; fail "cc=$cc: RDMA CM client failed: $(tail -2 "$TEST_OUT/$cc-client.txt")"; }
		wait "$server" || fail "cc=$cc: RDMA CM server failed: $(tail -2 "$TEST_OUT/$cc-server.txt")"
		assert_eq "cc=$cc RDMA CM: bytes perftest moved" $((65536 * 40)) "$(tb_bw_bytes "$TEST_OUT/$cc-client.txt")"
		# Over RDMA CM perftest also exchanges its parameters in SENDs on
		# the same QPs (916 B here), so the QPs carry a little more than
		# the test's bytes; what one side acked the other took up, exactly.
		acked=$(verbs_delta "$TEST_OUT/$cc.before" acked_bytes)
		assert_eq "cc=$cc RDMA CM: bytes acked = bytes taken up" "$acked" "$(verbs_delta "$TEST_OUT/$cc.before" rx_bytes)"
		assert_gt "cc=$cc RDMA CM: bytes acked, at least the test's" $((acked + 1)) $((65536 * 40))
	done
}

# rw_mix <out> [client args...]: tests/rw_mix.py between h1 (client) and
# h0 (server) on TB_PORT_BASE + 60; its JSON in <out>.json.
rw_mix() {
	local out=$1 port=$((TB_PORT_BASE + 60)) server i rc=0
	shift
	ip netns exec h0 /usr/bin/python3 "$RXECC_TOP/tests/rw_mix.py" server rxe0 "$(tb_gid 0)" $port \
		2>"$out-server.txt" &
	server=$!
	for ((i = 0; i < 300; i++)); do
		tb_listening $server python3 $port && break
		kill -0 $server 2>/dev/null || break
		tb_nap 0.1
	done
	ip netns exec h1 env RXECC_DEBUGFS=/proc/1/root/sys/kernel/debug \
		timeout 300 /usr/bin/python3 "$RXECC_TOP/tests/rw_mix.py" client rxe1 "$(tb_gid 1)" \
		"$(tb_ip 0)" $port "$@" >"$out.json" 2>"$out-client.txt" || rc=$?
	wait $server || rc=$?
	((rc == 0)) || { cat "$out-server.txt" "$out-client.txt" >&2; fail "rw_mix failed (exit $rc)"; }
}

# rw_mix_count <json> <round> <when> <counter>: a counter of the client QP
# from rw_mix's JSON (<when>: end or after_reset); empty if it has none.
rw_mix_count() {
	/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["rounds"][int(sys.argv[2])]
print((r.get(sys.argv[3]) or {}).get(sys.argv[4], ""))' "$@"
}

# One QP that mixes WRITE and READ: rxe_cc must count a READ by the bytes
# its responses carry, as sent (tx_bytes) and as acked (acked_bytes).
# Twenty pairs of a 64 KB WRITE and a 40 KB READ take 520 PSNs, 26 a pair,
# so READs land on PSNs (mod 256, rdma_rxe's per-PSN payload ring) that
# WRITEs used before, whose payloads a READ's responses once summed. Then
# two pairs of a 64 KB WRITE and a 2 MB READ (512 PSNs, twice the ring),
# each READ posted behind a WRITE whose ACKs netem holds 20 ms at h0: a
# READ once cleared every slot it spans, the WRITE's among them, which
# then acked 0 bytes.
#@ suite
test_verbs_rw_mix() {
	local cc size=65536 rsize=40960 iters=20 big=$((2 << 20)) rc
	tb_load_rxe patched
	rxecc testbed up bridge2
	for cc in hpcc acc; do
		tb_load_cc cc=$cc || return 1
		rw_mix_bytes "cc=$cc" "$TEST_OUT/$cc" $iters $size $rsize || return 1
		ip netns exec h0 tc qdisc add dev v0 root netem delay 20ms limit 100000 || return 1
		rc=0
		rw_mix_bytes "cc=$cc, 2 MB READs behind unacked WRITEs" "$TEST_OUT/$cc-big" 2 $size $big || rc=1
		ip netns exec h0 tc qdisc del dev v0 root
		((rc == 0)) || return 1
		rmmod rxe_cc || return 1
	done
}

# rw_mix_bytes <label> <out> <iters> <write> <read>: one round of rw_mix;
# rxe_cc must count every byte written and read as sent and as acked.
rw_mix_bytes() {
	local label=$1 json=$2 iters=$3 size=$4 rsize=$5 want c
	want=$(((size + rsize) * iters))
	rw_mix "$json" 1 "$iters" "$size" "$rsize" || return 1
	info "$label: written $size x $iters, read $rsize x $iters; tx_bytes $(rw_mix_count "$json.json" 0 end tx_bytes), acked_bytes $(rw_mix_count "$json.json" 0 end acked_bytes)"
	for c in tx_bytes acked_bytes; do
		assert_eq "$label: bytes written and read ($c)" $want "$(rw_mix_count "$json.json" 0 end $c)" || return 1
	done
}

# A QP moved to RESET and connected again from a send PSN half the PSN
# space away starts with fresh CC state: HPCC's window still limits it
# (state kept across judged every new PSN a retransmission, which the
# window lets through). A round is 10 pairs of 64 KB WRITE and READ; the
# window (line rate x T: 100 Mb/s x 1 ms, 12.5 KB) is far smaller, and the
# 5 ms that netem adds to h0's responses keep more than it in flight at
# HPCC's pacing rate (W/T).
#@ suite
test_qp_reset() {
	local size=65536 iters=10 json r before after
	tb_load_rxe patched
	rxecc testbed up bridge2
	ip netns exec h0 tc qdisc add dev v0 root netem delay 5ms limit 100000 || return 1
	tb_load_cc cc=hpcc line_rate_mbps=100 hpcc_t_us=1000 || return 1
	json=$TEST_OUT/reset
	rw_mix "$json" 2 $iters $size $size --reset || return 1
	for r in 0 1; do
		before=$(rw_mix_count "$json.json" $r after_reset tx_windowed)
		after=$(rw_mix_count "$json.json" $r end tx_windowed)
		info "round $((r + 1)): tx_windowed $before after the reset, $after at the end"
		assert_gt "round $((r + 1)): sends HPCC's window held (tx_windowed)" $((after - before)) 0 || return 1
	done
	before=$(rw_mix_count "$json.json" 1 after_reset acked_bytes)
	after=$(rw_mix_count "$json.json" 1 end acked_bytes)
	assert_eq "round 2: bytes acked" $((2 * size * iters)) $((after - before))
}
