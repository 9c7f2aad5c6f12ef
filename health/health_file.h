/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health_file.h - the tunnel health a running agent publishes
 * (TCFG_STATE_DIR/health-<netns inode>.json, health_file.c), read by
 * "route show", "status", "doctor" and "route up" (through the plan in
 * force it gives tunnel-cfg, struct tcfg_in_force).
 */
#ifndef HEALTH_HEALTH_FILE_H
#define HEALTH_HEALTH_FILE_H

#include <stdbool.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>

#include "health.h"
#include "plan.h"
#include "dup_agent.h"
#include "roles.h"
#include "spill_agent.h"

struct tcfg_err;

/* What a running agent published (health-<netns inode>.json). */
#define HEALTH_FAMILIES 2	/* IPv4, IPv6 */
/* One address family probed through a tunnel: its own state machine. */
struct health_file_family {
	int family;		/* AF_INET, AF_INET6 */
	char target[INET6_ADDRSTRLEN];
	enum health_state state;
	__u64 rtt_last_ns, probes, missed;
	double loss;
};
struct health_file_tunnel {
	char dev[IF_NAMESIZE];
	enum health_state state;
	__u64 since_mono_ns;	/* CLOCK_MONOTONIC of the last change */
	__u64 rtt_last_ns, rtt_ewma_ns;
	__u64 timeout_ns;	/* of a probe sent now (adaptive) */
	double loss;		/* 0..1 over the loss window */
	__u64 flaps, probes, missed;
	bool link_down;		/* the last down came from a link event */
	/* the families probed (state: down when one is down, up when all
	 * are up); nfam -1: the publisher did not say (not judged) */
	int nfam;
	struct health_file_family fam[HEALTH_FAMILIES];
};
struct health_file {
	int pid;				/* the agent */
	__u64 updated_mono_ns;
	enum health_mode mode;
	enum health_both_down both_down;
	struct health_file_tunnel t[HEALTH_TUNNELS];
	struct health_plan plan;		/* of the current states */
	/* the states whose plan is in force (a WAIT or KEEP plan leaves the
	 * last ROUTE/MAIN plan in force) */
	enum health_state in_force_state[HEALTH_TUNNELS];
	struct health_plan in_force;
	struct spill_view spill;		/* spill (active false: none) */
	struct dup_view dup;			/* the copy (running false: none) */
	bool swapped;				/* roles in force (roles.h) */
	struct roles_view roles;		/* active false: none */
};
/* Publish (whole or not at all) / withdraw the agent's file. */
int health_file_write(const struct health_file *hf, struct tcfg_err *e);
int health_file_remove(void);
/* The plan the running agent has in force, for tunnel-cfg (f->pid 0 when
 * no agent publishes one). */
void health_file_in_force(struct tcfg_in_force *f);
/* The running agent's copy view (dup_agent.h): 0, or -ENOENT when no
 * agent publishes (v zeroed). */
int health_file_dup(struct dup_view *v);
/* The "health" object of route show and status (json_print). */
void health_file_show(const struct health_file *hf, bool monitored);
/* The same for the published file, read now ("not monitored" without an
 * agent). */
void health_show(void);

#endif /* HEALTH_HEALTH_FILE_H */
