/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health_agent.h - tunnel health in "splitctl run": probes both tunnels of
 * the last "route up" and steers its routes (failover.h, in the call
 * order documented there and in docs/health.md).
 */
#ifndef HEALTH_HEALTH_AGENT_H
#define HEALTH_HEALTH_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <linux/types.h>

#include "failover.h"
#include "linkmon.h"
#include "probe.h"

/* The agent's tunnel health, as the metrics show it. */
struct health_metrics {
	bool probing;			/* false: no tunnel series */
	char dev[2][IF_NAMESIZE];	/* [0] SHORT, [1] LONG */
	bool up[2];
	double rtt_s[2];		/* EWMA; 0 before the first answer */
	double timeout_s[2];		/* the probe timeout now (adaptive) */
	double loss[2];			/* over the loss window */
	__u64 failovers;		/* route changes after a tunnel went down */
};

struct health_agent {
	struct health_params params;
	enum health_both_down both_down;
	bool disabled;			/* --health no */
	char target[HEALTH_TUNNELS][46];	/* "": the recorded gateway */
	struct health_failover *fo;	/* NULL: no route record (yet) */
	struct health_failover_info info;
	struct health_prober *pr;
	struct health_linkmon *mon;
	uint64_t next_open_ns;		/* no record: when to look again */
	uint64_t next_publish_ns;
	bool open_failing;		/* an open error was logged */
	uint64_t failovers;		/* route changes after a tunnel went down */
	/* what the metrics show: written by the loop, read by the HTTP
	 * thread */
	pthread_mutex_t lock;
	struct health_metrics metrics;
};
/* A copy of the metrics (any thread). */
void health_agent_metrics(struct health_agent *ha, struct health_metrics *m);

/* Defaults: steer when a route record exists, both-down keep. */
void health_agent_init(struct health_agent *ha);
struct sc_pass_list;
/*
 * The run options (--health, --health-KEY for each health_params_set() key,
 * --both-down, --target-short, --target-long): all applied, or -EINVAL
 * with one line naming the bad value and what is accepted in err and ha
 * unchanged.
 */
int health_agent_configure(struct health_agent *ha, const struct sc_pass_list *opts,
			      char *err, size_t errlen);
/*
 * Settings only (params, both-down, enabled, targets) into next, zeroed
 * first: the defaults, a config file's [health] (file, may be NULL), then
 * the command line on top. 0 or -EINVAL with one line in err.
 */
int health_agent_settings(struct health_agent *next, const struct sc_pass_list *file,
			     const struct sc_pass_list *cli, char *err, size_t errlen);
/* Switch ha to next's settings; when they differ, probing restarts with
 * them (the routes in force stay). True when they differed. */
bool health_agent_switch(struct health_agent *ha, const struct health_agent *next);
/* The same checks on the defaults, for "check" and config files. */
int health_agent_check(const struct sc_pass_list *opts, char *err, size_t errlen);
/*
 * Probe, apply and publish until deadline_ns (CLOCK_MONOTONIC) or a signal:
 * never blocks past deadline_ns. Errors are logged, never fatal.
 */
void health_agent_run_until(struct health_agent *ha, uint64_t deadline_ns);
/* Withdraw the published health; the routes in force stay. */
void health_agent_close(struct health_agent *ha);

#endif /* HEALTH_HEALTH_AGENT_H */
