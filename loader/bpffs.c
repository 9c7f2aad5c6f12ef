// SPDX-License-Identifier: GPL-2.0
/*
 * bpffs.c - the pin directory on a bpffs: is it one (and safe: owned by
 * root, writable by nobody else), and mounting one where there is none,
 * as bpftool does, but never where it would vanish with the command
 * (splitctl.h). Returns -errno, prints nothing.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "splitctl.h"

static int on_bpffs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == BPF_FS_MAGIC;
}

/* The directory that holds dir ("." for a relative name). */
void sc_parent_dir(const char *dir, char *parent, size_t len)
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
	sc_parent_dir(dir, parent, sizeof(parent));
	if (access(parent, F_OK))
		return -ENOENT;
	return on_bpffs(parent) ? 0 : -ENODEV;
}

/* ---- a bpffs where there is none ---------------------------------------- */
/* Where a bpffs would go for dir: dir itself when it exists, else its
 * parent. */
void sc_bpffs_target(const char *dir, char *target, size_t len)
{
	if (!access(dir, F_OK))
		snprintf(target, len, "%s", dir);
	else
		sc_parent_dir(dir, target, len);
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
	sc_bpffs_target(dir, target, len);
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
