// SPDX-License-Identifier: GPL-2.0
/*
 * test_policy.c - unit tests of the splitter's policy through
 * BPF_PROG_TEST_RUN, on both hooks (descriptions start with "xdp: " /
 * "tc: "): rule precedence (IPv4, IPv6, prefix against port, source against
 * destination), the rule-count gate, the byte and packet thresholds at
 * their exact boundaries (GRO packets at TC), the reshort gap at exactly
 * the gap, rule changes on live flows, and flows that start mid-stream
 * (not a SYN: evicted, expired, restarted) under `midstream short|long`.
 * Output is TAP, counted by tests/run.
 *
 * Silence is made by writing a flow's last_seen back in time: a packet
 * then sees an exact age in jiffies, provided no tick falls between the
 * write and the packet (checked; the step is repeated from the same state
 * when one did).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "pkt.h"
#include "dp_tap.h"

#define TEST_FLOWS 4096
#define DSCP_S FS_DEFAULT_DSCP_SHORT
#define DSCP_L FS_DEFAULT_DSCP_LONG
#define NO_TH (-1)
#define MAX_PKTS 64
/* Long enough that a stalled test never makes a gap by itself; the gaps
 * the tests want are made by writing last_seen back (send_after()). */
#define GAP_MS 5000

static struct dp dp;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Global settings: packet and byte thresholds, reshort gap; idle 30 s,
 * ack-short off (pure ACKs follow the thresholds like any packet), the
 * flags in cfg_flags (enabled; midstream short unless a test sets it). The
 * rule counts are kept. */
static __u32 cfg_flags = FS_CFG_F_ENABLED;

static void config(__u32 threshold, __u32 threshold_bytes, __u32 reshort_ms)
{
	struct dp_split w = {
		.threshold = threshold, .threshold_bytes = threshold_bytes,
		.reshort_ms = reshort_ms, .dscp_short = DSCP_S,
		.dscp_long = DSCP_L, .flags = cfg_flags,
	};

	if (dp_config(&dp, &w))
		die("config");
}

/* ---- rules ---------------------------------------------------------------- */
static __u32 map_count(int fd)
{
	struct rule_key6 k, next;
	void *prev = NULL;
	__u32 n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* The config counts what the tries hold (as splitctl keeps it). */
static void rules_counted(void)
{
	struct split_config c;

	dp_get_config(&dp, &c);
	c.rules4 = map_count(dp.rules4_fd);
	c.rules6 = map_count(dp.rules6_fd);
	dp_put_config(&dp, &c);
}

static void rules_clear(void)
{
	int fds[2] = { dp.rules4_fd, dp.rules6_fd }, i;
	struct rule_key6 k;

	for (i = 0; i < 2; i++)
		while (!bpf_map_get_next_key(fds[i], NULL, &k))
			bpf_map_delete_elem(fds[i], &k);
	rules_counted();
}

/* The trie key of ADDR/PLEN (IPv4 or IPv6 text) and port (0: any) in @k,
 * which holds an IPv4 key as its first bytes; returns the trie's fd, or -1
 * when ADDR is no address. */
_Static_assert(offsetof(struct rule_key4, addr) == offsetof(struct rule_key6, addr),
	       "an IPv4 rule key is the start of an IPv6 one");
static int rule_key(const char *addr, int plen, __u16 port, struct rule_key6 *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = FS_RULE_PORT_BITS + plen;
	k->port = htons(port);
	if (inet_pton(AF_INET, addr, k->addr) == 1)
		return dp.rules4_fd;
	if (inet_pton(AF_INET6, addr, k->addr) == 1)
		return dp.rules6_fd;
	return -1;
}

/* A rule for ADDR/PLEN (IPv4 or IPv6 text), port (0: any), mode and its
 * thresholds (NO_TH / 0: none); the config's counts are not touched. */
static void rule_put(const char *addr, int plen, __u16 port, __u8 mode,
		     int threshold, __u32 threshold_bytes)
{
	struct fs_rule v = { .prefixlen = plen };
	struct rule_key6 k;
	int fd = rule_key(addr, plen, port, &k);

	v.policy.mode = mode;
	if (threshold != NO_TH) {
		v.policy.flags = FS_POLICY_F_THRESHOLD;
		v.policy.threshold = threshold;
	}
	v.policy.threshold_bytes = threshold_bytes;
	if (port)
		v.flags = FS_RULE_F_PORT;
	snprintf(v.name, sizeof(v.name), "%s/%d", addr, plen);
	if (fd < 0)
		errno = EINVAL;
	if (fd < 0 || bpf_map_update_elem(fd, &k, &v, BPF_ANY))
		die("rule update");
}

static void rule_del(const char *addr, int plen, __u16 port)
{
	struct rule_key6 k;
	int fd = rule_key(addr, plen, port, &k);

	if (fd >= 0)
		bpf_map_delete_elem(fd, &k);
}

/* ---- flows ---------------------------------------------------------------- */
/* A TCP flow from SRC:SPORT to DST:DPORT (both IPv4 or both IPv6 text). */
static struct pkt_spec flow(const char *src, __u16 sport, const char *dst,
			    __u16 dport)
{
	struct pkt_spec s = pkt_tcp4(sport, dport);
	struct in_addr a4, b4;

	if (inet_pton(AF_INET, src, &a4) == 1 && inet_pton(AF_INET, dst, &b4) == 1) {
		s.saddr4 = ntohl(a4.s_addr);
		s.daddr4 = ntohl(b4.s_addr);
	} else {
		s = pkt_tcp6(sport, dport);
		if (inet_pton(AF_INET6, src, s.saddr6) != 1 ||
		    inet_pton(AF_INET6, dst, s.daddr6) != 1) {
			fprintf(stderr, "bad flow %s -> %s\n", src, dst);
			exit(1);
		}
	}
	s.tos = 0x10;	/* another DSCP: every packet rewritten, both marks seen */
	s.payload = 100;
	return s;
}

/* One packet standing for @segs wire packets (TC; 0 = a plain packet):
 * 'S' or 'L' by its DSCP, '?' when it did not pass. */
static char send_one(const struct pkt_spec *s, __u32 segs)
{
	__u8 in[PKT_MAX], out[PKT_MAX];
	__u32 out_len;
	int len = pkt_build(s, in, PKT_MAX), fam, l3, v;
	__u8 d;

	v = dp_test_run(dp.prog_fd[dp.hook], dp.hook, in, len, out, &out_len,
			1, segs, NULL);
	if (v != dp_pass_verdict(dp.hook))
		return '?';
	l3 = pkt_l3_offset(out, len, &fam);
	d = pkt_dscp(out + l3, fam);
	return d == DSCP_S ? 'S' : d == DSCP_L ? 'L' : '?';
}

/* send_one() of a plain packet; the stats' deltas in @d. */
static char send_counted(const struct pkt_spec *s, __u64 d[FS_STAT_MAX])
{
	__u64 b[FS_STAT_MAX], x[FS_STAT_MAX];
	char cls;
	int i;

	dp_stats(&dp, b);
	cls = send_one(s, 0);
	dp_stats(&dp, x);
	for (i = 0; i < FS_STAT_MAX; i++)
		d[i] = x[i] - b[i];
	return cls;
}

/* Send strlen(@want) packets of @s; the classes they got in @got. */
static int classes(const struct pkt_spec *s, const char *want, char *got)
{
	size_t i, n = strlen(want);

	for (i = 0; i < n && i < MAX_PKTS; i++)
		got[i] = send_one(s, 0);
	got[i] = '\0';
	return !strcmp(want, got);
}

static __u64 stat_delta(const __u64 *a, const __u64 *b, enum fs_stat i)
{
	return a[i] - b[i];
}

/* Packets of a flow get exactly the classes @want ('S'/'L'), one test. */
#define expect(s, want, ...)						\
	do {								\
		char got_[MAX_PKTS + 1];				\
		if (!tap_ok(classes(&(s), want, got_), __VA_ARGS__))	\
			tap_diag("classes %s, want %s", got_, want);	\
	} while (0)

/* ---- precedence ----------------------------------------------------------- */
/* The test a rule or a flow case belongs to */
enum rule_test { PREC4, PREC6, GATE };

struct rule_spec {
	enum rule_test test;
	const char *addr;
	int plen;
	__u16 port;		/* 0: any */
	__u8 mode;
	int threshold;		/* NO_TH: none */
	__u32 threshold_bytes;
};

/* A flow from SRC:SPORT to DST:DPORT gets the classes WANT: test WHAT. */
struct flow_case {
	enum rule_test test;
	const char *src;
	__u16 sport;
	const char *dst;
	__u16 dport;
	const char *want, *what;
};

/* The rules and flows of the precedence and rule-gate tests */
static const struct rule_spec rule_table[] = {
	{ PREC4, "10.0.0.0", 8, 0, FS_MODE_LONG, NO_TH, 0 },
	{ PREC4, "10.1.0.0", 16, 0, FS_MODE_SHORT, NO_TH, 0 },
	{ PREC4, "10.1.0.0", 16, 443, FS_MODE_AUTO, 2, 0 },
	{ PREC4, "10.1.2.3", 32, 0, FS_MODE_AUTO, 5, 0 },
	{ PREC4, "10.0.0.0", 8, 8080, FS_MODE_AUTO, 4, 0 },
	{ PREC4, "11.0.0.0", 8, 0, FS_MODE_AUTO, 1, 0 },
	{ PREC6, "fd00::", 16, 0, FS_MODE_LONG, NO_TH, 0 },
	{ PREC6, "fd00:1::", 32, 0, FS_MODE_SHORT, NO_TH, 0 },
	{ PREC6, "fd00:1::", 32, 443, FS_MODE_AUTO, 2, 0 },
	{ PREC6, "fd00:1::5", 128, 0, FS_MODE_AUTO, 4, 0 },
	{ PREC6, "10.0.0.0", 8, 0, FS_MODE_LONG, NO_TH, 0 },
	{ GATE, "10.0.0.0", 8, 0, FS_MODE_LONG, NO_TH, 0 },
	{ GATE, "fd00::", 16, 0, FS_MODE_LONG, NO_TH, 0 },
};

static const struct flow_case flow_table[] = {
	{PREC4, "192.168.1.1", 40000, "172.16.0.1", 80, "SSSLL",
	 "IPv4 no rule matches: the global threshold 3"},
	{PREC4, "192.168.1.1", 40000, "10.9.9.9", 80, "LLLL",
	 "IPv4 10.0.0.0/8 long: long from the first packet"},
	{PREC4, "192.168.1.1", 40000, "10.1.9.9", 80, "SSSSSS",
	 "IPv4 10.1.0.0/16 short beats 10.0.0.0/8 long"},
	{PREC4, "192.168.1.1", 40000, "10.1.9.9", 443, "SSLL",
	 "IPv4 10.1.0.0/16 port 443 (threshold 2) beats 10.1.0.0/16 without port"},
	{PREC4, "192.168.1.1", 40000, "10.1.2.3", 443, "SSSSSL",
	 "IPv4 10.1.2.3/32 (threshold 5) beats 10.1.0.0/16 port 443"},
	{PREC4, "192.168.1.1", 40000, "10.9.9.9", 8080, "SSSSL",
	 "IPv4 10.0.0.0/8 port 8080 (threshold 4) beats 10.0.0.0/8 without port"},
	{PREC4, "192.168.1.1", 40000, "10.1.9.9", 8080, "SSSSSS",
	 "IPv4 10.1.0.0/16 without port beats 10.0.0.0/8 port 8080: prefix first"},
	{PREC4, "10.1.9.9", 443, "192.168.1.1", 40000, "SSLL",
	 "IPv4 the rule matches the source endpoint too (port 443 there)"},
	{PREC4, "10.1.9.9", 40000, "192.168.1.1", 443, "SSSSSS",
	 "IPv4 a rule's port belongs to its prefix's endpoint: port 443 of the other endpoint does "
	 "not match"},
	{PREC4, "10.9.9.9", 1000, "11.0.0.1", 1000, "SLL",
	 "IPv4 equal rank at both endpoints: the destination's rule (11.0.0.0/8 threshold 1)"},
	{PREC4, "11.0.0.1", 1000, "10.9.9.9", 1000, "LLL",
	 "IPv4 ... and in the other direction its destination's (10.0.0.0/8 long)"},
	{PREC4, "10.1.5.5", 1000, "11.0.0.1", 1000, "SSSS",
	 "IPv4 a more specific source (10.1.0.0/16 short) beats the destination's /8"},
	{PREC6, "fd99::1", 40000, "fd77::1", 80, "SSSL",
	 "IPv6 no rule matches: the global threshold 3"},
	{PREC6, "fd99::1", 40000, "fd00:9::1", 80, "LLL", "IPv6 fd00::/16 long"},
	{PREC6, "fd99::1", 40000, "fd00:1::9", 80, "SSSSS",
	 "IPv6 fd00:1::/32 short beats fd00::/16 long"},
	{PREC6, "fd99::1", 40000, "fd00:1::9", 443, "SSL",
	 "IPv6 fd00:1::/32 port 443 (threshold 2) beats fd00:1::/32 without port"},
	{PREC6, "fd99::1", 40000, "fd00:1::5", 443, "SSSSL",
	 "IPv6 fd00:1::5/128 (threshold 4) beats fd00:1::/32 port 443"},
	{PREC6, "fd00:1::9", 443, "fd99::1", 40000, "SSL",
	 "IPv6 the rule matches the source endpoint too"},
	/* after a flow while the rules were counted 0 */
	{GATE, "192.168.1.1", 40101, "10.9.9.9", 80, "LL",
	 "IPv4 rule counted: looked up for a new flow"},
	{GATE, "fd99::1", 40101, "fd00::9", 80, "SSSL",
	 "IPv6 rule while only IPv4 rules are counted: not looked up"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* No flows, the global threshold 3 and exactly the rules of @test, put
 * but not counted in the config (the caller counts them). */
static void rules_start(enum rule_test test)
{
	const struct rule_spec *r;

	dp_flush(&dp);
	rules_clear();
	config(3, 0, 0);
	for (r = rule_table; r < rule_table + N(rule_table); r++)
		if (r->test == test)
			rule_put(r->addr, r->plen, r->port, r->mode,
				 r->threshold, r->threshold_bytes);
}

static struct pkt_spec case_flow(const struct flow_case *c)
{
	return flow(c->src, c->sport, c->dst, c->dport);
}

/* The flow cases of @test in flow_table[from..to), in order */
static void expect_cases(enum rule_test test, size_t from, size_t to)
{
	struct pkt_spec s;
	size_t i;

	for (i = from; i < to; i++) {
		if (flow_table[i].test != test)
			continue;
		s = case_flow(&flow_table[i]);
		expect(s, flow_table[i].want, "%s", flow_table[i].what);
	}
}

static void test_precedence4(void)
{
	__u64 b[FS_STAT_MAX], x[FS_STAT_MAX];
	/* the entry of the 4th flow (the IPv4 cases come first) */
	struct pkt_spec s = case_flow(&flow_table[3]);
	struct flow_state st;

	rules_start(PREC4);
	rules_counted();
	dp_stats(&dp, b);
	expect_cases(PREC4, 0, 4);
	tap_ok(dp_flow_get(&dp, &s, &st) == 0 && st.policy.mode == FS_MODE_AUTO &&
	       st.policy.threshold == 2 && (st.policy.flags & FS_POLICY_F_THRESHOLD),
	       "IPv4 the flow entry keeps the rule's policy (auto, threshold 2)");
	expect_cases(PREC4, 4, N(flow_table));
	dp_stats(&dp, x);
	tap_ok(stat_delta(x, b, FS_STAT_RULE_MATCHES) == 11 &&
		       stat_delta(x, b, FS_STAT_FLOWS_NEW) == 12 &&
		       stat_delta(x, b, FS_STAT_FLOWS_PROMOTED) == 6 &&
		       stat_delta(x, b, FS_STAT_PROMOTED_PKTS) == 6,
	       "IPv4 rule_matches +11 of 12 new flows; 6 promotions, all by packets (long-mode "
	       "flows start long)");
	rules_clear();
}

static void test_precedence6(void)
{
	rules_start(PREC6);
	rules_counted();
	expect_cases(PREC6, 0, N(flow_table));
	rules_clear();
}

/* The datapath looks rules up only while the config counts some. */
static void test_rule_gate(void)
{
	struct split_config c;
	struct pkt_spec s;

	rules_start(GATE);
	s = flow("192.168.1.1", 40100, "10.9.9.9", 80);
	expect(s, "SSSL", "rules in the tries, counted 0: not looked up (global threshold)");
	dp_get_config(&dp, &c);
	c.rules4 = 1;
	dp_put_config(&dp, &c);
	expect_cases(GATE, 0, N(flow_table));
	rules_clear();
}

/* ---- thresholds ----------------------------------------------------------- */
/* @n packets of 100 payload bytes under threshold @t and @tb bytes. */
static void bytes_case(__u16 port, __u32 t, __u32 tb, const char *want,
		       enum fs_stat cause)
{
	__u64 b[FS_STAT_MAX], x[FS_STAT_MAX];
	struct pkt_spec s = flow("192.168.1.1", port, "172.16.0.1", 80);
	struct flow_state st = {};
	char got[MAX_PKTS + 1];
	size_t n = strlen(want);
	int ok;

	config(t, tb, 0);
	dp_stats(&dp, b);
	ok = classes(&s, want, got);
	dp_stats(&dp, x);
	ok = ok && dp_flow_get(&dp, &s, &st) == 0 && st.payload == 100 * n &&
	     stat_delta(x, b, FS_STAT_FLOWS_PROMOTED) == 1 &&
	     stat_delta(x, b, cause) == 1;
	if (!tap_ok(ok, "threshold %u, threshold-bytes %u, 100-byte payloads: %s, promoted by %s",
		    t, tb, want, cause == FS_STAT_PROMOTED_PKTS ? "packets" : "bytes"))
		tap_diag("classes %s; flow payload %llu; promoted +%llu (packets +%llu, bytes "
			 "+%llu)",
			 got, (unsigned long long)st.payload,
			 (unsigned long long)stat_delta(x, b, FS_STAT_FLOWS_PROMOTED),
			 (unsigned long long)stat_delta(x, b, FS_STAT_PROMOTED_PKTS),
			 (unsigned long long)stat_delta(x, b, FS_STAT_PROMOTED_BYTES));
}

static void test_bytes(void)
{
	struct pkt_spec s, z;
	struct flow_state st = {};
	char got[MAX_PKTS + 1];
	int ok;

	dp_flush(&dp);
	rules_clear();
	/* before 900 short; before 1000 = the threshold: long */
	bytes_case(41000, 1000000, 1000, "SSSSSSSSSSL", FS_STAT_PROMOTED_BYTES);
	/* one more byte: packet 11 (before 1000 < 1001) short */
	bytes_case(41001, 1000000, 1001, "SSSSSSSSSSSL", FS_STAT_PROMOTED_BYTES);
	bytes_case(41002, 1000000, 1, "SL", FS_STAT_PROMOTED_BYTES);
	/* both thresholds: the first reached decides */
	bytes_case(41003, 5, 1000, "SSSSSL", FS_STAT_PROMOTED_PKTS);
	bytes_case(41004, 20, 500, "SSSSSL", FS_STAT_PROMOTED_BYTES);
	/* both reached by the same packet: counted as packets */
	bytes_case(41005, 10, 1000, "SSSSSSSSSSL", FS_STAT_PROMOTED_PKTS);

	/* TCP payload only: empty segments do not count, headers never */
	config(1000000, 100, 0);
	z = s = flow("192.168.1.1", 41010, "172.16.0.1", 80);
	z.payload = 0;
	ok = classes(&z, "SSS", got);
	ok = ok && classes(&s, "SL", got + 3);
	tap_ok(ok && dp_flow_get(&dp, &s, &st) == 0 && st.payload == 200 && st.packets == 5,
	       "threshold-bytes 100: 3 empty segments then 100-byte ones: S S S S L (payload 200 "
	       "counted, not headers)");

	/* a rule's thresholds replace the global ones */
	config(1, 0, 0);
	rule_put("10.5.0.0", 16, 0, FS_MODE_AUTO, NO_TH, 300);
	rules_counted();
	s = flow("192.168.1.1", 41020, "10.5.0.1", 80);
	expect(s, "SSSL",
	       "rule with threshold-bytes 300 only: its bytes decide, not the global threshold 1");
	rule_put("10.6.0.0", 16, 0, FS_MODE_AUTO, 2, 1000);
	rules_counted();
	s = flow("192.168.1.1", 41021, "10.6.0.1", 80);
	expect(s, "SSL", "rule with threshold 2 and threshold-bytes 1000: packets first");
	rules_clear();
}

/* TC: a GRO packet of 5 segments, 500 payload bytes, takes the class its
 * first segment's byte count gives; the flow's payload stays exact. */
static void test_bytes_gro(void)
{
	static const struct { __u32 tb; const char *want; } c[] = {
		{ 1000, "SSL" }, { 501, "SSL" }, { 500, "SLL" },
	};
	struct flow_state st = {};
	struct pkt_spec s;
	char got[4];
	size_t i;
	int j;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		dp_flush(&dp);
		config(1000000, c[i].tb, 0);
		s = flow("192.168.1.1", 42000 + i, "172.16.0.1", 80);
		s.payload = 500;
		for (j = 0; j < 3; j++)
			got[j] = send_one(&s, 5);
		got[3] = '\0';
		if (!tap_ok(!strcmp(got, c[i].want) && dp_flow_get(&dp, &s, &st) == 0 &&
				    st.payload == 1500 && st.packets == 15,
			    "threshold-bytes %u, GRO packets of 5 x 100 payload bytes: %s, payload "
			    "1500 and 15 packets counted",
			    c[i].tb, c[i].want))
			tap_diag("classes %s, payload %llu, packets %llu", got,
				 (unsigned long long)st.payload,
				 (unsigned long long)st.packets);
	}
}

/* ---- reshort gap ---------------------------------------------------------- */
/*
 * One packet of @s after a silence of exactly @age jiffies: the flow's
 * state is written back with last_seen = now - age, and the step repeated
 * from that state if a tick fell between the write and the packet. The
 * class in *cls, the stats' deltas in @d, the state after in @after.
 */
static int send_after(const struct pkt_spec *s, __u64 age, char *cls,
		      __u64 d[FS_STAT_MAX], struct flow_state *after)
{
	struct flow_state st0, st;
	__u64 j0;
	int tries;

	if (dp_flow_get(&dp, s, &st0))
		return -1;
	for (tries = 0; tries < 50; tries++) {
		j0 = dp_jiffies(&dp);
		st = st0;
		st.last_seen = j0 - age;
		if (dp_flow_put(&dp, s, &st))
			return -1;
		*cls = send_counted(s, d);
		if (dp_jiffies(&dp) == j0)
			return dp_flow_get(&dp, s, after);
	}
	return -1;
}

static void test_reshort(void)
{
	__u64 d[FS_STAT_MAX];
	struct split_config c;
	struct flow_state st0, st;
	struct pkt_spec s = flow("192.168.1.1", 43000, "172.16.0.1", 80);
	__u64 gap;
	char cls = 0, got[8];
	int ok;

	dp_flush(&dp);
	rules_clear();
	config(2, 0, GAP_MS);
	dp_get_config(&dp, &c);
	gap = c.reshort_jiffies;
	ok = classes(&s, "SSLL", got) && dp_flow_get(&dp, &s, &st0) == 0;
	ok = ok && !send_after(&s, gap, &cls, d, &st);
	tap_ok(ok && cls == 'L' && st.packets == 5 && d[FS_STAT_FLOWS_RESHORT] == 0,
	       "reshort-gap %u ms (%llu jiffies): silent exactly the gap, the flow goes on (packet "
	       "5 long)",
	       GAP_MS, (unsigned long long)gap);
	ok = ok && !send_after(&s, gap + 1, &cls, d, &st);
	tap_ok(ok && cls == 'S' && st.packets == 1 && st.payload == 100 &&
		       st.class == FS_CLASS_SHORT && st.first_seen == st0.first_seen &&
		       d[FS_STAT_FLOWS_RESHORT] == 1 && d[FS_STAT_RESHORT_GAP] == 1 &&
		       d[FS_STAT_RESHORT_BOUNDARY] == 0 && d[FS_STAT_FLOWS_NEW] == 0 &&
		       d[FS_STAT_FLOWS_EXPIRED] == 0,
	       "silent one jiffy longer: counted as short again in its entry (packet 1, first_seen "
	       "kept, flows_reshort and flows_reshort_gap +1, not new)");
	tap_ok(classes(&s, "SL", got), "after the reshort: packet 2 short, 3 long (threshold 2)");

	/* off: a silence of twice the gap changes nothing */
	config(2, 0, 0);
	ok = !send_after(&s, 2 * gap, &cls, d, &st);
	tap_ok(ok && cls == 'L' && d[FS_STAT_FLOWS_RESHORT] == 0,
	       "reshort-gap 0 (off): a flow silent 2 x %u ms stays long", GAP_MS);

	/* past the idle timeout it is an expiry, not a reshort */
	config(2, 0, GAP_MS);
	dp_get_config(&dp, &c);
	ok = !send_after(&s, c.idle_jiffies + 1, &cls, d, &st);
	tap_ok(ok && cls == 'S' && d[FS_STAT_FLOWS_EXPIRED] == 1 && d[FS_STAT_FLOWS_NEW] == 1 &&
		       d[FS_STAT_FLOWS_RESHORT] == 0,
	       "silent past idle-timeout with a reshort gap: expired (flows_expired +1), not "
	       "reshort");
}

/* ---- live rule changes ------------------------------------------------------ */
static void test_live_rules(void)
{
	__u64 d[FS_STAT_MAX];
	struct split_config c;
	struct pkt_spec f = flow("192.168.1.1", 44000, "10.7.0.1", 80);
	struct pkt_spec g = flow("192.168.1.1", 44001, "10.7.0.1", 80);
	struct pkt_spec h = flow("192.168.1.1", 44002, "10.7.0.1", 80);
	struct flow_state st;
	char cls = 0;
	int ok;

	dp_flush(&dp);
	rules_clear();
	config(4, 0, GAP_MS);
	expect(f, "SSS", "live rules: flow F, 3 packets under the global threshold 4");
	rule_put("10.7.0.0", 16, 0, FS_MODE_LONG, NO_TH, 0);
	rules_counted();
	expect(f, "SL",
	       "a rule 'long' added: F keeps its policy and count (packet 4 short, 5 long)");
	expect(g, "LL", "... a new flow G of that prefix is long from its first packet");
	rule_put("10.7.0.0", 16, 0, FS_MODE_SHORT, NO_TH, 0);
	expect(g, "LL", "the rule changed to 'short': G keeps 'long'");
	expect(h, "SSSSSS", "... a new flow H is short");
	rule_del("10.7.0.0", 16, 0);
	rules_counted();
	expect(h, "SSS", "the rule deleted: H keeps 'short'");
	tap_ok(dp_flow_get(&dp, &f, &st) == 0 && st.packets == 5 &&
		       dp_flow_get(&dp, &g, &st) == 0 && st.packets == 4 &&
		       st.policy.mode == FS_MODE_LONG && dp_flow_get(&dp, &h, &st) == 0 &&
		       st.packets == 9,
	       "rule changes keep every flow's entry and count (F 5, G 4, H 9 packets)");
	dp_get_config(&dp, &c);
	ok = !send_after(&g, c.reshort_jiffies + 1, &cls, d, &st);
	tap_ok(ok && cls == 'S' && st.policy.mode == FS_MODE_GLOBAL && st.packets == 1,
	       "G after a reshort gap: starts again under the rules of now (none: global, short)");
}

/* ---- midstream ------------------------------------------------------------ */
/* One packet of @s with TCP flags @flags: its class; the stats' deltas in @d. */
static char send_flags(struct pkt_spec s, __u8 flags, __u64 d[FS_STAT_MAX])
{
	s.tcp_flags = flags;
	if (flags & TH_SYN)
		s.payload = 0;
	return send_counted(&s, d);
}

static void test_midstream(void)
{
	struct pkt_spec a = flow("192.168.1.1", 45000, "172.16.0.1", 80);
	struct pkt_spec b = flow("192.168.1.1", 45001, "172.16.0.1", 80);
	struct pkt_spec c = flow("172.16.0.1", 80, "192.168.1.1", 45002);
	struct pkt_spec r = flow("192.168.1.1", 45003, "10.8.0.1", 80);
	struct pkt_spec q = flow("192.168.1.1", 45004, "10.9.0.1", 80);
	struct pkt_spec v = flow("2001:db8::1", 45005, "2001:db8:1::1", 443);
	struct flow_state st;
	struct split_config cf;
	__u64 d[FS_STAT_MAX];
	char cls, got[8];
	int ok;

	dp_flush(&dp);
	rules_clear();
	cfg_flags = FS_CFG_F_ENABLED;
	config(2, 0, GAP_MS);
	cls = send_flags(a, 0, d);
	tap_ok(cls == 'S' && d[FS_STAT_FLOWS_MIDSTREAM] == 1 && d[FS_STAT_FLOWS_NEW] == 1 &&
		       dp_flow_get(&dp, &a, &st) == 0 &&
		       (st.policy.flags & FS_POLICY_F_MIDSTREAM) && classes(&a, "SL", got),
	       "midstream short (default): a flow first seen without SYN counts in "
	       "flows_midstream, is marked so, and starts short (S S L)");
	cls = send_flags(b, TH_SYN, d);
	tap_ok(cls == 'S' && d[FS_STAT_FLOWS_MIDSTREAM] == 0 && dp_flow_get(&dp, &b, &st) == 0 &&
	       !(st.policy.flags & FS_POLICY_F_MIDSTREAM),
	       "a flow that starts with its SYN is not midstream");

	cfg_flags = FS_CFG_F_ENABLED | FS_CFG_F_MIDSTREAM_LONG;
	config(2, 0, GAP_MS);
	dp_flush(&dp);
	cls = send_flags(a, 0, d);
	ok = dp_flow_get(&dp, &a, &st) == 0;
	tap_ok(cls == 'L' && ok && st.class == FS_CLASS_LONG && st.packets == 1 &&
		       st.policy.mode == FS_MODE_LONG && d[FS_STAT_FLOWS_MIDSTREAM] == 1 &&
		       d[FS_STAT_FLOWS_PROMOTED] == 0 && classes(&a, "LL", got),
	       "midstream long: without SYN the flow starts long (count 1, no promotion) and stays "
	       "long");
	cls = send_flags(b, TH_SYN, d);
	tap_ok(cls == 'S' && d[FS_STAT_FLOWS_MIDSTREAM] == 0 && classes(&b, "SL", got),
	       "midstream long: a flow that starts with SYN follows the threshold (S S L)");
	cls = send_flags(c, TH_SYN | TH_ACK, d);
	tap_ok(cls == 'S' && d[FS_STAT_FLOWS_MIDSTREAM] == 0,
	       "midstream long: the reverse direction's SYN-ACK is a start too (short, not "
	       "midstream)");
	cls = send_flags(v, 0, d);
	tap_ok(cls == 'L' && d[FS_STAT_FLOWS_MIDSTREAM] == 1,
	       "midstream long, IPv6: without SYN long, flows_midstream +1");

	rule_put("10.8.0.0", 16, 0, FS_MODE_SHORT, NO_TH, 0);
	rule_put("10.9.0.0", 16, 0, FS_MODE_AUTO, 3, 0);
	rules_counted();
	cls = send_flags(r, 0, d);
	tap_ok(cls == 'S' && d[FS_STAT_FLOWS_MIDSTREAM] == 1 && classes(&r, "SSSS", got),
	       "midstream long: a rule with mode short keeps its flows short");
	cls = send_flags(q, 0, d);
	tap_ok(cls == 'L' && dp_flow_get(&dp, &q, &st) == 0 && st.policy.mode == FS_MODE_LONG,
	       "midstream long: a rule with mode auto (threshold 3) starts long");
	rules_clear();

	/* expiry: the entry is there but ended; a SYN-less restart is midstream
	 * for the class, counted as expired (not in flows_midstream) */
	dp_get_config(&dp, &cf);
	ok = !send_after(&b, cf.idle_jiffies + 1, &cls, d, &st);
	tap_ok(ok && cls == 'L' && d[FS_STAT_FLOWS_EXPIRED] == 1 &&
		       d[FS_STAT_FLOWS_MIDSTREAM] == 0 && (st.policy.flags & FS_POLICY_F_MIDSTREAM),
	       "midstream long: restarted after idle expiry without SYN: long, flows_expired +1, "
	       "flagged");
	/* a reshort gap is no lost start: short again */
	ok = !send_after(&b, cf.reshort_jiffies + 1, &cls, d, &st);
	tap_ok(ok && cls == 'S' && d[FS_STAT_FLOWS_RESHORT] == 1 &&
		       !(st.policy.flags & FS_POLICY_F_MIDSTREAM),
	       "midstream long: after a reshort gap the flow counts as short again (not "
	       "midstream)");
	cfg_flags = FS_CFG_F_ENABLED;
	config(2, 0, GAP_MS);
}

/* Eviction: a flood of new flows of 3 packets each through a full table
 * evicts a long flow (the kernel's LRU keeps an entry used twice in its
 * active list, so flows of one packet alone would not displace it); its
 * next packet is counted in flows_midstream, and with midstream long it
 * stays long. */
static void test_eviction(void)
{
	struct pkt_spec e = flow("192.168.2.1", 46000, "172.16.0.1", 80);
	struct pkt_spec f = flow("192.168.3.0", 1, "172.16.0.1", 80);
	__u64 d[FS_STAT_MAX];
	__u32 i, n = 4 * TEST_FLOWS;
	char got[8], cls;

	dp_flush(&dp);
	rules_clear();
	cfg_flags = FS_CFG_F_ENABLED | FS_CFG_F_MIDSTREAM_LONG;
	config(2, 0, 0);
	send_flags(e, TH_SYN, d);
	classes(&e, "SL", got);
	for (i = 0; i < n; i++) {
		f.saddr4 = 0xc0a80300 + (i >> 16);	/* 192.168.3.x */
		f.sport = 1 + (i & 0xffff);
		send_flags(f, TH_SYN, d);
		send_flags(f, 0, d);
		send_flags(f, 0, d);
	}
	cls = send_flags(e, 0, d);
	tap_ok(cls == 'L' && d[FS_STAT_FLOWS_MIDSTREAM] == 1 && d[FS_STAT_INSERT_FAIL] == 0,
	       "%u new flows of 3 packets through a %u-entry table evict a long flow: its next "
	       "packet is counted in flows_midstream and stays long (midstream long)",
	       n, TEST_FLOWS);
	cfg_flags = FS_CFG_F_ENABLED;
	config(2, 0, 0);
}

static void each_hook(enum dp_hook h)
{
	test_precedence4();
	test_precedence6();
	test_rule_gate();
	test_bytes();
	test_reshort();
	test_live_rules();
	test_midstream();
	test_eviction();
	if (h == DP_TC)
		test_bytes_gro();
}

int main(void)
{
	return dp_tap_main(&dp, TEST_FLOWS, each_hook);
}
