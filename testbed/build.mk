# SPDX-License-Identifier: GPL-2.0
# testbed/: flowgen, the HTTP workload generator (options: lib/params.h;
# $$(FSLIB) is defined by lib/build.mk).

$(BUILD)/flowgen: testbed/flowgen/flowgen.c $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(FSLIB_CFLAGS) -DFLOWGEN_DATADIR='"$(CURDIR)/testbed/data"' $< -o $@ \
		$(FSLIB) $(FSLIB_LIBS) -lpthread

ALL_TARGETS += $(BUILD)/flowgen

# nginx's listening sockets with the testbed's congestion control (LD_PRELOAD)
$(BUILD)/ccshim.so: testbed/nginx/ccshim.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared $< -o $@ -ldl

ALL_TARGETS += $(BUILD)/ccshim.so

# delayline: user-space propagation delay for kernels without netem, and
# dlprobe, the numbered UDP stream that measures it (testbed/delayline/)
# (JSON through lib/json_print.h: $$(FSLIB) is defined by lib/build.mk)
$(BUILD)/delayline: testbed/delayline/delayline.c $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(FSLIB_CFLAGS) $< -o $@ $(FSLIB) $(FSLIB_LIBS)

$(BUILD)/dlprobe: testbed/delayline/dlprobe.c $$(FSLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(FSLIB_CFLAGS) $< -o $@ $(FSLIB) $(FSLIB_LIBS)

ALL_TARGETS += $(BUILD)/delayline $(BUILD)/dlprobe

# docs/results/ (and the README's headline table): tables and plots from
# docs/results/data/ (testbed/analysis/regen_docs.py; tests/docs.bats
# checks that the committed pages agree with the data)
.PHONY: results-docs
results-docs:
	/usr/bin/python3 testbed/analysis/regen_docs.py
