# Counters of the emulated switch's ports and of the hosts' rxe devices,
# and the perftest incast into h0. Sourced by tests/lib.sh.

# rxe's default ACK timeout (perftest -u 14: 67 ms) is shorter than the
# queueing delay of a PFC-paused incast (a sender's 512 KB window at an
# eighth of 100 Mb/s is 330 ms): the retries run out and the QP fails, as
# on a real NIC. Switch tests use -u 20 (4 s).
# shellcheck disable=SC2034 # read by the tests and runners that source lib.sh
SW_PERF=(-s 65536 -u 20)

# ports_snap <file>: every port's counters, one JSON object per line.
ports_snap() { rxecc port stats --json >"$1"; }

# psum <file> <key> [globs]: sum of a counter over ports (rxecc port sum).
psum() { rxecc port sum "$@"; }

# rxe_counter <host> <counter>: one of rxe<host>'s own counters (`rdma
# statistic`), e.g. out_of_seq_request.
rxe_counter() {
	ip netns exec "h$1" rdma statistic show link "rxe$1/1" |
		awk -v k="$2" '{for (i = 1; i < NF; i++) if ($i == k) {print $(i + 1); exit}}'
}

# rxe_taken_again <host>: requests rxe<host> took up again, as rxe counts
# them (duplicate or out of sequence): a retransmission's packets.
rxe_taken_again() {
	echo $(($(rxe_counter "$1" duplicate_request) + $(rxe_counter "$1" out_of_seq_request)))
}

# tb_incast <senders> <outdir> [perftest args]: h1..h<senders> each send
# to h0 at once (rxecc perftest incast: server<i>.txt, client<i>.txt in
# <outdir>); 0 if all completed.
tb_incast() {
	local n=$1 out=$2
	shift 2
	tb_perftest incast --from "$(seq -s, 1 "$n")" --to 0 --port "$TB_PORT_BASE" --out "$out" -- "$@"
}
