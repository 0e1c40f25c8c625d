#!/usr/bin/env bash
# Run a command inside the testbed guest: our kernel under QEMU (TCG, its clock
# set by RXECC_CLOCK below; KVM does not work on these hosts, see docs/architecture.md).
#   testbed/guest.sh 'CMD'
# The guest sees the host's filesystem read-only, the repository at the same
# path, $RESULTS writable (default build/results), the project's modules
# loadable and its tools (rxecc, bpftool) on PATH. Exits with CMD's status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"
CMD=${1:?usage: guest.sh CMD}
# RXECC_KDIR_FILE names another kernel (make test-debug's); RXECC_RXE_KO,
# RXECC_CC_KO and RXECC_SWITCH_KO the modules built for it.
kdir_file=${RXECC_KDIR_FILE:-$top/build/kdir}
kdir=$(cat "$kdir_file" 2>/dev/null) || die "no kernel yet ($kdir_file): run 'make' first"
RESULTS=${RESULTS:-$top/build/results}
mkdir -p "$RESULTS"
# GUEST_ID names a guest that runs beside another from the same tree
# (tests/run.sh's second): its files here, and its console log.
status=$RESULTS/.guest-status${GUEST_ID:-}
alive=$RESULTS/.guest-alive${GUEST_ID:-}
rm -f "$status" "$alive"

# The guest's clock (docs/architecture.md, "The guest's clock").
# virtual, the default: QEMU icount on one vCPU (TB_ICOUNT_OPTS). Its
# timers fire on time whatever the host schedules, at the cost of
# single-threaded TCG. host: multi-threaded TCG on 2 vCPUs, where the
# guest's clock is the host's and its timers fire when the host runs a
# vCPU thread.
case ${RXECC_CLOCK:=virtual} in
virtual) cpus=1 qopts=$TB_ICOUNT_OPTS ;;
host) cpus=2 qopts= ;;
*) die "RXECC_CLOCK=$RXECC_CLOCK: expected 'virtual' (QEMU icount, the default) or 'host' (multi-threaded TCG)" ;;
esac
export RXECC_CLOCK

# The command goes in a script in the shared results directory, which also
# receives its exit status: no quoting through vng, and no reliance on vng
# passing the status through.
# The experiments' own settings (BENCH_*, CHAIN_*, INCAST_*, PAPER_*, STRESS_*, VERBS_*,
# e.g. `make bench BENCH_CC_ROUNDS=5`) and the per-test time limits
# (TB_TEST_TIMEOUT, TEST_TIMEOUT_<test>) and volume (TB_VOLUME) are passed on, and RXECC_KDIR_FILE,
# the RXECC_*_KO modules and RESULTS (make test-debug's kernel, modules and
# results directory) and RXECC_CLOCK, before guest-env.sh reads them; nothing else of the
# host's environment is.
script=$RESULTS/.guest-cmd${GUEST_ID:-}.sh
settings=$(compgen -e | { grep -E '^(BENCH|CHAIN|INCAST|PAPER|STRESS|TEST_TIMEOUT|VERBS)_|^TB_(TEST_TIMEOUT|TRACE|QUEUE|VOLUME)$|^RXECC_(KDIR_FILE|RXE_KO|RXE_WITHOUT_FIX_KO|CC_KO|SWITCH_KO|DEBUG_KERNEL|CLOCK)$|^(RESULTS|GUEST_ID)$' || true; } | while read -r v; do
	printf 'export %s=%q\n' "$v" "${!v}"
done)
# The heartbeat: a write to the results directory every 60 guest seconds,
# through the same 9p mount (and the same exec of sleep from the host's
# root) as everything the command does. The host side (below) stops a
# guest whose heartbeat stopped: its kernel livelocked, or its 9p
# requests no longer return, and nothing it still runs can say so.
tb_guest_script "$script" "$top" "$settings" "( while echo \$SECONDS > '$alive' && sleep 60; do :; done ) &
( $CMD )
echo \$? > '$status'"
# The guest kernel's console goes to guest-console.log; only the command's
# own lines (after its start marker, without the kernel's "[ seconds ]"
# prefix) reach stdout, unless GUEST_CONSOLE=1. When virtme-ng falls back
# to the serial console for the command (the debug kernel), its lines end
# in CR LF. The pipe matters too: given a regular file as stdout,
# vng writes from offset 0 again, over what the log already held.
# GUEST_CONSOLE_LOG moves it, for a second guest run at the same time.
console=${GUEST_CONSOLE_LOG:-$top/build/guest-console${GUEST_ID:+-$GUEST_ID}.log}
# A boot can die before the command starts: under TCG, live-patching a
# static key at 1.2 s of boot ("sched_clock: Marking stable") sometimes
# races with the other vCPU ("Oops: int3" in sched_clock_cpu; seen in two
# boots of some forty). Nothing of ours has run then, so boot again, up to
# twice. (Booting with tsc=unstable would avoid the patching, but it changes
# the clocksource every test and timer runs on.)
# The same race struck later, at 55 s into a run: on a loaded host the
# clocksource watchdog saw the TCG TSC skew against the HPET, marked it
# unstable and live-patched sched_clock's key under a running vCPU.
# tsc=reliable turns that watchdog off for the TSC (QEMU's TCG TSC follows
# the host clock, so it is as good as the HPET it would be checked against).
GUEST_APPEND=${GUEST_APPEND:-tsc=reliable}
# The debug kernel (make test-debug): no5lvl, because with 5-level paging
# (QEMU's TCG CPU has LA57) an interrupt that lands while identify_cpu()
# has cleared the boot CPU's feature bits makes KASAN judge a per-CPU
# address wild ("BUG: KASAN: wild-memory-access in rcu_is_watching", 4 ms
# into boot). That first report taints the kernel, which turns lockdep
# off, and KASAN prints only one report: every check of the run was off.
# kasan_multi_shot: a report in one test must not silence the next.
[ -z "${RXECC_DEBUG_KERNEL:-}" ] || GUEST_APPEND="$GUEST_APPEND no5lvl kasan_multi_shot"
# A guest whose heartbeat is older than GUEST_STALL_TIMEOUT seconds of
# the host's is stopped (exit 95). 60 guest seconds took up to 300 of the
# host's in the busiest tests; the debug kernel's can take far longer.
stall_limit=${GUEST_STALL_TIMEOUT:-900}
[ -z "${RXECC_DEBUG_KERNEL:-}" ] || stall_limit=${GUEST_STALL_TIMEOUT:-3600}
stalled=$RESULTS/.guest-stalled${GUEST_ID:-}
watch_heartbeat() {
	local pid='' beat
	while sleep 30; do
		[ -n "$pid" ] || pid=$(cat "$1" 2>/dev/null) || continue
		kill -0 "$pid" 2>/dev/null || return 0
		beat=$(stat -c %Y "$alive" 2>/dev/null) || continue
		if (($(date +%s) - beat > stall_limit)); then
			touch "$stalled"
			kill -TERM "$pid" 2>/dev/null
			return 0
		fi
	done
}
boot() {
	local pidfile=$RESULTS/.guest-pid${GUEST_ID:-} rc watcher
	rm -f "$stalled" "$alive" "$pidfile"
	tb_vng_cmd "$kdir" "$cpus" 2G "$GUEST_APPEND" "$qopts" "$RESULTS" "$script"
	# timeout passes the watcher's SIGTERM on to QEMU.
	watch_heartbeat "$pidfile" &
	watcher=$!
	sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$pidfile" timeout "${GUEST_TIMEOUT:-1800}" "${TB_VNG[@]}" 2>&1 | tee "$console" |
		if [ -n "${GUEST_CONSOLE:-}" ]; then cat; else
			# sed -u: mawk fills its whole input buffer before it acts on a line,
			# which holds a slow guest's output back for minutes.
			sed -u 's/\r$//' | sed -u -n '0,/^@@rxecc-guest-command@@$/d; /^\[ *[0-9]\+\.[0-9]\+\]/d; p'
		fi
	rc=${PIPESTATUS[0]}
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	return "$rc"
}
set +e
stopped=
for attempt in 1 2 3; do
	boot
	rc=$?
	[ -f "$status" ] || tb_guest_started "$console" && break
	# vng stopped by a signal (someone stopping the run): no second boot.
	case $rc in 130 | 137 | 143) stopped=$rc && break ;; esac
	echo "warning: the guest died while booting (attempt $attempt); console tail:" >&2
	grep -E 'Oops|RIP:|panic' "$console" | head -3 >&2
done
set -e
if [ ! -f "$status" ]; then
	echo "error: the guest died before the command finished (vng rc $rc); console tail ($console):" >&2
	tail -25 "$console" >&2
	[ -f "$stalled" ] && echo "error: the guest's heartbeat stopped: nothing written to $RESULTS for $stall_limit s of the host's (GUEST_STALL_TIMEOUT); stopped it" >&2
	# 98: the kernel reported an error; 95: its heartbeat stopped without
	# one; 96: it ran past GUEST_TIMEOUT (a second try would too); 97: it
	# died without any of these.
	grep -qE 'Kernel panic|Oops|BUG:|WARNING:|general protection|Call Trace' "$console" && exit 98
	[ -f "$stalled" ] && exit 95
	[ "$rc" = 124 ] && { echo "error: the guest ran past GUEST_TIMEOUT (${GUEST_TIMEOUT:-1800} s)" >&2; exit 96; }
	# Nor a second suite (tests/run.sh retries on 97).
	[ -z "$stopped" ] || { echo "error: vng was stopped by a signal (rc $rc)" >&2; exit "$rc"; }
	exit 97
fi
[ -f "$status" ] || die "guest exited without running the command"
exit "$(cat "$status")"
