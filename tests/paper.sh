#!/usr/bin/env bash
# make paper NAME=<recipe>: boot the testbed, run the recipe's runs of its
# experiment file (testbed/experiments/paper/<recipe>.toml) and print the
# paper's claims against the testbed's numbers (docs/experiments.md).
set -uo pipefail
. "$RXECC_TOP/tests/lib.sh"
# make paper checked the name on the host (paper-name), before the boot.
recipe=$RXECC_TOP/testbed/experiments/paper/${PAPER_NAME:?}.toml
out=$RESULTS/paper/$PAPER_NAME
tb_fresh_dir "$out"
tb_load_rxe patched || exit 1
tb_load_cc cc=none || exit 1
rc=0
rxecc paper "$recipe" --out "$out" || rc=1
rxecc modules unload
echo "claims: $out/claims.txt; runs and plots: $out" >&2
exit $rc
