#!/usr/bin/env bash
# make bench: the testbed's numbers, part by part (BENCH_PARTS), in one
# guest boot: what the hooks cost (stock rdma_rxe against patched alone and with rxe_cc), the
# guest's capacity, the experiments' tables and the paper recipes. Rounds
# alternate the sides compared so that drift in the shared host's speed
# hits both alike. Prints ratios; never fails on speed.
set -uo pipefail
. "$RXECC_TOP/testbed/netns.sh"
ROUNDS=${BENCH_ROUNDS:-3}
out=$RESULTS/bench
mkdir -p "$out"

# BENCH_PARTS picks sections (e.g. `make bench BENCH_PARTS="cc latejoin"`);
# unset, the bench runs them all, in this order.
parts_all="clock up stock acks pacing port inject inject-gbn inject-livelock cc scale-models latejoin hops victim scale fct ring incast-gfc ring-cc repro table1"
for p in ${BENCH_PARTS:-}; do
	[[ " $parts_all " == *" $p "* ]] || { echo "bench: unknown part '$p' (parts: $parts_all)" >&2; exit 2; }
done
want() { [ -z "${BENCH_PARTS:-}" ] || [[ " $BENCH_PARTS " == *" $1 "* ]]; }

. "$RXECC_TOP/tests/cc_incast.sh"
. "$RXECC_TOP/tests/cc_hops.sh"
. "$RXECC_TOP/tests/test_switch.sh"
. "$RXECC_TOP/tests/lib.sh"
. "$RXECC_TOP/tests/test_gfc.sh"
. "$RXECC_TOP/tests/test_cc.sh"
. "$RXECC_TOP/tests/test_retry.sh"

# The guest's clock against the host's (docs/architecture.md, "The
# guest's clock"): guest seconds per host second in a busy phase (a shell
# loop on one CPU) and an idle one (sleep), and the TSC rate the kernel
# calibrated (1000 MHz, one instruction per ns, under the virtual clock).
# The host's time is the mtime the host gives a file of the shared results
# directory as it is written.
bench_clock() {
	local f=$out/.host-clock rows=$out/clock.jsonl g0 h0 g1 h1 g2 h2 i
	host_now() { : >"$f"; stat -c %.3Y "$f"; }
	guest_now() { cut -d' ' -f1 /proc/uptime; }
	echo
	echo "the guest's clock: $RXECC_CLOCK, $(nproc) vCPU(s), $(dmesg | grep -o 'tsc: Detected [0-9.]* MHz' | tail -1); busy: a shell loop of 1e6 turns, idle: sleep 20" | tee -a "$out/summary.txt"
	g0=$(guest_now) h0=$(host_now)
	for ((i = 0; i < 1000000; i++)); do :; done
	g1=$(guest_now) h1=$(host_now)
	sleep 20
	g2=$(guest_now) h2=$(host_now)
	rm -f "$f" "$rows"
	measured_row "$rows" busy guest_s="$(jq -n "$g1 - $g0")" host_s="$(jq -n "$h1 - $h0")" guest_s_per_host_s="$(jq -n "($g1 - $g0) / ($h1 - $h0)")"
	measured_row "$rows" idle guest_s="$(jq -n "$g2 - $g1")" host_s="$(jq -n "$h2 - $h1")" guest_s_per_host_s="$(jq -n "($g2 - $g1) / ($h2 - $h1)")"
	measured_table "$rows" | tee -a "$out/summary.txt"
}

# Where `rxecc testbed up` spends its time, on each shipped topology: its
# own line (net with rdma link, the programs' load beside it, ports,
# markers, INT), with the guest's clock around it and `down` after.
bench_up() {
	local topo name t0 t1 t2 rows=$out/up.jsonl
	echo
	echo "rxecc testbed up on each topology (the guest's $RXECC_CLOCK clock; phases from rxecc)" | tee -a "$out/summary.txt"
	tb_load_rxe patched
	tb_load_cc cc=none
	mkdir -p "$out/up"
	rm -f "$rows"
	for topo in "$RXECC_TOP"/testbed/topologies/*.toml; do
		name=$(basename "$topo" .toml)
		t0=$(date +%s%N)
		rxecc testbed up "$topo" 2>"$out/up/$name.txt" || { echo "$name: up failed: $(tail -1 "$out/up/$name.txt")"; continue; }
		t1=$(date +%s%N)
		rxecc testbed down 2>>"$out/up/$name.txt" || echo "$name: down failed"
		t2=$(date +%s%N)
		measured_row "$rows" "$name" up_s="$(jq -n "($t1 - $t0) / 1e9")" down_s="$(jq -n "($t2 - $t1) / 1e9")"
		echo "$name: rxecc: $(grep -o 'attached in .*' "$out/up/$name.txt")"
	done | tee -a "$out/summary.txt"
	measured_table "$rows" | tee -a "$out/summary.txt"
	rxecc modules unload
}

# What fault injection costs when its rules select nothing
# (inject-cost.toml): the rate with eight rules against none.
bench_inject() {
	bench_exp inject-cost "${BENCH_INJECT_ROUNDS:-3}" "fault injection's cost: one flow through the ports at 1600 Mb/s, no rules against 8 that select nothing"
}

# Stock rdma_rxe against patched rdma_rxe + rxe_cc none under the same
# injected drops (inject-gbn.toml): goodput, and the checkers' table of
# the hosts' reaction at p1 (sequence NAKs, go-back-N and its latency).
bench_inject_gbn() {
	bench_exp inject-gbn "${BENCH_GBN_ROUNDS:-2}" "go-back-N under injected drops, stock against patched rdma_rxe"
}

# The go-back-N livelock of rdma_rxe without the go-back-N fix (docs/switch.md,
# experiment (b); testbed/experiments/livelock.toml): h0's ACKs held 2 s at
# the switch while cc=fixed paces h1's flow, then paced below its
# retransmit timeout: retries while held, then packets sent and bytes
# acknowledged in a 4 s window, with and without the fix.
bench_inject_livelock() {
	bench_exp livelock "${BENCH_LIVELOCK_ROUNDS:-2}" "go-back-N livelock by injection, rdma_rxe without the go-back-N fix against patched"
}

# The run-to-run spread needs boots of its own: the host runs it after
# this one (tests/repro.sh; the Makefile's bench target).
bench_repro() {
	echo "repro: the host runs it after this boot (tests/repro.sh)" >&2
}

# GFC's Table 1 through fc-model (paper/gfc-table1.toml): on the host,
# after the guest (the Makefile's bench target runs `make paper`).
bench_table1() {
	echo "table1: the host runs it after this boot (make paper NAME=gfc-table1)" >&2
}

# An experiment file of testbed/experiments, its runs ROUNDS times,
# through rxecc run (which switches rdma_rxe builds where a run asks for
# one); its tables into the summary.
bench_exp() { # <experiment> <repetitions> <title>
	echo
	echo "$3 (testbed/experiments/$1.toml)" | tee -a "$out/summary.txt"
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/testbed/experiments/$1.toml" --repetitions "$2" --out "$out/$1" |
		tee -a "$out/summary.txt"
	rxecc modules unload
}

# Stock rdma_rxe against patched rdma_rxe + rxe_cc cc=none, one flow,
# rounds alternating the builds; the ratio of their medians.
bench_stock() {
	bench_exp stock "$ROUNDS" "what the hooks cost: stock rdma_rxe against patched alone and patched + rxe_cc none, one flow h1 -> h0"
}

# What ACKs cost a flow (issue 16): an AckReq every n packets.
bench_acks() {
	bench_exp acks "$ROUNDS" "ACK cost on an uncongested path, h1 -> h0"
}

# Pacing accuracy across the guest's usable range (cc=fixed).
bench_pacing() {
	bench_exp pacing 1 "pacing accuracy: cc=fixed, one flow at each rate"
}

# The emulated port's usable range (port.toml): one flow through the
# switch at each link rate, the port's wire rate against its setting, and
# the highest set rate it carries within 3% (where the experiments' link
# rates can go), also in port-within.
bench_port() {
	bench_exp port 1 "switch port rate: one flow h1 -> h0 through star4's switch at each link rate"
	jq -r '[.[] | select(.p0_of_set != null and .p0_of_set >= 0.97 and .p0_of_set <= 1.03) | .label] | last // "none"' \
		"$out/port/summary.json" >"$out/port-within"
	echo "highest set rate within 3%: $(cat "$out/port-within") Mb/s" | tee -a "$out/summary.txt"
}

# Congestion control, side by side in this one run: the 4->1 incast under
# none, DCQCN, ACC, HPCC, FNCC, ICC, TIMELY, DCTCP and Swift
# (docs/experiments.md), and the ratios the ACC paper
# claims: ACC converges at least 10x faster than DCQCN and triggers at
# least 5x fewer PFC pauses.
# One round is noisy under TCG, so the bench runs several (each: every
# algorithm one after another, so that drift in the host's load hits all
# alike) and quotes medians; each round's table and plots stay in
# $out/cc/round<k>.
bench_cc() {
	rounds=${BENCH_CC_ROUNDS:-3}
	for ((r = 1; r <= rounds; r++)); do
		echo
		echo "incast round $r of $rounds"
		cci_run "$out/cc/round$r" none dcqcn dcqcn-sim acc acc-inc hpcc fncc icc timely dctcp swift | tee -a "$out/summary.txt"
		[ "${PIPESTATUS[0]}" = 0 ] || echo "  round $r: not every flow completed" >&2
	done
	echo
	# shellcheck disable=SC2046 # one GROUP=FILE per round
	rxecc spread --rows $(printf 'rounds=%s ' "$out"/cc/round*/report.json) | tee -a "$out/summary.txt"
	# The paper recipes on incast.toml, judged on the rounds' medians.
	local recipe name
	for recipe in "$RXECC_TOP"/testbed/experiments/paper/*.toml; do
		grep -q '^experiment = "../incast.toml"' "$recipe" || continue
		name=$(basename "$recipe" .toml)
		echo
		echo "paper recipe $name, on $rounds incast rounds"
		# shellcheck disable=SC2046 # one --from per round
		rxecc paper "$recipe" --out "$out/cc/paper-$name" $(printf -- '--from %s ' "$out"/cc/round*/) | tee -a "$out/summary.txt"
	done
	# The model beside each round (docs/experiments.md, "The model beside
	# the testbed"): the testbed's row, the model's, and the model with the
	# testbed's start skew, late period timers, a late pacer and PFC added
	# one at a time.
	for ((r = 1; r <= rounds; r++)); do
		echo
		echo "the model beside incast round $r (rxecc model)"
		rxecc model "$CCI_EXP" --from "$out/cc/round$r" --runs none,dcqcn,acc,hpcc
	done | tee -a "$out/summary.txt"
}

# The paper recipes that are scale models (their experiment has a
# [scale]), each run as `make paper` runs it: its runs, repeated as the
# recipe says, then its claims on the medians with min-max, the model
# beside, the regime and the redrawn figure (docs/experiments.md).
bench_scale_models() {
	local recipe name exp
	tb_load_rxe patched
	tb_load_cc cc=none
	for recipe in "$RXECC_TOP"/testbed/experiments/paper/*.toml; do
		exp=$(sed -n 's/^experiment = "\(.*\)"$/\1/p' "$recipe")
		[ -n "$exp" ] && grep -q '^\[scale\]' "$(dirname "$recipe")/$exp" || continue
		name=$(basename "$recipe" .toml)
		echo
		echo "paper recipe $name, a scale model" | tee -a "$out/summary.txt"
		rxecc paper "$recipe" --out "$out/scale-models/$name" | tee -a "$out/summary.txt"
	done
	rxecc modules unload
}

# FNCC's late joiner against HPCC's (docs/experiments.md): the time from a
# second flow's first packet to the first flow's first slowdown.
bench_latejoin() {
	local r d exp=$RXECC_TOP/testbed/experiments/latejoin.toml
	echo
	echo "late joiner on dumbbell (testbed/experiments/latejoin.toml): h2 joins h1 into h0 2 s later" | tee -a "$out/summary.txt"
	mkdir -p "$out/latejoin"
	for ((r = 1; r <= ${BENCH_CCL_ROUNDS:-3}; r++)); do
		d=$out/latejoin/round$r
		tb_load_rxe patched
		tb_load_cc cc=none
		rxecc run "$exp" --out "$d" >"$d.txt" 2>"$d.log" || echo "  round $r: $(tail -1 "$d.log")" >&2
		rxecc modules unload
		grep "late joiner" "$d/table.txt" | tee -a "$out/summary.txt"
	done
}

# FNCC's queue against HPCC's with the congestion at the first, a middle
# and the last hop of chain (docs/experiments.md; FNCC paper Fig. 13a-c:
# 37.5%, 29.5% and, with its last-hop speedup, 38.5% lower), at fixed
# rates; the paper's recipes run on their scale models (part scale-models).
bench_hops() {
	local where r
	for where in $CCH_WHERE; do
		for ((r = 1; r <= ${BENCH_HOPS_ROUNDS:-3}; r++)); do
			cch_run "$where" "$out/hops/$where/round$r" >/dev/null || echo "  $where hop, round $r: not every flow completed" >&2
		done
		echo
		echo "congestion at the $where hop of chain (hops-$where.toml)" | tee -a "$out/summary.txt"
		# shellcheck disable=SC2046 # one GROUP=FILE per round
		rxecc spread --rows $(printf 'rounds=%s ' "$out"/hops/"$where"/round*/report.json) | tee -a "$out/summary.txt"
	done
}

# The victim flow on chain (testbed/experiments/victim.toml, the ACC
# paper's Fig. 11): F0's rate and the pauses that reach the switches and
# hosts beyond the root, every algorithm of the file three times; then the
# paper's claims on the medians (paper/acc-fig11.toml).
bench_victim() {
	echo
	echo "victim flow F0 on chain, with bursts into F1's receiver (testbed/experiments/victim.toml), ${BENCH_VICTIM_ROUNDS:-3} rounds" | tee -a "$out/summary.txt"
	bench_recipe_runs victim acc-fig11 "${BENCH_VICTIM_ROUNDS:-3}"
}

# bench_recipe_runs <experiment> <recipe> <repetitions>: every run of
# testbed/experiments/<experiment>.toml that many times (into
# $out/<experiment>), then the recipe judged on them.
bench_recipe_runs() {
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/testbed/experiments/$1.toml" --out "$out/$1" --repetitions "$3" | tee -a "$out/summary.txt"
	echo
	rxecc paper "$RXECC_TOP/testbed/experiments/paper/$2.toml" --out "$out/$1/paper-$2" --from "$out/$1" |
		tee -a "$out/summary.txt"
	rmmod rxe_cc
	rmmod rdma_rxe
}

# QPs per host (testbed/experiments/scale.toml): 1 to 256 QPs h1 -> h0
# through the incast's bottleneck under none, ACC and DCQCN. Against none:
# the goodput, the guest's kernel CPU, and what rxe_cc's timers and hooks
# cost per QP.
bench_scale() {
	local q
	tb_load_rxe patched
	tb_load_cc cc=none
	for q in ${BENCH_SCALE_QPS:-1 16 64 256}; do
		echo
		echo "QPs per host: $q QP(s) h1 -> h0 (testbed/experiments/scale.toml --qps $q)" | tee -a "$out/summary.txt"
		rxecc run "$RXECC_TOP/testbed/experiments/scale.toml" --qps "$q" --out "$out/scale/q$q" |
			tee -a "$out/summary.txt"
	done
	rxecc modules unload
}

# Flow completion times (docs/workloads.md): WebSearch at 50% load on
# star4, the same flows under every algorithm, from one
# experiment file; the simulator's slowdown table by size bucket. The ACC
# paper's claim to check: small flows' tail FCT far below DCQCN's.
bench_fct() {
	echo
	echo "WebSearch flow completion times (testbed/experiments/websearch.toml): slowdown p50/p95/p99 by size bucket" | tee -a "$out/summary.txt"
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/testbed/experiments/websearch.toml" --out "$out/fct" | tee -a "$out/summary.txt"
	echo
	rxecc paper "$RXECC_TOP/testbed/experiments/paper/hpcc-fct-websearch.toml" --out "$out/fct/paper-hpcc-fct-websearch" \
		--from "$out/fct" | tee -a "$out/summary.txt"

	# The repeated incast of short flows (testbed/experiments/incast-fct.toml):
	# p99 FCT and PFC pauses per algorithm.
	echo
	echo "incast of short flows (testbed/experiments/incast-fct.toml): FCT and pauses per algorithm" | tee -a "$out/summary.txt"
	rxecc run "$RXECC_TOP/testbed/experiments/incast-fct.toml" --out "$out/fct-incast" | tee -a "$out/summary.txt"
	rmmod rxe_cc
	rmmod rdma_rxe
}

# The GFC paper's ring (testbed/experiments/ring.toml, docs/switch.md):
# under PFC it deadlocks, and buffer-based GFC switched on frees it (run
# pfc); then the paper recipe (paper/gfc-ring.toml) on buffer-based and
# time-based GFC from the start: each flow's rate, the ingress queue's
# peak and no deadlock, against the paper's 884 KB peak of 1000 KB and 5
# of 10 Gb/s per flow.
bench_ring() {
	echo
	echo "GFC ring on triangle (testbed/experiments/ring.toml): PFC, released to buffer-based GFC" | tee -a "$out/summary.txt"
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/testbed/experiments/ring.toml" --runs pfc --out "$out/ring" | tee -a "$out/summary.txt"
	echo
	rxecc paper "$RXECC_TOP/testbed/experiments/paper/gfc-ring.toml" --out "$out/ring/paper-gfc-ring" |
		tee -a "$out/summary.txt"
	rxecc modules unload
}

# GFC with an end-to-end CC (testbed/experiments/incast-gfc.toml): the
# 4 -> 1 incast with buffer-based GFC in place of PFC. The paper: GFC caps
# the senders at the onset, then the CC takes over and GFC goes idle.
bench_incast_gfc() {
	echo
	echo "incast 4 -> 1 with buffer-based GFC instead of PFC (testbed/experiments/incast-gfc.toml)" | tee -a "$out/summary.txt"
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/testbed/experiments/incast-gfc.toml" --out "$out/incast-gfc" | tee -a "$out/summary.txt"
	for r in none dcqcn acc; do
		p=$out/incast-gfc/$r/ports.jsonl
		[ -f "$p" ] || continue
		echo "$r: GFC frames sent $(psum "$p" ingress.gfc_tx), highest stage $(psum "$p" max:ingress.gfc_max_stage), stage left at the end $(psum "$p" ingress.gfc_stage), drops $(psum "$p" drops)"
	done | tee -a "$out/summary.txt"
	rmmod rxe_cc
	rmmod rdma_rxe
}

# ACC's deadlock claim (testbed/experiments/ring-cc.toml, the ACC paper's
# Table 2): the PFC ring under no CC, DCQCN, ACC (flowgen's flows, and
# perftest's), HPCC and TIMELY, several rounds each; which runs deadlock
# (seen by `rxecc record`, then released), and the paper's claims on the
# shares (paper/acc-table2.toml).
bench_ring_cc() {
	echo
	echo "the PFC ring (testbed/experiments/ring-cc.toml): deadlocks in ${BENCH_RING_CC_ROUNDS:-3} rounds" | tee -a "$out/summary.txt"
	bench_recipe_runs ring-cc acc-table2 "${BENCH_RING_CC_ROUNDS:-3}"
}

: >"$out/summary.txt"
for p in $parts_all; do
	want "$p" || continue
	echo "==> bench part $p" >&2
	"bench_${p//-/_}"
done
