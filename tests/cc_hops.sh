# FNCC against HPCC by where the congestion is (the FNCC paper's Fig.
# 13a-c, scaled): two long flows h0, h1 -> h3 across chain's three switches,
# with the one 40 Mb/s port at the first hop, a middle hop or the last hop
# (testbed/experiments/hops-<where>.toml). Used by make bench (part hops)
# and test_fncc_hops. Uses cc_incast.sh's helpers.

# shellcheck disable=SC2034 # read by bench.sh
CCH_WHERE="first middle last"

# cch_get <first|middle|last> <dotted key>: a value of that file.
cch_get() { rxecc experiment get "$RXECC_TOP/testbed/experiments/hops-$1.toml" "$2"; }

# cch_run <first|middle|last> <out>: that experiment file under hpcc and
# fncc into <out>/<label>, with report.json and table.txt in <out>. Fails
# if a flow did not complete.
cch_run() {
	local where=$1 out=$2 rc=0
	tb_fresh_dir "$out"
	echo "==> FNCC vs HPCC, congestion at the $where hop (results in $out)" >&2
	tb_load_rxe patched || return 1
	tb_load_cc cc=none || return 1
	rxecc run "$RXECC_TOP/testbed/experiments/hops-$where.toml" --out "$out" || rc=1
	rxecc modules unload
	return $rc
}
