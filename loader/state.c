// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - the pinned state of one instance: pin directory, lock, maps,
 * config, counters and the datapath clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <zlib.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "splitctl.h"
#include "util.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71	/* kernel 5.14; Debian 12's headers predate it */
#endif

const char *sc_pin_dir(const struct sc_opts *o)
{
	const char *env = getenv(FS_PIN_DIR_ENV);

	if (o->pin_dir)
		return o->pin_dir;
	if (env && *env)
		return env;
	return FS_PIN_DIR_DEFAULT;
}

int sc_check_privileges(void)
{
	unsigned long long eff = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	/* effective capability set, as the kernel reports it */
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	if ((eff & (1ULL << CAP_BPF) || eff & (1ULL << CAP_SYS_ADMIN)) &&
	    eff & (1ULL << CAP_NET_ADMIN))
		return 0;
	return -EPERM;
}

static int on_bpffs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == BPF_FS_MAGIC;
}

/* The directory that holds dir ("." for a relative name). */
static void parent_of(const char *dir, char *parent, size_t len)
{
	char *slash;

	snprintf(parent, len, "%s", dir);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(parent, len, ".");
}

int sc_prepare_dir(const char *dir)
{
	char parent[PATH_MAX];
	struct stat st;

	if (strlen(dir) >= sizeof(parent) - 32)
		return -ENAMETOOLONG;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode) || !on_bpffs(dir))
			return -EMEDIUMTYPE;
		/* whoever may write the directory may unlink the links in it,
		 * and with them the splitter */
		if ((st.st_uid && st.st_uid != geteuid()) ||
		    (st.st_mode & (S_IWGRP | S_IWOTH)))
			return -EACCES;
		return 0;
	}
	parent_of(dir, parent, sizeof(parent));
	if (access(parent, F_OK))
		return -ENOENT;
	return on_bpffs(parent) ? 0 : -ENODEV;
}

/* ---- a bpffs where there is none ---------------------------------------- */
/* Where a bpffs would go for dir: dir itself when it exists, else its
 * parent. */
static void mount_target(const char *dir, char *target, size_t len)
{
	if (!access(dir, F_OK))
		snprintf(target, len, "%s", dir);
	else
		parent_of(dir, target, len);
}

/* The mount namespace of /proc/PID differs from ours (false when unknown:
 * /proc/1/ns/mnt is not readable in every container). */
static bool mnt_ns_differs(const char *proc_pid)
{
	char path[64];
	struct stat self, other;

	snprintf(path, sizeof(path), "%s/ns/mnt", proc_pid);
	return !stat("/proc/self/ns/mnt", &self) && !stat(path, &other) &&
	       (self.st_ino != other.st_ino || self.st_dev != other.st_dev);
}

/* "ip netns exec NAME" mounts a sysfs named NAME on /sys. */
static bool sys_from_ip_netns(void)
{
	char line[1024], src[256], mnt[256], path[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 || strcmp(mnt, "/sys") ||
		    !sep || sscanf(sep, " - sysfs %255s", src) != 1)
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", src);
		found = strcmp(src, "sysfs") && !access(path, F_OK);
	}
	if (f)
		fclose(f);
	return found;
}

/* A private mount namespace, as "ip netns exec" makes: it dies with the
 * command (or its shell), and a bpffs mounted there with it. */
static bool private_mount_ns(void)
{
	char parent[32];

	snprintf(parent, sizeof(parent), "/proc/%d", (int)getppid());
	return mnt_ns_differs("/proc/1") || mnt_ns_differs(parent) || sys_from_ip_netns();
}

static bool dir_empty(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	bool empty = d != NULL;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

int sc_bpffs_mountable(const char *dir, char *target, size_t len)
{
	mount_target(dir, target, len);
	if (private_mount_ns())
		return -ENOMEDIUM;
	/* never hide what is there (e.g. -P /tmp/x: not over /tmp) */
	return dir_empty(target) ? 0 : -ENOTEMPTY;
}

int sc_mount_bpffs(const char *dir, char *mounted, size_t len)
{
	char target[PATH_MAX];
	int err = sc_bpffs_mountable(dir, target, sizeof(target));

	if (err)
		return err;
	if (mount("bpf", target, "bpf", 0, "mode=0700"))
		return -errno;
	snprintf(mounted, len, "%s", target);
	return 0;
}

/* ---- the network namespace of an instance ------------------------------- */
int sc_netns_self(struct sc_netns *ns)
{
	socklen_t len = sizeof(ns->cookie);
	struct stat st;
	int fd;

	memset(ns, 0, sizeof(*ns));
	if (stat("/proc/self/ns/net", &st))
		return -errno;
	ns->ino = st.st_ino;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* no cookie (kernel < 5.14): the inode alone identifies it */
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &ns->cookie, &len))
		ns->cookie = 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

int sc_netns_pinned(const char *dir, struct sc_netns *ns)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = -ENOENT;

	if (!d)
		return -errno;
	memset(ns, 0, sizeof(*ns));
	while ((de = readdir(d)))
		if (sscanf(de->d_name, SC_PIN_NETNS_FMT, &ns->ino, &ns->cookie) == 2) {
			ret = 0;
			break;
		}
	closedir(d);
	return ret;
}

int sc_netns_record(const char *dir)
{
	struct sc_netns self, pinned;
	char path[PATH_MAX];
	int err;

	err = sc_netns_pinned(dir, &pinned);
	if (err != -ENOENT)
		return err;
	err = sc_netns_self(&self);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/" SC_PIN_NETNS_FMT, dir, self.ino, self.cookie);
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

void sc_netns_unrecord(const char *dir)
{
	struct sc_netns ns;
	char path[PATH_MAX];

	while (!sc_netns_pinned(dir, &ns)) {
		snprintf(path, sizeof(path), "%s/" SC_PIN_NETNS_FMT, dir, ns.ino, ns.cookie);
		if (rmdir(path))
			break;
	}
}

static bool netns_same(const struct sc_netns *a, const struct sc_netns *b)
{
	if (a->cookie && b->cookie)
		return a->cookie == b->cookie;
	return a->ino == b->ino;
}

int sc_netns_check(const char *dir)
{
	struct sc_netns self, pinned;
	int err = sc_netns_pinned(dir, &pinned);

	if (err == -ENOENT)	/* pinned before namespaces were recorded */
		return 0;
	if (!err)
		err = sc_netns_self(&self);
	if (err)
		return err;
	return netns_same(&self, &pinned) ? 0 : -EXDEV;
}

/* "net:[INO]" and, when "ip netns" has a name for that inode, " ('NAME')" */
void sc_netns_describe(const struct sc_netns *ns, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	size_t off;
	DIR *d;

	off = snprintf(buf, len, "net:[%lu]", ns->ino);
	d = opendir("/run/netns");
	while (d && (de = readdir(d)) && off < len) {
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == ns->ino) {
			snprintf(buf + off, len - off, " ('%s')", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
}

/* The message of -EXDEV: both namespaces named. */
static void netns_strerror(const char *dir, char *buf, size_t len)
{
	struct sc_netns self, pinned;
	char a[160], b[160];

	if (sc_netns_pinned(dir, &pinned) || sc_netns_self(&self)) {
		snprintf(buf, len, "instance '%s' belongs to another network namespace: refusing to touch it",
			 dir);
		return;
	}
	sc_netns_describe(&pinned, a, sizeof(a));
	sc_netns_describe(&self, b, sizeof(b));
	snprintf(buf, len, "instance '%s' was attached in network namespace %s, this is %s: refusing to touch it (run splitctl in that namespace; if it is gone, remove the pins with 'rm -r %s')",
		 dir, a, b, dir);
}

const char *sc_state_strerror(int err, const char *dir, char *buf, size_t len)
{
	char parent[PATH_MAX], target[PATH_MAX];

	parent_of(dir, parent, sizeof(parent));
	switch (err) {
	case -EPERM:
		snprintf(buf, len, "permission denied: run as root (needs CAP_BPF or CAP_SYS_ADMIN, and CAP_NET_ADMIN)");
		break;
	case -EACCES: {
		struct stat sb = { 0 };

		stat(dir, &sb);
		snprintf(buf, len, "pin directory '%s' is owned by uid %u with mode %04o: another user could remove its pins, and with them the splitter: use a directory owned by root and writable only by it ('chown root %s && chmod 0700 %s') or another --pin-dir",
			 dir, sb.st_uid, sb.st_mode & 07777, dir, dir);
		break;
	}
	case -ENAMETOOLONG:
		snprintf(buf, len, "pin directory '%s': path too long", dir);
		break;
	case -EMEDIUMTYPE:
	case -ENODEV:
		mount_target(dir, target, sizeof(target));
		snprintf(buf, len, "no bpffs at '%s' (for pin directory '%s'): 'splitctl attach' mounts one there when it is an empty directory",
			 target, dir);
		break;
	case -ENOENT:
		snprintf(buf, len, "pin directory '%s': its parent '%s' does not exist (on a bpffs, e.g. under /sys/fs/bpf)",
			 dir, parent);
		break;
	case -ENOMEDIUM:
		mount_target(dir, target, sizeof(target));
		snprintf(buf, len, "no bpffs at '%s' (for pin directory '%s') in this mount namespace (as under 'ip netns exec'): one mounted here would vanish with this command, and the datapath with it: mount one in the host's, e.g. 'mkdir -p /run/flowsplit/bpf && mount -t bpf bpf /run/flowsplit/bpf', and use --pin-dir /run/flowsplit/bpf/NAME",
			 target, dir);
		break;
	case -ENOTEMPTY:
		mount_target(dir, target, sizeof(target));
		snprintf(buf, len, "no bpffs at '%s' (for pin directory '%s'), and it is not empty: a bpffs there would hide its files: mount one on an empty directory ('mkdir D && mount -t bpf bpf D') and use --pin-dir D/NAME",
			 target, dir);
		break;
	case -ESRCH:
		snprintf(buf, len, "nothing attached: pin directory '%s' does not exist (see 'splitctl attach')", dir);
		break;
	case -ESTALE:
		snprintf(buf, len, "nothing attached: pin directory '%s' was removed (by a concurrent detach)", dir);
		break;
	case -ENODATA:
		snprintf(buf, len, "nothing attached: no flowsplit maps pinned in '%s' (see 'splitctl attach')", dir);
		break;
	case -EAGAIN:
		snprintf(buf, len, "pin directory '%s' keeps disappearing (concurrent detach?)", dir);
		break;
	case -EXDEV:
		netns_strerror(dir, buf, len);
		break;
	default:
		snprintf(buf, len, "pin directory '%s': %s", dir, strerror(-err));
		break;
	}
	return buf;
}

/*
 * The directory fd still is the directory at dir: not removed (nlink 0) or
 * replaced by a concurrent "detach" while we waited for its lock.
 */
static int same_dir(int fd, const char *dir)
{
	struct stat a, b;

	return !fstat(fd, &a) && a.st_nlink > 0 && !stat(dir, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* fd, -ESTALE when the directory went away meanwhile, or -errno */
static int lock_once(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	/* Serialises every state change of this instance; released on exit,
	 * also on kill -9. */
	if (flock(fd, LOCK_EX)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!same_dir(fd, dir)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int sc_lock_dir(const char *dir)
{
	return lock_once(dir);
}

int sc_lock_dir_create(const char *dir)
{
	char marker[PATH_MAX];
	int fd, tries, created;

	/* a concurrent "detach --all" may remove the directory between our
	 * mkdir and our lock: then create it again */
	for (tries = 0; tries < 16; tries++) {
		created = mkdir(dir, 0700) == 0;
		if (!created && errno != EEXIST)
			return -errno;
		fd = lock_once(dir);
		if (fd == -ESTALE)
			continue;
		if (fd >= 0 && created) {
			/* remember that the directory is ours to remove */
			snprintf(marker, sizeof(marker), "%s/%s", dir,
				 SC_PIN_CREATED);
			if (mkdir(marker, 0700) && errno != EEXIST) {
				int err = -errno;

				close(fd);
				rmdir(dir);
				return err;
			}
		}
		return fd;
	}
	return -EAGAIN;
}

static int open_pin(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

void sc_state_close(struct sc_state *st)
{
	int *fds[] = { &st->flows4_fd, &st->flows6_fd, &st->config_fd,
		       &st->stats_fd, &st->clock_prog_fd, &st->lock_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int sc_state_open(const struct sc_opts *o, struct sc_state *st, int lock)
{
	const char *dir = sc_pin_dir(o);
	int err;

	memset(st, 0, sizeof(*st));
	st->lock_fd = st->flows4_fd = st->flows6_fd = st->config_fd = -1;
	st->stats_fd = st->clock_prog_fd = -1;
	snprintf(st->dir, sizeof(st->dir), "%s", dir);

	err = sc_check_privileges();
	if (err)
		return err;
	err = sc_prepare_dir(dir);
	if (err)
		return err;
	if (access(dir, F_OK))
		return -ESRCH;
	err = sc_netns_check(dir);
	if (err)
		return err;
	if (lock) {
		st->lock_fd = sc_lock_dir(dir);
		if (st->lock_fd < 0)
			return st->lock_fd;
	}
	st->flows4_fd = open_pin(dir, FS_MAP_FLOWS4);
	st->flows6_fd = open_pin(dir, FS_MAP_FLOWS6);
	st->config_fd = open_pin(dir, FS_MAP_CONFIG);
	st->stats_fd = open_pin(dir, FS_MAP_STATS);
	st->clock_prog_fd = open_pin(dir, SC_PIN_CLOCK);
	if (st->flows4_fd < 0 || st->flows6_fd < 0 || st->config_fd < 0 ||
	    st->stats_fd < 0 || st->clock_prog_fd < 0) {
		sc_state_close(st);
		return -ENODATA;
	}
	return 0;
}

int sc_config_read(const struct sc_state *st, struct split_config *cfg)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(st->config_fd, &key, cfg) ? -errno : 0;
}

int sc_config_write(const struct sc_state *st, const struct split_config *cfg)
{
	__u32 key = 0;

	/* One array element written whole: the datapath sees the old or the
	 * new config, per field never a torn value of its own width. */
	return bpf_map_update_elem(st->config_fd, &key, cfg, BPF_ANY) ? -errno : 0;
}

/* fs_stats: per-CPU struct fs_stats, one entry per writer (flowsplit.h). */
int sc_stats_read(const struct sc_state *st, __u64 out[FS_STAT_MAX])
{
	int ncpus = libbpf_num_possible_cpus();
	struct fs_stats *vals;
	__u32 key, i;
	int c, err;

	if (ncpus < 1)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	memset(out, 0, sizeof(__u64) * FS_STAT_MAX);
	for (key = 0; key < FS_STATS_KEYS; key++) {
		if (bpf_map_lookup_elem(st->stats_fd, &key, vals)) {
			err = -errno;
			free(vals);
			return err;
		}
		for (c = 0; c < ncpus; c++)
			for (i = 0; i < FS_STAT_MAX; i++)
				out[i] += vals[c].v[i];
	}
	free(vals);
	return 0;
}

int sc_stats_add(const struct sc_state *st, enum fs_stat id, __u64 n)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 key = FS_STATS_KEY_USER;
	struct fs_stats *vals;
	int err;

	if (ncpus < 1)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	/* user-space counters: CPU 0's slot of the entry the datapath never
	 * writes; the lock serialises user-space writers */
	err = bpf_map_lookup_elem(st->stats_fd, &key, vals);
	if (!err) {
		vals[0].v[id] += n;
		err = bpf_map_update_elem(st->stats_fd, &key, vals, BPF_ANY);
	}
	err = err ? -errno : 0;
	free(vals);
	return err;
}

static int read_jiffies(int prog_fd, __u64 *j)
{
	__u8 buf[64] = { 0 }, out[64];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = sizeof(buf), .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	if (opts.retval != XDP_PASS)
		return -EPROTO;
	memcpy(j, out, sizeof(*j));
	return 0;
}

static unsigned int config_hz(void)
{
	char line[256];
	unsigned int hz = 0;
	gzFile f = gzopen("/proc/config.gz", "r");

	if (!f)
		return 0;
	while (gzgets(f, line, sizeof(line)))
		if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1)
			break;
	gzclose(f);
	return hz;
}

unsigned int sc_kernel_hz(int clock_prog_fd)
{
	static const unsigned int known[] = { 100, 250, 300, 1000 };
	/* 100 ms: +-1 jiffy is +-10 Hz, well inside the 25 Hz between the
	 * closest choices (250, 300) */
	static unsigned int cached;
	unsigned int hz, best = 0;
	double rate, err, best_err = 1e18;
	__u64 j0, j1, t0, t1;
	size_t i;

	if (cached)
		return cached;
	hz = config_hz();
	if (hz)
		return cached = hz;
	/* measure jiffies against CLOCK_MONOTONIC and take the nearest HZ the
	 * kernel can be built with */
	t0 = mono_ns();
	if (read_jiffies(clock_prog_fd, &j0))
		return 0;
	sleep_until_ns(t0 + 100 * 1000 * 1000);
	t1 = mono_ns();
	if (read_jiffies(clock_prog_fd, &j1))
		return 0;
	rate = (j1 - j0) / ((t1 - t0) / 1e9);
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		err = rate > known[i] ? rate - known[i] : known[i] - rate;
		if (err < best_err) {
			best_err = err;
			best = known[i];
		}
	}
	return cached = best;
}

int sc_clock_now(const struct sc_state *st, __u64 *jiffies, unsigned int *hz)
{
	int err = read_jiffies(st->clock_prog_fd, jiffies);

	if (err)
		return err;
	if (hz) {
		*hz = sc_kernel_hz(st->clock_prog_fd);
		if (!*hz)
			return -EPROTO;
	}
	return 0;
}

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
				out[n].mode = "gone";
		}
		close(fd);
		if (!strcmp(out[n].mode, "gone") ||
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

__u64 sc_map_memlock(int fd)
{
	unsigned long long v = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}
