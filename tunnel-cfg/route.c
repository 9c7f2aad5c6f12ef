// SPDX-License-Identifier: GPL-2.0
/*
 * route.c - "route up" and "route down": policy routing towards the SHORT
 * and LONG tunnels, in split mode (the product) or ECMP mode (the
 * baseline). What is installed: rules.c and routes.c.
 *
 * "up" converges: it installs the wanted routes (NLM_F_REPLACE, so
 * switching modes never leaves a prefix without a route) and the missing
 * rules first, then removes those of ours no longer wanted. Ours =
 * protocol TCFG_PROTO; nothing else is touched. Everything is validated
 * before the first change; if a request still fails on a first "up",
 * everything of ours is removed again. A good "up" records its resolved
 * settings (record.c) for the agent and "route show"; "down" removes the
 * record. While an agent has a failover plan in force (ctx->in_force), "up"
 * installs the routes of that plan rather than those of both tunnels up.
 * Both hold the lock of record.c, as the agent does when it changes routes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <json-c/json.h>

#include "flowsplit.h"
#include "tcfg.h"
#include "util.h"

/* the splitter's default long code point, when splitctl knows no live one */
#define TCFG_DEFAULT_DSCP_LONG FS_DEFAULT_DSCP_LONG

/* What "up" installs, worked out before anything changes. */
struct route_plan {
	int short_if, long_if;
	int dscp;		/* long code point */
	bool use_dscp;		/* FRA_DSCP selector, else the tos one */
	struct tcfg_spec record;	/* the settings as installed */
	struct health_plan health;	/* normal, or the agent's failover */
	struct tcfg_rules rules;
	struct tcfg_routes routes;
};

/* A tunnel must exist, be up, and be a device that leaves the router:
 * not the loopback (its traffic would never reach a WAN), not a LAN
 * interface of the same plan. Exit code, the reason in e. */
static int tunnel_dev(const struct tcfg_spec *s, const char *opt, const char *name,
		      int *ifindex, struct tcfg_err *e)
{
	int i;

	struct ifreq ifr = { 0 };
	int fd, ret;

	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		tcfg_fail(e, ENODEV, "interface '%s' does not exist", name);
		return FS_EXIT_RUNTIME;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ret = fd < 0 ? -1 : ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (ret)
		tcfg_fail(e, errno, "interface '%s': %s", name, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (ret)
		return FS_EXIT_RUNTIME;
	if (ifr.ifr_flags & IFF_LOOPBACK) {
		tcfg_fail(e, EINVAL,
			  "--%s '%s': a loopback device, not a tunnel: accepted: a device that "
			  "leaves the router (VXLAN, TUN, an SD-WAN appliance's interface)",
			  opt, name);
		return FS_EXIT_USAGE;
	}
	for (i = 0; i < s->nlan; i++)
		if (!strcmp(s->lan[i], name)) {
			tcfg_fail(e, EINVAL,
				  "--%s '%s': also a LAN interface (--lan-dev): accepted: a tunnel "
				  "device that is not one",
				  opt, name);
			return FS_EXIT_USAGE;
		}
	if (!(ifr.ifr_flags & IFF_UP)) {
		tcfg_fail(e, ENETDOWN, "tunnel interface '%s' is down: bring it up first", name);
		return FS_EXIT_RUNTIME;
	}
	return FS_EXIT_OK;
}

static int check_devices(const struct tcfg_spec *s, struct route_plan *p,
			 struct tcfg_err *e)
{
	int i, ret;

	for (i = 0; i < s->nlan; i++)
		if (!if_nametoindex(s->lan[i])) {
			tcfg_fail(e, ENODEV, "LAN interface '%s' does not exist", s->lan[i]);
			return FS_EXIT_RUNTIME;
		}
	ret = tunnel_dev(s, "short-dev", s->short_dev, &p->short_if, e);
	return ret ? ret : tunnel_dev(s, "long-dev", s->long_dev, &p->long_if, e);
}

/* Split mode: how the rules match the long code point (probes the kernel). */
static int pick_selector(struct nl *nl, const struct tcfg_spec *s, struct route_plan *p,
			 struct tcfg_err *e)
{
	if (s->mode != MODE_SPLIT)
		return FS_EXIT_OK;
	p->use_dscp = s->selector != SEL_TOS && tcfg_rules_dscp_supported(nl, s->table_long);
	if (s->selector == SEL_DSCP && !p->use_dscp) {
		tcfg_fail(e, EOPNOTSUPP,
			  "--selector dscp: this kernel's rules have no DSCP selector: accepted "
			  "here: tos (DSCP 1..7) or auto");
		return FS_EXIT_USAGE;
	}
	if (!p->use_dscp && (p->dscp < 1 || p->dscp > 7)) {
		tcfg_fail(e, EINVAL,
			  "long code point DSCP %d cannot be matched by this kernel's rules (tos "
			  "selector): accepted: DSCP 1..7",
			  p->dscp);
		return FS_EXIT_USAGE;
	}
	return FS_EXIT_OK;
}

/* long-rate: LONG's root must be free or ours (the operator's stays). */
static int longq_check(const struct tcfg_spec *s, struct tcfg_err *e)
{
	struct tcfg_longq_state st;

	if (!s->long_rate_bps)
		return FS_EXIT_OK;
	if (tcfg_longq_read(s->long_dev, &st, e->msg, sizeof(e->msg)))
		return FS_EXIT_RUNTIME;
	return st.owner == -EEXIST ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

int tcfg_spec_check_ctx(const struct tcfg_spec *s, const struct tcfg_ctx *ctx,
			char *err, size_t errlen)
{
	if (tcfg_spec_check(s, err, errlen))
		return -1;
	/* one truth: the routes match the code point the splitter marks */
	if (s->mode == MODE_SPLIT && s->dscp_long >= 0 && ctx->dscp_long >= 0 &&
	    s->dscp_long != ctx->dscp_long) {
		snprintf(err, errlen,
			 "dscp-long %d: the splitter marks long flows with DSCP %d: the routes "
			 "must match it (leave dscp-long out, or change the splitter's with "
			 "'splitctl set dscp-long %d': the routes follow)",
			 s->dscp_long, ctx->dscp_long, s->dscp_long);
		return -1;
	}
	return 0;
}

/* The routes of the plan in force: both tunnels, unless a running agent
 * has failed over (then re-running "up" must not undo its failover). */
static void health_routes(struct route_plan *p, const struct tcfg_in_force *f)
{
	struct health_plan normal = tcfg_plan_normal(&p->record);
	char text[64];

	p->health = tcfg_plan_in_force(&p->record, f);
	if (!tcfg_routes_for_plan(&p->record, p->short_if, p->long_if, &p->health, &p->routes))
		tcfg_routes_wanted(&p->record, p->short_if, p->long_if, &p->routes);
	if (!health_plan_equal(&p->health, &normal)) {
		health_plan_format(&p->health, text, sizeof(text));
		pr_info("route: tunnel health agent (pid %d) has a failover in force: %s",
			f->pid, text);
	}
}

/* Everything that can be checked before a change; nl opened on success.
 * Exit code, the reason in e. */
static int route_plan(const struct tcfg_spec *s, const struct tcfg_ctx *ctx,
		      struct nl *nl, struct route_plan *p, struct tcfg_err *e)
{
	static struct tcfg_routes foreign_at;
	int ret;

	if (tcfg_spec_check_ctx(s, ctx, e->msg, sizeof(e->msg)))
		return FS_EXIT_USAGE;
	p->dscp = s->dscp_long >= 0 ? s->dscp_long :
		  ctx->dscp_long >= 0 ? ctx->dscp_long : TCFG_DEFAULT_DSCP_LONG;
	ret = check_devices(s, p, e);
	if (ret)
		return ret;
	if (nl_open(nl)) {
		tcfg_fail(e, errno, "netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	ret = pick_selector(nl, s, p, e);
	if (!ret)
		ret = longq_check(s, e);
	if (ret) {
		nl_close(nl);
		return ret;
	}
	p->record = *s;
	p->record.dscp_long = p->dscp;
	p->record.selector = s->mode != MODE_SPLIT ? SEL_AUTO : p->use_dscp ? SEL_DSCP : SEL_TOS;
	tcfg_rules_wanted(s, p->dscp, p->use_dscp, &p->rules);
	health_routes(p, &ctx->in_force);
	/* never replace (nor later delete) a route of someone else, nor leave
	 * one in our tables that takes part of our prefixes' traffic: checked
	 * against the routes of both tunnels up (a plan in force of "main"
	 * installs none, but a later one will) */
	tcfg_routes_wanted(&p->record, p->short_if, p->long_if, &foreign_at);
	if (tcfg_routes_foreign(nl, &foreign_at, true, NULL, e)) {
		nl_close(nl);
		return FS_EXIT_RUNTIME;
	}
	return FS_EXIT_OK;
}

int tcfg_route_check(const struct tcfg_spec *s, const struct tcfg_ctx *ctx,
		     char *err, size_t errlen)
{
	static struct route_plan plan;
	struct tcfg_err e = { "" };
	struct nl nl;
	int ret;

	memset(&plan, 0, sizeof(plan));
	ret = route_plan(s, ctx, &nl, &plan, &e);
	if (!ret)
		nl_close(&nl);
	snprintf(err, errlen, "%s", e.msg);
	return ret;
}

int tcfg_route_follow(const struct tcfg_ctx *ctx, bool dry_run, char *err, size_t errlen)
{
	static struct tcfg_spec rec;
	int dscp_long = ctx->dscp_long;
	struct tcfg_err e = { "" };
	int ret = tcfg_record_read(&rec, &e);

	err[0] = '\0';
	if (ret == -ENOENT)
		return FS_EXIT_OK;	/* no routes of "route up" */
	if (ret) {
		snprintf(err, errlen, "%s", e.msg);
		return FS_EXIT_RUNTIME;
	}
	if (rec.mode != MODE_SPLIT || rec.dscp_long == dscp_long)
		return FS_EXIT_OK;
	rec.dscp_long = dscp_long;
	if (dry_run)
		return tcfg_route_check(&rec, ctx, err, errlen);
	return tcfg_route_up(&rec, ctx);
}

/* Remove every rule and route of ours (as much as possible). */
static int remove_all(struct nl *nl, struct tcfg_err *e)
{
	struct tcfg_err route_e;
	int ret = tcfg_rules_remove_all(nl, e);
	int ret2 = tcfg_routes_remove_all(nl, &route_e);

	if (!ret && ret2)
		*e = route_e;
	return ret ? ret : ret2;
}

/* Routes first (replaced in place), then rules, then what is left over. */
static int route_converge(struct nl *nl, const struct tcfg_spec *s,
			  const struct route_plan *p, const struct tcfg_rules *have,
			  bool fresh, struct tcfg_err *e)
{
	int ret = 0;

	if (s->mode == MODE_ECMP)
		ret = tcfg_hash_policy_set(fresh, e);
	if (!ret)
		ret = tcfg_routes_install(nl, &p->routes, e);
	if (!ret)
		ret = tcfg_rules_converge(nl, &p->rules, have, e);
	if (!ret)
		ret = tcfg_routes_remove_unwanted(nl, &p->routes, e);
	return ret;
}

/* The LONG shaper as rec asks, off the devices the last "up" recorded
 * (a swap of the roles, a new device). */
static int longq_up(const struct tcfg_spec *rec, const struct tcfg_ctx *ctx, struct tcfg_err *e)
{
	static struct tcfg_spec old;
	struct tcfg_err ignored;
	char what[128];
	bool had = !tcfg_record_read(&old, &ignored);
	int ret;

	ret = tcfg_longq_reconcile(had ? &old : NULL, rec, ctx->dscp_short, what, sizeof(what),
				   e->msg, sizeof(e->msg));
	if (ret)
		return ret;
	if (what[0])
		pr_info("route: LONG shaper: %s", what);
	return 0;
}

int tcfg_route_up(const struct tcfg_spec *s, const struct tcfg_ctx *ctx)
{
	static struct route_plan plan;
	static struct tcfg_rules have;
	struct tcfg_err e = { "" }, ignored;
	int ret, lock;
	bool fresh;
	struct nl nl;

	memset(&plan, 0, sizeof(plan));
	ret = route_plan(s, ctx, &nl, &plan, &e);
	if (ret) {
		pr_err("route: %s", e.msg);
		return ret;
	}
	lock = tcfg_lock(&e);
	if (lock < 0 || tcfg_rules_dump(&nl, &have, &e)) {
		pr_err("route: %s", e.msg);
		tcfg_unlock(lock);
		nl_close(&nl);
		return FS_EXIT_RUNTIME;
	}
	/* nothing of ours existed before: a failure leaves nothing behind */
	fresh = have.n == 0;
	ret = route_converge(&nl, s, &plan, &have, fresh, &e);
	if (ret && fresh) {
		remove_all(&nl, &ignored);
		tcfg_hash_policy_restore(&ignored);
		tcfg_record_remove(&ignored);
	}
	/* split routes never use multipath: the replaced hash policy returns */
	if (!ret && s->mode == MODE_SPLIT)
		ret = tcfg_hash_policy_restore(&e);
	if (!ret)
		ret = longq_up(&plan.record, ctx, &e);
	if (!ret)
		ret = tcfg_record_write(&plan.record, &e);
	tcfg_unlock(lock);
	nl_close(&nl);
	if (ret)
		pr_err("route: %s", e.msg);
	return ret ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

/* Remove the spill class and the LONG shaper of ours on both recorded
 * tunnels (best effort:
 * it goes with its device anyway): a "route up" that swapped the roles
 * leaves an earlier agent's class on what is LONG now. */
static void scav_remove_recorded(void)
{
	static struct tcfg_spec rec;
	struct tcfg_err ignored;
	const char *dev[2];
	char err[256];
	int i;

	if (tcfg_record_read(&rec, &ignored))
		return;
	dev[0] = rec.short_dev;
	dev[1] = rec.long_dev;
	for (i = 0; i < 2; i++) {
		if (dev[i][0] && tcfg_scav_remove(dev[i], err, sizeof(err)) < 0)
			pr_warn("route down: %s", err);
		/* and the LONG shaper of "route up --long-rate" */
		if (dev[i][0] && tcfg_longq_remove(dev[i], err, sizeof(err)) < 0)
			pr_warn("route down: %s", err);
	}
}

int tcfg_route_down(const struct tcfg_ctx *ctx)
{
	struct tcfg_err e = { "" };
	struct nl nl;
	int ret, lock;

	(void)ctx;
	if (nl_open(&nl)) {
		pr_err("route down: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	lock = tcfg_lock(&e);
	if (lock < 0) {
		pr_err("route down: %s", e.msg);
		nl_close(&nl);
		return FS_EXIT_RUNTIME;
	}
	/* the spill class on the recorded SHORT tunnel (an agent's, left by
	 * one killed before it could remove it) */
	scav_remove_recorded();
	/* whatever plan the agent left in force: every route of ours goes */
	ret = remove_all(&nl, &e);
	nl_close(&nl);
	if (!ret)
		ret = tcfg_record_remove(&e);
	if (!ret)
		ret = tcfg_hash_policy_restore(&e);
	tcfg_unlock(lock);
	if (ret)
		pr_err("route down: %s", e.msg);
	return ret ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

/* ---- down: every rule and route of ours, counted ------------------------------------- */
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

int tcfg_routes_down(struct tcfg_down_result *r, char *err, size_t errlen)
{
	struct tcfg_err e = { "" }, e2 = { "" };
	int lock, ret;
	struct nl nl;

	if (nl_open(&nl)) {
		ret = -errno;
		snprintf(err, errlen, "netlink: %s", strerror(-ret));
		return ret;
	}
	/* the agent changes routes under the same lock, and finds no record
	 * afterwards; every step is tried, the first error kept */
	lock = tcfg_lock(&e);
	ret = lock < 0 ? lock : count_ours(&nl, r, &e);
	if (lock >= 0) {
		scav_remove_recorded();
		keep_first(&ret, &e, tcfg_rules_remove_all(&nl, &e2), &e2);
		keep_first(&ret, &e, tcfg_routes_remove_all(&nl, &e2), &e2);
		keep_first(&ret, &e, tcfg_record_remove(&e2), &e2);
		keep_first(&ret, &e, tcfg_hash_policy_restore(&e2), &e2);
	}
	tcfg_unlock(lock);
	nl_close(&nl);
	if (ret)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

/* ---- what an "up" with want changes of the recorded one ------------------------ */
/* A value of the record's JSON as text (lists space separated). */
static void json_text(struct json_object *v, char *buf, size_t len)
{
	size_t off = 0, i, n;

	buf[0] = '\0';
	if (!v)
		return;
	if (!json_object_is_type(v, json_type_array)) {
		snprintf(buf, len, "%s", json_object_get_string(v));
		return;
	}
	n = json_object_array_length(v);
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? " " : "",
				json_object_get_string(json_object_array_get_idx(v, i)));
}

/* s's settings as the record holds them, and the record's: 0, -ENOENT
 * (nothing recorded) or -EINVAL (unreadable). */
static int spec_pair(const struct tcfg_spec *want, struct json_object **w,
		     struct json_object **r)
{
	static struct tcfg_spec rec;
	struct tcfg_err e;
	int ret;

	memset(&rec, 0, sizeof(rec));
	ret = tcfg_record_read(&rec, &e);
	if (ret)
		return ret;
	*w = tcfg_spec_to_json(want);
	*r = tcfg_spec_to_json(&rec);
	return 0;
}

int tcfg_route_diff(const struct tcfg_spec *want,
		    void (*fn)(void *u, const char *key, const char *from, const char *to),
		    void *u)
{
	char from[TCFG_MAX_PREFIXES * TCFG_PREFIX_STRLEN], to[sizeof(from)];
	struct json_object *w, *r, *rv;
	int ret = spec_pair(want, &w, &r);

	if (ret)
		return ret;
	json_object_object_foreach(w, key, wv) {
		/* resolved at "up": compared only when want names one */
		if ((!strcmp(key, "dscp-long") && want->dscp_long < 0) ||
		    (!strcmp(key, "selector") && want->selector == SEL_AUTO))
			continue;
		json_text(wv, to, sizeof(to));
		json_text(json_object_object_get_ex(r, key, &rv) ? rv : NULL, from, sizeof(from));
		if (strcmp(from, to))
			fn(u, key, from, to);
	}
	json_object_put(w);
	json_object_put(r);
	return 0;
}

/* Is @item in the array @key of @o? */
static bool json_list_has(struct json_object *o, const char *key, const char *item)
{
	struct json_object *l;
	size_t i, n;

	if (!json_object_object_get_ex(o, key, &l))
		return false;
	n = json_object_array_length(l);
	for (i = 0; i < n; i++)
		if (!strcmp(item, json_object_get_string(json_object_array_get_idx(l, i))))
			return true;
	return false;
}

static const char *json_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

/* Is @item of the recorded list @k still wanted? A gateway belongs to its
 * tunnel device, not to a role: a swap that gives the devices again with
 * their gateways drops nothing. */
static bool removal_kept(struct json_object *w, struct json_object *r, const char *k,
			 const char *item)
{
	const char *dev;

	if (strncmp(k, "via-", 4))
		return json_list_has(w, k, item);
	dev = json_str(r, strcmp(k, "via-short") ? "long-dev" : "short-dev");
	return (!strcmp(dev, json_str(w, "short-dev")) && json_list_has(w, "via-short", item)) ||
	       (!strcmp(dev, json_str(w, "long-dev")) && json_list_has(w, "via-long", item));
}

int tcfg_route_removals(const struct tcfg_spec *want, char *what, size_t len)
{
	static const char *const lists[] = { "prefix", "lan-dev", "via-short", "via-long", NULL };
	struct json_object *w, *r, *rl;
	size_t off = 0, i, nr;
	int n = 0, k, added;
	const char *item;

	what[0] = '\0';
	if (spec_pair(want, &w, &r))
		return 0;
	for (k = 0; lists[k]; k++) {
		if (!json_object_object_get_ex(r, lists[k], &rl))
			continue;
		nr = json_object_array_length(rl);
		added = 0;
		for (i = 0; i < nr; i++) {
			item = json_object_get_string(json_object_array_get_idx(rl, i));
			if (removal_kept(w, r, lists[k], item))
				continue;
			n++;
			if (!added && off < len)
				off += snprintf(what + off, len - off, "%s%s", off ? "; " : "",
						lists[k]);
			if (off < len)
				off += snprintf(what + off, len - off, " %s", item);
			added = 1;
		}
	}
	json_object_put(w);
	json_object_put(r);
	return n;
}
