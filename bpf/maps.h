/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * maps.h - the splitter's maps. Names and layouts come from flowsplit.h;
 * splitctl resizes the flow tables before load and pins them.
 */
#ifndef FS_MAPS_H
#define FS_MAPS_H

#include "map_def.h"

/* LRU: a flood of new 5-tuples evicts the least recently used flows instead
 * of failing inserts. Preallocated: memory is fixed at load time.
 */
FS_MAP(fs_flows4, BPF_MAP_TYPE_LRU_HASH, FS_DEFAULT_FLOWS, struct flow_key4, struct flow_state);
FS_MAP(fs_flows6, BPF_MAP_TYPE_LRU_HASH, FS_DEFAULT_FLOWS, struct flow_key6, struct flow_state);

FS_CONFIG_MAP();

/* One struct fs_stats per CPU and writer (enum fs_stats_key). */
FS_MAP(fs_stats, BPF_MAP_TYPE_PERCPU_ARRAY, FS_STATS_KEYS, __u32, struct fs_stats);

/* Rules by [port, prefix], read only when a flow starts counting and only
 * while split_config counts entries in them (rules.h). LPM tries must not
 * be preallocated.
 */
FS_MAP_FLAGS(fs_rules4, BPF_MAP_TYPE_LPM_TRIE, FS_MAX_RULES, BPF_F_NO_PREALLOC,
	     struct rule_key4, struct fs_rule);
FS_MAP_FLAGS(fs_rules6, BPF_MAP_TYPE_LPM_TRIE, FS_MAX_RULES, BPF_F_NO_PREALLOC,
	     struct rule_key6, struct fs_rule);

/* Spill grants: the agent's entry and the datapath's (flowsplit.h). Read
 * only for the long packets of a flow while FS_CFG_F_SPILL is set.
 */
FS_MAP(fs_spill, BPF_MAP_TYPE_ARRAY, FS_SPILL_KEYS, __u32, struct fs_spill);

#endif /* FS_MAPS_H */
