# shellcheck shell=bash
# The guest suite's tests, read by tests/guest-suite.sh in the guest and by
# tests/run.sh on the host, which splits them between guests.
#
# What the suite knows of a test is on the line right above its function,
# in the test's own file: "#@" and words from
#   suite           in the default run
#   by-name         not in it: run by name (the test's comment says why)
#   debug=skip      not run on the debug kernel (make test-debug)
#   timeout=S       its limit in guest seconds (else TB_TEST_TIMEOUT, else 900)
#   debug_timeout=S the same on the debug kernel
# `make lint` (tests/check_isolation.py) checks that every test has one.
#
# debug=skip marks the experiments that assert rates, timing or CC
# dynamics (the debug kernel is 20-40x slower under TCG), and the README's
# by-hand lines (which load the normal build's modules). The GFC ring
# tests too: they assert fair shares and rates at C = 20 Mb/s, ten times
# what the debug guest carries, and what they add to the other tests is
# the switch's GFC in BPF, which neither KASAN nor lockdep sees (JITed
# programs, and bpf_spin_lock is not a lockdep lock); the C that sends
# their frames (rxecc_switch.ko) sends PFC's too, in
# test_stress_host_gone there.

TB_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# tb_test_meta: "<test> <word>..." for every test, in file order.
tb_test_meta() {
	awk '/^#@/ {m = substr($0, 3); next}
		/^test_[a-z0-9_]+\(\) *\{/ {n = $1; sub(/\(\).*/, "", n); print n m; m = ""; next}
		{m = ""}' "$TB_TESTS_DIR"/test_*.sh
}

# tb_suite_tests: the tests a run without names runs, one per line,
# heaviest first by the last run measured (docs/testing.md, "Seconds per
# test"; a test not in it goes first), so that two guests that take the
# next test from one queue end close together. On the debug kernel
# (RXECC_DEBUG_KERNEL) without those marked debug=skip.
tb_suite_tests() {
	tb_test_meta | awk -v debug="${RXECC_DEBUG_KERNEL:-}" -v doc="$TB_TESTS_DIR/../docs/testing.md" '
		BEGIN {
			while ((getline l < doc) > 0)
				if (l ~ /^\| test_[a-z0-9_]+ \| [0-9]+ \|/) { split(l, f, / *\| */); host[f[2]] = f[3] }
		}
		!/ suite( |$)/ {next}
		debug != "" && / debug=skip( |$)/ {next}
		{print (($1 in host) ? host[$1] : 1e9), $1}' | sort -s -k1,1nr | cut -d' ' -f2
}

# tb_debug_skipped: the tests of the default run that the debug kernel
# leaves out, on one line.
tb_debug_skipped() {
	tb_test_meta | awk '/ suite( |$)/ && / debug=skip( |$)/ {printf "%s%s", s, $1; s = " "} END {print ""}'
}

# tb_test_limit <test>: its time limit in guest seconds: TEST_TIMEOUT_<test>,
# else its timeout= (debug_timeout= on the debug kernel), else
# TB_TEST_TIMEOUT, else 900.
tb_test_limit() {
	local var=TEST_TIMEOUT_$1 key=timeout
	[ -z "${!var:-}" ] || { echo "${!var}"; return; }
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || key=debug_timeout
	tb_test_meta | awk -v t="$1" -v k="$key=" -v d="${TB_TEST_TIMEOUT:-900}" '
		$1 == t {for (i = 2; i <= NF; i++) if (index($i, k) == 1) v = substr($i, length(k) + 1)}
		END {print (v != "" ? v : d)}'
}
