/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linkmon.h - the agent's netlink monitor (linkmon.c): link up, down and
 * deleted of the tunnel devices, and routes of ours the kernel (or
 * someone) deleted, for the failover to re-converge (failover.h gives the
 * order of calls). Nothing here prints.
 */
#ifndef HEALTH_LINKMON_H
#define HEALTH_LINKMON_H

#include <net/if.h>

struct nlmsghdr;

enum health_link_kind {
	HEALTH_LINK_UP,		/* administratively up with carrier */
	HEALTH_LINK_DOWN,		/* down, or no carrier */
	HEALTH_LINK_DELETED,
	HEALTH_ROUTE_LOST,	/* a route of ours was deleted (by the kernel or
				 * someone): re-converge */
	HEALTH_MON_OVERRUN,	/* events were lost (ENOBUFS): re-converge */
};

struct health_link_event {
	enum health_link_kind kind;
	char dev[IF_NAMESIZE];	/* link events; "" otherwise */
	int ifindex;
};

/*
 * Parse one rtnetlink notification: 1 when it is a link event (any
 * device: RTM_NEWLINK up/down, RTM_DELLINK) or the deletion of a route of
 * ours (RTM_DELROUTE, protocol 245), with ev filled; 0 otherwise.
 */
int health_link_event_parse(const struct nlmsghdr *nlh, struct health_link_event *ev);

struct health_linkmon;
/* A NETLINK_ROUTE socket on RTNLGRP_LINK, RTNLGRP_IPV4_ROUTE and
 * RTNLGRP_IPV6_ROUTE, non-blocking. */
int health_linkmon_open(struct health_linkmon **mon, char *err, size_t errlen);
void health_linkmon_close(struct health_linkmon *mon);
/* Report link events of this device (by name; up to 8). Its current
 * state is read now: only changes are reported. */
int health_linkmon_watch(struct health_linkmon *mon, const char *dev);
/* For the agent's poll set: readable when health_linkmon_read() has work. */
int health_linkmon_fd(const struct health_linkmon *mon);
/*
 * Drain what the socket holds without blocking: up to max events (state
 * changes of watched devices, ROUTE_LOST at most once per call, OVERRUN
 * when the socket overflowed or more than max events came: re-converge
 * and re-read the links then). Returns the number stored or -errno.
 */
int health_linkmon_read(struct health_linkmon *mon, struct health_link_event *ev, unsigned int max);

#endif /* HEALTH_LINKMON_H */
