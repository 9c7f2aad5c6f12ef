// SPDX-License-Identifier: GPL-2.0
/*
 * doctor.c - what "splitctl doctor" needs to know of tunnel-cfg's state in
 * this network namespace: the recorded "route up" (mode, code point and
 * selector, LAN interfaces, tunnels), whether the kernel has every rule and
 * route it wants (the degraded check of route show), whether the kernel
 * matches rules on DSCP, routes of others where ours belong, and each
 * tunnel's MTU against its underlay.
 * Gathers only; splitctl words the checks and their fixes.
 */
#include <errno.h>
#include <string.h>

#include "tcfg.h"

/* Missing rules and routes, as route show's state. */
static void doctor_missing(struct nl *nl, const struct tcfg_spec *s, struct tcfg_doctor *d)
{
	static struct tcfg_routes want_routes, have_routes;
	static struct tcfg_rules want_rules, have_rules;
	static struct tcfg_health_file hf;
	struct tcfg_missing m = { .n = 0 };
	struct health_plan plan;
	int short_if, long_if;
	struct tcfg_err e;
	bool monitored = !tcfg_health_read(&hf, &e);

	if (tcfg_rules_dump(nl, &have_rules, &e) || tcfg_routes_dump(nl, &have_routes, &e)) {
		d->missing = -1;
		snprintf(d->missing_first, sizeof(d->missing_first), "%.190s", e.msg);
		return;
	}
	plan = tcfg_plan_in_force(s, &hf, monitored);
	tcfg_tunnel_ifindexes(s, &short_if, &long_if);
	if (!tcfg_routes_for_plan(s, short_if, long_if, &plan, &want_routes))
		tcfg_routes_wanted(s, short_if, long_if, &want_routes);
	tcfg_rules_recorded(s, &want_rules);
	if (tcfg_routes_foreign(nl, &want_routes, &d->foreign, &e) == -EEXIST)
		snprintf(d->foreign_first, sizeof(d->foreign_first), "%.290s", e.msg);
	tcfg_check(&want_routes, &want_rules, &have_routes, &have_rules, &m);
	d->missing = m.total;
	if (m.n)
		snprintf(d->missing_first, sizeof(d->missing_first), "%s", m.what[0]);
}

int tcfg_doctor(struct tcfg_doctor *d)
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
	doctor_missing(&nl, &s, d);
	nl_close(&nl);
	return 0;
}
