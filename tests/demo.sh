#!/usr/bin/env bash
# make demo: boot the testbed and run the 4->1 incast on `dumbbell` (h1..h4
# into h0) as a scale model of ACC's testbed (Fig. 9; testbed/experiments/
# incast-scale.toml, k_t 256: 40 Mb/s links, a 5 ms RTT, T = 12.8 ms)
# under cc=none, cc=dcqcn and cc=acc, one after another; print the regime
# table (paper against testbed), the side-by-side table, and the model on
# the same setting beside the testbed; write per-run PNG plots of per-flow
# rate and queue length (docs/scale-model.md).
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"
CCI_EXP=$RXECC_TOP/testbed/experiments/incast-scale.toml
. "$RXECC_TOP/tests/cc_incast.sh"
out=$RESULTS/demo
rc=0
cci_run "$out" none dcqcn acc || rc=1
if [ $rc = 0 ]; then
	echo "==> the model (rxecc model) on the same setting, beside the testbed" >&2
	rxecc model "$CCI_EXP" --from "$out" --runs none,dcqcn,acc | tee "$out/model.txt" || rc=1
fi
echo "regime: $out/regime.txt; table: $out/table.txt; model: $out/model.txt; metrics: $out/report.json; plots: $out/plots/{none,dcqcn,acc}.png" >&2
exit $rc
