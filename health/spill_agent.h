/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spill_agent.h - spill in "splitctl run": the controller of spill.h driven
 * beside tunnel health (health_agent.h), as docs/design.md *Spill* says.
 *
 * While health probes the tunnels of "route up" (split mode) and spill is
 * on (its [spill] settings and the splitter's "set spill"), the agent
 *   - keeps the scavenger class on SHORT (tunnel-cfg, tcfg_scav_*),
 *   - sends ICMP timestamp requests through both tunnels every probe
 *     interval and feeds their one-way delays (else health's RTTs) to the
 *     controller,
 *   - ticks it every interval (10 ms while a grant is under way) with the
 *     SHORT and LONG devices' and the class's counters and the grants the
 *     datapath took, and applies what it returns: generation and grants
 *     into fs_spill (renewing its lease), the class's rate, the hold (a
 *     rate that lets no frame out for about a hold, after two full-size
 *     echoes spent the TBF's burst; no queued packet waits longer than
 *     SA_WAIT_MS whatever the rate, agent or not),
 *   - logs one line per change of state, generation, grant or back-off,
 *   - ends the generation at the first tick after a tunnel is not up or a
 *     failover plan is in force (and when spill is turned off), and removes
 *     the class when it stops.
 */
#ifndef HEALTH_SPILL_AGENT_H
#define HEALTH_SPILL_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>

#include "flowsplit.h"
#include "params.h"
#include "plan.h"
#include "roles.h"
#include "spill.h"

/* Defaults the controller does not own (docs/design.md, *Spill*). */
#define SPILL_DEF_LIMIT_BYTES 1000000u	/* the class's own queue */
#define SPILL_TOP_PCT 95		/* of a configured tunnel rate */
/* The longest a packet waits in the class, with or without an agent:
 * its queue is this long at its rate (tcfg_scav_limit()). */
#define SA_WAIT_MS FS_SPILL_LEASE_MS

/*
 * The [spill] keys of a config file and, by their cli_name, the options of
 * "run" (--spill, --spill-KEY): one table (lib/params.h).
 */
struct spill_settings {
	__u32 given;
	bool enabled;
	__u64 target_ns, long_target_ns;
	__u64 rate_init_bps, rate_min_bps;
	__u64 tunnel_rate_bps;		/* 0: not configured */
	__u64 grant_gap_ns, hold_margin_ns;
	__u32 frame_share_pct;
	__u32 limit_bytes;
};
extern const struct sc_option spill_settings_opts[];

void spill_settings_default(struct spill_settings *s);
/* Defaults, file (may be NULL), cli (may be NULL) on top, then the rules
 * across settings: 0, or -EINVAL with one line in err. */
int spill_settings_resolve(struct spill_settings *out, const struct spill_settings *file,
			   const struct spill_settings *cli, char *err, size_t errlen);
/* The controller's parameters of s with the probe interval. */
void spill_settings_params(const struct spill_settings *s, uint64_t interval_ns,
			   struct spill_params *p);

/* The splitter, through the caller's functions (the pin directory and
 * libbpf are splitctl's): open gives a handle h (closed by close), whether
 * "set spill" is on and its code point; write sets the agent's entry of
 * fs_spill (generation, grants) with a lease of FS_SPILL_LEASE_MS from now
 * (bpf/flowsplit.h: the datapath drops a generation whose lease ran out,
 * so the agent writes again before it does); read gives the agent's
 * generation in force (gen may be NULL) and the grants the datapath took.
 * Each 0 or -errno. */
struct spill_dp {
	void *h;			/* NULL: none open */
	bool on;
	int dscp;
};
struct spill_dp_ops {
	int (*open)(void *arg, struct spill_dp *dp);
	void (*close)(struct spill_dp *dp);
	int (*write)(const struct spill_dp *dp, uint16_t gen, uint64_t grants);
	int (*read)(const struct spill_dp *dp, uint16_t *gen, uint64_t *taken);
};

/* What the agent runs spill on: its one input besides the settings and
 * the splitter; reconcile() compares the wanted with the applied one. */
struct spill_input {
	bool tunnels;			/* health probes tunnels in split mode */
	char dev[HEALTH_TUNNELS][IF_NAMESIZE];
	char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN];
	uint64_t interval_ns;
};

/* What the metrics and the health file show. */
struct spill_view {
	bool active;			/* the agent runs spill on tunnels */
	char dev[HEALTH_TUNNELS][IF_NAMESIZE];
	enum spill_state state;
	uint16_t gen;
	uint64_t grants, taken;		/* this agent's; the datapath's */
	uint64_t rate_bps, cap_bps, short_bps, used_bps;
	uint64_t top_bps;		/* the HTB's top in force */
	bool qd_valid[HEALTH_TUNNELS];
	uint64_t qd_ns[HEALTH_TUNNELS];	/* queueing delay now */
	bool one_way;			/* from timestamps (else RTTs) */
	uint64_t backoffs, holds;
	uint64_t backoffs_foreign;	/* of backoffs: not SHORT's own queue */
	char why[160];			/* the last decision */
};

struct spill_agent {
	struct spill_settings s;
	const struct spill_dp_ops *dp_ops;
	void *dp_arg;
	struct spill_input want;	/* what health asks for now */
	/* while running on tunnels: what it was set up for */
	bool running;
	struct spill_settings run_s;	/* the settings it runs with */
	char dev[HEALTH_TUNNELS][IF_NAMESIZE];
	char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN];
	uint64_t interval_ns;
	int scav_dscp;			/* the class's filters' code point */
	bool one_way;			/* the controller gets timestamps */
	bool kind_said;			/* the kind was logged */
	uint64_t started_ns;		/* run_start()'s time */
	uint64_t taken_at_gen;		/* the datapath's taken when the
					 * generation in force was opened */
	uint64_t renew_ns;		/* write the lease again by then */
	struct spill ctl;
	struct spill_act act;
	struct tcfg_scav *scav;
	struct spill_dp dp;
	uint64_t next_dp_ns;		/* re-read the splitter */
	bool dp_fresh;			/* not yet opened since the start */
	bool dp_failing, scav_failing;
	uint64_t next_tick_ns, next_ts_ns, retry_ns;
	int ts_fd[HEALTH_TUNNELS], dummy_fd;
	uint16_t ts_seq[HEALTH_TUNNELS];
	uint16_t slot_seq[HEALTH_TUNNELS][64];
	uint64_t slot_rt_ns[HEALTH_TUNNELS][64], slot_mono_ns[HEALTH_TUNNELS][64];
	uint64_t slot_tx_bytes[HEALTH_TUNNELS][64];	/* the device's, at the send */
	uint64_t ts_last_ns[HEALTH_TUNNELS];	/* the last timestamp answer */
	uint64_t rtt_samples[HEALTH_TUNNELS];	/* health's, fed so far */
	uint16_t gen_written;
	uint64_t grants_written;
	bool held;
	uint64_t applied_rate_bps;
	uint64_t applied_top_bps;	/* the HTB's top as applied */
	uint64_t holds;
	bool publish;			/* a change worth publishing now */
	struct roles_spill ours;	/* the class's traffic fills SHORT */
	pthread_mutex_t lock;
	struct spill_view view;		/* for the HTTP thread */
};

void spill_agent_init(struct spill_agent *sa, const struct spill_settings *s,
		      const struct spill_dp_ops *ops, void *dp_arg);
/*
 * The inputs. Each only records what is wanted and reconciles at once;
 * the tick reconciles again with the splitter's "set spill" and code point
 * (re-read every 2 s). One function, reconcile(), compares all of them
 * with what the class, its filters and fs_spill were set up for, and
 * stops (generation ended, class removed from every tunnel device named)
 * and starts again what differs; docs/design.md, *Spill fails safe*.
 */
/* New settings ("enabled" included). True when they differed. */
bool spill_agent_switch(struct spill_agent *sa, const struct spill_settings *next);
/* Health probes these tunnels now (split mode): spill may run on them. */
void spill_agent_start(struct spill_agent *sa, const char dev[HEALTH_TUNNELS][IF_NAMESIZE],
		       const char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN], uint64_t interval_ns);
/* No more tunnels: generation 0, the class removed, sockets closed. */
void spill_agent_stop(struct spill_agent *sa);
/* The sockets to poll (-1: none) and when to be called at the latest. */
int spill_agent_fds(const struct spill_agent *sa, int fds[HEALTH_TUNNELS]);
uint64_t spill_agent_next_ns(const struct spill_agent *sa);

/* What health knows, for a step: the tunnels' states and RTT samples. */
struct spill_health {
	bool up[HEALTH_TUNNELS];
	bool normal_plan;		/* the plan in force is both tunnels up */
	uint64_t rtt_samples[HEALTH_TUNNELS], rtt_last_ns[HEALTH_TUNNELS];
	/* the probes lost in each tunnel's loss window, and its length */
	uint32_t probes_lost[HEALTH_TUNNELS], probes_window[HEALTH_TUNNELS];
};
/* Read answers, probe, tick when due. True when the published state
 * changed (the caller publishes). */
bool spill_agent_step(struct spill_agent *sa, const struct spill_health *h, uint64_t now_ns);
void spill_agent_view(struct spill_agent *sa, struct spill_view *v);
/* Whether the class's own traffic fills SHORT now (roles_spill_busy()). */
bool spill_agent_fills_short(const struct spill_agent *sa, uint64_t now_ns);
void spill_agent_close(struct spill_agent *sa);

#endif /* HEALTH_SPILL_AGENT_H */
