/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * map_def.h - one spelling of a BTF-defined map (libbpf's form), and of
 * the splitter's config map, which the splitter (maps.h) and the
 * duplication (dup.h) both declare: splitctl reuses the instance's pinned
 * fs_config. A macro, not a definition here, so that a program including
 * this (ref_count.bpf.c) creates no map it does not use.
 */
#ifndef FS_MAP_DEF_H
#define FS_MAP_DEF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"

/* A map NAME of TYPE with MAX entries of KEY -> VALUE (types). */
#define FS_MAP(name, map_type, max, key_t, value_t)	\
	struct {					\
		__uint(type, map_type);			\
		__uint(max_entries, max);		\
		__type(key, key_t);			\
		__type(value, value_t);			\
	} name SEC(".maps")

/* The same with map_flags (an LPM trie must be BPF_F_NO_PREALLOC). */
#define FS_MAP_FLAGS(name, map_type, max, flags, key_t, value_t) \
	struct {					\
		__uint(type, map_type);			\
		__uint(max_entries, max);		\
		__uint(map_flags, flags);		\
		__type(key, key_t);			\
		__type(value, value_t);			\
	} name SEC(".maps")

/* The splitter's config: one entry. */
#define FS_CONFIG_MAP() FS_MAP(fs_config, BPF_MAP_TYPE_ARRAY, 1, __u32, struct split_config)

#endif /* FS_MAP_DEF_H */
