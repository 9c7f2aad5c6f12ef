// SPDX-License-Identifier: GPL-2.0
/*
 * cli_compat.c - COMPATIBILITY LAYER, deleted when splitctl's option table
 * parses "route" and "tunnel" itself (together with the COMPAT block of
 * tunnel_cfg.h and the json/verbose fields of struct tcfg_ctx).
 *
 * The old entry points tcfg_route_main() and tcfg_tunnel_main(), with their
 * own getopt tables, on top of the key/value interface of tunnel_cfg.h;
 * and tcfg_route_apply(), the old name of tcfg_route_up().
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "flowsplit.h"
#include "json_print.h"
#include "tcfg.h"
#include "util.h"

#define TCFG_COMPAT_PROG "splitctl"

/* splitctl does not set up lib/'s logger yet: its messages start "splitctl: " */
static void compat_log_init(const struct tcfg_ctx *ctx)
{
	fs_log_init(TCFG_COMPAT_PROG, ctx->verbose ? FS_LOG_DEBUG : FS_LOG_INFO);
}

/* A show action in a document of its own; up/down/add/del print nothing
 * (a JSON document would be an empty line). */
static int compat_show(int (*show)(const struct tcfg_ctx *), const struct tcfg_ctx *ctx)
{
	int ret, werr;

	print_begin(stdout, ctx->json);
	ret = show(ctx);
	werr = print_end();
	if (werr && !ret) {
		pr_err("cannot write the output: %s", strerror(-werr));
		ret = FS_EXIT_RUNTIME;
	}
	return ret;
}

int tcfg_route_apply(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx)
{
	compat_log_init(ctx);
	return tcfg_route_up(spec, ctx);
}

/* ---- route ------------------------------------------------------------------- */
static void route_usage(FILE *f)
{
	fprintf(f, "Usage: splitctl [-j] route up --mode split|ecmp --short-dev DEV --long-dev DEV --prefix CIDR...\n"
		"                [--lan-dev IF]... [--via-short ADDR]... [--via-long ADDR]...\n"
		"                [--table-short N] [--table-long N] [--priority N] [--dscp-long V]\n"
		"                [--selector auto|dscp|tos]\n"
		"       splitctl route down\n"
		"       splitctl [-j] route show\n\n"
		"  --mode split|ecmp      split: long code point -> LONG tunnel, rest -> SHORT;\n"
		"                         ecmp: one multipath route over both, L4 hash\n"
		"  --short-dev DEV        tunnel interface for short flows (must be up)\n"
		"  --long-dev DEV         tunnel interface for long flows (must be up)\n"
		"  --prefix CIDR          remote prefix reachable over the SD-WAN (repeat; IPv4/IPv6)\n"
		"  --lan-dev IF           match only traffic arriving on this LAN interface (repeat)\n"
		"  --via-short ADDR       next hop through the SHORT tunnel (one per family)\n"
		"  --via-long ADDR        next hop through the LONG tunnel (one per family)\n"
		"  --table-short N        routing table of the SHORT class (default %d)\n"
		"  --table-long N         routing table of the LONG class (default %d)\n"
		"  --priority N           rule priority; PRIORITY and PRIORITY+1 are used (default %d)\n"
		"  --dscp-long V          long code point (default: the attached splitter's, else %d)\n"
		"  --selector auto|dscp|tos  rule match: dscp (kernel >= 6.13, any code point),\n"
		"                         tos (every kernel, DSCP 1..7 only), auto: dscp if the kernel has it\n",
		TCFG_DEFAULT_TABLE_SHORT, TCFG_DEFAULT_TABLE_LONG, TCFG_DEFAULT_PRIORITY,
		FS_DEFAULT_DSCP_LONG);
}

static const struct option route_opts[] = {
	{ "mode", required_argument, NULL, 0 },
	{ "short-dev", required_argument, NULL, 0 },
	{ "long-dev", required_argument, NULL, 0 },
	{ "prefix", required_argument, NULL, 0 },
	{ "lan-dev", required_argument, NULL, 0 },
	{ "via-short", required_argument, NULL, 0 },
	{ "via-long", required_argument, NULL, 0 },
	{ "table-short", required_argument, NULL, 0 },
	{ "table-long", required_argument, NULL, 0 },
	{ "priority", required_argument, NULL, 0 },
	{ "dscp-long", required_argument, NULL, 0 },
	{ "selector", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options of "route VERB" into s. -1 to go on, else the exit code. */
static int route_parse(int argc, char **argv, const char *verb, struct tcfg_spec *s)
{
	char err[256];
	int c, idx;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", route_opts, &idx)) != -1) {
		if (c == 'h') {
			route_usage(stdout);
			return FS_EXIT_OK;
		}
		if (c == '?' || c == ':') {
			pr_err("route: %s option '%s' (see -h)",
			       c == '?' ? "unknown" : "missing value for", argv[optind - 1]);
			return FS_EXIT_USAGE;
		}
		if (strcmp(verb, "up")) {
			pr_err("route %s: takes no options", verb);
			return FS_EXIT_USAGE;
		}
		if (tcfg_spec_set(s, route_opts[idx].name, optarg, err, sizeof(err))) {
			pr_err("route: %s", err);
			return FS_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		pr_err("route: unexpected argument '%s'", argv[optind]);
		return FS_EXIT_USAGE;
	}
	return -1;
}

int tcfg_route_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	struct tcfg_spec *s;
	const char *verb;
	int ret;

	compat_log_init(ctx);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		route_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? FS_EXIT_USAGE : FS_EXIT_OK;
	}
	verb = argv[1];
	if (strcmp(verb, "up") && strcmp(verb, "down") && strcmp(verb, "show")) {
		pr_err("route: unknown action '%s': accepted: up, down, show", verb);
		return FS_EXIT_USAGE;
	}
	s = tcfg_spec_new();
	if (!s)
		return FS_EXIT_RUNTIME;
	ret = route_parse(argc - 1, argv + 1, verb, s);
	if (ret < 0) {
		if (!strcmp(verb, "up"))
			ret = tcfg_route_up(s, ctx);
		else if (!strcmp(verb, "show"))
			ret = compat_show(tcfg_route_show, ctx);
		else
			ret = tcfg_route_down(ctx);
	}
	tcfg_spec_free(s);
	return ret;
}

/* ---- tunnel -------------------------------------------------------------------- */
#define TUNNEL_ADD_USAGE \
	"Usage: splitctl tunnel add NAME vxlan --vni N --local ADDR --remote ADDR --dev UNDERLAY [--dstport P] [--mtu M]\n"

static const struct option tunnel_opts[] = {
	{ "vni", required_argument, NULL, 0 },
	{ "local", required_argument, NULL, 0 },
	{ "remote", required_argument, NULL, 0 },
	{ "dev", required_argument, NULL, 0 },
	{ "dstport", required_argument, NULL, 0 },
	{ "mtu", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options of "tunnel add NAME KIND" into t. -1 to go on, else the exit code. */
static int tunnel_parse(int argc, char **argv, struct tcfg_tunnel *t)
{
	char err[256];
	int c, idx;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", tunnel_opts, &idx)) != -1) {
		if (c == 'h') {
			printf(TUNNEL_ADD_USAGE);
			return FS_EXIT_OK;
		}
		if (c == '?' || c == ':') {
			pr_err("tunnel add: %s option '%s'",
			       c == ':' ? "missing value for" : "unknown", argv[optind - 1]);
			return FS_EXIT_USAGE;
		}
		if (tcfg_tunnel_set(t, tunnel_opts[idx].name, optarg, err, sizeof(err))) {
			pr_err("tunnel add: %s", err);
			return FS_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		pr_err("tunnel add: unexpected argument '%s'", argv[optind]);
		return FS_EXIT_USAGE;
	}
	return -1;
}

/* argv: "add" NAME KIND [options] */
static int tunnel_add_main(int argc, char **argv)
{
	struct tcfg_tunnel *t;
	char err[256];
	int ret;

	if (argc < 3) {
		pr_err("tunnel add: expected NAME KIND (see splitctl tunnel -h)");
		return FS_EXIT_USAGE;
	}
	t = tcfg_tunnel_new(argv[1], argv[2], err, sizeof(err));
	if (!t) {
		pr_err("tunnel add: %s", err);
		return FS_EXIT_USAGE;
	}
	/* getopt sees KIND as its argv[0] */
	ret = tunnel_parse(argc - 2, argv + 2, t);
	if (ret < 0)
		ret = tcfg_tunnel_add(t);
	tcfg_tunnel_free(t);
	return ret;
}

static int tunnel_show_ctx(const struct tcfg_ctx *ctx)
{
	(void)ctx;
	return tcfg_tunnel_show();
}

int tcfg_tunnel_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	compat_log_init(ctx);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			TUNNEL_ADD_USAGE
			"       splitctl tunnel add NAME gre|ipip|wireguard ...   (only where the kernel has them)\n"
			"       splitctl tunnel del NAME\n"
			"       splitctl [-j] tunnel show\n");
		return argc < 2 ? FS_EXIT_USAGE : FS_EXIT_OK;
	}
	if (!strcmp(argv[1], "add"))
		return tunnel_add_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del")) {
		if (argc != 3) {
			pr_err("tunnel del: expected NAME");
			return FS_EXIT_USAGE;
		}
		return tcfg_tunnel_del(argv[2]);
	}
	if (!strcmp(argv[1], "show"))
		return compat_show(tunnel_show_ctx, ctx);
	pr_err("tunnel: unknown action '%s': accepted: add, del, show", argv[1]);
	return FS_EXIT_USAGE;
}
