/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config.h - the declarative config file of "apply", "check" and "run".
 * INI syntax (libinih): "[section]", "key = value", comments start with '#'
 * or ';'. See loader/flowsplit.conf.example and splitctl(8).
 */
#ifndef SPLITCTL_CONFIG_H
#define SPLITCTL_CONFIG_H

#include "splitctl.h"
#include "tunnel_cfg.h"

#define SC_CFG_MAX_SETTINGS 8
#define SC_AGENT_INTERVAL_DEFAULT 10	/* seconds between sweeps */

struct sc_config {
	/* [splitter] */
	char *ifaces[SC_MAX_IFACES];
	int nifaces;
	enum sc_xdp_mode mode;
	__u32 flows;
	const char *settings[2 * SC_CFG_MAX_SETTINGS + 1]; /* name, value, ..., NULL */
	int nsettings;
	/* [agent] */
	double interval;
	char *textfile;
	char *listen;
	/* [route] */
	struct tcfg_spec *route;
	/* first error: "FILE:LINE: problem" */
	char err[512];
};

/* Parse and validate; 0 ok, else SC_EXIT_USAGE (bad file) or
 * SC_EXIT_RUNTIME (unreadable) with the reason in cfg->err. */
int sc_config_load(const char *path, struct sc_config *cfg);
void sc_config_free(struct sc_config *cfg);
/* Attach the interfaces with the settings, then install the routes; on a
 * failure, detach what this call attached. Returns an exit code. */
int sc_config_apply(const struct sc_opts *o, const struct sc_config *cfg);
/* "ADDR:PORT" on a loopback address; fills a sockaddr; 0 or -1 + err */
int sc_parse_listen(const char *s, void *sa, unsigned int *salen, char *err,
		    size_t errlen);

#endif /* SPLITCTL_CONFIG_H */
