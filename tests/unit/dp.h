/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dp.h - drive the compiled splitter through BPF_PROG_TEST_RUN at either
 * hook (used by the unit tests and the datapath benchmark).
 */
#ifndef FS_TEST_DP_H
#define FS_TEST_DP_H

#include <linux/types.h>
#include "flowsplit.h"

struct pkt_spec;

enum dp_hook {
	DP_XDP,		/* fs_splitter: one wire packet per run */
	DP_TC,		/* fs_splitter_tc: an skb of gso_segs wire packets */
	DP_HOOKS
};

struct dp {
	struct splitter *skel;
	int prog_fd[DP_HOOKS];
	int observer_fd;	/* fs_observer (TC egress) */
	int clock_fd, cfg_fd, stats_fd, flows4_fd, flows6_fd;
	int rules4_fd, rules6_fd;
	int ncpus;
	unsigned int hz;	/* measured with fs_clock */
	enum dp_hook hook;	/* the program dp_run() runs */
};

/* Open and load build/bpf/splitter.bpf.o (via the skeleton) with flow
 * tables of @flows entries each; dp_run() starts on the XDP program.
 * Returns 0 or -errno.
 */
int dp_open(struct dp *dp, __u32 flows);
/* dp_open() for a TAP test binary, libbpf quiet: on failure the one
 * failing TAP case and the plan are printed, and -errno returned. */
int dp_open_tap(struct dp *dp, __u32 flows);
void dp_close(struct dp *dp);

const char *dp_hook_name(enum dp_hook hook);
/* The splitter's verdict at @hook: XDP_PASS, TC_ACT_UNSPEC (continue). */
int dp_pass_verdict(enum dp_hook hook);

/*
 * One BPF_PROG_TEST_RUN of @prog_fd (an XDP program when @hook is DP_XDP,
 * else a TC one) with repeat = @repeat. @gso_segs goes into the skb
 * (__sk_buff.gso_segs; TC only, 0 leaves it unset). Output copied to @out
 * (room: PKT_MAX). Returns the program's return value, or DP_RUN_ERR on a
 * syscall error (errno set). @ns_per_run, if set, receives the kernel's average duration.
 */
#define DP_RUN_ERR (-100000)
int dp_test_run(int prog_fd, enum dp_hook hook, const __u8 *in, __u32 len,
		__u8 *out, __u32 *out_len, __u32 repeat, __u32 gso_segs,
		__u32 *ns_per_run);

/* dp_test_run() of the program of dp->hook, no gso_segs. */
int dp_run(struct dp *dp, const __u8 *in, __u32 len, __u8 *out,
	   __u32 *out_len, __u32 repeat, __u32 *ns_per_run);

int dp_set_config(struct dp *dp, __u32 threshold, __u32 idle_ms,
		  __u8 dscp_short, __u8 dscp_long, __u32 flags);
int dp_get_config(struct dp *dp, struct split_config *c);
/* Write a whole config (e.g. one from dp_get_config() with changes). */
int dp_put_config(struct dp *dp, const struct split_config *c);
/* Stat counters summed over CPUs and writers */
int dp_stats(struct dp *dp, __u64 out[FS_STAT_MAX]);
int dp_stats_fd(int stats_fd, int ncpus, __u64 out[FS_STAT_MAX]);
/* Remove every flow from both tables */
void dp_flush(struct dp *dp);
void dp_flush_fds(int flows4_fd, int flows6_fd);
/* The flow entry of @s's 5-tuple (TCP, IPv4 or IPv6): read it into @st,
 * or overwrite the existing one with @st. bpf_map_*_elem's result. */
int dp_flow_get(struct dp *dp, const struct pkt_spec *s, struct flow_state *st);
int dp_flow_put(struct dp *dp, const struct pkt_spec *s,
		const struct flow_state *st);
/* Current bpf_jiffies64() as seen by the datapath */
__u64 dp_jiffies(struct dp *dp);

#endif
