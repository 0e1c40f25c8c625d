# GFC and deadlock (docs/switch.md): the GFC paper's ring, scaled, on
# `triangle` (testbed/experiments/ring.toml). Three flows, each to the host
# two hops clockwise, offer every ring link twice its rate. With PFC the
# ring deadlocks; with buffer-based GFC it does not, and each flow gets
# about half the link.

GFC_EXP=$RXECC_TOP/testbed/experiments/ring.toml
# A 4 s ACK timeout (perftest -u 20, as the switch tests use): a flow held
# at a low GFC stage must not run out of retries.
GFC_PERF=(-s 65536 -u 20)
# Under PFC, four QPs per flow: rxe keeps at most 128 packets (512 KB)
# unacknowledged per QP, and a CBD locks only once each switch holds XON
# of the next hop's bytes; the paper's hosts send with no window at all.
# (Under GFC, four QPs per flow left one flow, started last, stuck behind
# the others' 2 MB host queues in 2 runs of 6; one QP each, as here, has
# not.)
GFC_PFC_QPS=(-q 4)

# gfc_cycle <rxecc deadlock --json output>: its cycle as JSON, [] if none
# (sed, not python: a Python start costs 2 s under TCG).
gfc_cycle() { sed -n 's/.*"cycle":\(\[[^]]*\]\).*/\1/p' "$1"; }

# gfc_rate <run>: the ring's link rate C in that run of ring.toml, Mb/s.
gfc_rate() { rxecc experiment rate "$GFC_EXP" "$1"; }

# gfc_ring_up <run>: triangle with that run's flow control.
gfc_ring_up() {
	rxecc experiment topology "$GFC_EXP" "$1" >"$TEST_OUT/ring-$1.toml" || fail "cannot derive the ring for $1"
	rxecc testbed up "$TEST_OUT/ring-$1.toml" 2>"$TEST_OUT/up-$1.txt" || fail "testbed up ($1): $(tail -3 "$TEST_OUT/up-$1.txt")"
}

# gfc_ring_start <run> <iters> [perftest args]: the three clockwise
# flows, h0 -> h2, h1 -> h0, h2 -> h1, in the background (pids in
# GFC_PIDS).
GFC_PIDS=()
gfc_ring_start() {
	local run=$1 n=$2 h
	shift 2
	GFC_PIDS=()
	for h in 0 1 2; do
		tb_write_bw_server $(((h + 2) % 3)) $((18700 + h)) "$TEST_OUT/$run-f$h-server.txt" "${GFC_PERF[@]}" "$@" -n "$n" || return 1
	done
	for h in 0 1 2; do
		tb_write_bw_client "$h" $(((h + 2) % 3)) $((18700 + h)) "$TEST_OUT/$run-f$h.txt" "${GFC_PERF[@]}" "$@" -n "$n" &
		GFC_PIDS+=($!)
	done
}

# gfc_delivered <tag>: bytes the switches delivered to the hosts in 2 s
# (port snapshots before and after in $TEST_OUT/<tag>-{before,after}.jsonl).
gfc_delivered() {
	rxecc port stats --json >"$TEST_OUT/$1-before.jsonl"
	sleep 2
	ports_snap "$TEST_OUT/$1-after.jsonl"
	echo $(($(psum "$TEST_OUT/$1-after.jsonl" deq_bytes 'p*') - $(psum "$TEST_OUT/$1-before.jsonl" deq_bytes 'p*')))
}

# gfc_wait_ring_busy: until every ring link has carried data (perftest
# takes seconds to start under TCG), at most 60 s.
gfc_wait_ring_busy() {
	local i n
	for ((i = 0; i < 600; i++)); do
		n=$(rxecc port stats --json | grep -E '"dev":"x(0_1|1_2|2_0)"' |
			grep -o '"deq_pkts":[0-9]*' | cut -d: -f2 | awk '$1 > 100' | wc -l)
		[ "$n" = 3 ] && return 0
		sleep 0.1
	done
	return 1
}

# Under PFC: the ring deadlocks. `rxecc deadlock` names the cycle of ring
# ports, each paused with bytes queued; no receiver gets a byte while it
# holds; and nothing was dropped. Then GFC, switched on at run time,
# frees it.
test_gfc_ring_pfc_deadlock() {
	local s=$TEST_OUT/locked-after.jsonl d=$TEST_OUT/deadlock.json delivered i found=0 rate
	tb_load_rxe patched
	tb_load_cc cc=none
	gfc_ring_up pfc
	# rxecc record watches too: the deadlock must show in its recording.
	rxecc record --out "$TEST_OUT/rec" --interval-ms 50 --deadlock-hold-ms 1000 2>"$TEST_OUT/record.log" &
	local rec=$!
	# Enough bytes to fill the ring many times over; they never all arrive.
	gfc_ring_start pfc 2000 "${GFC_PFC_QPS[@]}" || fail "perftest did not start"
	gfc_wait_ring_busy || fail "the ring links never carried the flows"
	# A deadlock forms within seconds; look for up to 45 s.
	for ((i = 0; i < 15; i++)); do
		rxecc deadlock --hold-ms 2000 --json >"$d" || fail "rxecc deadlock"
		cp "$d" "$TEST_OUT/deadlock-look$i.json"
		if [ "$(gfc_cycle "$d")" != "[]" ]; then
			found=1
			break
		fi
	done
	rxecc deadlock --hold-ms 500 >"$TEST_OUT/deadlock.txt"
	info "$(head -1 "$TEST_OUT/deadlock.txt") after $((i + 1)) looks"
	assert_eq "deadlock found" 1 "$found"
	assert_eq "ports in the cycle" 3 "$(gfc_cycle "$d" | awk -F, '{print $1 == "[]" ? 0 : NF}')"
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
stuck = {p["dev"]: p for p in r["stuck"]}
bad = [d for d in r["cycle"] if not stuck[d]["paused"] or stuck[d]["qlen_bytes"] == 0]
sys.exit("not paused with bytes queued: %s" % bad if bad else 0)' "$d" || fail "a port of the cycle is not paused with bytes queued"
	# Every flow at 0: once the bytes that had passed the ring before it
	# locked have reached their hosts, no switch delivers anything for 2 s.
	sleep 2
	delivered=$(gfc_delivered locked)
	info "delivered to the hosts in 2 s: $delivered B; queued in the ring: $(psum "$s" qlen_bytes 'x*') B;" \
		"pauses received by ring ports: $(psum "$s" pfc_rx_xoff 'x*') (refreshes sent: $(psum "$s" ingress.pfc_tx_refresh 'x*'); pauses that ran out before renewal: $(psum "$s" pause_expired 'x*'))"
	# At 0: all three together got less than 1% of what one link carries
	# in 2 s (a stray control packet is not a flow moving).
	rate=$(gfc_rate pfc)
	assert_gt "1% of C x 2 s, against the bytes delivered while deadlocked" $((rate * 1000000 * 2 / 8 / 100)) "$delivered"
	assert_eq "drops" 0 "$(psum "$s" drops)"
	# rxecc stats says so too, naming the cycle.
	rxecc stats --deadlock-hold-ms 500 >"$TEST_OUT/stats.txt" || fail "rxecc stats"
	assert_eq "rxecc stats: its deadlock line" 1 "$(grep -c '^deadlock: x' "$TEST_OUT/stats.txt")"

	# GFC, switched on under the deadlock, ends it: a pause left without
	# renewal runs out, and from then on no port's rate is 0. The ring
	# moves again (the flows get their bytes through) and nothing is lost.
	local t_gfc
	t_gfc=$(tb_monotonic_ns)
	rxecc testbed flow-control --mode gfc-buffer 2>"$TEST_OUT/flow-control.txt" ||
		fail "switching to GFC: $(cat "$TEST_OUT/flow-control.txt")"
	sleep 3
	delivered=$(gfc_delivered gfc)
	rxecc deadlock --hold-ms 1000 --json >"$TEST_OUT/deadlock-gfc.json" || fail "rxecc deadlock"
	info "after the switch to GFC: $delivered B delivered to the hosts in 2 s;" \
		"$(rxecc deadlock --hold-ms 200 | head -1)"
	# Moving again: more than the 1% of C that counted as 0 above. (The ring
	# drains slowly: its queues hold far more than B_m, so it starts at
	# GFC's last stage.)
	assert_gt "bytes delivered in 2 s once GFC is on, against 1% of C x 2 s" "$delivered" $((rate * 1000000 * 2 / 8 / 100))
	assert_eq "deadlock cycle once GFC is on" "[]" "$(gfc_cycle "$TEST_OUT/deadlock-gfc.json")"
	assert_eq "drops across the switch" 0 "$(psum "$TEST_OUT/gfc-after.jsonl" drops)"
	# The recording: the deadlock's start with the ring's three ports, and
	# its end once GFC was on.
	kill -INT "$rec"
	wait "$rec" || fail "rxecc record failed: $(tail -2 "$TEST_OUT/record.log")"
	local csv=$TEST_OUT/rec/deadlocks.csv
	info "rxecc record: $(grep -c ',start,' "$csv") deadlock(s): $(grep -v '^t_ns' "$csv" | cut -d, -f2,3 | tr '\n' ';')"
	# Under PFC: one deadlock, of the ring's three ports. Right after the
	# switch the ring drains at GFC's last stage, where a port can send
	# nothing for longer than the recorder's 1000 ms hold (one run in the
	# suite recorded such a stall 1 s after the deadlock's end, lasting
	# 1.9 s): those count only if they do not end.
	assert_eq "deadlock cycles recorded under PFC" 1 "$(awk -F, -v t="$t_gfc" '$2 == "start" && $1 < t' "$csv" | wc -l)"
	assert_eq "ports of the recorded cycle" 3 "$(awk -F, '$2 == "start" {print split($3, a, " "); exit}' "$csv")"
	assert_eq "recorded deadlocks without an end" 0 $(($(grep -c ',start,' "$csv") - $(grep -c ',end,' "$csv")))
	assert_eq "the recording's last event" end "$(tail -1 "$csv" | cut -d, -f2)"
	# The switch to GFC itself ended the pauses (each switch's first GFC
	# frame, sent at its next refresh wake), not their running out (0xffff
	# quanta: 1.68 s at 20 Mb/s).
	local moved_ms pause_ms
	moved_ms=$(awk -F, -v t="$t_gfc" '$2 ~ /^x(0_1|1_2|2_0)$/ {
		if ($1 > t && $2 in last && $6 > last[$2]) { print int(($1 - t) / 1000000); exit }
		last[$2] = $6 }' "$TEST_OUT/rec/ports.csv")
	pause_ms=$(($(sed -n 's/^pause_quanta = //p' "$TEST_OUT/ring-pfc.toml" | sort -n | tail -1) * 512 / (rate * 1000)))
	info "the ring moved again ${moved_ms:-never} ms after the switch to GFC began (a pause lasts $pause_ms ms)"
	assert_eq "ring pauses that ran out after the switch to GFC" 0 \
		$(($(psum "$TEST_OUT/gfc-after.jsonl" pause_expired 'x*') - $(psum "$s" pause_expired 'x*')))
	# The ring still holds far more than B_m, and drains at GFC's last
	# stage. perftest's QPs must not be destroyed while their packets sit
	# in a queue (rxe waits 50 s for them, then warns): flow control off,
	# everything leaves at the full rate first.
	rxecc testbed flow-control --mode none 2>/dev/null || fail "switching flow control off"
	pkill -x ib_write_bw || true
	for i in "${GFC_PIDS[@]}"; do wait "$i" 2>/dev/null || true; done
	tb_wait_servers 2>/dev/null || true
	rxecc testbed down
}

# gfc_ring <run>: the ring under that run's GFC from the start: no
# deadlock, every flow completes at a fair share of the ring, the ingress
# queues stay below the shared buffer, GFC acts (frames sent and obeyed)
# and PFC never pauses; nothing is dropped.
gfc_ring() {
	local run=$1
	local s=$TEST_OUT/ports.jsonl d=$TEST_OUT/deadlock.json h bw rc=0 mid
	local rate bm half limit t n=150 t0 t1
	tb_load_rxe patched
	tb_load_cc cc=none
	gfc_ring_up "$run"
	rate=$(gfc_rate "$run")
	bm=$(rxecc experiment get "$GFC_EXP" switch.gfc_bm_bytes)
	half=$((rate / 2))
	# 150 x 64 KB per flow: about 8 s at C/2 = 10 Mb/s.
	t0=$(date +%s%N)
	gfc_ring_start "$run" $n || fail "perftest did not start"
	gfc_wait_ring_busy || fail "the ring links never carried the flows"
	rxecc port stats --json >"$TEST_OUT/mid.jsonl"
	rxecc deadlock --hold-ms 1000 --json >"$d" || fail "rxecc deadlock"
	# A ring held at a near-zero rate would never finish: give up at ten
	# times the flows' time at C/2.
	limit=$((n * 65536 * 8 * 10 / (half * 1000000) + 30))
	for ((t = 0; t < limit * 10; t++)); do
		kill -0 "${GFC_PIDS[@]}" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "${GFC_PIDS[@]}" 2>/dev/null && { info "flows still running after $limit s"; rc=1; }
	((rc == 0)) || pkill -x ib_write_bw
	for h in "${GFC_PIDS[@]}"; do wait "$h" || rc=1; done
	tb_wait_servers || rc=1
	t1=$(date +%s%N)
	ports_snap "$s"
	mid=$(psum "$TEST_OUT/mid.jsonl" max:ingress.bytes 'x*')
	info "rates (C = $rate Mb/s): $(for h in 0 1 2; do printf 'f%d %s  ' $h "$(tb_bw_mbit "$TEST_OUT/$run-f$h.txt")"; done)"
	info "ring ingress peak $(psum "$s" max:ingress.max_bytes 'x*') B, mid-run $mid B (B_m $bm B);" \
		"GFC frames sent $(psum "$s" ingress.gfc_tx) (highest stage $(psum "$s" max:ingress.gfc_max_stage)), obeyed $(psum "$s" gfc_rx);" \
		"time below full rate, ring ports: $(psum "$s" list:gfc_limited_ns 'x*');" \
		"dequeues that waited for credit (time-based): $(psum "$s" gfc_credit_waits), packets it slowed: $(psum "$s" gfc_credit_slowed)"
	# GFC's feedback overhead: frames per second per switch ingress port,
	# and their share of its link (64 B each on the wire); the paper
	# measured 0.21% on average. And tau, from the frames' stamps.
	info "$(awk -v f="$(psum "$s" ingress.gfc_tx)" -v n="$(grep -c '"ingress":{' "$s")" \
		-v t="$(((t1 - t0) / 1000000))" -v c="$rate" 'BEGIN {
		fps = f / n / (t / 1000); printf "GFC feedback: %.0f frames/s per ingress port over %.1f s, %.3f%% of its link", fps, t / 1000, fps * 64 * 8 * 100 / (c * 1e6) }');" \
		"tau mean (worst port) $(($(psum "$s" max:tau_mean_ns) / 1000)) us, max $(($(psum "$s" max:tau_max_ns) / 1000)) us"
	# What the emulation itself lost: dequeues more than stall_ns (2 ms)
	# late with packets waiting, the guest's timers under TCG. The same
	# in both GFC modes (docs/switch.md); it caps the flows' rates.
	info "emulation: ring ports stalled at most $(psum "$s" max:stalls 'x*') times and" \
		"$(awk -v n="$(psum "$s" max:stall_ns 'x*')" -v t="$((t1 - t0))" 'BEGIN {printf "%.1f%%", n * 100 / t}') of the run"
	((rc == 0)) || fail "not every flow completed"
	assert_eq "deadlock cycle under GFC" "[]" "$(gfc_cycle "$d")"
	# Every flow moves (under PFC all three sit at 0), and they share the
	# ring fairly: the slowest gets at least half of the fastest. How near
	# C/2 they come is the bench's number (docs/switch.md says why not all
	# the way under TCG).
	local rates=()
	for h in 0 1 2; do
		bw=$(tb_bw_mbit "$TEST_OUT/$run-f$h.txt")
		rates+=("${bw:-0}")
		awk -v b="${bw:-0}" -v c="$rate" 'BEGIN {exit !(b > c / 20 && b <= c * 1.05)}' ||
			fail "flow $h at ${bw:-?} Mb/s: not between C/20 and C (C = $rate Mb/s)"
	done
	awk -v r="${rates[*]}" 'BEGIN {n = split(r, a, " "); lo = a[1]; hi = a[1]
		for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
		exit !(lo * 2 >= hi)}' || fail "unfair: ${rates[*]} Mb/s"
	assert_gt "GFC frames sent" "$(psum "$s" ingress.gfc_tx)" 0
	# GFC slowed the ring ports, not only sent frames: the ring is offered
	# 2C per link, and frames that never lower a rate pass every check
	# above while the flows are held back by the guest's CPU alone.
	case $run in
	gfc-time) assert_gt "packets the ring ports sent slowed by time-based GFC's credit" "$(psum "$s" gfc_credit_slowed 'x*')" 0 ;;
	gfc-buffer) assert_gt "highest GFC stage a ring port obeyed" "$(psum "$s" max:gfc_max_stage 'x*')" 0 ;;
	esac
	assert_gt "GFC frames obeyed" "$(psum "$s" gfc_rx)" 0
	# tau is measured under either mode (from the frames' stamps), not
	# printed as 0 for want of samples.
	assert_gt "tau samples from the GFC frames' stamps" "$(psum "$s" tau_n)" 0
	# Each frame sent was obeyed, or ignored as older than one obeyed.
	assert_eq "GFC frames sent = obeyed + stale" "$(psum "$s" ingress.gfc_tx)" \
		$(($(psum "$s" gfc_rx) + $(psum "$s" pfc_rx_stale)))
	assert_eq "GFC stage left after the run (idle once the flows end)" 0 "$(psum "$s" gfc_stage)"
	# B_m is where the last stage starts, not a cap: a queue may pass it
	# by what arrives within tau at that stage's rate. Three ports' worth
	# of B_m is the switch's buffer.
	assert_gt "B_m x 3/2, against the peak ingress queue" $((bm * 3 / 2)) "$(psum "$s" max:ingress.max_bytes)"
	assert_eq "PFC pauses" 0 "$(psum "$s" pfc_rx_xoff)"
	assert_eq "drops" 0 "$(psum "$s" drops)"
	assert_eq "buffer held after the run" 0 "$(psum "$s" ingress.bytes)"
	rxecc testbed down
}

test_gfc_ring_buffer() { gfc_ring gfc-buffer; }

# Time-based GFC: credit advertisements every period, the credit left
# mapped to a rate.
test_gfc_ring_time() { gfc_ring gfc-time; }

# ACC's deadlock claim on the ring (testbed/experiments/ring-cc.toml): the
# same CBD and PFC settings, an end-to-end CC on the hosts.
RING_CC_EXP=$RXECC_TOP/testbed/experiments/ring-cc.toml

# ring_cc_run <label> <out> [iters per QP]: the ring's three flows (four
# QPs each) under that run's CC with PFC, `rxecc record` watching for
# deadlocks, until the flows end or a deadlock is recorded (then flow
# control goes off, so that the flows' bytes drain before perftest is
# stopped). Prints its row (summary.jsonl and .json): seconds to the
# deadlock if any, C, the flows' rates, pauses, peak ingress, marks and
# drops. Returns 1 if set-up failed, 2 if the flows
# neither ended nor deadlocked in time.
ring_cc_run() {
	local label=$1 out=$2 n=${3:-60} t limit rc=0 rec s rate dl=- h t0
	tb_fresh_dir "$out"
	tb_load_rxe patched || return 1
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(rxecc experiment knobs "$RING_CC_EXP" "$label") || return 1
	rxecc experiment topology "$RING_CC_EXP" "$label" >"$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	rate=$(rxecc experiment rate "$RING_CC_EXP" "$label")
	# Perftest started at once after the bring-up locked the ring under
	# ACC in most first runs; 2 s later, in none so far (docs/testing.md,
	# "Measurements behind the harness"). Why is open (docs/switch.md).
	sleep 2
	rxecc record --out "$out/rec" --interval-ms 50 --deadlock-hold-ms 1000 2>"$out/record.log" &
	rec=$!
	# On the recording's clock (CLOCK_MONOTONIC).
	t0=$(tb_monotonic_ns)
	TEST_OUT=$out gfc_ring_start "$label" "$n" "${GFC_PFC_QPS[@]}" || return 1
	# Each flow's 4 x n x 64 KB at C/2, three times over, and perftest's
	# set-up.
	limit=$((4 * n * 65536 * 8 * 3 / (rate * 1000000 / 2) + 30))
	for ((t = 0; t < limit * 10; t++)); do
		kill -0 "${GFC_PIDS[@]}" 2>/dev/null || break
		grep -q ',start,' "$out/rec/deadlocks.csv" 2>/dev/null && break
		sleep 0.1
	done
	if grep -q ',start,' "$out/rec/deadlocks.csv" 2>/dev/null; then
		dl=$(awk -F, -v t0="$t0" '$2 == "start" {print ($1 - t0) / 1e9; exit}' "$out/rec/deadlocks.csv")
		rxecc port stats --json >"$out/locked.jsonl"
		rxecc testbed flow-control --mode none 2>/dev/null
		sleep 2
		pkill -x ib_write_bw
	elif kill -0 "${GFC_PIDS[@]}" 2>/dev/null; then
		echo "ring_cc_run: $label: the flows neither ended nor deadlocked in $limit s" >&2
		rc=2
		rxecc testbed flow-control --mode none 2>/dev/null
		sleep 2
		pkill -x ib_write_bw
	fi
	for h in "${GFC_PIDS[@]}"; do wait "$h" || true; done
	tb_wait_servers 2>/dev/null || true
	kill -INT "$rec"
	wait "$rec" || echo "ring_cc_run: $label: rxecc record failed: $(tail -2 "$out/record.log")" >&2
	s=$out/ports.jsonl
	ports_snap "$s"
	# Deadlocked: the counters as it stood (releasing it with flow control
	# off drops what the senders still push into the full buffers).
	[ -f "$out/locked.jsonl" ] && s=$out/locked.jsonl
	rm -f "$out/summary.jsonl"
	measured_row "$out/summary.jsonl" "$label" deadlock_after_s="$dl" c_mbps="$rate" \
		f0_mbps="$(tb_bw_mbit "$out/$label-f0.txt")" f1_mbps="$(tb_bw_mbit "$out/$label-f1.txt")" \
		f2_mbps="$(tb_bw_mbit "$out/$label-f2.txt")" ring_pauses="$(psum "$s" pfc_rx_xoff 'x*')" \
		peak_ingress_kb="$(($(psum "$s" max:ingress.max_bytes 'x*') / 1024))" \
		ce_marks="$(($(psum "$s" tcd_ce) + $(psum "$s" red_above_marked) + $(psum "$s" red_between_marked)))" \
		ue_marks="$(psum "$s" tcd_ue)" drops="$(psum "$s" drops)"
	measured_table "$out/summary.jsonl" | tee "$out/summary.txt"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	return $rc
}

# ACC on the PFC ring: the flows converge before the pauses close the
# cycle, so the ring does not lock; each flow completes, nothing is
# dropped. (Plain PFC on the same ring locks in every run:
# test_gfc_ring_pfc_deadlock, and ring_cc_run under cc=none.) The claim is
# a rate, not "never": the paper's is 0 of 50 runs, and here the ring's
# ingress queues reach XOFF in every run (5 to 63 pauses), so a run may
# lock (CI saw one: docs/testing.md, "Measurements behind the harness").
# A second run is made when the first locks, and the test fails if both
# lock. DCQCN's rate, and several rounds, are make bench's.
test_gfc_ring_acc() {
	local out=$TEST_OUT/acc s rc=0 round=1
	ring_cc_run acc "$out" || rc=$?
	((rc != 1)) || fail "the ring did not come up under ACC"
	if grep -q ',start,' "$out/rec/deadlocks.csv"; then
		info "run 1 locked the ring ($(awk -F, '$2 == "start" {print "cycle " $3; exit}' "$out/rec/deadlocks.csv")); ACC's claim is a rate: a second run"
		out=$TEST_OUT/acc-run2 rc=0 round=2
		ring_cc_run acc "$out" || rc=$?
		((rc != 1)) || fail "the ring did not come up under ACC (run 2)"
	fi
	s=$out/ports.jsonl
	assert_eq "deadlocks recorded under ACC (run $round)" 0 "$(grep -c ',start,' "$out/rec/deadlocks.csv")"
	((rc == 0)) || fail "the flows did not end"
	for h in 0 1 2; do
		assert_gt "flow $h's rate, Mb/s x 1000" "$(awk -v b="$(tb_bw_mbit "$out/acc-f$h.txt")" 'BEGIN {printf "%d", b * 1000}')" 0
	done
	# ACC acted: the ring was congested enough to mark.
	assert_gt "TCD marks on the ring" "$(($(psum "$s" tcd_ce 'x*') + $(psum "$s" tcd_ue 'x*')))" 0
	assert_eq "drops" 0 "$(psum "$s" drops)"
}

# gfc_flatten <summary.json>: "label key value" per metric (one Python
# start for all of them).
gfc_flatten() {
	python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])):
    for k, v in r.items():
        print(r["label"], k, "null" if v is None else v)' "$1"
}

# gfc_summary <summary.flat> <run> <metric>: the value, "null", or
# "absent".
gfc_summary() { awk -v r="$2" -v k="$3" '$1 == r && $2 == k {print $3; f = 1} END {if (!f) print "absent"}' "$1"; }

# The ring through `rxecc run`, and the GFC paper's recipe on it. First
# ring-cc.toml's control run (PFC, no CC, twelve QPs posted over 1 s):
# the CBD locks, `rxecc record` sees it, and `rxecc run` releases it
# (flow control off) so that every flow completes, counting the deadlock
# and no drop before the release. Then paper/gfc-ring.toml (ring.toml,
# one QP per flow) under buffer-based and time-based GFC: no deadlock, no
# drop, every flow completes, every claim judged on a number. Met or
# missed is reported, not asserted: the fair shares are
# test_gfc_ring_buffer's and test_gfc_ring_time's.
test_gfc_ring_recipe() {
	local d=$TEST_OUT/paper lock=$TEST_OUT/lock l run
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RING_CC_EXP" --runs none --out "$lock" >"$TEST_OUT/lock.txt" 2>"$TEST_OUT/lock.log" ||
		fail "rxecc run ring-cc.toml --runs none: $(grep -v '^rxecc run: /' "$TEST_OUT/lock.log" | tail -3)"
	gfc_flatten "$lock/summary.json" >"$lock/summary.flat"
	assert_gt "no CC under PFC: deadlocks recorded" "$(gfc_summary "$lock/summary.flat" none deadlocks)" 0
	[ -f "$lock/none/locked.jsonl" ] || fail "no locked.jsonl: rxecc run did not release the deadlock"
	assert_eq "no CC under PFC: flows completed" 12 "$(gfc_summary "$lock/summary.flat" none flows)"
	assert_eq "no CC under PFC: drops before the release" 0 "$(gfc_summary "$lock/summary.flat" none drops)"
	rxecc paper "$RXECC_TOP/testbed/experiments/paper/gfc-ring.toml" --out "$d" >"$TEST_OUT/claims.txt" 2>"$TEST_OUT/run.log" ||
		fail "rxecc paper gfc-ring: $(grep -v '^rxecc run: /' "$TEST_OUT/run.log" | tail -3)"
	while read -r l; do info "$l"; done <"$TEST_OUT/claims.txt"
	gfc_flatten "$d/summary.json" >"$d/summary.flat"
	for run in gfc-buffer gfc-time; do
		assert_eq "$run: flows completed" 3 "$(gfc_summary "$d/summary.flat" "$run" flows)"
		assert_eq "$run: drops" 0 "$(gfc_summary "$d/summary.flat" "$run" drops)"
		assert_eq "$run: deadlocks recorded" 0 "$(gfc_summary "$d/summary.flat" "$run" deadlocks)"
		assert_eq "$run: released" null "$(gfc_summary "$d/summary.flat" "$run" drops_after_release)"
	done
	assert_eq "claims judged on a number" "$(grep -c '"says"' "$d/claims.json")" \
		"$(grep -c '"testbed": [0-9]' "$d/claims.json" || true)"
}
