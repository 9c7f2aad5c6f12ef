// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_core.c - attach, detach, set, status, stats, flows, flush, and the
 * hand-over of route/tunnel to tunnel-cfg.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpfutil.h"
#include "splitctl.h"
#include "ops.h"
#include "tunnel_cfg.h"


int cmd_attach(int argc, char **argv, const struct sc_opts *o)
{
	struct sc_attach_opts ao = { .mode = SC_MODE_AUTO };
	const char *settings[2 * 4 + 1];
	int n = 0, c;
	__u64 v;

	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "native"))
				ao.mode = SC_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				ao.mode = SC_MODE_GENERIC;
			else if (!strcmp(optarg, "auto"))
				ao.mode = SC_MODE_AUTO;
			else
				return sc_usage_error("attach", "--mode: invalid value '%s': accepted: native, generic, auto",
						      optarg);
			break;
		case 't':
		case 'i':
		case 's':
		case 'l':
			settings[n++] = c == 't' ? "threshold" : c == 'i' ? "idle-timeout" :
					c == 's' ? "dscp-short" : "dscp-long";
			settings[n++] = optarg;
			break;
		case 'f':
			if (sc_parse_u64(optarg, FS_MIN_FLOWS, FS_MAX_FLOWS, &v))
				return sc_usage_error("attach", "--flows: invalid value '%s': accepted: an integer %u..%u",
						      optarg, FS_MIN_FLOWS, FS_MAX_FLOWS);
			ao.flows = v;
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	settings[n] = NULL;
	ao.settings = settings;
	if (optind != argc - 1)
		return sc_usage_error("attach", "expected exactly one interface name (see -h)");
	/* validate the settings before touching anything (attach re-checks
	 * them against the live config) */
	{
		struct split_config tmp;
		char err[256];
		int i;

		sc_config_defaults(&tmp, 1000);
		for (i = 0; i < n; i += 2)
			if (sc_setting_apply(&tmp, settings[i], settings[i + 1], 1000,
					     err, sizeof(err))) {
				sc_err("%s", err);
				return SC_EXIT_USAGE;
			}
	}
	if (!sc_valid_ifname(argv[optind]))
		return sc_usage_error("attach", "invalid interface name '%s': accepted: 1..%d characters, not '.' or '..', no '/', ':' or white space",
				      argv[optind], IFNAMSIZ - 1);
	return sc_attach(o, argv[optind], &ao);
}

int cmd_detach(int argc, char **argv, const struct sc_opts *o)
{
	int all = 0, c;

	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	if (all && optind == argc)
		return sc_detach(o, NULL);
	if (!all && optind == argc - 1) {
		if (!sc_valid_ifname(argv[optind]))
			return sc_usage_error("detach", "invalid interface name '%s': accepted: 1..%d characters, not '.' or '..', no '/', ':' or white space",
					      argv[optind], IFNAMSIZ - 1);
		return sc_detach(o, argv[optind]);
	}
	return sc_usage_error("detach", "expected one interface name or --all (see -h)");
}

/* Run the option loop of commands that take no options but -h. */
static int no_options(int argc, char **argv, const char *cmd, int max_args)
{
	int c;

	while ((c = sc_getopt(argc, argv)) != -1)
		return c == 'h' ? -1 : SC_EXIT_USAGE;
	if (argc - optind > max_args)
		return sc_usage_error(cmd, "unexpected argument '%s' (see -h)", argv[optind + max_args]);
	return 0;
}

int cmd_set(int argc, char **argv, const struct sc_opts *o)
{
	struct split_config cfg;
	struct sc_state st;
	char err[256];
	unsigned int hz;
	__u64 now;
	int c, i, ret;

	while ((c = sc_getopt(argc, argv)) != -1)
		return c == 'h' ? SC_EXIT_OK : SC_EXIT_USAGE;
	if (optind == argc || (argc - optind) % 2)
		return sc_usage_error("set", "expected NAME VALUE pairs; names: " SC_SETTING_NAMES);
	ret = sc_state_open(o, &st, 1);
	if (ret)
		return ret;
	ret = SC_EXIT_RUNTIME;
	if (sc_clock_now(&st, &now, &hz) || sc_config_read(&st, &cfg))
		goto out;
	/* all pairs validated on a copy; written in one update or not at all */
	for (i = optind; i < argc; i += 2) {
		if (sc_setting_apply(&cfg, argv[i], argv[i + 1], hz, err, sizeof(err))) {
			sc_err("%s", err);
			ret = SC_EXIT_USAGE;
			goto out;
		}
	}
	if (cfg.dscp_short == cfg.dscp_long) {
		sc_err("dscp-short and dscp-long would both be %u: they must differ", cfg.dscp_short);
		ret = SC_EXIT_USAGE;
		goto out;
	}
	if (!sc_config_write(&st, &cfg))
		ret = SC_EXIT_OK;
out:
	sc_state_close(&st);
	return ret;
}

/* A JSON string: paths and interface names may hold quotes or controls. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_config(const struct split_config *c, int json)
{
	if (json)
		printf("\"config\":{\"threshold\":%u,\"idle_timeout_ms\":%u,\"dscp_short\":%u,\"dscp_long\":%u,\"enabled\":%s,\"ack_short\":%s}",
		       c->threshold, c->idle_timeout_ms, c->dscp_short, c->dscp_long,
		       c->flags & FS_CFG_F_ENABLED ? "true" : "false",
		       c->flags & FS_CFG_F_ACK_SHORT ? "true" : "false");
	else
		printf("config: threshold %u packets, idle-timeout %g s, dscp-short %u, dscp-long %u, ack-short %s, %s\n",
		       c->threshold, c->idle_timeout_ms / 1000.0, c->dscp_short,
		       c->dscp_long, c->flags & FS_CFG_F_ACK_SHORT ? "yes" : "no",
		       c->flags & FS_CFG_F_ENABLED ? "enabled" : "disabled");
}

int cmd_status(int argc, char **argv, const struct sc_opts *o)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	struct split_config cfg;
	struct sc_state st;
	__u64 n4, n6, now;
	unsigned int hz;
	int n, i, ret = no_options(argc, argv, "status", 0);

	if (ret)
		return ret < 0 ? SC_EXIT_OK : ret;
	ret = sc_state_open(o, &st, 0);
	if (ret)
		return ret;
	ret = SC_EXIT_RUNTIME;
	if (sc_config_read(&st, &cfg) || sc_clock_now(&st, &now, &hz))
		goto out;
	n = sc_ifaces_list(st.dir, ifs, SC_MAX_IFACES);
	if (fs_map__count(st.flows4_fd, &n4) || fs_map__count(st.flows6_fd, &n6)) {
		sc_err("cannot count the flows: %s", strerror(errno));
		goto out;
	}
	if (o->json) {
		printf("{\"pin_dir\":");
		json_str(st.dir);
		printf(",\"interfaces\":[");
		for (i = 0; i < n; i++) {
			printf("%s{\"name\":", i ? "," : "");
			json_str(ifs[i].name);
			printf(",\"ifindex\":%d,\"mode\":\"%s\",\"prog_id\":%u,\"link_id\":%u}",
			       ifs[i].ifindex, ifs[i].mode, ifs[i].prog_id,
			       ifs[i].link_id);
		}
		printf("],");
		print_config(&cfg, 1);
		/* HZ only: status stays comparable before/after a change */
		printf(",\"clock\":{\"hz\":%u}", hz);
		printf(",\"flows\":{\"ipv4\":%llu,\"ipv4_capacity\":%u,\"ipv6\":%llu,\"ipv6_capacity\":%u}}\n",
		       (unsigned long long)n4, fs_map__capacity(st.flows4_fd),
		       (unsigned long long)n6, fs_map__capacity(st.flows6_fd));
	} else {
		printf("instance: %s\n", st.dir);
		if (!n)
			printf("interfaces: none (pins without attachment; 'splitctl detach --all' removes them)\n");
		for (i = 0; i < n; i++)
			printf("interface: %s (ifindex %d) %s mode, prog id %u, link id %u\n",
			       ifs[i].name, ifs[i].ifindex, ifs[i].mode, ifs[i].prog_id,
			       ifs[i].link_id);
		print_config(&cfg, 0);
		printf("clock: HZ %u\n", hz);
		printf("flows: ipv4 %llu / %u, ipv6 %llu / %u\n", (unsigned long long)n4,
		       fs_map__capacity(st.flows4_fd), (unsigned long long)n6,
		       fs_map__capacity(st.flows6_fd));
	}
	ret = SC_EXIT_OK;
out:
	sc_state_close(&st);
	return ret;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int cmd_stats(int argc, char **argv, const struct sc_opts *o)
{
	__u64 cur[FS_STAT_MAX], prev[FS_STAT_MAX];
	double interval = 0, t0, t1;
	struct sc_state st;
	int prom = 0, c, i, ret;
	char *end;

	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'w':
			interval = strtod(optarg, &end);
			if (*end || end == optarg || !(interval >= 0.1 && interval <= 3600))
				return sc_usage_error("stats", "--watch: invalid interval '%s': accepted: seconds 0.1..3600",
						      optarg);
			break;
		case 'p':
			prom = 1;
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return sc_usage_error("stats", "unexpected argument '%s' (see -h)", argv[optind]);
	if (prom && interval)
		return sc_usage_error("stats", "--prometheus and --watch cannot be combined");
	ret = sc_state_open(o, &st, 0);
	if (ret)
		return ret;
	ret = SC_EXIT_RUNTIME;
	if (prom) {
		ret = sc_metrics_write(stdout, &st) ? SC_EXIT_RUNTIME : SC_EXIT_OK;
		goto out;
	}
	if (sc_stats_read(&st, cur))
		goto out;
	if (!interval) {
		if (o->json) {
			printf("{");
			for (i = 0; i < FS_STAT_MAX; i++)
				printf("%s\"%s\":%llu", i ? "," : "", fs_stat_name(i),
				       (unsigned long long)cur[i]);
			printf("}\n");
		} else {
			for (i = 0; i < FS_STAT_MAX; i++)
				printf("%-20s %llu\n", fs_stat_name(i), (unsigned long long)cur[i]);
		}
		ret = SC_EXIT_OK;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();
	while (!stop) {
		struct timespec d = { (time_t)interval,
				      (long)((interval - (time_t)interval) * 1e9) };

		memcpy(prev, cur, sizeof(cur));
		nanosleep(&d, NULL);
		if (stop)
			break;
		if (sc_stats_read(&st, cur))
			goto out;
		t1 = now_s();
		if (o->json) {
			printf("{\"interval_s\":%.3f", t1 - t0);
			for (i = 0; i < FS_STAT_MAX; i++)
				printf(",\"%s\":%llu,\"%s_per_s\":%.1f", fs_stat_name(i),
				       (unsigned long long)cur[i], fs_stat_name(i),
				       (cur[i] - prev[i]) / (t1 - t0));
			printf("}\n");
		} else {
			printf("--- %.1f s\n", t1 - t0);
			for (i = 0; i < FS_STAT_MAX; i++)
				printf("%-20s %14llu %12.1f/s\n", fs_stat_name(i),
				       (unsigned long long)cur[i], (cur[i] - prev[i]) / (t1 - t0));
		}
		fflush(stdout);
		t0 = t1;
	}
	ret = SC_EXIT_OK;
out:
	sc_state_close(&st);
	return ret;
}

/* ---- flows ---------------------------------------------------------------- */
/* One flow, kept compact (1M flows: ~88 MB); text made at print time. */
struct flow_row {
	struct flow_state s;
	__u8 saddr[16], daddr[16];	/* network byte order; IPv4 in 0..3 */
	__u16 sport, dport;		/* host byte order */
	__u8 family;			/* 4 or 6 */
};

static int sort_key;	/* 0 packets, 1 bytes, 2 age */

static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;
	__u64 vx, vy;

	switch (sort_key) {
	case 1: vx = x->s.bytes; vy = y->s.bytes; break;
	case 2: vx = y->s.first_seen; vy = x->s.first_seen; break; /* oldest first */
	default: vx = x->s.packets; vy = y->s.packets; break;
	}
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

struct flow_dump {
	int family;		/* 4 or 6 */
	int class;		/* FS_CLASS_*, -1 for every class */
	struct flow_row *rows;
	size_t n, cap;
};

/* Append one batch of a flow table to the rows (fs_map_batch_fn). */
static int dump_batch(void *ctx, const void *keys, const void *values, __u32 count)
{
	const struct flow_state *vals = values;
	struct flow_dump *d = ctx;
	__u32 i;

	for (i = 0; i < count; i++) {
		struct flow_row *r;

		if (d->class >= 0 && (int)vals[i].class != d->class)
			continue;
		if (d->n == d->cap) {
			size_t ncap = d->cap ? d->cap * 2 : 1024;
			struct flow_row *nr = realloc(d->rows, ncap * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			d->rows = nr;
			d->cap = ncap;
		}
		r = &d->rows[d->n++];
		r->family = d->family;
		r->s = vals[i];
		if (d->family == 4) {
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
	return 0;
}

/* Read a flow table with batch lookups; appends to d->rows. */
static int dump_table(int fd, int family, struct flow_dump *d)
{
	int err;

	d->family = family;
	err = fs_map__for_each_batch(fd, 1024, FS_MAP_ITER_LOOKUP, dump_batch, d, NULL);
	if (err)
		sc_err("cannot read the flow table: %s", strerror(-err));
	return err;
}

int cmd_flows(int argc, char **argv, const struct sc_opts *o)
{
	struct flow_dump d = { .class = -1 };
	size_t i, shown = 0;
	int c, ret;
	__u64 top = 0, now;
	unsigned int hz;
	struct sc_state st;

	sort_key = 0;
	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'c':
			if (!strcmp(optarg, "short"))
				d.class = FS_CLASS_SHORT;
			else if (!strcmp(optarg, "long"))
				d.class = FS_CLASS_LONG;
			else
				return sc_usage_error("flows", "--class: invalid value '%s': accepted: short, long", optarg);
			break;
		case 'n':
			if (sc_parse_u64(optarg, 1, 1ULL << 32, &top))
				return sc_usage_error("flows", "--top: invalid value '%s': accepted: an integer 1..%llu",
						      optarg, 1ULL << 32);
			break;
		case 's':
			if (!strcmp(optarg, "packets"))
				sort_key = 0;
			else if (!strcmp(optarg, "bytes"))
				sort_key = 1;
			else if (!strcmp(optarg, "age"))
				sort_key = 2;
			else
				return sc_usage_error("flows", "--sort: invalid value '%s': accepted: packets, bytes, age", optarg);
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return sc_usage_error("flows", "unexpected argument '%s' (see -h)", argv[optind]);
	ret = sc_state_open(o, &st, 0);
	if (ret)
		return ret;
	ret = SC_EXIT_RUNTIME;
	if (sc_clock_now(&st, &now, &hz) ||
	    dump_table(st.flows4_fd, 4, &d) || dump_table(st.flows6_fd, 6, &d))
		goto out;
	if (d.n)	/* qsort(NULL, 0, ...) is undefined */
		qsort(d.rows, d.n, sizeof(*d.rows), cmp_rows);
	if (o->json)
		printf("[");
	else
		printf("%-4s %-39s %-39s %10s %12s %9s %9s %s\n", "fam", "source",
		       "destination", "packets", "bytes", "age_s", "idle_s", "class");
	for (i = 0; i < d.n; i++) {
		const struct flow_row *r = &d.rows[i];
		double age = (double)(now - r->s.first_seen) / hz;
		double idle = (double)(now - r->s.last_seen) / hz;
		int af = r->family == 6 ? AF_INET6 : AF_INET;
		char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
		char s[64], d[64];

		if (top && shown == top)
			break;
		inet_ntop(af, r->saddr, src, sizeof(src));
		inet_ntop(af, r->daddr, dst, sizeof(dst));
		if (o->json) {
			printf("%s{\"family\":\"ipv%d\",\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,\"packets\":%llu,\"bytes\":%llu,\"age_s\":%.3f,\"idle_s\":%.3f,\"class\":\"%s\"}",
			       shown ? "," : "", r->family, src, r->sport, dst,
			       r->dport, (unsigned long long)r->s.packets,
			       (unsigned long long)r->s.bytes, age, idle,
			       r->s.class == FS_CLASS_LONG ? "long" : "short");
		} else {
			snprintf(s, sizeof(s), r->family == 6 ? "[%s]:%u" : "%s:%u", src, r->sport);
			snprintf(d, sizeof(d), r->family == 6 ? "[%s]:%u" : "%s:%u", dst, r->dport);
			printf("ipv%d %-39s %-39s %10llu %12llu %9.1f %9.1f %s\n", r->family,
			       s, d, (unsigned long long)r->s.packets,
			       (unsigned long long)r->s.bytes, age, idle,
			       r->s.class == FS_CLASS_LONG ? "long" : "short");
		}
		shown++;
	}
	if (o->json)
		printf("]\n");
	ret = SC_EXIT_OK;
out:
	free(d.rows);
	sc_state_close(&st);
	return ret;
}

/* Empty one flow table with batched lookup-and-delete (bpfutil.h). */
static int clear_table(int fd, __u64 *removed)
{
	__u64 n = 0;
	int err;

	err = fs_map__for_each_batch(fd, 4096, FS_MAP_ITER_LOOKUP_DELETE, NULL, NULL, &n);
	*removed += n;
	if (err)
		sc_err("cannot empty the flow table: %s", strerror(-err));
	return err;
}

int cmd_flush(int argc, char **argv, const struct sc_opts *o)
{
	struct sc_state st;
	__u64 removed = 0;
	int ret = no_options(argc, argv, "flush", 0);

	if (ret)
		return ret < 0 ? SC_EXIT_OK : ret;
	ret = sc_state_open(o, &st, 1);
	if (ret)
		return ret;
	if (clear_table(st.flows4_fd, &removed) || clear_table(st.flows6_fd, &removed)) {
		sc_state_close(&st);
		return SC_EXIT_RUNTIME;
	}
	if (o->json)
		printf("{\"flows_removed\":%llu}\n", (unsigned long long)removed);
	else
		printf("%llu flows removed\n", (unsigned long long)removed);
	sc_state_close(&st);
	return SC_EXIT_OK;
}

/* ---- tunnel-cfg ---------------------------------------------------------- */
static void tcfg_context(const struct sc_opts *o, struct tcfg_ctx *ctx)
{
	struct split_config cfg;
	struct sc_state st;
	int saved = dup(STDERR_FILENO), null;

	ctx->json = o->json;
	ctx->verbose = o->verbose;
	ctx->dscp_long = -1;
	/* the live long code point, if an instance is attached (silently) */
	null = open("/dev/null", O_WRONLY);
	if (null >= 0 && saved >= 0)
		dup2(null, STDERR_FILENO);
	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &cfg))
			ctx->dscp_long = cfg.dscp_long;
		sc_state_close(&st);
	}
	if (null >= 0 && saved >= 0)
		dup2(saved, STDERR_FILENO);
	if (null >= 0)
		close(null);
	if (saved >= 0)
		close(saved);
}

int cmd_route(int argc, char **argv, const struct sc_opts *o)
{
	struct tcfg_ctx ctx;

	tcfg_context(o, &ctx);
	return tcfg_route_main(argc, argv, &ctx);
}

int cmd_tunnel(int argc, char **argv, const struct sc_opts *o)
{
	struct tcfg_ctx ctx;

	tcfg_context(o, &ctx);
	return tcfg_tunnel_main(argc, argv, &ctx);
}
