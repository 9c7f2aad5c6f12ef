/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config.h - the declarative config file of "apply", "check" and "run".
 * INI syntax (libinih): "[section]", "key = value", comments start with '#'
 * or ';'. See loader/flowsplit.conf.example and splitctl(8).
 *
 * The keys are the rows of the commands' option tables (options.h), parsed
 * and checked by the same code as on the command line: [splitter] those of
 * "attach" (sc_attach_opts, with every setting) plus "interfaces", [agent]
 * those of "run" (sc_run_opts), [route] those of "route up" (tunnel-cfg).
 */
#ifndef SPLITCTL_CONFIG_H
#define SPLITCTL_CONFIG_H

#include "commands.h"
#include "tunnel_cfg.h"

#define SC_CFG_MAX_VALUES 64	/* string values kept (paths, addresses) */

struct sc_config {
	/* [splitter] */
	char ifaces[SC_MAX_IFACES][IFNAMSIZ];
	int nifaces;
	struct sc_attach_args splitter;	/* mode, settings, flows */
	/* [agent] */
	struct sc_run_args agent;
	/* [route] */
	struct tcfg_spec *route;
	/* copies of the string values the structs above point to */
	char *values[SC_CFG_MAX_VALUES];
	int nvalues;
	/* first error: "FILE:LINE: problem" */
	char err[512];
};

/* Parse and validate; 0 ok, else FS_EXIT_USAGE (bad file) or
 * FS_EXIT_RUNTIME (unreadable) with the reason in cfg->err. */
int sc_config_load(const char *path, struct sc_config *cfg);
void sc_config_free(struct sc_config *cfg);
/* Attach the interfaces with the settings, then install the routes; on a
 * failure, detach what this call attached and put the previous live
 * settings back. Returns an exit code (errors printed). */
int sc_config_apply(const struct sc_opts *o, const struct sc_config *cfg);

#endif /* SPLITCTL_CONFIG_H */
