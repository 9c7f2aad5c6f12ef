# SPDX-License-Identifier: GPL-2.0
# testbed/: flowgen, the HTTP workload generator.

$(BUILD)/flowgen: testbed/flowgen/flowgen.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFLOWGEN_DATADIR='"$(CURDIR)/testbed/data"' $< -o $@ -lm -lpthread

ALL_TARGETS += $(BUILD)/flowgen
