# Sourced inside the guest by testbed/guest.sh: paths and mounts every
# command there can rely on.
RXECC_TOP=$(pwd)
KDIR=$(cat "$RXECC_TOP/build/kdir")
RESULTS=${RESULTS:-$RXECC_TOP/build/results}
export RXECC_TOP KDIR RESULTS
export PATH="$RXECC_TOP/userspace/target/release:$KDIR/tools/bpf/bpftool:$PATH:/usr/sbin:/sbin"
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
