// SPDX-License-Identifier: GPL-2.0
/*
 * agent_lock.c - one agent ("splitctl run") per network namespace
 * (agent_lock.h).
 *
 * TCFG_STATE_DIR/agent-<netns inode>: "PID PIN_DIR\n", flock()ed (LOCK_EX)
 * by the one agent of this namespace for its whole life. The kernel drops
 * the lock when the process dies, kill -9 included, so "is an agent
 * running" is "is the lock held", never "does a process with that PID
 * exist" (PIDs are reused). The holder unlinks the file at exit while it
 * still holds the lock; a taker checks that the file it locked is still
 * the one at the path (else it lost a race with an exiting agent). What
 * the agent publishes (health_file.c) counts only while it holds the lock,
 * and goes with a stale lock file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "agent_lock.h"
#include "tcfg.h"

static int agent_path(char *buf, size_t len, struct tcfg_err *e)
{
	return tcfg_state_path(buf, len, "agent", "", e);
}

/* The PID in an agent file (0 when unreadable). */
static int agent_file_pid(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int pid = 0;

	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%d", &pid) != 1)
			pid = 0;
	}
	return pid;
}

/* The file at path is still the one open as fd. */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/*
 * LOCK_EX within about 200 ms: a holder that is just starting (its PID
 * not written yet) or a sweep (remove_stale) holds it for microseconds, a
 * running agent for its life. 0 or the errno.
 */
static int lock_briefly(int fd)
{
	int i;

	for (i = 0; i < 20; i++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK)
			return errno;
		usleep(10000);
	}
	/* a running agent: its PID is written by now */
	return EWOULDBLOCK;
}

static int agent_lock(const char *pin_dir, int *holder, struct tcfg_err *e)
{
	char path[TCFG_STATE_PATH_MAX];
	int fd, ret, tries;

	*holder = 0;
	ret = agent_path(path, sizeof(path), e);
	if (ret)
		return ret;
	if (mkdir(TCFG_STATE_DIR, 0755) && errno != EEXIST)
		return tcfg_fail(e, errno, "cannot create %s: %s", TCFG_STATE_DIR, strerror(errno));
	for (tries = 0; tries < 10; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return tcfg_fail(e, errno, "cannot open %s: %s", path, strerror(errno));
		ret = lock_briefly(fd);
		if (ret) {
			*holder = agent_file_pid(fd);
			close(fd);
			if (ret == EWOULDBLOCK)
				return tcfg_fail(e, EBUSY,
						 "another agent (pid %d) runs in this network "
						 "namespace (lock %s): one agent at a time",
						 *holder, path);
			return tcfg_fail(e, ret, "cannot lock %s: %s", path, strerror(ret));
		}
		if (same_file(fd, path))
			break;
		close(fd);	/* unlinked by an agent that exited meanwhile */
		fd = -1;
	}
	if (fd < 0)
		return tcfg_fail(e, EAGAIN, "cannot lock %s: it keeps being replaced", path);
	if (ftruncate(fd, 0) || dprintf(fd, "%d %s\n", (int)getpid(), pin_dir) < 0) {
		ret = errno;
		close(fd);
		return tcfg_fail(e, ret, "cannot write %s: %s", path, strerror(ret));
	}
	return fd;
}

int agent_lock_take(const char *pin_dir, int *holder, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	int ret = agent_lock(pin_dir, holder, &e);

	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

void agent_lock_release(int fd)
{
	struct tcfg_err ignored;
	char path[TCFG_STATE_PATH_MAX];

	if (fd < 0)
		return;
	/* ours while we hold the lock: removed before the lock goes */
	if (!agent_path(path, sizeof(path), &ignored) && same_file(fd, path))
		unlink(path);
	close(fd);
}

/* The holder's PID, and the pin directory it runs for into dir
 * (PATH_MAX bytes) when not NULL; 0 when nobody holds the lock. */
/* The pin directory of an agent file's text "PID PIN_DIR\n" into dir:
 * false when there is none. */
static bool agent_file_dir(const char *buf, char *dir, size_t len)
{
	const char *p = strchr(buf, ' ');
	size_t n;

	if (!p || !p[1] || p[1] == '\n')
		return false;
	p++;
	n = strcspn(p, "\n");
	if (n >= len)
		return false;
	memcpy(dir, p, n);
	dir[n] = '\0';
	return true;
}

static int holder(char *dir)
{
	struct tcfg_err ignored;
	char path[TCFG_STATE_PATH_MAX], buf[PATH_MAX + 32];
	ssize_t n;
	int fd, pid = 0;

	if (agent_path(path, sizeof(path), &ignored))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* a lock we can take is nobody's */
	if (flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK) {
		pid = agent_file_pid(fd);
		n = dir ? pread(fd, buf, sizeof(buf) - 1, 0) : 0;
		buf[n > 0 ? n : 0] = '\0';
		/* "PID PIN_DIR\n": the directory is the rest of the line,
		 * spaces included */
		if (dir && !agent_file_dir(buf, dir, PATH_MAX))
			pid = 0;
	}
	close(fd);
	return pid;
}

int agent_lock_holder(void)
{
	return holder(NULL);
}

int agent_lock_holder_of(const char *pin_dir)
{
	char dir[PATH_MAX];
	int pid = holder(dir);

	return pid && !strcmp(dir, pin_dir) ? pid : 0;
}

/* Remove the agent file at path and the health file of the same
 * namespace when nobody holds the lock: 1 removed, 0 not. */
static int remove_if_stale(const char *path)
{
	char health[PATH_MAX];
	const char *ino = strrchr(path, '-');
	int fd, ret = 0;
	size_t i;
	glob_t g;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* nobody holds it: the agent that wrote it is gone (kill -9), and
	 * so is the health it published */
	if (!flock(fd, LOCK_EX | LOCK_NB) && same_file(fd, path)) {
		snprintf(health, sizeof(health), "%s/health%s.json", TCFG_STATE_DIR,
			 ino ? ino : "");
		unlink(health);
		/* and the temporary file of a write it was killed in */
		snprintf(health, sizeof(health), "%s/.health%s.json.*", TCFG_STATE_DIR,
			 ino ? ino : "");
		if (!glob(health, GLOB_NOSORT, NULL, &g)) {
			for (i = 0; i < g.gl_pathc; i++)
				unlink(g.gl_pathv[i]);
			globfree(&g);
		}
		ret = !unlink(path);
	}
	close(fd);
	return ret;
}

int agent_lock_remove_stale(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	/* every namespace's: a file whose lock is free is nobody's, also
	 * when its namespace is gone (its inode may be reused) */
	d = opendir(TCFG_STATE_DIR);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "agent-", 6)) {
			snprintf(path, sizeof(path), "%s/%s", TCFG_STATE_DIR, de->d_name);
			n += remove_if_stale(path);
		}
	closedir(d);
	return n;
}
