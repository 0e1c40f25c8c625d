#!/usr/bin/env bash
# A testbed of several guests (docs/vms.md): boots one QEMU guest of the
# testbed kernel per guest of TOPOLOGY (its `guest` keys; a node without
# one has a guest of its own), links them by QEMU `dgram` netdevs (UDP
# datagrams on 127.0.0.1: no bridge, tap or host module), and in each guest
# brings its part of the topology up (rxecc testbed up --guest), waits
# until every host reaches every other, sources SCRIPT and runs its
# vms_main, then tears down. Every guest is stopped on exit or Ctrl-C.
#   testbed/vms.sh [--one] TOPOLOGY SCRIPT
# --one: the same, with the whole topology in one 2-vCPU guest (the usual
# testbed), for a side-by-side run.
# Environment: VMS_OUT (default $RESULTS/vms), VMS_CC_ARGS (rxe_cc's
# parameters, default cc=none), VMS_BASE_PORT (first UDP port, 47000),
# VMS_MAX_GUESTS (default: CPUs + 1), VMS_TIMEOUT (s, default 1200),
# VMS_CLOCK (host, the default, or virtual: each guest on a QEMU icount
# clock of its own, docs/vms.md), and any VMS_* setting, which reaches the
# guests' SCRIPT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"
one=0
if [ "${1:-}" = --one ]; then
	one=1
	shift
fi
[ $# = 2 ] || die "usage: testbed/vms.sh [--one] TOPOLOGY SCRIPT"
topo=$1 script=$(realpath "$2")
[ -f "$script" ] || die "no script $2"
kdir=$(cat "$top/build/kdir" 2>/dev/null) || die "no kernel yet: run 'make' first"
rxecc=$top/userspace/target/release/rxecc
[ -x "$rxecc" ] || die "no $rxecc: run 'make' first"
RESULTS=${RESULTS:-$top/build/results}
export VMS_OUT=${VMS_OUT:-$RESULTS/vms}
case $VMS_OUT in "$RESULTS"/*) ;; *) die "VMS_OUT must be under RESULTS ($RESULTS), which the guests can write" ;; esac
plan=$("$rxecc" testbed guests "$topo" --base-port "${VMS_BASE_PORT:-47000}") || exit 1
topo_file=$(awk '$1 == "file" {print $2}' <<<"$plan")
VMS_NHOSTS=$(awk '$1 == "hosts" {print $2}' <<<"$plan")
mapfile -t guests < <(awk '$1 == "guest" {print $2}' <<<"$plan")
if [ "$one" = 1 ]; then
	guests=(one)
fi
ncpu=$(nproc)
max=${VMS_MAX_GUESTS:-$((ncpu + 1))}
# Each guest's vCPU is a host thread under TCG: with more guests than
# cores plus one, each gets well under a core, its timers fire tens of ms
# late, and PFC's round trip outgrows any headroom (docs/vms.md).
((${#guests[@]} <= max)) || die "$topo: ${#guests[@]} guests on $ncpu CPUs: at most $max give results worth having (share guests with 'guest = ...' in the topology, or set VMS_MAX_GUESTS)"
rm -rf "$VMS_OUT" && mkdir -p "$VMS_OUT/barrier"
# The guests' clocks (docs/vms.md): the host's (multi-threaded TCG) by
# default; virtual gives each guest testbed/guest.sh's icount clock, but
# each its own, while the links between them carry frames in host time.
case ${VMS_CLOCK:=host} in
host) icount= ;;
virtual) icount=$TB_ICOUNT_OPTS ;;
*) die "VMS_CLOCK=$VMS_CLOCK: expected 'host' (the default) or 'virtual' (QEMU icount in each guest)" ;;
esac

# Each guest's command: what guest.sh would run, then the guest's part.
settings=$(compgen -e | { grep -E '^VMS_' || true; } | while read -r v; do printf 'export %s=%q\n' "$v" "${!v}"; done)
pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done
}
trap 'stop_all' EXIT
trap 'echo "vms.sh: interrupted; stopping every guest" >&2; exit 130' INT TERM

# launch <index> <guest> <vCPUs> <memory> <QEMU options>
declare -a largs=() tries=()
launch() {
	local i=$1 g=$2 cpus=$3 mem=$4 qopts=$5 macs
	largs[i]="$cpus"$'\t'"$mem"$'\t'"$qopts"
	qopts="$icount${icount:+${qopts:+ }}$qopts"
	macs=$(awk -v g="$g" '$1 == "nic" && $2 == g {printf "%s%s=%s", s, $3, $4; s = " "}' <<<"$plan")
	tb_guest_script "$VMS_OUT/$g.cmd.sh" "$top" "$settings
export VMS_GUEST='$([ "$one" = 1 ] || echo "$g")' VMS_GUESTS='${guests[*]}' VMS_TOPO='$topo_file' VMS_SCRIPT='$script' VMS_NHOSTS=$VMS_NHOSTS VMS_NIC_MACS='$macs' RESULTS='$RESULTS' RXECC_CLOCK=$VMS_CLOCK" \
		". testbed/vms-guest.sh
vms_guest_run >'$VMS_OUT/$g.log' 2>&1
echo \$? >'$VMS_OUT/$g.status'"
	# Its own process group, so that stop_all takes QEMU with it.
	tb_vng_cmd "$kdir" "$cpus" "$mem" tsc=reliable "$qopts" "$RESULTS" "$VMS_OUT/$g.cmd.sh"
	setsid timeout "${VMS_TIMEOUT:-1200}" "${TB_VNG[@]}" >"$VMS_OUT/$g.console.log" 2>&1 </dev/null &
	pids[i]=$!
}

# A dgram link is a UDP socket per end on this host, and its receive
# buffer is all the "cable" can hold while the receiving guest's vCPU is
# descheduled: the default 208 KB (about 25 frames of 4 KB, by truesize)
# overflowed in every run of three guests on 2 cores, and a lost frame is a
# loss the lossless fabric must not have (rxe then waits out its retry
# timer). QEMU takes no buffer size for dgram, so the default is raised
# while the guests' QEMUs create their sockets, then put back; the host's
# link sockets' own drop counts (ss: skmem d), sampled while they live,
# say whether any frame was lost.
rmem=/proc/sys/net/core/rmem_default
rmem_old=
nports=$(grep -c '^nic ' <<<"$plan" || true)
# link_drops: frames the link sockets dropped so far (the sockets that
# still exist).
link_drops() {
	ss -Hulnm 'src 127.0.0.1' | awk -v lo="${VMS_BASE_PORT:-47000}" -v n="$nports" '
		/^UNCONN/ {split($4, a, ":"); ours = a[2] >= lo && a[2] < lo + n; next}
		ours && match($0, /,d[0-9]+\)/) {d += substr($0, RSTART + 2, RLENGTH - 3)}
		END {print d + 0}'
}
if [ "$one" = 0 ]; then
	if rmem_old=$(cat $rmem) && echo "${VMS_LINK_RCVBUF:-16777216}" >$rmem 2>/dev/null; then
		trap 'stop_all; [ -z "$rmem_old" ] || echo "$rmem_old" >$rmem 2>/dev/null' EXIT
	else
		rmem_old=
		echo "warning: cannot raise $rmem: a link between guests may lose frames under load" >&2
	fi
fi
lost=0

t0=$SECONDS
if [ "$one" = 1 ]; then
	# One vCPU under icount, as testbed/guest.sh (docs/architecture.md).
	progress "vms: $topo in one guest ($VMS_CLOCK clock)"
	launch 0 one "$([ "$VMS_CLOCK" = virtual ] && echo 1 || echo 2)" 2G ""
else
	progress "vms: $topo in ${#guests[@]} guests of one vCPU ($VMS_CLOCK clock): ${guests[*]}"
	for i in "${!guests[@]}"; do
		g=${guests[$i]}
		q=
		k=0
		while read -r _ ng dev mac lport rport; do
			[ "$ng" = "$g" ] || continue
			q+=" -netdev dgram,id=n$k,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport"
			q+=" -device virtio-net-pci,netdev=n$k,mac=$mac"
			echo "    $g: $dev ($mac) udp $lport -> $rport" >&2
			k=$((k + 1))
		done < <(grep '^nic ' <<<"$plan")
		launch "$i" "$g" 1 1G "${q# }"
	done
	# Every link socket bound (QEMU made it with the raised default).
	for ((i = 0; i < 600; i++)); do
		(($(ss -Huln 'src 127.0.0.1' | awk -v lo="${VMS_BASE_PORT:-47000}" -v n="$nports" '{split($4, a, ":"); p = a[2]; if (p >= lo && p < lo + n) c++} END {print c + 0}') >= nports)) && break
		sleep 0.1
	done
	if [ -n "$rmem_old" ]; then
		echo "$rmem_old" >$rmem
		rmem_old=
	fi
fi

# Wait for every guest, with a line every 30 s; a guest that dies before
# its status is written makes the others give up at their next barrier.
rc=0 said=$SECONDS ndone=0
declare -A done_=()
while ((ndone < ${#guests[@]})); do
	for i in "${!guests[@]}"; do
		g=${guests[$i]}
		[ -n "${done_[$g]:-}" ] && continue
		kill -0 "${pids[$i]}" 2>/dev/null && continue
		wait "${pids[$i]}" || true
		# Under TCG a boot of two vCPUs now and then dies before the
		# command starts (testbed/guest.sh says why): boot it again, twice
		# at most. (One vCPU cannot race itself; a relaunched guest's link
		# sockets get the host's default buffer.)
		if [ ! -f "$VMS_OUT/$g.status" ] && ! tb_guest_started "$VMS_OUT/$g.console.log" &&
			((${tries[i]:-1} < 3)); then
			tries[i]=$((${tries[i]:-1} + 1))
			cp "$VMS_OUT/$g.console.log" "$VMS_OUT/$g.console.$((tries[i] - 1)).log"
			echo "warning: guest $g died while booting ($(grep -E -m1 'Oops|RIP:|panic' "$VMS_OUT/$g.console.log" || echo 'no kernel error')); booting it again" >&2
			IFS=$'\t' read -r c m q <<<"${largs[i]}"
			launch "$i" "$g" "$c" "$m" "$q"
			continue
		fi
		done_[$g]=1
		ndone=$((ndone + 1))
		if [ ! -f "$VMS_OUT/$g.status" ]; then
			echo "vms: guest $g died before its run ended; console tail ($VMS_OUT/$g.console.log):" >&2
			tail -15 "$VMS_OUT/$g.console.log" >&2
			[ -e "$VMS_OUT/abort" ] || echo "guest $g died" >"$VMS_OUT/abort"
			rc=1
		elif [ "$(cat "$VMS_OUT/$g.status")" != 0 ]; then
			echo "vms: guest $g failed (status $(cat "$VMS_OUT/$g.status")); its log's tail:" >&2
			tail -15 "$VMS_OUT/$g.log" >&2
			rc=1
		fi
	done
	if ((ndone < ${#guests[@]})); then
		d=$(link_drops)
		((d > lost)) && lost=$d
		sleep 1
		((SECONDS - said < 30)) && continue
		said=$SECONDS
		progress "vms: $((SECONDS - t0)) s; $(ls "$VMS_OUT/barrier" | sed 's/\..*//' | sort | uniq -c | awk '{printf "%s%s x%s", s, $2, $1; s = ", "}')"
	fi
done
echo "$lost" >"$VMS_OUT/link_drops"
progress "vms: done in $((SECONDS - t0)) s; frames the links between guests dropped: $lost"
exit "$rc"
