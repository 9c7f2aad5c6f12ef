# SPDX-License-Identifier: GPL-2.0
# lib/: the user-space helpers shared by splitctl, tunnel-cfg, fct-tap,
# flowgen, delayline and dlprobe (option tables and value validators, output
# layer, clocks, signals, safe files), built as a static library. Users add
# $(FSLIB_CFLAGS) and link $(FSLIB) $(FSLIB_LIBS).

FSLIB_SRCS := $(wildcard lib/*.c)
FSLIB_OBJS := $(FSLIB_SRCS:%.c=$(BUILD)/%.o)
FSLIB      := $(BUILD)/libfsutil.a
FSLIB_CFLAGS := -Ilib $(shell $(PKG_CONFIG) --cflags json-c)
FSLIB_LIBS := $(shell $(PKG_CONFIG) --libs json-c) -lm

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	@$(PKG_CONFIG) --exists json-c || { echo "lib: json-c not found: apt-get install libjson-c-dev" >&2; exit 1; }
	$(CC) $(CFLAGS) $(FSLIB_CFLAGS) -c $< -o $@

$(FSLIB): $(FSLIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(FSLIB)
