// SPDX-License-Identifier: GPL-2.0
/*
 * datapath.c - `make bench`, datapath part: ns per packet of the splitter at
 * each hook through BPF_PROG_TEST_RUN, against the floor of that hook (a
 * minimal XDP_PASS or TC_ACT_OK program) measured right before each row of
 * the same run.
 *
 *   bench-datapath [--json FILE] [--obj FILE]... [--pin DIR]...
 *
 * A target is either
 *   --pin DIR  a splitctl pin directory: every interface link pinned there
 *              (link_*) is followed to the program it runs — the program as
 *              `splitctl attach` leaves it: configured, pinned, attached,
 *              default table size, with the instance's rules — and its
 *              pinned maps; rows are labelled "<DIR's last name> link_*";
 *   --obj FILE a splitter object (e.g. an older build, for before/after
 *              tables) loaded here with the defaults splitctl attach writes.
 * Default: --obj $BUILD/bpf/splitter.bpf.o ($BUILD: default "build").
 *
 * The short-class duplication of that instance (its dup/ subdirectory,
 * "splitctl dup attach") gives rows of its own, measured once (fill "-"):
 * fs_dup (link_dup_if*) on a long data packet (what every packet that is
 * not short pays on SHORT's egress) and on a short one (the copy: clone
 * and transmit on the LONG device); fs_dedup (link_dedup_if*) on a long
 * packet (what bulk pays at the tunnel ingress) and on a short one, IPv4
 * and IPv6 (repeated on one device: one table lookup that finds it).
 *
 * Observer links pinned there (observer_if*) give "other direction" rows:
 * a pure ACK of the reversed probe flow, whose entry is in the table, through
 * fs_observer (TC egress).
 *
 * Every established and other-direction row is also measured against the
 * reference (bpf/ref_count.bpf.o: parse, one LRU lookup, one in-place
 * increment, in tables of the same fill): the "ratio" column is the
 * program's cost over the floor divided by the reference's (budget 1.2).
 *
 * Rows, with 1 k and 1 M other flows in the tables:
 *   established  repeat = 2 M on one buffer; floor, program and reference
 *                interleaved, 5 rounds, the minimum of each (kernel average
 *                per run): a long flow's data packet that already carries its
 *                class's DSCP (with repeat > 1 the buffer is reused, so the
 *                first run's rewrite persists; its sequence number repeats,
 *                so after the first run it is a retransmission to the
 *                splitter: the sequence compare without the store);
 *   new flow     repeat = 1, a new source port per call (insert; LRU
 *                eviction when the table is full), median of 20 000 calls
 *                against the floor measured the same way;
 *   spill        (programs with an fs_spill map) the established IPv4
 *                packet again with spill on in the config and a generation
 *                open: "spill, long" for a flow without a grant while none
 *                is left (the agent's entry, the flow's generation, the
 *                datapath's entry and the compare of taken with grants:
 *                what every long packet pays while flows spill), "spill,
 *                spilled" for a flow that holds one (marked dscp_spill).
 * Results: a table on stdout and JSON in FILE ($BUILD/bench/datapath.json).
 */
#include <errno.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flowsplit.h"
#include "../unit/dp.h"
#include "../unit/pkt.h"

#define STEADY_REPEAT 2000000
#define STEADY_ROUNDS 5
#define SINGLE_CALLS 20000
#define MAX_TARGETS 16
#define MAX_ROWS 128
/* The budget over the floor for an established flow (the goal of the
 * datapath; printed next to the figures, never enforced here).
 */
#define BUDGET_V4_NS 35
#define BUDGET_V6_NS 45
/* cost over the floor as a multiple of the reference's */
#define BUDGET_RATIO 1.2
/* the observer's links in a splitctl pin directory (SC_PIN_OBSERVER_FMT) */
#define OBSERVER_PIN_PREFIX "observer_if"

/* what a target's program is */
enum target_kind {
	TK_SPLITTER,
	TK_OBSERVER,		/* fs_observer: other-direction rows */
	TK_DUP,			/* fs_dup: the copy (bpf/dup.bpf.c) */
	TK_DEDUP,		/* fs_dedup */
};

struct target {
	char label[96];
	enum dp_hook hook;
	bool observer;		/* fs_observer: other-direction rows */
	enum target_kind kind;
	int prog_fd, flows4_fd, flows6_fd;
	int cfg_fd, spill_fd;	/* spill rows; -1: none */
};

struct row {
	char target[96], what[48], fill[8];
	enum dp_hook hook;
	double floor, split, ref;	/* ref 0: not measured */
	int budget;
};

/* the reference programs per hook and their tables */
static int ref_fd[DP_HOOKS], ref4_fd, ref6_fd;

static struct target targets[MAX_TARGETS];
static int ntargets;
static struct row rows[MAX_ROWS];
static int nrows;

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * @n programs on copies of one frame, interleaved: each round runs every
 * program once (repeat STEADY_REPEAT), so load from other jobs falls on
 * all of them alike; the minimum per program over STEADY_ROUNDS into @best.
 */
static int steady_set(const int *fd, int n, enum dp_hook hook,
		      const __u8 *frame, __u32 len, double *best)
{
	__u8 buf[4][PKT_MAX], out[PKT_MAX];
	__u32 ns;
	int r, i;

	for (i = 0; i < n; i++) {
		memcpy(buf[i], frame, len);
		best[i] = 1e9;
	}
	for (r = 0; r < STEADY_ROUNDS; r++)
		for (i = 0; i < n; i++) {
			if (dp_test_run(fd[i], hook, buf[i], len, out, NULL,
					STEADY_REPEAT, 0, &ns) == DP_RUN_ERR)
				return -1;
			memcpy(buf[i], out, len);	/* keep the marked packet */
			if (ns < best[i])
				best[i] = ns;
		}
	return 0;
}

/* Median per-call duration; @vary gives each call a new flow. */
static double single(int fd, enum dp_hook hook, const struct pkt_spec *spec,
		     int vary)
{
	static __u32 d[SINGLE_CALLS];
	struct pkt_spec s = *spec;
	__u8 in[PKT_MAX], out[PKT_MAX];
	int i, len = pkt_build(&s, in, PKT_MAX);

	for (i = 0; i < SINGLE_CALLS; i++) {
		if (vary) {
			s.sport = (__u16)(1024 + i % 60000);
			s.saddr4 = 0xac100000 + i / 60000 + 1;
			len = pkt_build(&s, in, PKT_MAX);
		}
		if (dp_test_run(fd, hook, in, len, out, NULL, 1, 0, &d[i]) ==
		    DP_RUN_ERR)
			return -1;
	}
	qsort(d, SINGLE_CALLS, sizeof(d[0]), cmp_u32);
	return d[SINGLE_CALLS / 2];
}

/* Fill a flow table with @n distinct flows (none equal to the probes). */
static int prefill(int fd, int family, __u32 n)
{
	const __u32 chunk = 65536;
	struct flow_state st = { .packets = 100, .bytes = 6400, .class = 1 };
	size_t ksz = family == 4 ? sizeof(struct flow_key4)
				 : sizeof(struct flow_key6);
	__u8 *keys = calloc(chunk, ksz);
	struct flow_state *vals = calloc(chunk, sizeof(st));
	__u32 i, done = 0, cnt;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (done < n) {
		cnt = n - done < chunk ? n - done : chunk;
		for (i = 0; i < cnt; i++) {
			__u32 id = done + i;

			vals[i] = st;
			if (family == 4) {
				struct flow_key4 *k = (void *)(keys + i * ksz);

				*k = (struct flow_key4){
					.saddr = htobe32(0xc0000000 | id),
					.daddr = htobe32(0x0a000102),
					.sport = htobe16(7), .dport = htobe16(7),
					.proto = 6 };
			} else {
				struct flow_key6 *k = (void *)(keys + i * ksz);

				memset(k, 0, sizeof(*k));
				k->saddr[0] = 0x20;
				memcpy(k->saddr + 12, &id, 4);
				k->daddr[0] = 0xfd;
				k->sport = htobe16(7);
				k->dport = htobe16(7);
				k->proto = 6;
			}
		}
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		if (bpf_map_update_batch(fd, keys, vals, &cnt, &bo)) {
			err = -errno;
			goto out;
		}
		done += cnt;
	}
out:
	free(keys);
	free(vals);
	return err;
}

static int load_prog(const char *path, const char *name)
{
	struct bpf_object *obj = bpf_object__open(path);
	struct bpf_program *p;

	if (!obj || bpf_object__load(obj))
		return -1;
	p = bpf_object__find_program_by_name(obj, name);
	return p ? bpf_program__fd(p) : -1;
}

/* The map named @name that program @prog_fd uses, or -1. */
static int prog_map(int prog_fd, const char *name)
{
	__u32 ids[16], n, i;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	n = info.nr_map_ids < 16 ? info.nr_map_ids : 16;
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) &&
		    !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -1;
}

static int pin_fd(const char *dir, const char *name);
static int link_prog_fd(const char *dir, const char *name);

static void add_target(const char *label, int prog_fd, int f4, int f6,
		       enum target_kind kind)
{
	bool observer = kind == TK_OBSERVER;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct target *t = &targets[ntargets];

	if (ntargets >= MAX_TARGETS ||
	    bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return;
	t->cfg_fd = observer ? -1 : prog_map(prog_fd, FS_MAP_CONFIG);
	t->spill_fd = observer ? -1 : prog_map(prog_fd, FS_MAP_SPILL);
	snprintf(t->label, sizeof(t->label), "%s", label);
	t->hook = info.type == BPF_PROG_TYPE_SCHED_CLS ? DP_TC : DP_XDP;
	t->prog_fd = prog_fd;
	t->flows4_fd = f4;
	t->flows6_fd = f6;
	t->observer = observer;
	t->kind = kind;
	ntargets++;
}

/* The program of the link pinned as dir/name, as a target of kind k
 * labelled "<base> <sub><name>". False when there is none. */
static bool add_link(const char *dir, const char *name, const char *base, const char *sub,
		     int f4, int f6, enum target_kind k)
{
	char label[96];
	int pfd = link_prog_fd(dir, name);

	if (pfd < 0)
		return false;
	snprintf(label, sizeof(label), "%.40s %s%.40s", base, sub, name);
	add_target(label, pfd, f4, f6, k);
	return true;
}

/* The dup/ subdirectory of a pin directory: its fs_dup and fs_dedup links
 * (cmd_dup.c's pin names). None is no error. */
static void add_dup_pins(const char *dir, const char *base, int f4, int f6)
{
	char sub[256];
	struct dirent *de;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/dup", dir);
	d = opendir(sub);
	if (!d)
		return;
	while ((de = readdir(d))) {
		enum target_kind k;

		if (!strncmp(de->d_name, "link_dup_if", 11))
			k = TK_DUP;
		else if (!strncmp(de->d_name, "link_dedup_if", 13))
			k = TK_DEDUP;
		else
			continue;
		if (!add_link(sub, de->d_name, base, "dup/", f4, f6, k))
			continue;
		/* one fs_dedup row set is enough: both links run one program */
		if (k == TK_DEDUP)
			for (int i = 0; i < ntargets - 1; i++)
				if (targets[i].kind == TK_DEDUP &&
				    !strncmp(targets[i].label, base, strlen(base))) {
					ntargets--;
					break;
				}
	}
	closedir(d);
}

/* The defaults `splitctl attach` writes. idle_jiffies assumes HZ 1000, the
 * highest there is: the timeout is then at least 30 s at any HZ, and the
 * benchmark's flows never go idle.
 */
static int add_obj(const char *path)
{
	struct split_config c = {
		.threshold = FS_DEFAULT_THRESHOLD,
		.dscp_short = FS_DEFAULT_DSCP_SHORT,
		.dscp_long = FS_DEFAULT_DSCP_LONG,
		.flags = FS_DEFAULT_CFG_FLAGS,
	};
	struct bpf_object *obj = bpf_object__open(path);
	struct bpf_program *p;
	struct bpf_map *m;
	char label[96];
	__u32 zero = 0;

	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bench-datapath: cannot load %s\n", path);
		return -1;
	}
	split_config_set_idle(&c, FS_DEFAULT_IDLE_MS, 1000);
	m = bpf_object__find_map_by_name(obj, FS_MAP_CONFIG);
	if (!m || bpf_map_update_elem(bpf_map__fd(m), &zero, &c, BPF_ANY))
		return -1;
	bpf_object__for_each_program(p, obj) {
		bool obs = !strcmp(bpf_program__name(p), FS_PROG_OBSERVER);

		if (strcmp(bpf_program__name(p), FS_PROG_SPLITTER) &&
		    strcmp(bpf_program__name(p), FS_PROG_SPLITTER_TC) && !obs)
			continue;
		snprintf(label, sizeof(label), "%s", path);
		add_target(label, bpf_program__fd(p),
			   bpf_map__fd(bpf_object__find_map_by_name(obj,
							FS_MAP_FLOWS4)),
			   bpf_map__fd(bpf_object__find_map_by_name(obj,
							FS_MAP_FLOWS6)),
			   obs ? TK_OBSERVER : TK_SPLITTER);
	}
	return 0;
}

static int pin_fd(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

/* The program of the link pinned as dir/name, or -1. */
static int link_prog_fd(const char *dir, const char *name)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int lfd = pin_fd(dir, name);

	if (lfd < 0 || bpf_obj_get_info_by_fd(lfd, &li, &len))
		return -1;
	return bpf_prog_get_fd_by_id(li.prog_id);
}

static int add_pin(const char *dir)
{
	int f4 = pin_fd(dir, FS_MAP_FLOWS4), f6 = pin_fd(dir, FS_MAP_FLOWS6);
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d || f4 < 0 || f6 < 0) {
		fprintf(stderr, "bench-datapath: %s: not a splitctl pin "
				"directory\n", dir);
		return -1;
	}
	while ((de = readdir(d))) {
		bool obs = !strncmp(de->d_name, OBSERVER_PIN_PREFIX,
				    strlen(OBSERVER_PIN_PREFIX));

		if (strncmp(de->d_name, "link_", 5) && !obs)
			continue;
		if (add_link(dir, de->d_name, base, "", f4, f6, obs ? TK_OBSERVER : TK_SPLITTER))
			found += !obs;
	}
	closedir(d);
	add_dup_pins(dir, base, f4, f6);
	if (!found)
		fprintf(stderr, "bench-datapath: %s: no attached link\n", dir);
	return found ? 0 : -1;
}

/* $BUILD (the Makefile's output directory), else "build" */
static const char *build_path(char *buf, size_t len, const char *rel)
{
	const char *b = getenv("BUILD");

	snprintf(buf, len, "%s/%s", b && *b ? b : "build", rel);
	return buf;
}

static void add_row(const struct target *t, const char *what,
		    const char *fill, double floor, double split, double ref,
		    int budget)
{
	struct row *r = &rows[nrows];

	if (nrows >= MAX_ROWS)
		return;
	snprintf(r->target, sizeof(r->target), "%s", t->label);
	snprintf(r->what, sizeof(r->what), "%s", what);
	snprintf(r->fill, sizeof(r->fill), "%s", fill);
	r->hook = t->hook;
	r->floor = floor;
	r->split = split;
	r->ref = ref;
	r->budget = budget;
	nrows++;
}

/* The reference programs and their tables (bpf/ref_count.bpf.o). */
static int load_ref(void)
{
	char path[512];
	struct bpf_object *obj;
	struct bpf_program *x, *t;

	obj = bpf_object__open(build_path(path, sizeof(path),
					  "bpf/ref_count.bpf.o"));
	if (!obj || bpf_object__load(obj))
		return -1;
	x = bpf_object__find_program_by_name(obj, "ref_xdp");
	t = bpf_object__find_program_by_name(obj, "ref_tc");
	if (!x || !t)
		return -1;
	ref_fd[DP_XDP] = bpf_program__fd(x);
	ref_fd[DP_TC] = bpf_program__fd(t);
	ref4_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ref_flows4"));
	ref6_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ref_flows6"));
	return ref4_fd < 0 || ref6_fd < 0 ? -1 : 0;
}

/* floor, @prog and the reference interleaved on one frame: one row */
static int measure(const struct target *t, const char *what, const char *fill,
		   int floor_fd, const __u8 *frame, __u32 len, int budget)
{
	int fds[3] = { floor_fd, t->prog_fd, ref_fd[t->hook] };
	double best[3];

	if (steady_set(fds, 3, t->hook, frame, len, best))
		return -1;
	add_row(t, what, fill, best[0], best[1], best[2], budget);
	return 0;
}

/* The probe flow's entry, as the splitter leaves it for a download: the
 * other direction's pure ACKs repeat the ACK number already recorded. */
static int put_probe(int fd, const struct pkt_spec *s)
{
	struct flow_state st = { .packets = 100, .bytes = 6400, .class = 1,
				 .ack_flags = FS_ACK_F_SEEN, .ack_hi = s->seq };
	struct flow_key6 k6 = { .sport = htobe16(s->sport),
				.dport = htobe16(s->dport), .proto = 6 };
	struct flow_key4 k4 = { .saddr = htobe32(s->saddr4),
				.daddr = htobe32(s->daddr4),
				.sport = htobe16(s->sport),
				.dport = htobe16(s->dport), .proto = 6 };

	memcpy(k6.saddr, s->saddr6, 16);
	memcpy(k6.daddr, s->daddr6, 16);
	return bpf_map_update_elem(fd, s->family == 4 ? (void *)&k4 : (void *)&k6,
				   &st, BPF_ANY);
}

/* The other direction of @s: a pure ACK. */
static struct pkt_spec reversed(const struct pkt_spec *s)
{
	struct pkt_spec r = *s;

	r.saddr4 = s->daddr4;
	r.daddr4 = s->saddr4;
	memcpy(r.saddr6, s->daddr6, 16);
	memcpy(r.daddr6, s->saddr6, 16);
	r.sport = s->dport;
	r.dport = s->sport;
	r.tcp_flags = 0x10;	/* ACK */
	r.payload = 0;
	r.ack = s->seq;
	return r;
}

/* The spill state of a spill row: @spilled, the probe flow holds a grant
 * of generation 1; else none is left. @on false: as before. */
static int spill_state(const struct target *t, const struct pkt_spec *s,
		       bool on, bool spilled)
{
	struct flow_key4 k = { .saddr = htobe32(s->saddr4),
			       .daddr = htobe32(s->daddr4),
			       .sport = htobe16(s->sport),
			       .dport = htobe16(s->dport), .proto = 6 };
	/* a lease that holds through the run, as the agent renews it */
	struct fs_spill a = { .gen = on, .lease_jiffies = ~0ULL }, d;
	struct split_config c;
	struct flow_state st;
	__u32 zero = 0, key = FS_SPILL_KEY_DATAPATH;

	if (bpf_map_lookup_elem(t->cfg_fd, &zero, &c) ||
	    bpf_map_lookup_elem(t->spill_fd, &key, &d))
		return -1;
	c.dscp_spill = FS_DEFAULT_DSCP_SPILL;
	c.flags = on ? c.flags | FS_CFG_F_SPILL : c.flags & ~FS_CFG_F_SPILL;
	a.grants = d.taken;
	key = FS_SPILL_KEY_AGENT;
	if (bpf_map_update_elem(t->cfg_fd, &zero, &c, BPF_ANY) ||
	    bpf_map_update_elem(t->spill_fd, &key, &a, BPF_ANY))
		return -1;
	if (!on || bpf_map_lookup_elem(t->flows4_fd, &k, &st))
		return 0;
	st.policy.spill = spilled ? 1 : 0;
	return bpf_map_update_elem(t->flows4_fd, &k, &st, BPF_EXIST);
}

/* fs_dup / fs_dedup rows: a long and a short data packet (the probe
 * flows with the default code points). */
static int bench_dup(const struct target *t, const int *floor_fd,
		     const struct pkt_spec *v4, const struct pkt_spec *v6)
{
	const struct pkt_spec *sp[2] = { v4, v6 };
	int fl = floor_fd[t->hook], len, i;
	__u8 f[PKT_MAX];
	char what[48];

	for (i = 0; i < 2; i++) {
		struct pkt_spec l = *sp[i], sh = *sp[i];

		l.tos = FS_DEFAULT_DSCP_LONG << FS_DSCP_SHIFT;
		sh.tos = FS_DEFAULT_DSCP_SHORT << FS_DSCP_SHIFT;
		if (t->kind == TK_DUP && i)
			break;	/* the copy costs the same for IPv6 */
		len = pkt_build(&l, f, PKT_MAX);
		snprintf(what, sizeof(what), "ipv%d long", i ? 6 : 4);
		if (measure(t, what, "-", fl, f, len, 0))
			return -1;
		len = pkt_build(&sh, f, PKT_MAX);
		snprintf(what, sizeof(what), "ipv%d short%s", i ? 6 : 4,
			 t->kind == TK_DUP ? ", copied" : ", seen");
		if (measure(t, what, "-", fl, f, len, 0))
			return -1;
	}
	return 0;
}

static int bench_target(const struct target *t, const int *floor_fd,
			const char *fill, const struct pkt_spec *v4,
			const struct pkt_spec *v6)
{
	struct pkt_spec r4 = reversed(v4), r6 = reversed(v6);
	__u8 f[PKT_MAX];
	int fl = floor_fd[t->hook], len;
	double f1, x;

	if (t->observer) {
		if (put_probe(t->flows4_fd, v4) || put_probe(t->flows6_fd, v6))
			return -1;
		len = pkt_build(&r4, f, PKT_MAX);
		if (measure(t, "ipv4 other direction", fill, fl, f, len, 0))
			return -1;
		len = pkt_build(&r6, f, PKT_MAX);
		return measure(t, "ipv6 other direction", fill, fl, f, len, 0);
	}
	len = pkt_build(v4, f, PKT_MAX);
	if (measure(t, "ipv4 established", fill, fl, f, len, BUDGET_V4_NS))
		return -1;
	len = pkt_build(v6, f, PKT_MAX);
	if (measure(t, "ipv6 established", fill, fl, f, len, BUDGET_V6_NS))
		return -1;
	if (t->cfg_fd >= 0 && t->spill_fd >= 0) {
		len = pkt_build(v4, f, PKT_MAX);
		if (spill_state(t, v4, true, false) ||
		    measure(t, "ipv4 spill, long", fill, fl, f, len,
			    BUDGET_V4_NS) ||
		    spill_state(t, v4, true, true) ||
		    measure(t, "ipv4 spill, spilled", fill, fl, f, len,
			    BUDGET_V4_NS) ||
		    spill_state(t, v4, false, false))
			return -1;
	}
	f1 = single(fl, t->hook, v4, 0);
	x = single(t->prog_fd, t->hook, v4, 1);
	add_row(t, "ipv4 new flow", fill, f1, x, 0, 0);
	return 0;
}

static double ratio(const struct row *r)
{
	return r->ref > r->floor ? (r->split - r->floor) / (r->ref - r->floor) : 0;
}

static void print_rows(void)
{
	int i;

	printf("%-44s %-4s %-20s %4s %8s %8s %8s %9s %6s %7s\n",
	       "datapath (BPF_PROG_TEST_RUN)", "hook", "case", "fill",
	       "floor ns", "prog ns", "ref ns", "overhead", "ratio", "budget");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		char b[16] = "-", q[16] = "-";

		if (r->ref) {
			snprintf(q, sizeof(q), "%.2f", ratio(r));
			snprintf(b, sizeof(b), "<= %.1fx", BUDGET_RATIO);
		}
		printf("%-44.44s %-4s %-20s %4s %8.1f %8.1f %8.1f %+9.1f %6s %7s\n",
		       r->target, dp_hook_name(r->hook), r->what, r->fill,
		       r->floor, r->split, r->ref, r->split - r->floor, q, b);
	}
	printf("ratio: (prog - floor) / (ref - floor), ref = parse + one LRU lookup + one "
	       "increment, same run, interleaved, minima of %d rounds\n",
	       STEADY_ROUNDS);
	printf("flow table: %u entries per family, %zu-byte IPv4 key, "
	       "%zu-byte IPv6 key, %zu-byte value\n", FS_DEFAULT_FLOWS,
	       sizeof(struct flow_key4), sizeof(struct flow_key6),
	       sizeof(struct flow_state));
}

static int write_json(const char *json)
{
	FILE *js = fopen(json, "w");
	int i;

	if (!js) {
		perror(json);
		return 1;
	}
	fprintf(js, "{\"benchmark\":\"datapath\",\"unit\":\"ns/packet\","
		    "\"rows\":[");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		fprintf(js, "%s{\"target\":\"%s\",\"hook\":\"%s\","
			    "\"case\":\"%s\",\"other_flows\":\"%s\","
			    "\"floor_ns\":%.1f,\"splitter_ns\":%.1f,"
			    "\"overhead_ns\":%.1f",
			i ? "," : "", r->target, dp_hook_name(r->hook), r->what,
			r->fill, r->floor, r->split, r->split - r->floor);
		if (r->ref)
			fprintf(js,
				",\"reference_ns\":%.1f,\"ratio_to_reference\":%.3f,\"budget_"
				"ratio\":%.1f",
				r->ref, ratio(r), BUDGET_RATIO);
		if (r->budget)
			fprintf(js, ",\"budget_overhead_ns\":%d", r->budget);
		fprintf(js, "}");
	}
	fprintf(js, "]}\n");
	fclose(js);
	return 0;
}

int main(int argc, char **argv)
{
	static const __u32 sizes[] = { 1000, FS_DEFAULT_FLOWS };
	static const char *const fill[] = { "1k", "1M" };
	struct pkt_spec v4 = pkt_tcp4(40000, 443), v6 = pkt_tcp6(40000, 443);
	char json_def[512], path[512];
	const char *json = build_path(json_def, sizeof(json_def),
				      "bench/datapath.json");
	int floor_fd[DP_HOOKS], i, s;

	libbpf_set_print(NULL);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else if (!strcmp(argv[i], "--obj") && i + 1 < argc) {
			if (add_obj(argv[++i]))
				return 1;
		} else if (!strcmp(argv[i], "--pin") && i + 1 < argc) {
			if (add_pin(argv[++i]))
				return 1;
		} else {
			fprintf(stderr, "usage: bench-datapath [--json FILE] "
					"[--obj FILE]... [--pin DIR]...\n");
			return 2;
		}
	}
	if (!ntargets &&
	    add_obj(build_path(path, sizeof(path), "bpf/splitter.bpf.o")))
		return 1;
	floor_fd[DP_XDP] = load_prog(build_path(path, sizeof(path),
						"bpf/xdp_pass.bpf.o"), "xdp_pass");
	floor_fd[DP_TC] = load_prog(build_path(path, sizeof(path),
					       "bpf/tc_pass.bpf.o"), "tc_pass");
	if (floor_fd[DP_XDP] < 0 || floor_fd[DP_TC] < 0 || load_ref()) {
		fprintf(stderr, "bench-datapath: cannot load the floors or the "
				"reference under build/bpf (run as root after make)\n");
		return 1;
	}

	for (s = 0; s < 2; s++) {
		dp_flush_fds(ref4_fd, ref6_fd);
		if (prefill(ref4_fd, 4, sizes[s]) || prefill(ref6_fd, 6, sizes[s])) {
			fprintf(stderr, "bench-datapath: prefill failed\n");
			return 1;
		}
		for (i = 0; i < ntargets; i++) {
			struct target *t = &targets[i];

			if (t->kind == TK_DUP || t->kind == TK_DEDUP) {
				if (!s && bench_dup(t, floor_fd, &v4, &v6)) {
					fprintf(stderr, "bench-datapath: %s failed\n",
						t->label);
					return 1;
				}
				continue;
			}
			dp_flush_fds(t->flows4_fd, t->flows6_fd);
			if (prefill(t->flows4_fd, 4, sizes[s]) ||
			    prefill(t->flows6_fd, 6, sizes[s]) ||
			    bench_target(t, floor_fd, fill[s], &v4, &v6)) {
				fprintf(stderr, "bench-datapath: %s failed\n",
					t->label);
				return 1;
			}
			dp_flush_fds(t->flows4_fd, t->flows6_fd);
		}
	}
	dp_flush_fds(ref4_fd, ref6_fd);
	print_rows();
	return write_json(json);
}
