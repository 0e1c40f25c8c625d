# rxe-cc: congestion-control testbed for RDMA over lossless Ethernet.
#
#   make demo          boot the testbed and run the 4->1 incast
#   make test          lint (shellcheck, clippy) + cargo tests + guest integration tests
#   make mutants       the algorithms' tests against a list of wrong rules
#   make test-long     the guest suite at the volume that looks for what only repetition finds
#   make test-times    the last guest suite's seconds per test into docs/testing.md
#   make bench         stock against patched rdma_rxe, the port, the incasts and recipes (hours)
#   make repro         the demo's incast in 5 boots per guest clock: the spread
#   make guest CMD=..  run a command inside the testbed guest
#   make modules       build rdma_rxe (patched) and rxe_cc.ko
#   make KDIR=<tree>   build against your own Rust-enabled kernel build tree
#
# Everything installs what it needs itself (testbed/setup-host.sh); the
# kernel build is cached in ~/.cache/rxe-cc (override with RXECC_CACHE).

SHELL := /bin/bash
.DEFAULT_GOAL := all
TOP := $(CURDIR)
BUILD := $(TOP)/build
RESULTS ?= $(BUILD)/results
CARGO ?= cargo
export RESULTS

# An explicit KDIR skips the project's own kernel build and the host set-up
# (apt and friends): the tree's owner has the toolchain that built it.
KDIR ?=
ifeq ($(KDIR),)
# One kernel build of a variant at a time (make demo beside make test, or
# two goals of one make): a second kernel.sh waits for the first and finds
# its tree built, instead of removing the tree under it.
KERNEL_LOCK = "$${RXECC_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/rxe-cc}/kernel$${RXECC_KERNEL_VARIANT:+-$$RXECC_KERNEL_VARIANT}.lock"
KERNEL_SH = mkdir -p "$$(dirname $(KERNEL_LOCK))" && flock $(KERNEL_LOCK) bash $(TOP)/testbed/kernel.sh
KDIR_CMD = $$($(KERNEL_SH))
SETUP = setup
else
KDIR_CMD = $$(cd $(KDIR) && pwd) && bash $(TOP)/testbed/bpftool.sh "$$kdir" >&2
SETUP =
endif

# pahole 1.24 prints harmless lines (die__*, tag__recode_dwarf_type) for the
# Rust DWARF it skips while it generates a module's BTF
# (docs/architecture.md); everything else shows.
QUIET_PAHOLE = 2> >(grep -Ev '^(die__[a-z_]+|tag__recode_dwarf_type): ' >&2)

.PHONY: all setup kernel bpf-headers modules userspace guest test lint lint-kernel paper paper-name cargo-test guest-test vms-test vms test-debug test-long test-times bench repro demo mutants clean

all: modules userspace

setup:
	@bash testbed/setup-host.sh

# Resolve (and if needed build) the kernel once; later steps read build/kdir.
kernel: $(SETUP)
	@mkdir -p $(BUILD)/bin && kdir=$(KDIR_CMD) && [ -n "$$kdir" ] && echo "$$kdir" > $(BUILD)/kdir && \
	ln -sfn "$$kdir/tools/bpf/bpftool/bpftool" $(BUILD)/bin/bpftool

# The switch's CO-RE programs build against the testbed kernel's BTF.
bpf-headers: kernel
	@kdir=$$(cat $(BUILD)/kdir); mkdir -p $(BUILD)/bpf; \
	if [ ! -s $(BUILD)/bpf/vmlinux.h ] || [ "$$kdir/vmlinux" -nt $(BUILD)/bpf/vmlinux.h ] \
		|| [ "$$(cat $(BUILD)/bpf/kdir 2>/dev/null)" != "$$kdir" ]; then \
		"$$kdir/tools/bpf/bpftool/bpftool" btf dump file "$$kdir/vmlinux" format c > $(BUILD)/bpf/vmlinux.h.tmp && \
		mv $(BUILD)/bpf/vmlinux.h.tmp $(BUILD)/bpf/vmlinux.h && echo "$$kdir" > $(BUILD)/bpf/kdir; \
	fi

# What build.rs needs to compile switch-ebpf/: vmlinux.h and libbpf's headers.
CARGO_ENV = RXECC_BPF_INCLUDE="$(BUILD)/bpf:$$(cat $(BUILD)/kdir)/tools/bpf/bpftool/libbpf/include"

modules: kernel
	@kdir=$$(cat $(BUILD)/kdir); \
	echo "==> modules: patched rdma_rxe and rxe_cc.ko against $$kdir" >&2; \
	bash rxe_glue/build.sh "$$kdir" $(BUILD)/rxe $(QUIET_PAHOLE) && \
	bash rxe_glue/build.sh "$$kdir" $(BUILD)/rxe-without-fix 0001 $(QUIET_PAHOLE) && \
	$(MAKE) -s -C "$$kdir" M=$(TOP) LLVM=-19 RUSTC=/usr/bin/rustc \
		RXE_GLUE_DIR=$(BUILD)/rxe KBUILD_EXTRA_SYMBOLS=$(BUILD)/rxe/Module.symvers modules $(QUIET_PAHOLE)

userspace: bpf-headers
	@echo "==> userspace: cargo build (rxecc), flowgen" >&2
	@cd userspace && $(CARGO_ENV) $(CARGO) build -q --release
	@$(MAKE) -s userspace/target/release/flowgen

# The verbs traffic generator: C on librdmacm (userspace/flowgen/flowgen.c).
userspace/target/release/flowgen: userspace/flowgen/flowgen.c
	@mkdir -p $(@D) && cc -O2 -g -Wall -Wextra -Werror -o $@ $< -lrdmacm -libverbs

guest: all
	@bash testbed/guest.sh "$(CMD)"

cargo-test: bpf-headers
	@cd userspace && $(CARGO_ENV) $(CARGO) test -q --release

# The algorithms' wrong rules (userspace/cc-core/mutants/mutations.toml),
# each applied in turn: cargo test -p cc-core must fail under every one.
mutants:
	@python3 userspace/cc-core/mutants/run.py

guest-test: all
	@bash tests/run.sh

# Each test's larger volume (tb_volume, tests/lib.sh): more reloads, every
# algorithm through every verb. Not part of `make test`.
test-long: all
	@TB_VOLUME=long bash tests/run.sh $(TESTS)

test-times:
	@python3 tests/times_doc.py

# The testbed of several guests beside one guest, on the same incast
# (docs/vms.md), on the host; the last part of `make test`.
vms-test: all
	@bash tests/run_vms.sh

# A testbed of several guests by hand: TOPO's guests booted and linked,
# SCRIPT's vms_main run in each (docs/vms.md).
TOPO ?= incast2
SCRIPT ?= tests/vms_incast.sh
vms: all
	@bash testbed/vms.sh $(TOPO) $(SCRIPT)

# Static checks, first because they take seconds: every shell script, and
# clippy on the userspace crates (the algorithm core included) with
# warnings as errors.
SHELL_SCRIPTS = $(wildcard tests/*.sh tests/lib/*.sh testbed/*.sh rxe_glue/*.sh) .ci/run
# Every Rust file, the kernel module's and userspace's, formatted by the
# Debian toolchain's rustfmt (rustfmt-web, the rustc-web that builds the
# module), so that hosts with a rustup toolchain first in PATH agree.
RUSTFMT ?= $(firstword $(wildcard /usr/bin/rustfmt) rustfmt)
RUST_SOURCES = $(shell git ls-files '*.rs' 2>/dev/null || find rxe_cc userspace -name '*.rs' -not -path '*/target/*')
# C and BPF in the kernel's style (the kernel tree's checkpatch.pl). Ignored
# everywhere: the X-macros' unused arguments and list or statement bodies
# (knobs.h); in BPF, libbpf's conventions: `const volatile` globals set to
# 0, __attribute__((packed)) (vmlinux.h has no __packed), and `__kptr`,
# which checkpatch's spacing check reads as a type.
CHECKPATCH_FLAGS = --no-tree --quiet --no-summary --terse --show-types -f
CHECKPATCH_IGNORE = MACRO_ARG_UNUSED,TRAILING_SEMICOLON,COMPLEX_MACRO
CHECKPATCH_IGNORE_BPF = VOLATILE,GLOBAL_INITIALISERS,PREFER_DEFINED_ATTRIBUTE_MACRO,SPACING
KERNEL_C = rxe_cc/glue.c rxe_cc/glue.h rxe_cc/trace.c rxe_cc/rxe_cc_trace.h switch-ebpf/kmod/rxecc_switch.c
BPF_C = $(wildcard switch-ebpf/*.bpf.c switch-ebpf/*.h switch-ebpf/port/*.h)
lint: bpf-headers
	@echo "==> lint: shellcheck, test isolation, rustfmt, checkpatch and clippy" >&2
	@shellcheck -s bash -S warning $(SHELL_SCRIPTS)
	@python3 tests/check_isolation.py
	@$(RUSTFMT) --edition 2021 --check $(RUST_SOURCES) || \
		{ echo "lint: run $(RUSTFMT) --edition 2021 on the files above" >&2; exit 1; }
	@cp=$$(cat $(BUILD)/kdir)/scripts/checkpatch.pl && \
	perl "$$cp" $(CHECKPATCH_FLAGS) --ignore $(CHECKPATCH_IGNORE) $(KERNEL_C) && \
	perl "$$cp" $(CHECKPATCH_FLAGS) --ignore $(CHECKPATCH_IGNORE),$(CHECKPATCH_IGNORE_BPF) $(BPF_C)
	@cd userspace && $(CARGO_ENV) $(CARGO) clippy -q --release --all-targets -- -D warnings

# clippy on the kernel module's Rust, with the kernel's own lint set, by
# the clippy of the rustc that builds it (rust-web-clippy), warnings as
# errors. The next `make modules` (every guest target runs it) compiles
# the objects again with rustc: kbuild sees the command changed.
lint-kernel: modules
	@echo "==> lint: clippy on rxe_cc.ko's Rust" >&2
	@kdir=$$(cat $(BUILD)/kdir); \
	$(MAKE) -s -C "$$kdir" M=$(TOP) LLVM=-19 RUSTC=/usr/bin/rustc CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver \
		KRUSTFLAGS=-Dwarnings RXE_GLUE_DIR=$(BUILD)/rxe KBUILD_EXTRA_SYMBOLS=$(BUILD)/rxe/Module.symvers \
		modules $(QUIET_PAHOLE)

# test_vms in make test runs only the three-guest layout; `make vms-test`
# runs the one-guest incast beside it.
test: lint lint-kernel cargo-test guest-test
	@VMS_LAYOUTS=several bash tests/run_vms.sh

# The suite's functional tests on a second kernel with lockdep, KASAN and
# kmemleak (testbed/kernel-debug.config), cached beside the first; its
# modules are built from a copy of their sources in build/debug/src (Kbuild
# refuses an output directory, MO=, for a source tree that holds the normal
# build's objects). Not part of `make test`: the debug build adds about 25
# minutes. The whole functional set took about 10 hours there under the
# host clock and 20 under the virtual one, split between two guests as in
# `make test` (docs/testing.md), before each test's debug volume
# (tb_volume) cut its repetitions; hence each guest's 24-hour limit;
# TESTS="..." runs a batch.
DEBUG_BUILD := $(BUILD)/debug
DEBUG_SRC := $(DEBUG_BUILD)/src
test-debug: all
	@kdir=$$(export RXECC_KERNEL_VARIANT=debug && $(KERNEL_SH)) && [ -n "$$kdir" ] && \
	mkdir -p $(DEBUG_SRC) && echo "$$kdir" > $(DEBUG_BUILD)/kdir && \
	find Kbuild rxe_cc switch-ebpf/kmod \( -name Kbuild -o -name '*.rs' -o -name '*.[ch]' \) \
		! -name '*.mod.c' -exec cp -p --parents {} $(DEBUG_SRC)/ \; && \
	echo "==> modules for the debug kernel: $$kdir" >&2 && \
	bash rxe_glue/build.sh "$$kdir" $(DEBUG_BUILD)/rxe $(QUIET_PAHOLE) && \
	bash rxe_glue/build.sh "$$kdir" $(DEBUG_BUILD)/rxe-without-fix 0001 $(QUIET_PAHOLE) && \
	$(MAKE) -s -C "$$kdir" M=$(DEBUG_SRC) LLVM=-19 RUSTC=/usr/bin/rustc \
		RXE_GLUE_DIR=$(DEBUG_BUILD)/rxe KBUILD_EXTRA_SYMBOLS=$(DEBUG_BUILD)/rxe/Module.symvers modules $(QUIET_PAHOLE) && \
	RXECC_KDIR_FILE=$(DEBUG_BUILD)/kdir RXECC_RXE_KO=$(DEBUG_BUILD)/rxe/rdma_rxe.ko \
	RXECC_RXE_WITHOUT_FIX_KO=$(DEBUG_BUILD)/rxe-without-fix/rdma_rxe.ko \
	RXECC_CC_KO=$(DEBUG_SRC)/rxe_cc/rxe_cc.ko \
	RXECC_SWITCH_KO=$(DEBUG_SRC)/switch-ebpf/kmod/rxecc_switch.ko \
	RXECC_DEBUG_KERNEL=1 RESULTS=$(BUILD)/results-debug TB_TEST_TIMEOUT=$${TB_TEST_TIMEOUT:-2700} \
	GUEST_TIMEOUT=$${GUEST_TIMEOUT:-86400} bash tests/run.sh $(TESTS)

# Every part of the bench takes hours under TCG (hops alone 25 minutes),
# past guest.sh's default limit of 30 minutes; set GUEST_TIMEOUT to change.
bench: all
	@GUEST_TIMEOUT=$${GUEST_TIMEOUT:-21600} bash testbed/guest.sh tests/bench.sh
	@if [ -z "$${BENCH_PARTS:-}" ] || [[ " $$BENCH_PARTS " == *" repro "* ]]; then bash tests/repro.sh; fi
	@if [ -z "$${BENCH_PARTS:-}" ] || [[ " $$BENCH_PARTS " == *" table1 "* ]]; then $(MAKE) -s paper NAME=gfc-table1; fi

# The demo's incast in REPRO_BOOTS (5) boots under each guest clock
# (REPRO_CLOCKS: virtual host): the run-to-run spread, side by side.
repro: all
	@bash tests/repro.sh

demo: all
	@bash testbed/guest.sh tests/demo.sh

# One paper recipe (testbed/experiments/paper/NAME.toml): its runs, then
# the paper's claims against the testbed's numbers.
# A recipe with a model (gfc-table1) runs on the host; the others boot
# the testbed.
paper: paper-name all
	@if grep -q '^model = ' testbed/experiments/paper/$(NAME).toml; then \
		userspace/target/release/rxecc paper testbed/experiments/paper/$(NAME).toml --out $(RESULTS)/paper/$(NAME); \
	else PAPER_NAME=$(NAME) bash testbed/guest.sh tests/paper.sh; fi
paper-name:
	@[ -n "$(NAME)" ] && [ -f testbed/experiments/paper/$(NAME).toml ] || { \
		echo "make paper: NAME=<recipe>, one of: $$(cd testbed/experiments/paper && ls *.toml | sed 's/\.toml$$//' | tr '\n' ' ')" >&2; exit 2; }

clean:
	rm -rf $(BUILD)
	-[ -f $(BUILD)/kdir ] && $(MAKE) -s -C "$$(cat $(BUILD)/kdir)" M=$(TOP) clean
	cd userspace && $(CARGO) clean
