// SPDX-License-Identifier: GPL-2.0
/*
 * gc.c - the idle sweep: remove flows the datapath would treat as expired.
 *
 * The datapath already restarts an expired flow at packet time; the sweep
 * only frees table entries. A flow is expired when now - last_seen >
 * idle_jiffies (the datapath's exact test). Candidates come from batch
 * lookups; each is re-read just before the batch delete, so an entry touched
 * after the scan survives (the remaining window is one syscall wide).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "ops.h"

enum { GC_BATCH = 4096 };

static int expired(__u64 now, __u64 last_seen, __u64 idle)
{
	return (__s64)(now - last_seen) > (__s64)idle;
}

static int sweep_table(int fd, __u32 ksz, __u64 idle, const struct sc_state *st,
		       __u64 *removed)
{
	__u8 *keys = malloc((size_t)GC_BATCH * ksz);
	__u8 *victims = malloc((size_t)GC_BATCH * ksz);
	struct flow_state *vals = malloc(GC_BATCH * sizeof(*vals));
	__u64 in_batch = 0, out_batch = 0, now;
	void *in = NULL;
	__u32 count, i, nv;
	int err, done = 0, ret = -1;
	struct flow_state cur;

	if (!keys || !victims || !vals)
		goto out;
	while (!done) {
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		count = GC_BATCH;
		err = bpf_map_lookup_batch(fd, in, &out_batch, keys, vals, &count, &bo);
		if (err && errno != ENOENT) {
			sc_err("gc: cannot read the flow table: %s", strerror(errno));
			goto out;
		}
		done = err != 0;
		if (sc_clock_now(st, &now, NULL))
			goto out;
		nv = 0;
		for (i = 0; i < count; i++) {
			void *k = keys + (size_t)i * ksz;

			if (!expired(now, vals[i].last_seen, idle))
				continue;
			/* re-read: a packet may have arrived since the scan */
			if (bpf_map_lookup_elem(fd, k, &cur) ||
			    !expired(now, cur.last_seen, idle))
				continue;
			memcpy(victims + (size_t)nv * ksz, k, ksz);
			nv++;
		}
		if (nv) {
			__u32 n = nv;
			LIBBPF_OPTS(bpf_map_batch_opts, dbo);

			if (bpf_map_delete_batch(fd, victims, &n, &dbo) && errno != ENOENT) {
				sc_err("gc: cannot delete from the flow table: %s", strerror(errno));
				*removed += n;
				goto out;
			}
			*removed += n;
		}
		in_batch = out_batch;
		in = &in_batch;
	}
	ret = 0;
out:
	free(keys);
	free(victims);
	free(vals);
	return ret;
}

int sc_gc_sweep(const struct sc_state *st, __u64 *removed)
{
	struct split_config cfg;
	__u64 n = 0;
	int ret;

	*removed = 0;
	if (sc_config_read(st, &cfg))
		return -1;
	ret = sweep_table(st->flows4_fd, sizeof(struct flow_key4), cfg.idle_jiffies, st, &n);
	if (!ret)
		ret = sweep_table(st->flows6_fd, sizeof(struct flow_key6),
				  cfg.idle_jiffies, st, &n);
	if (n)
		sc_stats_add(st, FS_STAT_FLOWS_SWEPT, n);
	*removed = n;
	return ret;
}

int cmd_gc(int argc, char **argv, const struct sc_opts *o)
{
	struct sc_state st;
	__u64 removed;
	int c, ret;

	while ((c = sc_getopt(argc, argv)) != -1)
		return c == 'h' ? SC_EXIT_OK : SC_EXIT_USAGE;
	if (optind != argc)
		return sc_usage_error("gc", "unexpected argument '%s' (see -h)", argv[optind]);
	ret = sc_state_open(o, &st, 1);
	if (ret)
		return ret;
	ret = sc_gc_sweep(&st, &removed) ? SC_EXIT_RUNTIME : SC_EXIT_OK;
	if (!ret) {
		if (o->json)
			printf("{\"flows_removed\":%llu}\n", (unsigned long long)removed);
		else
			printf("%llu idle flows removed\n", (unsigned long long)removed);
	}
	sc_state_close(&st);
	return ret;
}
