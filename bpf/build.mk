# SPDX-License-Identifier: GPL-2.0
# bpf/: the XDP splitter and its skeleton header for user space.

BPF_OBJS := $(BUILD)/bpf/splitter.bpf.o $(BUILD)/bpf/ref_count.bpf.o

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/splitter.skel.h: $(BUILD)/bpf/splitter.bpf.o
	$(BPFTOOL) gen skeleton $< name splitter > $@

ALL_TARGETS += $(BPF_OBJS) $(BUILD)/splitter.skel.h
