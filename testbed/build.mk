# SPDX-License-Identifier: GPL-2.0
# testbed/: flowgen, the HTTP workload generator.

$(BUILD)/flowgen: testbed/flowgen/flowgen.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFLOWGEN_DATADIR='"$(CURDIR)/testbed/data"' $< -o $@ -lm -lpthread

ALL_TARGETS += $(BUILD)/flowgen

# nginx's listening sockets with the testbed's congestion control (LD_PRELOAD)
$(BUILD)/ccshim.so: testbed/ccshim.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared $< -o $@ -ldl

ALL_TARGETS += $(BUILD)/ccshim.so
