#!/usr/bin/env bash
# Install everything rxe-cc needs on a Debian 12 host: apt packages, pip and
# cargo tools. Idempotent and quiet: each step checks before it acts and prints
# one progress line when it has real work to do.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

APT_PKGS=(
	# kernel toolchain (LLVM=-19 and the Debian rustc; see docs/architecture.md)
	clang-19 lld-19 llvm-19 libclang-19-dev rustc-web rust-web-src
	# cargo and clippy for that rustc: a stock Debian 12 has no rustup (a
	# rustup toolchain, where there is one, stays first in PATH)
	cargo-web rust-web-clippy
	# virtme-ng goes into a venv: Debian's Python refuses pip installs
	# into the system (PEP 668)
	python3-venv
	# make test's lint (rustfmt-web: the rustc-web toolchain's rustfmt)
	shellcheck rustfmt-web
	bc flex bison libelf-dev libssl-dev zlib1g-dev libcap-dev cpio kmod
	dwarves rsync xz-utils pkg-config make git patch
	# guest and testbed
	qemu-system-x86 rdma-core ibverbs-utils perftest iproute2 bpftool
	libbpf-dev iputils-ping procps tshark
	# the tests' and the bench's JSON (rxecc's outputs, measured rows)
	jq
	# flowgen's headers (verbs and the RDMA connection manager)
	libibverbs-dev librdmacm-dev
	# rdma-core's Python bindings, for tests/qp_churn.py
	python3-pyverbs
	# rxecc report's plots (plotters draws text with DejaVu Sans)
	fonts-dejavu-core
)

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	progress "apt: installing ${#missing[@]} packages (${missing[*]:0:6}...)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# --no-upgrade: nothing already on the system is upgraded.
	log=$(mktemp)
	apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}" >"$log" 2>&1 \
		|| { tail -20 "$log"; die "apt-get install failed"; }
	rm -f "$log"
fi

# virtme-ng from PyPI, in a venv of Debian's Python under the cache; its
# commands are linked into $RXECC_CACHE/bin, which lib.sh puts on PATH
# (the venv's own bin would put its python3 first too).
if ! command -v vng >/dev/null 2>&1; then
	venv=$RXECC_CACHE/venv
	progress "pip: installing virtme-ng into $venv"
	rm -rf "$venv"
	/usr/bin/python3 -m venv "$venv" || die "python3 -m venv failed"
	"$venv/bin/pip" install -q --disable-pip-version-check 'virtme-ng==1.42' \
		|| "$venv/bin/pip" install -q --disable-pip-version-check virtme-ng \
		|| die "pip install virtme-ng failed"
	mkdir -p "$RXECC_CACHE/bin"
	for c in "$venv"/bin/vng "$venv"/bin/virtme-*; do
		[ -e "$c" ] && ln -sfn "$c" "$RXECC_CACHE/bin/$(basename "$c")"
	done
	command -v vng >/dev/null || die "vng is not on PATH after installing it"
fi

if ! command -v bindgen >/dev/null 2>&1; then
	progress "cargo: installing bindgen-cli (about 2 minutes)"
	cargo install -q --locked bindgen-cli || die "cargo install bindgen-cli failed"
fi
