// SPDX-License-Identifier: GPL-2.0
/*
 * test_roles.c - path quality (health/quality.c) and the roles controller
 * (health/roles.c) on simulated time. Two tunnels probed every 100 ms (as
 * the agent's default), each probe's RTT from the scenario (a base, a
 * delay step or drift, jitter, loss, and our own bulk: its queue and
 * losses follow the long class to whichever tunnel carries it, which is
 * then busy); an answer is fed when it arrives, a loss when its timeout
 * (RTT + 100 ms) ends; the controller steps after every outcome. The
 * tunnels' states are scripted, or (sc.health) come from health's own
 * state machines fed with the same outcomes, as the agent's. Output is
 * TAP.
 *
 * Checked: a delay step and a loss step on SHORT move the short class
 * within 1 s and it returns after the step and the hold-down; slow drift
 * moves it once, after the margin is crossed; 5 ms of jitter, single lost
 * probes and bulk on LONG (150 ms of queue, 3 % loss) never move it over
 * 10 simulated minutes; a brownout with bulk running moves it and it
 * returns; a failover during a pending move wins, and resets a swap at
 * once, but starts no hold-down: back up, the roles follow the quality
 * again at once, a retake of the roles doubling no hold-down (also in a
 * brownout, and with a loaded router's stalls failing both tunnels over
 * every 10 s); the misses a failover acted on leave the returning
 * tunnel's loss window, and never move the roles; a return to the
 * configured roles takes the longer return sustain, so a brownout that
 * pauses for 300 ms or 2 s does not return, and a recovery returns after
 * that sustain and the hold-down; flapping quality is damped by the
 * doubling hold-down; unequal tunnels swap with auto and
 * not with fixed; an SLA threshold moves it
 * where the margin would not; roles_plan() swaps only the both-up split
 * plan. Spill's own traffic on SHORT (its queue while a generation is in
 * force and its class sends, roles_spill_step() fed every 100 ms as the
 * agent's spill tick feeds it) moves nothing over 10 simulated minutes,
 * and moves it when the agent does not tell it (the rule at work); cross
 * traffic on SHORT while spilled moves it within 1 s once spill has seen
 * the queue is not its own (a foreign back-off). ROLES_SIM_LOG=1 prints
 * each move as a TAP comment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roles.h"
#include "tap.h"

#define MS FS_NS_PER_MS
#define SEC FS_NS_PER_S
#define PROBE_NS (100 * MS)
#define RING 64

/* A scenario: each tunnel's RTT and loss at time t, by configured role. */
struct scen {
	uint64_t base_ns[HEALTH_TUNNELS];
	/* a step on tunnel step_t: +step_ns and step_loss (0..1) in [from, to) */
	int step_t;
	uint64_t step_ns, step_from, step_to;
	double step_loss;
	bool loss_covered;		/* the copy protects SHORT (roles_input) */
	uint64_t flap_period;		/* the step on and off every period (0: no) */
	uint64_t pause_from, pause_len;	/* the step pauses (0: no) */
	uint64_t drift_per_s_ns, drift_from;	/* SHORT's RTT grows */
	uint64_t jitter_ns;		/* uniform in [0, jitter) on both */
	uint32_t lose_every;		/* SHORT loses 1 probe of this many */
	uint32_t lose_burst;		/* ...and the ones after it (0: 1) */
	bool bulk;			/* our bulk on the long class's tunnel */
	uint64_t bulk_from;		/* from then on */
	uint64_t bulk_queue_ns;
	double bulk_loss;
	/* tunnel down_t's path (both's with down_both) loses every probe
	 * sent in [down_from, down_to); scripted (no health), the tunnel is
	 * down then */
	int down_t;
	bool down_both;
	uint64_t down_from, down_to;
	/* both paths lose every probe sent in the first stall_len of each
	 * stall_period from 5 s on (a loaded router stalling) */
	uint64_t stall_period, stall_len;
	/* states from health's own state machines (health.h, defaults) fed
	 * with the outcomes, as the agent's prober feeds them, not scripted */
	bool health;
	/* spill's class on the configured SHORT in [spill_from, spill_to)
	 * while the roles are not swapped: its queue there for the first
	 * half of each spill_period (a grant's flow, then backed off); 0:
	 * always */
	bool spill;
	uint64_t spill_from, spill_to, spill_period;
	uint64_t spill_queue_ns;
	double spill_loss;
	bool spill_untold;		/* the agent does not tell the roles */
	/* spill backs off on the step's queue as not its own (a foreign
	 * back-off) from this long after the step begins, each tick */
	uint64_t spill_react_ns;
	uint64_t end;
	struct roles_params params;
};

struct outcome {
	uint64_t due;
	uint64_t rtt;
	bool lost;
	bool busy;
};

struct sim {
	struct quality q[HEALTH_TUNNELS];
	struct roles r;
	struct outcome ring[HEALTH_TUNNELS][RING];
	unsigned head[HEALTH_TUNNELS], tail[HEALTH_TUNNELS];
	uint64_t rng;
	uint32_t sent[HEALTH_TUNNELS];
	/* moves: time and the roles after */
	int nmoves;
	uint64_t move_at[64];
	bool move_to[64];
	enum roles_cause move_cause[64];
	uint64_t move_hold[64];		/* the roles' hold-down after it */
	/* time both tunnels were up, and swapped then */
	uint64_t both_up_ns, swapped_up_ns;
	bool swapped_while_down;
	struct roles_spill rs;
	uint64_t foreign;		/* spill's foreign back-offs */
	bool spilled_while_swapped;
	/* sc->health: the tunnels' health, its failovers and returns */
	struct health h[HEALTH_TUNNELS];
	int downs[HEALTH_TUNNELS];
	uint64_t up_at[HEALTH_TUNNELS];	/* the last return to up */
};

static double rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (double)(s->rng >> 11) / (double)(1ull << 53);
}

static bool step_on(const struct scen *sc, uint64_t t)
{
	if (t < sc->step_from || t >= sc->step_to)
		return false;
	if (sc->pause_len && t >= sc->pause_from && t < sc->pause_from + sc->pause_len)
		return false;
	return !sc->flap_period || ((t - sc->step_from) / sc->flap_period) % 2 == 0;
}

/* Spill's generation runs (with its class sending) at t. */
static bool spill_on(const struct sim *s, const struct scen *sc, uint64_t t)
{
	return sc->spill && !s->r.swapped && t >= sc->spill_from && t < sc->spill_to;
}

/* ...and its queue is on SHORT's path at t. */
static bool spill_queue_on(const struct sim *s, const struct scen *sc, uint64_t t)
{
	uint64_t p = sc->spill_period;

	return spill_on(s, sc, t) && (!p || (t - sc->spill_from) % p < p / 2);
}

/* The agent's spill tick: what roles_spill_step() learns from spill. */
static void spill_tick(struct sim *s, const struct scen *sc, uint64_t t)
{
	struct roles_spill_obs o = { .gen = spill_on(s, sc, t) };

	if (o.gen)
		o.class_bps = 5 * ROLES_SPILL_BPS;
	if (o.gen && step_on(sc, t) && t - sc->step_from >= sc->spill_react_ns)
		s->foreign++;
	o.foreign_backoffs = s->foreign;
	roles_spill_step(&s->rs, &o, t);
}

/* Tunnel tun's path loses every probe sent at t. */
static bool path_dead(const struct scen *sc, int tun, uint64_t t)
{
	if (sc->stall_period && t >= 5 * SEC && (t - 5 * SEC) % sc->stall_period < sc->stall_len)
		return true;
	return (tun == sc->down_t || sc->down_both) && t >= sc->down_from && t < sc->down_to;
}

static enum health_state state_of(const struct sim *s, const struct scen *sc, int tun, uint64_t t)
{
	if (sc->health)
		return s->h[tun].state;
	/* no verdict for the first 500 ms, as when the agent starts */
	if (t < 500 * MS)
		return HEALTH_INIT;
	return path_dead(sc, tun, t) ? HEALTH_DOWN : HEALTH_UP;
}

/* sc->health: one outcome (or the time alone, lost < 0) into tunnel tun's
 * health, its transitions counted. */
static void health_feed(struct sim *s, int tun, uint64_t t, int lost, uint64_t rtt)
{
	struct health *h = &s->h[tun];
	enum health_state from = h->state;

	if (lost < 0)
		health_tick(h, t);
	else if (lost)
		health_miss(h, t);
	else
		health_reply(h, t, rtt);
	if (h->state == HEALTH_DOWN && from != HEALTH_DOWN)
		s->downs[tun]++;
	if (h->state == HEALTH_UP && from == HEALTH_DOWN)
		s->up_at[tun] = t;
}

/* Send tunnel tun's probe at t: its outcome and when it is known. */
static void send_probe(struct sim *s, const struct scen *sc, int tun, uint64_t t)
{
	int carries_long = s->r.swapped ? HEALTH_SHORT : HEALTH_LONG;
	struct outcome o = { .rtt = sc->base_ns[tun] };
	double loss = 0;

	if (tun == sc->step_t && step_on(sc, t)) {
		o.rtt += sc->step_ns;
		loss = sc->step_loss;
	}
	if (tun == HEALTH_SHORT && sc->drift_per_s_ns && t > sc->drift_from)
		o.rtt += (t - sc->drift_from) / SEC * sc->drift_per_s_ns +
			 (t - sc->drift_from) % SEC * sc->drift_per_s_ns / SEC;
	if (sc->jitter_ns)
		o.rtt += (uint64_t)(rnd(s) * sc->jitter_ns);
	if (tun == HEALTH_SHORT && spill_queue_on(s, sc, t)) {
		o.rtt += sc->spill_queue_ns;
		loss += sc->spill_loss;
	}
	if (sc->bulk && t >= sc->bulk_from && tun == carries_long) {
		o.rtt += sc->bulk_queue_ns;
		loss = loss + sc->bulk_loss;
		o.busy = true;
	}
	s->sent[tun]++;
	o.lost = path_dead(sc, tun, t) || rnd(s) < loss ||
		 (tun == HEALTH_SHORT && sc->lose_every &&
		  s->sent[tun] % sc->lose_every < (sc->lose_burst ? sc->lose_burst : 1));
	o.due = t + o.rtt + (o.lost ? 100 * MS : 0);
	s->ring[tun][s->tail[tun]++ % RING] = o;
}

static void run(struct sim *s, const struct scen *sc)
{
	const char *log = getenv("ROLES_SIM_LOG");
	struct health_params hp;
	uint64_t t;
	int tun;

	memset(s, 0, sizeof(*s));
	s->rng = 0x9e3779b97f4a7c15ull;
	health_params_default(&hp);
	for (tun = 0; tun < HEALTH_TUNNELS; tun++) {
		quality_init(&s->q[tun], 0);
		health_init(&s->h[tun], &hp, 0);
	}
	roles_init(&s->r, &sc->params, 0);
	roles_spill_init(&s->rs);
	for (t = MS; t <= sc->end; t += MS) {
		if (state_of(s, sc, HEALTH_SHORT, t) == HEALTH_UP &&
		    state_of(s, sc, HEALTH_LONG, t) == HEALTH_UP) {
			s->both_up_ns += MS;
			s->swapped_up_ns += s->r.swapped ? MS : 0;
		}
		if (sc->spill && t % PROBE_NS == PROBE_NS / 4)
			spill_tick(s, sc, t);
		/* SHORT's probes at 0 mod 100 ms, LONG's at 50 */
		if (t % PROBE_NS == 0)
			send_probe(s, sc, HEALTH_SHORT, t);
		if (t % PROBE_NS == PROBE_NS / 2)
			send_probe(s, sc, HEALTH_LONG, t);
		for (tun = 0; tun < HEALTH_TUNNELS; tun++) {
			if (sc->health && health_deadline(&s->h[tun]) <= t)
				health_feed(s, tun, t, -1, 0);
			while (s->head[tun] != s->tail[tun] &&
			       s->ring[tun][s->head[tun] % RING].due <= t) {
				struct outcome *o = &s->ring[tun][s->head[tun]++ % RING];
				struct roles_input in = {
					.q = { &s->q[0], &s->q[1] },
					.loss_covered = sc->loss_covered,
				};
				/* as the agent: SHORT busy with spill's class
				 * when the outcome is fed */
				bool spilled = !s->r.swapped && !sc->spill_untold &&
					       roles_spill_busy(&s->rs, t);
				bool busy = o->busy || (tun == HEALTH_SHORT && spilled);

				/* as the agent: health first (the prober), then
				 * the quality and the roles */
				if (sc->health)
					health_feed(s, tun, t, o->lost, o->rtt);
				if (o->lost)
					quality_lost(&s->q[tun], t, busy);
				else
					quality_answer(&s->q[tun], t, o->rtt, busy);
				in.state[0] = state_of(s, sc, 0, t);
				in.state[1] = state_of(s, sc, 1, t);
				in.busy[s->r.swapped ? HEALTH_SHORT : HEALTH_LONG] =
					sc->bulk && t >= sc->bulk_from;
				if (spilled)
					in.busy[HEALTH_SHORT] = true;
				if (roles_step(&s->r, &in, t) && s->nmoves < 64) {
					s->move_at[s->nmoves] = t;
					s->move_to[s->nmoves] = s->r.swapped;
					s->move_hold[s->nmoves] = s->r.hold_ns;
					s->move_cause[s->nmoves++] = s->r.cause;
					if (log)
						tap_diag("%.3f s: %s (%s)", (double)t / SEC,
							 s->r.swapped ? "swapped" : "configured",
							 roles_cause_name(s->r.cause));
				}
				if (s->r.swapped &&
				    (in.state[0] != HEALTH_UP || in.state[1] != HEALTH_UP))
					s->swapped_while_down = true;
				if (s->r.swapped && roles_spill_busy(&s->rs, t))
					s->spilled_while_swapped = true;
			}
		}
	}
}

static struct scen base_scen(void)
{
	struct scen sc = {
		.base_ns = { 40 * MS, 40 * MS },
		.step_t = HEALTH_SHORT,
		.down_t = -1,
		/* the agent sees LONG without bulk for 2 s, as when it starts
		 * before the bulk does */
		.bulk_from = 2 * SEC,
		.end = 60 * SEC,
	};

	roles_params_default(&sc.params);
	sc.params.mode = ROLES_AUTO;	/* what these scenarios test */
	return sc;
}

/* base_scen() with the usual degradation on SHORT: +80 ms of RTT (+40 ms
 * one-way) in [from, to). */
static struct scen step_scen(uint64_t from, uint64_t to)
{
	struct scen sc = base_scen();

	sc.step_ns = 80 * MS;
	sc.step_from = from;
	sc.step_to = to;
	return sc;
}

static double at_s(const struct sim *s, int i)
{
	return (double)s->move_at[i] / SEC;
}

static void test_delay_step(void)
{
	/* +40 ms one-way on SHORT from 10 s to 30 s */
	struct scen sc = step_scen(10 * SEC, 30 * SEC);
	static struct sim s;

	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_to[0] && s.move_at[0] >= sc.step_from &&
	       s.move_at[0] - sc.step_from <= SEC,
	       "delay step: moved within 1 s (%.3f s after the step)",
	       s.nmoves ? at_s(&s, 0) - 10 : -1);
	tap_ok(s.nmoves >= 1 && s.move_cause[0] == ROLES_CAUSE_QUEUE,
	       "delay step: cause queue (%s)",
	       roles_cause_name(s.nmoves ? s.move_cause[0] : ROLES_CAUSE_NONE));
	/* the return sustain from the first answer without the queue */
	tap_ok(s.nmoves == 2 && !s.move_to[1] &&
		       s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS &&
		       s.move_at[1] - sc.step_to <= ROLES_RETURN_SUSTAIN_NS + 500 * MS &&
		       s.move_cause[1] == ROLES_CAUSE_RECOVERED,
	       "delay step: returned the return sustain after it ended (%d moves, %.3f s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1);
}

/* Loss with the copy on: a swap would put the long class on the lossy
 * path, and the copy already rescues the short class: no move. A queue
 * still moves it. */
static void test_loss_covered(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	sc.step_loss = 0.15;	/* more than the 3 % each way that moved it */
	sc.step_from = 10 * SEC;
	sc.step_to = 70 * SEC;
	sc.loss_covered = true;
	run(&s, &sc);
	tap_ok(s.nmoves == 0,
	       "loss covered by the copy: 15 %% probe loss on SHORT moves nothing (%d)", s.nmoves);
	sc.loss_covered = false;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_cause[0] == ROLES_CAUSE_LOSS,
	       "not covered: the same loss moves the short class (%d moves)", s.nmoves);
	sc = step_scen(10 * SEC, 30 * SEC);
	sc.loss_covered = true;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_cause[0] == ROLES_CAUSE_QUEUE,
	       "loss covered: a queue on SHORT still moves it (%d moves, %s)", s.nmoves,
	       roles_cause_name(s.nmoves ? s.move_cause[0] : ROLES_CAUSE_NONE));
}

static void test_loss_step(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	/* a brownout's loss (50 %) on SHORT, no extra delay */
	sc.step_loss = 0.5;
	sc.step_from = 10 * SEC;
	sc.step_to = 30 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_to[0] && s.move_at[0] >= sc.step_from &&
	       s.move_at[0] - sc.step_from <= SEC && s.move_cause[0] == ROLES_CAUSE_LOSS,
	       "loss step: moved within 1 s, cause loss (%.3f s after, %s)",
	       s.nmoves ? at_s(&s, 0) - 10 : -1,
	       roles_cause_name(s.nmoves ? s.move_cause[0] : ROLES_CAUSE_NONE));
	/* the losses leave the 2 s window, then the return sustain */
	tap_ok(s.nmoves == 2 && !s.move_to[1] &&
		       s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS &&
		       s.move_at[1] - sc.step_to <=
			       QUALITY_LOSS_WINDOW * PROBE_NS + ROLES_RETURN_SUSTAIN_NS,
	       "loss step: returned within the loss window and the return sustain after it ended "
	       "(%d moves, %.3f s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1);
}

static void test_drift(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	/* SHORT's RTT grows 1 ms a second from 10 s: the margin at 40 ms is
	 * 40 x 0.2 + 15 = 23 ms, crossed at 33 s */
	sc.drift_per_s_ns = MS;
	sc.drift_from = 10 * SEC;
	sc.end = 120 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 1 && s.move_at[0] >= 33 * SEC && s.move_at[0] <= 35 * SEC,
	       "slow drift: one move, after the margin is crossed (%d moves, first %.3f s)",
	       s.nmoves, s.nmoves ? at_s(&s, 0) : -1);
}

/* 10 minutes of our bulk on LONG (150 ms of queue, 3 % loss) and 5 ms
 * of jitter on both: what must never move the roles */
static struct scen bulk_jitter_scen(void)
{
	struct scen sc = base_scen();

	sc.jitter_ns = 5 * MS;
	sc.bulk = true;
	sc.bulk_queue_ns = 150 * MS;
	sc.bulk_loss = 0.03;
	sc.end = 600 * SEC;
	return sc;
}

static void test_quiet(void)
{
	struct scen sc = bulk_jitter_scen();
	static struct sim s;

	run(&s, &sc);
	tap_ok(s.nmoves == 0, "5 ms jitter and bulk on LONG: no move in 10 min (%d)", s.nmoves);

	sc = base_scen();
	sc.lose_every = 15;
	sc.end = 600 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "single lost probes on SHORT: no move in 10 min (%d)", s.nmoves);

	sc = base_scen();
	sc.jitter_ns = 5 * MS;
	sc.end = 600 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "5 ms jitter, no bulk: no move in 10 min (%d)", s.nmoves);

	/* both, with health's own states: neither a move nor a failover */
	sc.lose_every = 15;
	sc.health = true;
	run(&s, &sc);
	tap_ok(s.nmoves == 0 && !s.downs[HEALTH_SHORT] && !s.downs[HEALTH_LONG],
	       "5 ms jitter and a lost probe in 15 on SHORT, health's states: no move, no "
	       "failover in 10 min (%d, %d)",
	       s.nmoves, s.downs[HEALTH_SHORT]);

	/* three probes in a row lost every 10 s (a router or path stalled
	 * for 300 ms, as this loaded test machine's delay line does) */
	sc = base_scen();
	sc.lose_every = 100;
	sc.lose_burst = 3;
	sc.end = 600 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "3 probes lost in a row every 10 s: no move in 10 min (%d)",
	       s.nmoves);
	/* the same on a short path (0.2 ms) with 5 ms of jitter (a few ms
	 * of queue): the absolute margin alone, as roles.bats measured it */
	sc.base_ns[HEALTH_SHORT] = sc.base_ns[HEALTH_LONG] = 200 * 1000;
	sc.jitter_ns = 5 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 0,
	       "3 probes lost in a row every 10 s, RTT 0.2 ms, 5 ms jitter: no move (%d)",
	       s.nmoves);
}

static void test_brownout_with_bulk(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	sc.bulk = true;
	sc.bulk_queue_ns = 150 * MS;
	sc.bulk_loss = 0.03;
	sc.step_ns = 80 * MS;
	sc.step_loss = 0.3;
	sc.step_from = 10 * SEC;
	sc.step_to = 30 * SEC;
	sc.end = 120 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_to[0] && s.move_at[0] - sc.step_from <= SEC,
	       "brownout under bulk: moved within 1 s (%.3f s after)",
	       s.nmoves ? at_s(&s, 0) - 10 : -1);
	/* the bulk then fills the old SHORT: its queue there is ours, so it
	 * is judged by what it showed without it (for 30 s), then its base */
	tap_ok(s.nmoves >= 2 && !s.move_to[s.nmoves - 1] && s.nmoves <= 4 &&
		       s.move_at[s.nmoves - 1] < 30 * SEC + QUALITY_IDLE_MEMORY_NS + 2 * SEC,
	       "brownout under bulk: back on SHORT by the end of the memory (%d moves, last %.3f "
	       "s)",
	       s.nmoves, s.nmoves ? at_s(&s, s.nmoves - 1) : -1);
}

/* The first move at or after t (-1: none). */
static int move_after(const struct sim *s, uint64_t t)
{
	int i;

	for (i = 0; i < s->nmoves; i++)
		if (s->move_at[i] >= t)
			return i;
	return -1;
}

static void test_failover(void)
{
	struct scen sc = step_scen(10 * SEC, 25 * SEC);
	static struct sim s;
	int i;

	/* SHORT degrades at 10 s and its link goes down 300 ms later (the
	 * state scripted: down at once), before the move is due; up again
	 * at 20 s, degraded until 25 s */
	sc.down_t = HEALTH_SHORT;
	sc.down_from = 10 * SEC + 300 * MS;
	sc.down_to = 20 * SEC;
	run(&s, &sc);
	tap_ok(!s.swapped_while_down, "failover mid-move: never swapped while a tunnel is down");
	/* no hold-down after a failover: the fresh queue moves it at once */
	i = move_after(&s, sc.down_to);
	tap_ok(i == 0 && s.move_to[0] && s.move_at[0] - sc.down_to <= 500 * MS &&
		       s.move_cause[0] == ROLES_CAUSE_QUEUE &&
		       s.move_hold[0] == ROLES_DEF_HOLD_MIN_NS,
	       "failover mid-move: moved on the queue within 0.5 s of SHORT's return, no "
	       "hold-down before (%d moves, first %.3f s, %s)",
	       s.nmoves, s.nmoves ? at_s(&s, 0) : -1,
	       roles_cause_name(s.nmoves ? s.move_cause[0] : ROLES_CAUSE_NONE));

	/* swapped by a delay step on SHORT, then LONG (carrying the short
	 * class) dies: configured roles at once */
	sc = step_scen(5 * SEC, 60 * SEC);
	sc.health = true;
	sc.down_t = HEALTH_LONG;
	sc.down_from = 15 * SEC;
	sc.down_to = 25 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves >= 2 && s.move_to[0] && !s.move_to[1] && s.move_at[1] >= sc.down_from &&
		       s.move_at[1] - sc.down_from <= 500 * MS &&
		       s.move_cause[1] == ROLES_CAUSE_FAILOVER,
	       "swapped, then LONG down: configured roles at its verdict (%d moves, %.3f s, %s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1,
	       roles_cause_name(s.nmoves > 1 ? s.move_cause[1] : ROLES_CAUSE_NONE));
	tap_ok(!s.swapped_while_down, "swapped, then LONG down: never swapped while down");
	tap_ok(s.nmoves == 3 && s.move_to[2] && s.move_at[2] >= s.up_at[HEALTH_LONG] &&
		       s.move_at[2] - s.up_at[HEALTH_LONG] <= 500 * MS &&
		       s.move_hold[2] == ROLES_DEF_HOLD_MIN_NS,
	       "LONG back up: swapped again within 0.5 s, hold-down not doubled (%d moves, up "
	       "%.3f s, %.3f s, hold-down %.1f s)",
	       s.nmoves, (double)s.up_at[HEALTH_LONG] / SEC, s.nmoves > 2 ? at_s(&s, 2) : -1,
	       s.nmoves > 2 ? (double)s.move_hold[2] / SEC : -1);
}

/* A brownout on SHORT (+40 ms one-way, 30 % loss) from 10 s, and a
 * failover in the middle of it. */
static struct scen brownout_failover_scen(int tun, uint64_t dead_from, uint64_t dead_to,
					  uint64_t brownout_to)
{
	struct scen sc = step_scen(10 * SEC, brownout_to);

	sc.step_loss = 0.3;
	sc.health = true;
	sc.down_t = tun;
	sc.down_from = dead_from;
	sc.down_to = dead_to;
	return sc;
}

static void test_failover_brownout(void)
{
	struct scen sc;
	static struct sim s;
	int i;

	/* SHORT's path dies at 14 s in the brownout (health: congested, 10
	 * misses) and comes back at 16 s, when the brownout has ended: the
	 * failover's misses move nothing after it returns */
	sc = brownout_failover_scen(HEALTH_SHORT, 14 * SEC, 16 * SEC, 16 * SEC);
	run(&s, &sc);
	tap_ok(s.nmoves == 2 && s.move_to[0] && s.move_at[0] - sc.step_from <= SEC &&
		       s.move_cause[1] == ROLES_CAUSE_FAILOVER && s.downs[HEALTH_SHORT] == 1 &&
		       s.up_at[HEALTH_SHORT] > sc.down_to && move_after(&s, sc.down_to) < 0,
	       "brownout, SHORT fails over, back after the brownout: moved, reset, and no swap "
	       "away on the failover's misses (%d moves, SHORT up %.3f s)",
	       s.nmoves, (double)s.up_at[HEALTH_SHORT] / SEC);

	/* the same, the brownout going on: the fresh queue (not the
	 * misses) takes the roles again at once, and the hold-down is not
	 * doubled by the failover */
	sc = brownout_failover_scen(HEALTH_SHORT, 14 * SEC, 16 * SEC, 40 * SEC);
	sc.end = 80 * SEC;
	run(&s, &sc);
	i = move_after(&s, s.up_at[HEALTH_SHORT]);
	tap_ok(s.downs[HEALTH_SHORT] == 1 && i == 2 && s.move_to[2] &&
		       s.move_at[2] - s.up_at[HEALTH_SHORT] <= 500 * MS &&
		       s.move_cause[2] == ROLES_CAUSE_QUEUE &&
		       s.move_hold[2] == ROLES_DEF_HOLD_MIN_NS,
	       "brownout goes on after SHORT's return: swapped again within 0.5 s on its queue, "
	       "hold-down %.1f s (%d moves, up %.3f s, %.3f s, %s)",
	       i >= 0 ? (double)s.move_hold[i] / SEC : -1, s.nmoves,
	       (double)s.up_at[HEALTH_SHORT] / SEC, i >= 0 ? at_s(&s, i) : -1,
	       roles_cause_name(i >= 0 ? s.move_cause[i] : ROLES_CAUSE_NONE));
	tap_ok(s.nmoves == 4 && !s.move_to[3] && s.move_cause[3] == ROLES_CAUSE_RECOVERED &&
		       s.move_at[3] >= sc.step_to && s.move_hold[3] == ROLES_DEF_HOLD_MIN_NS,
	       "... and back after the brownout, hold-down %.1f s (%d moves, %.3f s)",
	       s.nmoves > 3 ? (double)s.move_hold[3] / SEC : -1, s.nmoves,
	       s.nmoves > 3 ? at_s(&s, 3) : -1);

	/* LONG, carrying the short class, fails over 2 s after the move,
	 * within its hold-down: back up, it takes the short class again at
	 * once, the move's hold-down neither holding nor doubling that */
	sc = brownout_failover_scen(HEALTH_LONG, 12 * SEC, 13 * SEC, 40 * SEC);
	run(&s, &sc);
	i = move_after(&s, s.up_at[HEALTH_LONG]);
	tap_ok(s.downs[HEALTH_LONG] == 1 && i == 2 && s.move_to[2] &&
		       s.up_at[HEALTH_LONG] < s.move_at[0] + ROLES_DEF_HOLD_MIN_NS &&
		       s.move_at[2] - s.up_at[HEALTH_LONG] <= 500 * MS &&
		       s.move_hold[2] == ROLES_DEF_HOLD_MIN_NS,
	       "brownout, LONG fails over within the hold-down: the short class back on LONG "
	       "within 0.5 s of its return, hold-down %.1f s (%d moves, up %.3f s, %.3f s)",
	       i >= 0 ? (double)s.move_hold[i] / SEC : -1, s.nmoves,
	       (double)s.up_at[HEALTH_LONG] / SEC, i >= 0 ? at_s(&s, i) : -1);
	tap_ok(!s.swapped_while_down,
	       "brownout and failovers: never swapped while a tunnel is down");
}

/* A loaded router stalling: both paths lose 300 ms of probes every 10 s,
 * and health fails both tunnels over each time. */
static void test_stalls(void)
{
	struct scen sc = base_scen();
	static struct sim s;
	bool held = true;
	int i;

	sc.health = true;
	sc.stall_period = 10 * SEC;
	sc.stall_len = 300 * MS;
	sc.end = 600 * SEC;
	run(&s, &sc);
	/* health's own hold-down grows with the flaps: not every stall is
	 * a failover of its own */
	tap_ok(s.downs[HEALTH_SHORT] >= 20 && s.downs[HEALTH_LONG] >= 20 && s.nmoves == 0,
	       "stalls fail both tunnels over: no move in 10 min (%d moves, %d and %d failovers)",
	       s.nmoves, s.downs[HEALTH_SHORT], s.downs[HEALTH_LONG]);

	/* SHORT configured on the slow tunnel: each failover resets the
	 * roles, each return takes them again, none doubles a hold-down */
	sc.base_ns[HEALTH_SHORT] = 60 * MS;
	sc.base_ns[HEALTH_LONG] = 20 * MS;
	run(&s, &sc);
	for (i = 0; i < s.nmoves; i++)
		held &= s.move_cause[i] == ROLES_CAUSE_FAILOVER ||
			(s.move_to[i] && s.move_hold[i] == ROLES_DEF_HOLD_MIN_NS);
	tap_ok(s.nmoves >= 40 && held && s.swapped_up_ns >= s.both_up_ns / 100 * 95,
	       "stalls, SHORT on the slow tunnel: swapped %.1f %% of the time both are up, %d "
	       "moves, each retake with the least hold-down",
	       100.0 * s.swapped_up_ns / s.both_up_ns, s.nmoves);
}

/* The misses a failover acted on leave the returning tunnel's loss
 * window, and only they. */
static void test_quality_failover(void)
{
	struct quality q;
	uint64_t t = 0;
	int i;

	quality_init(&q, 0);
	for (i = 0; i < 10; i++)
		quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	/* loss before the failover's run: not the failover's */
	quality_lost(&q, t += PROBE_NS, false);
	quality_lost(&q, t += PROBE_NS, false);
	quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	/* three misses in a row take it down; four more while down */
	for (i = 0; i < 3; i++)
		quality_lost(&q, t += PROBE_NS, false);
	quality_down(&q, t);
	for (i = 0; i < 4; i++) {
		quality_lost(&q, t += PROBE_NS, false);
		quality_down(&q, t);	/* each step while down: no new start */
	}
	for (i = 0; i < 5; i++)
		quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	tap_ok(q.loss_lost == 9 && quality_loss_counted(&q) > 0.3,
	       "quality failover: down, its misses still in the window (%u of %u)", q.loss_lost,
	       q.loss_len);
	quality_up(&q);
	tap_ok(q.loss_lost == 2 && q.loss_len == QUALITY_LOSS_WINDOW &&
		       quality_loss_counted(&q) == 0 && quality_expected_ns(&q) == 40 * MS,
	       "quality failover: up, only the loss before its run is left (%u of %u)",
	       q.loss_lost, q.loss_len);
	quality_lost(&q, t += PROBE_NS, false);
	quality_up(&q);
	tap_ok(q.loss_lost == 3, "quality failover: up again while up changes nothing (%u)",
	       q.loss_lost);
	/* a link down (after an answer): only the misses while down */
	quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	quality_down(&q, t);
	quality_lost(&q, t += PROBE_NS, false);
	quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	quality_up(&q);
	tap_ok(q.loss_lost == 3, "quality failover: a link down forgets its own misses only (%u)",
	       q.loss_lost);
}

/* A tunnel's path dead for 2 s: health fails it over and it returns; its
 * misses must not move the roles once it is back. */
static void test_failover_misses(void)
{
	static const uint64_t hold[] = { ROLES_DEF_HOLD_MIN_NS, 0 };
	struct scen sc;
	static struct sim s;
	unsigned int i;
	int tun;

	for (i = 0; i < sizeof(hold) / sizeof(hold[0]); i++) {
		for (tun = 0; tun < HEALTH_TUNNELS; tun++) {
			sc = base_scen();
			sc.health = true;
			sc.down_t = tun;
			sc.down_from = 10 * SEC;
			sc.down_to = 12 * SEC;
			sc.end = 40 * SEC;
			/* hold-down 0: nothing but the rule keeps the
			 * returning tunnel's misses from moving the roles */
			sc.params.hold_min_ns = hold[i];
			run(&s, &sc);
			tap_ok(s.downs[tun] == 1 && s.up_at[tun] > sc.down_to && s.nmoves == 0,
			       "%s's path dead 2 s, roles-hold-min %.0f s: down %d, back up at "
			       "%.2f s, no move (%d)",
			       tun == HEALTH_SHORT ? "SHORT" : "LONG", (double)hold[i] / SEC,
			       s.downs[tun], (double)s.up_at[tun] / SEC, s.nmoves);
		}
	}
}

static void test_flapping(void)
{
	struct scen sc = step_scen(10 * SEC, 250 * SEC);
	static struct sim s;
	bool spaced = true;
	int i;

	/* SHORT +80 ms for 2 s, clean for 2 s, for 4 minutes: no clean
	 * spell is a recovery (it lasts less than the return sustain) */
	sc.flap_period = 2 * SEC;
	sc.end = 250 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 1 && s.move_to[0] && s.move_at[0] - sc.step_from <= SEC,
	       "quality flapping every 2 s: moved once, no 2 s spell a recovery (%d moves)",
	       s.nmoves);

	/* +80 ms for 5 s, clean for 5 s: each clean spell a recovery */
	sc.flap_period = 5 * SEC;
	run(&s, &sc);
	for (i = 1; i < s.nmoves; i++)
		spaced &= s.move_at[i] - s.move_at[i - 1] >= ROLES_DEF_HOLD_MIN_NS;
	/* undamped it would move twice per 10 s: 48 times */
	tap_ok(s.nmoves >= 2 && s.nmoves <= 12 && spaced,
	       "quality flapping every 5 s: %d moves in 240 s, each a hold-down apart", s.nmoves);
	tap_ok(s.nmoves >= 4 && s.move_at[s.nmoves - 1] - s.move_at[s.nmoves - 2] >=
					4 * ROLES_DEF_HOLD_MIN_NS,
	       "quality flapping every 5 s: the hold-down grew (last gap %.1f s)",
	       s.nmoves > 1 ? at_s(&s, s.nmoves - 1) - at_s(&s, s.nmoves - 2) : -1);
}

/* Leaving takes the sustain, returning the longer return sustain. */
static void test_return(void)
{
	struct scen sc;
	static struct sim s;
	uint64_t due;

	/* the brownout (its queue, no loss to keep SHORT worse) pauses for
	 * 300 ms in the middle, the queue gone at once: no return until it
	 * ends */
	sc = step_scen(10 * SEC, 40 * SEC);
	sc.pause_from = 20 * SEC;
	sc.pause_len = 300 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 2 && s.move_to[0] && s.move_at[0] - sc.step_from <= SEC &&
		       !s.move_to[1] && s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS,
	       "brownout with a 300 ms pause: no return in the pause, back after it ended (%d "
	       "moves, last %.3f s)",
	       s.nmoves, s.nmoves ? at_s(&s, s.nmoves - 1) : -1);
	/* a pause of 2 s: still not a recovery */
	sc.pause_len = 2 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 2 && s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS,
	       "brownout with a 2 s pause: no return in the pause (%d moves, last %.3f s)",
	       s.nmoves, s.nmoves ? at_s(&s, s.nmoves - 1) : -1);

	/* a real recovery 2 s after the move: the return waits for the
	 * hold-down, which outlasts the return sustain */
	sc = step_scen(10 * SEC, 12 * SEC);
	run(&s, &sc);
	due = s.nmoves ? s.move_at[0] + ROLES_DEF_HOLD_MIN_NS : 0;
	tap_ok(s.nmoves == 2 && !s.move_to[1] && s.move_cause[1] == ROLES_CAUSE_RECOVERED &&
		       s.move_at[1] >= due &&
		       s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS &&
		       s.move_at[1] - due <= 200 * MS,
	       "recovery within the hold-down: back when it ends (%d moves, %.3f s, due %.3f s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1, (double)due / SEC);
	/* after the hold-down: the return sustain from the recovery */
	sc = step_scen(10 * SEC, 20 * SEC);
	run(&s, &sc);
	tap_ok(s.nmoves == 2 && !s.move_to[1] &&
		       s.move_at[1] >= sc.step_to + ROLES_RETURN_SUSTAIN_NS &&
		       s.move_at[1] - sc.step_to <= ROLES_RETURN_SUSTAIN_NS + 500 * MS,
	       "recovery after the hold-down: back the return sustain after it (%d moves, %.3f "
	       "s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1);
	/* an operator's sustain longer than the return sustain rules both */
	sc.params.sustain_ns = ROLES_RETURN_SUSTAIN_NS + SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 2 && s.move_at[0] - sc.step_from >= sc.params.sustain_ns &&
		       s.move_at[1] - sc.step_to >= sc.params.sustain_ns,
	       "roles-sustain above the return sustain: both ways (%d moves, %.3f s, %.3f s)",
	       s.nmoves, s.nmoves ? at_s(&s, 0) : -1, s.nmoves > 1 ? at_s(&s, 1) : -1);
}

static void test_unequal(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	/* SHORT configured on the slow tunnel: 30 ms one-way against 10 */
	sc.base_ns[HEALTH_SHORT] = 60 * MS;
	sc.base_ns[HEALTH_LONG] = 20 * MS;
	sc.jitter_ns = 5 * MS;
	sc.end = 600 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 1 && s.move_to[0] && s.move_at[0] <= 2 * SEC &&
		       s.move_cause[0] == ROLES_CAUSE_BASE,
	       "unequal tunnels, auto: the short class on the fast one within 2 s, for good (%d "
	       "moves, %.3f s)",
	       s.nmoves, s.nmoves ? at_s(&s, 0) : -1);

	sc.params.mode = ROLES_FIXED;
	run(&s, &sc);
	tap_ok(s.nmoves == 0 && !s.r.swapped, "unequal tunnels, fixed: no move");

	/* the fast one configured SHORT: nothing to do */
	sc = base_scen();
	sc.base_ns[HEALTH_SHORT] = 20 * MS;
	sc.base_ns[HEALTH_LONG] = 60 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "unequal tunnels, SHORT on the fast one: no move");
}

static void test_sla(void)
{
	struct scen sc = base_scen();
	static struct sim s;

	/* 50 ms against 40: within the margin (63 ms), over a 45 ms SLA */
	sc.base_ns[HEALTH_SHORT] = 50 * MS;
	sc.end = 20 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "within the margin: no move without an SLA");
	sc.params.sla_delay_ns = 45 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 1 && s.move_cause[0] == ROLES_CAUSE_SLA,
	       "SLA delay 45 ms: moved, cause sla (%d)", s.nmoves);
	/* both break it: the margin decides */
	sc.params.sla_delay_ns = 30 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "both break the SLA: the margin decides, no move");
}

static void test_quality(void)
{
	struct quality q;
	uint64_t t = 0;
	int i;

	quality_init(&q, 0);
	for (i = 0; i < 10; i++)
		quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	tap_ok(quality_base_ns(&q) == 40 * MS && quality_queue_ns(&q) == 0 &&
	       quality_jitter_ns(&q) == 0 && quality_expected_ns(&q) == 40 * MS,
	       "quality: steady 40 ms: base 40, no queue, no jitter");
	quality_answer(&q, t += PROBE_NS, 400 * MS, false);
	tap_ok(quality_queue_ns(&q) == 0, "quality: one late answer is not a queue");
	for (i = 0; i < QUALITY_QUEUE_SAMPLES; i++)
		quality_answer(&q, t += PROBE_NS, 60 * MS, false);
	tap_ok(quality_queue_ns(&q) == 20 * MS, "quality: a queue that holds is (%.1f ms)",
	       (double)quality_queue_ns(&q) / MS);
	quality_lost(&q, t += PROBE_NS, false);
	quality_lost(&q, t += PROBE_NS, false);
	tap_ok(quality_loss_counted(&q) == 0 && quality_loss_ratio(&q) > 0,
	       "quality: two lost probes are forgiven");
	quality_lost(&q, t += PROBE_NS, false);
	/* 3 lost of 18 outcomes, two forgiven: 1/18 x (200 + 60) ms */
	tap_ok(quality_loss_penalty_ns(&q) == (uint64_t)(1.0 / 18 * (260 * MS)),
	       "quality: loss penalty = counted loss x (200 ms + RTT) (%.2f ms)",
	       (double)quality_loss_penalty_ns(&q) / MS);
	/* busy: judged by the base and the last not-busy extra */
	for (i = 0; i < QUALITY_LOSS_WINDOW; i++)
		quality_answer(&q, t += PROBE_NS, 40 * MS, false);
	for (i = 0; i < 10; i++)
		quality_answer(&q, t += PROBE_NS, 200 * MS, true);
	tap_ok(quality_expected_ns(&q) > 150 * MS && quality_judged_ns(&q, true, t) == 40 * MS,
	       "quality: our own queue is not judged (%.1f ms measured, %.1f judged)",
	       (double)quality_expected_ns(&q) / MS, (double)quality_judged_ns(&q, true, t) / MS);
	/* RFC 3550 jitter on alternating 40/50 ms converges to 10 ms */
	quality_init(&q, 0);
	for (i = 0; i < 400; i++)
		quality_answer(&q, t += PROBE_NS, (i % 2 ? 50 : 40) * MS, false);
	tap_ok(quality_jitter_ns(&q) > 9 * MS && quality_jitter_ns(&q) <= 10 * MS,
	       "quality: jitter of alternating 40/50 ms is 10 ms (%.2f)",
	       (double)quality_jitter_ns(&q) / MS);
}

static void test_plan(void)
{
	struct health_plan both = { HEALTH_PLAN_ROUTE, HEALTH_VIA_SHORT, HEALTH_VIA_LONG };
	struct health_plan down = { HEALTH_PLAN_ROUTE, HEALTH_VIA_LONG, HEALTH_VIA_LONG };
	struct health_plan ecmp = { HEALTH_PLAN_ROUTE, HEALTH_VIA_SHORT | HEALTH_VIA_LONG, 0 };
	struct health_plan p;

	p = roles_plan(both, true);
	tap_ok(p.short_via == HEALTH_VIA_LONG && p.long_via == HEALTH_VIA_SHORT,
	       "plan: both up, swapped: table SHORT via LONG, table LONG via SHORT");
	p = roles_plan(both, false);
	tap_ok(health_plan_equal(&p, &both), "plan: not swapped: unchanged");
	p = roles_plan(down, true);
	tap_ok(health_plan_equal(&p, &down), "plan: a failover plan is never swapped");
	p = roles_plan(ecmp, true);
	tap_ok(health_plan_equal(&p, &ecmp), "plan: ECMP is never swapped");
}

static void test_spill_rule(void)
{
	struct roles_spill rs;
	struct roles_spill_obs o = { .gen = true, .class_bps = 2 * ROLES_SPILL_BPS };
	uint64_t t = 10 * SEC;

	roles_spill_init(&rs);
	tap_ok(!roles_spill_busy(&rs, t), "spill rule: nothing seen: not busy");
	roles_spill_step(&rs, &o, t);
	tap_ok(roles_spill_busy(&rs, t), "spill rule: the class sends: SHORT busy");
	o.class_bps = ROLES_SPILL_BPS / 2;
	roles_spill_step(&rs, &o, t += PROBE_NS);
	tap_ok(roles_spill_busy(&rs, t + ROLES_SPILL_HANGOVER_NS - PROBE_NS - 1) &&
		       !roles_spill_busy(&rs, t + ROLES_SPILL_HANGOVER_NS - PROBE_NS),
	       "spill rule: below 1 Mbit/s: busy for the hangover only");
	o.backlog_bytes = 1500;
	roles_spill_step(&rs, &o, t += PROBE_NS);
	tap_ok(roles_spill_busy(&rs, t), "spill rule: a backlog in the class: busy");
	o.gen = false;
	roles_spill_step(&rs, &o, t += ROLES_SPILL_HANGOVER_NS);
	tap_ok(!roles_spill_busy(&rs, t), "spill rule: no generation: not busy after the hangover");
	o.gen = true;
	roles_spill_step(&rs, &o, t += PROBE_NS);
	o.foreign_backoffs = 1;
	roles_spill_step(&rs, &o, t += PROBE_NS);
	tap_ok(!roles_spill_busy(&rs, t), "spill rule: a foreign back-off: not busy at once");
	roles_spill_step(&rs, &o, t += PROBE_NS);
	tap_ok(!roles_spill_busy(&rs, t + ROLES_SPILL_FOREIGN_NS - 2 * PROBE_NS),
	       "spill rule: ... for the foreign hold, while the class still sends");
	t += ROLES_SPILL_FOREIGN_NS;
	roles_spill_step(&rs, &o, t);
	tap_ok(roles_spill_busy(&rs, t), "spill rule: busy again after the foreign hold");
	o.foreign_backoffs = 0;	/* a new generation resets spill's count */
	roles_spill_step(&rs, &o, t += PROBE_NS);
	tap_ok(roles_spill_busy(&rs, t), "spill rule: spill's count reset is no foreign back-off");
}

static void test_spill_sim(void)
{
	struct scen sc = bulk_jitter_scen();
	static struct sim s;

	/* spill's grants on SHORT: 41 ms of queue (as spill-faults.bats
	 * measured on a 20 Mbit/s path) and 2 % loss for 5 s of every 10 s */
	sc.spill = true;
	sc.spill_from = 5 * SEC;
	sc.spill_to = 600 * SEC;
	sc.spill_period = 10 * SEC;
	sc.spill_queue_ns = 41 * MS;
	sc.spill_loss = 0.02;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "spill's own queue on SHORT under bulk: no move in 10 min (%d)",
	       s.nmoves);
	/* a grant's queue held for the whole run, no bulk */
	sc.bulk = false;
	sc.spill_period = 0;
	sc.spill_queue_ns = 80 * MS;
	run(&s, &sc);
	tap_ok(s.nmoves == 0, "spill's own 80 ms queue on SHORT held 10 min: no move (%d)",
	       s.nmoves);
	/* the same, the agent not telling the roles: they move (the rule
	 * is what keeps them) */
	sc.spill_untold = true;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_cause[0] == ROLES_CAUSE_QUEUE,
	       "spill's queue untold: moved (%d moves, %s)", s.nmoves,
	       roles_cause_name(s.nmoves ? s.move_cause[0] : ROLES_CAUSE_NONE));

	/* cross traffic on SHORT (+80 ms) from 20 s to 40 s while spilled:
	 * spill sees a queue it did not build 300 ms in */
	sc = step_scen(20 * SEC, 40 * SEC);
	sc.bulk = true;
	sc.bulk_queue_ns = 150 * MS;
	sc.spill = true;
	sc.spill_from = 5 * SEC;
	sc.spill_to = 600 * SEC;
	sc.spill_queue_ns = 20 * MS;
	sc.spill_react_ns = 300 * MS;
	sc.end = 120 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_to[0] && s.move_at[0] >= sc.step_from &&
		       s.move_at[0] - sc.step_from <= SEC,
	       "cross traffic on SHORT while spilled: moved within 1 s (%.3f s after)",
	       s.nmoves ? at_s(&s, 0) - 20 : -1);
	tap_ok(s.nmoves >= 2 && !s.move_to[s.nmoves - 1] && s.move_at[1] >= sc.step_to,
	       "cross traffic on SHORT while spilled: back after it ended (%d moves, %.3f s)",
	       s.nmoves, s.nmoves > 1 ? at_s(&s, 1) : -1);
	tap_ok(!s.spilled_while_swapped, "spill's class never counted while swapped");
	/* cross traffic with spill on but nothing of ours spilled (the
	 * class idle: no generation) moves it as without spill */
	sc.spill_from = 100 * SEC;
	run(&s, &sc);
	tap_ok(s.nmoves >= 1 && s.move_to[0] && s.move_at[0] - sc.step_from <= SEC,
	       "cross traffic on SHORT, nothing spilled: moved within 1 s (%.3f s after)",
	       s.nmoves ? at_s(&s, 0) - 20 : -1);
}

int main(void)
{
	test_quality();
	test_plan();
	test_delay_step();
	test_loss_step();
	test_loss_covered();
	test_drift();
	test_quiet();
	test_brownout_with_bulk();
	test_failover();
	test_quality_failover();
	test_failover_misses();
	test_failover_brownout();
	test_stalls();
	test_flapping();
	test_return();
	test_unequal();
	test_sla();
	test_spill_rule();
	test_spill_sim();
	return tap_done();
}
