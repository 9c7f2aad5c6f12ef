# SPDX-License-Identifier: GPL-2.0
# health/: tunnel health and the agent's failover (the state machine, the
# prober, the link monitor, the failover controller, what the agent
# publishes, the one-agent lock) and spill (the controller, spill*.c, and
# the agent's side, spill_agent.c), built as a static library that splitctl
# links before tunnel-cfg's (HEALTH_LIB, then TCFG_LIB TCFG_LIBS). Its
# tests are built by tests/build.mk.
# $$(...) in prerequisites and recipes: fragments read later define
# FSLIB_CFLAGS and MNL_CFLAGS (tunnel-cfg/build.mk).

HEALTH_SRCS := $(wildcard health/*.c)
HEALTH_OBJS := $(HEALTH_SRCS:%.c=$(BUILD)/%.o)
HEALTH_LIB  := $(BUILD)/libhealth.a
HEALTH_CFLAGS = -Ihealth -Itunnel-cfg $(FSLIB_CFLAGS) $(MNL_CFLAGS)

$(BUILD)/health/%.o: health/%.c
	@mkdir -p $(@D)
	@$(PKG_CONFIG) --exists libmnl || { echo "health: libmnl not found: apt-get install libmnl-dev" >&2; exit 1; }
	$(CC) $(CFLAGS) $(HEALTH_CFLAGS) -c $< -o $@

$(HEALTH_LIB): $(HEALTH_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(HEALTH_LIB)
