// SPDX-License-Identifier: GPL-2.0
/*
 * hash_policy.c - ECMP mode needs the L4 multipath hash
 * (fib_multipath_hash_policy = 1, IPv4 and IPv6) so that each TCP flow
 * stays on one path. The values it replaces are recorded in
 * TCFG_STATE_DIR/route-hash-<netns inode>, "V4 V6\n", so that "down" and a
 * switch back to split put them back. /run is shared by the namespaces of
 * "ip netns", hence one file per network namespace, named by the nsfs
 * inode of /proc/self/ns/net. This record is the only state of tunnel-cfg
 * outside the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tcfg.h"
#include "util.h"

#define TCFG_HASH_L4 1

static const char *const hash_sysctl[2] = {
	"/proc/sys/net/ipv4/fib_multipath_hash_policy",
	"/proc/sys/net/ipv6/fib_multipath_hash_policy",
};

static int record_path(char *buf, size_t len, struct tcfg_err *e)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return tcfg_fail(e, errno, "/proc/self/ns/net: %s", strerror(errno));
	snprintf(buf, len, "%s/route-hash-%lu", TCFG_STATE_DIR, (unsigned long)st.st_ino);
	return 0;
}

static int read_sysctl(const char *path, int *value, struct tcfg_err *e)
{
	FILE *f;
	int ok, err;

	errno = 0;
	f = fopen(path, "r");
	ok = f && fscanf(f, "%d", value) == 1;
	err = errno;

	if (f)
		fclose(f);
	if (!ok)
		return tcfg_fail(e, err ? err : EINVAL, "cannot read %s: %s", path,
				 err ? strerror(err) : "not a number");
	return 0;
}

static int write_sysctl(const char *path, int value, struct tcfg_err *e)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%d", value) < 0 || fclose(f))
		return tcfg_fail(e, errno, "cannot set %s: %s", path, strerror(errno));
	return 0;
}

/* Record the current values (written whole or not at all). */
static int record_write(const char *path, struct tcfg_err *e)
{
	struct out_file of;
	int old[2], ret;

	ret = read_sysctl(hash_sysctl[0], &old[0], e);
	if (!ret)
		ret = read_sysctl(hash_sysctl[1], &old[1], e);
	if (ret)
		return ret;
	if (mkdir(TCFG_STATE_DIR, 0755) && errno != EEXIST)
		return tcfg_fail(e, errno, "cannot create %s: %s", TCFG_STATE_DIR, strerror(errno));
	ret = out_file_open(&of, path, 0644);
	if (ret)
		return tcfg_fail(e, -ret, "cannot write %s: %s", path, strerror(-ret));
	fprintf(of.f, "%d %d\n", old[0], old[1]);
	ret = out_file_commit(&of);
	if (ret)
		return tcfg_fail(e, -ret, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}

int tcfg_hash_policy_set(bool fresh, struct tcfg_err *e)
{
	char path[128];
	int i, ret;

	ret = record_path(path, sizeof(path), e);
	if (ret)
		return ret;
	/* an earlier "up --mode ecmp" recorded the values before its own */
	if (fresh || access(path, F_OK)) {
		ret = record_write(path, e);
		if (ret)
			return ret;
	}
	for (i = 0; i < 2 && !ret; i++)
		ret = write_sysctl(hash_sysctl[i], TCFG_HASH_L4, e);
	return ret;
}

/* A value someone else changed since (no longer 1) is theirs: left as it is. */
int tcfg_hash_policy_restore(struct tcfg_err *e)
{
	char path[128];
	int old[2], cur, i, n, ret;
	FILE *f;

	ret = record_path(path, sizeof(path), e);
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT
			       ? 0
			       : tcfg_fail(e, errno, "cannot read %s: %s", path, strerror(errno));
	n = fscanf(f, "%d %d", &old[0], &old[1]);
	fclose(f);
	if (n != 2) {
		unlink(path);
		return tcfg_fail(e, EINVAL,
				 "%s: unreadable record, fib_multipath_hash_policy left as it is",
				 path);
	}
	for (i = 0; i < 2; i++) {
		if (read_sysctl(hash_sysctl[i], &cur, e))
			ret = -EIO;
		else if (cur == TCFG_HASH_L4 && write_sysctl(hash_sysctl[i], old[i], e))
			ret = -EIO;
	}
	if (!ret)
		unlink(path);
	return ret;
}
