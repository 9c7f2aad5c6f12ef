// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c - load, pin and attach the splitter; upgrade in place; detach.
 *
 * Pin layout in the instance directory (all mode 0600):
 *   fs_flows4 fs_flows6 fs_config fs_stats   the maps, shared by every
 *                                            interface of the instance
 *   prog_splitter prog_clock                 the loaded programs
 *   link_if<ifindex>                         one XDP bpf_link per interface
 *
 * The attachment is a pinned bpf_link: it survives splitctl exiting or being
 * killed, and bpf_link_update() swaps the program atomically on upgrade while
 * the maps (and so every flow's state) stay. We do not use libxdp's
 * dispatcher: on this kernel it falls back to single-program mode anyway,
 * and a plain link gives the same crash safety with one moving part less.
 * libxdp is used only to name what another tool attached (a dispatcher and
 * the programs inside it) when we refuse to replace it.
 * Order of operations: validate everything, load, pin maps, write config,
 * attach and pin the link last — a kill -9 at any point leaves either the old
 * attachment or a complete new one (at worst unused pins, which the next
 * attach reuses and "detach --all" removes).
 */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bpfutil.h"
#include "splitctl.h"
#include "splitter.skel.h"

static void pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void link_path(char *buf, size_t len, const char *dir, int ifindex)
{
	char name[32];

	snprintf(name, sizeof(name), SC_PIN_LINK_FMT, ifindex);
	pin_path(buf, len, dir, name);
}

/* The kernel's rule for interface names (dev_valid_name()). */
int sc_valid_ifname(const char *name)
{
	const char *p;

	if (!*name || strlen(name) >= IFNAMSIZ || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return 0;
	for (p = name; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return 0;
	return 1;
}

/* Existing interface that is up: 0, else message and exit code. */
static int check_iface(const char *ifname, int *ifindex)
{
	struct ifreq ifr = { 0 };
	int fd;

	if (!sc_valid_ifname(ifname)) {
		sc_err("invalid interface name '%s': accepted: 1..%d characters, not '.' or '..', no '/', ':' or white space",
		       ifname, IFNAMSIZ - 1);
		return SC_EXIT_USAGE;
	}
	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		sc_err("interface '%s' does not exist", ifname);
		return SC_EXIT_RUNTIME;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(ifr.ifr_name, ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		sc_err("interface '%s': cannot read its flags: %s", ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		return SC_EXIT_RUNTIME;
	}
	close(fd);
	if (!(ifr.ifr_flags & IFF_UP)) {
		sc_err("interface '%s' is down: bring it up first ('ip link set %s up')",
		       ifname, ifname);
		return SC_EXIT_RUNTIME;
	}
	return 0;
}

static int pin_fd(int fd, const char *path)
{
	if (bpf_obj_pin(fd, path)) {
		sc_err("cannot pin '%s': %s", path, strerror(errno));
		return -1;
	}
	chmod(path, SC_PIN_MODE);
	return 0;
}

static int pin_map(struct bpf_map *map, const char *dir)
{
	char path[PATH_MAX];

	pin_path(path, sizeof(path), dir, bpf_map__name(map));
	return pin_fd(bpf_map__fd(map), path);
}

/* Replace a program pin (the old program stays alive while it is used). */
/*
 * Replace a program pin atomically: pin under a temporary name, then
 * rename() over the old pin, so a kill -9 never leaves the instance without
 * its clock program (which every read command opens).
 */
static int repin_prog(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX], tmp[PATH_MAX], tmpname[64];

	pin_path(path, sizeof(path), dir, name);
	snprintf(tmpname, sizeof(tmpname), "%s%s", name, SC_PIN_TMP_SUFFIX);
	pin_path(tmp, sizeof(tmp), dir, tmpname);
	unlink(tmp);	/* left by a killed attach */
	if (pin_fd(fd, tmp))
		return -1;
	if (rename(tmp, path)) {
		sc_err("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static const char *map_type_name(__u32 type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

/*
 * Reuse a pinned map if there is one, after checking its layout against the
 * map the new program expects: type, key and value size, and for the fixed
 * arrays (config, stats) the number of entries. A flow table keeps its
 * pinned size unless --flows asks for another one. Returns 1 reused, 0 not
 * pinned, -1 refused (printed).
 */
static int reuse_map(struct bpf_map *map, const char *dir, int resizable,
		     __u32 want_entries)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	pin_path(path, sizeof(path), dir, bpf_map__name(map));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		sc_err("cannot inspect pinned map '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (info.type != bpf_map__type(map) ||
	    info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) ||
	    (!resizable && info.max_entries != bpf_map__max_entries(map))) {
		/* never recreate it empty behind the operator's back */
		sc_err("pinned map '%s' has another layout (%s, key %u B, value %u B, %u entries) than this splitter needs (%s, key %u B, value %u B, %u entries): refusing to replace it; 'splitctl detach --all' drops the old state",
		       path, map_type_name(info.type), info.key_size,
		       info.value_size, info.max_entries,
		       map_type_name(bpf_map__type(map)), bpf_map__key_size(map),
		       bpf_map__value_size(map),
		       resizable ? info.max_entries : bpf_map__max_entries(map));
		close(fd);
		return -1;
	}
	if (want_entries && info.max_entries != want_entries) {
		sc_err("--flows %u: the pinned flow table '%s' has %u entries; a table cannot be resized in place ('splitctl detach --all' first)",
		       want_entries, path, info.max_entries);
		close(fd);
		return -1;
	}
	if (resizable)
		bpf_map__set_max_entries(map, info.max_entries);
	if (bpf_map__reuse_fd(map, fd)) {
		sc_err("cannot reuse pinned map '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);	/* reuse_fd dup()ed it */
	return 1;
}

static int libxdp_log(enum libxdp_print_level level, const char *fmt,
		      va_list ap)
{
	/* libxdp warns when it finds no bpffs or no dispatcher: noise for
	 * us unless asked for */
	if (sc_verbose_level < 2 && level != LIBXDP_WARN)
		return 0;
	if (!sc_verbose_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Name the XDP program(s) on an interface for an error message: "'name'
 * (id N)", or for a libxdp dispatcher the programs it runs.
 */
static void describe_xdp(int ifindex, __u32 prog_id, char *buf, size_t len)
{
	struct bpf_prog_info pi = { 0 };
	__u32 plen = sizeof(pi);
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	size_t off;
	int fd;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &plen))
		snprintf(buf, len, "'%s' (id %u)", pi.name, prog_id);
	else
		snprintf(buf, len, "id %u", prog_id);
	if (fd >= 0)
		close(fd);

	libxdp_set_print(libxdp_log);
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (!mp || libxdp_get_error(mp))
		return;
	if (!xdp_multiprog__is_legacy(mp)) {
		off = snprintf(buf, len, "libxdp dispatcher (id %u) with", prog_id);
		for (p = xdp_multiprog__next_prog(NULL, mp); p && off < len;
		     p = xdp_multiprog__next_prog(p, mp))
			off += snprintf(buf + off, len - off, " '%s'",
					xdp_program__name(p));
	}
	xdp_multiprog__close(mp);
}

static int count_links(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0, idx;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (sscanf(de->d_name, SC_PIN_LINK_FMT, &idx) == 1)
			n++;
	closedir(d);
	return n;
}

static const char *const pin_names[] = {
	FS_MAP_FLOWS4, FS_MAP_FLOWS6, FS_MAP_CONFIG, FS_MAP_STATS,
	SC_PIN_PROG, SC_PIN_CLOCK,
};

/* Number of map and program pins present. */
static int count_pins(const char *dir)
{
	char path[PATH_MAX];
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++) {
		pin_path(path, sizeof(path), dir, pin_names[i]);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/*
 * Remove every pin of the instance, and the directory itself when splitctl
 * created it (a directory the operator made stays, empty).
 */
static void remove_pins(const char *dir)
{
	const char *const *names = pin_names;
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++) {
		pin_path(path, sizeof(path), dir, names[i]);
		unlink(path);
		strncat(path, SC_PIN_TMP_SUFFIX, sizeof(path) - strlen(path) - 1);
		unlink(path);
	}
	pin_path(path, sizeof(path), dir, SC_PIN_CREATED);
	if (!rmdir(path))
		rmdir(dir);
}

/* Write the config and (re)pin the programs of a loaded skeleton. */
static int commit_instance(struct splitter *skel, const char *dir,
			   const struct split_config *cfg)
{
	__u32 key = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_config), &key, cfg,
				BPF_ANY)) {
		sc_err("cannot write the config map: %s", strerror(errno));
		return -1;
	}
	if (repin_prog(bpf_program__fd(skel->progs.fs_splitter), dir, SC_PIN_PROG) ||
	    repin_prog(bpf_program__fd(skel->progs.fs_clock), dir, SC_PIN_CLOCK))
		return -1;
	return 0;
}

int sc_attach(const struct sc_opts *o, const char *ifname,
	      const struct sc_attach_opts *ao)
{
	const char *dir = sc_pin_dir(o);
	struct split_config cfg;
	struct splitter *skel = NULL;
	char path[PATH_MAX], err[256];
	unsigned int hz;
	int ifindex, lock_fd = -1, link_fd = -1, upgrade, ret, r4, r6, rc, rs;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 key = 0;
	size_t i;

	ret = sc_check_privileges();
	if (ret)
		return ret;
	ret = check_iface(ifname, &ifindex);
	if (ret)
		return ret;
	ret = sc_prepare_dir(dir, 0);
	if (ret)
		return ret;
	lock_fd = sc_lock_dir_create(dir);
	if (lock_fd < 0)
		return SC_EXIT_RUNTIME;
	ret = SC_EXIT_RUNTIME;

	/* What runs on the interface now? Ours (a link pin) or foreign. */
	link_path(path, sizeof(path), dir, ifindex);
	upgrade = access(path, F_OK) == 0;
	if (upgrade && sc_link_ifindex(path) != ifindex) {
		/* a link left by a removed interface whose ifindex is now
		 * reused: it attaches nothing, drop it and attach afresh */
		sc_verbose("%s: removing defunct link pin '%s'\n", ifname, path);
		if (unlink(path)) {
			sc_err("cannot remove defunct link '%s': %s", path, strerror(errno));
			goto out;
		}
		upgrade = 0;
	}
	if (bpf_xdp_query(ifindex, 0, &q)) {
		sc_err("interface '%s': cannot query XDP: %s", ifname, strerror(errno));
		goto out;
	}
	if (!upgrade && q.prog_id) {
		char what[256];

		describe_xdp(ifindex, q.prog_id, what, sizeof(what));
		sc_err("interface '%s' already runs XDP program %s in %s mode, not attached by this instance ('%s'): detach it first",
		       ifname, what, fs_xdp_mode_name(q.attach_mode), dir);
		goto out;
	}
	if (upgrade && ao->mode != SC_MODE_AUTO &&
	    strcmp(fs_xdp_mode_name(q.attach_mode),
		   ao->mode == SC_MODE_NATIVE ? "native" : "generic")) {
		sc_err("interface '%s' runs the splitter in %s mode: an upgrade keeps the mode; detach first to change it",
		       ifname, fs_xdp_mode_name(q.attach_mode));
		ret = SC_EXIT_USAGE;
		goto out;
	}

	skel = splitter__open();
	if (!skel) {
		sc_err("cannot open the splitter program: %s", strerror(errno));
		goto out;
	}
	/* stop at the first refusal: one error line */
	if ((r4 = reuse_map(skel->maps.fs_flows4, dir, 1, ao->flows)) < 0 ||
	    (r6 = reuse_map(skel->maps.fs_flows6, dir, 1, ao->flows)) < 0 ||
	    (rc = reuse_map(skel->maps.fs_config, dir, 0, 0)) < 0 ||
	    (rs = reuse_map(skel->maps.fs_stats, dir, 0, 0)) < 0)
		goto out;
	if (!r4)
		bpf_map__set_max_entries(skel->maps.fs_flows4,
					 ao->flows ? ao->flows : FS_DEFAULT_FLOWS);
	if (!r6)
		bpf_map__set_max_entries(skel->maps.fs_flows6,
					 ao->flows ? ao->flows : FS_DEFAULT_FLOWS);
	if (splitter__load(skel)) {
		sc_err("cannot load the splitter program: %s (run with -v -v for the verifier log)",
		       strerror(errno));
		goto out;
	}

	/* The config: live one (upgrade, second interface) or defaults, with
	 * the command line's settings on top, all validated before any change. */
	hz = sc_kernel_hz(bpf_program__fd(skel->progs.fs_clock));
	if (!hz) {
		sc_err("cannot determine the kernel's HZ");
		goto out;
	}
	if (rc) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.fs_config), &key, &cfg)) {
			sc_err("cannot read the config map: %s", strerror(errno));
			goto out;
		}
		if (!cfg.idle_jiffies)	/* created but never written (killed attach) */
			sc_config_defaults(&cfg, hz);
	} else {
		sc_config_defaults(&cfg, hz);
	}
	for (i = 0; ao->settings && ao->settings[i]; i += 2) {
		if (sc_setting_apply(&cfg, ao->settings[i], ao->settings[i + 1],
				     hz, err, sizeof(err))) {
			sc_err("%s", err);
			ret = SC_EXIT_USAGE;
			goto out;
		}
	}
	if (cfg.dscp_short == cfg.dscp_long) {
		sc_err("dscp-short and dscp-long are both %u: they must differ", cfg.dscp_short);
		ret = SC_EXIT_USAGE;
		goto out;
	}

	/*
	 * A new instance (config map just created): pin the maps, write the
	 * config and pin the programs before anything is attached, so the
	 * first packet sees a valid config and a kill -9 after the link
	 * leaves a complete instance. An existing instance: change nothing
	 * before the attach or upgrade has succeeded (no partial change when
	 * it fails), then write the config and re-pin the programs.
	 */
	if ((!r4 && pin_map(skel->maps.fs_flows4, dir)) ||
	    (!r6 && pin_map(skel->maps.fs_flows6, dir)) ||
	    (!rc && pin_map(skel->maps.fs_config, dir)) ||
	    (!rs && pin_map(skel->maps.fs_stats, dir)))
		goto fail_pins;
	if (!rc && commit_instance(skel, dir, &cfg))
		goto fail_pins;

	link_path(path, sizeof(path), dir, ifindex);
	if (upgrade) {
		link_fd = bpf_obj_get(path);
		if (link_fd < 0 ||
		    bpf_link_update(link_fd, bpf_program__fd(skel->progs.fs_splitter), NULL)) {
			sc_err("interface '%s': cannot replace the program: %s", ifname,
			       strerror(errno));
			goto out;
		}
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo);

		lo.flags = ao->mode == SC_MODE_GENERIC ? XDP_FLAGS_SKB_MODE :
							 XDP_FLAGS_DRV_MODE;
		link_fd = bpf_link_create(bpf_program__fd(skel->progs.fs_splitter),
					  ifindex, BPF_XDP, &lo);
		if (link_fd < 0 && ao->mode == SC_MODE_AUTO) {
			sc_verbose("native XDP failed on %s (%s), trying generic\n",
				   ifname, strerror(errno));
			lo.flags = XDP_FLAGS_SKB_MODE;
			link_fd = bpf_link_create(bpf_program__fd(skel->progs.fs_splitter),
						  ifindex, BPF_XDP, &lo);
		}
		if (link_fd < 0) {
			sc_err("interface '%s': cannot attach in %s mode: %s", ifname,
			       ao->mode == SC_MODE_AUTO ? "native or generic" :
			       ao->mode == SC_MODE_NATIVE ? "native" : "generic",
			       strerror(errno));
			goto fail_pins;
		}
		if (pin_fd(link_fd, path))
			goto fail_pins;	/* closing link_fd detaches */
	}
	if (rc && commit_instance(skel, dir, &cfg))
		goto out;
	if (bpf_xdp_query(ifindex, 0, &q) == 0)
		sc_verbose("%s: splitter %s in %s mode\n", ifname,
			   upgrade ? "upgraded" : "attached", fs_xdp_mode_name(q.attach_mode));
	ret = SC_EXIT_OK;
	goto out;

fail_pins:
	/* first attach of the instance failed: leave nothing behind */
	if (!upgrade && count_links(dir) == 0)
		remove_pins(dir);
out:
	if (link_fd >= 0)
		close(link_fd);
	splitter__destroy(skel);
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}

/*
 * Remove a link pin and wait until the kernel has taken the program off the
 * interface. The kernel drops a link's last reference from a work queue, so
 * the program can outlive unlink() for a moment; without the wait, "detach"
 * could return with the program still attached, and the next holder of the
 * lock could take our own departing program for a foreign one.
 */
static int unlink_link(const char *path)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info), prog_id = 0;
	int fd = bpf_obj_get(path), ifindex = 0, i;

	if (fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			ifindex = info.xdp.ifindex;
			prog_id = info.prog_id;
		}
		close(fd);
	}
	if (unlink(path)) {
		sc_err("cannot remove '%s': %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; ifindex && i < SC_DETACH_WAIT_MS; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (bpf_xdp_query(ifindex, 0, &q) || q.prog_id != prog_id)
			return 0;
		usleep(1000);
	}
	if (ifindex)
		sc_verbose("ifindex %d: program %u still attached %d ms after its link was removed\n",
			   ifindex, prog_id, SC_DETACH_WAIT_MS);
	return 0;
}

int sc_detach(const struct sc_opts *o, const char *ifname)
{
	const char *dir = sc_pin_dir(o);
	struct sc_iface ifs[SC_MAX_IFACES];
	char path[PATH_MAX];
	int lock_fd, ifindex = 0, n, i, ret;

	ret = sc_check_privileges();
	if (ret)
		return ret;
	ret = sc_prepare_dir(dir, 0);
	if (ret)
		return ret;
	if (ifname) {
		if (!sc_valid_ifname(ifname)) {
			sc_err("invalid interface name '%s': accepted: 1..%d characters, not '.' or '..', no '/', ':' or white space",
			       ifname, IFNAMSIZ - 1);
			return SC_EXIT_USAGE;
		}
		ifindex = if_nametoindex(ifname);
		if (!ifindex) {
			sc_err("interface '%s' does not exist", ifname);
			return SC_EXIT_RUNTIME;
		}
	}
	if (access(dir, F_OK)) {
		sc_err("nothing attached: pin directory '%s' does not exist", dir);
		return SC_EXIT_RUNTIME;
	}
	lock_fd = sc_lock_dir(dir);
	if (lock_fd < 0)
		return SC_EXIT_RUNTIME;
	ret = SC_EXIT_OK;
	if (!ifname && !count_links(dir) && !count_pins(dir)) {
		/* an empty directory (the operator's, or a first attach
		 * killed before it pinned anything) */
		sc_err("nothing attached: no flowsplit pins in '%s'", dir);
		remove_pins(dir);
		ret = SC_EXIT_RUNTIME;
		goto out;
	}
	if (ifname) {
		link_path(path, sizeof(path), dir, ifindex);
		if (access(path, F_OK)) {
			sc_err("the splitter is not attached to '%s' (instance '%s')", ifname, dir);
			ret = SC_EXIT_RUNTIME;
			goto out;
		}
		/* the link is released with its last reference: the pin */
		if (unlink_link(path)) {
			ret = SC_EXIT_RUNTIME;
			goto out;
		}
	} else {
		n = sc_ifaces_list(dir, ifs, SC_MAX_IFACES);
		for (i = 0; i < n; i++) {
			link_path(path, sizeof(path), dir, ifs[i].ifindex);
			unlink_link(path);
		}
		/* links whose interface vanished keep their old ifindex name */
		n = count_links(dir);
		if (n) {
			struct dirent *de;
			DIR *d = opendir(dir);
			int idx;

			while (d && (de = readdir(d)))
				if (sscanf(de->d_name, SC_PIN_LINK_FMT, &idx) == 1) {
					pin_path(path, sizeof(path), dir, de->d_name);
					unlink(path);
				}
			if (d)
				closedir(d);
		}
	}
	if (count_links(dir) == 0)
		remove_pins(dir);
out:
	close(lock_fd);
	return ret;
}
