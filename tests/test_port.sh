# The switch's port model (switch-ebpf/port.bpf.c, a BPF qdisc) on the
# bridge port towards the receiver, with real RoCE traffic through it.

# One h1 -> h0 flow of <iters> x 64 KiB through port p0; MiB/s reports.
port_flow() { # <name> <iters>
	export TB_REPORT_GBITS=0
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$1" -s 65536 -n "$2"
}
# snap: one consistent snapshot of p0's counters into $TEST_OUT/snap.json;
# pstat <counter> reads from it, so related counters come from one instant.
snap() { snap_dev p0; }
snap_dev() { rxecc port stats --dev "$1" --json >"$TEST_OUT/snap.json"; }
pstat() { rxecc port sum "$TEST_OUT/snap.json" "$1"; }

# Rate: the port, not the guest's CPU, is the bottleneck at 100 Mb/s, so the
# flow's wire rate (goodput scaled by wire bytes per payload byte) follows
# the port's rate. Never faster than the rate (+3%), and at least 90% of it
# less the share of the run the port lost to watchdogs later than its
# catch-up credit (late_ns; TCG, worse on a loaded host); `make bench`
# reports the exact figure.
#@ suite debug=skip
test_port_rate() {
	local rate=100 iters=400 lost
	tb_load_rxe patched
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps $rate
	# The port's qdisc handle (its port id) on another device is refused:
	# it would share p0's queues and send p0's packets out of p1.
	local handle
	handle=$(tc qdisc show dev p0 | awk '$2 == "rxecc_port" {print $3; exit}')
	[ -n "$handle" ] || fail "no rxecc_port qdisc on p0"
	! tc qdisc add dev p1 root handle "$handle" rxecc_port 2>"$TEST_OUT/dup.txt" ||
		fail "a second rxecc_port qdisc with p0's handle $handle was taken on p1"
	info "p0's handle $handle on p1: $(head -1 "$TEST_OUT/dup.txt")"
	port_flow rate $iters || fail "flow through the port failed"
	local good wire
	good=$(tb_bw_mbit "$TEST_OUT/rate-client.txt")
	snap
	# Wire bytes per payload byte, from the port's own count of this flow.
	wire=$(awk -v g="$good" -v d="$(pstat deq_bytes)" -v p=$((iters * 65536)) 'BEGIN {printf "%.3f", g * d / p}')
	# The share of the run the port lost to late dequeues (late_ns).
	lost=$(awk -v l="$(pstat late_ns)" -v w="$wire" -v d="$(pstat deq_bytes)" 'BEGIN {printf "%.3f", l / 1e9 / (d * 8 / (w * 1e6))}')
	info "port at $rate Mb/s: goodput $good Mb/s, wire rate $wire Mb/s ($(awk -v w="$wire" -v r=$rate 'BEGIN {printf "%+.1f%%", (w - r) * 100 / r}')), $(pstat drops) drops; $(awk -v s="$lost" 'BEGIN {printf "%.1f%%", s * 100}') of the run lost to late dequeues"
	awk -v w="$wire" -v r=$rate 'BEGIN {exit !(w <= r * 1.03)}' || fail "wire rate $wire Mb/s is above the port's $rate Mb/s + 3%"
	awk -v s="$lost" 'BEGIN {exit !(s <= 0.5)}' || fail "the guest's timers lost more than half the run: too late to judge the rate"
	awk -v w="$wire" -v r=$rate -v s="$lost" 'BEGIN {exit !(w >= r * (1 - s) * 0.9)}' \
		|| fail "wire rate $wire Mb/s is below 90% of the port's $rate Mb/s less the time lost"
	assert_eq "drops" 0 "$(pstat drops)"
	# The physical invariant (no window longer than a packet faster than
	# the rate): the host clock's 4 ms of credit breaks it by design.
	if [ "${RXECC_CLOCK:-host}" = host ]; then
		info "host clock: $(pstat rate_violations) releases faster than the rate"
	else
		assert_eq "releases faster than the port's rate" 0 "$(pstat rate_violations)"
	fi
	# One loaded port.bpf.c serves every port; p0 was the only one, so its
	# detach unloads it (and frees rxecc_switch.ko, whose kfuncs it calls).
	[ -e /sys/fs/bpf/rxecc/port_ops ] || fail "no pinned port_ops while p0 is a port"
	rxecc port detach --dev p0
	[ ! -e /sys/fs/bpf/rxecc/p0 ] || fail "detach left pins behind"
	[ ! -e /sys/fs/bpf/rxecc/port_ops ] || fail "detaching the last port left the ports' programs loaded"
	tc qdisc show dev p0 | grep -q rxecc && fail "detach left the qdisc"
	true
}

# Exact queue: every snapshot during the flow has queue = enqueued -
# dequeued, in bytes and packets; a queue really forms; it drains to 0.
#@ suite debug=skip
test_port_queue() {
	tb_load_rxe patched
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100
	# 600 messages (about 4 s): with 300 (2 s) a run once got its only
	# sample during the flow after the flow, as a sample takes 0.5 s or
	# more under TCG (a process start) and the flow slows it further.
	port_flow queue 600 &
	local flow=$! samples=0 peak=0
	while kill -0 $flow 2>/dev/null; do
		rxecc port stats --dev p0 --json >>"$TEST_OUT/samples.jsonl"
		sleep 0.2
	done
	wait $flow || fail "flow through the port failed"
	samples=$(wc -l <"$TEST_OUT/samples.jsonl")
	assert_gt "samples" "$samples" 3
	awk -F'[:,{}"]+' '{for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		if (v["qlen_bytes"] != v["enq_bytes"] - v["deq_bytes"] || v["qlen_pkts"] != v["enq_pkts"] - v["deq_pkts"]) {
			print "sample " NR ": queue " v["qlen_bytes"] " B / " v["qlen_pkts"] " pkts != enq - deq"; bad = 1 }
		if (v["qlen_bytes"] > peak) peak = v["qlen_bytes"] }
		END {print "peak " peak; exit bad}' "$TEST_OUT/samples.jsonl" >"$TEST_OUT/check.txt" \
		|| fail "$(head -3 "$TEST_OUT/check.txt")"
	peak=$(awk '/^peak/ {print $2}' "$TEST_OUT/check.txt")
	assert_gt "queue seen during the flow (B)" "$peak" 0
	snap
	assert_eq "queue after the flow (B)" 0 "$(pstat qlen_bytes)"
	assert_eq "queue after the flow (pkts)" 0 "$(pstat qlen_pkts)"
	assert_eq "enqueued = dequeued" "$(pstat enq_bytes)" "$(pstat deq_bytes)"
	info "$samples snapshots, each with queue = enqueued - dequeued; peak sampled queue $peak B, max $(pstat max_qlen_bytes) B; 0 at the end"
}

# Lossy contrast: with a 4-packet queue the port drops, the counters see
# it, and RC retransmission still completes the transfer.
#@ suite
test_port_drops() {
	local rate=100 iters=100
	# The debug kernel's guest carries only about 2 Mb/s: there the port
	# must be slower still for its queue to overflow.
	[ -z "${RXECC_DEBUG_KERNEL:-}" ] || { rate=1 iters=20; }
	tb_load_rxe patched
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps $rate --limit-pkts 4
	port_flow drops $iters || fail "flow failed over a lossy port"
	snap
	assert_gt "drops with a 4-packet queue" "$(pstat drops)" 0
	assert_eq "enqueued = dequeued" "$(pstat enq_pkts)" "$(pstat deq_pkts)"
	info "limit 4 packets: $(pstat drops) drops, $(pstat enq_pkts) packets through; the flow completed"
}

# RED marking on the port's live queue (rxecc mark --mode red), for DCQCN:
# every ECN-capable packet that joins a queue at or above Kmax leaves CE,
# the receiver sees exactly the marks the port wrote, thresholds above any
# queue give no marks, and thresholds at 0 mark every packet.
red_phase() { # <name> <kmin> <kmax>
	rxecc port red --dev p0 --kmin-bytes "$2" --kmax-bytes "$3" --pmax-permille 200
	snap && cp "$TEST_OUT/snap.json" "$TEST_OUT/$1.port.before"
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/$1.cc.before"
	port_flow "$1" 200 || fail "$1: flow failed"
	snap
	awk 'NR == FNR {b[$1] = $2; next} {print $1, $2 - b[$1]}' "$TEST_OUT/$1.cc.before" /sys/kernel/debug/rxe_cc/totals >"$TEST_OUT/$1.cc"
	sed 's/[{}"]//g' "$TEST_OUT/$1.port.before" | tr ',' '\n' | tr ':' ' ' >"$TEST_OUT/$1.p0"
	sed 's/[{}"]//g' "$TEST_OUT/snap.json" | tr ',' '\n' | tr ':' ' ' >"$TEST_OUT/$1.p1"
	awk 'NR == FNR {b[$1] = $2; next} {print $1, $2 - b[$1]}' "$TEST_OUT/$1.p0" "$TEST_OUT/$1.p1" >"$TEST_OUT/$1.port"
}
rv() { awk -v k="$2" '$1 == k {print $2}' "$TEST_OUT/$1.$3"; }

#@ suite debug=skip
test_port_red() {
	tb_load_rxe patched
	tb_load_cc cc=none data_ecn=1
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100
	rxecc mark --dev p0 --mode red

	red_phase mid 20000 100000
	local above marked_above marked ce
	above=$(rv mid red_above port)
	marked_above=$(rv mid red_above_marked port)
	marked=$(( marked_above + $(rv mid red_between_marked port) ))
	ce=$(rv mid rx_ecn_ce cc)
	assert_gt "packets that met a queue >= Kmax" "$above" 0
	assert_gt "packets that met a queue < Kmin" "$(rv mid red_below port)" 0
	assert_eq "marked among those >= Kmax" "$above" "$marked_above"
	assert_eq "CE at the receiver = marks written by the port" "$marked" "$ce"

	red_phase none 10000000 10000000
	assert_eq "thresholds above any queue: CE at the receiver" 0 "$(rv none rx_ecn_ce cc)"
	assert_gt "thresholds above any queue: packets below Kmin" "$(rv none red_below port)" 0

	red_phase all 0 0
	assert_eq "thresholds at 0: every data packet CE" "$(rv all rx_packets cc)" "$(rv all rx_ecn_ce cc)"
	info "Kmin 20 KB, Kmax 100 KB, Pmax 20%: $above packets met >= Kmax (all marked), $(rv mid red_between port) between ($(rv mid red_between_marked port) marked), $(rv mid red_below port) below; receiver saw $ce CE = $marked marks"
}

# Fault injection (rxecc port inject) at p1's ingress, where h1's data
# enters the switch, on an h1 -> h0 flow: each rule acts on exactly the
# packets it selects, the hosts react as RC must (a dropped or corrupted
# packet makes the receiver see a gap, the sender goes back and the
# transfer completes), injected drops are never switch drops, and CE marks
# reach the receiver one for one, at the rule's probability.
inject_rule() { # <field> [slot]: matched or applied of p1's rule
	rxecc port inject --dev p1 --json | jq -r ".[${2:-0}].$1"
}
rx_counter() { # <host> <rxe hw counter>
	cat "/sys/class/infiniband/rxe$1/ports/1/hw_counters/$2"
}
#@ suite
test_port_inject() {
	local applied matched ooo0 ooo1 ce0 ce1 p=0.1
	tb_load_rxe patched
	tb_load_cc cc=none data_ecn=1
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100
	rxecc port attach --dev p1 --rate-mbps 100
	rxecc port inject --dev p1 | grep -q "no injection rules" || fail "a new port has injection rules"

	# The 3rd and 7th WRITE FIRST packet (64 KB is 16 packets at
	# 4096 B), and a QP that does not exist.
	rxecc port inject --dev p1 --action drop --nth 3,7 --opcode 0x06
	rxecc port inject --dev p1 --action drop --qpn 0xfffffe --psn 0-100
	ooo0=$(rx_counter 0 out_of_seq_request)
	# The requester's side of the drops, at p1 (a capture sees the
	# arrivals before the port's ingress program drops them).
	rxecc capture start --dev p1 --pcap "$TEST_OUT/nth.pcap" --log "$TEST_OUT/nth-capture.log"
	port_flow nth 50 || fail "the flow did not complete after two injected drops"
	rxecc capture stop "$TEST_OUT/nth.pcap" >&2
	snap_dev p1
	assert_eq "rule 0 (nth 3,7): packets dropped" 2 "$(inject_rule applied)"
	assert_gt "rule 0: WRITE FIRST packets it selected" "$(inject_rule matched)" 7
	assert_eq "rule 1 (an unused QP): packets selected" 0 "$(inject_rule matched 1)"
	assert_eq "p1's injected drops" 2 "$(pstat injected_drops)"
	assert_eq "p1's switch drops" 0 "$(pstat drops)"
	ooo1=$(rx_counter 0 out_of_seq_request)
	assert_gt "out-of-sequence requests at the receiver after the drops" $((ooo1 - ooo0)) 0
	info "nth 3,7: 2 of $(inject_rule matched) WRITE FIRST packets dropped, receiver saw $((ooo1 - ooo0)) out of sequence, flow completed"
	# The checker: each NAK answered by going back to its PSN, nothing
	# acked sent again, every ICRC good.
	rxecc check "$TEST_OUT/nth.pcap" --json >"$TEST_OUT/nth-check.json" || fail "rxecc check failed on the capture"
	rxecc check "$TEST_OUT/nth.pcap" >"$TEST_OUT/nth-check.txt"
	ck() { jq -r "$1" "$TEST_OUT/$2-check.json"; }
	assert_eq "data QPs in the capture" 1 "$(ck '.qps | length' nth)"
	assert_gt "NAK sequence errors seen at p1" "$(ck '.qps[0].nak_seq' nth)" 0
	assert_eq "NAKs answered by going back to their PSN" "$(ck '.qps[0].nak_seq' nth)" "$(ck '.qps[0].gbn_ok' nth)"
	assert_eq "requests resent after their ACK" 0 "$(ck '.qps[0].resent_after_ack' nth)"
	assert_eq "bad ICRCs at p1" 0 "$(ck '.icrc_bad' nth)"
	info "checker at p1: $(ck '.qps[0].nak_seq' nth) NAKs, each answered at its PSN after $(ck '.qps[0].gbn_mean_us' nth) us on average (most $(ck '.qps[0].gbn_max_us' nth)), $(ck '.qps[0].resent' nth) requests resent, none after its ACK"

	# Every 50th packet, over a longer flow.
	rxecc port inject --dev p1 --clear
	rxecc port inject --dev p1 --action drop --every 50
	port_flow every 200 || fail "the flow did not complete with every 50th packet dropped"
	snap_dev p1
	matched=$(inject_rule matched) applied=$(inject_rule applied)
	assert_eq "every 50th: drops = matched / 50" $((matched / 50)) "$applied"
	assert_eq "p1's injected drops" $((2 + applied)) "$(pstat injected_drops)"
	assert_eq "p1's switch drops" 0 "$(pstat drops)"
	info "every 50th: $applied of $matched packets dropped, 0 switch drops, flow completed"

	# CE with probability p, seeded: the receiver counts every mark.
	rxecc port inject --dev p1 --clear
	rxecc port inject --dev p1 --action ce --prob $p --seed 7
	ce0=$(tb_cc_total rx_ecn_ce)
	port_flow ce 200 || fail "flow with CE marks failed"
	snap_dev p1
	ce1=$(tb_cc_total rx_ecn_ce)
	matched=$(inject_rule matched) applied=$(inject_rule applied)
	assert_eq "CE at the receiver = marks injected" "$applied" $((ce1 - ce0))
	assert_eq "p1's injected marks" "$applied" "$(pstat injected_marks)"
	# Within 5 standard deviations of the binomial's mean.
	awk -v a="$applied" -v n="$matched" -v p=$p 'BEGIN {exit !(n > 0 && (a - n * p) ^ 2 <= 25 * n * p * (1 - p))}' \
		|| fail "CE on $applied of $matched packets is not a fraction of $p"
	info "CE with p = $p: $applied of $matched packets, the receiver saw $((ce1 - ce0))"

	# One corrupted ICRC: the receiver discards the packet.
	rxecc port inject --dev p1 --clear
	rxecc port inject --dev p1 --action icrc --nth 5
	ooo0=$(rx_counter 0 out_of_seq_request)
	rxecc capture start --dev p0 --pcap "$TEST_OUT/icrc.pcap" --log "$TEST_OUT/icrc-capture.log"
	port_flow icrc 50 || fail "the flow did not complete after a corrupted ICRC"
	rxecc capture stop "$TEST_OUT/icrc.pcap" >&2
	rxecc check "$TEST_OUT/icrc.pcap" --json >"$TEST_OUT/icrc-check.json" || fail "rxecc check failed on the capture"
	assert_eq "bad ICRCs the checker found at p0" 1 "$(ck '.icrc_bad' icrc)"
	snap_dev p1
	ooo1=$(rx_counter 0 out_of_seq_request)
	assert_eq "ICRCs corrupted" 1 "$(pstat injected_corrupts)"
	assert_gt "out-of-sequence requests after the discarded packet" $((ooo1 - ooo0)) 0
	info "ICRC of the 5th packet corrupted: the receiver discarded it and saw $((ooo1 - ooo0)) out of sequence; flow completed"

	rxecc port inject --dev p1 --action drop --nth 0 2>"$TEST_OUT/bad.txt" && fail "nth 0 was accepted"
	grep -q "1..=64" "$TEST_OUT/bad.txt" || fail "no clear error for nth 0: $(cat "$TEST_OUT/bad.txt")"
	true
}

# DCQCN's reaction to a fixed CE fraction, injected at p1 (the Lumina-style
# experiment (c) of docs/switch.md, as a direction check): with no marks
# no CNP; with CE on a share p of the data, the receiver answers with CNPs,
# never more than one per min_time_between_cnps and never more than the
# CE marks it got, every one reaches the sender, and the flow is slower at
# the highest p than without marks.
#@ suite
test_inject_dcqcn_ce() {
	local p t0 t1 cnp0 cnp1 rx0 rx1 ce0 ce1 mbps rate0="" gap_us=1000 line
	tb_load_rxe patched
	tb_load_cc cc=dcqcn data_ecn=2 line_rate_mbps=100 min_time_between_cnps=$gap_us
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100
	rxecc port attach --dev p1 --rate-mbps 100
	for p in 0 0.01 0.2; do
		rxecc port inject --dev p1 --clear
		[ "$p" = 0 ] || rxecc port inject --dev p1 --action ce --prob "$p" --seed 3 2>/dev/null
		cnp0=$(tb_cc_total cnps_sent) rx0=$(tb_cc_total cnps) ce0=$(tb_cc_total rx_ecn_ce)
		t0=$(date +%s%N)
		port_flow "ce-$p" 300 || fail "p = $p: the flow failed"
		t1=$(date +%s%N)
		cnp1=$(tb_cc_total cnps_sent) rx1=$(tb_cc_total cnps) ce1=$(tb_cc_total rx_ecn_ce)
		mbps=$(tb_bw_mbit "$TEST_OUT/ce-$p-client.txt")
		line="p = $p: $mbps Mb/s, $((ce1 - ce0)) CE, $((cnp1 - cnp0)) CNPs sent, $((rx1 - rx0)) received in $(((t1 - t0) / 1000000)) ms"
		info "$line"
		assert_eq "p = $p: CNPs the sender got = CNPs sent" $((cnp1 - cnp0)) $((rx1 - rx0))
		if [ "$p" = 0 ]; then
			assert_eq "no marks: CE at the receiver" 0 $((ce1 - ce0))
			assert_eq "no marks: CNPs" 0 $((cnp1 - cnp0))
		else
			assert_gt "p = $p: CNPs" $((cnp1 - cnp0)) 0
			(((cnp1 - cnp0) <= ce1 - ce0)) || fail "p = $p: $((cnp1 - cnp0)) CNPs for $((ce1 - ce0)) CE marks"
			(((cnp1 - cnp0) <= (t1 - t0) / 1000 / gap_us + 1)) ||
				fail "p = $p: $((cnp1 - cnp0)) CNPs in $(((t1 - t0) / 1000)) us, more than one per $gap_us us"
		fi
		[ -n "$rate0" ] || rate0=$mbps
	done
	# The highest fraction against none.
	awk -v a="$mbps" -v b="$rate0" 'BEGIN {exit !(a < b)}' || fail "p = $p: $mbps Mb/s is not below the $rate0 Mb/s without marks"
}

# Duplicates, reordering and delays injected at p1 (h1's packets), carried
# out at p0 (the egress to h0): the receiver takes each copy as a duplicate
# request; a reordered packet arrives behind the ones that overtook it, and
# the receiver sees a gap and the sender goes back; a delayed packet
# crosses the switch in its delay.
lat_typical() { # <perftest lat output>: t_typical, us
	awk '/t_typical/ {hdr = 1; next} hdr && NF >= 5 && $1 ~ /^[0-9]+$/ {print $5; exit}' "$1"
}
lat_flow() { # <name>: 500 x 64 B writes, h1 <-> h0
	TB_BW_TOOL=ib_write_lat tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$1" -s 64 -n 500
}
#@ suite
test_inject_dup_delay_reorder() {
	local dup0 dup1 ooo0 ooo1 applied base delayed rise d_us=4000
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100
	rxecc port attach --dev p1 --rate-mbps 100

	# Every 20th request packet twice.
	rxecc port inject --dev p1 --action dup --every 20
	dup0=$(rx_counter 0 duplicate_request)
	port_flow dup 50 || fail "the flow did not complete with duplicated packets"
	dup1=$(rx_counter 0 duplicate_request)
	snap_dev p1
	applied=$(inject_rule applied)
	assert_eq "every 20th: copies = matched / 20" $(($(inject_rule matched) / 20)) "$applied"
	assert_eq "p1's injected copies" "$applied" "$(pstat injected_dups)"
	assert_eq "duplicate requests at the receiver = copies" "$applied" $((dup1 - dup0))
	snap_dev p0
	assert_eq "p0's switch drops" 0 "$(pstat drops)"
	info "dup every 20th: $applied copies, the receiver took $((dup1 - dup0)) duplicate requests; flow completed"

	# The 4th WRITE MIDDLE packet overtaken by the 2 behind it, seen at p0.
	rxecc port inject --dev p1 --clear
	rxecc port inject --dev p1 --action reorder --opcode 0x07 --nth 4 --gap 2
	ooo0=$(rx_counter 0 out_of_seq_request)
	rxecc capture start --dev p0 --pcap "$TEST_OUT/reorder.pcap" --log "$TEST_OUT/reorder-capture.log"
	port_flow reorder 20 || fail "the flow did not complete after a reordered packet"
	rxecc capture stop "$TEST_OUT/reorder.pcap" >&2
	ooo1=$(rx_counter 0 out_of_seq_request)
	snap_dev p1
	assert_eq "p1's reordered packets" 1 "$(pstat injected_reorders)"
	snap_dev p0
	assert_eq "packets p0 held" 1 "$(pstat held_pkts)"
	assert_eq "p0's switch drops" 0 "$(pstat drops)"
	assert_gt "out-of-sequence requests at the receiver" $((ooo1 - ooo0)) 0
	rxecc check "$TEST_OUT/reorder.pcap" --json >"$TEST_OUT/reorder-check.json" || fail "rxecc check failed on the capture"
	ck() { jq -r "$1" "$TEST_OUT/reorder-check.json"; }
	assert_eq "reordered requests the checker found at p0" 1 "$(ck '.qps[0].reordered')"
	assert_gt "NAK sequence errors at p0" "$(ck '.qps[0].nak_seq')" 0
	assert_eq "NAKs answered by going back to their PSN" "$(ck '.qps[0].nak_seq')" "$(ck '.qps[0].gbn_ok')"
	assert_eq "requests resent after their ACK" 0 "$(ck '.qps[0].resent_after_ack')"
	# The held packet left p0 behind two of higher PSN (tshark's RoCE
	# dissector, in capture order).
	tshark -r "$TEST_OUT/reorder.pcap" -Y "infiniband.bth.opcode == 7" -T fields -e infiniband.bth.psn \
		>"$TEST_OUT/reorder-psns.txt" 2>/dev/null || fail "tshark could not read the capture"
	awk 'NR > 1 && $1 + 0 < prev + 0 {n++} {prev = $1} END {exit !(n >= 1)}' "$TEST_OUT/reorder-psns.txt" ||
		fail "no WRITE MIDDLE left p0 behind one of higher PSN"
	info "reorder: 1 packet held at p0, the receiver saw $((ooo1 - ooo0)) out of sequence, $(ck '.qps[0].nak_seq') NAK(s) answered at their PSN; flow completed"

	# A delay on h1's direction only: each of its packets crosses the
	# switch (its arrival at p1 to its departure from p0, two captures on
	# one clock) in the delay and its own serialisation, and ib_write_lat's
	# half round trip rises by at least half the delay.
	rxecc port inject --dev p1 --clear
	lat_flow base || fail "ib_write_lat failed without a delay"
	rxecc port inject --dev p1 --action delay --delay-us $d_us
	rxecc capture start --dev p1 --pcap "$TEST_OUT/delay-in.pcap" --log "$TEST_OUT/delay-in.log"
	rxecc capture start --dev p0 --pcap "$TEST_OUT/delay-out.pcap" --log "$TEST_OUT/delay-out.log"
	lat_flow delayed || fail "ib_write_lat failed with a ${d_us} us delay"
	rxecc capture stop "$TEST_OUT/delay-in.pcap" "$TEST_OUT/delay-out.pcap" >&2
	for side in in out; do
		tshark -r "$TEST_OUT/delay-$side.pcap" -Y "ip.src == $(tb_ip 1) && infiniband.bth.opcode == 10" \
			-T fields -e frame.time_epoch -e infiniband.bth.psn >"$TEST_OUT/delay-$side.txt" 2>/dev/null ||
			fail "tshark could not read delay-$side.pcap"
	done
	# Transit per PSN, us: the first arrival and the first departure.
	awk 'NR == FNR {if (!($2 in t)) t[$2] = $1; next} ($2 in t) && !($2 in seen) {seen[$2] = 1; print ($1 - t[$2]) * 1e6}' \
		"$TEST_OUT/delay-in.txt" "$TEST_OUT/delay-out.txt" | sort -n >"$TEST_OUT/delay-transit.txt"
	read -r n lo med hi < <(awk '{v[NR] = $1} END {printf "%d %.1f %.1f %.1f\n", NR, v[1], v[int((NR + 1) / 2)], v[NR]}' "$TEST_OUT/delay-transit.txt")
	assert_gt "WRITE packets seen at both p1 and p0" "$n" 400
	# No packet sooner than the delay; the median within a tenth of it
	# (the qdisc watchdog's lateness, and 64 B at 100 Mb/s twice).
	awk -v lo="$lo" -v med="$med" -v d=$d_us 'BEGIN {exit !(lo >= d && med <= d * 1.1)}' ||
		fail "a ${d_us} us delay: transit through the switch from $lo us (median $med, most $hi)"
	base=$(lat_typical "$TEST_OUT/base-client.txt") delayed=$(lat_typical "$TEST_OUT/delayed-client.txt")
	[ -n "$base" ] && [ -n "$delayed" ] || fail "no t_typical in ib_write_lat's output"
	rise=$(awk -v a="$delayed" -v b="$base" 'BEGIN {printf "%.1f", a - b}')
	awk -v a="$delayed" -v d=$d_us 'BEGIN {exit !(a >= d / 2)}' ||
		fail "a ${d_us} us delay one way left the half round trip at $delayed us"
	snap_dev p0
	assert_eq "p0 held every delayed packet" "$(jq -r '.[0].applied' <(rxecc port inject --dev p1 --json))" $(($(pstat held_pkts) - 1))
	info "delay ${d_us} us h1 -> h0: $n packets crossed the switch in $lo to $hi us (median $med); half round trip ${base} -> ${delayed} us (+$rise)"
}

# A reset (the device going down) frees everything a port holds. Delayed
# packets wait at p0 in a list of their own, which holds as many as the
# queue may (--limit-pkts): the rest are dropped. The qdisc's reset frees
# every list whole; packets it left behind would later take its length
# below 0, after which the port drops everything.
qdisc_backlog_pkts() { # <dev>: the qdisc's length, packets (tc's "backlog ...p")
	tc -s qdisc show dev "$1" | awk '/backlog/ {sub(/p$/, "", $3); print $3; exit}'
}
#@ suite
test_port_reset() {
	# The debug kernel takes the same paths with a tenth of the packets.
	local limit sent
	limit=$(tb_volume 10000 10000 1000)
	tb_load_rxe patched
	rxecc testbed up bridge2
	rxecc port attach --dev p0 --rate-mbps 100 --limit-pkts "$limit"
	rxecc port attach --dev p1 --rate-mbps 100
	rxecc port inject --dev p1 --action delay --delay-us 3000000
	sent=$((limit * 6 / 5))
	ip netns exec h1 ping -c 1 -W 5 "$(tb_ip 0)" >/dev/null || fail "h1 cannot reach h0"
	# RoCEv2-shaped datagrams from h1 to h0 (a BTH and an ICRC): the rule
	# selects them, p0 holds them for 3 s.
	ip netns exec h1 python3 - "$(tb_ip 0)" "$sent" <<'PY' || fail "could not send to h0"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Held skbs stay charged to the socket (veth does not orphan them): room
# for all of them, or the sender would wait out the delay.
s.setsockopt(socket.SOL_SOCKET, 32, 64 << 20)  # SO_SNDBUFFORCE
pkt = bytes([0x0a, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 1]) + bytes(4)
for _ in range(int(sys.argv[2])):
    s.sendto(pkt, (sys.argv[1], 4791))
PY
	snap_dev p0
	assert_eq "packets p0 holds: its limit" $limit "$(qdisc_backlog_pkts p0)"
	# A few may be lost on the way (the veth's backlog): at least the
	# limit arrived, and p0 dropped what did beyond it.
	assert_gt "p0's drops beyond the limit" "$(pstat drops)" 0
	ip link set p0 down
	ip link set p0 up
	assert_eq "p0's length after its reset" 0 "$(qdisc_backlog_pkts p0)"
	rxecc port inject --dev p1 --clear
	# Past the delay, a leftover would have joined the queue.
	sleep 4
	port_flow after-reset 20 || fail "no flow through p0 after its reset"
	assert_eq "p0's length after a flow" 0 "$(qdisc_backlog_pkts p0)"
	info "$sent delayed packets sent: p0 held $limit and dropped $(pstat drops); after its reset it held 0 and a flow went through"
}

# The ACK class (rxecc port attach --ack-priority; a topology's
# [defaults] ack_priority): h1's bulk WRITEs queue at p0 (20 Mb/s, h1's
# link 100), while h0 writes to h1, whose ACKs to h0 take the same port.
# In one FIFO they wait behind the queue; in the class ahead of data they
# cross the switch (arrival at p1 to departure from p0, two captures on
# one clock) in about one data packet's serialisation.
ack_transit() { # <name>: the median transit of h1's ACKs through the switch, ms
	local side
	for side in in out; do
		tshark -r "$TEST_OUT/$1-$side.pcap" -Y "ip.src == $(tb_ip 1) && infiniband.bth.opcode == 17" \
			-T fields -e frame.time_epoch -e infiniband.bth.psn >"$TEST_OUT/$1-$side.txt" 2>/dev/null ||
			return 1
	done
	awk 'NR == FNR {if (!($2 in t)) t[$2] = $1; next} ($2 in t) && !($2 in seen) {seen[$2] = 1; print ($1 - t[$2]) * 1e3}' \
		"$TEST_OUT/$1-in.txt" "$TEST_OUT/$1-out.txt" | sort -n >"$TEST_OUT/$1-transit.txt"
	awk '{v[NR] = $1} END {if (NR) printf "%.2f %d\n", v[int((NR + 1) / 2)], NR}' "$TEST_OUT/$1-transit.txt"
}
ack_prio_run() { # <name> [--ack-priority]
	rxecc port attach --dev p0 --rate-mbps 20 ${2:+"$2"}
	rxecc capture start --dev p1 --pcap "$TEST_OUT/$1-in.pcap" --log "$TEST_OUT/$1-in.log"
	rxecc capture start --dev p0 --pcap "$TEST_OUT/$1-out.pcap" --log "$TEST_OUT/$1-out.log"
	tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/$1-bulk" -s 65536 -n 100 &
	local bulk=$!
	tb_nap 0.5
	tb_pair 0 1 $((TB_PORT_BASE + 1)) "$TEST_OUT/$1-rev" -s 65536 -n 20 || return 1
	wait "$bulk" || return 1
	rxecc capture stop "$TEST_OUT/$1-in.pcap" "$TEST_OUT/$1-out.pcap" >&2
	snap_dev p0
}
#@ suite debug=skip
test_port_ack_priority() {
	local fifo prio n_fifo n_prio
	tb_load_rxe patched
	rxecc testbed up bridge2
	rxecc port attach --dev p1 --rate-mbps 100
	ack_prio_run fifo || fail "the flows failed with one FIFO at p0"
	assert_eq "ACK-class packets with one FIFO" 0 "$(pstat prio_pkts)"
	read -r fifo n_fifo < <(ack_transit fifo) || fail "tshark could not read the fifo captures"
	ack_prio_run prio --ack-priority || fail "the flows failed with the ACK class at p0"
	assert_gt "ACK-class packets sent ahead of data" "$(pstat prio_pkts)" 0
	read -r prio n_prio < <(ack_transit prio) || fail "tshark could not read the prio captures"
	assert_gt "ACKs seen at p1 and p0 (one FIFO)" "${n_fifo:-0}" 10
	assert_gt "ACKs seen at p1 and p0 (ACK class)" "${n_prio:-0}" 10
	awk -v a="$prio" -v b="$fifo" 'BEGIN {exit !(a * 4 < b)}' ||
		fail "h1's ACKs crossed the switch in $prio ms (median) with the ACK class, $fifo ms in one FIFO"
	info "h1's ACKs through a 20 Mb/s port under h1's bulk WRITEs: median $fifo ms in one FIFO ($n_fifo ACKs), $prio ms in the class ahead of data ($n_prio), $(pstat prio_pkts) sent there"
}

# The checkers in `rxecc run` (tests/inject_check.toml): each run's
# injection rules come from the experiment file, its captures at p1 and p0
# are judged into check-<port>.json and the run's check table, and each
# verdict matches what was injected: nothing without rules; drops answered
# by go-back-N at the right PSN; reordered packets found as such at p0;
# injected CE answered by CNPs no closer than min_time_between_cnps; and
# the engagement check tells the DCQCN run that acted from one that had
# nothing to act on.
#@ suite
test_run_inject_check() {
	local out=$TEST_OUT/run run flows p
	tb_load_rxe patched
	tb_load_cc cc=none
	rxecc run "$RXECC_TOP/tests/inject_check.toml" --out "$out" >"$TEST_OUT/summary.txt" 2>"$TEST_OUT/run.txt" ||
		fail "rxecc run: $(grep -v '^rxecc: ' "$TEST_OUT/run.txt" | tail -3)"
	cat "$TEST_OUT/summary.txt" >&2
	# A verdict summed over the data QPs of a run's capture at a port.
	ck() { jq -r "[.qps[].$3] | add" "$out/$1/check-$2.json"; }
	inj() { rxecc port sum "$out/$1/ports.jsonl" "$3" "$2"; }
	grep -q "^dcqcn-ce  *p0 " "$TEST_OUT/summary.txt" || fail "no check table row for dcqcn-ce at p0"
	flows=$(head -1 "$out/flows.txt")
	for run in none drop reorder dcqcn-ce; do
		for p in p1 p0; do
			# One RC QP per flow; the connection manager's UD MADs are none.
			assert_eq "$run: data QPs at $p" "$flows" "$(jq '.qps | length' "$out/$run/check-$p.json")"
			assert_eq "$run: bad ICRCs at $p" 0 "$(jq .icrc_bad "$out/$run/check-$p.json")"
			# Behind the reorder (p0) a go-back's first request may be
			# the one held back, so that its start shows at another
			# PSN there: the requester's answers are judged at p1,
			# before the rule.
			[ "$run:$p" = reorder:p0 ] ||
				assert_eq "$run: NAKs at $p answered wrong or not at all" 0 $(($(ck $run $p gbn_wrong) + $(ck $run $p gbn_none)))
		done
		assert_eq "$run: requests resent after their ACK" 0 "$(ck $run p1 resent_after_ack)"
		assert_eq "$run: switch drops" 0 "$(rxecc port sum "$out/$run/ports.jsonl" drops)"
		assert_eq "$run: flows completed" "$flows" "$(wc -l <"$out/$run/fct.txt")"
	done
	assert_eq "none: NAKs" 0 "$(ck none p1 nak_seq)"
	assert_eq "none: CE" 0 "$(ck none p0 ce)"
	assert_gt "drop: packets dropped at p1" "$(inj drop p1 injected_drops)" 0
	assert_gt "drop: NAKs at p1" "$(ck drop p1 nak_seq)" 0
	assert_eq "drop: NAKs answered at their PSN (or by the go-back under way)" "$(ck drop p1 nak_seq)" $(($(ck drop p1 gbn_ok) + $(ck drop p1 gbn_covered)))
	assert_gt "reorder: packets reordered" "$(inj reorder p1 injected_reorders)" 0
	# A held packet overtaken only by the other flow's, or one that was a
	# resend already, shows no reordering within its QP.
	assert_gt "reorder: reordered requests found at p0" "$(ck reorder p0 reordered)" 0
	(($(ck reorder p0 reordered) <= $(inj reorder p1 injected_reorders))) ||
		fail "reorder: $(ck reorder p0 reordered) reordered requests found for $(inj reorder p1 injected_reorders) injected"
	assert_eq "reorder: none found at p1, before the reorder" 0 "$(ck reorder p1 reordered)"
	assert_eq "dcqcn-ce: CE at p0 = marks injected" "$(inj dcqcn-ce p1 injected_marks)" "$(ck dcqcn-ce p0 ce)"
	assert_gt "dcqcn-ce: CNPs at p1" "$(ck dcqcn-ce p1 cnps)" 0
	assert_eq "dcqcn-ce: CNPs at p1 = CNPs the senders' rxe_cc received" \
		"$(awk '$1 == "cnps" {print $2}' "$out/dcqcn-ce/rxe_cc-totals.txt")" "$(ck dcqcn-ce p1 cnps)"
	awk -v g="$(jq '[.qps[].cnp_min_gap_us | select(. != null)] | min' "$out/dcqcn-ce/check-p1.json")" 'BEGIN {exit !(g >= 1000)}' ||
		fail "dcqcn-ce: two CNPs closer than min_time_between_cnps (1000 us)"
	# Whether each algorithm acted: DCQCN under injected CE did, DCQCN
	# with no mark anywhere did not, and says so.
	assert_eq "dcqcn-ce: engaged" true "$(jq -r '.[] | select(.run == "dcqcn-ce") | .engaged' "$out/engagement.json")"
	assert_eq "dcqcn-idle: engaged" false "$(jq -r '.[] | select(.run == "dcqcn-idle") | .engaged' "$out/engagement.json")"
	grep -q "WARNING: dcqcn-idle (cc=dcqcn) shows none of its signals" "$TEST_OUT/run.txt" || fail "no warning for DCQCN that never acted"
	info "drop: $(ck drop p1 nak_seq) NAKs, answered $(ck drop p1 gbn_ok) + covered $(ck drop p1 gbn_covered); reorder: $(ck reorder p0 reordered) of $(inj reorder p1 injected_reorders) found; dcqcn-ce: $(ck dcqcn-ce p0 ce) CE, $(ck dcqcn-ce p1 cnps) CNPs"
}

# Stock rdma_rxe against the patched one under the same injected drops
# (experiment (a) of docs/switch.md, as a direction check; `make bench
# BENCH_PARTS=inject-gbn` has the numbers): every 100th of h1's data
# packets dropped at p1, both recover the same way. Each drop leaves a gap
# the receiver sees out of sequence and NAKs once, unless a go-back under
# way covers it first (a retry timer's; docs/testing.md has the debug
# kernel's run); the sender goes back after each NAK, every byte arrives, and
# a capture at p1 finds every NAK answered at its PSN, nothing
# acknowledged resent.
#@ suite
test_inject_gbn_stock_patched() {
	local side drops naks nak_seq
	for side in stock patched; do
		tb_load_rxe $side
		[ $side = stock ] || tb_load_cc cc=none
		rxecc testbed up bridge2
		rxecc port attach --dev p0 --rate-mbps 100
		rxecc port attach --dev p1 --rate-mbps 100
		rxecc port inject --dev p1 --action drop --every 100 2>/dev/null
		rxecc capture start --dev p1 --pcap "$TEST_OUT/$side.pcap" --log "$TEST_OUT/$side-capture.log"
		port_flow $side 100 || fail "$side: the flow did not complete under injected drops"
		rxecc capture stop --no-loss "$TEST_OUT/$side.pcap" >&2 || fail "$side: the capture lost packets"
		assert_eq "$side: bytes moved" $((65536 * 100)) "$(tb_bw_bytes "$TEST_OUT/$side-client.txt")"
		drops=$(rxecc port inject --dev p1 --json | jq '.[0].applied')
		naks=$(rx_counter 1 rcvd_seq_err)
		assert_gt "$side: packets dropped" "$drops" 0
		rxecc check "$TEST_OUT/$side.pcap" --json >"$TEST_OUT/$side-check.json" || fail "$side: rxecc check failed"
		nak_seq=$(jq '[.qps[].nak_seq] | add' "$TEST_OUT/$side-check.json")
		assert_gt "$side: NAKs at p1" "$nak_seq" 0
		((nak_seq <= drops)) || fail "$side: $nak_seq NAKs at p1 for $drops drops"
		# rxe counts a NAK only past the PSN it expected (nak_seq_new): one
		# right after the ACK of the PSN before its own is answered all the
		# same.
		assert_eq "$side: NAKs the sender's rxe counted" "$(jq '[.qps[].nak_seq_new] | add' "$TEST_OUT/$side-check.json")" "$naks"
		assert_eq "$side: NAKs answered at their PSN" "$nak_seq" "$(jq '[.qps[] | .gbn_ok + .gbn_covered] | add' "$TEST_OUT/$side-check.json")"
		assert_eq "$side: requests resent after their ACK" 0 "$(jq '[.qps[].resent_after_ack] | add' "$TEST_OUT/$side-check.json")"
		info "$side: $drops drops, $naks NAKs, go-back after $(jq '.qps[0].gbn_mean_us' "$TEST_OUT/$side-check.json") us on average, $(tb_bw_mbit "$TEST_OUT/$side-client.txt") Mb/s"
		[ $side = patched ] || tb_reset
	done
}

# A link's propagation delay is a stage after the queue (switch-ebpf/port/
# queue.h), as in the HPCC simulator: a packet leaves the queue as it
# starts serialising. h1 -> h0 through one switch, every link delay_us
# long. With p0 (towards h0) twice the sender's rate there is no
# congestion, and every reader of the queue finds it empty while each link
# carries about delay x rate of wire: its peak is at most the frame that
# just arrived (two, if the guest's timers bunch them), RED with Kmin =
# Kmax = 3 frames sees every packet below Kmin, the switch's ingress
# accounting stays under XOFF (5 frames, below the wire's 6) and sends no
# pause. With p0 slowed below the sender's rate, PFC acts through the
# delay: the pause reaches h1's NIC one link delay after the switch decided
# it (tau), and the data on the wire and sent meanwhile still arrives, so
# the ingress overshoots XOFF by about 2 x delay at the rate the queue
# grows.
#@ suite debug=skip
test_port_link_delay() {
	local d_us=4000 tx=50 fast=100 slow=20 xoff=20000 xon=10000 frame lat s=$TEST_OUT/snap.json
	tb_load_rxe patched
	tb_load_cc cc=none data_ecn=1
	cat >"$TEST_OUT/delay.toml" <<-END
		description = "h1 -> h0 through one switch, $d_us us per link"
		[defaults]
		rate_mbps = $tx
		delay_us = $d_us
		[[switch]]
		name = "sw0"
		buffer_bytes = 2097152
		pfc = true
		xoff_bytes = $xoff
		xon_bytes = $xon
		[[host]]
		name = "h0"
		[[host]]
		name = "h1"
		[[link]]
		a = "h0"
		b = "sw0"
		rate_mbps = $fast
		[[link]]
		a = "h1"
		b = "sw0"
	END
	rxecc testbed up "$TEST_OUT/delay.toml" 2>"$TEST_OUT/up.txt" || { cat "$TEST_OUT/up.txt" >&2; fail "testbed up"; }
	rxecc mark --dev p0 --mode red
	# 4 KiB MTU frames: 4096 B of payload and RoCE's and Ethernet's headers.
	frame=4200
	rxecc port red --dev p0 --kmin-bytes $((3 * frame)) --kmax-bytes $((3 * frame)) --pmax-permille 1000

	# The delay is there: ib_write_lat's half round trip crosses two links.
	TB_BW_TOOL=ib_write_lat tb_pair 1 0 $TB_PORT_BASE "$TEST_OUT/lat" -s 64 -n 100 || fail "ib_write_lat failed"
	lat=$(lat_typical "$TEST_OUT/lat-client.txt")
	awk -v l="$lat" -v d=$d_us 'BEGIN {exit !(l >= 2 * d)}' || fail "half round trip $lat us over two links of $d_us us"

	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/cc.before"
	port_flow quiet 150 || fail "the flow with no congestion failed"
	rxecc port stats --json >"$s"
	local peak ce wire
	peak=$(psum "$s" max_qlen_bytes p0)
	ce=$(awk 'NR == FNR {b[$1] = $2; next} $1 == "rx_ecn_ce" {print $2 - b[$1]}' "$TEST_OUT/cc.before" /sys/kernel/debug/rxe_cc/totals)
	wire=$(awk -v r=$tx -v d=$d_us 'BEGIN {printf "%d", r * d / 8}')
	info "no congestion, $d_us us per link, $wire B of wire at $tx Mb/s: p0's queue peaked at $peak B;" \
		"RED: $(psum "$s" red_below p0) packets below Kmin, $(psum "$s" red_between p0) between, $(psum "$s" red_above p0) above, $ce CE;" \
		"peak ingress $(psum "$s" max:ingress.max_bytes p1) B, $(psum "$s" ingress.pfc_tx_xoff p1) pauses; half round trip $lat us"
	assert_gt "wire at $tx Mb/s, over XOFF" "$wire" $xoff
	awk -v p="$peak" -v f=$frame 'BEGIN {exit !(p <= 2 * f)}' || fail "p0's queue peaked at $peak B with no congestion"
	assert_gt "packets RED judged below Kmin" "$(psum "$s" red_below p0)" 0
	assert_eq "packets RED judged at or above Kmin" 0 $(($(psum "$s" red_between p0) + $(psum "$s" red_above p0)))
	assert_eq "CE at the receiver" 0 "$ce"
	assert_eq "pauses with no congestion" 0 "$(psum "$s" ingress.pfc_tx_xoff p1)"

	rxecc port rate --dev p0 --rate-mbps $slow
	port_flow paused 60 || fail "the flow through a slowed p0 failed"
	rxecc port stats --json >"$s"
	local tau_us peak_in reaction_us
	tau_us=$(awk -v t="$(psum "$s" max:tau_mean_ns v1)" 'BEGIN {printf "%.0f", t / 1000}')
	peak_in=$(psum "$s" max:ingress.max_bytes p1)
	# The queue grows at the sender's rate less p0's until the pause's
	# last data has arrived.
	reaction_us=$(awk -v p="$peak_in" -v x=$xoff -v i=$tx -v o=$slow 'BEGIN {printf "%.0f", (p - x) * 8 / (i - o)}')
	info "p0 at $slow Mb/s: $(psum "$s" ingress.pfc_tx_xoff p1) pauses, h1's NIC got $(psum "$s" pfc_rx_xoff v1);" \
		"tau mean $tau_us us (max $(($(psum "$s" max:tau_max_ns v1) / 1000)) us); peak ingress $peak_in B over XOFF $xoff:" \
		"a reaction of $reaction_us us against 2 x $d_us us; $(psum "$s" drops) drops"
	assert_gt "pauses" "$(psum "$s" ingress.pfc_tx_xoff p1)" 0
	assert_eq "drops" 0 "$(psum "$s" drops)"
	assert_gt "tau (us) at h1's NIC, over the link delay less 1" "$tau_us" $((d_us - 1))
	assert_gt "the link delay plus a frame's time at $tx Mb/s x 4, over tau (us)" $((d_us + 4 * frame * 8 / tx)) "$tau_us"
	awk -v r="$reaction_us" -v d=$d_us 'BEGIN {exit !(r >= 2 * d * 0.75 && r <= 2 * d * 1.5)}' ||
		fail "the pause's reaction took $reaction_us us, not about 2 x $d_us"
}
