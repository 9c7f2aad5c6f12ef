/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dup.h - the maps of the short-class duplication (dup.bpf.c) and what
 * decides it: which packets are copied, and the key that identifies a
 * segment at the peer. Layouts and names come from flowsplit.h.
 */
#ifndef FS_DUP_H
#define FS_DUP_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "flowsplit.h"
#include "map_def.h"
#include "parse.h"

/* The splitter's config: splitctl reuses the instance's pinned
 * fs_config, so the short code point is the one the splitter writes,
 * live. Not by including maps.h, whose flow tables would be created with
 * the object. */
FS_CONFIG_MAP();

FS_MAP(fs_dup_config, BPF_MAP_TYPE_ARRAY, 1, __u32, struct dup_config);

/* First copies, by segment. LRU and preallocated: a full table evicts
 * the least recently used entry, so an insert never fails for want of
 * room and a new segment is never taken for a copy. */
FS_MAP(fs_dup_seen4, BPF_MAP_TYPE_LRU_HASH, FS_DUP_DEFAULT_ENTRIES, struct dup_key4,
       struct dup_seen);
FS_MAP(fs_dup_seen6, BPF_MAP_TYPE_LRU_HASH, FS_DUP_DEFAULT_ENTRIES, struct dup_key6,
       struct dup_seen);

FS_MAP(fs_dup_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 1, __u32, struct fs_dup_stats);

/* TCP option kinds and the timestamp option's length (RFC 7323). */
#define FS_TCPOPT_EOL		0
#define FS_TCPOPT_NOP		1
#define FS_TCPOPT_TS		8
#define FS_TCPOLEN_TS		10
/* Option bytes scanned for the timestamp: the whole option space. */
#define FS_TCP_OPT_MAX		40

/* DSCP of a parsed TCP packet (the parser proved the IP header). */
static __always_inline __u8 dup_dscp(const struct packet *p,
				     enum parse_result r, void *data_end)
{
	if (r == PARSE_TCP4) {
		struct iphdr *iph = p->l3;

		if ((void *)(iph + 1) > data_end)
			return 0xff;
		return iph->tos >> FS_DSCP_SHIFT;
	}
	{
		struct ipv6hdr *ip6 = p->l3;

		if ((void *)(ip6 + 1) > data_end)
			return 0xff;
		return ((ip6->priority << 4) | (ip6->flow_lbl[0] >> 4)) >>
		       FS_DSCP_SHIFT;
	}
}

/*
 * The segments worth a copy: short-class (its DSCP is the short code
 * point) TCP segments that consume sequence space (payload, SYN or FIN).
 * A pure ACK is not copied: the next ACK covers a lost one (they are
 * cumulative), ack-short marks the ACK stream of bulk flows short (whose
 * copies would be bounded by nothing short), and a duplicated ACK that a
 * peer without dedup let through is a duplicate ACK to the sender, a loss
 * signal to fast retransmit. fs_dedup asks the same question, so the
 * packets it remembers are exactly those a peer's fs_dup copies.
 */
static __always_inline int dup_wanted(const struct packet *p,
				      enum parse_result r, void *data,
				      void *data_end, __u8 dscp_short)
{
	struct tcphdr *th = p->th;
	__u64 th_end;

	if (r != PARSE_TCP4 && r != PARSE_TCP6)
		return 0;
	if (dup_dscp(p, r, data_end) != dscp_short)
		return 0;
	th_end = (void *)th - data + th->doff * 4;
	return th_end < p->l3_end || th->syn || th->fin;
}

/* The option scan's state (bpf_loop: the verifier checks the step once,
 * where an open-coded loop over 40 option bytes explodes its states). */
struct tsopt_scan {
	__u8 opt[64];		/* the option bytes, zero beyond olen */
	__u32 olen;		/* option bytes of the segment, <= 40 */
	__u32 off;		/* the next option's offset */
	__be32 tsval;		/* found: network order */
};

static long tsopt_step(__u32 i, struct tsopt_scan *c)
{
	__u32 off = c->off, len;
	__u8 kind;

	(void)i;
	if (off >= c->olen || off >= FS_TCP_OPT_MAX)
		return 1;
	kind = c->opt[off & 63];
	if (kind == FS_TCPOPT_EOL)
		return 1;
	if (kind == FS_TCPOPT_NOP) {
		c->off = off + 1;
		return 0;
	}
	len = c->opt[(off + 1) & 63];
	if (len < 2 || off + len > c->olen)
		return 1;
	if (kind == FS_TCPOPT_TS) {
		if (len == FS_TCPOLEN_TS)
			c->tsval = bpf_htonl((__u32)c->opt[(off + 2) & 63] << 24 |
					     (__u32)c->opt[(off + 3) & 63] << 16 |
					     (__u32)c->opt[(off + 4) & 63] << 8 |
					     (__u32)c->opt[(off + 5) & 63]);
		return 1;
	}
	c->off = off + len;
	return 0;
}

/* The TCP timestamp value (network order), 0 without the option. Linux
 * puts NOP, NOP, TS first in every segment but the SYN: that layout is
 * read at once, any other is scanned. */
static __always_inline __be32 tcp_tsval(struct tcphdr *th, void *data_end)
{
	__u8 *opt = (void *)(th + 1);
	__u32 olen = th->doff * 4 - sizeof(*th);
	struct tsopt_scan c = {};
	__be32 v;

	if (olen >= 12 && opt + 12 <= (__u8 *)data_end &&
	    opt[0] == FS_TCPOPT_NOP && opt[1] == FS_TCPOPT_NOP &&
	    opt[2] == FS_TCPOPT_TS && opt[3] == FS_TCPOLEN_TS) {
		__builtin_memcpy(&v, opt + 4, sizeof(v));
		return v;
	}
	if (olen < FS_TCPOLEN_TS || olen > FS_TCP_OPT_MAX)
		return 0;
	/* tcp_ok() proved the options lie inside the linear part */
	if (opt + FS_TCP_OPT_MAX <= (__u8 *)data_end) {
		__builtin_memcpy(c.opt, opt, FS_TCP_OPT_MAX);
	} else {
		/* fewer than 40 bytes follow: copy byte by byte */
		int i;

		for (i = 0; i < FS_TCP_OPT_MAX; i++) {
			if (opt + i + 1 > (__u8 *)data_end)
				break;
			c.opt[i] = opt[i];
		}
	}
	c.olen = olen;
	bpf_loop(FS_TCP_OPT_MAX, tsopt_step, &c, 0);
	return c.tsval;
}

/* The segment's key (see struct dup_key4/6). */
static __always_inline void dup_key4_of(struct dup_key4 *k,
					const struct packet *p, void *data_end)
{
	struct iphdr *iph = p->l3;
	struct tcphdr *th = p->th;

	k->saddr = p->k4.saddr;
	k->daddr = p->k4.daddr;
	k->sport = p->k4.sport;
	k->dport = p->k4.dport;
	k->seq = th->seq;
	k->ack = th->ack_seq;
	if ((void *)(iph + 1) <= data_end) {
		k->ip_id = iph->id;
		k->len = bpf_ntohs(iph->tot_len);
	}
}

static __always_inline void dup_key6_of(struct dup_key6 *k,
					const struct packet *p, void *data_end)
{
	struct ipv6hdr *ip6 = p->l3;
	struct tcphdr *th = p->th;

	if ((void *)(ip6 + 1) <= data_end)
		k->len = bpf_ntohs(ip6->payload_len);
	__builtin_memcpy(k->saddr, p->k6.saddr, sizeof(k->saddr));
	__builtin_memcpy(k->daddr, p->k6.daddr, sizeof(k->daddr));
	k->sport = p->k6.sport;
	k->dport = p->k6.dport;
	k->seq = th->seq;
	k->ack = th->ack_seq;
	k->tsval = tcp_tsval(th, data_end);
}

#endif /* FS_DUP_H */
