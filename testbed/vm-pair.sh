#!/usr/bin/env bash
# A first step towards a testbed of several guests (issue 14), kept as a
# measurement: two one-vCPU guests of the testbed kernel, each with one NIC
# on a QEMU "dgram" link (UDP datagrams between two ports on 127.0.0.1: no
# bridge, tap or host module), patched rdma_rxe on each, and one
# ib_write_bw across. Prints the link's ping RTT and the WRITE rate.
#   testbed/vm-pair.sh [messages]
# Results in $RESULTS/vm-pair (default build/results/vm-pair).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"
kdir=$(cat "$top/build/kdir" 2>/dev/null) || die "no kernel yet: run 'make' first"
RESULTS=${RESULTS:-$top/build/results}
out=$RESULTS/vm-pair
iters=${1:-300}
rm -rf "$out" && mkdir -p "$out"

# What each guest runs: address its NIC, wait for the peer, then serve
# (guest 0) or send (guest 1).
for i in 0 1; do
	cat >"$out/cmd$i.sh" <<GUEST
cd '$top' && RESULTS='$RESULTS' && . testbed/guest-env.sh || exit 99
. testbed/netns.sh
peer=10.88.0.$((2 - i))
{
	dev=\$(ip -br link | awk '\$1 != "lo" {print \$1; exit}')
	ip link set "\$dev" mtu 9000 up
	ip addr add 10.88.0.$((i + 1))/24 dev "\$dev"
	for k in \$(seq 60); do ping -c1 -W1 \$peer >/dev/null 2>&1 && break; sleep 1; done
	ping -c 20 -i 0.2 \$peer | tail -1
	tb_load_rxe patched
	rdma link add rxe$i type rxe netdev "\$dev"
	if [ $i = 0 ]; then
		timeout 300 ib_write_bw -d rxe0 -x 1 -F --report_gbits -s 65536 -n $iters >'$out/server.txt' 2>&1
	else
		sleep 5
		timeout 300 ib_write_bw -d rxe1 -x 1 -F --report_gbits -s 65536 -n $iters 10.88.0.1 >'$out/client.txt' 2>&1
	fi
	echo "ib_write_bw rc \$?"
	dmesg | grep -E 'WARNING|BUG|Oops|lockdep' || true
} >'$out/guest$i.log' 2>&1
GUEST
done

pids=()
for i in 0 1; do
	timeout 600 vng --run "$kdir" --disable-kvm --cpus 1 --memory 1G --append tsc=reliable --rwdir "$RESULTS" \
		--qemu-opts="-netdev dgram,id=tb0,local.type=inet,local.host=127.0.0.1,local.port=$((40000 + i)),remote.type=inet,remote.host=127.0.0.1,remote.port=$((40001 - i)) -device virtio-net-pci,netdev=tb0,mac=52:54:00:88:00:0$i" \
		--exec "bash $out/cmd$i.sh" >"$out/console$i.log" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for i in 0 1; do
	echo "guest $i: $(grep rtt "$out/guest$i.log" || echo 'no ping reply'); $(grep 'ib_write_bw rc' "$out/guest$i.log" || echo 'no ib_write_bw')"
done
echo "WRITE h1 -> h0: $(awk '/BW average/ {h = 1; next} h && NF >= 5 {print $4 " Gb/s"; exit}' "$out/client.txt" 2>/dev/null || echo none)"
exit "$rc"
