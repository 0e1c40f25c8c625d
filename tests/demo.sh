#!/usr/bin/env bash
# make demo: boot the testbed and run the 4->1 incast on `dumbbell` (h1..h4
# into h0, bottleneck 40 Mb/s) under cc=none, cc=dcqcn and cc=acc, one after
# another, from one experiment file (testbed/experiments/incast.toml); print
# the side-by-side table and write per-run PNG plots of per-flow rate and
# queue length (docs/experiments.md).
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"
. "$RXECC_TOP/tests/cc_incast.sh"
out=$RESULTS/demo
rc=0
cci_run "$out" none dcqcn acc || rc=1
echo "table: $out/table.txt; metrics: $out/report.json; plots: $out/plots/{none,dcqcn,acc}.png" >&2
exit $rc
