#!/usr/bin/env bash
# Build the patched rdma_rxe.ko out of tree.
#   rxe_glue/build.sh <kernel build dir> <output dir> [fix to leave out]
# Copies drivers/infiniband/sw/rxe from the kernel tree into <output dir>,
# applies three series in order, patches/fixes/*.patch (fixes to stock
# rxe, each for its own), patches/features/*.patch (a drop counter, a
# GID table length parameter and the requester's in-flight limits as
# parameters, which the testbed uses) and patches/cc/*.patch (the
# CC hook ABI; its 0000 is the cover letter), and builds it with that
# kernel's Kbuild. The copy is redone whenever the source or a patch
# changes. A third argument, the number of one fix (e.g. 0001), leaves
# that fix out: the tests compare rxe with and without it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KDIR=${1:?usage: build.sh KDIR OUT [FIX]}
OUT=${2:?usage: build.sh KDIR OUT [FIX]}
WITHOUT=${3:-}
src=$KDIR/drivers/infiniband/sw/rxe
[ -f "$src/rxe.c" ] || { echo "error: $src has no rdma_rxe sources" >&2; exit 1; }

all=("$here"/patches/fixes/*.patch "$here"/patches/features/*.patch "$here"/patches/cc/*.patch)
series=()
for p in "${all[@]}"; do
	[[ $p == */0000-cover-letter.patch ]] && continue
	[ -n "$WITHOUT" ] && [[ $p == "$here/patches/fixes/$WITHOUT-"* ]] && continue
	series+=("$p")
done
[ -z "$WITHOUT" ] || [ "$(ls "$here/patches/fixes/$WITHOUT-"*.patch 2>/dev/null | wc -l)" = 1 ] ||
	{ echo "error: no fix $WITHOUT in $here/patches/fixes" >&2; exit 1; }
stamp=$(cat "$src"/*.[ch] "$src/Makefile" "${series[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$OUT" && mkdir -p "$OUT"
	cp "$src"/*.[ch] "$src/Makefile" "$OUT/"
	for p in "${series[@]}"; do
		# Paths in the series are a/drivers/infiniband/sw/rxe/<file>.
		patch -s -p5 --batch --forward -d "$OUT" <"$p" >"$OUT/.patch.log" 2>&1 \
			|| { cat "$OUT/.patch.log" >&2; echo "error: $(basename "$p") does not apply to $src" >&2; exit 1; }
	done
	# The in-tree Makefile is a plain kbuild file.
	mv "$OUT/Makefile" "$OUT/Kbuild"
	echo "$stamp" >"$OUT/.stamp"
fi
make -s -C "$KDIR" M="$OUT" LLVM=-19 CONFIG_RDMA_RXE=m modules
