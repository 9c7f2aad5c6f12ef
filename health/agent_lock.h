/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent_lock.h - one agent ("splitctl run") per network namespace: the lock
 * file it holds for its life (agent_lock.c). Nothing here prints.
 */
#ifndef HEALTH_AGENT_LOCK_H
#define HEALTH_AGENT_LOCK_H

#include <stddef.h>

/*
 * TCFG_STATE_DIR/agent-<netns inode> ("PID PIN_DIR"), flock()ed for the
 * agent's life (the kernel releases it when the process dies). take: the
 * fd to keep, or -EBUSY (holder: the running agent's PID) or another
 * -errno, the reason in err. release: removes the file, then the lock.
 * holder: the holder's PID, 0 when nobody holds it. remove_stale: removes
 * every agent file nobody holds (an agent killed with -9; its namespace
 * may be gone) and its health file; the number removed.
 */
int agent_lock_take(const char *pin_dir, int *holder, char *err, size_t errlen);
void agent_lock_release(int fd);
int agent_lock_holder(void);
int agent_lock_remove_stale(void);

/* The PID of the agent running here for pin_dir (the directory it was
 * started with), else 0. */
int agent_lock_holder_of(const char *pin_dir);

#endif /* HEALTH_AGENT_LOCK_H */
