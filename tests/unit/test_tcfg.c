// SPDX-License-Identifier: GPL-2.0
/*
 * test_tcfg.c - unit tests of tunnel-cfg without a socket (TAP output):
 * the rule, route and link messages it would send (header flags, family,
 * table, owner protocol, priority, DSCP/TOS selector, iif, multipath next
 * hops, VXLAN attributes), the rules and routes "route up" wants, the
 * routes of each health plan, the degraded check, routes and link events
 * parsed back, the record of "route up", the settings parser, the spill
 * class's qdisc, class and filter messages, and the JSON of names that
 * need escaping and of the tunnel health and spill.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>

#include "health_file.h"
#include "json_print.h"
#include "linkmon.h"
#include "tcfg.h"
#include "util.h"
#include "tap.h"
#include "capture.h"

#ifndef FRA_DSCP
#define FRA_DSCP 25
#endif

#define ok tap_ok

static char buf[TCFG_MSG_SIZE];

/* The attribute of this type at the top level of nlh (after hdrlen), or NULL. */
static const struct nlattr *attr(const struct nlmsghdr *nlh, size_t hdrlen, int type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, hdrlen)
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static const struct nlattr *nested(const struct nlattr *nest, int type)
{
	const struct nlattr *a;

	if (!nest)
		return NULL;
	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static __u32 u32_of(const struct nlattr *a)
{
	return a ? mnl_attr_get_u32(a) : 0xdeadbeef;
}

static int u8_of(const struct nlattr *a)
{
	return a ? mnl_attr_get_u8(a) : -1;
}

#define REQ_ACK (NLM_F_REQUEST | NLM_F_ACK)

/* ---- rules ------------------------------------------------------------------ */
static void test_rule_msgs(void)
{
	struct tcfg_rule r = { .family = AF_INET6, .table = 101, .prio = 1000,
			       .iif = "lan0", .dscp = 10 }, back;
	const struct nlmsghdr *nlh = tcfg_msg_rule(buf, RTM_NEWRULE, &r);
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	size_t h = sizeof(*frh);

	ok(nlh->nlmsg_type == RTM_NEWRULE, "new rule: type RTM_NEWRULE");
	ok(nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "new rule: REQUEST|ACK|CREATE|EXCL (flags 0x%x)", nlh->nlmsg_flags);
	ok(frh->family == AF_INET6 && frh->action == FR_ACT_TO_TBL && frh->tos == 0,
	   "new rule: family IPv6, action to-table, no tos with a DSCP selector");
	ok(u32_of(attr(nlh, h, FRA_PRIORITY)) == 1000, "new rule: priority 1000");
	ok(u32_of(attr(nlh, h, FRA_TABLE)) == 101, "new rule: table 101");
	ok(u8_of(attr(nlh, h, FRA_PROTOCOL)) == TCFG_PROTO, "new rule: protocol %d (ours)",
	   TCFG_PROTO);
	ok(u8_of(attr(nlh, h, FRA_DSCP)) == 10, "new rule: FRA_DSCP 10");
	ok(attr(nlh, h, FRA_IIFNAME) &&
	   !strcmp(mnl_attr_get_str(attr(nlh, h, FRA_IIFNAME)), "lan0"), "new rule: iif lan0");
	ok(tcfg_parse_rule(nlh, &back) && back.family == r.family && back.prio == r.prio &&
	   back.table == r.table && !strcmp(back.iif, r.iif) && back.dscp == r.dscp &&
	   back.tos == 0, "new rule parses back to the same rule, as ours");

	/* the classic selector: DSCP 1 is TOS byte 0x04, no FRA_DSCP; any iif */
	r = (struct tcfg_rule){
		.family = AF_INET, .table = 4000, .prio = 7, .dscp = -1, .tos = 0x04};
	nlh = tcfg_msg_rule(buf, RTM_NEWRULE, &r);
	frh = mnl_nlmsg_get_payload(nlh);
	ok(frh->family == AF_INET && frh->tos == 0x04, "tos rule: family IPv4, tos 0x04");
	ok(!attr(nlh, h, FRA_DSCP) && !attr(nlh, h, FRA_IIFNAME),
	   "tos rule: no FRA_DSCP, no FRA_IIFNAME");
	ok(u32_of(attr(nlh, h, FRA_TABLE)) == 4000, "tos rule: a table above 255 in FRA_TABLE");

	nlh = tcfg_msg_rule(buf, RTM_DELRULE, &r);
	ok(nlh->nlmsg_type == RTM_DELRULE && nlh->nlmsg_flags == REQ_ACK,
	   "del rule: REQUEST|ACK only (flags 0x%x)", nlh->nlmsg_flags);
	ok(u8_of(attr(nlh, h, FRA_PROTOCOL)) == TCFG_PROTO, "del rule: matches our protocol only");

	/* a rule someone else added is not ours */
	((struct nlattr *)attr(nlh, h, FRA_PROTOCOL))->nla_type = FRA_UNSPEC;
	ok(!tcfg_parse_rule(nlh, &back), "a rule without our protocol is not ours");
}

/* ---- routes ------------------------------------------------------------------ */
static struct sc_prefix pfx(const char *s)
{
	struct sc_prefix p;

	if (sc_parse_prefix(s, 0, strchr(s, '/') ? SC_PFX_NEED_LEN | SC_PFX_HOST_BITS :
			    SC_PFX_ADDR, &p))
		memset(&p, 0, sizeof(p));
	return p;
}

static void test_route_msgs(void)
{
	struct tcfg_route rt = {.family = AF_INET,
				.table = 100,
				.dst = pfx("10.2.0.0/24"),
				.nh = {{.oif = 7, .via = pfx("192.168.101.2")}},
				.nnh = 1},
			  back;
	const struct nlmsghdr *nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &rt);
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	size_t h = sizeof(*rtm);
	unsigned char gw4[4] = { 192, 168, 101, 2 }, dst4[4] = { 10, 2, 0, 0 };

	ok(nlh->nlmsg_type == RTM_NEWROUTE, "new route: type RTM_NEWROUTE");
	ok(nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_REPLACE),
	   "new route: REQUEST|ACK|CREATE|REPLACE (flags 0x%x)", nlh->nlmsg_flags);
	ok(rtm->rtm_family == AF_INET && rtm->rtm_dst_len == 24 && rtm->rtm_table == 100 &&
	   rtm->rtm_protocol == TCFG_PROTO && rtm->rtm_type == RTN_UNICAST &&
	   rtm->rtm_scope == RT_SCOPE_UNIVERSE,
	   "new route: IPv4 /24, table 100, protocol %d, unicast, universe", TCFG_PROTO);
	ok(u32_of(attr(nlh, h, RTA_TABLE)) == 100, "new route: RTA_TABLE 100");
	a = attr(nlh, h, RTA_DST);
	ok(a && mnl_attr_get_payload_len(a) == 4 && !memcmp(mnl_attr_get_payload(a), dst4, 4),
	   "new route: RTA_DST 10.2.0.0");
	ok(u32_of(attr(nlh, h, RTA_OIF)) == 7, "new route: RTA_OIF 7");
	a = attr(nlh, h, RTA_GATEWAY);
	ok(a && mnl_attr_get_payload_len(a) == 4 && !memcmp(mnl_attr_get_payload(a), gw4, 4),
	   "new route: RTA_GATEWAY 192.168.101.2");
	ok(!attr(nlh, h, RTA_MULTIPATH), "new route: one next hop, no RTA_MULTIPATH");

	rt.table = 1000;
	nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &rt);
	rtm = mnl_nlmsg_get_payload(nlh);
	ok(rtm->rtm_table == RT_TABLE_UNSPEC && u32_of(attr(nlh, h, RTA_TABLE)) == 1000,
	   "table 1000: header table UNSPEC, RTA_TABLE 1000");

	rt.nnh = 0;
	nlh = tcfg_msg_route(buf, RTM_DELROUTE, &rt);
	ok(nlh->nlmsg_type == RTM_DELROUTE && nlh->nlmsg_flags == REQ_ACK,
	   "del route: REQUEST|ACK only (flags 0x%x)", nlh->nlmsg_flags);
	ok(!attr(nlh, h, RTA_OIF) && !attr(nlh, h, RTA_GATEWAY) && !attr(nlh, h, RTA_MULTIPATH),
	   "del route without next hops: by destination and table");
	ok(((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_protocol == TCFG_PROTO,
	   "del route: matches our protocol only");
	ok(tcfg_parse_route(nlh, &back) && back.table == 1000 && back.dst.len == 24 &&
	   !memcmp(back.dst.addr, dst4, 4), "a route parses back (table, destination), as ours");
}

static void test_multipath_msg(void)
{
	struct tcfg_route rt = { .family = AF_INET6, .table = 100, .dst = pfx("fd02::/64"),
				 .nh = { { .oif = 7, .via = pfx("fd10:1::2") },
					 { .oif = 8, .via = pfx("fd10:2::2") } },
				 .nnh = 2 }, back;
	const struct nlmsghdr *nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &rt);
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *mp = attr(nlh, sizeof(*rtm), RTA_MULTIPATH);
	const struct rtnexthop *nh;
	int left, n = 0, good = 0;

	ok(rtm->rtm_family == AF_INET6 && rtm->rtm_dst_len == 64, "multipath: IPv6 /64");
	ok(!attr(nlh, sizeof(*rtm), RTA_OIF) && !attr(nlh, sizeof(*rtm), RTA_GATEWAY),
	   "multipath: no top-level RTA_OIF or RTA_GATEWAY");
	ok(mp != NULL, "multipath: RTA_MULTIPATH present");
	if (!mp)
		return;
	nh = mnl_attr_get_payload(mp);
	left = mnl_attr_get_payload_len(mp);
	while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh)) {
		const struct nlattr *gw =
			(const void *)((const char *)nh + RTNH_ALIGN(sizeof(*nh)));
		const struct sc_prefix *via = &rt.nh[n < 2 ? n : 1].via;

		good += n < 2 && nh->rtnh_ifindex == rt.nh[n].oif &&
			nh->rtnh_len == RTNH_ALIGN(sizeof(*nh)) + MNL_ALIGN(sizeof(*gw) + 16) &&
			mnl_attr_get_type(gw) == RTA_GATEWAY &&
			mnl_attr_get_payload_len(gw) == 16 &&
			!memcmp(mnl_attr_get_payload(gw), via->addr, 16);
		n++;
		left -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
	ok(n == 2 && left == 0, "multipath: exactly two rtnexthop entries (%d)", n);
	ok(good == 2, "multipath: ifindex 7 and 8, each with its 16-byte RTA_GATEWAY");
	ok(tcfg_parse_route(nlh, &back) && back.nnh == 2 && back.nh[0].oif == 7 &&
	   back.nh[1].oif == 8, "multipath parses back to two next hops");
}

/* One "tunnel add" option by its key, through tunnel-cfg's table, named as
 * on the command line ("--vni: ..."); 0 or -1 with the reason in err. */
static int tcfg_tunnel_set(struct tcfg_tunnel *t, const char *key, const char *value,
			   char *err, size_t errlen)
{
	struct sc_opt_ref r;

	if (sc_option_find(tcfg_tunnel_opts, t, key, true, &r)) {
		snprintf(err, errlen, "unknown tunnel setting '%s'", key);
		return -1;
	}
	return sc_option_set(&r, value, "--", err, errlen) ? -1 : 0;
}

/* ---- links -------------------------------------------------------------------- */
static struct tcfg_tunnel *vxlan(const char *name, const char *local, const char *remote)
{
	char err[256];
	struct tcfg_tunnel *t = tcfg_tunnel_new(name, "vxlan", err, sizeof(err));

	if (!t || tcfg_tunnel_set(t, "vni", "101", err, sizeof(err)) ||
	    tcfg_tunnel_set(t, "local", local, err, sizeof(err)) ||
	    tcfg_tunnel_set(t, "remote", remote, err, sizeof(err)) ||
	    tcfg_tunnel_set(t, "dev", "a1", err, sizeof(err))) {
		printf("# vxlan(%s): %s\n", name, err);
		exit(1);
	}
	return t;
}

static void test_link_msgs(void)
{
	struct tcfg_tunnel *t = vxlan("vxs", "172.16.1.1", "172.16.1.2");
	const struct nlmsghdr *nlh = tcfg_msg_newlink(buf, t, 5, 1500);
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	size_t h = sizeof(*ifi);
	const struct nlattr *li = attr(nlh, h, IFLA_LINKINFO);
	const struct nlattr *data = nested(li, IFLA_INFO_DATA), *a;
	unsigned char local[4] = { 172, 16, 1, 1 }, remote[4] = { 172, 16, 1, 2 };

	ok(nlh->nlmsg_type == RTM_NEWLINK &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "new link: RTM_NEWLINK, REQUEST|ACK|CREATE|EXCL (flags 0x%x)", nlh->nlmsg_flags);
	ok(ifi->ifi_flags == IFF_UP && ifi->ifi_change == IFF_UP, "new link: created up");
	ok(attr(nlh, h, IFLA_IFNAME) && !strcmp(mnl_attr_get_str(attr(nlh, h, IFLA_IFNAME)), "vxs"),
	   "new link: name vxs");
	ok(u32_of(attr(nlh, h, IFLA_MTU)) == 1500, "new link: MTU 1500");
	ok(nested(li, IFLA_INFO_KIND) &&
		   !strcmp(mnl_attr_get_str(nested(li, IFLA_INFO_KIND)), "vxlan"),
	   "new link: kind vxlan");
	ok(u32_of(nested(data, IFLA_VXLAN_ID)) == 101, "vxlan: VNI 101");
	a = nested(data, IFLA_VXLAN_LOCAL);
	ok(a && mnl_attr_get_payload_len(a) == 4 && !memcmp(mnl_attr_get_payload(a), local, 4),
	   "vxlan: local 172.16.1.1");
	a = nested(data, IFLA_VXLAN_GROUP);
	ok(a && mnl_attr_get_payload_len(a) == 4 && !memcmp(mnl_attr_get_payload(a), remote, 4),
	   "vxlan: remote 172.16.1.2");
	ok(u32_of(nested(data, IFLA_VXLAN_LINK)) == 5, "vxlan: underlay ifindex 5");
	a = nested(data, IFLA_VXLAN_PORT);
	ok(a && mnl_attr_get_u16(a) == htons(4789), "vxlan: port 4789 in network byte order");
	ok(u8_of(nested(data, IFLA_VXLAN_TOS)) == 1, "vxlan: tos inherit");
	ok(u8_of(nested(data, IFLA_VXLAN_LEARNING)) == 0, "vxlan: learning off");
	ok(!nested(data, IFLA_VXLAN_LOCAL6), "vxlan over IPv4: no IPv6 addresses");
	tcfg_tunnel_free(t);

	t = vxlan("vx6", "fd00::1", "fd00::2");
	tcfg_tunnel_set(t, "dstport", "8472", NULL, 0);
	nlh = tcfg_msg_newlink(buf, t, 5, 0);
	li = attr(nlh, h, IFLA_LINKINFO);
	data = nested(li, IFLA_INFO_DATA);
	a = nested(data, IFLA_VXLAN_LOCAL6);
	ok(a && mnl_attr_get_payload_len(a) == 16 && nested(data, IFLA_VXLAN_GROUP6) &&
	   !nested(data, IFLA_VXLAN_LOCAL), "vxlan over IPv6: LOCAL6 and GROUP6 (16 bytes)");
	ok(mnl_attr_get_u16(nested(data, IFLA_VXLAN_PORT)) == htons(8472), "vxlan: dstport 8472");
	ok(!attr(nlh, h, IFLA_MTU), "no MTU given: no IFLA_MTU");
	tcfg_tunnel_free(t);

	nlh = tcfg_msg_link(buf, RTM_DELLINK, 9);
	ok(nlh->nlmsg_type == RTM_DELLINK && nlh->nlmsg_flags == REQ_ACK &&
	   ((struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index == 9,
	   "del link: ifindex 9, REQUEST|ACK");
	nlh = tcfg_msg_dump(buf, RTM_GETROUTE);
	ok(nlh->nlmsg_flags == (REQ_ACK | NLM_F_DUMP) &&
	   ((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_family == AF_UNSPEC &&
	   nlh->nlmsg_len == NLMSG_LENGTH(sizeof(struct rtmsg)),
	   "route dump: DUMP of every family");
}

/* ---- what "route up" wants ---------------------------------------------------- */
static struct tcfg_spec *spec(const char *const *kv)
{
	struct tcfg_spec *s = tcfg_spec_new();
	char err[256];

	for (; *kv; kv += 2)
		if (tcfg_spec_set(s, kv[0], kv[1], err, sizeof(err))) {
			printf("# spec %s=%s: %s\n", kv[0], kv[1], err);
			exit(1);
		}
	return s;
}

static void test_addr_msgs(void)
{
	struct sc_prefix p;
	const struct nlmsghdr *nlh;
	const struct ifaddrmsg *ifa;
	const struct nlattr *a;

	sc_parse_prefix("fd10:1::1/64", 0, SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, &p);
	nlh = tcfg_msg_newaddr(buf, 7, &p);
	ifa = mnl_nlmsg_get_payload(nlh);
	ok(nlh->nlmsg_type == RTM_NEWADDR &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "new address: RTM_NEWADDR, REQUEST|ACK|CREATE|EXCL");
	ok(ifa->ifa_family == AF_INET6 && ifa->ifa_prefixlen == 64 && ifa->ifa_index == 7 &&
	   ifa->ifa_flags == IFA_F_NODAD, "new address: IPv6 /64 on ifindex 7, no DAD");
	a = attr(nlh, sizeof(*ifa), IFA_LOCAL);
	ok(a && mnl_attr_get_payload_len(a) == 16 && !memcmp(mnl_attr_get_payload(a), p.addr, 16),
	   "new address: IFA_LOCAL fd10:1::1");
	sc_parse_prefix("192.168.101.1/30", 0, SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, &p);
	nlh = tcfg_msg_newaddr(buf, 7, &p);
	ifa = mnl_nlmsg_get_payload(nlh);
	a = attr(nlh, sizeof(*ifa), IFA_ADDRESS);
	ok(ifa->ifa_family == AF_INET && ifa->ifa_prefixlen == 30 && !ifa->ifa_flags && a &&
	   mnl_attr_get_payload_len(a) == 4, "new address: IPv4 /30, IFA_ADDRESS 4 bytes");
	nlh = tcfg_msg_setalias(buf, 9, "tag");
	ok(nlh->nlmsg_type == RTM_NEWLINK && !(nlh->nlmsg_flags & NLM_F_CREATE) &&
	   ((const struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index == 9 &&
	   !strcmp(mnl_attr_get_str(attr(nlh, sizeof(struct ifinfomsg), IFLA_IFALIAS)), "tag"),
	   "alias: RTM_NEWLINK without CREATE on ifindex 9, IFLA_IFALIAS");
}

static void test_wanted(void)
{
	static const char *const split[] = {
		"mode", "split", "short-dev", "vxs", "long-dev", "vxl",
		"prefix", "10.2.0.0/24 fd02::/64", "lan-dev", "lana", "lan-dev", "lanb",
		"via-short", "192.168.101.2, fd10:1::2", NULL };
	static const char *const ecmp[] = {
		"mode", "ecmp", "short-dev", "vxs", "long-dev", "vxl", "prefix", "10.2.0.0/24",
		"via-short", "192.168.101.2", "via-long", "192.168.102.2", "priority", "50", NULL };
	static struct tcfg_rules rules;
	static struct tcfg_routes routes;
	struct tcfg_spec *s = spec(split);
	int i, long_rules = 0, sel_ok = 0;

	tcfg_rules_wanted(s, 1, false, &rules);
	ok(rules.n == 8, "split, 2 LAN interfaces: 8 rules (%d)", rules.n);
	for (i = 0; i < rules.n; i++) {
		const struct tcfg_rule *r = &rules.r[i];

		if (r->table == 101) {
			long_rules++;
			sel_ok += r->prio == 1000 && r->tos == 0x04 && r->dscp == -1;
		} else {
			sel_ok +=
				r->table == 100 && r->prio == 1001 && r->tos == 0 && r->dscp == -1;
		}
	}
	ok(long_rules == 4 && sel_ok == 8,
	   "split/tos: DSCP 1 -> tos 0x04 at PRIO to LONG, the rest at PRIO+1 to SHORT");
	ok(!strcmp(rules.r[0].iif, "lana") && !strcmp(rules.r[7].iif, "lanb"),
	   "rules per LAN interface");
	tcfg_rules_wanted(s, 46, true, &rules);
	ok(rules.r[0].dscp == 46 && rules.r[0].tos == 0, "split/dscp: FRA_DSCP 46, no tos");

	tcfg_routes_wanted(s, 7, 8, &routes);
	ok(routes.n == 4, "split, 2 prefixes: 4 routes (%d)", routes.n);
	ok(routes.r[0].table == 100 && routes.r[0].nnh == 1 && routes.r[0].nh[0].oif == 7 &&
	   routes.r[0].nh[0].via.family == AF_INET && routes.r[1].table == 101 &&
	   routes.r[1].nh[0].oif == 8 && !routes.r[1].nh[0].via.family,
	   "split: SHORT table via the SHORT tunnel (gateway), LONG table via the LONG tunnel");
	ok(routes.r[2].family == AF_INET6 && routes.r[2].nh[0].via.family == AF_INET6,
	   "split: an IPv6 prefix takes the IPv6 gateway");
	tcfg_spec_free(s);

	s = spec(ecmp);
	tcfg_rules_wanted(s, 1, true, &rules);
	ok(rules.n == 2 && rules.r[0].prio == 51 && rules.r[0].table == 100 && !rules.r[0].iif[0] &&
	   rules.r[0].dscp == -1 && rules.r[0].tos == 0 && rules.r[1].family == AF_INET6,
	   "ecmp: one rule per family at PRIO+1 to SHORT, any iif, no selector");
	tcfg_routes_wanted(s, 7, 8, &routes);
	ok(routes.n == 1 && routes.r[0].nnh == 2 && routes.r[0].table == 100 &&
	   routes.r[0].nh[0].oif == 7 && routes.r[0].nh[1].oif == 8 &&
	   routes.r[0].nh[1].via.family == AF_INET, "ecmp: one multipath route over both tunnels");
	tcfg_spec_free(s);
}


/* ---- health plans -------------------------------------------------------------- */
static const char *const split_kv[] = {
	"mode", "split", "short-dev", "vxs", "long-dev", "vxl", "prefix", "10.2.0.0/24 fd02::/64",
	"lan-dev", "lana", "via-short", "192.168.101.2, fd10:1::2",
	"via-long", "192.168.102.2, fd10:2::2", "dscp-long", "1", "selector", "tos", NULL };
static const char *const ecmp_kv[] = {
	"mode", "ecmp", "short-dev", "vxs", "long-dev", "vxl", "prefix", "10.2.0.0/24 fd02::/64",
	"via-short", "192.168.101.2, fd10:1::2", "via-long", "192.168.102.2, fd10:2::2", NULL };

static struct health_plan plan_of(const struct tcfg_spec *s, enum health_both_down bd,
				  enum health_state sh, enum health_state lg)
{
	enum health_state st[HEALTH_TUNNELS] = { sh, lg };

	return health_plan(tcfg_health_mode(s), bd, st);
}

/* Route i of want: table, next hop count, first next hop's ifindex and
 * gateway (IPv4 gateways of 192.168.10X.2 by their third byte). */
static bool route_is(const struct tcfg_routes *w, int i, __u32 table, int nnh, int oif, int via3)
{
	const struct tcfg_route *rt = &w->r[i];

	return i < w->n && rt->table == table && rt->nnh == nnh && rt->nh[0].oif == oif &&
	       (rt->family != AF_INET || rt->nh[0].via.addr[2] == via3) &&
	       rt->nh[0].via.family == rt->family;
}

static void test_plan_split(void)
{
	static struct tcfg_routes want, normal;
	struct tcfg_spec *s = spec(split_kv);
	struct health_plan p;
	bool same = true;
	int i;

	/* both up: exactly what route up installs */
	p = tcfg_plan_normal(s);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want), "split, both up: a ROUTE plan");
	tcfg_routes_wanted(s, 7, 8, &normal);
	for (i = 0; i < normal.n; i++)
		same = same && tcfg_route_same(&want.r[i], &normal.r[i]);
	ok(want.n == 4 && normal.n == 4 && same, "split, both up: the routes of route up (%d)",
	   want.n);

	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_DOWN, HEALTH_UP);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 4 &&
	   route_is(&want, 0, 100, 1, 8, 102) && route_is(&want, 1, 101, 1, 8, 102) &&
	   route_is(&want, 2, 100, 1, 8, 0) && route_is(&want, 3, 101, 1, 8, 0),
	   "split, SHORT down: both tables over LONG (dev, LONG gateway), IPv4 and IPv6");
	ok(!memcmp(want.r[2].nh[0].via.addr, s->via_long[1].addr, 16),
	   "split, SHORT down: the IPv6 prefix takes LONG's IPv6 gateway");

	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_UP, HEALTH_DOWN);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 4 &&
	   route_is(&want, 0, 100, 1, 7, 101) && route_is(&want, 1, 101, 1, 7, 101),
	   "split, LONG down: both tables over SHORT");

	want.n = 99;
	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_DOWN, HEALTH_DOWN);
	ok(!tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 99,
	   "both down, keep: no change (KEEP)");
	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_INIT, HEALTH_UP);
	ok(!tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 99,
	   "a tunnel in init: no change (WAIT)");
	p = plan_of(s, HEALTH_BOTH_DOWN_MAIN, HEALTH_DOWN, HEALTH_DOWN);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 0,
	   "both down, main: no route of ours wanted");
	tcfg_spec_free(s);
}

static void test_plan_ecmp(void)
{
	static struct tcfg_routes want;
	struct tcfg_spec *s = spec(ecmp_kv);
	const struct nlmsghdr *nlh;
	struct health_plan p;
	size_t h = sizeof(struct rtmsg);

	p = tcfg_plan_normal(s);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 2 && want.r[0].nnh == 2 &&
	   want.r[0].nh[0].oif == 7 && want.r[0].nh[1].oif == 8 && want.r[0].table == 100,
	   "ecmp, both up: one multipath route per prefix in table SHORT");
	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_UP, HEALTH_DOWN);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && want.n == 2 &&
	   route_is(&want, 0, 100, 1, 7, 101) && route_is(&want, 1, 100, 1, 7, 0),
	   "ecmp, LONG down: the dead member leaves: a plain route over SHORT");
	nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &want.r[0]);
	ok(nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_REPLACE) &&
	   !attr(nlh, h, RTA_MULTIPATH) && u32_of(attr(nlh, h, RTA_OIF)) == 7 &&
	   attr(nlh, h, RTA_GATEWAY),
	   "ecmp, one member: REPLACE with RTA_OIF and RTA_GATEWAY, no RTA_MULTIPATH");
	p = plan_of(s, HEALTH_BOTH_DOWN_KEEP, HEALTH_DOWN, HEALTH_UP);
	ok(tcfg_routes_for_plan(s, 7, 8, &p, &want) && route_is(&want, 0, 100, 1, 8, 102),
	   "ecmp, SHORT down: a plain route over LONG");
	p = tcfg_plan_normal(s);
	tcfg_routes_for_plan(s, 7, 8, &p, &want);
	nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &want.r[0]);
	ok(nlh->nlmsg_flags & NLM_F_REPLACE && attr(nlh, h, RTA_MULTIPATH) &&
		   !attr(nlh, h, RTA_OIF),
	   "ecmp, back to both: REPLACE with RTA_MULTIPATH");
	tcfg_spec_free(s);
}

/* ---- routes read back; the degraded check ------------------------------------------ */
static void test_parse_back(void)
{
	struct tcfg_route rt = { .family = AF_INET6, .table = 100, .dst = pfx("fd02::/64"),
				 .nh = { { .oif = 7, .via = pfx("fd10:1::2") },
					 { .oif = 8, .via = pfx("fd10:2::2") } }, .nnh = 2 }, back;
	struct nlmsghdr *nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &rt);
	struct nlattr *mp = (struct nlattr *)attr(nlh, sizeof(struct rtmsg), RTA_MULTIPATH);
	struct rtnexthop *nh = mnl_attr_get_payload(mp);

	ok(tcfg_parse_route(nlh, &back) && tcfg_route_same(&back, &rt) && !back.nh[0].dead,
	   "multipath parses back with both gateways");
	RTNH_NEXT(nh)->rtnh_flags = RTNH_F_DEAD;
	ok(tcfg_parse_route(nlh, &back) && !back.nh[0].dead && back.nh[1].dead,
	   "a dead next hop (link down) is read as such");
	rt.nnh = 1;
	rt.family = AF_INET;
	rt.dst = pfx("10.2.0.0/24");
	rt.nh[0].via = pfx("192.168.101.2");
	nlh = tcfg_msg_route(buf, RTM_NEWROUTE, &rt);
	ok(tcfg_parse_route(nlh, &back) && tcfg_route_same(&back, &rt) &&
	   back.nh[0].via.family == AF_INET, "a single route parses back with its gateway");
	back.nh[0].via = pfx("192.168.101.3");
	ok(!tcfg_route_same(&back, &rt), "another gateway is another route");
	back = rt;
	back.nh[0].oif = 9;
	ok(!tcfg_route_same(&back, &rt) && tcfg_route_same_dst(&back, &rt),
	   "another device: same destination, not the same route");
}

static bool has_missing(const struct tcfg_missing *m, const char *what)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (strstr(m->what[i], what))
			return true;
	printf("# no '%s' in %d:", what, m->n);
	for (i = 0; i < m->n; i++)
		printf(" [%s]", m->what[i]);
	printf("\n");
	return false;
}

static void test_check(void)
{
	static struct tcfg_routes want, have;
	static struct tcfg_rules want_rules, have_rules;
	struct tcfg_spec *s = spec(split_kv);
	struct tcfg_missing m;
	struct health_plan p = tcfg_plan_normal(s);

	tcfg_routes_for_plan(s, 7, 8, &p, &want);
	tcfg_rules_recorded(s, &want_rules);
	ok(want_rules.n == 4 && want_rules.r[0].tos == 0x04 && want_rules.r[0].dscp == -1,
	   "recorded rules: the recorded code point and selector (tos 0x04)");
	have = want;
	have_rules = want_rules;
	tcfg_check(&want, &want_rules, &have, &have_rules, &m);
	ok(m.total == 0 && m.n == 0, "kernel as wanted: nothing missing");

	/* a link down/up dropped the LONG table's IPv4 route */
	have.r[1] = have.r[3];
	have.n = 3;
	tcfg_check(&want, &want_rules, &have, &have_rules, &m);
	ok(m.total == 1 && has_missing(&m, "table 101: route 10.2.0.0/24 via 192.168.102.2 dev ") &&
	   has_missing(&m, " missing"), "a dropped route is named with its gateway");

	have = want;
	have.r[0].nh[0] = want.r[1].nh[0];
	have.r[2].nh[0].dead = false;
	have.r[3].nh[0].dead = true;
	have_rules.n = 3;
	tcfg_check(&want, &want_rules, &have, &have_rules, &m);
	ok(m.total == 3 && has_missing(&m, "rule ipv6 priority 1001 iif lana lookup 100 missing") &&
	   has_missing(&m, "table 100: route 10.2.0.0/24 via 192.168.102.2 dev ") &&
	   has_missing(&m, " instead of 10.2.0.0/24 via 192.168.101.2 dev ") &&
	   has_missing(&m, "route fd02::/64 via fd10:2::2 dev ") && has_missing(&m, " dead"),
	   "a missing rule, a route over the wrong tunnel, a dead next hop");

	/* MAIN wants none: ours left over are reported */
	p = plan_of(s, HEALTH_BOTH_DOWN_MAIN, HEALTH_DOWN, HEALTH_DOWN);
	tcfg_routes_for_plan(s, 7, 8, &p, &have);
	tcfg_check(&have, &want_rules, &want, &want_rules, &m);
	ok(m.total == 4 && has_missing(&m, "not wanted"), "routes of ours not wanted are reported");
	tcfg_spec_free(s);
}

/* ---- link events -------------------------------------------------------------------- */
static struct nlmsghdr *link_msg(int type, int index, unsigned int flags, const char *name)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = index;
	ifi->ifi_flags = flags;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static void test_link_events(void)
{
	struct tcfg_route rt = { .family = AF_INET, .table = 101, .dst = pfx("10.2.0.0/24"),
				 .nh = { { .oif = 7 } }, .nnh = 1 };
	struct health_link_event ev;
	struct nlmsghdr *nlh;

	ok(health_link_event_parse(link_msg(RTM_NEWLINK, 7, IFF_UP | IFF_RUNNING, "vxl"), &ev) ==
			   1 &&
		   ev.kind == HEALTH_LINK_UP && ev.ifindex == 7 && !strcmp(ev.dev, "vxl"),
	   "RTM_NEWLINK up and running: LINK_UP, name and index");
	ok(health_link_event_parse(link_msg(RTM_NEWLINK, 7, IFF_UP, "vxl"), &ev) == 1 &&
	   ev.kind == HEALTH_LINK_DOWN, "up without carrier: LINK_DOWN");
	ok(health_link_event_parse(link_msg(RTM_NEWLINK, 7, 0, "vxl"), &ev) == 1 &&
	   ev.kind == HEALTH_LINK_DOWN, "administratively down: LINK_DOWN");
	ok(health_link_event_parse(link_msg(RTM_DELLINK, 7, 0, "vxl"), &ev) == 1 &&
	   ev.kind == HEALTH_LINK_DELETED && !strcmp(ev.dev, "vxl"), "RTM_DELLINK: LINK_DELETED");
	nlh = link_msg(RTM_NEWLINK, 7, IFF_UP | IFF_RUNNING, NULL);
	nlh->nlmsg_len = NLMSG_HDRLEN + 4;
	ok(health_link_event_parse(nlh, &ev) == 0, "a truncated link message is ignored");

	nlh = tcfg_msg_route(buf, RTM_DELROUTE, &rt);
	ok(health_link_event_parse(nlh, &ev) == 1 && ev.kind == HEALTH_ROUTE_LOST,
	   "RTM_DELROUTE of ours: ROUTE_LOST");
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_protocol = RTPROT_STATIC;
	ok(health_link_event_parse(nlh, &ev) == 0, "someone else's route deleted: no event");
	ok(health_link_event_parse(tcfg_msg_route(buf, RTM_NEWROUTE, &rt), &ev) == 0,
	   "RTM_NEWROUTE: no event");
}

/* ---- the record of route up ---------------------------------------------------------- */
static void test_record(void)
{
	struct tcfg_spec *s = spec(split_kv), back;
	struct json_object *o = tcfg_spec_to_json(s), *o2;
	struct tcfg_err e;
	char first[2048];

	snprintf(first, sizeof(first), "%s", json_object_to_json_string(o));
	ok(!tcfg_spec_from_json(o, &back, &e) && back.mode == MODE_SPLIT &&
	   back.nprefixes == 2 && back.nlan == 1 && !strcmp(back.long_dev, "vxl") &&
	   back.dscp_long == 1 && back.selector == SEL_TOS && back.table_long == 101 &&
	   back.via_long[1].family == AF_INET6 &&
	   !memcmp(back.prefixes[1].addr, s->prefixes[1].addr, 16),
	   "record: the settings read back through the setters: %s", first);
	o2 = tcfg_spec_to_json(&back);
	ok(!strcmp(first, json_object_to_json_string(o2)), "record: written again, the same text");
	json_object_put(o2);
	json_object_object_add(o, "table-long", json_object_new_string("254"));
	ok(tcfg_spec_from_json(o, &back, &e) == -EINVAL &&
		   strstr(e.msg, "table-long: invalid table '254'"),
	   "record: a bad value is refused naming it: %s", e.msg);
	json_object_object_add(o, "table-long", json_object_new_string("100"));
	ok(tcfg_spec_from_json(o, &back, &e) == -EINVAL && strstr(e.msg, "must differ"),
	   "record: checked as a whole (tables must differ)");
	json_object_put(o);
	tcfg_spec_free(s);
}

/* The record with the LONG shaper: long-rate and long-queue only when set,
 * read back the same; without them, the default queue */
static void test_record_longq(void)
{
	struct tcfg_spec *s = spec(split_kv), back;
	struct json_object *o = tcfg_spec_to_json(s);
	struct tcfg_err e;
	char err[256];

	ok(!json_object_object_get_ex(o, "long-rate", NULL) &&
		   !json_object_object_get_ex(o, "long-queue", NULL) &&
		   !tcfg_spec_from_json(o, &back, &e) &&
		   !back.long_rate_bps && back.long_queue_ns == 100 * FS_NS_PER_MS,
	   "record: no long-rate, no LONG shaper keys; read back with the default queue");
	json_object_put(o);
	ok(!tcfg_spec_set(s, "long-rate", "47.5mbit", err, sizeof(err)) &&
		   !tcfg_spec_set(s, "long-queue", "50ms", err, sizeof(err)),
	   "long-rate and long-queue are route settings");
	o = tcfg_spec_to_json(s);
	ok(!strcmp(json_object_get_string(json_object_object_get(o, "long-rate")),
		   "47.5mbit") &&
		   !strcmp(json_object_get_string(json_object_object_get(o, "long-queue")),
			   "50ms") &&
		   !tcfg_spec_from_json(o, &back, &e) && back.long_rate_bps == 47500000 &&
		   back.long_queue_ns == 50 * FS_NS_PER_MS,
	   "record: long-rate and long-queue written and read back: %s",
	   json_object_to_json_string(o));
	json_object_put(o);
	tcfg_spec_free(s);
}

/* ---- tunnel health in route show --------------------------------------------------- */
static char *capture_json(void (*fn)(void));
static struct health_file shown_hf;
static bool shown_monitored;

static void emit_health(void)
{
	open_json_object(NULL);
	health_file_show(&shown_hf, shown_monitored);
	close_json_object();
}

static void test_health_json(void)
{
	struct json_object *o, *hl, *v, *t;
	enum health_state st[HEALTH_TUNNELS] = { HEALTH_DOWN, HEALTH_UP };

	shown_monitored = false;
	o = json_tokener_parse(capture_json(emit_health));
	ok(o && json_object_object_get_ex(o, "health", &hl) &&
	   json_object_object_get_ex(hl, "monitored", &v) && !json_object_get_boolean(v) &&
	   json_object_object_length(hl) == 1, "health without an agent: {\"monitored\": false}");
	json_object_put(o);

	shown_monitored = true;
	shown_hf = (struct health_file){ .pid = 42, .mode = HEALTH_MODE_SPLIT,
		.t = { { .dev = "vxs", .state = HEALTH_DOWN, .since_mono_ns = mono_ns(),
			 .rtt_last_ns = 250000, .timeout_ns = 540000000, .loss = 0.25, .flaps = 3,
			 .link_down = true },
		       { .dev = "vxl", .state = HEALTH_UP, .since_mono_ns = 1 } },
		.in_force_state = { HEALTH_DOWN, HEALTH_UP } };
	shown_hf.plan = health_plan(HEALTH_MODE_SPLIT, HEALTH_BOTH_DOWN_KEEP, st);
	shown_hf.in_force = shown_hf.plan;
	o = json_tokener_parse(capture_json(emit_health));
	hl = NULL;
	ok(o && json_object_object_get_ex(o, "health", &hl) &&
	   json_object_object_get_ex(hl, "plan", &v) &&
	   !strcmp(json_object_get_string(v), "short=LONG long=LONG") &&
	   json_object_object_get_ex(hl, "in_force", &v) &&
	   json_object_object_get_ex(hl, "pid", &v) && json_object_get_int(v) == 42,
	   "health: plan, plan in force, agent pid");
	t = hl && json_object_object_get_ex(hl, "tunnels", &t) ? json_object_array_get_idx(t, 0)
							       : NULL;
	ok(t && json_object_object_get_ex(t, "state", &v) &&
		   !strcmp(json_object_get_string(v), "down") &&
		   json_object_object_get_ex(t, "role", &v) &&
		   !strcmp(json_object_get_string(v), "short") &&
		   json_object_object_get_ex(t, "rtt_ms", &v) &&
		   json_object_get_double(v) == 0.25 &&
		   json_object_object_get_ex(t, "timeout_ms", &v) &&
		   json_object_get_double(v) == 540 &&
		   json_object_object_get_ex(t, "loss_pct", &v) &&
		   json_object_get_double(v) == 25.0 && json_object_object_get_ex(t, "flaps", &v) &&
		   json_object_get_int(v) == 3 && json_object_object_get_ex(t, "link_down", &v) &&
		   json_object_get_boolean(v) && json_object_object_get_ex(t, "for_s", &v) &&
		   json_object_get_double(v) < 60,
	   "health of a tunnel: state, role, rtt and timeout in ms, loss in %%, flaps, link down, "
	   "for_s");
	t = hl && json_object_object_get_ex(hl, "spill", &t) ? t : NULL;
	ok(t && json_object_object_get_ex(t, "active", &v) && !json_object_get_boolean(v) &&
	   json_object_object_length(t) == 1, "spill not running: {\"active\": false}");
	json_object_put(o);

	shown_hf.spill = (struct spill_view){ .active = true, .dev = { "vxs", "vxl" },
		.state = SPILL_RUN, .gen = 3, .grants = 2, .taken = 2, .rate_bps = 15000000,
		.cap_bps = 19000000, .short_bps = 1000000, .used_bps = 14000000,
		.top_bps = 18050000,
		.qd_valid = { true, false }, .qd_ns = { 1500000, 0 }, .one_way = true,
		.backoffs = 4, .holds = 2, .why = "calm" };
	o = json_tokener_parse(capture_json(emit_health));
	t = o && json_object_object_get_ex(o, "health", &hl) &&
	    json_object_object_get_ex(hl, "spill", &t) ? t : NULL;
	ok(t && json_object_object_get_ex(t, "state", &v) &&
		   !strcmp(json_object_get_string(v), "run") &&
		   json_object_object_get_ex(t, "generation", &v) && json_object_get_int(v) == 3 &&
		   json_object_object_get_ex(t, "taken", &v) && json_object_get_int(v) == 2 &&
		   json_object_object_get_ex(t, "rate_bps", &v) &&
		   json_object_get_int64(v) == 15000000 &&
		   json_object_object_get_ex(t, "capacity_bps", &v) &&
		   json_object_get_int64(v) == 19000000 &&
		   json_object_object_get_ex(t, "top_bps", &v) &&
		   json_object_get_int64(v) == 18050000 &&
		   json_object_object_get_ex(t, "queue_delay_ms", &hl) &&
		   json_object_object_get_ex(hl, "short", &v) && json_object_get_double(v) == 1.5 &&
		   json_object_object_get_ex(hl, "long", &v) && !v &&
		   json_object_object_get_ex(t, "delay_source", &v) &&
		   !strcmp(json_object_get_string(v), "timestamps") &&
		   json_object_object_get_ex(t, "why", &v) &&
		   !strcmp(json_object_get_string(v), "calm"),
	   "spill: state, generation, grants taken, rate, capacity, top, queueing delay per tunnel "
	   "(null: none), source, why");
	json_object_put(o);
	shown_hf.spill.active = false;
}


/* ---- the spill class (scavenger.c) ------------------------------------------------- */
static const struct tcmsg *tcm(const struct nlmsghdr *nlh)
{
	return mnl_nlmsg_get_payload(nlh);
}

static bool kind_is(const struct nlmsghdr *nlh, const char *kind)
{
	const struct nlattr *a = attr(nlh, sizeof(struct tcmsg), TCA_KIND);

	return a && !strcmp(mnl_attr_get_str(a), kind);
}

static const struct nlattr *opt(const struct nlmsghdr *nlh, int type)
{
	return nested(attr(nlh, sizeof(struct tcmsg), TCA_OPTIONS), type);
}

static void test_scav_msgs(void)
{
	const struct nlmsghdr *nlh;
	const struct tc_htb_glob *g;
	const struct tc_htb_opt *ho;
	const struct tc_tbf_qopt *tq;
	const struct tc_u32_sel *sel;
	const struct nlattr *a;
	const __u32 major = TCFG_SCAV_MAJOR << 16;
	__u32 v4_prio;

	nlh = tcfg_msg_scav_root(buf, 7);
	g = (a = opt(nlh, TCA_HTB_INIT)) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWQDISC &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL) &&
		   tcm(nlh)->tcm_ifindex == 7 && tcm(nlh)->tcm_parent == TC_H_ROOT &&
		   tcm(nlh)->tcm_handle == major && kind_is(nlh, "htb") && g && g->version == 3 &&
		   g->defcls == TCFG_SCAV_SHORT_MINOR,
	   "spill root: a new HTB (EXCL: never over someone's) at the root, handle f5a0:, default "
	   ":10");

	nlh = tcfg_msg_scav_class(buf, 7, true, TCFG_SCAV_TOP_MINOR, TCFG_SCAV_SPILL_MINOR, 1,
				  100000, 19000000);
	ho = (a = opt(nlh, TCA_HTB_PARMS)) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWTCLASS && tcm(nlh)->tcm_parent == (major | 1) &&
		   tcm(nlh)->tcm_handle == (major | 0x20) && kind_is(nlh, "htb") && ho &&
		   ho->prio == 1 && ho->rate.rate == 12500 && ho->ceil.rate == 2375000 &&
		   ho->rate.linklayer == TC_LINKLAYER_ETHERNET && ho->buffer > 0 &&
		   ho->cbuffer > 0 && !opt(nlh, TCA_HTB_RATE64) &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "spill class: a new class under :1, prio 1, rate and ceil in bytes/s, a link layer (no "
	   "rate table), bursts");
	nlh = tcfg_msg_scav_class(buf, 7, false, 0, TCFG_SCAV_TOP_MINOR, 0, 15200000, 15200000);
	ho = (a = opt(nlh, TCA_HTB_PARMS)) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWTCLASS && nlh->nlmsg_flags == REQ_ACK &&
		   tcm(nlh)->tcm_parent == major && tcm(nlh)->tcm_handle == (major | 1) &&
		   kind_is(nlh, "htb") && ho && ho->rate.rate == 1900000 &&
		   ho->ceil.rate == 1900000 && ho->buffer > 0 && ho->cbuffer > 0,
	   "top class: a change of the top is a plain RTM_NEWTCLASS (no CREATE): the kernel "
	   "changes the class in place");
	nlh = tcfg_msg_scav_class(buf, 7, true, TCFG_SCAV_TOP_MINOR, TCFG_SCAV_SHORT_MINOR, 1,
				  40000000000ull, 40000000000ull);
	ho = (a = opt(nlh, TCA_HTB_PARMS)) ? mnl_attr_get_payload(a) : NULL;
	ok(ho && ho->prio == 1 && ho->rate.rate == ~0U &&
	   (a = opt(nlh, TCA_HTB_RATE64)) && mnl_attr_get_u64(a) == 5000000000ull &&
	   (a = opt(nlh, TCA_HTB_CEIL64)) && mnl_attr_get_u64(a) == 5000000000ull,
	   "short class: prio 1; 40 Gbit/s goes as the 64-bit rate and ceil");

	nlh = tcfg_msg_scav_tbf(buf, 7, true, 8, 1000000);
	tq = (a = opt(nlh, TCA_TBF_PARMS)) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWQDISC &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL) &&
		   tcm(nlh)->tcm_parent == (major | 0x20) &&
		   tcm(nlh)->tcm_handle == (__u32)TCFG_SCAV_TBF_MAJOR << 16 &&
		   kind_is(nlh, "tbf") && tq && tq->rate.rate == 1 && tq->limit == 1000000 &&
		   u32_of(opt(nlh, TCA_TBF_BURST)) == 1600,
	   "spill TBF: the leaf of :20, the hold's 8 bit/s is 1 byte/s, its queue, a one-frame "
	   "burst");
	nlh = tcfg_msg_scav_tbf(buf, 7, false, 20000000, 5000);
	tq = (a = opt(nlh, TCA_TBF_PARMS)) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_flags == REQ_ACK && tq && tq->rate.rate == 2500000 && tq->limit == 5000,
	   "spill TBF: a rate change is a plain RTM_NEWQDISC (no CREATE): the kernel changes it");

	nlh = tcfg_msg_scav_filter(buf, 7, AF_INET, 2);
	a = opt(nlh, TCA_U32_SEL);
	sel = a ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWTFILTER && tcm(nlh)->tcm_parent == major &&
		   TC_H_MIN(tcm(nlh)->tcm_info) == htons(0x0800) && kind_is(nlh, "u32") && sel &&
		   sel->nkeys == 1 && sel->flags == TC_U32_TERMINAL && sel->keys[0].off == 0 &&
		   sel->keys[0].mask == htonl(0x00fc0000) &&
		   sel->keys[0].val == htonl(0x00080000) &&
		   u32_of(opt(nlh, TCA_U32_CLASSID)) == (major | 0x20),
	   "IPv4 filter: dsfield & 0xfc == 0x08 (DSCP 2) -> :20, as tc's 'match ip dsfield 0x08 "
	   "0xfc'");
	v4_prio = TC_H_MAJ(tcm(nlh)->tcm_info);
	nlh = tcfg_msg_scav_filter(buf, 7, AF_INET6, 2);
	a = opt(nlh, TCA_U32_SEL);
	sel = a ? mnl_attr_get_payload(a) : NULL;
	ok(TC_H_MIN(tcm(nlh)->tcm_info) == htons(0x86dd) && sel &&
	   sel->keys[0].mask == htonl(0x0fc00000) && sel->keys[0].val == htonl(0x00800000) &&
	   TC_H_MAJ(tcm(nlh)->tcm_info) != v4_prio,
	   "IPv6 filter: traffic class & 0xfc == 0x08, as tc's 'match ip6 priority 0x08 0xfc'");
	nlh = tcfg_msg_scav_probe_filter(buf, 7);
	a = opt(nlh, TCA_U32_SEL);
	sel = a ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWTFILTER && tcm(nlh)->tcm_parent == major &&
	   TC_H_MIN(tcm(nlh)->tcm_info) == htons(0x0800) && kind_is(nlh, "u32") && sel &&
	   TC_H_MAJ(tcm(nlh)->tcm_info) != v4_prio && sel->nkeys == 3 &&
	   sel->flags == TC_U32_TERMINAL &&
	   sel->keys[0].off == 0 && sel->keys[0].mask == htonl(0x0f000000) &&
	   sel->keys[0].val == htonl(0x05000000) &&
	   sel->keys[1].off == 8 && sel->keys[1].mask == htonl(0x00ff0000) &&
	   sel->keys[1].val == htonl(0x00010000) &&
	   sel->keys[2].off == 20 && sel->keys[2].mask == htonl(0xff000000) &&
	   sel->keys[2].val == htonl(0x0d000000) &&
	   u32_of(opt(nlh, TCA_U32_CLASSID)) == (major | 0x5),
	   "probe filter: IPv4, IHL 5, protocol ICMP, type 13 (timestamp request) -> :5, "
	   "as tc's 'match ip ihl 5 0xf match ip protocol 1 0xff match u8 13 0xff at 20'");
	nlh = tcfg_msg_scav_qdisc(buf, RTM_GETQDISC, 7, TC_H_ROOT, 0);
	ok(nlh->nlmsg_flags == (REQ_ACK | NLM_F_ECHO) && tcm(nlh)->tcm_parent == TC_H_ROOT,
	   "reading a qdisc asks for the echo (the kernel answers a get as a notification)");
	nlh = tcfg_msg_scav_qdisc(buf, RTM_DELQDISC, 7, TC_H_ROOT, major);
	ok(nlh->nlmsg_flags == REQ_ACK && tcm(nlh)->tcm_handle == major,
	   "removing: the root of our handle only");
}

/* ---- the LONG shaper's messages ---------------------------------------------------- */
static void test_longq_msgs(void)
{
	const __u32 major = TCFG_LONGQ_MAJOR << 16;
	const struct nlmsghdr *nlh;
	const struct tc_fifo_qopt *fq;
	const struct tc_htb_glob *g;
	const struct tc_u32_sel *sel;
	const struct nlattr *a;

	ok(tcfg_longq_top(20000000) == 19000000 && tcfg_longq_top(101) == 95 &&
		   tcfg_longq_top(100000000000ull) == 95000000000ull,
	   "LONG shaper's top: 0.95 x long-rate, no overflow at 100 Gbit/s");
	nlh = tcfg_msg_htb_root(buf, 7, TCFG_LONGQ_MAJOR, TCFG_LONGQ_BULK_MINOR);
	g = (a = opt(nlh, TCA_HTB_INIT)) ? mnl_attr_get_payload(a) : NULL;
	ok(tcm(nlh)->tcm_handle == major && tcm(nlh)->tcm_parent == TC_H_ROOT && g &&
		   g->defcls == TCFG_LONGQ_BULK_MINOR &&
		   nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "LONG shaper's root: HTB f5a4:, unclassified traffic to the bulk class :20");
	nlh = tcfg_msg_bfifo(buf, 7, major | TCFG_LONGQ_SHORT_MINOR,
			     (__u32)TCFG_LONGQ_SHORT_LEAF << 16, 237500);
	a = attr(nlh, sizeof(struct tcmsg), TCA_OPTIONS);
	fq = a && mnl_attr_get_payload_len(a) >= sizeof(*fq) ? mnl_attr_get_payload(a) : NULL;
	ok(nlh->nlmsg_type == RTM_NEWQDISC && kind_is(nlh, "bfifo") &&
		   tcm(nlh)->tcm_parent == (major | 0x10) &&
		   tcm(nlh)->tcm_handle == (__u32)TCFG_LONGQ_SHORT_LEAF << 16 && fq &&
		   fq->limit == 237500 && nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "a leaf's queue: a new bfifo under its class, its limit in bytes");
	nlh = tcfg_msg_dscp_filter(buf, 7, TCFG_LONGQ_MAJOR, 2, AF_INET, 0, TCFG_LONGQ_SHORT_MINOR);
	sel = (a = opt(nlh, TCA_U32_SEL)) ? mnl_attr_get_payload(a) : NULL;
	ok(tcm(nlh)->tcm_parent == major && TC_H_MAJ(tcm(nlh)->tcm_info) == 2u << 16 && sel &&
		   sel->keys[0].mask == htonl(0x00fc0000) && sel->keys[0].val == 0 &&
		   u32_of(opt(nlh, TCA_U32_CLASSID)) == (major | 0x10),
	   "LONG shaper's IPv4 filter: DSCP 0 (the default short code point) -> :10");
	nlh = tcfg_msg_probe_filter(buf, 7, TCFG_LONGQ_MAJOR, 1, TCFG_LONGQ_BULK_MINOR);
	sel = (a = opt(nlh, TCA_U32_SEL)) ? mnl_attr_get_payload(a) : NULL;
	ok(tcm(nlh)->tcm_parent == major && TC_H_MAJ(tcm(nlh)->tcm_info) == 1u << 16 && sel &&
		   sel->nkeys == 3 && u32_of(opt(nlh, TCA_U32_CLASSID)) == (major | 0x20),
	   "LONG shaper's probe filter: before the code point's, the probes to the bulk class");
}

/* ---- settings -------------------------------------------------------------------- */
static int spec_err(const char *key, const char *value, const char *want)
{
	struct tcfg_spec *s = tcfg_spec_new();
	char err[512] = "";
	int r = tcfg_spec_set(s, key, value, err, sizeof(err));

	tcfg_spec_free(s);
	if (r && !strstr(err, want))
		printf("# got '%s'\n", err);
	return r == -1 && strstr(err, want);
}

/* key, value, the error it gives (names, DSCP and enums in lib's words:
 * route up refuses what attach refuses) */
static const struct {
	const char *key, *value, *want;
} refused[] = {
	{"table-short", "254", "table-short: invalid table '254'"},
	{"table-long", "0x10", "invalid table '0x10'"},
	{"priority", "32765", "priority: invalid value '32765': accepted: 1..32764"},
	{"dscp-long", "64", "dscp-long: invalid DSCP '64': accepted: an integer 0..63"},
	{"prefix", "10.0.0.0/8 10.2.0.0/33", "prefix: invalid value '10.2.0.0/33'"},
	{"prefix", "10.2.0.0", "prefix: invalid value '10.2.0.0'"},
	{"via-long", "10.0.0.1/32", "via-long: invalid address '10.0.0.1/32'"},
	{"short-dev", "a:b",
	 "short-dev: invalid interface name 'a:b': accepted: 1..15 characters, not '.' or '..', no "
	 "'/', ':' or white space"},
	{"long-dev", "..", "long-dev: invalid interface name '..'"},
	{"lan-dev", "lan0,eth0:1", "lan-dev: invalid interface name 'eth0:1'"},
	{"lan-dev", " ", "lan-dev: invalid interface name ' '"},
	{"mode", "spread", "mode: invalid value 'spread': accepted: split, ecmp"},
	{"selector", "dscp6", "selector: invalid value 'dscp6': accepted: auto, dscp, tos"},
};

static void test_settings(void)
{
	static const char *const v6ecmp[] = {
		"mode", "ecmp", "short-dev", "a", "long-dev", "b", "prefix", "fd02::/64",
		"via-short", "192.168.1.1", "via-long", "192.168.2.1", NULL };
	struct tcfg_spec *s;
	struct tcfg_tunnel *t;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ok(spec_err(refused[i].key, refused[i].value, refused[i].want),
		   "%s '%s' refused: %s", refused[i].key, refused[i].value, refused[i].want);
	ok(spec_err("colour", "blue",
		    "unknown route setting 'colour': accepted: mode, short-dev, long-dev, prefix, "
		    "lan-dev, via-short, via-long, table-short, table-long, priority, dscp-long, "
		    "selector"),
	   "unknown key: the accepted keys listed");
	s = tcfg_spec_new();
	ok(!tcfg_spec_set(s, "mode", "ecmp", err, sizeof(err)) && s->mode == MODE_ECMP &&
	   !tcfg_spec_set(s, "selector", "tos", err, sizeof(err)) && s->selector == SEL_TOS &&
	   !tcfg_spec_set(s, "dscp-long", "63", err, sizeof(err)) && s->dscp_long == 63 &&
	   !tcfg_spec_set(s, "short-dev", "wg-short.1", err, sizeof(err)) &&
	   !strcmp(s->short_dev, "wg-short.1"),
	   "mode, selector, dscp-long, short-dev: accepted values set");
	tcfg_spec_free(s);
	s = spec(v6ecmp);
	ok(tcfg_spec_check(s, err, sizeof(err)) &&
		   strstr(err, "IPv6 prefix fd02::/64 needs IPv6 gateways"),
	   "ecmp with an IPv6 prefix needs IPv6 gateways");
	tcfg_spec_free(s);

	ok(!tcfg_tunnel_new("a/b", "vxlan", err, sizeof(err)) && strstr(err, "invalid name 'a/b'"),
	   "tunnel name with '/' refused");
	ok(!tcfg_tunnel_new("a:b", "vxlan", err, sizeof(err)) &&
	   strstr(err, "invalid name 'a:b': accepted: 1..15 characters, not '.' or '..'"),
	   "tunnel name with ':' refused, in lib's words");
	ok(!tcfg_tunnel_new("t", "gretap", err, sizeof(err)) &&
		   strstr(err, "unknown kind 'gretap'"),
	   "unknown tunnel kind refused");
	t = tcfg_tunnel_new("t", "vxlan", err, sizeof(err));
	ok(t && tcfg_tunnel_set(t, "vni", "0", err, sizeof(err)) &&
	   strstr(err, "--vni: invalid value '0': accepted: 1..16777215"), "VNI 0 refused");
	ok(t && tcfg_tunnel_set(t, "mtu", "1279", err, sizeof(err)) &&
	   strstr(err, "--mtu: invalid value '1279': accepted: 1280..65535"), "MTU 1279 refused");
	ok(t && tcfg_tunnel_set(t, "dev", "eth0:1", err, sizeof(err)) &&
	   strstr(err, "--dev: invalid interface name 'eth0:1': accepted: 1..15 characters"),
	   "an underlay name with ':' refused");
	ok(t && tcfg_tunnel_set(t, "local", "1.2.3", err, sizeof(err)) &&
	   strstr(err, "--local: invalid address '1.2.3'"), "a bad local address refused");
	tcfg_tunnel_free(t);
}

/* ---- JSON of names that need escaping ------------------------------------------- */
static const char *odd = "a\"b\\c";

static char *capture_json(void (*fn)(void))
{
	return capture(fn, true);
}

static void emit_rules(void)
{
	static struct tcfg_rules rules = { .n = 1 };

	rules.r[0] = (struct tcfg_rule){ .family = AF_INET, .table = 101, .prio = 1000, .dscp = 1 };
	snprintf(rules.r[0].iif, sizeof(rules.r[0].iif), "%s", odd);
	open_json_object(NULL);
	tcfg_show_rules(&rules);
	close_json_object();
}

static void emit_tunnel(void)
{
	struct tcfg_tunnel *t = vxlan(odd, "10.0.0.1", "10.0.0.2");

	open_json_array(PRINT_JSON, NULL);
	tcfg_tunnel_show_link(tcfg_msg_newlink(buf, t, 3, 1450), NULL);
	close_json_array(PRINT_JSON, NULL);
	tcfg_tunnel_free(t);
}

static void test_json(void)
{
	struct json_object *o, *v;
	const char *out;

	out = capture_json(emit_rules);
	o = json_tokener_parse(out);
	ok(o && json_object_object_get_ex(o, "rules", &v) && json_object_array_length(v) == 1 &&
		   json_object_object_get_ex(json_object_array_get_idx(v, 0), "iif", &v) &&
		   !strcmp(json_object_get_string(v), odd),
	   "route show: an iif with '\"' and '\\' is valid JSON");
	json_object_put(o);

	out = capture_json(emit_tunnel);
	o = json_tokener_parse(out);
	v = o && json_object_array_length(o) == 1 ? json_object_array_get_idx(o, 0) : NULL;
	ok(v && json_object_object_get_ex(v, "name", &v) && !strcmp(json_object_get_string(v), odd),
	   "tunnel show: a name with '\"' and '\\' is valid JSON: %s", out);
	json_object_put(o);
}

/* A prefix must be a network address: the setter refuses host bits. */
static void test_host_bits(void)
{
	static const struct {
		const char *text;
		bool bad;
		const char *net;
	} cases[] = {
		{ "10.2.0.0/24", false, "10.2.0.0/24" },
		{ "10.2.0.1/24", true, "10.2.0.0/24" },
		{ "10.2.0.128/25", false, "10.2.0.128/25" },
		{ "10.2.0.129/25", true, "10.2.0.128/25" },
		{ "10.2.3.4/32", false, "10.2.3.4/32" },
		{ "0.0.0.0/0", false, "0.0.0.0/0" },
		{ "1.0.0.0/0", true, "0.0.0.0/0" },
		{ "fd02::/64", false, "fd02::/64" },
		{ "fd02::1/64", true, "fd02::/64" },
		{ "fd02::8000:0:0:0/65", false, "fd02::8000:0:0:0/65" },
		{ "fd02::4000:0:0:0/65", true, "fd02::/65" },
	};
	struct tcfg_spec *s = tcfg_spec_new();
	char buf[TCFG_PREFIX_STRLEN], err[256];
	struct sc_prefix p;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sc_parse_prefix(cases[i].text, 0, SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, &p);
		ok(sc_prefix_host_bits(&p) == cases[i].bad, "%s: host bits %s", cases[i].text,
		   cases[i].bad ? "set" : "clear");
		tcfg_fmt_prefix(&p, buf, sizeof(buf));
		ok(!strcmp(buf, cases[i].net), "%s: network %s (got %s)", cases[i].text,
		   cases[i].net, buf);
	}
	ok(tcfg_spec_set(s, "prefix", "10.3.0.0/24 10.2.0.1/24", err, sizeof(err)) &&
	   strstr(err, "'10.2.0.1/24': host bits set") && strstr(err, "(10.2.0.0/24)"),
	   "the setter refuses host bits, naming the network: %s", err);
	tcfg_spec_free(s);
}

/* The spill TBF's queue: wait_ms at its rate, one frame at least, the
 * limit setting at most; so no rate leaves a packet queued past the bound. */
static void test_scav_limit(void)
{
	ok(tcfg_scav_limit(1000000, 1500, 1000000) == 187500,
	   "scav limit: 1 Mbit/s, 1.5 s: 187500 bytes");
	ok(tcfg_scav_limit(100000, 1500, 1000000) == 18750,
	   "scav limit: rate-min 100 kbit/s: 18750 bytes (1.5 s)");
	ok(tcfg_scav_limit(8000, 1500, 1000000) == 1600,
	   "scav limit: 8 kbit/s: one frame (1600), not less");
	ok(tcfg_scav_limit(8, 1500, 1000000) == 1600,
	   "scav limit: 8 bit/s: one frame");
	ok(tcfg_scav_limit(10000000000ull, 1500, 1000000) == 1000000,
	   "scav limit: a line rate: the limit setting");
}

int main(void)
{
	test_rule_msgs();
	test_route_msgs();
	test_multipath_msg();
	test_link_msgs();
	test_addr_msgs();
	test_wanted();
	test_plan_split();
	test_plan_ecmp();
	test_parse_back();
	test_check();
	test_link_events();
	test_record();
	test_settings();
	test_json();
	test_health_json();
	test_host_bits();
	test_scav_msgs();
	test_scav_limit();
	test_record_longq();
	test_longq_msgs();
	return tap_done();
}
