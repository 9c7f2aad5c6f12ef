/* SPDX-License-Identifier: GPL-2.0 */
/*
 * roles.h - which tunnel carries the short class, by measurement
 * (docs/health.md, *Roles*). "roles fixed" keeps the operator's choice;
 * "roles auto" gives the short class to the tunnel with the least expected
 * delay for a short request (quality.h) and the long class to the other:
 * a swap of the two tables' tunnels (roles_plan()).
 *
 * Pure, like health.h: no clock reads, no I/O. The caller feeds the two
 * tunnels' quality and states by configured role (index HEALTH_SHORT: the
 * tunnel "route up" made SHORT) after each probe outcome, and installs
 * roles_plan() of the failover plan when roles_step() says the roles moved.
 *
 * The rule, each step:
 *   seen(t)   = quality_judged_ns(t): its expected delay, or while t is
 *               busy with our own traffic, its base + the last not-busy
 *               extra. Busy is the long class's tunnel while our bulk
 *               fills it (that queue leaves with the bulk in a swap), and
 *               the configured SHORT while spill's class fills it
 *               (roles_spill_step(): that queue leaves when spill's
 *               generation ends, which a swap does first)
 *   swapped is wanted when the configured SHORT is worse by the margin:
 *               seen(SHORT) > seen(LONG) x (1 + margin %) + margin-abs,
 *   or, with SLA thresholds set, when SHORT breaks one and LONG none
 *   (never onto a LONG that breaks one while SHORT does not).
 *   The wish must hold for `sustain` without a break (a return to the
 *   configured roles for ROLES_RETURN_SUSTAIN_NS, or `sustain` when
 *   longer), then the roles move unless a hold-down from the last move
 *   runs; each move starts a hold-down of hold-min, doubled (up to
 *   hold-max) when the move undid the one before less than twice its
 *   hold-down after it (flapping).
 *   A tunnel not up (a failover) resets the roles to the configured ones
 *   at once. That reset is no move of the roles: it neither starts nor
 *   doubles a hold-down (health's own hold-down makes the tunnel that
 *   returns prove itself), and the move that takes the roles of the last
 *   move again once both are up (a retake) is held by no hold-down and
 *   doubles none: it keeps the last move's.
 *   A tunnel's misses that health failed it over on leave its loss window
 *   when it is up again (quality_down(), quality_up()): acted on already,
 *   they would otherwise swap the classes away from a returning SHORT.
 */
#ifndef HEALTH_ROLES_H
#define HEALTH_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health.h"
#include "quality.h"

enum roles_mode { ROLES_FIXED, ROLES_AUTO };

/* Defaults and ranges (docs/health.md says why). */
#define ROLES_DEF_MODE ROLES_AUTO
#define ROLES_DEF_MARGIN_PCT 20
#define ROLES_DEF_MARGIN_ABS_NS (15 * FS_NS_PER_MS)
#define ROLES_DEF_SUSTAIN_NS (200 * FS_NS_PER_MS)
/* A return to the configured roles (a recovery) must hold at least this
 * long: past the loss window and the queue filter, so a brownout that
 * pauses does not look recovered. */
#define ROLES_RETURN_SUSTAIN_NS (3 * FS_NS_PER_S)
#define ROLES_DEF_HOLD_MIN_NS (5 * FS_NS_PER_S)
#define ROLES_DEF_HOLD_MAX_NS (80 * FS_NS_PER_S)
#define ROLES_MAX_MARGIN_PCT 1000
#define ROLES_MAX_NS (3600 * FS_NS_PER_S)
/* Spill's class on SHORT is our traffic above this rate (as the long
 * class's tunnel is busy above it), and for the hangover after: its queue
 * drains, and the probes it made SHORT lose leave the loss window (20
 * outcomes, 2 s at the default interval); a foreign queue seen by spill
 * ends that view for ROLES_SPILL_FOREIGN_NS. */
#define ROLES_SPILL_BPS 1000000ull
#define ROLES_SPILL_HANGOVER_NS (3 * FS_NS_PER_S)
#define ROLES_SPILL_FOREIGN_NS (10 * FS_NS_PER_S)

struct roles_params {
	int mode;			/* enum roles_mode */
	uint32_t margin_pct;		/* relative margin over the other tunnel */
	uint64_t margin_abs_ns;		/* and absolute */
	uint64_t sustain_ns;		/* a wish must hold this long (a return:
					 * ROLES_RETURN_SUSTAIN_NS at least) */
	uint64_t hold_min_ns, hold_max_ns;
	/* SLA thresholds, 0 = off: expected delay, counted loss (percent),
	 * jitter */
	uint64_t sla_delay_ns;
	double sla_loss_pct;
	uint64_t sla_jitter_ns;
};
void roles_params_default(struct roles_params *p);
/* 0, or -EINVAL with *field the [health] key of the first bad value. */
int roles_params_check(const struct roles_params *p, const char **field);

/* Why the roles are what they are (and the cause of the last move). */
enum roles_cause {
	ROLES_CAUSE_NONE,	/* configured roles, nothing wanted */
	ROLES_CAUSE_BASE,	/* the other tunnel's path is shorter */
	ROLES_CAUSE_QUEUE,	/* queueing delay on the short class's tunnel */
	ROLES_CAUSE_LOSS,	/* loss on the short class's tunnel */
	ROLES_CAUSE_SLA,	/* an SLA threshold broken */
	ROLES_CAUSE_RECOVERED,	/* back to the configured roles */
	ROLES_CAUSE_FAILOVER,	/* a tunnel went down: configured roles */
	ROLES_CAUSES,
};
/* "none", "base", "queue", "loss", "sla", "recovered", "failover" */
const char *roles_cause_name(enum roles_cause c);

struct roles_input {
	enum health_state state[HEALTH_TUNNELS];	/* by configured role */
	/* roles_step() tells each the failovers (quality_down/up()) */
	struct quality *q[HEALTH_TUNNELS];
	bool busy[HEALTH_TUNNELS];	/* our traffic fills the tunnel */
	/* the short class's copy over LONG rescues what the configured SHORT
	 * loses (dup attached, copy not off): its loss moves nothing, since
	 * a swap would put the long class on the lossy path */
	bool loss_covered;
};

struct roles {
	struct roles_params params;
	bool swapped;			/* short class on the configured LONG */
	bool want;			/* the wish of the last step */
	uint64_t want_since_ns;		/* the wish held since */
	enum roles_cause want_cause;
	uint64_t last_move_ns;		/* 0: none yet (a failover's reset is none) */
	bool moved_to;			/* the roles it installed (swapped) */
	uint64_t hold_ns;		/* of the last move */
	uint64_t hold_until_ns;
	enum roles_cause cause;		/* of the roles now */
	uint64_t moves[ROLES_CAUSES];
	/* the last step's view (for status and the log) */
	uint64_t seen_ns[HEALTH_TUNNELS];
};

void roles_init(struct roles *r, const struct roles_params *p, uint64_t now_ns);
/* One step after probe outcomes; true when r->swapped changed. */
bool roles_step(struct roles *r, const struct roles_input *in, uint64_t now_ns);
/* The plan with the roles applied: the split plan of both tunnels up,
 * swapped (table SHORT via LONG, table LONG via SHORT); every other plan
 * (a failover, ECMP, wait/keep/main) unchanged. */
struct health_plan roles_plan(struct health_plan plan, bool swapped);
/* What status, route show and the metrics show (the agent fills it). */
struct roles_tunnel_view {
	uint64_t base_ns, queue_ns, jitter_ns, expected_ns, seen_ns;
	double loss;		/* raw, over QUALITY_LOSS_WINDOW probes */
	bool busy;		/* our traffic fills it (its queue not judged) */
	bool ready;
};
struct roles_view {
	bool active;		/* the agent steers the roles' tunnels */
	int mode;		/* enum roles_mode */
	bool swapped;
	enum roles_cause cause;
	uint64_t hold_left_ns;	/* of the hold-down now */
	uint64_t moves[ROLES_CAUSES];
	struct roles_tunnel_view t[HEALTH_TUNNELS];	/* by configured role */
	char why[160];
};
/* The view of r and its inputs at now_ns (why: roles_format()). */
void roles_view(const struct roles *r, const struct roles_input *in,
		const char *const dev[HEALTH_TUNNELS], uint64_t now_ns, struct roles_view *v);
/* "fixed", "auto" */
const char *roles_mode_name(int mode);

/* One line: "short class on DEV (swapped|configured): CAUSE, seen short
 * X ms, long Y ms" with devices dev[] by configured role. */
int roles_format(const struct roles *r, const char *const dev[HEALTH_TUNNELS], char *buf,
		 size_t len);

/*
 * Spill's own traffic on the configured SHORT (docs/health.md, *Spill's
 * queue on SHORT*). SHORT is busy with our traffic while spill's
 * generation is in force and its class sent more than ROLES_SPILL_BPS
 * over the last tick or holds a backlog, and for ROLES_SPILL_HANGOVER_NS
 * after. Spill tells a foreign queue apart itself: a back-off on a queue
 * the SHORT device did not fill (its foreign back-offs) ends the busy
 * view at once, and keeps it off for ROLES_SPILL_FOREIGN_NS: SHORT's
 * queue then counts, whoever else adds to it. Spill returning its flows
 * (SHORT losing more probes than LONG) is no such signal: our own
 * spilled bulk overflowing SHORT's FIFO makes that loss too.
 */
struct roles_spill_obs {
	bool gen;			/* a generation in force */
	uint64_t class_bps;		/* what the class sent, last tick */
	uint64_t backlog_bytes;		/* what it holds */
	uint64_t foreign_backoffs;	/* spill's count (reset: any smaller) */
};
struct roles_spill {
	uint64_t until_ns;		/* busy until */
	uint64_t foreign_until_ns;	/* not busy until */
	uint64_t foreign_seen;
};
void roles_spill_init(struct roles_spill *rs);
/* One spill tick's observation at now_ns. */
void roles_spill_step(struct roles_spill *rs, const struct roles_spill_obs *o, uint64_t now_ns);
/* Whether spill's own traffic fills the configured SHORT now. */
bool roles_spill_busy(const struct roles_spill *rs, uint64_t now_ns);

#endif /* HEALTH_ROLES_H */
