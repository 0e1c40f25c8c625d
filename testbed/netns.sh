# Testbed helpers, sourced inside the guest. The testbed itself is built
# by `rxecc testbed up <topology>` (testbed/topologies/; bridge2 and
# bridge5 are plain bridges): host i is a network namespace h<i> with
# veth v<i> (10.77.0.<i+1>/24, MTU 9000) whose peer p<i> is a switch port,
# and an rxe device rxe<i> on v<i>.

TB_NET=10.77.0
# shellcheck disable=SC2034 # used by the tests that source this file
TB_PORT_BASE=18515

tb_ip() { echo "$TB_NET.$(($1 + 1))"; }

# tb_load_rxe patched|without-fix|stock: load rdma_rxe, rxe_glue's build
# (or that build without the go-back-N fix, for its tests) or the kernel's;
# TB_RXE_GID_TBL_LEN sets a patched build's GID table (rxecc::modules says
# why it is short by default).
tb_load_rxe() { rxecc modules rxe "$1" ${TB_RXE_GID_TBL_LEN:+--gid-tbl-len "$TB_RXE_GID_TBL_LEN"}; }

# tb_load_cc [params...]: load rxe_cc.ko, e.g. tb_load_cc cc=none.
tb_load_cc() { rxecc modules cc "$@"; }

# tb_down: whatever a test left beyond `rxecc testbed down`'s record
# (tb_reset runs it after that): the rxe devices first (deleting one is
# synchronous; a namespace's veth going away would unregister it in the
# background), then the namespaces and the bridge.
tb_down() {
	local ns names=()
	for ns in /run/netns/h[0-9]*; do
		[ -e "$ns" ] && names+=("${ns##*/}")
	done
	if ((${#names[@]})); then
		for ns in "${names[@]}"; do
			[ -e "/sys/class/infiniband/rxe${ns#h}" ] && echo "link delete rxe${ns#h}"
		done | rdma -f -b - 2>/dev/null || true
		for ns in "${names[@]}"; do echo "netns del $ns"; done | ip -force -b - || true
	fi
	[ -e /sys/class/net/br0 ] && { ip link del br0 || true; }
	return 0
}

# tb_gid <i>: index of rxe<i>'s RoCE v2 GID for its IPv4 address.
tb_gid() { rxecc perftest gid "$1"; }

# perftest busy-polls its completion queue, and a few pollers starve
# ksoftirqd and the kworkers that run rxe and the emulated ports (their
# timers then fire milliseconds late). perftest therefore runs niced.
TB_NICE=${TB_NICE:-19}

# tb_nap <seconds>: sleep without starting a process. Under TCG a fork and
# exec of sleep(1) costs tens of ms of CPU, enough for a few polling loops
# to take most of both vCPUs (docs/testing.md, "Measurements behind the
# harness"). read -t on a pipe that
# this shell holds both ends of (so nothing ever arrives) times out.
# Anything but a timeout (a closed descriptor) falls back to sleep(1).
tb_nap() {
	local rc=0
	[ -n "${TB_NAP_FD:-}" ] || exec {TB_NAP_FD}<> <(:)
	read -rt "$1" -u "$TB_NAP_FD" _ 2>/dev/null || rc=$?
	((rc > 128)) || sleep "$1"
}

# tb_listening <pid> <comm> <port>: true once process <pid> runs <comm>
# (so `ip netns exec` has entered the namespace) and a TCP socket of that
# namespace listens on <port>. Bash builtins on /proc/<pid>/net only: a
# poll that starts processes (`ip netns exec ... ss`) costs seconds each on
# the debug kernel, and several servers poll at once.
tb_listening() {
	local pid=$1 comm=$2 hex f _sl addr _rem st c
	printf -v hex ':%04X' "$3"
	read -r c 2>/dev/null </proc/"$pid"/comm || return 1
	[ "$c" = "${comm:0:15}" ] || return 1
	for f in /proc/"$pid"/net/tcp /proc/"$pid"/net/tcp6; do
		while read -r _sl addr _rem st _; do
			[[ $addr == *"$hex" && $st == 0A ]] && return 0
		done 2>/dev/null <"$f"
	done
	return 1
}

# tb_pair <client> <server> <port> <out prefix> [perftest args]: one
# perftest flow, both sides waited for (rxecc perftest pair: its server
# listens before the client starts, each runs niced and pinned to a vCPU;
# <prefix>-server.txt, <prefix>-client.txt and its .wall). TB_BW_TOOL
# picks the program (ib_write_bw unless set; the CC experiments use
# ib_send_bw, which can sleep on completion events), TB_PAIR_TIMEOUT_S
# kills a client that runs longer. perftest reports in Gb/s (2 decimals)
# unless TB_REPORT_GBITS=0, which gives MiB/s: finer at low rates. A
# server's start-up is 8 s of CPU on the debug kernel against 0.8 s on the
# normal one, and six start at once in test_verbs_all_cc; some went past
# 600 s while udevd still ran there (tests/guest-suite.sh).
tb_pair() {
	local c=$1 s=$2 port=$3 out=$4
	shift 4
	tb_perftest pair "$c" "$s" --port "$port" --out "$out" -- "$@"
}

# tb_perftest <subcommand> <its arguments> -- [perftest args]: rxecc
# perftest with the settings above.
tb_perftest() {
	local sub=() opts=(--tool "${TB_BW_TOOL:-ib_write_bw}" --nice "$TB_NICE")
	while (($#)) && [ "$1" != -- ]; do
		sub+=("$1")
		shift
	done
	shift
	[ "${TB_REPORT_GBITS:-1}" = 1 ] || opts+=(--mbytes)
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || opts+=(--listen-timeout-s 1800)
	[ -z "${TB_PAIR_TIMEOUT_S:-}" ] || [ "${sub[0]}" = server ] || opts+=(--timeout-s "$TB_PAIR_TIMEOUT_S")
	rxecc perftest "${sub[@]}" "${opts[@]}" -- "$@"
}

# tb_perf_iters <messages per QP>: "<iterations> <cq_mod>" for a perftest
# bw run with several QPs (-q) that sleeps on completion events (-e),
# where cq_mod (-Q) divides the iterations. perftest 4.5 (Debian's) counts
# every completion as cq_mod messages, its default 100, the last one
# included: when cq_mod does not divide the iterations, the QPs that finish
# first add up to the run's total before the slower ones' first
# completion, and the client stops polling, spinning forever if those QPs
# still had messages to post, else ending (and timing the run) early.
# Upstream perftest fixed it in 24.01 (commit 5ff3afa, "fix completion
# count with special combination of tx_depth/cq_mod/iterations").
tb_perf_iters() {
	local n=$1
	((n < 1)) && n=1
	# cq_mod at most 100, as perftest's default; more iterations are
	# rounded down to its multiple.
	if ((n <= 100)); then
		echo "$n $n"
	else
		echo "$((n / 100 * 100)) 100"
	fi
}

# perftest times a run in TSC cycles and turns them into seconds with a
# clock rate it calibrates at start (get_clock.c: a regression of cycles
# on gettimeofday over 200 short spins). Under TCG on a busy host that
# regression can fall below its r^2 of 0.9 ("Correlation coefficient
# r^2: 0.888157 < 0.9" on stderr); with -F (which the testbed passes)
# perftest then reports 0.000000 for a run that moved every byte, as a
# 4-to-1 incast's client once did in CI. Where the client's wall-clock
# life is known (<out>.wall, from tb_pair) and perftest's rate
# would need longer than that, the rate is the bytes over that life
# instead (a lower bound: it includes the set-up), with a warning.
# _tb_bw <perftest output> mbit|gbit: the checked average rate.
_tb_bw() {
	local wall=0
	[ -f "$1.wall" ] && wall=$(awk '{printf "%.6f", $2 - $1}' "$1.wall")
	awk -v wall="$wall" -v unit="$2" -v f="$1" '
	/^Correlation coefficient r\^2/ {calib = 1}
	/BW average/ {hdr = 1; gb = /Gb\/sec/; next}
	hdr && NF >= 5 && $1 ~ /^[0-9]+$/ {
		mbit = gb ? $4 * 1000 : $4 * 8 * 1.048576
		bytes = $1 * $2
		fixed = wall > 0 && bytes > 0 && (mbit <= 0 || bytes * 8 / (mbit * 1e6) > wall)
		if (fixed) {
			printf "warning: %s: perftest reports %s %s, which would take longer than the client lived (%.3f s)%s; using the wall clock\n",
				f, $4, gb ? "Gb/s" : "MB/s", wall, calib ? " (its clock calibration failed)" : "" > "/dev/stderr"
			mbit = bytes * 8 / wall / 1e6
		}
		# Gb/s as perftest printed it, unless converted or corrected.
		if (unit == "mbit") printf "%.3f\n", mbit
		else if (gb && !fixed) print $4
		else printf "%.6f\n", mbit / 1000
		exit
	}' "$1"
}

# tb_bw_mbit <perftest output>: average bandwidth in Mb/s (10^6 bit/s),
# from either report unit (perftest's MB/sec is 2^20 bytes per second).
tb_bw_mbit() { _tb_bw "$1" mbit; }

# tb_bw_gbits <perftest output>: average bandwidth in Gb/s, or nothing.
tb_bw_gbits() { _tb_bw "$1" gbit; }

# tb_bw_bytes <perftest output>: bytes moved (size x iterations).
tb_bw_bytes() {
	awk '/BW average/ {hdr = 1; next} hdr && NF >= 5 && $1 ~ /^[0-9]+$/ {print $1 * $2; exit}' "$1"
}

# tb_monotonic_ns: CLOCK_MONOTONIC in ns, the clock of rxecc record's
# timestamps (the kernel's "now" in /proc/timer_list: one awk, where
# Python's time.monotonic_ns() costs a 2 s start under TCG).
tb_monotonic_ns() { awk '/^now at [0-9]+ nsecs/ {print $3; exit}' /proc/timer_list; }

# tb_qps_sum <counter>: a counter summed over rxe_cc's live QPs.
tb_qps_sum() {
	{ cat /sys/kernel/debug/rxe_cc/qps/*/stats 2>/dev/null || true; } |
		awk -v k="$1" '$1 == k {s += $2} END {print s + 0}'
}

# tb_qps_wait <counter> <seconds>: tb_qps_sum <counter> once it is above
# 0, or at the end of <seconds> (perftest's set-up under TCG varies by
# seconds).
tb_qps_wait() {
	local n=0 deadline=$((SECONDS + $2))
	while ((SECONDS < deadline)); do
		n=$(tb_qps_sum "$1")
		((n > 0)) && break
		tb_nap 0.1
	done
	echo "$n"
}

# tb_wait_or_kill <pid> <seconds> <port>: wait up to <seconds> for the
# background perftest client <pid> of port <port>; past that, kill it and
# its perftest processes, forget the servers and return 1. For a client
# that a defect would leave hanging.
tb_wait_or_kill() {
	local pid=$1 deadline=$((SECONDS + $2)) port=$3
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		tb_nap 0.2
	done
	kill -0 "$pid" 2>/dev/null || return 0
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pkill -f "ib_write_bw.*-p $port" 2>/dev/null || true
	return 1
}

# tb_cc_total <counter>: value of a counter in rxe_cc's debugfs totals.
tb_cc_total() {
	awk -v k="$1" '$1 == k {print $2; found = 1} END {exit !found}' /sys/kernel/debug/rxe_cc/totals
}
