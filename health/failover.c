// SPDX-License-Identifier: GPL-2.0
/*
 * failover.c - the agent's failover object (failover.h): the record of
 * "route up" (re-read when it changes), the tunnel states whose plan is in
 * force, and the converge of tunnel-cfg's plan.c under the lock of its
 * record.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "failover.h"
#include "health_file.h"
#include "roles.h"
#include "tcfg.h"

struct health_failover {
	struct tcfg_spec spec;		/* the record */
	enum health_both_down both_down;
	/* the states whose plan is in force (a WAIT/KEEP plan keeps them), by
	 * tunnel device: a "route up" that gives the devices other roles
	 * keeps each one's state; a device not here counts as up */
	char in_force_dev[HEALTH_TUNNELS][IF_NAMESIZE];
	enum health_state in_force[HEALTH_TUNNELS];
	bool published;		/* the health file is ours to withdraw */
	/* the record file as last looked at (stat): a new "route up"
	 * replaces it (rename), so its inode or time changes */
	struct timespec rec_mtime;
	ino_t rec_ino;
	char dev_info[HEALTH_TUNNELS][IF_NAMESIZE];	/* as last given by _info() */
	struct spill_view spill;	/* published with the health */
	struct dup_view dup;		/* the same */
	bool swapped;			/* the roles in force (roles.h) */
	struct roles_view roles;	/* published with the health */
	/* the families probed per tunnel (set_families(); nfam -1: never
	 * said, the file then has no "families") */
	struct health_file_family fam[HEALTH_TUNNELS][HEALTH_FAMILIES];
	int nfam[HEALTH_TUNNELS];
	struct nl nl;
};

/* Whether the record file differs from the one last looked at. */
static bool record_moved(struct health_failover *fo)
{
	struct stat st;
	bool moved;

	tcfg_record_stat(&st);
	moved = st.st_ino != fo->rec_ino || st.st_mtim.tv_sec != fo->rec_mtime.tv_sec ||
		st.st_mtim.tv_nsec != fo->rec_mtime.tv_nsec;
	fo->rec_ino = st.st_ino;
	fo->rec_mtime = st.st_mtim;
	return moved;
}

int health_failover_record_changed(struct health_failover *fo)
{
	return record_moved(fo);
}

static int fail_out(const struct tcfg_err *e, int ret, char *err, size_t errlen)
{
	if (ret && err && errlen)
		snprintf(err, errlen, "%s", e->msg);
	return ret;
}

/* The record as it is now: "route up" may have run again since. */
static int reload(struct health_failover *fo, struct tcfg_err *e)
{
	int ret = tcfg_record_read(&fo->spec, e);

	if (ret == -ENOENT)
		tcfg_fail(e, ENOENT,
			  "no routes to steer: route up has not run in this network namespace");
	return ret;
}

int health_failover_open(struct health_failover **out, enum health_both_down both_down,
		       char *err, size_t errlen)
{
	struct health_failover *fo = calloc(1, sizeof(*fo));
	struct tcfg_err e = { "" };
	int ret;

	if (!fo)
		return fail_out(&e, tcfg_fail(&e, ENOMEM, "out of memory"), err, errlen);
	fo->both_down = both_down;
	fo->nfam[HEALTH_SHORT] = fo->nfam[HEALTH_LONG] = -1;
	fo->in_force[HEALTH_SHORT] = fo->in_force[HEALTH_LONG] = HEALTH_UP;
	record_moved(fo);
	ret = reload(fo, &e);
	/* the tunnels apply()'s states are of, until _info() is asked */
	memcpy(fo->dev_info[HEALTH_SHORT], fo->spec.short_dev, IF_NAMESIZE);
	memcpy(fo->dev_info[HEALTH_LONG], fo->spec.long_dev, IF_NAMESIZE);
	if (!ret && nl_open(&fo->nl))
		ret = tcfg_fail(&e, errno, "netlink: %s", strerror(errno));
	if (ret) {
		free(fo);
		return fail_out(&e, ret, err, errlen);
	}
	*out = fo;
	return 0;
}

void health_failover_close(struct health_failover *fo)
{
	if (!fo)
		return;
	if (fo->published)
		health_file_remove();
	nl_close(&fo->nl);
	free(fo);
}

int health_failover_info(struct health_failover *fo, struct health_failover_info *info,
		       char *err, size_t errlen)
{
	const struct sc_prefix *via[HEALTH_TUNNELS] = { fo->spec.via_short, fo->spec.via_long };
	bool carried[2] = { false, false };
	struct tcfg_err e;
	int ret = reload(fo, &e), t, f, i;

	if (ret)
		return fail_out(&e, ret, err, errlen);
	/* the plan in force stays keyed by device: "route up" installed the
	 * plan of these same states for the devices' new roles */
	snprintf(fo->dev_info[HEALTH_SHORT], IF_NAMESIZE, "%s", fo->spec.short_dev);
	snprintf(fo->dev_info[HEALTH_LONG], IF_NAMESIZE, "%s", fo->spec.long_dev);
	memset(info, 0, sizeof(*info));
	info->mode = tcfg_health_mode(&fo->spec);
	snprintf(info->dev[HEALTH_SHORT], IF_NAMESIZE, "%s", fo->spec.short_dev);
	snprintf(info->dev[HEALTH_LONG], IF_NAMESIZE, "%s", fo->spec.long_dev);
	for (t = 0; t < HEALTH_TUNNELS; t++)
		for (f = 0; f < 2 && !info->target[t][0]; f++)
			if (via[t][f].family)
				inet_ntop(via[t][f].family, via[t][f].addr, info->target[t],
					  sizeof(info->target[t]));
	for (i = 0; i < fo->spec.nprefixes; i++)
		carried[fo->spec.prefixes[i].family == AF_INET6] = true;
	for (t = 0; t < HEALTH_TUNNELS; t++)
		for (f = 0; f < 2; f++)
			if (carried[f] && via[t][f].family)
				inet_ntop(via[t][f].family, via[t][f].addr,
					  info->family_target[t][f],
					  sizeof(info->family_target[t][f]));
	return 0;
}

/* The state in force of tunnel device dev (up when not known). */
static enum health_state in_force_of(const struct health_failover *fo, const char *dev)
{
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		if (!strcmp(fo->in_force_dev[t], dev))
			return fo->in_force[t];
	return HEALTH_UP;
}

struct health_plan health_failover_in_force(const struct health_failover *fo)
{
	enum health_state st[HEALTH_TUNNELS] = {
		in_force_of(fo, fo->spec.short_dev), in_force_of(fo, fo->spec.long_dev),
	};

	return roles_plan(health_plan(tcfg_health_mode(&fo->spec), fo->both_down, st), fo->swapped);
}

void health_failover_set_roles(struct health_failover *fo, bool swapped)
{
	fo->swapped = swapped;
}

/* Install the plan in force (and the missing rules), under the lock. */
static int converge(struct health_failover *fo, bool rules, struct tcfg_err *e)
{
	static struct tcfg_routes want;
	static struct tcfg_rules want_rules, have_rules;
	struct health_plan plan;
	int lock, ret, changed = 0, short_if, long_if;

	lock = tcfg_lock(e);
	if (lock < 0)
		return lock;
	/* under the lock: a "route down" that ran before us removed the record */
	ret = reload(fo, e);
	if (ret)
		goto out;
	plan = health_failover_in_force(fo);
	tcfg_tunnel_ifindexes(&fo->spec, &short_if, &long_if);
	if (!tcfg_routes_for_plan(&fo->spec, short_if, long_if, &plan, &want))
		goto out;	/* cannot happen: the plan in force is ROUTE or MAIN */
	ret = tcfg_routes_converge(&fo->nl, &want, &changed, e);
	if (rules) {
		struct tcfg_err rule_e;
		int ret2;

		tcfg_rules_recorded(&fo->spec, &want_rules);
		ret2 = tcfg_rules_dump(&fo->nl, &have_rules, &rule_e);
		if (!ret2)
			ret2 = tcfg_rules_converge(&fo->nl, &want_rules, &have_rules, &rule_e);
		if (ret2 && !ret) {
			ret = ret2;
			*e = rule_e;
		}
	}
out:
	tcfg_unlock(lock);
	return ret ? ret : changed;
}

int health_failover_apply(struct health_failover *fo, const enum health_state state[HEALTH_TUNNELS],
			char *err, size_t errlen)
{
	struct health_plan plan = health_plan(tcfg_health_mode(&fo->spec), fo->both_down, state);
	struct tcfg_err e = { "" };
	int t;

	if (plan.action == HEALTH_PLAN_WAIT || plan.action == HEALTH_PLAN_KEEP)
		return 0;
	/* state[] is of the tunnels _info() gave (the prober's) */
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		memcpy(fo->in_force_dev[t], fo->dev_info[t], IF_NAMESIZE);
		fo->in_force[t] = state[t];
	}
	return fail_out(&e, converge(fo, false, &e), err, errlen);
}

int health_failover_reconverge(struct health_failover *fo, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };

	return fail_out(&e, converge(fo, true, &e), err, errlen);
}

int health_failover_publish(struct health_failover *fo,
			    const struct health *const h[HEALTH_TUNNELS], uint64_t now_ns,
			    char *err, size_t errlen)
{
	static struct health_file hf;
	struct tcfg_err e = { "" };
	int t;

	memset(&hf, 0, sizeof(hf));
	hf.pid = getpid();
	hf.updated_mono_ns = now_ns;
	hf.mode = tcfg_health_mode(&fo->spec);
	hf.both_down = fo->both_down;
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		struct health_file_tunnel *o = &hf.t[t];

		/* the devices h[] is of: those _info() gave the prober */
		snprintf(o->dev, sizeof(o->dev), "%s", fo->dev_info[t]);
		o->state = h[t]->state;
		o->since_mono_ns = h[t]->since_ns;
		o->rtt_last_ns = h[t]->rtt_last_ns;
		o->rtt_ewma_ns = h[t]->rtt_ewma_ns;
		o->timeout_ns = health_probe_timeout_ns(h[t]);
		o->loss = health_loss_ratio(h[t]);
		o->flaps = h[t]->flaps;
		o->probes = h[t]->probes;
		o->missed = h[t]->missed;
		o->link_down = h[t]->link_down;
		hf.in_force_state[t] = in_force_of(fo, fo->dev_info[t]);
		o->nfam = fo->nfam[t];
		memcpy(o->fam, fo->fam[t], sizeof(o->fam));
	}
	hf.spill = fo->spill;
	hf.dup = fo->dup;
	hf.swapped = fo->swapped;
	hf.roles = fo->roles;
	fo->published = true;
	return fail_out(&e, health_file_write(&hf, &e), err, errlen);
}

void health_failover_set_spill(struct health_failover *fo, const struct spill_view *v)
{
	fo->spill = *v;
}

void health_failover_set_dup(struct health_failover *fo, const struct dup_view *v)
{
	fo->dup = *v;
}

void health_failover_set_roles_view(struct health_failover *fo, const struct roles_view *v)
{
	fo->roles = *v;
}

void health_failover_set_families(struct health_failover *fo, int t,
				  const struct health_file_family *fam, int n)
{
	if (t < 0 || t >= HEALTH_TUNNELS || n < 0 || n > HEALTH_FAMILIES)
		return;
	memset(fo->fam[t], 0, sizeof(fo->fam[t]));
	memcpy(fo->fam[t], fam, n * sizeof(*fam));
	fo->nfam[t] = n;
}
