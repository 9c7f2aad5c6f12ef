# SPDX-License-Identifier: GPL-2.0
# bpf/: the XDP splitter and its skeleton header for user space.

BPF_OBJS := $(BUILD)/bpf/splitter.bpf.o $(BUILD)/bpf/ref_count.bpf.o $(BUILD)/bpf/dup.bpf.o

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/splitter.skel.h: $(BUILD)/bpf/splitter.bpf.o
	$(BPFTOOL) gen skeleton $< name splitter > $@

# the short class's duplication (dup.bpf.c), loaded by "splitctl dup"
$(BUILD)/dup.skel.h: $(BUILD)/bpf/dup.bpf.o
	$(BPFTOOL) gen skeleton $< name dup > $@

ALL_TARGETS += $(BPF_OBJS) $(BUILD)/splitter.skel.h $(BUILD)/dup.skel.h
