// SPDX-License-Identifier: GPL-2.0
/*
 * spill_delay.c - the spill controller's delays (spill_int.h): per tunnel,
 * the path minimum over SPILL_BASE_BUCKETS minutes (LEDBAT's base
 * history, RFC 6817), the recent samples, and the filters the controller
 * decides on: a queueing delay is the least sample of a window above the
 * path minimum (one late probe is not a queue), a queue's growth and
 * whether it rose from probe to probe (a queue the device builds grows;
 * jitter comes and goes).
 */
#include <stddef.h>

#include "spill_int.h"

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

uint64_t spill_delay_base(const struct spill_delay *d)
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
unsigned int spill_delay_recent(const struct spill_delay *d, uint64_t from,
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
		spill_reconfigure(s, t == SPILL_SHORT ? SPILL_CHG_KIND_SHORT
						      : SPILL_CHG_KIND_LONG,
				  NULL, now_ns);
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
	return t < SPILL_TUNNELS ? spill_delay_base(&s->d[t]) : 0;
}

uint64_t spill_rtt_min_ns(const struct spill *s, enum spill_tunnel t)
{
	return t < SPILL_TUNNELS ? buckets_min(s->d[t].rtt_base_ns) : 0;
}

/* Tunnel @t's queueing delay: the least of its samples answered in the
 * last @window above its path minimum; the number of those samples. */
unsigned int spill_qd(const struct spill *s, enum spill_tunnel t,
		      uint64_t now, uint64_t window, uint64_t *qd)
{
	uint64_t lo, hi, base = spill_delay_base(&s->d[t]);
	unsigned int k;

	k = spill_delay_recent(&s->d[t], now > window ? now - window : 0, &lo, &hi);
	*qd = k && lo > base ? lo - base : 0;
	return k;
}

bool spill_queue_delay(const struct spill *s, enum spill_tunnel t,
		       uint64_t now_ns, uint64_t window_ns, uint64_t *qd_ns)
{
	return t < SPILL_TUNNELS &&
	       spill_qd(s, t, now_ns, window_ns, qd_ns) > 0;
}

/* A filter window of @n probes: n intervals and half of one. */
uint64_t spill_filter_window(const struct spill *s, unsigned int n)
{
	return n * s->p.interval_ns + s->p.interval_ns / 2;
}

/*
 * How fast SHORT's queue grows, in ppm (queueing time per time): the
 * newest and the oldest of its samples of the last @window. A queue that
 * grows by g seconds per second is fed at (1 + g) times the capacity; one
 * that drains (g < 0) but is still there at the end was fed at (1 + g)
 * times the capacity too, the bottleneck busy all along. 0 when it
 * drained empty (the capacity is then at least what was fed).
 */
int64_t spill_queue_growth_ppm(const struct spill *s, uint64_t now,
			       uint64_t window)
{
	const struct spill_delay *d = &s->d[SPILL_SHORT];
	unsigned int i, old = SPILL_RECENT, new = SPILL_RECENT;
	uint64_t base = spill_delay_base(d);
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
bool spill_rising(const struct spill *s, unsigned int n, uint64_t since)
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
