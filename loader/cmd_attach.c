// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_attach.c - "attach IFACE": load and attach the splitter, or upgrade
 * it in place (attach.c does the work). Its options are the [splitter]
 * keys of a config file too, the settings among them (settings.c). The
 * routes of "route up" follow a new long code point, as with "set"
 * (commit.h); if they cannot, the attach is undone (config put back, or
 * the new instance detached). Silent in text mode (but for the hook
 * --hook auto picked); under -j it says what it did.
 */
#include "commands.h"
#include "commit.h"

static const struct sc_enum mode_values[] = {
	{ "native", SC_MODE_NATIVE }, { "generic", SC_MODE_GENERIC },
	{ "auto", SC_MODE_AUTO }, { NULL, 0 },
};

static const struct sc_enum hook_values[] = {
	{ "auto", SC_HOOK_AUTO }, { "xdp", SC_HOOK_XDP }, { "tc", SC_HOOK_TC },
	{ NULL, 0 },
};

const struct sc_option sc_attach_opts[] = {
	[SC_ATTACH_HOOK] =
		SC_OPTION("hook", SC_OPT_ENUM, struct sc_attach_args, hook, .short_opt = 'k',
			  .metavar = "auto|xdp|tc", .values = hook_values,
			  .help = "where the splitter runs (default auto: native XDP on physical "
				  "NICs, TC ingress on virtual ones)"),
	[SC_ATTACH_MODE] = SC_OPTION(
		"mode", SC_OPT_ENUM, struct sc_attach_args, mode, .short_opt = 'm',
		.metavar = "native|generic|auto", .values = mode_values,
		.help = "XDP attach mode, implies --hook xdp (default auto: native, else generic)"),
	[SC_ATTACH_SETTINGS] = SC_OPTION("settings", SC_OPT_INCLUDE, struct sc_attach_args,
					 settings, .sub = sc_setting_opts),
	[SC_ATTACH_FLOWS] = SC_OPTION(
		"flows", SC_OPT_UINT, struct sc_attach_args, flows, .short_opt = 'f',
		.metavar = "N", .lo = FS_MIN_FLOWS, .hi = FS_MAX_FLOWS,
		.help = "flow table entries per address family, when the tables are created"),
	[SC_ATTACH_IFNAME] = SC_OPTION("interface", SC_OPT_IFNAME, struct sc_attach_args, ifname,
				       .positional = true, .noun = "interface name"),
	SC_OPTIONS_END,
};

static int cmd_attach(const struct sc_call *c)
{
	struct sc_attach_args *a = c->args;
	struct split_config after;
	struct sc_attach_result r;
	struct sc_commit commit;
	char err[400];
	int ret;

	if (!a->ifname[0])
		return sc_print_usage_error("attach",
					    "expected exactly one interface name (see -h)");
	sc_commit_begin(&commit, c->o, NULL);
	if (commit.had)
		after = commit.before;
	else	/* a new instance: the routes may predate it */
		sc_config_defaults(&after, 1000);
	/* (a merge error is sc_attach()'s to report) */
	if (!sc_settings_merge(&after, &a->settings, 1000, err, sizeof(err))) {
		ret = sc_commit_check(&commit, after.dscp_long, err, sizeof(err));
		if (ret) {
			pr_err("%s", err);
			return ret;
		}
	}
	ret = sc_attach_report(c->o, a->ifname, a, &r);
	if (ret)
		return ret;
	ret = sc_commit_follow(&commit, NULL);
	if (ret) {
		if (!commit.had)
			sc_detach(c->o, a->ifname);
		return ret;
	}
	open_json_object(NULL);
	print_string(PRINT_JSON, "interface", NULL, a->ifname);
	print_int(PRINT_JSON, "ifindex", NULL, r.ifindex);
	print_string(PRINT_JSON, "hook", NULL, sc_hook_name(r.hook));
	print_string(PRINT_JSON, "mode", NULL, r.mode);
	print_bool(PRINT_JSON, "upgrade", NULL, r.upgrade);
	print_bool(PRINT_JSON, "hook_auto", NULL, r.hook_auto);
	print_string(PRINT_JSON, "why", NULL, r.why);
	close_json_object();
	return FS_EXIT_OK;
}

const struct sc_cmd sc_cmd_attach = SC_CMD("attach", cmd_attach, "IFACE",
					   "load and attach the splitter (or upgrade it in place)",
					   sc_attach_opts, struct sc_attach_args);
