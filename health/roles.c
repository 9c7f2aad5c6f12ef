// SPDX-License-Identifier: GPL-2.0
/*
 * roles.c - the roles controller (roles.h): which tunnel carries the short
 * class, from the two tunnels' quality (quality.h) and states, with a
 * margin, a sustain time and a doubling hold-down. No clock, no I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "roles.h"

void roles_params_default(struct roles_params *p)
{
	*p = (struct roles_params){
		.mode = ROLES_DEF_MODE,
		.margin_pct = ROLES_DEF_MARGIN_PCT,
		.margin_abs_ns = ROLES_DEF_MARGIN_ABS_NS,
		.sustain_ns = ROLES_DEF_SUSTAIN_NS,
		.hold_min_ns = ROLES_DEF_HOLD_MIN_NS,
		.hold_max_ns = ROLES_DEF_HOLD_MAX_NS,
	};
}

int roles_params_check(const struct roles_params *p, const char **field)
{
	const char *bad = NULL;

	if (p->mode != ROLES_FIXED && p->mode != ROLES_AUTO)
		bad = "roles";
	else if (p->margin_pct > ROLES_MAX_MARGIN_PCT)
		bad = "roles-margin";
	else if (p->margin_abs_ns > ROLES_MAX_NS)
		bad = "roles-margin-abs";
	else if (p->sustain_ns > ROLES_MAX_NS)
		bad = "roles-sustain";
	else if (p->hold_min_ns > ROLES_MAX_NS)
		bad = "roles-hold-min";
	else if (p->hold_max_ns < p->hold_min_ns || p->hold_max_ns > ROLES_MAX_NS)
		bad = "roles-hold-max";
	else if (p->sla_delay_ns > ROLES_MAX_NS)
		bad = "roles-sla-delay";
	else if (!(p->sla_loss_pct >= 0 && p->sla_loss_pct <= 100))
		bad = "roles-sla-loss";
	else if (p->sla_jitter_ns > ROLES_MAX_NS)
		bad = "roles-sla-jitter";
	if (field)
		*field = bad;
	return bad ? -EINVAL : 0;
}

const char *roles_cause_name(enum roles_cause c)
{
	static const char *const name[ROLES_CAUSES] = {
		"none", "base", "queue", "loss", "sla", "recovered", "failover",
	};

	return c < ROLES_CAUSES ? name[c] : "?";
}

void roles_init(struct roles *r, const struct roles_params *p, uint64_t now_ns)
{
	memset(r, 0, sizeof(*r));
	r->params = *p;
	r->want_since_ns = now_ns;
}

struct health_plan roles_plan(struct health_plan plan, bool swapped)
{
	if (swapped && plan.action == HEALTH_PLAN_ROUTE && plan.short_via == HEALTH_VIA_SHORT &&
	    plan.long_via == HEALTH_VIA_LONG) {
		plan.short_via = HEALTH_VIA_LONG;
		plan.long_via = HEALTH_VIA_SHORT;
	}
	return plan;
}

/* Whether tunnel t breaks a configured SLA threshold, as seen now. */
static bool sla_broken(const struct roles_params *p, const struct quality *q, uint64_t seen_ns)
{
	return (p->sla_delay_ns && seen_ns > p->sla_delay_ns) ||
	       (p->sla_loss_pct > 0 && quality_loss_counted(q) * 100 > p->sla_loss_pct) ||
	       (p->sla_jitter_ns && quality_jitter_ns(q) > p->sla_jitter_ns);
}

/* What makes the configured SHORT worse: its longer path, its queue, or
 * its loss (the largest part). */
static enum roles_cause worse_by(const struct roles_input *in)
{
	const struct quality *s = in->q[HEALTH_SHORT], *l = in->q[HEALTH_LONG];
	uint64_t bs = quality_base_ns(s), bl = quality_base_ns(l);
	uint64_t base = bs > bl ? bs - bl : 0, queue = quality_queue_ns(s),
		 loss = quality_loss_penalty_ns(s);

	if (loss >= queue && loss >= base)
		return ROLES_CAUSE_LOSS;
	return queue >= base ? ROLES_CAUSE_QUEUE : ROLES_CAUSE_BASE;
}

/* The roles wished for now (true: swapped), and why. */
static bool wish(struct roles *r, const struct roles_input *in, uint64_t now_ns,
		 enum roles_cause *cause)
{
	const struct roles_params *p = &r->params;
	bool sla = p->sla_delay_ns || p->sla_loss_pct > 0 || p->sla_jitter_ns;
	bool broken[HEALTH_TUNNELS];
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		/* as the short class would find each, without our traffic:
		 * our bulk on the long class's tunnel, spill's on SHORT */
		r->seen_ns[t] = quality_judged_ns(in->q[t], in->busy[t], now_ns);
		broken[t] = sla && sla_broken(p, in->q[t], r->seen_ns[t]);
	}
	if (in->loss_covered) {
		uint64_t lp = quality_loss_penalty_ns(in->q[HEALTH_SHORT]);
		uint64_t *seen = &r->seen_ns[HEALTH_SHORT];

		*seen = *seen > lp ? *seen - lp : 0;
	}
	if (broken[HEALTH_SHORT] != broken[HEALTH_LONG]) {
		*cause = ROLES_CAUSE_SLA;
		return broken[HEALTH_SHORT];
	}
	if (r->seen_ns[HEALTH_SHORT] > r->seen_ns[HEALTH_LONG] +
					       r->seen_ns[HEALTH_LONG] * p->margin_pct / 100 +
					       p->margin_abs_ns) {
		*cause = worse_by(in);
		return true;
	}
	*cause = ROLES_CAUSE_RECOVERED;
	return false;
}

bool roles_step(struct roles *r, const struct roles_input *in, uint64_t now_ns)
{
	const struct roles_params *p = &r->params;
	enum roles_cause cause;
	uint64_t sustain;
	bool want, retake;
	int t;

	/* the misses a failover acted on leave the loss window at its end */
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		if (in->state[t] == HEALTH_DOWN)
			quality_down(in->q[t], now_ns);
		else if (in->state[t] == HEALTH_UP)
			quality_up(in->q[t]);
	}
	if (p->mode == ROLES_FIXED) {
		if (quality_ready(in->q[HEALTH_SHORT]) && quality_ready(in->q[HEALTH_LONG]))
			wish(r, in, now_ns, &cause);	/* the view only */
		want = r->swapped;
		r->swapped = r->want = false;
		r->cause = ROLES_CAUSE_NONE;
		return want;
	}
	if (in->state[HEALTH_SHORT] != HEALTH_UP || in->state[HEALTH_LONG] != HEALTH_UP) {
		/* a failover wins: the configured roles, at once; no move of
		 * the roles' own (health's hold-down makes the tunnel that
		 * returns prove itself) */
		want = r->swapped;
		r->want = r->swapped = false;
		r->want_since_ns = now_ns;
		if (want) {
			r->cause = ROLES_CAUSE_FAILOVER;
			r->moves[ROLES_CAUSE_FAILOVER]++;
		}
		return want;
	}
	if (!quality_ready(in->q[HEALTH_SHORT]) || !quality_ready(in->q[HEALTH_LONG]))
		return false;
	want = wish(r, in, now_ns, &cause);
	if (want == r->swapped) {
		r->want = want;
		r->want_since_ns = now_ns;
		if (!r->swapped)
			r->cause = ROLES_CAUSE_NONE;
		return false;
	}
	if (want != r->want) {
		r->want = want;
		r->want_since_ns = now_ns;
	}
	r->want_cause = cause;
	/* leaving the configured roles: the sustain; returning to them: a
	 * recovery holds longer, or a brownout's pause looks like one */
	sustain = p->sustain_ns;
	if (!want && sustain < ROLES_RETURN_SUSTAIN_NS)
		sustain = ROLES_RETURN_SUSTAIN_NS;
	/* retaking the roles of the last move, which a failover's reset
	 * undid, undoes no move of the roles: no hold-down holds it */
	retake = r->last_move_ns && want == r->moved_to;
	if (now_ns - r->want_since_ns < sustain || (!retake && now_ns < r->hold_until_ns))
		return false;
	if (r->last_move_ns && now_ns - r->last_move_ns < 2 * r->hold_ns) {
		/* flapping: undoing a move soon after it holds twice as long;
		 * a retake keeps the hold-down as it was */
		if (!retake)
			r->hold_ns = 2 * r->hold_ns > p->hold_max_ns ? p->hold_max_ns
								      : 2 * r->hold_ns;
	} else {
		r->hold_ns = p->hold_min_ns;
	}
	r->last_move_ns = now_ns;
	r->moved_to = want;
	r->hold_until_ns = now_ns + r->hold_ns;
	r->swapped = want;
	r->cause = cause;
	r->moves[cause]++;
	return true;
}

int roles_format(const struct roles *r, const char *const dev[HEALTH_TUNNELS], char *buf,
		 size_t len)
{
	static const char *const why[ROLES_CAUSES] = {
		[ROLES_CAUSE_NONE] = "as configured",
		[ROLES_CAUSE_BASE] = "the other path is shorter",
		[ROLES_CAUSE_QUEUE] = "queueing delay",
		[ROLES_CAUSE_LOSS] = "loss",
		[ROLES_CAUSE_SLA] = "an SLA threshold",
		[ROLES_CAUSE_RECOVERED] = "recovered",
		[ROLES_CAUSE_FAILOVER] = "a failover",
	};
	double s_ms = (double)r->seen_ns[HEALTH_SHORT] / FS_NS_PER_MS;
	double l_ms = (double)r->seen_ns[HEALTH_LONG] / FS_NS_PER_MS;

	if (r->params.mode == ROLES_FIXED)
		return snprintf(buf, len, "roles fixed: short class on %s", dev[HEALTH_SHORT]);
	return snprintf(
		buf, len, "short class on %s (%s: %s); expected delay %s %.2f ms, %s %.2f ms",
		dev[r->swapped ? HEALTH_LONG : HEALTH_SHORT], r->swapped ? "swapped" : "configured",
		r->cause < ROLES_CAUSES ? why[r->cause] : "?", dev[HEALTH_SHORT], s_ms,
		dev[HEALTH_LONG], l_ms);
}

const char *roles_mode_name(int mode)
{
	return mode == ROLES_FIXED ? "fixed" : "auto";
}

void roles_view(const struct roles *r, const struct roles_input *in,
		const char *const dev[HEALTH_TUNNELS], uint64_t now_ns, struct roles_view *v)
{
	int t;

	memset(v, 0, sizeof(*v));
	v->active = true;
	v->mode = r->params.mode;
	v->swapped = r->swapped;
	v->cause = r->cause;
	v->hold_left_ns = r->hold_until_ns > now_ns ? r->hold_until_ns - now_ns : 0;
	memcpy(v->moves, r->moves, sizeof(v->moves));
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const struct quality *q = in->q[t];
		struct roles_tunnel_view *o = &v->t[t];

		o->ready = quality_ready(q);
		o->base_ns = quality_base_ns(q);
		o->queue_ns = quality_queue_ns(q);
		o->jitter_ns = quality_jitter_ns(q);
		o->expected_ns = quality_expected_ns(q);
		o->seen_ns = r->seen_ns[t];
		o->loss = quality_loss_ratio(q);
		o->busy = in->busy[t];
	}
	roles_format(r, dev, v->why, sizeof(v->why));
}

void roles_spill_init(struct roles_spill *rs)
{
	memset(rs, 0, sizeof(*rs));
}

void roles_spill_step(struct roles_spill *rs, const struct roles_spill_obs *o, uint64_t now_ns)
{
	bool foreign = o->foreign_backoffs > rs->foreign_seen;

	rs->foreign_seen = o->foreign_backoffs;
	if (foreign) {
		rs->foreign_until_ns = now_ns + ROLES_SPILL_FOREIGN_NS;
		rs->until_ns = 0;
		return;
	}
	if (o->gen && (o->class_bps > ROLES_SPILL_BPS || o->backlog_bytes))
		rs->until_ns = now_ns + ROLES_SPILL_HANGOVER_NS;
}

bool roles_spill_busy(const struct roles_spill *rs, uint64_t now_ns)
{
	return now_ns < rs->until_ns && now_ns >= rs->foreign_until_ns;
}
