// SPDX-License-Identifier: GPL-2.0
/*
 * dup_ctl.c - when the short class's copy should be on (dup_agent.h):
 * pure, on the caller's clock. SHORT loses by spill's rule, with spill's
 * constants (spill.h, spill_int.h), so that the two agree.
 */
#include <string.h>

#include "dup_agent.h"
#include "spill.h"
#include "spill_int.h"

void dup_ctl_init(struct dup_ctl *c)
{
	memset(c, 0, sizeof(*c));
}

/* The ratio in parts per million; 0 of 0: 0 (nothing known). */
static uint32_t ratio_ppm(uint32_t lost, uint32_t len)
{
	return len ? (uint32_t)((uint64_t)lost * 1000000 / len) : 0;
}

bool dup_ctl_tick(struct dup_ctl *c, const struct dup_loss *l, uint64_t now_ns)
{
	bool was = c->want;
	int t;

	for (t = 0; t < DUP_TUNNELS; t++) {
		c->lost[t] = l->lost[t];
		c->len[t] = l->len[t];
		c->loss_ppm[t] = ratio_ppm(l->lost[t], l->len[t]);
	}
	/* spill_loss_update()'s rule: one lost probe is chance, and LONG
	 * losing alike (its FIFO full of bulk) is not SHORT's fault */
	c->losing = l->lost[DUP_SHORT] >= SPILL_LOSS_MIN_LOST &&
		    c->loss_ppm[DUP_SHORT] >
			    (uint64_t)c->loss_ppm[DUP_LONG] + SPILL_DEF_LOSS_MARGIN_PPM;
	if (c->losing)
		c->losing_last_ns = now_ns;
	/* on at once; off only after LOSS_QUIET_NS without loss: at 1 %
	 * a window of 100 probes holds 2 lost only a quarter of the time */
	c->want = c->losing ||
		  (c->losing_last_ns && now_ns - c->losing_last_ns < LOSS_QUIET_NS);
	return c->want != was;
}

bool dup_ctl_copy(const struct dup_ctl *c, int mode)
{
	return mode == DUP_COPY_ON || (mode == DUP_COPY_AUTO && c->want);
}

/* How long the copy stays on without further loss (auto, on now). */
uint64_t dup_ctl_quiet_left(const struct dup_ctl *c, uint64_t now_ns)
{
	if (c->losing || !c->want || !c->losing_last_ns ||
	    now_ns - c->losing_last_ns >= LOSS_QUIET_NS)
		return 0;
	return LOSS_QUIET_NS - (now_ns - c->losing_last_ns);
}
