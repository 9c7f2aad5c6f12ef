/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ha.h - the router's role in an HA pair, as keepalived's notify script
 * reports it with "splitctl ha set" (ha.c, docs/ha.md), and what status,
 * doctor and the metrics say of it. Without a report (no HA) there is no
 * role and nothing of it is shown.
 */
#ifndef SPLITCTL_HA_H
#define SPLITCTL_HA_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

enum sc_ha_role {
	SC_HA_ACTIVE,  /* keepalived MASTER: holds the addresses, runs the agent */
	SC_HA_BACKUP,  /* BACKUP: the standby, no agent */
	SC_HA_FAULT,   /* FAULT: cannot take over (a tracked interface or script) */
	SC_HA_STOPPED, /* STOP: keepalived stopped its instance */
	SC_HA_UNKNOWN, /* the report is unreadable, or its keepalived is gone */
	SC_HA_ROLES,
};

/* The report of this network namespace (TCFG_STATE_DIR/ha-<netns inode>). */
struct sc_ha {
	enum sc_ha_role role;
	enum sc_ha_role previous; /* SC_HA_UNKNOWN before the first change */
	__u64 since_ns;		  /* CLOCK_REALTIME of the last change */
	__u64 changes;		  /* role changes reported */
	char vrrp[64];		  /* keepalived's instance name ("" if none) */
	int pid;		  /* the reporting keepalived process, 0: none */
	char why[160];		  /* SC_HA_UNKNOWN: why */
};

/* "active", "backup", ... */
const char *sc_ha_role_name(enum sc_ha_role r);
/* This namespace's report: 0, -ENOENT when there is none (no HA), or
 * another -errno (then h->role is SC_HA_UNKNOWN and h->why says why). A
 * report whose keepalived process (--pid) is gone reads as
 * SC_HA_UNKNOWN. */
int sc_ha_read(struct sc_ha *h);
/* Whether this router's state fits its role, given the agent's PID (0:
 * none runs): the active router runs the agent, a standby does not, and
 * fault, stopped and unknown are never healthy. The reason into why, the
 * fix into fix (both "" when healthy). */
bool sc_ha_healthy(const struct sc_ha *h, int agent_pid, char *why, size_t whylen,
		   const char **fix);
/* status: the "ha" object and line (nothing without HA). */
void sc_ha_print(int agent_pid);
/* The metrics: flowsplit_ha_role and its companions (nothing without HA). */
void sc_ha_metrics_write(FILE *f);

#endif /* SPLITCTL_HA_H */
