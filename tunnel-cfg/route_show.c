// SPDX-License-Identifier: GPL-2.0
/*
 * route_show.c - "route show": the mode, whether the kernel holds what the
 * record of "route up" and the plan in force want (the degraded state), our
 * rules and routes as the kernel has them, the counters of the tunnels
 * those routes use, and what the caller adds (ctx->show_more: splitctl
 * adds the tunnel health an agent publishes, health/health_file.c). Text
 * and JSON from the same print_* calls (lib/json_print.h):
 *
 *   {"mode": "split"|"ecmp"|"down",
 *    "state": "ok"|"degraded"|"down"|"unknown", "degraded": BOOL,
 *    "missing": [TEXT...],
 *    "rules": [{"family","priority","table","iif","dscp","tos"}],
 *    "routes": [{"table","dst","devs":[NAME...],
 *                "nexthops":[{"dev","via","dead"}]}],
 *    "tunnels": [{"name","up","tx_packets","tx_bytes","rx_packets","rx_bytes"}],
 *    "health": {"monitored": false} | {"monitored": true, "pid", "plan",
 *               "in_force", "both_down", "tunnels": [{"dev","role","state",
 *               "for_s","since_unix","link_down","rtt_ms","rtt_avg_ms",
 *               "timeout_ms","loss_pct","flaps","probes","missed",
 *               "families":[{"family","state","target","rtt_ms","loss_pct",
 *               "probes","missed"}]}]}}
 *
 * "iif" is "" for any input interface, "dscp" -1 without a DSCP selector,
 * "tos" 0 without a tos selector, "via" "" without a gateway. "state" is
 * "unknown" when objects of ours exist without a record of "route up"
 * (installed by a version without records).
 *
 * tcfg_doctor() gathers the same facts as a struct for "splitctl doctor"
 * (the record, what is missing, routes of others, the kernel's DSCP
 * selector, the tunnels' MTUs); splitctl words the checks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "json_print.h"
#include "tcfg.h"
#include "util.h"

/* IF_OPER_* of <linux/if.h> (RFC 2863), which clashes with <net/if.h> */
#define TCFG_OPER_UNKNOWN 0
#define TCFG_OPER_UP 6

#define TCFG_MAX_SHOWN_TUNNELS 8

struct link_info {
	char name[IF_NAMESIZE];
	bool up;
	struct rtnl_link_stats64 st;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_info *li = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			snprintf(li->name, sizeof(li->name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_OPERSTATE:
			li->up = mnl_attr_get_u8(a) == TCFG_OPER_UP ||
				 mnl_attr_get_u8(a) == TCFG_OPER_UNKNOWN;
			break;
		case IFLA_STATS64:
			if (mnl_attr_get_payload_len(a) >= sizeof(li->st))
				memcpy(&li->st, mnl_attr_get_payload(a), sizeof(li->st));
			break;
		}
	}
	return MNL_CB_OK;
}

static int get_link(struct nl *nl, int ifindex, struct link_info *li)
{
	memset(li, 0, sizeof(*li));
	return nl_talk(nl, tcfg_msg_link(nl->buf, RTM_GETLINK, ifindex), link_cb, li);
}

/* A rule of ours carrying a code point selector means split mode. */
static const char *mode_name(const struct tcfg_rules *rules)
{
	int i;

	for (i = 0; i < rules->n; i++)
		if (rules->r[i].dscp >= 0 || rules->r[i].tos)
			return "split";
	return rules->n ? "ecmp" : "down";
}

void tcfg_show_rules(const struct tcfg_rules *rules)
{
	int i;

	open_json_array(PRINT_JSON, "rules");
	for (i = 0; i < rules->n; i++) {
		const struct tcfg_rule *r = &rules->r[i];

		open_json_object(NULL);
		print_string(PRINT_ANY, "family", "rule: %s",
			     r->family == AF_INET ? "ipv4" : "ipv6");
		print_uint(PRINT_ANY, "priority", " priority %llu", r->prio);
		print_string(PRINT_JSON, "iif", NULL, r->iif);
		if (r->iif[0])
			print_string(PRINT_FP, NULL, " iif %s", r->iif);
		print_int(PRINT_JSON, "dscp", NULL, r->dscp);
		if (r->dscp >= 0)
			print_int(PRINT_FP, NULL, " dscp %lld", r->dscp);
		print_uint(PRINT_JSON, "tos", NULL, r->tos);
		if (r->tos)
			print_uint(PRINT_FP, NULL, " tos 0x%02llx", r->tos);
		print_uint(PRINT_ANY, "table", " lookup %llu", r->table);
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

static void show_nexthop(const struct tcfg_nexthop *nh, bool multipath)
{
	char name[IF_NAMESIZE] = "?", via[INET6_ADDRSTRLEN] = "";

	if_indextoname(nh->oif, name);
	if (nh->via.family)
		inet_ntop(nh->via.family, nh->via.addr, via, sizeof(via));
	open_json_object(NULL);
	if (multipath)
		print_string(PRINT_FP, NULL, "%s", " nexthop");
	print_string(PRINT_JSON, "via", NULL, via);
	if (via[0])
		print_string(PRINT_FP, NULL, " via %s", via);
	print_string(PRINT_ANY, "dev", " dev %s", name);
	print_bool(PRINT_JSON, "dead", NULL, nh->dead);
	if (nh->dead)
		print_string(PRINT_FP, NULL, "%s", " dead");
	close_json_object();
}

/* The "routes" array of route show: destination, next hops (dev, gateway). */
static void tcfg_show_routes(const struct tcfg_routes *routes)
{
	char buf[TCFG_PREFIX_STRLEN];
	int i, j;

	open_json_array(PRINT_JSON, "routes");
	for (i = 0; i < routes->n; i++) {
		const struct tcfg_route *rt = &routes->r[i];

		open_json_object(NULL);
		print_uint(PRINT_ANY, "table", "route: table %llu", rt->table);
		tcfg_fmt_prefix(&rt->dst, buf, sizeof(buf));
		print_string(PRINT_ANY, "dst", " %s", buf);
		open_json_array(PRINT_JSON, "devs");
		for (j = 0; j < rt->nnh; j++) {
			char name[IF_NAMESIZE] = "?";

			if_indextoname(rt->nh[j].oif, name);
			print_string(PRINT_JSON, NULL, NULL, name);
		}
		close_json_array(PRINT_JSON, NULL);
		open_json_array(PRINT_JSON, "nexthops");
		for (j = 0; j < rt->nnh; j++)
			show_nexthop(&rt->nh[j], rt->nnh > 1);
		close_json_array(PRINT_JSON, NULL);
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/* The interfaces our routes go out of, each once. */
static int route_devs(const struct tcfg_routes *routes, int *ifs, int max)
{
	int i, j, k, n = 0;

	for (i = 0; i < routes->n; i++)
		for (j = 0; j < routes->r[i].nnh; j++) {
			int oif = routes->r[i].nh[j].oif;

			for (k = 0; k < n && ifs[k] != oif; k++)
				;
			if (k == n && n < max)
				ifs[n++] = oif;
		}
	return n;
}

static void show_tunnels(struct nl *nl, const struct tcfg_routes *routes)
{
	int ifs[TCFG_MAX_SHOWN_TUNNELS], n, i;
	struct link_info li;

	n = route_devs(routes, ifs, TCFG_MAX_SHOWN_TUNNELS);
	open_json_array(PRINT_JSON, "tunnels");
	for (i = 0; i < n; i++) {
		if (get_link(nl, ifs[i], &li))
			continue;	/* gone since the dump */
		open_json_object(NULL);
		print_string(PRINT_ANY, "name", "tunnel: %s", li.name);
		print_bool(PRINT_JSON, "up", NULL, li.up);
		print_string(PRINT_FP, NULL, " %s", li.up ? "up" : "down");
		print_uint(PRINT_ANY, "tx_packets", " tx %llu packets", li.st.tx_packets);
		print_uint(PRINT_ANY, "tx_bytes", " %llu bytes", li.st.tx_bytes);
		print_uint(PRINT_ANY, "rx_packets", ", rx %llu packets", li.st.rx_packets);
		print_uint(PRINT_ANY, "rx_bytes", " %llu bytes", li.st.rx_bytes);
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/* What the record of "up" and the plan in force want, against the kernel. */
struct show_state {
	struct tcfg_spec spec;
	bool recorded;
	struct tcfg_missing missing;
	struct tcfg_missing problems;	/* health: failover, tunnels down, no agent */
};

/*
 * What makes a recorded setup degraded though its routes are as the plan
 * in force wants: no agent (nothing probes, no class fails over), a class
 * failed over (its tunnel down in the plan in force), a tunnel device
 * down or gone.
 */
/* "family not probed": fam (0 IPv4, 1 IPv6) of the routes over tunnel dev,
 * whose recorded gateway of that family is gw (family 0: none). */
static void unprobed_family(struct tcfg_missing *m, const char *dev, const char *role, int fam,
			    const struct sc_prefix *gw)
{
	static const char *const name[2] = { "IPv4", "IPv6" };
	char a[INET6_ADDRSTRLEN] = "";

	if (gw->family)
		inet_ntop(gw->family, gw->addr, a, sizeof(a));
	if (a[0])
		tcfg_missing_add(m,
				 "tunnel %s (%s): family not probed: its %s routes have no "
				 "failover (the agent could not probe gateway %s: see its log)",
				 dev, role, name[fam], a);
	else
		tcfg_missing_add(m,
				 "tunnel %s (%s): family not probed: its %s routes have no "
				 "failover (no %s gateway recorded: route up ... --via-%s "
				 "%s-ADDRESS)",
				 dev, role, name[fam], name[fam], role, name[fam]);
}

/*
 * A tunnel, or an address family of its routes, that the agent does not
 * probe: a failure there fails nothing over. A family is carried when a
 * prefix of it is routed; it can be probed only through a gateway of it.
 */
static void unprobed_families(const struct tcfg_spec *s, const struct tcfg_in_force *f,
			      struct tcfg_missing *m)
{
	static const char *const role[HEALTH_TUNNELS] = { "short", "long" };
	const char *dev[HEALTH_TUNNELS] = { s->short_dev, s->long_dev };
	const struct sc_prefix *via[HEALTH_TUNNELS] = { s->via_short, s->via_long };
	bool carried[2] = { false, false };
	int t, i, fam;

	for (i = 0; i < s->nprefixes; i++)
		carried[s->prefixes[i].family == AF_INET6] = true;
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		for (i = 0; i < HEALTH_TUNNELS && strcmp(f->dev[i], dev[t]); i++)
			;
		if (i == HEALTH_TUNNELS) {
			tcfg_missing_add(m, "tunnel %s (%s) is not probed: the agent (pid %d) "
					    "probes %s and %s: no failover for it",
					 dev[t], role[t], f->pid, f->dev[0], f->dev[1]);
			continue;
		}
		for (fam = 0; fam < 2; fam++)
			if (carried[fam] && !f->probed[i][fam])
				unprobed_family(m, dev[t], role[t], fam, &via[t][fam]);
	}
}

/* long-rate recorded, the LONG shaper not there: LONG's queue is in the
 * WAN again (a device made anew, a qdisc replaced by hand) */
static void longq_problem(const struct tcfg_spec *s, struct tcfg_missing *m)
{
	struct tcfg_longq_state st;
	char err[256];

	if (!s->long_rate_bps || !if_nametoindex(s->long_dev))
		return;
	if (tcfg_longq_read(s->long_dev, &st, err, sizeof(err)) || st.owner != 1)
		tcfg_missing_add(m,
				 "%s (long): the LONG shaper of long-rate is missing: its queue "
				 "forms in the WAN, short packets behind bulk (route up again)",
				 s->long_dev);
}

static void health_problems(struct nl *nl, const struct tcfg_spec *s,
			    const struct tcfg_ctx *ctx, struct tcfg_missing *m)
{
	const struct tcfg_in_force *f = &ctx->in_force;
	static const char *const role[HEALTH_TUNNELS] = { "short", "long" };
	const char *dev[HEALTH_TUNNELS] = { s->short_dev, s->long_dev };
	struct link_info li;
	int t, i, ifindex;

	m->n = m->total = 0;
	if (!f->pid && ctx->agent_pid)
		tcfg_missing_add(m,
				 "the agent (pid %d) does not probe the tunnels (health off, or "
				 "starting): no class fails over",
				 ctx->agent_pid);
	else if (!f->pid)
		tcfg_missing_add(m, "no agent: the tunnels are not probed and no class fails over: "
				    "start 'splitctl run'");
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		ifindex = if_nametoindex(dev[t]);
		if (!ifindex || get_link(nl, ifindex, &li))
			tcfg_missing_add(m, "tunnel %s (%s) is gone", dev[t], role[t]);
		else if (!li.up)
			tcfg_missing_add(m, "tunnel %s (%s) is down", dev[t], role[t]);
		for (i = 0; f->pid && i < HEALTH_TUNNELS; i++)
			if (f->down[i] && !strcmp(f->dev[i], dev[t]))
				tcfg_missing_add(m,
						 "tunnel %s (%s) failed: the %s class runs over %s",
						 dev[t], role[t], role[t], dev[!t]);
	}
	if (f->pid && f->families_known)
		unprobed_families(s, f, m);
	longq_problem(s, m);
}

/* The rules and routes a recorded spec wants under the plan in force. */
static void recorded_wants(const struct tcfg_spec *s, const struct tcfg_in_force *f,
			   struct tcfg_routes *want_routes, struct tcfg_rules *want_rules)
{
	struct health_plan plan = tcfg_plan_in_force(s, f);
	int short_if, long_if;

	tcfg_tunnel_ifindexes(s, &short_if, &long_if);
	if (!tcfg_routes_for_plan(s, short_if, long_if, &plan, want_routes))
		tcfg_routes_wanted(s, short_if, long_if, want_routes);
	tcfg_rules_recorded(s, want_rules);
}

static void check_state(struct nl *nl, const struct tcfg_rules *rules,
			const struct tcfg_routes *routes, const struct tcfg_ctx *ctx,
			struct show_state *st)
{
	static struct tcfg_routes want_routes;
	static struct tcfg_rules want_rules;
	struct tcfg_err e;

	st->recorded = !tcfg_record_read(&st->spec, &e);
	st->missing.n = st->missing.total = 0;
	st->problems.n = st->problems.total = 0;
	if (!st->recorded)
		return;
	health_problems(nl, &st->spec, ctx, &st->problems);
	recorded_wants(&st->spec, &ctx->in_force, &want_routes, &want_rules);
	tcfg_check(&want_routes, &want_rules, routes, rules, &st->missing);
}

static void show_state(const struct show_state *st, bool installed)
{
	const char *routes = !st->recorded ? (installed ? "unknown" : "down") :
			     st->missing.total ? "degraded" : "ok";
	const char *state = !strcmp(routes, "ok") && st->problems.total ? "degraded" : routes;
	int i;

	print_string(PRINT_ANY, "state", "state: %s", state);
	print_bool(PRINT_JSON, "degraded", NULL, !strcmp(state, "degraded"));
	/* the rules and routes against the plan in force alone */
	print_string(PRINT_JSON, "routes_state", NULL, routes);
	open_json_array(PRINT_JSON, "missing");
	for (i = 0; i < st->missing.n; i++)
		print_string(PRINT_ANY, NULL, i ? "; %s" : " (%s", st->missing.what[i]);
	if (st->missing.total > st->missing.n)
		print_int(PRINT_FP, NULL, "; and %lld more", st->missing.total - st->missing.n);
	if (st->missing.n)
		print_string(PRINT_FP, NULL, "%s", ")");
	if (!st->recorded && installed)
		print_string(PRINT_FP, NULL, "%s", " (no record of route up: run route up again)");
	close_json_array(PRINT_JSON, NULL);
	print_nl();
	open_json_array(PRINT_JSON, "problems");
	for (i = 0; i < st->problems.n; i++)
		print_string(PRINT_ANY, NULL, "degraded: %s\n", st->problems.what[i]);
	close_json_array(PRINT_JSON, NULL);
}

/* "long_shaper": the LONG shaper of the record's long-rate (null: none
 * recorded), its classes' counters */
static void show_longq(const struct show_state *st)
{
	static const char *const name[TCFG_LONGQ_CLASSES] = { "short", "bulk" };
	struct tcfg_longq_state q;
	char rate[32], top[32], err[256];
	int k;

	if (!st->recorded || !st->spec.long_rate_bps) {
		print_null(PRINT_JSON, "long_shaper", NULL, NULL);
		return;
	}
	if (tcfg_longq_read(st->spec.long_dev, &q, err, sizeof(err)))
		q.owner = 0;
	sc_rate_text(st->spec.long_rate_bps, rate, sizeof(rate));
	sc_rate_text(tcfg_longq_top(st->spec.long_rate_bps), top, sizeof(top));
	open_json_object("long_shaper");
	print_string(PRINT_ANY, "dev", "long shaper: %s", st->spec.long_dev);
	print_bool(PRINT_JSON, "installed", NULL, q.owner == 1);
	print_string(PRINT_FP, NULL, " %s", q.owner == 1 ? "installed" : "MISSING");
	print_string(PRINT_ANY, "long_rate", " long-rate %s", rate);
	print_string(PRINT_ANY, "top", " top %s", top);
	print_uint(PRINT_ANY, "queue_ms", " queue %llu ms",
		   st->spec.long_queue_ns / FS_NS_PER_MS);
	print_int(PRINT_ANY, "dscp_short", " short code point %lld", q.owner == 1 ? q.dscp : -1);
	print_nl();
	open_json_array(PRINT_JSON, "classes");
	for (k = 0; q.owner == 1 && k < TCFG_LONGQ_CLASSES; k++) {
		open_json_object(NULL);
		print_string(PRINT_ANY, "class", "  class %s:", name[k]);
		print_uint(PRINT_ANY, "packets", " sent %llu packets", q.cls[k].packets);
		print_uint(PRINT_ANY, "bytes", " %llu bytes", q.cls[k].bytes);
		print_uint(PRINT_ANY, "backlog_bytes", ", backlog %llu bytes", q.cls[k].backlog);
		print_uint(PRINT_ANY, "limit_bytes", " of %llu", q.limit_bytes[k]);
		print_uint(PRINT_ANY, "drops", ", %llu dropped", q.cls[k].drops);
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
}

int tcfg_route_show(const struct tcfg_ctx *ctx)
{
	static struct tcfg_rules rules;
	static struct tcfg_routes routes;
	static struct show_state st;
	struct tcfg_err e = { "" };
	const char *mode;
	struct nl nl;

	if (nl_open(&nl)) {
		pr_err("route: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (tcfg_rules_dump(&nl, &rules, &e) || tcfg_routes_dump(&nl, &routes, &e)) {
		pr_err("route: %s", e.msg);
		nl_close(&nl);
		return FS_EXIT_RUNTIME;
	}
	check_state(&nl, &rules, &routes, ctx, &st);
	mode = st.recorded ? (st.spec.mode == MODE_ECMP ? "ecmp" : "split") : mode_name(&rules);
	open_json_object(NULL);
	print_string(PRINT_JSON, "mode", NULL, mode);
	print_string(PRINT_FP, NULL, "mode: %s\n",
		     strcmp(mode, "down") ? mode : "down (nothing installed)");
	show_state(&st, rules.n || routes.n);
	tcfg_show_rules(&rules);
	tcfg_show_routes(&routes);
	show_tunnels(&nl, &routes);
	show_longq(&st);
	if (ctx->show_more)
		ctx->show_more();
	close_json_object();
	nl_close(&nl);
	return FS_EXIT_OK;
}

const char *tcfg_route_state(const struct tcfg_ctx *ctx, char *why, size_t len)
{
	static struct tcfg_rules rules;
	static struct tcfg_routes routes;
	static struct show_state st;
	struct tcfg_err e = { "" };
	struct nl nl;

	why[0] = '\0';
	if (nl_open(&nl)) {
		snprintf(why, len, "netlink: %s", strerror(errno));
		return "unknown";
	}
	if (tcfg_rules_dump(&nl, &rules, &e) || tcfg_routes_dump(&nl, &routes, &e)) {
		snprintf(why, len, "%s", e.msg);
		nl_close(&nl);
		return "unknown";
	}
	check_state(&nl, &rules, &routes, ctx, &st);
	nl_close(&nl);
	if (!st.recorded)
		return rules.n || routes.n ? "unknown" : "down";
	if (st.missing.n)
		snprintf(why, len, "%s", st.missing.what[0]);
	else if (st.problems.n)
		snprintf(why, len, "%s", st.problems.what[0]);
	return st.missing.total || st.problems.total ? "degraded" : "ok";
}

/* ---- doctor: the same facts as a struct ---------------------------------------------- */
/* Missing rules and routes, as route show's state, and routes of others. */
static void doctor_missing(struct nl *nl, const struct tcfg_spec *s, const struct tcfg_ctx *ctx,
			   struct tcfg_doctor *d)
{
	const struct tcfg_in_force *f = &ctx->in_force;
	static struct tcfg_routes want_routes, have_routes;
	static struct tcfg_rules want_rules, have_rules;
	struct tcfg_missing m = { .n = 0 };
	struct tcfg_err e;
	int short_if, long_if;

	if (tcfg_rules_dump(nl, &have_rules, &e) || tcfg_routes_dump(nl, &have_routes, &e)) {
		d->missing = -1;
		snprintf(d->missing_first, sizeof(d->missing_first), "%.190s", e.msg);
		return;
	}
	/* routes of others that overlap our prefixes in our tables, whatever
	 * the plan in force (as route up refuses them) */
	tcfg_tunnel_ifindexes(s, &short_if, &long_if);
	tcfg_routes_wanted(s, short_if, long_if, &want_routes);
	if (tcfg_routes_foreign(nl, &want_routes, true, &d->foreign, &e) == -EEXIST)
		snprintf(d->foreign_first, sizeof(d->foreign_first), "%.290s", e.msg);
	recorded_wants(s, f, &want_routes, &want_rules);
	tcfg_check(&want_routes, &want_rules, &have_routes, &have_rules, &m);
	d->missing = m.total;
	if (m.n)
		snprintf(d->missing_first, sizeof(d->missing_first), "%s", m.what[0]);
	health_problems(nl, s, ctx, &m);
	d->problems = m.total;
	if (m.n)
		snprintf(d->problem_first, sizeof(d->problem_first), "%s", m.what[0]);
}

int tcfg_doctor(const struct tcfg_ctx *ctx, struct tcfg_doctor *d)
{
	static struct tcfg_spec s;
	const char *dev[2];
	struct tcfg_err e;
	struct nl nl;
	int i, ifindex;

	memset(d, 0, sizeof(*d));
	if (nl_open(&nl))
		return -errno;
	d->recorded = !tcfg_record_read(&s, &e);
	d->kernel_dscp = tcfg_rules_dscp_supported(&nl, d->recorded ? s.table_long :
							      TCFG_DEFAULT_TABLE_LONG);
	if (!d->recorded) {
		nl_close(&nl);
		return 0;
	}
	d->ecmp = s.mode == MODE_ECMP;
	d->dscp_long = s.dscp_long;
	d->dscp_selector = s.selector == SEL_DSCP;
	for (i = 0; i < s.nprefixes; i++)
		d->ipv6 |= s.prefixes[i].family == AF_INET6;
	for (i = 0; i < s.nlan && i < 8; i++)
		snprintf(d->lan[d->nlan++], sizeof(d->lan[0]), "%s", s.lan[i]);
	dev[0] = s.short_dev;
	dev[1] = s.long_dev;
	for (i = 0; i < 2; i++) {
		ifindex = if_nametoindex(dev[i]);
		if (ifindex)
			tcfg_tunnel_details(&nl, ifindex, &d->t[i]);
	}
	doctor_missing(&nl, &s, ctx, d);
	nl_close(&nl);
	d->long_rate_bps = s.long_rate_bps;
	if (s.long_rate_bps || s.long_dev[0]) {
		struct tcfg_longq_state q;

		if (tcfg_longq_read(s.long_dev, &q, d->longq_err, sizeof(d->longq_err)))
			q.owner = -EIO;
		d->longq_owner = q.owner;
		d->longq_dscp = q.dscp;
	}
	return 0;
}

int tcfg_tunnel_traffic(struct tcfg_tunnel_traffic t[2])
{
	static struct tcfg_spec spec;
	const char *dev[2];
	struct tcfg_err e;
	struct link_info li;
	struct nl nl;
	int i, ifindex, ret;

	memset(t, 0, 2 * sizeof(*t));
	ret = tcfg_record_read(&spec, &e);
	if (ret)
		return ret;
	if (nl_open(&nl))
		return -errno;
	dev[0] = spec.short_dev;
	dev[1] = spec.long_dev;
	for (i = 0; i < 2; i++) {
		ifindex = if_nametoindex(dev[i]);
		if (!ifindex || get_link(&nl, ifindex, &li))
			continue;	/* gone: no series for it */
		snprintf(t[i].dev, sizeof(t[i].dev), "%s", dev[i]);
		t[i].tx_packets = li.st.tx_packets;
		t[i].tx_bytes = li.st.tx_bytes;
		t[i].rx_packets = li.st.rx_packets;
		t[i].rx_bytes = li.st.rx_bytes;
	}
	nl_close(&nl);
	return 0;
}
