# The congestion-control incast (the ACC paper's Fig. 9, scaled): four
# long flows h1..h4 into h0 on `dumbbell`, one run per algorithm, recorded
# and compared, all from one experiment file (topology, switch marking per
# algorithm, knobs, the report's bottleneck and T). Shared by make demo,
# make bench, test_cc_incast, and, for the topology and knobs only, the
# late joiner and test_hpcc.sh.

# testbed/experiments/incast.toml by default; make demo and
# test_cc_incast_scale set incast-scale.toml, its scale model.
CCI_EXP=${CCI_EXP:-$RXECC_TOP/testbed/experiments/incast.toml}

# The bottleneck's rate (C in the report) and the period T it counts in,
# and how many flows the incast has (read by test_cc.sh and bench.sh).
# shellcheck disable=SC2034
CCI_RATE_MBPS=$(rxecc experiment get "$CCI_EXP" report.capacity_mbps)
# shellcheck disable=SC2034
CCI_T_US=$(rxecc experiment get "$CCI_EXP" report.period_us)
# shellcheck disable=SC2034
CCI_SENDERS=$(rxecc experiment get "$CCI_EXP" workload.senders | wc -w)

# cci_topology <label> <file>: the topology that run of the experiment
# brings up (dumbbell, h0's link at the bottleneck's rate, the
# algorithm's marking or INT).
cci_topology() { rxecc experiment topology "$CCI_EXP" "$1" >"$2"; }

# cci_knobs <label>: that run's rxe_cc parameters, for tb_load_cc.
cci_knobs() { rxecc experiment knobs "$CCI_EXP" "$1"; }

# cci_run [--check] <out> <label...>: the incast under those runs of the
# experiment, one after another into <out>/<label>, then the side-by-side
# table (<out>/table.txt), report.json, plots (<out>/plots/<label>.png)
# and the file's expectations of those runs (<out>/expect.txt). Fails if
# a flow did not complete, or with --check if an expectation was missed.
cci_run() {
	local check=()
	[ "$1" != --check ] || { check=(--check); shift; }
	local out=$1 rc=0
	shift
	tb_fresh_dir "$out"
	echo "==> incast 4->1 under $* (results in $out)" >&2
	tb_load_rxe patched || return 1
	tb_load_cc cc=none || return 1
	rxecc run "$CCI_EXP" "${check[@]}" --out "$out" --runs "$(
		IFS=,
		echo "$*"
	)" || rc=1
	rxecc modules unload
	return $rc
}
