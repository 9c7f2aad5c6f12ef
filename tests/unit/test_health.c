// SPDX-License-Identifier: GPL-2.0
/*
 * test_health.c - unit tests of the tunnel health state machine
 * (health/health.c), TAP output: transitions at exact miss/answer
 * counts, hold-down growth, cap and decay, the flapping bounds stated in
 * docs/health.md, the routing plan for every mode x state x policy, RTT and
 * loss accounting. Time is simulated: no clock is read.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "health_agent.h"
#include "params.h"
#include "tap.h"
#include "util.h"

#define MS FS_NS_PER_MS
#define SEC FS_NS_PER_S
#define T0 (1000 * SEC)	/* an arbitrary monotonic start */

static struct health_params defaults(void)
{
	struct health_params p;

	health_params_default(&p);
	return p;
}

/*
 * The [health] settings, one key at a time, through the agent's table
 * (health_settings_opts) and lib's validators, as the agent and a config
 * file read them: 0, -ENOENT (unknown key), -EINVAL (not a value of the
 * row's kind: the validator refuses it without the row's range) or
 * -ERANGE (outside the row's range); p is left alone on an error.
 */
#define HEALTH_PARAM_KEYS                                              \
	"interval, timeout, down-misses, congested-misses, up-successes, " \
	"hold-min, hold-max, half-life, loss-window, adaptive-timeout"

static int health_params_set(struct health_params *p, const char *key, const char *value)
{
	struct health_settings s = { .params = *p };
	struct sc_opt_ref r;
	uint64_t u;
	__u64 ns;
	char err[256];

	if (sc_option_find(health_settings_opts, &s, key, false, &r))
		return -ENOENT;
	if (!value)
		return -EINVAL;
	if (!sc_option_set(&r, value, "", err, sizeof(err))) {
		*p = s.params;
		return 0;
	}
	switch (r.opt->type) {
	case SC_OPT_DURATION:
		return sc_parse_duration(value, 0, 9, &ns) ? -EINVAL : -ERANGE;
	case SC_OPT_UINT:
		return parse_u64(value, 0, UINT64_MAX, &u) == -ERANGE ||
		       !parse_u64(value, 0, UINT64_MAX, &u) ? -ERANGE : -EINVAL;
	default:
		return -EINVAL;
	}
}

/* What a key accepts: lib's words for its row, the bare range of a count. */
static const char *health_param_range(const char *key)
{
	static char buf[128];
	struct health_settings s;
	struct sc_opt_ref r;

	if (sc_option_find(health_settings_opts, &s, key, false, &r))
		return NULL;
	if (r.opt->type == SC_OPT_UINT)
		snprintf(buf, sizeof(buf), "%.0f..%.0f", r.opt->lo, r.opt->hi);
	else
		sc_option_accepted(r.opt, buf, sizeof(buf));
	return buf;
}

/* A duration with its unit (lib's syntax), at most an hour. */
static int health_parse_duration(const char *s, uint64_t *ns)
{
	__u64 v;

	if (!s || sc_parse_duration(s, 0, 9, &v))
		return -EINVAL;
	if (v > HEALTH_MAX_HOLD_NS)
		return -ERANGE;
	*ns = v;
	return 0;
}

/* Case i of the bad-value table: spoil one field, return its name. */
static const char *spoil(int i, struct health_params *p)
{
	switch (i) {
	case 0: p->interval_ns = 0; return "interval";
	case 1: p->interval_ns = 9 * MS; return "interval";
	case 2: p->interval_ns = 61 * SEC; return "interval";
	case 3: p->timeout_ns = 9 * MS; return "timeout";
	case 4: p->timeout_ns = 33 * p->interval_ns; return "timeout";
	case 5: p->down_misses = 0; return "down-misses";
	case 6: p->down_misses = 256; return "down-misses";
	case 7: p->up_successes = 0; return "up-successes";
	case 8: p->hold_min_ns = 3601 * SEC; return "hold-min";
	case 9: p->hold_max_ns = p->hold_min_ns - 1; return "hold-max";
	case 10: p->half_life_ns = 0; return "half-life";
	case 11: p->loss_window = 0; return "loss-window";
	case 12: p->loss_window = HEALTH_MAX_LOSS_WINDOW + 1; return "loss-window";
	}
	return NULL;
}

static void test_params(void)
{
	struct health_params p = defaults();
	const char *field = "x", *want;
	int i;

	tap_ok(p.interval_ns == 100 * MS && p.down_misses == 3 &&
		       p.up_successes == 5 && p.hold_min_ns == 1 * SEC &&
		       p.hold_max_ns == 32 * SEC && p.half_life_ns == 60 * SEC &&
		       health_timeout_ns(&p) == p.interval_ns &&
		       p.adaptive_timeout,
	       "defaults: 100 ms, 3 misses, 5 answers, hold 1..32 s, "
	       "half-life 60 s, timeout = interval, adaptive");
	tap_ok(!health_params_check(&p, &field) && !field,
	       "defaults pass the check");
	for (i = 0; (p = defaults(), want = spoil(i, &p)); i++) {
		int err = health_params_check(&p, &field);

		tap_ok(err == -EINVAL && field && !strcmp(field, want),
		       "bad %s (case %d) refused, named (got %s)", want, i,
		       field ? field : "nothing");
	}
	p = defaults();
	p.timeout_ns = 300 * MS;
	tap_ok(!health_params_check(&p, NULL) &&
		       health_timeout_ns(&p) == 300 * MS,
	       "a timeout of 3 intervals is accepted and used");
}

static void test_settings(void)
{
	static const struct {
		const char *text;
		int err;
		uint64_t ns;
	} durations[] = {
		{ "100ms", 0, 100 * MS },	{ "1.5s", 0, 1500 * MS },
		{ "0s", 0, 0 },			{ "0.000001ms", 0, 1 },
		{ "2.000000001s", 0, 2 * SEC + 1 },
		{ "3600s", 0, 3600 * SEC },	{ "3600000ms", 0, 3600 * SEC },
		{ "3600.000000001s", -ERANGE, 0 },
		{ "99999999999s", -EINVAL, 0 },	/* 11 digits */
		{ "9999999999s", -ERANGE, 0 },
		{ "100", -EINVAL, 0 },		{ "ms", -EINVAL, 0 },
		{ "s", -EINVAL, 0 },		{ "", -EINVAL, 0 },
		{ "1.s", -EINVAL, 0 },		{ ".5s", -EINVAL, 0 },
		{ "-1s", -EINVAL, 0 },		{ "1e3ms", -EINVAL, 0 },
		{ " 1s", -EINVAL, 0 },		{ "1 s", -EINVAL, 0 },
		{ "0.0000001ms", -EINVAL, 0 },	/* below 1 ns */
		{ "1min", -EINVAL, 0 },		{ "0x10ms", -EINVAL, 0 },
	};
	struct health_params p = defaults(), want = defaults();
	char keys[] = HEALTH_PARAM_KEYS, *key, *save = NULL;
	bool all_known = true;
	int err, nkeys = 0;
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		ns = 7;
		err = health_parse_duration(durations[i].text, &ns);
		tap_ok(err == durations[i].err &&
			       ns == (err ? 7 : durations[i].ns),
		       "duration '%s': %d %llu (got %d %llu)",
		       durations[i].text, durations[i].err,
		       (unsigned long long)durations[i].ns, err,
		       (unsigned long long)ns);
	}
	{
		static const char *const set[][2] = {
			{ "interval", "50ms" },	     { "timeout", "0.2s" },
			{ "down-misses", "4" },	     { "congested-misses", "12" },
			{ "up-successes", "10" },    { "hold-min", "500ms" },
			{ "hold-max", "1000s" },     { "half-life", "2s" },
			{ "loss-window", "1024" },   { "adaptive-timeout", "no" },
		};
		bool ok = true;
		size_t i;

		for (i = 0; i < sizeof(set) / sizeof(set[0]); i++)
			ok = ok && !health_params_set(&p, set[i][0], set[i][1]);
		tap_ok(ok, "every key set from text");
	}
	want = (struct health_params){
		.interval_ns = 50 * MS, .timeout_ns = 200 * MS,
		.down_misses = 4, .congested_misses = 12, .up_successes = 10,
		.hold_min_ns = 500 * MS,
		.hold_max_ns = 1000 * SEC, .half_life_ns = 2 * SEC,
		.loss_window = 1024, .adaptive_timeout = false,
	};
	tap_ok(!memcmp(&p, &want, sizeof(p)) && !health_params_check(&p, NULL),
	       "... to exactly those values, which pass the check");
	p = defaults();
	tap_ok(health_params_set(&p, "intervall", "1s") == -ENOENT &&
		       !health_param_range("intervall"),
	       "unknown key: -ENOENT, no range");
	tap_ok(health_params_set(&p, "interval", "5ms") == -ERANGE &&
		       health_params_set(&p, "interval", "61s") == -ERANGE &&
		       health_params_set(&p, "interval", "100") == -EINVAL &&
		       health_params_set(&p, "down-misses", "0") == -ERANGE &&
		       health_params_set(&p, "down-misses", "256") == -ERANGE &&
		       health_params_set(&p, "down-misses",
					 "99999999999999999999999") == -ERANGE &&
		       health_params_set(&p, "up-successes", "3ms") ==
			       -EINVAL &&
		       health_params_set(&p, "up-successes", NULL) == -EINVAL &&
		       health_params_set(&p, "loss-window", "1025") == -ERANGE &&
		       health_params_set(&p, "half-life", "50ms") == -ERANGE &&
		       health_params_set(&p, "adaptive-timeout", "YES") ==
			       -EINVAL &&
		       health_params_set(&p, "adaptive-timeout", NULL) ==
			       -EINVAL,
	       "bad values: -EINVAL (syntax) or -ERANGE (range)");
	tap_ok(p.interval_ns == 100 * MS &&
		       p.down_misses == 3 && p.loss_window == 100 &&
		       p.half_life_ns == 60 * SEC && p.adaptive_timeout,
	       "a refused value leaves the setting alone");
	tap_ok(!health_params_set(&p, "adaptive-timeout", "no") &&
		       !p.adaptive_timeout &&
		       !health_params_set(&p, "adaptive-timeout", "yes") &&
		       p.adaptive_timeout &&
		       !health_params_set(&p, "adaptive-timeout", "0") &&
		       !p.adaptive_timeout &&
		       !health_params_set(&p, "adaptive-timeout", "1") &&
		       p.adaptive_timeout &&
		       !strcmp(health_param_range("adaptive-timeout"),
			       "yes, no, 1, 0"),
	       "adaptive-timeout: yes, no, 1, 0 (lib's yes/no, as every switch)");
	for (key = strtok_r(keys, ", ", &save); key;
	     key = strtok_r(NULL, ", ", &save)) {
		nkeys++;
		p = defaults();
		all_known &= health_param_range(key) != NULL &&
			     health_params_set(&p, key, "x") == -EINVAL;
	}
	tap_ok(all_known && nkeys == 10,
	       "HEALTH_PARAM_KEYS: %d keys, each known to the setter", nkeys);
	tap_ok(!strcmp(health_param_range("interval"), "10ms..60s") &&
		       !strcmp(health_param_range("down-misses"), "1..255"),
	       "ranges for messages");
}

/* feed n misses (or answers) at 100 ms steps; returns transitions seen */
static int feed(struct health *h, uint64_t *now, int n, bool answer)
{
	int changes = 0;

	while (n--) {
		*now += 100 * MS;
		changes += answer ? health_reply(h, *now, 1 * MS)
				  : health_miss(h, *now);
	}
	return changes;
}

static void test_counts(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0;

	health_init(&h, &p, now);
	tap_ok(h.state == HEALTH_INIT && !strcmp(health_state_name(h.state),
						 "init"),
	       "starts in init");
	feed(&h, &now, 4, true);
	tap_ok(h.state == HEALTH_INIT, "init after 4 answers");
	tap_ok(feed(&h, &now, 1, true) == 1 && h.state == HEALTH_UP &&
		       h.since_ns == now,
	       "init -> up at exactly the 5th answer, since = then");
	feed(&h, &now, 2, false);
	feed(&h, &now, 1, true);
	feed(&h, &now, 2, false);
	tap_ok(h.state == HEALTH_UP && h.misses == 2,
	       "2 misses, an answer, 2 misses: still up (counts reset)");
	tap_ok(feed(&h, &now, 1, false) == 1 && h.state == HEALTH_DOWN &&
		       h.flaps == 1 && h.hold_ns == p.hold_min_ns,
	       "up -> down at exactly the 3rd consecutive miss; flap 1, "
	       "hold-down = hold-min");

	health_init(&h, &p, now);
	feed(&h, &now, 2, false);
	tap_ok(h.state == HEALTH_INIT, "init after 2 misses");
	tap_ok(feed(&h, &now, 1, false) == 1 && h.state == HEALTH_DOWN &&
		       h.flaps == 0 && h.hold_ns == 0,
	       "init -> down at the 3rd miss: not a flap, no hold-down");
	feed(&h, &now, 4, true);
	tap_ok(h.state == HEALTH_DOWN, "down after 4 answers");
	tap_ok(feed(&h, &now, 1, true) == 1 && h.state == HEALTH_UP,
	       "down (no hold) -> up at exactly the 5th answer");

	tap_ok(health_link_down(&h, now + 1) && h.state == HEALTH_DOWN &&
		       h.since_ns == now + 1 && h.flaps == 1 &&
		       h.up_not_before_ns == now + 1 + SEC,
	       "link down: down at once, a flap with its hold-down");
	tap_ok(!health_link_down(&h, now + 2) && h.flaps == 1,
	       "link down again while down: nothing changes");
	health_init(&h, &p, now);
	feed(&h, &now, 4, true);
	tap_ok(health_link_down(&h, now) && h.flaps == 0 && h.hold_ns == 0 &&
		       h.successes == 0,
	       "link down from init: down, no flap, answers forgotten");
}

static void test_hold_down(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0, down_at;

	health_init(&h, &p, now);
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	down_at = now;
	tap_ok(h.state == HEALTH_DOWN && h.up_not_before_ns == down_at + SEC,
	       "a first flap: earliest return = down + 1 s");
	tap_ok(health_deadline(&h) == UINT64_MAX,
	       "no deadline while answers are missing");
	feed(&h, &now, 5, true);
	tap_ok(h.state == HEALTH_DOWN && h.successes == 5,
	       "5 answers inside the hold-down: still down");
	tap_ok(health_deadline(&h) == down_at + SEC,
	       "deadline = end of the hold-down once 5 answers are in");
	tap_ok(!health_tick(&h, down_at + SEC - 1) && h.state == HEALTH_DOWN,
	       "tick 1 ns before the end: still down");
	tap_ok(health_tick(&h, down_at + SEC) && h.state == HEALTH_UP &&
		       h.since_ns == down_at + SEC,
	       "tick at the end of the hold-down: up");

	/* a miss inside the hold-down starts the count again */
	health_init(&h, &p, T0);
	now = T0;
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	down_at = now;
	feed(&h, &now, 6, true);
	feed(&h, &now, 1, false);
	feed(&h, &now, 4, true);
	now = down_at + 2 * SEC;
	tap_ok(!health_tick(&h, now) && h.state == HEALTH_DOWN,
	       "answers interrupted by a miss: hold-down over but 4 < 5");
	tap_ok(health_reply(&h, now, MS) && h.state == HEALTH_UP,
	       "the 5th answer after the miss brings it up");
}

static double rel_err(double got, double want)
{
	return fabs(got - want) / want;
}

static void test_damping(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0, hold, prev = 0, pen;
	double ref_p = 0;
	uint64_t ref_at = now;
	int k;
	bool grows = true, exact = true;

	tap_ok(health_hold_for_penalty(&p, 0) == SEC &&
		       health_hold_for_penalty(&p, HEALTH_Q16_ONE) == SEC,
	       "hold(P <= 1) = hold-min");
	hold = health_hold_for_penalty(&p, HEALTH_Q16_ONE * 3 / 2);
	tap_ok(rel_err(hold, SEC * sqrt(2)) < 1e-6,
	       "hold(1.5) = hold-min x sqrt(2) (got %llu ns)",
	       (unsigned long long)hold);
	tap_ok(health_hold_for_penalty(&p, 6 * HEALTH_Q16_ONE) == 32 * SEC &&
		       health_hold_for_penalty(&p, 40 * HEALTH_Q16_ONE) ==
			       32 * SEC,
	       "hold(6) = 32 s = hold-max, and never more");

	/* slow decay: every flap nearly doubles the hold-down; the fixed
	 * point result against the formula in floating point */
	p.half_life_ns = 3600 * SEC;
	health_init(&h, &p, now);
	feed(&h, &now, 5, true);
	for (k = 1; k <= 8; k++) {
		feed(&h, &now, 3, false);
		hold = h.hold_ns;
		ref_p = fmin(6, ref_p * pow(2, -(double)(now - ref_at) /
						      p.half_life_ns) + 1);
		ref_at = now;
		exact &= rel_err(hold, fmin(32, pow(2, ref_p - 1)) * SEC) <
			 5e-4;
		grows &= hold > prev || hold == p.hold_max_ns;
		tap_diag("flap %d: hold-down %.4f s (formula %.4f s)", k,
			 (double)hold / SEC, fmin(32, pow(2, ref_p - 1)));
		prev = hold;
		now = h.up_not_before_ns;
		feed(&h, &now, 5, true);
	}
	tap_ok(exact, "flaps 1..8, half-life 1 h: hold-down = "
		      "min(32 s, 1 s x 2^(P-1)) within 0.05%%");
	tap_ok(grows && h.hold_ns == 32 * SEC &&
		       h.penalty_q16 == 6 * HEALTH_Q16_ONE && h.flaps == 8,
	       "flaps 7, 8: capped at hold-max, penalty at its ceiling 6");

	/* decay: the penalty halves every half-life */
	p.half_life_ns = 60 * SEC;
	health_init(&h, &p, T0);
	now = T0;
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	pen = health_penalty_q16(&h, now + 60 * SEC);
	tap_ok(rel_err(pen, HEALTH_Q16_ONE / 2.0) < 1e-4,
	       "penalty 1 -> 0.5 after one half-life (got %llu/65536)",
	       (unsigned long long)pen);
	pen = health_penalty_q16(&h, now + 90 * SEC);
	tap_ok(rel_err(pen, HEALTH_Q16_ONE * pow(2, -1.5)) < 1e-3,
	       "penalty 1 -> 2^-1.5 after 1.5 half-lives");
	tap_ok(health_penalty_q16(&h, now + 64 * 60 * SEC) == 0 &&
		       health_penalty_q16(&h, UINT64_MAX) == 0,
	       "penalty 0 after 64 half-lives (no overflow at any time)");
	/* a second flap one half-life later: P = 0.5 + 1 */
	now += 60 * SEC;
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	/* P = 1 x 2^(-60.8 / 60) + 1, hold = 1 s x 2^(P - 1) */
	tap_ok(rel_err(h.hold_ns, SEC * pow(2, pow(2, -60.8 / 60))) < 1e-3,
	       "a flap 60.8 s after the first: hold = 2^(P-1), P = "
	       "decayed 1 + 1 (got %.3f s)",
	       (double)h.hold_ns / SEC);
	/* long quiet: back to the minimum */
	now += 3600 * SEC;
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	tap_ok(rel_err(h.hold_ns, SEC) < 1e-3 && h.flaps == 3,
	       "after an hour without flaps: hold-down back to hold-min");
}

/* ---- simulated paths ---------------------------------------------------- */
struct sim {
	struct health h;
	int changes, downs, ups;
	uint64_t last_down_ns, last_hold_ns;
	uint64_t shortest_return_ns;	/* down -> up, smallest seen */
	bool return_before_hold;	/* down -> up faster than its hold */
	uint64_t period_ns;		/* flapping path: alive half, dead half */
	bool verbose;			/* each change as a TAP comment */
};

static void sim_note(struct sim *s, uint64_t at, bool changed)
{
	uint64_t back;

	if (!changed)
		return;
	s->changes++;
	if (s->verbose)
		tap_diag("%8.3f s  %s  hold %.3f s", (double)(at - T0) / SEC,
			 health_state_name(s->h.state),
			 (double)s->h.hold_ns / SEC);
	if (s->h.state == HEALTH_DOWN) {
		s->downs++;
		s->last_down_ns = at;
		s->last_hold_ns = s->h.hold_ns;
		return;
	}
	if (s->h.state != HEALTH_UP || !s->downs)
		return;
	s->ups++;
	back = at - s->last_down_ns;
	if (back < s->last_hold_ns)
		s->return_before_hold = true;
	if (back < s->shortest_return_ns)
		s->shortest_return_ns = back;
}

/* Probes every interval in [t0, t1): an answered one is fed 1 ms after it
 * was sent, a lost one at its timeout, hold-down ends at their deadline. */
static void sim_run(struct sim *s, uint64_t t0, uint64_t t1,
		    bool (*alive)(struct sim *s, uint64_t t))
{
	uint64_t t, at, d, timeout = health_timeout_ns(&s->h.params);
	bool ok;

	for (t = t0; t < t1; t += s->h.params.interval_ns) {
		ok = alive(s, t);
		at = t + (ok ? MS : timeout);
		d = health_deadline(&s->h);
		if (d <= at)
			sim_note(s, d, health_tick(&s->h, d));
		sim_note(s, at, ok ? health_reply(&s->h, at, MS)
				   : health_miss(&s->h, at));
	}
}

static void sim_start(struct sim *s, const struct health_params *p)
{
	uint64_t now = T0 - 2 * SEC;

	memset(s, 0, sizeof(*s));
	s->shortest_return_ns = UINT64_MAX;
	health_init(&s->h, p, now);
	feed(&s->h, &now, 10, true);	/* up, no penalty */
}

static bool path_flapping(struct sim *s, uint64_t t)
{
	return ((t - T0) / (s->period_ns / 2)) % 2;	/* dead first */
}

/* The worst case: the path dies the moment the tunnel is up and answers
 * whenever it is down, so every hold-down ends in a return. */
static bool path_adversary(struct sim *s, uint64_t t)
{
	(void)t;
	return s->h.state != HEALTH_UP;
}

static void test_flapping(void)
{
	struct health_params p = defaults();
	struct sim s;

	/* 200 ms dead / 200 ms alive for 5 s, probes every 100 ms */
	sim_start(&s, &p);
	s.period_ns = 400 * MS;
	sim_run(&s, T0, T0 + 5 * SEC, path_flapping);
	tap_ok(s.changes == 0 && s.h.state == HEALTH_UP &&
		       s.h.missed == 26 && s.h.probes == 60,
	       "defaults, 200 ms dead / 200 ms alive: 2 misses at most in a "
	       "row, 0 changes (%llu of 50 probes lost)",
	       (unsigned long long)s.h.missed);

	/* the most sensitive settings still cannot oscillate */
	p.down_misses = 1;
	p.up_successes = 1;
	sim_start(&s, &p);
	s.period_ns = 400 * MS;
	sim_run(&s, T0, T0 + 5 * SEC, path_flapping);
	tap_ok(s.changes <= 5 && !s.return_before_hold &&
		       s.shortest_return_ns >= SEC,
	       "N = M = 1, 200 ms flapping for 5 s: %d changes (<= 5), "
	       "returns never before their hold-down (shortest %.2f s)",
	       s.changes, (double)s.shortest_return_ns / SEC);

	p = defaults();
	sim_start(&s, &p);
	s.verbose = true;
	sim_run(&s, T0, T0 + 5 * SEC, path_adversary);
	tap_ok(s.changes == 5 && s.downs == 3 && s.ups == 2 &&
		       !s.return_before_hold,
	       "defaults, worst-case path for 5 s: 3 downs + 2 returns = %d "
	       "changes (docs/health.md bound: 5)",
	       s.changes);
	sim_start(&s, &p);
	sim_run(&s, T0, T0 + 60 * SEC, path_adversary);
	tap_ok(s.changes <= 15 && !s.return_before_hold,
	       "defaults, worst-case path for 60 s: %d changes (bound 15)",
	       s.changes);
	sim_start(&s, &p);
	sim_run(&s, T0, T0 + 3600 * SEC, path_adversary);
	tap_ok(s.ups <= 198 && s.last_hold_ns >= 18 * SEC,
	       "defaults, worst-case path for 1 h: %d returns, hold-down "
	       "settles at %.1f s (bound: 198, >= 18 s)",
	       s.ups, (double)s.last_hold_ns / SEC);
}

static void test_log_lines(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0;
	char buf[160];

	health_init(&h, &p, now);
	feed(&h, &now, 5, true);
	health_transition_format(&h, HEALTH_INIT, buf, sizeof(buf));
	tap_ok(!strcmp(buf, "init -> up after 5 answers, rtt 1.00 ms, "
			    "loss 0.0 %"),
	       "log line, up: %s", buf);
	feed(&h, &now, 3, false);
	health_transition_format(&h, HEALTH_UP, buf, sizeof(buf));
	tap_ok(!strcmp(buf, "up -> down after 3 misses, flap 1, hold-down "
			    "1.00 s, rtt 1.00 ms, loss 37.5 %"),
	       "log line, down: %s", buf);
	now = h.up_not_before_ns;
	feed(&h, &now, 5, true);
	feed(&h, &now, 2, false);
	health_link_down(&h, now);
	health_transition_format(&h, HEALTH_UP, buf, sizeof(buf));
	tap_ok(!strncmp(buf, "up -> down: link down, flap 2, hold-down 1.9",
			strlen("up -> down: link down, flap 2, hold-down 1.9")),
	       "log line, link down (after 2 misses): %s", buf);
	now = h.up_not_before_ns;
	feed(&h, &now, 5, true);
	feed(&h, &now, 3, false);
	health_transition_format(&h, HEALTH_UP, buf, sizeof(buf));
	tap_ok(!strncmp(buf, "up -> down after 3 misses, flap 3",
			strlen("up -> down after 3 misses, flap 3")),
	       "log line, probes again after a link down: %s", buf);
}

/* ---- plans -------------------------------------------------------------- */
/* A tunnel over its families: down when one is, up when all are. */
static void test_combine(void)
{
	static const struct {
		enum health_state st[2];
		unsigned int n;
		enum health_state want;
	} cases[] = {
		{ { HEALTH_UP }, 1, HEALTH_UP },
		{ { HEALTH_DOWN }, 1, HEALTH_DOWN },
		{ { HEALTH_INIT }, 1, HEALTH_INIT },
		{ { HEALTH_UP, HEALTH_UP }, 2, HEALTH_UP },
		{ { HEALTH_UP, HEALTH_DOWN }, 2, HEALTH_DOWN },
		{ { HEALTH_DOWN, HEALTH_UP }, 2, HEALTH_DOWN },
		{ { HEALTH_UP, HEALTH_INIT }, 2, HEALTH_INIT },
		{ { HEALTH_INIT, HEALTH_DOWN }, 2, HEALTH_DOWN },
		{ { HEALTH_INIT, HEALTH_INIT }, 2, HEALTH_INIT },
		{ { HEALTH_UP }, 0, HEALTH_INIT },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(health_combine(cases[i].st, cases[i].n) == cases[i].want,
		       "combine: %s and %s (%u families) -> %s", health_state_name(cases[i].st[0]),
		       health_state_name(cases[i].st[1]), cases[i].n,
		       health_state_name(cases[i].want));
}

static void test_plans(void)
{
	static const enum health_state all[] = { HEALTH_INIT, HEALTH_UP,
						 HEALTH_DOWN };
	static const char *const want[2][2][3][3] = {
		/* [mode][policy][short][long]; long: init, up, down */
		[HEALTH_MODE_SPLIT][HEALTH_BOTH_DOWN_KEEP] = {
			{ "wait", "wait", "wait" },
			{ "wait", "short=SHORT long=LONG",
			  "short=SHORT long=SHORT" },
			{ "wait", "short=LONG long=LONG", "keep" },
		},
		[HEALTH_MODE_SPLIT][HEALTH_BOTH_DOWN_MAIN] = {
			{ "wait", "wait", "wait" },
			{ "wait", "short=SHORT long=LONG",
			  "short=SHORT long=SHORT" },
			{ "wait", "short=LONG long=LONG", "main" },
		},
		[HEALTH_MODE_ECMP][HEALTH_BOTH_DOWN_KEEP] = {
			{ "wait", "wait", "wait" },
			{ "wait", "short=SHORT+LONG", "short=SHORT" },
			{ "wait", "short=LONG", "keep" },
		},
		[HEALTH_MODE_ECMP][HEALTH_BOTH_DOWN_MAIN] = {
			{ "wait", "wait", "wait" },
			{ "wait", "short=SHORT+LONG", "short=SHORT" },
			{ "wait", "short=LONG", "main" },
		},
	};
	enum health_state st[HEALTH_TUNNELS];
	struct health_plan plan, again;
	int mode, pol, s, l;
	char buf[64];

	for (mode = 0; mode < 2; mode++)
		for (pol = 0; pol < 2; pol++)
			for (s = 0; s < 3; s++)
				for (l = 0; l < 3; l++) {
					st[HEALTH_SHORT] = all[s];
					st[HEALTH_LONG] = all[l];
					plan = health_plan(mode, pol, st);
					health_plan_format(&plan, buf,
							   sizeof(buf));
					tap_ok(!strcmp(buf, want[mode][pol][s][l]),
					       "%s, both-down %s, SHORT %s, "
					       "LONG %s: %s (got %s)",
					       mode ? "ecmp" : "split",
					       pol ? "main" : "keep",
					       health_state_name(all[s]),
					       health_state_name(all[l]),
					       want[mode][pol][s][l], buf);
				}
	st[HEALTH_SHORT] = HEALTH_DOWN;
	st[HEALTH_LONG] = HEALTH_UP;
	plan = health_plan(HEALTH_MODE_SPLIT, HEALTH_BOTH_DOWN_KEEP, st);
	tap_ok(plan.action == HEALTH_PLAN_ROUTE &&
		       plan.short_via == HEALTH_VIA_LONG &&
		       plan.long_via == HEALTH_VIA_LONG,
	       "split, SHORT down: both tables via the LONG tunnel (bits)");
	again = health_plan(HEALTH_MODE_SPLIT, HEALTH_BOTH_DOWN_MAIN, st);
	tap_ok(health_plan_equal(&plan, &again),
	       "the policy does not matter while one tunnel is up");
	st[HEALTH_LONG] = HEALTH_DOWN;
	plan = health_plan(HEALTH_MODE_ECMP, HEALTH_BOTH_DOWN_MAIN, st);
	tap_ok(plan.action == HEALTH_PLAN_MAIN && !plan.short_via &&
		       !plan.long_via && !health_plan_equal(&plan, &again),
	       "both down, main: no tunnel in the plan; plans compare");
}

/* ---- by-products -------------------------------------------------------- */
static void test_rtt_loss(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0;
	int i, lost = 0, naive;
	unsigned int seed = 7;
	bool window_ok = true;
	bool outcome[400];

	health_init(&h, &p, now);
	tap_ok(health_loss_ratio(&h) == 0.0 && h.rtt_last_ns == 0,
	       "no probe yet: loss 0, no RTT");
	health_reply(&h, now, 8 * MS);
	tap_ok(h.rtt_last_ns == 8 * MS && h.rtt_ewma_ns == 8 * MS,
	       "first RTT sample: last = EWMA = 8 ms");
	health_reply(&h, now, 16 * MS);
	tap_ok(h.rtt_last_ns == 16 * MS && h.rtt_ewma_ns == 9 * MS,
	       "second sample 16 ms: EWMA = 7/8 x 8 + 1/8 x 16 = 9 ms");
	health_miss(&h, now);
	tap_ok(h.rtt_last_ns == 16 * MS && h.probes == 3 && h.answered == 2 &&
		       h.missed == 1 &&
		       rel_err(health_loss_ratio(&h), 1 / 3.0) < 1e-9,
	       "a miss leaves the RTT alone; loss 1/3, totals 3/2/1");

	/* the window holds exactly the last loss_window outcomes */
	p.loss_window = 100;
	health_init(&h, &p, now);
	for (i = 0; i < 400; i++) {
		outcome[i] = rand_r(&seed) % 4 == 0;
		if (outcome[i])
			health_miss(&h, now);
		else
			health_reply(&h, now, MS);
		lost += outcome[i];
		if (i >= 100)
			lost -= outcome[i - 100];
		naive = lost;
		window_ok &= h.window_lost == (uint32_t)naive &&
			     h.window_len == (uint32_t)(i < 100 ? i + 1 : 100);
	}
	tap_ok(window_ok && rel_err(health_loss_ratio(&h), naive / 100.0) <
					    1e-9,
	       "400 random outcomes: the window always counts the last 100 "
	       "exactly (loss now %.2f)",
	       health_loss_ratio(&h));
	p.loss_window = 10;
	health_init(&h, &p, now);
	for (i = 0; i < 3; i++)
		health_miss(&h, now);
	for (i = 0; i < 7; i++)
		health_reply(&h, now, MS);
	tap_ok(rel_err(health_loss_ratio(&h), 0.3) < 1e-9,
	       "window 10: 3 lost of 10 = 0.3");
	health_reply(&h, now, MS);
	health_reply(&h, now, MS);
	health_reply(&h, now, MS);
	tap_ok(health_loss_ratio(&h) == 0.0 && h.missed == 3,
	       "3 more answers push the losses out: 0, totals keep them");
}

/* ---- adaptive probe timeout ---------------------------------------------- */
/* @h fresh under @p at @now after one answer of RTT @rtt: its probe timeout */
static uint64_t timeout_after_one(struct health *h,
				  const struct health_params *p, uint64_t now,
				  uint64_t rtt)
{
	health_init(h, p, now);
	health_reply(h, now, rtt);
	return health_probe_timeout_ns(h);
}

static void test_rto_formula(void)
{
	struct health_params p = defaults();
	struct health h;
	uint64_t now = T0;
	int i;

	health_init(&h, &p, now);
	tap_ok(health_probe_timeout_ns(&h) == 100 * MS,
	       "no RTT sample yet: the floor (the interval)");
	health_reply(&h, now, 180 * MS);
	tap_ok(h.srtt_ns == 180 * MS && h.rttvar_ns == 90 * MS &&
		       health_probe_timeout_ns(&h) == 540 * MS,
	       "first sample 180 ms: srtt 180, rttvar 90, timeout 540 ms "
	       "(got %.1f ms)", (double)health_probe_timeout_ns(&h) / MS);
	health_reply(&h, now, 100 * MS);
	tap_ok(h.srtt_ns == 170 * MS && h.rttvar_ns == 87500000 &&
		       health_probe_timeout_ns(&h) == 520 * MS,
	       "second sample 100 ms: rttvar 3/4 x 90 + 1/4 x 80 = 87.5, "
	       "srtt 7/8 x 180 + 1/8 x 100 = 170, timeout 520 ms");

	health_init(&h, &p, now);
	for (i = 0; i < 50; i++)
		health_reply(&h, now, 1 * MS);
	tap_ok(health_probe_timeout_ns(&h) == 100 * MS,
	       "1 ms path: srtt + margin below the floor: the floor");
	for (i = 0; i < 100; i++)
		health_reply(&h, now, 180 * MS);
	tap_ok(h.rttvar_ns < 1 * MS &&
		       health_probe_timeout_ns(&h) == h.srtt_ns + 50 * MS,
	       "a steady 180 ms RTT: rttvar %.3f ms, but the margin over srtt "
	       "stays floor / 2 (timeout %.1f ms)",
	       (double)h.rttvar_ns / MS,
	       (double)health_probe_timeout_ns(&h) / MS);
	p.timeout_ns = 300 * MS;
	tap_ok(timeout_after_one(&h, &p, now, 1 * MS) == 300 * MS,
	       "a configured timeout is the floor");
	tap_ok(timeout_after_one(&h, &p, now, 180 * MS) > 300 * MS,
	       "... which the RTT can raise (%.1f ms)",
	       (double)health_probe_timeout_ns(&h) / MS);
	p.adaptive_timeout = false;
	tap_ok(timeout_after_one(&h, &p, now, 180 * MS) == 300 * MS,
	       "adaptive-timeout no: the configured timeout, whatever the RTT");

	/* the cap: 32 intervals */
	p = defaults();
	tap_ok(timeout_after_one(&h, &p, now, 5 * SEC) ==
		       HEALTH_MAX_TIMEOUT_INTERVALS * 100 * MS,
	       "5 s RTT at a 100 ms interval: capped at 32 intervals = 3.2 s "
	       "(srtt + 4 x rttvar = 15 s)");
	p.interval_ns = 1 * SEC;
	tap_ok(timeout_after_one(&h, &p, now, 5 * SEC) == 15 * SEC,
	       "5 s RTT at a 1 s interval: 15 s, below the 32 s cap");

	p = defaults();
	health_init(&h, &p, now);
	feed(&h, &now, 5, true);
	health_miss(&h, now);
	health_late_answer(&h, 400 * MS);
	tap_ok(h.state == HEALTH_UP && h.probes == 6 && h.missed == 1 &&
		       h.answered == 5 && h.misses == 1 &&
		       h.rtt_last_ns == 1 * MS && h.rtt_samples == 6 &&
		       health_probe_timeout_ns(&h) > 100 * MS,
	       "a late answer: still a miss, no state change, but an RTT "
	       "sample that raises the timeout (%.1f ms)",
	       (double)health_probe_timeout_ns(&h) / MS);
}

/*
 * The prober's order of work (health/probe.c, probe_run()), simulated
 * from event to event (an answer arriving, a deadline, a send, the end of
 * a hold-down): read the answers that arrived (one after its probe was
 * counted as a miss is a late answer), feed outcomes in send order (an
 * unanswered probe is a miss at its deadline), end a hold-down, send the
 * probe that is due with the timeout of that moment as its deadline.
 */
#define PSIM_PROBES 1024
#define PATH_LOST UINT64_MAX

struct path {
	uint64_t rtt1_ns;	/* RTT of probes sent before step_at */
	uint64_t step_at_ns;	/* since T0 */
	uint64_t rtt2_ns;	/* RTT from step_at + ramp on (a queue) */
	uint64_t ramp_ns;	/* rtt1 to rtt2 linearly over this time */
	uint64_t jitter_ns;	/* +- this much on rtt2, whole ms */
	uint64_t dead_at_ns;	/* since T0; probes from then on are lost */
	/* from step_at + ramp on, of every burst_every probes (one per
	 * 100 ms) the first burst are lost: a full FIFO's tail drops */
	unsigned int burst, burst_every;
};

struct psim {
	struct health h;
	struct path path;
	uint64_t sent[PSIM_PROBES], deadline[PSIM_PROBES];
	uint64_t arrive[PSIM_PROBES];	/* PATH_LOST: never */
	bool seen[PSIM_PROBES], answered[PSIM_PROBES];
	unsigned int next, oldest;
	int downs, ups;			/* transitions to DOWN, to UP */
	uint64_t first_down_ns;		/* 0: none */
	uint64_t min_timeout_ns, max_timeout_ns;
};

static uint64_t path_rtt(const struct path *path, uint64_t sent)
{
	uint64_t t = sent - T0, jitter_ms, r;

	if (path->dead_at_ns && t >= path->dead_at_ns)
		return PATH_LOST;
	if (t < path->step_at_ns)
		return path->rtt1_ns;
	t -= path->step_at_ns;
	jitter_ms = path->jitter_ns / MS;
	if (t < path->ramp_ns) {
		/* the queue fills: RTT and jitter grow with it */
		r = path->rtt1_ns + (path->rtt2_ns - path->rtt1_ns) * t /
					    path->ramp_ns;
		jitter_ms = jitter_ms * t / path->ramp_ns;
	} else {
		r = path->rtt2_ns;
		if (path->burst &&
		    (t - path->ramp_ns) / (100 * MS) % path->burst_every < path->burst)
			return PATH_LOST;
	}
	if (jitter_ms)	/* a fixed pseudo-random pattern, whole ms */
		r = r - jitter_ms * MS +
		    ((t / MS * 2654435761u) >> 7) % (2 * jitter_ms + 1) * MS;
	return r;
}

static void psim_note(struct psim *s, enum health_state from, bool changed,
		      uint64_t now)
{
	if (!changed || s->h.state == from)
		return;
	if (s->h.state == HEALTH_DOWN) {
		s->downs++;
		if (!s->first_down_ns)
			s->first_down_ns = now;
	} else if (s->h.state == HEALTH_UP) {
		s->ups++;
	}
}

static void psim_step(struct psim *s, uint64_t now, uint64_t *next_send)
{
	enum health_state from;
	unsigned int k = s->next > 64 ? s->next - 64 : 0;
	uint64_t timeout;

	for (; k < s->next; k++) {
		if (s->seen[k] || s->arrive[k] > now)
			continue;
		s->seen[k] = true;
		if (k < s->oldest)
			health_late_answer(&s->h, now - s->sent[k]);
		else
			s->answered[k] = true;
	}
	for (; s->oldest < s->next; s->oldest++) {
		k = s->oldest;
		from = s->h.state;
		if (s->answered[k])
			psim_note(s, from, health_reply(&s->h, now,
							now - s->sent[k]), now);
		else if (now >= s->deadline[k])
			psim_note(s, from, health_miss(&s->h, now), now);
		else
			break;
	}
	from = s->h.state;
	if (now >= health_deadline(&s->h))
		psim_note(s, from, health_tick(&s->h, now), now);
	if (now < *next_send || s->next == PSIM_PROBES)
		return;
	timeout = health_probe_timeout_ns(&s->h);
	if (timeout < s->min_timeout_ns)
		s->min_timeout_ns = timeout;
	if (timeout > s->max_timeout_ns)
		s->max_timeout_ns = timeout;
	k = s->next++;
	s->sent[k] = now;
	s->deadline[k] = now + timeout;
	s->arrive[k] = path_rtt(&s->path, now);
	if (s->arrive[k] != PATH_LOST)
		s->arrive[k] += now;
	*next_send += s->h.params.interval_ns;
}

/* When the next thing happens after the step at now: a send, an answer,
 * the oldest probe's deadline, the end of a hold-down. */
static uint64_t psim_next_event(const struct psim *s, uint64_t next_send)
{
	uint64_t next = next_send, d;
	unsigned int k = s->next > 64 ? s->next - 64 : 0;

	for (; k < s->next; k++)
		if (!s->seen[k] && s->arrive[k] < next)
			next = s->arrive[k];
	if (s->oldest < s->next && s->deadline[s->oldest] < next)
		next = s->deadline[s->oldest];
	d = health_deadline(&s->h);
	return d < next ? d : next;
}

/* Probe the path for duration_ns from T0 on. */
static void psim_run(struct psim *s, const struct health_params *p,
		     const struct path *path, uint64_t duration_ns)
{
	uint64_t now = T0, next_send = T0;

	memset(s, 0, sizeof(*s));
	s->path = *path;
	s->min_timeout_ns = UINT64_MAX;
	health_init(&s->h, p, T0);
	while (now < T0 + duration_ns) {
		psim_step(s, now, &next_send);
		now = psim_next_event(s, next_send);
	}
}

/* The first probe sent at or after the path died. */
static unsigned int psim_first_lost(const struct psim *s)
{
	unsigned int k;

	for (k = 0; k < s->next; k++)
		if (s->sent[k] - T0 >= s->path.dead_at_ns)
			return k;
	return s->next;
}

static void test_rto_queue(void)
{
	struct health_params fixed = defaults(), adaptive = defaults();
	static struct psim s;
	struct path path = { .rtt1_ns = 180 * MS, .step_at_ns = UINT64_MAX };

	fixed.adaptive_timeout = false;
	psim_run(&s, &adaptive, &path, 30 * SEC);
	tap_ok(s.downs == 0 && s.h.state == HEALTH_UP,
	       "180 ms RTT, interval 100 ms, adaptive: up, never down "
	       "(%llu of %llu probes missed, timeout now %.0f ms)",
	       (unsigned long long)s.h.missed, (unsigned long long)s.h.probes,
	       (double)health_probe_timeout_ns(&s.h) / MS);
	psim_run(&s, &fixed, &path, 30 * SEC);
	tap_ok(s.downs == 1 && s.ups == 0 && s.h.state == HEALTH_DOWN &&
		       s.h.answered == 0,
	       "... with the fixed 100 ms timeout: down, every answer late");

	/* the testbed's case: 20 ms, then bulk TCP fills the queue at once */
	path = (struct path){ .rtt1_ns = 20 * MS, .step_at_ns = 10 * SEC,
			      .rtt2_ns = 180 * MS };
	psim_run(&s, &adaptive, &path, 40 * SEC);
	tap_ok(s.downs == 0 && s.h.state == HEALTH_UP && s.h.missed <= 2,
	       "20 ms, then a step to 180 ms: adaptive stays up (%llu "
	       "misses while the timeout caught up)",
	       (unsigned long long)s.h.missed);
	psim_run(&s, &fixed, &path, 40 * SEC);
	tap_ok(s.downs == 1 && s.h.state == HEALTH_DOWN,
	       "... the fixed timeout fails the congested tunnel over");

	/* a queue that fills in 1 s and then swings: 150 +- 40 ms */
	path = (struct path){ .rtt1_ns = 20 * MS, .step_at_ns = 5 * SEC,
			      .rtt2_ns = 150 * MS, .ramp_ns = 1 * SEC,
			      .jitter_ns = 40 * MS };
	psim_run(&s, &adaptive, &path, 60 * SEC);
	tap_ok(s.downs == 0 && s.h.state == HEALTH_UP,
	       "a queue filling in 1 s, then 150 +- 40 ms for 54 s: adaptive "
	       "stays up (%llu misses, timeout %.0f..%.0f ms)",
	       (unsigned long long)s.h.missed, (double)s.min_timeout_ns / MS,
	       (double)s.max_timeout_ns / MS);
	psim_run(&s, &fixed, &path, 60 * SEC);
	tap_ok(s.downs >= 1, "... the fixed timeout: %d downs", s.downs);
}

/* Down at the deadline of the N-th lost probe: within (N - 1) x I + the
 * longest timeout those N probes were sent with. */
static void check_dead(struct psim *s, const char *what)
{
	const struct health_params *p = &s->h.params;
	unsigned int k = psim_first_lost(s), i, n;
	uint64_t timeout = 0, took, bound;

	/* the count in force when the first probe was lost: its last answer
	 * (queue_ns, frozen while probes are lost) decides */
	n = health_down_misses(&s->h);
	for (i = k; i < k + n; i++)
		if (s->deadline[i] - s->sent[i] > timeout)
			timeout = s->deadline[i] - s->sent[i];
	bound = (n - 1) * p->interval_ns + timeout;
	took = s->first_down_ns ? s->first_down_ns - s->sent[k] : UINT64_MAX;
	tap_ok(s->downs == 1 && s->first_down_ns == s->deadline[k + n - 1] &&
		       took <= bound,
	       "%s: down %.1f ms after the first lost probe, bound "
	       "(N - 1) x I + timeout = %.1f ms (srtt %.1f, rttvar %.1f ms)",
	       what, (double)took / MS, (double)bound / MS,
	       (double)s->h.srtt_ns / MS, (double)s->h.rttvar_ns / MS);
}

static void test_rto_dead(void)
{
	struct health_params p = defaults();
	static struct psim s;
	struct path path = { .rtt1_ns = 20 * MS, .step_at_ns = UINT64_MAX,
			     .dead_at_ns = 10 * SEC + 50 * MS };
	unsigned int k;

	psim_run(&s, &p, &path, 12 * SEC);
	k = psim_first_lost(&s);
	tap_ok(s.deadline[k] - s.sent[k] == 100 * MS,
	       "20 ms path: its timeout is the floor, 100 ms");
	check_dead(&s, "dead after 20 ms answers");
	tap_ok(s.first_down_ns - s.sent[k] == 300 * MS,
	       "... (N - 1) x I + floor = 300 ms exactly, as without a queue");

	path = (struct path){ .rtt1_ns = 20 * MS, .step_at_ns = 5 * SEC,
			      .rtt2_ns = 180 * MS,
			      .dead_at_ns = 25 * SEC + 50 * MS };
	psim_run(&s, &p, &path, 28 * SEC);
	check_dead(&s, "dead after 180 ms answers (a full queue)");
	k = psim_first_lost(&s);
	/* srtt converges to 180 ms from below, by integer steps: ns off */
	tap_ok(s.first_down_ns - s.sent[k] <=
		       (p.congested_misses - 1) * p.interval_ns + s.h.srtt_ns + 50 * MS &&
		       s.first_down_ns - s.sent[k] > 1130 * MS - 1000,
	       "... congested: (N' - 1) x I + srtt + floor / 2 = 1130 ms with "
	       "N' = congested-misses = 10");
}

/* A tunnel up on a 1 ms path: 20 answers 100 ms apart from T0; the time
 * of the last. */
static uint64_t up_1ms(struct health *h, const struct health_params *p)
{
	uint64_t t = T0;
	int i;

	health_init(h, p, t);
	for (i = 0; i < 20; i++)
		health_reply(h, t += 100 * MS, 1 * MS);
	return t;
}

/* A tunnel that bulk TCP fills: its probes wait in the FIFO and some are
 * tail-dropped in bursts. It is congested, not dead. */
static void test_congested(void)
{
	struct health_params p = defaults(), old = defaults();
	static struct psim s;
	struct path path = { .rtt1_ns = 20 * MS, .step_at_ns = 10 * SEC,
			     .rtt2_ns = 120 * MS, .ramp_ns = 500 * MS,
			     .burst = 5, .burst_every = 20 };

	psim_run(&s, &p, &path, 70 * SEC);
	tap_ok(s.downs == 0 && s.h.state == HEALTH_UP && s.h.missed >= 5 * 14 &&
		       health_congested(&s.h),
	       "a 100 ms queue that drops 5 probes in a row of every 20 for "
	       "60 s: up, never down (%llu misses), congested (queue %.0f ms "
	       "over %.0f ms)",
	       (unsigned long long)s.h.missed, (double)s.h.queue_ns / MS,
	       (double)health_rtt_min_ns(&s.h) / MS);
	old.congested_misses = old.down_misses;
	psim_run(&s, &old, &path, 70 * SEC);
	tap_ok(s.downs >= 1,
	       "... with congested-misses = down-misses (3), as before: %d downs",
	       s.downs);

	/* one answer held up (a scheduling hiccup) is not a queue; answers
	 * that keep waiting are */
	{
		struct health h;
		uint64_t t = up_1ms(&h, &p);
		int i;

		health_reply(&h, t += 100 * MS, 21 * MS);
		tap_ok(!health_congested(&h) && health_down_misses(&h) == 3,
		       "1 ms path, one answer 20 ms late: not congested (SRTT "
		       "%.1f ms over %.1f)", (double)h.srtt_ns / MS,
		       (double)health_rtt_min_ns(&h) / MS);
		for (i = 0; i < 5; i++)
			health_reply(&h, t += 100 * MS, 41 * MS);
		tap_ok(health_congested(&h) && health_down_misses(&h) == 10,
		       "... then 5 answers 40 ms late: congested (SRTT %.1f ms)",
		       (double)h.srtt_ns / MS);
	}

	/* the other family through the same device sees the queue: this
	 * one, with no answer yet that shows it, takes N' misses too */
	{
		struct health h;
		uint64_t t = up_1ms(&h, &p);
		int i;

		h.path_queue_ns = 40 * MS;
		tap_ok(health_congested(&h) && health_down_misses(&h) == 10,
		       "no queue of its own, 40 ms on the other family's probes: congested");
		for (i = 0; i < 9; i++)
			health_miss(&h, t += 100 * MS);
		tap_ok(h.state == HEALTH_UP, "... 9 misses in a row: still up");
		h.path_queue_ns = 0;
		tap_ok(!health_congested(&h), "... and not once the other family's queue is gone");
	}

	/* an idle path keeps the fast verdict */
	psim_run(&s, &p, &(struct path){ .rtt1_ns = 20 * MS, .step_at_ns = UINT64_MAX },
		 5 * SEC);
	tap_ok(!health_congested(&s.h) && health_down_misses(&s.h) == 3,
	       "an idle 20 ms path: not congested, 3 misses take it down");

	/* the path gets longer for good (another underlay route): the
	 * minimum follows within two buckets, and the fast verdict returns
	 * (probes every second here: the simulation holds PSIM_PROBES) */
	path = (struct path){ .rtt1_ns = 20 * MS, .step_at_ns = 5 * SEC,
			      .rtt2_ns = 60 * MS };
	p.interval_ns = SEC;
	psim_run(&s, &p, &path, 8 * SEC);
	tap_ok(health_congested(&s.h) && health_down_misses(&s.h) == 10,
	       "20 ms, then 60 ms for good: congested at first (10 misses)");
	psim_run(&s, &p, &path, 5 * SEC + 2 * HEALTH_RTT_MIN_BUCKET_NS + SEC);
	tap_ok(!health_congested(&s.h) && health_rtt_min_ns(&s.h) == 60 * MS,
	       "... %.0f s later the minimum is 60 ms and it is not",
	       (double)(2 * HEALTH_RTT_MIN_BUCKET_NS + SEC) / SEC);
}


/* key = value into the settings at base, as a config file sets it. */
static int key_set(const struct sc_option *t, void *base, const char *key, const char *value)
{
	struct sc_opt_ref r;
	char err[256];

	if (sc_option_find(t, base, key, false, &r))
		return -1;
	return sc_option_set(&r, value, "", err, sizeof(err));
}

/* The rule across the [health] rows, named as given, with the value. */
static void test_health_settings_cross(void)
{
	struct health_settings file = { 0 }, cli = { 0 }, out;
	char err[256] = "";

	tap_ok(!key_set(health_settings_opts, &file, "interval", "50ms") &&
		       !key_set(health_settings_opts, &file, "timeout", "2s") &&
		       health_settings_resolve(&out, &file, NULL, err, sizeof(err)) == -EINVAL &&
		       !strcmp(err, "timeout '2s': out of range with the other settings: accepted: "
				    "1ms..3600s (interval/10 .. 32 x interval)"),
	       "timeout above 32 x interval, from a file: its key and value (%s)", err);
	tap_ok(!key_set(health_settings_opts, &cli, "timeout", "2ms") &&
		       health_settings_resolve(&out, &file, &cli, err, sizeof(err)) == -EINVAL &&
		       !strcmp(err, "--health-timeout '2ms': out of range with the other settings: "
				    "accepted: 1ms..3600s (interval/10 .. 32 x interval)"),
	       "timeout below interval/10, from the command line: its option (%s)", err);
	tap_ok(!key_set(health_settings_opts, &cli, "timeout", "0.2s") &&
		       !health_settings_resolve(&out, &file, &cli, err, sizeof(err)),
	       "within the rule: resolved");
}

/* The [spill] settings: defaults, a file under the command line, the rule
 * across rows named as given, and the controller's parameters. */
static int spill_set(struct spill_settings *s, const char *key, const char *value)
{
	return key_set(spill_settings_opts, s, key, value);
}

static void test_spill_settings(void)
{
	struct spill_settings d, file = { 0 }, cli = { 0 }, out;
	struct spill_params p;
	char err[256] = "";

	spill_settings_default(&d);
	spill_params_default(&p);
	tap_ok(d.enabled && d.target_ns == p.target_ns && d.long_target_ns == p.long_target_ns &&
		       d.rate_init_bps == p.rate_init_bps && d.rate_min_bps == p.rate_min_bps &&
		       !d.tunnel_rate_bps && d.grant_gap_ns == p.grant_gap_ns &&
		       d.hold_margin_ns == p.hold_margin_ns &&
		       d.frame_share_pct == p.frame_share_pct && p.frame_share_pct == 10 &&
		       d.limit_bytes == SPILL_DEF_LIMIT_BYTES,
	       "spill defaults are the controller's (enabled, 5 ms, 10 ms, 1 Mbit/s, 100 kbit/s, 2 "
	       "s, 20 ms, 10 %%, 1 MB)");
	tap_ok(!spill_set(&file, "target-delay", "8ms") &&
		       !spill_set(&file, "tunnel-rate", "20mbit") &&
		       !spill_set(&file, "limit", "500000") &&
		       !spill_set(&cli, "target-delay", "3ms") &&
		       !spill_set(&file, "frame-share", "0") &&
		       !spill_set(&cli, "frame-share", "25") &&
		       spill_set(&cli, "target-delay", "0ms") && spill_set(&cli, "rate-min", "1") &&
		       spill_set(&cli, "limit", "100") && spill_set(&cli, "frame-share", "101"),
	       "spill keys set from text; out-of-range values refused");
	tap_ok(!spill_settings_resolve(&out, &file, &cli, err, sizeof(err)) &&
		       out.target_ns == 3 * MS && out.tunnel_rate_bps == 20000000 &&
		       out.limit_bytes == 500000 && out.enabled,
	       "the command line over the file over the defaults");
	spill_settings_params(&out, 100 * MS, &p);
	tap_ok(p.rate_max_bps == 19000000 && p.target_ns == 3 * MS && p.interval_ns == 100 * MS &&
		       p.frame_share_pct == 25,
	       "a configured tunnel rate caps the spilled rate at 0.95 x it; the frame share as "
	       "given");
	spill_settings_default(&out);
	spill_settings_params(&out, 100 * MS, &p);
	tap_ok(p.rate_max_bps == SPILL_DEF_RATE_MAX_BPS, "no tunnel rate: the line-rate ceiling");
	cli = (struct spill_settings){ 0 };
	tap_ok(!spill_set(&cli, "rate-min", "2mbit") &&
		       spill_settings_resolve(&out, NULL, &cli, err, sizeof(err)) == -EINVAL &&
		       !strcmp(err, "--spill-rate-min '2mbit': out of range with the other "
				    "settings: accepted: at most rate-init"),
	       "rate-min above rate-init, from the command line: named as its option (%s)", err);
	file = (struct spill_settings){ 0 };
	tap_ok(!spill_set(&file, "tunnel-rate", "1mbit") &&
		       spill_settings_resolve(&out, &file, NULL, err, sizeof(err)) == -EINVAL &&
		       !strcmp(err, "rate-init '1mbit': out of range with the other settings: "
				    "accepted: at most 0.95 x tunnel-rate"),
	       "rate-init above 0.95 x tunnel-rate, from a file: named as its key (%s)", err);
}

int main(void)
{
	test_params();
	test_settings();
	test_counts();
	test_hold_down();
	test_damping();
	test_flapping();
	test_plans();
	test_combine();
	test_rtt_loss();
	test_log_lines();
	test_rto_formula();
	test_rto_queue();
	test_rto_dead();
	test_health_settings_cross();
	test_spill_settings();
	test_congested();
	return tap_done();
}
