// SPDX-License-Identifier: GPL-2.0
/*
 * msg.c - the rtnetlink messages of tunnel-cfg, built into a caller's
 * buffer (no socket), and the parsers of the rules and routes the kernel
 * dumps back. tests/unit/test_tcfg.c checks them byte by byte.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "tcfg.h"

/* The DSCP rule selector (kernel >= 6.13); Debian 12's headers predate it. */
#ifndef FRA_DSCP
#define FRA_DSCP 25
#endif

/* VXLAN: the outer header copies the inner DSCP, so the class stays visible */
#define VXLAN_TOS_INHERIT 1

static struct nlmsghdr *msg_start(void *buf, int type, int flags)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, TCFG_MSG_SIZE);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	return nlh;
}

struct nlmsghdr *tcfg_msg_rule(void *buf, int type, const struct tcfg_rule *r)
{
	int flags = type == RTM_NEWRULE ? NLM_F_CREATE | NLM_F_EXCL : 0;
	struct nlmsghdr *nlh = msg_start(buf, type, flags);
	struct fib_rule_hdr *frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));

	frh->family = r->family;
	frh->action = FR_ACT_TO_TBL;
	frh->tos = r->tos;
	mnl_attr_put_u32(nlh, FRA_PRIORITY, r->prio);
	mnl_attr_put_u32(nlh, FRA_TABLE, r->table);
	mnl_attr_put_u8(nlh, FRA_PROTOCOL, TCFG_PROTO);
	if (r->iif[0])
		mnl_attr_put_strz(nlh, FRA_IIFNAME, r->iif);
	if (r->dscp >= 0)
		mnl_attr_put_u8(nlh, FRA_DSCP, r->dscp);
	return nlh;
}

/* RTA_MULTIPATH: one struct rtnexthop per path, each followed by its
 * RTA_GATEWAY (if any); rtnh_len covers both. */
static void put_multipath(struct nlmsghdr *nlh, int family,
			  const struct tcfg_nexthop *nh, int nnh)
{
	struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	int i;

	for (i = 0; i < nnh; i++) {
		struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);

		memset(rtnh, 0, sizeof(*rtnh));
		rtnh->rtnh_ifindex = nh[i].oif;
		nlh->nlmsg_len += RTNH_ALIGN(sizeof(*rtnh));
		if (nh[i].via.family)
			mnl_attr_put(nlh, RTA_GATEWAY, tcfg_alen(family), nh[i].via.addr);
		rtnh->rtnh_len = (char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh;
	}
	mnl_attr_nest_end(nlh, mp);
}

struct nlmsghdr *tcfg_msg_route(void *buf, int type, const struct tcfg_route *rt)
{
	int flags = type == RTM_NEWROUTE ? NLM_F_CREATE | NLM_F_REPLACE : 0;
	struct nlmsghdr *nlh = msg_start(buf, type, flags);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	rtm->rtm_family = rt->family;
	rtm->rtm_dst_len = rt->dst.len;
	/* the header's table is 8 bits; RTA_TABLE carries the full number */
	rtm->rtm_table = rt->table < 256 ? rt->table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = TCFG_PROTO;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, rt->table);
	mnl_attr_put(nlh, RTA_DST, tcfg_alen(rt->family), rt->dst.addr);
	if (rt->nnh == 1) {
		mnl_attr_put_u32(nlh, RTA_OIF, rt->nh[0].oif);
		if (rt->nh[0].via.family)
			mnl_attr_put(nlh, RTA_GATEWAY, tcfg_alen(rt->family),
				     rt->nh[0].via.addr);
	} else if (rt->nnh > 1) {
		put_multipath(nlh, rt->family, rt->nh, rt->nnh);
	}
	return nlh;
}

struct nlmsghdr *tcfg_msg_dump(void *buf, int type)
{
	struct nlmsghdr *nlh = msg_start(buf, type, NLM_F_DUMP);
	size_t hdr = type == RTM_GETRULE ? sizeof(struct fib_rule_hdr) :
		     type == RTM_GETROUTE ? sizeof(struct rtmsg) :
		     type == RTM_GETADDR ? sizeof(struct ifaddrmsg) : sizeof(struct ifinfomsg);
	unsigned char *family = mnl_nlmsg_put_extra_header(nlh, hdr);

	/* the first byte of fib_rule_hdr, rtmsg, ifaddrmsg and ifinfomsg alike */
	*family = AF_UNSPEC;
	return nlh;
}

struct nlmsghdr *tcfg_msg_link(void *buf, int type, int ifindex)
{
	struct nlmsghdr *nlh = msg_start(buf, type, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_index = ifindex;
	return nlh;
}

static void put_vxlan(struct nlmsghdr *nlh, const struct tcfg_tunnel *t, int underlay)
{
	struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	int alen = tcfg_alen(t->local.family);

	mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, t->vni);
	mnl_attr_put(nlh, t->local.family == AF_INET6 ? IFLA_VXLAN_LOCAL6 : IFLA_VXLAN_LOCAL,
		     alen, t->local.addr);
	mnl_attr_put(nlh, t->local.family == AF_INET6 ? IFLA_VXLAN_GROUP6 : IFLA_VXLAN_GROUP,
		     alen, t->remote.addr);
	mnl_attr_put_u32(nlh, IFLA_VXLAN_LINK, underlay);
	mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(t->dstport));	/* network order */
	mnl_attr_put_u8(nlh, IFLA_VXLAN_TOS, VXLAN_TOS_INHERIT);
	mnl_attr_put_u8(nlh, IFLA_VXLAN_LEARNING, 0);
	mnl_attr_nest_end(nlh, data);
}

struct nlmsghdr *tcfg_msg_newlink(void *buf, const struct tcfg_tunnel *t,
				  int underlay, __u32 mtu)
{
	struct nlmsghdr *nlh = msg_start(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *li;

	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, t->name);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, t->kind);
	if (!strcmp(t->kind, "vxlan"))
		put_vxlan(nlh, t, underlay);
	mnl_attr_nest_end(nlh, li);
	return nlh;
}

struct nlmsghdr *tcfg_msg_newaddr(void *buf, int ifindex, const struct sc_prefix *p)
{
	struct nlmsghdr *nlh = msg_start(buf, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

	ifa->ifa_family = p->family;
	ifa->ifa_prefixlen = p->len;
	ifa->ifa_index = ifindex;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	/* a lab tunnel's address is ours alone: usable at once, no DAD wait */
	ifa->ifa_flags = p->family == AF_INET6 ? IFA_F_NODAD : 0;
	mnl_attr_put(nlh, IFA_LOCAL, tcfg_alen(p->family), p->addr);
	mnl_attr_put(nlh, IFA_ADDRESS, tcfg_alen(p->family), p->addr);
	return nlh;
}

struct nlmsghdr *tcfg_msg_setalias(void *buf, int ifindex, const char *alias)
{
	struct nlmsghdr *nlh = msg_start(buf, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	/* no NLM_F_CREATE: changes the existing interface of ifindex only */
	ifi->ifi_index = ifindex;
	mnl_attr_put_strz(nlh, IFLA_IFALIAS, alias);
	return nlh;
}

bool tcfg_parse_rule(const struct nlmsghdr *nlh, struct tcfg_rule *r)
{
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	bool ours = false;

	memset(r, 0, sizeof(*r));
	r->dscp = -1;
	r->family = frh->family;
	r->tos = frh->tos;
	r->table = frh->table;
	mnl_attr_for_each(a, nlh, sizeof(*frh)) {
		switch (mnl_attr_get_type(a)) {
		case FRA_PRIORITY: r->prio = mnl_attr_get_u32(a); break;
		case FRA_TABLE: r->table = mnl_attr_get_u32(a); break;
		case FRA_IIFNAME:
			snprintf(r->iif, sizeof(r->iif), "%s", mnl_attr_get_str(a));
			break;
		case FRA_PROTOCOL: ours = mnl_attr_get_u8(a) == TCFG_PROTO; break;
		case FRA_DSCP: r->dscp = mnl_attr_get_u8(a); break;
		}
	}
	return ours;
}

static void parse_gateway(const struct nlattr *a, int family, struct sc_prefix *via)
{
	if (mnl_attr_get_payload_len(a) != tcfg_alen(family))
		return;
	via->family = family;
	via->len = family == AF_INET6 ? 128 : 32;
	memcpy(via->addr, mnl_attr_get_payload(a), tcfg_alen(family));
}

/* RTA_MULTIPATH: rtnexthop entries, each with its own attributes after it */
static void parse_multipath(const struct nlattr *a, struct tcfg_route *rt)
{
	const struct rtnexthop *nh = mnl_attr_get_payload(a);
	int left = mnl_attr_get_payload_len(a);

	while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
	       nh->rtnh_len <= left && rt->nnh < 2) {
		struct tcfg_nexthop *out = &rt->nh[rt->nnh++];
		const struct nlattr *na =
			(const void *)((const char *)nh + RTNH_ALIGN(sizeof(*nh)));
		int alen = nh->rtnh_len - RTNH_ALIGN(sizeof(*nh));

		out->oif = nh->rtnh_ifindex;
		out->dead = nh->rtnh_flags & RTNH_F_DEAD;
		while (mnl_attr_ok(na, alen)) {
			if (mnl_attr_get_type(na) == RTA_GATEWAY)
				parse_gateway(na, rt->family, &out->via);
			alen -= MNL_ALIGN(na->nla_len);
			na = mnl_attr_next(na);
		}
		left -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
}

bool tcfg_parse_route(const struct nlmsghdr *nlh, struct tcfg_route *rt)
{
	return tcfg_parse_route_any(nlh, rt) == TCFG_PROTO;
}

int tcfg_parse_route_any(const struct nlmsghdr *nlh, struct tcfg_route *rt)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	memset(rt, 0, sizeof(*rt));
	rt->family = rt->dst.family = rtm->rtm_family;
	rt->dst.len = rtm->rtm_dst_len;
	rt->table = rtm->rtm_table;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		switch (mnl_attr_get_type(a)) {
		case RTA_TABLE: rt->table = mnl_attr_get_u32(a); break;
		case RTA_DST:
			if (mnl_attr_get_payload_len(a) == tcfg_alen(rt->family))
				memcpy(rt->dst.addr, mnl_attr_get_payload(a),
				       tcfg_alen(rt->family));
			break;
		case RTA_OIF:
			rt->nh[0].oif = mnl_attr_get_u32(a);
			rt->nh[0].dead = rtm->rtm_flags & RTNH_F_DEAD;
			rt->nnh = 1;
			break;
		case RTA_GATEWAY: parse_gateway(a, rt->family, &rt->nh[0].via); break;
		case RTA_MULTIPATH: parse_multipath(a, rt); break;
		}
	}
	return rtm->rtm_protocol;
}
