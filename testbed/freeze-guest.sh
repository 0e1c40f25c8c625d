#!/usr/bin/env bash
# Starves the testbed guest as a loaded host would: SIGSTOP to its QEMU for
# FREEZE_S seconds every EVERY_S seconds, while the file GATE exists (so
# that a guest script can turn it on around the tests it is aimed at; the
# guest can write only under build/results). Every guest timer then fires
# late at once. It reproduced, every time, a CI-only failure of
# test_gfc_ring_pfc_deadlock (docs/switch.md); docs/testing.md says how to
# use it. Stop it with Ctrl-C or kill; it never leaves QEMU stopped.
#   testbed/freeze-guest.sh [FREEZE_S [EVERY_S [GATE]]]
set -euo pipefail
freeze=${1:-0.5}
every=${2:-4}
gate=${3:-$(cd "$(dirname "$0")/.." && pwd)/build/results/freeze-on}
pid=
trap '[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null; exit 0' INT TERM
echo "freeze-guest: ${freeze} s every ${every} s while $gate exists" >&2
while sleep "$every"; do
	[ -e "$gate" ] || continue
	pid=$(pgrep -f qemu-system | head -1) || true
	[ -n "$pid" ] || continue
	kill -STOP "$pid" && sleep "$freeze"
	kill -CONT "$pid" || true
	echo "freeze-guest: froze QEMU $pid for $freeze s at $(date +%T)" >&2
	pid=
done
