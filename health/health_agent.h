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
#include <netinet/in.h>
#include <linux/types.h>

#include "dup_agent.h"
#include "failover.h"
#include "linkmon.h"
#include "params.h"
#include "probe.h"
#include "quality.h"
#include "roles.h"
#include "spill_agent.h"

/* The agent's tunnel health, as the metrics show it. */
struct health_metrics {
	bool probing;			/* false: no tunnel series */
	char dev[2][IF_NAMESIZE];	/* [0] SHORT, [1] LONG */
	bool up[2];
	double rtt_s[2];		/* EWMA; 0 before the first answer */
	double timeout_s[2];		/* the probe timeout now (adaptive) */
	double loss[2];			/* over the loss window */
	bool failed_over[2];		/* class SHORT, LONG: not on its own
					 * tunnel(s) in the plan in force */
	__u64 failovers;		/* route changes after a tunnel went down */
	/* path quality (quality.h) and the roles (roles.h) */
	double base_rtt_s[2], queue_s[2], jitter_s[2], expected_s[2];
	double short_loss[2];		/* over QUALITY_LOSS_WINDOW probes */
	bool roles_auto, swapped;
	__u64 role_moves[ROLES_CAUSES];
};

/*
 * The agent's tunnel health settings: the [health] keys of a config file
 * and, by their cli_name, options of "run" (--health, --health-KEY,
 * --both-down, --target-short, --target-long): one table, each value
 * checked once (lib/params.h); health_settings_check() adds the rules
 * across them.
 */
struct health_settings {
	__u32 given;
	bool enabled;				/* probe and steer */
	struct health_params params;
	int both_down;				/* enum health_both_down */
	struct sc_prefix target[HEALTH_TUNNELS];	/* family 0: the recorded
							 * gateway */
	struct roles_params roles;		/* roles, roles-*: roles.h */
};
extern const struct sc_option health_settings_opts[];

/* The defaults: enabled, health_params_default(), both-down keep. */
void health_settings_default(struct health_settings *s);
/* The rules across settings: 0, or -EINVAL with one line in err naming
 * the setting (its option when cli gave it, else its key) and what is
 * accepted. */
int health_settings_check(const struct health_settings *s, const struct health_settings *cli,
			  char *err, size_t errlen);
/* The defaults, a config file's [health] (file, may be NULL) and the
 * command line (cli, may be NULL) on top, then checked. */
int health_settings_resolve(struct health_settings *out, const struct health_settings *file,
			    const struct health_settings *cli, char *err, size_t errlen);

struct health_agent {
	struct health_settings s;
	struct health_failover *fo;	/* NULL: no route record (yet) */
	struct health_failover_info info;
	struct health_prober *pr;
	struct health_linkmon *mon;
	uint64_t next_open_ns;		/* no record: when to look again */
	uint64_t next_publish_ns;
	bool open_failing;		/* an open error was logged */
	uint64_t failovers;		/* route changes after a tunnel went down */
	char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN];	/* the probes' targets */
	/* the prober's tunnels: [HEALTH_SHORT] and [HEALTH_LONG] probed at
	 * target[] (IPv4 when recorded), then, for each tunnel whose routes
	 * carry the other family through a gateway of it, that family: the
	 * tunnel's state is down when one of its families is, up when all
	 * are (tunnel_state()) */
	unsigned int nprobes;
	struct health_agent_probe {
		int tunnel;			/* HEALTH_SHORT, HEALTH_LONG */
		int family;			/* AF_INET, AF_INET6 */
		char target[INET6_ADDRSTRLEN];
	} probe[2 * HEALTH_TUNNELS];
	enum health_state logged[HEALTH_TUNNELS];	/* the tunnels' states
							 * as last logged */
	/* what the metrics show: written by the loop, read by the HTTP
	 * thread */
	pthread_mutex_t lock;
	struct health_metrics metrics;
	struct spill_agent spill;	/* spill on the probed tunnels */
	struct dup_agent dup;		/* the short class's copy: off until
					 * dup_agent_configure() names the
					 * instance */
	/* path quality and roles (roles.h), by configured role; the probe
	 * outcomes already fed to them; each device's transmit counter
	 * (busy: our own traffic fills it) */
	struct quality q[HEALTH_TUNNELS];
	struct roles roles;
	uint64_t fed_answered[HEALTH_TUNNELS], fed_missed[HEALTH_TUNNELS];
	uint64_t tx_bytes[HEALTH_TUNNELS], tx_at_ns[HEALTH_TUNNELS];
	uint64_t busy_until_ns[HEALTH_TUNNELS];
};
/* A copy of the metrics (any thread). */
void health_agent_metrics(struct health_agent *ha, struct health_metrics *m);

/* Steer when a route record exists, with settings s (resolved); spill
 * with sp, the splitter through dp_ops with dp_arg (spill_agent.h). */
void health_agent_init(struct health_agent *ha, const struct health_settings *s,
		       const struct spill_settings *sp, const struct spill_dp_ops *dp_ops,
		       void *dp_arg);
/* Switch ha to next's settings; when they differ, probing restarts with
 * them (the routes in force stay). True when they differed. Spill's
 * settings: spill_agent_switch(&ha->spill, ...). */
bool health_agent_switch(struct health_agent *ha, const struct health_settings *next);
/*
 * Probe, apply and publish until deadline_ns (CLOCK_MONOTONIC) or a signal:
 * never blocks past deadline_ns. Errors are logged, never fatal.
 */
void health_agent_run_until(struct health_agent *ha, uint64_t deadline_ns);
/* Withdraw the published health; the routes in force stay. */
void health_agent_close(struct health_agent *ha);

#endif /* HEALTH_HEALTH_AGENT_H */
