// SPDX-License-Identifier: GPL-2.0
/* pkt.c - frame builder for the datapath tests (see pkt.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>

#include "pkt.h"

struct pkt_spec pkt_tcp4(__u16 sport, __u16 dport)
{
	struct pkt_spec s = {
		.family = 4, .l4 = IPPROTO_TCP,
		.saddr4 = 0x0a000001, .daddr4 = 0x0a000102,
		.sport = sport, .dport = dport, .payload = 32, .seq = 1,
	};
	return s;
}

struct pkt_spec pkt_tcp6(__u16 sport, __u16 dport)
{
	struct pkt_spec s = {
		.family = 6, .l4 = IPPROTO_TCP,
		.saddr6 = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		.daddr6 = { 0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 },
		.sport = sport, .dport = dport, .payload = 32, .seq = 1,
	};
	return s;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static __u16 csum16(const __u8 *p, size_t len)
{
	__u32 s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (len & 1)
		s += p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

int ip4_csum_ok(const __u8 *iph, size_t ihl)
{
	return csum16(iph, ihl) == 0;
}

void ip4_csum_fix(__u8 *iph, size_t ihl)
{
	iph[10] = iph[11] = 0;
	put16(iph + 10, csum16(iph, ihl));
}

/* L4 header (TCP/UDP/ICMP) plus payload; returns bytes written. */
static int build_l4(const struct pkt_spec *s, __u8 *p)
{
	int doff = s->tcp_doff ? s->tcp_doff : 5, n, i;

	switch (s->l4) {
	case IPPROTO_TCP:
		put16(p, s->sport);
		put16(p + 2, s->dport);
		memset(p + 4, 0, 16);
		put32(p + 4, s->seq);
		put32(p + 8, s->ack);
		p[12] = (doff & 0xf) << 4;
		p[13] = s->tcp_flags ? s->tcp_flags : 0x18;	/* PSH|ACK */
		put16(p + 14, s->zero_window ? 0 : 65535);
		n = doff >= 5 ? doff * 4 : 20;
		memset(p + 20, 1, n - 20);		/* NOP options */
		if (s->sack[1] && n >= 32) {		/* NOP NOP SACK(10) */
			p[22] = 5;
			p[23] = 10;
			put32(p + 24, s->sack[0]);
			put32(p + 28, s->sack[1]);
		}
		break;
	case IPPROTO_UDP:
		put16(p, s->sport);
		put16(p + 2, s->dport);
		put16(p + 4, 8 + s->payload);
		put16(p + 6, 0);
		n = 8;
		break;
	default:				/* ICMP / ICMPv6 echo */
		memset(p, 0, 8);
		p[0] = s->l4 == IPPROTO_ICMPV6 ? 128 : 8;
		n = 8;
		break;
	}
	for (i = 0; i < s->payload; i++)
		p[n + i] = (__u8)(i * 7 + 3);
	return n + s->payload;
}

int pkt_build(const struct pkt_spec *s, __u8 *buf, size_t cap)
{
	static const __u8 dmac[6] = { 2, 0, 0, 0, 0, 2 };
	static const __u8 smac[6] = { 2, 0, 0, 0, 0, 1 };
	__u8 tmp[PKT_MAX];
	int off = 12, l3, i, l4len, hlen;
	__u16 tpid[2] = { ETH_P_8021Q, ETH_P_8021Q };

	if (cap < PKT_MAX)
		return -1;
	memset(buf, 0, cap);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	if (s->vlans == 2)
		tpid[0] = ETH_P_8021AD;
	for (i = 0; i < s->vlans && i < 2; i++) {
		put16(buf + off, tpid[i]);
		put16(buf + off + 2, 100 + i);
		off += 4;
	}
	if (s->family == 0) {			/* ARP request */
		put16(buf + off, ETH_P_ARP);
		off += 2;
		put16(buf + off, 1);
		put16(buf + off + 2, ETH_P_IP);
		buf[off + 4] = 6;
		buf[off + 5] = 4;
		put16(buf + off + 6, 1);
		memcpy(buf + off + 8, smac, 6);
		return off + 28;
	}
	put16(buf + off, s->family == 4 ? ETH_P_IP : ETH_P_IPV6);
	l3 = off + 2;
	l4len = build_l4(s, tmp);

	if (s->family == 4) {
		__u8 *ip = buf + l3;

		hlen = 20 + s->ip_opt_len;
		ip[0] = 0x40 | (hlen / 4);
		ip[1] = s->tos;
		put16(ip + 2, hlen + l4len);
		put16(ip + 4, 0x1234);
		put16(ip + 6, s->frag_off);
		ip[8] = 64;
		ip[9] = s->l4;
		put16(ip + 12, s->saddr4 >> 16);
		put16(ip + 14, s->saddr4 & 0xffff);
		put16(ip + 16, s->daddr4 >> 16);
		put16(ip + 18, s->daddr4 & 0xffff);
		for (i = 0; i < s->ip_opt_len; i++)
			ip[20 + i] = 1;			/* NOP options */
		if (s->ip_opt_len)
			ip[20 + s->ip_opt_len - 1] = 0;	/* EOL */
		ip4_csum_fix(ip, hlen);
		memcpy(ip + hlen, tmp, l4len);
		return l3 + hlen + l4len;
	} else {
		__u8 *ip = buf + l3, *e = ip + 40;
		__u8 next = s->n_ext ? s->ext[0] : s->l4;
		int elen = 0;

		for (i = 0; i < s->n_ext; i++) {
			__u8 nh = i + 1 < s->n_ext ? s->ext[i + 1] : s->l4;

			e[elen] = nh;
			if (s->ext[i] == IPPROTO_FRAGMENT) {
				e[elen + 1] = 0;
				put16(e + elen + 2,
				      (__u16)(s->ext_frag_offset << 3));
				put16(e + elen + 4, 0xabcd);
				elen += 8;
			} else {			/* 16-byte option hdr */
				e[elen + 1] = 1;
				memset(e + elen + 2, 0, 14);
				e[elen + 2] = 1;	/* PadN */
				e[elen + 3] = 12;
				elen += 16;
			}
		}
		ip[0] = 0x60 | (s->tos >> 4);
		ip[1] = (__u8)(s->tos << 4) | 0x0a;	/* flow label 0xabcde */
		ip[2] = 0xbc;
		ip[3] = 0xde;
		put16(ip + 4, elen + l4len);
		ip[6] = next;
		ip[7] = 64;
		memcpy(ip + 8, s->saddr6, 16);
		memcpy(ip + 24, s->daddr6, 16);
		memcpy(e + elen, tmp, l4len);
		return l3 + 40 + elen + l4len;
	}
}

int pkt_l3_offset(const __u8 *buf, size_t len, int *family)
{
	size_t off = 12;
	int i;
	__u16 proto;

	for (i = 0; i <= 2; i++) {
		if (off + 2 > len)
			return -1;
		proto = (buf[off] << 8) | buf[off + 1];
		if ((proto == ETH_P_8021Q || proto == ETH_P_8021AD) && i < 2) {
			off += 4;
			continue;
		}
		break;
	}
	off += 2;
	if (proto == ETH_P_IP)
		*family = 4;
	else if (proto == ETH_P_IPV6)
		*family = 6;
	else
		return -1;
	return (int)off;
}

__u8 pkt_dscp(const __u8 *l3, int family)
{
	if (family == 4)
		return l3[1] >> 2;
	return (__u8)(((l3[0] << 4) | (l3[1] >> 4)) & 0xff) >> 2;
}

__u8 pkt_ecn(const __u8 *l3, int family)
{
	if (family == 4)
		return l3[1] & 3;
	return (l3[1] >> 4) & 3;
}

void pkt_hexdiff(const __u8 *want, const __u8 *got, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (want[i] != got[i])
			printf("#   byte %3zu: want %02x got %02x\n", i, want[i],
			       got[i]);
}
