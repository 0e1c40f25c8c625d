#!/usr/bin/env bash
# Host side of the guest integration tests: the suite in one guest, or
# split between RXECC_GUESTS guests that boot side by side and take their
# tests from one queue.
#   tests/run.sh [test names...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/suite.sh"
# The debug kernel (lockdep, KASAN, kmemleak) boots far slower under TCG.
boot="the testbed kernel (TCG, about 10 s)"
[ -z "${RXECC_DEBUG_KERNEL:-}" ] || boot="the debug kernel (TCG, 8 to 10 minutes)"
RESULTS=${RESULTS:-$top/build/results}
export RESULTS
mkdir -p "$RESULTS"
if [ $# = 0 ]; then
	mapfile -t tests < <(tb_suite_tests)
else
	tests=("$@")
fi
# Two guests by default under the virtual clock: each runs on one host
# core (single-threaded TCG), and a guest's measurements are in its own
# time, whatever the other does to the host's. Under the host clock a
# guest's two vCPUs take both cores already, and its timing is the host's.
if [ -z "${RXECC_GUESTS:-}" ]; then
	RXECC_GUESTS=1
	[ "${RXECC_CLOCK:-virtual}" = host ] || [ "$(nproc)" -lt 2 ] || RXECC_GUESTS=2
fi
((RXECC_GUESTS <= ${#tests[@]})) || RXECC_GUESTS=${#tests[@]}
# A test named twice runs twice, one after the other: its results
# directory is its name.
[ "$(printf '%s\n' "${tests[@]}" | sort -u | wc -l)" = "${#tests[@]}" ] || RXECC_GUESTS=1
((RXECC_GUESTS >= 1)) || { echo "tests/run.sh: RXECC_GUESTS=$RXECC_GUESTS: expected 1 or more" >&2; exit 2; }
echo "==> guest tests: ${#tests[@]} tests in $RXECC_GUESTS guest(s), booting $boot" >&2
wall0=$(date +%s)
# The suite's own limit (each test has one too, tests/lib.sh): inside CI's
# 90 minutes with the kernel build.
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-4800}

# One guest's run of the queue. Its lines go to the terminal with its
# name in front.
queue=$RESULTS/.queue
export TB_QUEUE=$queue
guest() {
	local id=$1
	GUEST_ID=$id bash "$top/testbed/guest.sh" "bash tests/guest-suite.sh ${tests[*]}" \
		2> >(sed -u "s/^/[g$id] /" >&2) | sed -u "s/^/[g$id] /"
	return "${PIPESTATUS[0]}"
}
# A guest that died with a clean kernel console (exit 97: a host-side
# failure of QEMU or virtme-ng, seen rarely under load) or whose heartbeat
# stopped (95: its 9p requests stopped returning, twice in a whole suite
# on 2026-12-03) boots again, once, and runs what it had not finished:
# the test it was in, then the rest of the queue. It says so. A kernel
# error (98) or a failed test never retries.
guest_once_more() {
	local id=$1 rc=0 t
	guest "$id" || rc=$?
	case $rc in 95 | 97) ;; *) return "$rc" ;; esac
	for t in "$queue"/*; do
		[ -f "$t/done" ] || [ "$(cat "$t/guest" 2>/dev/null)" != "$id" ] || {
			echo "==> guest tests: guest $id stopped (exit $rc) in ${t##*/[0-9]*-}; booting it again for that test and the rest" >&2
			rm -rf "$t"
		}
	done
	guest "$id"
}
rm -rf "$queue"
mkdir -p "$queue"
pids=()
for ((g = 1; g <= RXECC_GUESTS; g++)); do
	guest_once_more "$g" &
	pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do
	wait "$pid" || { r=$?; [ "$rc" != 0 ] || rc=$r; }
done
# Each test's verdict is the one its queue entry records ("<exit status>
# <guest seconds>", tests/guest-suite.sh); no log is read for it. Its
# host seconds run from the claim (the guest file, made on the host's
# filesystem) to that record.
missing=() failed=() rows=()
passed=0
for i in "${!tests[@]}"; do
	t=$queue/$((i + 1))-${tests[i]}
	if ! read -r trc tsec <"$t/done" 2>/dev/null || [ -z "${tsec:-}" ]; then
		missing+=("${tests[i]}")
		continue
	fi
	if [ "$trc" = 0 ]; then passed=$((passed + 1)); else failed+=("${tests[i]}"); fi
	rows+=("$(($(stat -c %Y "$t/done") - $(stat -c %Y "$t/guest"))) $tsec g$(cat "$t/guest") ${tests[i]} $([ "$trc" = 0 ] && echo ok || echo FAIL)")
done
# The table of where the time went, heaviest first: printed, and kept as
# $RESULTS/test-times.md (`make test-times` puts it in docs/testing.md).
if ((${#rows[@]})); then
	{
		echo "Run at $(git -C "$top" describe --always --dirty 2>/dev/null || echo "an unknown commit") on $(date -u +%F), $(nproc) host cores, $RXECC_GUESTS guest(s): $(($(date +%s) - wall0)) s of host wall time, boots included."
		echo
		echo "| test | host s | guest s | guest | result |"
		echo "|---|---:|---:|---|---|"
		printf '%s\n' "${rows[@]}" | sort -rn | awk '{h += $1; g += $2; printf "| %s | %d | %d | %s | %s |\n", $4, $1, $2, $3, $5}
			END {printf "| all %d tests | %d | %d | | |\n", NR, h, g}'
	} >"$RESULTS/test-times.md"
	echo "==> guest tests: seconds per test, heaviest first (host = wall time on the host, from claim to verdict)" >&2
	column -t -s '|' -o ' ' < <(grep '^|' "$RESULTS/test-times.md" | sed '2d') | sed 's/^ *//' >&2
fi
# Why each failed, last: a CI log cut to its tail still says it (its
# guest's summary, before the table, may be cut away). For people only:
# the verdict above is the exit status.
for t in "${failed[@]}"; do
	grep -h "FAIL:" "$RESULTS/$t/log.txt" 2>/dev/null | sed "s/^ *FAIL: /failed: $t: /" | head -3 >&2 || true
done
((${#failed[@]} == 0)) || echo "failed: ${failed[*]}" >&2
echo "==> guest tests: $passed passed, ${#failed[@]} failed, ${#missing[@]} not run${missing[*]:+ (${missing[*]})}; $(($(date +%s) - wall0)) s of host wall time, boots included" >&2
((${#missing[@]} == 0 && ${#failed[@]} == 0)) || [ "$rc" != 0 ] || rc=1
exit "$rc"
