#!/usr/bin/env bash
# The guest integration tests. Run inside the guest by tests/run.sh; pass
# test names as arguments to run only those.
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"

# The list: tests/lib/suite.sh.
if [ $# = 0 ]; then
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || echo "debug kernel: not running the timing-sensitive $(tb_debug_skipped)" >&2
	mapfile -t tests < <(tb_suite_tests)
	set -- "${tests[@]}"
fi
# Before the first test clears dmesg: the boot must have left the debug
# kernel's checks on, or no test result says anything about them.
tb_debug_checks_live boot || { echo "debug kernel: its checks are off; not running the suite" >&2; exit 1; }
# On the debug kernel udev can still be on the boot's coldplug when the
# suite starts: virtme-ng-init waits up to 300 s for it and goes on, an
# event takes seconds there, and systemd-udevd then holds most of the
# guest's CPUs under the tests (docs/testing.md, "Measurements behind the
# harness"). The tests need nothing of udev: devtmpfs makes
# /dev/infiniband's nodes, and every device is named by the test that
# makes it. The normal kernel's coldplug is done at boot.
if [ -n "${RXECC_DEBUG_KERNEL:-}" ] && pgrep -x systemd-udevd >/dev/null; then
	echo "debug kernel: stopping systemd-udevd (it can still be on the boot's coldplug there; tests/guest-suite.sh says why)" >&2
	udevadm control --exit || { echo "debug kernel: cannot stop systemd-udevd" >&2; exit 1; }
fi
suite_start=$(date +%s)
# TB_QUEUE (tests/run.sh's, when it splits the suite between guests): a
# directory on the host where each guest claims its next test; mkdir is
# atomic on the host's filesystem, whichever guest asks. A claim holds
# the guest's name, and "done" once the test has run. A claim is named
# by the test's place in the list too: a test named twice runs twice.
i=0
for t in "$@"; do
	i=$((i + 1))
	claim=${TB_QUEUE:-}/$i-$t
	if [ -n "${TB_QUEUE:-}" ]; then
		mkdir "$claim" 2>/dev/null || continue
		echo "${GUEST_ID:-}" >"$claim/guest"
	fi
	tb_run_test "$t"
	# The verdict tests/run.sh counts: "<exit status> <guest seconds>",
	# written last, so that the file's host time ends the test.
	[ -z "${TB_QUEUE:-}" ] || echo "$TB_LAST_RC $TB_LAST_SECONDS" >"$claim/done"
done
echo "suite: $(($(date +%s) - suite_start)) s of $TB_CLOCK" >&2
tb_summary
