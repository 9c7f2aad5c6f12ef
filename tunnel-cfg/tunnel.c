// SPDX-License-Identifier: GPL-2.0
/*
 * tunnel.c - "splitctl tunnel add|del|show": lab tunnels for the SD-WAN
 * paths. VXLAN works on every kernel here; GRE, IPIP and WireGuard are
 * tried and, when the kernel lacks them, refused with a clear message.
 *
 * MTU: VXLAN adds 50 bytes over an IPv4 underlay (70 over IPv6). Unless
 * --mtu is given, the tunnel's MTU is the underlay's minus that overhead, so
 * nothing is fragmented; for inner 1500-byte packets give the underlay an
 * MTU of 1550 (1570) — the testbed does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "nl.h"
#include "tunnel_cfg.h"

#define VXLAN_DEFAULT_PORT 4789		/* IANA */
#define VXLAN_OVERHEAD4 50		/* outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 */
#define VXLAN_OVERHEAD6 70		/* ... with an IPv6 outer header (40) */
#define VXLAN_MAX_VNI 16777215

static int link_mtu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == IFLA_MTU)
			*(unsigned int *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int tunnel_add(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vni", required_argument, NULL, 'n' },
		{ "local", required_argument, NULL, 'l' },
		{ "remote", required_argument, NULL, 'r' },
		{ "dev", required_argument, NULL, 'd' },
		{ "dstport", required_argument, NULL, 'p' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name, *kind, *dev = NULL;
	unsigned char local[16], remote[16];
	int lfam = 0, rfam = 0, c, link, ret = 1;
	unsigned long vni = 0, port = VXLAN_DEFAULT_PORT, mtu = 0;
	unsigned int under_mtu = 0;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nlattr *li, *data;
	struct nl nl;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "splitctl tunnel add: expected NAME KIND (see splitctl tunnel -h)\n");
		return 2;
	}
	name = argv[1];
	kind = argv[2];
	if (!*name || strlen(name) >= IF_NAMESIZE || strchr(name, '/')) {
		fprintf(stderr, "splitctl tunnel add: invalid name '%s': accepted: 1..%d characters\n",
			name, IF_NAMESIZE - 1);
		return 2;
	}
	if (strcmp(kind, "vxlan") && strcmp(kind, "gre") && strcmp(kind, "ipip") &&
	    strcmp(kind, "wireguard")) {
		fprintf(stderr, "splitctl tunnel add: unknown kind '%s': accepted: vxlan, gre, ipip, wireguard\n", kind);
		return 2;
	}
	optind = 0;
	opterr = 0;
	argc -= 2;
	argv += 2;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			vni = strtoul(optarg, &end, 10);
			if (*end || end == optarg || vni < 1 || vni > VXLAN_MAX_VNI) {
				fprintf(stderr, "splitctl tunnel add: --vni: invalid value '%s': accepted: 1..%d\n",
					optarg, VXLAN_MAX_VNI);
				return 2;
			}
			break;
		case 'l':
		case 'r': {
			unsigned char *a = c == 'l' ? local : remote;
			int *fam = c == 'l' ? &lfam : &rfam;

			if (inet_pton(AF_INET, optarg, a) == 1)
				*fam = AF_INET;
			else if (inet_pton(AF_INET6, optarg, a) == 1)
				*fam = AF_INET6;
			else {
				fprintf(stderr, "splitctl tunnel add: --%s: invalid address '%s'\n",
					c == 'l' ? "local" : "remote", optarg);
				return 2;
			}
			break;
		}
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = strtoul(optarg, &end, 10);
			if (*end || end == optarg || port < 1 || port > 65535) {
				fprintf(stderr, "splitctl tunnel add: --dstport: invalid value '%s': accepted: 1..65535\n", optarg);
				return 2;
			}
			break;
		case 'm':
			mtu = strtoul(optarg, &end, 10);
			if (*end || end == optarg || mtu < 1280 || mtu > 65535) {
				fprintf(stderr, "splitctl tunnel add: --mtu: invalid value '%s': accepted: 1280..65535\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("Usage: splitctl tunnel add NAME vxlan --vni N --local ADDR --remote ADDR --dev UNDERLAY [--dstport P] [--mtu M]\n");
			return 0;
		default:
			fprintf(stderr, "splitctl tunnel add: %s option '%s'\n",
				c == ':' ? "missing value for" : "unknown", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "splitctl tunnel add: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!strcmp(kind, "vxlan") && (!vni || !lfam || !rfam || !dev)) {
		fprintf(stderr, "splitctl tunnel add: vxlan needs --vni, --local, --remote and --dev\n");
		return 2;
	}
	if (lfam && rfam && lfam != rfam) {
		fprintf(stderr, "splitctl tunnel add: --local and --remote must be of the same family\n");
		return 2;
	}
	link = dev ? (int)if_nametoindex(dev) : 0;
	if (dev && !link) {
		fprintf(stderr, "splitctl tunnel add: underlay interface '%s' does not exist\n", dev);
		return 1;
	}
	if (nl_open(&nl)) {
		fprintf(stderr, "splitctl tunnel add: netlink: %s\n", strerror(errno));
		return 1;
	}
	if (link) {
		nlh = nl_msg(&nl, RTM_GETLINK, 0);
		ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_index = link;
		if (nl_talk(&nl, nlh, link_mtu_cb, &under_mtu))
			goto nlfail;
		if (!mtu)
			mtu = under_mtu - (lfam == AF_INET6 ? VXLAN_OVERHEAD6 : VXLAN_OVERHEAD4);
		else if (mtu + (lfam == AF_INET6 ? VXLAN_OVERHEAD6 : VXLAN_OVERHEAD4) > under_mtu) {
			fprintf(stderr, "splitctl tunnel add: --mtu %lu needs an underlay MTU of %lu, '%s' has %u: raise it or lower --mtu\n",
				mtu, mtu + (lfam == AF_INET6 ? VXLAN_OVERHEAD6 : VXLAN_OVERHEAD4), dev, under_mtu);
			ret = 2;
			goto out;
		}
	}
	nlh = nl_msg(&nl, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
	if (!strcmp(kind, "vxlan")) {
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, vni);
		if (lfam == AF_INET) {
			mnl_attr_put(nlh, IFLA_VXLAN_LOCAL, 4, local);
			mnl_attr_put(nlh, IFLA_VXLAN_GROUP, 4, remote);
		} else {
			mnl_attr_put(nlh, IFLA_VXLAN_LOCAL6, 16, local);
			mnl_attr_put(nlh, IFLA_VXLAN_GROUP6, 16, remote);
		}
		mnl_attr_put_u32(nlh, IFLA_VXLAN_LINK, link);
		mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(port));	/* network order */
		/* the outer header carries the inner DSCP: the class stays visible */
		mnl_attr_put_u8(nlh, IFLA_VXLAN_TOS, 1);		/* 1 = inherit */
		mnl_attr_put_u8(nlh, IFLA_VXLAN_LEARNING, 0);
		mnl_attr_nest_end(nlh, data);
	}
	mnl_attr_nest_end(nlh, li);
	if (nl_talk(&nl, nlh, NULL, NULL)) {
		if (errno == EOPNOTSUPP || strstr(nl.extack, "Unknown device type"))
			fprintf(stderr, "splitctl tunnel add: this kernel has no %s tunnels (%s): use vxlan\n",
				kind, nl_err(&nl));
		else
			fprintf(stderr, "splitctl tunnel add: cannot create '%s': %s\n", name, nl_err(&nl));
		goto out;
	}
	ret = 0;
	goto out;
nlfail:
	fprintf(stderr, "splitctl tunnel add: netlink: %s\n", nl_err(&nl));
out:
	nl_close(&nl);
	return ret;
}

static int tunnel_del(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nl nl;
	int idx, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "splitctl tunnel del: expected NAME\n");
		return 2;
	}
	idx = if_nametoindex(argv[1]);
	if (!idx) {
		fprintf(stderr, "splitctl tunnel del: interface '%s' does not exist\n", argv[1]);
		return 1;
	}
	if (nl_open(&nl))
		return 1;
	nlh = nl_msg(&nl, RTM_DELLINK, 0);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = idx;
	if (nl_talk(&nl, nlh, NULL, NULL)) {
		fprintf(stderr, "splitctl tunnel del: cannot delete '%s': %s\n", argv[1], nl_err(&nl));
		ret = 1;
	}
	nl_close(&nl);
	return ret;
}

struct show_ctx {
	int json, n;
};

static int show_cb(const struct nlmsghdr *nlh, void *data)
{
	struct show_ctx *sc = data;
	const struct nlattr *a, *b, *c;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const char *name = "?", *kind = NULL;
	unsigned int vni = 0, mtu = 0;

	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME: name = mnl_attr_get_str(a); break;
		case IFLA_MTU: mtu = mnl_attr_get_u32(a); break;
		case IFLA_LINKINFO:
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == IFLA_INFO_KIND)
					kind = mnl_attr_get_str(b);
				if (mnl_attr_get_type(b) == IFLA_INFO_DATA)
					mnl_attr_for_each_nested(c, b)
						if (mnl_attr_get_type(c) == IFLA_VXLAN_ID)
							vni = mnl_attr_get_u32(c);
			}
			break;
		}
	}
	if (!kind || (strcmp(kind, "vxlan") && strcmp(kind, "gre") &&
		      strcmp(kind, "ipip") && strcmp(kind, "wireguard")))
		return MNL_CB_OK;
	if (sc->json)
		printf("%s{\"name\":\"%s\",\"kind\":\"%s\",\"vni\":%u,\"mtu\":%u,\"up\":%s}",
		       sc->n ? "," : "", name, kind, vni, mtu,
		       ifi->ifi_flags & IFF_UP ? "true" : "false");
	else
		printf("%s %s vni %u mtu %u %s\n", name, kind, vni, mtu,
		       ifi->ifi_flags & IFF_UP ? "up" : "down");
	sc->n++;
	return MNL_CB_OK;
}

static int tunnel_show(const struct tcfg_ctx *ctx)
{
	struct show_ctx sc = { .json = ctx->json };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nl nl;
	int ret;

	if (nl_open(&nl))
		return 1;
	nlh = nl_msg(&nl, RTM_GETLINK, NLM_F_DUMP);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	if (sc.json)
		printf("[");
	ret = nl_talk(&nl, nlh, show_cb, &sc);
	if (sc.json)
		printf("]\n");
	if (ret)
		fprintf(stderr, "splitctl tunnel show: %s\n", nl_err(&nl));
	nl_close(&nl);
	return ret ? 1 : 0;
}

int tcfg_tunnel_main(int argc, char **argv, const struct tcfg_ctx *ctx)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			"Usage: splitctl tunnel add NAME vxlan --vni N --local ADDR --remote ADDR --dev UNDERLAY [--dstport P] [--mtu M]\n"
			"       splitctl tunnel add NAME gre|ipip|wireguard ...   (only where the kernel has them)\n"
			"       splitctl tunnel del NAME\n"
			"       splitctl [-j] tunnel show\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "add"))
		return tunnel_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del"))
		return tunnel_del(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return tunnel_show(ctx);
	fprintf(stderr, "splitctl tunnel: unknown action '%s': accepted: add, del, show\n", argv[1]);
	return 2;
}
