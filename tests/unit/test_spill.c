// SPDX-License-Identifier: GPL-2.0
/*
 * test_spill.c - spill grants in the datapath (bpf/classify.h, fs_spill in
 * bpf/flowsplit.h) through BPF_PROG_TEST_RUN, on both hooks (descriptions
 * start with "xdp: " / "tc: "): which long packets carry the spill code
 * point, when a flow takes a grant, what a grant and a generation are
 * worth, and that two CPUs never take one grant twice. Output is TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "splitter.skel.h"
#include "dp.h"
#include "pkt.h"
#include "tap.h"

#define TEST_FLOWS 8192
#define THRESHOLD 3
#define DSCP_S 0
#define DSCP_L FS_DEFAULT_DSCP_LONG
#define DSCP_P FS_DEFAULT_DSCP_SPILL
#define TOS_IN 0x11	/* DSCP 4, ECN 01: every mark is a rewrite */
#define FLAGS (FS_CFG_F_ENABLED | FS_CFG_F_SPILL)
#define MAX_PKTS 16

static struct dp dp;
static int spill_fd;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void config(__u32 flags, __u32 threshold)
{
	struct dp_split w = {
		.threshold = threshold, .dscp_short = DSCP_S,
		.dscp_long = DSCP_L, .dscp_spill = DSCP_P, .flags = flags,
	};

	if (dp_config(&dp, &w))
		die("config");
}

/* The agent's entry: generation @gen, @grants handed out in all, its
 * lease until @lease (bpf_jiffies64()). */
static void agent_lease(__u16 gen, __u64 grants, __u64 lease)
{
	struct fs_spill a = { .grants = grants, .gen = gen, .lease_jiffies = lease };
	__u32 key = FS_SPILL_KEY_AGENT;

	if (bpf_map_update_elem(spill_fd, &key, &a, BPF_ANY))
		die("fs_spill agent write");
}

/* The same with a lease of a minute, as an agent renews it. */
static void agent(__u16 gen, __u64 grants)
{
	agent_lease(gen, grants, dp_jiffies(&dp) + 60ull * dp.hz);
}

/* The entry FS_SPILL_KEY_DATAPATH or FS_SPILL_KEY_AGENT. */
static struct fs_spill spill_get(__u32 key)
{
	struct fs_spill e;

	if (bpf_map_lookup_elem(spill_fd, &key, &e))
		die("fs_spill read");
	return e;
}

/* The datapath's entry. */
static struct fs_spill taken(void)
{
	return spill_get(FS_SPILL_KEY_DATAPATH);
}

/* The agent's entry as the datapath sees it. */
static struct fs_spill agent_get(void)
{
	return spill_get(FS_SPILL_KEY_AGENT);
}

/* Open @n more grants after every grant taken so far. */
static void grant(__u16 gen, __u64 n)
{
	agent(gen, taken().taken + n);
}

/*
 * One packet of the flow @s (its seq advanced by what it carries): the
 * mark it got, 'S', 'L', 'P' (spill), '?' (anything else, or the IPv4
 * checksum or the ECN bits broken). @segs: a GRO packet (TC only).
 */
static char send_pkt(struct pkt_spec *s, __u8 flags, int payload,
		     __u32 segs)
{
	__u8 in[PKT_MAX], out[PKT_MAX];
	__u32 out_len = 0;
	int len, l3, fam, v;
	__u8 d;

	s->tcp_flags = flags;
	s->payload = payload;
	len = pkt_build(s, in, PKT_MAX);
	s->seq += payload + !!(flags & (TH_SYN | TH_FIN));
	v = dp_test_run(dp.prog_fd[dp.hook], dp.hook, in, len, out, &out_len,
			1, dp.hook == DP_TC ? segs : 0, NULL);
	if (v != dp_pass_verdict(dp.hook) || out_len != (__u32)len)
		return '?';
	l3 = pkt_l3_offset(out, len, &fam);
	if (l3 < 0 || pkt_ecn(out + l3, fam) != (TOS_IN & FS_ECN_MASK) ||
	    (fam == 4 && !ip4_csum_ok(out + l3, 20)))
		return '?';
	d = pkt_dscp(out + l3, fam);
	return d == DSCP_S ? 'S' : d == DSCP_L ? 'L' : d == DSCP_P ? 'P' : '?';
}

/*
 * Send the packets a string describes, one character each: 'y' a SYN,
 * 'd' a data segment (100 bytes), 'a' a pure ACK; the marks they got in
 * @got (NUL-terminated).
 */
static void send_seq(struct pkt_spec *s, const char *what, char *got)
{
	size_t i;

	for (i = 0; what[i] && i < MAX_PKTS; i++) {
		switch (what[i]) {
		case 'y':
			got[i] = send_pkt(s, TH_SYN, 0, 1);
			break;
		case 'a':
			got[i] = send_pkt(s, TH_ACK, 0, 1);
			break;
		default:
			got[i] = send_pkt(s, TH_PSH | TH_ACK, 100, 1);
		}
	}
	got[i] = '\0';
}

/* A flow of these tests: DSCP and ECN TOS_IN, its first seq 1000. */
static struct pkt_spec flow(struct pkt_spec s)
{
	s.tos = TOS_IN;
	s.seq = 1000;
	s.ack = 1;
	return s;
}

static struct pkt_spec flow4(__u16 sport)
{
	return flow(pkt_tcp4(sport, 80));
}

static struct pkt_spec flow6(__u16 sport)
{
	return flow(pkt_tcp6(sport, 443));
}

/* A test's start: no flows, the config @flags and @threshold; the
 * datapath's entry then. */
static struct fs_spill fresh(__u32 flags, __u32 threshold)
{
	dp_flush(&dp);
	config(flags, threshold);
	return taken();
}

/* Send @what on @s; check the marks, the grants taken and moved since
 * @d0, the generation left in the flow's entry, and the spill counters
 * (packets_spill: one per 'P'; flows_spilled: one per grant taken;
 * bytes_spill: a frame of at least 54 bytes per 'P'). */
static void expect(struct pkt_spec *s, const char *what, const char *want,
		   const struct fs_spill *d0, __u64 dtaken, __u64 dmoved,
		   __u16 gen, const char *desc)
{
	__u64 v0[FS_STAT_MAX], v1[FS_STAT_MAX], np = 0, dp_pk, dp_by, dp_fl;
	char got[MAX_PKTS + 1];
	struct flow_state st = {};
	struct fs_spill d, before = taken();
	size_t i;

	for (i = 0; want[i]; i++)
		np += want[i] == 'P';
	if (dp_stats(&dp, v0))
		die("stats read");
	send_seq(s, what, got);
	d = taken();
	if (dp_stats(&dp, v1))
		die("stats read");
	dp_pk = v1[FS_STAT_PKTS_SPILL] - v0[FS_STAT_PKTS_SPILL];
	dp_by = v1[FS_STAT_BYTES_SPILL] - v0[FS_STAT_BYTES_SPILL];
	dp_fl = v1[FS_STAT_FLOWS_SPILLED] - v0[FS_STAT_FLOWS_SPILLED];
	if (!tap_ok(!strcmp(got, want) && d.taken - d0->taken == dtaken &&
		    d.moved - d0->moved == dmoved && !dp_flow_get(&dp, s, &st) &&
		    st.policy.spill == gen && dp_pk == np &&
		    dp_fl == d.taken - before.taken &&
		    (np ? dp_by >= 54 * np : dp_by == 0),
		    "%s: %s", desc, want))
		tap_diag("marks %s, want %s; taken +%llu (want %llu), moved +%llu (want %llu), "
			 "entry gen %u (want %u); packets_spill +%llu (want %llu), bytes_spill "
			 "+%llu, flows_spilled +%llu",
			 got, want, (unsigned long long)(d.taken - d0->taken),
			 (unsigned long long)dtaken, (unsigned long long)(d.moved - d0->moved),
			 (unsigned long long)dmoved, st.policy.spill, gen,
			 (unsigned long long)dp_pk, (unsigned long long)np,
			 (unsigned long long)dp_by, (unsigned long long)dp_fl);
}

static void test_off(void)
{
	struct pkt_spec s;
	struct fs_spill d0;

	d0 = fresh(FS_CFG_F_ENABLED, THRESHOLD);
	agent(1, d0.taken + 5);
	s = flow4(30000);
	expect(&s, "ydddddd", "SSSLLLL", &d0, 0, 0, 0,
	       "spill off in the config: long stays long with grants open");

	config(FLAGS, THRESHOLD);
	agent(0, d0.taken + 5);
	s = flow4(30001);
	expect(&s, "ydddddd", "SSSLLLL", &d0, 0, 0, 0,
	       "spill on, generation 0 (no agent): nothing spills, nothing taken");

	agent(1, d0.taken);
	s = flow4(30002);
	expect(&s, "ydddddd", "SSSLLLL", &d0, 0, 0, 0,
	       "generation 1, no grant open: long stays long");
}

static void test_promotion(void)
{
	struct pkt_spec a = flow4(31000), b = flow4(31001);
	struct fs_spill d0, d;

	d0 = fresh(FLAGS, THRESHOLD);
	grant(1, 1);
	expect(&a, "ydddddd", "SSSPPPP", &d0, 1, 0, 1,
	       "one grant: the promoting packet takes it, every later long packet spills, not "
	       "moved");
	d = taken();
	expect(&b, "ydddddd", "SSSLLLL", &d, 0, 0, 0,
	       "the grant taken: the next flow stays long");
	d = taken();
	tap_ok(d.taken == agent_get().grants &&
	       d.taken_jiffies >= dp_jiffies(&dp) - 2 * dp.hz &&
	       d.taken_jiffies <= dp_jiffies(&dp),
	       "taken (%llu) equals the grants (%llu), taken_jiffies is the datapath clock's",
	       (unsigned long long)d.taken,
	       (unsigned long long)agent_get().grants);
	d0 = taken();
	expect(&a, "dd", "PP", &d0, 0, 0, 1,
	       "a spilled flow keeps spilling without a grant open");
}

static void test_moved(void)
{
	struct pkt_spec s = flow4(32000);
	struct fs_spill d0;

	d0 = fresh(FLAGS, THRESHOLD);
	agent(1, d0.taken);
	expect(&s, "ydddddd", "SSSLLLL", &d0, 0, 0, 0,
	       "a long flow without a grant");
	grant(1, 1);
	expect(&s, "dd", "PP", &d0, 1, 1, 1,
	       "a grant opened later: its next data packet takes it, counted as moved");
}

static void test_acks(void)
{
	struct pkt_spec s = flow4(33000), t = flow4(33001);
	struct fs_spill d0;

	d0 = fresh(FLAGS, THRESHOLD);
	grant(1, 1);
	expect(&s, "yaaaaa", "SSSLLL", &d0, 0, 0, 0,
	       "ack-short off: a long flow's pure ACKs take no grant");
	expect(&s, "da", "PP", &d0, 1, 1, 1,
	       "its data packet does; then its pure ACKs follow the flow");
	config(FLAGS | FS_CFG_F_ACK_SHORT, THRESHOLD);
	d0 = taken();
	expect(&s, "ada", "SPS", &d0, 0, 0, 1,
	       "ack-short on: a spilled flow's pure ACKs stay short");
	grant(1, 1);
	d0 = taken();
	expect(&t, "ydddaaa", "SSSPSSS", &d0, 1, 0, 1,
	       "ack-short on: a grant taken at promotion, pure ACKs short");
}

static void test_many(void)
{
	struct pkt_spec f[3] = { flow4(34000), flow4(34001), flow4(34002) };
	struct fs_spill d0;

	d0 = fresh(FLAGS, THRESHOLD);
	grant(7, 2);
	expect(&f[0], "yddddd", "SSSPPP", &d0, 1, 0, 7, "two grants: flow 1 takes one");
	expect(&f[1], "yddddd", "SSSPPP", &d0, 2, 0, 7, "flow 2 the other");
	expect(&f[2], "yddddd", "SSSLLL", &d0, 2, 0, 0, "flow 3 stays long");
}

static void test_generation(void)
{
	struct pkt_spec s = flow4(35000);
	struct fs_spill d0;

	d0 = fresh(FLAGS, THRESHOLD);
	grant(1, 1);
	expect(&s, "ydddd", "SSSPP", &d0, 1, 0, 1, "spilled in generation 1");
	agent(2, taken().taken);
	expect(&s, "dd", "LL", &d0, 1, 0, 1,
	       "generation 2 without a grant: long again");
	grant(2, 1);
	expect(&s, "dd", "PP", &d0, 2, 1, 2,
	       "a grant of generation 2: taken again, counted as moved");
	agent(0, taken().taken + 1);
	expect(&s, "dd", "LL", &d0, 2, 1, 2,
	       "generation 0 (spill stopped): long, the open grant untouched");
}

/* The lease (flowsplit.h): past lease_jiffies the agent's generation
 * holds no more, as when the agent died: a spilled flow is long, and no
 * grant is taken, until a write renews it. */
static void test_lease(void)
{
	struct pkt_spec s = flow4(35500), t = flow4(35501);
	struct fs_spill d0;
	__u64 now;

	d0 = fresh(FLAGS, THRESHOLD);
	grant(3, 1);
	expect(&s, "ydddd", "SSSPP", &d0, 1, 0, 3, "spilled in generation 3, its lease held");
	now = dp_jiffies(&dp);
	agent_lease(3, taken().taken + 1, now > 2 ? now - 2 : 0);
	expect(&s, "dd", "LL", &d0, 1, 0, 3,
	       "the lease ran out (a dead agent): the spilled flow is long");
	expect(&t, "ydddd", "SSSLL", &d0, 1, 0, 0, "the lease ran out: an open grant is not taken");
	agent(3, taken().taken + 1);
	expect(&s, "dd", "PP", &d0, 1, 0, 3, "renewed: spilled again in its generation");
}

/* A spilled flow re-shorted at a message boundary (tcpseq.h) starts
 * counting afresh: short, then long without the spill. */
static void test_reshort(void)
{
	struct pkt_spec s = flow4(36000), r;
	__u8 in[PKT_MAX], out[PKT_MAX];
	struct fs_spill d0;
	int len;

	d0 = fresh(FLAGS | FS_CFG_F_RESHORT_BOUNDARY, THRESHOLD);
	grant(1, 1);
	expect(&s, "ydddd", "SSSPP", &d0, 1, 0, 1, "a spilled request");
	/* the reply: acknowledges all the flow sent, carries data */
	r = s;
	r.sport = s.dport;
	r.dport = s.sport;
	r.saddr4 = s.daddr4;
	r.daddr4 = s.saddr4;
	r.seq = 7000;
	r.ack = s.seq;
	r.tcp_flags = TH_PSH | TH_ACK;
	r.payload = 200;
	len = pkt_build(&r, in, PKT_MAX);
	dp_test_run(dp.observer_fd, DP_TC, in, len, out, NULL, 1, 0, NULL);
	expect(&s, "dddddd", "SSSLLL", &d0, 1, 0, 0,
	       "the next request after the reply re-shorts: short, then long, not spilled");
}

static void test_ipv6_gro(void)
{
	struct pkt_spec s = flow6(37000);
	struct fs_spill d0, d;
	char got[8];

	d0 = fresh(FLAGS, THRESHOLD);
	grant(3, 1);
	expect(&s, "ydddddd", "SSSPPPP", &d0, 1, 0, 3,
	       "IPv6: the promoting packet takes the grant");
	if (dp.hook != DP_TC)
		return;
	s = flow4(37001);
	send_seq(&s, "y", got);
	grant(3, 1);
	d0 = taken();
	got[0] = send_pkt(&s, TH_PSH | TH_ACK, 1000, 10);
	got[1] = send_pkt(&s, TH_PSH | TH_ACK, 1000, 10);
	got[2] = '\0';
	d = taken();
	tap_ok(!strcmp(got, "SP") && d.taken - d0.taken == 1,
	       "GRO packets of 10 segments: the first short (packets 2..11), the second takes one "
	       "grant (%s)",
	       got);
}

/* A new flow starting long (threshold 0): its first packet inserts the
 * entry and takes nothing; the next data packet takes a grant, moved. */
static void test_new_long(void)
{
	struct pkt_spec s = flow4(38000);
	struct fs_spill d0;

	d0 = fresh(FLAGS, 0);
	grant(1, 1);
	expect(&s, "ddd", "LPP", &d0, 1, 1, 1,
	       "threshold 0: the first packet (a new entry) long, the next takes the grant, moved");
	config(FLAGS, THRESHOLD);
}

/* ---- two CPUs ------------------------------------------------------------*/

#define CONC_FLOWS 3000
#define CONC_GRANTS 2500
#define CONC_ROUNDS 3

struct conc_arg {
	int cpu, failed;
	__u16 base;
	int offset;	/* where in the flows this thread starts */
};

static void *conc_thread(void *p)
{
	struct conc_arg *a = p;
	__u8 in[PKT_MAX], out[PKT_MAX];
	struct pkt_spec s;
	cpu_set_t set;
	int i, r, len;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (r = 0; r < CONC_ROUNDS; r++)
		for (i = 0; i < CONC_FLOWS; i++) {
			s = flow4(a->base + (i + a->offset) % CONC_FLOWS);
			s.payload = 100;
			len = pkt_build(&s, in, PKT_MAX);
			if (dp_test_run(dp.prog_fd[dp.hook], dp.hook, in, len,
					out, NULL, 1, 0, NULL) !=
			    dp_pass_verdict(dp.hook))
				a->failed = 1;
		}
	return NULL;
}

/* Two threads on two CPUs send the same long flows while CONC_GRANTS
 * grants are open: exactly that many flows spilled, taken == grants.
 * @apart: each thread starts from another place in the list, so both take
 * grants for different flows at once; else both start at the same flow,
 * so both try to spill the same flow at once (which must take one grant,
 * not two). */
static void test_concurrency(bool apart)
{
	struct conc_arg args[2];
	struct flow_state st;
	struct pkt_spec s;
	struct fs_spill d0, d;
	__u64 v0[FS_STAT_MAX], v1[FS_STAT_MAX];
	pthread_t th[2];
	int i, n = dp.ncpus > 1 ? 2 : 1, spilled = 0, failed = 0;

	d0 = fresh(FLAGS, 0);
	if (dp_stats(&dp, v0))
		die("stats read");
	agent(9, d0.taken + CONC_GRANTS);
	for (i = 0; i < n; i++) {
		args[i] = (struct conc_arg){ .cpu = i, .base = 39000,
					     .offset = apart ? i * CONC_FLOWS / 2 : 0 };
		pthread_create(&th[i], NULL, conc_thread, &args[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		failed |= args[i].failed;
	}
	for (i = 0; i < CONC_FLOWS; i++) {
		s = flow4(39000 + i);
		if (!dp_flow_get(&dp, &s, &st) && st.policy.spill == 9)
			spilled++;
	}
	d = taken();
	if (dp_stats(&dp, v1))
		die("stats read");
	if (!tap_ok(!failed && spilled == CONC_GRANTS && d.taken - d0.taken == CONC_GRANTS &&
			    v1[FS_STAT_FLOWS_SPILLED] - v0[FS_STAT_FLOWS_SPILLED] == CONC_GRANTS,
		    "%d threads on %d CPUs, %d long flows (%s), %d grants: exactly %d flows "
		    "spilled, taken %d, flows_spilled %d",
		    n, n, CONC_FLOWS, apart ? "apart" : "in step", CONC_GRANTS, CONC_GRANTS,
		    CONC_GRANTS, CONC_GRANTS))
		tap_diag(
			"spilled %d, taken +%llu, flows_spilled +%llu, a run failed: %d", spilled,
			(unsigned long long)(d.taken - d0.taken),
			(unsigned long long)(v1[FS_STAT_FLOWS_SPILLED] - v0[FS_STAT_FLOWS_SPILLED]),
			failed);
	config(FLAGS, THRESHOLD);
}

int main(void)
{
	static const char *const prefix[DP_HOOKS] = { "xdp: ", "tc: " };
	int err, h;

	libbpf_set_print(NULL);
	err = dp_open(&dp, TEST_FLOWS);
	if (err) {
		printf("not ok 1 - load build/bpf/splitter.bpf.o: %s\n",
		       strerror(-err));
		printf("1..1\n");
		return 1;
	}
	spill_fd = bpf_map__fd(dp.skel->maps.fs_spill);
	for (h = 0; h < DP_HOOKS; h++) {
		dp.hook = h;
		tap_prefix = prefix[h];
		test_off();
		test_promotion();
		test_moved();
		test_acks();
		test_many();
		test_generation();
		test_lease();
		test_reshort();
		test_ipv6_gro();
		test_new_long();
		test_concurrency(true);
		test_concurrency(false);
	}
	tap_prefix = "";
	dp_close(&dp);
	return tap_done();
}
