/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan.h - a routing plan: which tunnel carries the table of each class.
 * tunnel-cfg installs the routes of a plan (plan.c) and keeps the one an
 * agent has in force across "route up"; the agent's failover (health/)
 * picks the plan from the two tunnels' states (health_plan(), health.h).
 * Types and two pure helpers; no I/O.
 */
#ifndef TCFG_PLAN_H
#define TCFG_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* The two tunnels, as indices (the prober's too) and as HEALTH_VIA() bits. */
enum health_tunnel { HEALTH_SHORT, HEALTH_LONG, HEALTH_TUNNELS };
#define HEALTH_VIA(t) (1u << (t))
#define HEALTH_VIA_SHORT HEALTH_VIA(HEALTH_SHORT)
#define HEALTH_VIA_LONG HEALTH_VIA(HEALTH_LONG)

/* The mode of "route up": split (a table per class) or ecmp (one table). */
enum health_mode { HEALTH_MODE_SPLIT, HEALTH_MODE_ECMP };

enum health_plan_action {
	HEALTH_PLAN_WAIT,	/* a tunnel has no verdict yet: change nothing */
	HEALTH_PLAN_ROUTE,	/* install short_via / long_via */
	HEALTH_PLAN_KEEP,	/* both down, keep: change nothing */
	HEALTH_PLAN_MAIN,	/* both down, main: remove our routes */
};

struct health_plan {
	enum health_plan_action action;
	/* ROUTE only (0 otherwise), HEALTH_VIA() bits:
	 * split: short_via = the one tunnel carrying table SHORT,
	 *        long_via  = the one tunnel carrying table LONG;
	 * ecmp:  short_via = the members of table SHORT's multipath route
	 *        (one bit = a plain route), long_via = 0 (no LONG table). */
	unsigned int short_via;
	unsigned int long_via;
};

bool health_plan_equal(const struct health_plan *a,
		       const struct health_plan *b);
/* "short=SHORT long=LONG", "short=SHORT+LONG", "wait", "keep", "main";
 * returns what snprintf returns. */
int health_plan_format(const struct health_plan *plan, char *buf,
		       size_t len);

/*
 * The plan a running agent has in force, as it publishes it
 * (health/health_file.h; the caller reads it and hands it in): "route up"
 * keeps it, "route show" and "doctor" compare the kernel with it. Keyed by
 * tunnel device, not by role: a verdict belongs to a tunnel, so a "route
 * up" that swaps SHORT and LONG (or replaces one tunnel) keeps what is
 * known of each device; a device the agent does not steer counts as up.
 */
struct tcfg_in_force {
	int pid;				/* the agent; 0: none publishes */
	char dev[HEALTH_TUNNELS][16];		/* the tunnels it steers */
	bool down[HEALTH_TUNNELS];		/* dev[i] is down in the plan in force */
	/* dev[i] is probed over IPv4 (probed[i][0]) and IPv6 ([i][1]);
	 * families_known false: the agent did not say (not judged) */
	bool families_known;
	bool probed[HEALTH_TUNNELS][2];
	/* the plan of every pair of states, as the agent plans it:
	 * plan[mode][SHORT down][LONG down] (mode: HEALTH_MODE_SPLIT or
	 * HEALTH_MODE_ECMP: "route up" may switch it) */
	struct health_plan plan[2][2][2];
};

#endif /* TCFG_PLAN_H */
