# SPDX-License-Identifier: GPL-2.0
# tunnel-cfg/: policy routing and lab tunnels over netlink (libmnl), built as
# a static library that splitctl links (TCFG_LIB, TCFG_LIBS).

TCFG_SRCS := $(wildcard tunnel-cfg/*.c)
TCFG_OBJS := $(TCFG_SRCS:%.c=$(BUILD)/%.o)
TCFG_LIB  := $(BUILD)/libtunnelcfg.a
TCFG_LIBS := $(shell $(PKG_CONFIG) --libs libmnl)

$(BUILD)/tunnel-cfg/%.o: tunnel-cfg/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itunnel-cfg $(shell $(PKG_CONFIG) --cflags libmnl) -c $< -o $@

$(TCFG_LIB): $(TCFG_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(TCFG_LIB)
include tunnel-cfg/health.mk
