// SPDX-License-Identifier: GPL-2.0
/*
 * splitctl - attach, tune and observe the flowsplit XDP splitter.
 *
 * main.c is the top of splitctl: the global options, the list of commands
 * (each one's option table and function live in its own file, described
 * by a struct sc_cmd, commands.h), the dispatch, and what comes from the
 * tables: --help, the hidden "help-table" (checked against the man page)
 * and "help-completion" (read by the bash completion), and "help-keys"
 * (the config file's keys, from the tables of config.c: checked against
 * the man page too).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "config.h"

#define SC_VERSION "0.3"

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

static const struct sc_cmd *const commands[] = {
	&sc_cmd_attach, &sc_cmd_detach, &sc_cmd_set, &sc_cmd_status, &sc_cmd_stats,
	&sc_cmd_flows, &sc_cmd_flush, &sc_cmd_gc, &sc_cmd_run, &sc_cmd_apply, &sc_cmd_check,
	&sc_cmd_route, &sc_cmd_tunnel, &sc_cmd_down, &sc_cmd_doctor, &sc_cmd_rule, &sc_cmd_dup,
	&sc_cmd_ha, NULL,
};

static void main_usage(FILE *f)
{
	const struct sc_cmd *const *c;

	fprintf(f, "Usage: splitctl [OPTIONS] COMMAND [ARGS]...\n\n"
		"Attach, tune and observe the flowsplit XDP splitter.\n\n"
		"Options:\n");
	sc_options_help(f, global_opts);
	fprintf(f, "\nCommands:\n");
	for (c = commands; *c; c++)
		fprintf(f, "  %-8s %s\n", (*c)->name, (*c)->summary);
	fprintf(f, "\n\"splitctl COMMAND -h\" shows a command's options; "
		"see splitctl(8).\n");
}

static void cmd_usage(FILE *f, const struct sc_cmd *c, const char *path)
{
	const struct sc_cmd *const *sub;

	fprintf(f, "Usage: splitctl [OPTIONS] %s [OPTIONS]%s%s\n\n%s\n\nOptions:\n",
		path, *c->args ? " " : "", c->args, c->summary);
	sc_options_help(f, c->opts);
	if (c->fn)
		fprintf(f, "  %-34s %s\n", "-j, -v, -P DIR, -V",
			"the global options, here as well as before the command");
	if (c->keys) {
		fprintf(f, "\nSettings (NAME VALUE):\n");
		sc_options_keys_help(f, c->keys);
	}
	if (c->subs) {
		fprintf(f, "\nCommands:\n");
		for (sub = c->subs; *sub; sub++)
			fprintf(f, "  %-6s %s\n", (*sub)->name, (*sub)->summary);
		fprintf(f, "\n\"splitctl %s COMMAND -h\" shows a command's options.\n", path);
	}
}

static const struct sc_cmd *find_cmd(const struct sc_cmd *const *t, const char *name)
{
	for (; *t; t++)
		if (!strcmp((*t)->name, name))
			return *t;
	return NULL;
}

/* A command path ("route up") and its options, one per line:
 * "<path> --<option>"; then its sub-commands. */
static void help_table_cmd(const struct sc_cmd *c, const char *parent)
{
	const struct sc_cmd *const *sub;
	char path[64];

	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	printf("%s\n", path);
	sc_options_table(path, c->opts);
	for (sub = c->subs; sub && *sub; sub++)
		help_table_cmd(*sub, path);
}

/* Every command path and option ("-" for the global options), for the man
 * page and bash completion test. */
static void help_table(void)
{
	const struct sc_cmd *const *c;

	sc_options_table("-", global_opts);
	for (c = commands; *c; c++)
		help_table_cmd(*c, NULL);
}

/* A command path, its options, arguments and sub-commands, for completion. */
static void help_completion_cmd(const struct sc_cmd *c, const char *parent)
{
	const struct sc_cmd *const *sub;
	char path[64];

	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	printf("cmd\t%s\t%s\n", path, c->subs ? "group" : "");
	sc_options_complete(path, c->opts, false);
	if (c->keys)
		sc_options_complete(path, c->keys, true);
	for (sub = c->subs; sub && *sub; sub++)
		help_completion_cmd(*sub, path);
}

/* The table as splitctl.bash-completion reads it ("-": global options). */
static void help_completion(void)
{
	const struct sc_cmd *const *c;

	sc_options_complete("-", global_opts, false);
	for (c = commands; *c; c++)
		help_completion_cmd(*c, NULL);
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

static void command_names(const struct sc_cmd *const *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; *t && off < len; t++)
		off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "", (*t)->name);
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
	fs_log_json(o->json);
	sc_verbose_level = o->verbose;
}

/* The usage checks, the state the command asks for, then the command. */
static int call(const struct sc_cmd *c, struct sc_call *call)
{
	struct sc_state st;
	int ret;

	ret = c->check ? c->check(call) : FS_EXIT_OK;
	if (ret)
		return ret;
	if (c->state == SC_STATE_NONE)
		return c->fn(call);
	ret = sc_state_open_cmd(call->o, &st, c->state == SC_STATE_LOCK);
	if (ret)
		return ret;
	call->st = &st;
	ret = c->fn(call);
	sc_state_close(&st);
	return ret;
}

/* Parse the command's options (and global ones given after the command,
 * as bpftool takes them), then run it inside one output document. */
static int run_command(const struct sc_cmd *c, const char *parent,
		       struct sc_opts *o, int argc, char **argv)
{
	struct sc_call cl = { .o = o };
	int ret, rest = argc, werr;
	char path[64];
	void *args;

	if (c->subs)
		return run_sub(c, o, argc, argv);
	snprintf(path, sizeof(path), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 c->name);
	args = calloc(1, c->args_size);
	if (!args) {
		pr_err("%s: out of memory", path);
		return FS_EXIT_RUNTIME;
	}
	if (c->defaults)
		memcpy(args, c->defaults, c->args_size);
	sc_usage_errors_as_log(c->log_errors);
	ret = sc_options_parse_with(c->opts, args, global_opts, o, path, argc, argv,
				    c->free_args, c->free_args ? &rest : NULL);
	if (ret == 1) {
		cmd_usage(stdout, c, path);
		ret = FS_EXIT_OK;
		goto out;
	}
	if (ret)
		goto out;
	if (o->version) {
		printf("splitctl %s\n", SC_VERSION);
		ret = FS_EXIT_OK;
		goto out;
	}
	apply_globals(o);
	print_begin(stdout, o->json);
	cl.args = args;
	cl.argc = argc - rest;
	cl.argv = argv + rest;
	ret = call(c, &cl);
	werr = print_end();
	if (werr && !ret) {
		pr_err("cannot write the output: %s", strerror(-werr));
		ret = FS_EXIT_RUNTIME;
	}
out:
	free(args);
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
	if (!strcmp(argv[first], "help-keys")) {
		sc_config_help_keys();
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
