// SPDX-License-Identifier: GPL-2.0
/*
 * splitctl - attach, tune and observe the flowsplit XDP splitter.
 *
 * This file holds the option table of every command (lib/params.h: they
 * parse and validate the values, and make --help; the hidden "help-table"
 * lists them for the man page and bash completion test), the global options
 * and the dispatch. The same rows serve as "set" names (sc_setting_opts) and
 * config file keys ([splitter]: sc_attach_opts, [agent]: sc_run_opts).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "rules.h"

#define SC_VERSION "0.3"

/* ---- option tables -------------------------------------------------------- */
static const struct sc_option global_opts[] = {
	SC_OPTION("pin-dir", SC_OPT_STRING, struct sc_opts, pin_dir, .short_opt = 'P',
		  .metavar = "DIR", .noun = "path",
		  .help = "bpffs directory of the instance (default " FS_PIN_DIR_DEFAULT
			  ", or $" FS_PIN_DIR_ENV ")"),
	SC_OPTION("json", SC_OPT_FLAG, struct sc_opts, json, .short_opt = 'j',
		  .help = "machine-readable output (read commands)"),
	SC_OPTION("verbose", SC_OPT_COUNT, struct sc_opts, verbose, .short_opt = 'v',
		  .help = "more output, including libbpf's log (twice: debug and verifier log)"),
	SC_OPTION("version", SC_OPT_FLAG, struct sc_opts, version, .short_opt = 'V',
		  .help = "print the version and exit"),
	SC_OPTIONS_END,
};

/* midstream: the value selects the bit FS_CFG_F_MIDSTREAM_LONG */
static const struct sc_enum midstream_values[] = {
	{ "short", 0 }, { "long", 1 }, { NULL, 0 },
};

/* reshort: the value selects the bit FS_CFG_F_RESHORT_BOUNDARY */
static const struct sc_enum reshort_values[] = {
	{ "off", 0 }, { "boundary", 1 }, { NULL, 0 },
};

/* The live settings: attach options (-t -i -s -l), "set" names, and keys
 * of [splitter]. Indexed by enum sc_setting (its given bit). */
const struct sc_option sc_setting_opts[] = {
	[SC_SET_THRESHOLD] = SC_OPTION("threshold", SC_OPT_UINT, struct sc_settings,
		v.threshold, .short_opt = 't', .metavar = "N",
		.help = "packets per flow marked short", .lo = 0, .hi = FS_MAX_THRESHOLD),
	[SC_SET_IDLE] = SC_OPTION("idle-timeout", SC_OPT_MSEC, struct sc_settings,
		v.idle_timeout_ms, .short_opt = 'i', .metavar = "S",
		.help = "seconds of silence that end a flow",
		.lo = FS_MIN_IDLE_MS, .hi = FS_MAX_IDLE_MS),
	[SC_SET_DSCP_SHORT] = SC_OPTION("dscp-short", SC_OPT_DSCP, struct sc_settings,
		v.dscp_short, .short_opt = 's', .metavar = "V", .noun = "DSCP",
		.help = "code point for short flows"),
	[SC_SET_DSCP_LONG] = SC_OPTION("dscp-long", SC_OPT_DSCP, struct sc_settings,
		v.dscp_long, .short_opt = 'l', .metavar = "V", .noun = "DSCP",
		.help = "code point for long flows (must differ from dscp-short)"),
	[SC_SET_ENABLED] = SC_OPTION("enabled", SC_OPT_YESNO, struct sc_settings,
		v.flags, .bit = FS_CFG_F_ENABLED, .metavar = "yes|no", .key_only = true,
		.help = "classify and mark; no: pass every packet untouched"),
	[SC_SET_ACK_SHORT] = SC_OPTION("ack-short", SC_OPT_YESNO, struct sc_settings,
		v.flags, .bit = FS_CFG_F_ACK_SHORT, .metavar = "yes|no", .key_only = true,
		.help = "pure ACKs of long flows keep the short code point"),
	[SC_SET_THRESHOLD_BYTES] = SC_OPTION("threshold-bytes", SC_OPT_UINT, struct sc_settings,
		v.threshold_bytes, .metavar = "N",
		.help = "TCP payload bytes per flow marked short; long at whichever threshold is reached first (0: none)",
		.lo = 0, .hi = FS_MAX_THRESHOLD_BYTES),
	[SC_SET_RESHORT] = SC_OPTION("reshort-gap", SC_OPT_UINT, struct sc_settings,
		v.reshort_gap_ms, .metavar = "MS",
		.help = "milliseconds of silence after which a flow counts as short again, its entry kept (0: off)",
		.lo = 0, .hi = FS_MAX_RESHORT_MS),
	[SC_SET_MIDSTREAM] = SC_OPTION("midstream", SC_OPT_ENUM, struct sc_settings,
		v.flags, .bit = FS_CFG_F_MIDSTREAM_LONG, .values = midstream_values,
		.metavar = "short|long", .key_only = true,
		.help = "class of a flow first seen without a SYN (evicted, swept, after a restart)"),
	[SC_SET_RESHORT_BOUNDARY] = SC_OPTION("reshort", SC_OPT_ENUM, struct sc_settings,
		v.flags, .bit = FS_CFG_F_RESHORT_BOUNDARY, .values = reshort_values,
		.metavar = "boundary|off",
		.help = "boundary (default): a flow counts as short again when it starts a new message after all it sent was acknowledged (cannot reorder)"),
	SC_OPTIONS_END,
};

static const struct sc_enum mode_values[] = {
	{ "native", SC_MODE_NATIVE }, { "generic", SC_MODE_GENERIC },
	{ "auto", SC_MODE_AUTO }, { NULL, 0 },
};

static const struct sc_enum hook_values[] = {
	{ "auto", SC_HOOK_AUTO }, { "xdp", SC_HOOK_XDP }, { "tc", SC_HOOK_TC },
	{ NULL, 0 },
};

const struct sc_option sc_attach_opts[] = {
	SC_OPTION("hook", SC_OPT_ENUM, struct sc_attach_args, hook, .short_opt = 'k',
		  .metavar = "auto|xdp|tc", .values = hook_values,
		  .help = "where the splitter runs (default auto: native XDP on physical NICs, TC ingress on virtual ones)"),
	SC_OPTION("mode", SC_OPT_ENUM, struct sc_attach_args, mode, .short_opt = 'm',
		  .metavar = "native|generic|auto", .values = mode_values,
		  .help = "XDP attach mode, implies --hook xdp (default auto: native, else generic)"),
	SC_OPTION("settings", SC_OPT_INCLUDE, struct sc_attach_args, settings,
		  .sub = sc_setting_opts),
	SC_OPTION("flows", SC_OPT_UINT, struct sc_attach_args, flows, .short_opt = 'f',
		  .metavar = "N", .lo = FS_MIN_FLOWS, .hi = FS_MAX_FLOWS,
		  .help = "flow table entries per address family, when the tables are created"),
	SC_OPTION("interface", SC_OPT_IFNAME, struct sc_attach_args, ifname,
		  .positional = true, .noun = "interface name"),
	SC_OPTIONS_END,
};

static const struct sc_option detach_opts[] = {
	SC_OPTION("all", SC_OPT_FLAG, struct sc_detach_args, all, .short_opt = 'a',
		  .help = "detach from every interface and remove the pins"),
	SC_OPTION("interface", SC_OPT_IFNAME, struct sc_detach_args, ifname,
		  .positional = true, .noun = "interface name"),
	SC_OPTIONS_END,
};

static const struct sc_option stats_opts[] = {
	SC_OPTION("watch", SC_OPT_SECONDS, struct sc_stats_args, watch, .short_opt = 'w',
		  .metavar = "S", .lo = 0.1, .hi = 3600, .noun = "interval",
		  .help = "print rates every S seconds until interrupted"),
	SC_OPTION("prometheus", SC_OPT_FLAG, struct sc_stats_args, prometheus,
		  .short_opt = 'p', .help = "Prometheus text exposition format"),
	SC_OPTION("line", SC_OPT_FLAG, struct sc_stats_args, line,
		  .help = "with --watch: one line per interval (rates per class, new flows, passed)"),
	SC_OPTIONS_END,
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

/* run: tunnel health, checked by health_agent_configure() */
#define HEALTH_OPT(_name, _metavar, _help)					\
	SC_OPTION(_name, SC_OPT_PASS, struct sc_run_args, health,		\
		  .metavar = _metavar, .cli_only = true, .help = _help)
const struct sc_option sc_run_opts[] = {
	SC_OPTION("config", SC_OPT_STRING, struct sc_run_args, config, .short_opt = 'c',
		  .metavar = "FILE", .cli_only = true,
		  .help = "apply this config file on start (and on SIGHUP); its [agent] section sets the defaults below"),
	SC_OPTION("interval", SC_OPT_SECONDS, struct sc_run_args, interval,
		  .short_opt = 'i', .metavar = "S", .lo = 0.1, .hi = 3600,
		  .help = "seconds between idle sweeps and metric writes (default 10)"),
	SC_OPTION("textfile", SC_OPT_ABSPATH, struct sc_run_args, textfile,
		  .short_opt = 't', .metavar = "PATH",
		  .help = "write metrics there (node_exporter textfile collector)"),
	SC_OPTION("listen", SC_OPT_LISTEN, struct sc_run_args, listen, .short_opt = 'l',
		  .metavar = "ADDR:PORT", .noun = "address",
		  .help = "serve GET /metrics on this loopback address"),
	HEALTH_OPT("health", "yes|no", "probe the tunnels of route up and steer its routes (default yes)"),
	HEALTH_OPT("health-interval", "DUR", "between two probes of a tunnel (default 100ms)"),
	HEALTH_OPT("health-timeout", "DUR", "a probe unanswered this long is a miss; the floor when adaptive (default: the interval)"),
	HEALTH_OPT("health-adaptive-timeout", "yes|no", "timeout from the probes' RTT, as TCP's RTO (default yes)"),
	HEALTH_OPT("health-down-misses", "N", "consecutive misses: tunnel down (default 3)"),
	HEALTH_OPT("health-up-successes", "N", "consecutive answers: tunnel up again (default 5)"),
	HEALTH_OPT("health-hold-min", "DUR", "hold-down after a first flap (default 1s)"),
	HEALTH_OPT("health-hold-max", "DUR", "hold-down ceiling (default 32s)"),
	HEALTH_OPT("health-half-life", "DUR", "flap penalty half-life (default 60s)"),
	HEALTH_OPT("health-loss-window", "N", "probes in the loss ratio (default 100)"),
	HEALTH_OPT("both-down", "keep|main", "both tunnels down: keep our routes, or withdraw them (default keep)"),
	HEALTH_OPT("target-short", "ADDR", "probe target through the SHORT tunnel (default: its gateway)"),
	HEALTH_OPT("target-long", "ADDR", "probe target through the LONG tunnel (default: its gateway)"),
	SC_OPTIONS_END,
};

static const struct sc_option config_opts[] = {
	SC_OPTION("config", SC_OPT_STRING, struct sc_config_args, config,
		  .short_opt = 'c', .metavar = "FILE", .help = "the config file (required)"),
	SC_OPTIONS_END,
};

static const struct sc_option check_opts[] = {
	SC_OPTION("config", SC_OPT_STRING, struct sc_config_args, config,
		  .short_opt = 'c', .metavar = "FILE", .help = "the config file (required)"),
	SC_OPTION("offline", SC_OPT_FLAG, struct sc_config_args, offline,
		  .help = "judge the file alone: no interface needs to exist, no live instance is read"),
	SC_OPTIONS_END,
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

static const struct sc_option no_opts[] = { SC_OPTIONS_END };

/* ---- commands ------------------------------------------------------------- */
struct sc_cmd {
	const char *name;
	sc_cmd_fn fn;
	const char *args;	/* positional arguments, for the usage line */
	const char *summary;
	const struct sc_option *opts;
	size_t args_size;	/* of the argument struct opts fills */
	const void *defaults;	/* its initial value, NULL for zeroes */
	bool free_args;		/* arguments after the options go to fn */
	const struct sc_cmd *subs;	/* sub-commands (route up|down|show),
					 * then fn is NULL */
};

static const struct sc_flows_args flows_defaults = { .class = -1 };

#define SC_CMD(_name, _fn, _args, _summary, _opts, _argtype, ...) {		\
		.name = _name, .fn = _fn, .args = _args, .summary = _summary,	\
		.opts = _opts, .args_size = sizeof(_argtype), __VA_ARGS__ }

static const struct sc_cmd route_cmds[] = {
	SC_CMD("up", cmd_route_up, "", "install (or switch in place) the policy routing",
	       route_up_opts, struct sc_route_up_args),
	SC_CMD("down", cmd_route_down, "", "remove exactly what up installed",
	       no_opts, struct sc_no_args),
	SC_CMD("show", cmd_route_show, "", "rules, routes and tunnel counters",
	       no_opts, struct sc_no_args),
	{ .name = NULL },
};

static const struct sc_cmd tunnel_cmds[] = {
	SC_CMD("add", cmd_tunnel_add, "NAME KIND", "create a lab tunnel (KIND vxlan; gre, ipip, "
	       "wireguard where the kernel has them)", tunnel_add_opts, struct sc_tunnel_add_args),
	SC_CMD("del", cmd_tunnel_del, "NAME", "remove a lab tunnel", tunnel_del_opts,
	       struct sc_tunnel_del_args),
	SC_CMD("show", cmd_tunnel_show, "", "the lab tunnels", no_opts, struct sc_no_args),
	{ .name = NULL },
};

static const struct sc_cmd rule_cmds[] = {
	SC_CMD("add", cmd_rule_add, "NAME", "add a rule (checked against the others first)",
	       sc_rule_opts, struct sc_rule_args),
	SC_CMD("del", cmd_rule_del, "NAME", "remove a rule", sc_rule_del_opts,
	       struct sc_rule_args),
	SC_CMD("show", cmd_rule_show, "", "the rules", no_opts, struct sc_no_args),
	{ .name = NULL },
};

static const struct sc_cmd commands[] = {
	SC_CMD("attach", cmd_attach, "IFACE", "load and attach the splitter (or upgrade it in place)",
	       sc_attach_opts, struct sc_attach_args),
	SC_CMD("detach", cmd_detach, "IFACE | --all", "detach; remove the pins with the last interface",
	       detach_opts, struct sc_detach_args),
	SC_CMD("set", cmd_set, "NAME VALUE [NAME VALUE]...", "change settings live (see Settings)",
	       no_opts, struct sc_no_args, .free_args = true),
	SC_CMD("status", cmd_status, "", "interfaces, mode, program, config, table fill",
	       no_opts, struct sc_no_args),
	SC_CMD("stats", cmd_stats, "", "counters summed over CPUs", stats_opts,
	       struct sc_stats_args),
	SC_CMD("flows", cmd_flows, "", "the live flow table", flows_opts,
	       struct sc_flows_args, .defaults = &flows_defaults),
	SC_CMD("flush", cmd_flush, "", "empty the flow tables", no_opts, struct sc_no_args),
	SC_CMD("gc", cmd_gc, "", "remove idle flows once", no_opts, struct sc_no_args),
	SC_CMD("run", cmd_run, "", "agent: periodic idle sweep and metrics until SIGTERM; SIGHUP reloads",
	       sc_run_opts, struct sc_run_args),
	SC_CMD("apply", cmd_apply, "-c FILE", "apply a config file (all or nothing)", config_opts,
	       struct sc_config_args),
	SC_CMD("check", cmd_check, "-c FILE [--offline]", "validate a config file as apply would, without applying it",
	       check_opts, struct sc_config_args),
	SC_CMD("route", NULL, "up|down|show ...", "policy routing to the SHORT and LONG tunnels",
	       no_opts, struct sc_no_args, .subs = route_cmds),
	SC_CMD("tunnel", NULL, "add|del|show ...", "create or remove lab tunnels",
	       no_opts, struct sc_no_args, .subs = tunnel_cmds),
	SC_CMD("down", cmd_down, "", "remove everything splitctl made in this network namespace",
	       no_opts, struct sc_no_args),
	SC_CMD("doctor", cmd_doctor, "", "check this router: bpffs, hooks, rules, routes, MTU, sysctls, agent",
	       no_opts, struct sc_no_args),
	SC_CMD("rule", NULL, "add|del|show ...", "rules by remote prefix and port: class mode and thresholds",
	       no_opts, struct sc_no_args, .subs = rule_cmds),
	{ .name = NULL },
};

/* Room for the largest argument struct. */
union sc_any_args {
	struct sc_attach_args attach;
	struct sc_detach_args detach;
	struct sc_stats_args stats;
	struct sc_flows_args flows;
	struct sc_run_args run;
	struct sc_config_args config;
	struct sc_route_up_args route_up;
	struct sc_tunnel_add_args tunnel_add;
	struct sc_tunnel_del_args tunnel_del;
	struct sc_rule_args rule;
};

static void main_usage(FILE *f)
{
	const struct sc_cmd *c;

	fprintf(f, "Usage: splitctl [OPTIONS] COMMAND [ARGS]...\n\n"
		"Attach, tune and observe the flowsplit XDP splitter.\n\n"
		"Options:\n");
	sc_options_help(f, global_opts);
	fprintf(f, "\nCommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n\"splitctl COMMAND -h\" shows a command's options; "
		"see splitctl(8).\n");
}

static void cmd_usage(FILE *f, const struct sc_cmd *c, const char *path)
{
	const struct sc_cmd *sub;

	fprintf(f, "Usage: splitctl [OPTIONS] %s [OPTIONS]%s%s\n\n%s\n\nOptions:\n",
		path, *c->args ? " " : "", c->args, c->summary);
	sc_options_help(f, c->opts);
	if (c->fn)
		fprintf(f, "  %-34s %s\n", "-j, -v, -P DIR, -V",
			"the global options, here as well as before the command");
	if (c->fn == cmd_set) {
		fprintf(f, "\nSettings (NAME VALUE):\n");
		sc_options_keys_help(f, sc_setting_opts);
	}
	if (c->subs) {
		fprintf(f, "\nCommands:\n");
		for (sub = c->subs; sub->name; sub++)
			fprintf(f, "  %-6s %s\n", sub->name, sub->summary);
		fprintf(f, "\n\"splitctl %s COMMAND -h\" shows a command's options.\n", path);
	}
}

static const struct sc_cmd *find_cmd(const struct sc_cmd *t, const char *name)
{
	const struct sc_cmd *c;

	for (c = t; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* A command path ("route up") and its options, one per line:
 * "<path> --<option>"; then its sub-commands. */
static void help_table_cmd(const struct sc_cmd *c, const char *parent)
{
	const struct sc_cmd *sub;
	char path[64];

	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	printf("%s\n", path);
	sc_options_table(path, c->opts);
	for (sub = c->subs; sub && sub->name; sub++)
		help_table_cmd(sub, path);
}

/* Every command path and option ("-" for the global options), for the man
 * page and bash completion test. */
static void help_table(void)
{
	const struct sc_cmd *c;

	sc_options_table("-", global_opts);
	for (c = commands; c->name; c++)
		help_table_cmd(c, NULL);
}

/* A command path, its options, arguments and sub-commands, for completion. */
static void help_completion_cmd(const struct sc_cmd *c, const char *parent)
{
	const struct sc_cmd *sub;
	char path[64];

	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	printf("cmd\t%s\t%s\n", path, c->subs ? "group" : "");
	sc_options_complete(path, c->opts, false);
	if (c->fn == cmd_set)
		sc_options_complete(path, sc_setting_opts, true);
	for (sub = c->subs; sub && sub->name; sub++)
		help_completion_cmd(sub, path);
}

/* The table as splitctl.bash-completion reads it ("-": global options). */
static void help_completion(void)
{
	const struct sc_cmd *c;

	sc_options_complete("-", global_opts, false);
	for (c = commands; c->name; c++)
		help_completion_cmd(c, NULL);
}

/* libbpf's own messages: warnings with -v, debug (verifier log) with -v -v */
unsigned int sc_verbose_level;
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	if (!sc_verbose_level ||
	    (level == LIBBPF_DEBUG && sc_verbose_level < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void command_names(const struct sc_cmd *t, char *buf, size_t len)
{
	const struct sc_cmd *c;
	size_t off = 0;

	buf[0] = '\0';
	for (c = t; c->name && off < len; c++)
		off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "", c->name);
}

static int run_command(const struct sc_cmd *c, const char *parent,
		       struct sc_opts *o, int argc, char **argv);

/* "route up ...": pick the sub-command by its exact name. */
static int run_sub(const struct sc_cmd *c, struct sc_opts *o, int argc,
		   char **argv)
{
	const struct sc_cmd *sub;
	char names[128];

	if (argc < 2) {
		cmd_usage(stderr, c, c->name);
		return FS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cmd_usage(stdout, c, c->name);
		return FS_EXIT_OK;
	}
	sub = find_cmd(c->subs, argv[1]);
	if (!sub) {
		command_names(c->subs, names, sizeof(names));
		return sc_print_usage_error(c->name, "unknown action '%s': accepted: %s",
					    argv[1], names);
	}
	return run_command(sub, c->name, o, argc - 1, argv + 1);
}

/* The global options in force: logging follows -v. */
static void apply_globals(const struct sc_opts *o)
{
	fs_log_init("splitctl", o->verbose ? FS_LOG_DEBUG : FS_LOG_INFO);
	sc_verbose_level = o->verbose;
}

/* Parse the command's options (and global ones given after the command,
 * as bpftool takes them), then run it inside one output document. */
static int run_command(const struct sc_cmd *c, const char *parent,
		       struct sc_opts *o, int argc, char **argv)
{
	union sc_any_args args;
	int ret, rest = argc, werr;
	char path[64];

	if (c->subs)
		return run_sub(c, o, argc, argv);
	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	memset(&args, 0, sizeof(args));
	if (c->defaults)
		memcpy(&args, c->defaults, c->args_size);
	ret = sc_options_parse_with(c->opts, &args, global_opts, o, path, argc, argv,
				    c->free_args, c->free_args ? &rest : NULL);
	if (ret == 1) {
		cmd_usage(stdout, c, path);
		return FS_EXIT_OK;
	}
	if (ret)
		return ret;
	if (o->version) {
		printf("splitctl %s\n", SC_VERSION);
		return FS_EXIT_OK;
	}
	apply_globals(o);
	print_begin(stdout, o->json);
	ret = c->fn(o, &args, argc - rest, argv + rest);
	werr = print_end();
	if (werr && !ret) {
		pr_err("cannot write the output: %s", strerror(-werr));
		ret = FS_EXIT_RUNTIME;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct sc_opts o = { 0 };
	const struct sc_cmd *c;
	char names[256];
	int ret, first;

	fs_log_init("splitctl", FS_LOG_INFO);
	ret = sc_options_parse(global_opts, NULL, argc, argv, &o, true, &first);
	if (ret == 1) {
		main_usage(stdout);
		return FS_EXIT_OK;
	}
	if (ret)
		return ret;
	if (o.version) {
		printf("splitctl %s\n", SC_VERSION);
		return FS_EXIT_OK;
	}
	apply_globals(&o);
	libbpf_set_print(libbpf_log);
	if (first >= argc) {
		main_usage(stderr);
		return FS_EXIT_USAGE;
	}
	if (!strcmp(argv[first], "help-table")) {
		help_table();
		return FS_EXIT_OK;
	}
	if (!strcmp(argv[first], "help-completion")) {
		help_completion();
		return FS_EXIT_OK;
	}
	if (!strcmp(argv[first], "help")) {
		main_usage(stdout);
		return FS_EXIT_OK;
	}
	c = find_cmd(commands, argv[first]);
	if (!c) {
		command_names(commands, names, sizeof(names));
		return sc_print_usage_error(NULL, "unknown command '%s': accepted: %s",
					    argv[first], names);
	}
	return run_command(c, NULL, &o, argc - first, argv + first);
}
