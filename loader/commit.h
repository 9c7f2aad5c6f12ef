/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commit.h - the one path by which settings reach a live instance:
 * "attach", "set", "apply" and the agent's reload (apply) all take it.
 *
 *   sc_commit_begin()   remember the live settings (none: a new instance)
 *   sc_commit_check()   before any change: can the split-mode routes of
 *                       "route up" (which match the long code point)
 *                       follow the new dscp-long?
 *   ... the change: write the config, attach, apply a file ...
 *   sc_commit_follow()  the routes follow the live long code point; if
 *                       they cannot, the remembered settings go back
 *   sc_commit_rollback() the remembered settings back (a later step of
 *                       the caller failed)
 *
 * "locked": the caller's state, open under the instance lock (set); NULL:
 * these open it themselves. Errors are printed once, as one line, except
 * sc_commit_check()'s, which words its reason into err for the caller
 * (apply prefixes the file's name).
 */
#ifndef SPLITCTL_COMMIT_H
#define SPLITCTL_COMMIT_H

#include "splitctl.h"

struct sc_commit {
	const struct sc_opts *o;
	bool had;			/* an instance was live */
	struct split_config before;	/* its settings then */
};

void sc_commit_begin(struct sc_commit *c, const struct sc_opts *o,
		     const struct sc_state *locked);
/* c NULL: check whatever the live code point is (apply, check). 0, or an
 * exit code with "dscp-long N: the installed routes (route up) cannot
 * follow it: REASON" in err. */
int sc_commit_check(const struct sc_commit *c, int dscp_long, char *err, size_t len);
/* An exit code; on failure the settings were put back. */
int sc_commit_follow(struct sc_commit *c, const struct sc_state *locked);
void sc_commit_rollback(const struct sc_commit *c, const struct sc_state *locked);

#endif /* SPLITCTL_COMMIT_H */
