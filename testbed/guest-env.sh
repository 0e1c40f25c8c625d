# Sourced inside the guest by testbed/guest.sh: paths and mounts every
# command there can rely on.
RXECC_TOP=$(pwd)
KDIR=$(cat "${RXECC_KDIR_FILE:-$RXECC_TOP/build/kdir}")
RESULTS=${RESULTS:-$RXECC_TOP/build/results}
# testbed/guest.sh passes its clock on; testbed/vms.sh's guests run on the
# host's (multi-threaded TCG).
RXECC_CLOCK=${RXECC_CLOCK:-host}
export RXECC_TOP KDIR RESULTS RXECC_CLOCK
export PATH="$RXECC_TOP/userspace/target/release:$KDIR/tools/bpf/bpftool:$PATH:/usr/sbin:/sbin"
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
# The emulated switch runs in softirq context (qdisc watchdogs, packet
# forwarding). Under load the kernel hands softirqs to ksoftirqd, which then
# competes with rxe's kworkers as an equal, and the ports' timers slip by
# milliseconds. Give ksoftirqd the highest CFS weight.
for p in $(pgrep ksoftirqd); do renice -n -20 -p "$p" >/dev/null; done
# Under TCG, live-patching a static key in hot kernel text can race a running
# vCPU into "Oops: int3" (QEMU's cross-modifying code; see guest.sh). The
# tc ingress/egress hook keys and the classifier's key flip whenever the
# switch's first port comes up and its last goes away; an idle clsact on lo
# with one classic-BPF filter that matches nothing ("ret 0") holds them on
# for the whole boot, so they are patched once, here, before anything runs.
tc qdisc replace dev lo clsact 2>/dev/null &&
	tc filter replace dev lo ingress pref 1 bpf bytecode '1,6 0 0 0,' 2>/dev/null || true
