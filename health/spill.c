// SPDX-License-Identifier: GPL-2.0
/*
 * spill.c - the spill controller (spill.h; docs/design.md, *Spill*): the
 * tick and the state machine of a generation and its grants. One
 * function per state (enum spill_state):
 *
 *   OFF       -> RUN        the inputs usable (spill on, both tunnels up,
 *                           the plan "both up"): a new generation
 *   RUN       -> HOLD_WAIT  a grant is due (spill_grant_due())
 *   HOLD_WAIT -> GRANT      the class is held: one grant opened
 *   GRANT     -> HOLD       the grant taken, or withdrawn after
 *                           GRANT_TIMEOUT_NS
 *   HOLD      -> RUN        LONG's queue has drained (the hold passed),
 *                           or the withdrawn grant stayed untaken
 *   RUN       -> RETURN     SHORT loses more than LONG (by the margin)
 *                           while flows are spilled in this generation
 *   RETURN    -> RUN        a new generation (the spilled flows long
 *                           again) once in order, or after
 *                           SPILL_RETURN_WAIT_NS; or SHORT's loss is
 *                           back within the margin (the flows stay)
 *   any       -> OFF        the inputs not usable: the generation ends
 *
 * In RUN the rate follows SHORT's queueing delay by its own phase (enum
 * spill_phase, spill_rate.c); in the other states R stays. The other
 * files: spill_delay.c (delays and filters), spill_rate.c (counters,
 * capacity, top and R), spill_grant.c (grants, frame share, the hold).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spill_int.h"

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
		.loss_margin_ppm = SPILL_DEF_LOSS_MARGIN_PPM,
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
	case SPILL_RETURN: return "return";
	case SPILL_STATES: break;
	}
	return "?";
}

const char *spill_phase_name(enum spill_phase p)
{
	switch (p) {
	case SPILL_PHASE_STARTUP: return "start-up";
	case SPILL_PHASE_RESTART: return "restart";
	case SPILL_PHASE_CHECK: return "check";
	case SPILL_PHASE_STEADY: return "steady";
	case SPILL_PHASE_DOUBTED: return "doubted";
	}
	return "?";
}

void spill_say(struct spill *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	s->changed = true;
}

void spill_set_state(struct spill *s, enum spill_state st, uint64_t now)
{
	s->state = st;
	s->state_since_ns = now;
	s->changed = true;
}

void spill_init(struct spill *s, const struct spill_params *p,
		uint64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->state = SPILL_OFF;
	s->phase = SPILL_PHASE_STARTUP;
	s->state_since_ns = now_ns;
	s->last_tick_ns = now_ns;
	s->rate_bps = spill_clamp_rate(s, p->rate_init_bps);
	snprintf(s->why, sizeof(s->why), "not started");
}

/* -> RUN in a new generation: nothing spilled in it (every flow of an
 * older one is long again at its next packet). */
static void new_generation(struct spill *s, uint64_t now)
{
	s->gen = s->gen == UINT16_MAX ? 1 : s->gen + 1;
	s->grants_taken_gen = 0;
	s->frame_gated = false;
	s->loss_gated = false;
	s->last_close_ns = now - s->p.grant_gap_ns;
	spill_set_state(s, SPILL_RUN, now);
}

/* OFF -> RUN: a new generation from the rate's initial state. */
static void start(struct spill *s, uint64_t now)
{
	spill_rate_reset(s, now);
	new_generation(s, now);
	spill_say(s, "generation %u: nothing spilled, rate %.2f Mbit/s",
		  s->gen, spill_mbit(s->rate_bps));
}

/* any -> OFF: the generation ends (gen 0 applied: every spilled flow
 * long again), no hold, no grant open. */
static void stop(struct spill *s, uint64_t now, const char *why)
{
	if (s->state == SPILL_OFF)
		return;
	spill_set_state(s, SPILL_OFF, now);
	spill_say(s, "generation %u ended: %s", s->gen, why);
}

/* The inputs (spill on, both tunnels up, the plan "both up") decide
 * between OFF and a generation, before the state's own step. */
static void inputs(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	if (!o->usable) {
		stop(s, now, "spill disabled, a tunnel not up, or a failover in force");
	} else if (s->state == SPILL_OFF) {
		start(s, now);
	}
	if (o->taken > s->grants)
		s->grants = o->taken;	/* taken never passes grants; a reset */
	spill_loss_update(s, o);
}

/* RUN: R follows SHORT's delay; a grant when due. */
static void state_run(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	spill_adapt_rate(s, now);
	if (s->short_lossy && s->grants_taken_gen) {
		spill_set_state(s, SPILL_RETURN, now);
		spill_say(s,
			  "SHORT loses %.2f %% of probes, LONG %.2f %%: the spilled flows return "
			  "to LONG",
			  s->loss_ppm[SPILL_SHORT] / 1e4, s->loss_ppm[SPILL_LONG] / 1e4);
		return;
	}
	if (spill_grant_due(s, now, o)) {
		s->held_since_ns = now;
		spill_set_state(s, SPILL_HOLD_WAIT, now);
	}
}

/* HOLD_WAIT: once the class is held (its burst spent), open one grant;
 * not held within GRANT_TIMEOUT_NS: no grant, back to RUN (the hold's
 * bound counts from here). */
static void state_hold_wait(struct spill *s, uint64_t now,
			    const struct spill_obs *o)
{
	if (!o->held) {
		if (now - s->held_since_ns < GRANT_TIMEOUT_NS)
			return;
		s->last_close_ns = now;
		spill_set_state(s, SPILL_RUN, now);
		spill_say(s, "the class not held in %.0f ms: no grant",
			  spill_ms(GRANT_TIMEOUT_NS));
		return;
	}
	spill_rate_grant(s);
	s->taken_at_grant = o->taken;
	s->grants = o->taken + 1;
	spill_set_state(s, SPILL_GRANT, now);
}

/* GRANT: close it when taken; withdraw it when no long data packet came
 * in GRANT_TIMEOUT_NS (and hold in case one took it between our read of
 * taken and now). */
static void state_grant(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	if (o->taken > s->taken_at_grant) {
		s->grants_taken++;
		s->grants_taken_gen++;
		spill_grant_close(s, now);
		spill_say(s, "grant taken: held %.0f ms for LONG's queue to drain",
			  spill_ms(s->hold_ns));
	} else if (now - s->state_since_ns >= GRANT_TIMEOUT_NS) {
		s->grants = o->taken;
		s->grants_withdrawn++;
		spill_grant_close(s, now);
		spill_say(s, "grant not taken in %.0f ms: withdrawn",
			  spill_ms(GRANT_TIMEOUT_NS));
	}
}

/* HOLD: the class sends nothing until the hold has passed; a withdrawn
 * grant still untaken moved nothing: no need to wait. */
static void state_hold(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	if (s->grants == s->taken_at_grant && o->taken == s->grants)
		spill_set_state(s, SPILL_RUN, now);
	else if (now >= s->release_ns)
		spill_set_state(s, SPILL_RUN, now);
}

/* RETURN: R as in RUN, no grant; a new generation (every flow of this
 * one long again) once that is in order (spill_return_in_order()), or
 * after SPILL_RETURN_WAIT_NS without that moment; back to RUN, the flows
 * kept, when SHORT's loss is back within the margin. */
static void state_return(struct spill *s, uint64_t now,
			 const struct spill_obs *o)
{
	uint16_t gen = s->gen;
	bool in_order;

	spill_adapt_rate(s, now);
	if (!s->short_lossy) {
		spill_set_state(s, SPILL_RUN, now);
		spill_say(s, "SHORT's loss back within %.2f %% of LONG's: the spilled flows stay",
			  s->p.loss_margin_ppm / 1e4);
		return;
	}
	in_order = spill_return_in_order(s, now, o);
	if (!in_order && now - s->state_since_ns < SPILL_RETURN_WAIT_NS)
		return;
	s->returned_in_order = in_order;
	/* the rate stays: what the returned flows left in the class drains
	 * at it (the order above counts on that), and SHORT is the same */
	new_generation(s, now);
	spill_say(s, "generation %u: the flows spilled in %u returned to LONG (%s)", s->gen, gen,
		  in_order
			  ? "in order: LONG's least delay above SHORT's worst and the class's queue"
			  : "not known to be in order: no moment found in time");
}

/* What to apply, from the state. */
static void act_of(const struct spill *s, struct spill_act *a)
{
	a->state = s->state;
	a->gen = s->state == SPILL_OFF ? 0 : s->gen;
	a->grants = s->grants;
	a->hold = s->state == SPILL_HOLD_WAIT || s->state == SPILL_GRANT ||
		  s->state == SPILL_HOLD;
	a->rate_bps = s->rate_bps;
	a->top_bps = spill_top_bps(s);
	a->changed = s->changed;
	snprintf(a->why, sizeof(a->why), "%s", s->why);
}

/* One function per state; SPILL_OFF has none (nothing to do). */
static void (*const state_fn[SPILL_STATES])(struct spill *s, uint64_t now,
					    const struct spill_obs *o) = {
	[SPILL_RUN] = state_run,
	[SPILL_HOLD_WAIT] = state_hold_wait,
	[SPILL_GRANT] = state_grant,
	[SPILL_HOLD] = state_hold,
	[SPILL_RETURN] = state_return,
};

void spill_tick(struct spill *s, uint64_t now_ns, const struct spill_obs *o,
		struct spill_act *a)
{
	s->changed = false;
	spill_observe(s, now_ns, o);
	inputs(s, now_ns, o);
	if (s->state < SPILL_STATES && state_fn[s->state])
		state_fn[s->state](s, now_ns, o);
	act_of(s, a);
}

/* Forget tunnel @t's delays (another kind of sample, other devices). */
static void forget_delays(struct spill *s, enum spill_tunnel t)
{
	memset(&s->d[t], 0, sizeof(s->d[t]));
}

/* Forget the counters (other devices): the next tick starts them anew. */
static void forget_counters(struct spill *s)
{
	s->counters_valid = false;
	s->hist_n = s->hist_pos = 0;
}

void spill_reconfigure(struct spill *s, unsigned int changes,
		       const struct spill_params *p, uint64_t now_ns)
{
	uint16_t gen = s->gen;

	if (changes & SPILL_CHG_RESET) {
		spill_init(s, (changes & SPILL_CHG_PARAMS) && p ? p : &s->p, now_ns);
		s->gen = gen;
		spill_say(s, "reset: no generation until the next usable tick");
		return;
	}
	if ((changes & SPILL_CHG_PARAMS) && p) {
		s->p = *p;
		s->rate_bps = spill_clamp_rate(s, s->rate_bps);
	}
	if (changes & SPILL_CHG_ROLES) {
		forget_delays(s, SPILL_SHORT);
		forget_delays(s, SPILL_LONG);
		forget_counters(s);
	}
	if (changes & SPILL_CHG_KIND_SHORT)
		forget_delays(s, SPILL_SHORT);
	if (changes & SPILL_CHG_KIND_LONG)
		forget_delays(s, SPILL_LONG);
	if (changes & SPILL_CHG_ROLES)
		stop(s, now_ns, "the tunnels' roles changed");
	else if (changes & SPILL_CHG_PARAMS)
		stop(s, now_ns, "new settings");
}
