/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - what a command of splitctl is (bpftool's command tables,
 * xdp-tools' option tables): each cmd_*.c file (and gc.c, run.c,
 * config.c) defines its command's option table next to the command
 * function and exports one struct sc_cmd describing both; main.c lists
 * the descriptors, parses the options into the command's argument struct
 * (lib/params.h), opens the instance's state when the command asks for it,
 * and runs it inside one output document.
 */
#ifndef SPLITCTL_COMMANDS_H
#define SPLITCTL_COMMANDS_H

#include "splitctl.h"
#include "tunnel_cfg.h"

/* What a command gets. */
struct sc_call {
	const struct sc_opts *o;	/* the global options */
	void *args;			/* its argument struct, parsed */
	int argc;			/* free arguments after the options */
	char **argv;			/* ("set" pairs), else 0 */
	struct sc_state *st;		/* open when its .state asks for it */
};
/* A process exit code (FS_EXIT_*); errors printed once, by the command. */
typedef int (*sc_cmd_fn)(const struct sc_call *c);

/* The instance state a command needs, opened by main.c before it runs
 * (one error line and the exit code when that fails). */
enum sc_cmd_state {
	SC_STATE_NONE,		/* none, or the command opens it itself */
	SC_STATE_READ,		/* the pinned maps */
	SC_STATE_LOCK,		/* the same under the instance lock */
};

struct sc_cmd {
	const char *name;
	sc_cmd_fn fn;		/* NULL for a group (subs) */
	sc_cmd_fn check;	/* usage checks across options, before any
				 * state is opened (may be NULL) */
	enum sc_cmd_state state;
	const char *args;	/* positional arguments, for the usage line */
	const char *summary;
	const struct sc_option *opts;
	size_t args_size;	/* of the argument struct opts fills */
	const void *defaults;	/* its initial value, NULL for zeroes */
	bool free_args;		/* arguments after the options go to fn */
	bool log_errors;	/* usage errors in the shape of log lines,
				 * "splitctl: CMD: ..." (the agent) */
	/* NAME VALUE rows the free arguments take ("set"), for the help and
	 * the completion */
	const struct sc_option *keys;
	const struct sc_cmd *const *subs;	/* a group's commands, NULL-ended */
};

/* One descriptor; _argtype is the argument struct _opts fills. */
#define SC_CMD(_name, _fn, _args, _summary, _opts, _argtype, ...) {		\
		.name = _name, .fn = _fn, .args = _args, .summary = _summary,	\
		.opts = _opts, .args_size = sizeof(_argtype), __VA_ARGS__ }
/* A group of commands ("route up|down|show"). */
#define SC_CMD_GROUP(_name, _args, _summary, _subs) {				\
		.name = _name, .args = _args, .summary = _summary,		\
		.opts = sc_no_opts, .args_size = sizeof(struct sc_no_args),	\
		.subs = _subs }

/* The argument struct and table of a command without options. */
struct sc_no_args {
	__u32 given;
};
#define sc_no_opts ((const struct sc_option[]){ SC_OPTIONS_END })

/* The commands, in the order of the help (main.c). */
extern const struct sc_cmd sc_cmd_attach, sc_cmd_detach, sc_cmd_set, sc_cmd_status,
	sc_cmd_stats, sc_cmd_flows, sc_cmd_flush, sc_cmd_gc, sc_cmd_run, sc_cmd_apply,
	sc_cmd_check, sc_cmd_route, sc_cmd_tunnel, sc_cmd_down, sc_cmd_doctor, sc_cmd_rule,
	sc_cmd_dup, sc_cmd_ha;

/* What tunnel-cfg gets to know: the long code point the routes match, the
 * plan a running agent has in force (health/), and its health for route
 * show (commit.c). */
void sc_route_ctx(int dscp_long, struct tcfg_ctx *ctx);

/* The config object of status and set (settings.c); text: PRINT_FP
 * (status) or 0 (set: JSON only). */
void sc_print_config(const struct split_config *c, enum output_type text);
/* When a long flow counts as short again under config c: where the
 * observer records ACKs (observer), or where it is missing (no message
 * boundary, only reshort-gap): one phrase into buf (status, doctor). */
void sc_reshort_text(const struct split_config *c, bool observer, char *buf, size_t len);

#endif /* SPLITCTL_COMMANDS_H */
