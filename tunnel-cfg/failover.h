/* SPDX-License-Identifier: GPL-2.0 */
/*
 * failover.h - what the agent ("splitctl run") calls to steer the routes
 * "route up" installed by tunnel health (health.h, probe.h): apply the
 * plan of the two tunnels' states, re-converge after link events, watch
 * link events, and publish the health that "route show" and "status" print.
 *
 * The agent's loop, in this order:
 *
 *   tcfg_failover_open(&fo, both_down, err)      after "route up" (config)
 *   tcfg_failover_info(fo, &info)                devices, mode, targets
 *   health_prober_new(), health_prober_add() for info.dev[HEALTH_SHORT],
 *                                           then info.dev[HEALTH_LONG]
 *   tcfg_linkmon_open(&mon, err); tcfg_linkmon_watch(mon, info.dev[i])
 *   poll on health_prober_fd() and tcfg_linkmon_fd():
 *     health_poll() events       -> tcfg_failover_apply(fo, states)
 *     tcfg_linkmon_read() events:
 *       LINK_DOWN / LINK_DELETED of a tunnel -> health_prober_link_down(),
 *                                    then tcfg_failover_apply(fo, states)
 *       LINK_UP, ROUTE_LOST, OVERRUN -> tcfg_failover_reconverge(fo)
 *     after either, and every few seconds: tcfg_failover_publish(fo, h)
 *   on exit: tcfg_failover_close(fo) (withdraws the published health; the
 *            routes in force stay), tcfg_linkmon_close(mon)
 *
 * Every route change uses NLM_F_REPLACE (never delete-then-add), owner-
 * tagged like "route up"; applying the same states twice changes nothing.
 * Functions return 0 or a negative errno with a one-line reason in err
 * (errlen bytes); nothing here prints. Not thread-safe.
 */
#ifndef TCFG_FAILOVER_H
#define TCFG_FAILOVER_H

#include <net/if.h>
#include <stddef.h>

#include "health.h"

struct nlmsghdr;
struct tcfg_failover;

/*
 * One agent per network namespace: agent-<netns inode> ("PID PIN_DIR"),
 * flock()ed for the agent's life (the kernel releases it when the process
 * dies). lock: the fd to keep, or -EBUSY (holder: the running agent's PID)
 * or another -errno, the reason in e. unlock: removes the file, then the
 * lock. running: the holder's PID, 0 when nobody holds it.
 * remove_stale: removes every agent file nobody holds (an agent killed
 * with -9; its namespace may be gone) and its health file; the number
 * removed.
 */
int tcfg_agent_lock(const char *pin_dir, int *holder, char *err, size_t errlen);
void tcfg_agent_unlock(int fd);
int tcfg_agent_running(void);
int tcfg_agent_remove_stale(void);

/*
 * Start steering the routes of the last "route up" in this network
 * namespace (its record). -ENOENT when "route up" has not run (or "route
 * down" ran since). The plan in force starts as both tunnels up.
 */
int tcfg_failover_open(struct tcfg_failover **fo, enum health_both_down both_down,
		       char *err, size_t errlen);
/* Withdraw the published health (the routes stay as they are). */
void tcfg_failover_close(struct tcfg_failover *fo);

struct tcfg_failover_info {
	enum health_mode mode;
	char dev[HEALTH_TUNNELS][IF_NAMESIZE];	/* [HEALTH_SHORT], [HEALTH_LONG] */
	/* each tunnel's gateway (--via-*), IPv4 first, else IPv6, else "":
	 * the default probe target */
	char target[HEALTH_TUNNELS][46];
};
/*
 * Whether the record file was replaced (a new "route up") or removed since
 * open or the last call: 1 or 0. The agent then asks _info() again and,
 * when the tunnels, targets or mode differ, probes the new ones.
 */
int tcfg_failover_record_changed(struct tcfg_failover *fo);
/* What the record says now (re-read when "route up" ran again). When the
 * tunnel devices differ from the last call's, the plan in force becomes
 * both tunnels up, as "route up" installed it. */
int tcfg_failover_info(struct tcfg_failover *fo, struct tcfg_failover_info *info,
		       char *err, size_t errlen);

/*
 * The tunnels' states changed: install the routes of
 * health_plan(recorded mode, both_down, state). A WAIT or KEEP plan
 * changes nothing (the plan in force stays); ROUTE and MAIN become the
 * plan in force. Returns the number of route requests that changed
 * something (0: already in place), -ENOENT when the record is gone
 * ("route down": nothing to steer, nothing changed), or another -errno
 * (the routes that could be installed are).
 */
int tcfg_failover_apply(struct tcfg_failover *fo, const enum health_state state[HEALTH_TUNNELS],
			char *err, size_t errlen);
/*
 * Put the plan in force back in place after the kernel dropped routes (a
 * link went down and up) or rules went missing: routes as
 * tcfg_failover_apply(), missing rules added. Same returns.
 */
int tcfg_failover_reconverge(struct tcfg_failover *fo, char *err, size_t errlen);
/* The plan in force (after open: both tunnels up). */
struct health_plan tcfg_failover_in_force(const struct tcfg_failover *fo);

/*
 * Publish both tunnels' health (h[HEALTH_SHORT], h[HEALTH_LONG]) and the
 * plan in force for "route show" / "status" (and for "route up", which
 * keeps a failover in force): TCFG_STATE_DIR/health-<netns inode>.json,
 * written whole or not at all. now_ns: CLOCK_MONOTONIC.
 */
int tcfg_failover_publish(struct tcfg_failover *fo, const struct health *const h[HEALTH_TUNNELS],
			  uint64_t now_ns, char *err, size_t errlen);

/* "health" of "splitctl status": as route show prints it (json_print). */
void tcfg_health_status(void);

/* ---- link monitor --------------------------------------------------------- */
enum tcfg_link_kind {
	TCFG_LINK_UP,		/* administratively up with carrier */
	TCFG_LINK_DOWN,		/* down, or no carrier */
	TCFG_LINK_DELETED,
	TCFG_ROUTE_LOST,	/* a route of ours was deleted (by the kernel or
				 * someone): re-converge */
	TCFG_MON_OVERRUN,	/* events were lost (ENOBUFS): re-converge */
};

struct tcfg_link_event {
	enum tcfg_link_kind kind;
	char dev[IF_NAMESIZE];	/* link events; "" otherwise */
	int ifindex;
};

/*
 * Parse one rtnetlink notification: 1 when it is a link event (any
 * device: RTM_NEWLINK up/down, RTM_DELLINK) or the deletion of a route of
 * ours (RTM_DELROUTE, protocol 245), with ev filled; 0 otherwise.
 */
int tcfg_link_event_parse(const struct nlmsghdr *nlh, struct tcfg_link_event *ev);

struct tcfg_linkmon;
/* A NETLINK_ROUTE socket on RTNLGRP_LINK, RTNLGRP_IPV4_ROUTE and
 * RTNLGRP_IPV6_ROUTE, non-blocking. */
int tcfg_linkmon_open(struct tcfg_linkmon **mon, char *err, size_t errlen);
void tcfg_linkmon_close(struct tcfg_linkmon *mon);
/* Report link events of this device (by name; up to 8). Its current
 * state is read now: only changes are reported. */
int tcfg_linkmon_watch(struct tcfg_linkmon *mon, const char *dev);
/* For the agent's poll set: readable when tcfg_linkmon_read() has work. */
int tcfg_linkmon_fd(const struct tcfg_linkmon *mon);
/*
 * Drain what the socket holds without blocking: up to max events (state
 * changes of watched devices, ROUTE_LOST at most once per call, OVERRUN
 * when the socket overflowed or more than max events came: re-converge
 * and re-read the links then). Returns the number stored or -errno.
 */
int tcfg_linkmon_read(struct tcfg_linkmon *mon, struct tcfg_link_event *ev, unsigned int max);

#endif /* TCFG_FAILOVER_H */
