// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_dup.c - "dup attach|detach|status": the short class duplicated over
 * both tunnels and deduplicated at the peer (bpf/dup.bpf.c; design:
 * docs/design.md, *Duplicating the short class*).
 *
 * An instance's duplication lives in the subdirectory dup/ of its pin
 * directory, made and removed by splitctl only (its ownership record):
 *   fs_dup_config fs_dup_seen4 fs_dup_seen6 fs_dup_stats   maps
 *   link_dup_if<SHORT>        fs_dup at TCX egress of the SHORT device
 *   link_dedup_if<N>          fs_dedup at TCX ingress of SHORT and LONG
 * The programs share the instance's fs_config (the short code point), so
 * the splitter must be attached first; detaching its last interface
 * removes dup/ too (sc_dup_remove()). splitctl never touches another TCX
 * program on the tunnel devices: only the links it pinned.
 *
 * Safe default: attach installs dedup on both tunnels and copies nothing
 * (--copy no). Dedup alone never drops a segment that arrived once; the
 * copy is switched on (--copy yes, again in place) once the peer dedups.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "commands.h"
#include "dup.skel.h"

#define DUP_SUBDIR		"dup"
#define DUP_LINK_FMT		"link_dup_if%d"
#define DEDUP_LINK_FMT		"link_dedup_if%d"
#define ARP_TABLE		"/proc/net/arp"
#define ARP_F_COMPLETE		0x2	/* ATF_COM: the address is resolved */

static const struct sc_dup_attach_args dup_attach_defaults = {
	.window_ms = FS_DUP_DEFAULT_WINDOW_MS,
	.entries = FS_DUP_DEFAULT_ENTRIES,
};

void sc_dup_attach_defaults(struct sc_dup_attach_args *a)
{
	*a = dup_attach_defaults;
}

static int parse_mac(const char *s, __u8 mac[6]);

/* --peer-mac / [dup] peer-mac: six hex pairs */
static int check_mac(const struct sc_option *o, void *member, const char *value, char *why,
		     size_t whylen)
{
	__u8 mac[6];

	(void)o;
	(void)member;
	(void)whylen;
	if (parse_mac(value, mac)) {
		why[0] = '\0';	/* the row's "invalid MAC address ...: accepted" */
		return -EINVAL;
	}
	return 0;
}

const struct sc_option sc_dup_attach_opts[] = {
	SC_OPTION("short-dev", SC_OPT_IFNAME, struct sc_dup_attach_args, short_dev,
		  .metavar = "DEV", .noun = "interface name", .required = true,
		  .help = "the SHORT tunnel device: its short-class segments are copied; dedup on "
			  "its ingress"),
	SC_OPTION("long-dev", SC_OPT_IFNAME, struct sc_dup_attach_args, long_dev, .metavar = "DEV",
		  .noun = "interface name", .required = true,
		  .help = "the LONG tunnel device: the copies leave on it; dedup on its ingress"),
	SC_OPTION("copy", SC_OPT_YESNO, struct sc_dup_attach_args, copy, .metavar = "yes|no",
		  .cli_only = true,
		  .help = "copy the short class onto LONG (default no: dedup only; only once the "
			  "peer dedups)"),
	SC_OPTION("peer-mac", SC_OPT_STRING, struct sc_dup_attach_args, peer_mac, .metavar = "MAC",
		  .noun = "MAC address", .check = check_mac,
		  .accepted = "six hex pairs separated by ':', e.g. 02:00:00:00:00:01",
		  .help = "the LONG peer's Ethernet address, for the copies (default: the one "
			  "resolved neighbour of --long-dev)"),
	SC_OPTION("window", SC_OPT_MSEC, struct sc_dup_attach_args, window_ms, .metavar = "S",
		  .lo = FS_DUP_MIN_WINDOW_MS, .hi = FS_DUP_MAX_WINDOW_MS,
		  .help = "a second copy counts as one within this many seconds of the first "
			  "(default 1)"),
	SC_OPTION("entries", SC_OPT_UINT, struct sc_dup_attach_args, entries, .metavar = "N",
		  .lo = FS_DUP_MIN_ENTRIES, .hi = FS_DUP_MAX_ENTRIES,
		  .help = "segments each dedup table remembers (LRU; default 65536; first attach "
			  "only)"),
	SC_OPTIONS_END,
};

/* A path under dup/ (the directory itself for a NULL @name); the pin
 * directory's length is checked when the instance is opened. */
static void dup_path(char *buf, size_t len, const char *dir, const char *name)
{
	if (snprintf(buf, len, "%s/" DUP_SUBDIR "%s%s", dir, name ? "/" : "",
		     name ? name : "") >= (int)len)
		buf[0] = '\0';
}

static void dup_link_path(char *buf, size_t len, const char *dir, const char *fmt,
			  int ifindex)
{
	char name[32];

	snprintf(name, sizeof(name), fmt, ifindex);
	dup_path(buf, len, dir, name);
}

static const char *const dup_map_pins[] = {
	FS_MAP_DUP_CONFIG, FS_MAP_DUP_SEEN4, FS_MAP_DUP_SEEN6, FS_MAP_DUP_STATS,
};

/* Remove dup/ and everything in it that splitctl pins there (the links
 * release their programs with the pin). Nothing else is touched: a file
 * of another name keeps the directory. */
void sc_dup_remove(const char *dir)
{
	char sub[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	size_t i;
	int idx;

	dup_path(sub, sizeof(sub), dir, NULL);
	d = opendir(sub);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, DUP_LINK_FMT, &idx) == 1 ||
		    sscanf(de->d_name, DEDUP_LINK_FMT, &idx) == 1) {
			dup_path(path, sizeof(path), dir, de->d_name);
			unlink(path);
		}
	}
	closedir(d);
	for (i = 0; i < sizeof(dup_map_pins) / sizeof(dup_map_pins[0]); i++) {
		dup_path(path, sizeof(path), dir, dup_map_pins[i]);
		unlink(path);
	}
	rmdir(sub);
}

static bool dup_attached(const char *dir)
{
	char path[PATH_MAX];

	dup_path(path, sizeof(path), dir, FS_MAP_DUP_CONFIG);
	return access(path, F_OK) == 0;
}

static int dup_open_map(const char *dir, const char *name)
{
	char path[PATH_MAX];

	dup_path(path, sizeof(path), dir, name);
	return bpf_obj_get(path);
}

/* "02:00:00:00:00:01" into 6 bytes: 0 or -1. */
static int parse_mac(const char *s, __u8 mac[6])
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5], &end) != 6 || strlen(s) != 17)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

static void mac_text(const __u8 mac[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}

/* The Ethernet address of @ifname: 0 or -errno. */
static int dev_mac(const char *ifname, __u8 mac[6])
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr) ? -errno : 0;
	close(fd);
	if (!ret)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return ret;
}

/* The one resolved IPv4 neighbour address on @ifname (a point-to-point
 * tunnel has one peer): 0, -ENOENT (none), -EEXIST (several). */
static int arp_peer_mac(const char *ifname, __u8 mac[6])
{
	char line[256], ip[64], hw[32], mask[32], dev[IFNAMSIZ + 1];
	unsigned int type, flags;
	__u8 m[6];
	int n = 0;
	FILE *f = fopen(ARP_TABLE, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s 0x%x 0x%x %31s %31s %16s", ip, &type, &flags, hw,
			   mask, dev) != 6)
			continue;
		if (strcmp(dev, ifname) || !(flags & ARP_F_COMPLETE) || parse_mac(hw, m))
			continue;
		if (n && memcmp(m, mac, 6)) {
			fclose(f);
			return -EEXIST;
		}
		memcpy(mac, m, 6);
		n = 1;
	}
	fclose(f);
	return n ? 0 : -ENOENT;
}

int sc_dup_copy_flag(const char *dir, int want, bool *copy)
{
	static const __u8 no_mac[6];
	struct dup_config dc;
	__u32 zero = 0;
	int fd, ret = 0;

	fd = dup_open_map(dir, FS_MAP_DUP_CONFIG);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (bpf_map_lookup_elem(fd, &zero, &dc)) {
		ret = -errno;
		goto out;
	}
	*copy = dc.flags & FS_DUP_F_DUP;
	if (want < 0 || *copy == !!want)
		goto out;
	/* a copy to a zero address goes nowhere: dup attach was given the
	 * peer's, or found it, or it is resolved by now (the agent's
	 * probes of LONG resolve it) */
	if (want && !memcmp(dc.long_dmac, no_mac, 6)) {
		char dev[IF_NAMESIZE];

		if (!if_indextoname(dc.long_ifindex, dev) || arp_peer_mac(dev, dc.long_dmac)) {
			ret = -EADDRNOTAVAIL;
			goto out;
		}
	}
	dc.flags = want ? dc.flags | FS_DUP_F_DUP : dc.flags & ~FS_DUP_F_DUP;
	if (bpf_map_update_elem(fd, &zero, &dc, BPF_EXIST))
		ret = -errno;
	else
		*copy = want;
out:
	close(fd);
	return ret;
}

int sc_dup_check(const char *dir, struct sc_dup_check *c)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, ret = 0;

	memset(c, 0, sizeof(*c));
	fd = dup_open_map(dir, FS_MAP_DUP_CONFIG);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (bpf_map_lookup_elem(fd, &zero, &c->dc))
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	dup_link_path(path, sizeof(path), dir, DUP_LINK_FMT, c->dc.short_ifindex);
	c->dup_link = access(path, F_OK) == 0;
	dup_link_path(path, sizeof(path), dir, DEDUP_LINK_FMT, c->dc.short_ifindex);
	c->dedup_link[0] = access(path, F_OK) == 0;
	dup_link_path(path, sizeof(path), dir, DEDUP_LINK_FMT, c->dc.long_ifindex);
	c->dedup_link[1] = access(path, F_OK) == 0;
	return 0;
}

int sc_dup_counters(const char *dir, __u64 sum[FS_DUP_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), fd, i, j, ret = 0;
	struct fs_dup_stats *v;
	__u32 zero = 0;

	if (ncpu <= 0)
		return -EINVAL;
	fd = dup_open_map(dir, FS_MAP_DUP_STATS);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	v = calloc(ncpu, sizeof(*v));
	memset(sum, 0, sizeof(__u64) * FS_DUP_STAT_MAX);
	if (!v)
		ret = -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, v))
		ret = -errno;
	else
		for (i = 0; i < ncpu; i++)
			for (j = 0; j < FS_DUP_STAT_MAX; j++)
				sum[j] += v[i].v[j];
	free(v);
	close(fd);
	return ret;
}

/* The config a call asks for, into @dc (flags, devices, addresses,
 * window): FS_EXIT_OK or the exit code, the error printed. */
static int dup_config_of(const struct sc_dup_attach_args *a, int short_if, int long_if,
			 unsigned int hz, struct dup_config *dc)
{
	int err;

	memset(dc, 0, sizeof(*dc));
	dc->flags = FS_DUP_F_DEDUP | (a->copy ? FS_DUP_F_DUP : 0);
	dc->short_ifindex = short_if;
	dc->long_ifindex = long_if;
	dc->window_ms = a->window_ms;
	dc->window_jiffies = fs_ms_to_jiffies(a->window_ms, hz);
	err = dev_mac(a->long_dev, dc->long_smac);
	if (err) {
		pr_err("'%s': no Ethernet address (%s): the copies need one", a->long_dev,
		       strerror(-err));
		return FS_EXIT_RUNTIME;
	}
	if (a->peer_mac) {
		parse_mac(a->peer_mac, dc->long_dmac);	/* checked by its row */
		return FS_EXIT_OK;
	}
	err = arp_peer_mac(a->long_dev, dc->long_dmac);
	/* dedup only: the peer's address is looked for all the same, for
	 * the agent's [dup] copy = auto (none found: it warns when due) */
	if (!a->copy)
		return FS_EXIT_OK;
	if (err == -ENOENT) {
		pr_err("no resolved neighbour on '%s' to send the copies to: give --peer-mac MAC "
		       "(the peer's %s address)",
		       a->long_dev, a->long_dev);
		return FS_EXIT_RUNTIME;
	}
	if (err == -EEXIST) {
		pr_err("several neighbours on '%s': give --peer-mac MAC (the peer's %s address)",
		       a->long_dev, a->long_dev);
		return FS_EXIT_RUNTIME;
	}
	if (err) {
		pr_err("%s: %s", ARP_TABLE, strerror(-err));
		return FS_EXIT_RUNTIME;
	}
	return FS_EXIT_OK;
}

static void print_dup(const char *dir);

/* Load, pin and attach a new dup/ (the instance locked, dup/ absent). */
static int dup_create(const struct sc_state *st, const struct sc_dup_attach_args *a,
		      const struct dup_config *dc)
{
	const int ifs[2] = { dc->short_ifindex, dc->long_ifindex };
	char sub[PATH_MAX], path[PATH_MAX];
	struct dup *skel = NULL;
	int fd, i, ret = FS_EXIT_RUNTIME, err;
	__u32 zero = 0;
	struct bpf_map *maps[4];

	dup_path(sub, sizeof(sub), st->dir, NULL);
	if (mkdir(sub, 0700)) {
		pr_err("'%s': %s", sub, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	skel = dup__open();
	if (!skel) {
		pr_err("cannot open the dup program: %s", strerror(errno));
		goto out;
	}
	bpf_map__set_max_entries(skel->maps.fs_dup_seen4, a->entries);
	bpf_map__set_max_entries(skel->maps.fs_dup_seen6, a->entries);
	err = bpf_map__reuse_fd(skel->maps.fs_config, st->config_fd);
	if (!err)
		err = dup__load(skel);
	if (err) {
		pr_err("cannot load the dup program: %s (-v shows libbpf's log)", strerror(-err));
		goto out;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_dup_config), &zero, dc, 0)) {
		pr_err("cannot write %s: %s", FS_MAP_DUP_CONFIG, strerror(errno));
		goto out;
	}
	maps[0] = skel->maps.fs_dup_config;
	maps[1] = skel->maps.fs_dup_seen4;
	maps[2] = skel->maps.fs_dup_seen6;
	maps[3] = skel->maps.fs_dup_stats;
	for (i = 0; i < 4; i++) {
		dup_path(path, sizeof(path), st->dir, dup_map_pins[i]);
		if (bpf_obj_pin(bpf_map__fd(maps[i]), path) || chmod(path, SC_PIN_MODE)) {
			pr_err("cannot pin '%s': %s", path, strerror(errno));
			goto out;
		}
	}
	fd = sc_hook_observer_create(bpf_program__fd(skel->progs.fs_dup), dc->short_ifindex);
	if (fd < 0) {
		pr_err("cannot attach fs_dup at TC egress of '%s': %s (TCX needs kernel 6.6)",
		       a->short_dev, strerror(-fd));
		goto out;
	}
	dup_link_path(path, sizeof(path), st->dir, DUP_LINK_FMT, dc->short_ifindex);
	err = bpf_obj_pin(fd, path);
	close(fd);
	if (err) {
		pr_err("cannot pin '%s': %s", path, strerror(errno));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		fd = sc_hook_link_create(bpf_program__fd(skel->progs.fs_dedup), ifs[i],
					 SC_HOOK_TC, 0);
		if (fd < 0) {
			pr_err("cannot attach fs_dedup at TC ingress of '%s': %s",
			       i ? a->long_dev : a->short_dev, strerror(-fd));
			goto out;
		}
		dup_link_path(path, sizeof(path), st->dir, DEDUP_LINK_FMT, ifs[i]);
		err = bpf_obj_pin(fd, path);
		close(fd);
		if (err) {
			pr_err("cannot pin '%s': %s", path, strerror(errno));
			goto out;
		}
	}
	ret = FS_EXIT_OK;
out:
	if (ret != FS_EXIT_OK)
		sc_dup_remove(st->dir);	/* nothing half made stays */
	dup__destroy(skel);
	return ret;
}

static int cmd_dup_attach(const struct sc_call *c)
{
	const struct sc_dup_attach_args *a = c->args;
	const struct sc_state *st = c->st;
	struct dup_config dc, old;
	int short_if, long_if, ret, fd;
	unsigned int hz;
	__u32 zero = 0;

	if (!strcmp(a->short_dev, a->long_dev))
		return sc_print_usage_error(
			"dup attach",
			"--short-dev and --long-dev are both '%s': two tunnel devices are needed",
			a->short_dev);
	short_if = if_nametoindex(a->short_dev);
	long_if = if_nametoindex(a->long_dev);
	if (!short_if || !long_if) {
		pr_err("no interface '%s'", short_if ? a->long_dev : a->short_dev);
		return FS_EXIT_RUNTIME;
	}
	hz = sc_kernel_hz(st->clock_prog_fd);
	ret = dup_config_of(a, short_if, long_if, hz, &dc);
	if (ret)
		return ret;
	if (!dup_attached(st->dir)) {
		ret = dup_create(st, a, &dc);
	} else {
		/* attached: the same devices change in place (the copy
		 * switched on or off, the window), others are refused */
		fd = dup_open_map(st->dir, FS_MAP_DUP_CONFIG);
		if (fd < 0 || bpf_map_lookup_elem(fd, &zero, &old)) {
			pr_err("cannot read %s/%s/%s: %s", st->dir, DUP_SUBDIR, FS_MAP_DUP_CONFIG,
			       strerror(errno));
			if (fd >= 0)
				close(fd);
			return FS_EXIT_RUNTIME;
		}
		if (old.short_ifindex != dc.short_ifindex || old.long_ifindex != dc.long_ifindex) {
			char s[IFNAMSIZ] = "?", l[IFNAMSIZ] = "?";

			if_indextoname(old.short_ifindex, s);
			if_indextoname(old.long_ifindex, l);
			pr_err("dup is attached to short '%s', long '%s': 'dup detach' first", s,
			       l);
			close(fd);
			return FS_EXIT_RUNTIME;
		}
		if (sc_option_given(sc_dup_attach_opts, (void *)a, "entries")) {
			int t4 = dup_open_map(st->dir, FS_MAP_DUP_SEEN4);

			if (t4 >= 0 && fs_map__capacity(t4) != a->entries)
				pr_warn("--entries applies at the first attach only: the tables "
					"keep their %u entries",
					fs_map__capacity(t4));
			if (t4 >= 0)
				close(t4);
		}
		ret = bpf_map_update_elem(fd, &zero, &dc, 0) ? FS_EXIT_RUNTIME : FS_EXIT_OK;
		if (ret)
			pr_err("cannot write %s: %s", FS_MAP_DUP_CONFIG, strerror(errno));
		close(fd);
	}
	if (ret == FS_EXIT_OK)
		print_dup(st->dir);
	return ret;
}

static int cmd_dup_detach(const struct sc_call *c)
{
	bool was = dup_attached(c->st->dir);

	if (!was) {
		pr_err("dup is not attached (instance '%s')", c->st->dir);
		return FS_EXIT_RUNTIME;
	}
	sc_dup_remove(c->st->dir);
	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, c->st->dir);
	print_bool(PRINT_JSON, "detached", NULL, true);
	close_json_object();
	return FS_EXIT_OK;
}

/* The status object: devices, the copy, the tables, the counters. */
static void print_dup(const char *dir)
{
	int ncpu = libbpf_num_possible_cpus(), cfd, sfd, t4, t6, i, j;
	struct fs_dup_stats *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));
	char s[IFNAMSIZ] = "?", l[IFNAMSIZ] = "?", mac[24];
	__u64 sum[FS_DUP_STAT_MAX] = { 0 }, n4 = 0, n6 = 0;
	struct dup_config dc = { 0 };
	__u32 zero = 0;

	cfd = dup_open_map(dir, FS_MAP_DUP_CONFIG);
	sfd = dup_open_map(dir, FS_MAP_DUP_STATS);
	t4 = dup_open_map(dir, FS_MAP_DUP_SEEN4);
	t6 = dup_open_map(dir, FS_MAP_DUP_SEEN6);
	if (cfd >= 0)
		bpf_map_lookup_elem(cfd, &zero, &dc);
	if (v && sfd >= 0 && !bpf_map_lookup_elem(sfd, &zero, v))
		for (i = 0; i < ncpu; i++)
			for (j = 0; j < FS_DUP_STAT_MAX; j++)
				sum[j] += v[i].v[j];
	if (t4 >= 0)
		fs_map__count(t4, &n4);
	if (t6 >= 0)
		fs_map__count(t6, &n6);
	if_indextoname(dc.short_ifindex, s);
	if_indextoname(dc.long_ifindex, l);
	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, dir);
	print_bool(PRINT_JSON, "attached", NULL, true);
	print_string(PRINT_ANY, "short_dev", "dup: short %s", s);
	print_string(PRINT_ANY, "long_dev", ", long %s", l);
	print_bool(PRINT_ANY, "copy", ": copy %s", dc.flags & FS_DUP_F_DUP);
	print_bool(PRINT_JSON, "dedup", NULL, dc.flags & FS_DUP_F_DEDUP);
	print_string(PRINT_FP, NULL, "%s", dc.flags & FS_DUP_F_DUP ?
		     " (short-class segments leaving the short device are copied to the long one)" :
		     " (dedup only: nothing is copied)");
	print_nl();
	mac_text(dc.long_dmac, mac, sizeof(mac));
	print_string(PRINT_ANY, "peer_mac", "  copies to %s", mac);
	mac_text(dc.long_smac, mac, sizeof(mac));
	print_string(PRINT_ANY, "source_mac", " from %s", mac);
	print_uint(PRINT_ANY, "window_ms", ", window %llu ms", dc.window_ms);
	print_nl();
	print_uint(PRINT_ANY, "entries4", "  dedup tables: IPv4 %llu", n4);
	print_uint(PRINT_ANY, "capacity4", "/%llu", t4 >= 0 ? fs_map__capacity(t4) : 0);
	print_uint(PRINT_ANY, "entries6", ", IPv6 %llu", n6);
	print_uint(PRINT_ANY, "capacity6", "/%llu", t6 >= 0 ? fs_map__capacity(t6) : 0);
	print_nl();
	open_json_object("counters");
	for (i = 0; i < FS_DUP_STAT_MAX; i++) {
		char fmt[64];

		snprintf(fmt, sizeof(fmt), "  %-22s %%llu\n", fs_dup_stat_descs[i].name);
		print_uint(PRINT_ANY, fs_dup_stat_descs[i].name, fmt, sum[i]);
	}
	close_json_object();
	close_json_object();
	free(v);
	for (i = 0; i < 4; i++) {
		int fds[4] = { cfd, sfd, t4, t6 };

		if (fds[i] >= 0)
			close(fds[i]);
	}
}

static int cmd_dup_status(const struct sc_call *c)
{
	if (!dup_attached(c->st->dir)) {
		open_json_object(NULL);
		print_string(PRINT_JSON, "pin_dir", NULL, c->st->dir);
		print_bool(PRINT_JSON, "attached", NULL, false);
		print_string(PRINT_FP, NULL, "%s\n", "dup: not attached");
		close_json_object();
		return FS_EXIT_OK;
	}
	print_dup(c->st->dir);
	return FS_EXIT_OK;
}

/* ---- a config file's [dup] ("apply") ------------------------------------ */
/* The live dup/ of dir: its config and its tables' size. 0 or -errno. */
static int dup_live(const char *dir, struct dup_config *dc, __u32 *entries)
{
	__u32 zero = 0;
	int fd, t4, ret = 0;

	fd = dup_open_map(dir, FS_MAP_DUP_CONFIG);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, dc))
		ret = -errno;
	close(fd);
	t4 = dup_open_map(dir, FS_MAP_DUP_SEEN4);
	*entries = t4 >= 0 ? fs_map__capacity(t4) : 0;
	if (t4 >= 0)
		close(t4);
	return ret;
}

static void dup_describe(char *buf, size_t len, const char *s, const char *l, __u32 window_ms,
			 __u32 entries, const char *peer)
{
	if (!len)
		return;
	snprintf(buf, len, "short %s, long %s, window %g s, entries %u%s%s", s, l,
		 window_ms / 1000.0, entries, peer ? ", peer-mac " : "", peer ? peer : "");
}

enum sc_dup_action sc_dup_plan(const char *dir, const struct sc_dup_attach_args *want,
			       bool remade, char *from, size_t flen, char *to, size_t tlen)
{
	static const __u8 no_mac[6];
	char s[IF_NAMESIZE] = "?", l[IF_NAMESIZE] = "?", mac[24];
	struct dup_config dc = { 0 };
	bool live = dup_attached(dir);
	__u32 entries = 0;
	__u8 want_mac[6], smac[6];

	if (flen)
		from[0] = '\0';
	if (tlen)
		to[0] = '\0';
	if (live && !dup_live(dir, &dc, &entries)) {
		if_indextoname(dc.short_ifindex, s);
		if_indextoname(dc.long_ifindex, l);
		mac_text(dc.long_dmac, mac, sizeof(mac));
		dup_describe(from, flen, s, l, dc.window_ms, entries,
			     memcmp(dc.long_dmac, no_mac, 6) ? mac : NULL);
	}
	if (!want)
		return live ? SC_DUP_REMOVE : SC_DUP_KEEP;
	dup_describe(to, tlen, want->short_dev, want->long_dev, want->window_ms, want->entries,
		     want->peer_mac);
	if (!live)
		return SC_DUP_ATTACH;
	/* a device apply makes again has a new index: its links are gone */
	if (remade || dc.short_ifindex != if_nametoindex(want->short_dev) ||
	    dc.long_ifindex != if_nametoindex(want->long_dev) || entries != want->entries)
		return SC_DUP_REATTACH;
	if (dc.window_ms != want->window_ms)
		return SC_DUP_CHANGE;
	if (want->peer_mac && !parse_mac(want->peer_mac, want_mac) &&
	    memcmp(want_mac, dc.long_dmac, 6))
		return SC_DUP_CHANGE;
	/* the copies' source: LONG's own address */
	if (!dev_mac(want->long_dev, smac) && memcmp(smac, dc.long_smac, 6))
		return SC_DUP_CHANGE;
	return SC_DUP_KEEP;
}

int sc_dup_dev_check(const char *dev, char *err, size_t len)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, len, "%s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr) ? errno : 0;
	close(fd);
	if (ret == ENODEV)
		snprintf(err, len, "no interface '%s'", dev);
	else if (ret)
		snprintf(err, len, "'%s': %s", dev, strerror(ret));
	else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		snprintf(err, len,
			 "'%s' is not an Ethernet device: accepted: an Ethernet tunnel such as "
			 "vxlan (the copies are Ethernet frames)",
			 dev);
	else
		return 0;
	return FS_EXIT_RUNTIME;
}

/* Attach a dup/ of config dc (dc's devices; a's entries), dup/ absent. */
static int dup_make(const struct sc_state *st, const struct dup_config *dc, __u32 entries)
{
	struct sc_dup_attach_args a = dup_attach_defaults;

	a.entries = entries;
	if (!if_indextoname(dc->short_ifindex, a.short_dev) ||
	    !if_indextoname(dc->long_ifindex, a.long_dev)) {
		pr_err("dup: a tunnel device (index %u or %u) is gone", dc->short_ifindex,
		       dc->long_ifindex);
		return FS_EXIT_RUNTIME;
	}
	return dup_create(st, &a, dc);
}

int sc_dup_apply(const struct sc_opts *o, const struct sc_dup_attach_args *want, bool remade,
		 struct sc_dup_saved *saved)
{
	static const __u8 no_mac[6];
	struct sc_dup_attach_args a;
	enum sc_dup_action act;
	struct dup_config dc;
	struct sc_state st;
	int ret, fd, short_if = 0, long_if = 0;
	__u32 zero = 0;

	memset(saved, 0, sizeof(*saved));
	ret = sc_state_open(o, &st, 1);
	if (ret && !want && (ret == -ESRCH || ret == -ENODATA || ret == -ENOENT || ret == -ENODEV))
		return FS_EXIT_OK;	/* no instance: no dup/ either */
	if (ret) {
		char msg[PATH_MAX + 256];

		pr_err("dup: %s", sc_state_strerror(ret, sc_pin_dir(o), msg, sizeof(msg)));
		return FS_EXIT_RUNTIME;
	}
	act = sc_dup_plan(st.dir, want, remade, NULL, 0, NULL, 0);
	if (act == SC_DUP_KEEP)
		goto out;
	if (act != SC_DUP_ATTACH) {
		ret = dup_live(st.dir, &saved->dc, &saved->entries);
		if (ret) {
			pr_err("cannot read %s/%s/%s: %s", st.dir, DUP_SUBDIR, FS_MAP_DUP_CONFIG,
			       strerror(-ret));
			ret = FS_EXIT_RUNTIME;
			goto out;
		}
		saved->had = true;
	}
	if (act == SC_DUP_REMOVE) {
		sc_dup_remove(st.dir);
		saved->done = true;
		goto out;
	}
	/* the config want asks for: the copy off (the agent's), dedup on */
	a = *want;
	a.copy = false;
	short_if = if_nametoindex(a.short_dev);
	long_if = if_nametoindex(a.long_dev);
	if (!short_if || !long_if) {
		pr_err("dup: no interface '%s'", short_if ? a.long_dev : a.short_dev);
		ret = FS_EXIT_RUNTIME;
		goto out;
	}
	ret = dup_config_of(&a, short_if, long_if, sc_kernel_hz(st.clock_prog_fd), &dc);
	if (ret)
		goto out;
	if (act == SC_DUP_CHANGE) {
		/* in place: the copy flag stays the agent's, and a peer
		 * address found before stays unless the file names one */
		dc.flags = saved->dc.flags;
		if (!a.peer_mac && memcmp(saved->dc.long_dmac, no_mac, 6))
			memcpy(dc.long_dmac, saved->dc.long_dmac, 6);
		fd = dup_open_map(st.dir, FS_MAP_DUP_CONFIG);
		if (fd < 0 || bpf_map_update_elem(fd, &zero, &dc, BPF_EXIST)) {
			pr_err("cannot write %s: %s", FS_MAP_DUP_CONFIG, strerror(errno));
			ret = FS_EXIT_RUNTIME;
		}
		if (fd >= 0)
			close(fd);
		saved->done = !ret;
		goto out;
	}
	if (act == SC_DUP_REATTACH)
		sc_dup_remove(st.dir);
	ret = dup_create(&st, &a, &dc);
	if (ret && saved->had)
		dup_make(&st, &saved->dc, saved->entries);	/* the one removed, back */
	saved->done = !ret;
out:
	sc_state_close(&st);
	return ret;
}

void sc_dup_restore(const struct sc_opts *o, const struct sc_dup_saved *saved)
{
	struct sc_state st;

	if (!saved->done || sc_state_open(o, &st, 1))
		return;
	sc_dup_remove(st.dir);
	if (saved->had)
		dup_make(&st, &saved->dc, saved->entries);
	sc_state_close(&st);
}

static const struct sc_cmd sc_cmd_dup_attach =
	SC_CMD("attach", cmd_dup_attach, "",
	       "dedup on both tunnels' ingress, and (--copy yes) copy the short class onto LONG",
	       sc_dup_attach_opts, struct sc_dup_attach_args, .state = SC_STATE_LOCK,
	       .defaults = &dup_attach_defaults);
static const struct sc_cmd sc_cmd_dup_detach =
	SC_CMD("detach", cmd_dup_detach, "", "remove the duplication and dedup programs and pins",
	       sc_no_opts, struct sc_no_args, .state = SC_STATE_LOCK);
static const struct sc_cmd sc_cmd_dup_status =
	SC_CMD("status", cmd_dup_status, "", "devices, copy on or off, tables and counters",
	       sc_no_opts, struct sc_no_args, .state = SC_STATE_READ);
static const struct sc_cmd *const dup_cmds[] = {
	&sc_cmd_dup_attach, &sc_cmd_dup_detach, &sc_cmd_dup_status, NULL,
};
const struct sc_cmd sc_cmd_dup =
	SC_CMD_GROUP("dup", "attach|detach|status ...",
		     "copy the short class over both tunnels; drop the second copy", dup_cmds);
