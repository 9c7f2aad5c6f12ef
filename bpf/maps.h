/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * maps.h - the splitter's maps. Names and layouts come from flowsplit.h;
 * splitctl resizes the flow tables before load and pins them.
 */
#ifndef FS_MAPS_H
#define FS_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"

/* LRU: a flood of new 5-tuples evicts the least recently used flows instead
 * of failing inserts. Preallocated: memory is fixed at load time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FS_DEFAULT_FLOWS);
	__type(key, struct flow_key4);
	__type(value, struct flow_state);
} fs_flows4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FS_DEFAULT_FLOWS);
	__type(key, struct flow_key6);
	__type(value, struct flow_state);
} fs_flows6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct split_config);
} fs_config SEC(".maps");

/* One struct fs_stats per CPU and writer (enum fs_stats_key). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FS_STATS_KEYS);
	__type(key, __u32);
	__type(value, struct fs_stats);
} fs_stats SEC(".maps");

/* Rules by [port, prefix], read only when a flow starts counting and only
 * while split_config counts entries in them (rules.h). LPM tries must not
 * be preallocated.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FS_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rule_key4);
	__type(value, struct fs_rule);
} fs_rules4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FS_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rule_key6);
	__type(value, struct fs_rule);
} fs_rules6 SEC(".maps");

/* Spill grants: the agent's entry and the datapath's (flowsplit.h). Read
 * only for the long packets of a flow while FS_CFG_F_SPILL is set.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FS_SPILL_KEYS);
	__type(key, __u32);
	__type(value, struct fs_spill);
} fs_spill SEC(".maps");

#endif /* FS_MAPS_H */
