# One perftest flow per verb, under each algorithm rxe_cc offers (test_verbs,
# test_stress). Sourced by tests/lib.sh.

# The algorithms rxe_cc.ko offers, from its `cc` parameter's description
# ("...: none, fixed, acc, dcqcn, hpcc"): a new one is tested without
# anyone editing this file. VERBS_CCS="none acc" runs only those (make
# test-debug, where each algorithm's round takes minutes).
verbs_ccs() {
	[ -z "${VERBS_CCS:-}" ] || { echo "$VERBS_CCS"; return; }
	modinfo -F parm "$(rxecc modules cc-path)" | sed -n 's/^cc:[^:]*: //p' | tr -d ','
}

# verbs_args <tool>: perftest arguments for a short run of that program.
verbs_args() {
	case $1 in
	ib_atomic_bw) echo "-n 200" ;; # atomics are 8 bytes
	*_bw) echo "-s 65536 -n 40" ;;
	*_lat) echo "-n 100" ;;
	esac
}

# verbs_delta <before> <counter>: change of an rxe_cc total since <before>.
verbs_delta() {
	awk -v k="$2" 'NR == FNR {if ($1 == k) b = $2; next} $1 == k {print $2 - b; f = 1} END {exit !f}' \
		"$1" /sys/kernel/debug/rxe_cc/totals
}

# verbs_lat_iters <perftest output>: iterations a latency test reported.
verbs_lat_iters() {
	awk '/t_avg|t_min/ {hdr = 1; next} hdr && NF >= 3 && $1 ~ /^[0-9]+$/ {print $2; exit}' "$1"
}

# verbs_flow <tool> <out prefix> [perftest args]: one flow h1 -> h0 on
# TB_PORT_BASE (VERBS_PAIR="8 0 2" for h8 -> h0 on TB_PORT_BASE + 2), both
# sides waited for; 0 if both completed.
verbs_flow() {
	local tool=$1 out=$2 c s p
	read -r c s p <<<"${VERBS_PAIR:-1 0 0}"
	shift 2
	TB_BW_TOOL=$tool tb_pair "$c" "$s" $((TB_PORT_BASE + p)) "$out" "$@"
}

# verbs_again: packets the receivers (rxe0, rxe2) took up again, as rxe
# counts them (duplicate or out of sequence).
verbs_again() {
	echo $(($(rxe_taken_again 0) + $(rxe_taken_again 2)))
}
