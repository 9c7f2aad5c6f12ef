// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_tcfg.c - "route up|down|show" and "tunnel add|del|show": their
 * options come parsed from the option tables below as key/value pairs and
 * are handed to tunnel-cfg (tunnel_cfg.h), which checks each value, does
 * the netlink work, prints through json_print and words its own runtime
 * errors. splitctl adds what it knows of the live splitter: the long code
 * point the routes match on.
 */
#include <string.h>

#include "agent_lock.h"
#include "commands.h"
#include "tunnel_cfg.h"

/* "route up": its options go to tunnel-cfg, which checks them */
struct sc_route_up_args {
	__u32 given;
	struct sc_pass_list opts;
};

struct sc_tunnel_add_args {
	__u32 given;
	char name[IFNAMSIZ];
	const char *kind;
	struct sc_pass_list opts;
};

struct sc_tunnel_del_args {
	__u32 given;
	char name[IFNAMSIZ];
};

/* route up / tunnel add: tunnel-cfg checks these values (tunnel_cfg.h) */
#define ROUTE_OPT(_name, _metavar, _help)					\
	SC_OPTION(_name, SC_OPT_PASS, struct sc_route_up_args, opts,		\
		  .metavar = _metavar, .help = _help)
static const struct sc_option route_up_opts[] = {
	ROUTE_OPT("mode", "split|ecmp", "split: long code point -> LONG tunnel, rest -> SHORT; "
		  "ecmp: one multipath route over both, L4 hash"),
	ROUTE_OPT("short-dev", "DEV", "tunnel interface for short flows (must be up)"),
	ROUTE_OPT("long-dev", "DEV", "tunnel interface for long flows (must be up)"),
	ROUTE_OPT("prefix", "CIDR", "remote prefix reachable over the SD-WAN (repeat; IPv4/IPv6)"),
	ROUTE_OPT("lan-dev", "IF", "match only traffic arriving on this LAN interface (repeat)"),
	ROUTE_OPT("via-short", "ADDR", "next hop through the SHORT tunnel (one per family)"),
	ROUTE_OPT("via-long", "ADDR", "next hop through the LONG tunnel (one per family)"),
	ROUTE_OPT("table-short", "N", "routing table of the SHORT class (default 100)"),
	ROUTE_OPT("table-long", "N", "routing table of the LONG class (default 101)"),
	ROUTE_OPT("priority", "N", "rule priority; PRIORITY and PRIORITY+1 are used (default 1000)"),
	ROUTE_OPT("dscp-long", "V", "long code point (default: the attached splitter's, else 1)"),
	ROUTE_OPT("selector", "auto|dscp|tos", "rule match: dscp (kernel >= 6.13, any code point), "
		  "tos (every kernel, DSCP 1..7 only), auto: dscp if the kernel has it"),
	SC_OPTIONS_END,
};

#define TUNNEL_OPT(_name, _metavar, _help)					\
	SC_OPTION(_name, SC_OPT_PASS, struct sc_tunnel_add_args, opts,		\
		  .metavar = _metavar, .help = _help)
static const struct sc_option tunnel_add_opts[] = {
	TUNNEL_OPT("vni", "N", "VXLAN network identifier (vxlan: required)"),
	TUNNEL_OPT("local", "ADDR", "local underlay address (IPv4 or IPv6)"),
	TUNNEL_OPT("remote", "ADDR", "remote underlay address, same family as --local"),
	TUNNEL_OPT("dev", "UNDERLAY", "underlay interface"),
	TUNNEL_OPT("dstport", "P", "UDP destination port (default 4789)"),
	TUNNEL_OPT("mtu", "M", "tunnel MTU (default: the underlay's minus the encapsulation)"),
	TUNNEL_OPT("address", "CIDR", "the tunnel's own address (one IPv4, one IPv6; IPv6 without DAD)"),
	SC_OPTION("name", SC_OPT_IFNAME, struct sc_tunnel_add_args, name,
		  .positional = true, .noun = "tunnel name"),
	SC_OPTION("kind", SC_OPT_STRING, struct sc_tunnel_add_args, kind,
		  .positional = true, .noun = "kind"),
	SC_OPTIONS_END,
};

static const struct sc_option tunnel_del_opts[] = {
	SC_OPTION("name", SC_OPT_IFNAME, struct sc_tunnel_del_args, name,
		  .positional = true, .noun = "tunnel name"),
	SC_OPTIONS_END,
};

/* The live long code point, if an instance is attached (-1 otherwise: no
 * instance is no error here, and the state functions print nothing). */
static void tcfg_context(const struct sc_opts *o, struct tcfg_ctx *ctx)
{
	struct split_config cfg;
	struct sc_state st;
	int dscp_long = -1;

	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &cfg))
			dscp_long = cfg.dscp_long;
		sc_state_close(&st);
	}
	sc_route_ctx(dscp_long, ctx);
}

/* tunnel-cfg names a bad value by its key ("mode: ..."), as in a config
 * file; on the command line it is the option: "--mode: ...". */
static int pass_error(const char *path, const struct sc_kv *kv, const char *err)
{
	size_t n = strlen(kv->key);
	bool is_key = !strncmp(err, kv->key, n) && err[n] == ':';

	return sc_print_usage_error(path, "%s%s", is_key ? "--" : "", err);
}

static int cmd_route_up(const struct sc_call *c)
{
	const struct sc_route_up_args *a = c->args;
	struct tcfg_spec *spec;
	struct tcfg_ctx ctx;
	char err[256];
	unsigned int i;
	int ret;

	spec = tcfg_spec_new();
	if (!spec) {
		pr_err("route up: out of memory");
		return FS_EXIT_RUNTIME;
	}
	for (i = 0; i < a->opts.n; i++) {
		if (tcfg_spec_set(spec, a->opts.kv[i].key, a->opts.kv[i].value, err,
				  sizeof(err))) {
			ret = pass_error("route up", &a->opts.kv[i], err);
			goto out;
		}
	}
	tcfg_context(c->o, &ctx);
	ret = tcfg_route_up(spec, &ctx);	/* checks the spec as a whole */
out:
	tcfg_spec_free(spec);
	return ret;
}

static int cmd_route_down(const struct sc_call *c)
{
	struct tcfg_ctx ctx;
	int ret;

	tcfg_context(c->o, &ctx);
	ret = tcfg_route_down(&ctx);
	/* the lock file and health of an agent killed with -9 */
	agent_lock_remove_stale();
	return ret;
}

static int cmd_route_show(const struct sc_call *c)
{
	struct tcfg_ctx ctx;

	tcfg_context(c->o, &ctx);
	return tcfg_route_show(&ctx);
}

static int cmd_tunnel_add(const struct sc_call *c)
{
	const struct sc_tunnel_add_args *a = c->args;
	struct tcfg_tunnel *t;
	char err[256];
	unsigned int i;
	int ret;

	if (!a->name[0] || !a->kind)
		return sc_print_usage_error("tunnel add", "expected NAME KIND (see -h)");
	t = tcfg_tunnel_new(a->name, a->kind, err, sizeof(err));
	if (!t)
		return sc_print_usage_error("tunnel add", "%s", err);
	for (i = 0; i < a->opts.n; i++) {
		if (tcfg_tunnel_set(t, a->opts.kv[i].key, a->opts.kv[i].value, err,
				    sizeof(err))) {
			ret = pass_error("tunnel add", &a->opts.kv[i], err);
			goto out;
		}
	}
	ret = tcfg_tunnel_add(t);
out:
	tcfg_tunnel_free(t);
	return ret;
}

static int cmd_tunnel_del(const struct sc_call *c)
{
	const struct sc_tunnel_del_args *a = c->args;

	if (!a->name[0])
		return sc_print_usage_error("tunnel del", "expected NAME (see -h)");
	return tcfg_tunnel_del(a->name);
}

static int cmd_tunnel_show(const struct sc_call *c)
{
	(void)c;
	return tcfg_tunnel_show();
}

static const struct sc_cmd sc_cmd_route_up =
	SC_CMD("up", cmd_route_up, "", "install (or switch in place) the policy routing",
	       route_up_opts, struct sc_route_up_args);
static const struct sc_cmd sc_cmd_route_down =
	SC_CMD("down", cmd_route_down, "", "remove exactly what up installed",
	       sc_no_opts, struct sc_no_args);
static const struct sc_cmd sc_cmd_route_show =
	SC_CMD("show", cmd_route_show, "", "rules, routes and tunnel counters",
	       sc_no_opts, struct sc_no_args);
static const struct sc_cmd *const route_cmds[] = {
	&sc_cmd_route_up, &sc_cmd_route_down, &sc_cmd_route_show, NULL,
};
const struct sc_cmd sc_cmd_route =
	SC_CMD_GROUP("route", "up|down|show ...", "policy routing to the SHORT and LONG tunnels",
		     route_cmds);

static const struct sc_cmd sc_cmd_tunnel_add =
	SC_CMD("add", cmd_tunnel_add, "NAME KIND", "create a lab tunnel (KIND vxlan; gre, ipip, "
	       "wireguard where the kernel has them)", tunnel_add_opts, struct sc_tunnel_add_args);
static const struct sc_cmd sc_cmd_tunnel_del =
	SC_CMD("del", cmd_tunnel_del, "NAME", "remove a lab tunnel", tunnel_del_opts,
	       struct sc_tunnel_del_args);
static const struct sc_cmd sc_cmd_tunnel_show =
	SC_CMD("show", cmd_tunnel_show, "", "the lab tunnels", sc_no_opts, struct sc_no_args);
static const struct sc_cmd *const tunnel_cmds[] = {
	&sc_cmd_tunnel_add, &sc_cmd_tunnel_del, &sc_cmd_tunnel_show, NULL,
};
const struct sc_cmd sc_cmd_tunnel =
	SC_CMD_GROUP("tunnel", "add|del|show ...", "create or remove lab tunnels", tunnel_cmds);
