// SPDX-License-Identifier: GPL-2.0
/*
 * rules.c - the policy rules of "route up":
 *
 *   split: PRIO:   [iif LAN] dscp LONG -> table LONG
 *          PRIO+1: [iif LAN]           -> table SHORT
 *   ecmp:  PRIO+1: [iif LAN]           -> table SHORT
 *
 * for IPv4 and IPv6 and each LAN interface (or any input interface), all
 * with protocol TCFG_PROTO: the rules of ours are found again by it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/rtnetlink.h>

#include "flowsplit.h"
#include "tcfg.h"

void tcfg_rules_wanted(const struct tcfg_spec *s, int dscp, bool use_dscp,
		       struct tcfg_rules *want)
{
	int i, fam;

	want->n = 0;
	for (i = 0; i < (s->nlan ? s->nlan : 1); i++) {
		for (fam = 0; fam < 2; fam++) {
			struct tcfg_rule r = { .family = fam ? AF_INET6 : AF_INET, .dscp = -1 };

			if (s->nlan)
				snprintf(r.iif, sizeof(r.iif), "%s", s->lan[i]);
			if (s->mode == MODE_SPLIT) {
				struct tcfg_rule lr = r;

				lr.prio = s->priority;
				lr.table = s->table_long;
				if (use_dscp)
					lr.dscp = dscp;
				else
					lr.tos = (dscp << 2) & FS_TOS_RULE_MASK;
				want->r[want->n++] = lr;
			}
			r.prio = s->priority + 1;
			r.table = s->table_short;
			want->r[want->n++] = r;
		}
	}
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tcfg_rules *rules = data;
	struct tcfg_rule r;

	if (tcfg_parse_rule(nlh, &r) && rules->n < TCFG_MAX_OBJS)
		rules->r[rules->n++] = r;
	return MNL_CB_OK;
}

/* without an error text: for the probe, which has its own */
static int rules_read(struct nl *nl, struct tcfg_rules *have)
{
	have->n = 0;
	return nl_talk(nl, tcfg_msg_dump(nl->buf, RTM_GETRULE), rule_cb, have);
}

int tcfg_rules_dump(struct nl *nl, struct tcfg_rules *have, struct tcfg_err *e)
{
	if (rules_read(nl, have))
		return tcfg_fail(e, errno, "cannot list rules: %s", nl_err(nl));
	return 0;
}

static int rule_req(struct nl *nl, int type, const struct tcfg_rule *r)
{
	return nl_talk(nl, tcfg_msg_rule(nl->buf, type, r), NULL, NULL);
}

static bool same_rule(const struct tcfg_rule *a, const struct tcfg_rule *b)
{
	return a->family == b->family && a->prio == b->prio && a->table == b->table &&
	       !strcmp(a->iif, b->iif) && a->dscp == b->dscp && a->tos == b->tos;
}

static bool rules_have(const struct tcfg_rules *set, const struct tcfg_rule *r)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (same_rule(&set->r[i], r))
			return true;
	return false;
}

int tcfg_rules_converge(struct nl *nl, const struct tcfg_rules *want,
			const struct tcfg_rules *have, struct tcfg_err *e)
{
	int i;

	for (i = 0; i < want->n; i++) {
		const struct tcfg_rule *r = &want->r[i];

		if (!rules_have(have, r) && rule_req(nl, RTM_NEWRULE, r) && errno != EEXIST)
			return tcfg_fail(e, errno, "cannot add rule (priority %u, table %u): %s",
					 r->prio, r->table, nl_err(nl));
	}
	for (i = 0; i < have->n; i++)
		if (!rules_have(want, &have->r[i]))
			rule_req(nl, RTM_DELRULE, &have->r[i]);
	return 0;
}

int tcfg_rules_remove_all(struct nl *nl, struct tcfg_err *e)
{
	static struct tcfg_rules have;
	int i, ret;

	ret = tcfg_rules_dump(nl, &have, e);
	if (ret)
		return ret;
	/* on: remove as much as possible */
	for (i = 0; i < have.n; i++)
		if (rule_req(nl, RTM_DELRULE, &have.r[i]) && errno != ENOENT)
			ret = tcfg_fail(e, errno, "cannot delete rule (priority %u, table %u): %s",
					have.r[i].prio, have.r[i].table, nl_err(nl));
	return ret;
}

/*
 * Older kernels may silently ignore an attribute they do not know, which
 * would turn the long-class rule into a catch-all, so FRA_DSCP is verified
 * on a probe rule that can never match (its input interface does not
 * exist), read back, and removed again.
 */
#define TCFG_PROBE_PRIO 32765	/* after ours, before main (32766) */
#define TCFG_PROBE_DSCP 63

bool tcfg_rules_dscp_supported(struct nl *nl, __u32 table)
{
	static struct tcfg_rules have;
	struct tcfg_rule probe = { .family = AF_INET, .table = table,
				   .prio = TCFG_PROBE_PRIO, .dscp = TCFG_PROBE_DSCP };
	bool found = false;
	int i;

	snprintf(probe.iif, sizeof(probe.iif), "tcfgprobe%u", (unsigned int)getpid() % 10000);
	if (rule_req(nl, RTM_NEWRULE, &probe))
		return false;
	if (!rules_read(nl, &have))
		for (i = 0; i < have.n; i++)
			if (!strcmp(have.r[i].iif, probe.iif) && have.r[i].dscp == TCFG_PROBE_DSCP)
				found = true;
	/* delete what the kernel made of it: without FRA_DSCP if it was ignored */
	probe.dscp = found ? TCFG_PROBE_DSCP : -1;
	rule_req(nl, RTM_DELRULE, &probe);
	return found;
}
