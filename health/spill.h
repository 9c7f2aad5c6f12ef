/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spill.h - the spill controller: lets long flows use the SHORT tunnel's
 * spare capacity without making short traffic wait (docs/design.md,
 * *Spill*).
 *
 * The router shapes spilled traffic in a scavenger class on its SHORT
 * tunnel device, behind short traffic; this controller decides that
 * class's rate R from SHORT's queueing delay in the router's direction
 * (a probe's one-way delay above the path's minimum; its RTT where the
 * far end does not answer ICMP timestamp requests), and when one more
 * long flow may spill (a grant the datapath hands to the next long flow,
 * bpf/flowsplit.h fs_spill): only while LONG is congested, SHORT is calm,
 * does not lose more than LONG, and the flows already spilled do not fill
 * R. A flow that may still have packets in LONG's queue moves only behind
 * a hold: the class sends nothing until LONG's worst recent delay (less
 * SHORT's minimum, with one-way delays) has passed since the grant
 * closed, so no moved packet overtakes one of its own; never longer than
 * SPILL_HOLD_MAX_NS. A SHORT that starts to lose returns the spilled
 * flows to LONG (a new generation), in order when the delays allow.
 *
 * Pure: no clock read, no I/O. The caller feeds probe delays
 * (spill_sample()) and, every tick, counters, the tunnels' health and
 * their probe loss (spill_tick()), all on its own CLOCK_MONOTONIC, every
 * other change of its inputs through spill_reconfigure(), and applies
 * what spill_tick() returns: the generation and the grants (fs_spill),
 * the class rate or the hold. The unit tests drive it on simulated time.
 * The implementation: spill.c and the files spill_int.h lists.
 *
 * Units: *_ns nanoseconds, *_bps bits per second, *_bytes bytes.
 */
#ifndef FS_SPILL_H
#define FS_SPILL_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Defaults (docs/design.md, *Spill*, says why). */
#define SPILL_DEF_TARGET_NS (5 * FS_NS_PER_MS)
#define SPILL_DEF_LONG_TARGET_NS (10 * FS_NS_PER_MS)
#define SPILL_DEF_RATE_INIT_BPS 1000000ull
#define SPILL_DEF_RATE_MIN_BPS 100000ull
#define SPILL_DEF_RATE_MAX_BPS 10000000000ull
#define SPILL_DEF_INTERVAL_NS (100 * FS_NS_PER_MS)
#define SPILL_DEF_GRANT_GAP_NS (2 * FS_NS_PER_S)
#define SPILL_DEF_HOLD_MARGIN_NS (20 * FS_NS_PER_MS)
/* The frame share (percent), in full frames (FS_FRAME_BYTES): how long
 * a short packet may wait behind one spilled frame. */
#define SPILL_DEF_FRAME_SHARE_PCT 10
/* SHORT's probe loss above LONG's by more than this (parts per million:
 * 0.5 percentage points) stops grants and returns the spilled flows */
#define SPILL_DEF_LOSS_MARGIN_PPM 5000
/* In state RETURN, how long the return waits for the moment it is in
 * order before it goes anyway: a flow on a lossy SHORT costs more than
 * one reordering. */
#define SPILL_RETURN_WAIT_NS FS_NS_PER_S
/* The longest the class holds packets for a grant, from the tick that asks
 * for the hold to the one that releases it, whatever the delays say: a
 * spilled flow never stalls longer (issue: a hold computed from delays of
 * two kinds came out as 1000 s). */
#define SPILL_HOLD_MAX_NS (2 * FS_NS_PER_S)

/* A long-enough history of the path minimum: LEDBAT's 10 one-minute
 * buckets (RFC 6817, BASE_HISTORY). */
#define SPILL_BASE_BUCKETS 10
#define SPILL_BASE_BUCKET_NS (60 * FS_NS_PER_S)
/* Recent samples kept per tunnel (the delay filters and the hold). */
#define SPILL_RECENT 32
#define SPILL_BYTES_UNKNOWN UINT64_MAX	/* a sample without the counter */

struct spill_params {
	uint64_t target_ns;	/* SHORT's queueing delay above which R backs
				 * off */
	uint64_t long_target_ns; /* LONG's standing queueing delay above
				 * which LONG counts as congested */
	uint64_t rate_init_bps;	/* R when a generation starts */
	uint64_t rate_min_bps;	/* R never goes below (a squeezed flow still
				 * makes progress) */
	uint64_t rate_max_bps;	/* R never goes above: 0.95 x SHORT's
				 * configured rate, else a line rate */
	uint64_t interval_ns;	/* the caller's tick (its probe interval) */
	uint64_t grant_gap_ns;	/* at least this from one grant's close to
				 * the next grant */
	uint64_t hold_margin_ns; /* added to the hold's delay difference */
	uint32_t frame_share_pct; /* a grant only where one frame at SHORT's
				 * capacity takes at most this share of its
				 * least RTT (0: on any path) */
	uint64_t short_rate_bps; /* SHORT's configured rate ([spill]
				 * tunnel-rate); 0: not configured. The frame
				 * share's capacity when given */
	uint32_t loss_margin_ppm; /* SHORT loses more than LONG by this:
				 * no grant, the spilled flows return */
};

void spill_params_default(struct spill_params *p);

enum spill_tunnel { SPILL_SHORT, SPILL_LONG, SPILL_TUNNELS };

enum spill_state {
	SPILL_OFF,	/* no generation: nothing spills (disabled, a tunnel
			 * not up, a failover in force) */
	SPILL_RUN,	/* R follows SHORT's delay; grants when due */
	SPILL_HOLD_WAIT, /* a grant is due: waiting for the hold */
	SPILL_GRANT,	/* held, one grant open */
	SPILL_HOLD,	/* the grant closed: held until LONG has drained */
	SPILL_RETURN,	/* SHORT loses: no grant; the spilled flows return
			 * to LONG (a new generation) once that is in
			 * order, or after SPILL_RETURN_WAIT_NS */
	SPILL_STATES
};
/* "off", "run", "hold-wait", "grant", "hold", "return" */
const char *spill_state_name(enum spill_state s);

/* The rate's phase, in state RUN (spill_rate.c says the transitions). */
enum spill_phase {
	SPILL_PHASE_STARTUP,	/* a generation's ramp: no capacity estimate
				 * yet; under LONG's capacity once the first
				 * grant measured it */
	SPILL_PHASE_RESTART,	/* a ramp after 30 s of a full top and no
				 * queue (the estimate was too low), top open */
	SPILL_PHASE_CHECK,	/* a ramp that checks a doubted estimate,
				 * under the earlier one */
	SPILL_PHASE_STEADY,	/* an estimate C: the top 0.95 x C + probe */
	SPILL_PHASE_DOUBTED,	/* as STEADY, the estimate below 3/4 of the
				 * reference: checked after 2 s calm */
};
/* "start-up", "restart", "check", "steady", "doubted" */
const char *spill_phase_name(enum spill_phase p);

/* One tunnel's delay: the path minimum over SPILL_BASE_BUCKETS minutes and
 * the recent samples. */
struct spill_delay {
	uint64_t base_ns[SPILL_BASE_BUCKETS];	/* minimum per bucket, 0: none */
	uint64_t bucket_start_ns;		/* start of the newest bucket */
	unsigned int bucket;			/* index of the newest bucket */
	uint64_t rtt_ns[SPILL_RECENT], at_ns[SPILL_RECENT];
	uint64_t sent_ns[SPILL_RECENT];
	uint64_t sent_bytes[SPILL_RECENT];	/* the device's counter then */
	unsigned int n, pos;			/* recent samples held, next slot */
	uint64_t samples;			/* every sample */
	bool one_way;				/* samples are one-way delays */
	uint64_t rtt_last_ns;			/* the last RTT */
	uint64_t rtt_base_ns[SPILL_BASE_BUCKETS]; /* least RTT per bucket of
						 * base_ns, 0: none */
};

/* What the caller observed since the last tick; counters are cumulative
 * (their differences count), the rest is now. */
struct spill_obs {
	bool usable;		/* spill enabled, both tunnels up and the
				 * routing plan in force is "both up" */
	bool held;		/* the class is held as the last act asked
				 * (rate 0 applied and its burst spent) */
	uint64_t tunnel_tx_bytes; /* bytes the SHORT tunnel device sent:
				 * short and spilled traffic */
	uint64_t spill_tx_bytes; /* bytes the scavenger class sent */
	uint64_t long_tx_bytes;	/* bytes the LONG tunnel device sent (0:
				 * unknown): the first flow's start-up
				 * begins at a quarter of its rate */
	uint64_t spill_backlog_bytes; /* queued in the class now */
	uint64_t taken;		/* fs_spill: grants taken */
	/* health's probes of each tunnel over its loss window (struct
	 * health: window_lost of window_len): the loss ratio and how much
	 * evidence it rests on; 0 of 0: unknown (no loss) */
	uint32_t probes_lost[SPILL_TUNNELS];
	uint32_t probes_window[SPILL_TUNNELS];
};

/* What to apply. */
struct spill_act {
	enum spill_state state;
	uint16_t gen;		/* fs_spill agent entry: generation (0: off) */
	uint64_t grants;	/* fs_spill agent entry: grants, cumulative */
	bool hold;		/* the class sends nothing (and its burst is
				 * to be spent before a grant is opened) */
	uint64_t rate_bps;	/* the class rate when not held */
	uint64_t top_bps;	/* short and spilled traffic together at most
				 * (the HTB's top): 0.95 x SHORT's capacity
				 * estimate and the probe while a generation
				 * has one, else rate_max */
	bool changed;		/* a state change, a new generation or grant,
				 * or a back-off: worth a log line */
	char why[160];		/* the last decision, one line */
};

/* Counters at one tick (capacity estimates over a few ticks; at most
 * one record per half interval, so that the fast ticks of a grant do not
 * crowd the others out). */
struct spill_tick_rec {
	uint64_t at_ns, tunnel_bytes, spill_bytes, long_bytes;
};
#define SPILL_HISTORY 8

struct spill {
	struct spill_params p;
	enum spill_state state;
	uint16_t gen;
	uint64_t grants;
	struct spill_delay d[SPILL_TUNNELS];
	/* the rate */
	uint64_t rate_bps;	/* R */
	enum spill_phase phase;	/* the rate's */
	uint64_t cap_bps;	/* C: what SHORT carried (spilled and short
				 * traffic) when its queue built last; 0 in
				 * the ramps (STARTUP, RESTART, CHECK) */
	uint64_t probe_bps;	/* the top above 0.95 x C: grown while
				 * calm */
	uint64_t last_backoff_ns, calm_since_ns;
	uint64_t qd_backoff_ns;	/* SHORT's queueing delay at that back-off */
	/* the class, per tick */
	uint64_t last_tick_ns, last_tx_bytes, used_bps;
	uint64_t last_tunnel_bytes, short_bps;	/* the short traffic */
	uint64_t short_env_bps;	/* its recent peak (decays by half per
				 * 2 s) */
	uint64_t last_long_bytes, long_bps;	/* LONG's rate */
	uint64_t used_avg_bps;	/* over about a second */
	bool saturated;		/* the last tick: spilled flows filled R */
	uint64_t last_full_ns;	/* the last tick they did */
	uint64_t last_spill_ns;	/* the last tick the class sent or held
				 * something */
	struct spill_tick_rec hist[SPILL_HISTORY];
	unsigned int hist_n, hist_pos;
	bool counters_valid;
	/* grants */
	uint64_t taken_at_grant;	/* taken when the grant opened */
	uint64_t state_since_ns;
	uint64_t last_close_ns;		/* a grant closed (taken or withdrawn) */
	uint64_t release_ns;		/* SPILL_HOLD ends */
	uint64_t held_since_ns;		/* HOLD_WAIT began: the class held
					 * since (at most SPILL_HOLD_MAX_NS) */
	uint64_t hold_ns;		/* the hold of the last grant */
	uint64_t grants_taken, grants_withdrawn, backoffs;
	uint64_t backoffs_foreign;	/* of them, on a queue SHORT's device
					 * did not build (path jitter, cross
					 * traffic): R cut, the top kept */
	uint64_t grants_taken_gen;	/* in this generation */
	uint64_t long_cap_bps;		/* LONG's capacity when the last
					 * grant was due (congested; measured
					 * over its last five probes) */
	uint64_t ceil_bps;	/* a start-up's ceiling: its top is 0.95 x
				 * it, and reaching it without a queue
				 * makes it C. long_cap_bps at the
				 * generation's first grant, or in a
				 * check the doubted estimate; 0 none (the
				 * top open) */
	uint64_t ref_bps;	/* the highest estimate (or start-up
				 * ceiling) since the generation began, a
				 * restart or the last check: the one a
				 * new estimate is doubted against */
	uint64_t doubt_bps;	/* DOUBTED: the reference the estimate fell
				 * below DOUBT_PCT of (the check's ceiling);
				 * 0 in the other phases */
	bool frame_gated;	/* a grant was due but the path too short for
				 * a frame (said once per generation) */
	uint32_t loss_ppm[SPILL_TUNNELS]; /* probe loss, the last tick */
	bool short_lossy;	/* SHORT loses more than LONG by the margin,
				 * on SPILL_LOSS_MIN_LOST lost probes at
				 * least */
	uint64_t lossy_last_ns;	/* the last tick it did (0: never) */
	bool loss_gated;	/* a grant was due but SHORT lossy (said once
				 * per generation) */
	bool returned_in_order;	/* the last return found the moment */
	char why[160];
	bool changed;
};

/* R at rate_init, state OFF; the first usable tick opens a generation. */
void spill_init(struct spill *s, const struct spill_params *p,
		uint64_t now_ns);
/*
 * An answered probe of tunnel @t (late ones too: they are the delay),
 * sent at @sent_ns and answered at @now_ns:
 * @one_way, the far end's receive time less the send time (any constant
 * clock offset, the same for both tunnels: they end at the same router,
 * and only differences count), else its RTT. A tunnel's samples are all
 * of one kind (a sample of the other kind starts its history afresh:
 * spill_reconfigure()); the kinds of the two tunnels may differ. The hold
 * compares like with like (spill_grant.c). @sent_bytes: the tunnel device's
 * tx_bytes when the probe was sent (SPILL_BYTES_UNKNOWN: interpolated
 * between the ticks' counters).
 */
void spill_sample(struct spill *s, enum spill_tunnel t, uint64_t sent_ns,
		  uint64_t sent_bytes, uint64_t now_ns, uint64_t delay_ns,
		  bool one_way);
/* The tunnel's round-trip time now (with one-way samples: how long a
 * back-off takes to show, so the next waits for it). */
void spill_rtt(struct spill *s, enum spill_tunnel t, uint64_t rtt_ns);
/* One tick: decide and fill @a. */
void spill_tick(struct spill *s, uint64_t now_ns, const struct spill_obs *o,
		struct spill_act *a);

/* What changed under the controller (spill_reconfigure(), a mask). */
enum spill_change {
	SPILL_CHG_PARAMS = 1 << 0,	/* new settings (@p) */
	SPILL_CHG_ROLES = 1 << 1,	/* the tunnels' roles or devices changed
					 * (a route up, a swap) */
	SPILL_CHG_KIND_SHORT = 1 << 2,	/* SHORT's samples changed kind */
	SPILL_CHG_KIND_LONG = 1 << 3,	/* LONG's samples changed kind */
	SPILL_CHG_RESET = 1 << 4,	/* start afresh (the agent's own state,
					 * fs_spill, the class were reset) */
};
/*
 * The one entry point for a change of the controller's inputs other than
 * the per-tick observations; the next spill_tick() applies the state it
 * leaves:
 * - PARAMS, ROLES, RESET end the generation (state OFF: the next usable
 *   tick opens a new one, so every flow spilled before is long again),
 *   with no hold and no grant open. PARAMS takes @p. ROLES forgets both
 *   tunnels' delays and the counters (they belong to the devices). RESET
 *   is spill_init() with the same (or new) parameters, except that the
 *   generation number goes on (a new one never equals one the datapath
 *   may still hold).
 * - KIND_SHORT / KIND_LONG forget that tunnel's delays (the kinds do not
 *   compare: spill_sample() calls it on a sample of the other kind); the
 *   generation goes on, grants wait for new samples, a hold in force is
 *   kept (it is bounded by SPILL_HOLD_MAX_NS).
 * @p may be NULL without PARAMS.
 */
void spill_reconfigure(struct spill *s, unsigned int changes,
		       const struct spill_params *p, uint64_t now_ns);

/* Queueing delay of tunnel @t now: the minimum of its samples of the last
 * @window_ns above its path minimum; false when there is none. */
bool spill_queue_delay(const struct spill *s, enum spill_tunnel t,
		       uint64_t now_ns, uint64_t window_ns, uint64_t *qd_ns);
/* The path minimum of tunnel @t (0: no sample yet). */
uint64_t spill_base_ns(const struct spill *s, enum spill_tunnel t);
/* The least RTT of tunnel @t over the same minutes (0: none yet). */
uint64_t spill_rtt_min_ns(const struct spill *s, enum spill_tunnel t);

#endif /* FS_SPILL_H */
