// SPDX-License-Identifier: GPL-2.0
/*
 * routes.c - the routes of "route up", per remote prefix:
 *
 *   split: table SHORT: via the SHORT tunnel; table LONG: via the LONG tunnel
 *   ecmp:  table SHORT: one multipath route over both tunnels
 *
 * all with protocol TCFG_PROTO: the routes of ours are found again by it.
 * A table without a matching route falls through to the next rule, so
 * traffic not bound for a remote prefix still uses "main".
 */
#include <errno.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "tcfg.h"

static struct tcfg_nexthop nexthop(int oif, const struct sc_prefix *via_pair, int family)
{
	struct tcfg_nexthop nh = { .oif = oif };

	nh.via = via_pair[tcfg_fam_idx(family)];	/* family 0 when not given */
	return nh;
}

void tcfg_routes_wanted(const struct tcfg_spec *s, int short_if, int long_if,
			struct tcfg_routes *want)
{
	int i;

	want->n = 0;
	for (i = 0; i < s->nprefixes; i++) {
		const struct sc_prefix *p = &s->prefixes[i];
		struct tcfg_route rt = { .family = p->family, .dst = *p,
					 .table = s->table_short, .nnh = 1 };

		rt.nh[0] = nexthop(short_if, s->via_short, p->family);
		if (s->mode == MODE_ECMP) {
			rt.nh[1] = nexthop(long_if, s->via_long, p->family);
			rt.nnh = 2;
			want->r[want->n++] = rt;
			continue;
		}
		want->r[want->n++] = rt;
		rt.table = s->table_long;
		rt.nh[0] = nexthop(long_if, s->via_long, p->family);
		want->r[want->n++] = rt;
	}
}

/* ---- comparisons ---------------------------------------------------------------- */
bool tcfg_route_same_dst(const struct tcfg_route *a, const struct tcfg_route *b)
{
	return a->family == b->family && a->table == b->table && a->dst.len == b->dst.len &&
	       !memcmp(a->dst.addr, b->dst.addr, tcfg_alen(a->family));
}

static bool same_nexthop(const struct tcfg_nexthop *a, const struct tcfg_nexthop *b, int family)
{
	return a->oif == b->oif && a->via.family == b->via.family &&
	       (!a->via.family || !memcmp(a->via.addr, b->via.addr, tcfg_alen(family)));
}

bool tcfg_route_same(const struct tcfg_route *a, const struct tcfg_route *b)
{
	int i, j;

	if (!tcfg_route_same_dst(a, b) || a->nnh != b->nnh)
		return false;
	for (i = 0; i < a->nnh; i++) {
		for (j = 0; j < b->nnh && !same_nexthop(&a->nh[i], &b->nh[j], a->family); j++)
			;
		if (j == b->nnh)
			return false;
	}
	return true;
}

void tcfg_fmt_route(const struct tcfg_route *rt, char *buf, size_t len)
{
	size_t off;
	int i;

	tcfg_fmt_prefix(&rt->dst, buf, len);
	off = strlen(buf);
	for (i = 0; i < rt->nnh && off < len; i++) {
		char dev[IF_NAMESIZE] = "?", via[INET6_ADDRSTRLEN] = "";

		if (rt->nh[i].oif)
			if_indextoname(rt->nh[i].oif, dev);
		if (rt->nh[i].via.family)
			inet_ntop(rt->nh[i].via.family, rt->nh[i].via.addr, via, sizeof(via));
		off += snprintf(buf + off, len - off, "%s%s%s dev %s", i ? "," : "",
				via[0] ? " via " : "", via, dev);
	}
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tcfg_routes *routes = data;
	struct tcfg_route rt;

	if (tcfg_parse_route(nlh, &rt) && routes->n < TCFG_MAX_OBJS)
		routes->r[routes->n++] = rt;
	return MNL_CB_OK;
}

int tcfg_routes_dump(struct nl *nl, struct tcfg_routes *have, struct tcfg_err *e)
{
	have->n = 0;
	if (nl_talk(nl, tcfg_msg_dump(nl->buf, RTM_GETROUTE), route_cb, have))
		return tcfg_fail(e, errno, "cannot list routes: %s", nl_err(nl));
	return 0;
}

static int route_req(struct nl *nl, int type, const struct tcfg_route *rt)
{
	return nl_talk(nl, tcfg_msg_route(nl->buf, type, rt), NULL, NULL);
}

/* Delete by destination and table alone: our route there, whatever its
 * next hops. */
static int route_del(struct nl *nl, const struct tcfg_route *rt)
{
	struct tcfg_route del = *rt;

	del.nnh = 0;
	return route_req(nl, RTM_DELROUTE, &del);
}

int tcfg_route_delete(struct nl *nl, const struct tcfg_route *rt, struct tcfg_err *e)
{
	char what[TCFG_PREFIX_STRLEN], kernel[400];
	int err;

	if (!route_del(nl, rt))
		return 0;
	err = errno;
	snprintf(kernel, sizeof(kernel), "%s", nl_err(nl));
	tcfg_fmt_prefix(&rt->dst, what, sizeof(what));
	return tcfg_fail(e, err, "cannot delete route %s of table %u: %s", what, rt->table, kernel);
}

/* The gateway the kernel found unreachable, for the error line. */
static void unreachable_hint(const struct tcfg_route *rt, int err, char *buf, size_t len)
{
	char via[INET6_ADDRSTRLEN], dev[IF_NAMESIZE] = "?";
	int i;

	buf[0] = '\0';
	if (err != EHOSTUNREACH && err != ENETUNREACH)
		return;
	for (i = 0; i < rt->nnh; i++) {
		if (!rt->nh[i].via.family)
			continue;
		inet_ntop(rt->nh[i].via.family, rt->nh[i].via.addr, via, sizeof(via));
		if_indextoname(rt->nh[i].oif, dev);
		snprintf(buf, len,
			 " (gateway %s%s is not on a network of dev %s: check "
			 "--via-short/--via-long and the tunnel addresses)",
			 via, rt->nnh > 1 ? " or the other one" : "", dev);
		break;
	}
}

int tcfg_route_install(struct nl *nl, const struct tcfg_route *rt, struct tcfg_err *e)
{
	char what[TCFG_PREFIX_STRLEN * 3 + 64], hint[200], kernel[400];
	int err;

	if (!route_req(nl, RTM_NEWROUTE, rt))
		return 0;
	err = errno;
	snprintf(kernel, sizeof(kernel), "%s", nl_err(nl));
	tcfg_fmt_route(rt, what, sizeof(what));
	unreachable_hint(rt, err, hint, sizeof(hint));
	return tcfg_fail(e, err, "cannot install route %s in table %u: %s%s", what, rt->table,
			 kernel, hint);
}

int tcfg_routes_install(struct nl *nl, const struct tcfg_routes *want,
			struct tcfg_err *e)
{
	int i, ret;

	for (i = 0; i < want->n; i++) {
		ret = tcfg_route_install(nl, &want->r[i], e);
		if (ret)
			return ret;
	}
	return 0;
}

int tcfg_routes_remove_unwanted(struct nl *nl, const struct tcfg_routes *want,
				struct tcfg_err *e)
{
	static struct tcfg_routes have;
	int i, j, ret;

	ret = tcfg_routes_dump(nl, &have, e);
	for (i = 0; !ret && i < have.n; i++) {
		for (j = 0; j < want->n; j++)
			if (tcfg_route_same_dst(&have.r[i], &want->r[j]))
				break;
		if (j == want->n)
			route_del(nl, &have.r[i]);
	}
	return ret;
}

int tcfg_routes_remove_all(struct nl *nl, struct tcfg_err *e)
{
	static struct tcfg_routes have;
	int i, ret;

	ret = tcfg_routes_dump(nl, &have, e);
	if (ret)
		return ret;
	/* on: remove as much as possible */
	for (i = 0; i < have.n; i++)
		if (route_del(nl, &have.r[i]) && errno != ENOENT)
			ret = tcfg_fail(e, errno, "cannot delete a route of table %u: %s",
					have.r[i].table, nl_err(nl));
	return ret;
}

/* ---- routes of others ------------------------------------------------------------- */
struct foreign_dump {
	const struct tcfg_routes *want;
	bool overlap;		/* any overlapping destination, not just ours */
	int n;			/* foreign routes found */
	struct tcfg_route first;
	int first_proto;
	struct tcfg_route ours;	/* the wanted route the first one meets */
};

/* The wanted route a route of someone else meets in its table: at the
 * same destination, or (overlap) at one inside or around it. */
static const struct tcfg_route *foreign_meets(const struct foreign_dump *d,
					      const struct tcfg_route *rt)
{
	const struct tcfg_route *w;
	int i;

	for (i = 0; i < d->want->n; i++) {
		w = &d->want->r[i];
		if (d->overlap ? w->table == rt->table && sc_prefix_overlap(&w->dst, &rt->dst) :
				 tcfg_route_same_dst(rt, w))
			return w;
	}
	return NULL;
}

/* Only routes meeting a wanted one are kept: a router's main table may
 * hold a full BGP table. */
static int foreign_cb(const struct nlmsghdr *nlh, void *data)
{
	struct foreign_dump *d = data;
	const struct tcfg_route *w;
	struct tcfg_route rt;
	int proto = tcfg_parse_route_any(nlh, &rt);

	if (proto == TCFG_PROTO || !(w = foreign_meets(d, &rt)))
		return MNL_CB_OK;
	if (!d->n++) {
		d->first = rt;
		d->first_proto = proto;
		d->ours = *w;
	}
	return MNL_CB_OK;
}

/* iproute2's names of the protocols an operator's route carries */
static const char *proto_name(int proto, char *buf, size_t len)
{
	switch (proto) {
	case RTPROT_KERNEL: return "kernel";
	case RTPROT_BOOT: return "boot";
	case RTPROT_STATIC: return "static";
	case RTPROT_DHCP: return "dhcp";
	case RTPROT_BGP: return "bgp";
	case RTPROT_OSPF: return "ospf";
	}
	snprintf(buf, len, "%d", proto);
	return buf;
}

int tcfg_routes_foreign(struct nl *nl, const struct tcfg_routes *want, bool overlap,
			int *foreign, struct tcfg_err *e)
{
	struct foreign_dump d = { .want = want, .overlap = overlap };
	char what[TCFG_PREFIX_STRLEN], ours[TCFG_PREFIX_STRLEN], pbuf[16];
	const char *proto;

	if (nl_talk(nl, tcfg_msg_dump(nl->buf, RTM_GETROUTE), foreign_cb, &d))
		return tcfg_fail(e, errno, "cannot list routes: %s", nl_err(nl));
	if (foreign)
		*foreign = d.n;
	if (!d.n)
		return 0;
	tcfg_fmt_prefix(&d.first.dst, what, sizeof(what));
	tcfg_fmt_prefix(&d.ours.dst, ours, sizeof(ours));
	proto = proto_name(d.first_proto, pbuf, sizeof(pbuf));
	if (d.first.dst.len == d.ours.dst.len)
		return tcfg_fail(e, EEXIST,
				 "table %u already has a route to %s of protocol %s, not created "
				 "by splitctl: it is never replaced or deleted (remove it, or pick "
				 "free tables with --table-short/--table-long)",
				 d.first.table, what, proto);
	return tcfg_fail(
		e, EEXIST,
		"table %u has a route to %s of protocol %s %s our prefix %s, not created by "
		"splitctl: %s (remove it, or pick free tables with --table-short/--table-long)",
		d.first.table, what, proto, d.first.dst.len > d.ours.dst.len ? "inside" : "around",
		ours,
		d.first.dst.len > d.ours.dst.len
			? "traffic to it would leave by that route, not by a tunnel"
			: "our rules would send it the LAN's traffic to other destinations");
}
