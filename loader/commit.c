// SPDX-License-Identifier: GPL-2.0
/*
 * commit.c - settings into a live instance, with the routes of "route up"
 * following its long code point, or nothing changed (commit.h; why the
 * routes follow: docs/design.md).
 */
#include <errno.h>
#include <string.h>

#include "agent_lock.h"
#include "commands.h"
#include "commit.h"
#include "health_file.h"

void sc_route_ctx(int dscp_long, struct tcfg_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->dscp_long = dscp_long;
	ctx->dscp_short = -1;	/* the LONG shaper keeps the one it matches */
	health_file_in_force(&ctx->in_force);
	ctx->agent_pid = agent_lock_holder();
	ctx->show_more = health_show;
}

/* The live config, from the caller's state or an instance opened here:
 * 0, else -errno (nothing attached). */
static int live_config(const struct sc_opts *o, const struct sc_state *locked,
		       struct split_config *cfg)
{
	struct sc_state st;
	int ret;

	if (locked)
		return sc_config_read(locked, cfg);
	ret = sc_state_open(o, &st, 0);
	if (ret)
		return ret;
	ret = sc_config_read(&st, cfg);
	sc_state_close(&st);
	return ret;
}

void sc_commit_begin(struct sc_commit *c, const struct sc_opts *o,
		     const struct sc_state *locked)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->had = !live_config(o, locked, &c->before);
}

/* The routes only follow a code point that changes (or a new instance's). */
static bool changes(const struct sc_commit *c, int dscp_long)
{
	return !c || !c->had || (int)c->before.dscp_long != dscp_long;
}

int sc_commit_check(const struct sc_commit *c, int dscp_long, char *err, size_t len)
{
	struct tcfg_ctx ctx;
	char why[300];
	int ret;

	if (!changes(c, dscp_long))
		return FS_EXIT_OK;
	sc_route_ctx(dscp_long, &ctx);
	ret = tcfg_route_follow(&ctx, true, why, sizeof(why));
	if (ret)
		snprintf(err, len,
			 "dscp-long %d: the installed routes (route up) cannot follow it: %s",
			 dscp_long, why);
	return ret;
}

void sc_commit_rollback(const struct sc_commit *c, const struct sc_state *locked)
{
	struct sc_state st;
	int err;

	if (!c->had)
		return;
	if (!locked) {
		if (sc_state_open(c->o, &st, 1))
			return;
		locked = &st;
	}
	err = sc_config_write(locked, &c->before);
	if (err)
		pr_err("could not put the previous settings back: %s", strerror(-err));
	if (locked == &st)
		sc_state_close(&st);
}

int sc_commit_follow(struct sc_commit *c, const struct sc_state *locked)
{
	struct split_config now;
	struct tcfg_ctx ctx;
	char err[300];
	int ret;

	/* nothing live (nothing attached): nothing for the routes to follow */
	if (live_config(c->o, locked, &now) || !changes(c, now.dscp_long))
		return FS_EXIT_OK;
	sc_route_ctx(now.dscp_long, &ctx);
	ret = tcfg_route_follow(&ctx, false, err, sizeof(err));
	/* printed; the marks go back to what the routes match */
	if (ret)
		sc_commit_rollback(c, locked);
	return ret;
}
