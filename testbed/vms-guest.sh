# Sourced inside each guest of a testbed of several (testbed/vms.sh), after
# guest-env.sh: brings this guest's part of the topology up, meets the
# other guests at barriers in the shared results directory, runs the
# experiment script's vms_main, and tears down.
#
# Set by vms.sh: VMS_OUT (shared directory), VMS_GUEST (this guest; empty:
# the whole topology in one guest), VMS_GUESTS (all guests' names),
# VMS_TOPO, VMS_NHOSTS (its hosts), VMS_NIC_MACS (PORT=MAC of each NIC
# this guest has), VMS_SCRIPT, VMS_CC_ARGS (rxe_cc's module parameters).

# The testbed helpers, and DMESG_BAD: the kernel reports that fail a test.
. "$RXECC_TOP/tests/lib.sh"

vms_log() { echo "[${VMS_GUEST:-one} $(awk '{print $1}' /proc/uptime)] $*" >&2; }

# vms_barrier NAME [TIMEOUT_S]: waits until every guest has reached NAME.
# Fails at once if a guest gave up (the abort file), or after TIMEOUT_S.
vms_barrier() {
	local name=$1 limit=${2:-${VMS_BARRIER_S:-600}} g n t0=$SECONDS
	touch "$VMS_OUT/barrier/$name.${VMS_GUEST:-one}"
	while :; do
		[ -e "$VMS_OUT/abort" ] && { vms_log "barrier $name: $(cat "$VMS_OUT/abort")"; return 1; }
		n=0
		for g in $VMS_GUESTS; do [ -e "$VMS_OUT/barrier/$name.$g" ] && n=$((n + 1)); done
		[ "$n" = "$(wc -w <<<"$VMS_GUESTS")" ] && return 0
		((SECONDS - t0 > limit)) && { vms_abort "barrier $name: $n guests of $(wc -w <<<"$VMS_GUESTS") after $limit s"; return 1; }
		sleep 0.2
	done
}

# vms_abort WHY: tells every guest to give up.
vms_abort() { [ -e "$VMS_OUT/abort" ] || echo "guest ${VMS_GUEST:-one}: $*" >"$VMS_OUT/abort"; vms_log "abort: $*"; }

# vms_here HOST: is host HOST (h<i>) in this guest?
vms_here() { [ -e "/run/netns/$1" ]; }

# vms_check_links: every host here reaches every other host of the
# topology (through its switch, across guests), within a minute.
vms_check_links() {
	local h i ip n=$1 k
	for ((h = 0; h < n; h++)); do
		vms_here "h$h" || continue
		for ((i = 0; i < n; i++)); do
			[ "$i" = "$h" ] && continue
			ip=$(tb_ip "$i")
			for ((k = 0; k < 60; k++)); do
				ip netns exec "h$h" ping -c1 -W1 -q "$ip" >/dev/null 2>&1 && break
			done
			((k < 60)) || { vms_abort "h$h cannot reach $ip"; return 1; }
		done
	done
}

# The whole run in this guest; its status is the guest's.
vms_guest_run() {
	local rc=0 pm port mac name nics=()
	mkdir -p "$VMS_OUT/barrier"
	# As on real machines (docs/vms.md): each link to another guest is a
	# NIC, named to rxecc by --nic PORT=DEV; here its name is found by the
	# MAC vms.sh gave it.
	for pm in ${VMS_NIC_MACS:-}; do
		port=${pm%%=*} mac=${pm#*=}
		name=$(ip -br link | awk -v m="$mac" 'tolower($3) == m {print $1; exit}')
		[ -n "$name" ] || { vms_abort "no NIC with MAC $mac (for $port)"; return 1; }
		nics+=(--nic "$port=$name")
	done
	vms_log "loading modules; rxecc testbed up $VMS_TOPO${VMS_GUEST:+ --guest $VMS_GUEST} ${nics[*]}"
	{ tb_load_rxe patched && tb_load_cc ${VMS_CC_ARGS:-cc=none} &&
		rxecc testbed up "$VMS_TOPO" ${VMS_GUEST:+--guest "$VMS_GUEST"} "${nics[@]}"; } ||
		{ vms_abort "bring-up failed"; return 1; }
	vms_barrier up || return 1
	vms_check_links "$VMS_NHOSTS" || return 1
	vms_log "every host reaches every other"
	vms_barrier linked || return 1
	# shellcheck source=/dev/null
	. "$VMS_SCRIPT"
	vms_main || { rc=1; vms_abort "the experiment failed"; }
	# Nobody tears a switch down under another guest's traffic.
	vms_barrier finished || rc=1
	dmesg >"$VMS_OUT/dmesg.${VMS_GUEST:-one}.txt"
	if grep -Eq "$DMESG_BAD" "$VMS_OUT/dmesg.${VMS_GUEST:-one}.txt"; then
		vms_log "FAIL: kernel warning in dmesg:"
		grep -E -A5 "$DMESG_BAD" "$VMS_OUT/dmesg.${VMS_GUEST:-one}.txt" | head -20 >&2
		rc=1
	fi
	rxecc testbed down || rc=1
	rxecc modules unload 2>/dev/null
	return $rc
}
