// SPDX-License-Identifier: GPL-2.0
/* dp.c - see dp.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

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
	dp->prog_fd[DP_XDP] = bpf_program__fd(dp->skel->progs.fs_splitter);
	dp->prog_fd[DP_TC] = bpf_program__fd(dp->skel->progs.fs_splitter_tc);
	dp->observer_fd = bpf_program__fd(dp->skel->progs.fs_observer);
	dp->hook = DP_XDP;
	dp->clock_fd = bpf_program__fd(dp->skel->progs.fs_clock);
	dp->cfg_fd = bpf_map__fd(dp->skel->maps.fs_config);
	dp->stats_fd = bpf_map__fd(dp->skel->maps.fs_stats);
	dp->flows4_fd = bpf_map__fd(dp->skel->maps.fs_flows4);
	dp->flows6_fd = bpf_map__fd(dp->skel->maps.fs_flows6);
	dp->rules4_fd = bpf_map__fd(dp->skel->maps.fs_rules4);
	dp->rules6_fd = bpf_map__fd(dp->skel->maps.fs_rules6);
	dp->ncpus = libbpf_num_possible_cpus();
	dp->hz = measure_hz(dp);
	return 0;
}

int dp_open_tap(struct dp *dp, __u32 flows)
{
	int err;

	libbpf_set_print(NULL);
	err = dp_open(dp, flows);
	if (err) {
		printf("not ok 1 - load build/bpf/splitter.bpf.o: %s\n", strerror(-err));
		printf("1..1\n");
	}
	return err;
}

void dp_close(struct dp *dp)
{
	splitter__destroy(dp->skel);
	dp->skel = NULL;
}

const char *dp_hook_name(enum dp_hook hook)
{
	return hook == DP_TC ? "tc" : "xdp";
}

int dp_pass_verdict(enum dp_hook hook)
{
	return hook == DP_TC ? TC_ACT_UNSPEC : XDP_PASS;
}

int dp_test_run(int prog_fd, enum dp_hook hook, const __u8 *in, __u32 len,
		__u8 *out, __u32 *out_len, __u32 repeat, __u32 gso_segs,
		__u32 *ns_per_run)
{
	struct __sk_buff skb = { .gso_segs = gso_segs };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = PKT_MAX,
		    .repeat = repeat);

	if (hook == DP_TC && gso_segs) {
		o.ctx_in = &skb;
		o.ctx_size_in = sizeof(skb);
	}
	if (bpf_prog_test_run_opts(prog_fd, &o))
		return DP_RUN_ERR;
	if (out_len)
		*out_len = o.data_size_out;
	if (ns_per_run)
		*ns_per_run = o.duration;
	return (int)o.retval;
}

int dp_run(struct dp *dp, const __u8 *in, __u32 len, __u8 *out,
	   __u32 *out_len, __u32 repeat, __u32 *ns_per_run)
{
	return dp_test_run(dp->prog_fd[dp->hook], dp->hook, in, len, out,
			   out_len, repeat, 0, ns_per_run);
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

int dp_put_config(struct dp *dp, const struct split_config *c)
{
	__u32 zero = 0;

	return bpf_map_update_elem(dp->cfg_fd, &zero, c, BPF_ANY);
}

int dp_stats_fd(int stats_fd, int ncpus, __u64 out[FS_STAT_MAX])
{
	struct fs_stats v[ncpus];
	__u32 key, i;
	int c;

	memset(out, 0, sizeof(__u64) * FS_STAT_MAX);
	for (key = 0; key < FS_STATS_KEYS; key++) {
		if (bpf_map_lookup_elem(stats_fd, &key, v))
			return -errno;
		for (c = 0; c < ncpus; c++)
			for (i = 0; i < FS_STAT_MAX; i++)
				out[i] += v[c].v[i];
	}
	return 0;
}

int dp_stats(struct dp *dp, __u64 out[FS_STAT_MAX])
{
	return dp_stats_fd(dp->stats_fd, dp->ncpus, out);
}

/* Collect every key walking from the previous one (restarting from NULL
 * after each delete would rescan the emptied buckets: quadratic on a 1 M
 * table), then delete them.
 */
static void flush_map(int fd, size_t key_size)
{
	size_t n = 0, cap = 1024, i;
	__u8 *keys = malloc(cap * key_size), *prev = NULL;

	while (keys && bpf_map_get_next_key(fd, prev, keys + n * key_size) == 0) {
		prev = keys + n * key_size;
		if (++n == cap) {
			__u8 *k = realloc(keys, 2 * cap * key_size);

			if (!k)
				break;
			keys = k;
			cap *= 2;
			prev = keys + (n - 1) * key_size;
		}
	}
	for (i = 0; keys && i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
}

void dp_flush_fds(int flows4_fd, int flows6_fd)
{
	flush_map(flows4_fd, sizeof(struct flow_key4));
	flush_map(flows6_fd, sizeof(struct flow_key6));
}

void dp_flush(struct dp *dp)
{
	dp_flush_fds(dp->flows4_fd, dp->flows6_fd);
}

/* The key of @s's 5-tuple in @key (a flow_key4 or flow_key6); returns the
 * fd of its table. */
static int flow_key(struct dp *dp, const struct pkt_spec *s, void *key)
{
	if (s->family == 4) {
		struct flow_key4 *k = key;

		memset(k, 0, sizeof(*k));
		k->saddr = htonl(s->saddr4);
		k->daddr = htonl(s->daddr4);
		k->sport = htons(s->sport);
		k->dport = htons(s->dport);
		k->proto = IPPROTO_TCP;
		return dp->flows4_fd;
	} else {
		struct flow_key6 *k = key;

		memset(k, 0, sizeof(*k));
		memcpy(k->saddr, s->saddr6, 16);
		memcpy(k->daddr, s->daddr6, 16);
		k->sport = htons(s->sport);
		k->dport = htons(s->dport);
		k->proto = IPPROTO_TCP;
		return dp->flows6_fd;
	}
}

int dp_flow_get(struct dp *dp, const struct pkt_spec *s, struct flow_state *st)
{
	struct flow_key6 key;
	int fd = flow_key(dp, s, &key);

	return bpf_map_lookup_elem(fd, &key, st);
}

int dp_flow_put(struct dp *dp, const struct pkt_spec *s,
		const struct flow_state *st)
{
	struct flow_key6 key;
	int fd = flow_key(dp, s, &key);

	return bpf_map_update_elem(fd, &key, st, BPF_EXIST);
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
