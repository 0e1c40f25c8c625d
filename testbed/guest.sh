#!/usr/bin/env bash
# Run a command inside the testbed guest: our kernel under QEMU (TCG, 2 vCPUs;
# KVM does not work on these hosts, see docs/architecture.md).
#   testbed/guest.sh 'CMD'
# The guest sees the host's filesystem read-only, the repository at the same
# path, $RESULTS writable (default build/results), the project's modules
# loadable and its tools (rxecc, bpftool) on PATH. Exits with CMD's status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"
CMD=${1:?usage: guest.sh CMD}
kdir=$(cat "$top/build/kdir" 2>/dev/null) || die "no kernel yet: run 'make' first"
RESULTS=${RESULTS:-$top/build/results}
mkdir -p "$RESULTS"
status=$RESULTS/.guest-status
rm -f "$status"

# The command goes in a script in the shared results directory, which also
# receives its exit status: no quoting through vng, and no reliance on vng
# passing the status through.
script=$RESULTS/.guest-cmd.sh
cat >"$script" <<SCRIPT
cd '$top' && . testbed/guest-env.sh || exit 99
( $CMD )
echo \$? > '$status'
SCRIPT
# Through a pipe: given a regular file as stdout, the guest's console output
# is written from offset 0 again, over what the log already held.
set +e
timeout "${GUEST_TIMEOUT:-1800}" vng --run "$kdir" --disable-kvm --cpus 2 --memory 2G \
	--rwdir "$RESULTS" --exec "bash $script" 2>&1 | cat
rc=${PIPESTATUS[0]}
set -e
[ -f "$status" ] || die "guest failed to boot or timed out (rc $rc)"
[ -f "$status" ] || die "guest exited without running the command"
exit "$(cat "$status")"
