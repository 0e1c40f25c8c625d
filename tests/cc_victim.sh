# The victim flow (the ACC paper's Fig. 11, scaled) on `chain`: F0 (h0 ->
# h2) shares s0 -> s1 with F1 (h1 -> h3); bursts from h4..h6 into h3
# congest s2's port to h3. Under ACC the bursts and F1 halt at the root's
# CE, so PFC should not spread back to s0 -> s1 and F0 keeps its rate;
# under DCQCN pauses spread. Needs test_switch.sh's chain_flows.

# ccv_topology <cc> <file>: chain with TCD (acc, as shipped) or RED (dcqcn).
ccv_topology() {
	if [ "$1" = dcqcn ]; then
		sed -e 's/^mark = "tcd"/mark = "red"/' \
			-e 's/^tcd = .*/red = { kmin_bytes = 5120, kmax_bytes = 204800, pmax_permille = 200 }/' \
			"$RXECC_TOP/testbed/topologies/chain.toml" >"$2"
		grep -q '^mark = "red"' "$2" || { echo "ccv_topology: could not derive the topology" >&2; return 1; }
	else
		cp "$RXECC_TOP/testbed/topologies/chain.toml" "$2"
	fi
}

# ccv_run <cc> <out>: F0, F1 and the bursts; prints one summary line.
ccv_run() {
	local cc=$1 out=$2 s
	rm -rf "$out" && mkdir -p "$out"
	echo "==> victim flow on chain with cc=$cc (results in $out)" >&2
	tb_load_rxe patched || return 1
	tb_load_cc cc="$cc" line_rate_mbps=50 acc_t_us="${CCI_T_US:-10000}" "${CCI_DCQCN_KNOBS[@]}" || return 1
	ccv_topology "$cc" "$out/topology.toml" || return 1
	rxecc testbed up "$out/topology.toml" 2>"$out/up.txt" || { cat "$out/up.txt" >&2; return 1; }
	# F0 and F1 must outlast the bursts, which start 1 s after them plus
	# their own set-up: with 300 messages (3 s alone) one DCQCN run saw only
	# 2 pauses upstream, against 28 when the bursts overlapped F1 longer.
	TEST_OUT=$out CHAIN_ITERS=${CCV_ITERS:-800} chain_flows burst 1 || echo "ccv_run: cc=$cc: a flow failed" >&2
	s=$out/ports.jsonl
	rxecc port stats --json >"$s"
	printf '%-6s F0 %6s Mb/s  F1 %6s Mb/s  pauses received: s0->s1 %5s, s1->s2 %5s, F0 sender %5s, F1 sender %5s  drops %s\n' \
		"$cc" "$(tb_bw_mbit "$out/burst-f0.txt")" "$(tb_bw_mbit "$out/burst-f1.txt")" \
		"$(psum "$s" pfc_rx_xoff x0_1)" "$(psum "$s" pfc_rx_xoff x1_2)" \
		"$(psum "$s" pfc_rx_xoff v0)" "$(psum "$s" pfc_rx_xoff v1)" "$(psum "$s" drops)"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
	rmmod rxecc_switch 2>/dev/null || true
}
