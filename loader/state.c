// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - the pinned state of one instance: where it is, whether we may
 * touch it, its maps (config, counters) opened and read, and the one
 * message per error of all the state functions. The pin directory's
 * bpffs is bpffs.c's, its network namespace netns.c's, its lock lock.c's,
 * the datapath clock clock.c's, the attached interfaces ifaces.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "splitctl.h"

/* The one spelling of a pin directory: no trailing '/', no "//" (the
 * agent's lock file names it, and status/doctor compare by name). A path
 * too long to copy stays as given: opening it says so. */
static const char *pin_dir_normal(const char *dir)
{
	static char buf[PATH_MAX];
	size_t i, n = 0;

	if (strlen(dir) >= sizeof(buf))
		return dir;
	for (i = 0; dir[i]; i++)
		if (dir[i] != '/' || !n || buf[n - 1] != '/')
			buf[n++] = dir[i];
	while (n > 1 && buf[n - 1] == '/')
		n--;
	buf[n] = '\0';
	return buf;
}

const char *sc_pin_dir(const struct sc_opts *o)
{
	const char *env = getenv(FS_PIN_DIR_ENV);

	if (o->pin_dir)
		return pin_dir_normal(o->pin_dir);
	if (env && *env)
		return pin_dir_normal(env);
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

/* What follows "no bpffs at T (for pin directory D)": why, and what to do. */
static const char *no_bpffs_advice(int err)
{
	switch (err) {
	case -ENOMEDIUM:
		return " in this mount namespace (as under 'ip netns exec'): one mounted here "
		       "would vanish with this command, and the datapath with it: mount one in "
		       "the host's, e.g. 'mkdir -p /run/flowsplit/bpf && mount -t bpf bpf "
		       "/run/flowsplit/bpf', and use --pin-dir /run/flowsplit/bpf/NAME";
	case -ENOTEMPTY:
		return ", and it is not empty: a bpffs there would hide its files: mount one on an "
		       "empty directory ('mkdir D && mount -t bpf bpf D') and use --pin-dir D/NAME";
	default:
		return ": 'splitctl attach' mounts one there when it is an empty directory";
	}
}

const char *sc_state_strerror(int err, const char *dir, char *buf, size_t len)
{
	char parent[PATH_MAX], target[PATH_MAX];

	sc_parent_dir(dir, parent, sizeof(parent));
	switch (err) {
	case -EPERM:
		snprintf(buf, len,
			 "permission denied: run as root (needs CAP_BPF or CAP_SYS_ADMIN, and "
			 "CAP_NET_ADMIN)");
		break;
	case -EACCES: {
		struct stat sb = { 0 };

		stat(dir, &sb);
		snprintf(buf, len,
			 "pin directory '%s' is owned by uid %u with mode %04o: another user could "
			 "remove its pins, and with them the splitter: use a directory owned by "
			 "root and writable only by it ('chown root %s && chmod 0700 %s') or "
			 "another --pin-dir",
			 dir, sb.st_uid, sb.st_mode & 07777, dir, dir);
		break;
	}
	case -ENAMETOOLONG:
		snprintf(buf, len, "pin directory '%s': path too long", dir);
		break;
	case -EMEDIUMTYPE:
	case -ENODEV:
	case -ENOMEDIUM:
	case -ENOTEMPTY:
		sc_bpffs_target(dir, target, sizeof(target));
		snprintf(buf, len, "no bpffs at '%s' (for pin directory '%s')%s", target, dir,
			 no_bpffs_advice(err));
		break;
	case -ENOENT:
		snprintf(buf, len,
			 "pin directory '%s': its parent '%s' does not exist (on a bpffs, e.g. "
			 "under /sys/fs/bpf)",
			 dir, parent);
		break;
	case -ESRCH:
		snprintf(buf, len,
			 "nothing attached: pin directory '%s' does not exist (see 'splitctl "
			 "attach')",
			 dir);
		break;
	case -ESTALE:
		snprintf(
			buf, len,
			"nothing attached: pin directory '%s' was removed (by a concurrent detach)",
			dir);
		break;
	case -ENODATA:
		snprintf(buf, len,
			 "nothing attached: no flowsplit maps pinned in '%s' (see 'splitctl "
			 "attach')",
			 dir);
		break;
	case -EOPNOTSUPP:
		snprintf(buf, len,
			 "the instance in '%s' has no %s map (attached by a splitctl without "
			 "spill): attach its interfaces again",
			 dir, FS_MAP_SPILL);
		break;
	case -EAGAIN:
		snprintf(buf, len, "pin directory '%s' keeps disappearing (concurrent detach?)",
			 dir);
		break;
	case -EXDEV:
		sc_netns_strerror(dir, buf, len);
		break;
	default:
		snprintf(buf, len, "pin directory '%s': %s", dir, strerror(-err));
		break;
	}
	return buf;
}

static int open_pin(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

/* fs_spill, or -1 when it is absent or of another layout (an older
 * splitter's: its entries would be read short, the rest of the struct
 * left as it was; attach refuses to replace it and names it). */
static int open_spill_pin(const char *dir)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = open_pin(dir, FS_MAP_SPILL);

	if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &info, &len) ||
			info.value_size != sizeof(struct fs_spill))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void sc_state_close(struct sc_state *st)
{
	int *fds[] = { &st->flows4_fd, &st->flows6_fd, &st->config_fd,
		       &st->stats_fd, &st->spill_fd, &st->clock_prog_fd, &st->lock_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* Everything sc_state_open() and sc_spill_open() check before opening a
 * pin: privileges, the directory, its namespace, and the lock if asked. */
static int state_begin(const struct sc_opts *o, struct sc_state *st, int lock)
{
	const char *dir = sc_pin_dir(o);
	int err;

	memset(st, 0, sizeof(*st));
	st->lock_fd = st->flows4_fd = st->flows6_fd = st->config_fd = -1;
	st->stats_fd = st->spill_fd = st->clock_prog_fd = -1;
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
	return 0;
}

int sc_state_open(const struct sc_opts *o, struct sc_state *st, int lock)
{
	int err = state_begin(o, st, lock);

	if (err)
		return err;
	st->flows4_fd = open_pin(st->dir, FS_MAP_FLOWS4);
	st->flows6_fd = open_pin(st->dir, FS_MAP_FLOWS6);
	st->config_fd = open_pin(st->dir, FS_MAP_CONFIG);
	st->stats_fd = open_pin(st->dir, FS_MAP_STATS);
	st->spill_fd = open_spill_pin(st->dir);	/* optional */
	st->clock_prog_fd = open_pin(st->dir, SC_PIN_CLOCK);
	if (st->flows4_fd < 0 || st->flows6_fd < 0 || st->config_fd < 0 ||
	    st->stats_fd < 0 || st->clock_prog_fd < 0) {
		sc_state_close(st);
		return -ENODATA;
	}
	return 0;
}

int sc_spill_open(const struct sc_opts *o, struct sc_state *st)
{
	int err = state_begin(o, st, 0);

	if (err)
		return err;
	st->config_fd = open_pin(st->dir, FS_MAP_CONFIG);
	st->stats_fd = open_pin(st->dir, FS_MAP_STATS);
	st->spill_fd = open_spill_pin(st->dir);
	st->clock_prog_fd = open_pin(st->dir, SC_PIN_CLOCK);
	err = st->config_fd < 0 || st->stats_fd < 0 || st->clock_prog_fd < 0 ? -ENODATA :
	      st->spill_fd < 0 ? -EOPNOTSUPP : 0;
	if (err)
		sc_state_close(st);
	return err;
}

int sc_state_open_cmd(const struct sc_opts *o, struct sc_state *st, int lock)
{
	char msg[PATH_MAX + 256];
	int err = sc_state_open(o, st, lock);

	if (!err)
		return FS_EXIT_OK;
	pr_err("%s", sc_state_strerror(err, sc_pin_dir(o), msg, sizeof(msg)));
	return err == -ENAMETOOLONG ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
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

int sc_spill_read(const struct sc_state *st, struct fs_spill *agent, struct fs_spill *dp)
{
	__u32 key = FS_SPILL_KEY_AGENT;

	if (st->spill_fd < 0)
		return -EOPNOTSUPP;
	if (bpf_map_lookup_elem(st->spill_fd, &key, agent))
		return -errno;
	key = FS_SPILL_KEY_DATAPATH;
	return bpf_map_lookup_elem(st->spill_fd, &key, dp) ? -errno : 0;
}

int sc_spill_write(const struct sc_state *st, __u16 gen, __u64 grants)
{
	/* the agent's entry written whole (pad zero), never the datapath's */
	struct fs_spill a = { .gen = gen, .grants = grants };
	__u32 key = FS_SPILL_KEY_AGENT;
	unsigned int hz;
	__u64 now;
	int err;

	if (st->spill_fd < 0)
		return -EOPNOTSUPP;
	/* a generation holds for one lease from now (flowsplit.h); gen 0
	 * needs none */
	if (gen) {
		err = sc_clock_now(st, &now, &hz);
		if (err)
			return err;
		a.lease_jiffies = now + fs_ms_to_jiffies(FS_SPILL_LEASE_MS, hz);
	}
	return bpf_map_update_elem(st->spill_fd, &key, &a, BPF_ANY) ? -errno : 0;
}

int sc_spill_lease_ms(const struct sc_state *st, const struct fs_spill *agent, __s64 *left_ms)
{
	unsigned int hz;
	__u64 now;
	int err;

	*left_ms = 0;
	if (!agent->gen)
		return 0;
	err = sc_clock_now(st, &now, &hz);
	if (err)
		return err;
	*left_ms = agent->lease_jiffies >= now ?
		   (__s64)((agent->lease_jiffies - now) * 1000 / hz) :
		   -(__s64)((now - agent->lease_jiffies) * 1000 / hz);
	return 0;
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
