// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_flows.c - "flows": the live flow tables, filtered by class, sorted,
 * the first N; an expired flow (past the idle timeout) is of no class.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfutil.h"
#include "commands.h"

enum sc_flow_sort { SC_SORT_PACKETS, SC_SORT_BYTES, SC_SORT_AGE };

struct sc_flows_args {
	__u32 given;
	int class;		/* enum flow_class, -1 = every class */
	__u64 top;		/* 0 = all */
	int sort;		/* enum sc_flow_sort */
};

static const struct sc_enum class_values[] = {
	{ "short", FS_CLASS_SHORT }, { "long", FS_CLASS_LONG }, { NULL, 0 },
};
static const struct sc_enum sort_values[] = {
	{ "packets", SC_SORT_PACKETS }, { "bytes", SC_SORT_BYTES },
	{ "age", SC_SORT_AGE }, { NULL, 0 },
};

static const struct sc_option flows_opts[] = {
	SC_OPTION("class", SC_OPT_ENUM, struct sc_flows_args, class, .short_opt = 'c',
		  .metavar = "short|long", .values = class_values,
		  .help = "only flows of this class"),
	SC_OPTION("top", SC_OPT_UINT, struct sc_flows_args, top, .short_opt = 'n',
		  .metavar = "N", .lo = 1, .hi = 4294967296.0,
		  .help = "only the first N flows after sorting"),
	SC_OPTION("sort", SC_OPT_ENUM, struct sc_flows_args, sort, .short_opt = 's',
		  .metavar = "packets|bytes|age", .values = sort_values,
		  .help = "sort order (descending; default packets)"),
	SC_OPTIONS_END,
};

static const struct sc_flows_args flows_defaults = { .class = -1 };

/* One flow, kept compact (1M flows: ~88 MB); text made at print time. */
struct flow_row {
	struct flow_state s;
	__u8 saddr[16], daddr[16];	/* network byte order; IPv4 in 0..3 */
	__u16 sport, dport;		/* host byte order */
	__u8 family;			/* 4 or 6 */
};

static int sort_key;	/* enum sc_flow_sort, for cmp_rows() */

/* Past the idle timeout (the datapath's test): it restarts as a new, short
 * flow at its next packet, the sweep removes it; it is no longer long. */
static bool flow_expired(const struct flow_state *s, __u64 now, __u64 idle_jiffies)
{
	return (__s64)(now - s->last_seen) > (__s64)idle_jiffies;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;
	__u64 vx, vy;

	switch (sort_key) {
	case SC_SORT_BYTES: vx = x->s.bytes; vy = y->s.bytes; break;
	case SC_SORT_AGE: vx = y->s.first_seen; vy = x->s.first_seen; break; /* oldest first */
	default: vx = x->s.packets; vy = y->s.packets; break;
	}
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

struct flow_dump {
	int family;		/* 4 or 6 */
	int class;		/* FS_CLASS_*, -1 for every class; an expired
				 * flow is of no class */
	__u64 now, idle_jiffies;	/* to tell expired flows */
	struct flow_row *rows;
	size_t n, cap;
};

static void fill_row(struct flow_row *r, int family, const void *keys, __u32 i)
{
	r->family = family;
	if (family == 4) {
		const struct flow_key4 *k = (const struct flow_key4 *)keys + i;

		memcpy(r->saddr, &k->saddr, sizeof(k->saddr));
		memcpy(r->daddr, &k->daddr, sizeof(k->daddr));
		r->sport = ntohs(k->sport);
		r->dport = ntohs(k->dport);
	} else {
		const struct flow_key6 *k = (const struct flow_key6 *)keys + i;

		memcpy(r->saddr, k->saddr, sizeof(k->saddr));
		memcpy(r->daddr, k->daddr, sizeof(k->daddr));
		r->sport = ntohs(k->sport);
		r->dport = ntohs(k->dport);
	}
}

/* Append one batch of a flow table to the rows (fs_map_batch_fn). */
static int dump_batch(void *ctx, const void *keys, const void *values, __u32 count)
{
	const struct flow_state *vals = values;
	struct flow_dump *d = ctx;
	__u32 i;

	for (i = 0; i < count; i++) {
		if (d->class >= 0 && ((int)vals[i].class != d->class ||
				      flow_expired(&vals[i], d->now, d->idle_jiffies)))
			continue;
		struct flow_row *nr = fs_grow(d->rows, &d->cap, d->n, sizeof(*nr), 1024);

		if (!nr)
			return -ENOMEM;
		d->rows = nr;
		d->rows[d->n].s = vals[i];
		fill_row(&d->rows[d->n++], d->family, keys, i);
	}
	return 0;
}

static int dump_table(int fd, int family, struct flow_dump *d)
{
	d->family = family;
	return fs_map__for_each_batch(fd, 1024, FS_MAP_ITER_LOOKUP, dump_batch, d, NULL);
}

static void print_endpoint(const char *key, const char *port_key, int family,
			   const __u8 *addr, __u16 port)
{
	char a[INET6_ADDRSTRLEN], text[64];

	inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, a, sizeof(a));
	snprintf(text, sizeof(text), family == 6 ? "[%s]:%u" : "%s:%u", a, port);
	print_string(PRINT_JSON, key, NULL, a);
	print_uint(PRINT_JSON, port_key, NULL, port);
	print_string(PRINT_FP, NULL, "%-39s ", text);
}

/* The policy a flow started with (its rule's mode, or the global one). */
static const char *flow_mode_name(__u8 mode)
{
	static const char *const names[FS_MODE_MAX] = {
		[FS_MODE_GLOBAL] = "global", [FS_MODE_AUTO] = "auto",
		[FS_MODE_SHORT] = "short", [FS_MODE_LONG] = "long",
	};

	return mode < FS_MODE_MAX ? names[mode] : "?";
}

static const char *class_name(const struct flow_row *r)
{
	return r->s.class == FS_CLASS_LONG ? "long" : "short";
}

/* A long flow spilled now: it holds a grant of the agent's generation in
 * force (spill_gen, 0: none), so its long packets use the SHORT tunnel. */
static bool flow_spilled(const struct flow_row *r, bool expired, __u16 spill_gen)
{
	return !expired && spill_gen && r->s.class == FS_CLASS_LONG &&
	       r->s.policy.spill == spill_gen;
}

static void print_flow(const struct flow_row *r, __u64 now, unsigned int hz,
		       __u64 idle_jiffies, __u16 spill_gen)
{
	bool expired = flow_expired(&r->s, now, idle_jiffies);
	bool midstream = r->s.policy.flags & FS_POLICY_F_MIDSTREAM;
	bool spilled = flow_spilled(r, expired, spill_gen);

	open_json_object(NULL);
	print_string(PRINT_ANY, "family", "%s ", r->family == 6 ? "ipv6" : "ipv4");
	print_endpoint("src", "sport", r->family, r->saddr, r->sport);
	print_endpoint("dst", "dport", r->family, r->daddr, r->dport);
	print_uint(PRINT_ANY, "packets", "%10llu ", r->s.packets);
	print_uint(PRINT_ANY, "bytes", "%12llu ", r->s.bytes);
	print_uint(PRINT_JSON, "payload_bytes", NULL, r->s.payload);
	print_uint(PRINT_JSON, "boundaries", NULL, r->s.boundaries);
	print_bool(PRINT_JSON, "acks_seen", NULL, r->s.ack_flags & FS_ACK_F_SEEN);
	print_string(PRINT_JSON, "mode", NULL, flow_mode_name(r->s.policy.mode));
	print_float(PRINT_ANY, "age_s", "%9.1f ", (double)(now - r->s.first_seen) / hz);
	print_float(PRINT_ANY, "idle_s", "%9.1f ", (double)(now - r->s.last_seen) / hz);
	print_string(PRINT_JSON, "class", NULL, class_name(r));
	print_bool(PRINT_JSON, "expired", NULL, expired);
	print_bool(PRINT_JSON, "midstream", NULL, midstream);
	print_bool(PRINT_JSON, "spilled", NULL, spilled);
	print_string(PRINT_FP, NULL, "%s", expired ? "expired" : class_name(r));
	print_string(PRINT_FP, NULL, "%s", spilled ? " spilled" : "");
	print_string(PRINT_FP, NULL, "%s\n", midstream ? " midstream" : "");
	close_json_object();
}

static int cmd_flows(const struct sc_call *c)
{
	const struct sc_flows_args *a = c->args;
	struct flow_dump d = { .class = a->class };
	const struct sc_state *st = c->st;
	struct fs_spill agent = { 0 }, dp;
	struct split_config cfg;
	int ret = FS_EXIT_RUNTIME, err;
	unsigned int hz;
	size_t i;
	__u64 now;

	err = sc_clock_now(st, &now, &hz);
	if (err) {
		pr_err("cannot read the datapath clock: %s", strerror(-err));
		goto out;
	}
	err = sc_config_read(st, &cfg);
	if (err) {
		pr_err("cannot read the config map: %s", strerror(-err));
		goto out;
	}
	/* spilled flows: those of the agent's generation, while spill is on */
	if (!(cfg.flags & FS_CFG_F_SPILL) || sc_spill_read(st, &agent, &dp))
		agent.gen = 0;
	d.now = now;
	d.idle_jiffies = cfg.idle_jiffies;
	err = dump_table(st->flows4_fd, 4, &d);
	if (!err)
		err = dump_table(st->flows6_fd, 6, &d);
	if (err) {
		pr_err("cannot read the flow table: %s", strerror(-err));
		goto out;
	}
	sort_key = a->sort;
	if (d.n)	/* qsort(NULL, 0, ...) is undefined behaviour */
		qsort(d.rows, d.n, sizeof(*d.rows), cmp_rows);
	print_text("%-4s %-39s %-39s %10s %12s %9s %9s %s\n", "fam", "source",
		   "destination", "packets", "bytes", "age_s", "idle_s", "class");
	open_json_array(PRINT_JSON, NULL);
	for (i = 0; i < d.n && (!a->top || i < a->top); i++)
		print_flow(&d.rows[i], now, hz, cfg.idle_jiffies, agent.gen);
	close_json_array(PRINT_JSON, NULL);
	ret = FS_EXIT_OK;
out:
	free(d.rows);
	return ret;
}

const struct sc_cmd sc_cmd_flows =
	SC_CMD("flows", cmd_flows, "", "the live flow table", flows_opts,
	       struct sc_flows_args, .defaults = &flows_defaults, .state = SC_STATE_READ);
