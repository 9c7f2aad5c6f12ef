// SPDX-License-Identifier: GPL-2.0
/*
 * test_tcfg.c - unit tests of tunnel-cfg without a socket (TAP output):
 * the rule, route and link messages it would send (header flags, family,
 * table, owner protocol, priority, DSCP/TOS selector, iif, multipath next
 * hops, VXLAN attributes), the rules and routes "route up" wants, the
 * settings parser, and the JSON of names that need escaping.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "json_print.h"
#include "tcfg.h"
#include "util.h"

#ifndef FRA_DSCP
#define FRA_DSCP 25
#endif

static int tests, failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed += !cond;
}

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
	ok(u8_of(attr(nlh, h, FRA_PROTOCOL)) == TCFG_PROTO, "new rule: protocol %d (ours)", TCFG_PROTO);
	ok(u8_of(attr(nlh, h, FRA_DSCP)) == 10, "new rule: FRA_DSCP 10");
	ok(attr(nlh, h, FRA_IIFNAME) &&
	   !strcmp(mnl_attr_get_str(attr(nlh, h, FRA_IIFNAME)), "lan0"), "new rule: iif lan0");
	ok(tcfg_parse_rule(nlh, &back) && back.family == r.family && back.prio == r.prio &&
	   back.table == r.table && !strcmp(back.iif, r.iif) && back.dscp == r.dscp &&
	   back.tos == 0, "new rule parses back to the same rule, as ours");

	/* the classic selector: DSCP 1 is TOS byte 0x04, no FRA_DSCP; any iif */
	r = (struct tcfg_rule){ .family = AF_INET, .table = 4000, .prio = 7, .dscp = -1, .tos = 0x04 };
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
static struct tcfg_prefix pfx(const char *s)
{
	struct tcfg_prefix p;

	if (tcfg_parse_prefix(s, &p, strchr(s, '/') != NULL))
		memset(&p, 0, sizeof(p));
	return p;
}

static void test_route_msgs(void)
{
	struct tcfg_route rt = { .family = AF_INET, .table = 100, .dst = pfx("10.2.0.0/24"),
				 .nh = { { .oif = 7, .via = pfx("192.168.101.2") } }, .nnh = 1 }, back;
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
		const struct nlattr *gw = (const void *)((const char *)nh + RTNH_ALIGN(sizeof(*nh)));
		const struct tcfg_prefix *via = &rt.nh[n < 2 ? n : 1].via;

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

	ok(nlh->nlmsg_type == RTM_NEWLINK && nlh->nlmsg_flags == (REQ_ACK | NLM_F_CREATE | NLM_F_EXCL),
	   "new link: RTM_NEWLINK, REQUEST|ACK|CREATE|EXCL (flags 0x%x)", nlh->nlmsg_flags);
	ok(ifi->ifi_flags == IFF_UP && ifi->ifi_change == IFF_UP, "new link: created up");
	ok(attr(nlh, h, IFLA_IFNAME) && !strcmp(mnl_attr_get_str(attr(nlh, h, IFLA_IFNAME)), "vxs"),
	   "new link: name vxs");
	ok(u32_of(attr(nlh, h, IFLA_MTU)) == 1500, "new link: MTU 1500");
	ok(nested(li, IFLA_INFO_KIND) && !strcmp(mnl_attr_get_str(nested(li, IFLA_INFO_KIND)), "vxlan"),
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
			sel_ok += r->table == 100 && r->prio == 1001 && r->tos == 0 && r->dscp == -1;
		}
	}
	ok(long_rules == 4 && sel_ok == 8, "split/tos: DSCP 1 -> tos 0x04 at PRIO to LONG, the rest at PRIO+1 to SHORT");
	ok(!strcmp(rules.r[0].iif, "lana") && !strcmp(rules.r[7].iif, "lanb"), "rules per LAN interface");
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

static void test_settings(void)
{
	static const char *const v6ecmp[] = {
		"mode", "ecmp", "short-dev", "a", "long-dev", "b", "prefix", "fd02::/64",
		"via-short", "192.168.1.1", "via-long", "192.168.2.1", NULL };
	struct tcfg_spec *s;
	struct tcfg_tunnel *t;
	char err[512];

	ok(spec_err("table-short", "254", "table-short: invalid table '254'"), "table 254 (main) refused");
	ok(spec_err("table-long", "0x10", "invalid table '0x10'"), "table in hex refused");
	ok(spec_err("priority", "32765", "priority: invalid value '32765': accepted: 1..32764"),
	   "priority 32765 refused");
	ok(spec_err("dscp-long", "64", "dscp-long: invalid DSCP '64': accepted: 0..63"), "DSCP 64 refused");
	ok(spec_err("prefix", "10.0.0.0/8 10.2.0.0/33", "prefix: invalid value '10.2.0.0/33'"),
	   "a bad prefix in a list is named");
	ok(spec_err("prefix", "10.2.0.0", "prefix: invalid value '10.2.0.0'"), "a prefix needs a length");
	ok(spec_err("via-long", "10.0.0.1/32", "via-long: invalid address '10.0.0.1/32'"),
	   "a gateway is an address");
	ok(spec_err("colour", "blue", "unknown route setting 'colour': accepted: mode, short-dev, long-dev, prefix, lan-dev, via-short, via-long, table-short, table-long, priority, dscp-long, selector"),
	   "unknown key: the accepted keys listed");
	s = spec(v6ecmp);
	ok(tcfg_spec_check(s, err, sizeof(err)) && strstr(err, "IPv6 prefix fd02::/64 needs IPv6 gateways"),
	   "ecmp with an IPv6 prefix needs IPv6 gateways");
	tcfg_spec_free(s);

	ok(!tcfg_tunnel_new("a/b", "vxlan", err, sizeof(err)) && strstr(err, "invalid name 'a/b'"),
	   "tunnel name with '/' refused");
	ok(!tcfg_tunnel_new("t", "gretap", err, sizeof(err)) && strstr(err, "unknown kind 'gretap'"),
	   "unknown tunnel kind refused");
	t = tcfg_tunnel_new("t", "vxlan", err, sizeof(err));
	ok(t && tcfg_tunnel_set(t, "vni", "0", err, sizeof(err)) &&
	   strstr(err, "--vni: invalid value '0': accepted: 1..16777215"), "VNI 0 refused");
	ok(t && tcfg_tunnel_set(t, "mtu", "1279", err, sizeof(err)) &&
	   strstr(err, "--mtu: invalid value '1279': accepted: 1280..65535"), "MTU 1279 refused");
	ok(t && tcfg_tunnel_set(t, "local", "1.2.3", err, sizeof(err)) &&
	   strstr(err, "--local: invalid address '1.2.3'"), "a bad local address refused");
	tcfg_tunnel_free(t);
}

/* ---- JSON of names that need escaping ------------------------------------------- */
static const char *odd = "a\"b\\c";

static char *capture_json(void (*fn)(void))
{
	static char *out;
	size_t len;
	FILE *f;

	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	print_begin(f, true);
	fn();
	print_end();
	fclose(f);
	return out;
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
	ok(o && json_object_object_get_ex(o, "rules", &v) &&
	   json_object_array_length(v) == 1 &&
	   json_object_object_get_ex(json_object_array_get_idx(v, 0), "iif", &v) &&
	   !strcmp(json_object_get_string(v), odd), "route show: an iif with '\"' and '\\' is valid JSON");
	json_object_put(o);

	out = capture_json(emit_tunnel);
	o = json_tokener_parse(out);
	v = o && json_object_array_length(o) == 1 ? json_object_array_get_idx(o, 0) : NULL;
	ok(v && json_object_object_get_ex(v, "name", &v) && !strcmp(json_object_get_string(v), odd),
	   "tunnel show: a name with '\"' and '\\' is valid JSON: %s", out);
	json_object_put(o);
}

int main(void)
{
	test_rule_msgs();
	test_route_msgs();
	test_multipath_msg();
	test_link_msgs();
	test_wanted();
	test_settings();
	test_json();
	printf("1..%d\n", tests);
	return failed ? 1 : 0;
}
