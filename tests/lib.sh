# Guest test harness, sourced inside the guest.
#
# Each test is a function run in a subshell by tb_run_test. A test fails if
# the function returns non-zero or if dmesg gained a kernel warning while it
# ran. The suite ends with the line "N passed, N failed".

. "$RXECC_TOP/testbed/netns.sh"

TESTS_PASSED=0
TESTS_FAILED=0
FAILED_NAMES=()

# Kernel reports that fail any test.
DMESG_BAD='WARNING:|BUG:|Oops|general protection|Call Trace|lockdep|possible circular|KASAN|UBSAN|refcount_t:|rcu_sched self-detected|soft lockup|hung_task'

fail() { echo "    FAIL: $*" >&2; return 1; }
info() { echo "    $*" >&2; }

# assert_eq <what> <expected> <actual>
assert_eq() { [ "$2" = "$3" ] || fail "$1: expected $2, got $3"; }
# assert_gt <what> <a> <b>: a > b, numbers may be decimal
assert_gt() { awk -v a="$2" -v b="$3" 'BEGIN {exit !(a + 0 > b + 0)}' || fail "$1: $2 is not > $3"; }

# Leave the guest as a test found it: no namespaces, no rxe devices, no modules.
tb_reset() {
	local d
	pkill -x ib_write_bw 2>/dev/null || true
	pkill -x ib_send_bw 2>/dev/null || true
	sleep 0.2
	for d in /sys/fs/bpf/rxecc/*/; do
		[ -d "$d" ] && rxecc port detach --dev "$(basename "$d")"
	done
	rxecc mark --dev p0 --mode off 2>/dev/null || true
	[ ! -f /run/rxecc/topology.json ] || rxecc testbed down
	tb_down
	rmmod rxe_cc 2>/dev/null || true
	rmmod rdma_rxe 2>/dev/null || true
	rmmod rxecc_switch 2>/dev/null || true
}

tb_run_test() {
	local name=$1 out=$RESULTS/$1 rc
	mkdir -p "$out"
	echo "--- $name" >&2
	dmesg -C
	(set -e; TEST_OUT=$out "$name")
	rc=$?
	tb_reset
	dmesg >"$out/dmesg.txt"
	if grep -Eq "$DMESG_BAD" "$out/dmesg.txt"; then
		echo "    FAIL: kernel warning in dmesg:" >&2
		grep -E -A5 "$DMESG_BAD" "$out/dmesg.txt" | head -30 >&2
		rc=1
	fi
	if [ "$rc" = 0 ]; then
		echo "ok   $name" >&2
		TESTS_PASSED=$((TESTS_PASSED + 1))
	else
		echo "FAIL $name" >&2
		TESTS_FAILED=$((TESTS_FAILED + 1))
		FAILED_NAMES+=("$name")
	fi
}

tb_summary() {
	((TESTS_FAILED == 0)) || echo "failed: ${FAILED_NAMES[*]}" >&2
	echo "$TESTS_PASSED passed, $TESTS_FAILED failed"
	((TESTS_FAILED == 0))
}
