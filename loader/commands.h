/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - the argument struct of every command (filled by its option
 * table in main.c, see lib/params.h) and the command functions. A command gets
 * the global options, its parsed arguments and, for commands that take free
 * arguments ("set" pairs), the rest of argv; it returns an exit code.
 */
#ifndef SPLITCTL_COMMANDS_H
#define SPLITCTL_COMMANDS_H

#include "splitctl.h"
#include "tunnel_cfg.h"

struct sc_no_args {
	__u32 given;
};

struct sc_detach_args {
	__u32 given;
	bool all;
	char ifname[IFNAMSIZ];
};

struct sc_stats_args {
	__u32 given;
	double watch;		/* seconds, 0 = print once */
	bool prometheus;
	bool line;		/* --watch: one line per interval */
};

enum sc_flow_sort { SC_SORT_PACKETS, SC_SORT_BYTES, SC_SORT_AGE };

struct sc_flows_args {
	__u32 given;
	int class;		/* enum flow_class, -1 = every class */
	__u64 top;		/* 0 = all */
	int sort;		/* enum sc_flow_sort */
};

/* "run" options, also the [agent] keys of a config file */
struct sc_run_args {
	__u32 given;
	const char *config;
	double interval;	/* seconds between sweeps */
	const char *textfile;
	struct sc_listen listen;
	struct sc_pass_list health;	/* --health*, --both-down, --target-* */
};
extern const struct sc_option sc_run_opts[];
#define SC_AGENT_INTERVAL_DEFAULT 10	/* seconds between sweeps */

struct sc_config_args {
	__u32 given;
	const char *config;
	bool offline;		/* check: the file alone, no system access */
};

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

/* What tunnel-cfg gets to know: the long code point the routes match, the
 * plan a running agent has in force (health/), and its health for route
 * show. */
void sc_route_ctx(int dscp_long, struct tcfg_ctx *ctx);

typedef int (*sc_cmd_fn)(const struct sc_opts *o, void *args, int argc,
			 char **argv);

int cmd_attach(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_detach(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_set(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_status(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_stats(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_flows(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_flush(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_gc(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_run(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_apply(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_check(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_route_up(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_route_down(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_route_show(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_tunnel_add(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_tunnel_del(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_tunnel_show(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_down(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_doctor(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_rule_add(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_rule_del(const struct sc_opts *o, void *args, int argc, char **argv);
int cmd_rule_show(const struct sc_opts *o, void *args, int argc, char **argv);

#endif /* SPLITCTL_COMMANDS_H */
