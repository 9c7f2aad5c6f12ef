# SPDX-License-Identifier: GPL-2.0
# telemetry/: fct-tap, the DPDK timestamping tap (FCT, delay, jitter, loss),
# and tap-mkpcap, the pcap pair writer used by its tests and benchmark.

TAP_SRCS := $(wildcard telemetry/*.c)
TAP_OBJS := $(TAP_SRCS:%.c=$(BUILD)/%.o)
TAP_DPDK_CFLAGS = $(shell $(PKG_CONFIG) --cflags libdpdk)
TAP_DPDK_LIBS = $(shell $(PKG_CONFIG) --libs libdpdk)

# DPDK's headers are included as system headers (-isystem) so our -Werror
# applies to our code only; rte_eth_read_clock is still experimental in 22.11.
$(BUILD)/telemetry/%.o: telemetry/%.c
	@mkdir -p $(@D)
	@$(PKG_CONFIG) --exists libdpdk || { echo "telemetry: libdpdk not found: apt-get install libdpdk-dev" >&2; exit 1; }
	$(CC) $(CFLAGS) $(patsubst -I%,-isystem %,$(TAP_DPDK_CFLAGS)) \
		-DALLOW_EXPERIMENTAL_API -Itelemetry -c $< -o $@

$(BUILD)/fct-tap: $(TAP_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(TAP_DPDK_LIBS) -lm

$(BUILD)/tap-mkpcap: tests/tap/mkpcap.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

ALL_TARGETS += $(BUILD)/fct-tap $(BUILD)/tap-mkpcap
BENCH_CMDS += tests/tap/bench.sh
