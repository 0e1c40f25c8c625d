#!/usr/bin/env bash
# Reproducibility: the demo's incast (tests/demo.sh: none, DCQCN and ACC on
# dumbbell) in REPRO_BOOTS separate guest boots under each clock of
# REPRO_CLOCKS (testbed/guest.sh's RXECC_CLOCK), then per run and metric
# the median and range across the boots, the clocks side by side
# (`rxecc spread`). Run on the host; `make bench` runs it after the guest's
# parts, and `make repro` alone. Reports; never fails on a number.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/testbed/lib.sh"
boots=${REPRO_BOOTS:-5}
clocks=${REPRO_CLOCKS:-virtual host}
out=${RESULTS:-$top/build/results}/repro
[[ $boots =~ ^[1-9][0-9]*$ ]] || die "REPRO_BOOTS=$boots: expected a count of boots (1 or more)"
for c in $clocks; do
	[[ $c == virtual || $c == host ]] || die "REPRO_CLOCKS: '$c' is no clock (virtual, host)"
done
rm -rf "$out"
reports=()
for c in $clocks; do
	for ((i = 1; i <= boots; i++)); do
		dir=$out/$c/$i
		mkdir -p "$dir"
		progress "repro: the demo's incast, $c clock, boot $i of $boots"
		t0=$(date +%s)
		if RXECC_CLOCK=$c RESULTS=$dir bash "$top/testbed/guest.sh" tests/demo.sh >"$dir/log.txt" 2>&1 \
			&& [ -s "$dir/demo/report.json" ]; then
			reports+=("$c=$dir/demo/report.json")
			echo "    done in $(($(date +%s) - t0)) s of host wall time" >&2
		else
			echo "    failed (not counted): $dir/log.txt" >&2
		fi
	done
done
((${#reports[@]})) || die "repro: no boot produced a report"
echo
echo "the demo's incast in separate boots: median [min-max] per metric (n/boots where a run never got there)"
"$top/userspace/target/release/rxecc" spread "${reports[@]}" | tee "$out/spread.txt"
