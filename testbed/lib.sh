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
