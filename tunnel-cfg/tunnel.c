// SPDX-License-Identifier: GPL-2.0
/*
 * tunnel.c - "tunnel add|del|show": lab tunnels for the SD-WAN paths.
 * VXLAN works on every kernel here; GRE, IPIP and WireGuard are tried and,
 * when the kernel lacks them, refused with a clear message. The messages
 * themselves are built in msg.c.
 *
 * MTU: VXLAN adds 50 bytes over an IPv4 underlay (70 over IPv6). Unless
 * "mtu" is given, the tunnel's MTU is the underlay's minus that overhead,
 * so nothing is fragmented; for inner 1500-byte packets give the underlay
 * an MTU of 1550 (1570).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "json_print.h"
#include "tcfg.h"
#include "util.h"

#define VXLAN_DEFAULT_PORT 4789		/* IANA */
#define VXLAN_OVERHEAD4 50		/* outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 */
#define VXLAN_OVERHEAD6 70		/* ... with an IPv6 outer header (40) */
#define VXLAN_MAX_VNI 16777215		/* 24 bits */
#define TUNNEL_MIN_MTU 1280		/* IPv6's minimum */
#define TUNNEL_MAX_MTU 65535

static const struct sc_enum tunnel_kinds[] = {
	{ "vxlan", 0 }, { "gre", 0 }, { "ipip", 0 }, { "wireguard", 0 }, { NULL, 0 },
};

/* A kind "tunnel add" makes (lib's enum check; the value is unused). */
static bool kind_known(const char *kind)
{
	int v;

	return !sc_parse_enum(tunnel_kinds, kind, &v);
}

/* ---- the tunnel's settings ------------------------------------------------ */
/* lib's words for what sc_valid_ifname() accepts */
static void ifname_accepted(char *buf, size_t len)
{
	sc_option_accepted(&(struct sc_option){ .type = SC_OPT_IFNAME }, buf, len);
}

struct tcfg_tunnel *tcfg_tunnel_new(const char *name, const char *kind,
				    char *err, size_t errlen)
{
	struct tcfg_tunnel *t;

	if (!sc_valid_ifname(name)) {
		snprintf(err, errlen, "invalid name '%s': accepted: ", name);
		ifname_accepted(err + strlen(err), errlen - strlen(err));
		return NULL;
	}
	if (!kind_known(kind)) {
		snprintf(err, errlen, "unknown kind '%s': accepted: ", kind);
		sc_option_accepted(&(struct sc_option){.type = SC_OPT_ENUM, .values = tunnel_kinds},
				   err + strlen(err), errlen - strlen(err));
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->kind, sizeof(t->kind), "%s", kind);
	t->dstport = VXLAN_DEFAULT_PORT;
	return t;
}

void tcfg_tunnel_free(struct tcfg_tunnel *t)
{
	free(t);
}

#define TCFG_STR_(x) #x
#define TCFG_STR(x) TCFG_STR_(x)
#define TUNNEL_OPT(_name, _type, m, ...) SC_OPTION(_name, _type, struct tcfg_tunnel, m, __VA_ARGS__)
const struct sc_option tcfg_tunnel_opts[] = {
	TUNNEL_OPT("vni", SC_OPT_UINT, vni, .lo = 1, .hi = VXLAN_MAX_VNI,
		   .accepted = "1.." TCFG_STR(VXLAN_MAX_VNI), .metavar = "N",
		   .help = "VXLAN network identifier (vxlan: required)"),
	TUNNEL_OPT("local", SC_OPT_ADDR, local, .noun = "address", .metavar = "ADDR",
		   .help = "local underlay address (IPv4 or IPv6)"),
	TUNNEL_OPT("remote", SC_OPT_ADDR, remote, .noun = "address", .metavar = "ADDR",
		   .help = "remote underlay address, same family as --local"),
	TUNNEL_OPT("dev", SC_OPT_IFNAME, dev, .noun = "interface name", .metavar = "UNDERLAY",
		   .help = "underlay interface"),
	TUNNEL_OPT("dstport", SC_OPT_UINT, dstport, .lo = 1, .hi = 65535, .accepted = "1..65535",
		   .metavar = "P",
		   .help = "UDP destination port (default " TCFG_STR(VXLAN_DEFAULT_PORT) ")"),
	TUNNEL_OPT("mtu", SC_OPT_UINT, mtu, .lo = TUNNEL_MIN_MTU, .hi = TUNNEL_MAX_MTU,
		   .accepted = TCFG_STR(TUNNEL_MIN_MTU) ".." TCFG_STR(TUNNEL_MAX_MTU),
		   .metavar = "M",
		   .help = "tunnel MTU (default: the underlay's minus the encapsulation)"),
	SC_OPTION_PER_FAMILY(
		"address", SC_OPT_IFADDR, struct tcfg_tunnel, addr, SC_PER_FAMILY_ONCE,
		.metavar = "CIDR", .accepted = "ADDR/LEN, IPv4 or IPv6",
		.help = "the tunnel's own address (one IPv4, one IPv6; IPv6 without DAD)"),
	SC_OPTIONS_END,
};

/* ---- add -------------------------------------------------------------------- */
int tcfg_tunnel_check(const struct tcfg_tunnel *t, const char *dash, char *err, size_t errlen)
{
	if (!strcmp(t->kind, "vxlan") &&
	    (!t->vni || !t->local.family || !t->remote.family || !t->dev[0])) {
		snprintf(err, errlen, "vxlan needs %svni, %slocal, %sremote and %sdev", dash, dash,
			 dash, dash);
		return FS_EXIT_USAGE;
	}
	if (t->local.family && t->remote.family && t->local.family != t->remote.family) {
		snprintf(err, errlen, "%slocal and %sremote must be of the same family", dash,
			 dash);
		return FS_EXIT_USAGE;
	}
	return FS_EXIT_OK;
}

/* Complete and consistent? Exit code, the error printed. */
static int tunnel_check(const struct tcfg_tunnel *t)
{
	char err[128];
	int ret = tcfg_tunnel_check(t, "--", err, sizeof(err));

	if (ret)
		pr_err("tunnel add: %s", err);
	return ret;
}

static int link_mtu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == IFLA_MTU)
			*(__u32 *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

/* The tunnel's MTU over this underlay: given (and checked) or derived. */
static int tunnel_mtu(struct nl *nl, const struct tcfg_tunnel *t, int underlay, __u32 *mtu)
{
	__u32 overhead = t->local.family == AF_INET6 ? VXLAN_OVERHEAD6 : VXLAN_OVERHEAD4;
	__u32 under_mtu = 0;

	*mtu = t->mtu;
	if (!underlay)
		return FS_EXIT_OK;
	if (nl_talk(nl, tcfg_msg_link(nl->buf, RTM_GETLINK, underlay), link_mtu_cb, &under_mtu)) {
		pr_err("tunnel add: netlink: %s", nl_err(nl));
		return FS_EXIT_RUNTIME;
	}
	if (!t->mtu) {
		*mtu = under_mtu - overhead;
	} else if (t->mtu + overhead > under_mtu) {
		pr_err("tunnel add: --mtu %u needs an underlay MTU of %u, '%s' has %u: raise it or "
		       "lower --mtu",
		       t->mtu, t->mtu + overhead, t->dev, under_mtu);
		return FS_EXIT_USAGE;
	}
	return FS_EXIT_OK;
}

/*
 * Tag the tunnel just created as ours (TCFG_TUNNEL_TAG). The kernel ignores
 * IFLA_IFALIAS in the creating request, hence a second one; if it fails,
 * the untagged tunnel is deleted again: no tunnel of ours without the tag.
 */
static int tunnel_tag(struct nl *nl, const char *name)
{
	int ifindex = if_nametoindex(name);

	if (ifindex && !nl_talk(nl, tcfg_msg_setalias(nl->buf, ifindex, TCFG_TUNNEL_TAG),
				NULL, NULL))
		return FS_EXIT_OK;
	pr_err("tunnel add: cannot tag '%s' as created by splitctl: %s", name,
	       ifindex ? nl_err(nl) : strerror(errno));
	if (ifindex)
		nl_talk(nl, tcfg_msg_link(nl->buf, RTM_DELLINK, ifindex), NULL, NULL);
	return FS_EXIT_RUNTIME;
}

/* The tunnel's own addresses (--address); on failure the new tunnel goes
 * again: all or nothing. */
static int tunnel_addresses(struct nl *nl, const struct tcfg_tunnel *t)
{
	int ifindex = if_nametoindex(t->name), i;
	char a[TCFG_PREFIX_STRLEN];

	for (i = 0; i < 2; i++) {
		if (!t->addr[i].family ||
		    !nl_talk(nl, tcfg_msg_newaddr(nl->buf, ifindex, &t->addr[i]), NULL, NULL))
			continue;
		tcfg_fmt_prefix(&t->addr[i], a, sizeof(a));
		pr_err("tunnel add: cannot add address %s to '%s': %s", a, t->name, nl_err(nl));
		nl_talk(nl, tcfg_msg_link(nl->buf, RTM_DELLINK, ifindex), NULL, NULL);
		return FS_EXIT_RUNTIME;
	}
	return FS_EXIT_OK;
}

int tcfg_tunnel_add(const struct tcfg_tunnel *t)
{
	int underlay = 0, ret;
	struct nl nl;
	__u32 mtu;

	ret = tunnel_check(t);
	if (ret)
		return ret;
	if (t->dev[0]) {
		underlay = if_nametoindex(t->dev);
		if (!underlay) {
			pr_err("tunnel add: underlay interface '%s' does not exist", t->dev);
			return FS_EXIT_RUNTIME;
		}
	}
	if (nl_open(&nl)) {
		pr_err("tunnel add: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	ret = tunnel_mtu(&nl, t, underlay, &mtu);
	if (!ret && nl_talk(&nl, tcfg_msg_newlink(nl.buf, t, underlay, mtu), NULL, NULL)) {
		if (errno == EOPNOTSUPP || strstr(nl.extack, "Unknown device type"))
			pr_err("tunnel add: this kernel has no %s tunnels (%s): use vxlan",
			       t->kind, nl_err(&nl));
		else
			pr_err("tunnel add: cannot create '%s': %s", t->name, nl_err(&nl));
		ret = FS_EXIT_RUNTIME;
	}
	if (!ret)
		ret = tunnel_tag(&nl, t->name);
	if (!ret)
		ret = tunnel_addresses(&nl, t);
	nl_close(&nl);
	return ret;
}

/* ---- del, show ----------------------------------------------------------------- */
/* What a dumped link says about itself. */
struct tunnel_link {
	int ifindex;
	unsigned int flags;
	const char *name, *kind, *alias;	/* NULL when absent */
	__u32 vni, mtu, underlay;
	__u16 port;				/* host byte order */
	struct sc_prefix local, remote;	/* family 0 when absent */
};

static void parse_vxlan_addr(const struct nlattr *a, int family, struct sc_prefix *p)
{
	if (mnl_attr_get_payload_len(a) != (__u16)tcfg_alen(family))
		return;
	p->family = family;
	p->len = family == AF_INET6 ? 128 : 32;
	memcpy(p->addr, mnl_attr_get_payload(a), tcfg_alen(family));
}

static void parse_vxlan(const struct nlattr *data, struct tunnel_link *l)
{
	const struct nlattr *c;

	mnl_attr_for_each_nested(c, data) {
		switch (mnl_attr_get_type(c)) {
		case IFLA_VXLAN_ID: l->vni = mnl_attr_get_u32(c); break;
		case IFLA_VXLAN_LINK: l->underlay = mnl_attr_get_u32(c); break;
		case IFLA_VXLAN_PORT: l->port = ntohs(mnl_attr_get_u16(c)); break;
		case IFLA_VXLAN_LOCAL: parse_vxlan_addr(c, AF_INET, &l->local); break;
		case IFLA_VXLAN_LOCAL6: parse_vxlan_addr(c, AF_INET6, &l->local); break;
		case IFLA_VXLAN_GROUP: parse_vxlan_addr(c, AF_INET, &l->remote); break;
		case IFLA_VXLAN_GROUP6: parse_vxlan_addr(c, AF_INET6, &l->remote); break;
		}
	}
}

static void parse_link(const struct nlmsghdr *nlh, struct tunnel_link *l)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *b;

	memset(l, 0, sizeof(*l));
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME: l->name = mnl_attr_get_str(a); break;
		case IFLA_IFALIAS: l->alias = mnl_attr_get_str(a); break;
		case IFLA_MTU: l->mtu = mnl_attr_get_u32(a); break;
		case IFLA_LINKINFO:
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == IFLA_INFO_KIND)
					l->kind = mnl_attr_get_str(b);
				if (mnl_attr_get_type(b) == IFLA_INFO_DATA)
					parse_vxlan(b, l);
			}
			break;
		}
	}
}

/* A tunnel splitctl created: a tunnel kind carrying our tag. */
static bool link_is_ours(const struct tunnel_link *l)
{
	return l->kind && kind_known(l->kind) && l->alias && !strcmp(l->alias, TCFG_TUNNEL_TAG);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tunnel_link *l = data;
	static char name[IF_NAMESIZE], kind[16], alias[64];

	parse_link(nlh, l);
	/* the strings point into the receive buffer: keep copies */
	snprintf(name, sizeof(name), "%s", l->name ? l->name : "");
	snprintf(kind, sizeof(kind), "%s", l->kind ? l->kind : "");
	snprintf(alias, sizeof(alias), "%s", l->alias ? l->alias : "");
	l->name = name;
	l->kind = l->kind ? kind : NULL;
	l->alias = l->alias ? alias : NULL;
	return MNL_CB_OK;
}

int tcfg_tunnel_del(const char *name)
{
	int ifindex = if_nametoindex(name), ret = FS_EXIT_OK;
	struct tunnel_link l;
	struct nl nl;

	if (!ifindex) {
		pr_err("tunnel del: interface '%s' does not exist", name);
		return FS_EXIT_RUNTIME;
	}
	if (nl_open(&nl)) {
		pr_err("tunnel del: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (nl_talk(&nl, tcfg_msg_link(nl.buf, RTM_GETLINK, ifindex), link_cb, &l)) {
		pr_err("tunnel del: cannot read '%s': %s", name, nl_err(&nl));
		ret = FS_EXIT_RUNTIME;
	} else if (!link_is_ours(&l)) {
		/* never delete what splitctl did not make (a LAN port, a
		 * tunnel of the operator's) */
		pr_err("tunnel del: '%s' is not a tunnel created by 'splitctl tunnel add' (kind "
		       "%s, no owner tag): refusing to delete it",
		       name, l.kind ? l.kind : "none");
		ret = FS_EXIT_RUNTIME;
	} else if (nl_talk(&nl, tcfg_msg_link(nl.buf, RTM_DELLINK, ifindex), NULL, NULL)) {
		pr_err("tunnel del: cannot delete '%s': %s", name, nl_err(&nl));
		ret = FS_EXIT_RUNTIME;
	}
	nl_close(&nl);
	return ret;
}

/* The tunnels of ours in a link dump. */
struct ours_list {
	int ifindex[TCFG_MAX_DOWN_TUNNELS];
	char name[TCFG_MAX_DOWN_TUNNELS][IF_NAMESIZE];
	int n;
};

static int ours_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ours_list *o = data;
	struct tunnel_link l;

	parse_link(nlh, &l);
	if (link_is_ours(&l) && o->n < TCFG_MAX_DOWN_TUNNELS) {
		o->ifindex[o->n] = l.ifindex;
		snprintf(o->name[o->n++], IF_NAMESIZE, "%s", l.name ? l.name : "?");
	}
	return MNL_CB_OK;
}

/* Delete every tunnel of ours (owner tag), names into r; 0 or -errno. */
static int tcfg_tunnels_remove_all(struct nl *nl, struct tcfg_down_result *r, struct tcfg_err *e)
{
	struct ours_list o = { .n = 0 };
	int i, ret = 0;

	if (nl_talk(nl, tcfg_msg_dump(nl->buf, RTM_GETLINK), ours_cb, &o))
		return tcfg_fail(e, errno, "cannot list interfaces: %s", nl_err(nl));
	for (i = 0; i < o.n; i++) {
		if (nl_talk(nl, tcfg_msg_link(nl->buf, RTM_DELLINK, o.ifindex[i]), NULL, NULL)) {
			if (errno != ENODEV)
				ret = tcfg_fail(e, errno, "cannot delete tunnel '%s': %s",
						o.name[i], nl_err(nl));
			continue;
		}
		snprintf(r->tunnels[r->ntunnels++], sizeof(r->tunnels[0]), "%s", o.name[i]);
	}
	return ret;
}

int tcfg_tunnels_down(struct tcfg_down_result *r, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	struct nl nl;
	int ret;

	if (nl_open(&nl)) {
		ret = -errno;
		snprintf(err, errlen, "netlink: %s", strerror(-ret));
		return ret;
	}
	ret = tcfg_tunnels_remove_all(&nl, r, &e);
	nl_close(&nl);
	if (ret)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

/* IFLA_MTU of a link (0 when unreadable). */
static unsigned int link_mtu(struct nl *nl, int ifindex)
{
	__u32 mtu = 0;

	if (nl_talk(nl, tcfg_msg_link(nl->buf, RTM_GETLINK, ifindex), link_mtu_cb, &mtu))
		return 0;
	return mtu;
}

int tcfg_tunnel_details(struct nl *nl, int ifindex, struct tcfg_doctor_tunnel *t)
{
	struct tunnel_link l;

	if (nl_talk(nl, tcfg_msg_link(nl->buf, RTM_GETLINK, ifindex), link_cb, &l))
		return -errno;
	snprintf(t->dev, sizeof(t->dev), "%s", l.name);
	t->up = !!(l.flags & IFF_UP);
	t->mtu = l.mtu;
	if (!l.kind || strcmp(l.kind, "vxlan"))
		return 0;
	t->overhead = l.local.family == AF_INET6 || l.remote.family == AF_INET6 ?
		      VXLAN_OVERHEAD6 : VXLAN_OVERHEAD4;
	if (l.underlay && if_indextoname(l.underlay, t->underlay))
		t->underlay_mtu = link_mtu(nl, l.underlay);
	return 0;
}

static void print_addr(const char *key, const char *fmt, const struct sc_prefix *p)
{
	char a[INET6_ADDRSTRLEN] = "";

	if (p->family)
		inet_ntop(p->family, p->addr, a, sizeof(a));
	print_string(PRINT_JSON, key, NULL, a);
	if (p->family)
		print_string(PRINT_FP, NULL, fmt, a);
}

static void print_addrs(const struct tcfg_addrs *addrs, int ifindex)
{
	char a[TCFG_PREFIX_STRLEN];
	int i;

	open_json_array(PRINT_JSON, "addresses");
	for (i = 0; addrs && i < addrs->n; i++) {
		if (addrs->ifindex[i] != ifindex)
			continue;
		tcfg_fmt_prefix(&addrs->addr[i], a, sizeof(a));
		print_string(PRINT_ANY, NULL, " address %s", a);
	}
	close_json_array(PRINT_JSON, NULL);
}

/* Collect the global (not link-local) addresses of a dump. */
static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct tcfg_addrs *t = data;
	const struct nlattr *a;

	if (ifa->ifa_scope != RT_SCOPE_UNIVERSE || t->n == TCFG_MAX_ADDRS)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		/* IFA_LOCAL is the address itself (IPv4 point-to-point: IFA_ADDRESS
		 * is the peer); IPv6 has IFA_ADDRESS only */
		if ((mnl_attr_get_type(a) == IFA_LOCAL ||
		     (mnl_attr_get_type(a) == IFA_ADDRESS && ifa->ifa_family == AF_INET6)) &&
		    mnl_attr_get_payload_len(a) == (__u16)tcfg_alen(ifa->ifa_family)) {
			t->ifindex[t->n] = ifa->ifa_index;
			t->addr[t->n].family = ifa->ifa_family;
			t->addr[t->n].len = ifa->ifa_prefixlen;
			memcpy(t->addr[t->n++].addr, mnl_attr_get_payload(a),
			       tcfg_alen(ifa->ifa_family));
			break;
		}
	}
	return MNL_CB_OK;
}

int tcfg_tunnel_show_link(const struct nlmsghdr *nlh, void *data)
{
	char underlay[IF_NAMESIZE] = "";
	struct tunnel_link l;

	parse_link(nlh, &l);
	if (!l.kind || !kind_known(l.kind))
		return MNL_CB_OK;
	if (l.underlay && !if_indextoname(l.underlay, underlay))
		underlay[0] = '\0';
	open_json_object(NULL);
	print_string(PRINT_ANY, "name", "%s", l.name ? l.name : "?");
	print_string(PRINT_ANY, "kind", " %s", l.kind);
	print_uint(PRINT_ANY, "vni", " vni %llu", l.vni);
	print_addr("local", " local %s", &l.local);
	print_addr("remote", " remote %s", &l.remote);
	print_string(PRINT_JSON, "dev", NULL, underlay);
	if (underlay[0])
		print_string(PRINT_FP, NULL, " dev %s", underlay);
	print_uint(PRINT_ANY, "dstport", " dstport %llu", l.port);
	print_uint(PRINT_ANY, "mtu", " mtu %llu", l.mtu);
	print_addrs(data, l.ifindex);
	print_bool(PRINT_JSON, "up", NULL, l.flags & IFF_UP);
	print_string(PRINT_FP, NULL, " %s", l.flags & IFF_UP ? "up" : "down");
	print_bool(PRINT_JSON, "splitctl", NULL, link_is_ours(&l));
	print_string(PRINT_FP, NULL, "%s", link_is_ours(&l) ? "" : " (not created by splitctl)");
	print_nl();
	close_json_object();
	return MNL_CB_OK;
}

int tcfg_tunnel_show(void)
{
	static struct tcfg_addrs addrs;
	struct nl nl;
	int ret;

	if (nl_open(&nl)) {
		pr_err("tunnel show: netlink: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	addrs.n = 0;
	ret = nl_talk(&nl, tcfg_msg_dump(nl.buf, RTM_GETADDR), addr_cb, &addrs);
	open_json_array(PRINT_JSON, NULL);
	if (!ret)
		ret = nl_talk(&nl, tcfg_msg_dump(nl.buf, RTM_GETLINK), tcfg_tunnel_show_link,
			      &addrs);
	close_json_array(PRINT_JSON, NULL);
	if (ret)
		pr_err("tunnel show: %s", nl_err(&nl));
	nl_close(&nl);
	return ret ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

/* ---- compare: what a config file's [tunnel NAME] finds ----------------------- */
/* "what" gets ", KEY LIVE -> WANT" appended. */
static void differs(char *what, size_t len, const char *key, const char *have, const char *want)
{
	size_t off = strlen(what);

	if (off < len)
		snprintf(what + off, len - off, "%s%s %s -> %s", off ? ", " : "", key,
			 have[0] ? have : "none", want[0] ? want : "none");
}

static void addr_text(const struct sc_prefix *p, char *buf, size_t len)
{
	buf[0] = '\0';
	if (p->family)
		inet_ntop(p->family, p->addr, buf, len);
}

/* differs() for a number and for an address, when they differ */
static void differs_u(char *what, size_t len, const char *key, unsigned int have,
		      unsigned int want)
{
	char h[16], w[16];

	if (have == want)
		return;
	snprintf(h, sizeof(h), "%u", have);
	snprintf(w, sizeof(w), "%u", want);
	differs(what, len, key, h, w);
}

static void differs_addr(char *what, size_t len, const char *key, const struct sc_prefix *have,
			 const struct sc_prefix *want)
{
	char h[INET6_ADDRSTRLEN], w[INET6_ADDRSTRLEN];

	addr_text(have, h, sizeof(h));
	addr_text(want, w, sizeof(w));
	if (strcmp(h, w))
		differs(what, len, key, h, w);
}

int tcfg_tunnel_compare(const struct tcfg_tunnel *want, struct tcfg_tunnel *live,
			char *what, size_t len)
{
	static struct tcfg_addrs addrs;
	char have[TCFG_PREFIX_STRLEN], wanted[TCFG_PREFIX_STRLEN];
	char underlay[IF_NAMESIZE] = "";
	int ifindex = if_nametoindex(want->name), i, j;
	struct tunnel_link l;
	struct nl nl;
	int ret = 0;

	what[0] = '\0';
	if (!ifindex)
		return TCFG_TUNNEL_ABSENT;
	if (nl_open(&nl)) {
		ret = -errno;
		snprintf(what, len, "netlink: %s", strerror(errno));
		return ret;
	}
	addrs.n = 0;
	if (nl_talk(&nl, tcfg_msg_link(nl.buf, RTM_GETLINK, ifindex), link_cb, &l) ||
	    nl_talk(&nl, tcfg_msg_dump(nl.buf, RTM_GETADDR), addr_cb, &addrs)) {
		ret = -errno;
		snprintf(what, len, "cannot read interface '%s': %s", want->name, nl_err(&nl));
		nl_close(&nl);
		return ret;
	}
	nl_close(&nl);
	if (!link_is_ours(&l)) {
		snprintf(what, len,
			 "interface '%s' exists and is not a tunnel created by splitctl (kind %s, "
			 "no owner tag): rename the [tunnel] section or remove the interface",
			 want->name, l.kind ? l.kind : "none");
		return -EEXIST;
	}
	/* the live tunnel, as "tunnel add" would make it again */
	memset(live, 0, sizeof(*live));
	snprintf(live->name, sizeof(live->name), "%s", l.name);
	snprintf(live->kind, sizeof(live->kind), "%s", l.kind);
	live->vni = l.vni;
	live->local = l.local;
	live->remote = l.remote;
	if (l.underlay && if_indextoname(l.underlay, underlay))
		snprintf(live->dev, sizeof(live->dev), "%s", underlay);
	live->dstport = l.port;
	live->mtu = l.mtu;
	for (i = 0; i < addrs.n; i++)
		if (addrs.ifindex[i] == ifindex)
			live->addr[addrs.addr[i].family == AF_INET6] = addrs.addr[i];
	if (strcmp(live->kind, want->kind))
		differs(what, len, "kind", live->kind, want->kind);
	differs_u(what, len, "vni", live->vni, want->vni);
	differs_addr(what, len, "local", &live->local, &want->local);
	differs_addr(what, len, "remote", &live->remote, &want->remote);
	if (strcmp(live->dev, want->dev))
		differs(what, len, "dev", live->dev, want->dev);
	differs_u(what, len, "dstport", live->dstport, want->dstport);
	if (want->mtu)
		differs_u(what, len, "mtu", live->mtu, want->mtu);
	/* the file's addresses must be there (others the operator added stay) */
	for (i = 0; i < 2; i++) {
		if (!want->addr[i].family)
			continue;
		for (j = 0; j < addrs.n; j++)
			if (addrs.ifindex[j] == ifindex &&
			    addrs.addr[j].family == want->addr[i].family &&
			    addrs.addr[j].len == want->addr[i].len &&
			    !memcmp(addrs.addr[j].addr, want->addr[i].addr,
				    tcfg_alen(want->addr[i].family)))
				break;
		if (j < addrs.n)
			continue;
		tcfg_fmt_prefix(&live->addr[i], have, sizeof(have));
		tcfg_fmt_prefix(&want->addr[i], wanted, sizeof(wanted));
		differs(what, len, "address", live->addr[i].family ? have : "", wanted);
	}
	if (!(l.flags & IFF_UP))
		differs(what, len, "state", "down", "up");
	return what[0] ? TCFG_TUNNEL_DIFFERS : TCFG_TUNNEL_SAME;
}
