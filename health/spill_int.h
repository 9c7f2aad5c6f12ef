/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spill_int.h - what the spill controller's files share (not for callers:
 * they use spill.h). The controller is split by concern:
 *   spill.c        the tick and the state machine (enum spill_state: one
 *                  function per state), the generation, what to apply
 *   spill_delay.c  the probes' delays: path minima, recent samples, the
 *                  queueing-delay filters, a queue's growth
 *   spill_rate.c   the counters, the capacity estimate C, the top and R:
 *                  the rate's phases (enum spill_phase: one function per
 *                  phase), run in state RUN only
 *   spill_grant.c  when a grant is due, the frame share, the hold
 * docs/design.md, *Spill*, gives the reasons and the measurements behind
 * each rule and constant here.
 */
#ifndef FS_SPILL_INT_H
#define FS_SPILL_INT_H

#include "spill.h"

/* ---- delay filters ---- */
#define SHORT_FILTER_INTERVALS 2	/* probes in SHORT's delay filter: one
					 * late probe is not a queue */
#define LONG_FILTER_INTERVALS 5		/* probes in LONG's: a standing queue */
#define LONG_MIN_SAMPLES 3		/* LONG congested on fewer: unknown */
#define GROWTH_INTERVALS 3		/* a queue's growth (and C) over 3
					 * probes */
#define GROWTH_MIN_PPM 500000		/* a draining queue counts for at most
					 * half the time: C <= 2 x fed */
#define QUEUE_SEEN_NS (2 * FS_NS_PER_MS) /* a queue still there (the
					 * timestamps' 1 ms resolution) */

/* ---- the rate ---- */
#define LONG_FLOOR_PCT 85		/* LONG's probe pairs below 0.85 x its
					 * whole window: jitter */
#define STARTUP_GAIN_PCT 112		/* R x 1.12 per tick until a queue */
#define STARTUP_RISES 2			/* one probe at the target ends a
					 * start-up after two rises in a row */
#define KNEE_PCT 95			/* R settles at 0.95 x the room */
#define PROBE_GAIN_PPM 1000		/* above 0.95 x the room: C + 0.1 % */
#define PROBE_CALM_NS (5 * FS_NS_PER_S) /* doubled per 5 s calm, */
#define PROBE_DOUBLINGS 2		/* up to 0.4 % per tick; */
#define PROBE_WAIT_NS (10 * FS_NS_PER_S) /* no probe for 10 s after a
					 * back-off: a probe builds a queue */
#define RESTART_CALM_NS (30 * FS_NS_PER_S) /* start-up again after 30 s, */
#define RESTART_GAIN_PCT 104		/* then R x 1.04 per tick */
#define DOUBT_PCT 75			/* an estimate below 3/4 of the
					 * reference is checked */
#define CHECK_CALM_NS (2 * FS_NS_PER_S) /* after 2 s calm, once, */
#define CHECK_GAIN_PCT 103		/* R x 1.03 per tick */
#define BETA_MIN_PCT 50			/* back-off: R = beta x W */
#define BETA_MAX_PCT 85
#define BETA_SLOPE_PCT 15		/* beta = 1 - 0.15 x qd / target */
#define FULL_PCT 90			/* the class sent >= 0.9 R: full */
#define FULL_BACKLOG_BYTES (2 * FS_FRAME_BYTES) /* or two full frames
					 * queued */
#define USED_AVG_NS FS_NS_PER_S	/* the class's average rate window */
#define SHORT_DECAY_NS (2 * FS_NS_PER_S) /* short traffic's peak halves */
#define IDLE_OPEN_NS FS_NS_PER_S	/* the class idle for 1 s: top open */
#define BUSY_PCT 50			/* a queue is the device's own only when
					 * it sent >= half of what it was let */
/* a queue draining at least half as fast as a top of 0.95 x C drains it
 * (5 % of C): the top is below C, no need to estimate again */
#define DRAIN_PPM ((100 - KNEE_PCT) * 10000 / 2)

/* ---- grants and holds ---- */
#define ROOM_PCT 50			/* a grant: the class sent < 0.5 R */
#define ROOM_FOR_NS FS_NS_PER_S	/* a grant: the class not full for 1 s */
#define GRANT_TIMEOUT_NS FS_NS_PER_S	/* an untaken grant is withdrawn */
#define HOLD_WINDOW_NS (2 * FS_NS_PER_S) /* LONG's delays a hold covers */
#define HOLD_BLIND_NS FS_NS_PER_S	/* the hold without a LONG sample */
#define RATE_MIN_GRANT_FACTOR 4		/* no grant while R < 4 x rate_min */
#define START_LONG_DIV 4		/* a start-up from LONG's capacity / 4 */
#define SPILL_LOSS_MIN_LOST 2		/* SHORT lossy on at least 2 lost probes
					 * in its window: one is chance */
#define LOSS_QUIET_NS (30 * FS_NS_PER_S) /* no grant until SHORT was not
					 * lossy for 30 s (3 default loss
					 * windows): at 1 % loss a window of
					 * 100 probes holds 2 lost a quarter
					 * of the time, and grants and returns
					 * would take turns */

/* spill.c */
__attribute__((format(printf, 2, 3)))
void spill_say(struct spill *s, const char *fmt, ...);
void spill_set_state(struct spill *s, enum spill_state st, uint64_t now);

static inline double spill_mbit(uint64_t bps)
{
	return bps / 1e6;
}

static inline double spill_ms(uint64_t ns)
{
	return ns / 1e6;
}

/* spill_delay.c */
uint64_t spill_delay_base(const struct spill_delay *d);
unsigned int spill_delay_recent(const struct spill_delay *d, uint64_t from,
				uint64_t *lo, uint64_t *hi);
unsigned int spill_qd(const struct spill *s, enum spill_tunnel t,
		      uint64_t now, uint64_t window, uint64_t *qd);
uint64_t spill_filter_window(const struct spill *s, unsigned int n);
int64_t spill_queue_growth_ppm(const struct spill *s, uint64_t now,
			       uint64_t window);
bool spill_rising(const struct spill *s, unsigned int n, uint64_t since);

/* spill_rate.c */
uint64_t spill_clamp_rate(const struct spill *s, uint64_t r);
bool spill_idle(const struct spill *s);
uint64_t spill_top_bps(const struct spill *s);
void spill_observe(struct spill *s, uint64_t now, const struct spill_obs *o);
uint64_t spill_capacity_of(const struct spill *s, enum spill_tunnel t,
			   uint64_t now, uint64_t window, uint64_t fallback,
			   uint64_t busy_bps, unsigned int floor_pct);
void spill_rate_reset(struct spill *s, uint64_t now);
void spill_rate_grant(struct spill *s);
void spill_adapt_rate(struct spill *s, uint64_t now);

/* spill_grant.c */
void spill_loss_update(struct spill *s, const struct spill_obs *o);
bool spill_return_in_order(const struct spill *s, uint64_t now,
			   const struct spill_obs *o);
bool spill_grant_due(struct spill *s, uint64_t now, const struct spill_obs *o);
void spill_grant_close(struct spill *s, uint64_t now);

#endif /* FS_SPILL_INT_H */
