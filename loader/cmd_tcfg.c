// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_tcfg.c - "route up|down|show" and "tunnel add|del|show": their
 * options are tunnel-cfg's own tables (tcfg_route_opts, tcfg_tunnel_opts:
 * parsed and checked by lib into tunnel-cfg's structs), and tunnel-cfg
 * (tunnel_cfg.h) does the netlink work, prints through json_print and
 * words its own runtime errors. splitctl adds what it knows of the live
 * splitter and the agent (the long code point the routes match on, the
 * plan in force, the health shown by route show).
 */
#include <string.h>

#include "agent_lock.h"
#include "commands.h"
#include "tunnel_cfg.h"

/* "tunnel add NAME KIND [OPTIONS]": the options are tunnel-cfg's rows */
struct sc_tunnel_add_args {
	__u32 given;
	struct tcfg_tunnel t;
	char name[IFNAMSIZ];
	const char *kind;
};

static const struct sc_option tunnel_add_opts[] = {
	SC_OPTION("tunnel", SC_OPT_INCLUDE, struct sc_tunnel_add_args, t,
		  .sub = tcfg_tunnel_opts),
	SC_OPTION("name", SC_OPT_IFNAME, struct sc_tunnel_add_args, name,
		  .positional = true, .noun = "tunnel name"),
	SC_OPTION("kind", SC_OPT_STRING, struct sc_tunnel_add_args, kind,
		  .positional = true, .noun = "kind"),
	SC_OPTIONS_END,
};

struct sc_tunnel_del_args {
	__u32 given;
	char name[IFNAMSIZ];
};

static const struct sc_option tunnel_del_opts[] = {
	SC_OPTION("name", SC_OPT_IFNAME, struct sc_tunnel_del_args, name,
		  .positional = true, .noun = "tunnel name"),
	SC_OPTIONS_END,
};

/* The live long (and short) code point, if an instance is attached (-1 otherwise: no
 * instance is no error here, and the state functions print nothing). */
static void tcfg_context(const struct sc_opts *o, struct tcfg_ctx *ctx)
{
	struct split_config cfg;
	struct sc_state st;
	int dscp_long = -1, dscp_short = -1;

	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &cfg)) {
			dscp_long = cfg.dscp_long;
			dscp_short = cfg.dscp_short;
		}
		sc_state_close(&st);
	}
	sc_route_ctx(dscp_long, ctx);
	ctx->dscp_short = dscp_short;
}

/* "route up": tunnel-cfg's rows (tcfg_route_opts, also the [route] keys)
 * and --replace, an option of the command alone. */
struct sc_route_up_args {
	__u32 given;
	struct tcfg_spec spec;
	bool replace;
};

static const struct sc_option route_up_opts[] = {
	SC_OPTION("route", SC_OPT_INCLUDE, struct sc_route_up_args, spec, .sub = tcfg_route_opts),
	SC_OPTION("replace", SC_OPT_FLAG, struct sc_route_up_args, replace, .cli_only = true,
		  .help = "drop prefixes, LAN devices or gateways of the running setup that are "
			  "not given again"),
	SC_OPTIONS_END,
};

/* The options, parsed into tunnel-cfg's spec by its own table
 * (tcfg_route_opts), checked as a whole by tcfg_route_up(). An "up" that
 * would drop part of the running setup (a prefix, a LAN device, a
 * gateway: an "up" with options left out replaces them all) is refused
 * without --replace, naming what would go. */
static int cmd_route_up(const struct sc_call *c)
{
	const struct sc_route_up_args *a = c->args;
	static struct tcfg_spec spec;
	struct tcfg_ctx ctx;
	char gone[512];
	int ret;

	spec = tcfg_spec_defaults;
	sc_options_merge(tcfg_route_opts, &spec, &a->spec);
	tcfg_context(c->o, &ctx);
	/* a bad request says what is wrong with it first */
	ret = tcfg_route_check(&spec, &ctx, gone, sizeof(gone));
	if (ret) {
		pr_err("route: %s", gone);
		return ret;
	}
	if (tcfg_route_removals(&spec, gone, sizeof(gone)) > 0 && !a->replace)
		return sc_print_usage_error("route up",
					    "this would remove from the running setup: %s: give "
					    "them again, or --replace to drop them",
					    gone);
	ret = tcfg_route_up(&spec, &ctx);
	if (!ret) {
		open_json_object(NULL);
		print_bool(PRINT_JSON, "ok", NULL, true);
		print_string(PRINT_JSON, "removed", NULL, gone);
		close_json_object();
	}
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
	int ret;

	if (!a->name[0] || !a->kind)
		return sc_print_usage_error("tunnel add", "expected NAME KIND (see -h)");
	t = tcfg_tunnel_new(a->name, a->kind, err, sizeof(err));
	if (!t)
		return sc_print_usage_error("tunnel add", "%s", err);
	/* the options given, over the defaults of the kind */
	sc_options_merge(tcfg_tunnel_opts, t, &a->t);
	ret = tcfg_tunnel_add(t);
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
