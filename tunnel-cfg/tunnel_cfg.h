/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tunnel_cfg.h - the interface between splitctl (loader/) and tunnel-cfg.
 *
 * tunnel-cfg installs policy routing towards the SHORT and LONG tunnels with
 * netlink (libmnl) and creates lab tunnels. It knows nothing about BPF maps:
 * splitctl passes in what it knows of the running splitter (the long code
 * point) through struct tcfg_ctx.
 *
 * Return values of the *_main() entry points are process exit codes:
 * 0 ok, 1 runtime failure, 2 usage error.
 */
#ifndef TUNNEL_CFG_H
#define TUNNEL_CFG_H

#include <stddef.h>

struct tcfg_ctx {
	int json;	/* -j/--json given to splitctl */
	int verbose;	/* -v given to splitctl */
	int dscp_long;	/* long code point of the live splitter config, -1 if none */
};

/* "splitctl route up|down|show ...": argv[0] is "route" */
int tcfg_route_main(int argc, char **argv, const struct tcfg_ctx *ctx);
/* "splitctl tunnel add|del|show ...": argv[0] is "tunnel" */
int tcfg_tunnel_main(int argc, char **argv, const struct tcfg_ctx *ctx);

/*
 * Declarative form used by "splitctl apply/check -c FILE" ([route] section).
 * Keys are the long option names of "splitctl route up" without the dashes.
 */
struct tcfg_spec;
struct tcfg_spec *tcfg_spec_new(void);
void tcfg_spec_free(struct tcfg_spec *spec);
/* 0 ok; -1 bad key or value, with a one-line reason in err */
int tcfg_spec_set(struct tcfg_spec *spec, const char *key, const char *value,
		  char *err, size_t errlen);
/* 0 when complete and consistent; -1 with a reason in err */
int tcfg_spec_check(const struct tcfg_spec *spec, char *err, size_t errlen);
/* Same effect as "route up" with these settings; returns an exit code. */
int tcfg_route_apply(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx);

#endif /* TUNNEL_CFG_H */
