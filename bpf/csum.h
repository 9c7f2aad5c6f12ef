/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* csum.h - DSCP rewrite with incremental checksum update (RFC 1624). */
#ifndef FS_CSUM_H
#define FS_CSUM_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"

/*
 * RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), on 16-bit words exactly as stored
 * in the packet (ones' complement arithmetic is byte-order independent).
 * A checksum that was wrong before stays wrong by the same amount after.
 */
static __always_inline __u16 csum_replace16(__u16 check, __u16 old, __u16 new)
{
	__u32 s = (__u16)~check + (__u16)~old + (__u32)new;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* Set the DSCP of an IPv4 header; ECN bits kept. No write when unchanged. */
static __always_inline void ipv4_set_dscp(struct iphdr *iph, __u8 dscp)
{
	__u8 tos = FS_DSCP_TO_TOS(dscp) | (iph->tos & FS_ECN_MASK);
	__u16 old, new;

	if (tos == iph->tos)
		return;
	old = *(__u16 *)iph;	/* version/IHL and TOS */
	iph->tos = tos;
	new = *(__u16 *)iph;
	iph->check = csum_replace16(iph->check, old, new);
}

/*
 * Set the DSCP of an IPv6 header. The traffic class straddles the first two
 * bytes: version(4) | TC(8) | flow label(20). Version, flow label and the
 * ECN bits are kept. No write when unchanged.
 * Returns the change to the ones' complement sum of the header (a 32-bit
 * partial sum, byte-order independent like csum_replace16) for a hook that
 * must keep a CHECKSUM_COMPLETE skb->csum right; 0 when nothing changed.
 */
static __always_inline __u32 ipv6_set_dscp(struct ipv6hdr *ip6, __u8 dscp)
{
	__u8 *b = (__u8 *)ip6;
	__u8 tc = (b[0] << 4) | (b[1] >> 4);
	__u8 ntc = FS_DSCP_TO_TOS(dscp) | (tc & FS_ECN_MASK);
	__u16 old, new;

	if (ntc == tc)
		return 0;
	old = *(__u16 *)b;
	b[0] = (b[0] & 0xf0) | (ntc >> 4);
	b[1] = (b[1] & 0x0f) | (ntc << 4);
	new = *(__u16 *)b;
	return (__u16)~old + (__u32)new;
}

#endif /* FS_CSUM_H */
