/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpfutil.h - splitctl's user-space BPF helpers: batched map iteration,
 * map capacity and fill, the names of the datapath's counters (from the
 * FS_STATS and FS_DUP_STATS X-macros of bpf/flowsplit.h) and of the XDP
 * attach modes. They
 * live with splitctl, their only user, so lib/ knows nothing of bpf/.
 *
 * Library-like code: every function returns 0 (or a count) or a negative
 * errno and prints nothing; the caller words the error.
 */
#ifndef FS_BPFUTIL_H
#define FS_BPFUTIL_H

#include <stdbool.h>
#include <linux/types.h>
#include "flowsplit.h"

/*
 * Called once per batch with count keys and values packed back to back
 * (key_size / value_size bytes each, as the map declares them). A non-zero
 * return stops the iteration and is returned by fs_map__for_each_batch().
 */
typedef int (*fs_map_batch_fn)(void *ctx, const void *keys,
			       const void *values, __u32 count);

enum fs_map_iter {
	FS_MAP_ITER_LOOKUP,		/* read only */
	FS_MAP_ITER_LOOKUP_DELETE,	/* read and remove every entry */
};

/*
 * Walk a hash map with BPF_MAP_LOOKUP(_AND_DELETE)_BATCH, batch entries per
 * syscall (deleting key by key from get_next_key(NULL) rescans the buckets
 * from the start each time: 65 s for 200 000 flows). fn may be NULL (only
 * count). *seen (may be NULL) gets the number of entries visited.
 * 0, fn's non-zero return, or -errno.
 */
int fs_map__for_each_batch(int fd, __u32 batch, enum fs_map_iter how,
			   fs_map_batch_fn fn, void *ctx, __u64 *seen);

/* max_entries of a map, 0 when it cannot be read. */
__u32 fs_map__capacity(int fd);
/* Entries in a hash map (batched; walks the keys where batches are not
 * supported). 0 or -errno. */
int fs_map__count(int fd, __u64 *count);

/* A counter of the datapath: its name ("packets_short": the JSON key, and
 * the Prometheus series without its flowsplit_ and _total) and one-line
 * description, by index: fs_stats' (FS_STATS), fs_dup_stats'
 * (FS_DUP_STATS). */
struct fs_stat_desc {
	const char *name, *help;
};
extern const struct fs_stat_desc fs_stat_descs[FS_STAT_MAX];
extern const struct fs_stat_desc fs_dup_stat_descs[FS_DUP_STAT_MAX];

/* fs_stat_descs[id].name (NULL for an index out of range). */
const char *fs_stat_name(enum fs_stat id);
/* One-line description of the counter. */
const char *fs_stat_help(enum fs_stat id);

/* "native", "generic", "offload" or "none", from a XDP_ATTACHED_* value. */
const char *fs_xdp_mode_name(__u8 attach_mode);

#endif /* FS_BPFUTIL_H */
