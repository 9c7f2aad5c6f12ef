// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c - load, pin and attach the splitter; upgrade in place; detach.
 *
 * Pin layout in the instance directory (all mode 0600):
 *   fs_flows4 fs_flows6 fs_config fs_stats   the maps, shared by every
 *   fs_rules4 fs_rules6 fs_spill             interface of the instance
 *   prog_splitter prog_splitter_tc prog_clock the loaded programs (each
 *   prog_observer                            hook's splitter: the last one
 *                                            loaded for it, attach_load())
 *   link_if<ifindex>                         one bpf_link per interface: XDP
 *                                            or TCX (TC ingress), hook.c
 *   observer_if<ifindex>                     the observer's TCX egress link
 *                                            on the same interface: the
 *                                            other direction's ACKs, for
 *                                            message boundaries
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
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bpfutil.h"
#include "rules.h"
#include "splitctl.h"
#include "splitter.skel.h"

/* -v count (the global option; main.c sets it): libxdp's log follows it,
 * as libbpf's does */
unsigned int sc_verbose_level;

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

int sc_iface_usable(const char *ifname, char *err, size_t len)
{
	struct ifreq ifr = { 0 };
	int fd;

	if (!if_nametoindex(ifname)) {
		snprintf(err, len, "interface '%s' does not exist", ifname);
		return FS_EXIT_USAGE;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		snprintf(err, len, "interface '%s': cannot read its flags: %s", ifname,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return FS_EXIT_RUNTIME;
	}
	close(fd);
	if (!(ifr.ifr_flags & IFF_UP)) {
		snprintf(err, len,
			 "interface '%s' is down: bring it up first ('ip link set %s up')", ifname,
			 ifname);
		return FS_EXIT_RUNTIME;
	}
	return 0;
}

/* Existing interface that is up: 0, else message and exit code. (The name
 * itself was checked by the option table.) */
static int check_iface(const char *ifname, int *ifindex)
{
	char err[128];
	int ret = sc_iface_usable(ifname, err, sizeof(err));

	if (ret) {
		pr_err("%s", err);
		/* a missing interface is a runtime failure for attach */
		return FS_EXIT_RUNTIME;
	}
	*ifindex = if_nametoindex(ifname);
	return 0;
}

static void observer_path(char *buf, size_t len, const char *dir, int ifindex)
{
	char name[32];

	snprintf(name, sizeof(name), SC_PIN_OBSERVER_FMT, ifindex);
	pin_path(buf, len, dir, name);
}

/*
 * Remove the observer's link pin of @ifindex (if any) and wait until the
 * kernel has taken it off the interface (see unlink_link()).
 */
static void unlink_observer(const char *dir, int ifindex)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info), prog_id = 0;
	char path[PATH_MAX];
	int fd, i;

	observer_path(path, sizeof(path), dir, ifindex);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.xdp.ifindex)
			prog_id = info.prog_id;
		close(fd);
	}
	if (unlink(path))
		return;
	for (i = 0; prog_id && i < SC_DETACH_WAIT_MS; i++) {
		if (!sc_hook_observer_attached(ifindex, prog_id))
			return;
		usleep(1000);
	}
}

/* Every observer pin in dir (detach --all, a failed first attach). */
static void unlink_observers(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int idx;

	while (d && (de = readdir(d)))
		if (sscanf(de->d_name, SC_PIN_OBSERVER_FMT, &idx) == 1)
			unlink_observer(dir, idx);
	if (d)
		closedir(d);
}

static void marker_path(char *buf, size_t len, const char *dir, int ifindex)
{
	char name[32];

	snprintf(name, sizeof(name), SC_PIN_ATTACHED_FMT, ifindex);
	pin_path(buf, len, dir, name);
}

/* Remove every entry of dir named by fmt (one %d: an ifindex): files, or
 * directories (is_dir). */
static void remove_named(const char *dir, const char *fmt, bool is_dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int idx;

	while (d && (de = readdir(d)))
		if (sscanf(de->d_name, fmt, &idx) == 1) {
			pin_path(path, sizeof(path), dir, de->d_name);
			if (is_dir)
				rmdir(path);
			else
				unlink(path);
		}
	if (d)
		closedir(d);
}

static int pin_fd(int fd, const char *path)
{
	if (bpf_obj_pin(fd, path)) {
		pr_err("cannot pin '%s': %s", path, strerror(errno));
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
		pr_err("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
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
		pr_err("cannot inspect pinned map '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (info.type != bpf_map__type(map) ||
	    info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) ||
	    (!resizable && info.max_entries != bpf_map__max_entries(map))) {
		/* never recreate it empty behind the operator's back */
		pr_err("pinned map '%s' has another layout (%s, key %u B, value %u B, %u entries) "
		       "than this splitter needs (%s, key %u B, value %u B, %u entries): refusing "
		       "to replace it; 'splitctl detach --all' drops the old state",
		       path, map_type_name(info.type), info.key_size, info.value_size,
		       info.max_entries, map_type_name(bpf_map__type(map)), bpf_map__key_size(map),
		       bpf_map__value_size(map),
		       resizable ? info.max_entries : bpf_map__max_entries(map));
		close(fd);
		return -1;
	}
	if (want_entries && info.max_entries != want_entries) {
		pr_err("--flows %u: the pinned flow table '%s' has %u entries; a table cannot be "
		       "resized in place ('splitctl detach --all' first)",
		       want_entries, path, info.max_entries);
		close(fd);
		return -1;
	}
	if (resizable)
		bpf_map__set_max_entries(map, info.max_entries);
	if (bpf_map__reuse_fd(map, fd)) {
		pr_err("cannot reuse pinned map '%s': %s", path, strerror(errno));
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
	FS_MAP_RULES4, FS_MAP_RULES6, FS_MAP_SPILL, SC_PIN_PROG, SC_PIN_PROG_TC, SC_PIN_CLOCK,
	SC_PIN_OBSERVER,
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
	unlink_observers(dir);
	sc_dup_remove(dir);	/* it shares fs_config: it goes with it */
	remove_named(dir, SC_PIN_ATTACHED_FMT, true);
	sc_netns_unrecord(dir);
	pin_path(path, sizeof(path), dir, SC_PIN_CREATED);
	if (!rmdir(path))
		rmdir(dir);
}

/* The instance is this namespace's: 0, else the error printed, exit code. */
static int check_netns(const char *dir)
{
	char msg[PATH_MAX * 3];
	int err = sc_netns_check(dir);

	if (!err)
		return 0;
	pr_err("%s", sc_state_strerror(err, dir, msg, sizeof(msg)));
	return FS_EXIT_RUNTIME;
}

/* Write the config and (re)pin the programs of a loaded skeleton. */
static int commit_instance(struct splitter *skel, const char *dir,
			   const struct split_config *cfg)
{
	__u32 key = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.fs_config), &key, cfg,
				BPF_ANY)) {
		pr_err("cannot write the config map: %s", strerror(errno));
		return -1;
	}
	/* a hook's splitter is pinned when this attach loaded it
	 * (attach_load()): the other hook's pin, if any, stays the last one
	 * loaded for that hook */
	if ((bpf_program__autoload(skel->progs.fs_splitter) &&
	     repin_prog(bpf_program__fd(skel->progs.fs_splitter), dir, SC_PIN_PROG)) ||
	    (bpf_program__autoload(skel->progs.fs_splitter_tc) &&
	     repin_prog(bpf_program__fd(skel->progs.fs_splitter_tc), dir, SC_PIN_PROG_TC)) ||
	    repin_prog(bpf_program__fd(skel->progs.fs_clock), dir, SC_PIN_CLOCK) ||
	    repin_prog(bpf_program__fd(skel->progs.fs_observer), dir,
		       SC_PIN_OBSERVER))
		return -1;
	return 0;
}

/* One attach (or upgrade) in progress. */
struct attach_ctx {
	const struct sc_attach_args *a;
	const char *ifname, *dir;
	int ifindex;
	bool upgrade;		/* our link is on the interface already */
	__u8 cur_mode;		/* XDP_ATTACHED_* found on the interface */
	enum sc_hook hook;	/* XDP or TC, once attach_hook() chose */
	bool hook_auto;		/* chosen by sc_hook_auto(), reason in why */
	char why[256];
	struct splitter *skel;
	/* per map: 1 reused from its pin, 0 created by this load */
	int r4, r6, rc, rs, rr4, rr6, rsp;
	struct split_config cfg;	/* to be written */
	int link_fd;
	int obs_fd;		/* a new observer link, pinned last */
	struct sc_attach_result *res;	/* filled on success */
};

/*
 * The hook for this attach: an upgrade keeps the interface's hook (asking
 * for another one is refused); --mode implies XDP; auto asks hook.c.
 */
static int attach_hook(struct attach_ctx *c, const char *link_pin)
{
	struct bpf_link_info info = { 0 };
	__u32 ilen = sizeof(info);
	enum sc_hook want = c->a->hook;
	int fd;

	if (want == SC_HOOK_AUTO &&
	    sc_attach_given(c->a, SC_ATTACH_MODE))
		want = SC_HOOK_XDP;
	if (c->upgrade) {
		fd = bpf_obj_get(link_pin);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
			pr_err("cannot inspect link '%s': %s", link_pin, strerror(errno));
			if (fd >= 0)
				close(fd);
			return FS_EXIT_RUNTIME;
		}
		close(fd);
		c->hook = sc_hook_of_link_type(info.type);
		if (want != SC_HOOK_AUTO && want != c->hook) {
			pr_err("interface '%s' runs the splitter at hook %s: an upgrade keeps the "
			       "hook; detach first to change it",
			       c->ifname, sc_hook_name(c->hook));
			return FS_EXIT_USAGE;
		}
		return 0;
	}
	if (want == SC_HOOK_AUTO) {
		want = sc_hook_auto(c->ifname, c->why, sizeof(c->why));
		c->hook_auto = true;
	}
	c->hook = want;
	return 0;
}

/* Is our link on the interface (upgrade), a stale one, or someone else's
 * program? Which hook? Changes nothing but a defunct link pin. */
static int attach_inspect(struct attach_ctx *c)
{
	int ret;

	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char path[PATH_MAX], what[256];

	link_path(path, sizeof(path), c->dir, c->ifindex);
	c->upgrade = access(path, F_OK) == 0;
	if (c->upgrade && sc_link_ifindex(path) != c->ifindex) {
		/* a link left by a removed interface whose ifindex is now
		 * reused: it attaches nothing, drop it and attach afresh */
		pr_debug("%s: removing defunct link pin '%s'", c->ifname, path);
		if (unlink(path)) {
			pr_err("cannot remove defunct link '%s': %s", path, strerror(errno));
			return FS_EXIT_RUNTIME;
		}
		c->upgrade = false;
	}
	ret = attach_hook(c, path);
	if (ret)
		return ret;
	if (bpf_xdp_query(c->ifindex, 0, &q)) {
		pr_err("interface '%s': cannot query XDP: %s", c->ifname, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	c->cur_mode = q.attach_mode;
	if (c->hook == SC_HOOK_XDP && !c->upgrade && q.prog_id) {
		describe_xdp(c->ifindex, q.prog_id, what, sizeof(what));
		pr_err("interface '%s' already runs XDP program %s in %s mode, not attached by "
		       "this instance ('%s'): detach it first",
		       c->ifname, what, fs_xdp_mode_name(q.attach_mode), c->dir);
		return FS_EXIT_RUNTIME;
	}
	if (c->upgrade && c->hook == SC_HOOK_XDP && c->a->mode != SC_MODE_AUTO &&
	    strcmp(fs_xdp_mode_name(q.attach_mode),
		   c->a->mode == SC_MODE_NATIVE ? "native" : "generic")) {
		pr_err("interface '%s' runs the splitter in %s mode: an upgrade keeps the mode; "
		       "detach first to change it",
		       c->ifname, fs_xdp_mode_name(q.attach_mode));
		return FS_EXIT_USAGE;
	}
	return 0;
}

/*
 * Open the skeleton, reuse the pinned maps (layout checked), load. Only the
 * splitter of the hook in use is loaded (the verifier's work on the other
 * one would be wasted: each link runs its own program), but both when auto
 * chose native XDP, which falls back to TC (attach_link_xdp()).
 */
static int attach_load(struct attach_ctx *c)
{
	__u32 flows = c->a->flows;

	c->skel = splitter__open();
	if (!c->skel) {
		pr_err("cannot open the splitter program: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (c->hook == SC_HOOK_TC)
		bpf_program__set_autoload(c->skel->progs.fs_splitter, false);
	else if (!c->hook_auto)
		bpf_program__set_autoload(c->skel->progs.fs_splitter_tc, false);
	/* stop at the first refusal: one error line */
	if ((c->r4 = reuse_map(c->skel->maps.fs_flows4, c->dir, 1, flows)) < 0 ||
	    (c->r6 = reuse_map(c->skel->maps.fs_flows6, c->dir, 1, flows)) < 0 ||
	    (c->rc = reuse_map(c->skel->maps.fs_config, c->dir, 0, 0)) < 0 ||
	    (c->rs = reuse_map(c->skel->maps.fs_stats, c->dir, 0, 0)) < 0 ||
	    (c->rr4 = reuse_map(c->skel->maps.fs_rules4, c->dir, 0, 0)) < 0 ||
	    (c->rr6 = reuse_map(c->skel->maps.fs_rules6, c->dir, 0, 0)) < 0 ||
	    (c->rsp = reuse_map(c->skel->maps.fs_spill, c->dir, 0, 0)) < 0)
		return FS_EXIT_RUNTIME;
	if (!c->r4)
		bpf_map__set_max_entries(c->skel->maps.fs_flows4, flows ? flows : FS_DEFAULT_FLOWS);
	if (!c->r6)
		bpf_map__set_max_entries(c->skel->maps.fs_flows6, flows ? flows : FS_DEFAULT_FLOWS);
	if (splitter__load(c->skel)) {
		pr_err("cannot load the splitter program: %s (run with -v -v for the verifier log)",
		       strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	return 0;
}

/*
 * A TCX link refused (the observer at TC egress, or the splitter at TC
 * ingress). Kernels before 6.6 have no TCX and say EINVAL: then the one
 * line names the requirement, which holds on every hook (the observer is
 * always attached, with reshort off too).
 */
static void tcx_failed(const char *ifname, const char *what, int err)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	if ((err == EINVAL || err == EOPNOTSUPP) && major &&
	    (major < 6 || (major == 6 && minor < 6)))
		pr_err("interface '%s': cannot attach %s: kernel %s has no TCX links: splitctl "
		       "needs kernel 6.6 or later (the observer at TC egress goes with the "
		       "splitter on every hook, with reshort off too)",
		       ifname, what, u.release);
	else
		pr_err("interface '%s': cannot attach %s (TCX link, kernel 6.6 or later): %s",
		       ifname, what, strerror(err));
}

/* The splitter of another instance on the interface, at either hook. */
static int attach_other_instance(struct attach_ctx *c)
{
	__u32 own = sc_flows_map_id(bpf_map__fd(c->skel->maps.fs_flows4));
	char err[PATH_MAX + 256];

	if (!sc_other_splitter(c->ifname, own, c->dir, err, sizeof(err)))
		return 0;
	pr_err("%s", err);
	return FS_EXIT_RUNTIME;
}

/* The config's rule counts from the (perhaps reused) rule tries: the
 * datapath looks a family's rules up only while its count is not 0. */
static int attach_rule_counts(struct attach_ctx *c)
{
	struct sc_rule_maps m = { {
		bpf_map__fd(c->skel->maps.fs_rules4),
		bpf_map__fd(c->skel->maps.fs_rules6) } };
	int err = sc_rules_count_into(&m, &c->cfg);

	if (err) {
		pr_err("cannot read the rule tables: %s", strerror(-err));
		return FS_EXIT_RUNTIME;
	}
	return 0;
}

/* The config to write: the live one (upgrade, second interface) or the
 * defaults, with the command's settings on top; checked before any change. */
static int attach_config(struct attach_ctx *c)
{
	char err[256];
	unsigned int hz;
	__u32 key = 0;

	hz = sc_kernel_hz(bpf_program__fd(c->skel->progs.fs_clock));
	if (!hz) {
		pr_err("cannot determine the kernel's HZ");
		return FS_EXIT_RUNTIME;
	}
	sc_config_defaults(&c->cfg, hz);
	if (c->rc) {
		if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.fs_config), &key, &c->cfg)) {
			pr_err("cannot read the config map: %s", strerror(errno));
			return FS_EXIT_RUNTIME;
		}
		if (!c->cfg.idle_jiffies)	/* created but never written (killed attach) */
			sc_config_defaults(&c->cfg, hz);
	}
	if (sc_settings_merge(&c->cfg, &c->a->settings, hz, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_USAGE;
	}
	return attach_rule_counts(c);
}

/* A new instance: pin the maps, write the config and pin the programs
 * before anything is attached, so the first packet sees a valid config. */
static int attach_pin_new(struct attach_ctx *c)
{
	struct splitter *k = c->skel;

	if ((!c->r4 && pin_map(k->maps.fs_flows4, c->dir)) ||
	    (!c->r6 && pin_map(k->maps.fs_flows6, c->dir)) ||
	    (!c->rc && pin_map(k->maps.fs_config, c->dir)) ||
	    (!c->rs && pin_map(k->maps.fs_stats, c->dir)) ||
	    (!c->rr4 && pin_map(k->maps.fs_rules4, c->dir)) ||
	    (!c->rr6 && pin_map(k->maps.fs_rules6, c->dir)) ||
	    (!c->rsp && pin_map(k->maps.fs_spill, c->dir)))
		return FS_EXIT_RUNTIME;
	if (!c->rc && commit_instance(k, c->dir, &c->cfg))
		return FS_EXIT_RUNTIME;
	return 0;
}

/* A new XDP link in the asked mode (auto: native, else generic); auto's
 * pick of native XDP falls back to TC, never to generic XDP. */
static int attach_link_xdp(struct attach_ctx *c)
{
	int prog_fd = bpf_program__fd(c->skel->progs.fs_splitter);
	enum sc_xdp_mode mode = c->a->mode;
	size_t l;

	c->link_fd = sc_hook_link_create(prog_fd, c->ifindex, SC_HOOK_XDP,
					 mode == SC_MODE_GENERIC ? XDP_FLAGS_SKB_MODE :
								   XDP_FLAGS_DRV_MODE);
	if (c->link_fd < 0 && c->hook_auto) {
		l = strlen(c->why);
		snprintf(c->why + l, sizeof(c->why) - l,
			 "; but native XDP failed (%s): TC counts GRO packets exactly",
			 strerror(-c->link_fd));
		c->hook = SC_HOOK_TC;
		prog_fd = bpf_program__fd(c->skel->progs.fs_splitter_tc);
		c->link_fd = sc_hook_link_create(prog_fd, c->ifindex, SC_HOOK_TC, 0);
	} else if (c->link_fd < 0 && mode == SC_MODE_AUTO) {
		pr_debug("native XDP failed on %s (%s), trying generic", c->ifname,
			 strerror(-c->link_fd));
		c->link_fd = sc_hook_link_create(prog_fd, c->ifindex, SC_HOOK_XDP,
						 XDP_FLAGS_SKB_MODE);
	}
	if (c->link_fd < 0) {
		pr_err("interface '%s': cannot attach %s: %s", c->ifname,
		       c->hook == SC_HOOK_TC ? "at TC ingress" :
		       mode == SC_MODE_AUTO ? "in native or generic mode" :
		       mode == SC_MODE_NATIVE ? "in native mode" : "in generic mode",
		       strerror(-c->link_fd));
		return FS_EXIT_RUNTIME;
	}
	return 0;
}

/*
 * The hook: swap the program of our link (upgrade, atomic), or create the
 * link at the chosen hook (TC: a TCX link; XDP: attach_link_xdp()) and pin
 * it.
 */
static int attach_link(struct attach_ctx *c)
{
	int prog_fd = bpf_program__fd(c->hook == SC_HOOK_TC ?
				      c->skel->progs.fs_splitter_tc :
				      c->skel->progs.fs_splitter);
	char path[PATH_MAX];
	int ret;

	link_path(path, sizeof(path), c->dir, c->ifindex);
	if (c->upgrade) {
		c->link_fd = bpf_obj_get(path);
		if (c->link_fd < 0 || bpf_link_update(c->link_fd, prog_fd, NULL)) {
			pr_err("interface '%s': cannot replace the program: %s", c->ifname,
			       strerror(errno));
			return FS_EXIT_RUNTIME;
		}
		return 0;
	}
	if (c->hook == SC_HOOK_TC) {
		c->link_fd = sc_hook_link_create(prog_fd, c->ifindex, SC_HOOK_TC, 0);
		if (c->link_fd < 0) {
			tcx_failed(c->ifname, "at TC ingress", -c->link_fd);
			return FS_EXIT_RUNTIME;
		}
	} else {
		ret = attach_link_xdp(c);
		if (ret)
			return ret;
	}
	return pin_fd(c->link_fd, path) ? FS_EXIT_RUNTIME : 0;	/* closing link_fd detaches */
}

/*
 * The observer on the interface (TCX egress): swap its program when our
 * link is there (upgrade, or a second attach), else create the link; a new
 * one stays unpinned (obs_fd) until the splitter's link is pinned, so a
 * failure in between leaves nothing attached.
 */
static int attach_observer(struct attach_ctx *c)
{
	int prog_fd = bpf_program__fd(c->skel->progs.fs_observer), fd;
	char path[PATH_MAX];

	observer_path(path, sizeof(path), c->dir, c->ifindex);
	fd = bpf_obj_get(path);
	if (fd >= 0 && sc_link_ifindex(path) == c->ifindex) {
		if (bpf_link_update(fd, prog_fd, NULL)) {
			pr_err("interface '%s': cannot replace the observer's program: %s",
			       c->ifname, strerror(errno));
			close(fd);
			return FS_EXIT_RUNTIME;
		}
		close(fd);
		return 0;
	}
	if (fd >= 0) {		/* defunct: its interface was removed */
		close(fd);
		unlink(path);
	}
	c->obs_fd = sc_hook_observer_create(prog_fd, c->ifindex);
	if (c->obs_fd < 0) {
		tcx_failed(c->ifname, "the observer at TC egress", -c->obs_fd);
		return FS_EXIT_RUNTIME;
	}
	return 0;
}

/* Pin a new observer link after the splitter's; if that fails, a new
 * splitter link goes too (never half an attach). */
static int attach_observer_pin(struct attach_ctx *c)
{
	char path[PATH_MAX];

	if (c->obs_fd < 0)
		return 0;
	observer_path(path, sizeof(path), c->dir, c->ifindex);
	if (!pin_fd(c->obs_fd, path))
		return 0;
	if (!c->upgrade) {
		link_path(path, sizeof(path), c->dir, c->ifindex);
		unlink(path);
	}
	return FS_EXIT_RUNTIME;
}

typedef int (*attach_step)(struct attach_ctx *c);

/* Before any change: what is there, the program loaded, the config. */
static const attach_step attach_prepare[] = {
	attach_inspect, attach_load, attach_other_instance, attach_config,
};
/* The changes: the pins, the observer, the link (see attach_locked()). */
static const attach_step attach_change[] = {
	attach_pin_new, attach_observer, attach_link, attach_observer_pin,
};

/* The steps in order up to the first that fails: its result, or 0. */
static int attach_steps(struct attach_ctx *c, const attach_step *step, size_t n)
{
	int ret = 0;
	size_t i;

	for (i = 0; !ret && i < n; i++)
		ret = step[i](c);
	return ret;
}

/* Under the instance lock: every step, in the order that keeps a kill -9
 * harmless (see the top of this file). */
static int attach_locked(struct attach_ctx *c)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char path[PATH_MAX];
	int ret;

	ret = check_netns(c->dir);
	if (!ret)
		ret = attach_steps(c, attach_prepare,
				   sizeof(attach_prepare) / sizeof(attach_prepare[0]));
	if (ret)
		return ret;
	/* an existing instance: nothing changes before the attach or upgrade
	 * has succeeded; then the config and the program pins */
	ret = attach_steps(c, attach_change, sizeof(attach_change) / sizeof(attach_change[0]));
	if (ret) {
		/* first attach of the instance failed: leave nothing behind */
		if (!c->upgrade && count_links(c->dir) == 0)
			remove_pins(c->dir);
		return ret;
	}
	if (c->rc && commit_instance(c->skel, c->dir, &c->cfg))
		return FS_EXIT_RUNTIME;
	/* remembered, so that a link pin removed behind our back is noticed
	 * (best effort: without it only that check is lost) */
	marker_path(path, sizeof(path), c->dir, c->ifindex);
	if (mkdir(path, 0700) && errno != EEXIST)
		pr_debug("cannot create '%s': %s", path, strerror(errno));
	/* after the link: a kill -9 before leaves no record, which the next
	 * attach writes (an instance without one is taken as this namespace's) */
	ret = sc_netns_record(c->dir);
	if (ret) {
		pr_err("cannot record the network namespace in '%s': %s", c->dir, strerror(-ret));
		return FS_EXIT_RUNTIME;
	}
	if (c->hook_auto) {
		print_string(PRINT_FP, NULL, "%s: ", c->ifname);
		print_string(PRINT_FP, NULL, "hook %s", sc_hook_name(c->hook));
		print_string(PRINT_FP, NULL, " (auto: %s)\n", c->why);
	}
	c->res->ifindex = c->ifindex;
	c->res->hook = c->hook;
	c->res->upgrade = c->upgrade;
	c->res->hook_auto = c->hook_auto;
	snprintf(c->res->why, sizeof(c->res->why), "%s", c->why);
	c->res->mode = "?";
	if (c->hook == SC_HOOK_TC)
		c->res->mode = "tcx";
	else if (bpf_xdp_query(c->ifindex, 0, &q) == 0)
		c->res->mode = fs_xdp_mode_name(q.attach_mode);
	pr_debug("%s: splitter %s at hook %s, %s mode", c->ifname,
		 c->upgrade ? "upgraded" : "attached", sc_hook_name(c->hook), c->res->mode);
	return 0;
}

int sc_attach(const struct sc_opts *o, const char *ifname,
	      const struct sc_attach_args *a)
{
	return sc_attach_report(o, ifname, a, NULL);
}

int sc_attach_report(const struct sc_opts *o, const char *ifname,
		     const struct sc_attach_args *a, struct sc_attach_result *res)
{
	struct sc_attach_result ignored;
	struct attach_ctx c = { .a = a, .ifname = ifname, .dir = sc_pin_dir(o),
				.link_fd = -1, .obs_fd = -1,
				.res = res ? res : &ignored };
	char msg[PATH_MAX + 256], mounted[PATH_MAX] = "";
	int lock_fd = -1, ret, err;

	if (a->hook == SC_HOOK_TC &&
	    sc_attach_given(a, SC_ATTACH_MODE))
		return sc_print_usage_error(
			"attach",
			"--mode is an XDP attach mode: it cannot be combined with --hook tc");
	err = sc_check_privileges();
	if (!err) {
		ret = check_iface(ifname, &c.ifindex);
		if (ret)
			return ret;
		err = sc_prepare_dir(c.dir);
	}
	if (err == -ENODEV || err == -EMEDIUMTYPE) {
		err = sc_mount_bpffs(c.dir, mounted, sizeof(mounted));
		if (!err)
			err = sc_prepare_dir(c.dir);
	}
	if (!err)
		err = lock_fd = sc_lock_dir_create(c.dir);
	if (err < 0) {
		pr_err("%s", sc_state_strerror(err, c.dir, msg, sizeof(msg)));
		ret = err == -ENAMETOOLONG ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
		goto out;
	}
	ret = attach_locked(&c);
	/* a refused first attach leaves no empty directory behind (one the
	 * operator made stays: remove_pins() keeps it) */
	if (ret && !count_links(c.dir) && !count_pins(c.dir))
		remove_pins(c.dir);
	if (c.link_fd >= 0)
		close(c.link_fd);
	if (c.obs_fd >= 0)
		close(c.obs_fd);	/* unpinned: detached */
	splitter__destroy(c.skel);
	close(lock_fd);
out:
	/* a failed first attach left nothing in the bpffs it mounted */
	if (ret && mounted[0])
		umount(mounted);
	else if (mounted[0])
		pr_info("mounted a bpffs at %s for pin directory %s", mounted, c.dir);
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
	enum sc_hook hook = SC_HOOK_XDP;

	if (fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			/* same offset for a TCX link (state.c) */
			ifindex = info.xdp.ifindex;
			prog_id = info.prog_id;
			hook = sc_hook_of_link_type(info.type);
		}
		close(fd);
	}
	if (unlink(path)) {
		pr_err("cannot remove '%s': %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; ifindex && i < SC_DETACH_WAIT_MS; i++) {
		if (!sc_hook_prog_attached(ifindex, hook, prog_id))
			return 0;
		usleep(1000);
	}
	if (ifindex)
		pr_debug("ifindex %d: program %u still attached %d ms after its link was removed",
			   ifindex, prog_id, SC_DETACH_WAIT_MS);
	return 0;
}

/* Remove every link pin of the instance, also those whose interface
 * vanished (they keep their old ifindex name). */
static void unlink_all_links(const char *dir)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	char path[PATH_MAX];
	int n, i;

	n = sc_ifaces_list(dir, ifs, SC_MAX_IFACES);
	for (i = 0; i < n; i++) {
		link_path(path, sizeof(path), dir, ifs[i].ifindex);
		unlink_link(path);
	}
	unlink_observers(dir);
	remove_named(dir, SC_PIN_LINK_FMT, false);
}

bool sc_instance_present(const char *dir)
{
	return count_links(dir) || count_pins(dir);
}

/* The pins of interfaces that were removed (defunct links: they attach
 * nothing), for detach --gone; res lists them as "?". */
static void forget_removed(const char *dir, struct sc_detach_result *res)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	char path[PATH_MAX];
	int i, n;

	n = sc_ifaces_list(dir, ifs, SC_MAX_IFACES);
	for (i = 0; i < n; i++) {
		if (!sc_iface_removed(&ifs[i]))
			continue;
		link_path(path, sizeof(path), dir, ifs[i].ifindex);
		unlink_link(path);
		unlink_observer(dir, ifs[i].ifindex);
		marker_path(path, sizeof(path), dir, ifs[i].ifindex);
		rmdir(path);
		snprintf(res->names[res->n++], IF_NAMESIZE, "%s", ifs[i].name);
	}
}

/* Under the instance lock: one interface (ifname), the removed ones
 * (gone), or all. */
static int detach_locked(const char *dir, const char *ifname, int ifindex, bool gone,
			 struct sc_detach_result *res)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	char path[PATH_MAX], marker[PATH_MAX];
	int i, n;

	if (!ifname && !count_links(dir) && !count_pins(dir)) {
		/* an empty directory (the operator's, or a first attach
		 * killed before it pinned anything) */
		pr_err("nothing attached: no flowsplit pins in '%s'", dir);
		remove_pins(dir);
		return FS_EXIT_RUNTIME;
	}
	if (ifname) {
		link_path(path, sizeof(path), dir, ifindex);
		marker_path(marker, sizeof(marker), dir, ifindex);
		if (access(path, F_OK)) {
			/* its link pin was removed behind our back: detach
			 * forgets it */
			if (!rmdir(marker)) {
				unlink_observer(dir, ifindex);
				pr_info("%s: its link pin was already gone: forgotten", ifname);
				snprintf(res->names[res->n++], IF_NAMESIZE, "%s", ifname);
				goto done;
			}
			pr_err("the splitter is not attached to '%s' (instance '%s')", ifname, dir);
			return FS_EXIT_RUNTIME;
		}
		/* the link is released with its last reference: the pin */
		if (unlink_link(path))
			return FS_EXIT_RUNTIME;
		unlink_observer(dir, ifindex);
		rmdir(marker);
		snprintf(res->names[res->n++], IF_NAMESIZE, "%s", ifname);
	} else if (gone) {
		forget_removed(dir, res);
	} else {
		n = sc_ifaces_list(dir, ifs, SC_MAX_IFACES);
		for (i = 0; i < n; i++)
			snprintf(res->names[res->n++], IF_NAMESIZE, "%s", ifs[i].name);
		unlink_all_links(dir);
		remove_named(dir, SC_PIN_ATTACHED_FMT, true);
	}
done:
	if (count_links(dir) == 0) {
		remove_pins(dir);
		res->pins_removed = true;
	}
	return FS_EXIT_OK;
}

int sc_detach(const struct sc_opts *o, const char *ifname)
{
	return sc_detach_report(o, ifname, NULL);
}

static int detach_run(const struct sc_opts *o, const char *ifname, bool gone,
		      struct sc_detach_result *res)
{
	static struct sc_detach_result ignored;
	const char *dir = sc_pin_dir(o);
	char msg[PATH_MAX + 256];
	int lock_fd = -1, ifindex = 0, ret, err;

	err = sc_check_privileges();
	if (!err)
		err = sc_prepare_dir(dir);
	if (!err && ifname) {
		ifindex = if_nametoindex(ifname);
		if (!ifindex) {
			pr_err("interface '%s' does not exist", ifname);
			return FS_EXIT_RUNTIME;
		}
	}
	if (!err && access(dir, F_OK)) {
		pr_err("nothing attached: pin directory '%s' does not exist", dir);
		return FS_EXIT_RUNTIME;
	}
	if (!err)
		err = lock_fd = sc_lock_dir(dir);
	if (err < 0) {
		pr_err("%s", sc_state_strerror(err, dir, msg, sizeof(msg)));
		return err == -ENAMETOOLONG ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
	}
	if (!res)
		res = &ignored;
	memset(res, 0, sizeof(*res));
	ret = check_netns(dir);
	if (!ret)
		ret = detach_locked(dir, ifname, ifindex, gone, res);
	close(lock_fd);
	return ret;
}

int sc_detach_report(const struct sc_opts *o, const char *ifname,
		     struct sc_detach_result *res)
{
	return detach_run(o, ifname, false, res);
}

int sc_detach_removed(const struct sc_opts *o, struct sc_detach_result *res)
{
	return detach_run(o, NULL, true, res);
}
