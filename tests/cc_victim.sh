# The victim flow (the ACC paper's Fig. 11, scaled) on `chain`: F0 (h0 ->
# h2) shares s0 -> s1 with F1 (h1 -> h3); bursts from h4..h6 into h3
# congest s2's port to h3. Under ACC the bursts and F1 halt at the root's
# CE, so PFC should not spread back to s0 -> s1 and F0 keeps its rate;
# under DCQCN pauses spread. Needs test_switch.sh's chain_flows.

# The settings of each algorithm's run (testbed/experiments/victim.toml):
# chain with TCD for acc, as shipped; RED for dcqcn; no marks and the
# algorithm's INT for hpcc, fncc and icc.
CCV_EXP=$RXECC_TOP/testbed/experiments/victim.toml

# The spread: the ports where pauses from the root reach beyond it, the
# shared upstream ports s0 -> s1 and s1 -> s2 and F0's and F1's NICs.
CCV_SPREAD=(x0_1 x1_2 v0 v1)

# ccv_f0_fair_mbps: F0's max-min fair share on chain.toml as shipped: its
# own host link, or half of s0 -> s1, which it shares with F1, if less
# (F1 needs less than half, held back at the root, so this is a floor).
ccv_f0_fair_mbps() {
	python3 - "$RXECC_TOP/testbed/topologies/chain.toml" <<'PY'
import sys, tomllib
t = tomllib.load(open(sys.argv[1], "rb"))
default = t["defaults"]["rate_mbps"]
def rate(a, b):
    for l in t["link"]:
        if {l["a"], l["b"]} == {a, b}:
            return l.get("rate_mbps", default)
    sys.exit(f"chain.toml has no link {a}-{b}")
print(min(rate("h0", "s0"), rate("s0", "s1") / 2))
PY
}

# ccv_ms <ports.jsonl> <port...>: time those ports spent paused, in ms.
ccv_ms() { awk -v n="$(psum "$1" paused_ns "${@:2}")" 'BEGIN {printf "%.1f", n / 1e6}'; }

# ccv_run <cc> <out> [bursts]: F0, F1 and, unless bursts is 0, the bursts
# (flow outputs <out>/burst-*.txt, or quiet-*.txt without); prints one
# summary line. Returns 1 if the chain did not come up, 2 if a flow failed.
ccv_run() {
	local cc=$1 out=$2 bursts=${3:-1} tag=burst s rc=0
	[ "$bursts" = 1 ] || tag=quiet
	tb_fresh_dir "$out"
	echo "==> victim flow on chain with cc=$cc (results in $out)" >&2
	tb_load_rxe patched || return 1
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(rxecc experiment knobs "$CCV_EXP" "$cc") || return 1
	rxecc experiment topology "$CCV_EXP" "$cc" >"$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	# F0 and F1 must outlast the bursts, which start 1 s after them: with
	# 300 messages (3 s alone) one DCQCN run saw only 2 pauses upstream,
	# against 28 when the bursts overlapped F1 longer. The bursts (150 x 64
	# KB, 1.6 s alone at 50 Mb/s) start together (flowgen, chain_flows);
	# with perftest they started seconds apart, and with 60 messages one
	# round's three ended 3.6 s apart and barely congested the root.
	TEST_OUT=$out CHAIN_ITERS=${CCV_ITERS:-800} CHAIN_BURST_ITERS=${CCV_BURST_ITERS:-150} chain_flows "$tag" "$bursts" || { echo "ccv_run: cc=$cc: a flow failed" >&2; rc=2; }
	s=$out/ports.jsonl
	rxecc port stats --json >"$s"
	printf '%-6s F0 %6s Mb/s  F1 %6s Mb/s  pauses (ms paused): s0->s1 %3s (%6s), s1->s2 %3s (%6s), F0 NIC %3s (%6s), F1 NIC %3s (%6s)  drops %s\n' \
		"$cc" "$(chain_mbit "$out/$tag" 0)" "$(chain_mbit "$out/$tag" 1)" \
		"$(psum "$s" pfc_rx_xoff x0_1)" "$(ccv_ms "$s" x0_1)" "$(psum "$s" pfc_rx_xoff x1_2)" "$(ccv_ms "$s" x1_2)" \
		"$(psum "$s" pfc_rx_xoff v0)" "$(ccv_ms "$s" v0)" "$(psum "$s" pfc_rx_xoff v1)" "$(ccv_ms "$s" v1)" \
		"$(psum "$s" drops)"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	rmmod rxecc_switch 2>/dev/null || true
	return $rc
}

# ccv_rounds <out> <rounds>: ACC and DCQCN (or the algorithms in
# CCV_ALGS) one after another, that many rounds (into
# <out>/round<k>/<cc>), then the spread of each summed over the rounds. One round compares two single runs: how far the bursts
# overlap F1 depends on perftest's set-up under TCG, and one CI run saw
# DCQCN spread 21 pauses against ACC's 27, where six other rounds saw 2.5
# to 10 times more under DCQCN. Time paused separates them more than the
# count of pause frames (a frame may hold a port for 1 ms or for 100): 3.7
# to 8.2 times more under DCQCN in three rounds.
# Returns 1 if any run failed; the totals then count only what ran.
ccv_rounds() {
	local out=$1 rounds=$2 r cc ms n rc=0 algs
	local -A tot_ms=() tot_n=()
	read -ra algs <<<"${CCV_ALGS:-acc dcqcn}"
	for ((r = 1; r <= rounds; r++)); do
		for cc in "${algs[@]}"; do
			ccv_run "$cc" "$out/round$r/$cc" || { rc=1; [ -f "$out/round$r/$cc/ports.jsonl" ] || continue; }
			ms=$(ccv_ms "$out/round$r/$cc/ports.jsonl" "${CCV_SPREAD[@]}")
			n=$(psum "$out/round$r/$cc/ports.jsonl" pfc_rx_xoff "${CCV_SPREAD[@]}")
			tot_ms[$cc]=$(awk -v a="${tot_ms[$cc]:-0}" -v b="$ms" 'BEGIN {print a + b}')
			tot_n[$cc]=$((${tot_n[$cc]:-0} + n))
		done
	done
	printf 'spread over %d rounds (s0->s1, s1->s2, F0 and F1 NICs):' "$rounds"
	for cc in "${algs[@]}"; do printf ' %s %s pauses, %s ms paused;' "$cc" "${tot_n[$cc]:-0}" "${tot_ms[$cc]:-0}"; done
	printf ' dcqcn/acc time paused %s\n' \
		"$(awk -v a="${tot_ms[acc]:-0}" -v d="${tot_ms[dcqcn]:-0}" 'BEGIN {if (a > 0) printf "%.1fx", d / a; else print "inf"}')"
	for cc in "${algs[@]}"; do printf '%s %s %s\n' "$cc" "${tot_n[$cc]:-0}" "${tot_ms[$cc]:-0}"; done >"$out/spread.txt"
	return $rc
}
