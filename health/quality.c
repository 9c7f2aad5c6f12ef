// SPDX-License-Identifier: GPL-2.0
/*
 * quality.c - a tunnel's path quality from its probes (quality.h): the
 * windowed minimum, the filtered queue, RFC 3550 jitter, windowed loss
 * and the expected delay of a short request. No clock, no I/O.
 */
#include <string.h>

#include "quality.h"

void quality_init(struct quality *q, uint64_t now_ns)
{
	(void)now_ns;
	memset(q, 0, sizeof(*q));
	q->base_idle.cur_ns = q->base_idle.prev_ns = UINT64_MAX;
	q->base_all = q->base_idle;
}

static void min_push(struct quality_min *m, uint64_t v)
{
	if (m->n == QUALITY_BASE_BUCKET) {
		m->prev_ns = m->cur_ns;
		m->cur_ns = UINT64_MAX;
		m->n = 0;
	}
	m->n++;
	if (v < m->cur_ns)
		m->cur_ns = v;
}

static uint64_t min_of(const struct quality_min *m)
{
	return m->cur_ns < m->prev_ns ? m->cur_ns : m->prev_ns;
}

static void loss_push(struct quality *q, bool lost)
{
	if (q->loss_len == QUALITY_LOSS_WINDOW)
		q->loss_lost -= q->lost[q->loss_pos];
	else
		q->loss_len++;
	q->lost[q->loss_pos] = lost;
	q->loss_lost += lost;
	q->loss_pos = (q->loss_pos + 1) % QUALITY_LOSS_WINDOW;
}

/* The not-busy view moves on with each outcome measured while not busy. */
static void idle_update(struct quality *q, uint64_t now_ns, bool busy)
{
	if (busy || !quality_ready(q))
		return;
	q->idle_extra_ns = quality_expected_ns(q) - quality_base_ns(q);
	q->idle_at_ns = now_ns;
	q->idle_seen = true;
}

void quality_answer(struct quality *q, uint64_t now_ns, uint64_t rtt_ns, bool busy)
{
	uint64_t d;

	min_push(&q->base_all, rtt_ns);
	if (!busy)
		min_push(&q->base_idle, rtt_ns);
	q->recent_ns[q->recent_pos] = rtt_ns;
	q->recent_pos = (q->recent_pos + 1) % QUALITY_QUEUE_SAMPLES;
	if (q->recent_n < QUALITY_QUEUE_SAMPLES)
		q->recent_n++;
	if (q->answers) {
		/* RFC 3550 6.4.1: J += (|D| - J) / 16, kept as 16 J */
		d = rtt_ns > q->rtt_prev_ns ? rtt_ns - q->rtt_prev_ns : q->rtt_prev_ns - rtt_ns;
		q->jitter_q4_ns = q->jitter_q4_ns + d - q->jitter_q4_ns / 16;
	}
	q->rtt_prev_ns = rtt_ns;
	q->answers++;
	q->miss_run = 0;
	loss_push(q, false);
	idle_update(q, now_ns, busy);
}

void quality_lost(struct quality *q, uint64_t now_ns, bool busy)
{
	q->misses++;
	q->miss_run++;
	loss_push(q, true);
	idle_update(q, now_ns, busy);
}

void quality_down(struct quality *q, uint64_t now_ns)
{
	if (q->down)
		return;
	q->down = true;
	q->down_from = q->answers + q->misses - q->miss_run;
	q->down_at_ns = now_ns;
}

void quality_up(struct quality *q)
{
	uint64_t n = q->answers + q->misses, k;
	uint32_t i;

	if (!q->down)
		return;
	q->down = false;
	/* outcome k sits n - k slots before loss_pos; the window holds the
	 * last loss_len of them */
	for (k = n - q->loss_len > q->down_from ? n - q->loss_len : q->down_from; k < n; k++) {
		i = (q->loss_pos + QUALITY_LOSS_WINDOW - (uint32_t)(n - k)) % QUALITY_LOSS_WINDOW;
		q->loss_lost -= q->lost[i];
		q->lost[i] = 0;
	}
	/* the outcomes since it went down were not busy (a tunnel down
	 * carries nothing): the view they gave, without the misses */
	if (q->idle_seen && q->idle_at_ns >= q->down_at_ns && quality_ready(q))
		q->idle_extra_ns = quality_expected_ns(q) - quality_base_ns(q);
}

bool quality_ready(const struct quality *q)
{
	return q->answers >= QUALITY_MIN_ANSWERS;
}

uint64_t quality_base_ns(const struct quality *q)
{
	uint64_t m = min_of(&q->base_idle);

	if (m == UINT64_MAX)
		m = min_of(&q->base_all);
	return m == UINT64_MAX ? 0 : m;
}

uint64_t quality_queue_ns(const struct quality *q)
{
	uint64_t m = UINT64_MAX, base = quality_base_ns(q);
	uint32_t i;

	for (i = 0; i < q->recent_n; i++)
		if (q->recent_ns[i] < m)
			m = q->recent_ns[i];
	return q->recent_n && m > base ? m - base : 0;
}

uint64_t quality_jitter_ns(const struct quality *q)
{
	return q->jitter_q4_ns / 16;
}

double quality_loss_ratio(const struct quality *q)
{
	return q->loss_len ? (double)q->loss_lost / q->loss_len : 0.0;
}

double quality_loss_counted(const struct quality *q)
{
	if (!q->loss_len || q->loss_lost <= QUALITY_LOSS_FORGIVEN)
		return 0.0;
	return (double)(q->loss_lost - QUALITY_LOSS_FORGIVEN) / q->loss_len;
}

uint64_t quality_loss_penalty_ns(const struct quality *q)
{
	uint64_t rtt = quality_base_ns(q) + quality_queue_ns(q);

	return (uint64_t)(quality_loss_counted(q) * (double)(QUALITY_RTO_MIN_NS + rtt));
}

uint64_t quality_expected_ns(const struct quality *q)
{
	return quality_base_ns(q) + quality_queue_ns(q) + quality_loss_penalty_ns(q);
}

uint64_t quality_judged_ns(const struct quality *q, bool busy, uint64_t now_ns)
{
	if (!busy)
		return quality_expected_ns(q);
	if (q->idle_seen && now_ns - q->idle_at_ns < QUALITY_IDLE_MEMORY_NS)
		return quality_base_ns(q) + q->idle_extra_ns;
	return quality_base_ns(q);
}
