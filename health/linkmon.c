// SPDX-License-Identifier: GPL-2.0
/*
 * linkmon.c - the agent's netlink monitor (linkmon.h): link up/down/
 * deleted of the tunnel devices, and routes of ours the kernel (or
 * someone) deleted. A tunnel device going down makes the kernel drop the
 * IPv4 routes through it, without an RTM_DELROUTE notification, and they
 * do not come back with the link: the agent re-converges on these events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/rtnetlink.h>

#include "linkmon.h"
#include "tcfg.h"

#define LINKMON_MAX_DEVS 8

struct watched {
	char name[IF_NAMESIZE];
	int known;		/* -1 unknown, else the last kind reported */
};

struct health_linkmon {
	struct mnl_socket *sock;
	struct watched dev[LINKMON_MAX_DEVS];
	int ndev;
	char buf[32768];
};

int health_link_event_parse(const struct nlmsghdr *nlh, struct health_link_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK) {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
		const struct nlattr *a;

		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
			return 0;
		ev->ifindex = ifi->ifi_index;
		mnl_attr_for_each(a, nlh, sizeof(*ifi))
			if (mnl_attr_get_type(a) == IFLA_IFNAME &&
			    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
				snprintf(ev->dev, sizeof(ev->dev), "%s", mnl_attr_get_str(a));
		if (nlh->nlmsg_type == RTM_DELLINK)
			ev->kind = HEALTH_LINK_DELETED;
		else
			ev->kind = (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_RUNNING) ?
				   HEALTH_LINK_UP : HEALTH_LINK_DOWN;
		return 1;
	}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm)) ||
		    rtm->rtm_protocol != TCFG_PROTO)
			return 0;
		ev->kind = HEALTH_ROUTE_LOST;
		return 1;
	}
	return 0;
}

int health_linkmon_open(struct health_linkmon **out, char *err, size_t errlen)
{
	struct health_linkmon *m = calloc(1, sizeof(*m));
	unsigned int groups[] = { RTNLGRP_LINK, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE };
	size_t i;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->sock = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!m->sock || mnl_socket_bind(m->sock, 0, MNL_SOCKET_AUTOPID))
		goto fail;
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(m->sock, NETLINK_ADD_MEMBERSHIP, &groups[i],
					  sizeof(groups[i])))
			goto fail;
	*out = m;
	return 0;
fail:
	snprintf(err, errlen, "netlink monitor: %s", strerror(errno));
	i = errno;
	if (m->sock)
		mnl_socket_close(m->sock);
	free(m);
	return -(int)i;
}

void health_linkmon_close(struct health_linkmon *m)
{
	if (!m)
		return;
	mnl_socket_close(m->sock);
	free(m);
}

int health_linkmon_fd(const struct health_linkmon *m)
{
	return mnl_socket_get_fd(m->sock);
}

int health_linkmon_watch(struct health_linkmon *m, const char *dev)
{
	struct watched *w;

	if (m->ndev == LINKMON_MAX_DEVS || !*dev || strlen(dev) >= IF_NAMESIZE)
		return -EINVAL;
	w = &m->dev[m->ndev++];
	snprintf(w->name, sizeof(w->name), "%s", dev);
	w->known = -1;
	/* the first notification reports the state, then only changes */
	if (if_nametoindex(dev)) {
		struct ifreq ifr = { 0 };
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
		if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr))
			w->known = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING) ?
				   HEALTH_LINK_UP : HEALTH_LINK_DOWN;
		if (fd >= 0)
			close(fd);
	} else {
		w->known = HEALTH_LINK_DELETED;
	}
	return 0;
}

/* A change of a watched device's state: true to report ev. */
static bool watched_change(struct health_linkmon *m, const struct health_link_event *ev)
{
	int i;

	for (i = 0; i < m->ndev; i++) {
		if (strcmp(m->dev[i].name, ev->dev))
			continue;
		if (m->dev[i].known == (int)ev->kind)
			return false;
		m->dev[i].known = ev->kind;
		return true;
	}
	return false;
}

int health_linkmon_read(struct health_linkmon *m, struct health_link_event *ev, unsigned int max)
{
	unsigned int n = 0;
	bool route_lost = false;

	while (n < max) {
		ssize_t len = mnl_socket_recvfrom(m->sock, m->buf, sizeof(m->buf));
		const struct nlmsghdr *nlh;
		int left;

		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			if (errno != ENOBUFS)
				return -errno;
			/* the socket overflowed: events are lost, the caller
			 * re-converges from what the kernel has */
			ev[n].kind = HEALTH_MON_OVERRUN;
			ev[n].dev[0] = '\0';
			ev[n++].ifindex = 0;
			continue;
		}
		left = len;
		for (nlh = (const void *)m->buf; mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			struct health_link_event one;

			if (!health_link_event_parse(nlh, &one))
				continue;
			if (one.kind == HEALTH_ROUTE_LOST ? route_lost : !watched_change(m, &one))
				continue;
			route_lost |= one.kind == HEALTH_ROUTE_LOST;
			if (n < max)
				ev[n++] = one;
			else	/* no room: the last slot says events were lost */
				ev[max - 1].kind = HEALTH_MON_OVERRUN;
		}
	}
	return n;
}
