// SPDX-License-Identifier: GPL-2.0
/*
 * Placeholder so splitctl links while tunnel-cfg is being written: every
 * entry point reports that routing is not available yet. Deleted when the
 * real implementation lands.
 */
#include <stdio.h>
#include <stdlib.h>
#include "tunnel_cfg.h"

static int pending(const char *what)
{
	fprintf(stderr, "splitctl: %s: not implemented yet\n", what);
	return 1;
}

int tcfg_route_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	(void)argc; (void)argv; (void)ctx;
	return pending("route");
}

int tcfg_tunnel_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	(void)argc; (void)argv; (void)ctx;
	return pending("tunnel");
}

struct tcfg_spec *tcfg_spec_new(void)
{
	return NULL;
}

void tcfg_spec_free(struct tcfg_spec *spec)
{
	(void)spec;
}

int tcfg_spec_set(struct tcfg_spec *spec, const char *key, const char *value,
		  char *err, size_t errlen)
{
	(void)spec; (void)key; (void)value;
	snprintf(err, errlen, "[route] section: not implemented yet");
	return -1;
}

int tcfg_spec_check(const struct tcfg_spec *spec, char *err, size_t errlen)
{
	(void)spec;
	snprintf(err, errlen, "[route] section: not implemented yet");
	return -1;
}

int tcfg_route_apply(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx)
{
	(void)spec; (void)ctx;
	return pending("route");
}
