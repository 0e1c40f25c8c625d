#!/usr/bin/env bash
# Fetch Debian's linux-source-7.2 and build the testbed kernel, then bpftool
# (testbed/bpftool.sh) from the same tree.
#
# The build lives in $RXECC_CACHE/kernel/<source version>-<config hash>/ and is
# reused while neither the source version nor this script's inputs change.
# A build is only marked done once bzImage and modules both exist, so an
# interrupted build is redone, never reused.
#
# RXECC_KERNEL_VARIANT=debug adds testbed/kernel-debug.config (lockdep,
# KASAN, kmemleak) and builds into a directory of its own.
#
# Prints the build directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PKG=linux-source-7.2
apt_dir=$RXECC_CACHE/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/debs"

# Ask trixie-backports for the current version without touching the system's
# apt configuration: a one-suite sources file and a private lists directory.
cat >"$apt_dir/trixie-backports.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
APT_OPTS=(-o "Dir::Etc::SourceList=$apt_dir/trixie-backports.sources"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache::Archives=$apt_dir/debs"
	-o APT::Architecture=amd64 -o APT::Sandbox::User=root)

ver=
if apt-get "${APT_OPTS[@]}" -qq update >/dev/null 2>&1; then
	ver=$(apt-cache "${APT_OPTS[@]}" policy "$PKG" 2>/dev/null | awk '/Candidate:/ {print $2}')
	[ "$ver" = "(none)" ] && ver=
fi
if [ -z "$ver" ]; then
	# Offline: fall back to the newest source we already have.
	ver=$(ls "$RXECC_CACHE/src" 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$ver" ] || die "cannot reach trixie-backports to find $PKG, and no cached source exists"
	progress "kernel: trixie-backports unreachable, using cached source $ver"
fi

src=$RXECC_CACHE/src/$ver
if [ ! -f "$src/.rxecc-unpacked" ]; then
	progress "kernel: fetching $PKG $ver"
	(cd "$apt_dir/debs" && apt-get "${APT_OPTS[@]}" -qq download "$PKG=$ver" >/dev/null)
	deb=$(ls "$apt_dir/debs/${PKG}_"*"$(printf %s "$ver" | sed 's/^[0-9]*://')"*_all.deb | head -1)
	rm -rf "$src" && mkdir -p "$src"
	progress "kernel: unpacking $(basename "$deb")"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*/linux-source-7.2.tar.xz' \
		| tar -xJ -C "$src" --strip-components=1
	touch "$src/.rxecc-unpacked"
	rm -f "$deb"
fi

# The key covers everything that shapes the build.
fragments=("$here/kernel.config")
variant=${RXECC_KERNEL_VARIANT:-}
case $variant in
"") ;;
debug) fragments+=("$here/kernel-debug.config") ;;
*) die "RXECC_KERNEL_VARIANT: 'debug' or empty, not '$variant'" ;;
esac
key=$(cat "${fragments[@]}" "$here/kernel.sh" | sha256sum | cut -c1-12)
kdir=$RXECC_CACHE/kernel/$ver-$key${variant:+-$variant}
MAKE_ARGS=(LLVM=-19 RUSTC="$KRUSTC" BINDGEN=bindgen -j"$(nproc)")

if [ ! -f "$kdir/.rxecc-built" ]; then
	rm -rf "$kdir" && mkdir -p "$kdir"
	progress "kernel: copying source $ver to $kdir"
	cp -a "$src/." "$kdir/"
	cd "$kdir"
	log=$kdir/build.log
	progress "kernel: configuring (vng --kconfig + ${fragments[*]##*/})"
	vng --kconfig >"$log" 2>&1 || { tail -20 "$log"; die "vng --kconfig failed"; }
	scripts/kconfig/merge_config.sh -m .config "${fragments[@]}" >>"$log" 2>&1
	make "${MAKE_ARGS[@]}" olddefconfig >>"$log" 2>&1
	# merge_config silently drops options whose dependencies are unmet;
	# check the ones the project cannot work without.
	for opt in RUST RDMA_RXE DEBUG_INFO_BTF NET_SCH_BPF VETH BRIDGE NET_NS \
		NET_SCH_INGRESS NET_SCH_FQ DEBUG_FS CONFIGFS_FS HIGH_RES_TIMERS BPF_SYSCALL; do
		grep -qE "^CONFIG_$opt=(y|m)" .config || {
			make "${MAKE_ARGS[@]}" rustavailable >>"$log" 2>&1 || true
			tail -30 "$log"
			die "CONFIG_$opt did not survive olddefconfig (see $log)"
		}
	done
	progress "kernel: building bzImage and modules on $(nproc) cores (about 20 minutes)"
	start=$(date +%s)
	if ! make "${MAKE_ARGS[@]}" bzImage modules >>"$log" 2>&1; then
		grep -E 'error|Error' "$log" | tail -20
		die "kernel build failed (see $log)"
	fi
	echo "$(( $(date +%s) - start ))" >"$kdir/.rxecc-build-seconds"
	touch "$kdir/.rxecc-built"
	progress "kernel: built in $(cat "$kdir/.rxecc-build-seconds") s"
fi
bash "$here/bpftool.sh" "$kdir"
ln -sfn "$kdir" "$RXECC_CACHE/kernel/current${variant:+-$variant}"
echo "$kdir"
