# SPDX-License-Identifier: GPL-2.0
# telemetry/: fct-tap, the DPDK timestamping tap (FCT, delay, jitter, loss).
# It uses lib/ (FSLIB), DPDK's headers and libpcap. (tap-mkpcap, the pcap
# pair writer of its tests and benchmark, is built by tests/build.mk.)

TAP_SRCS := $(wildcard telemetry/*.c)
TAP_OBJS := $(TAP_SRCS:%.c=$(BUILD)/%.o)
# DPDK's headers are included as system headers (-isystem) so our -Werror
# applies to our code only; rte_eth_read_clock and rte_ipv6_get_next_ext are
# still experimental in 22.11.
TAP_DPDK_CFLAGS = $(patsubst -I%,-isystem %,$(shell $(PKG_CONFIG) --cflags libdpdk)) \
	-DALLOW_EXPERIMENTAL_API
TAP_DPDK_LIBS = $(shell $(PKG_CONFIG) --libs libdpdk)
TAP_PCAP_CFLAGS = $(shell $(PKG_CONFIG) --cflags libpcap)
TAP_PCAP_LIBS = $(shell $(PKG_CONFIG) --libs libpcap)

tap-deps-check = @$(PKG_CONFIG) --exists libdpdk || { echo "telemetry: libdpdk not found: apt-get install libdpdk-dev" >&2; exit 1; }; \
	$(PKG_CONFIG) --exists libpcap || { echo "telemetry: libpcap not found: apt-get install libpcap-dev" >&2; exit 1; }

$(BUILD)/telemetry/%.o: telemetry/%.c
	@mkdir -p $(@D)
	$(tap-deps-check)
	$(CC) $(CFLAGS) $(TAP_DPDK_CFLAGS) $(TAP_PCAP_CFLAGS) $(FSLIB_CFLAGS) \
		-Itelemetry -c $< -o $@

$(BUILD)/fct-tap: $(TAP_OBJS) $(FSLIB)
	$(CC) $(CFLAGS) $(TAP_OBJS) -o $@ $(FSLIB) $(TAP_DPDK_LIBS) $(TAP_PCAP_LIBS) \
		$(FSLIB_LIBS) -lm

ALL_TARGETS += $(BUILD)/fct-tap
BENCH_CMDS += tests/tap/bench.sh
