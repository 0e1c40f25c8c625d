# The incast of test_vms (tests/run_vms.sh), run in each guest by
# testbed/vms.sh: every host but h0 sends one WRITE flow of VMS_ITERS x
# 64 KB to h0, all at once. Each guest records its own QPs and ports
# (rxecc record) and writes, into $VMS_OUT:
#   rec.<guest>/       its recording, on its own clock;
#   offset.<guest>     "offset_ns rtt_ns": h0's guest's clock minus its own,
#                      measured over the testbed network (tests/clock_probe.py),
#                      so that the recordings can be merged;
#   cc.<guest>         rxe_cc's totals after the flows;
#   ports.<guest>.json its ports' counters after the flows (rxecc port stats);
#   rxe.<guest>.txt    its rxe devices' counters;
#   client<i>.txt, server<i>.txt: perftest's outputs.

VMS_PORT_BASE=18600
VMS_CLOCK_PORT=18599
VMS_ITERS=${VMS_ITERS:-150}

vms_main() {
	local n=$VMS_NHOSTS h rc=0 g=${VMS_GUEST:-one} rec pids=() p clock=
	rec=$VMS_OUT/rec.$g
	rxecc record --out "$rec" --interval-ms 20 2>"$VMS_OUT/record.$g.txt" &
	local rec_pid=$!
	if vms_here h0; then
		ip netns exec h0 python3 "$RXECC_TOP/tests/clock_probe.py" serve "$(tb_ip 0)" $VMS_CLOCK_PORT 600 &
		clock=$!
		for ((h = 1; h < n; h++)); do
			tb_perftest server 0 --port $((VMS_PORT_BASE + h)) --out "$VMS_OUT/server$h.txt" -- \
				-s 65536 -n "$VMS_ITERS" || rc=1
		done
		echo "0 0" >"$VMS_OUT/offset.$g"
	fi
	vms_barrier servers || rc=1
	if ((rc == 0)); then
		for ((h = 1; h < n; h++)); do
			vms_here "h$h" || continue
			tb_perftest client "$h" 0 --port $((VMS_PORT_BASE + h)) --out "$VMS_OUT/client$h.txt" -- \
				-s 65536 -n "$VMS_ITERS" &
			pids+=($!)
		done
		# A flow that stalls fails the run in bounded time.
		(
			sleep "${VMS_FLOW_TIMEOUT_S:-300}"
			vms_log "flows still running after ${VMS_FLOW_TIMEOUT_S:-300} s: stopping them"
			# The stuck QPs' state, for docs/vms.md's known problem.
			grep -H . /sys/kernel/debug/rxe_cc/qps/*/stats >"$VMS_OUT/stuck.$g.txt" 2>&1
			grep -H . /sys/class/infiniband/rxe*/ports/1/hw_counters/* >>"$VMS_OUT/stuck.$g.txt" 2>/dev/null
			pkill -x ib_write_bw
		) &
		local dog=$!
		for p in "${pids[@]}"; do wait "$p" || { rc=1; vms_log "a client failed"; }; done
		kill "$dog" 2>/dev/null
	fi
	vms_log "flows done (rc $rc)"
	# After the flows, so that the probes do not disturb them: this
	# guest's clock against h0's, from its first host.
	if ! vms_here h0; then
		for ((h = 1; h < n; h++)); do
			vms_here "h$h" || continue
			ip netns exec "h$h" python3 "$RXECC_TOP/tests/clock_probe.py" probe "$(tb_ip 0)" $VMS_CLOCK_PORT 50 \
				>"$VMS_OUT/offset.$g" || rc=1
			break
		done
	fi
	vms_barrier flows || rc=1
	kill -INT "$rec_pid" 2>/dev/null
	wait "$rec_pid" || { rc=1; vms_log "rxecc record failed: $(tail -2 "$VMS_OUT/record.$g.txt")"; }
	if vms_here h0; then
		kill "$clock" 2>/dev/null
		# The servers run on their own (rxecc perftest server): the clients'
		# status is the flows'. A client that failed leaves its server
		# waiting: a few seconds for the rest, then they go.
		for ((p = 0; p < 50; p++)); do pgrep -x ib_write_bw >/dev/null || break; sleep 0.2; done
		pkill -x ib_write_bw
	fi
	cat /sys/kernel/debug/rxe_cc/totals >"$VMS_OUT/cc.$g" 2>/dev/null
	rxecc port stats --json >"$VMS_OUT/ports.$g.json" 2>&1 || rc=1
	grep -H . /sys/class/infiniband/rxe*/ports/1/hw_counters/* >"$VMS_OUT/rxe.$g.txt" 2>/dev/null
	return $rc
}
