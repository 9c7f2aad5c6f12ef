// SPDX-License-Identifier: GPL-2.0
/* dp.c - see dp.h */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "splitter.skel.h"
#include "dp.h"
#include "pkt.h"

static unsigned int measure_hz(struct dp *dp)
{
	static const unsigned int known[] = { 100, 250, 300, 1000 };
	struct timespec t0, t1, req = { 0, 200 * 1000 * 1000 };
	unsigned int i, best = known[0];
	__u64 j0, j1;
	double hz, err, best_err = 1e9;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	j0 = dp_jiffies(dp);
	nanosleep(&req, NULL);
	j1 = dp_jiffies(dp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hz = (j1 - j0) / ((t1.tv_sec - t0.tv_sec) +
			  (t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		err = hz > known[i] ? hz - known[i] : known[i] - hz;
		if (err < best_err) {
			best_err = err;
			best = known[i];
		}
	}
	return best;
}

int dp_open(struct dp *dp, __u32 flows)
{
	int err;

	memset(dp, 0, sizeof(*dp));
	dp->skel = splitter__open();
	if (!dp->skel)
		return -errno;
	bpf_map__set_max_entries(dp->skel->maps.fs_flows4, flows);
	bpf_map__set_max_entries(dp->skel->maps.fs_flows6, flows);
	err = splitter__load(dp->skel);
	if (err) {
		splitter__destroy(dp->skel);
		dp->skel = NULL;
		return err;
	}
	dp->prog_fd = bpf_program__fd(dp->skel->progs.fs_splitter);
	dp->clock_fd = bpf_program__fd(dp->skel->progs.fs_clock);
	dp->cfg_fd = bpf_map__fd(dp->skel->maps.fs_config);
	dp->stats_fd = bpf_map__fd(dp->skel->maps.fs_stats);
	dp->flows4_fd = bpf_map__fd(dp->skel->maps.fs_flows4);
	dp->flows6_fd = bpf_map__fd(dp->skel->maps.fs_flows6);
	dp->ncpus = libbpf_num_possible_cpus();
	dp->hz = measure_hz(dp);
	return 0;
}

void dp_close(struct dp *dp)
{
	splitter__destroy(dp->skel);
	dp->skel = NULL;
}

int dp_run(struct dp *dp, const __u8 *in, __u32 len, __u8 *out,
	   __u32 *out_len, __u32 repeat, __u32 *ns_per_run)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = PKT_MAX,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(dp->prog_fd, &o))
		return -1;
	if (out_len)
		*out_len = o.data_size_out;
	if (ns_per_run)
		*ns_per_run = o.duration;
	return (int)o.retval;
}

int dp_set_config(struct dp *dp, __u32 threshold, __u32 idle_ms,
		  __u8 dscp_short, __u8 dscp_long, __u32 flags)
{
	struct split_config c = {
		.threshold = threshold, .dscp_short = dscp_short,
		.dscp_long = dscp_long, .flags = flags,
	};
	__u32 zero = 0;

	split_config_set_idle(&c, idle_ms, dp->hz);
	return bpf_map_update_elem(dp->cfg_fd, &zero, &c, BPF_ANY);
}

int dp_get_config(struct dp *dp, struct split_config *c)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(dp->cfg_fd, &zero, c);
}

int dp_stats(struct dp *dp, __u64 out[FS_STAT_MAX])
{
	__u64 v[dp->ncpus];
	__u32 i;
	int c;

	for (i = 0; i < FS_STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(dp->stats_fd, &i, v))
			return -errno;
		for (c = 0; c < dp->ncpus; c++)
			out[i] += v[c];
	}
	return 0;
}

static void flush_map(int fd, size_t key_size)
{
	__u8 key[key_size], next[key_size];

	while (bpf_map_get_next_key(fd, NULL, next) == 0) {
		memcpy(key, next, key_size);
		bpf_map_delete_elem(fd, key);
	}
}

void dp_flush(struct dp *dp)
{
	flush_map(dp->flows4_fd, sizeof(struct flow_key4));
	flush_map(dp->flows6_fd, sizeof(struct flow_key6));
}

__u64 dp_jiffies(struct dp *dp)
{
	__u8 in[64] = {}, out[64];
	__u64 now;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = sizeof(in), .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(dp->clock_fd, &o))
		return 0;
	memcpy(&now, out, sizeof(now));
	return now;
}
