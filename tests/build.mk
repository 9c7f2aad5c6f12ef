# SPDX-License-Identifier: GPL-2.0
# tests/: C unit tests of the datapath (BPF_PROG_TEST_RUN) and its benchmark.
# bats suites are found by tests/run itself.

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

# the spill controller (health/spill.c, pure) on simulated time
$(BUILD)/tests/unit-spill-ctl: tests/unit/test_spill_ctl.c health/spill.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ihealth -Itests/unit tests/unit/test_spill_ctl.c health/spill.c -o $@ -lm

ALL_TARGETS += $(BUILD)/tests/unit-spill-ctl

$(BUILD)/tests/bench/%.o: tests/bench/%.c $(BUILD)/splitter.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -c $< -o $@

$(BUILD)/bench-datapath: $(BUILD)/tests/bench/datapath.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

$(BUILD)/bench-flood: $(BUILD)/tests/bench/flood.o $(TEST_DP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/bench-datapath $(BUILD)/bench-flood $(BUILD)/bpf/xdp_pass.bpf.o
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

# spill-proto: the spill controller driven in a testbed router, the agent's
# stand-in until the agent drives it (tests/tools/spill-proto.c)
$(BUILD)/spill-proto: tests/tools/spill-proto.c health/spill.c $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ihealth -Itunnel-cfg $(FSLIB_CFLAGS) tests/tools/spill-proto.c health/spill.c \
		-o $@ $(TCFG_LIB) $(TCFG_LIBS) $(LIBBPF_LIBS)

ALL_TARGETS += $(BUILD)/spill-proto
