// SPDX-License-Identifier: GPL-2.0
/*
 * netns.c - the network namespace an instance was attached in, recorded
 * in its pin directory (ifindexes mean nothing in another namespace), and
 * the check every command that touches the instance makes (splitctl.h).
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "splitctl.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71	/* kernel 5.14; Debian 12's headers predate it */
#endif

/* This process's namespace: 0 or -errno. */
static int sc_netns_self(struct sc_netns *ns)
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
void sc_netns_strerror(const char *dir, char *buf, size_t len)
{
	struct sc_netns self, pinned;
	char a[160], b[160];

	if (sc_netns_pinned(dir, &pinned) || sc_netns_self(&self)) {
		snprintf(buf, len,
			 "instance '%s' belongs to another network namespace: refusing to touch it",
			 dir);
		return;
	}
	sc_netns_describe(&pinned, a, sizeof(a));
	sc_netns_describe(&self, b, sizeof(b));
	snprintf(buf, len,
		 "instance '%s' was attached in network namespace %s, this is %s: refusing to "
		 "touch it (run splitctl in that namespace; if it is gone, remove the pins with "
		 "'rm -r %s')",
		 dir, a, b, dir);
}
