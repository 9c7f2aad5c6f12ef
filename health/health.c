// SPDX-License-Identifier: GPL-2.0
/*
 * health.c - the per-tunnel liveness state machine, flap damping, loss and
 * RTT accounting, and the routing plan that follows from two tunnels'
 * states. No clock reads and no I/O: time comes in as an argument, so the
 * same inputs always give the same outputs (tests/unit/test_health.c).
 *
 *   INIT --N misses--> DOWN      INIT --M answers--> UP
 *   UP   --N misses--> DOWN      (a flap: penalty += 1, hold-down starts)
 *   (N is congested_misses while the answers wait in a queue)
 *   DOWN --M answers, and the hold-down over--> UP
 *
 * Damping (docs/health.md): the penalty P decays as P x 2^(-dt / half_life);
 * a flap adds 1 (capped where the hold-down reaches hold_max) and gets the
 * hold-down hold_min x 2^(P - 1), clamped to [hold_min, hold_max]. Going
 * down is never delayed, only the return. Fixed point with exact integer
 * steps instead of libm: the result does not depend on the FPU or libm.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "health.h"

void health_params_default(struct health_params *p)
{
	*p = (struct health_params){
		.interval_ns = HEALTH_DEF_INTERVAL_NS,
		.timeout_ns = 0,
		.down_misses = HEALTH_DEF_DOWN_MISSES,
		.congested_misses = HEALTH_DEF_CONGESTED_MISSES,
		.up_successes = HEALTH_DEF_UP_SUCCESSES,
		.hold_min_ns = HEALTH_DEF_HOLD_MIN_NS,
		.hold_max_ns = HEALTH_DEF_HOLD_MAX_NS,
		.half_life_ns = HEALTH_DEF_HALF_LIFE_NS,
		.loss_window = HEALTH_DEF_LOSS_WINDOW,
		.adaptive_timeout = true,
	};
}

int health_params_check(const struct health_params *p, const char **field)
{
	const char *bad = NULL;

	if (p->interval_ns < HEALTH_MIN_INTERVAL_NS ||
	    p->interval_ns > HEALTH_MAX_INTERVAL_NS)
		bad = "interval";
	else if (p->timeout_ns &&
		 (p->timeout_ns < p->interval_ns / 10 ||
		  p->timeout_ns > HEALTH_MAX_TIMEOUT_INTERVALS * p->interval_ns))
		bad = "timeout";
	else if (p->down_misses < 1 || p->down_misses > HEALTH_MAX_COUNT)
		bad = "down-misses";
	else if (p->congested_misses < 1 || p->congested_misses > HEALTH_MAX_COUNT)
		bad = "congested-misses";
	else if (p->up_successes < 1 || p->up_successes > HEALTH_MAX_COUNT)
		bad = "up-successes";
	else if (p->hold_min_ns > HEALTH_MAX_HOLD_NS)
		bad = "hold-min";
	else if (p->hold_max_ns < p->hold_min_ns ||
		 p->hold_max_ns > HEALTH_MAX_HOLD_NS)
		bad = "hold-max";
	else if (p->half_life_ns < FS_NS_PER_S / 10 ||
		 p->half_life_ns > HEALTH_MAX_HOLD_NS)
		bad = "half-life";
	else if (p->loss_window < 1 || p->loss_window > HEALTH_MAX_LOSS_WINDOW)
		bad = "loss-window";
	if (field)
		*field = bad;
	return bad ? -EINVAL : 0;
}

uint64_t health_timeout_ns(const struct health_params *p)
{
	return p->timeout_ns ? p->timeout_ns : p->interval_ns;
}

uint64_t health_probe_timeout_ns(const struct health *h)
{
	const struct health_params *p = &h->params;
	uint64_t floor_ns = health_timeout_ns(p), rto_ns, cap_ns;

	if (!p->adaptive_timeout || !h->rtt_samples)
		return floor_ns;
	/* RFC 6298 2.3 with its G (here: half the floor) as the least margin
	 * over SRTT, as Linux keeps tcp_rto_min: a steady RTT shrinks RTTVAR
	 * to a few ms, and a hiccup that small must not count as a miss */
	rto_ns = 4 * h->rttvar_ns;
	if (rto_ns < floor_ns / 2)
		rto_ns = floor_ns / 2;
	rto_ns += h->srtt_ns;
	cap_ns = HEALTH_MAX_TIMEOUT_INTERVALS * p->interval_ns;
	if (rto_ns < floor_ns)
		return floor_ns;
	return rto_ns > cap_ns ? cap_ns : rto_ns;
}

enum health_state health_combine(const enum health_state *st, unsigned int n)
{
	bool init = !n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (st[i] == HEALTH_DOWN)
			return HEALTH_DOWN;
		init |= st[i] == HEALTH_INIT;
	}
	return init ? HEALTH_INIT : HEALTH_UP;
}

const char *health_state_name(enum health_state s)
{
	switch (s) {
	case HEALTH_INIT:
		return "init";
	case HEALTH_UP:
		return "up";
	case HEALTH_DOWN:
		return "down";
	}
	return "?";
}

/* 2^(1 / 2^j) in Q32.32, j = 1..16: 2^f for a Q16 fraction f, bit by bit. */
static const uint64_t pow2_frac_q32[16] = {
	0x16a09e668ull, 0x1306fe0a3ull, 0x1172b83c8ull, 0x10b5586d0ull,
	0x1059b0d31ull, 0x102c9a3e7ull, 0x10163daa0ull, 0x100b1afa6ull,
	0x10058c86eull, 0x1002c605eull, 0x100162f39ull, 0x1000b175full,
	0x100058ba0ull, 0x10002c5ccull, 0x1000162e5ull, 0x10000b172ull,
};

/* v x 2^(e / 65536), saturating at UINT64_MAX. */
static uint64_t mul_pow2(uint64_t v, int64_t e_q16)
{
	/* floor division, so the fraction is in [0, 65536) */
	int64_t k = e_q16 >= 0 ? e_q16 / 65536 : -((-e_q16 + 65535) / 65536);
	uint32_t f = (uint32_t)(e_q16 - k * 65536);
	unsigned __int128 x = v;
	int j;

	for (j = 0; j < 16; j++)
		if (f & (0x8000u >> j))
			x = (x * pow2_frac_q32[j]) >> 32;
	if (k < 0)
		x = k <= -128 ? 0 : x >> -k;
	else if (k >= 64 || x > (UINT64_MAX >> k))
		return UINT64_MAX;
	else
		x <<= k;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* The penalty at which the hold-down reaches hold_max: 1 + the number of
 * doublings from hold_min to hold_max (rounded up). */
static uint64_t penalty_max_q16(const struct health_params *p)
{
	uint64_t hold = p->hold_min_ns ? p->hold_min_ns : 1;
	uint64_t k = 0;

	while (hold < p->hold_max_ns && k < 63) {
		hold <<= 1;
		k++;
	}
	return (1 + k) * HEALTH_Q16_ONE;
}

uint64_t health_penalty_q16(const struct health *h, uint64_t now_ns)
{
	uint64_t dt, half = h->params.half_life_ns;

	if (!h->penalty_q16 || now_ns <= h->penalty_at_ns)
		return h->penalty_q16;
	dt = now_ns - h->penalty_at_ns;
	if (dt / half >= 64)
		return 0;
	/* dt x 65536 / half without overflow: whole half-lives, then the rest */
	return mul_pow2(h->penalty_q16,
			-(int64_t)((dt / half) * 65536 +
				   (uint64_t)((unsigned __int128)(dt % half) *
					      65536 / half)));
}

uint64_t health_hold_for_penalty(const struct health_params *p,
				 uint64_t penalty_q16)
{
	uint64_t hold;

	if (penalty_q16 <= HEALTH_Q16_ONE)
		return p->hold_min_ns;
	hold = mul_pow2(p->hold_min_ns,
			(int64_t)(penalty_q16 - HEALTH_Q16_ONE));
	return hold > p->hold_max_ns ? p->hold_max_ns : hold;
}

void health_init(struct health *h, const struct health_params *params,
		 uint64_t now_ns)
{
	memset(h, 0, sizeof(*h));
	h->params = *params;
	h->state = HEALTH_INIT;
	h->since_ns = now_ns;
	h->penalty_at_ns = now_ns;
	h->rtt_min_cur_ns = h->rtt_min_prev_ns = UINT64_MAX;
	h->rtt_min_bucket_ns = now_ns;
}

static void window_push(struct health *h, bool lost)
{
	uint32_t pos = h->window_pos;
	uint64_t bit = 1ull << (pos % 64);

	if (h->window_len == h->params.loss_window)
		h->window_lost -= !!(h->window[pos / 64] & bit);
	else
		h->window_len++;
	if (lost)
		h->window[pos / 64] |= bit;
	else
		h->window[pos / 64] &= ~bit;
	h->window_lost += lost;
	h->window_pos = (pos + 1) % h->params.loss_window;
}

double health_loss_ratio(const struct health *h)
{
	return h->window_len ? (double)h->window_lost / h->window_len : 0.0;
}

static void set_state(struct health *h, enum health_state s, uint64_t now_ns)
{
	h->state = s;
	h->since_ns = now_ns;
	h->transitions++;
}

/* DOWN -> UP when M answers are in and the hold-down is over. */
static bool try_up(struct health *h, uint64_t now_ns)
{
	if (h->successes < h->params.up_successes)
		return false;
	if (h->state == HEALTH_DOWN && now_ns < h->up_not_before_ns)
		return false;
	set_state(h, HEALTH_UP, now_ns);
	return true;
}

/* RFC 6298 2.2/2.3: alpha 1/8, beta 1/4; RTTVAR from the old SRTT. */
static void rto_sample(struct health *h, uint64_t rtt_ns)
{
	uint64_t dev;

	if (!h->rtt_samples++) {
		h->srtt_ns = rtt_ns;
		h->rttvar_ns = rtt_ns / 2;
		return;
	}
	dev = h->srtt_ns > rtt_ns ? h->srtt_ns - rtt_ns : rtt_ns - h->srtt_ns;
	h->rttvar_ns = (3 * h->rttvar_ns + dev) / 4;
	h->srtt_ns = (7 * h->srtt_ns + rtt_ns) / 8;
}

uint64_t health_rtt_min_ns(const struct health *h)
{
	uint64_t m = h->rtt_min_cur_ns < h->rtt_min_prev_ns ? h->rtt_min_cur_ns
							     : h->rtt_min_prev_ns;

	return m == UINT64_MAX ? 0 : m;
}

/* The minimum and the queue estimate from one answer's RTT; now_ns moves
 * the buckets on (a late answer, which has no time of its own, does not). */
static void queue_sample(struct health *h, uint64_t rtt_ns, uint64_t now_ns)
{
	if (now_ns - h->rtt_min_bucket_ns >= HEALTH_RTT_MIN_BUCKET_NS) {
		/* a whole bucket without answers leaves nothing to keep */
		h->rtt_min_prev_ns = now_ns - h->rtt_min_bucket_ns >=
					     2 * HEALTH_RTT_MIN_BUCKET_NS
					     ? UINT64_MAX : h->rtt_min_cur_ns;
		h->rtt_min_cur_ns = UINT64_MAX;
		h->rtt_min_bucket_ns = now_ns;
	}
	if (rtt_ns < h->rtt_min_cur_ns)
		h->rtt_min_cur_ns = rtt_ns;
	/* SRTT, not this sample: one answer delayed by a scheduling hiccup
	 * moves it by an eighth; a queue that holds moves it all the way */
	h->queue_ns = h->srtt_ns > health_rtt_min_ns(h) ? h->srtt_ns - health_rtt_min_ns(h) : 0;
}

bool health_congested(const struct health *h)
{
	return (h->rtt_samples && h->queue_ns > HEALTH_CONGESTED_QUEUE_NS) ||
	       h->path_queue_ns > HEALTH_CONGESTED_QUEUE_NS;
}

uint32_t health_down_misses(const struct health *h)
{
	const struct health_params *p = &h->params;

	return health_congested(h) && p->congested_misses > p->down_misses
		       ? p->congested_misses : p->down_misses;
}

void health_late_answer(struct health *h, uint64_t rtt_ns)
{
	rto_sample(h, rtt_ns);
	queue_sample(h, rtt_ns, h->rtt_min_bucket_ns);
}

bool health_reply(struct health *h, uint64_t now_ns, uint64_t rtt_ns)
{
	h->probes++;
	h->answered++;
	window_push(h, false);
	h->rtt_last_ns = rtt_ns;
	/* TCP's SRTT weight: 1/8 of each new sample */
	h->rtt_ewma_ns = h->answered == 1 ? rtt_ns
					  : (7 * h->rtt_ewma_ns + rtt_ns) / 8;
	rto_sample(h, rtt_ns);
	queue_sample(h, rtt_ns, now_ns);
	h->misses = 0;
	if (h->successes < UINT32_MAX)
		h->successes++;
	if (h->state == HEALTH_UP)
		return false;
	return try_up(h, now_ns);
}

/* UP or INIT -> DOWN; from UP a flap: more penalty, a longer hold-down. */
static void go_down(struct health *h, uint64_t now_ns)
{
	uint64_t p, pmax;

	if (h->state == HEALTH_UP) {
		pmax = penalty_max_q16(&h->params);
		p = health_penalty_q16(h, now_ns) + HEALTH_Q16_ONE;
		h->penalty_q16 = p > pmax ? pmax : p;
		h->penalty_at_ns = now_ns;
		h->hold_ns = health_hold_for_penalty(&h->params,
						     h->penalty_q16);
		h->flaps++;
	} else {
		/* INIT -> DOWN: nothing flapped, no hold-down */
		h->hold_ns = 0;
	}
	h->up_not_before_ns = now_ns + h->hold_ns;
	set_state(h, HEALTH_DOWN, now_ns);
}

bool health_miss(struct health *h, uint64_t now_ns)
{
	h->probes++;
	h->missed++;
	window_push(h, true);
	h->successes = 0;
	if (h->misses < UINT32_MAX)
		h->misses++;
	if (h->state == HEALTH_DOWN || h->misses < health_down_misses(h))
		return false;
	go_down(h, now_ns);
	h->link_down = false;
	return true;
}

bool health_link_down(struct health *h, uint64_t now_ns)
{
	/* answers counted before the event prove nothing any more */
	h->successes = 0;
	if (h->state == HEALTH_DOWN)
		return false;
	go_down(h, now_ns);
	h->link_down = true;
	return true;
}

bool health_tick(struct health *h, uint64_t now_ns)
{
	if (h->state != HEALTH_DOWN)
		return false;
	return try_up(h, now_ns);
}

uint64_t health_deadline(const struct health *h)
{
	if (h->state == HEALTH_DOWN &&
	    h->successes >= h->params.up_successes)
		return h->up_not_before_ns;
	return UINT64_MAX;
}

int health_transition_format(const struct health *h, enum health_state from,
			     char *buf, size_t len)
{
	const char *to = health_state_name(h->state);
	double rtt_ms = (double)h->rtt_ewma_ns / FS_NS_PER_MS;
	double loss = 100.0 * health_loss_ratio(h);

	if (h->state == HEALTH_DOWN && h->link_down)
		return snprintf(buf, len, "%s -> %s: link down, flap %llu, "
				"hold-down %.2f s",
				health_state_name(from), to,
				(unsigned long long)h->flaps,
				(double)h->hold_ns / FS_NS_PER_S);
	if (h->state == HEALTH_DOWN)
		return snprintf(buf, len, "%s -> %s after %u misses%s, flap %llu, "
				"hold-down %.2f s, rtt %.2f ms, loss %.1f %%",
				health_state_name(from), to, h->misses,
				health_congested(h) ? " (congested)" : "",
				(unsigned long long)h->flaps,
				(double)h->hold_ns / FS_NS_PER_S, rtt_ms,
				loss);
	return snprintf(buf, len, "%s -> %s after %u answers, rtt %.2f ms, "
			"loss %.1f %%",
			health_state_name(from), to, h->successes, rtt_ms,
			loss);
}

struct health_plan health_plan(enum health_mode mode,
			       enum health_both_down both_down,
			       const enum health_state state[HEALTH_TUNNELS])
{
	bool short_up = state[HEALTH_SHORT] == HEALTH_UP;
	bool long_up = state[HEALTH_LONG] == HEALTH_UP;
	struct health_plan plan = { .action = HEALTH_PLAN_ROUTE };

	if (state[HEALTH_SHORT] == HEALTH_INIT ||
	    state[HEALTH_LONG] == HEALTH_INIT)
		return (struct health_plan){ .action = HEALTH_PLAN_WAIT };
	if (!short_up && !long_up)
		return (struct health_plan){
			.action = both_down == HEALTH_BOTH_DOWN_MAIN ?
					  HEALTH_PLAN_MAIN :
					  HEALTH_PLAN_KEEP,
		};
	if (mode == HEALTH_MODE_ECMP) {
		plan.short_via = (short_up ? HEALTH_VIA_SHORT : 0) |
				 (long_up ? HEALTH_VIA_LONG : 0);
		return plan;
	}
	/* split: a class whose tunnel is down moves to the other one */
	plan.short_via = short_up ? HEALTH_VIA_SHORT : HEALTH_VIA_LONG;
	plan.long_via = long_up ? HEALTH_VIA_LONG : HEALTH_VIA_SHORT;
	return plan;
}
