// SPDX-License-Identifier: GPL-2.0
/*
 * test_dup_ctl.c - when the agent turns the short class's copy on and off
 * (health/dup_ctl.c), on simulated time. Each tunnel is probed every
 * 100 ms into its health (health.c with health's defaults: a loss window
 * of the last 100 probes), as the agent's are; the decision looks at both
 * windows every 500 ms (DUP_STEP_NS), as the agent does. Output is TAP.
 *
 * Checked: a loss step on SHORT turns the copy on within the probes it
 * takes to lose two, never before the step; one lost probe does not; the
 * copy goes off DUP_QUIET_WINDOWS loss windows after SHORT last lost a
 * probe alone, not earlier; a steady loss keeps it on without flapping;
 * loss on LONG alone does not turn it on, nor loss at the same moments
 * on both (a stall), while loss on LONG at other moments does not keep
 * SHORT's from turning it on; the settings on and off override the loss.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dup_agent.h"
#include "health.h"
#include "tap.h"

#define MS 1000000ULL
#define SEC (1000 * MS)
#define PROBE_NS (100 * MS)
#define RTT_NS (20 * MS)

/* A probe's outcome into the tunnel's health, whose loss window the agent
 * hands to the decision (dup_agent_step()). */
static void probe(struct health *h, uint64_t now_ns, bool lost)
{
	if (lost)
		health_miss(h, now_ns);
	else
		health_reply(h, now_ns, RTT_NS);
}

/* Whether probe k (from 0) of a tunnel is lost: a loss per mille as a
 * regular pattern, so that a run is exact. */
typedef bool (*loss_fn)(uint64_t t_ns, uint64_t k);

struct sim {
	struct dup_ctl c;
	struct health h[DUP_TUNNELS];
	uint64_t now, k;
	uint64_t first_on, last_off, changes;
	bool on;
};

static void sim_init(struct sim *s)
{
	struct health_params p;

	memset(s, 0, sizeof(*s));
	health_params_default(&p);
	health_init(&s->h[DUP_SHORT], &p, 0);
	health_init(&s->h[DUP_LONG], &p, 0);
	dup_ctl_init(&s->c);
	s->now = 1;	/* the decision's clock starts above 0 */
	s->first_on = s->last_off = UINT64_MAX;
}

/* Run until end_ns: probes every 100 ms, a decision every 500 ms. */
static void sim_run(struct sim *s, uint64_t end_ns, loss_fn f_short, loss_fn f_long)
{
	for (; s->now < end_ns; s->now += PROBE_NS, s->k++) {
		probe(&s->h[DUP_SHORT], s->now, f_short(s->now, s->k));
		probe(&s->h[DUP_LONG], s->now, f_long(s->now, s->k));
		if (s->k % 5 == 4) {
			struct dup_loss l = {
				.lost = { s->h[DUP_SHORT].window_lost, s->h[DUP_LONG].window_lost },
				.len = { s->h[DUP_SHORT].window_len, s->h[DUP_LONG].window_len },
				.missed = { s->h[DUP_SHORT].missed, s->h[DUP_LONG].missed },
				.window_ns = s->h[DUP_SHORT].params.loss_window *
					     s->h[DUP_SHORT].params.interval_ns,
			};

			if (dup_ctl_tick(&s->c, &l, s->now)) {
				s->changes++;
				if (s->c.want && s->first_on == UINT64_MAX)
					s->first_on = s->now;
				if (!s->c.want)
					s->last_off = s->now;
			}
		}
	}
}

static uint64_t step_at, stop_at;	/* the loss pattern's on and off */

static bool clean(uint64_t t, uint64_t k)
{
	(void)t, (void)k;
	return false;
}

/* 3 %: one probe in 33, between step_at and stop_at */
static bool step3(uint64_t t, uint64_t k)
{
	return t >= step_at && t < stop_at && k % 33 == 0;
}

static bool one_probe(uint64_t t, uint64_t k)
{
	(void)t;
	return k == 150;
}

static bool five_pct(uint64_t t, uint64_t k)
{
	(void)t;
	return k % 20 == 0;
}

/* 2 % on LONG, never within 10 probes (two steps) of step3's losses */
static bool long_apart(uint64_t t, uint64_t k)
{
	(void)t;
	return k % 66 == 16;
}

/* 1.5 %: one probe in 67 */
static bool steady(uint64_t t, uint64_t k)
{
	(void)t;
	return k % 67 == 0;
}

int main(void)
{
	struct sim s;

	/* a loss step: on within the probes two losses take (one in 33
	 * probes: at most 66 after the step) plus a decision step, never
	 * before */
	sim_init(&s);
	step_at = 20 * SEC;
	stop_at = 60 * SEC;
	sim_run(&s, 60 * SEC, step3, clean);
	tap_ok(s.first_on >= step_at, "3 %% loss from 20 s: not on before it (on at %.1f s)",
	       s.first_on / 1e9);
	tap_ok(s.first_on <= step_at + 66 * PROBE_NS + 2 * DUP_STEP_NS,
	       "on within two lost probes and two steps (%.1f s after the step)",
	       (s.first_on - step_at) / 1e9);
	tap_ok(dup_ctl_copy(&s.c, DUP_COPY_AUTO) && s.c.losing, "auto: on while SHORT loses");
	tap_ok(s.changes == 1, "no flapping while the loss lasts (%llu changes)",
	       (unsigned long long)s.changes);
	tap_ok(s.c.loss_ppm[DUP_SHORT] >= 30000 && s.c.loss_ppm[DUP_LONG] == 0,
	       "the ratios: SHORT %u ppm, LONG %u ppm", s.c.loss_ppm[DUP_SHORT],
	       s.c.loss_ppm[DUP_LONG]);

	/* recovery: the copy stays on for the quiet time after the last
	 * lone loss (6 windows of 10 s), then goes off */
	sim_run(&s, 160 * SEC, step3, clean);
	{
		uint64_t last = s.c.lone_last_ns, quiet = DUP_QUIET_WINDOWS * 100 * PROBE_NS;

		tap_ok(last > stop_at - 4 * SEC && last <= stop_at + 2 * DUP_STEP_NS,
		       "the last lone loss is the loss's last (%.1f s)", last / 1e9);
		tap_ok(s.last_off != UINT64_MAX && s.last_off >= last + quiet &&
			       s.last_off <= last + quiet + DUP_STEP_NS,
		       "off %llu s after SHORT last lost alone, not earlier (%.1f s after)",
		       (unsigned long long)(quiet / SEC), (s.last_off - last) / 1e9);
		tap_ok(!dup_ctl_copy(&s.c, DUP_COPY_AUTO) && s.changes == 2,
		       "off, and one change each way (%llu)", (unsigned long long)s.changes);
	}

	/* a steady loss: on, and held on by the quiet time */
	sim_init(&s);
	sim_run(&s, 20 * SEC, steady, clean);
	tap_ok(s.c.want, "1.5 %% steady: on within 20 s");
	sim_run(&s, 320 * SEC, steady, clean);
	tap_ok(s.c.want && s.changes == 1,
	       "1.5 %% steady: still on after 5 min, no flapping (%llu)",
	       (unsigned long long)s.changes);

	/* a single lost probe is chance */
	sim_init(&s);
	sim_run(&s, 60 * SEC, one_probe, clean);
	tap_ok(s.changes == 0 && s.first_on == UINT64_MAX, "one lost probe: never on");

	/* loss on LONG only, and alike on both */
	sim_init(&s);
	sim_run(&s, 60 * SEC, clean, five_pct);
	tap_ok(s.changes == 0, "5 %% on LONG only: never on");
	sim_init(&s);
	sim_run(&s, 60 * SEC, five_pct, five_pct);
	tap_ok(s.changes == 0, "5 %% on both at the same moments (a stall): never on");
	step_at = 0;
	stop_at = UINT64_MAX;
	sim_init(&s);
	sim_run(&s, 20 * SEC, step3, long_apart);
	tap_ok(s.c.want, "3 %% on SHORT, 2 %% on LONG at other moments (its bulk): on");

	/* the settings */
	sim_init(&s);
	sim_run(&s, 10 * SEC, clean, clean);
	tap_ok(dup_ctl_copy(&s.c, DUP_COPY_ON), "on: on with SHORT clean");
	tap_ok(!dup_ctl_copy(&s.c, DUP_COPY_AUTO), "auto: off with SHORT clean");
	sim_init(&s);
	sim_run(&s, 20 * SEC, step3, clean);
	tap_ok(s.c.want && !dup_ctl_copy(&s.c, DUP_COPY_OFF), "off: off while SHORT loses");
	return tap_done();
}
