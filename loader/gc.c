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

#include "bpfutil.h"
#include "commands.h"
#include "ops.h"

enum { GC_BATCH = 4096 };

static int expired(__u64 now, __u64 last_seen, __u64 idle)
{
	return (__s64)(now - last_seen) > (__s64)idle;
}

struct sweep {
	const struct sc_state *st;
	int fd;
	__u32 ksz;
	__u64 idle;
	__u8 *victims;		/* GC_BATCH keys */
	__u64 removed;
};

/* One batch of the scan: delete its expired entries, re-read first. */
static int sweep_batch(void *ctx, const void *keys, const void *values, __u32 count)
{
	const struct flow_state *vals = values;
	struct sweep *sw = ctx;
	struct flow_state cur;
	__u32 i, nv = 0, n;
	__u64 now;
	int err;

	err = sc_clock_now(sw->st, &now, NULL);
	if (err)
		return err;
	for (i = 0; i < count; i++) {
		const void *k = (const __u8 *)keys + (size_t)i * sw->ksz;

		if (!expired(now, vals[i].last_seen, sw->idle))
			continue;
		/* re-read: a packet may have arrived since the scan */
		if (bpf_map_lookup_elem(sw->fd, k, &cur) ||
		    !expired(now, cur.last_seen, sw->idle))
			continue;
		memcpy(sw->victims + (size_t)nv * sw->ksz, k, sw->ksz);
		nv++;
	}
	if (!nv)
		return 0;
	n = nv;
	LIBBPF_OPTS(bpf_map_batch_opts, dbo);
	err = bpf_map_delete_batch(sw->fd, sw->victims, &n, &dbo);
	sw->removed += n;
	return err && errno != ENOENT ? -errno : 0;
}

static int sweep_table(int fd, __u32 ksz, __u64 idle, const struct sc_state *st,
		       __u64 *removed)
{
	struct sweep sw = { .st = st, .fd = fd, .ksz = ksz, .idle = idle };
	int err;

	sw.victims = malloc((size_t)GC_BATCH * ksz);
	if (!sw.victims)
		return -ENOMEM;
	err = fs_map__for_each_batch(fd, GC_BATCH, FS_MAP_ITER_LOOKUP, sweep_batch,
				     &sw, NULL);
	free(sw.victims);
	*removed += sw.removed;
	return err;
}

int sc_gc_sweep(const struct sc_state *st, __u64 *removed)
{
	struct split_config cfg;
	__u64 n = 0;
	int ret;

	*removed = 0;
	ret = sc_config_read(st, &cfg);
	if (ret)
		return ret;
	ret = sweep_table(st->flows4_fd, sizeof(struct flow_key4), cfg.idle_jiffies, st, &n);
	if (!ret)
		ret = sweep_table(st->flows6_fd, sizeof(struct flow_key6),
				  cfg.idle_jiffies, st, &n);
	if (n)
		sc_stats_add(st, FS_STAT_FLOWS_SWEPT, n);
	*removed = n;
	return ret;
}

static int cmd_gc(const struct sc_call *c)
{
	int ret = FS_EXIT_OK, err;
	__u64 removed;

	err = sc_gc_sweep(c->st, &removed);
	if (err) {
		pr_err("gc: cannot sweep the flow table: %s", strerror(-err));
		ret = FS_EXIT_RUNTIME;
	} else {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "flows_removed", "%llu idle flows removed\n", removed);
		close_json_object();
	}
	return ret;
}

const struct sc_cmd sc_cmd_gc =
	SC_CMD("gc", cmd_gc, "", "remove idle flows once", sc_no_opts, struct sc_no_args,
	       .state = SC_STATE_LOCK);
