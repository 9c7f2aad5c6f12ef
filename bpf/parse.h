/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * parse.h - bounds-checked header parsing for the splitter.
 *
 * Every function reads only after proving the bytes are inside the frame and
 * never writes. The result says either "TCP, here is the flow" or why the
 * packet is not classified (the stat to count).
 *
 * Two ends: reads are bounded by data_end (at TC, the end of the skb's
 * linear part), while the IP lengths are checked against the packet's
 * length, pkt_len (at TC, skb->len: the payload of a large or GRO packet
 * lies in page fragments past data_end). At XDP both are the frame's end.
 * Lengths are compared as offsets from the frame start (scalars), never by
 * adding a length to a packet pointer.
 */
#ifndef FS_PARSE_H
#define FS_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "flowsplit.h"

/* Not in the UAPI headers. */
struct fs_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

#define FS_IP_OFFSET	0x1fff		/* IPv4 fragment offset mask */
#define FS_IP6_OFFSET	0xfff8		/* IPv6 fragment header offset mask */
/* TC: bytes pulled into the linear part when the headers are not all there
 * (Ethernet + 2 VLAN tags + IPv4 with options + TCP with options = 142;
 * IPv6 with typical extension headers fits too).
 */
#define FS_TC_PULL_LEN	256

enum parse_result {
	PARSE_TCP4,
	PARSE_TCP6,
	PARSE_NON_TCP,
	PARSE_FRAGMENT,
	PARSE_NON_IP,
	PARSE_MALFORMED,
	PARSE_EXTHDR,
};

struct packet {
	void *l3;		/* IPv4 or IPv6 header, inside the frame */
	struct tcphdr *th;	/* TCP header, inside the frame and the packet */
	__u64 l3_end;		/* offset of the end of the IP packet from the
				 * frame start (tot_len / payload_len) */
	union {
		struct flow_key4 k4;
		struct flow_key6 k6;
	};
};

/* Ethernet plus up to FS_MAX_VLAN_TAGS 802.1Q / 802.1ad tags.
 * Returns the L3 ethertype (network order) and sets *l3, or 0 if truncated.
 */
static __always_inline __be16 parse_eth(void *data, void *data_end, void **l3)
{
	struct ethhdr *eth = data;
	struct fs_vlan_hdr *vh;
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > data_end)
		return 0;
	proto = eth->h_proto;
	vh = (void *)(eth + 1);
#pragma unroll
	for (i = 0; i < FS_MAX_VLAN_TAGS; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > data_end)
			return 0;
		proto = vh->encap_proto;
		vh++;
	}
	*l3 = vh;
	return proto;
}

/* TCP header at @th, which must end within the IP packet (offset @l3_end
 * from @data) and the readable frame; the data offset must cover at least
 * the fixed header.
 */
static __always_inline int tcp_ok(struct tcphdr *th, void *data,
				  void *data_end, __u64 l3_end)
{
	__u64 th_off = (void *)th - data;

	if ((void *)(th + 1) > data_end || th_off + sizeof(*th) > l3_end)
		return 0;
	if (th->doff < 5)
		return 0;
	return th_off + th->doff * 4 <= l3_end &&
	       (void *)th + th->doff * 4 <= data_end;
}

/* A pure ACK: the TCP header (checked by tcp_ok) ends the IP packet, ACK is
 * set and none of SYN, FIN, RST. Only asked for a long flow's packets with
 * ack-short on, so the common path never reads the flags.
 */
static __always_inline int tcp_pure_ack(const struct packet *p, void *data)
{
	struct tcphdr *th = p->th;
	__u64 th_off = (void *)th - data;

	return th_off + th->doff * 4 == p->l3_end && th->ack &&
	       !(th->syn | th->fin | th->rst);
}

/* Bytes from the start of the frame to the end of the TCP header: what
 * every segment of a GRO/GSO packet repeats on the wire.
 */
static __always_inline __u32 packet_hdr_len(const struct packet *p,
					    void *data)
{
	__u64 th_off = (void *)p->th - data;

	return th_off + p->th->doff * 4;
}

/*
 * @rev (a constant at every call site): fill the key of the OTHER direction
 * (source and destination swapped), as the observer looks up the flow
 * whose ACKs this packet carries.
 */
static __always_inline enum parse_result parse_ipv4(struct packet *p,
						    void *data, void *data_end,
						    __u32 pkt_len, int rev)
{
	struct iphdr *iph = p->l3;
	__u64 l3_off = (void *)iph - data;
	struct tcphdr *th;
	__u32 ihl, tot;

	if ((void *)(iph + 1) > data_end)
		return PARSE_MALFORMED;
	ihl = iph->ihl * 4;
	if (iph->version != 4 || ihl < sizeof(*iph))
		return PARSE_MALFORMED;
	if ((void *)iph + ihl > data_end)
		return PARSE_MALFORMED;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < ihl || l3_off + tot > pkt_len)
		return PARSE_MALFORMED;
	/* Non-first fragments carry no ports: never read past the header. */
	if (iph->frag_off & bpf_htons(FS_IP_OFFSET))
		return PARSE_FRAGMENT;
	if (iph->protocol != IPPROTO_TCP)
		return PARSE_NON_TCP;

	th = (void *)iph + ihl;
	if (!tcp_ok(th, data, data_end, l3_off + tot))
		return PARSE_MALFORMED;

	p->k4.saddr = rev ? iph->daddr : iph->saddr;
	p->k4.daddr = rev ? iph->saddr : iph->daddr;
	p->k4.sport = rev ? th->dest : th->source;
	p->k4.dport = rev ? th->source : th->dest;
	p->k4.proto = IPPROTO_TCP;
	p->th = th;
	p->l3_end = l3_off + tot;
	return PARSE_TCP4;
}

/* Generic IPv6 extension header: next header, length in 8-octet units
 * (not counting the first 8 octets). AH counts in 4-octet units instead.
 */
struct fs_ip6_ext {
	__u8 nexthdr;
	__u8 hdrlen;
	__be16 frag_off;	/* meaningful in the Fragment header only */
	__u32 rest;
};

static __always_inline enum parse_result parse_ipv6(struct packet *p,
						    void *data, void *data_end,
						    __u32 pkt_len, int rev)
{
	struct ipv6hdr *ip6 = p->l3;
	struct fs_ip6_ext *ext;
	struct tcphdr *th;
	__u64 l3_end;
	void *pos;
	__u8 nh;
	int i;

	if ((void *)(ip6 + 1) > data_end)
		return PARSE_MALFORMED;
	if (ip6->version != 6)
		return PARSE_MALFORMED;
	l3_end = (__u64)((void *)(ip6 + 1) - data) + bpf_ntohs(ip6->payload_len);
	if (l3_end > pkt_len)
		return PARSE_MALFORMED;

	nh = ip6->nexthdr;
	pos = ip6 + 1;
	/* bounded loop: the verifier walks it, no unrolling needed */
	for (i = 0; i < FS_MAX_IPV6_EXT_HDRS; i++) {
		if (nh == IPPROTO_TCP)
			break;
		ext = pos;
		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if ((void *)(ext + 1) > data_end)
				return PARSE_MALFORMED;
			nh = ext->nexthdr;
			pos += (ext->hdrlen + 1) * 8;
			break;
		case IPPROTO_AH:
			if ((void *)(ext + 1) > data_end)
				return PARSE_MALFORMED;
			nh = ext->nexthdr;
			pos += (ext->hdrlen + 2) * 4;
			break;
		case IPPROTO_FRAGMENT:
			if ((void *)(ext + 1) > data_end)
				return PARSE_MALFORMED;
			if (ext->frag_off & bpf_htons(FS_IP6_OFFSET))
				return PARSE_FRAGMENT;
			nh = ext->nexthdr;
			pos += sizeof(*ext);
			break;
		default:
			return PARSE_NON_TCP;
		}
		if ((__u64)(pos - data) > l3_end)
			return PARSE_MALFORMED;
	}
	if (nh != IPPROTO_TCP)
		return PARSE_EXTHDR;

	th = pos;
	if (!tcp_ok(th, data, data_end, l3_end))
		return PARSE_MALFORMED;

	if (rev) {
		__builtin_memcpy(p->k6.saddr, &ip6->daddr, sizeof(p->k6.saddr));
		__builtin_memcpy(p->k6.daddr, &ip6->saddr, sizeof(p->k6.daddr));
		p->k6.sport = th->dest;
		p->k6.dport = th->source;
	} else {
		__builtin_memcpy(p->k6.saddr, &ip6->saddr, sizeof(p->k6.saddr));
		__builtin_memcpy(p->k6.daddr, &ip6->daddr, sizeof(p->k6.daddr));
		p->k6.sport = th->source;
		p->k6.dport = th->dest;
	}
	p->k6.proto = IPPROTO_TCP;
	p->th = th;
	p->l3_end = l3_end;
	return PARSE_TCP6;
}

/* @pkt_len: the packet's length from @data (XDP: data_end - data; TC:
 * skb->len), >= data_end - data. @rev: see parse_ipv4().
 */
static __always_inline enum parse_result parse_packet_dir(struct packet *p,
							  void *data,
							  void *data_end,
							  __u32 pkt_len,
							  int rev)
{
	__be16 proto = parse_eth(data, data_end, &p->l3);

	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(p, data, data_end, pkt_len, rev);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(p, data, data_end, pkt_len, rev);
	if (proto == 0)
		return PARSE_MALFORMED;
	return PARSE_NON_IP;
}

/* The packet's own flow. */
static __always_inline enum parse_result parse_packet(struct packet *p,
						      void *data,
						      void *data_end,
						      __u32 pkt_len)
{
	return parse_packet_dir(p, data, data_end, pkt_len, 0);
}

/*
 * TC: parse_packet() of @skb, and when the headers are perhaps not all in
 * the linear part (malformed as far as it reaches, with more of the packet
 * past it), pull them in and look again. Never taken for skbs built by GRO
 * or the stack (headers linear) unless the packet is malformed, so it
 * costs the common path one compare. *@datap and *@endp get the bounds of
 * the linear part the result was parsed in.
 */
static __always_inline enum parse_result parse_skb(struct __sk_buff *skb,
						   struct packet *p,
						   void **datap, void **endp)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	enum parse_result r;

	r = parse_packet(p, data, data_end, skb->len);
	if (r == PARSE_MALFORMED && data_end - data < skb->len &&
	    data_end - data < FS_TC_PULL_LEN) {
		bpf_skb_pull_data(skb, skb->len < FS_TC_PULL_LEN ?
				       skb->len : FS_TC_PULL_LEN);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		__builtin_memset(p, 0, sizeof(*p));
		r = parse_packet(p, data, data_end, skb->len);
	}
	*datap = data;
	*endp = data_end;
	return r;
}

#endif /* FS_PARSE_H */
