# SPDX-License-Identifier: GPL-2.0
# tests/: every test build rule: the C unit tests (the datapath through
# BPF_PROG_TEST_RUN, lib/, tunnel-cfg/, health/), the tools the bats suites
# drive, and the benchmarks. bats suites are found by tests/run itself.
# $$(...) in prerequisites: second expansion (the libraries are defined by
# fragments read after this one).

LIBBPF_LIBS = $(shell $(PKG_CONFIG) --libs libbpf)
TEST_DP_SRCS := tests/unit/dp.c tests/unit/pkt.c
TEST_DP_OBJS := $(TEST_DP_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/tests/unit/%.o: tests/unit/%.c $(BUILD)/splitter.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -c $< -o $@

$(BUILD)/tests/unit-splitter: $(BUILD)/tests/unit/test_splitter.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS) -lpthread

ALL_TARGETS += $(BUILD)/tests/unit-splitter

$(BUILD)/tests/unit-policy: $(BUILD)/tests/unit/test_policy.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/tests/unit-policy

$(BUILD)/tests/unit-boundary: $(BUILD)/tests/unit/test_boundary.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/tests/unit-boundary

$(BUILD)/tests/unit-spill: $(BUILD)/tests/unit/test_spill.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS) -lpthread

ALL_TARGETS += $(BUILD)/tests/unit-spill

# the short class's duplication (bpf/dup.bpf.c): its own skeleton
$(BUILD)/tests/unit/test_dup.o: $(BUILD)/dup.skel.h

$(BUILD)/tests/unit-dup: $(BUILD)/tests/unit/test_dup.o $(BUILD)/tests/unit/pkt.o
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/tests/unit-dup

# the benchmark floors (tests/bench/*_pass.bpf.c), built next to the
# splitter, where the benchmark and the CLI suites (a foreign XDP program)
# load them
$(BUILD)/bpf/%_pass.bpf.o: tests/bench/%_pass.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/bench/%.o: tests/bench/%.c $(BUILD)/splitter.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -c $< -o $@

$(BUILD)/bench-datapath: $(BUILD)/tests/bench/datapath.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

$(BUILD)/bench-flood: $(BUILD)/tests/bench/flood.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/bench-datapath $(BUILD)/bench-flood $(BUILD)/bpf/xdp_pass.bpf.o \
	$(BUILD)/bpf/tc_pass.bpf.o
BENCH_CMDS += tests/bench/datapath.sh
BENCH_CMDS += $(BUILD)/bench-flood
BENCH_CMDS += tests/bench/forwarding.sh

# tap-mkpcap: the pcap pair writer of fct-tap's tests and benchmark
# (tests/tap/); DPDK's headers and libpcap as for fct-tap (telemetry/build.mk)
$(BUILD)/tap-mkpcap: tests/tap/mkpcap.c
	@mkdir -p $(@D)
	$(tap-deps-check)
	$(CC) $(CFLAGS) $(TAP_DPDK_CFLAGS) $(TAP_PCAP_CFLAGS) $< -o $@ $(TAP_PCAP_LIBS)

ALL_TARGETS += $(BUILD)/tap-mkpcap

# ---- user-space units: lib/, tunnel-cfg/, health/ --------------------------------------
$(BUILD)/tests/unit-lib: tests/unit/test_lib.c $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(FSLIB_CFLAGS) -Itests/unit $< -o $@ $(FSLIB) $(FSLIB_LIBS)

# the message builders, the settings parser, plans and the health JSON (no socket)
$(BUILD)/tests/unit-tcfg: tests/unit/test_tcfg.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -Itests/unit $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

# the spill controller (health/spill*.c, pure) on simulated time
$(BUILD)/tests/unit-spill-ctl: tests/unit/test_spill_ctl.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -Itests/unit $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS) -lm

# when the agent copies the short class (health/dup_ctl.c, pure) on
# simulated time
$(BUILD)/tests/unit-dup-ctl: tests/unit/test_dup_ctl.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -Itests/unit $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

# path quality and the roles controller (health/quality.c, roles.c, pure)
# on simulated time
$(BUILD)/tests/unit-roles: tests/unit/test_roles.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -Itests/unit $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

# the health state machine, damping and plans (TAP)
$(BUILD)/tests/unit-health: tests/unit/test_health.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -Itests/unit $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

# the prober against real peers, for tests/health-probe.bats (not installed)
$(BUILD)/health-probe-test: tests/tools/health-probe-test.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

# the failover API driven as the agent does (plans, re-convergence, link
# monitor, health file), for tests/route-split.bats
$(BUILD)/failover-test: tests/tools/failover-test.c $$(HEALTH_LIB) $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) $< -o $@ $(HEALTH_LIB) $(TCFG_LIB) $(TCFG_LIBS)

ALL_TARGETS += $(BUILD)/tests/unit-lib $(BUILD)/tests/unit-tcfg $(BUILD)/tests/unit-health \
	$(BUILD)/tests/unit-spill-ctl $(BUILD)/tests/unit-roles \
	$(BUILD)/tests/unit-dup-ctl $(BUILD)/health-probe-test $(BUILD)/failover-test

# a command under a unit's system call filter and address families, for
# tests/unit-sandbox.bats (not installed)
$(BUILD)/sandbox-exec: tests/tools/sandbox-exec.c
	@mkdir -p $(@D)
	@$(PKG_CONFIG) --exists libseccomp || { echo "tests: libseccomp not found: apt-get install libseccomp-dev" >&2; exit 1; }
	$(CC) $(CFLAGS) $< -o $@ $(shell $(PKG_CONFIG) --libs libseccomp)

ALL_TARGETS += $(BUILD)/sandbox-exec
