// SPDX-License-Identifier: GPL-2.0
/*
 * test_dup.c - the short class's duplication (bpf/dup.bpf.c) through
 * BPF_PROG_TEST_RUN: which packets fs_dup copies (and that the copy
 * leaves on the LONG device with LONG's Ethernet addresses while the
 * original is unchanged), and what fs_dedup drops: the second copy of a
 * segment, on the other tunnel, whichever comes first; never a
 * retransmission (new IPv4 ID, new IPv6 timestamp), a repeat on the same
 * tunnel, a late repeat, or a new segment when the table is full.
 *
 * Runs in a network namespace of its own (unshare), with a veth pair
 * dupA/dupB standing for the two tunnel devices: the copy goes out of
 * dupA and is captured on dupB; fs_dedup sees packets "arrive" on either
 * (__sk_buff.ifindex of the test run). Output is TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "dup.skel.h"
#include "pkt.h"
#include "tap.h"

#define DSCP_S FS_DEFAULT_DSCP_SHORT
#define TOS_SHORT (DSCP_S << FS_DSCP_SHIFT)
#define TOS_LONG (FS_DEFAULT_DSCP_LONG << FS_DSCP_SHIFT)
#define TOS_SPILL (FS_DEFAULT_DSCP_SPILL << FS_DSCP_SHIFT)
#define WINDOW_J 100000		/* jiffies: no test waits this long */
#define SMALL_TABLE 64

static const __u8 long_dmac[6] = { 0x02, 0xdd, 0, 0, 0, 0x0b };
static const __u8 long_smac[6] = { 0x02, 0xdd, 0, 0, 0, 0x0a };
static int if_a, if_b;		/* "SHORT" and "LONG" */
static int cap_fd = -1;		/* AF_PACKET on dupB: what leaves dupA */

static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

struct inst {
	struct dup *skel;
	int dup_fd, dedup_fd, cfg_fd, dcfg_fd, stats_fd, seen4_fd, seen6_fd;
};

static void inst_open(struct inst *in, __u32 entries)
{
	struct split_config c = { .dscp_short = DSCP_S,
				  .dscp_long = FS_DEFAULT_DSCP_LONG,
				  .dscp_spill = FS_DEFAULT_DSCP_SPILL,
				  .flags = FS_DEFAULT_CFG_FLAGS };
	__u32 zero = 0;

	in->skel = dup__open();
	if (!in->skel)
		die("open build/bpf/dup.bpf.o");
	bpf_map__set_max_entries(in->skel->maps.fs_dup_seen4, entries);
	bpf_map__set_max_entries(in->skel->maps.fs_dup_seen6, entries);
	if (dup__load(in->skel))
		die("load build/bpf/dup.bpf.o");
	in->dup_fd = bpf_program__fd(in->skel->progs.fs_dup);
	in->dedup_fd = bpf_program__fd(in->skel->progs.fs_dedup);
	in->cfg_fd = bpf_map__fd(in->skel->maps.fs_config);
	in->dcfg_fd = bpf_map__fd(in->skel->maps.fs_dup_config);
	in->stats_fd = bpf_map__fd(in->skel->maps.fs_dup_stats);
	in->seen4_fd = bpf_map__fd(in->skel->maps.fs_dup_seen4);
	in->seen6_fd = bpf_map__fd(in->skel->maps.fs_dup_seen6);
	if (bpf_map_update_elem(in->cfg_fd, &zero, &c, 0))
		die("fs_config");
}

static void dconfig(struct inst *in, __u32 flags, __u64 window_j)
{
	struct dup_config d = { .flags = flags, .long_ifindex = if_a,
				.window_jiffies = window_j };
	__u32 zero = 0;

	memcpy(d.long_dmac, long_dmac, 6);
	memcpy(d.long_smac, long_smac, 6);
	if (bpf_map_update_elem(in->dcfg_fd, &zero, &d, 0))
		die("fs_dup_config");
}

static __u64 stat(struct inst *in, enum fs_dup_stat id)
{
	int n = libbpf_num_possible_cpus(), i;
	struct fs_dup_stats v[n];
	__u32 zero = 0;
	__u64 sum = 0;

	if (bpf_map_lookup_elem(in->stats_fd, &zero, v))
		die("fs_dup_stats");
	for (i = 0; i < n; i++)
		sum += v[i].v[id];
	return sum;
}

/* One run of @prog on @frame arriving on @ifindex (0: the default). */
static int run(int prog, const __u8 *frame, int len, int ifindex, __u8 *out,
	       __u32 *out_len)
{
	struct __sk_buff skb = { .ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = out, .data_size_out = PKT_MAX, .repeat = 1,
		    .ctx_in = &skb, .ctx_size_in = sizeof(skb));

	if (bpf_prog_test_run_opts(prog, &o))
		die("BPF_PROG_TEST_RUN");
	if (out_len)
		*out_len = o.data_size_out;
	return o.retval;
}

/* ---- frames ---------------------------------------------------------- */
struct seg {
	struct pkt_spec s;
	int ip_id;		/* IPv4 ID; -1: the builder's */
	int ts;			/* IPv6/IPv4: NOP NOP TS first with this tsval */
	int ts_late;		/* the TS option after a SACK-permitted + NOPs */
};

static int build(const struct seg *g, __u8 *buf)
{
	struct pkt_spec s = g->s;
	int len, fam, l3, th;
	__u8 *o;

	if ((g->ts || g->ts_late) && s.tcp_doff < 8)
		s.tcp_doff = 8;
	len = pkt_build(&s, buf, PKT_MAX);
	l3 = pkt_l3_offset(buf, len, &fam);
	if (len < 0 || l3 < 0)
		die("pkt_build");
	if (fam == 4 && g->ip_id >= 0) {
		buf[l3 + 4] = g->ip_id >> 8;
		buf[l3 + 5] = g->ip_id & 0xff;
		ip4_csum_fix(buf + l3, 20);
	}
	th = l3 + (fam == 4 ? 20 : 40);
	o = buf + th + 20;
	if (g->ts) {
		o[0] = 1, o[1] = 1, o[2] = 8, o[3] = 10;
		o[4] = g->ts >> 24, o[5] = g->ts >> 16, o[6] = g->ts >> 8, o[7] = g->ts;
		memset(o + 8, 0, 4);
	} else if (g->ts_late) {
		o[0] = 4, o[1] = 2;	/* SACK permitted */
		o[2] = 8, o[3] = 10;
		o[4] = g->ts_late >> 24, o[5] = g->ts_late >> 16;
		o[6] = g->ts_late >> 8, o[7] = g->ts_late;
		memset(o + 8, 0, 4);
	}
	return len;
}

static struct seg seg4(__u8 tos, __u32 seq)
{
	struct seg g = { .s = pkt_tcp4(40000, 80), .ip_id = -1 };

	g.s.tos = tos;
	g.s.seq = seq;
	return g;
}

static struct seg seg6(__u8 tos, __u32 seq, int ts)
{
	struct seg g = { .s = pkt_tcp6(40000, 80), .ip_id = -1, .ts = ts };

	g.s.tos = tos;
	g.s.seq = seq;
	return g;
}

/* ---- capture of the copies ------------------------------------------- */
static void cap_open(void)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = if_b };

	cap_fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (cap_fd < 0 || bind(cap_fd, (void *)&sa, sizeof(sa)))
		die("AF_PACKET socket on dupB");
}

/* The frames from long_smac that arrived on dupB within @ms; the last in
 * @buf. Anything else (the kernel's own IPv6 chatter) is skipped. */
static int cap_read(__u8 *buf, int *len, int ms)
{
	struct pollfd pfd = { .fd = cap_fd, .events = POLLIN };
	__u8 tmp[PKT_MAX];
	int n = 0, r;

	while (poll(&pfd, 1, ms) > 0) {
		r = recv(cap_fd, tmp, sizeof(tmp), 0);
		if (r < 12 || memcmp(tmp + 6, long_smac, 6))
			continue;
		memcpy(buf, tmp, r);
		*len = r;
		n++;
		ms = 50;
	}
	return n;
}

/* ---- duplication ----------------------------------------------------- */
struct dup_case {
	const char *desc;
	struct seg g;
	int copied;
};

static void test_dup_table(struct inst *in)
{
	struct dup_case cases[] = {
		{ "IPv4 short data segment: copied", seg4(TOS_SHORT, 1), 1 },
		{ "IPv4 long data segment: not copied", seg4(TOS_LONG, 1), 0 },
		{ "IPv4 spill data segment: not copied", seg4(TOS_SPILL, 1), 0 },
		{ "IPv4 short SYN: copied", seg4(TOS_SHORT, 1), 1 },
		{ "IPv4 short FIN without data: copied", seg4(TOS_SHORT, 1), 1 },
		{ "IPv4 short pure ACK: not copied", seg4(TOS_SHORT, 1), 0 },
		{ "IPv4 short UDP: not copied", seg4(TOS_SHORT, 1), 0 },
		{ "IPv4 short ICMP: not copied", seg4(TOS_SHORT, 1), 0 },
		{ "IPv4 short in a VLAN tag: copied", seg4(TOS_SHORT, 1), 1 },
		{ "IPv6 short data segment: copied", seg6(TOS_SHORT, 1, 7), 1 },
		{ "IPv6 long data segment: not copied", seg6(TOS_LONG, 1, 7), 0 },
		{ "IPv6 short pure ACK: not copied", seg6(TOS_SHORT, 1, 7), 0 },
		{ "IPv6 short UDP: not copied", seg6(TOS_SHORT, 1, 0), 0 },
	};
	__u8 frame[PKT_MAX], out[PKT_MAX], copy[PKT_MAX], want[PKT_MAX];
	int len, wlen, clen = 0, n, ret;
	__u32 olen;
	size_t i;

	cases[3].g.s.tcp_flags = TH_SYN, cases[3].g.s.payload = 0;
	cases[4].g.s.tcp_flags = TH_FIN | TH_ACK, cases[4].g.s.payload = 0;
	cases[5].g.s.tcp_flags = TH_ACK, cases[5].g.s.payload = 0;
	cases[6].g.s.l4 = IPPROTO_UDP;
	cases[7].g.s.l4 = IPPROTO_ICMP;
	cases[8].g.s.vlans = 1;
	cases[11].g.s.tcp_flags = TH_ACK, cases[11].g.s.payload = 0;
	cases[12].g.s.l4 = IPPROTO_UDP;

	dconfig(in, FS_DUP_F_DUP, WINDOW_J);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 p0 = stat(in, FS_DUP_STAT_PKTS), b0 = stat(in, FS_DUP_STAT_BYTES);

		len = build(&cases[i].g, frame);
		cap_read(copy, &clen, 0);	/* drain */
		ret = run(in->dup_fd, frame, len, 0, out, &olen);
		n = cap_read(copy, &clen, cases[i].copied ? 500 : 100);
		memcpy(want, frame, len);
		memcpy(want, long_dmac, 6);
		memcpy(want + 6, long_smac, 6);
		wlen = len;
		if (cases[i].g.s.vlans == 1) {
			/* the receiving veth takes the tag out of the frame
			 * (AF_PACKET shows it as metadata) */
			memmove(want + 12, want + 16, len - 16);
			wlen = len - 4;
		}
		if (!tap_ok(ret == TC_ACT_UNSPEC && olen == (__u32)len &&
		       !memcmp(out, frame, len) &&
		       stat(in, FS_DUP_STAT_PKTS) - p0 == (__u64)cases[i].copied &&
		       stat(in, FS_DUP_STAT_BYTES) - b0 ==
			       (cases[i].copied ? (__u64)len : 0) &&
		       n == cases[i].copied &&
		       (!n || (clen == wlen && !memcmp(copy, want, wlen))),
		       "dup: %s", cases[i].desc)) {
			tap_diag("verdict %d, out %u/%d B, copies %d (%d B), dup_packets +%llu",
				 ret, olen, len, n, clen,
				 (unsigned long long)(stat(in, FS_DUP_STAT_PKTS) - p0));
			if (n)
				pkt_hexdiff(want, copy, wlen);
			pkt_hexdiff(frame, out, len);
		}
	}

	/* off: nothing copied */
	dconfig(in, FS_DUP_F_DEDUP, WINDOW_J);
	{
		struct seg g = seg4(TOS_SHORT, 1);
		__u64 p0 = stat(in, FS_DUP_STAT_PKTS);

		len = build(&g, frame);
		ret = run(in->dup_fd, frame, len, 0, out, &olen);
		n = cap_read(copy, &clen, 100);
		tap_ok(ret == TC_ACT_UNSPEC && n == 0 &&
		       stat(in, FS_DUP_STAT_PKTS) == p0,
		       "dup: off (flag clear): a short segment is not copied");
	}

	/* the LONG device gone: counted as a failure, original unchanged */
	{
		struct dup_config d = { .flags = FS_DUP_F_DUP, .long_ifindex = 999999,
					.window_jiffies = WINDOW_J };
		struct seg g = seg4(TOS_SHORT, 1);
		__u64 f0 = stat(in, FS_DUP_STAT_FAIL);
		__u32 zero = 0;

		if (bpf_map_update_elem(in->dcfg_fd, &zero, &d, 0))
			die("fs_dup_config");
		len = build(&g, frame);
		ret = run(in->dup_fd, frame, len, 0, out, &olen);
		tap_ok(ret == TC_ACT_UNSPEC && !memcmp(out, frame, len) &&
		       stat(in, FS_DUP_STAT_FAIL) == f0 + 1,
		       "dup: no LONG device: dup_failures +1, the original passes unchanged");
	}
}

/* ---- dedup ----------------------------------------------------------- */
enum { ON_A, ON_B };
struct arrival {
	const char *desc;
	struct seg g;
	int on;			/* ON_A (SHORT) or ON_B (LONG) */
	int verdict;		/* TC_ACT_UNSPEC (pass) or TC_ACT_SHOT */
};

static void run_arrivals(struct inst *in, const char *title,
			 const struct arrival *a, size_t n)
{
	__u8 frame[PKT_MAX], out[PKT_MAX];
	int len, ret;
	size_t i;

	for (i = 0; i < n; i++) {
		len = build(&a[i].g, frame);
		ret = run(in->dedup_fd, frame, len, a[i].on == ON_A ? if_a : if_b,
			  out, NULL);
		if (!tap_ok(ret == a[i].verdict, "dedup: %s: %s on %s: %s", title,
			    a[i].desc, a[i].on == ON_A ? "SHORT" : "LONG",
			    a[i].verdict == TC_ACT_SHOT ? "dropped" : "passes"))
			tap_diag("verdict %d", ret);
	}
}

#define ARR(t, arr) run_arrivals(in, t, arr, sizeof(arr) / sizeof(arr[0]))
#define PASS TC_ACT_UNSPEC
#define SHOT TC_ACT_SHOT

static struct seg with_id(struct seg g, int id)
{
	g.ip_id = id;
	return g;
}

static struct seg with_flags(struct seg g, __u8 flags, int payload)
{
	g.s.tcp_flags = flags;
	g.s.payload = payload;
	return g;
}

static void test_dedup(struct inst *in)
{
	struct seg a4 = with_id(seg4(TOS_SHORT, 1000), 0x100);
	struct arrival first[] = {
		{ "first copy", a4, ON_A, PASS },
		{ "second copy", a4, ON_B, SHOT },
		{ "a third arrival (its entry was used)", a4, ON_B, PASS },
	};
	struct seg b4 = with_id(seg4(TOS_SHORT, 2000), 0x200);
	struct arrival before[] = {
		{ "the copy first", b4, ON_B, PASS },
		{ "then the original", b4, ON_A, SHOT },
	};
	struct seg c4 = with_id(seg4(TOS_SHORT, 3000), 0x300);
	struct arrival retrans[] = {
		{ "original", c4, ON_A, PASS },
		{ "retransmission (new IP ID)", with_id(c4, 0x301), ON_B, PASS },
		{ "the original's copy", c4, ON_B, SHOT },
		{ "the retransmission's copy", with_id(c4, 0x301), ON_A, SHOT },
	};
	struct seg d4 = with_id(seg4(TOS_SHORT, 4000), 0x400);
	struct arrival same[] = {
		{ "first", d4, ON_A, PASS },
		{ "the same key again", d4, ON_A, PASS },
		{ "its copy", d4, ON_B, SHOT },
	};
	struct seg w1 = with_id(seg4(TOS_SHORT, 0xfffffff0u), 0x500);
	struct seg w2 = with_id(seg4(TOS_SHORT, 0x10), 0x501);
	struct arrival wrap[] = {
		{ "segment before the wrap", w1, ON_A, PASS },
		{ "segment after the wrap", w2, ON_A, PASS },
		{ "copy after the wrap", w2, ON_B, SHOT },
		{ "copy before the wrap", w1, ON_B, SHOT },
	};
	struct seg l4 = with_id(seg4(TOS_LONG, 5000), 0x600);
	struct seg k4 = with_id(with_flags(seg4(TOS_SHORT, 6000), TH_ACK, 0), 0x700);
	struct arrival other[] = {
		{ "a long segment", l4, ON_A, PASS },
		{ "the same long segment", l4, ON_B, PASS },
		{ "a pure ACK", k4, ON_A, PASS },
		{ "the same pure ACK", k4, ON_B, PASS },
	};
	struct seg syn = with_id(with_flags(seg4(TOS_SHORT, 7000), TH_SYN, 0), 0x800);
	struct arrival syns[] = {
		{ "a SYN", syn, ON_A, PASS },
		{ "its copy", syn, ON_B, SHOT },
	};
	struct seg a6 = seg6(TOS_SHORT, 1000, 11);
	struct seg r6 = seg6(TOS_SHORT, 1000, 12);
	struct seg n6 = seg6(TOS_SHORT, 9000, 0);
	struct seg t6 = seg6(TOS_SHORT, 9500, 0);
	struct arrival v6[] = {
		{ "first copy", a6, ON_A, PASS },
		{ "retransmission (new timestamp)", r6, ON_A, PASS },
		{ "the first's copy", a6, ON_B, SHOT },
		{ "the retransmission's copy", r6, ON_B, SHOT },
		{ "without timestamps: first copy", n6, ON_B, PASS },
		{ "without timestamps: its copy", n6, ON_A, SHOT },
	};
	struct arrival v6_late_ts[] = {
		{ "timestamp after other options: first", t6, ON_A, PASS },
		{ "timestamp after other options: another tsval", t6, ON_B, PASS },
		{ "its copy", t6, ON_A, SHOT },
	};
	__u64 d0;

	dconfig(in, FS_DUP_F_DEDUP, WINDOW_J);
	d0 = stat(in, FS_DUP_STAT_DROPS);
	ARR("IPv4", first);
	ARR("IPv4", before);
	ARR("IPv4", retrans);
	ARR("IPv4", same);
	ARR("IPv4 sequence wrap-around", wrap);
	ARR("IPv4 not remembered", other);
	ARR("IPv4", syns);
	ARR("IPv6", v6);
	v6_late_ts[0].g.ts = 0, v6_late_ts[0].g.ts_late = 21;
	v6_late_ts[1].g.ts = 0, v6_late_ts[1].g.ts_late = 22;
	v6_late_ts[2].g.ts = 0, v6_late_ts[2].g.ts_late = 22;
	ARR("IPv6", v6_late_ts);
	tap_ok(stat(in, FS_DUP_STAT_DROPS) - d0 == 12,
	       "dedup: dedup_drops counts the 12 second copies (got %llu)",
	       (unsigned long long)(stat(in, FS_DUP_STAT_DROPS) - d0));
	tap_ok(stat(in, FS_DUP_STAT_SAME_DEV) == 1,
	       "dedup: dedup_same_tunnel counts the one repeat on its own tunnel");

	/* dedup off: nothing dropped */
	{
		struct seg g = with_id(seg4(TOS_SHORT, 8000), 0x900);
		struct arrival off[] = {
			{ "first", g, ON_A, PASS },
			{ "copy", g, ON_B, PASS },
		};

		dconfig(in, FS_DUP_F_DUP, WINDOW_J);
		ARR("off (flag clear)", off);
	}

	/* window: a repeat after it passes */
	{
		struct seg g = with_id(seg4(TOS_SHORT, 8500), 0xa00);
		struct arrival late[] = {
			{ "first", g, ON_A, PASS },
		};
		struct arrival late2[] = {
			{ "its copy after the window", g, ON_B, PASS },
		};
		__u64 l0 = stat(in, FS_DUP_STAT_LATE);

		dconfig(in, FS_DUP_F_DEDUP, 0);
		ARR("window 0", late);
		usleep(30 * 1000);	/* > 1 jiffy at HZ >= 100 */
		ARR("window 0", late2);
		tap_ok(stat(in, FS_DUP_STAT_LATE) - l0 >= 1,
		       "dedup: dedup_late counts the late repeat");
	}
}

/* A full table: every new segment passes (LRU evicts the oldest), and a
 * copy of a recent one is still dropped. */
static void test_full(void)
{
	struct inst in;
	__u8 frame[PKT_MAX], out[PKT_MAX];
	int len, ret, i, passed = 0, n = SMALL_TABLE * 16;
	struct seg g;

	inst_open(&in, SMALL_TABLE);
	dconfig(&in, FS_DUP_F_DEDUP, WINDOW_J);
	for (i = 0; i < n; i++) {
		g = with_id(seg4(TOS_SHORT, 100000 + i * 1000), i & 0xffff);
		len = build(&g, frame);
		ret = run(in.dedup_fd, frame, len, if_a, out, NULL);
		passed += ret == TC_ACT_UNSPEC;
	}
	tap_ok(passed == n && stat(&in, FS_DUP_STAT_DROPS) == 0,
	       "dedup: full table (%d entries): %d new segments all pass (%d did), none dropped",
	       SMALL_TABLE, n, passed);
	len = build(&g, frame);
	ret = run(in.dedup_fd, frame, len, if_b, out, NULL);
	tap_ok(ret == TC_ACT_SHOT,
	       "dedup: full table: the copy of the newest segment is still dropped");
	dup__destroy(in.skel);
}

int main(void)
{
	struct inst in;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!getenv("DUP_VERBOSE"))
		libbpf_set_print(NULL);
	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET)");
	if (system("ip link set lo up && "
		   "ip link add dupA type veth peer name dupB && "
		   "ip link set dupA up && ip link set dupB up"))
		die("veth pair dupA/dupB");
	if_a = if_nametoindex("dupA");
	if_b = if_nametoindex("dupB");
	if (!if_a || !if_b)
		die("if_nametoindex");
	cap_open();
	inst_open(&in, FS_DUP_DEFAULT_ENTRIES);
	test_dup_table(&in);
	test_dedup(&in);
	dup__destroy(in.skel);
	test_full();
	return tap_done();
}
