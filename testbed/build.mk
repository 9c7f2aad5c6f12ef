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

# delayline: user-space propagation delay for kernels without netem, and
# dlprobe, the numbered UDP stream that measures it (testbed/delayline/)
$(BUILD)/delayline: testbed/delayline/delayline.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -lm

$(BUILD)/dlprobe: testbed/delayline/dlprobe.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

ALL_TARGETS += $(BUILD)/delayline $(BUILD)/dlprobe
