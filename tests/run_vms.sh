#!/usr/bin/env bash
# test_vms, on the host (not tests/test_*.sh: the guest suite sources
# those): the testbed of several guests (testbed/vms.sh, docs/vms.md)
# beside the usual one guest, on the same 2 -> 1 incast under ACC with PFC
# (testbed/topologies/incast2.toml, tests/vms_incast.sh): the switch and
# the receiver in one guest, each sender in a guest of its own, linked by
# QEMU dgram netdevs. Runs on the host (it boots the guests), after the
# guest suite in `make test`.
#
# Asserted in both layouts: every guest's part ran and its dmesg is clean
# (vms.sh), every flow moved all its bytes, no drops, PFC paused the
# senders (across guests in the second layout: the switch's frames crossed
# QEMU's links), ACC halted, and its aggregate rate came within 10% of the
# bottleneck. Printed side by side (and in $RESULTS/test_vms/table.txt):
# per-flow rate, convergence, pauses, queue, halts, the pacing timers'
# lateness, the link round trip and PFC's feedback latency tau.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RXECC_TOP=$top
. "$top/testbed/lib.sh"
. "$top/tests/lib.sh"
RESULTS=${RESULTS:-$top/build/results}
out=$RESULTS/test_vms
rxecc=$top/userspace/target/release/rxecc
# measured_table's `rxecc`, as in the guest.
PATH=$top/userspace/target/release:$PATH
# The bottleneck (h0's link), T and the senders' line rate, from the
# topology; ACC's T as testbed/experiments/incast.toml's (3 packets per
# flow per period at the fair share).
TOPO=incast2
CAP_MBPS=20 T_US=10000 ITERS=${VMS_ITERS:-150} MSG=65536
CC_ARGS="cc=acc acc_t_us=$T_US line_rate_mbps=50"
# VMS_LAYOUTS="several" runs only the three guests (make test: the one-guest
# incast is what the guest suite's tests already cover).
layouts=${VMS_LAYOUTS:-one several}
for layout in $layouts; do
	case $layout in one | several) ;; *) echo "run_vms: unknown layout '$layout' (one, several)" >&2; exit 2 ;; esac
done
rm -rf "$out" && mkdir -p "$out"
start=$SECONDS
failed=0

# run_layout <name> [--one]: the incast in that layout; its report.json.
run_layout() {
	local name=$1 dir=$out/$1 rc=0 rec
	shift
	VMS_OUT=$dir VMS_CC_ARGS=$CC_ARGS VMS_ITERS=$ITERS bash "$top/testbed/vms.sh" "$@" "$TOPO" "$top/tests/vms_incast.sh" || rc=$?
	if [ "$name" = one ]; then
		rec=$dir/rec.one
	else
		rec=$dir/merged
		python3 "$top/tests/vms_merge.py" "$dir" "$rec" >"$dir/clock_error_ms" || rc=1
	fi
	"$rxecc" report "$name=$rec" --capacity-mbps $CAP_MBPS --bottleneck p0 --period-us $T_US \
		--json "$dir/report.json" --plots "$dir/plots" >"$dir/report.txt" 2>&1 || rc=1
	return $rc
}

# rj <layout> <key>: a metric of its report ("null" if absent).
rj() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))[0][sys.argv[2]]
print("null" if m is None else m)' "$out/$1/report.json" "$2"
}

# facts <layout>: "late_ms rtt_ms tau_ms" from its guests' files (tau
# corrected by each guest's clock offset).
facts() {
	local d=$out/$1
	python3 - "$d" <<'PY'
import glob, json, os, re, sys
d = sys.argv[1]
late = fires = 0
for f in glob.glob(f"{d}/cc.*"):
    kv = dict(l.split()[:2] for l in open(f) if len(l.split()) >= 2)
    late += int(kv.get("pacer_late_ns", 0)); fires += int(kv.get("pacer_fires", 0))
rtt, tau_sum, tau_n = [], 0.0, 0
for f in glob.glob(f"{d}/ports.*.json"):
    g = f.split("ports.", 1)[1][:-5]
    off = 0
    if os.path.exists(f"{d}/offset.{g}"):
        off, r = (int(x) for x in open(f"{d}/offset.{g}").read().split())
        if r:
            rtt.append(r)
    for line in open(f):
        p = json.loads(line)
        # A host NIC obeys the switch: its tau samples are now minus the
        # switch's stamp, on two clocks when they are in two guests (the
        # raw mean keeps the samples whose stamp was ahead of this clock).
        n = p["tau_n"] + p.get("tau_early_n", 0)
        if re.fullmatch(r"v\d+", p["dev"]) and n:
            tau_sum += (p["tau_raw_mean_ns"] + off) * n; tau_n += n
print(f"{late / fires / 1e6:.2f}" if fires else "nan",
      f"{min(rtt) / 1e6:.2f}" if rtt else "-",
      f"{tau_sum / tau_n / 1e6:.2f}" if tau_n else "nan")
PY
}

for layout in $layouts; do
	t0=$SECONDS
	if [ "$layout" = one ]; then
		echo "--- test_vms: the incast in one guest" >&2
		run_layout one --one || { echo "    FAIL: the incast in one guest failed" >&2; failed=1; }
	else
		echo "--- test_vms: the incast in three guests" >&2
		run_layout several || { echo "    FAIL: the incast in three guests failed" >&2; failed=1; }
	fi
	echo "$((SECONDS - t0))" >"$out/$layout/seconds"
	[ -f "$out/$layout/report.json" ] || { failed=1; continue; }
	(
		set -e
		for i in 1 2; do
			assert_eq "$layout: flow h$i bytes" $((MSG * ITERS)) "$(tb_bw_bytes "$out/$layout/client$i.txt")"
		done
		assert_eq "$layout: frames the links between guests dropped" 0 "$(cat "$out/$layout/link_drops")"
		assert_eq "$layout: flows recorded" 2 "$(rj $layout flows)"
		assert_eq "$layout: drops (PFC is on)" 0 "$(rj $layout drops)"
		assert_gt "$layout: pauses at the senders" "$(rj $layout pauses)" 0
		assert_gt "$layout: ACC halts" "$(rj $layout halts)" 0
		[ "$(rj $layout rate_converge_periods)" != null ] ||
			fail "$layout: ACC's rates never summed to within 10% of the bottleneck"
	) || failed=1
done

{
	echo "guests' clock: ${VMS_CLOCK:-host} (VMS_CLOCK, docs/vms.md); per layout: each flow's and the total rate (Mb/s), ACC's convergence (T), time in band, pauses, halts, peak queue (KB), the pacer's mean lateness, the RTT between guests and tau (ms), and the layout's time (s)"
	rm -f "$out/table.jsonl"
	for layout in $layouts; do
		[ -f "$out/$layout/report.json" ] || continue
		read -r late rtt tau <<<"$(facts $layout)"
		measured_row "$out/table.jsonl" "$layout" h1_mbps="$(tb_bw_mbit "$out/$layout/client1.txt")" \
			h2_mbps="$(tb_bw_mbit "$out/$layout/client2.txt")" tput_mbps="$(rj $layout throughput_mbps)" \
			converge_T="$(rj $layout converge_periods)" in_band="$(rj $layout in_band)" pauses="$(rj $layout pauses)" \
			halts="$(rj $layout halts)" peak_kb="$(jq -n "$(rj $layout peak_queue_bytes) / 1024")" \
			late_ms="$late" rtt_ms="$rtt" tau_ms="$tau" time_s="$(cat "$out/$layout/seconds")"
	done
	[ -f "$out/table.jsonl" ] && measured_table "$out/table.jsonl"
	[ -f "$out/several/clock_error_ms" ] && echo "three guests: recordings merged onto h0's guest's clock, within $(cat "$out/several/clock_error_ms") ms"
} | tee "$out/table.txt" >&2
echo "test_vms: $((SECONDS - start)) s" >&2
if [ "$failed" = 0 ]; then
	echo "ok   test_vms ($((SECONDS - start)) s)" >&2
else
	echo "FAIL test_vms ($((SECONDS - start)) s)" >&2
	exit 1
fi
