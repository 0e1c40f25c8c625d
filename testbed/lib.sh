# Shared helpers for the testbed scripts. Sourced, not run.

# Where expensive outputs live: outside the repo, shared by every clone.
RXECC_CACHE=${RXECC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxe-cc}
export RXECC_CACHE

# The Debian rustc-web toolchain has the core sources the kernel needs; the
# rustup toolchain first in PATH does not.
KRUSTC=/usr/bin/rustc
export KRUSTC
export PATH="$HOME/.cargo/bin:$HOME/.local/bin:$PATH:/usr/sbin:/sbin:$RXECC_CACHE/bin"
[ -d /root/.pyenv/shims ] && PATH="$PATH:/root/.pyenv/shims"

progress() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Booting testbed guests, one (testbed/guest.sh) or several
# (testbed/vms.sh): the same kernel, clock, command script and vng line.

# The virtual clock (docs/architecture.md, "The guest's clock"): QEMU
# icount, one instruction per nanosecond of guest time while the guest
# runs, the host's pace while it idles (sleep=on), never slowed to the
# host's (align=off). Single-threaded TCG: one vCPU per guest.
# shellcheck disable=SC2034 # testbed/guest.sh's and vms.sh's
TB_ICOUNT_OPTS="-icount shift=0,sleep=on,align=off"

# tb_guest_script <file> <top> <settings> <body>: the command a guest
# boots into: the marker that says it started (tb_guest_started), the
# tree, the settings passed in (export lines), the guest's environment
# (testbed/guest-env.sh), then <body>.
tb_guest_script() {
	cat >"$1" <<SCRIPT
echo @@rxecc-guest-command@@
cd '$2' || exit 99
$3
. testbed/guest-env.sh || exit 99
$4
SCRIPT
}

# tb_guest_started <console log>: whether the guest got as far as its
# command (under TCG a boot now and then dies before it: both launchers
# boot again).
tb_guest_started() {
	grep -qE $'^@@rxecc-guest-command@@\r?$' "$1"
}

# tb_vng_cmd <kdir> <vCPUs> <memory> <append> <QEMU options> <rwdir>
# <script>: the vng command line that boots <kdir>'s kernel under TCG
# (KVM hangs here: docs/architecture.md) and runs <script>, into the
# array TB_VNG, for the caller to run under `timeout` (and `setsid`).
tb_vng_cmd() {
	TB_VNG=(vng --run "$1" --disable-kvm --force-9p --cpus "$2" --memory "$3" --append "$4")
	# One word with '=': vng's argparse takes a separate value that
	# starts with '-' (QEMU's options do) for an option of its own.
	[ -z "$5" ] || TB_VNG+=("--qemu-opts=$5")
	TB_VNG+=(--verbose --rwdir "$6" --exec "bash $7")
}
