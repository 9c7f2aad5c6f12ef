// SPDX-License-Identifier: GPL-2.0
/*
 * dup_ctl.c - when the short class's copy should be on (dup_agent.h):
 * pure, on the caller's clock. One call per step (DUP_STEP_NS apart).
 */
#include <string.h>

#include "dup_agent.h"

void dup_ctl_init(struct dup_ctl *c)
{
	memset(c, 0, sizeof(*c));
}

/* The ratio in parts per million; 0 of 0: 0 (nothing known). */
static uint32_t ratio_ppm(uint32_t lost, uint32_t len)
{
	return len ? (uint32_t)((uint64_t)lost * 1000000 / len) : 0;
}

/* Misses counted since the last step; a total that went back (a new
 * prober) starts over. */
static uint64_t missed_since(uint64_t *prev, uint64_t now_total)
{
	uint64_t d = now_total >= *prev ? now_total - *prev : 0;

	*prev = now_total;
	return d;
}

/* SHORT's misses of the previous step count as lone when LONG missed
 * nothing in that step nor the ones either side of it: a miss is counted
 * at its timeout, which differs between the tunnels by up to a step. */
static uint32_t lone_losses(struct dup_ctl *c, const struct dup_loss *l)
{
	uint64_t ds = missed_since(&c->missed_prev[DUP_SHORT], l->missed[DUP_SHORT]);
	bool dl = missed_since(&c->missed_prev[DUP_LONG], l->missed[DUP_LONG]) > 0;
	uint64_t judged = c->short_pending;
	bool both = c->long_lost[0] || c->long_lost[1] || dl;

	c->short_pending = ds;
	c->long_lost[0] = c->long_lost[1];
	c->long_lost[1] = dl;
	return both ? 0 : (uint32_t)(judged < DUP_ON_RING ? judged : DUP_ON_RING);
}

bool dup_ctl_tick(struct dup_ctl *c, const struct dup_loss *l, uint64_t now_ns)
{
	bool was = c->want;
	uint32_t n, i, recent = 0;
	int t;

	for (t = 0; t < DUP_TUNNELS; t++) {
		c->lost[t] = l->lost[t];
		c->len[t] = l->len[t];
		c->loss_ppm[t] = ratio_ppm(l->lost[t], l->len[t]);
	}
	if (!c->primed) {
		/* the first step sets where the totals start */
		memcpy(c->missed_prev, l->missed, sizeof(c->missed_prev));
		c->primed = true;
		return false;
	}
	n = lone_losses(c, l);
	for (i = 0; i < n; i++) {
		c->lone_ns[c->lone_pos] = now_ns;
		c->lone_pos = (c->lone_pos + 1) % DUP_ON_RING;
	}
	c->lone_total += n;
	if (n)
		c->lone_last_ns = now_ns;
	for (i = 0; i < DUP_ON_RING; i++)
		recent += c->lone_ns[i] && now_ns - c->lone_ns[i] <= l->window_ns;
	c->losing = recent >= DUP_ON_LOST;
	c->quiet_ns = DUP_QUIET_WINDOWS * l->window_ns;
	/* on at DUP_ON_LOST lone losses in a window; then held by any lone
	 * loss within the quiet time */
	c->want =
		c->losing || (c->want && c->lone_last_ns && now_ns - c->lone_last_ns < c->quiet_ns);
	return c->want != was;
}

bool dup_ctl_copy(const struct dup_ctl *c, int mode)
{
	return mode == DUP_COPY_ON || (mode == DUP_COPY_AUTO && c->want);
}

/* How long the copy stays on without further loss (auto, on now). */
uint64_t dup_ctl_quiet_left(const struct dup_ctl *c, uint64_t now_ns)
{
	if (c->losing || !c->want || !c->lone_last_ns || now_ns - c->lone_last_ns >= c->quiet_ns)
		return 0;
	return c->quiet_ns - (now_ns - c->lone_last_ns);
}
