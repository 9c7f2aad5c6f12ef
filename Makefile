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
#   make bench   install missing packages, build, run the benchmarks
#   make clean   remove $(BUILD)

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKG_CONFIG ?= pkg-config

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
# Our own code: warnings are errors. -MMD -MP: a header edit rebuilds users.
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -MMD -MP -Ibpf -I$(BUILD)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Wextra -Werror -MMD -MP \
	      -I/usr/include/$(MULTIARCH) -Ibpf

ALL_TARGETS :=
BENCH_CMDS :=

.PHONY: all test demo bench deps clean
all: all-targets

.SECONDEXPANSION:
include $(sort $(wildcard */build.mk))

all-targets: $(ALL_TARGETS)

deps:
	@scripts/install-deps

test: deps
	@$(MAKE) --no-print-directory all
	@tests/run

demo: deps
	@$(MAKE) --no-print-directory all
	@if [ -x testbed/demo ]; then testbed/demo; else \
		echo "make demo: the testbed (testbed/demo) is not built yet"; exit 1; fi

bench: deps
	@$(MAKE) --no-print-directory all
	@set -e; $(foreach c,$(BENCH_CMDS),$(c);)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
