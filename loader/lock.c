// SPDX-License-Identifier: GPL-2.0
/*
 * lock.c - the instance lock: flock() on the pin directory, which
 * serialises every state change of an instance (xdp-tools'
 * prog_lock_acquire()); the kernel releases it at exit, also on kill -9.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "splitctl.h"

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
