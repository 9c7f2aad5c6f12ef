/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health.h - tunnel liveness: a deterministic per-tunnel state machine with
 * flap damping, and the routing plan that follows from the two tunnels'
 * states (which the route writer only has to apply). probe.h feeds it.
 *
 * The state machine (health.c) reads no clock and does no I/O: every
 * function takes the current CLOCK_MONOTONIC time in nanoseconds, so the
 * unit tests drive it with invented time lines. The prober (probe.h) sends
 * ICMP (or UDP) echo requests through each tunnel device and turns answers
 * and timeouts into health_reply()/health_miss() calls.
 *
 * Units: every *_ns is nanoseconds of CLOCK_MONOTONIC; penalties are fixed
 * point Q16.16 (1.0 = 65536). The design, the damping formula and its bounds
 * are in docs/health.md.
 *
 * Errors: 0 or a negative errno; nothing here prints.
 */
#ifndef HEALTH_HEALTH_H
#define HEALTH_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "util.h"

/* Defaults (docs/health.md says why). */
#define HEALTH_DEF_INTERVAL_NS (100 * FS_NS_PER_MS)
#define HEALTH_DEF_DOWN_MISSES 3
#define HEALTH_DEF_CONGESTED_MISSES 10
#define HEALTH_DEF_UP_SUCCESSES 5
#define HEALTH_DEF_HOLD_MIN_NS (1 * FS_NS_PER_S)
#define HEALTH_DEF_HOLD_MAX_NS (32 * FS_NS_PER_S)
#define HEALTH_DEF_HALF_LIFE_NS (60 * FS_NS_PER_S)
#define HEALTH_DEF_LOSS_WINDOW 100

/* Accepted ranges, checked by health_params_check(). */
#define HEALTH_MIN_INTERVAL_NS (10 * FS_NS_PER_MS)
#define HEALTH_MAX_INTERVAL_NS (60 * FS_NS_PER_S)
#define HEALTH_MAX_COUNT 255		/* down_misses, up_successes */
#define HEALTH_MAX_TIMEOUT_INTERVALS 32	/* timeout <= 32 x interval */
#define HEALTH_MAX_HOLD_NS (3600 * FS_NS_PER_S)
#define HEALTH_MAX_LOSS_WINDOW 1024	/* probes */

/* Probes whose smoothed RTT is this far above the tunnel's minimum RTT wait
 * in a queue: the tunnel is congested, and its losses are likely a full FIFO's
 * tail drops, not a dead path (docs/health.md, *Congested tunnels*). */
#define HEALTH_CONGESTED_QUEUE_NS (5 * FS_NS_PER_MS)
/* The minimum RTT is the least over the current and the previous bucket:
 * a path that got longer for good is taken as the new minimum after one to
 * two buckets, and so is a queue that never drains for that long. */
#define HEALTH_RTT_MIN_BUCKET_NS (300 * FS_NS_PER_S)

#define HEALTH_Q16_ONE 65536ull

struct health_params {
	uint64_t interval_ns;	/* between two probes of one tunnel */
	uint64_t timeout_ns;	/* a probe unanswered this long is a miss:
				 * the floor of the adaptive timeout, or the
				 * fixed one; 0 = interval_ns */
	uint32_t down_misses;	/* consecutive misses: up -> down */
	uint32_t congested_misses; /* the same while the tunnel is congested
				 * (health_congested()); the larger of the
				 * two counts */
	uint32_t up_successes;	/* consecutive answers: down -> up */
	uint64_t hold_min_ns;	/* hold-down after a first flap */
	uint64_t hold_max_ns;	/* hold-down ceiling */
	uint64_t half_life_ns;	/* flap penalty half-life */
	uint32_t loss_window;	/* probes in the loss ratio's window */
	bool adaptive_timeout;	/* timeout from the probes' RTT, as TCP's
				 * RTO (health_probe_timeout_ns()) */
};

/* The defaults above. */
void health_params_default(struct health_params *p);
/*
 * 0, or -EINVAL with *field set to the name of the first bad field (the
 * [health] key, e.g. "interval", "down-misses", of health_settings_opts,
 * health_agent.h, which parses each one); ranges in the
 * HEALTH_MIN_/MAX_ macros, and hold_min <= hold_max, and timeout (when
 * set) within [interval / 10, 32 x interval].
 */
int health_params_check(const struct health_params *p, const char **field);
/* The configured probe timeout (timeout_ns, or interval_ns when 0): the
 * fixed timeout, or the floor of the adaptive one. */
uint64_t health_timeout_ns(const struct health_params *p);

enum health_state {
	HEALTH_INIT,	/* no verdict yet: neither N misses nor M answers */
	HEALTH_UP,
	HEALTH_DOWN,
};
/* "init", "up", "down" */
const char *health_state_name(enum health_state s);
/*
 * One tunnel's state over the n address families probed through it (each
 * its own state machine): DOWN when one is down (a path that loses one
 * family blackholes that half of its class), UP when all are up, else INIT
 * (a family without a verdict yet). n 0: INIT.
 */
enum health_state health_combine(const enum health_state *st, unsigned int n);

struct health {
	struct health_params params;	/* a copy, checked */
	enum health_state state;
	uint64_t since_ns;		/* time of the last state change */
	uint32_t misses;		/* consecutive, reset by an answer */
	uint32_t successes;		/* consecutive, reset by a miss */
	uint64_t penalty_q16;		/* flap penalty as of penalty_at_ns */
	uint64_t penalty_at_ns;
	uint64_t hold_ns;		/* hold-down of the last flap */
	uint64_t up_not_before_ns;	/* DOWN: earliest return to UP */
	uint64_t flaps;			/* UP -> DOWN transitions */
	bool link_down;			/* the last down: health_link_down() */
	uint64_t transitions;		/* all state changes */
	/* by-products */
	uint64_t rtt_last_ns;		/* 0 until the first answer */
	uint64_t rtt_ewma_ns;		/* EWMA, weight 1/8 per sample */
	/* RFC 6298's SRTT and RTTVAR over every answer, late ones included;
	 * valid once rtt_samples > 0 */
	uint64_t srtt_ns, rttvar_ns, rtt_samples;
	/* the least RTT of the current and the previous bucket
	 * (HEALTH_RTT_MIN_BUCKET_NS), late answers included; UINT64_MAX for
	 * none; and SRTT above that least, as of the last answer */
	uint64_t rtt_min_cur_ns, rtt_min_prev_ns, rtt_min_bucket_ns;
	uint64_t queue_ns;
	/* the largest queue_ns of the other probes through the same device
	 * (the prober sets it: a tunnel's address families share its path
	 * and its queue); 0 for none */
	uint64_t path_queue_ns;
	uint64_t probes, answered, missed;	/* totals */
	uint64_t window[HEALTH_MAX_LOSS_WINDOW / 64];	/* 1 = lost */
	uint32_t window_len, window_pos, window_lost;
};

/* State INIT at now_ns, no penalty. params must pass health_params_check. */
void health_init(struct health *h, const struct health_params *params,
		 uint64_t now_ns);
/*
 * Feed one probe outcome, in the order the probes were sent. Each returns
 * true when the state changed (h->state, h->since_ns tell to what).
 */
bool health_reply(struct health *h, uint64_t now_ns, uint64_t rtt_ns);
bool health_miss(struct health *h, uint64_t now_ns);
/*
 * An answer that came after its probe was counted as a miss: it stays a
 * miss, but its RTT is evidence of the path's delay (a queue building up)
 * and feeds SRTT/RTTVAR, so the timeout grows, and the queue estimate of
 * health_congested(). Changes no state.
 */
void health_late_answer(struct health *h, uint64_t rtt_ns);
/* The tunnel's minimum RTT (0 before any answer). */
uint64_t health_rtt_min_ns(const struct health *h);
/*
 * Is the tunnel congested? Its answers, in time or late, wait in a queue:
 * SRTT more than HEALTH_CONGESTED_QUEUE_NS above the minimum, its own or
 * that of another family through the same device (path_queue_ns). Then
 * congested_misses consecutive misses, not down_misses, take it down: a
 * bulk transfer filling the tunnel's FIFO drops probes in bursts, but a
 * path that answers with a queue is alive.
 */
bool health_congested(const struct health *h);
/* The consecutive misses that take the tunnel down now: down_misses, or
 * congested_misses while congested (whichever is larger). */
uint32_t health_down_misses(const struct health *h);
/*
 * The timeout of a probe sent now. Fixed: health_timeout_ns(). Adaptive:
 * max(floor, SRTT + max(floor / 2, 4 x RTTVAR)) with floor =
 * health_timeout_ns(), at most HEALTH_MAX_TIMEOUT_INTERVALS x interval;
 * the floor until the first RTT sample (RFC 6298 with alpha 1/8, beta 1/4,
 * floor / 2 as its G; docs/health.md).
 */
uint64_t health_probe_timeout_ns(const struct health *h);
/*
 * The tunnel device went down or away (a netlink link event): DOWN now,
 * without waiting for N misses; a flap like any other when it was UP.
 * True when the state changed.
 */
bool health_link_down(struct health *h, uint64_t now_ns);
/*
 * Time alone can end a hold-down (DOWN with M answers already counted):
 * call at health_deadline(). True when the state changed.
 */
bool health_tick(struct health *h, uint64_t now_ns);
/* When health_tick() could change the state; UINT64_MAX for never. */
uint64_t health_deadline(const struct health *h);

/* The flap penalty decayed to now_ns (Q16.16). */
uint64_t health_penalty_q16(const struct health *h, uint64_t now_ns);
/* The hold-down a flap with this penalty (Q16.16, new flap included) gets:
 * hold_min x 2^(penalty - 1), within [hold_min, hold_max]. */
uint64_t health_hold_for_penalty(const struct health_params *p,
				 uint64_t penalty_q16);
/* Loss ratio over the last loss_window probe outcomes (0 with none). */
double health_loss_ratio(const struct health *h);

/*
 * The log line of a transition to h->state from `from` (one per
 * transition), e.g. "up -> down after 3 misses, flap 2, hold-down 1.98 s,
 * rtt 0.21 ms, loss 4.0 %", "down -> up after 5 answers, rtt 0.20 ms,
 * loss 3.0 %", "up -> down: link down, flap 3, hold-down 3.78 s".
 * Returns what snprintf returns.
 */
int health_transition_format(const struct health *h, enum health_state from,
			     char *buf, size_t len);

/* ---- the plan of two tunnels' states -------------------------------------- */
/* What to do when both tunnels are down. */
enum health_both_down {
	HEALTH_BOTH_DOWN_KEEP,	/* leave the routes in force (default) */
	HEALTH_BOTH_DOWN_MAIN,	/* withdraw ours: the main table decides */
};

/* The plan (tunnel-cfg/plan.h) for these states; state[HEALTH_SHORT],
 * state[HEALTH_LONG]. */
struct health_plan health_plan(enum health_mode mode,
			       enum health_both_down both_down,
			       const enum health_state state[HEALTH_TUNNELS]);

#endif /* HEALTH_HEALTH_H */
