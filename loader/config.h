/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config.h - the declarative config file of "apply", "check" and "run".
 * INI syntax (ini.h): "[section]", "key = value", comments start with '#'
 * or ';'; a key given twice is an error. See loader/flowsplit.conf.example
 * and splitctl(8).
 *
 * Declarative: the file is laid over the DEFAULTS, never over the live
 * config: a setting left out is the default after "apply" (the same
 * file always gives the same instance). "check" and "apply" judge a file
 * by the same code: the file itself (sc_config_load(), all "check
 * --offline" looks at), then against the system (sc_config_validate():
 * interfaces exist and are up, the flow table size against a live one,
 * hook and mode against live attachments, the routes); "apply" changes
 * nothing before both passed.
 *
 * The keys are the rows of the commands' option tables (lib/params.h), parsed
 * and checked by the same code as on the command line: [splitter] those of
 * "attach" (sc_attach_opts, with every setting) plus "interfaces", [agent]
 * the agent's (sc_agent_opts, also options of "run"), [health] the
 * agent's tunnel health settings (health_settings_opts, health/), [route]
 * those of "route up" (tunnel-cfg), [tunnel NAME] those of "tunnel add"
 * (tcfg_tunnel_opts, and "kind"),
 * [rule NAME] those of "rule add" (sc_rule_opts, rules.h).
 */
#ifndef SPLITCTL_CONFIG_H
#define SPLITCTL_CONFIG_H

#include "commands.h"
#include "health_agent.h"
#include "rules.h"
#include "tunnel_cfg.h"

/* The agent's own settings: the [agent] keys, and options of "run" (run.c
 * includes this table in its own). */
struct sc_agent_args {
	__u32 given;
	double interval;	/* seconds between sweeps */
	const char *textfile;
	struct sc_listen listen;
	const char *web_config;	/* webcfg.h */
};
extern const struct sc_option sc_agent_opts[];
#define SC_AGENT_INTERVAL_DEFAULT 10	/* seconds between sweeps */
/* What "run" checks of a's metrics endpoint before it starts (run.c): the
 * web config read whole, its certificate and key loaded together, and a
 * listen address it may serve. 0, or FS_EXIT_USAGE (a bad web config,
 * listen) / FS_EXIT_RUNTIME (unreadable) with one line in err. */
int sc_agent_web_check(const struct sc_agent_args *a, char *err, size_t errlen);

/* [dup]: attach (apply attaches "dup attach" on the tunnel devices), the
 * options of "dup attach" as keys (sc_dup_attach_opts, but copy), and the
 * agent's copy (dup_settings_opts, health/dup_agent.h): one table,
 * sc_dup_file_opts. */
struct sc_dup_file {
	__u32 given;
	bool attach;
	struct sc_dup_attach_args dev;	/* as given */
	struct dup_settings agent;	/* as given */
};
extern const struct sc_option sc_dup_file_opts[];

#define SC_CFG_MAX_VALUES 64	/* string values kept (paths, addresses) */
#define SC_CFG_MAX_TUNNELS 8	/* [tunnel NAME] sections */

/* A [tunnel NAME] section: what "tunnel add NAME KIND" makes. */
struct sc_config_tunnel {
	char name[IFNAMSIZ];
	char kind[16];			/* "" until given */
	int line;			/* of the header */
	struct tcfg_tunnel given;	/* the keys (tcfg_tunnel_opts) */
	struct tcfg_tunnel *t;		/* after the load: complete, over the
					 * kind's defaults */
	/* the system's (sc_config_validate): TCFG_TUNNEL_ABSENT, _SAME or
	 * _DIFFERS, what differs, and the live one to make again */
	int state;
	char differs[200];
	struct tcfg_tunnel live;
};

/* What apply changes (or would): one entry per object. */
#define SC_CFG_MAX_CHANGES 64
struct sc_config_change {
	const char *object;	/* "tunnel", "interface", "setting", "rule", "dup",
				 * "route" */
	char name[64];
	const char *action;	/* "create", "recreate", "attach", "reattach",
				 * "change", "add", "remove", "install" */
	char from[256], to[256];	/* "" when not applicable */
};

struct sc_config {
	const char *path;
	/* [splitter] */
	char ifaces[SC_MAX_IFACES][IFNAMSIZ];
	int nifaces;
	int ifaces_line;		/* of the interfaces key */
	struct sc_attach_args splitter;	/* mode, settings, flows; after the
					 * load every setting is given: the
					 * file's value or the default */
	__u32 flows;			/* the file's, or FS_DEFAULT_FLOWS */
	/* [agent] */
	struct sc_agent_args agent;
	/* [health] (health_settings_opts), as given: laid over the defaults
	 * (and under the command line) by health_settings_resolve() */
	struct health_settings health;
	/* [spill] (spill_settings_opts), as given: laid over the defaults
	 * (and under the command line) by spill_settings_resolve() */
	struct spill_settings spill;
	/* [dup] (sc_dup_file_opts), as given; with attach = yes, what
	 * apply attaches: the keys over the defaults, the devices the
	 * file's or the [route]'s */
	struct sc_dup_file dup;
	struct sc_dup_attach_args dup_want;
	/* [tunnel NAME] sections */
	struct sc_config_tunnel tunnels[SC_CFG_MAX_TUNNELS];
	int ntunnels;
	/* [route] */
	struct tcfg_spec *route;
	/* the route's devices are tunnels apply makes: checked once they are */
	bool route_check_later;
	/* what apply changes (sc_config_apply_changes()) */
	struct sc_config_change changes[SC_CFG_MAX_CHANGES];
	int nchanges, changes_total;
	/* [rule NAME] sections, and their rules once the file is checked:
	 * apply makes the live rules exactly these (none: no rules) */
	struct sc_rule_file rule_file;
	struct sc_rule_set rules;
	/* copies of the string values the structs above point to */
	char *values[SC_CFG_MAX_VALUES];
	int nvalues;
	/* first error: "FILE:LINE: problem" */
	char err[512];
};

/* Parse and check the file alone (no system access); 0 ok, else
 * FS_EXIT_USAGE (bad file) or FS_EXIT_RUNTIME (unreadable) with the reason
 * in cfg->err. */
int sc_config_load(const char *path, struct sc_config *cfg);
/* Every key of every section, from the tables that parse them, one
 * "key<TAB>[SECTION]<TAB>NAME<TAB>VALUES" line each (help-keys: the man
 * page test). */
void sc_config_help_keys(void);
void sc_config_free(struct sc_config *cfg);
/* Validate, then attach the interfaces with the settings, then install the
 * routes (or let installed ones follow the long code point); on a failure,
 * detach what this call attached and put the previous live settings back.
 * Returns an exit code (one error line printed). */
int sc_config_apply(const struct sc_opts *o, struct sc_config *cfg);
/* The same, with what it changes in cfg->changes (the tunnels first, then
 * the interfaces, the splitter's settings, the rules, the route); dry_run:
 * validate and list, change nothing. */
int sc_config_apply_changes(const struct sc_opts *o, struct sc_config *cfg, bool dry_run);

#endif /* SPLITCTL_CONFIG_H */
