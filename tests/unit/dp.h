/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dp.h - drive the compiled splitter through BPF_PROG_TEST_RUN (used by the
 * unit tests and the datapath benchmark).
 */
#ifndef FS_TEST_DP_H
#define FS_TEST_DP_H

#include <linux/types.h>
#include "flowsplit.h"

struct dp {
	struct splitter *skel;
	int prog_fd, clock_fd, cfg_fd, stats_fd, flows4_fd, flows6_fd;
	int ncpus;
	unsigned int hz;	/* measured with fs_clock */
};

/* Open and load build/bpf/splitter.bpf.o (via the skeleton) with flow
 * tables of @flows entries each. Returns 0 or -errno.
 */
int dp_open(struct dp *dp, __u32 flows);
void dp_close(struct dp *dp);

/* One run of fs_splitter with repeat = @repeat. Output copied to @out
 * (room: PKT_MAX). Returns the XDP verdict, or -1 on a syscall error.
 * @ns_per_run, if set, receives the kernel's average duration per run.
 */
int dp_run(struct dp *dp, const __u8 *in, __u32 len, __u8 *out,
	   __u32 *out_len, __u32 repeat, __u32 *ns_per_run);

int dp_set_config(struct dp *dp, __u32 threshold, __u32 idle_ms,
		  __u8 dscp_short, __u8 dscp_long, __u32 flags);
int dp_get_config(struct dp *dp, struct split_config *c);
/* Stat counters summed over CPUs */
int dp_stats(struct dp *dp, __u64 out[FS_STAT_MAX]);
/* Remove every flow from both tables */
void dp_flush(struct dp *dp);
/* Current bpf_jiffies64() as seen by the datapath */
__u64 dp_jiffies(struct dp *dp);

#endif
