// SPDX-License-Identifier: GPL-2.0
/*
 * test_splitter.c - unit tests of the splitter through BPF_PROG_TEST_RUN:
 * crafted frames in, verdict, output bytes and every stat counter checked.
 * Every case runs on both hooks (the XDP program and the TC program, whose
 * descriptions start with "xdp: " / "tc: "); the GRO cases set gso_segs
 * through the __sk_buff context of the TC program. Output is TAP, counted by
 * tests/run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "splitter.skel.h"
#include "pkt.h"
#include "dp_tap.h"

#define TEST_FLOWS 4096
#define DSCP_S FS_DEFAULT_DSCP_SHORT
#define DSCP_L FS_DEFAULT_DSCP_LONG
#define ENABLED FS_CFG_F_ENABLED
#define PASS dp_pass_verdict(dp.hook)

static struct dp dp;

static const char *stat_names[] = {
#define NAME(id, name, help) name,
	FS_STATS(NAME)
#undef NAME
};

static void cfg(__u32 threshold, __u32 idle_ms)
{
	if (dp_set_config(&dp, threshold, idle_ms, DSCP_S, DSCP_L, ENABLED)) {
		perror("config update");
		exit(1);
	}
}

/* Reference DSCP rewrite, written independently of the BPF code: set the
 * bits, then recompute the IPv4 checksum from scratch.
 */
static void ref_mark(__u8 *frame, __u32 len, __u8 dscp)
{
	int fam, l3 = pkt_l3_offset(frame, len, &fam);
	__u8 *ip = frame + l3, tc;

	if (fam == 4) {
		int ok = ip4_csum_ok(ip, (ip[0] & 0xf) * 4);

		if ((ip[1] >> 2) == dscp)
			return;
		ip[1] = (__u8)(dscp << 2) | (ip[1] & 3);
		if (ok)
			ip4_csum_fix(ip, (ip[0] & 0xf) * 4);
	} else {
		tc = (__u8)((ip[0] << 4) | (ip[1] >> 4));
		tc = (__u8)(dscp << 2) | (tc & 3);
		ip[0] = (ip[0] & 0xf0) | (tc >> 4);
		ip[1] = (ip[1] & 0x0f) | (__u8)(tc << 4);
	}
}

/*
 * Run one frame; check the verdict, the output against @want (input when
 * @want is NULL) and that the stat counters moved by exactly @delta.
 */
static int check_frame(const char *desc, const __u8 *in, __u32 len,
		       const __u8 *want, const __u64 delta[FS_STAT_MAX])
{
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	__u8 out[PKT_MAX];
	__u32 out_len = 0;
	int verdict, ok, i, stats_ok = 1;

	dp_stats(&dp, before);
	verdict = dp_run(&dp, in, len, out, &out_len, 1, NULL);
	dp_stats(&dp, after);
	if (!want)
		want = in;
	for (i = 0; i < FS_STAT_MAX; i++)
		if (after[i] - before[i] != delta[i])
			stats_ok = 0;
	ok = verdict == PASS && out_len == len &&
	     !memcmp(out, want, len) && stats_ok;
	if (!tap_ok(ok, "%s", desc)) {
		tap_diag("verdict %d (want %d), length %u (want %u)", verdict,
			 PASS, out_len, len);
		if (out_len == len)
			pkt_hexdiff(want, out, len);
		for (i = 0; i < FS_STAT_MAX; i++)
			if (after[i] - before[i] != delta[i])
				tap_diag("stat %s moved by %llu, want %llu",
					 stat_names[i],
					 (unsigned long long)(after[i] -
							      before[i]),
					 (unsigned long long)delta[i]);
	}
	return ok;
}

/* Expected deltas for a frame passed unclassified for @reason. */
static void delta_pass(__u64 d[FS_STAT_MAX], enum fs_stat reason)
{
	memset(d, 0, sizeof(__u64) * FS_STAT_MAX);
	d[reason] = 1;
}

/* Expected deltas for the first packet of a new flow of class @cls (the
 * fixtures carry PSH|ACK, not SYN: a flow first seen mid-stream). */
static void delta_new(__u64 d[FS_STAT_MAX], int cls, __u32 len)
{
	memset(d, 0, sizeof(__u64) * FS_STAT_MAX);
	d[FS_STAT_FLOWS_NEW] = 1;
	d[FS_STAT_FLOWS_MIDSTREAM] = 1;
	d[cls == FS_CLASS_SHORT ? FS_STAT_PKTS_SHORT : FS_STAT_PKTS_LONG] = 1;
	d[cls == FS_CLASS_SHORT ? FS_STAT_BYTES_SHORT : FS_STAT_BYTES_LONG] =
		len;
}

/* ---- fixture table ------------------------------------------------------ */
enum mut { M_NONE, M_IHL4, M_IHL_PAST, M_TOTLEN_PAST, M_TOTLEN_SHORT,
	   M_VER6_IN_V4, M_V6_PLEN_PAST, M_THIRD_VLAN, M_DOFF_PAST };

struct fixture {
	const char *desc;
	struct pkt_spec spec;
	enum mut mut;
	int cls;		/* FS_CLASS_*, or -1: passed unmodified */
	enum fs_stat reason;	/* when cls == -1 */
};

#define TCP4 .family = 4, .l4 = IPPROTO_TCP, .saddr4 = 0x0a000001, \
	.daddr4 = 0x0a000002, .sport = 40000, .dport = 80, .payload = 16
#define TCP6 .family = 6, .l4 = IPPROTO_TCP, .saddr6 = { 0xfd, [15] = 1 }, \
	.daddr6 = { 0xfd, [15] = 2 }, .sport = 40000, .dport = 80, .payload = 16

/* Later designated initializers override the TCP4/TCP6 defaults on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const struct fixture fixtures[] = {
	{ "IPv4 TCP: classified short, DSCP already short: byte-identical",
	  { TCP4 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP with DSCP 46 (EF): rewritten to short",
	  { TCP4, .tos = 46 << 2 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP behind 802.1Q tag", { TCP4, .vlans = 1, .tos = 0xb8 },
	  M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP behind QinQ (802.1ad + 802.1Q)",
	  { TCP4, .vlans = 2, .tos = 0xb8 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP, 4 bytes of IP options", { TCP4, .ip_opt_len = 4, .tos = 8 },
	  M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP, 40 bytes of IP options (IHL 15)",
	  { TCP4, .ip_opt_len = 40, .tos = 8 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 TCP, TCP options (doff 15)", { TCP4, .tcp_doff = 15, .tos = 8 },
	  M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 first fragment (MF, offset 0): classified",
	  { TCP4, .frag_off = 0x2000, .tos = 8 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv4 middle fragment (MF, offset 100): unmodified",
	  { TCP4, .frag_off = 0x2000 | 100, .tos = 8 }, M_NONE, -1,
	  FS_STAT_PASS_FRAGMENT },
	{ "IPv4 last fragment (offset 200): unmodified",
	  { TCP4, .frag_off = 200, .tos = 8 }, M_NONE, -1,
	  FS_STAT_PASS_FRAGMENT },
	{ "IPv4 UDP: unmodified", { TCP4, .l4 = IPPROTO_UDP, .tos = 8 },
	  M_NONE, -1, FS_STAT_PASS_NON_TCP },
	{ "IPv4 ICMP: unmodified", { TCP4, .l4 = IPPROTO_ICMP, .tos = 8 },
	  M_NONE, -1, FS_STAT_PASS_NON_TCP },
	{ "ARP: unmodified", { .family = 0 }, M_NONE, -1, FS_STAT_PASS_NON_IP },
	{ "ARP behind QinQ: unmodified", { .family = 0, .vlans = 2 }, M_NONE,
	  -1, FS_STAT_PASS_NON_IP },
	{ "three VLAN tags: beyond the parser, unmodified",
	  { TCP4, .vlans = 2, .tos = 8 }, M_THIRD_VLAN, -1,
	  FS_STAT_PASS_NON_IP },
	{ "IPv4 IHL 4 (< 5): unmodified", { TCP4, .tos = 8 }, M_IHL4, -1,
	  FS_STAT_PASS_MALFORMED },
	{ "IPv4 IHL 15 past the frame: unmodified",
	  { TCP4, .payload = 0, .tos = 8 }, M_IHL_PAST, -1,
	  FS_STAT_PASS_MALFORMED },
	{ "IPv4 total length past the frame: unmodified", { TCP4, .tos = 8 },
	  M_TOTLEN_PAST, -1, FS_STAT_PASS_MALFORMED },
	{ "IPv4 total length < IHL: unmodified", { TCP4, .tos = 8 },
	  M_TOTLEN_SHORT, -1, FS_STAT_PASS_MALFORMED },
	{ "IPv4 ethertype with version 6 header: unmodified",
	  { TCP4, .tos = 8 }, M_VER6_IN_V4, -1, FS_STAT_PASS_MALFORMED },
	{ "TCP data offset 4 (< 5): unmodified",
	  { TCP4, .tcp_doff = 4, .tos = 8 }, M_NONE, -1,
	  FS_STAT_PASS_MALFORMED },
	{ "TCP data offset 15 past the packet: unmodified",
	  { TCP4, .payload = 0, .tos = 8 }, M_DOFF_PAST, -1,
	  FS_STAT_PASS_MALFORMED },
	{ "IPv6 TCP: traffic class rewritten, flow label kept",
	  { TCP6, .tos = 0xb9 }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 TCP behind QinQ", { TCP6, .vlans = 2, .tos = 0xb8 }, M_NONE,
	  FS_CLASS_SHORT, 0 },
	{ "IPv6 Hop-by-Hop, TCP", { TCP6, .tos = 8, .n_ext = 1,
	  .ext = { IPPROTO_HOPOPTS } }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 Routing, TCP", { TCP6, .tos = 8, .n_ext = 1,
	  .ext = { IPPROTO_ROUTING } }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 Destination Options, TCP", { TCP6, .tos = 8, .n_ext = 1,
	  .ext = { IPPROTO_DSTOPTS } }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 first Fragment (offset 0), TCP", { TCP6, .tos = 8, .n_ext = 1,
	  .ext = { IPPROTO_FRAGMENT } }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 non-first Fragment (offset 5): unmodified",
	  { TCP6, .tos = 8, .n_ext = 1, .ext = { IPPROTO_FRAGMENT },
	    .ext_frag_offset = 5 }, M_NONE, -1, FS_STAT_PASS_FRAGMENT },
	{ "IPv6 HbH+Routing+Frag+DstOpts+DstOpts+DstOpts (6 = bound), TCP",
	  { TCP6, .tos = 8, .n_ext = 6, .ext = { IPPROTO_HOPOPTS,
	    IPPROTO_ROUTING, IPPROTO_FRAGMENT, IPPROTO_DSTOPTS,
	    IPPROTO_DSTOPTS, IPPROTO_DSTOPTS } }, M_NONE, FS_CLASS_SHORT, 0 },
	{ "IPv6 chain of 7 extension headers (> bound): unmodified",
	  { TCP6, .tos = 8, .n_ext = 7, .ext = { IPPROTO_HOPOPTS,
	    IPPROTO_ROUTING, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS,
	    IPPROTO_DSTOPTS, IPPROTO_DSTOPTS } }, M_NONE, -1,
	  FS_STAT_PASS_EXTHDR },
	{ "IPv6 UDP: unmodified", { TCP6, .l4 = IPPROTO_UDP, .tos = 8 },
	  M_NONE, -1, FS_STAT_PASS_NON_TCP },
	{ "IPv6 ICMPv6: unmodified", { TCP6, .l4 = IPPROTO_ICMPV6, .tos = 8 },
	  M_NONE, -1, FS_STAT_PASS_NON_TCP },
	{ "IPv6 Hop-by-Hop then UDP: unmodified",
	  { TCP6, .l4 = IPPROTO_UDP, .tos = 8, .n_ext = 1,
	    .ext = { IPPROTO_HOPOPTS } }, M_NONE, -1, FS_STAT_PASS_NON_TCP },
	{ "IPv6 payload length past the frame: unmodified",
	  { TCP6, .tos = 8 }, M_V6_PLEN_PAST, -1, FS_STAT_PASS_MALFORMED },
};
#pragma GCC diagnostic pop

/* The mutations that set one byte of the IP header (@off from its start),
 * and whether the IPv4 checksum is made to verify again after */
static const struct { __u8 off, val, csum; } mut_byte[] = {
	[M_IHL4] = { 0, 0x44, 0 },
	[M_IHL_PAST] = { 0, 0x4f, 0 },
	[M_TOTLEN_PAST] = { 2, 0x05, 1 },	/* 1280+ bytes in a short frame */
	[M_VER6_IN_V4] = { 0, 0x65, 0 },
	[M_V6_PLEN_PAST] = { 4, 0x10, 0 },
	/* doff 15 (60 bytes) in a 20-byte TCP packet */
	[M_DOFF_PAST] = { 20 + 12, 0xf0, 0 },
};

static int build_fixture(const struct fixture *f, __u8 *buf)
{
	int len = pkt_build(&f->spec, buf, PKT_MAX), fam;
	int l3 = pkt_l3_offset(buf, len, &fam);
	__u8 *ip = buf + l3;

	switch (f->mut) {
	case M_NONE:
		break;
	case M_TOTLEN_SHORT:
		ip[2] = 0;
		ip[3] = 16;
		ip4_csum_fix(ip, 20);
		break;
	case M_THIRD_VLAN:	/* insert one more 802.1Q tag after QinQ */
		memmove(buf + 24, buf + 20, len - 20);
		buf[20] = 0x81;
		buf[21] = 0x00;
		buf[22] = 0;
		buf[23] = 7;
		len += 4;
		break;
	default:
		ip[mut_byte[f->mut].off] = mut_byte[f->mut].val;
		if (mut_byte[f->mut].csum)
			ip4_csum_fix(ip, 20);
	}
	return len;
}

static void test_fixtures(void)
{
	__u64 d[FS_STAT_MAX];
	__u8 in[PKT_MAX], want[PKT_MAX];
	size_t i;
	int len;

	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *f = &fixtures[i];

		dp_flush(&dp);
		len = build_fixture(f, in);
		memcpy(want, in, len);
		if (f->cls >= 0) {
			ref_mark(want, len, f->cls == FS_CLASS_SHORT ? DSCP_S
								     : DSCP_L);
			delta_new(d, f->cls, len);
		} else {
			delta_pass(d, f->reason);
		}
		check_frame(f->desc, in, len, want, d);
	}
}

/*
 * BPF_PROG_TEST_RUN refuses (EINVAL) to build an skb from a frame whose
 * ethertype says IPv4/IPv6 but which holds less than the fixed IP header,
 * so the TC program cannot be run on those lengths from here. True when a
 * failed run of @len bytes is exactly that.
 */
static int tc_refuses_short_ip(const __u8 *frame, __u32 len, int err)
{
	int eth_ip = len >= ETH_HLEN && frame[12] == 0x08 && frame[13] == 0x00;
	int eth_ip6 = len >= ETH_HLEN && frame[12] == 0x86 && frame[13] == 0xdd;

	return dp.hook == DP_TC && err == DP_RUN_ERR && errno == EINVAL &&
	       ((eth_ip && len < ETH_HLEN + 20) ||
		(eth_ip6 && len < ETH_HLEN + 40));
}

/* Truncation at every length from 14 bytes to just before the end of the
 * TCP header: always unmodified and counted as malformed (at TC, minus the
 * lengths BPF_PROG_TEST_RUN refuses, see tc_refuses_short_ip()).
 */
static void test_truncation(void)
{
	static const struct { const char *name; int family, vlans; } v[] = {
		{ "IPv4", 4, 0 }, { "IPv6", 6, 0 }, { "IPv4 802.1Q", 4, 1 },
		{ "IPv4 QinQ", 4, 2 }, { "IPv6 802.1Q", 6, 1 },
		{ "IPv6 QinQ", 6, 2 },
	};
	__u64 d[FS_STAT_MAX];
	__u8 in[PKT_MAX], out[PKT_MAX];
	size_t i;

	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct pkt_spec s = v[i].family == 4 ? pkt_tcp4(1, 2)
						     : pkt_tcp6(1, 2);
		__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
		__u32 out_len;
		int full, l, bad = 0, first_bad = 0, ran = 0, verdict;

		s.vlans = v[i].vlans;
		s.payload = 0;
		s.tos = 0xb8;
		full = pkt_build(&s, in, PKT_MAX);
		dp_stats(&dp, before);
		for (l = ETH_HLEN; l < full; l++) {
			verdict = dp_run(&dp, in, l, out, &out_len, 1, NULL);
			if (tc_refuses_short_ip(in, l, verdict))
				continue;
			ran++;
			if (verdict != PASS || out_len != (__u32)l ||
			    memcmp(in, out, l)) {
				if (!bad++)
					first_bad = l;
			}
		}
		dp_stats(&dp, after);
		delta_pass(d, FS_STAT_PASS_MALFORMED);
		for (l = 0; l < FS_STAT_MAX; l++)
			if (after[l] - before[l] != d[l] * ran)
				bad++;
		if (!tap_ok(!bad && ran > 0, "%s TCP truncated at every length "
			    "14..%d (%d run): unmodified, counted malformed",
			    v[i].name, full - 1, ran))
			tap_diag("%d problems, first at length %d", bad,
				 first_bad);
	}
}

/* Send @n packets of @spec, return the DSCP of each output in @dscp. */
static int send_n(struct pkt_spec *spec, int n, __u8 *dscp)
{
	__u8 in[PKT_MAX], out[PKT_MAX];
	__u32 out_len;
	int len = pkt_build(spec, in, PKT_MAX), i, fam;
	int l3 = pkt_l3_offset(in, len, &fam);

	for (i = 0; i < n; i++) {
		if (dp_run(&dp, in, len, out, &out_len, 1, NULL) != PASS)
			return -1;
		if (dscp)
			dscp[i] = pkt_dscp(out + l3, fam);
	}
	return len;
}

static void test_threshold(__u32 t)
{
	struct pkt_spec s = pkt_tcp4(1000 + t, 80);
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	struct flow_state st;
	__u8 dscp[64];
	__u32 n = t + 3, i, bad = 0;

	s.tos = 0x10;	/* some other DSCP, so every packet is rewritten */
	dp_flush(&dp);
	cfg(t, FS_DEFAULT_IDLE_MS);
	dp_stats(&dp, before);
	send_n(&s, n, dscp);
	dp_stats(&dp, after);
	for (i = 0; i < n; i++)
		if (dscp[i] != (i + 1 <= t ? DSCP_S : DSCP_L)) {
			if (!bad++)
				tap_diag("packet %u: DSCP %u", i + 1, dscp[i]);
		}
	tap_ok(!bad && after[FS_STAT_PKTS_SHORT] - before[FS_STAT_PKTS_SHORT] ==
			       t &&
		       after[FS_STAT_PKTS_LONG] - before[FS_STAT_PKTS_LONG] ==
			       n - t &&
		       after[FS_STAT_FLOWS_PROMOTED] -
				       before[FS_STAT_FLOWS_PROMOTED] ==
			       (t ? 1u : 0u) &&
		       after[FS_STAT_FLOWS_NEW] - before[FS_STAT_FLOWS_NEW] == 1,
	       "threshold %u: packets 1..%u short, %u..%u long, %s", t, t,
	       t + 1, n, t ? "one promotion" : "no promotion");
	tap_ok(dp_flow_get(&dp, &s, &st) == 0 && st.packets == n &&
		       st.class == FS_CLASS_LONG && st.last_seen >= st.first_seen,
	       "threshold %u: flow entry holds %u packets, class long", t, n);
}

static void test_flows_independent(void)
{
	struct pkt_spec a = pkt_tcp4(5000, 80), b, c = pkt_tcp4(5001, 80);
	struct flow_state sa, sb, sc;
	__u8 da[8], db[8], dc[8];

	b = a;	/* the reverse direction of a */
	b.saddr4 = a.daddr4;
	b.daddr4 = a.saddr4;
	b.sport = a.dport;
	b.dport = a.sport;
	dp_flush(&dp);
	cfg(4, FS_DEFAULT_IDLE_MS);
	send_n(&a, 3, da);
	send_n(&b, 4, db);
	send_n(&a, 2, da + 3);
	send_n(&c, 1, dc);
	tap_ok(dp_flow_get(&dp, &a, &sa) == 0 && sa.packets == 5 &&
		       dp_flow_get(&dp, &b, &sb) == 0 && sb.packets == 4 &&
		       dp_flow_get(&dp, &c, &sc) == 0 && sc.packets == 1,
	       "two directions of one connection and a second flow counted "
	       "independently (5, 4, 1 packets)");
	tap_ok(da[3] == DSCP_S && da[4] == DSCP_L && db[3] == DSCP_S &&
		       dc[0] == DSCP_S,
	       "each direction crosses the threshold on its own count");
}

/* ack-short: a long flow's pure ACKs (no payload; ACK without SYN, FIN,
 * RST) keep the short mark and are still counted; nothing else changes.
 */
static void test_ack_short(int family)
{
	struct pkt_spec data = family == 4 ? pkt_tcp4(6100, 80) : pkt_tcp6(6100, 80);
	struct pkt_spec ack = data, fin = data, syn = data, rst = data;
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	__u8 d[16];
	struct flow_state st;
	int got;

	data.tos = 0x10;	/* every packet rewritten: the mark is visible */
	ack = fin = syn = rst = data;
	ack.payload = 0;
	ack.tcp_flags = TH_ACK;
	fin.payload = 0;
	fin.tcp_flags = TH_FIN | TH_ACK;
	syn.payload = 0;
	syn.tcp_flags = TH_SYN | TH_ACK;
	rst.payload = 0;
	rst.tcp_flags = TH_RST | TH_ACK;

	dp_flush(&dp);
	dp_set_config(&dp, 2, FS_DEFAULT_IDLE_MS, DSCP_S, DSCP_L,
		      ENABLED | FS_CFG_F_ACK_SHORT);
	send_n(&ack, 1, d);		/* 1: short anyway */
	send_n(&data, 2, d + 1);	/* 2 short, 3 long */
	dp_stats(&dp, before);
	send_n(&ack, 2, d + 3);		/* 4, 5: long flow, pure ACKs */
	dp_stats(&dp, after);
	send_n(&data, 1, d + 5);	/* 6: data, long */
	send_n(&fin, 1, d + 6);		/* 7: FIN, long */
	send_n(&syn, 1, d + 7);		/* 8 */
	send_n(&rst, 1, d + 8);		/* 9 */
	got = family == 4 ? dp_flow_get(&dp, &data, &st) : 0;
	tap_ok(d[0] == DSCP_S && d[1] == DSCP_S && d[2] == DSCP_L &&
		       d[3] == DSCP_S && d[4] == DSCP_S &&
		       after[FS_STAT_ACKS_SHORT] - before[FS_STAT_ACKS_SHORT] == 2 &&
		       after[FS_STAT_PKTS_SHORT] - before[FS_STAT_PKTS_SHORT] == 2 &&
		       after[FS_STAT_PKTS_LONG] == before[FS_STAT_PKTS_LONG],
	       "IPv%d ack-short: a long flow's pure ACKs marked short (stats "
	       "acks_short +2, packets_short +2)", family);
	tap_ok(d[5] == DSCP_L && d[6] == DSCP_L && d[7] == DSCP_L &&
		       d[8] == DSCP_L && got == 0 &&
		       (family == 6 || (st.packets == 9 && st.class == FS_CLASS_LONG)),
	       "IPv%d ack-short: data, FIN, SYN and RST segments stay long; "
	       "ACKs counted in the flow (9 packets, class long)", family);
	dp_set_config(&dp, 2, FS_DEFAULT_IDLE_MS, DSCP_S, DSCP_L, ENABLED);
	dp_stats(&dp, before);
	send_n(&ack, 1, d + 9);
	dp_stats(&dp, after);
	tap_ok(d[9] == DSCP_L &&
		       after[FS_STAT_ACKS_SHORT] == before[FS_STAT_ACKS_SHORT],
	       "IPv%d ack-short off: a long flow's pure ACK marked long", family);
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static void test_idle_expiry(void)
{
	struct pkt_spec s = pkt_tcp4(6000, 80);
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX];
	struct flow_state st;
	__u8 d[8];

	dp_flush(&dp);
	cfg(2, 200);
	send_n(&s, 3, d);	/* short, short, long */
	sleep_ms(100);
	send_n(&s, 1, d + 3);	/* within the timeout: still long */
	tap_ok(d[2] == DSCP_L && d[3] == DSCP_L && dp_flow_get(&dp, &s, &st) == 0 &&
		       st.packets == 4,
	       "idle 200 ms: a packet 100 ms later continues the flow (4th "
	       "packet long)");
	sleep_ms(300);
	dp_stats(&dp, before);
	send_n(&s, 1, d + 4);
	dp_stats(&dp, after);
	tap_ok(d[4] == DSCP_S && dp_flow_get(&dp, &s, &st) == 0 && st.packets == 1 &&
		       after[FS_STAT_FLOWS_EXPIRED] -
				       before[FS_STAT_FLOWS_EXPIRED] ==
			       1 &&
		       after[FS_STAT_FLOWS_NEW] - before[FS_STAT_FLOWS_NEW] == 1,
	       "idle 200 ms: a packet 300 ms later starts a new flow (count 1, "
	       "short, expired +1)");
}

static void test_runtime_config(void)
{
	struct pkt_spec s = pkt_tcp4(7000, 80);
	struct flow_state st;
	__u8 d[8];
	__u8 in[PKT_MAX];
	__u64 delta[FS_STAT_MAX];
	int len;

	s.tos = 0x10;
	dp_flush(&dp);
	cfg(10, FS_DEFAULT_IDLE_MS);
	send_n(&s, 5, d);
	cfg(3, FS_DEFAULT_IDLE_MS);
	send_n(&s, 1, d + 5);
	tap_ok(d[4] == DSCP_S && d[5] == DSCP_L && dp_flow_get(&dp, &s, &st) == 0 &&
		       st.packets == 6,
	       "threshold 10 -> 3 at packet 6: next packet long, flow count "
	       "kept (6)");
	cfg(100, FS_DEFAULT_IDLE_MS);
	send_n(&s, 1, d + 6);
	tap_ok(d[6] == DSCP_S, "threshold 3 -> 100: packet 7 short again");
	dp_set_config(&dp, 3, FS_DEFAULT_IDLE_MS, 10, 5, ENABLED);
	send_n(&s, 1, d + 7);
	tap_ok(d[7] == 5 && dp_flow_get(&dp, &s, &st) == 0 && st.packets == 8,
	       "dscp-long 1 -> 5 takes effect on the next packet");
	dp_set_config(&dp, 3, FS_DEFAULT_IDLE_MS, 10, 5, 0);
	len = send_n(&s, 0, NULL);
	pkt_build(&s, in, PKT_MAX);
	delta_pass(delta, FS_STAT_PASS_DISABLED);
	check_frame("classification disabled: packet unmodified, flow untouched",
		    in, len, NULL, delta);
	tap_ok(dp_flow_get(&dp, &s, &st) == 0 && st.packets == 8,
	       "disabled: flow state kept (8 packets)");
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
}

static void test_ecn_and_checksum(void)
{
	__u8 in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	int bad = 0, fam, l3, len, cls, ecn, d, v;
	__u32 out_len;

	/* threshold 0: every packet long; 1000000: every packet short */
	for (cls = 0; cls < 2; cls++) {
		for (v = 4; v <= 6; v += 2) {
			cfg(cls == FS_CLASS_SHORT ? 1000000 : 0,
			    FS_DEFAULT_IDLE_MS);
			for (d = 0; d < 64; d++) {
				for (ecn = 0; ecn < 4; ecn++) {
					struct pkt_spec s = v == 4 ?
						pkt_tcp4(d, ecn) :
						pkt_tcp6(d, ecn);

					s.tos = (__u8)(d << 2 | ecn);
					len = pkt_build(&s, in, PKT_MAX);
					memcpy(want, in, len);
					ref_mark(want, len,
						 cls ? DSCP_L : DSCP_S);
					dp_run(&dp, in, len, out, &out_len, 1,
					       NULL);
					l3 = pkt_l3_offset(out, len, &fam);
					if (memcmp(out, want, len) ||
					    pkt_ecn(out + l3, fam) != ecn ||
					    (fam == 4 && !ip4_csum_ok(out + l3,
								      20)))
						bad++;
				}
			}
		}
	}
	tap_ok(!bad, "every ECN value (incl. CE) kept for all 64 input DSCPs, "
	       "v4 and v6, short and long; IPv4 checksum equals a full "
	       "recompute (%d mismatches)", bad);

	/* A bad checksum stays bad (by the same amount). */
	{
		struct pkt_spec s = pkt_tcp4(9, 9);
		__u16 c_in, c_out;

		cfg(0, FS_DEFAULT_IDLE_MS);
		s.tos = 0xb8;
		len = pkt_build(&s, in, PKT_MAX);
		l3 = pkt_l3_offset(in, len, &fam);
		in[l3 + 10] ^= 0x12;
		in[l3 + 11] ^= 0x34;
		memcpy(&c_in, in + l3 + 10, 2);
		dp_run(&dp, in, len, out, &out_len, 1, NULL);
		memcpy(&c_out, out + l3 + 10, 2);
		tap_ok(!ip4_csum_ok(in + l3, 20) && !ip4_csum_ok(out + l3, 20) &&
			       pkt_dscp(out + l3, 4) == DSCP_L && c_in != c_out,
		       "IPv4 packet with a bad checksum: DSCP rewritten, "
		       "checksum still bad");
	}
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
}

/* ---- concurrency ---------------------------------------------------------*/
#define CONC_RUNS 40
#define CONC_REPEAT 5000

struct conc_arg {
	int cpu, failed;
	__u8 *frame;
	__u32 len;
};

static void *conc_thread(void *p)
{
	struct conc_arg *a = p;
	__u8 out[PKT_MAX];
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (i = 0; i < CONC_RUNS; i++)
		if (dp_run(&dp, a->frame, a->len, out, NULL, CONC_REPEAT,
			   NULL) != PASS)
			a->failed = 1;
	return NULL;
}

/* Two threads on two CPUs send one 5-tuple; @threshold decides. */
static void conc_run(__u32 threshold, __u8 *frame, int len, int *n_out)
{
	struct conc_arg args[2];
	pthread_t th[2];
	int i, n = dp.ncpus > 1 ? 2 : 1;

	dp_flush(&dp);
	cfg(threshold, FS_DEFAULT_IDLE_MS);
	for (i = 0; i < n; i++) {
		args[i] = (struct conc_arg){ .cpu = i, .frame = frame,
					     .len = len };
		pthread_create(&th[i], NULL, conc_thread, &args[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		if (args[i].failed)
			tap_diag("thread %d: a run did not pass", i);
	*n_out = n;
}

static void test_concurrency(void)
{
	struct pkt_spec s = pkt_tcp4(8000, 80);
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX], want, t;
	struct flow_state st = {};
	__u8 frame[PKT_MAX];
	int len, n;

	len = pkt_build(&s, frame, PKT_MAX);
	/* every packet below the threshold: every count is atomic */
	dp_stats(&dp, before);
	conc_run(1000000, frame, len, &n);
	dp_stats(&dp, after);
	want = (__u64)n * CONC_RUNS * CONC_REPEAT;
	if (!tap_ok(dp_flow_get(&dp, &s, &st) == 0 && st.packets == want &&
			    after[FS_STAT_PKTS_SHORT] -
					    before[FS_STAT_PKTS_SHORT] == want &&
			    after[FS_STAT_BYTES_SHORT] -
					    before[FS_STAT_BYTES_SHORT] ==
				    want * len &&
			    st.bytes <= want * len,
		    "%d threads on %d CPUs, one 5-tuple below the threshold: "
		    "exactly %llu packets in the flow, packets and bytes "
		    "exact in the stats", n, n, (unsigned long long)want))
		tap_diag("flow: %llu packets, %llu bytes",
			 (unsigned long long)st.packets,
			 (unsigned long long)st.bytes);

	/* the threshold in the middle of the race: exactly t short */
	t = want / 2 + 17;
	dp_stats(&dp, before);
	conc_run(t, frame, len, &n);
	dp_stats(&dp, after);
	if (!tap_ok(after[FS_STAT_PKTS_SHORT] - before[FS_STAT_PKTS_SHORT] ==
			    t &&
			    after[FS_STAT_PKTS_LONG] -
					    before[FS_STAT_PKTS_LONG] ==
				    want - t &&
			    after[FS_STAT_FLOWS_PROMOTED] -
					    before[FS_STAT_FLOWS_PROMOTED] ==
				    1 &&
			    dp_flow_get(&dp, &s, &st) == 0 && st.packets >= t &&
			    st.packets <= want && st.class == FS_CLASS_LONG,
		    "%d threads on %d CPUs, one 5-tuple, threshold %llu: "
		    "exactly %llu short and %llu long, one promotion", n, n,
		    (unsigned long long)t, (unsigned long long)t,
		    (unsigned long long)(want - t)))
		tap_diag("short %llu, long %llu, promoted %llu, flow %llu",
			 (unsigned long long)(after[FS_STAT_PKTS_SHORT] -
					      before[FS_STAT_PKTS_SHORT]),
			 (unsigned long long)(after[FS_STAT_PKTS_LONG] -
					      before[FS_STAT_PKTS_LONG]),
			 (unsigned long long)(after[FS_STAT_FLOWS_PROMOTED] -
					      before[FS_STAT_FLOWS_PROMOTED]),
			 (unsigned long long)st.packets);
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
}

/* ---- GRO/GSO packets (TC hook) -------------------------------------------*/
/* One skb of @segs segments (gso_segs in the __sk_buff); DSCP in *dscp. */
static int send_gro(const struct pkt_spec *spec, __u32 segs, __u8 *dscp,
		    __u8 *out)
{
	__u8 in[PKT_MAX], tmp[PKT_MAX];
	__u32 out_len;
	int len = pkt_build(spec, in, PKT_MAX), fam;
	int l3 = pkt_l3_offset(in, len, &fam);

	if (!out)
		out = tmp;
	if (dp_test_run(dp.prog_fd[DP_TC], DP_TC, in, len, out, &out_len, 1,
			segs, NULL) != dp_pass_verdict(DP_TC))
		return -1;
	if (dscp)
		*dscp = pkt_dscp(out + l3, fam);
	return len;
}

static __u64 delta(const __u64 *a, const __u64 *b, int i)
{
	return a[i] - b[i];
}

/*
 * Where the threshold falls inside one GRO packet: an skb of n segments
 * after c packets holds packets c+1..c+n and carries the class of its first
 * segment (c+1); the flow's count stays exact (c+n); the stats count all n
 * segments under that mark.
 */
static void test_gro(void)
{
	struct pkt_spec a = pkt_tcp4(9100, 80), u = pkt_tcp4(9101, 53);
	__u64 b[FS_STAT_MAX], x[FS_STAT_MAX];
	struct flow_state st = {};
	__u8 d[8], out[PKT_MAX];
	int len, fam, l3, i;

	a.tos = 0x10;
	a.payload = 800;	/* 8 segments of 100 bytes */
	dp_flush(&dp);
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
	dp_stats(&dp, b);
	send_gro(&a, 8, d, NULL);	/* 1..8 */
	send_gro(&a, 8, d + 1, NULL);	/* 9..16 */
	len = send_gro(&a, 8, d + 2, out);	/* 17..24: crosses 20 */
	dp_stats(&dp, x);
	l3 = pkt_l3_offset(out, len, &fam);
	tap_ok(d[0] == DSCP_S && d[1] == DSCP_S && d[2] == DSCP_S &&
		       delta(x, b, FS_STAT_PKTS_SHORT) == 24 &&
		       delta(x, b, FS_STAT_PKTS_LONG) == 0 &&
		       delta(x, b, FS_STAT_FLOWS_NEW) == 1 &&
		       dp_flow_get(&dp, &a, &st) == 0 && st.packets == 24 &&
		       st.class == FS_CLASS_SHORT && ip4_csum_ok(out + l3, 20),
	       "threshold 20, GRO packets of 8+8+8 segments: the one holding "
	       "packets 17..24 takes its first segment's class (short), all 24 "
	       "counted short, flow count exact (24), checksum verifies");
	dp_stats(&dp, b);
	send_n(&a, 1, d + 3);		/* 25 */
	send_gro(&a, 4, d + 4, NULL);	/* 26..29 */
	dp_stats(&dp, x);
	tap_ok(d[3] == DSCP_L && d[4] == DSCP_L &&
		       delta(x, b, FS_STAT_PKTS_LONG) == 5 &&
		       delta(x, b, FS_STAT_FLOWS_PROMOTED) == 1 &&
		       dp_flow_get(&dp, &a, &st) == 0 && st.packets == 29 &&
		       st.class == FS_CLASS_LONG,
	       "the next packet after a crossing GRO packet is long (packet "
	       "25, one promotion), a GRO packet of 4 after it counts 4 long");

	/* boundaries: first segment = threshold (short), threshold+1 (long) */
	dp_flush(&dp);
	cfg(10, FS_DEFAULT_IDLE_MS);
	send_gro(&a, 9, d, NULL);	/* 1..9 */
	send_gro(&a, 5, d + 1, NULL);	/* 10..14: first = 10 = threshold */
	dp_flush(&dp);
	send_gro(&a, 10, d + 2, NULL);	/* 1..10 */
	send_gro(&a, 5, d + 3, NULL);	/* 11..15: first = 11 */
	tap_ok(d[0] == DSCP_S && d[1] == DSCP_S && d[2] == DSCP_S &&
		       d[3] == DSCP_L,
	       "threshold 10: a GRO packet starting at packet 10 is short, "
	       "one starting at packet 11 is long");

	/* a new flow's first skb bigger than the threshold */
	dp_flush(&dp);
	cfg(4, FS_DEFAULT_IDLE_MS);
	dp_stats(&dp, b);
	send_gro(&a, 6, d, NULL);	/* 1..6 */
	send_n(&a, 1, d + 1);		/* 7 */
	dp_stats(&dp, x);
	tap_ok(d[0] == DSCP_S && d[1] == DSCP_L &&
		       delta(x, b, FS_STAT_PKTS_SHORT) == 6 &&
		       delta(x, b, FS_STAT_PKTS_LONG) == 1 &&
		       dp_flow_get(&dp, &a, &st) == 0 && st.packets == 7,
	       "threshold 4, a new flow's first skb of 6 segments: short, "
	       "counted 6; packet 7 long");

	/* threshold 0: everything long, every segment counted */
	dp_flush(&dp);
	cfg(0, FS_DEFAULT_IDLE_MS);
	dp_stats(&dp, b);
	send_gro(&a, 8, d, NULL);
	dp_stats(&dp, x);
	tap_ok(d[0] == DSCP_L && delta(x, b, FS_STAT_PKTS_LONG) == 8 &&
		       delta(x, b, FS_STAT_PKTS_SHORT) == 0,
	       "threshold 0: a GRO packet of 8 is long, 8 counted long");

	/* bytes: skb length plus the headers each further segment repeats */
	for (i = 4; i <= 6; i += 2) {
		struct pkt_spec g = i == 4 ? pkt_tcp4(9200, 80)
					   : pkt_tcp6(9200, 80);
		__u32 hdr = 14 + (i == 4 ? 20 : 40) + 20;

		g.payload = 700;
		dp_flush(&dp);
		cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
		dp_stats(&dp, b);
		len = send_gro(&g, 7, d, out);
		dp_stats(&dp, x);
		tap_ok(delta(x, b, FS_STAT_BYTES_SHORT) ==
			       (__u64)len + 6 * hdr &&
			       delta(x, b, FS_STAT_PKTS_SHORT) == 7,
		       "IPv%d GRO packet of 7 segments, %d bytes: %llu wire "
		       "bytes counted (+6 x %u header bytes)", i, len,
		       (unsigned long long)(len + 6 * hdr), hdr);
	}

	/* unclassified GSO packets count every segment too */
	u.l4 = IPPROTO_UDP;
	u.payload = 400;
	dp_stats(&dp, b);
	send_gro(&u, 4, NULL, NULL);
	dp_stats(&dp, x);
	tap_ok(delta(x, b, FS_STAT_PASS_NON_TCP) == 4,
	       "a UDP GSO packet of 4 segments: pass_non_tcp +4");

	/* gso_segs 0 (not a GSO packet) counts as 1 */
	dp_flush(&dp);
	dp_stats(&dp, b);
	send_gro(&a, 0, d, NULL);
	dp_stats(&dp, x);
	tap_ok(delta(x, b, FS_STAT_PKTS_SHORT) == 1 &&
		       dp_flow_get(&dp, &a, &st) == 0 && st.packets == 1,
	       "gso_segs 0 counts one packet");
	cfg(FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS);
}

/* ---- randomised frames --------------------------------------------------*/
#define RANDOM_FRAMES 200000

static __u64 rng_state = 0x9e3779b97f4a7c15ull;
static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (__u32)rng_state;
}

/*
 * Every output equals its input except the DSCP bits (and the IPv4
 * checksum, which verifies whenever it verified before); every verdict is
 * the hook's pass verdict; every frame is counted exactly once across the
 * stats.
 */
static int check_random_output(const __u8 *in, const __u8 *out, __u32 len)
{
	int fam, l3 = pkt_l3_offset(in, len, &fam);
	__u32 i;

	for (i = 0; i < len; i++) {
		__u8 diff = in[i] ^ out[i];

		if (!diff)
			continue;
		if (l3 < 0)
			return 0;
		if (fam == 4 && i == (__u32)l3 + 1 && !(diff & FS_ECN_MASK))
			continue;
		if (fam == 4 && (i == (__u32)l3 + 10 || i == (__u32)l3 + 11))
			continue;
		if (fam == 6 && i == (__u32)l3 && !(diff & 0xf0))
			continue;
		if (fam == 6 && i == (__u32)l3 + 1 && !(diff & 0x3f))
			continue;
		return 0;
	}
	if (l3 >= 0 && fam == 4 && (__u32)l3 + 20 <= len) {
		__u32 ihl = (in[l3] & 0xf) * 4;

		if (ihl >= 20 && l3 + ihl <= len && ip4_csum_ok(in + l3, ihl) &&
		    !ip4_csum_ok(out + l3, ihl))
			return 0;
	}
	return 1;
}

static void test_random(void)
{
	static const __u8 l4s[] = { IPPROTO_TCP, IPPROTO_TCP, IPPROTO_TCP,
				    IPPROTO_UDP, IPPROTO_ICMP };
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX], counted = 0;
	__u8 in[PKT_MAX], out[PKT_MAX];
	__u32 out_len, len, i, j, bad = 0, not_pass = 0, refused = 0;
	int k, verdict;

	dp_flush(&dp);
	cfg(5, FS_DEFAULT_IDLE_MS);
	dp_stats(&dp, before);
	for (i = 0; i < RANDOM_FRAMES; i++) {
		__u32 kind = rnd() % 8;

		if (kind == 0) {	/* pure noise */
			len = ETH_HLEN + rnd() % 200;
			for (j = 0; j < len; j++)
				in[j] = rnd();
			if (rnd() & 1) {	/* plausible ethertype */
				in[12] = (rnd() & 1) ? 0x08 : 0x86;
				in[13] = in[12] == 0x08 ? 0x00 : 0xdd;
			}
		} else {		/* a valid frame, then mutated */
			struct pkt_spec s = (rnd() & 1) ?
				pkt_tcp4(rnd() % 64, rnd() % 4) :
				pkt_tcp6(rnd() % 64, rnd() % 4);
			int muts = rnd() % 4;

			s.vlans = rnd() % 3;
			s.l4 = l4s[rnd() % sizeof(l4s)];
			if (s.family == 6 && s.l4 == IPPROTO_ICMP)
				s.l4 = IPPROTO_ICMPV6;
			s.tos = rnd();
			s.payload = rnd() % 100;
			if (s.family == 4) {
				s.ip_opt_len = (rnd() % 11) * 4;
				if (!(rnd() % 8))
					s.frag_off = rnd();
			} else {
				static const __u8 ex[] = {
					IPPROTO_HOPOPTS, IPPROTO_ROUTING,
					IPPROTO_DSTOPTS, IPPROTO_FRAGMENT };
				s.n_ext = rnd() % 8;
				for (k = 0; k < s.n_ext; k++)
					s.ext[k] = ex[rnd() % 4];
				s.ext_frag_offset = rnd() % 2;
			}
			s.tcp_doff = 5 + rnd() % 11;
			len = pkt_build(&s, in, PKT_MAX);
			for (k = 0; k < muts; k++)
				in[rnd() % len] ^= (__u8)(1u << (rnd() % 8));
			if (rnd() % 4 == 0)
				len = ETH_HLEN + rnd() % (len - ETH_HLEN + 1);
		}
		verdict = dp_run(&dp, in, len, out, &out_len, 1, NULL);
		if (tc_refuses_short_ip(in, len, verdict))
			refused++;
		else if (verdict != PASS)
			not_pass++;
		else if (out_len != len || !check_random_output(in, out, len)) {
			if (!bad++) {
				tap_diag("first bad frame #%u, length %u", i,
					 len);
				pkt_hexdiff(in, out, len);
			}
		}
	}
	dp_stats(&dp, after);
	for (k = 0; k < FS_STAT_MAX; k++) {
		if (k == FS_STAT_PKTS_SHORT || k == FS_STAT_PKTS_LONG ||
		    (k >= FS_STAT_PASS_NON_TCP && k <= FS_STAT_PASS_DISABLED))
			counted += after[k] - before[k];
	}
	tap_ok(!not_pass, "%d random/mutated frames: every verdict %s",
	       RANDOM_FRAMES, dp.hook == DP_TC ? "TC_ACT_UNSPEC" : "XDP_PASS");
	tap_ok(!bad, "random frames: output differs from input only in DSCP "
	       "bits and a still-verifying IPv4 checksum (%u bad)", bad);
	tap_ok(counted == RANDOM_FRAMES - refused && refused < RANDOM_FRAMES / 10,
	       "random frames: each counted exactly once across the stats "
	       "(%llu; %u too short for BPF_PROG_TEST_RUN to build an skb)",
	       (unsigned long long)counted, refused);
}

static void each_hook(enum dp_hook h)
{
	test_fixtures();
	test_truncation();
	test_threshold(1);
	test_threshold(20);
	test_threshold(40);
	test_threshold(0);
	test_flows_independent();
	test_ack_short(4);
	test_ack_short(6);
	test_idle_expiry();
	test_runtime_config();
	test_ecn_and_checksum();
	test_concurrency();
	test_random();
	if (h == DP_TC)
		test_gro();
}

int main(void)
{
	return dp_tap_main(&dp, TEST_FLOWS, each_hook);
}
