/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * classify.h - the one classification function both hooks share.
 *
 * fs_classify() takes a parsed packet that stands for @segs wire packets
 * (1 at XDP; gso_segs of a GRO/GSO skb at TC) of @bytes wire bytes, counts
 * them in their flow and in the stats, and returns the DSCP the packet must
 * carry. It never touches the packet: the hook's glue writes the DSCP (XDP
 * and TC differ in how a header write keeps the skb's checksum state right).
 *
 * Cost contract, per established-flow packet: one config lookup, one stats
 * lookup, one flow-table lookup, an atomic add only while the packet count
 * still decides the class (below the threshold), no helper call beyond the
 * lookups, jiffies as the clock (inlined by the verifier).
 */
#ifndef FS_CLASSIFY_H
#define FS_CLASSIFY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "maps.h"
#include "parse.h"

/* This CPU's counters; never NULL for key 0 of a per-CPU array, but the
 * verifier wants the check.
 */
static __always_inline struct fs_stats *stats_get(void)
{
	__u32 key = FS_STATS_KEY_DATAPATH;

	return bpf_map_lookup_elem(&fs_stats, &key);
}

/*
 * Add @segs to the flow's packet count; return the count before.
 *
 * While the count is below the threshold, the packet numbers decide the
 * class, so they come from an atomic fetch-and-add: two CPUs carrying one
 * flow get disjoint numbers and exactly @threshold packets are short. Once
 * the count has reached the threshold every further packet is long whatever
 * its exact number, and the count only grows (a plain add stores at least
 * the value it read plus one), so a plain add suffices: it saves the
 * locked instruction (~6 ns here) on every packet of an established long
 * flow. An increment lost to a simultaneous update on another CPU makes
 * only the flow's own packet count low; the per-CPU stats stay exact.
 */
static __always_inline __u64 flow_add_packets(struct flow_state *st,
					      __u32 segs, __u32 threshold)
{
	__u64 before = st->packets;

	if (before < threshold)
		return __sync_fetch_and_add(&st->packets, segs);
	st->packets = before + segs;
	return before;
}

/*
 * Count @segs packets of @bytes in the flow @key of @flows and return how
 * many packets the flow had BEFORE them (0 for a new or restarted flow), so
 * the first of them is packet number (return value + 1).
 *
 * The byte count and last-seen time are plain stores: they decide nothing,
 * and an increment lost when two CPUs update one flow in the same instant
 * only makes the byte count low (RSS keeps a flow on one CPU in practice).
 * A flow idle for longer than the timeout restarts (checked here, at packet
 * time; the user-space sweep only reclaims memory).
 */
static __always_inline __u64 flow_count(void *flows, void *key, __u32 segs,
					__u64 bytes,
					const struct split_config *cfg,
					struct fs_stats *s,
					struct flow_state **stp)
{
	__u64 now = bpf_jiffies64();
	struct flow_state *st, fresh = {};

	st = bpf_map_lookup_elem(flows, key);
	if (st) {
		*stp = st;
		if ((__s64)(now - st->last_seen) <= (__s64)cfg->idle_jiffies) {
			st->bytes += bytes;
			if (st->last_seen != now)
				st->last_seen = now;
			return flow_add_packets(st, segs, cfg->threshold);
		}
		/* expired: this packet starts a new incarnation */
		st->packets = segs;
		st->bytes = bytes;
		st->first_seen = now;
		st->last_seen = now;
		s->v[FS_STAT_FLOWS_EXPIRED]++;
		s->v[FS_STAT_FLOWS_NEW]++;
		return 0;
	}

	fresh.packets = segs;
	fresh.bytes = bytes;
	fresh.first_seen = now;
	fresh.last_seen = now;
	fresh.class = cfg->threshold ? FS_CLASS_SHORT : FS_CLASS_LONG;
	if (bpf_map_update_elem(flows, key, &fresh, BPF_NOEXIST) == 0) {
		s->v[FS_STAT_FLOWS_NEW]++;
		*stp = NULL;	/* class already recorded */
		return 0;
	}
	/* Another CPU inserted the same flow first: count on its entry. */
	st = bpf_map_lookup_elem(flows, key);
	*stp = st;
	if (!st) {
		s->v[FS_STAT_INSERT_FAIL]++;
		return 0;
	}
	st->bytes += bytes;
	return flow_add_packets(st, segs, cfg->threshold);
}

/* Record the flow's class; count a short->long transition once even when
 * several CPUs see it at the same time.
 */
static __always_inline void flow_set_class(struct flow_state *st,
					   __u32 class, struct fs_stats *s)
{
	if (!st || st->class == class)
		return;
	if (__sync_lock_test_and_set(&st->class, class) == FS_CLASS_SHORT &&
	    class == FS_CLASS_LONG)
		s->v[FS_STAT_FLOWS_PROMOTED]++;
}

/*
 * fs_classify - the splitter's decision for one parsed packet.
 * @r:     parse_packet()'s result for it
 * @segs:  wire packets it stands for (>= 1)
 * @bytes: their wire bytes, Ethernet headers included
 * Returns the DSCP to write (0..63), or -1: leave the packet as it is.
 *
 * A GRO packet of n segments whose flow had c packets before holds packets
 * c+1..c+n. It is marked (all n segments) with the class of its FIRST
 * segment, c+1: a flow of at most threshold packets is never marked long,
 * and the flow's count stays exact (c+n), so the next packet is long when
 * c+n >= threshold. The stats count every segment under the mark it left
 * with.
 */
static __always_inline int fs_classify(const struct split_config *cfg,
				       struct fs_stats *s, enum parse_result r,
				       const struct packet *p, void *data,
				       __u32 segs, __u64 bytes)
{
	struct flow_state *st;
	__u64 before;
	__u32 class;

	switch (r) {
	case PARSE_TCP4:
		before = flow_count(&fs_flows4, (void *)&p->k4, segs, bytes,
				    cfg, s, &st);
		break;
	case PARSE_TCP6:
		before = flow_count(&fs_flows6, (void *)&p->k6, segs, bytes,
				    cfg, s, &st);
		break;
	case PARSE_NON_TCP:
		s->v[FS_STAT_PASS_NON_TCP] += segs;
		return -1;
	case PARSE_FRAGMENT:
		s->v[FS_STAT_PASS_FRAGMENT] += segs;
		return -1;
	case PARSE_NON_IP:
		s->v[FS_STAT_PASS_NON_IP] += segs;
		return -1;
	case PARSE_EXTHDR:
		s->v[FS_STAT_PASS_EXTHDR] += segs;
		return -1;
	default:
		s->v[FS_STAT_PASS_MALFORMED] += segs;
		return -1;
	}

	class = before < cfg->threshold ? FS_CLASS_SHORT : FS_CLASS_LONG;
	flow_set_class(st, class, s);
	if (class == FS_CLASS_LONG && (cfg->flags & FS_CFG_F_ACK_SHORT) &&
	    tcp_pure_ack(p, data)) {
		class = FS_CLASS_SHORT;
		s->v[FS_STAT_ACKS_SHORT] += segs;
	}
	if (class == FS_CLASS_SHORT) {
		s->v[FS_STAT_PKTS_SHORT] += segs;
		s->v[FS_STAT_BYTES_SHORT] += bytes;
		return cfg->dscp_short;
	}
	s->v[FS_STAT_PKTS_LONG] += segs;
	s->v[FS_STAT_BYTES_LONG] += bytes;
	return cfg->dscp_long;
}

#endif /* FS_CLASSIFY_H */
