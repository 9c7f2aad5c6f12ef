// SPDX-License-Identifier: GPL-2.0
/*
 * spill.c - the spill controller (spill.h; docs/design.md, *Spill*).
 *
 * Per tick, in state RUN, with S the short traffic's recent peak (what
 * the SHORT device sent less what the class sent; up at once, down by half
 * per 2 s: request/response traffic changes by half its rate from one
 * tick to the next) and C the SHORT capacity estimate:
 *   qd   = SHORT's queueing delay: the smallest delay of its last two
 *          probes (SHORT_FILTER_INTERVALS) above the path minimum (a
 *          one-sample spike of the agent's own scheduling is not a queue);
 *   qd > target, again only when probes sent after the last back-off
 *          see the queue grow (or three RTTs on not smaller):
 *          C = what SHORT's device sent between two probes over the time
 *          it took to leave the WAN FIFO (capacity_of()), and R = beta x
 *          the class's rate, beta = 1 - 0.15 x qd / target within
 *          [0.5, 0.85]; C only on the device's own queue (it sent at
 *          least BUSY_PCT of what it was let send; else R alone), and
 *          qd is not looked at before the generation's first grant;
 *   R above 0.95 x (C - S) + P (short traffic grew): R follows at once,
 *          and P = 0 when S grew by 5 % of C: room for short traffic one
 *          tick after it shows, before its queue does;
 *   qd <= target and the class full: start-up (no C yet) R x 1.12 per
 *          tick until two probes see target / 2, or one the target
 *          after two rises in a row (then C as at a back-off, R =
 *          0.85 x (C - S): the probes saw
 *          the queue late); then R climbs
 *          back to 0.95 x (C - S) within a few ticks (below the rate that
 *          built the queue), and above it by a probe P that grows by
 *          0.1 % of C per tick, doubled every 5 s without a back-off (up
 *          to 0.4 %): slowly near the capacity, so the next queue is found
 *          small, faster the longer none is found (C may have grown); after
 *          30 s without one, start-up again at R x 1.04 per tick (C was too
 *          low). An estimate below 3/4 of the highest since the
 *          generation began (or the last check) is doubted (set_cap())
 *          and checked once after 2 s without a queue: a start-up at
 *          R x 1.03 per tick under 0.95 x that one, R held while the
 *          newest probe sees target / 2.
 * A grant is due when LONG's standing queueing delay (the smallest of
 * its last five probes) is above long_target, SHORT is calm (qd <=
 * target / 2), the spilled flows leave the class half empty (so one more
 * flow is useful), grant_gap has passed since the last grant closed and
 * one frame at SHORT's capacity takes at most frame_share of SHORT's
 * least RTT (frame_fits()).
 * Then: hold the class, open one grant, close it when taken (or withdraw
 * it after GRANT_TIMEOUT_NS), and keep holding until LONG's worst delay
 * of the last HOLD_WINDOW_NS (less SHORT's minimum, with one-way delays)
 * plus a margin has passed since the close.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spill.h"

#define SHORT_FILTER_INTERVALS 2	/* probes in SHORT's delay filter */
#define LONG_FILTER_INTERVALS 5		/* probes in LONG's */
#define LONG_MIN_SAMPLES 3		/* LONG congested on fewer: unknown */
#define LONG_FLOOR_PCT 85		/* LONG's probe pairs below 0.85 x its
					 * whole window: jitter */
#define STARTUP_GAIN_PCT 112		/* R x 1.12 per tick until a queue */
#define STARTUP_RISES 2			/* one probe at the target ends it
					 * after two rises in a row */
#define KNEE_PCT 95			/* R settles at 0.95 x the room */
#define PROBE_GAIN_PPM 1000		/* above 0.95 x the room: C + 0.1 % */
#define PROBE_CALM_NS (5 * SPILL_NS_PER_S) /* doubled per 5 s calm, */
#define PROBE_DOUBLINGS 2		/* up to 0.4 % per tick; */
#define PROBE_WAIT_NS (10 * SPILL_NS_PER_S) /* no probe for 10 s after a
					 * back-off: a probe builds a queue */
#define RESTART_CALM_NS (30 * SPILL_NS_PER_S) /* start-up again after 30 s, */
#define RESTART_GAIN_PCT 104		/* then R x 1.04 per tick */
#define DOUBT_PCT 75			/* an estimate below 3/4 of the
					 * reference is checked */
#define CHECK_CALM_NS (2 * SPILL_NS_PER_S) /* after 2 s calm, once, */
#define CHECK_GAIN_PCT 103		/* R x 1.03 per tick */
#define BETA_MIN_PCT 50			/* back-off: R = beta x W */
#define BETA_MAX_PCT 85
#define BETA_SLOPE_PCT 15		/* beta = 1 - 0.15 x qd / target */
#define FULL_PCT 90			/* the class sent >= 0.9 R: full */
#define FULL_BACKLOG_BYTES (2 * SPILL_FRAME_BYTES) /* or two full frames
					 * queued */
#define ROOM_PCT 50			/* a grant: the class sent < 0.5 R */
#define USED_AVG_NS SPILL_NS_PER_S	/* the class's average rate window */
#define SHORT_DECAY_NS (2 * SPILL_NS_PER_S) /* short traffic's peak */
#define GROWTH_INTERVALS 3		/* the queue's growth over 3 probes */
#define GROWTH_MIN_PPM 500000		/* a draining queue: C <= 2 x fed */
#define QUEUE_SEEN_NS (2 * SPILL_NS_PER_MS) /* a queue still there (the
					 * timestamps' 1 ms resolution) */
#define ROOM_FOR_NS SPILL_NS_PER_S	/* a grant: the class not full for 1 s */
#define GRANT_TIMEOUT_NS SPILL_NS_PER_S	/* an untaken grant is withdrawn */
#define HOLD_WINDOW_NS (2 * SPILL_NS_PER_S) /* LONG's delays a hold covers */
#define HOLD_BLIND_NS SPILL_NS_PER_S	/* the hold without a LONG sample */
#define RATE_MIN_GRANT_FACTOR 4		/* no grant while R < 4 x rate_min */
#define START_LONG_DIV 4		/* a start-up from LONG's capacity / 4 */
#define IDLE_OPEN_NS SPILL_NS_PER_S	/* the class idle for 1 s: top open */
#define BUSY_PCT 50			/* a queue is the device's own only when
					 * it sent >= half of what it was let */
/* a queue draining at least half as fast as a top of 0.95 x C drains it
 * (5 % of C): the top is below C, no need to estimate again */
#define DRAIN_PPM ((100 - KNEE_PCT) * 10000 / 2)

void spill_params_default(struct spill_params *p)
{
	*p = (struct spill_params){
		.target_ns = SPILL_DEF_TARGET_NS,
		.long_target_ns = SPILL_DEF_LONG_TARGET_NS,
		.rate_init_bps = SPILL_DEF_RATE_INIT_BPS,
		.rate_min_bps = SPILL_DEF_RATE_MIN_BPS,
		.rate_max_bps = SPILL_DEF_RATE_MAX_BPS,
		.interval_ns = SPILL_DEF_INTERVAL_NS,
		.grant_gap_ns = SPILL_DEF_GRANT_GAP_NS,
		.hold_margin_ns = SPILL_DEF_HOLD_MARGIN_NS,
		.frame_share_pct = SPILL_DEF_FRAME_SHARE_PCT,
	};
}

const char *spill_state_name(enum spill_state s)
{
	switch (s) {
	case SPILL_OFF: return "off";
	case SPILL_RUN: return "run";
	case SPILL_HOLD_WAIT: return "hold-wait";
	case SPILL_GRANT: return "grant";
	case SPILL_HOLD: return "hold";
	}
	return "?";
}

/* ---- delay ------------------------------------------------------------- */

static void delay_add(struct spill_delay *d, uint64_t sent, uint64_t bytes,
		      uint64_t now, uint64_t rtt)
{
	unsigned int i;

	if (!d->samples) {
		d->bucket_start_ns = now;
	} else if (now - d->bucket_start_ns >=
		   SPILL_BASE_BUCKETS * SPILL_BASE_BUCKET_NS) {
		for (i = 0; i < SPILL_BASE_BUCKETS; i++)
			d->base_ns[i] = d->rtt_base_ns[i] = 0;
		d->bucket_start_ns = now;
	} else {
		while (now - d->bucket_start_ns >= SPILL_BASE_BUCKET_NS) {
			d->bucket = (d->bucket + 1) % SPILL_BASE_BUCKETS;
			d->base_ns[d->bucket] = d->rtt_base_ns[d->bucket] = 0;
			d->bucket_start_ns += SPILL_BASE_BUCKET_NS;
		}
	}
	if (!d->base_ns[d->bucket] || rtt < d->base_ns[d->bucket])
		d->base_ns[d->bucket] = rtt;
	d->rtt_ns[d->pos] = rtt;
	d->at_ns[d->pos] = now;
	d->sent_ns[d->pos] = sent;
	d->sent_bytes[d->pos] = bytes;
	d->pos = (d->pos + 1) % SPILL_RECENT;
	if (d->n < SPILL_RECENT)
		d->n++;
	d->samples++;
}

/* The least non-zero of the buckets @b (0: none). */
static uint64_t buckets_min(const uint64_t b[SPILL_BASE_BUCKETS])
{
	uint64_t m = 0;
	unsigned int i;

	for (i = 0; i < SPILL_BASE_BUCKETS; i++)
		if (b[i] && (!m || b[i] < m))
			m = b[i];
	return m;
}

static uint64_t delay_base(const struct spill_delay *d)
{
	return buckets_min(d->base_ns);
}

/* An RTT: the last, and the least of the newest bucket (the buckets turn
 * with the delay samples, which come as often). */
static void rtt_add(struct spill_delay *d, uint64_t rtt)
{
	d->rtt_last_ns = rtt;
	if (!d->rtt_base_ns[d->bucket] || rtt < d->rtt_base_ns[d->bucket])
		d->rtt_base_ns[d->bucket] = rtt;
}

/* Smallest and largest RTT of the samples since @from; their count. */
static unsigned int delay_recent(const struct spill_delay *d, uint64_t from,
				 uint64_t *lo, uint64_t *hi)
{
	unsigned int i, k = 0;

	*lo = *hi = 0;
	for (i = 0; i < d->n; i++) {
		if (d->at_ns[i] < from)
			continue;
		if (!k || d->rtt_ns[i] < *lo)
			*lo = d->rtt_ns[i];
		if (!k || d->rtt_ns[i] > *hi)
			*hi = d->rtt_ns[i];
		k++;
	}
	return k;
}

void spill_sample(struct spill *s, enum spill_tunnel t, uint64_t sent_ns,
		  uint64_t sent_bytes, uint64_t now_ns, uint64_t delay_ns,
		  bool one_way)
{
	if (t >= SPILL_TUNNELS || !delay_ns)
		return;
	if (s->d[t].samples && s->d[t].one_way != one_way)
		memset(&s->d[t], 0, sizeof(s->d[t]));	/* another kind */
	s->d[t].one_way = one_way;
	delay_add(&s->d[t], sent_ns, sent_bytes, now_ns, delay_ns);
	if (!one_way)
		rtt_add(&s->d[t], delay_ns);
}

void spill_rtt(struct spill *s, enum spill_tunnel t, uint64_t rtt_ns)
{
	if (t < SPILL_TUNNELS && rtt_ns)
		rtt_add(&s->d[t], rtt_ns);
}

uint64_t spill_base_ns(const struct spill *s, enum spill_tunnel t)
{
	return t < SPILL_TUNNELS ? delay_base(&s->d[t]) : 0;
}

uint64_t spill_rtt_min_ns(const struct spill *s, enum spill_tunnel t)
{
	return t < SPILL_TUNNELS ? buckets_min(s->d[t].rtt_base_ns) : 0;
}

static unsigned int queue_delay(const struct spill *s, enum spill_tunnel t,
				uint64_t now, uint64_t window, uint64_t *qd)
{
	uint64_t lo, hi, base = delay_base(&s->d[t]);
	unsigned int k;

	k = delay_recent(&s->d[t], now > window ? now - window : 0, &lo, &hi);
	*qd = k && lo > base ? lo - base : 0;
	return k;
}

bool spill_queue_delay(const struct spill *s, enum spill_tunnel t,
		       uint64_t now_ns, uint64_t window_ns, uint64_t *qd_ns)
{
	return t < SPILL_TUNNELS &&
	       queue_delay(s, t, now_ns, window_ns, qd_ns) > 0;
}

/* A filter window of @n probes: n intervals and half of one. */
static uint64_t filter_window(const struct spill *s, unsigned int n)
{
	return n * s->p.interval_ns + s->p.interval_ns / 2;
}

/* ---- decisions --------------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static void say(struct spill *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	s->changed = true;
}

static double mbit(uint64_t bps)
{
	return bps / 1e6;
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static void set_state(struct spill *s, enum spill_state st, uint64_t now)
{
	s->state = st;
	s->state_since_ns = now;
	s->changed = true;
}

static uint64_t clamp_rate(const struct spill *s, uint64_t r)
{
	if (r < s->p.rate_min_bps)
		return s->p.rate_min_bps;
	if (r > s->p.rate_max_bps)
		return s->p.rate_max_bps;
	return r;
}

/* The class has sent nothing (and held nothing) for a second: nothing
 * spills now. */
static bool spill_idle(const struct spill *s)
{
	return s->last_tick_ns - s->last_spill_ns >= IDLE_OPEN_NS;
}

/* A start-up under a ceiling: the generation's first (LONG's capacity),
 * or a check of a doubted estimate */
static bool ceiled_startup(const struct spill *s)
{
	return !s->cap_bps && s->ceil_bps;
}

/* The ceiling of short and spilled traffic together on the router (the
 * HTB's top): 0.95 x the capacity estimate and the probe, at most
 * rate_max. In a generation's first start-up (no estimate yet), 0.95 x
 * LONG's capacity at the first grant (LONG is congested then: measured
 * as SHORT's is, capacity_of()), and SHORT is likely as big; the
 * start-up's R then cannot push a queue into a SHORT as big as LONG, and
 * a smaller SHORT still shows its queue to R's ramp. In a check, 0.95 x
 * the doubted estimate, for the same reasons. rate_max in a start-up
 * after RESTART_CALM_NS (it looks for a larger capacity), without a
 * generation and while the class is idle, so that short traffic is never
 * capped while nothing spills. */
static uint64_t top_bps(const struct spill *s)
{
	uint64_t t;

	if (s->state == SPILL_OFF || spill_idle(s))
		return s->p.rate_max_bps;
	if (ceiled_startup(s))
		return clamp_rate(s, s->ceil_bps * KNEE_PCT / 100);
	if (!s->cap_bps)
		return s->p.rate_max_bps;
	t = s->cap_bps * KNEE_PCT / 100 + s->probe_bps;
	return clamp_rate(s, t);
}

void spill_init(struct spill *s, const struct spill_params *p,
		uint64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->state = SPILL_OFF;
	s->state_since_ns = now_ns;
	s->last_tick_ns = now_ns;
	s->rate_bps = clamp_rate(s, p->rate_init_bps);
	snprintf(s->why, sizeof(s->why), "not started");
}

/* The class's rate over the last tick, whether it was full. */
static void observe(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	uint64_t dt = now - s->last_tick_ns, w;

	if (s->counters_valid && dt && o->spill_tx_bytes >= s->last_tx_bytes &&
	    o->tunnel_tx_bytes >= s->last_tunnel_bytes) {
		uint64_t total = (o->tunnel_tx_bytes - s->last_tunnel_bytes) *
				 8 * SPILL_NS_PER_S / dt, decayed;

		s->used_bps = (o->spill_tx_bytes - s->last_tx_bytes) * 8 *
			      SPILL_NS_PER_S / dt;
		s->short_bps = total > s->used_bps ? total - s->used_bps : 0;
		if (o->long_tx_bytes >= s->last_long_bytes)
			s->long_bps = (o->long_tx_bytes - s->last_long_bytes) *
				      8 * SPILL_NS_PER_S / dt;
		/* the short traffic's recent peak: up at once, down by
		 * half every SHORT_DECAY_NS */
		decayed = s->short_env_bps -
			  s->short_env_bps * (dt < SHORT_DECAY_NS ? dt
							: SHORT_DECAY_NS) /
				  (2 * SHORT_DECAY_NS);
		s->short_env_bps = s->short_bps > decayed ? s->short_bps
							  : decayed;
		w = dt < USED_AVG_NS ? dt : USED_AVG_NS;
		s->used_avg_bps = (s->used_avg_bps * (USED_AVG_NS - w) +
				   s->used_bps * w) / USED_AVG_NS;
		/* full: the spilled flows fill R, or short and spilled
		 * traffic together the top */
		if (s->state == SPILL_RUN)
			s->saturated = o->spill_backlog_bytes >=
					       FULL_BACKLOG_BYTES ||
				       s->used_bps * 100 >=
					       s->rate_bps * FULL_PCT ||
				       (s->cap_bps && total * 100 >=
						top_bps(s) * FULL_PCT);
	}
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
	*total_bps = (rec_bytes(b, t) - rec_bytes(a, t)) * 8 * SPILL_NS_PER_S /
		     (b->at_ns - a->at_ns);
	return true;
}

/*
 * The hold of a grant closed now: how much later than a SHORT packet sent
 * now a LONG packet sent now can arrive, and a margin. One-way delays:
 * LONG's worst of the last HOLD_WINDOW_NS less SHORT's minimum (the far
 * end's clock offset cancels). RTTs: LONG's worst alone (a one-way delay
 * is less than the RTT, SHORT's at least 0).
 */
static uint64_t hold_for(const struct spill *s, uint64_t now)
{
	const struct spill_delay *l = &s->d[SPILL_LONG], *sh = &s->d[SPILL_SHORT];
	uint64_t lo, hi, base;

	if (!delay_recent(l, now > HOLD_WINDOW_NS ? now - HOLD_WINDOW_NS : 0,
			  &lo, &hi))
		return HOLD_BLIND_NS + s->p.hold_margin_ns;
	if (l->one_way && sh->one_way && (base = delay_base(sh)))
		hi = hi > base ? hi - base : 0;
	return hi + s->p.hold_margin_ns;
}

/* The spilled rate that fits beside the short traffic now: the SHORT
 * capacity estimate less the short traffic's recent peak. */
static uint64_t room_bps(const struct spill *s)
{
	return s->cap_bps > s->short_env_bps + s->p.rate_min_bps ?
		       s->cap_bps - s->short_env_bps : s->p.rate_min_bps;
}

/*
 * How fast SHORT's queue grows, in ppm (queueing time per time): the
 * newest and the oldest of its samples of the last @window. A queue that
 * grows by g seconds per second is fed at (1 + g) times the capacity; one
 * that drains (g < 0) but is still there at the end was fed at (1 + g)
 * times the capacity too, the bottleneck busy all along. 0 when it
 * drained empty (the capacity is then at least what was fed).
 */
static int64_t queue_growth_ppm(const struct spill *s, uint64_t now,
				uint64_t window)
{
	const struct spill_delay *d = &s->d[SPILL_SHORT];
	unsigned int i, old = SPILL_RECENT, new = SPILL_RECENT;
	uint64_t base = delay_base(d);
	int64_t g;

	for (i = 0; i < d->n; i++) {
		if (d->at_ns[i] + window < now)
			continue;
		if (old == SPILL_RECENT || d->at_ns[i] < d->at_ns[old])
			old = i;
		if (new == SPILL_RECENT || d->at_ns[i] > d->at_ns[new])
			new = i;
	}
	if (old == SPILL_RECENT || d->at_ns[new] == d->at_ns[old])
		return 0;
	g = ((int64_t)d->rtt_ns[new] - (int64_t)d->rtt_ns[old]) * 1000000 /
	    (int64_t)(d->at_ns[new] - d->at_ns[old]);
	if (g < 0 && d->rtt_ns[new] < base + QUEUE_SEEN_NS)
		return 0;
	return g < -GROWTH_MIN_PPM ? -GROWTH_MIN_PPM : g;
}

/* Did SHORT's delay rise from each of its @n newest probes (by send
 * time) to the next, all of them sent at or after @since? A queue the
 * device builds grows from probe to probe; jitter comes and goes. */
static bool rising(const struct spill *s, unsigned int n, uint64_t since)
{
	const struct spill_delay *d = &s->d[SPILL_SHORT];
	uint64_t below = UINT64_MAX, prev = 0;
	unsigned int i, k, b;

	for (k = 0; k < n; k++) {	/* the newest sent before @below */
		b = SPILL_RECENT;
		for (i = 0; i < d->n; i++)
			if (d->sent_ns[i] < below &&
			    (b == SPILL_RECENT || d->sent_ns[i] > d->sent_ns[b]))
				b = i;
		if (b == SPILL_RECENT || d->sent_ns[b] < since ||
		    (k && d->rtt_ns[b] >= prev))
			return false;
		prev = d->rtt_ns[b];
		below = d->sent_ns[b];
	}
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

/*
 * Tunnel @t's capacity while it holds a queue, from its probes answered
 * in the last @window, each pair of consecutive ones sent at t0 and t1
 * and delayed q0 and q1 above the path's minimum, both at least
 * QUEUE_SEEN_NS: the WAN queue is a FIFO fed by the tunnel device, so
 * what the device sent between t0 and t1 left the queue between t0 + q0
 * and t1 + q1, the link busy all along: C = bytes / (t1 - t0 + q1 - q0).
 * A draining queue counts for at most half the time (as the 1 ms
 * timestamps allow). The smallest of the pairs: a full FIFO drops what
 * the device sent, and a pair across such a loss comes out too high;
 * the timestamps' resolution costs a pair 1-2 %. With @floor_pct, a pair
 * below floor_pct of the window's first and last probe as one pair does
 * not count: one probe that jitter delayed makes its pair far too low
 * (LONG measured at 12.3 Mbit/s for 19.2 in the testbed, on a host whose
 * CPU was contended: the first top that low for 10 s), and over the whole
 * window the same delay counts for a quarter as much. Without such a
 * pair: the whole window, what the device sent over it, or @fallback. A
 * pair over which the device sent less than @busy_bps does not count
 * (the link was not kept busy by it), nor a window rate below it: then 0,
 * no estimate.
 */
/* The capacity between tunnel @t's samples @o and @w (sent in that
 * order; capacity_of()), 0 when they do not both see the queue or the
 * device sent less than @busy_bps between them. */
static uint64_t pair_capacity(const struct spill *s, enum spill_tunnel t,
			      unsigned int o, unsigned int w, uint64_t busy_bps)
{
	const struct spill_delay *d = &s->d[t];
	uint64_t b0, b1, span = d->sent_ns[w] - d->sent_ns[o],
		 seen = delay_base(d) + QUEUE_SEEN_NS;
	int64_t dq;

	if (!span || d->rtt_ns[o] < seen || d->rtt_ns[w] < seen)
		return 0;
	bytes_at(s, t, o, &b0);
	bytes_at(s, t, w, &b1);
	if (b1 < b0 || (b1 - b0) * 8 * SPILL_NS_PER_S / span < busy_bps)
		return 0;
	dq = (int64_t)d->rtt_ns[w] - (int64_t)d->rtt_ns[o];
	if (dq < -(int64_t)(span / 1000000 * GROWTH_MIN_PPM))
		dq = -(int64_t)(span / 1000000 * GROWTH_MIN_PPM);
	return (b1 - b0) * 8 * SPILL_NS_PER_S / (span + dq);
}

static uint64_t capacity_of(const struct spill *s, enum spill_tunnel t,
			    uint64_t now, uint64_t window, uint64_t fallback,
			    uint64_t busy_bps, unsigned int floor_pct)
{
	const struct spill_delay *d = &s->d[t];
	unsigned int i, j, n = 0, idx[SPILL_RECENT];
	uint64_t b, c, best = 0, whole = 0;

	for (i = 0; i < d->n; i++) {	/* in the window, by send time */
		if (d->at_ns[i] + window < now || !bytes_at(s, t, i, &b))
			continue;
		for (j = n++; j && d->sent_ns[idx[j - 1]] > d->sent_ns[i]; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	if (floor_pct) {	/* the first and last probes that see the
				 * queue */
		uint64_t seen = delay_base(d) + QUEUE_SEEN_NS;

		for (i = 0; i < n && d->rtt_ns[idx[i]] < seen; i++)
			;
		for (j = n; j > i + 2 && d->rtt_ns[idx[j - 1]] < seen; j--)
			;
		if (j > i + 2)
			whole = pair_capacity(s, t, idx[i], idx[j - 1],
					      busy_bps);
	}
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

/* A new capacity estimate @c. One below DOUBT_PCT of the reference (the
 * highest estimate or start-up ceiling since the generation's start, a
 * restart or the last check) is doubted: a capacity rarely drops by a
 * quarter, and jitter that stands for a few probes while the spilled
 * flows send less than the top makes such an estimate of what the device
 * happened to send (in the testbed, 11.25 and 15.06 Mbit/s on a SHORT of
 * about 19, after LONG's capacity of 19.3 and 20.7 had served as C; the
 * bulk got 0.71 of both tunnels). Under a top the device fills, each
 * such back-off takes a little less than the top for C, and the top is
 * 0.95 x C: steps of a tenth add up, so the reference is not the last
 * estimate (in the testbed 19.33, 12.20, then 13.25, 6.88, 4.50 ... 2.23
 * Mbit/s on a SHORT of 19). A doubted estimate is checked once SHORT has
 * been calm for a while (adapt_rate()); one within DOUBT_PCT of the
 * reference ends the doubt; the check's own becomes the reference. */
static void set_cap(struct spill *s, uint64_t c)
{
	uint64_t ref = s->ref_bps ? s->ref_bps : s->cap_bps ? s->cap_bps
							    : s->ceil_bps;

	if (s->checking) {
		s->ref_bps = c;
		s->doubt_bps = 0;
	} else if (ref && c * 100 < ref * DOUBT_PCT) {
		s->doubt_bps = ref;
		s->ref_bps = ref;
	} else {
		s->doubt_bps = 0;
		s->ref_bps = c > ref ? c : ref;
	}
	s->checking = false;
	s->cap_bps = c;
}

/* What SHORT's device was let send: the top; while the top is open, the
 * class's rate and the short traffic's recent peak. (Not the class's rate
 * under a top: a back-off on someone else's queue cuts it, and the next
 * would then find the device "busy" at what it let itself send.) */
static uint64_t let_send_bps(const struct spill *s)
{
	uint64_t top = top_bps(s);

	return top < s->p.rate_max_bps ? top : s->rate_bps + s->short_env_bps;
}

/*
 * SHORT's capacity now that its queue builds, over its last probes; 0
 * when the queue is not the device's own: it sent less than BUSY_PCT of
 * what it was let send between the probes that saw it. Such a queue is
 * jitter in the path or cross traffic in the underlay, and what the device
 * sent measures nothing: in the testbed, a 6 ms sample right after a
 * grant (the class held, 0.57 Mbit/s sent) became a capacity of 0.57
 * Mbit/s, and the top, which holds short traffic too, went down to 0.1
 * Mbit/s with it: short flows waited seconds on the router.
 */
static uint64_t capacity(const struct spill *s, uint64_t now,
			 uint64_t fallback, unsigned int busy_pct)
{
	return capacity_of(s, SPILL_SHORT, now,
			   filter_window(s, GROWTH_INTERVALS), fallback,
			   let_send_bps(s) * busy_pct / 100, 0);
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
	s->rate_bps = clamp_rate(s, contrib * beta / 100);
	s->last_backoff_ns = now;
	s->qd_backoff_ns = qd;
	s->calm_since_ns = now;
	s->backoffs++;
	if (c) {
		say(s, "SHORT queue %.1f ms > %.1f ms: rate %.2f -> %.2f Mbit/s (SHORT carried %.2f: capacity estimate)",
		    ms(qd), ms(s->p.target_ns), mbit(old), mbit(s->rate_bps),
		    mbit(c));
		return;
	}
	s->backoffs_foreign++;
	say(s, "SHORT queue %.1f ms > %.1f ms: rate %.2f -> %.2f Mbit/s (not SHORT's own queue: it sent less than %d %% of %.2f; top kept)",
	    ms(qd), ms(s->p.target_ns), mbit(old), mbit(s->rate_bps),
	    BUSY_PCT, mbit(let_send_bps(s)));
}

/* SHORT's queue at @qd under the top (half the target: the newest probe
 * while the probe runs, the filtered delay else): the top is above C (the
 * probe found it, or an estimate was made on a queue seen late). C as at
 * a back-off, the probe starts again from 0. Only while the top is full
 * (the device sent FULL_PCT of it between the probes): a queue below the
 * target under a top the device does not fill is not the top's doing,
 * and an estimate from it is what the device happened to send. In the
 * testbed, probe delays of 2.5-4.8 ms that the WAN's bottleneck never
 * held (it delayed no packet) cut the top seven times in a row on both
 * routers, each time to about 0.8 x, from 18.2 to 3.4 Mbit/s. */
static void top_above_capacity(struct spill *s, uint64_t now, uint64_t qd,
			       const char *how)
{
	uint64_t old = top_bps(s), c = capacity(s, now, old, FULL_PCT);

	if (!c)
		return;
	set_cap(s, c);
	s->probe_bps = 0;
	s->rate_bps = clamp_rate(s, top_bps(s));
	s->calm_since_ns = now;
	s->last_backoff_ns = now;
	s->qd_backoff_ns = qd;
	s->backoffs++;
	say(s, "SHORT queue %.1f ms %s: top %.2f -> %.2f Mbit/s (capacity estimate %.2f)",
	    ms(qd), how, mbit(old), mbit(top_bps(s)), mbit(s->cap_bps));
}

/* C, the top and R from SHORT's queueing delay (state RUN). */
static void adapt_rate(struct spill *s, uint64_t now)
{
	uint64_t qd, qd1, qd3, react, tgt, step, calm, old = s->rate_bps;

	if (!queue_delay(s, SPILL_SHORT, now,
			 filter_window(s, SHORT_FILTER_INTERVALS), &qd))
		return;		/* SHORT unanswered: hold R, health decides */
	/* nothing spilled yet in this generation: SHORT's queue is short
	 * traffic's (or jitter), not the class's; it only delays the first
	 * grant (which needs SHORT calm). A back-off then left R at
	 * rate-min and a capacity of what short traffic sent (2.3 Mbit/s in
	 * the testbed), and no grant came for the rest of the run. */
	if (!s->grants_taken_gen)
		return;
	if (qd > s->p.target_ns) {
		/* again only when two probes sent after the last back-off
		 * see the queue still growing (so the effect of the last
		 * one shows first), or three RTTs on not smaller */
		react = s->d[SPILL_SHORT].rtt_last_ns + s->p.interval_ns;
		if (s->backoffs && !rising(s, 2, s->last_backoff_ns) &&
		    (now - s->last_backoff_ns < 3 * react ||
		     qd < s->qd_backoff_ns))
			return;
		backoff(s, now, qd);
		return;
	}
	/* a queue standing under the top: in each of the last three probes
	 * (the window its growth is measured over); two let the testbed's
	 * jitter through (2.7 and 4.6 ms, then 3.3 and 4.8 ms: the top cut
	 * from 10.96 to 8.65 Mbit/s on a SHORT of 19) */
	queue_delay(s, SPILL_SHORT, now, filter_window(s, GROWTH_INTERVALS), &qd3);
	if (s->cap_bps && !spill_idle(s) && qd3 > s->p.target_ns / 2 &&
	    now - s->last_backoff_ns >= 3 * (s->d[SPILL_SHORT].rtt_last_ns +
					     s->p.interval_ns) &&
	    queue_growth_ppm(s, now, filter_window(s, GROWTH_INTERVALS)) >
		    -(int64_t)DRAIN_PPM) {
		top_above_capacity(s, now, qd3, "standing under the top");
		return;
	}
	/* with an estimate, R follows the top: the HTB gives the spilled
	 * class what short traffic leaves of it, at packet time; while the
	 * class is idle (the top open), 0.95 x the room beside the short
	 * traffic, for the tick a returning flow sends before the top
	 * closes again */
	tgt = !s->cap_bps ? 0 : spill_idle(s) ? room_bps(s) * KNEE_PCT / 100 : top_bps(s);
	if (s->cap_bps && s->rate_bps > tgt) {
		s->rate_bps = tgt;
		return;
	}
	if (!s->saturated)
		return;		/* SHORT's share is not used: keep it */
	/* the newest probe alone holds R (its queue is to stay small); two
	 * end a probe above C (one is jitter as often as not) */
	queue_delay(s, SPILL_SHORT, now, filter_window(s, 1), &qd1);
	if (s->cap_bps && qd1 > s->p.target_ns / 2) {
		if (s->probe_bps && qd > s->p.target_ns / 2)
			top_above_capacity(s, now, qd,
					   "in two probes: the probe found the capacity");
		return;
	}
	/* a start-up ends at a queue of half the target in the last two
	 * probes, or of the target in the newest when the three newest rose
	 * one after the other (a ramp's queue grows by several ms per tick),
	 * at the rate of two ticks before (HyStart's idea): the probes saw
	 * the queue about that late. Not on one probe alone: a burst of a
	 * few frames fills one probe's 2.5 ms at 20 Mbit/s, and the
	 * testbed's jitter one probe's 5-7 ms (3.4 % of SHORT's probes with
	 * spill off beside PostgreSQL, 1.3 % after two rises); a start-up
	 * ended so took what the device sent for C (11.5 Mbit/s on a SHORT
	 * of 19) */
	if (!s->cap_bps && (qd > s->p.target_ns / 2 ||
			    (qd1 > s->p.target_ns && rising(s, STARTUP_RISES + 1, 0)))) {
		/* C as at a back-off, and R well below it: the probe saw
		 * the queue late, R went on growing meanwhile; a queue
		 * that is not the device's own holds R where it is */
		uint64_t c = capacity(s, now, s->rate_bps * 100 /
					      STARTUP_GAIN_PCT * 100 /
					      STARTUP_GAIN_PCT +
					      s->short_env_bps, BUSY_PCT);

		if (!c)
			return;
		set_cap(s, c);
		s->rate_bps = clamp_rate(s, room_bps(s) * BETA_MAX_PCT / 100);
		s->calm_since_ns = now;
		/* a back-off as far as the next one is concerned: it waits
		 * for probes that see the effect of this one */
		s->last_backoff_ns = now;
		s->qd_backoff_ns = qd1;
		s->backoffs++;
		say(s, "SHORT queue %.1f ms: start-up ends, rate %.2f -> %.2f Mbit/s (capacity estimate %.2f)",
		    ms(qd1), mbit(old), mbit(s->rate_bps), mbit(s->cap_bps));
		return;
	}
	if (ceiled_startup(s) && s->rate_bps >= top_bps(s)) {
		/* the start-up reached its top (0.95 x its ceiling) without
		 * a queue on SHORT: the ceiling is the estimate (LONG's
		 * capacity, or the doubted one: the doubt was wrong); the
		 * probe looks for more */
		s->cap_bps = s->ceil_bps;
		if (s->ref_bps < s->ceil_bps)
			s->ref_bps = s->ceil_bps;
		s->calm_since_ns = now;
		if (s->checking) {
			s->checking = false;
			say(s, "check at the earlier estimate without a SHORT queue: capacity estimate %.2f Mbit/s",
			    mbit(s->cap_bps));
		} else {
			say(s, "start-up at LONG's capacity without a SHORT queue: capacity estimate %.2f Mbit/s",
			    mbit(s->cap_bps));
		}
		return;
	}
	if (!s->cap_bps) {
		if (s->checking && qd1 > s->p.target_ns / 2)
			return;	/* hold R: a queue, or jitter */
		s->rate_bps = clamp_rate(s, s->rate_bps * (s->checking ?
				CHECK_GAIN_PCT : s->restarted ?
				RESTART_GAIN_PCT : STARTUP_GAIN_PCT) / 100);
		return;
	}
	calm = now - s->calm_since_ns;
	if (s->rate_bps + s->cap_bps / 100 < tgt) {
		/* back to the top quickly: the HTB holds short and spilled
		 * traffic together below C */
		step = (tgt - s->rate_bps) / 2;
		if (step < s->cap_bps / 100)
			step = s->cap_bps / 100;
		s->rate_bps = s->rate_bps + step > tgt ? tgt : s->rate_bps + step;
	} else if (s->doubt_bps && calm >= CHECK_CALM_NS) {
		/* a doubted estimate (set_cap()), and no queue since
		 * although the top is full: start-up again from here under
		 * the reference: a SHORT that big gets it back without a
		 * queue; a real drop shows its queue to the ramp again,
		 * once (the check's estimate is the new reference) */
		say(s, "no SHORT queue for %.0f s under an estimate of %.2f Mbit/s, down from %.2f: start-up again, up to that",
		    ms(calm) / 1e3, mbit(s->cap_bps), mbit(s->doubt_bps));
		s->ceil_bps = s->doubt_bps;
		s->doubt_bps = 0;
		s->checking = true;
		s->cap_bps = 0;
		s->probe_bps = 0;
		s->restarted = true;
	} else if (calm >= RESTART_CALM_NS) {
		/* no queue for long although the top is full: the capacity
		 * estimate is too low (it grew, or the last one was made on
		 * noise): find it again from here, the top open meanwhile */
		s->cap_bps = 0;
		s->probe_bps = 0;
		s->ceil_bps = 0;
		s->doubt_bps = 0;
		s->ref_bps = 0;
		s->restarted = true;
		say(s, "no SHORT queue for %.0f s at %.2f Mbit/s: start-up again",
		    ms(RESTART_CALM_NS) / 1e3, mbit(s->rate_bps));
	} else if (calm >= PROBE_WAIT_NS) {
		/* above 0.95 x C slowly, faster the longer it stays calm:
		 * the capacity may have grown; the next probe that sees
		 * half the target ends it (top_above_capacity) */
		unsigned int k = (calm - PROBE_WAIT_NS) / PROBE_CALM_NS;

		s->probe_bps += s->cap_bps * (PROBE_GAIN_PPM <<
				(k < PROBE_DOUBLINGS ? k : PROBE_DOUBLINGS)) /
				1000000;
		s->rate_bps = top_bps(s);
	}
	s->rate_bps = clamp_rate(s, s->rate_bps);
}

/* Does one spilled frame fit SHORT's path? A short packet may find one
 * in service on SHORT's WAN link: at most frame_share of SHORT's least RTT
 * (its capacity estimate, else LONG's as the grant is due; a path with
 * neither is let spill). Says why, once per generation, when it does not. */
static bool frame_fits(struct spill *s)
{
	uint64_t c = s->cap_bps ? s->cap_bps : s->long_cap_bps;
	uint64_t rtt = spill_rtt_min_ns(s, SPILL_SHORT), frame_ns;

	if (!s->p.frame_share_pct || !c)
		return true;
	frame_ns = SPILL_FRAME_BYTES * 8 * SPILL_NS_PER_S / c;
	if (frame_ns * 100 <= rtt * s->p.frame_share_pct)
		return true;
	if (!s->frame_gated) {
		s->frame_gated = true;
		say(s, "no grant: a frame at %.2f Mbit/s takes %.2f ms, over %u %% of SHORT's least RTT %.2f ms (frame-share)",
		    mbit(c), ms(frame_ns), s->p.frame_share_pct, ms(rtt));
	}
	return false;
}

/* RUN: is a grant due? Says why when it is. */
static bool grant_due(struct spill *s, uint64_t now,
		      const struct spill_obs *o)
{
	uint64_t qd_l, qd_s;
	unsigned int k;

	if (now - s->last_close_ns < s->p.grant_gap_ns ||
	    s->rate_bps < RATE_MIN_GRANT_FACTOR * s->p.rate_min_bps)
		return false;
	k = queue_delay(s, SPILL_LONG, now,
			filter_window(s, LONG_FILTER_INTERVALS), &qd_l);
	if (k < LONG_MIN_SAMPLES || qd_l <= s->p.long_target_ns)
		return false;	/* LONG has headroom (or is not measured) */
	if (!queue_delay(s, SPILL_SHORT, now,
			 filter_window(s, SHORT_FILTER_INTERVALS), &qd_s) ||
	    qd_s > s->p.target_ns / 2)
		return false;	/* SHORT is not calm */
	if (s->used_avg_bps * 100 >= s->rate_bps * ROOM_PCT ||
	    o->spill_backlog_bytes >= FULL_BACKLOG_BYTES ||
	    (s->last_full_ns && now - s->last_full_ns < ROOM_FOR_NS))
		return false;	/* the spilled flows use the class already
				 * (or did within a second: a start-up) */
	/* LONG was busy all along (a standing queue): its capacity is what
	 * it carried less its queue's growth, over the same probes (one
	 * tick alone is noisy: the queue drains after a loss) */
	s->long_cap_bps = capacity_of(s, SPILL_LONG, now,
				      filter_window(s, LONG_FILTER_INTERVALS),
				      s->long_bps, 0, LONG_FLOOR_PCT);
	if (!frame_fits(s))
		return false;
	say(s, "LONG queue %.1f ms > %.1f ms (capacity %.2f Mbit/s), SHORT queue %.1f ms, class %.2f of %.2f Mbit/s: hold, then grant",
	    ms(qd_l), ms(s->p.long_target_ns), mbit(s->long_cap_bps), ms(qd_s),
	    mbit(s->used_avg_bps), mbit(s->rate_bps));
	return true;
}

static void start(struct spill *s, uint64_t now)
{
	s->gen = s->gen == UINT16_MAX ? 1 : s->gen + 1;
	s->rate_bps = clamp_rate(s, s->p.rate_init_bps);
	s->cap_bps = 0;
	s->probe_bps = 0;
	s->saturated = false;
	s->last_full_ns = 0;
	s->grants_taken_gen = 0;
	s->restarted = false;
	s->ceil_bps = 0;
	s->doubt_bps = 0;
	s->ref_bps = 0;
	s->checking = false;
	s->frame_gated = false;
	s->used_avg_bps = 0;
	s->backoffs = 0;
	s->backoffs_foreign = 0;
	s->calm_since_ns = now;
	s->last_close_ns = now - s->p.grant_gap_ns;
	set_state(s, SPILL_RUN, now);
	say(s, "generation %u: nothing spilled, rate %.2f Mbit/s",
	    s->gen, mbit(s->rate_bps));
}

/* The grant is closed (taken or withdrawn): hold the class until LONG's
 * queue has drained. */
static void close_grant(struct spill *s, uint64_t now)
{
	s->hold_ns = hold_for(s, now);
	s->release_ns = now + s->hold_ns;
	s->last_close_ns = now;
	set_state(s, SPILL_HOLD, now);
}

void spill_tick(struct spill *s, uint64_t now_ns, const struct spill_obs *o,
		struct spill_act *a)
{
	uint64_t now = now_ns;

	s->changed = false;
	observe(s, now, o);
	if (!o->usable) {
		if (s->state != SPILL_OFF) {
			set_state(s, SPILL_OFF, now);
			say(s, "generation %u ended: spill disabled, a tunnel not up, or a failover in force",
			    s->gen);
		}
	} else if (s->state == SPILL_OFF) {
		start(s, now);
	}
	if (o->taken > s->grants)
		s->grants = o->taken;	/* taken never passes grants; a reset */
	switch (s->state) {
	case SPILL_OFF:
		break;
	case SPILL_RUN:
		adapt_rate(s, now);
		if (grant_due(s, now, o))
			set_state(s, SPILL_HOLD_WAIT, now);
		break;
	case SPILL_HOLD_WAIT:
		if (!o->held)
			break;
		if (!s->cap_bps &&
		    s->long_cap_bps / START_LONG_DIV > s->rate_bps) {
			/* the first flow: LONG carries what it can, SHORT is
			 * likely to carry as much; start from a quarter */
			s->rate_bps = clamp_rate(s, s->long_cap_bps /
						    START_LONG_DIV);
		}
		if (!s->cap_bps && !s->restarted && !s->ceil_bps)
			s->ceil_bps = s->long_cap_bps;
		s->taken_at_grant = o->taken;
		s->grants = o->taken + 1;
		set_state(s, SPILL_GRANT, now);
		break;
	case SPILL_GRANT:
		if (o->taken > s->taken_at_grant) {
			s->grants_taken++;
			s->grants_taken_gen++;
			close_grant(s, now);
			say(s, "grant taken: held %.0f ms for LONG's queue to drain",
			    ms(s->hold_ns));
		} else if (now - s->state_since_ns >= GRANT_TIMEOUT_NS) {
			/* no long data packet came: withdraw, and hold in case
			 * one took it between our read of taken and now */
			s->grants = o->taken;
			s->grants_withdrawn++;
			close_grant(s, now);
			say(s, "grant not taken in %.0f ms: withdrawn",
			    ms(GRANT_TIMEOUT_NS));
		}
		break;
	case SPILL_HOLD:
		if (s->grants == s->taken_at_grant && o->taken == s->grants) {
			/* withdrawn and still untaken: nothing moved */
			set_state(s, SPILL_RUN, now);
		} else if (now >= s->release_ns) {
			set_state(s, SPILL_RUN, now);
		}
		break;
	}
	a->state = s->state;
	a->gen = s->state == SPILL_OFF ? 0 : s->gen;
	a->grants = s->grants;
	a->hold = s->state == SPILL_HOLD_WAIT || s->state == SPILL_GRANT ||
		  s->state == SPILL_HOLD;
	a->rate_bps = s->rate_bps;
	a->top_bps = top_bps(s);
	a->changed = s->changed;
	snprintf(a->why, sizeof(a->why), "%s", s->why);
}
