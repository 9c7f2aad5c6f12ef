// SPDX-License-Identifier: GPL-2.0
/*
 * ifaces.c - the interfaces an instance is attached to, from its link
 * pins: hook, mode, program and link ids, the observer at TCX egress, and
 * the attached interfaces whose link pin is gone (splitctl.h).
 */
#include <errno.h>
#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "splitctl.h"

int sc_link_ifindex(const char *path)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), ret = -1;

	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	/* a TCX link's info starts with its ifindex too (tcx.ifindex, not
	 * in these 6.1 headers): the same offset as xdp.ifindex */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    sc_hook_of_link_type(info.type) != SC_HOOK_AUTO)
		ret = info.xdp.ifindex;
	close(fd);
	return ret;
}

bool sc_iface_removed(const struct sc_iface *ifc)
{
	return !strcmp(ifc->mode, SC_IFACE_REMOVED);
}

int sc_links_missing(const char *dir, int *ifindex, int max)
{
	char path[PATH_MAX], link[64];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0, idx;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, SC_PIN_ATTACHED_FMT, &idx) != 1)
			continue;
		snprintf(link, sizeof(link), SC_PIN_LINK_FMT, idx);
		snprintf(path, sizeof(path), "%s/%s", dir, link);
		if (access(path, F_OK))
			ifindex[n++] = idx;
	}
	closedir(d);
	return n;
}

/* The observer link of an interface (SC_PIN_OBSERVER_FMT), into ifc. */
static void observer_info(const char *dir, struct sc_iface *ifc)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX], name[32];
	int fd;

	snprintf(name, sizeof(name), SC_PIN_OBSERVER_FMT, ifc->ifindex);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ifc->observer_prog_id = info.prog_id;
		ifc->observer_link_id = info.id;
		ifc->observer = info.xdp.ifindex == (__u32)ifc->ifindex &&
				sc_hook_observer_attached(ifc->ifindex, info.prog_id);
	}
	close(fd);
}

int sc_ifaces_list(const char *dir, struct sc_iface *out, int max)
{
	struct bpf_link_info info;
	__u32 len;
	struct dirent *de;
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	int n = 0, fd, ifindex;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, SC_PIN_LINK_FMT, &ifindex) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		memset(&out[n], 0, sizeof(out[n]));
		out[n].ifindex = ifindex;
		out[n].mode = "?";
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			out[n].prog_id = info.prog_id;
			out[n].link_id = info.id;
			out[n].hook = sc_hook_of_link_type(info.type);
			/* the kernel clears the link's ifindex when the
			 * interface is unregistered: the ifindex may be
			 * reused, so never look up a name for it then */
			if (!info.xdp.ifindex)
				out[n].mode = SC_IFACE_REMOVED;
		}
		close(fd);
		if (sc_iface_removed(&out[n]) ||
		    !if_indextoname(out[n].ifindex, out[n].name))
			strcpy(out[n].name, "?");
		else if (out[n].hook == SC_HOOK_TC)
			out[n].mode = "tcx";
		else {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			if (!bpf_xdp_query(out[n].ifindex, 0, &q))
				out[n].mode = q.attach_mode ?
					      fs_xdp_mode_name(q.attach_mode) : "?";
		}
		observer_info(dir, &out[n]);
		n++;
	}
	closedir(d);
	return n;
}

/* Does program id use a flow table (FS_MAP_FLOWS4) other than own_flows
 * (a map id; 0: none is ours)? A program using ours is this instance's. */
static bool uses_other_flows(__u32 id, __u32 own_flows)
{
	struct bpf_prog_info info;
	struct bpf_map_info mi;
	__u32 maps[16], len = sizeof(info), mlen, i;
	bool other = false;
	int fd = bpf_prog_get_fd_by_id(id), mfd;

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = sizeof(maps) / sizeof(maps[0]);
	info.map_ids = (__u64)(unsigned long)maps;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.nr_map_ids = 0;
	close(fd);
	for (i = 0; i < info.nr_map_ids && i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (maps[i] == own_flows)
			return false;
		mfd = bpf_map_get_fd_by_id(maps[i]);
		if (mfd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		mlen = sizeof(mi);
		other |= !bpf_obj_get_info_by_fd(mfd, &mi, &mlen) &&
			 !strncmp(mi.name, FS_MAP_FLOWS4, sizeof(mi.name) - 1);
		close(mfd);
	}
	return other;
}

static __u32 other_splitter(int ifindex, __u32 own_flows, enum sc_hook *hook)
{
	__u32 id = 0;

	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	*hook = SC_HOOK_XDP;
	if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id && uses_other_flows(q.prog_id, own_flows))
		return q.prog_id;
	/* TCX ingress: the programs attached there, among all the system's */
	*hook = SC_HOOK_TC;
	if (sc_hook_tc_count(ifindex) > 0)
		while (!bpf_prog_get_next_id(id, &id))
			if (sc_hook_prog_attached(ifindex, SC_HOOK_TC, id) &&
			    uses_other_flows(id, own_flows))
				return id;
	return 0;
}

int sc_other_splitter(const char *ifname, __u32 own_flows, const char *dir, char *err,
		      size_t len)
{
	int ifindex = if_nametoindex(ifname);
	enum sc_hook hook;
	__u32 other;

	other = ifindex ? other_splitter(ifindex, own_flows, &hook) : 0;
	if (!other)
		return 0;
	snprintf(err, len,
		 "interface '%s' runs the splitter of another flowsplit instance (program id %u at "
		 "%s), not this one ('%s'): two splitters would both mark its flows: detach it "
		 "from its own pin directory first",
		 ifname, other, hook == SC_HOOK_TC ? "TC ingress" : "XDP", dir);
	return -EBUSY;
}

__u32 sc_flows_map_id(int map_fd)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	return map_fd >= 0 && !bpf_obj_get_info_by_fd(map_fd, &mi, &len) ? mi.id : 0;
}
