# HPCC's in-network telemetry end to end: the sender's rxe reserves an INT
# shim on each data packet, every switch port's link peer writes its
# dequeue-time record into it, the responder echoes the records in the
# ACK and rxe_cc's HPCC reads them. The wire stays RoCEv2 (every ICRC
# checks; tshark decodes it with tests/rxecc_int.lua), a shim with no room
# left is counted and never corrupted, and without cc=hpcc no packet
# carries a shim.

. "$RXECC_TOP/tests/cc_hops.sh"
. "$RXECC_TOP/tests/cc_incast.sh"

# hpcc_flow <tag> <client host> <server host> <messages>: one ib_send_bw
# flow of 64 KB messages; 0 if both ends finished.
hpcc_flow() {
	TB_BW_TOOL=ib_send_bw tb_pair "$2" "$3" $((TB_PORT_BASE + 7)) "$TEST_OUT/$1" -s 65536 -n "$4" -e
}

# int_pstat <port> <counter>: a counter of `rxecc port stats --json` (all
# test files share one shell: test_port.sh has its own pstat).
int_pstat() {
	rxecc port stats --dev "$1" --json | rxecc port sum - "$2"
}

#@ suite debug_timeout=5400
test_hpcc_int() {
	local cap=/tmp/hpcc.pcap acks data stamped n=50 hops
	tb_load_rxe patched
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(cci_knobs hpcc)
	cci_topology hpcc "$TEST_OUT/dumbbell.toml" || fail "cannot derive the topology"
	rxecc testbed up "$TEST_OUT/dumbbell.toml" 2>"$TEST_OUT/up.txt" || fail "testbed up: $(tail -3 "$TEST_OUT/up.txt")"

	# p0 sees the data before h0's NIC stamps p0's record into it, and the
	# ACKs with that record echoed.
	rxecc capture start --dev p0 --pcap "$cap" --log "$TEST_OUT/capture.log"
	hpcc_flow one 1 0 $n || fail "the flow h1 -> h0 failed: $(tail -1 "$TEST_OUT/one-client.txt")"
	rxecc capture stop "$cap" >&2
	rxecc port stats >"$TEST_OUT/ports.txt"
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/rxe_cc-totals.txt"

	data=$(tb_cc_total rx_packets)
	acks=$(tb_cc_total acks)
	stamped=$(int_pstat v0 int_stamped)
	info "one hop: $data data packets, $stamped records stamped at v0 for p0, $acks ACKs;" \
		"$(tb_cc_total int_acks) with INT, $(tb_cc_total int_hops) records; $(tb_cc_total tx_windowed) sends waited on the window"
	assert_eq "bytes acked" $((n * 65536)) "$(tb_cc_total acked_bytes)"
	assert_gt "data packets" "$data" 0
	assert_eq "records stamped at h0's NIC (one per data packet)" "$data" "$stamped"
	assert_eq "ACKs with INT" "$acks" "$(tb_cc_total int_acks)"
	assert_eq "records in ACKs (one hop each)" "$acks" "$(tb_cc_total int_hops)"
	assert_eq "hops without room" 0 "$(tb_cc_total int_overflow)"
	assert_eq "flagged packets not ours at v0" 0 "$(int_pstat v0 int_bad)"
	assert_eq "drops at the bottleneck" 0 "$(int_pstat p0 drops)"

	cp "$cap" "$TEST_OUT/hpcc.pcap"
	tb_wire_check "$cap" "$TEST_OUT/wire.json" >"$TEST_OUT/wire.txt" || { cat "$TEST_OUT/wire.txt" >&2; fail "ICRC check"; }
	info "capture at p0: $(cat "$TEST_OUT/wire.txt")"
	assert_gt "packets with an INT shim in the capture" "$(jq .int_shims "$TEST_OUT/wire.json")" 0
	# Wireshark's RoCEv2 dissector reads the shim as a BTH (opcode 0xc5);
	# with the Lua dissector it finds the real BTH after it.
	# One read for both checks (tshark takes tens of seconds to start
	# under TCG).
	tshark -X lua_script:"$RXECC_TOP/tests/rxecc_int.lua" -r "$cap" -Y infiniband -T fields \
		-e infiniband.bth.opcode -e rxecc_int.nhops -e rxecc_int.hop.qlen >"$TEST_OUT/opcodes.txt" 2>"$TEST_OUT/tshark-read.log"
	assert_gt "ACKs tshark decoded after a shim with one record" "$(awk '$1 == 17 && $2 == 1' "$TEST_OUT/opcodes.txt" | wc -l)" 0
	assert_eq "packets tshark decoded as opcode 0xc5 (the shim as a BTH)" 0 "$(awk '$1 == 197' "$TEST_OUT/opcodes.txt" | wc -l)"
	# The records the senders got never claim more queue than p0 had.
	awk -F '\t' '$2 == 1 {print $3}' "$TEST_OUT/opcodes.txt" >"$TEST_OUT/qlens.txt"
	info "qLen in echoed records: max $(sort -n "$TEST_OUT/qlens.txt" | tail -1) B; p0's peak $(int_pstat p0 max_qlen_bytes) B"
	assert_gt "records with a qLen in the capture" "$(wc -l <"$TEST_OUT/qlens.txt")" 0
	assert_eq "records with qLen above p0's peak" 0 "$(awk -v p="$(int_pstat p0 max_qlen_bytes)" '$1 > p' "$TEST_OUT/qlens.txt" | wc -l)"

	# Without cc=hpcc the wire is stock: nothing for v0 to stamp.
	rmmod rxe_cc
	tb_load_cc cc=none
	hpcc_flow none 1 0 20 || fail "the cc=none flow failed"
	assert_eq "records stamped for a cc=none flow" "$stamped" "$(int_pstat v0 int_stamped)"
	assert_eq "flagged packets at v0 after a cc=none flow" 0 "$(int_pstat v0 int_bad)"
	rxecc testbed down
	rmmod rxe_cc

	# Three hops (chain: h0 -> s0 -> s1 -> s2 -> h3) into a shim with room
	# for two: the third is counted, not written, and the flow is whole.
	tb_load_cc cc=hpcc line_rate_mbps=150 hpcc_t_us="$CCI_T_US" int_hops=2
	sed -e '/^mark = /d' -e '/^tcd = /d' -e 's/^pfc = true/pfc = true\nint = "hpcc"/' \
		"$RXECC_TOP/testbed/topologies/chain.toml" >"$TEST_OUT/chain.toml"
	[ "$(grep -c '^int = "hpcc"' "$TEST_OUT/chain.toml")" = 3 ] || fail "cannot derive chain with INT"
	rxecc testbed up "$TEST_OUT/chain.toml" 2>"$TEST_OUT/up-chain.txt" || fail "testbed up chain: $(tail -3 "$TEST_OUT/up-chain.txt")"
	hpcc_flow chain 0 3 $n || fail "the flow h0 -> h3 failed: $(tail -1 "$TEST_OUT/chain-client.txt")"
	rxecc port stats >"$TEST_OUT/ports-chain.txt"
	acks=$(tb_cc_total acks)
	hops=$(tb_cc_total int_hops)
	info "three hops, room for two: $acks ACKs, $hops records, $(tb_cc_total int_overflow) hops without room"
	assert_eq "bytes acked on chain" $((n * 65536)) "$(tb_cc_total acked_bytes)"
	assert_eq "records in ACKs (two each)" $((2 * acks)) "$hops"
	assert_eq "hops without room (one per ACK)" "$acks" "$(tb_cc_total int_overflow)"
	assert_eq "overflows counted at h3's NIC" "$(tb_cc_total rx_packets)" "$(int_pstat v3 int_overflow)"
	assert_eq "records stamped at s1 for s0 -> s1" "$(tb_cc_total rx_packets)" "$(int_pstat x1_0 int_stamped)"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
}

# int_two_flows <tag> <messages>: h1 and h2 each SEND <messages> x 64 KB
# into h0 as one work request, both posted at one instant (flowgen, its
# connections set up before that instant), so that the two always overlap.
# (Two perftest clients, whose set-up under TCG takes 0.5 s to several,
# now and then ran one after the other: no ACK saw both flows.) Each
# host's records go to $TEST_OUT/<tag>-h<host>.csv.
int_two_flows() {
	printf '2\n1 0 3 100 %d 0\n2 0 3 100 %d 0\n' $(($2 * 65536)) $(($2 * 65536)) >"$TEST_OUT/$1-flows.txt"
	tb_flowgen "$TEST_OUT/$1" "$TEST_OUT/$1-flows.txt" send 0 1 2
}

# int_read_fields <tag>=<field>[,<field>...]...: for each tag, the BTH
# opcode and those INT fields of every packet with a shim in its capture
# (/tmp/<tag>.pcap): $TEST_OUT/int-<tag>.txt, and apart its opcodes
# (opcodes-<tag>.txt) and its fields (<tag>-fields.txt). One tshark read
# of the captures end to end (tshark takes 30 s to start under TCG); a
# packet's frame number says whose it was.
int_read_fields() {
	local spec tag f i n lo=0 cols all=() fields a=(-e frame.number -e infiniband.bth.opcode) files=()
	for spec in "$@"; do
		files+=("/tmp/${spec%%=*}.pcap")
		IFS=, read -ra fields <<<"${spec#*=}"
		for f in "${fields[@]}"; do [[ " ${all[*]} " == *" $f "* ]] || all+=("$f"); done
	done
	for f in "${all[@]}"; do a+=(-e "$f"); done
	mergecap -a -F pcap -w /tmp/int-all.pcap "${files[@]}" || return 1
	tshark -X lua_script:"$RXECC_TOP/tests/rxecc_int.lua" -r /tmp/int-all.pcap -Y rxecc_int -T fields "${a[@]}" \
		>"$TEST_OUT/int-all.txt" 2>>"$TEST_OUT/tshark-read.log" || return 1
	for spec in "$@"; do
		tag=${spec%%=*}
		n=$(capinfos -T -r -c "/tmp/$tag.pcap" | cut -f2)
		[[ $n =~ ^[0-9]+$ ]] || return 1
		# Column 2 is the opcode, column 3 + i the field all[i].
		cols=2
		IFS=, read -ra fields <<<"${spec#*=}"
		for f in "${fields[@]}"; do
			for i in "${!all[@]}"; do [ "${all[$i]}" = "$f" ] && cols+=" $((i + 3))"; done
		done
		awk -F '\t' -v OFS='\t' -v lo="$lo" -v hi=$((lo + n)) -v cols="$cols" '
			BEGIN {k = split(cols, c, " ")}
			$1 > lo && $1 <= hi {s = $c[1]; for (j = 2; j <= k; j++) s = s OFS $c[j]; print s}' \
			"$TEST_OUT/int-all.txt" >"$TEST_OUT/int-$tag.txt"
		cut -f1 "$TEST_OUT/int-$tag.txt" >"$TEST_OUT/opcodes-$tag.txt"
		cut -f2- "$TEST_OUT/int-$tag.txt" >"$TEST_OUT/$tag-fields.txt"
		lo=$((lo + n))
	done
}

# int_ack_run <cc> <tag>: the two-flow incast on dumbbell under <cc>, with
# the switch stamping for it and a capture at p1 (/tmp/<tag>.pcap), as
# h1's ACKs leave the switch (a capture at p0 would see them before p0's
# ingress stamps them); leaves the testbed up.
int_ack_run() {
	local n=40
	# shellcheck disable=SC2046 # the knobs are name=value words
	tb_load_cc $(cci_knobs "$1")
	cci_topology "$1" "$TEST_OUT/$2.toml" || fail "cannot derive the topology"
	rxecc testbed up "$TEST_OUT/$2.toml" 2>"$TEST_OUT/up-$2.txt" || fail "testbed up: $(tail -3 "$TEST_OUT/up-$2.txt")"
	rxecc capture start --dev p1 --pcap "/tmp/$2.pcap" --log "$TEST_OUT/capture-$2.log"
	int_two_flows "$2" $n || fail "$1: the flows into h0 failed: $(tail -qn1 "$TEST_OUT/$2"-h?.log)"
	# Both posted at the epoch: the later start is before the earlier end.
	local span
	span=$(awk -F, 'FNR > 1 && $10 == "ok" {n++; if ($8 > s) s = $8; if (!e || $9 < e) e = $9}
		END {print (n == 2 ? int((e - s) / 1e6) : -1)}' "$TEST_OUT/$2-h1.csv" "$TEST_OUT/$2-h2.csv")
	info "$1: the two flows ran together for $span ms"
	assert_gt "$1: ms both flows ran (the later start to the earlier end)" "$span" 0
	rxecc capture stop "/tmp/$2.pcap" >&2
	cp "/tmp/$2.pcap" "$TEST_OUT/$2.pcap"
	rxecc port stats >"$TEST_OUT/ports-$2.txt"
	cp /sys/kernel/debug/rxe_cc/totals "$TEST_OUT/rxe_cc-totals-$2.txt"
	assert_eq "$1: bytes acked" $((2 * n * 65536)) "$(tb_cc_total acked_bytes)"
	tb_wire_check "/tmp/$2.pcap" "$TEST_OUT/wire-$2.json" >"$TEST_OUT/wire-$2.txt" || { cat "$TEST_OUT/wire-$2.txt" >&2; fail "$1: ICRC check"; }
	info "$1: capture at p1: $(cat "$TEST_OUT/wire-$2.txt")"
	assert_eq "$1: drops at the bottleneck" 0 "$(int_pstat p0 drops)"
	assert_eq "$1: flagged packets not ours at p0" 0 "$(int_pstat p0 int_bad)"
	assert_eq "$1: records stamped into data at v0" 0 "$(int_pstat v0 int_stamped)"
}

# int_shims_on_acks_only <cc> <tag>: FNCC and ICC stamp ACKs only: every
# shim in the capture is on an ACK (opcode 17), none on data.
int_shims_on_acks_only() {
	assert_gt "$1: ACKs with a shim in the capture" "$(awk '$1 == 17' "$TEST_OUT/opcodes-$2.txt" | wc -l)" 0
	assert_eq "$1: other packets with a shim" 0 "$(awk '$1 != 17' "$TEST_OUT/opcodes-$2.txt" | wc -l)"
}

# FNCC and ICC: INT rides on the ACKs, stamped on the way back with the
# state of the port the data left by (FNCC a record per hop and the
# receiver's flow count N, ICC one feedback record), and never on data.
#@ suite debug_timeout=5400
test_int_on_acks() {
	local acks stamped quiet fncc_peak icc_peak
	tb_load_rxe patched

	# FNCC, two flows into h0: one hop (p0) per ACK, N = 2 while both run.
	int_ack_run fncc fncc
	acks=$(tb_cc_total acks)
	fncc_peak=$(int_pstat p0 max_qlen_bytes)
	stamped=$(int_pstat p0 int_stamped)
	info "fncc: $acks ACKs, $(tb_cc_total int_acks) with INT, $(tb_cc_total int_hops) records," \
		"$stamped stamped at p0; port peak $fncc_peak B; $(tb_cc_total lhcs_jumps) LHCS jumps"
	assert_eq "fncc: ACKs with INT" "$acks" "$(tb_cc_total int_acks)"
	assert_eq "fncc: records (the path's one switch port each)" "$acks" "$(tb_cc_total int_hops)"
	assert_eq "fncc: ACKs stamped at p0" "$acks" "$stamped"
	rxecc testbed down
	rmmod rxe_cc

	# ICC: p0 feeds back on each ACK unless its queue drains at low
	# utilisation; the record holds p0's state and its flow count.
	int_ack_run icc icc
	acks=$(tb_cc_total acks)
	icc_peak=$(int_pstat p0 max_qlen_bytes)
	stamped=$(int_pstat p0 int_stamped)
	quiet=$(int_pstat p0 int_quiet)
	info "icc: $acks ACKs, $(tb_cc_total int_acks) with a shim, $(tb_cc_total int_hops) with feedback;" \
		"p0: $stamped fed back, $quiet quiet; port peak $icc_peak B"
	assert_eq "icc: ACKs with a shim" "$acks" "$(tb_cc_total int_acks)"
	assert_eq "icc: ACKs p0 fed back or left quiet" "$acks" $((stamped + quiet))
	assert_eq "icc: feedback records the senders got" "$stamped" "$(tb_cc_total int_hops)"
	assert_gt "icc: feedback records" "$stamped" 0
	rxecc testbed down
	rmmod rxe_cc

	# What the senders got, from both captures.
	int_read_fields fncc=rxecc_int.nhops,rxecc_int.n_flows,rxecc_int.hop.qlen \
		icc=rxecc_int.nhops,rxecc_int.hop.qlen,rxecc_int.icc.flows,rxecc_int.icc.lu_permille ||
		fail "tshark could not read the captures: $(tail -3 "$TEST_OUT/tshark-read.log")"
	info "fncc: N seen: $(awk '{print $2}' "$TEST_OUT/fncc-fields.txt" | sort -n | uniq -c | tr '\n' ' ');" \
		"qLen max $(awk '$3 > m {m = $3} END {print m + 0}' "$TEST_OUT/fncc-fields.txt") B, port peak $fncc_peak B"
	int_shims_on_acks_only fncc fncc
	assert_eq "fncc: shims in the capture with other than one record" 0 "$(awk '$1 != 1' "$TEST_OUT/fncc-fields.txt" | wc -l)"
	assert_eq "fncc: ACKs whose N is not 1 or 2" 0 "$(awk '$2 != 1 && $2 != 2' "$TEST_OUT/fncc-fields.txt" | wc -l)"
	assert_gt "fncc: ACKs with N = 2 (both flows running)" "$(awk '$2 == 2' "$TEST_OUT/fncc-fields.txt" | wc -l)" 0
	assert_eq "fncc: records with qLen above the port's peak" 0 \
		"$(awk -v p="$fncc_peak" '$3 > p' "$TEST_OUT/fncc-fields.txt" | wc -l)"
	info "icc: flows seen: $(awk '$1 == 1 {print $3}' "$TEST_OUT/icc-fields.txt" | sort -n | uniq -c | tr '\n' ' ');" \
		"qLen max $(awk '$1 == 1 && $2 > m {m = $2} END {print m + 0}' "$TEST_OUT/icc-fields.txt") B, port peak $icc_peak B"
	int_shims_on_acks_only icc icc
	assert_eq "icc: shims with more than one record" 0 "$(awk '$1 > 1' "$TEST_OUT/icc-fields.txt" | wc -l)"
	assert_gt "icc: records counting 2 flows (both running)" "$(awk '$1 == 1 && $3 == 2' "$TEST_OUT/icc-fields.txt" | wc -l)" 0
	assert_eq "icc: records counting other than 1 or 2 flows" 0 "$(awk '$1 == 1 && $3 != 1 && $3 != 2' "$TEST_OUT/icc-fields.txt" | wc -l)"
	assert_eq "icc: records with qLen above the port's peak" 0 \
		"$(awk -v p="$icc_peak" '$1 == 1 && $2 > p' "$TEST_OUT/icc-fields.txt" | wc -l)"

	# FNCC over three switches (chain: h0 -> s0 -> s1 -> s2 -> h3): three
	# records per ACK, the path's length.
	tb_load_cc cc=fncc line_rate_mbps=150 hpcc_t_us="$CCI_T_US"
	rxecc experiment topology "$RXECC_TOP/testbed/experiments/victim.toml" fncc >"$TEST_OUT/chain-fncc.toml" || fail "cannot derive chain with FNCC"
	rxecc testbed up "$TEST_OUT/chain-fncc.toml" 2>"$TEST_OUT/up-chain.txt" || fail "testbed up chain: $(tail -3 "$TEST_OUT/up-chain.txt")"
	hpcc_flow chain 0 3 30 || fail "the flow h0 -> h3 failed: $(tail -1 "$TEST_OUT/chain-client.txt")"
	rxecc port stats >"$TEST_OUT/ports-chain.txt"
	acks=$(tb_cc_total acks)
	info "fncc on chain: $acks ACKs, $(tb_cc_total int_hops) records, $(tb_cc_total int_overflow) hops without room"
	assert_eq "fncc chain: bytes acked" $((30 * 65536)) "$(tb_cc_total acked_bytes)"
	assert_eq "fncc chain: records (three per ACK)" $((3 * acks)) "$(tb_cc_total int_hops)"
	assert_eq "fncc chain: hops without room" 0 "$(tb_cc_total int_overflow)"
	rxecc testbed down
	rmmod rxe_cc
	rmmod rdma_rxe
}

# FNCC and HPCC with the congestion at the first hop of chain (tests/
# cc_hops.sh; make bench runs the middle and last hops too and quotes the
# queues): both keep the queue where the file puts it below no CC's, and
# every ACK carries one record per hop of the three-switch path.
#@ suite debug=skip
test_fncc_hops() {
	# stdout apart from table.txt, which rxecc run writes itself.
	cch_run first "$TEST_OUT" >"$TEST_OUT/stdout.txt" 2>"$TEST_OUT/run.txt" \
		|| fail "rxecc run: $(grep -v '^rxecc: ' "$TEST_OUT/run.txt" | tail -3)"
	cat "$TEST_OUT/table.txt" >&2
	local cc top totals port cap senders
	port=$(cch_get first report.bottleneck)
	cap=$(cch_get first report.capacity_mbps)
	senders=$(cch_get first workload.senders | wc -w)
	for cc in none hpcc fncc; do
		assert_eq "$cc: flows" "$senders" "$(rj "$cc" flows)"
		assert_eq "$cc: drops (PFC is on)" 0 "$(rj "$cc" drops)"
		# The slow port is the one that queues: its peak is the highest of
		# every switch port's (p<host>, x<switch>_<switch>; not the hosts'
		# own NIC ports, v<host>, where the sender's queue waits).
		top=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
			$c["dev"] ~ /^[px][0-9]/ && $c["max_qlen_bytes"] > m[$c["dev"]] {m[$c["dev"]] = $c["max_qlen_bytes"]}
			END {for (d in m) if (m[d] > best) {best = m[d]; top = d}; print top}' "$TEST_OUT/$cc/rec/ports.csv")
		assert_eq "$cc: the port with the highest queue" "$port" "$top"
	done
	assert_gt "none: pauses" "$(rj none pauses)" 0
	for cc in hpcc fncc; do
		totals=$TEST_OUT/$cc/rxe_cc-totals.txt
		assert_eq "$cc: INT records (three hops per ACK)" \
			$((3 * $(awk '$1 == "acks" {print $2}' "$totals"))) "$(awk '$1 == "int_hops" {print $2}' "$totals")"
		assert_eq "$cc: hops without room" 0 "$(awk '$1 == "int_overflow" {print $2}' "$totals")"
		assert_gt "$cc: mean queue below none's" "$(rj none mean_queue_bytes)" "$(rj "$cc" mean_queue_bytes)"
		assert_gt "$cc: pauses below none's" "$(rj none pauses)" "$(rj "$cc" pauses)"
		assert_gt "$cc: throughput above half the bottleneck" "$(rj "$cc" throughput_mbps)" $((cap / 2))
	done
	info "first hop $port, mean/peak queue B: none $(rj none mean_queue_bytes)/$(rj none peak_queue_bytes)," \
		"hpcc $(rj hpcc mean_queue_bytes)/$(rj hpcc peak_queue_bytes), fncc $(rj fncc mean_queue_bytes)/$(rj fncc peak_queue_bytes)"
	# FNCC's Fig. 13a is judged on its scale model (paper/fncc-fig13-first.toml,
	# make paper or make bench), not on this fixed-rate chain.
}
