/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rules.h - the policy of a flow from the rules (fs_rules4/6), looked up
 * when the flow starts counting (its first packet, after idle expiry, after
 * a reshort gap), never per packet: the result is kept in the flow entry.
 *
 * With no rule of the packet's family (split_config.rules4/6 == 0) this is
 * one compare and no lookup. Otherwise each endpoint of the flow is looked
 * up twice, with its port and with port 0 (the rules without a port), and
 * the best match wins: the longest address prefix, then a rule with a port;
 * on a tie between the endpoints the destination's rule (looked up first).
 */
#ifndef FS_RULES_H
#define FS_RULES_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "maps.h"
#include "parse.h"

/* Precedence of a matching rule: prefix length first, then a port. */
static __always_inline __u32 rule_rank(const struct fs_rule *r)
{
	return (__u32)r->prefixlen * 2 + (r->flags & FS_RULE_F_PORT ? 1 : 0);
}

/* @r if it outranks @best (which may be NULL), else @best. */
static __always_inline const struct fs_rule *
rule_better(const struct fs_rule *best, const struct fs_rule *r)
{
	if (!r)
		return best;
	if (!best || rule_rank(r) > rule_rank(best))
		return r;
	return best;
}

static __always_inline const struct fs_rule *
rules_endpoint4(const struct fs_rule *best, __be32 addr, __be16 port)
{
	struct rule_key4 k = {
		.prefixlen = FS_RULE_PORT_BITS + 32,
		.port = port,
	};

	__builtin_memcpy(k.addr, &addr, sizeof(k.addr));
	best = rule_better(best, bpf_map_lookup_elem(&fs_rules4, &k));
	k.port = 0;
	return rule_better(best, bpf_map_lookup_elem(&fs_rules4, &k));
}

static __always_inline const struct fs_rule *
rules_endpoint6(const struct fs_rule *best, const __u8 *addr, __be16 port)
{
	struct rule_key6 k = {
		.prefixlen = FS_RULE_PORT_BITS + 128,
		.port = port,
	};

	__builtin_memcpy(k.addr, addr, sizeof(k.addr));
	best = rule_better(best, bpf_map_lookup_elem(&fs_rules6, &k));
	k.port = 0;
	return rule_better(best, bpf_map_lookup_elem(&fs_rules6, &k));
}

/*
 * The policy of the flow of @p (parsed as @r: PARSE_TCP4 or PARSE_TCP6)
 * into @pol; FS_MODE_GLOBAL when no rule matches. Counts a match in @s.
 */
static __always_inline void rules_policy(const struct split_config *cfg,
					 enum parse_result r,
					 const struct packet *p,
					 struct flow_policy *pol,
					 struct fs_stats *s)
{
	const struct fs_rule *best = NULL;

	if (r == PARSE_TCP4) {
		if (!cfg->rules4)
			return;
		best = rules_endpoint4(best, p->k4.daddr, p->k4.dport);
		best = rules_endpoint4(best, p->k4.saddr, p->k4.sport);
	} else {
		if (!cfg->rules6)
			return;
		best = rules_endpoint6(best, p->k6.daddr, p->k6.dport);
		best = rules_endpoint6(best, p->k6.saddr, p->k6.sport);
	}
	if (!best)
		return;
	*pol = best->policy;
	s->v[FS_STAT_RULE_MATCHES]++;
}

#endif /* FS_RULES_H */
