/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pkt.h - crafted frames for the datapath tests and benchmarks, and an
 * independent (user-space) view of where the IP header is and whether its
 * checksum verifies.
 */
#ifndef FS_TEST_PKT_H
#define FS_TEST_PKT_H

#include <stddef.h>
#include <linux/types.h>

#define PKT_MAX 2048
#define PKT_MAX_EXT 8

struct pkt_spec {
	int vlans;		/* 0, 1 (802.1Q) or 2 (802.1ad + 802.1Q) */
	int family;		/* 4, 6, or 0 for an ARP frame */
	__u8 l4;		/* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6 */
	__u8 tos;		/* IPv4 TOS / IPv6 traffic class, all 8 bits */
	int ip_opt_len;		/* IPv4 option bytes, multiple of 4, <= 40 */
	__u16 frag_off;		/* IPv4 flags+offset field, host order */
	__u8 ext[PKT_MAX_EXT];	/* IPv6 extension header types, in order */
	int n_ext;
	int ext_frag_offset;	/* offset (8-octet units) in an IPv6 frag hdr */
	__u32 saddr4, daddr4;	/* host order */
	__u8 saddr6[16], daddr6[16];
	__u16 sport, dport;	/* host order */
	int tcp_doff;		/* 0 = 5 */
	__u8 tcp_flags;		/* 0 = PSH|ACK */
	__u32 seq, ack;		/* host order; pkt_tcp4/6: seq 1, ack 0 */
	int zero_window;	/* window 0 instead of 65535 */
	__u32 sack[2];		/* one SACK block [left, right) when right is
				 * not 0 (needs tcp_doff >= 8) */
	int payload;		/* L4 payload bytes */
};

/* TCP flags (struct pkt_spec's tcp_flags) */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

/* A default IPv4/IPv6 TCP spec with the given ports. */
struct pkt_spec pkt_tcp4(__u16 sport, __u16 dport);
struct pkt_spec pkt_tcp6(__u16 sport, __u16 dport);

/* Build the frame; returns its length, or -1 if it does not fit. */
int pkt_build(const struct pkt_spec *s, __u8 *buf, size_t cap);

/* Offset of the IPv4/IPv6 header after Ethernet and up to 2 VLAN tags,
 * or -1 if the frame is not IP (or too short to tell).
 */
int pkt_l3_offset(const __u8 *buf, size_t len, int *family);

/* IPv4 header checksum over @ihl bytes verifies. */
int ip4_csum_ok(const __u8 *iph, size_t ihl);
/* Recompute the IPv4 header checksum in place. */
void ip4_csum_fix(__u8 *iph, size_t ihl);

/* DSCP of the IP header at @l3 (family 4 or 6) */
__u8 pkt_dscp(const __u8 *l3, int family);
__u8 pkt_ecn(const __u8 *l3, int family);

/* Print a hex diff of two frames to stdout as TAP comments. */
void pkt_hexdiff(const __u8 *want, const __u8 *got, size_t len);

#endif
