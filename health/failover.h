/* SPDX-License-Identifier: GPL-2.0 */
/*
 * failover.h - what the agent ("splitctl run") calls to steer the routes
 * "route up" installed by tunnel health (health.h, probe.h): apply the
 * plan of the two tunnels' states, re-converge after link events, watch
 * link events, and publish the health that "route show" and "status" print.
 *
 * The agent's loop, in this order:
 *
 *   health_failover_open(&fo, both_down, err)      after "route up" (config)
 *   health_failover_info(fo, &info)                devices, mode, targets
 *   health_prober_new(), health_prober_add() for info.dev[HEALTH_SHORT],
 *                                           then info.dev[HEALTH_LONG]
 *   health_linkmon_open(&mon, err); health_linkmon_watch(mon, info.dev[i])
 *   poll on health_prober_fd() and health_linkmon_fd():
 *     health_poll() events       -> health_failover_apply(fo, states)
 *     health_linkmon_read() events:
 *       LINK_DOWN / LINK_DELETED of a tunnel -> health_prober_link_down(),
 *                                    then health_failover_apply(fo, states)
 *       LINK_UP, ROUTE_LOST, OVERRUN -> health_failover_reconverge(fo)
 *     after either, and every few seconds: health_failover_publish(fo, h)
 *   on exit: health_failover_close(fo) (withdraws the published health; the
 *            routes in force stay), health_linkmon_close(mon)
 *
 * Every route change uses NLM_F_REPLACE (never delete-then-add), owner-
 * tagged like "route up"; applying the same states twice changes nothing.
 * Functions return 0 or a negative errno with a one-line reason in err
 * (errlen bytes); nothing here prints. Not thread-safe.
 */
#ifndef HEALTH_FAILOVER_H
#define HEALTH_FAILOVER_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>

#include "health.h"

struct nlmsghdr;
struct health_failover;

/*
 * Start steering the routes of the last "route up" in this network
 * namespace (its record). -ENOENT when "route up" has not run (or "route
 * down" ran since). The plan in force starts as both tunnels up.
 */
int health_failover_open(struct health_failover **fo, enum health_both_down both_down,
		       char *err, size_t errlen);
/* Withdraw the published health (the routes stay as they are). */
void health_failover_close(struct health_failover *fo);

struct health_failover_info {
	enum health_mode mode;
	char dev[HEALTH_TUNNELS][IF_NAMESIZE];	/* [HEALTH_SHORT], [HEALTH_LONG] */
	/* each tunnel's gateway (--via-*), IPv4 first, else IPv6, else "":
	 * the default probe target */
	char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN];
	/* each tunnel's gateway of each family the routes carry (a prefix of
	 * that family): [t][0] IPv4, [t][1] IPv6; "" when the routes carry
	 * none of that family or no gateway of it is recorded (then nothing
	 * can probe that family through the tunnel) */
	char family_target[HEALTH_TUNNELS][2][INET6_ADDRSTRLEN];
};
/*
 * Whether the record file was replaced (a new "route up") or removed since
 * open or the last call: 1 or 0. The agent then asks _info() again and,
 * when the tunnels, targets or mode differ, probes the new ones.
 */
int health_failover_record_changed(struct health_failover *fo);
/* What the record says now (re-read when "route up" ran again). The plan
 * in force is kept by tunnel device: with the devices in other roles it is
 * the plan of their same states (what "route up" installed, reading the
 * published health); a device new to the agent counts as up. */
int health_failover_info(struct health_failover *fo, struct health_failover_info *info,
		       char *err, size_t errlen);

/*
 * The tunnels' states changed: install the routes of
 * health_plan(recorded mode, both_down, state); state[] is of the devices
 * the last health_failover_info() gave (before one: those of the record at
 * open), [HEALTH_SHORT] then [HEALTH_LONG]. A WAIT or KEEP plan
 * changes nothing (the plan in force stays); ROUTE and MAIN become the
 * plan in force. Returns the number of route requests that changed
 * something (0: already in place), -ENOENT when the record is gone
 * ("route down": nothing to steer, nothing changed), or another -errno
 * (the routes that could be installed are).
 */
int health_failover_apply(struct health_failover *fo, const enum health_state state[HEALTH_TUNNELS],
			char *err, size_t errlen);
/*
 * Put the plan in force back in place after the kernel dropped routes (a
 * link went down and up) or rules went missing: routes as
 * health_failover_apply(), missing rules added. Same returns.
 */
int health_failover_reconverge(struct health_failover *fo, char *err, size_t errlen);
/*
 * The roles (roles.h) the next apply or re-converge installs: swapped puts
 * table SHORT on the LONG tunnel and table LONG on the SHORT one while
 * both are up (roles_plan()); a failover plan is never swapped. After
 * open: not swapped. Published with the next health_failover_publish().
 */
void health_failover_set_roles(struct health_failover *fo, bool swapped);
/* The plan in force (after open: both tunnels up). */
struct health_plan health_failover_in_force(const struct health_failover *fo);

/*
 * Publish both tunnels' health (h[HEALTH_SHORT], h[HEALTH_LONG]) and the
 * plan in force for "route show" / "status" (and for "route up", which
 * keeps a failover in force): TCFG_STATE_DIR/health-<netns inode>.json,
 * written whole or not at all. now_ns: CLOCK_MONOTONIC.
 */
int health_failover_publish(struct health_failover *fo,
			    const struct health *const h[HEALTH_TUNNELS], uint64_t now_ns,
			    char *err, size_t errlen);

/* Spill's state, published with the next health_failover_publish(). */
struct spill_view;
void health_failover_set_spill(struct health_failover *fo, const struct spill_view *v);
/* The short class's copy (dup_agent.h), the same way. */
struct dup_view;
void health_failover_set_dup(struct health_failover *fo, const struct dup_view *v);
/* The address families the agent probes through tunnel t (n of them,
 * health_file.h), published with the next publish; the tunnel's "state"
 * is then h[t]'s (the agent gives the state of all its families). */
struct health_file_family;
void health_failover_set_families(struct health_failover *fo, int t,
				  const struct health_file_family *fam, int n);
/* The roles' view (roles.h), published with the next publish. */
struct roles_view;
void health_failover_set_roles_view(struct health_failover *fo, const struct roles_view *v);

#endif /* HEALTH_FAILOVER_H */
