// SPDX-License-Identifier: GPL-2.0
/*
 * test_boundary.c - message boundaries from TCP state (bpf/tcpseq.h)
 * through BPF_PROG_TEST_RUN: crafted segment sequences of one connection,
 * the flow's own packets through the splitter (XDP or TC: descriptions
 * start with "xdp: " / "tc: ") and the other direction's through the
 * observer (fs_observer, TC egress). Each fixture is a table of steps with
 * the class every splitter packet must get; the boundary re-shorts are
 * checked in the stats and in the flow entry. Output is TAP.
 *
 * Sequence numbers in the tables are relative to the client's ISN (the
 * fixture's base), so one table runs again across the 2^32 wrap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "dp.h"
#include "pkt.h"
#include "tap.h"

#define TEST_FLOWS 4096
#define DSCP_S FS_DEFAULT_DSCP_SHORT
#define DSCP_L FS_DEFAULT_DSCP_LONG
#define THRESHOLD 3
#define MAX_STEPS 40
#define SRV_ISN 5000000U	/* the other direction's ISN (ignored) */

static struct dp dp;

enum dir { F, R };	/* the flow's packet (splitter), the other direction's (observer) */

struct step {
	enum dir dir;
	__u8 flags;		/* TH_*; 0 = ACK (PSH|ACK with payload) */
	__u32 seq;		/* F: relative to the base */
	__u32 ack;		/* R: relative to the base */
	__u16 len;		/* payload bytes */
	__u8 zwin;		/* R: zero window */
	__u32 sack_l, sack_r;	/* R: one SACK block, relative */
	__u16 segs;		/* F at TC: a GRO packet of that many segments */
	char want;		/* F: 'S' / 'L' */
};

struct fixture {
	const char *name;
	__u32 boundaries;	/* re-shorts at message boundaries expected */
	struct step s[MAX_STEPS];
};

#define SYN(w)		{ F, TH_SYN, 0, 0, 0, 0, 0, 0, 0, w }
#define SYNACK		{ R, TH_SYN | TH_ACK, 0, 1, 0, 0, 0, 0, 0, 0 }
#define ACKF(q, w)	{ F, TH_ACK, q, 0, 0, 0, 0, 0, 0, w }
#define D(q, n, w)	{ F, 0, q, 0, n, 0, 0, 0, 0, w }
#define DG(q, n, g, w)	{ F, 0, q, 0, n, 0, 0, 0, g, w }
#define ACKR(a)		{ R, TH_ACK, 0, a, 0, 0, 0, 0, 0, 0 }
#define DATAR(a, n)	{ R, 0, 0, a, n, 0, 0, 0, 0, 0 }
#define ZWIN(a)		{ R, TH_ACK, 0, a, 0, 1, 0, 0, 0, 0 }
#define SACKR(a, l, r)	{ R, TH_ACK, 0, a, 0, 0, l, r, 0, 0 }
#define FLAGSF(f, q, n, w) { F, f, q, 0, n, 0, 0, 0, 0, w }
#define FLAGSR(f, a)	{ R, f, 0, a, 0, 0, 0, 0, 0, 0 }
#define END		{ F, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
/* the handshake: SYN (packet 1), SYN-ACK seen, ACK (packet 2) */
#define HANDSHAKE	SYN('S'), SYNACK, ACKF(1, 'S')

/* threshold 3: packets 1..3 of a flow (or of a message) short */
static const struct fixture fixtures[] = {
	{"request/response: each request after its response starts short",
	 2,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), /* request 1: packets 3, 4 */
	  DATAR(201, 500),			       /* response acks all */
	  D(201, 100, 'S'), D(301, 100, 'S'), D(401, 100, 'S'),
	  D(501, 100, 'L'),			    /* request 2: 1..4 */
	  DATAR(601, 500), D(601, 100, 'S'), END}}, /* request 3 */
	{"pipelined requests: no re-short while data is in flight",
	 0,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), /* requests 1, 2 */
	  DATAR(101, 500),			       /* response 1 */
	  D(201, 100, 'L'),			       /* request 3: 2 in flight */
	  DATAR(201, 500), D(301, 100, 'L'), DATAR(301, 500),
	  DATAR(401, 500), /* all answered ... */
	  END}},
	{"bulk upload: ACKs always behind what was sent, never a re-short",
	 0,
	 {HANDSHAKE, D(1, 1000, 'S'), D(1001, 1000, 'L'), D(2001, 1000, 'L'), ACKR(2001),
	  D(3001, 1000, 'L'), D(4001, 1000, 'L'), ACKR(4001), D(5001, 1000, 'L'), ACKR(5001),
	  ACKR(5001), D(6001, 1000, 'L'), D(7001, 1000, 'L'), ACKR(7001), D(8001, 1000, 'L'),
	  ACKR(9001),				 /* the end: all acked */
	  FLAGSF(TH_FIN | TH_ACK, 9001, 0, 'L'), /* ... and a bare FIN */
	  END}},
	{"bulk upload in writes, each acknowledged by a pure ACK before the next (small RTT): no "
	 "reply, no re-short",
	 0,
	 {HANDSHAKE, D(1, 1000, 'S'), D(1001, 1000, 'L'), ACKR(2001), D(2001, 1000, 'L'),
	  D(3001, 1000, 'L'), ACKR(4001), D(4001, 1000, 'L'), ACKR(5001), D(5001, 1000, 'L'), END}},
	{"request/response with a delayed pure ACK before each response: re-short after the "
	 "response only",
	 1,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), ACKR(201),
	  D(201, 100, 'L'), /* pipelined: acked, no reply yet */
	  DATAR(301, 500), D(301, 100, 'S'), END}},
	{"bulk download: the flow's pure ACKs never re-short",
	 0,
	 {HANDSHAKE, DATAR(1, 1000), ACKF(1, 'S'), DATAR(1, 1000), DATAR(1, 1000), ACKF(1, 'L'),
	  DATAR(1, 1000), ACKF(1, 'L'), ACKF(1, 'L'), END}},
	{"HTTP/2-style interleaving: frames while others are unacked, re-short only when all are "
	 "acked",
	 1,
	 {HANDSHAKE, D(1, 300, 'S'), D(301, 200, 'L'), ACKR(301), D(501, 100, 'L'), ACKR(501),
	  D(601, 400, 'L'), DATAR(601, 300), DATAR(1001, 300), /* all acked, idle */
	  D(1001, 200, 'S'), D(1201, 200, 'S'), END}},
	{"retransmissions: a segment at the ACK but before snd_nxt is no boundary",
	 0,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), D(201, 100, 'L'), ACKR(101),
	  D(101, 100, 'L'),	       /* fast retransmit */
	  ACKR(201), D(201, 100, 'L'), /* tail: RTO resend */
	  D(101, 200, 'L'),	       /* overlapping resend */
	  END}},
	{"SACK: the cumulative ACK is the hole; its retransmission is no boundary",
	 0,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), D(201, 100, 'L'), D(301, 100, 'L'),
	  SACKR(101, 201, 401), D(101, 100, 'L'), SACKR(101, 201, 401), END}},
	{"zero window: probes and the resume are no boundary; a later message is",
	 1,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), ZWIN(201),
	  D(201, 1, 'L'),		      /* probe: 1 new byte */
	  D(201, 1, 'L'),		      /* probe again */
	  FLAGSF(TH_ACK, 200, 0, 'L'),	      /* Linux probe: old seq */
	  ACKR(202),			      /* window opens */
	  D(202, 100, 'L'), D(302, 100, 'L'), /* resume, in flight */
	  DATAR(402, 50), D(402, 100, 'S'), END}},
	{"FIN and RST: consume no message; a new SYN on the 5-tuple resets the state",
	 1,
	 {HANDSHAKE, D(1, 100, 'S'), DATAR(101, 100), D(101, 100, 'S'),
	  FLAGSR(TH_RST | TH_ACK, 99),				 /* ignored by the observer */
	  DATAR(201, 100), FLAGSF(TH_FIN | TH_ACK, 201, 0, 'S'), /* bare FIN: none */
	  ACKR(202), FLAGSF(TH_RST, 202, 0, 'S'), SYN('L'),	 /* a new connection: reset */
	  D(1, 100, 'L'), /* no SYN-ACK seen yet: no boundary */
	  END}},
	{"data segment that carries a FIN at the boundary re-shorts",
	 1,
	 {HANDSHAKE, D(1, 100, 'S'), D(101, 100, 'L'), DATAR(201, 10),
	  FLAGSF(TH_FIN | TH_ACK | TH_PSH, 201, 50, 'S'), END}},
};

/* No other direction ever seen (asymmetric routing): the request/response
 * fixture without its R steps behaves as without boundaries. */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void config(__u32 flags)
{
	struct dp_split w = {
		.threshold = THRESHOLD, .dscp_short = DSCP_S,
		.dscp_long = DSCP_L, .flags = flags,
	};

	if (dp_config(&dp, &w))
		die("config");
}

struct conn {
	struct pkt_spec fwd;	/* the flow (client -> server) */
	__u32 base;		/* client ISN */
};

static struct conn conn4(__u16 port, __u32 base)
{
	struct conn c = { .fwd = pkt_tcp4(port, 80), .base = base };

	c.fwd.tos = 0x10;	/* another DSCP: both marks are written */
	return c;
}

static struct conn conn6(__u16 port, __u32 base)
{
	struct conn c = { .fwd = pkt_tcp6(port, 443), .base = base };

	c.fwd.tos = 0x10;
	return c;
}

static int flow_get(const struct conn *c, struct flow_state *st)
{
	return dp_flow_get(&dp, &c->fwd, st);
}

/* The step's frame, from @c's flow or its reverse. */
static int build(const struct conn *c, const struct step *t, __u8 *buf)
{
	struct pkt_spec s = c->fwd;

	s.tcp_flags = t->flags ? t->flags : (t->len ? TH_PSH | TH_ACK : TH_ACK);
	s.payload = t->len;
	if (t->dir == F) {
		s.seq = c->base + t->seq;
		s.ack = SRV_ISN + 1;
		return pkt_build(&s, buf, PKT_MAX);
	}
	s.sport = c->fwd.dport;
	s.dport = c->fwd.sport;
	s.saddr4 = c->fwd.daddr4;
	s.daddr4 = c->fwd.saddr4;
	memcpy(s.saddr6, c->fwd.daddr6, 16);
	memcpy(s.daddr6, c->fwd.saddr6, 16);
	s.seq = SRV_ISN;
	s.ack = c->base + t->ack;
	s.zero_window = t->zwin;
	if (t->sack_r) {
		s.tcp_doff = 8;
		s.sack[0] = c->base + t->sack_l;
		s.sack[1] = c->base + t->sack_r;
	}
	return pkt_build(&s, buf, PKT_MAX);
}

/* One step: the class a splitter packet got ('S', 'L', '?'), or '.' for
 * an observer packet (which must come out unchanged). */
static char run_step(const struct conn *c, const struct step *t)
{
	__u8 in[PKT_MAX], out[PKT_MAX];
	__u32 out_len = 0;
	int len = build(c, t, in), fam, l3, v;
	__u8 d;

	if (t->dir == R) {
		v = dp_test_run(dp.observer_fd, DP_TC, in, len, out, &out_len,
				1, 0, NULL);
		return v == dp_pass_verdict(DP_TC) && out_len == (__u32)len &&
		       !memcmp(in, out, len) ? '.' : '!';
	}
	v = dp_test_run(dp.prog_fd[dp.hook], dp.hook, in, len, out, &out_len,
			1, dp.hook == DP_TC ? t->segs : 0, NULL);
	if (v != dp_pass_verdict(dp.hook))
		return '?';
	l3 = pkt_l3_offset(out, len, &fam);
	d = pkt_dscp(out + l3, fam);
	return d == DSCP_S ? 'S' : d == DSCP_L ? 'L' : '?';
}

/*
 * Run fixture @fx on @c, skipping the other direction's steps when
 * @no_reverse (asymmetric routing). The classes in @got, wanted in @want
 * (with @no_reverse: what the same packets get without boundaries).
 * Returns the boundary re-shorts counted in the stats.
 */
static __u64 run_fixture(const struct fixture *fx, const struct conn *c,
			 int no_reverse, char *got, char *want)
{
	__u64 b[FS_STAT_MAX], x[FS_STAT_MAX];
	const struct step *t;
	size_t n = 0, i;

	dp_stats(&dp, b);
	for (i = 0; i < MAX_STEPS; i++) {
		t = &fx->s[i];
		if (!t->want && t->dir == F)
			break;
		if (t->dir == R) {
			if (!no_reverse && run_step(c, t) != '.')
				got[n] = '!', want[n++] = '.';
			continue;
		}
		got[n] = run_step(c, t);
		want[n++] = t->want;
	}
	got[n] = want[n] = '\0';
	dp_stats(&dp, x);
	return x[FS_STAT_RESHORT_BOUNDARY] - b[FS_STAT_RESHORT_BOUNDARY];
}

/* The classes a flow of these packets gets without any re-short: packet
 * number i (1-based) short while i <= THRESHOLD. A SYN on the entry does
 * not restart the count. */
static void classes_without(const struct fixture *fx, char *want)
{
	size_t n = 0, i;

	for (i = 0; i < MAX_STEPS; i++) {
		const struct step *t = &fx->s[i];

		if (!t->want && t->dir == F)
			break;
		if (t->dir == F) {
			want[n] = n < THRESHOLD ? 'S' : 'L';
			n++;
		}
	}
	want[n] = '\0';
}

static void check(const struct fixture *fx, const struct conn *c,
		  const char *what)
{
	char got[MAX_STEPS + 1], want[MAX_STEPS + 1];
	struct flow_state st = {};
	__u64 nb = run_fixture(fx, c, 0, got, want);
	int ok = !strcmp(got, want) && nb == fx->boundaries &&
		 !flow_get(c, &st) && st.boundaries == fx->boundaries;

	if (!tap_ok(ok, "%s%s: %s", what, fx->name, want))
		tap_diag("classes %s, want %s; flows_reshort_boundary +%llu, entry %u, want %u",
			 got, want, (unsigned long long)nb, st.boundaries,
			 fx->boundaries);
}

static void test_fixtures(void)
{
	size_t i, n = sizeof(fixtures) / sizeof(fixtures[0]);
	struct conn c;

	config(FS_CFG_F_ENABLED | FS_CFG_F_RESHORT_BOUNDARY);
	for (i = 0; i < n; i++) {
		dp_flush(&dp);
		c = conn4(41000 + i, 1000);
		check(&fixtures[i], &c, "");
	}
	/* across the wrap: the client's ISN 200 bytes below 2^32 */
	for (i = 0; i < n; i++) {
		dp_flush(&dp);
		c = conn4(42000 + i, 0xffffffffU - 200);
		check(&fixtures[i], &c, "seq wraps: ");
	}
	for (i = 0; i < n; i++) {
		dp_flush(&dp);
		c = conn6(43000 + i, 0x7fffff00U);
		check(&fixtures[i], &c, "IPv6: ");
	}
}

/* Other direction never seen, or boundaries off: as without boundaries. */
static void test_without(void)
{
	char got[MAX_STEPS + 1], want[MAX_STEPS + 1], none[MAX_STEPS + 1];
	const struct fixture *fx = &fixtures[0];
	struct flow_state st = {};
	struct conn c;
	__u64 nb;

	config(FS_CFG_F_ENABLED | FS_CFG_F_RESHORT_BOUNDARY);
	classes_without(fx, none);
	dp_flush(&dp);
	c = conn4(44000, 1000);
	nb = run_fixture(fx, &c, 1, got, want);
	if (!tap_ok(!strcmp(got, none) && nb == 0 && !flow_get(&c, &st) &&
		    !(st.ack_flags & FS_ACK_F_SEEN),
		    "other direction never seen (asymmetric routing): no re-short, %s", none))
		tap_diag("classes %s, want %s; boundaries %llu", got, none,
			 (unsigned long long)nb);
	config(FS_CFG_F_ENABLED);
	dp_flush(&dp);
	c = conn4(44001, 1000);
	nb = run_fixture(fx, &c, 0, got, want);
	if (!tap_ok(!strcmp(got, none) && nb == 0 && !flow_get(&c, &st) &&
		    st.ack_flags == FS_ACK_F_SEEN,
		    "reshort off: ACKs recorded, no re-short, %s", none))
		tap_diag("classes %s, want %s; boundaries %llu", got, none,
			 (unsigned long long)nb);
	config(FS_CFG_F_ENABLED | FS_CFG_F_RESHORT_BOUNDARY);
}

/* The observer: old ACKs never move ack_hi back; equal ones write nothing;
 * a packet of a flow not in the table is passed untouched. */
static void test_observer(void)
{
	static const struct step syn = SYN('S'), a5 = ACKR(500), a3 = ACKR(300),
				 wrap = ACKR(0x90000000U),
				 rst = FLAGSR(TH_RST | TH_ACK, 900);
	struct flow_state st = {};
	struct conn c = conn4(45000, 1000), other = conn4(45001, 1000);
	int ok;

	config(FS_CFG_F_ENABLED | FS_CFG_F_RESHORT_BOUNDARY);
	dp_flush(&dp);
	run_step(&c, &syn);
	ok = run_step(&c, &a5) == '.' && run_step(&c, &a3) == '.' &&
	     !flow_get(&c, &st);
	tap_ok(ok && st.ack_hi == 1500 && st.ack_flags == FS_ACK_F_SEEN,
	       "observer: ACK 500 then an older 300: ack_hi stays at 500 (before())");
	ok = run_step(&c, &wrap) == '.' && !flow_get(&c, &st);
	tap_ok(ok && st.ack_hi == 1500,
	       "observer: an ACK 2^31 + away is before, not after: ignored");
	ok = run_step(&c, &rst) == '.' && !flow_get(&c, &st);
	tap_ok(ok && st.ack_hi == 1500,
	       "observer: a RST's ACK number is not recorded");
	tap_ok(run_step(&other, &a5) == '.' && flow_get(&other, &st) < 0 &&
	       errno == ENOENT,
	       "observer: a flow not in the table: packet untouched, nothing inserted");
}

/* TC: a GRO packet stands for its segments: snd_nxt moves by all of its
 * payload, the boundary is decided on its first segment. */
static void test_gro(void)
{
	static const struct fixture fx = {
		"GRO packets: seq of the first segment, payload of all", 1, {
			HANDSHAKE,
			DG(1, 1500, 3, 'S'),		/* packets 3..5 */
			ACKR(1001),			/* two of three acked */
			DG(1501, 1000, 2, 'L'),		/* in flight: long */
			DATAR(2501, 100),
			DG(2501, 1000, 2, 'S'), END } };
	struct conn c = conn4(46000, 1000);

	config(FS_CFG_F_ENABLED | FS_CFG_F_RESHORT_BOUNDARY);
	dp_flush(&dp);
	check(&fx, &c, "");
}

int main(void)
{
	static const char *const prefix[DP_HOOKS] = { "xdp: ", "tc: " };
	int h;

	if (dp_open_tap(&dp, TEST_FLOWS))
		return 1;
	for (h = 0; h < DP_HOOKS; h++) {
		dp.hook = h;
		tap_prefix = prefix[h];
		test_fixtures();
		test_without();
		if (h == DP_TC)
			test_gro();
	}
	tap_prefix = "";
	test_observer();
	dp_close(&dp);
	return tap_done();
}
