# SPDX-License-Identifier: GPL-2.0
# loader/: splitctl, the operator's CLI.

SPLITCTL_SRCS := $(wildcard loader/*.c)
SPLITCTL_OBJS := $(SPLITCTL_SRCS:%.c=$(BUILD)/%.o)
SPLITCTL_LIBS := $(shell $(PKG_CONFIG) --libs libbpf inih zlib)

$(BUILD)/loader/%.o: loader/%.c $(BUILD)/splitter.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iloader -Itunnel-cfg -c $< -o $@

$(BUILD)/splitctl: $(SPLITCTL_OBJS) $(TCFG_LIB)
	$(CC) $(CFLAGS) $(SPLITCTL_OBJS) -o $@ $(TCFG_LIB) $(TCFG_LIBS) $(SPLITCTL_LIBS)

ALL_TARGETS += $(BUILD)/splitctl
