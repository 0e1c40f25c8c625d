# Guest test harness, sourced inside the guest.
#
# Each test is a function in a tests/test_*.sh file, run by tb_run_test in
# a subshell that sources that file only: tests share this library and
# tests/lib/*.sh, never each other's functions (tests/check_isolation.py, in make lint).
# A test fails if the function returns non-zero or if dmesg gained a kernel
# warning while it ran; its verdict goes to the queue (tests/guest-suite.sh).

. "$RXECC_TOP/testbed/netns.sh"
for f in "$RXECC_TOP"/tests/lib/*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

TESTS_PASSED=0
TESTS_FAILED=0
FAILED_NAMES=()
FAIL_LINES=()

# Durations measured in the guest are in the guest's time: virtual (QEMU
# icount, testbed/guest.sh's default) runs at its own pace, not the host's.
TB_CLOCK="guest time, ${RXECC_CLOCK:-host} clock"

# Kernel reports that fail any test.
DMESG_BAD='WARNING:|BUG:|Oops|general protection|Call Trace|lockdep|possible circular|KASAN|UBSAN|refcount_t:|rcu_sched self-detected|soft lockup|hung_task|suspected memory leak'

# tb_debug_checks_live [boot]: on the debug kernel (make test-debug), 0
# if lockdep is still on (it turns itself off for good after its first
# report or any taint that makes it unreliable) and kmemleak is there; with
# "boot", also if the kernel reported nothing before the suite began (a
# boot-time KASAN report once turned lockdep off for whole runs unseen:
# testbed/guest.sh). Elsewhere always 0.
# shellcheck disable=SC2120 # guest-suite.sh passes "boot"
tb_debug_checks_live() {
	[ -n "${RXECC_DEBUG_KERNEL:-}" ] || return 0
	local on
	on=$(awk '$1 == "debug_locks:" {print $2}' /proc/lockdep_stats 2>/dev/null || true)
	if [ "$on" != 1 ]; then
		echo "    FAIL: lockdep is off (debug_locks: ${on:-no /proc/lockdep_stats})" >&2
		return 1
	fi
	[ -e /sys/kernel/debug/kmemleak ] || { echo "    FAIL: kmemleak is off (no /sys/kernel/debug/kmemleak)" >&2; return 1; }
	# kmemleak that has disabled itself keeps its file but refuses every
	# command but "clear" (EPERM); "stack=on" is its default, so a probe
	# that changes nothing.
	echo stack=on 2>/dev/null >/sys/kernel/debug/kmemleak || { echo "    FAIL: kmemleak has disabled itself (it refuses commands)" >&2; return 1; }
	if [ "${1:-}" = boot ] && dmesg | grep -Eq 'BUG:|WARNING:|Disabling lock debugging'; then
		echo "    FAIL: the debug kernel reported before any test ran:" >&2
		dmesg | tb_dmesg_excerpt 'BUG:|WARNING:|Disabling lock debugging' 12 20
		return 1
	fi
}

# tb_dmesg_excerpt <pattern> <lines after> <at most>: dmesg's lines on
# stdin that match, with context, on stderr. Prefixed: the host's console
# filter (testbed/guest.sh) drops lines that start with a printk time
# stamp, as every dmesg line does.
tb_dmesg_excerpt() {
	grep -E -A"$2" "$1" | head -"$3" | sed 's/^/    dmesg: /' >&2 || true
}

# tb_kernel_reported <file>: keeps dmesg in <file>; 0, with the reports
# printed, if the kernel reported anything of DMESG_BAD.
tb_kernel_reported() {
	dmesg >"$1"
	grep -Eq "$DMESG_BAD" "$1" || return 1
	tb_dmesg_excerpt "$DMESG_BAD" 5 30 <"$1"
}

# fail: says why a test failed; tb_stopped_at then need not say where.
fail() {
	echo "    FAIL: $*" >&2
	TB_SAID_WHY=1
	return 1
}
info() { echo "    $*" >&2; }

# assert_eq <what> <expected> <actual>: equal, and neither empty (an empty
# value is a counter that was not found, never a match).
assert_eq() {
	if [ -z "$2" ] || [ -z "$3" ]; then
		fail "$1: expected '$2', got '$3' (a value is missing)"
		return 1
	fi
	[ "$2" = "$3" ] || fail "$1: expected $2, got $3"
}
# assert_gt <what> <a> <b>: a > b, both numbers (may be decimal)
assert_gt() {
	if ! [[ $2 =~ ^-?[0-9]+(\.[0-9]+)?$ && $3 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
		fail "$1: '$2' > '$3' compares a non-number"
		return 1
	fi
	awk -v a="$2" -v b="$3" 'BEGIN {exit !(a + 0 > b + 0)}' || fail "$1: $2 is not > $3"
}

# Leave the guest as a test found it: no namespaces, no rxe devices, no
# modules, no capture (`rxecc capture start`'s dumpcap outlives the test's
# own processes). Few processes: each costs 0.2 to 0.4 s under TCG.
tb_reset() {
	local d
	pkill -x 'flowgen|dumpcap|ib_(write|send|read|atomic)_(bw|lat)' 2>/dev/null && sleep 0.2
	for d in /sys/fs/bpf/rxecc/*/; do
		[ -d "$d" ] && rxecc port detach --dev "$(basename "$d")"
	done
	[ ! -e /sys/class/net/p0 ] || rxecc mark --dev p0 --mode off 2>/dev/null || true
	[ ! -f /run/rxecc/topology.json ] || rxecc testbed down
	tb_down
	rxecc modules unload 2>/dev/null || true
}

# tb_kill_tree <pid>: kill a process and all its descendants, children first.
tb_kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do tb_kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null || true
}

# A test's time limit (tb_test_limit, tests/lib/suite.sh): its own
# timeout= or debug_timeout= beside it, else TB_TEST_TIMEOUT, else 900 s.
# One hung perftest then fails one test, and the suite goes on. On the
# debug kernel (lockdep, KASAN, kmemleak) the tests that bring up dumbbell
# or chain spend most of their time loading the ports' programs: 18 ports
# took 434 to 635 s there (5 to 8 s on the normal kernel), once per
# bring-up; the INT tests bring up two or three topologies and read their
# captures with tshark (about 12 minutes a read there), and
# test_verbs_all_cc runs perftest programs for minutes each there (docs/
# testing.md, "Measurements behind the harness"): their debug_timeout.

# tb_volume <make test's> <make test-long's> [the debug kernel's]: how
# much of something a test does (reloads, algorithms, QPs...), beside the
# test that uses it. `make test` runs the smallest volume that still takes
# every path and can fail; TB_VOLUME=long (`make test-long`) the one that
# looks for what only repetition finds; the debug kernel the third, if
# given, else the first.
tb_volume() {
	case ${TB_VOLUME:-test} in
	test) if [ -n "${RXECC_DEBUG_KERNEL:-}" ] && [ -n "${3:-}" ]; then echo "$3"; else echo "$1"; fi ;;
	long) echo "$2" ;;
	*) echo "tb_volume: TB_VOLUME=$TB_VOLUME: expected 'test' or 'long'" >&2; return 1 ;;
	esac
}

# tb_fresh_dir <dir>: an empty <dir> for a helper's results. The running
# test's own directory is left as it is: tb_run_test made it fresh, and
# its log.txt and the files the test has redirected into are open there.
tb_fresh_dir() {
	[ "$1" = "${TEST_OUT:-}" ] || rm -rf "$1"
	mkdir -p "$1"
}

# tb_kmemleak_scan <dir>: on the debug kernel, after a test has unloaded
# every module (tb_reset), kmemleak scans memory, its report goes to
# <dir>/kmemleak.txt, and the report is cleared for the next test. 1 if an
# unreferenced object was allocated by rxe-cc's modules (rdma_rxe, rxe_cc,
# rxecc_switch: a name with "rxe" in its backtrace); others, the kernel's
# own (rare false positives, or leaks outside this project), are counted
# in the log. Run after the dmesg check: kmemleak logs each scan's finds
# there. Auto-scan is off in the debug guest, so without this only
# test_stress_qp_churn's own scan looked. TB_KMEMLEAK=0 skips it.
tb_kmemleak_scan() {
	[ -n "${RXECC_DEBUG_KERNEL:-}" ] && [ "${TB_KMEMLEAK:-1}" != 0 ] || return 0
	local t0 all ours
	t0=$(date +%s)
	echo scan 2>/dev/null >/sys/kernel/debug/kmemleak || { echo "    FAIL: kmemleak refused a scan" >&2; return 1; }
	cat /sys/kernel/debug/kmemleak >"$1/kmemleak.txt"
	echo clear >/sys/kernel/debug/kmemleak
	read -r all ours < <(tb_kmemleak_count "$1/kmemleak.txt")
	echo "    kmemleak: scan took $(($(date +%s) - t0)) s; $all unreferenced objects, $ours of rxe-cc's modules" >&2
	((ours == 0)) || { echo "    FAIL: kmemleak: $ours objects of rxe-cc's modules unfreed ($1/kmemleak.txt)" >&2; return 1; }
}

# tb_kmemleak_count <kmemleak report>: "<objects> <objects whose
# backtrace names rxe>". Each object's block starts with "unreferenced
# object"; its comm line is not read (the rxecc CLI's name has rxe in it).
tb_kmemleak_count() {
	awk '/^unreferenced object/ {n++; bt = 0} /^ *backtrace/ {bt = 1} bt && /rxe/ {ours[n] = 1}
		END {k = 0; for (i in ours) k++; print n + 0, k}' "$1"
}

# tb_stopped_at: the ERR trap of a test's shell (set -eE). A test that a
# failed command stops (set -e) says which and where; one that called
# fail has said why already. -E hands the trap to command
# substitutions and background jobs too, where set -e is off and a failed
# command stops nothing: only the test's own shell speaks.
tb_stopped_at() {
	local rc=$? cmd=$BASH_COMMAND
	[ "$BASHPID" = "$TB_TEST_SHELL" ] && [ -z "${TB_SAID_WHY:-}" ] || return 0
	echo "    FAIL: stopped by a failed command (exit $rc) at ${BASH_SOURCE[1]##*/}:${BASH_LINENO[0]}: $cmd" >&2
}

tb_run_test() {
	local name=$1 out=$RESULTS/$1 rc start pid dog limit file
	limit=$(tb_test_limit "$name")
	file=$(tb_test_file "$name") || { TESTS_FAILED=$((TESTS_FAILED + 1)); FAILED_NAMES+=("$name"); FAIL_LINES+=("$name: no such test"); TB_LAST_RC=1 TB_LAST_SECONDS=0; return; }
	# A fresh directory: files of an earlier run (a third round of a
	# bench-sized run, say) must not be judged as this run's.
	rm -rf "$out"
	mkdir -p "$out"
	echo "--- $name" >&2
	dmesg -C
	start=$(date +%s)
	# Its stderr is also kept (log.txt), for the summary's FAIL lines.
	# TB_TRACE=1: every command the test runs, timestamped, in $RESULTS/<test>.trace
	# (where a test's time goes).
	# shellcheck disable=SC1090 # the test's own file, found by tb_test_file
	if [ -n "${TB_TRACE:-}" ]; then
		(set -eE; TB_TEST_SHELL=$BASHPID; trap tb_stopped_at ERR; exec {BASH_XTRACEFD}>"$RESULTS/$name.trace"; PS4='+ $EPOCHREALTIME '; set -x
			. "$file"; TEST_OUT=$out "$name") 2> >(tee "$out/log.txt" >&2) &
	else
		(set -eE; TB_TEST_SHELL=$BASHPID; trap tb_stopped_at ERR; . "$file"; TEST_OUT=$out "$name") 2> >(tee "$out/log.txt" >&2) &
	fi
	pid=$!
	# The watchdog. When the test ends first, tb_kill_tree kills its sleep
	# before the subshell itself: `|| exit` keeps the subshell, if it runs
	# in that gap, from marking the test timed out, and 2>/dev/null keeps
	# bash's "Killed sleep" report of it out of the log.
	(
		sleep "$limit" || exit 0
		touch "$out/.timed-out"
		tb_kill_tree "$pid"
	) 2>/dev/null &
	dog=$!
	wait "$pid"
	rc=$?
	tb_kill_tree "$dog"
	wait "$dog" 2>/dev/null
	if [ -f "$out/.timed-out" ]; then
		echo "    FAIL: $name did not finish within $limit s (its timeout, or TEST_TIMEOUT_$name); killed" >&2
		rc=1
	fi
	tb_reset
	tb_debug_checks_live || { rc=1; FAIL_LINES+=("$name: the debug kernel's checks were off after it"); }
	if tb_kernel_reported "$out/dmesg.txt"; then
		echo "    FAIL: kernel warning in dmesg (above)" >&2
		rc=1
	fi
	tb_kmemleak_scan "$out" || { rc=1; FAIL_LINES+=("$name: kmemleak found objects of rxe-cc's modules unfreed"); }
	local took=$(($(date +%s) - start))
	# For the queue (tests/guest-suite.sh): the verdict and the guest's seconds.
	# shellcheck disable=SC2034 # read there
	TB_LAST_RC=$rc TB_LAST_SECONDS=$took
	if [ "$rc" = 0 ]; then
		echo "ok   $name (${took} s $TB_CLOCK)" >&2
		TESTS_PASSED=$((TESTS_PASSED + 1))
	else
		echo "FAIL $name (${took} s $TB_CLOCK)" >&2
		TESTS_FAILED=$((TESTS_FAILED + 1))
		FAILED_NAMES+=("$name")
		[ -f "$out/.timed-out" ] && FAIL_LINES+=("$name: did not finish within $limit s")
		grep -Eq "$DMESG_BAD" "$out/dmesg.txt" && FAIL_LINES+=("$name: kernel warning in dmesg")
		local line
		while read -r line; do FAIL_LINES+=("$name: $line"); done \
			< <(grep -h "FAIL:" "$out/log.txt" 2>/dev/null | sed 's/^ *FAIL: //' | head -3)
	fi
}

# The suite's last lines name each failure and its first reasons, so that
# a log cut in the middle (CI keeps its tail) still says why.
# tb_test_file <test>: the tests/test_*.sh file that defines it.
tb_test_file() {
	local f
	for f in "$RXECC_TOP"/tests/test_*.sh; do
		grep -q "^$1() {" "$f" && { echo "$f"; return 0; }
	done
	echo "tb_run_test: no tests/test_*.sh defines $1" >&2
	return 1
}

tb_summary() {
	local line
	for line in "${FAIL_LINES[@]}"; do echo "    $line" >&2; done
	((TESTS_FAILED == 0)) || echo "failed: ${FAILED_NAMES[*]}" >&2
	echo "$TESTS_PASSED passed, $TESTS_FAILED failed"
	((TESTS_FAILED == 0))
}

# tb_invariants <label> <summary.json>: `rxecc run`'s run <label> broke
# no physical invariant: no port released faster than its rate over a
# window longer than one packet, and no flow completed faster than its
# bytes cross the bottleneck. Under the host clock the ports' 4 ms of
# pacing credit (switch/config.rs) break both, by design, and they are only
# reported.
tb_invariants() {
	local flows='' ports=''
	read -r flows ports < <(python3 -c 'import json, sys
r = {r["label"]: r for r in json.load(open(sys.argv[1]))}[sys.argv[2]]
print(r["faster_than_wire"], r["port_rate_violations"])' "$2" "$1") || true
	if [ "${RXECC_CLOCK:-host}" = host ]; then
		info "$1: invariants under the host clock: $flows flows faster than the wire, $ports port releases faster than the rate"
		return 0
	fi
	assert_eq "$1: flows faster than their bytes cross the bottleneck" 0 "$flows"
	assert_eq "$1: port releases faster than the port's rate" 0 "$ports"
}

# tb_flowgen <prefix> <flow file> <op> <host...>: flowgen in each host's
# namespace, replaying the flow file (the HPCC simulator's format) with
# <op> (write, send or read). Its time 0 is 0.25 s after every host's
# flowgen has connected its QPs (flowgen --sync-dir, in the guest's local
# /tmp: the processes poll it), so no flow starts during the set-up;
# TB_FLOWGEN_EPOCH (CLOCK_MONOTONIC ns) is set to it on return. Host h's
# records go to <prefix>-h<h>.csv, its log to <prefix>-h<h>.log. 0 if
# every host's flowgen succeeded.
tb_flowgen() {
	local prefix=$1 flows=$2 op=$3 h max=0 ips=() pids=() rc=0 sync
	shift 3
	sync=$(mktemp -d /tmp/flowgen-sync.XXXXXX) || return 1
	for h in "$@"; do if ((h > max)); then max=$h; fi; done
	for ((h = 0; h <= max; h++)); do ips+=("$TB_NET.$((h + 1))"); done
	for h in "$@"; do
		ip netns exec "h$h" flowgen --host "$h" --hosts "$(IFS=,; echo "${ips[*]}")" --flows "$flows" \
			--sync-dir "$sync" --sync-n $# --op "$op" --timeout 300 --out "$prefix-h$h.csv" 2>"$prefix-h$h.log" &
		pids+=($!)
	done
	# Not a bare `wait`: the caller may have a sampler running.
	for h in "${pids[@]}"; do wait "$h" || rc=1; done
	# shellcheck disable=SC2034 # read by the callers (chain_flows)
	TB_FLOWGEN_EPOCH=$(cat "$sync/epoch" 2>/dev/null) || rc=1
	rm -rf "$sync"
	return $rc
}
