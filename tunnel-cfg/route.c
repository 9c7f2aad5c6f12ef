// SPDX-License-Identifier: GPL-2.0
/*
 * route.c - "splitctl route up|down|show": policy routing towards the SHORT
 * and LONG tunnels, in split mode (the product) or ECMP mode (the paper's
 * baseline).
 *
 *   split: table SHORT: remote prefixes via the SHORT tunnel
 *          table LONG:  remote prefixes via the LONG tunnel
 *          rule PRIO:   [iif LAN] dscp LONG  -> table LONG
 *          rule PRIO+1: [iif LAN]            -> table SHORT
 *   ecmp:  table SHORT: remote prefixes via both tunnels (one multipath
 *          route, L4 hash: fib_multipath_hash_policy = 1)
 *          rule PRIO+1: [iif LAN]            -> table SHORT
 *
 * A lookup in a table without a matching route falls through to the next
 * rule, so everything not bound for a remote prefix still uses "main".
 * "up" converges: it installs the wanted routes and rules first (routes
 * with NLM_F_REPLACE, so switching modes never leaves a prefix without a
 * route), then removes those of ours that are no longer wanted. Ours =
 * protocol TCFG_PROTO; nothing else is touched. State lives in the kernel:
 * "show" and "down" find our objects by that protocol. The one exception is
 * the hash policy that ECMP mode replaced (see hash_policy_set).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "flowsplit.h"
#include "nl.h"
#include "tunnel_cfg.h"

/* The DSCP rule selector (kernel >= 6.13); Debian 12's headers predate it. */
#ifndef FRA_DSCP
#define FRA_DSCP 25
#endif
/* The classic selector matches the TOS byte within this mask: DSCP 1..7. */
#define TCFG_TOS_MASK 0x1c

#define TCFG_MAX_PREFIXES 32
#define TCFG_MAX_LAN 8
#define TCFG_MAX_OBJS 256
#define TCFG_DEFAULT_TABLE_SHORT 100
#define TCFG_DEFAULT_TABLE_LONG 101
#define TCFG_DEFAULT_PRIORITY 1000
/* ECMP mode records the fib_multipath_hash_policy values it replaced here */
#define TCFG_STATE_DIR "/run/flowsplit"
/* the splitter's default long code point, when splitctl knows no live one */
#define TCFG_DEFAULT_DSCP_LONG FS_DEFAULT_DSCP_LONG

enum { MODE_NONE, MODE_SPLIT, MODE_ECMP };

struct prefix {
	int family;		/* AF_INET, AF_INET6; 0 = unset */
	unsigned char addr[16];	/* network byte order */
	int len;
};

struct tcfg_spec {
	int mode;
	char short_dev[IF_NAMESIZE], long_dev[IF_NAMESIZE];
	struct prefix prefixes[TCFG_MAX_PREFIXES];
	int nprefixes;
	char lan[TCFG_MAX_LAN][IF_NAMESIZE];
	int nlan;
	struct prefix via_short[2], via_long[2];	/* [0] IPv4, [1] IPv6 */
	__u32 table_short, table_long, priority;
	int dscp_long;		/* -1: from splitctl's live config */
	int selector;		/* SEL_* */
};

enum { SEL_AUTO, SEL_DSCP, SEL_TOS };

/* A rule or route of ours, as found in the kernel. */
struct obj {
	int is_rule;
	int family;
	__u32 table, prio;
	char iif[IF_NAMESIZE];
	int dscp;		/* FRA_DSCP, -1 none */
	int tos;
	struct prefix dst;
	int oif[2], noif;	/* routes: output interfaces */
};

struct objs {
	struct obj o[TCFG_MAX_OBJS];
	int n;
};

static int fam_idx(int family)
{
	return family == AF_INET6;
}

static int alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static int parse_prefix(const char *s, struct prefix *p, int need_len)
{
	char buf[64], *slash;
	int max;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, buf, p->addr) == 1)
		p->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, p->addr) == 1)
		p->family = AF_INET6;
	else
		return -1;
	max = p->family == AF_INET ? 32 : 128;
	p->len = max;
	if (slash) {
		char *end;
		long l = strtol(slash + 1, &end, 10);

		if (!need_len || *end || end == slash + 1 || l < 0 || l > max)
			return -1;
		p->len = l;
	} else if (need_len) {
		return -1;
	}
	return 0;
}

static int parse_u32(const char *s, __u32 min, __u32 max, __u32 *out)
{
	unsigned long v;
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

struct tcfg_spec *tcfg_spec_new(void)
{
	struct tcfg_spec *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->table_short = TCFG_DEFAULT_TABLE_SHORT;
	s->table_long = TCFG_DEFAULT_TABLE_LONG;
	s->priority = TCFG_DEFAULT_PRIORITY;
	s->dscp_long = -1;
	return s;
}

void tcfg_spec_free(struct tcfg_spec *spec)
{
	free(spec);
}

static int devname_ok(const char *v)
{
	return *v && strlen(v) < IF_NAMESIZE && !strchr(v, '/') && !strchr(v, ' ');
}

int tcfg_spec_set(struct tcfg_spec *s, const char *key, const char *value,
		  char *err, size_t errlen)
{
	struct prefix p;
	__u32 v;

	if (!strcmp(key, "mode")) {
		if (!strcmp(value, "split"))
			s->mode = MODE_SPLIT;
		else if (!strcmp(value, "ecmp"))
			s->mode = MODE_ECMP;
		else
			goto bad_mode;
	} else if (!strcmp(key, "short-dev") || !strcmp(key, "long-dev")) {
		if (!devname_ok(value))
			goto bad_dev;
		snprintf(key[0] == 's' ? s->short_dev : s->long_dev, IF_NAMESIZE, "%s", value);
	} else if (!strcmp(key, "lan-dev")) {
		if (!devname_ok(value))
			goto bad_dev;
		if (s->nlan == TCFG_MAX_LAN) {
			snprintf(err, errlen, "lan-dev: at most %d interfaces", TCFG_MAX_LAN);
			return -1;
		}
		snprintf(s->lan[s->nlan++], IF_NAMESIZE, "%s", value);
	} else if (!strcmp(key, "prefix")) {
		/* config files list several prefixes on one line */
		char buf[1024], *tok, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", value);
		for (tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
			if (parse_prefix(tok, &p, 1)) {
				snprintf(err, errlen, "prefix: invalid value '%s': accepted: an IPv4 or IPv6 prefix ADDR/LEN",
					 tok);
				return -1;
			}
			if (s->nprefixes == TCFG_MAX_PREFIXES) {
				snprintf(err, errlen, "prefix: at most %d prefixes", TCFG_MAX_PREFIXES);
				return -1;
			}
			s->prefixes[s->nprefixes++] = p;
		}
	} else if (!strcmp(key, "via-short") || !strcmp(key, "via-long")) {
		char buf[256], *tok, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", value);
		for (tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
			if (parse_prefix(tok, &p, 0)) {
				snprintf(err, errlen, "%s: invalid address '%s': accepted: an IPv4 or IPv6 address (one per family)",
					 key, tok);
				return -1;
			}
			(key[4] == 's' ? s->via_short : s->via_long)[fam_idx(p.family)] = p;
		}
	} else if (!strcmp(key, "table-short") || !strcmp(key, "table-long")) {
		if (parse_u32(value, 1, 0xfffffffe, &v) || (v >= 253 && v <= 255)) {
			snprintf(err, errlen, "%s: invalid table '%s': accepted: 1..4294967294 except 253-255 (default, main, local)",
				 key, value);
			return -1;
		}
		*(key[6] == 's' ? &s->table_short : &s->table_long) = v;
	} else if (!strcmp(key, "priority")) {
		if (parse_u32(value, 1, 32764, &v)) {
			snprintf(err, errlen, "priority: invalid value '%s': accepted: 1..32764 (rules use PRIORITY and PRIORITY+1, before main at 32766)",
				 value);
			return -1;
		}
		s->priority = v;
	} else if (!strcmp(key, "selector")) {
		if (!strcmp(value, "auto"))
			s->selector = SEL_AUTO;
		else if (!strcmp(value, "dscp"))
			s->selector = SEL_DSCP;
		else if (!strcmp(value, "tos"))
			s->selector = SEL_TOS;
		else {
			snprintf(err, errlen, "selector: invalid value '%s': accepted: auto, dscp, tos", value);
			return -1;
		}
	} else if (!strcmp(key, "dscp-long")) {
		if (parse_u32(value, 0, 63, &v)) {
			snprintf(err, errlen, "dscp-long: invalid DSCP '%s': accepted: 0..63", value);
			return -1;
		}
		s->dscp_long = v;
	} else {
		snprintf(err, errlen, "unknown route setting '%s': accepted: mode, short-dev, long-dev, prefix, lan-dev, via-short, via-long, table-short, table-long, priority, dscp-long, selector",
			 key);
		return -1;
	}
	return 0;
bad_mode:
	snprintf(err, errlen, "mode: invalid value '%s': accepted: split, ecmp", value);
	return -1;
bad_dev:
	snprintf(err, errlen, "%s: invalid interface name '%s'", key, value);
	return -1;
}

int tcfg_spec_check(const struct tcfg_spec *s, char *err, size_t errlen)
{
	int i, v6 = -1;

	for (i = 0; i < s->nprefixes && v6 < 0; i++)
		if (s->prefixes[i].family == AF_INET6)
			v6 = i;
	if (!s->mode)
		snprintf(err, errlen, "mode is missing: accepted: split, ecmp");
	else if (!s->short_dev[0] || !s->long_dev[0])
		snprintf(err, errlen, "short-dev and long-dev are required");
	else if (!strcmp(s->short_dev, s->long_dev))
		snprintf(err, errlen, "short-dev and long-dev are both '%s': they must differ", s->short_dev);
	else if (!s->nprefixes)
		snprintf(err, errlen, "at least one remote prefix is required");
	else if (s->table_short == s->table_long)
		snprintf(err, errlen, "table-short and table-long are both %u: they must differ", s->table_short);
	else if (s->mode == MODE_ECMP && v6 >= 0 &&
		 (!s->via_short[1].family || !s->via_long[1].family))
		/* the kernel takes no device-only IPv6 multipath route */
	{
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET6, s->prefixes[v6].addr, a, sizeof(a));
		snprintf(err, errlen, "ecmp mode: IPv6 prefix %s/%d needs IPv6 gateways: give --via-short and --via-long an IPv6 address each",
			 a, s->prefixes[v6].len);
	}
	else
		return 0;
	return -1;
}

/* ---- kernel state ---------------------------------------------------------- */
static int dev_state(const char *name, int *ifindex)
{
	struct ifreq ifr = { 0 };
	int fd;

	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		fprintf(stderr, "splitctl: route: interface '%s' does not exist\n", name);
		return 1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "splitctl: route: interface '%s': %s\n", name, strerror(errno));
		return 1;
	}
	close(fd);
	if (!(ifr.ifr_flags & IFF_UP)) {
		fprintf(stderr, "splitctl: route: tunnel interface '%s' is down: bring it up first\n", name);
		return 1;
	}
	return 0;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct objs *objs = data;
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct obj o = { .is_rule = 1, .dscp = -1 };
	int ours = 0;

	o.family = frh->family;
	o.tos = frh->tos;
	o.table = frh->table;
	mnl_attr_for_each(a, nlh, sizeof(*frh)) {
		switch (mnl_attr_get_type(a)) {
		case FRA_PRIORITY: o.prio = mnl_attr_get_u32(a); break;
		case FRA_TABLE: o.table = mnl_attr_get_u32(a); break;
		case FRA_IIFNAME:
			snprintf(o.iif, sizeof(o.iif), "%s", mnl_attr_get_str(a));
			break;
		case FRA_PROTOCOL: ours = mnl_attr_get_u8(a) == TCFG_PROTO; break;
		case FRA_DSCP: o.dscp = mnl_attr_get_u8(a); break;
		}
	}
	if (ours && objs->n < TCFG_MAX_OBJS)
		objs->o[objs->n++] = o;
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct objs *objs = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct obj o = { 0 };

	if (rtm->rtm_protocol != TCFG_PROTO || objs->n >= TCFG_MAX_OBJS)
		return MNL_CB_OK;
	o.family = o.dst.family = rtm->rtm_family;
	o.dst.len = rtm->rtm_dst_len;
	o.table = rtm->rtm_table;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		switch (mnl_attr_get_type(a)) {
		case RTA_TABLE: o.table = mnl_attr_get_u32(a); break;
		case RTA_DST:
			memcpy(o.dst.addr, mnl_attr_get_payload(a), alen(o.family));
			break;
		case RTA_OIF: o.oif[0] = mnl_attr_get_u32(a); o.noif = 1; break;
		case RTA_MULTIPATH: {
			const struct rtnexthop *nh = mnl_attr_get_payload(a);
			int left = mnl_attr_get_payload_len(a);

			while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
			       o.noif < 2) {
				o.oif[o.noif++] = nh->rtnh_ifindex;
				left -= RTNH_ALIGN(nh->rtnh_len);
				nh = RTNH_NEXT(nh);
			}
			break;
		}
		}
	}
	objs->o[objs->n++] = o;
	return MNL_CB_OK;
}

static int dump(struct nl *nl, int rules, struct objs *objs)
{
	struct nlmsghdr *nlh = nl_msg(nl, rules ? RTM_GETRULE : RTM_GETROUTE, NLM_F_DUMP);

	if (rules) {
		struct fib_rule_hdr *frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));

		frh->family = AF_UNSPEC;
	} else {
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		rtm->rtm_family = AF_UNSPEC;
	}
	objs->n = 0;
	return nl_talk(nl, nlh, rules ? rule_cb : route_cb, objs);
}

/* ---- requests -------------------------------------------------------------- */
static int rule_req(struct nl *nl, int type, const struct obj *r)
{
	int flags = type == RTM_NEWRULE ? NLM_F_CREATE | NLM_F_EXCL : 0;
	struct nlmsghdr *nlh = nl_msg(nl, type, flags);
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
	return nl_talk(nl, nlh, NULL, NULL);
}

struct nexthop {
	int oif;
	const struct prefix *via;	/* NULL: on-link through the device */
};

static int route_req(struct nl *nl, int type, int family, __u32 table,
		     const struct prefix *dst, const struct nexthop *nh, int nnh)
{
	int flags = type == RTM_NEWROUTE ? NLM_F_CREATE | NLM_F_REPLACE : 0;
	struct nlmsghdr *nlh = nl_msg(nl, type, flags);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	int i;

	rtm->rtm_family = family;
	rtm->rtm_dst_len = dst->len;
	rtm->rtm_table = table < 256 ? table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = TCFG_PROTO;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	mnl_attr_put(nlh, RTA_DST, alen(family), dst->addr);
	if (nnh == 1) {
		mnl_attr_put_u32(nlh, RTA_OIF, nh[0].oif);
		if (nh[0].via)
			mnl_attr_put(nlh, RTA_GATEWAY, alen(family), nh[0].via->addr);
	} else if (nnh > 1) {
		struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);

		for (i = 0; i < nnh; i++) {
			struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);

			memset(rtnh, 0, sizeof(*rtnh));
			rtnh->rtnh_ifindex = nh[i].oif;
			nlh->nlmsg_len += RTNH_ALIGN(sizeof(*rtnh));
			if (nh[i].via)
				mnl_attr_put(nlh, RTA_GATEWAY, alen(family), nh[i].via->addr);
			rtnh->rtnh_len = (char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh;
		}
		mnl_attr_nest_end(nlh, mp);
	}
	return nl_talk(nl, nlh, NULL, NULL);
}

static int same_rule(const struct obj *a, const struct obj *b)
{
	return a->family == b->family && a->prio == b->prio && a->table == b->table &&
	       !strcmp(a->iif, b->iif) && a->dscp == b->dscp && a->tos == b->tos;
}

static int same_dst(const struct obj *a, int family, __u32 table, const struct prefix *p)
{
	return a->family == family && a->table == table && a->dst.len == p->len &&
	       !memcmp(a->dst.addr, p->addr, alen(family));
}

/*
 * Does the running kernel match rules on DSCP (FRA_DSCP)? Older kernels may
 * silently ignore an attribute they do not know, which would turn the
 * long-class rule into a catch-all, so we verify on a probe rule that can
 * never match (its input interface does not exist) and remove it again.
 */
static int dscp_selector_supported(struct nl *nl, __u32 table)
{
	static struct objs objs;
	struct obj probe = { .is_rule = 1, .family = AF_INET, .table = table,
			     .prio = 32765, .dscp = 63 };
	int i, found = 0;

	snprintf(probe.iif, sizeof(probe.iif), "tcfgprobe%u", (unsigned int)getpid() % 10000);
	if (rule_req(nl, RTM_NEWRULE, &probe))
		return 0;
	if (!dump(nl, 1, &objs))
		for (i = 0; i < objs.n; i++)
			if (!strcmp(objs.o[i].iif, probe.iif) && objs.o[i].dscp == 63)
				found = 1;
	probe.dscp = found ? 63 : -1;
	rule_req(nl, RTM_DELRULE, &probe);
	return found;
}

static int write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(value, f) < 0 || fclose(f)) {
		fprintf(stderr, "splitctl: route: cannot set %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * ECMP mode needs the L4 multipath hash. The values it replaces are recorded
 * in TCFG_STATE_DIR, one file per network namespace (named by the nsfs inode
 * of /proc/self/ns/net: /run is shared by the namespaces of "ip netns"), so
 * that "down" and a switch back to split put them back.
 */
static const char *const hash_sysctl[2] = {
	"/proc/sys/net/ipv4/fib_multipath_hash_policy",
	"/proc/sys/net/ipv6/fib_multipath_hash_policy",
};

static int hash_state_path(char *buf, size_t len)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st)) {
		fprintf(stderr, "splitctl: route: /proc/self/ns/net: %s\n", strerror(errno));
		return -1;
	}
	snprintf(buf, len, "%s/route-hash-%lu", TCFG_STATE_DIR, (unsigned long)st.st_ino);
	return 0;
}

static int read_sysctl(const char *path, int *value)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", value) == 1;

	if (f)
		fclose(f);
	if (!ok)
		fprintf(stderr, "splitctl: route: cannot read %s: %s\n", path,
			errno ? strerror(errno) : "not a number");
	return ok ? 0 : -1;
}

/*
 * Set the L4 hash (v4 and v6), first recording the current values unless an
 * earlier "up --mode ecmp" already did. fresh: none of our objects exist, so
 * a record found is a leftover (namespace deleted without "down", inode
 * reused) and is overwritten.
 */
static int hash_policy_set(int fresh)
{
	char path[128];
	int old[2], i;
	FILE *f;

	if (hash_state_path(path, sizeof(path)))
		return -1;
	if (fresh || access(path, F_OK)) {
		if (read_sysctl(hash_sysctl[0], &old[0]) || read_sysctl(hash_sysctl[1], &old[1]))
			return -1;
		if (mkdir(TCFG_STATE_DIR, 0755) && errno != EEXIST) {
			fprintf(stderr, "splitctl: route: cannot create %s: %s\n", TCFG_STATE_DIR, strerror(errno));
			return -1;
		}
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d %d\n", old[0], old[1]) < 0 || fclose(f)) {
			fprintf(stderr, "splitctl: route: cannot write %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < 2; i++)
		if (write_sysctl(hash_sysctl[i], "1"))
			return -1;
	return 0;
}

/*
 * Put back what hash_policy_set recorded, if anything. A value someone else
 * changed since (no longer 1) is theirs and is left as it is.
 */
static int hash_policy_restore(void)
{
	char path[128], val[16];
	int old[2], cur, i, ret = 0;
	FILE *f;

	if (hash_state_path(path, sizeof(path)))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	i = fscanf(f, "%d %d", &old[0], &old[1]);
	fclose(f);
	if (i != 2) {
		fprintf(stderr, "splitctl: route: %s: unreadable record, fib_multipath_hash_policy left as it is\n", path);
		unlink(path);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (read_sysctl(hash_sysctl[i], &cur)) {
			ret = -1;
			continue;
		}
		snprintf(val, sizeof(val), "%d", old[i]);
		if (cur == 1 && write_sysctl(hash_sysctl[i], val))
			ret = -1;
	}
	if (!ret)
		unlink(path);
	return ret;
}

/* Remove every rule and route of ours. */
static int remove_all(struct nl *nl)
{
	static struct objs objs;
	int i, ret = 0;

	if (dump(nl, 1, &objs))
		return -1;
	for (i = 0; i < objs.n; i++)
		if (rule_req(nl, RTM_DELRULE, &objs.o[i]) && errno != ENOENT)
			ret = -1;
	if (dump(nl, 0, &objs))
		return -1;
	for (i = 0; i < objs.n; i++)
		if (route_req(nl, RTM_DELROUTE, objs.o[i].family, objs.o[i].table,
			      &objs.o[i].dst, NULL, 0) && errno != ENOENT)
			ret = -1;
	return ret;
}

int tcfg_route_apply(const struct tcfg_spec *s, const struct tcfg_ctx *ctx)
{
	static struct objs want, have;
	struct nexthop nh[2];
	struct nl nl;
	char err[256];
	int short_if, long_if, dscp, use_dscp = 0, i, j, fresh, ret = 1;

	if (tcfg_spec_check(s, err, sizeof(err))) {
		fprintf(stderr, "splitctl: route: %s\n", err);
		return 2;
	}
	dscp = s->dscp_long >= 0 ? s->dscp_long :
	       ctx->dscp_long >= 0 ? ctx->dscp_long : TCFG_DEFAULT_DSCP_LONG;
	for (i = 0; i < s->nlan; i++)
		if (!if_nametoindex(s->lan[i])) {
			fprintf(stderr, "splitctl: route: LAN interface '%s' does not exist\n", s->lan[i]);
			return 1;
		}
	if (dev_state(s->short_dev, &short_if) || dev_state(s->long_dev, &long_if))
		return 1;
	if (nl_open(&nl)) {
		fprintf(stderr, "splitctl: route: netlink: %s\n", strerror(errno));
		return 1;
	}
	if (s->mode == MODE_SPLIT) {
		use_dscp = s->selector != SEL_TOS &&
			   dscp_selector_supported(&nl, s->table_long);
		if (s->selector == SEL_DSCP && !use_dscp) {
			fprintf(stderr, "splitctl: route: --selector dscp: this kernel's rules have no DSCP selector: accepted here: tos (DSCP 1..7) or auto\n");
			ret = 2;
			goto out;
		}
		if (!use_dscp && (dscp < 1 || dscp > 7)) {
			fprintf(stderr, "splitctl: route: long code point DSCP %d cannot be matched by this kernel's rules (tos selector): accepted: DSCP 1..7\n",
				dscp);
			ret = 2;
			goto out;
		}
	}

	/* the wanted rules */
	want.n = 0;
	for (i = 0; i < (s->nlan ? s->nlan : 1); i++) {
		int fam;

		for (fam = 0; fam < 2; fam++) {
			struct obj r = { .is_rule = 1, .dscp = -1 };

			r.family = fam ? AF_INET6 : AF_INET;
			if (s->nlan)
				snprintf(r.iif, sizeof(r.iif), "%s", s->lan[i]);
			if (s->mode == MODE_SPLIT) {
				r.prio = s->priority;
				r.table = s->table_long;
				if (use_dscp)
					r.dscp = dscp;
				else
					r.tos = (dscp << 2) & TCFG_TOS_MASK;
				want.o[want.n++] = r;
				r.dscp = -1;
				r.tos = 0;
			}
			r.prio = s->priority + 1;
			r.table = s->table_short;
			want.o[want.n++] = r;
		}
	}
	if (dump(&nl, 1, &have) ) {
		fprintf(stderr, "splitctl: route: cannot list rules: %s\n", nl_err(&nl));
		goto out;
	}
	fresh = have.n == 0;

	/* 1. routes (replace: a prefix is never without a route) */
	if (s->mode == MODE_ECMP) {
		if (hash_policy_set(fresh))
			goto fail;
	}
	for (i = 0; i < s->nprefixes; i++) {
		const struct prefix *p = &s->prefixes[i];
		int fi = fam_idx(p->family);

		nh[0].oif = short_if;
		nh[0].via = s->via_short[fi].family ? &s->via_short[fi] : NULL;
		nh[1].oif = long_if;
		nh[1].via = s->via_long[fi].family ? &s->via_long[fi] : NULL;
		if (s->mode == MODE_ECMP) {
			if (route_req(&nl, RTM_NEWROUTE, p->family, s->table_short, p, nh, 2))
				goto route_fail;
		} else {
			if (route_req(&nl, RTM_NEWROUTE, p->family, s->table_short, p, &nh[0], 1) ||
			    route_req(&nl, RTM_NEWROUTE, p->family, s->table_long, p, &nh[1], 1))
				goto route_fail;
		}
	}
	/* 2. rules */
	for (i = 0; i < want.n; i++) {
		for (j = 0; j < have.n; j++)
			if (same_rule(&want.o[i], &have.o[j]))
				break;
		if (j == have.n && rule_req(&nl, RTM_NEWRULE, &want.o[i]) && errno != EEXIST) {
			fprintf(stderr, "splitctl: route: cannot add rule (priority %u, table %u): %s\n",
				want.o[i].prio, want.o[i].table, nl_err(&nl));
			goto fail;
		}
	}
	/* 3. rules of ours no longer wanted */
	for (j = 0; j < have.n; j++) {
		for (i = 0; i < want.n; i++)
			if (same_rule(&want.o[i], &have.o[j]))
				break;
		if (i == want.n)
			rule_req(&nl, RTM_DELRULE, &have.o[j]);
	}
	/* 4. routes of ours no longer wanted */
	if (dump(&nl, 0, &have)) {
		fprintf(stderr, "splitctl: route: cannot list routes: %s\n", nl_err(&nl));
		goto fail;
	}
	for (j = 0; j < have.n; j++) {
		int keep = 0;

		for (i = 0; i < s->nprefixes && !keep; i++) {
			const struct prefix *p = &s->prefixes[i];

			keep = same_dst(&have.o[j], p->family, s->table_short, p) ||
			       (s->mode == MODE_SPLIT &&
				same_dst(&have.o[j], p->family, s->table_long, p));
		}
		if (!keep)
			route_req(&nl, RTM_DELROUTE, have.o[j].family, have.o[j].table,
				  &have.o[j].dst, NULL, 0);
	}
	/* split routes never use multipath: the replaced hash policy returns */
	ret = s->mode == MODE_SPLIT && hash_policy_restore() ? 1 : 0;
	goto out;

route_fail:
	fprintf(stderr, "splitctl: route: cannot install a route to the remote prefixes: %s\n",
		nl_err(&nl));
fail:
	/* nothing of ours existed before: leave nothing behind */
	if (fresh) {
		remove_all(&nl);
		hash_policy_restore();
	}
out:
	nl_close(&nl);
	return ret;
}

/* IF_OPER_* of <linux/if.h> (RFC 2863), which clashes with <net/if.h> */
#define TCFG_OPER_UNKNOWN 0
#define TCFG_OPER_UP 6

/* ---- show -------------------------------------------------------------------- */
struct link_info {
	char name[IF_NAMESIZE];
	int up;
	struct rtnl_link_stats64 st;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_info *li = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			snprintf(li->name, sizeof(li->name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_OPERSTATE:
			li->up = mnl_attr_get_u8(a) == TCFG_OPER_UP ||
				 mnl_attr_get_u8(a) == TCFG_OPER_UNKNOWN;
			break;
		case IFLA_STATS64:
			memcpy(&li->st, mnl_attr_get_payload(a), sizeof(li->st));
			break;
		}
	}
	return MNL_CB_OK;
}

static int get_link(struct nl *nl, int ifindex, struct link_info *li)
{
	struct nlmsghdr *nlh = nl_msg(nl, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	memset(li, 0, sizeof(*li));
	ifi->ifi_index = ifindex;
	return nl_talk(nl, nlh, link_cb, li);
}

static void fmt_prefix(const struct prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%d", a, p->len);
}

static int route_show(const struct tcfg_ctx *ctx)
{
	static struct objs rules, routes;
	int ifs[8], nifs = 0, i, j, mode = MODE_NONE;
	struct link_info li;
	struct nl nl;
	char buf[80];

	if (nl_open(&nl) || dump(&nl, 1, &rules) || dump(&nl, 0, &routes)) {
		fprintf(stderr, "splitctl: route: netlink: %s\n", strerror(errno));
		nl_close(&nl);
		return 1;
	}
	if (rules.n)
		mode = MODE_ECMP;
	for (i = 0; i < rules.n; i++)
		if (rules.o[i].dscp >= 0 || rules.o[i].tos)
			mode = MODE_SPLIT;
	for (i = 0; i < routes.n; i++)
		for (j = 0; j < routes.o[i].noif; j++) {
			int k, seen = 0;

			for (k = 0; k < nifs; k++)
				seen |= ifs[k] == routes.o[i].oif[j];
			if (!seen && nifs < 8)
				ifs[nifs++] = routes.o[i].oif[j];
		}
	if (ctx->json) {
		printf("{\"mode\":\"%s\",\"rules\":[", mode == MODE_SPLIT ? "split" :
		       mode == MODE_ECMP ? "ecmp" : "down");
		for (i = 0; i < rules.n; i++) {
			const struct obj *r = &rules.o[i];

			printf("%s{\"family\":\"%s\",\"priority\":%u,\"table\":%u,\"iif\":\"%s\",\"dscp\":%d,\"tos\":%d}",
			       i ? "," : "", r->family == AF_INET ? "ipv4" : "ipv6", r->prio,
			       r->table, r->iif, r->dscp, r->tos);
		}
		printf("],\"routes\":[");
		for (i = 0; i < routes.n; i++) {
			const struct obj *r = &routes.o[i];

			fmt_prefix(&r->dst, buf, sizeof(buf));
			printf("%s{\"dst\":\"%s\",\"table\":%u,\"devs\":[", i ? "," : "", buf, r->table);
			for (j = 0; j < r->noif; j++) {
				char n[IF_NAMESIZE] = "?";

				if_indextoname(r->oif[j], n);
				printf("%s\"%s\"", j ? "," : "", n);
			}
			printf("]}");
		}
		printf("],\"tunnels\":[");
		for (i = 0; i < nifs; i++) {
			if (get_link(&nl, ifs[i], &li))
				continue;
			printf("%s{\"name\":\"%s\",\"up\":%s,\"tx_packets\":%llu,\"tx_bytes\":%llu,\"rx_packets\":%llu,\"rx_bytes\":%llu}",
			       i ? "," : "", li.name, li.up ? "true" : "false",
			       (unsigned long long)li.st.tx_packets, (unsigned long long)li.st.tx_bytes,
			       (unsigned long long)li.st.rx_packets, (unsigned long long)li.st.rx_bytes);
		}
		printf("]}\n");
	} else {
		printf("mode: %s\n", mode == MODE_SPLIT ? "split" : mode == MODE_ECMP ? "ecmp" : "down (nothing installed)");
		for (i = 0; i < rules.n; i++) {
			const struct obj *r = &rules.o[i];

			printf("rule: %s priority %u%s%s", r->family == AF_INET ? "ipv4" : "ipv6",
			       r->prio, r->iif[0] ? " iif " : "", r->iif);
			if (r->dscp >= 0)
				printf(" dscp %d", r->dscp);
			if (r->tos)
				printf(" tos 0x%02x", r->tos);
			printf(" lookup %u\n", r->table);
		}
		for (i = 0; i < routes.n; i++) {
			fmt_prefix(&routes.o[i].dst, buf, sizeof(buf));
			printf("route: table %u %s dev", routes.o[i].table, buf);
			for (j = 0; j < routes.o[i].noif; j++) {
				char n[IF_NAMESIZE] = "?";

				if_indextoname(routes.o[i].oif[j], n);
				printf(" %s", n);
			}
			printf("\n");
		}
		for (i = 0; i < nifs; i++)
			if (!get_link(&nl, ifs[i], &li))
				printf("tunnel: %s %s tx %llu packets %llu bytes, rx %llu packets %llu bytes\n",
				       li.name, li.up ? "up" : "down",
				       (unsigned long long)li.st.tx_packets, (unsigned long long)li.st.tx_bytes,
				       (unsigned long long)li.st.rx_packets, (unsigned long long)li.st.rx_bytes);
	}
	nl_close(&nl);
	return 0;
}

/* ---- CLI ----------------------------------------------------------------------- */
static void route_usage(FILE *f)
{
	fprintf(f, "Usage: splitctl [-j] route up --mode split|ecmp --short-dev DEV --long-dev DEV --prefix CIDR...\n"
		"                [--lan-dev IF]... [--via-short ADDR]... [--via-long ADDR]...\n"
		"                [--table-short N] [--table-long N] [--priority N] [--dscp-long V]\n"
		"                [--selector auto|dscp|tos]\n"
		"       splitctl route down\n"
		"       splitctl [-j] route show\n\n"
		"  --mode split|ecmp      split: long code point -> LONG tunnel, rest -> SHORT;\n"
		"                         ecmp: one multipath route over both, L4 hash\n"
		"  --short-dev DEV        tunnel interface for short flows (must be up)\n"
		"  --long-dev DEV         tunnel interface for long flows (must be up)\n"
		"  --prefix CIDR          remote prefix reachable over the SD-WAN (repeat; IPv4/IPv6)\n"
		"  --lan-dev IF           match only traffic arriving on this LAN interface (repeat)\n"
		"  --via-short ADDR       next hop through the SHORT tunnel (one per family)\n"
		"  --via-long ADDR        next hop through the LONG tunnel (one per family)\n"
		"  --table-short N        routing table of the SHORT class (default %d)\n"
		"  --table-long N         routing table of the LONG class (default %d)\n"
		"  --priority N           rule priority; PRIORITY and PRIORITY+1 are used (default %d)\n"
		"  --dscp-long V          long code point (default: the attached splitter's, else %d)\n"
		"  --selector auto|dscp|tos  rule match: dscp (kernel >= 6.13, any code point),\n"
		"                         tos (every kernel, DSCP 1..7 only), auto: dscp if the kernel has it\n",
		TCFG_DEFAULT_TABLE_SHORT, TCFG_DEFAULT_TABLE_LONG, TCFG_DEFAULT_PRIORITY,
		TCFG_DEFAULT_DSCP_LONG);
}

int tcfg_route_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 0 },
		{ "short-dev", required_argument, NULL, 0 },
		{ "long-dev", required_argument, NULL, 0 },
		{ "prefix", required_argument, NULL, 0 },
		{ "lan-dev", required_argument, NULL, 0 },
		{ "via-short", required_argument, NULL, 0 },
		{ "via-long", required_argument, NULL, 0 },
		{ "table-short", required_argument, NULL, 0 },
		{ "table-long", required_argument, NULL, 0 },
		{ "priority", required_argument, NULL, 0 },
		{ "dscp-long", required_argument, NULL, 0 },
		{ "selector", required_argument, NULL, 0 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tcfg_spec *s;
	const char *verb;
	char err[256];
	int c, idx, ret;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		route_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = argv[1];
	if (strcmp(verb, "up") && strcmp(verb, "down") && strcmp(verb, "show")) {
		fprintf(stderr, "splitctl route: unknown action '%s': accepted: up, down, show\n", verb);
		return 2;
	}
	s = tcfg_spec_new();
	if (!s)
		return 1;
	optind = 0;
	opterr = 0;
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, ":h", lo, &idx)) != -1) {
		if (c == 'h') {
			route_usage(stdout);
			tcfg_spec_free(s);
			return 0;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "splitctl route: %s option '%s' (see -h)\n",
				c == '?' ? "unknown" : "missing value for", argv[optind - 1]);
			tcfg_spec_free(s);
			return 2;
		}
		if (strcmp(verb, "up")) {
			fprintf(stderr, "splitctl route %s: takes no options\n", verb);
			tcfg_spec_free(s);
			return 2;
		}
		if (tcfg_spec_set(s, lo[idx].name, optarg, err, sizeof(err))) {
			fprintf(stderr, "splitctl route: %s\n", err);
			tcfg_spec_free(s);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "splitctl route: unexpected argument '%s'\n", argv[optind]);
		tcfg_spec_free(s);
		return 2;
	}
	if (!strcmp(verb, "up")) {
		ret = tcfg_route_apply(s, ctx);
	} else if (!strcmp(verb, "show")) {
		ret = route_show(ctx);
	} else {
		struct nl nl;

		ret = 1;
		if (nl_open(&nl) == 0) {
			ret = remove_all(&nl) ? 1 : 0;
			if (ret)
				fprintf(stderr, "splitctl: route down: %s\n", nl_err(&nl));
			else if (hash_policy_restore())
				ret = 1;
			nl_close(&nl);
		}
	}
	tcfg_spec_free(s);
	return ret;
}
