#!/usr/bin/env bash
# Build bpftool (and its libbpf) from the testbed kernel's own tree:
# Debian's bpftool 7.1 / libbpf 1.1 are too old for struct_ops links.
#   testbed/bpftool.sh <kernel build dir>
# The result is <kdir>/tools/bpf/bpftool/bpftool; the guest puts it on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
kdir=${1:?usage: bpftool.sh KDIR}
key=$(sha256sum <"$here/bpftool.sh" | cut -c1-12)
marker=$kdir/tools/bpf/bpftool/.rxecc-built-$key
[ -f "$marker" ] && [ -x "$kdir/tools/bpf/bpftool/bpftool" ] && exit 0
progress "bpftool: building from the kernel tree"
log=$kdir/bpftool-build.log
# SKIP_LLVM: the JIT disassembler needs LLVM's C headers, and we never
# disassemble JITed programs.
if ! make -C "$kdir/tools/bpf/bpftool" LLVM=-19 SKIP_LLVM=1 -j"$(nproc)" >"$log" 2>&1; then
	grep -E 'error' "$log" | tail -10 >&2
	die "bpftool build failed (see $log)"
fi
"$kdir/tools/bpf/bpftool/bpftool" version >/dev/null || die "the built bpftool does not run"
rm -f "$kdir"/tools/bpf/bpftool/.rxecc-built-*
touch "$marker"
