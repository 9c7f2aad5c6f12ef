# SPDX-License-Identifier: GPL-2.0
# tunnel-cfg/: policy routing and lab tunnels over netlink (libmnl), built as
# a static library that splitctl links (TCFG_LIB, then TCFG_LIBS, which
# include lib/'s FSLIB: tunnel-cfg prints and parses through it).

MNL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libmnl)
MNL_LIBS   := $(shell $(PKG_CONFIG) --libs libmnl)

TCFG_SRCS := $(wildcard tunnel-cfg/*.c)
TCFG_OBJS := $(TCFG_SRCS:%.c=$(BUILD)/%.o)
TCFG_LIB  := $(BUILD)/libtunnelcfg.a
TCFG_LIBS := $(FSLIB) $(FSLIB_LIBS) $(MNL_LIBS)

$(BUILD)/tunnel-cfg/%.o: tunnel-cfg/%.c
	@mkdir -p $(@D)
	@$(PKG_CONFIG) --exists libmnl || { echo "tunnel-cfg: libmnl not found: apt-get install libmnl-dev" >&2; exit 1; }
	$(CC) $(CFLAGS) -Itunnel-cfg $(FSLIB_CFLAGS) $(MNL_CFLAGS) -c $< -o $@

# FSLIB is a prerequisite so that it exists (and is current) before anything
# links TCFG_LIBS; it is not part of the archive.
$(TCFG_LIB): $(TCFG_OBJS) $(FSLIB)
	rm -f $@
	$(AR) rcs $@ $(TCFG_OBJS)

ALL_TARGETS += $(TCFG_LIB)
