// SPDX-License-Identifier: GPL-2.0
/*
 * splitctl - attach, tune and observe the flowsplit XDP splitter.
 *
 * This file holds the option table of every subcommand (help, the man page
 * test and the bash completion all derive from it: see "help-table"), the
 * global options and the dispatch.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "splitctl.h"
#include "ops.h"

#define SC_VERSION "0.2"

#define OPT_HELP { "help", 'h', NULL, "show this help and exit", 0, 0 }
#define OPT_END { NULL, 0, NULL, NULL, 0, 0 }
#define OPT_CONFIG(help) { "config", 'c', "FILE", help, 0, 0 }

static const struct sc_opt global_opts[] = {
	{ "pin-dir", 'P', "DIR", "bpffs directory of the instance (default "
	  FS_PIN_DIR_DEFAULT ", or $" FS_PIN_DIR_ENV ")", 0, 0 },
	{ "json", 'j', NULL, "machine-readable output (read commands)", 0, 0 },
	{ "verbose", 'v', NULL, "more output, including libbpf's log", 0, 0 },
	{ "version", 'V', NULL, "print the version and exit", 0, 0 },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt attach_opts[] = {
	{ "mode", 'm', "native|generic|auto",
	  "XDP attach mode (default auto: native, else generic)", 0, 0 },
	{ "threshold", 't', "N", "packets per flow marked short (%.15g..%.15g)",
	  0, FS_MAX_THRESHOLD },
	{ "idle-timeout", 'i', "S", "seconds of silence that end a flow (%.15g..%.15g)",
	  FS_MIN_IDLE_MS / 1000.0, FS_MAX_IDLE_MS / 1000.0 },
	{ "dscp-short", 's', "V", "code point for short flows (%.15g..%.15g)",
	  0, FS_DSCP_MAX },
	{ "dscp-long", 'l', "V", "code point for long flows (%.15g..%.15g)",
	  0, FS_DSCP_MAX },
	{ "flows", 'f', "N", "flow table entries per address family (%.15g..%.15g), when the tables are created",
	  FS_MIN_FLOWS, FS_MAX_FLOWS },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt detach_opts[] = {
	{ "all", 'a', NULL, "detach from every interface and remove the pins", 0, 0 },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt stats_opts[] = {
	{ "watch", 'w', "S", "print rates every S seconds until interrupted", 0, 0 },
	{ "prometheus", 'p', NULL, "Prometheus text exposition format", 0, 0 },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt flows_opts[] = {
	{ "class", 'c', "short|long", "only flows of this class", 0, 0 },
	{ "top", 'n', "N", "only the first N flows after sorting", 0, 0 },
	{ "sort", 's', "packets|bytes|age", "sort order (descending; default packets)", 0, 0 },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt run_opts[] = {
	OPT_CONFIG("apply this config file on start; its [agent] section sets the defaults below"),
	{ "interval", 'i', "S", "seconds between idle sweeps and metric writes (default 10)", 0, 0 },
	{ "textfile", 't', "PATH", "write metrics there (node_exporter textfile collector)", 0, 0 },
	{ "listen", 'l', "ADDR:PORT", "serve GET /metrics on this loopback address", 0, 0 },
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt config_opts[] = {
	OPT_CONFIG("the config file (required)"),
	OPT_HELP,
	OPT_END,
};

static const struct sc_opt help_only[] = { OPT_HELP, OPT_END };

static const struct sc_cmd commands[] = {
	{ "attach", cmd_attach, "IFACE", "load and attach the splitter (or upgrade it in place)", attach_opts },
	{ "detach", cmd_detach, "IFACE | --all", "detach; remove the pins with the last interface", detach_opts },
	{ "set", cmd_set, "NAME VALUE [NAME VALUE]...",
	  "change settings live: " SC_SETTING_NAMES, help_only },
	{ "status", cmd_status, "", "interfaces, mode, program, config, table fill", help_only },
	{ "stats", cmd_stats, "", "counters summed over CPUs", stats_opts },
	{ "flows", cmd_flows, "", "the live flow table", flows_opts },
	{ "flush", cmd_flush, "", "empty the flow tables", help_only },
	{ "gc", cmd_gc, "", "remove idle flows once", help_only },
	{ "run", cmd_run, "", "agent: periodic idle sweep and metrics until SIGTERM", run_opts },
	{ "apply", cmd_apply, "-c FILE", "apply a config file (all or nothing)", config_opts },
	{ "check", cmd_check, "-c FILE", "validate a config file without applying it", config_opts },
	{ "route", cmd_route, "up|down|show ...", "policy routing to the SHORT and LONG tunnels", help_only },
	{ "tunnel", cmd_tunnel, "add|del|show ...", "create or remove lab tunnels", help_only },
	{ NULL, NULL, NULL, NULL, NULL },
};

int sc_verbose_level;
static const struct sc_cmd *current;

void sc_err(const char *fmt, ...)
{
	va_list ap;

	fputs("splitctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sc_verbose(const char *fmt, ...)
{
	va_list ap;

	if (!sc_verbose_level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int sc_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "splitctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return SC_EXIT_USAGE;
}

static void print_opts(FILE *f, const struct sc_opt *t)
{
	char buf[64];

	for (; t->name; t++) {
		if (t->val < 256)
			snprintf(buf, sizeof(buf), "-%c, --%s%s%s", t->val,
				 t->name, t->arg ? " " : "", t->arg ? t->arg : "");
		else
			snprintf(buf, sizeof(buf), "    --%s%s%s", t->name,
				 t->arg ? " " : "", t->arg ? t->arg : "");
		fprintf(f, "  %-34s ", buf);
		if (t->lo < t->hi)
			fprintf(f, t->help, t->lo, t->hi);
		else
			fputs(t->help, f);
		fputc('\n', f);
	}
}

static void main_usage(FILE *f)
{
	const struct sc_cmd *c;

	fprintf(f, "Usage: splitctl [OPTIONS] COMMAND [ARGS]...\n\n"
		"Attach, tune and observe the flowsplit XDP splitter.\n\n"
		"Options:\n");
	print_opts(f, global_opts);
	fprintf(f, "\nCommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n\"splitctl COMMAND -h\" shows a command's options; "
		"see splitctl(8).\n");
}

static const struct sc_cmd *find_cmd(const char *name)
{
	const struct sc_cmd *c;

	for (c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void sc_usage(FILE *f, const char *cmd)
{
	const struct sc_cmd *c = find_cmd(cmd);

	if (!c)
		return;
	fprintf(f, "Usage: splitctl [OPTIONS] %s [OPTIONS]%s%s\n\n%s\n\nOptions:\n",
		c->name, *c->args ? " " : "", c->args, c->summary);
	print_opts(f, c->opts);
}

/* Build getopt_long's tables from an sc_opt table. */
static void build_getopt(const struct sc_opt *t, struct option *lo,
			 char *shortopts, int in_order)
{
	char *s = shortopts;
	int i;

	/* global options end at the command name; "set" values such as "-1"
	 * must reach the value check, not be taken for options */
	if (in_order)
		*s++ = '+';
	*s++ = ':';	/* report a missing argument as ':' */
	for (i = 0; t[i].name; i++) {
		lo[i].name = t[i].name;
		lo[i].has_arg = t[i].arg ? required_argument : no_argument;
		lo[i].flag = NULL;
		lo[i].val = t[i].val;
		if (t[i].val < 256) {
			*s++ = (char)t[i].val;
			if (t[i].arg)
				*s++ = ':';
		}
	}
	memset(&lo[i], 0, sizeof(lo[i]));
	*s = '\0';
}

static int do_getopt(int argc, char **argv, const struct sc_opt *t,
		     const char *cmd)
{
	struct option lo[32];
	char shortopts[80];
	int c;

	build_getopt(t, lo, shortopts, !cmd || !strcmp(cmd, "set"));
	opterr = 0;
	c = getopt_long(argc, argv, shortopts, lo, NULL);
	if (c == '?') {
		if (optopt)
			sc_usage_error(cmd, "unknown option '-%c' (see -h)", optopt);
		else
			sc_usage_error(cmd, "unknown option '%s' (see -h)",
				       argv[optind - 1]);
	} else if (c == ':') {
		sc_usage_error(cmd, "option '%s' needs a value (see -h)",
			       argv[optind - 1]);
		c = '?';
	}
	return c;
}

int sc_getopt(int argc, char **argv)
{
	int c = do_getopt(argc, argv, current->opts, current->name);

	if (c == 'h')
		sc_usage(stdout, current->name);
	return c;
}

/* One line per option: "<command> --<option>" ("-" for global options). */
static void help_table(void)
{
	const struct sc_cmd *c;
	const struct sc_opt *t;

	for (t = global_opts; t->name; t++)
		printf("- --%s\n", t->name);
	for (c = commands; c->name; c++) {
		printf("%s\n", c->name);
		for (t = c->opts; t->name; t++)
			printf("%s --%s\n", c->name, t->name);
	}
}

/* libbpf's own messages: warnings with -v, debug (verifier log) with -v -v */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	if (!sc_verbose_level ||
	    (level == LIBBPF_DEBUG && sc_verbose_level < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct sc_opts o = { 0 };
	const struct sc_cmd *c;
	int opt;

	while ((opt = do_getopt(argc, argv, global_opts, NULL)) != -1) {
		switch (opt) {
		case 'P':
			if (!*optarg)
				return sc_usage_error(NULL, "--pin-dir: empty path");
			o.pin_dir = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'V':
			printf("splitctl %s\n", SC_VERSION);
			return SC_EXIT_OK;
		case 'h':
			main_usage(stdout);
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	sc_verbose_level = o.verbose;
	libbpf_set_print(libbpf_log);
	if (optind >= argc) {
		main_usage(stderr);
		return SC_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help-table")) {
		help_table();
		return SC_EXIT_OK;
	}
	if (!strcmp(argv[optind], "help")) {
		main_usage(stdout);
		return SC_EXIT_OK;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return sc_usage_error(NULL, "unknown command '%s': accepted: attach, detach, set, status, stats, flows, flush, gc, run, apply, check, route, tunnel",
				      argv[optind]);
	current = c;
	argv += optind;
	argc -= optind;
	optind = 0;	/* restart getopt for the subcommand */
	return c->fn(argc, argv, &o);
}
