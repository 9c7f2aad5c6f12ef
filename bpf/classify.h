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
 * lookup, one flow-table lookup, an atomic add only while a count still
 * decides the class (below its threshold), no helper call beyond the
 * lookups, jiffies as the clock (inlined by the verifier). The rules are
 * looked up only when a flow starts counting (rules.h), and not at all
 * while none is configured; the flow entry keeps the result. With spill
 * on, a long packet adds the agent's fs_spill entry (an array lookup the
 * verifier inlines) and a compare with its flow's generation; a data
 * packet of a flow not spilled also reads the datapath's entry, and takes
 * a grant (compare-and-swap) only while one is open.
 */
#ifndef FS_CLASSIFY_H
#define FS_CLASSIFY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "maps.h"
#include "parse.h"
#include "rules.h"
#include "tcpseq.h"

/* This CPU's counters; never NULL for key 0 of a per-CPU array, but the
 * verifier wants the check.
 */
static __always_inline struct fs_stats *stats_get(void)
{
	__u32 key = FS_STATS_KEY_DATAPATH;

	return bpf_map_lookup_elem(&fs_stats, &key);
}

/*
 * Add @n to the counter @c (a flow's packets or payload); return its value
 * before.
 *
 * While the counter is below its threshold @limit, its values decide the
 * class, so they come from an atomic fetch-and-add: two CPUs carrying one
 * flow get disjoint numbers and exactly @limit packets (bytes) are counted
 * short. Once the counter has reached the limit every further packet is
 * long whatever its exact number, and the counter only grows (a plain add
 * stores at least the value it read plus one), so a plain add suffices:
 * it saves the locked instruction (~6 ns here) on every packet of an
 * established long flow. An increment lost to a simultaneous update on
 * another CPU makes only the flow's own count low; the per-CPU stats stay
 * exact.
 */
static __always_inline __u64 flow_add(__u64 *c, __u64 n, __u64 limit)
{
	__u64 before = *c;

	if (before < limit)
		return __sync_fetch_and_add(c, n);
	*c = before + n;
	return before;
}

/* A flow's thresholds as packet and payload counts at which it is long;
 * ~0 means never.
 */
struct flow_limits {
	__u64 packets;
	__u64 payload;
};

/*
 * The thresholds of a flow of policy @pol: the live global ones
 * (FS_MODE_GLOBAL: `set threshold` applies to the next packet of every
 * such flow), the policy's own (FS_MODE_AUTO), none (SHORT) or packet 0
 * (LONG). threshold-bytes 0 means no byte threshold.
 */
static __always_inline void flow_limits_of(const struct split_config *cfg,
					   const struct flow_policy *pol,
					   struct flow_limits *l)
{
	__u32 bytes;

	l->packets = ~0ULL;
	l->payload = ~0ULL;
	if (pol->mode == FS_MODE_GLOBAL) {
		l->packets = cfg->threshold;
		bytes = cfg->threshold_bytes;
	} else if (pol->mode == FS_MODE_AUTO) {
		if (pol->flags & FS_POLICY_F_THRESHOLD)
			l->packets = pol->threshold;
		bytes = pol->threshold_bytes;
	} else {
		if (pol->mode == FS_MODE_LONG)
			l->packets = 0;
		bytes = 0;
	}
	if (bytes)
		l->payload = bytes;
}

/*
 * The class of a packet whose flow had carried @packets packets and
 * @payload TCP payload bytes before it: short while both are below their
 * thresholds, long from the first one reached. *@cause gets the stat of
 * the threshold that made it long (packets first when both are reached).
 */
static __always_inline __u32 flow_class_of(const struct flow_limits *l,
					   __u64 packets, __u64 payload,
					   __u32 *cause)
{
	if (packets >= l->packets) {
		*cause = FS_STAT_PROMOTED_PKTS;
		return FS_CLASS_LONG;
	}
	if (payload >= l->payload) {
		*cause = FS_STAT_PROMOTED_BYTES;
		return FS_CLASS_LONG;
	}
	return FS_CLASS_SHORT;
}

/* One flow, as flow_count() leaves it for the class decision. */
struct flow_view {
	struct flow_state *st;	/* entry to record the class in; NULL when a
				 * new entry was inserted with its class */
	__u64 packets;		/* the flow's packets before this packet */
	__u64 payload;		/* its TCP payload bytes before this packet */
	struct flow_limits limits;
	__u64 len;		/* this packet's TCP payload bytes */
	__u64 now;		/* bpf_jiffies64() */
};

/*
 * (Re)start counting the flow in @st with this packet: counters from this
 * packet only, the policy from the rules, the class of its first packet
 * (so starting long, by rule or threshold 0, is no promotion).
 *
 * @midstream: the table lost the flow's start (its entry was missing or
 * had expired) and this packet is not a SYN, so the connection carried
 * packets before that nobody counted. The entry records it; with
 * `midstream long` a flow under the thresholds (global or a rule's auto)
 * starts long and stays long until its next start, while rules with mode
 * short or long keep their class. The default, short, treats it as new:
 * an evicted bulk flow then sends at most one threshold of packets short
 * again, whereas starting long would send every request of a persistent
 * connection that resumed after idle-timeout, or after a router restart,
 * over the long tunnel for the rest of its life.
 */
static __always_inline void flow_start(struct flow_state *st,
				       const struct split_config *cfg,
				       enum parse_result r,
				       const struct packet *p, __u32 segs,
				       __u64 bytes, __u64 payload, __u64 now,
				       int midstream, struct fs_stats *s,
				       struct flow_view *v)
{
	__u32 cause;

	st->packets = segs;
	st->bytes = bytes;
	st->payload = payload;
	st->last_seen = now;
	__builtin_memset(&st->policy, 0, sizeof(st->policy));
	rules_policy(cfg, r, p, &st->policy, s);
	if (midstream) {
		st->policy.flags |= FS_POLICY_F_MIDSTREAM;
		if ((cfg->flags & FS_CFG_F_MIDSTREAM_LONG) &&
		    (st->policy.mode == FS_MODE_GLOBAL ||
		     st->policy.mode == FS_MODE_AUTO))
			st->policy.mode = FS_MODE_LONG;
	}
	flow_limits_of(cfg, &st->policy, &v->limits);
	st->class = flow_class_of(&v->limits, 0, 0, &cause);
	v->packets = 0;
	v->payload = 0;
}

/* TCP payload bytes of the packet (of all segments of a GRO packet). */
static __always_inline __u64 packet_payload(const struct packet *p, void *data)
{
	return p->l3_end - packet_hdr_len(p, data);
}

/*
 * Count @segs packets of @bytes wire bytes in the flow of @p (parsed as
 * @r, in @data) and fill @v: the flow's counts BEFORE them (0 for a new or
 * restarted flow, so the first of them is packet number v->packets + 1)
 * and its thresholds.
 *
 * The byte count and last-seen time are plain stores: they decide nothing,
 * and an increment lost when two CPUs update one flow in the same instant
 * only makes the byte count low (RSS keeps a flow on one CPU in practice).
 * The TCP payload is counted only while a byte threshold applies to the
 * flow (reading it from the packet per packet cost ~5 ns in the benchmark).
 * One compare per packet tells a flow that goes on from one whose silence
 * ended it (quiet_jiffies, the shorter of the two): a flow idle for longer
 * than the timeout restarts (checked here, at packet time; the user-space
 * sweep only reclaims memory); one silent for longer than the reshort gap
 * (when set) starts counting again in its entry. A flow that goes on
 * starts counting again in its entry at a message boundary (tcpseq.h;
 * with FS_CFG_F_RESHORT_BOUNDARY); its sequence state is tracked in every
 * case. Silence is measured in
 * jiffies against timeouts rounded up, so it is always longer than the
 * configured time when it ends a flow. A flow missing from the table whose
 * packet is not a SYN counts in flows_midstream: its entry was evicted by a
 * flood (LRU) or swept, the router restarted, or routing is asymmetric.
 */
static __always_inline void flow_count(void *flows, void *key,
				       enum parse_result r,
				       const struct packet *p, void *data,
				       __u32 segs, __u64 bytes,
				       const struct split_config *cfg,
				       struct fs_stats *s,
				       struct flow_view *v)
{
	__u64 now = bpf_jiffies64(), age, payload = packet_payload(p, data);
	struct flow_state *st, fresh = {};
	int midstream;

	v->len = payload;
	v->now = now;
	st = bpf_map_lookup_elem(flows, key);
	if (st) {
		v->st = st;
		age = now - st->last_seen;
		if ((__s64)age <= (__s64)cfg->quiet_jiffies) {
			if (seq_track(st, p, payload,
				      cfg->flags & FS_CFG_F_RESHORT_BOUNDARY)) {
				/* a new message: count afresh */
				s->v[FS_STAT_FLOWS_RESHORT]++;
				s->v[FS_STAT_RESHORT_BOUNDARY]++;
				st->boundaries++;
				flow_start(st, cfg, r, p, segs, bytes, payload,
					   now, 0, s, v);
				return;
			}
			st->bytes += bytes;
			if (st->last_seen != now)
				st->last_seen = now;
			flow_limits_of(cfg, &st->policy, &v->limits);
			v->payload = 0;
			if (v->limits.payload != ~0ULL)
				v->payload = flow_add(&st->payload, payload,
						      v->limits.payload);
			v->packets = flow_add(&st->packets, segs, v->limits.packets);
			return;
		}
		seq_track(st, p, payload, 0);
		midstream = 0;
		if ((__s64)age > (__s64)cfg->idle_jiffies) {
			/* expired: this packet starts a new incarnation */
			st->first_seen = now;
			s->v[FS_STAT_FLOWS_EXPIRED]++;
			s->v[FS_STAT_FLOWS_NEW]++;
			midstream = !p->th->syn;
		} else {
			/* a flowlet after a long enough gap: count afresh */
			s->v[FS_STAT_FLOWS_RESHORT]++;
			s->v[FS_STAT_RESHORT_GAP]++;
		}
		flow_start(st, cfg, r, p, segs, bytes, payload, now, midstream,
			   s, v);
		return;
	}

	midstream = !p->th->syn;
	fresh.first_seen = now;
	seq_init(&fresh, p, payload);
	flow_start(&fresh, cfg, r, p, segs, bytes, payload, now, midstream,
		   s, v);
	v->st = NULL;	/* class already recorded */
	if (bpf_map_update_elem(flows, key, &fresh, BPF_NOEXIST) == 0) {
		s->v[FS_STAT_FLOWS_NEW]++;
		if (midstream)
			s->v[FS_STAT_FLOWS_MIDSTREAM]++;
		return;
	}
	/* Another CPU inserted the same flow first: count on its entry. */
	st = bpf_map_lookup_elem(flows, key);
	v->st = st;
	if (!st) {
		s->v[FS_STAT_INSERT_FAIL]++;
		return;
	}
	seq_track(st, p, payload, 0);
	st->bytes += bytes;
	flow_limits_of(cfg, &st->policy, &v->limits);
	v->payload = flow_add(&st->payload, payload, v->limits.payload);
	v->packets = flow_add(&st->packets, segs, v->limits.packets);
}

/* Record a flow's promotion to long; count it once, by its cause, even
 * when several CPUs see it at the same time. The stored class goes back
 * to short only when the flow starts counting again (flow_start()): a
 * CPU that classified the packet before the crossing short, and stores
 * it after the crossing one stored long, must not undo the promotion
 * (the next long packet would count it twice).
 */
static __always_inline void flow_set_class(struct flow_state *st,
					   __u32 class, __u32 cause,
					   struct fs_stats *s)
{
	if (!st || class != FS_CLASS_LONG || st->class == FS_CLASS_LONG)
		return;
	if (__sync_lock_test_and_set(&st->class, class) == FS_CLASS_SHORT) {
		s->v[FS_STAT_FLOWS_PROMOTED]++;
		if (cause == FS_STAT_PROMOTED_BYTES)
			s->v[FS_STAT_PROMOTED_BYTES]++;
		else
			s->v[FS_STAT_PROMOTED_PKTS]++;
	}
}

/*
 * Spill (flowsplit.h, fs_spill): does a long packet of the flow @v carry
 * the spill code point? Yes while the flow holds a grant of the agent's
 * current generation and the agent's lease (lease_jiffies) holds. A
 * data packet of a flow without one takes an open grant, in two
 * compare-and-swaps: first it claims the flow (FS_POLICY_F_SPILL_CLAIM
 * in its policy word), then it takes a grant on
 * the datapath's taken count. So a grant goes to one flow, and a flow
 * takes one grant, even when two CPUs try at once; a loser stays long
 * and may try again with its next packet, and a claim that got no grant
 * is dropped. Pure ACKs and empty segments never take one: a download's
 * ACK stream would waste it. @was_long: the flow's previous packet was
 * long, so its packets may still queue in the LONG tunnel (counted in
 * moved; the agent holds the scavenger class for that). A grant taken
 * counts in spill_flows (FS_STAT_FLOWS_SPILLED).
 * A new entry (v->st NULL) takes nothing with its first packet.
 */
static __always_inline int flow_spill(const struct flow_view *v,
				      int was_long, struct fs_stats *s)
{
	struct flow_state *st = v->st;
	struct flow_policy was = {}, claim = {}, won = {};
	struct fs_spill *a, *d;
	__u32 key = FS_SPILL_KEY_AGENT;
	__u64 t;
	__u16 gen;

	a = bpf_map_lookup_elem(&fs_spill, &key);
	if (!a || !st)
		return 0;
	gen = *(volatile __u16 *)&a->gen;
	/* no generation, or its lease ran out (the agent died): not spilled */
	if (!gen || v->now > *(volatile __u64 *)&a->lease_jiffies)
		return 0;
	was.head = *(volatile __u32 *)&st->policy.head;
	if (was.spill == gen)
		return 1;
	if (!v->len || (was.flags & FS_POLICY_F_SPILL_CLAIM))
		return 0;
	key = FS_SPILL_KEY_DATAPATH;
	d = bpf_map_lookup_elem(&fs_spill, &key);
	if (!d)
		return 0;
	t = d->taken;
	if (t >= a->grants)
		return 0;
	claim.head = was.head;
	claim.flags |= FS_POLICY_F_SPILL_CLAIM;
	if (__sync_val_compare_and_swap(&st->policy.head, was.head,
					claim.head) != was.head)
		return 0;
	won.head = was.head;
	won.spill = gen;
	if (__sync_val_compare_and_swap(&d->taken, t, t + 1) != t) {
		/* drop the claim, unless the flow started again meanwhile */
		__sync_val_compare_and_swap(&st->policy.head, claim.head,
					    was.head);
		return 0;
	}
	/* the flow is ours: only a restart (idle expiry, re-short) can have
	 * rewritten its policy since, and then the new start holds the grant */
	if (__sync_val_compare_and_swap(&st->policy.head, claim.head,
					won.head) != claim.head)
		st->policy.spill = gen;
	s->v[FS_STAT_FLOWS_SPILLED]++;
	if (was_long)
		__sync_fetch_and_add(&d->moved, 1);
	d->taken_jiffies = v->now;
	return 1;
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
 *
 * The byte threshold works the same way on TCP payload bytes: a packet is
 * short while the flow carried fewer than threshold-bytes payload bytes
 * BEFORE it (so the packet that crosses the threshold is still short, the
 * next one long); a GRO packet's payload is all of its segments'. With
 * both thresholds the flow turns long at the first one it reaches.
 *
 * With FS_CFG_F_SPILL, a long packet of a spilled flow (flow_spill())
 * carries dscp_spill; it is counted as long. The packet that promotes a
 * flow may take a grant, so a flow spilled at its promotion never leaves
 * the SHORT tunnel. A pure ACK made short by ack-short stays short.
 */
static __always_inline int fs_classify(const struct split_config *cfg,
				       struct fs_stats *s, enum parse_result r,
				       const struct packet *p, void *data,
				       __u32 segs, __u64 bytes)
{
	struct flow_view v;
	__u32 class, cause = FS_STAT_PROMOTED_PKTS;
	int was_long;

	switch (r) {
	case PARSE_TCP4:
		flow_count(&fs_flows4, (void *)&p->k4, r, p, data, segs, bytes,
			   cfg, s, &v);
		break;
	case PARSE_TCP6:
		flow_count(&fs_flows6, (void *)&p->k6, r, p, data, segs, bytes,
			   cfg, s, &v);
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

	class = flow_class_of(&v.limits, v.packets, v.payload, &cause);
	was_long = v.st && v.st->class == FS_CLASS_LONG;
	flow_set_class(v.st, class, cause, s);
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
	if ((cfg->flags & FS_CFG_F_SPILL) && flow_spill(&v, was_long, s)) {
		s->v[FS_STAT_PKTS_SPILL] += segs;
		s->v[FS_STAT_BYTES_SPILL] += bytes;
		return cfg->dscp_spill;
	}
	return cfg->dscp_long;
}

#endif /* FS_CLASSIFY_H */
