// SPDX-License-Identifier: GPL-2.0
/*
 * spill_rate.c - the spill controller's rate (spill_int.h; docs/design.md,
 * *Spill*, *The control loop*): the counters, SHORT's capacity estimate C,
 * the top (short and spilled traffic together at most 0.95 x C + the
 * probe P) and the class's rate R. R moves in state RUN only, by the
 * rate's phase (enum spill_phase, one function each):
 *
 *   STARTUP  -> STEADY|DOUBTED  a queue ends the ramp (C estimated), or R
 *                               reaches 0.95 x the ceiling without one
 *                               (C = the ceiling: LONG's capacity)
 *   RESTART  -> STEADY|DOUBTED  a queue ends the ramp
 *   CHECK    -> STEADY          a queue ends it, or the ceiling (the
 *                               doubted estimate) is reached
 *   STEADY   -> RESTART         30 s of a full top without a queue
 *   STEADY   -> DOUBTED         a new estimate below 3/4 of the reference
 *   DOUBTED  -> CHECK           2 s of a full top without a queue
 *   DOUBTED  -> STEADY          a new estimate within 3/4 of it
 *   any      -> STARTUP         a new generation (spill_rate_reset())
 *
 * In every phase, with S the short traffic's recent peak (what the SHORT
 * device sent less what the class sent; up at once, down by half per 2 s)
 * and qd SHORT's queueing delay (the least of its last two probes above
 * the path minimum):
 *   qd > target: back off (backoff()): C from what the device sent over
 *   the probes that saw the queue (capacity()), R = beta x the class's
 *   rate, beta = 1 - 0.15 x qd / target within [0.5, 0.85]; again only
 *   when probes sent after the last back-off see the queue still grow (or
 *   three RTTs on not smaller). Not before the generation's first grant
 *   is taken: nothing spilled, the queue is not the class's.
 */
#include <stdio.h>

#include "spill_int.h"

uint64_t spill_clamp_rate(const struct spill *s, uint64_t r)
{
	if (r < s->p.rate_min_bps)
		return s->p.rate_min_bps;
	if (r > s->p.rate_max_bps)
		return s->p.rate_max_bps;
	return r;
}

/* The class has sent nothing (and held nothing) for a second: nothing
 * spills now. */
bool spill_idle(const struct spill *s)
{
	return s->last_tick_ns - s->last_spill_ns >= IDLE_OPEN_NS;
}

/* A ramp: no capacity estimate in force (cap_bps is 0). */
static bool ramping(const struct spill *s)
{
	return s->phase == SPILL_PHASE_STARTUP ||
	       s->phase == SPILL_PHASE_RESTART || s->phase == SPILL_PHASE_CHECK;
}

/*
 * The ceiling of short and spilled traffic together on the router (the
 * HTB's top): 0.95 x the capacity estimate and the probe, at most
 * rate_max. In a ramp under a ceiling (the generation's first start-up
 * once its first grant measured LONG's capacity, or a check of a doubted
 * estimate), 0.95 x that ceiling: the ramp then cannot push a queue into
 * a SHORT that big, and a smaller SHORT still shows its queue to the
 * ramp. rate_max in a ramp without one (before the first grant, a
 * restart: it looks for a larger capacity), without a generation and
 * while the class is idle: short traffic is never capped while nothing
 * spills.
 */
uint64_t spill_top_bps(const struct spill *s)
{
	uint64_t t;

	if (s->state == SPILL_OFF || spill_idle(s))
		return s->p.rate_max_bps;
	if (ramping(s))
		return s->ceil_bps ? spill_clamp_rate(s, s->ceil_bps * KNEE_PCT / 100)
				   : s->p.rate_max_bps;
	t = s->cap_bps * KNEE_PCT / 100 + s->probe_bps;
	return spill_clamp_rate(s, t);
}

/* The short traffic's recent peak: up at once, down by half every
 * SHORT_DECAY_NS (request/response traffic changes by half its rate from
 * one tick to the next). */
static void short_peak(struct spill *s, uint64_t dt)
{
	uint64_t decayed;

	decayed = s->short_env_bps -
		  s->short_env_bps * (dt < SHORT_DECAY_NS ? dt : SHORT_DECAY_NS) /
			  (2 * SHORT_DECAY_NS);
	s->short_env_bps = s->short_bps > decayed ? s->short_bps : decayed;
}

/* The rates over the last tick @dt from the counters, and whether the
 * spilled flows filled R (or short and spilled traffic the top). */
static void rates_of_tick(struct spill *s, uint64_t dt, const struct spill_obs *o)
{
	uint64_t total = (o->tunnel_tx_bytes - s->last_tunnel_bytes) * 8 *
			 FS_NS_PER_S / dt, w;

	s->used_bps = (o->spill_tx_bytes - s->last_tx_bytes) * 8 *
		      FS_NS_PER_S / dt;
	s->short_bps = total > s->used_bps ? total - s->used_bps : 0;
	if (o->long_tx_bytes >= s->last_long_bytes)
		s->long_bps = (o->long_tx_bytes - s->last_long_bytes) * 8 *
			      FS_NS_PER_S / dt;
	short_peak(s, dt);
	w = dt < USED_AVG_NS ? dt : USED_AVG_NS;
	s->used_avg_bps = (s->used_avg_bps * (USED_AVG_NS - w) +
			   s->used_bps * w) / USED_AVG_NS;
	if (s->state == SPILL_RUN)
		s->saturated = o->spill_backlog_bytes >= FULL_BACKLOG_BYTES ||
			       s->used_bps * 100 >= s->rate_bps * FULL_PCT ||
			       (!ramping(s) &&
				total * 100 >= spill_top_bps(s) * FULL_PCT);
}

/* Take one tick's counters: the rates, and a record of them for the
 * capacity estimates (at most one per half interval, so that the fast
 * ticks of a grant do not crowd the others out). */
void spill_observe(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	uint64_t dt = now - s->last_tick_ns;

	if (s->counters_valid && dt && o->spill_tx_bytes >= s->last_tx_bytes &&
	    o->tunnel_tx_bytes >= s->last_tunnel_bytes)
		rates_of_tick(s, dt, o);
	if (s->saturated && s->state == SPILL_RUN)
		s->last_full_ns = now;
	if (s->used_bps || o->spill_backlog_bytes || s->state != SPILL_RUN)
		s->last_spill_ns = now;
	s->counters_valid = true;
	s->last_tx_bytes = o->spill_tx_bytes;
	s->last_tunnel_bytes = o->tunnel_tx_bytes;
	s->last_long_bytes = o->long_tx_bytes;
	s->last_tick_ns = now;
	if (s->hist_n && now - s->hist[(s->hist_pos + SPILL_HISTORY - 1) %
				      SPILL_HISTORY].at_ns <
				 s->p.interval_ns / 2)
		return;		/* a fast tick of a grant */
	s->hist[s->hist_pos] = (struct spill_tick_rec){
		.at_ns = now, .tunnel_bytes = o->tunnel_tx_bytes,
		.spill_bytes = o->spill_tx_bytes,
		.long_bytes = o->long_tx_bytes };
	s->hist_pos = (s->hist_pos + 1) % SPILL_HISTORY;
	if (s->hist_n < SPILL_HISTORY)
		s->hist_n++;
}

/* A tunnel device's bytes in a tick record. */
static uint64_t rec_bytes(const struct spill_tick_rec *r, enum spill_tunnel t)
{
	return t == SPILL_LONG ? r->long_bytes : r->tunnel_bytes;
}

/* What tunnel @t's device sent per second over the ticks of the last
 * @window (false: not two ticks in it). */
static bool rates_over(const struct spill *s, enum spill_tunnel t,
		       uint64_t now, uint64_t window, uint64_t *total_bps)
{
	const struct spill_tick_rec *a = NULL, *b = NULL, *r;
	unsigned int i;

	for (i = 0; i < s->hist_n; i++) {
		r = &s->hist[i];
		if (r->at_ns + window < now)
			continue;
		if (!a || r->at_ns < a->at_ns)
			a = r;
		if (!b || r->at_ns > b->at_ns)
			b = r;
	}
	if (!a || a == b || rec_bytes(b, t) < rec_bytes(a, t))
		return false;
	*total_bps = (rec_bytes(b, t) - rec_bytes(a, t)) * 8 * FS_NS_PER_S /
		     (b->at_ns - a->at_ns);
	return true;
}

/* Tunnel @t's device counter when its sample @k was sent: read then, or
 * between the two tick records around it (false: none before or after
 * it). */
static bool bytes_at(const struct spill *s, enum spill_tunnel t,
		     unsigned int k, uint64_t *bytes)
{
	const struct spill_tick_rec *a = NULL, *b = NULL, *r;
	uint64_t at_ns = s->d[t].sent_ns[k];
	unsigned int i;

	if (s->d[t].sent_bytes[k] != SPILL_BYTES_UNKNOWN) {
		*bytes = s->d[t].sent_bytes[k];
		return true;
	}
	for (i = 0; i < s->hist_n; i++) {
		r = &s->hist[i];
		if (r->at_ns <= at_ns && (!a || r->at_ns > a->at_ns))
			a = r;
		if (r->at_ns >= at_ns && (!b || r->at_ns < b->at_ns))
			b = r;
	}
	if (!a || !b || rec_bytes(b, t) < rec_bytes(a, t))
		return false;
	*bytes = rec_bytes(a, t);
	if (b != a)
		*bytes += (rec_bytes(b, t) - rec_bytes(a, t)) *
			  (at_ns - a->at_ns) / (b->at_ns - a->at_ns);
	return true;
}

/* The capacity between tunnel @t's samples @o and @w (sent in that
 * order; spill_capacity_of()), 0 when they do not both see the queue or
 * the device sent less than @busy_bps between them. */
static uint64_t pair_capacity(const struct spill *s, enum spill_tunnel t,
			      unsigned int o, unsigned int w, uint64_t busy_bps)
{
	const struct spill_delay *d = &s->d[t];
	uint64_t b0, b1, span = d->sent_ns[w] - d->sent_ns[o],
		 seen = spill_delay_base(d) + QUEUE_SEEN_NS;
	int64_t dq;

	if (!span || d->rtt_ns[o] < seen || d->rtt_ns[w] < seen)
		return 0;
	bytes_at(s, t, o, &b0);
	bytes_at(s, t, w, &b1);
	if (b1 < b0 || (b1 - b0) * 8 * FS_NS_PER_S / span < busy_bps)
		return 0;
	dq = (int64_t)d->rtt_ns[w] - (int64_t)d->rtt_ns[o];
	if (dq < -(int64_t)(span / 1000000 * GROWTH_MIN_PPM))
		dq = -(int64_t)(span / 1000000 * GROWTH_MIN_PPM);
	return (b1 - b0) * 8 * FS_NS_PER_S / (span + dq);
}

/* Tunnel @t's samples answered in the last @window that have a counter,
 * by send time, into @idx; their number. */
static unsigned int samples_by_send(const struct spill *s, enum spill_tunnel t,
				    uint64_t now, uint64_t window,
				    unsigned int idx[SPILL_RECENT])
{
	const struct spill_delay *d = &s->d[t];
	unsigned int i, j, n = 0;
	uint64_t b;

	for (i = 0; i < d->n; i++) {
		if (d->at_ns[i] + window < now || !bytes_at(s, t, i, &b))
			continue;
		for (j = n++; j && d->sent_ns[idx[j - 1]] > d->sent_ns[i]; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return n;
}

/* The capacity over the first and the last of the @n samples @idx that see
 * the queue, as one pair (0: fewer than three samples between them). */
static uint64_t whole_capacity(const struct spill *s, enum spill_tunnel t,
			       const unsigned int *idx, unsigned int n,
			       uint64_t busy_bps)
{
	const struct spill_delay *d = &s->d[t];
	uint64_t seen = spill_delay_base(d) + QUEUE_SEEN_NS;
	unsigned int i, j;

	for (i = 0; i < n && d->rtt_ns[idx[i]] < seen; i++)
		;
	for (j = n; j > i + 2 && d->rtt_ns[idx[j - 1]] < seen; j--)
		;
	return j > i + 2 ? pair_capacity(s, t, idx[i], idx[j - 1], busy_bps) : 0;
}

/*
 * Tunnel @t's capacity while it holds a queue, from its probes answered
 * in the last @window, each pair of consecutive ones sent at t0 and t1
 * and delayed q0 and q1 above the path's minimum, both at least
 * QUEUE_SEEN_NS: the WAN queue is a FIFO fed by the tunnel device, so
 * what the device sent between t0 and t1 left the queue between t0 + q0
 * and t1 + q1, the link busy all along: C = bytes / (t1 - t0 + q1 - q0).
 * A draining queue counts for at most half the time (as the 1 ms
 * timestamps allow). The smallest of the pairs: a full FIFO drops what
 * the device sent, and a pair across such a loss comes out too high.
 * With @floor_pct, a pair below floor_pct of the window's first and last
 * probe as one pair does not count: one probe that jitter delayed makes
 * its pair far too low, and over the whole window the same delay counts
 * for less. Without such a pair: the whole window, what the device sent
 * over it, or @fallback. A pair over which the device sent less than
 * @busy_bps does not count (the link was not kept busy by it), nor a
 * result below it: then 0, no estimate.
 */
uint64_t spill_capacity_of(const struct spill *s, enum spill_tunnel t,
			   uint64_t now, uint64_t window, uint64_t fallback,
			   uint64_t busy_bps, unsigned int floor_pct)
{
	unsigned int i, n, idx[SPILL_RECENT];
	uint64_t c, best = 0, whole = 0;

	n = samples_by_send(s, t, now, window, idx);
	if (floor_pct)
		whole = whole_capacity(s, t, idx, n, busy_bps);
	for (i = 1; i < n; i++) {
		c = pair_capacity(s, t, idx[i - 1], idx[i], busy_bps);
		if (!c || c * 100 < whole * floor_pct)
			continue;
		if (!best || c < best)
			best = c;
	}
	if (!best && whole)
		best = whole;
	if (!best && !rates_over(s, t, now, window, &best))
		best = fallback;
	return best < busy_bps ? 0 : best;
}

/* A new capacity estimate @c: the phase STEADY, or DOUBTED when @c is
 * below DOUBT_PCT of the reference (the highest estimate or ceiling since
 * the generation began, a restart or the last check): a capacity rarely
 * drops by a quarter, while jitter that stands for a few probes makes an
 * "estimate" of what the device happened to send, and under a top the
 * device fills such steps of a tenth add up, so the reference is not the
 * last estimate. A check's own estimate becomes the reference (one check
 * per doubt). */
static void set_cap(struct spill *s, uint64_t c)
{
	uint64_t ref = s->ref_bps ? s->ref_bps : s->cap_bps ? s->cap_bps
							    : s->ceil_bps;

	if (s->phase == SPILL_PHASE_CHECK) {
		s->ref_bps = c;
		s->doubt_bps = 0;
	} else if (ref && c * 100 < ref * DOUBT_PCT) {
		s->doubt_bps = ref;
		s->ref_bps = ref;
	} else {
		s->doubt_bps = 0;
		s->ref_bps = c > ref ? c : ref;
	}
	s->phase = s->doubt_bps ? SPILL_PHASE_DOUBTED : SPILL_PHASE_STEADY;
	s->cap_bps = c;
}

/* What SHORT's device was let send: the top; while the top is open, the
 * class's rate and the short traffic's recent peak. (Not the class's rate
 * under a top: a back-off on someone else's queue cuts it, and the next
 * would then find the device "busy" at what it let itself send.) */
static uint64_t let_send_bps(const struct spill *s)
{
	uint64_t top = spill_top_bps(s);

	return top < s->p.rate_max_bps ? top : s->rate_bps + s->short_env_bps;
}

/* SHORT's capacity now that its queue builds, over its last probes; 0
 * when the queue is not the device's own: it sent less than @busy_pct of
 * what it was let send between the probes that saw it. Such a queue is
 * jitter in the path or cross traffic in the underlay, and what the
 * device sent measures nothing (docs/design.md, *A queue that is not
 * SHORT's own*). */
static uint64_t capacity(const struct spill *s, uint64_t now,
			 uint64_t fallback, unsigned int busy_pct)
{
	return spill_capacity_of(s, SPILL_SHORT, now,
				 spill_filter_window(s, GROWTH_INTERVALS), fallback,
				 let_send_bps(s) * busy_pct / 100, 0);
}

/* The spilled rate that fits beside the short traffic now: the SHORT
 * capacity estimate less the short traffic's recent peak. */
static uint64_t room_bps(const struct spill *s)
{
	return s->cap_bps > s->short_env_bps + s->p.rate_min_bps ?
		       s->cap_bps - s->short_env_bps : s->p.rate_min_bps;
}

/* A back-off (or an estimate that counts as one for the next back-off:
 * it waits for probes that see its effect) at SHORT's queue @qd. */
static void mark_backoff(struct spill *s, uint64_t now, uint64_t qd)
{
	s->calm_since_ns = now;
	s->last_backoff_ns = now;
	s->qd_backoff_ns = qd;
	s->backoffs++;
}

/* Back off R; C and the top only on a queue the device built (else the
 * top stays: short traffic is not capped for someone else's queue). */
static void backoff(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t contrib, c, old = s->rate_bps;
	int64_t beta;

	contrib = s->saturated || s->used_bps > s->rate_bps ? s->rate_bps
							    : s->used_bps;
	c = capacity(s, now, contrib + s->short_env_bps, BUSY_PCT);
	if (c)
		set_cap(s, c);
	s->probe_bps = 0;
	beta = 100 - (int64_t)(BETA_SLOPE_PCT * qd / s->p.target_ns);
	beta = beta < BETA_MIN_PCT ? BETA_MIN_PCT
		: beta > BETA_MAX_PCT ? BETA_MAX_PCT : beta;
	s->rate_bps = spill_clamp_rate(s, contrib * beta / 100);
	mark_backoff(s, now, qd);
	if (c) {
		spill_say(s,
			  "SHORT queue %.1f ms > %.1f ms: rate %.2f -> %.2f Mbit/s (SHORT carried "
			  "%.2f: capacity estimate)",
			  spill_ms(qd), spill_ms(s->p.target_ns), spill_mbit(old),
			  spill_mbit(s->rate_bps), spill_mbit(c));
		return;
	}
	s->backoffs_foreign++;
	spill_say(s,
		  "SHORT queue %.1f ms > %.1f ms: rate %.2f -> %.2f Mbit/s (not SHORT's own queue: "
		  "it sent less than %d %% of %.2f; top kept)",
		  spill_ms(qd), spill_ms(s->p.target_ns), spill_mbit(old), spill_mbit(s->rate_bps),
		  BUSY_PCT, spill_mbit(let_send_bps(s)));
}

/* SHORT's queue at @qd under the top: the top is above C (the probe found
 * it, or an estimate was made on a queue seen late). C as at a back-off,
 * the probe starts again from 0. Only while the top is full (the device
 * sent FULL_PCT of it between the probes): a queue below the target under
 * a top the device does not fill is not the top's doing, and an estimate
 * from it is what the device happened to send. */
static void top_above_capacity(struct spill *s, uint64_t now, uint64_t qd,
			       const char *how)
{
	uint64_t old = spill_top_bps(s), c = capacity(s, now, old, FULL_PCT);

	if (!c)
		return;
	set_cap(s, c);
	s->probe_bps = 0;
	s->rate_bps = spill_clamp_rate(s, spill_top_bps(s));
	mark_backoff(s, now, qd);
	spill_say(s, "SHORT queue %.1f ms %s: top %.2f -> %.2f Mbit/s (capacity estimate %.2f)",
		  spill_ms(qd), how, spill_mbit(old), spill_mbit(spill_top_bps(s)),
		  spill_mbit(s->cap_bps));
}

/* SHORT's queue above the target (@qd, all phases): back off, again only
 * when two probes sent after the last back-off see the queue still
 * growing (so the effect of the last one shows first), or three RTTs on
 * not smaller. */
static void above_target(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t react = s->d[SPILL_SHORT].rtt_last_ns + s->p.interval_ns;

	if (s->backoffs && !spill_rising(s, 2, s->last_backoff_ns) &&
	    (now - s->last_backoff_ns < 3 * react || qd < s->qd_backoff_ns))
		return;
	backoff(s, now, qd);
}

/* ---- the ramps: STARTUP, RESTART, CHECK -------------------------------- */

/* A ramp's end on SHORT's queue (@qd the filtered delay, @qd1 the newest
 * probe's): half the target in the last two probes, or the target in the
 * newest when the three newest rose one after the other (a ramp's queue
 * grows by several ms per tick: HyStart's idea). Not on one probe alone:
 * a burst of a few frames or the path's jitter fills one probe. */
static bool ramp_ends(const struct spill *s, uint64_t qd, uint64_t qd1)
{
	return qd > s->p.target_ns / 2 ||
	       (qd1 > s->p.target_ns && spill_rising(s, STARTUP_RISES + 1, 0));
}

/* A ramp ended on a queue: C as at a back-off, and R well below it (the
 * probe saw the queue late, R went on growing meanwhile: the rate of two
 * ticks before); a queue that is not the device's own holds R. */
static void ramp_queue(struct spill *s, uint64_t now, uint64_t qd1)
{
	uint64_t old = s->rate_bps, c;

	c = capacity(s, now, s->rate_bps * 100 / STARTUP_GAIN_PCT * 100 /
				     STARTUP_GAIN_PCT + s->short_env_bps,
		     BUSY_PCT);
	if (!c)
		return;
	set_cap(s, c);
	s->rate_bps = spill_clamp_rate(s, room_bps(s) * BETA_MAX_PCT / 100);
	mark_backoff(s, now, qd1);
	spill_say(s,
		  "SHORT queue %.1f ms: start-up ends, rate %.2f -> %.2f Mbit/s (capacity estimate "
		  "%.2f)",
		  spill_ms(qd1), spill_mbit(old), spill_mbit(s->rate_bps), spill_mbit(s->cap_bps));
}

/* A ramp reached its top (0.95 x its ceiling) without a queue on SHORT:
 * the ceiling is the estimate (LONG's capacity, or the doubted one: the
 * doubt was wrong); the probe looks for more. */
static void ramp_ceiling(struct spill *s, uint64_t now)
{
	bool check = s->phase == SPILL_PHASE_CHECK;

	s->cap_bps = s->ceil_bps;
	if (s->ref_bps < s->ceil_bps)
		s->ref_bps = s->ceil_bps;
	s->calm_since_ns = now;
	s->phase = SPILL_PHASE_STEADY;
	if (check)
		spill_say(s,
			  "check at the earlier estimate without a SHORT queue: capacity estimate "
			  "%.2f Mbit/s",
			  spill_mbit(s->cap_bps));
	else
		spill_say(s,
			  "start-up at LONG's capacity without a SHORT queue: capacity estimate "
			  "%.2f Mbit/s",
			  spill_mbit(s->cap_bps));
}

/* A ramp's step before it grows R: false when R stays (the class not
 * full: SHORT's share is not used) or the ramp ended; @qd1 the newest
 * probe's queueing delay. */
static bool ramp_step(struct spill *s, uint64_t now, uint64_t qd,
		      uint64_t *qd1)
{
	if (!s->saturated)
		return false;
	spill_qd(s, SPILL_SHORT, now, spill_filter_window(s, 1), qd1);
	if (ramp_ends(s, qd, *qd1)) {
		ramp_queue(s, now, *qd1);
		return false;
	}
	if (s->ceil_bps && s->rate_bps >= spill_top_bps(s)) {
		ramp_ceiling(s, now);
		return false;
	}
	return true;
}

static void ramp_grow(struct spill *s, unsigned int gain_pct)
{
	s->rate_bps = spill_clamp_rate(s, s->rate_bps * gain_pct / 100);
}

/* STARTUP: R x 1.12 per tick. */
static void phase_startup(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t qd1;

	if (ramp_step(s, now, qd, &qd1))
		ramp_grow(s, STARTUP_GAIN_PCT);
}

/* RESTART: R x 1.04 per tick, the top open (C was found too low). */
static void phase_restart(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t qd1;

	if (ramp_step(s, now, qd, &qd1))
		ramp_grow(s, RESTART_GAIN_PCT);
}

/* CHECK: R x 1.03 per tick under 0.95 x the doubted estimate, held while
 * the newest probe sees half the target (a queue, or jitter). */
static void phase_check(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t qd1;

	if (ramp_step(s, now, qd, &qd1) && qd1 <= s->p.target_ns / 2)
		ramp_grow(s, CHECK_GAIN_PCT);
}

/* ---- an estimate in force: STEADY, DOUBTED ----------------------------- */

/* A queue of half the target standing under the top in each of the last
 * three probes (the window its growth is measured over: two let jitter
 * through), not draining fast, three RTTs after the last back-off: the
 * top is above C. */
static bool standing_under_top(const struct spill *s, uint64_t now,
			       uint64_t *qd3)
{
	uint64_t w = spill_filter_window(s, GROWTH_INTERVALS);

	spill_qd(s, SPILL_SHORT, now, w, qd3);
	return !spill_idle(s) && *qd3 > s->p.target_ns / 2 &&
	       now - s->last_backoff_ns >= 3 * (s->d[SPILL_SHORT].rtt_last_ns +
						s->p.interval_ns) &&
	       spill_queue_growth_ppm(s, now, w) > -(int64_t)DRAIN_PPM;
}

/* R back to the top @tgt quickly: the HTB holds short and spilled traffic
 * together below C. */
static void approach(struct spill *s, uint64_t tgt)
{
	uint64_t step = (tgt - s->rate_bps) / 2;

	if (step < s->cap_bps / 100)
		step = s->cap_bps / 100;
	s->rate_bps = s->rate_bps + step > tgt ? tgt : s->rate_bps + step;
	s->rate_bps = spill_clamp_rate(s, s->rate_bps);
}

/* No capacity estimate, nothing the ramp learnt: C, the probe, the
 * ceiling, the doubt and the reference go together. */
static void forget_estimate(struct spill *s)
{
	s->cap_bps = 0;
	s->probe_bps = 0;
	s->ceil_bps = 0;
	s->doubt_bps = 0;
	s->ref_bps = 0;
}

/* STEADY and DOUBTED alike: R follows the top (the HTB gives the class
 * what short traffic leaves of it, at packet time; while the class is
 * idle, the top open, 0.95 x the room beside the short traffic, for the
 * tick a returning flow sends before the top closes again); a queue
 * under the top re-estimates C. False when that settled this tick; else
 * R is at the top, the top full and SHORT calm: the phase decides. */
static bool follow_top(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t qd1, qd3, tgt;

	if (standing_under_top(s, now, &qd3)) {
		top_above_capacity(s, now, qd3, "standing under the top");
		return false;
	}
	tgt = spill_idle(s) ? room_bps(s) * KNEE_PCT / 100 : spill_top_bps(s);
	if (s->rate_bps > tgt) {
		s->rate_bps = tgt;
		return false;
	}
	if (!s->saturated)
		return false;	/* SHORT's share is not used: keep it */
	/* the newest probe alone holds R (its queue is to stay small); two
	 * end a probe above C (one is jitter as often as not) */
	spill_qd(s, SPILL_SHORT, now, spill_filter_window(s, 1), &qd1);
	if (qd1 > s->p.target_ns / 2) {
		if (s->probe_bps && qd > s->p.target_ns / 2)
			top_above_capacity(s, now, qd,
					   "in two probes: the probe found the capacity");
		return false;
	}
	if (s->rate_bps + s->cap_bps / 100 < tgt) {
		approach(s, tgt);
		return false;
	}
	return true;
}

/* STEADY: no queue for long under a full top. After PROBE_WAIT_NS, probe
 * above 0.95 x C slowly (the capacity may have grown), faster the longer
 * it stays calm; after RESTART_CALM_NS start-up again (C is too low: it
 * grew, or was made on noise), the top open meanwhile. */
static void phase_steady(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t calm = now - s->calm_since_ns;
	unsigned int k;

	if (!follow_top(s, now, qd))
		return;
	if (calm >= RESTART_CALM_NS) {
		forget_estimate(s);
		s->phase = SPILL_PHASE_RESTART;
		spill_say(s, "no SHORT queue for %.0f s at %.2f Mbit/s: start-up again",
			  spill_ms(RESTART_CALM_NS) / 1e3, spill_mbit(s->rate_bps));
	} else if (calm >= PROBE_WAIT_NS) {
		k = (calm - PROBE_WAIT_NS) / PROBE_CALM_NS;
		s->probe_bps += s->cap_bps * (PROBE_GAIN_PPM <<
				(k < PROBE_DOUBLINGS ? k : PROBE_DOUBLINGS)) /
				1000000;
		s->rate_bps = spill_top_bps(s);
	}
	s->rate_bps = spill_clamp_rate(s, s->rate_bps);
}

/* DOUBTED -> CHECK, @calm after the last queue. */
static void start_check(struct spill *s, uint64_t calm)
{
	spill_say(s,
		  "no SHORT queue for %.0f s under an estimate of %.2f Mbit/s, down from %.2f: "
		  "start-up again, up to that",
		  spill_ms(calm) / 1e3, spill_mbit(s->cap_bps), spill_mbit(s->doubt_bps));
	s->ceil_bps = s->doubt_bps;
	s->doubt_bps = 0;
	s->cap_bps = 0;
	s->probe_bps = 0;
	s->phase = SPILL_PHASE_CHECK;
}

/* DOUBTED: after CHECK_CALM_NS without a queue although the top is full,
 * check: start-up again from here under the reference. A SHORT that big
 * gets it back without a queue; a real drop shows its queue to the ramp
 * again, once (the check's estimate is the new reference). */
static void phase_doubted(struct spill *s, uint64_t now, uint64_t qd)
{
	uint64_t calm = now - s->calm_since_ns;

	if (!follow_top(s, now, qd))
		return;
	if (calm >= CHECK_CALM_NS)
		start_check(s, calm);
	s->rate_bps = spill_clamp_rate(s, s->rate_bps);
}

/* One function per phase, every phase has one. */
static void (*const phase_fn[])(struct spill *s, uint64_t now, uint64_t qd) = {
	[SPILL_PHASE_STARTUP] = phase_startup,
	[SPILL_PHASE_RESTART] = phase_restart,
	[SPILL_PHASE_CHECK] = phase_check,
	[SPILL_PHASE_STEADY] = phase_steady,
	[SPILL_PHASE_DOUBTED] = phase_doubted,
};

/* ---- the entry points --------------------------------------------------- */

/* A new generation: R at rate_init, no estimate, phase STARTUP. */
void spill_rate_reset(struct spill *s, uint64_t now)
{
	s->phase = SPILL_PHASE_STARTUP;
	s->rate_bps = spill_clamp_rate(s, s->p.rate_init_bps);
	forget_estimate(s);
	s->saturated = false;
	s->last_full_ns = 0;
	s->used_avg_bps = 0;
	s->backoffs = 0;
	s->backoffs_foreign = 0;
	s->calm_since_ns = now;
}

/* A grant opens (the class held): in a ramp, R from a quarter of LONG's
 * capacity (LONG carries what it can, SHORT is likely to carry as much),
 * and the generation's first start-up under LONG's capacity. */
void spill_rate_grant(struct spill *s)
{
	if (!ramping(s))
		return;
	if (s->long_cap_bps / START_LONG_DIV > s->rate_bps)
		s->rate_bps = spill_clamp_rate(s, s->long_cap_bps / START_LONG_DIV);
	if (s->phase == SPILL_PHASE_STARTUP && !s->ceil_bps)
		s->ceil_bps = s->long_cap_bps;
}

/* C, the top and R from SHORT's queueing delay (state RUN). */
void spill_adapt_rate(struct spill *s, uint64_t now)
{
	uint64_t qd;

	if (!spill_qd(s, SPILL_SHORT, now,
		      spill_filter_window(s, SHORT_FILTER_INTERVALS), &qd))
		return;		/* SHORT unanswered: hold R, health decides */
	/* nothing spilled yet in this generation: SHORT's queue is short
	 * traffic's (or jitter), not the class's; it only delays the first
	 * grant (which needs SHORT calm) */
	if (!s->grants_taken_gen)
		return;
	if (qd > s->p.target_ns) {
		above_target(s, now, qd);
		return;
	}
	if (s->phase < sizeof(phase_fn) / sizeof(phase_fn[0]))
		phase_fn[s->phase](s, now, qd);
}
