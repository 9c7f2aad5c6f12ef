# SPDX-License-Identifier: GPL-2.0
# tunnel-cfg/health.mk: tests of the tunnel health code. health.c and
# probe.c themselves are compiled into $(TCFG_LIB) by build.mk's wildcard.
# Include this file after (or from) tunnel-cfg/build.mk:
#   build/tests/unit-health   the state machine, damping and plans (TAP)
#   build/health-probe-test   the prober against real peers, for
#                             tests/health-probe.bats (not installed)
#   build/failover-test       the failover API (plans, re-convergence, link
#                             monitor, health file), for tests/route-split.bats
# $$(...) in prerequisites: second expansion (TCFG_LIB, FSLIB are defined by
# other fragments, possibly later).

$(BUILD)/tests/unit-health: tests/unit/test_health.c $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itunnel-cfg -Itests/unit $< -o $@ $(TCFG_LIB) $(FSLIB) $(FSLIB_LIBS)

$(BUILD)/health-probe-test: tests/tools/health-probe-test.c $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itunnel-cfg $(FSLIB_CFLAGS) $< -o $@ $(TCFG_LIB) $(FSLIB) $(FSLIB_LIBS)

# the failover API driven as the agent will, for tests/route-split.bats
$(BUILD)/failover-test: tests/tools/failover-test.c $$(TCFG_LIB) $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itunnel-cfg $(FSLIB_CFLAGS) $(MNL_CFLAGS) $< -o $@ $(TCFG_LIB) $(TCFG_LIBS)

ALL_TARGETS += $(BUILD)/tests/unit-health $(BUILD)/health-probe-test $(BUILD)/failover-test
