// SPDX-License-Identifier: GPL-2.0
/*
 * down.c - "splitctl down", tunnel-cfg's part: everything of ours in this
 * network namespace. Rules and routes carry protocol TCFG_PROTO, tunnels
 * the owner tag of "tunnel add" (TCFG_TUNNEL_TAG): nothing else is
 * touched. Routes and rules go first, so that traffic falls back to the
 * main table before the tunnels vanish. Running it again finds nothing
 * and changes nothing.
 */
#include <errno.h>
#include <string.h>

#include "failover.h"
#include "tcfg.h"
#include "util.h"

/* Count our rules and routes (before they go). */
static int count_ours(struct nl *nl, struct tcfg_down_result *r, struct tcfg_err *e)
{
	static struct tcfg_rules rules;
	static struct tcfg_routes routes;
	int ret = tcfg_rules_dump(nl, &rules, e);

	if (!ret)
		ret = tcfg_routes_dump(nl, &routes, e);
	if (!ret) {
		r->rules = rules.n;
		r->routes = routes.n;
	}
	return ret;
}

/* The first error wins: *ret and *e keep it. */
static void keep_first(int *ret, struct tcfg_err *e, int err, const struct tcfg_err *e2)
{
	if (err && !*ret) {
		*ret = err;
		*e = *e2;
	}
}

int tcfg_down(struct tcfg_down_result *r)
{
	struct tcfg_err e = { "" }, e2 = { "" };
	int lock, ret;
	struct nl nl;

	memset(r, 0, sizeof(*r));
	if (nl_open(&nl)) {
		pr_err("down: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	/* the agent changes routes under the same lock, and finds no record
	 * afterwards; every step is tried, the first error kept */
	lock = tcfg_lock(&e);
	ret = lock < 0 ? lock : count_ours(&nl, r, &e);
	if (lock >= 0) {
		keep_first(&ret, &e, tcfg_rules_remove_all(&nl, &e2), &e2);
		keep_first(&ret, &e, tcfg_routes_remove_all(&nl, &e2), &e2);
		keep_first(&ret, &e, tcfg_record_remove(&e2), &e2);
		keep_first(&ret, &e, tcfg_hash_policy_restore(&e2), &e2);
		/* the lock file and health of an agent killed with -9 */
		tcfg_agent_remove_stale();
	}
	tcfg_unlock(lock);
	keep_first(&ret, &e, tcfg_tunnels_remove_all(&nl, r, &e2), &e2);
	nl_close(&nl);
	if (ret)
		pr_err("down: %s", e.msg);
	return ret ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}
