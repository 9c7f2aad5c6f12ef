// SPDX-License-Identifier: GPL-2.0
/*
 * plan.c - the routes a health plan (health.h) puts in place, the
 * converge that installs them, and the check of what the kernel lacks.
 *
 *   split, ROUTE: table SHORT over the tunnel short_via names, table LONG
 *                 over the one long_via names (SHORT down: both over LONG;
 *                 LONG down: both over SHORT)
 *   ecmp,  ROUTE: table SHORT: multipath over the short_via members; one
 *                 member left is a plain route
 *   MAIN:         none of our routes: lookups fall through to main (the
 *                 rules stay)
 *   WAIT, KEEP:   nothing changes
 *
 * A tunnel's next hop is its device with its gateway of the prefix's
 * family (--via-short / --via-long), as "route up" installs it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "tcfg.h"

enum health_mode tcfg_health_mode(const struct tcfg_spec *s)
{
	return s->mode == MODE_ECMP ? HEALTH_MODE_ECMP : HEALTH_MODE_SPLIT;
}

struct health_plan tcfg_plan_normal(const struct tcfg_spec *s)
{
	/* both tunnels up: each class over its own tunnel, or both in one
	 * multipath route */
	if (s->mode == MODE_ECMP)
		return (struct health_plan){ .action = HEALTH_PLAN_ROUTE,
					     .short_via = HEALTH_VIA_SHORT | HEALTH_VIA_LONG };
	return (struct health_plan){ .action = HEALTH_PLAN_ROUTE,
				     .short_via = HEALTH_VIA_SHORT, .long_via = HEALTH_VIA_LONG };
}

/* Whether dev is down in the plan f has in force (a device it does not
 * steer is up). */
static bool in_force_down(const struct tcfg_in_force *f, const char *dev)
{
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		if (!strcmp(f->dev[t], dev))
			return f->down[t];
	return false;
}

struct health_plan tcfg_plan_in_force(const struct tcfg_spec *s, const struct tcfg_in_force *f)
{
	/* the agent's verdicts follow the tunnel devices into s's roles */
	if (f && f->pid)
		return f->plan[tcfg_health_mode(s)][in_force_down(f, s->short_dev)]
			      [in_force_down(f, s->long_dev)];
	return tcfg_plan_normal(s);
}

static struct tcfg_nexthop tunnel_nexthop(const struct tcfg_spec *s, int short_if, int long_if,
					  enum health_tunnel t, int family)
{
	const struct sc_prefix *via = t == HEALTH_SHORT ? s->via_short : s->via_long;
	struct tcfg_nexthop nh = { .oif = t == HEALTH_SHORT ? short_if : long_if };

	nh.via = via[tcfg_fam_idx(family)];	/* family 0 when not given */
	return nh;
}

/* One route of table over the tunnels in the via bits (SHORT first). */
static void add_route(struct tcfg_routes *want, const struct tcfg_spec *s, int short_if,
		      int long_if, const struct sc_prefix *dst, __u32 table, unsigned int via)
{
	struct tcfg_route rt = { .family = dst->family, .dst = *dst, .table = table };
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		if (via & HEALTH_VIA(t))
			rt.nh[rt.nnh++] = tunnel_nexthop(s, short_if, long_if, t, dst->family);
	if (rt.nnh && want->n < TCFG_MAX_OBJS)
		want->r[want->n++] = rt;
}

bool tcfg_routes_for_plan(const struct tcfg_spec *s, int short_if, int long_if,
			  const struct health_plan *plan, struct tcfg_routes *want)
{
	int i;

	if (plan->action == HEALTH_PLAN_WAIT || plan->action == HEALTH_PLAN_KEEP)
		return false;
	want->n = 0;
	if (plan->action == HEALTH_PLAN_MAIN)
		return true;
	for (i = 0; i < s->nprefixes; i++) {
		add_route(want, s, short_if, long_if, &s->prefixes[i], s->table_short,
			  plan->short_via);
		if (s->mode == MODE_SPLIT)
			add_route(want, s, short_if, long_if, &s->prefixes[i], s->table_long,
				  plan->long_via);
	}
	return true;
}

void tcfg_rules_recorded(const struct tcfg_spec *s, struct tcfg_rules *want)
{
	tcfg_rules_wanted(s, s->dscp_long, s->selector == SEL_DSCP, want);
}

void tcfg_tunnel_ifindexes(const struct tcfg_spec *s, int *short_if, int *long_if)
{
	*short_if = if_nametoindex(s->short_dev);
	*long_if = if_nametoindex(s->long_dev);
}

/* ---- the degraded check ---------------------------------------------------------- */
void tcfg_missing_add(struct tcfg_missing *m, const char *fmt, ...)
{
	va_list ap;

	m->total++;
	if (m->n == TCFG_MAX_MISSING)
		return;
	va_start(ap, fmt);
	vsnprintf(m->what[m->n++], sizeof(m->what[0]), fmt, ap);
	va_end(ap);
}

static bool rule_same(const struct tcfg_rule *a, const struct tcfg_rule *b)
{
	return a->family == b->family && a->prio == b->prio && a->table == b->table &&
	       !strcmp(a->iif, b->iif) && a->dscp == b->dscp && a->tos == b->tos;
}

static void check_route(const struct tcfg_route *w, const struct tcfg_routes *have,
			struct tcfg_missing *m)
{
	char want[TCFG_PREFIX_STRLEN * 3 + 64], got[TCFG_PREFIX_STRLEN * 3 + 64];
	int i, j;

	tcfg_fmt_route(w, want, sizeof(want));
	for (i = 0; i < have->n && !tcfg_route_same_dst(w, &have->r[i]); i++)
		;
	if (i == have->n) {
		tcfg_missing_add(m, "table %u: route %s missing", w->table, want);
		return;
	}
	if (!tcfg_route_same(w, &have->r[i])) {
		tcfg_fmt_route(&have->r[i], got, sizeof(got));
		tcfg_missing_add(m, "table %u: route %s instead of %s", w->table, got, want);
		return;
	}
	for (j = 0; j < have->r[i].nnh; j++)
		if (have->r[i].nh[j].dead) {
			char dev[IF_NAMESIZE] = "?";

			if_indextoname(have->r[i].nh[j].oif, dev);
			tcfg_missing_add(m, "table %u: route %s: next hop dev %s dead", w->table,
					 want, dev);
		}
}

void tcfg_check(const struct tcfg_routes *want_routes, const struct tcfg_rules *want_rules,
		const struct tcfg_routes *have_routes, const struct tcfg_rules *have_rules,
		struct tcfg_missing *m)
{
	int i, j;

	m->n = m->total = 0;
	for (i = 0; i < want_rules->n; i++) {
		const struct tcfg_rule *r = &want_rules->r[i];

		for (j = 0; j < have_rules->n && !rule_same(r, &have_rules->r[j]); j++)
			;
		if (j == have_rules->n)
			tcfg_missing_add(m, "rule %s priority %u%s%s lookup %u missing",
				    r->family == AF_INET6 ? "ipv6" : "ipv4", r->prio,
				    r->iif[0] ? " iif " : "", r->iif, r->table);
	}
	for (i = 0; i < want_routes->n; i++)
		check_route(&want_routes->r[i], have_routes, m);
	for (i = 0; i < have_routes->n; i++) {
		for (j = 0; j < want_routes->n &&
			    !tcfg_route_same_dst(&have_routes->r[i], &want_routes->r[j]); j++)
			;
		if (j == want_routes->n) {
			char got[TCFG_PREFIX_STRLEN * 3 + 64];

			tcfg_fmt_route(&have_routes->r[i], got, sizeof(got));
			tcfg_missing_add(m, "table %u: route %s not wanted",
					 have_routes->r[i].table, got);
		}
	}
}

/* ---- converge -------------------------------------------------------------------- */
static const struct tcfg_route *find_dst(const struct tcfg_routes *set, const struct tcfg_route *rt)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (tcfg_route_same_dst(&set->r[i], rt))
			return &set->r[i];
	return NULL;
}

/* A dead next hop is revived by the kernel when its link returns; a route
 * with one is replaced anyway only when its next hops differ. */
int tcfg_routes_converge(struct nl *nl, const struct tcfg_routes *want, int *changed,
			 struct tcfg_err *e)
{
	static struct tcfg_routes have;
	struct tcfg_err first = { "" };
	int i, ret, n = 0, err = 0;

	ret = tcfg_routes_dump(nl, &have, e);
	if (ret)
		return ret;
	for (i = 0; i < want->n; i++) {
		const struct tcfg_route *cur = find_dst(&have, &want->r[i]);
		static struct tcfg_routes one;

		if (cur && tcfg_route_same(cur, &want->r[i]))
			continue;
		/* someone's route there since: never replaced */
		one.n = 1;
		one.r[0] = want->r[i];
		ret = cur ? 0 : tcfg_routes_foreign(nl, &one, false, NULL, e);
		if (ret) {
			if (!err) {
				err = ret;
				first = *e;
			}
			continue;
		}
		ret = tcfg_route_install(nl, &want->r[i], e);
		if (ret && !err) {
			err = ret;
			first = *e;
		}
		n += !ret;
	}
	for (i = 0; i < have.n; i++) {
		if (find_dst(want, &have.r[i]))
			continue;
		ret = tcfg_route_delete(nl, &have.r[i], e);
		if (ret && ret != -ENOENT && !err) {
			err = ret;
			first = *e;
		}
		n += !ret;
	}
	if (changed)
		*changed = n;
	if (err)
		*e = first;
	return err;
}

/* ---- plans --------------------------------------------------------------------- */
bool health_plan_equal(const struct health_plan *a,
		       const struct health_plan *b)
{
	return a->action == b->action && a->short_via == b->short_via &&
	       a->long_via == b->long_via;
}

static const char *via_name(unsigned int via)
{
	switch (via) {
	case HEALTH_VIA_SHORT:
		return "SHORT";
	case HEALTH_VIA_LONG:
		return "LONG";
	case HEALTH_VIA_SHORT | HEALTH_VIA_LONG:
		return "SHORT+LONG";
	}
	return "none";
}

int health_plan_format(const struct health_plan *plan, char *buf, size_t len)
{
	switch (plan->action) {
	case HEALTH_PLAN_WAIT:
		return snprintf(buf, len, "wait");
	case HEALTH_PLAN_KEEP:
		return snprintf(buf, len, "keep");
	case HEALTH_PLAN_MAIN:
		return snprintf(buf, len, "main");
	case HEALTH_PLAN_ROUTE:
		break;
	}
	if (!plan->long_via)
		return snprintf(buf, len, "short=%s", via_name(plan->short_via));
	return snprintf(buf, len, "short=%s long=%s", via_name(plan->short_via),
			via_name(plan->long_via));
}
