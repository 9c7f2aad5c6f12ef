# SPDX-License-Identifier: GPL-2.0
#
# flowsplit top-level Makefile. Every build output goes to $(BUILD)/.
# Each component adds its targets in its own <dir>/build.mk fragment, so the
# components build independently:
#   ALL_TARGETS  += what `make all` builds
#   BENCH_CMDS   += shell commands `make bench` runs, in order
#
#   make test    install missing packages, build, run every test
#   make demo    install missing packages, build, run the testbed comparison
#                (real applications under long-lived bulk at RTT 40 ms,
#                ECMP vs flowsplit as deployed: the agent on both routers)
#   make demo-filehosting  the same with flowgen's file-hosting mix
#   make bench   install missing packages, build, run the benchmarks
#   make sanitize  splitctl and the user-space unit tests with ASan and UBSan
#                  in build-asan/ (BUILD=build-asan tests/run splitctl unit-)
#   make install [DESTDIR=] [PREFIX=/usr/local]  splitctl, man page,
#                completion, unit (loader/build.mk); make uninstall
#   make deb     the Debian package $(BUILD)/deb/flowsplit_*.deb (debian/),
#                checked by lintian (docs/packaging.md)
#   make clean   remove $(BUILD)

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
# The fragments ask pkg-config for flags while the makefile is read, before
# `make test` or `make demo` has installed anything: probe quietly (a
# missing package gives empty flags here; each recipe names the package it
# needs), and without pkg-config at all give nothing instead of a shell error.
PKG_CONFIG ?= $(if $(shell command -v pkg-config 2>/dev/null),pkg-config --silence-errors,false)

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
# Our own code: warnings are errors. -MMD -MP: a header edit rebuilds users.
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -MMD -MP -Ibpf -I$(BUILD)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Wextra -Werror -MMD -MP \
	      -I/usr/include/$(MULTIARCH) -Ibpf

ALL_TARGETS :=
BENCH_CMDS :=

# The builds that test, demo and bench start run on every core (make
# -jN on the command line wins): on CI's two cores a serial build is a
# share of `make test`
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

.PHONY: all test demo demo-filehosting bench deps deb clean sanitize
all: all-targets

.SECONDEXPANSION:
include $(sort $(wildcard */build.mk))

all-targets: $(ALL_TARGETS)

deps:
	@scripts/install-deps

test: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@tests/run

demo: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@testbed/demo apps

demo-filehosting: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@testbed/demo filehosting

bench: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@set -e; $(foreach c,$(BENCH_CMDS),$(c);)

# The package is built from a copy of the work tree's files (tracked, and
# new ones git does not ignore) in $(DEB_DIR)/src: dpkg-buildpackage
# writes its output next to the source directory, and its "clean" step
# would otherwise run in this tree. Build dependencies: debian/control
# (scripts/install-deps build). lintian's report is kept in
# $(DEB_DIR)/lintian.txt when it passes: tests/package.bats reads it
# instead of running lintian on the same package again.
DEB_DIR := $(BUILD)/deb
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "deb: needs dpkg-dev and debhelper: apt-get install dpkg-dev debhelper lintian" >&2; exit 1; }
	@git rev-parse --git-dir >/dev/null 2>&1 || \
		{ echo "deb: needs a git work tree: the files to package are git's (git ls-files)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	git ls-files -z --cached --others --exclude-standard | \
		tar --null --no-recursion --ignore-failed-read -cf - -T - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 30 ../build.log >&2; echo "deb: dpkg-buildpackage failed (log: $(DEB_DIR)/build.log)" >&2; exit 1; }
	lintian --fail-on error $(DEB_DIR)/flowsplit_*.deb >$(DEB_DIR)/lintian.out 2>&1; rc=$$?; \
		cat $(DEB_DIR)/lintian.out; [ $$rc -ne 0 ] || mv $(DEB_DIR)/lintian.out $(DEB_DIR)/lintian.txt; exit $$rc
	@ls $(DEB_DIR)/flowsplit_*.deb

# CFLAGS through the environment: the makefile's own flags (-Wall -Werror,
# include paths) are appended to it, as for any CFLAGS given that way;
# xdp_pass.bpf.o is the foreign XDP program the CLI suites attach
SANITIZE_BUILD := build-asan
SANITIZE_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
		   -fno-sanitize-recover=all
sanitize:
	@env CFLAGS="$(SANITIZE_CFLAGS)" $(MAKE) --no-print-directory BUILD=$(SANITIZE_BUILD) \
		$(SANITIZE_BUILD)/splitctl $(SANITIZE_BUILD)/tests/unit-lib $(SANITIZE_BUILD)/tests/unit-tcfg \
		$(SANITIZE_BUILD)/bpf/xdp_pass.bpf.o

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
