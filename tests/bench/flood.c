// SPDX-License-Identifier: GPL-2.0
/*
 * flood.c - `make bench`, flood part: how fast new flows may arrive before
 * the flow table evicts a flow that is still active.
 *
 *   bench-flood [--json FILE] [--seconds S] [--active N] [--period MS]
 *
 * For each table size (16 Ki to 256 Ki entries and the default, 1 Mi): the
 * splitter of $BUILD/bpf/splitter.bpf.o (XDP program, one CPU,
 * BPF_PROG_TEST_RUN) with that table; N active flows (default 1000), each
 * started with its SYN and then sending one packet every MS milliseconds
 * (default 1000), between the packets of a flood of new IPv4 flows of 3
 * packets each (SYN, ACK, ACK) as fast as this CPU runs them, for S
 * seconds (default 8) after the table has filled once. A flood of one
 * packet per flow evicts less: the kernel's LRU keeps an entry that was
 * used twice on its active list, and a flow of a single packet never is.
 *
 * Reported per size: the flood rate reached (new flows/s), the active
 * packets found without an entry (flows_midstream: evicted while active),
 * and the history the table holds at that rate (entries / rate, in s).
 * An active flow survives when the history is longer than its period and
 * is evicted when it is shorter, so a table of E entries absorbs about
 * E / period new flows/s (for flows active every second: E per second).
 * Results: a table on stdout and JSON in FILE ($BUILD/bench/flood.json).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "../unit/dp.h"
#include "../unit/pkt.h"

#define FLOOD_PKTS 3		/* packets per flood flow: SYN, ACK, ACK */
#define TCP_FLAGS_OFF 13	/* in the TCP header */

static const __u32 sizes[] = { 16384, 65536, 131072, 196608, 262144, FS_DEFAULT_FLOWS };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct result {
	__u32 entries;
	double rate;		/* new flood flows per second */
	__u64 flood_flows;
	__u64 active_pkts;
	__u64 evicted;		/* active packets that found no entry */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A frame of @s with TCP flags @flags; its TCP header offset in *@th. */
static int frame(struct pkt_spec s, __u8 flags, __u8 *buf, int *th)
{
	int fam, len;

	s.tcp_flags = flags;
	s.payload = flags & TH_SYN ? 0 : 10;
	len = pkt_build(&s, buf, PKT_MAX);
	*th = pkt_l3_offset(buf, len, &fam) + 20;	/* IPv4, no options */
	return len;
}

/* The flow number @id in a frame: its source address and port. */
static void set_flow(__u8 *buf, int th, __u32 base, __u32 id)
{
	__u32 a = htobe32(base + (id >> 16));
	__u16 p = htobe16((__u16)(id & 0xffff));

	memcpy(buf + th - 20 + 12, &a, 4);
	memcpy(buf + th, &p, 2);
}

static int run(struct dp *dp, const __u8 *in, int len)
{
	__u8 out[PKT_MAX];

	return dp_test_run(dp->prog_fd[DP_XDP], DP_XDP, in, len, out, NULL, 1,
			   0, NULL) == DP_RUN_ERR ? -1 : 0;
}

static int flood_one(__u32 entries, double secs, __u32 active,
		     double period, struct result *r)
{
	struct pkt_spec fs = pkt_tcp4(1, 80), as = pkt_tcp4(1, 443);
	__u8 f[FLOOD_PKTS][PKT_MAX], a_syn[PKT_MAX], a_ack[PKT_MAX];
	int flen[FLOOD_PKTS], slen, alen, th, i, err;
	__u64 before[FS_STAT_MAX], after[FS_STAT_MAX], fid = 0, next_a = 0;
	double t0, t, start, a_gap = period / active;
	struct dp dp;

	err = dp_open(&dp, entries);
	if (err)
		return err;
	if (dp_set_config(&dp, FS_DEFAULT_THRESHOLD, FS_DEFAULT_IDLE_MS,
			  FS_DEFAULT_DSCP_SHORT, FS_DEFAULT_DSCP_LONG,
			  FS_DEFAULT_CFG_FLAGS)) {
		err = -errno;
		goto out;
	}
	fs.saddr4 = 0x0b000000;		/* flood: 11.0.0.0/8 */
	as.saddr4 = 0x0c000000;		/* active: 12.0.0.0/8 */
	for (i = 0; i < FLOOD_PKTS; i++)
		flen[i] = frame(fs, i ? TH_ACK : TH_SYN, f[i], &th);
	slen = frame(as, TH_SYN, a_syn, &th);
	alen = frame(as, TH_ACK | TH_PSH, a_ack, &th);
	for (i = 0; i < (int)active; i++) {
		set_flow(a_syn, th, as.saddr4, i);
		if (run(&dp, a_syn, slen))
			goto fail;
	}
	dp_stats(&dp, before);
	start = t0 = now_s();
	/* first fill the table once (untimed for the rate), then S seconds */
	for (t = t0;; fid++) {
		if (fid == entries) {
			dp_stats(&dp, before);
			t0 = now_s();
			r->active_pkts = 0;
			r->flood_flows = 0;
		}
		for (i = 0; i < FLOOD_PKTS; i++) {
			set_flow(f[i], th, fs.saddr4, (__u32)fid);
			if (run(&dp, f[i], flen[i]))
				goto fail;
		}
		r->flood_flows++;
		if ((fid & 63) == 0) {
			t = now_s();
			if (fid > entries && t - t0 >= secs)
				break;
		}
		/* the active flows in turn, each once per period */
		while (t - start >= next_a * a_gap) {
			set_flow(a_ack, th, as.saddr4, next_a % active);
			if (run(&dp, a_ack, alen))
				goto fail;
			next_a++;
			r->active_pkts++;
		}
	}
	dp_stats(&dp, after);
	r->entries = entries;
	r->rate = r->flood_flows / (t - t0);
	r->evicted = after[FS_STAT_FLOWS_MIDSTREAM] - before[FS_STAT_FLOWS_MIDSTREAM];
	goto out;
fail:
	err = -errno;
out:
	dp_close(&dp);
	return err;
}

int main(int argc, char **argv)
{
	const char *build = getenv("BUILD"), *json = NULL;
	double secs = 8, period = 1.0;
	struct result res[NSIZES] = {};
	char json_def[512];
	unsigned long active = 1000;
	size_t k;
	FILE *js;
	int i, err;

	libbpf_set_print(NULL);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--active") && i + 1 < argc)
			active = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--period") && i + 1 < argc)
			period = atof(argv[++i]) / 1000;
		else
			break;
	}
	if (i < argc || secs <= 0 || period <= 0 || !active || active > 65536) {
		fprintf(stderr, "usage: bench-flood [--json FILE] [--seconds S>0] "
				"[--active 1..65536] [--period MS>0]\n");
		return 2;
	}
	if (!json) {
		snprintf(json_def, sizeof(json_def), "%s/bench/flood.json",
			 build ? build : "build");
		json = json_def;
	}
	for (k = 0; k < NSIZES; k++) {
		err = flood_one(sizes[k], secs, active, period, &res[k]);
		if (err) {
			fprintf(stderr, "bench-flood: %u entries: %s\n", sizes[k],
				strerror(-err));
			return 1;
		}
	}
	printf("%-52s %9s %12s %10s %13s %9s\n",
	       "flood (BPF_PROG_TEST_RUN, XDP, one CPU)", "entries",
	       "new flows/s", "history s", "active pkts", "evicted");
	for (k = 0; k < NSIZES; k++)
		printf("%-52s %9u %12.0f %10.2f %13llu %9llu\n",
		       "3-packet flows; active flows every period",
		       res[k].entries, res[k].rate, res[k].entries / res[k].rate,
		       (unsigned long long)res[k].active_pkts,
		       (unsigned long long)res[k].evicted);
	printf("%lu active flows, one packet each every %.0f ms; evicted = their "
	       "packets counted in flows_midstream\n", active, period * 1000);

	js = fopen(json, "w");
	if (!js) {
		perror(json);
		return 1;
	}
	fprintf(js, "{\"benchmark\":\"flood\",\"active_flows\":%lu,"
		    "\"active_period_ms\":%.0f,\"flood_packets_per_flow\":%d,"
		    "\"rows\":[", active, period * 1000, FLOOD_PKTS);
	for (k = 0; k < NSIZES; k++)
		fprintf(js, "%s{\"entries\":%u,\"new_flows_per_s\":%.0f,"
			    "\"history_s\":%.3f,\"active_packets\":%llu,"
			    "\"evicted\":%llu}", k ? "," : "", res[k].entries,
			res[k].rate, res[k].entries / res[k].rate,
			(unsigned long long)res[k].active_pkts,
			(unsigned long long)res[k].evicted);
	fprintf(js, "]}\n");
	fclose(js);
	return 0;
}
