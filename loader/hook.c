// SPDX-License-Identifier: GPL-2.0
/*
 * hook.c - where the splitter runs on an interface: XDP (native or generic)
 * or TC (clsact ingress, through a TCX bpf_link), and the automatic choice.
 *
 * The observer (message boundaries) always runs at TCX egress of the same
 * interface, through a second link pinned as observer_if<IFINDEX>.
 *
 * Both hooks attach through a bpf_link pinned as link_if<IFINDEX>, so the
 * pinning, upgrade (bpf_link_update(), atomic) and detach (unlink the pin)
 * model is the same; the link's type says which hook an interface has.
 * TCX needs kernel 6.6 or later. Debian 12's UAPI headers (6.1) and libbpf
 * 1.1 predate it, so the two UAPI numbers are defined here and the link is
 * created with the generic bpf_link_create().
 *
 * Auto choice (per interface): native XDP runs in the driver before GRO
 * and keeps the offloads on physical NICs, so it is the cheapest exact hook
 * there. On virtual drivers native XDP costs offloads (on veth the kernel
 * turns GRO off on the device and TSO off on its peer: TCP forwarding fell
 * to 0.23x here; virtio_net turns its guest offloads off), and generic XDP
 * sees GRO-merged packets and undercounts: TC counts gso_segs and keeps
 * them. A driver is taken as virtual when it is in virtual_drivers[] or
 * reports no bus (ethtool bus-info). If native XDP fails on a driver taken
 * as physical (no native XDP support), auto falls back to TC, never to
 * generic XDP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "splitctl.h"

/* UAPI values from kernel 6.6 (enum bpf_attach_type, enum bpf_link_type). */
#define SC_BPF_TCX_INGRESS	46
#define SC_BPF_TCX_EGRESS	47
#define SC_BPF_LINK_TYPE_TCX	11

/* Drivers whose native XDP costs offloads, or that have none. */
static const char *const virtual_drivers[] = {
	"veth", "virtio_net", "tun", "bridge", "bonding", "team", "vxlan",
	"geneve", "macvlan", "macvtap", "ipvlan", "dummy", "netkit", "vrf",
	"ifb", "wireguard", "openvswitch",
	NULL,
};

const char *sc_hook_name(enum sc_hook hook)
{
	switch (hook) {
	case SC_HOOK_XDP: return "xdp";
	case SC_HOOK_TC: return "tc";
	default: return "auto";
	}
}

/* ethtool driver info of @ifname; 0 or -1 */
static int drvinfo(const char *ifname, struct ethtool_drvinfo *di)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	memset(di, 0, sizeof(*di));
	di->cmd = ETHTOOL_GDRVINFO;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)di;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return ret ? -1 : 0;
}

enum sc_hook sc_hook_auto(const char *ifname, char *why, size_t len)
{
	struct ethtool_drvinfo di;
	size_t i;

	if (drvinfo(ifname, &di)) {
		snprintf(why, len,
			 "no ethtool driver info (%s): taken as virtual, native XDP could cost "
			 "offloads",
			 strerror(errno));
		return SC_HOOK_TC;
	}
	for (i = 0; virtual_drivers[i]; i++)
		if (!strcmp(di.driver, virtual_drivers[i])) {
			snprintf(why, len,
				 "driver %s is virtual: native XDP would cost GRO/TSO offloads, TC "
				 "counts GRO packets exactly",
				 di.driver);
			return SC_HOOK_TC;
		}
	if (!di.bus_info[0] || !strcmp(di.bus_info, "N/A")) {
		snprintf(why, len,
			 "driver %s has no bus (virtual): native XDP could cost offloads, TC "
			 "counts GRO packets exactly",
			 di.driver);
		return SC_HOOK_TC;
	}
	snprintf(why, len, "driver %s at %s: native XDP runs before GRO and keeps the offloads",
		 di.driver, di.bus_info);
	return SC_HOOK_XDP;
}

int sc_hook_link_create(int prog_fd, int ifindex, enum sc_hook hook,
			__u32 xdp_flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);

	int fd;

	if (hook == SC_HOOK_TC) {
		fd = bpf_link_create(prog_fd, ifindex, SC_BPF_TCX_INGRESS, &lo);
	} else {
		lo.flags = xdp_flags;
		fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo);
	}
	return fd < 0 ? -errno : fd;
}

enum sc_hook sc_hook_of_link_type(__u32 link_type)
{
	if (link_type == BPF_LINK_TYPE_XDP)
		return SC_HOOK_XDP;
	if (link_type == SC_BPF_LINK_TYPE_TCX)
		return SC_HOOK_TC;
	return SC_HOOK_AUTO;	/* not ours */
}

/* Is program @prog_id among those attached to @ifindex at TCX hook @type?
 * (The query's target is the ifindex: the same field as target_fd.) */
static bool tcx_attached(int ifindex, int type, __u32 prog_id)
{
	__u32 ids[64], cnt = 64, i;

	if (bpf_prog_query(ifindex, type, 0, NULL, ids, &cnt))
		return false;
	for (i = 0; i < cnt && i < 64; i++)
		if (ids[i] == prog_id)
			return true;
	return false;
}

/* Is program @prog_id still attached to @ifindex at @hook? */
bool sc_hook_prog_attached(int ifindex, enum sc_hook hook, __u32 prog_id)
{
	if (hook == SC_HOOK_XDP) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		return !bpf_xdp_query(ifindex, 0, &q) && q.prog_id == prog_id;
	}
	return tcx_attached(ifindex, SC_BPF_TCX_INGRESS, prog_id);
}

void sc_hook_cost(const struct sc_iface *ifc, char *buf, size_t len)
{
	char why[256];

	buf[0] = '\0';
	if (ifc->hook == SC_HOOK_TC)
		snprintf(buf, len,
			 "TC ingress after GRO: every segment counted (gso_segs); measured ~0.95x "
			 "forwarding on veth");
	else if (!strcmp(ifc->mode, "generic"))
		snprintf(buf, len,
			 "generic XDP after GRO: a merged packet counts as one (packet counts too "
			 "low); --hook tc counts exactly");
	else if (!strcmp(ifc->mode, "native") &&
		 sc_hook_auto(ifc->name, why, sizeof(why)) == SC_HOOK_TC)
		snprintf(buf, len,
			 "native XDP on a virtual driver: GRO off on it, TSO off on a veth peer "
			 "(TCP forwarding measured 0.23-0.29x on veth); --hook tc keeps them");
	else if (!strcmp(ifc->mode, "native"))
		snprintf(buf, len,
			 "native XDP in the driver, before GRO: offloads kept, every packet "
			 "counted");
}

int sc_hook_observer_create(int prog_fd, int ifindex)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int fd = bpf_link_create(prog_fd, ifindex, SC_BPF_TCX_EGRESS, &lo);

	return fd < 0 ? -errno : fd;
}

bool sc_hook_observer_attached(int ifindex, __u32 prog_id)
{
	return tcx_attached(ifindex, SC_BPF_TCX_EGRESS, prog_id);
}

int sc_hook_tc_count(int ifindex)
{
	__u32 ids[64], cnt = 64;

	if (bpf_prog_query(ifindex, SC_BPF_TCX_INGRESS, 0, NULL, ids, &cnt))
		return errno == EINVAL || errno == ENOENT ? 0 : -errno;
	return cnt;
}
