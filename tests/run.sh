#!/usr/bin/env bash
# Host side of the guest integration tests: one guest boot runs the suite.
#   tests/run.sh [test names...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
echo "==> guest tests: booting the testbed kernel (TCG, about 10 s) and running the suite" >&2
exec bash "$top/testbed/guest.sh" "bash tests/guest-suite.sh $*"
