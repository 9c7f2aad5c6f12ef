// SPDX-License-Identifier: GPL-2.0
/*
 * health_agent.c - the agent's tunnel health loop (health_agent.h): after
 * "route up" recorded its routes, both tunnels are probed (SHORT index 0,
 * LONG 1), their links watched, and every change of the tunnels' states
 * applied as a routing plan (health_failover_apply); link up, a lost route or
 * lost events re-converge. Without a record it looks again every few
 * seconds, quietly.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "health_agent.h"
#include "health_file.h"
#include "params.h"
#include "tcfg.h"
#include "util.h"

#define HA_RETRY_NS	(3 * FS_NS_PER_S)	/* no record: look again */
#define HA_PUBLISH_NS	(2 * FS_NS_PER_S)	/* health file refresh */
#define HA_MAX_EVENTS	16
/* A tunnel device carrying the long class that sent more than this over
 * the last >= 100 ms is busy with our own traffic, and stays so for
 * HA_BUSY_HANGOVER_NS after (its queue drains): its queue and losses are
 * then ours (roles.h). Probes and spill's timestamps are far below it. */
#define HA_BUSY_BPS		1000000ull
#define HA_BUSY_SAMPLE_NS	(100 * FS_NS_PER_MS)
#define HA_BUSY_HANGOVER_NS	FS_NS_PER_S

static const char *const tunnel_name[HEALTH_TUNNELS] = { "short", "long" };

static const char *family_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

/* A tunnel's state over the families probed through it
 * (health_combine()). */
static enum health_state tunnel_state(const struct health_agent *ha, int t)
{
	enum health_state st[2 * HEALTH_TUNNELS];
	unsigned int i, n = 0;

	for (i = 0; i < ha->nprobes; i++)
		if (ha->probe[i].tunnel == t)
			st[n++] = health_prober_tunnel(ha->pr, i)->state;
	return health_combine(st, n);
}

/* How many families are probed through tunnel t. */
static int tunnel_families(const struct health_agent *ha, int t)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < ha->nprobes; i++)
		n += ha->probe[i].tunnel == t;
	return n;
}

/* both-down: the value selects enum health_both_down */
static const struct sc_enum both_down_values[] = {
	{ "keep", HEALTH_BOTH_DOWN_KEEP }, { "main", HEALTH_BOTH_DOWN_MAIN }, { NULL, 0 },
};

/* One row of the settings: the [health] key _name, the "run" option
 * --_cli (the ranges: docs/health.md; the rules across rows:
 * health_params_check()). */
#define HEALTH_OPT(_name, _cli, _type, m, ...)					\
	SC_OPTION(_name, _type, struct health_settings, m, .cli_name = _cli,	\
		  __VA_ARGS__)
#define HEALTH_DURATION(_name, _cli, m, _lo_ms, _hi_ms, _help)		\
	HEALTH_OPT(_name, _cli, SC_OPT_DURATION, params.m, .unit = SC_UNIT_MS,	\
		   .unit_suffix = true, .lo = _lo_ms, .hi = _hi_ms, .metavar = "DUR",	\
		   .help = _help)
#define HEALTH_MS(ns) ((double)(ns) / FS_NS_PER_MS)
#define ROLES_DURATION(_name, m, _help)						\
	HEALTH_OPT(_name, _name, SC_OPT_DURATION, roles.m, .unit = SC_UNIT_MS,	\
		   .unit_suffix = true, .lo = 0, .hi = HEALTH_MS(ROLES_MAX_NS), .metavar = "DUR",\
		   .help = _help)

/* roles: the value selects enum roles_mode */
static const struct sc_enum roles_values[] = {
	{ "auto", ROLES_AUTO }, { "fixed", ROLES_FIXED }, { NULL, 0 },
};
const struct sc_option health_settings_opts[] = {
	HEALTH_OPT("enabled", "health", SC_OPT_YESNO, enabled, .metavar = "yes|no",
		   .help = "probe the tunnels of route up and steer its routes (default yes)"),
	HEALTH_DURATION("interval", "health-interval", interval_ns,
			HEALTH_MS(HEALTH_MIN_INTERVAL_NS), HEALTH_MS(HEALTH_MAX_INTERVAL_NS),
			"between two probes of a tunnel (default 100ms)"),
	HEALTH_DURATION("timeout", "health-timeout", timeout_ns, 1, HEALTH_MS(HEALTH_MAX_HOLD_NS),
			"a probe unanswered this long is a miss; the floor when adaptive (default: "
			"the interval)"),
	HEALTH_OPT("adaptive-timeout", "health-adaptive-timeout", SC_OPT_YESNO,
		   params.adaptive_timeout, .metavar = "yes|no",
		   .help = "timeout from the probes' RTT, as TCP's RTO (default yes)"),
	HEALTH_OPT("down-misses", "health-down-misses", SC_OPT_UINT, params.down_misses, .lo = 1,
		   .hi = HEALTH_MAX_COUNT, .metavar = "N",
		   .help = "consecutive misses: tunnel down (default 3)"),
	HEALTH_OPT("congested-misses", "health-congested-misses", SC_OPT_UINT,
		   params.congested_misses, .lo = 1, .hi = HEALTH_MAX_COUNT, .metavar = "N",
		   .help = "consecutive misses while the probes see a queue: down (default 10)"),
	HEALTH_OPT("up-successes", "health-up-successes", SC_OPT_UINT, params.up_successes, .lo = 1,
		   .hi = HEALTH_MAX_COUNT, .metavar = "N",
		   .help = "consecutive answers: tunnel up again (default 5)"),
	HEALTH_DURATION("hold-min", "health-hold-min", hold_min_ns, 0,
			HEALTH_MS(HEALTH_MAX_HOLD_NS), "hold-down after a first flap (default 1s)"),
	HEALTH_DURATION("hold-max", "health-hold-max", hold_max_ns, 0,
			HEALTH_MS(HEALTH_MAX_HOLD_NS), "hold-down ceiling (default 32s)"),
	HEALTH_DURATION("half-life", "health-half-life", half_life_ns, HEALTH_MS(FS_NS_PER_S / 10),
			HEALTH_MS(HEALTH_MAX_HOLD_NS), "flap penalty half-life (default 60s)"),
	HEALTH_OPT("loss-window", "health-loss-window", SC_OPT_UINT, params.loss_window, .lo = 1,
		   .hi = HEALTH_MAX_LOSS_WINDOW, .metavar = "N",
		   .help = "probes in the loss ratio (default 100)"),
	HEALTH_OPT("both-down", NULL, SC_OPT_ENUM, both_down, .values = both_down_values,
		   .metavar = "keep|main",
		   .help = "both tunnels down: keep our routes, or withdraw them (default keep)"),
	HEALTH_OPT("target-short", NULL, SC_OPT_ADDR, target[HEALTH_SHORT], .noun = "address",
		   .metavar = "ADDR",
		   .help = "probe target through the SHORT tunnel (default: its gateway)"),
	HEALTH_OPT("target-long", NULL, SC_OPT_ADDR, target[HEALTH_LONG], .noun = "address",
		   .metavar = "ADDR",
		   .help = "probe target through the LONG tunnel (default: its gateway)"),
	HEALTH_OPT("roles", "roles", SC_OPT_ENUM, roles.mode, .values = roles_values,
		   .metavar = "auto|fixed",
		   .help = "auto: the short class rides the tunnel with the least expected delay; "
			   "fixed: as route up configured (default auto)"),
	HEALTH_OPT("roles-margin", "roles-margin", SC_OPT_UINT, roles.margin_pct, .lo = 0,
		   .hi = ROLES_MAX_MARGIN_PCT, .metavar = "PCT",
		   .help = "the configured SHORT must be worse by this percent of the other's "
			   "expected delay (default 20)"),
	ROLES_DURATION("roles-margin-abs", margin_abs_ns, "and by this much more (default 15ms)"),
	ROLES_DURATION("roles-sustain", sustain_ns,
		       "a move is due after the wish held this long (default 200ms; a return: "
		       "3s at least)"),
	ROLES_DURATION("roles-hold-min", hold_min_ns,
		       "no move for this long after a move, doubled when they flap (default 5s)"),
	ROLES_DURATION("roles-hold-max", hold_max_ns, "the hold-down's ceiling (default 80s)"),
	ROLES_DURATION(
		"roles-sla-delay", sla_delay_ns,
		"SLA: a tunnel whose expected delay is above this breaks it (default 0: off)"),
	HEALTH_OPT("roles-sla-loss", "roles-sla-loss", SC_OPT_NUMBER, roles.sla_loss_pct, .lo = 0,
		   .hi = 100, .metavar = "PCT",
		   .help = "SLA: a tunnel losing more probes than this percent breaks it (default "
			   "0: off)"),
	ROLES_DURATION("roles-sla-jitter", sla_jitter_ns,
		       "SLA: a tunnel with more jitter than this breaks it (default 0: off)"),
	SC_OPTIONS_END,
};

void health_settings_default(struct health_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->enabled = true;
	health_params_default(&s->params);
	s->both_down = HEALTH_BOTH_DOWN_KEEP;
	roles_params_default(&s->roles);
}

/* The rule across rows a field of health_params_check() broke. */
static const char *cross_rule(const char *field)
{
	return !strcmp(field, "timeout") ? " (interval/10 .. 32 x interval)" :
	       !strcmp(field, "hold-min") ? " (at most hold-max)" :
	       !strcmp(field, "hold-max") ? " (at least hold-min)" :
	       !strcmp(field, "roles-hold-max") ? " (at least roles-hold-min)" : "";
}

int health_settings_check(const struct health_settings *s, const struct health_settings *cli,
			  char *err, size_t errlen)
{
	struct sc_opt_ref r;
	const char *field;
	char rule[160];

	if (!health_params_check(&s->params, &field) && !roles_params_check(&s->roles, &field))
		return 0;
	rule[0] = '\0';
	if (!sc_option_find(health_settings_opts, (void *)s, field, false, &r))
		sc_option_accepted(r.opt, rule, sizeof(rule));
	snprintf(rule + strlen(rule), sizeof(rule) - strlen(rule), "%s", cross_rule(field));
	return sc_option_cross_error(health_settings_opts, (void *)s, cli, field, rule, err,
				     errlen);
}

int health_settings_resolve(struct health_settings *out, const struct health_settings *file,
			    const struct health_settings *cli, char *err, size_t errlen)
{
	health_settings_default(out);
	sc_options_layer(health_settings_opts, out, file, cli);
	return health_settings_check(out, cli, err, errlen);
}

void health_agent_init(struct health_agent *ha, const struct health_settings *s,
		       const struct spill_settings *sp, const struct spill_dp_ops *dp_ops,
		       void *dp_arg)
{
	memset(ha, 0, sizeof(*ha));
	pthread_mutex_init(&ha->lock, NULL);
	ha->s = *s;
	spill_agent_init(&ha->spill, sp, dp_ops, dp_arg);
	dup_agent_init(&ha->dup);
}

static bool same_params(const struct health_params *a, const struct health_params *b)
{
	return a->interval_ns == b->interval_ns && a->timeout_ns == b->timeout_ns &&
	       a->down_misses == b->down_misses &&
	       a->congested_misses == b->congested_misses && a->up_successes == b->up_successes &&
	       a->hold_min_ns == b->hold_min_ns && a->hold_max_ns == b->hold_max_ns &&
	       a->half_life_ns == b->half_life_ns && a->loss_window == b->loss_window &&
	       a->adaptive_timeout == b->adaptive_timeout;
}

static void stop_probing(struct health_agent *ha);

bool health_agent_switch(struct health_agent *ha, const struct health_settings *next)
{
	bool probing = ha->fo != NULL;

	if (same_params(&ha->s.params, &next->params) && ha->s.both_down == next->both_down &&
	    ha->s.enabled == next->enabled &&
	    !memcmp(ha->s.target, next->target, sizeof(ha->s.target)) &&
	    !memcmp(&ha->s.roles, &next->roles, sizeof(ha->s.roles)))
		return false;
	ha->s = *next;
	/* a new prober with the new settings; the routes in force stay until
	 * both tunnels have a verdict again */
	stop_probing(ha);
	ha->next_open_ns = 0;
	ha->open_failing = false;
	if (probing)
		pr_info("run: health: new settings: probing %s",
			ha->s.enabled ? "restarts" : "stops");
	return true;
}

void health_agent_metrics(struct health_agent *ha, struct health_metrics *m)
{
	pthread_mutex_lock(&ha->lock);
	*m = ha->metrics;
	pthread_mutex_unlock(&ha->lock);
}

/* Which class the plan in force routes off its own tunnel: split, a class
 * not on its tunnel; ecmp, the one table without both members (both
 * classes); both down with "main", both (our routes removed). */
static void failed_over(struct health_agent *ha, bool out[HEALTH_TUNNELS])
{
	struct health_plan p = health_failover_in_force(ha->fo);
	bool ecmp = ha->info.mode == HEALTH_MODE_ECMP;

	if (p.action == HEALTH_PLAN_MAIN) {
		out[HEALTH_SHORT] = out[HEALTH_LONG] = true;
	} else if (p.action == HEALTH_PLAN_ROUTE && ecmp) {
		out[HEALTH_SHORT] = out[HEALTH_LONG] =
			p.short_via != (HEALTH_VIA_SHORT | HEALTH_VIA_LONG);
	} else if (p.action == HEALTH_PLAN_ROUTE) {
		/* a roles swap (roles.h) is no failover: each class is on
		 * the tunnel the roles give it */
		bool sw = ha->roles.swapped;

		out[HEALTH_SHORT] = p.short_via != (sw ? HEALTH_VIA_LONG : HEALTH_VIA_SHORT);
		out[HEALTH_LONG] = p.long_via != (sw ? HEALTH_VIA_SHORT : HEALTH_VIA_LONG);
	}
}

/* The metrics from the prober (or none while not probing). */
static void update_metrics(struct health_agent *ha)
{
	struct health_metrics m = { .probing = ha->pr != NULL, .failovers = ha->failovers };
	const struct health *h;
	int t;

	for (t = 0; m.probing && t < HEALTH_TUNNELS; t++) {
		h = health_prober_tunnel(ha->pr, t);
		strcpy(m.dev[t], ha->info.dev[t]);
		m.up[t] = tunnel_state(ha, t) == HEALTH_UP;
		m.rtt_s[t] = h->rtt_ewma_ns / 1e9;
		m.timeout_s[t] = health_probe_timeout_ns(h) / 1e9;
		m.loss[t] = health_loss_ratio(h);
		m.base_rtt_s[t] = quality_base_ns(&ha->q[t]) / 1e9;
		m.queue_s[t] = quality_queue_ns(&ha->q[t]) / 1e9;
		m.jitter_s[t] = quality_jitter_ns(&ha->q[t]) / 1e9;
		m.expected_s[t] = quality_expected_ns(&ha->q[t]) / 1e9;
		m.short_loss[t] = quality_loss_ratio(&ha->q[t]);
	}
	if (m.probing && ha->fo)
		failed_over(ha, m.failed_over);
	m.roles_auto = ha->s.roles.mode == ROLES_AUTO;
	m.swapped = m.probing && ha->roles.swapped;
	memcpy(m.role_moves, ha->roles.moves, sizeof(m.role_moves));
	pthread_mutex_lock(&ha->lock);
	ha->metrics = m;
	pthread_mutex_unlock(&ha->lock);
}

static void stop_prober(struct health_agent *ha)
{
	spill_agent_stop(&ha->spill);
	if (ha->mon)
		health_linkmon_close(ha->mon);
	if (ha->pr)
		health_prober_free(ha->pr);
	ha->mon = NULL;
	ha->pr = NULL;
	ha->nprobes = 0;
}

static void stop_probing(struct health_agent *ha)
{
	stop_prober(ha);
	if (ha->fo)
		health_failover_close(ha->fo);
	ha->mon = NULL;
	ha->pr = NULL;
	ha->fo = NULL;
	update_metrics(ha);
}

void health_agent_close(struct health_agent *ha)
{
	stop_probing(ha);
	spill_agent_close(&ha->spill);
	dup_agent_close(&ha->dup);
	pthread_mutex_destroy(&ha->lock);
}

/* Where tunnel t of info is probed: --target-short/-long, else its gateway
 * (buf: INET6_ADDRSTRLEN bytes). */
static const char *probe_target(const struct health_agent *ha,
				const struct health_failover_info *info, int t, char *buf)
{
	const struct sc_prefix *given = &ha->s.target[t];

	if (!given->family)
		return info->target[t];
	return inet_ntop(given->family, given->addr, buf, INET6_ADDRSTRLEN);
}

static int family_of(const char *addr)
{
	return strchr(addr, ':') ? AF_INET6 : AF_INET;
}

/* Probe tunnel t's other family too, when its routes carry it and a
 * gateway of it is recorded; a failure is logged (route show then says
 * that family is not probed), not fatal. */
static void add_family(struct health_agent *ha, int t)
{
	int fam = ha->probe[t].family == AF_INET ? AF_INET6 : AF_INET, idx;
	const char *target = ha->info.family_target[t][fam == AF_INET6];
	struct health_probe_cfg cfg = { .dev = ha->info.dev[t], .target = target };
	struct health_agent_probe *p;

	if (!target[0] || ha->nprobes == sizeof(ha->probe) / sizeof(ha->probe[0]))
		return;
	idx = health_prober_add(ha->pr, &cfg);
	if (idx != (int)ha->nprobes) {
		pr_warn("run: health: probe %s (%s) over %s via %s: %s: its %s routes are not "
			"probed",
			cfg.dev, tunnel_name[t], family_name(fam), target,
			strerror(idx < 0 ? -idx : EINVAL), family_name(fam));
		return;
	}
	p = &ha->probe[ha->nprobes++];
	p->tunnel = t;
	p->family = fam;
	memcpy(p->target, target, sizeof(p->target));	/* both INET6_ADDRSTRLEN */
}

static int add_tunnels(struct health_agent *ha, char *err, size_t errlen)
{
	int t, idx;

	ha->nprobes = 0;
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		char target[INET6_ADDRSTRLEN];
		struct health_probe_cfg cfg = {
			.dev = ha->info.dev[t],
			.target = probe_target(ha, &ha->info, t, target),
		};

		if (!cfg.target[0]) {
			snprintf(err, errlen, "no probe target for %s (%s): no gateway recorded",
				 cfg.dev, tunnel_name[t]);
			return -EINVAL;
		}
		snprintf(ha->target[t], sizeof(ha->target[t]), "%s", cfg.target);
		idx = health_prober_add(ha->pr, &cfg);
		if (idx != t) {
			snprintf(err, errlen, "probe %s via %s: %s%s", cfg.dev, cfg.target,
				 strerror(idx < 0 ? -idx : EINVAL),
				 idx == -EPERM || idx == -EACCES
					 ? " (needs CAP_NET_RAW, or this group in "
					   "net.ipv4.ping_group_range): no failover"
					 : "");
			return idx < 0 ? idx : -EINVAL;
		}
		ha->probe[t].tunnel = t;
		ha->probe[t].family = family_of(cfg.target);
		snprintf(ha->probe[t].target, sizeof(ha->probe[t].target), "%s", cfg.target);
		ha->nprobes = t + 1;
		health_linkmon_watch(ha->mon, cfg.dev);
	}
	for (t = 0; t < HEALTH_TUNNELS; t++)
		add_family(ha, t);
	for (t = 0; t < HEALTH_TUNNELS; t++)
		ha->logged[t] = tunnel_state(ha, t);
	return 0;
}

/* "; also probing vxs (short) over ipv6 via fd10:1::2, ..." of the start
 * lines (the families beyond the first), appended to buf. */
static void families_text(const struct health_agent *ha, char *buf, size_t len)
{
	unsigned int i;
	size_t n;

	for (i = HEALTH_TUNNELS; i < ha->nprobes; i++) {
		const struct health_agent_probe *p = &ha->probe[i];

		n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s (%s) over %s via %s",
			 i == HEALTH_TUNNELS ? "; also probing " : ", ", ha->info.dev[p->tunnel],
			 tunnel_name[p->tunnel], family_name(p->family), p->target);
	}
}

/* Fresh quality and roles (the configured ones) for the prober's tunnels;
 * outcomes it counted so far (a seeded verdict's) are not fed. */
static void roles_reset(struct health_agent *ha)
{
	uint64_t now = mono_ns();
	int t;

	roles_init(&ha->roles, &ha->s.roles, now);
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const struct health *h = health_prober_tunnel(ha->pr, t);

		quality_init(&ha->q[t], now);
		ha->fed_answered[t] = h->answered;
		ha->fed_missed[t] = h->missed;
		ha->tx_at_ns[t] = 0;
		ha->busy_until_ns[t] = 0;
	}
	if (ha->fo)
		health_failover_set_roles(ha->fo, false);
}

/* Whether our own traffic fills tunnel t (HA_BUSY_BPS, with hangover). */
static bool tunnel_busy(struct health_agent *ha, int t, uint64_t now)
{
	uint64_t b, dt = now - ha->tx_at_ns[t];

	if (!ha->tx_at_ns[t] || dt >= HA_BUSY_SAMPLE_NS) {
		b = fs_dev_tx_bytes(ha->info.dev[t]);	/* 0: never busy */
		if (ha->tx_at_ns[t] && b >= ha->tx_bytes[t] &&
		    (b - ha->tx_bytes[t]) * 8 * FS_NS_PER_S / dt > HA_BUSY_BPS)
			ha->busy_until_ns[t] = now + HA_BUSY_HANGOVER_NS;
		ha->tx_bytes[t] = b;
		ha->tx_at_ns[t] = now;
	}
	return now < ha->busy_until_ns[t];
}

/* The roles' input now: states, quality, and which tunnel is busy with
 * our traffic: the long class's tunnel with our bulk, the configured
 * SHORT with spill's class (spill runs only on the configured roles). */
static void roles_input(struct health_agent *ha, struct roles_input *in, uint64_t now)
{
	int t, carries_long = ha->roles.swapped ? HEALTH_SHORT : HEALTH_LONG;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		in->state[t] = tunnel_state(ha, t);
		in->q[t] = &ha->q[t];
		in->busy[t] = t == carries_long && tunnel_busy(ha, t, now);
	}
	if (!ha->roles.swapped && spill_agent_fills_short(&ha->spill, now))
		in->busy[HEALTH_SHORT] = true;
	in->loss_covered = dup_agent_covers_loss(&ha->dup);
}

/* The prober's outcomes since the last call, into each tunnel's quality;
 * true when there were any. Misses, then answers: the prober's counters
 * keep no order within one poll (normally one outcome). */
static bool feed_quality(struct health_agent *ha, const struct roles_input *in, uint64_t now)
{
	bool fed = false;
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const struct health *h = health_prober_tunnel(ha->pr, t);

		for (; ha->fed_missed[t] < h->missed; ha->fed_missed[t]++, fed = true)
			quality_lost(&ha->q[t], now, in->busy[t]);
		for (; ha->fed_answered[t] < h->answered; ha->fed_answered[t]++, fed = true)
			quality_answer(&ha->q[t], now, h->rtt_last_ns, in->busy[t]);
	}
	return fed;
}

static void publish(struct health_agent *ha);
static bool apply(struct health_agent *ha, bool after_down);

/* The roles after new probe outcomes: a move is one log line, the plan
 * with the new roles, and a publish. False: the record is gone. */
static bool roles_update(struct health_agent *ha)
{
	const char *dev[HEALTH_TUNNELS] = { ha->info.dev[HEALTH_SHORT], ha->info.dev[HEALTH_LONG] };
	struct roles_input in;
	uint64_t now = mono_ns();
	char why[192];

	roles_input(ha, &in, now);
	if (!feed_quality(ha, &in, now) || !roles_step(&ha->roles, &in, now))
		return true;
	roles_format(&ha->roles, dev, why, sizeof(why));
	pr_info("run: health: roles: %s, hold-down %.1f s", why,
		ha->roles.swapped || ha->roles.cause != ROLES_CAUSE_FAILOVER ?
		(double)ha->roles.hold_ns / FS_NS_PER_S : 0.0);
	health_failover_set_roles(ha->fo, ha->roles.swapped);
	if (!apply(ha, false))
		return false;
	publish(ha);
	return true;
}

/* The prober and the link monitor for the tunnels of the record (the
 * failover open); 0 or -errno, nothing left open on failure. */
static int start_prober(struct health_agent *ha, char *err, size_t errlen)
{
	int ret;

	ret = health_failover_info(ha->fo, &ha->info, err, errlen);
	if (ret)
		return ret;
	ha->pr = health_prober_new(&ha->s.params, HEALTH_ICMP_AUTO);
	if (!ha->pr) {
		ret = -errno;
		snprintf(err, errlen, "prober: %s", strerror(errno));
		return ret;
	}
	ret = health_linkmon_open(&ha->mon, err, errlen);
	if (ret)
		ha->mon = NULL;
	else
		ret = add_tunnels(ha, err, errlen);
	if (ret) {
		stop_prober(ha);
		return ret;
	}
	roles_reset(ha);
	/* spill: split mode only (in ECMP mode every flow may use both) */
	if (ha->info.mode == HEALTH_MODE_SPLIT)
		spill_agent_start(&ha->spill, ha->info.dev, ha->target, ha->s.params.interval_ns);
	return 0;
}

/* Open the failover, the prober and the link monitor; 0 or -errno. */
static int start_probing(struct health_agent *ha, char *err, size_t errlen)
{
	int ret;

	ret = health_failover_open(&ha->fo, ha->s.both_down, err, errlen);
	if (ret) {
		ha->fo = NULL;
		return ret;
	}
	ret = start_prober(ha, err, errlen);
	if (ret)
		stop_probing(ha);
	return ret;
}

static bool same_tunnels(const struct health_failover_info *a, const struct health_failover_info *b)
{
	return a->mode == b->mode && !memcmp(a->dev, b->dev, sizeof(a->dev)) &&
	       !memcmp(a->target, b->target, sizeof(a->target)) &&
	       !memcmp(a->family_target, b->family_target, sizeof(a->family_target));
}

static bool apply(struct health_agent *ha, bool after_down);

/*
 * A tunnel probed before and after a new "route up" (same device and
 * target, in either role) keeps its state machine: its verdict, flap
 * penalty and hold-down; so does each family probed through it. What
 * "route up" installed from the published health then stays in force,
 * with no new verdict to wait for. Appends "DEV STATE" of each tunnel
 * kept to kept.
 */
static void carry_verdicts(struct health_agent *ha, const struct health_prober *old,
			   const struct health_failover_info *before,
			   const struct health_agent_probe *oldp, unsigned int oldn, char *kept,
			   size_t len)
{
	unsigned int i, o;

	for (i = 0; i < ha->nprobes; i++)
		for (o = 0; o < oldn; o++)
			if (!strcmp(ha->info.dev[ha->probe[i].tunnel],
				    before->dev[oldp[o].tunnel]) &&
			    !strcmp(ha->probe[i].target, oldp[o].target) &&
			    !health_prober_seed(ha->pr, i, health_prober_tunnel(old, o)) &&
			    i < HEALTH_TUNNELS)
				snprintf(kept + strlen(kept), len - strlen(kept), "%s%s %s",
					 kept[0] ? ", " : "", ha->info.dev[i],
					 health_state_name(health_prober_tunnel(ha->pr, i)->state));
	for (i = 0; i < HEALTH_TUNNELS; i++)
		ha->logged[i] = tunnel_state(ha, i);
}

/*
 * "route up" ran again: when the tunnels, their gateways or the mode
 * changed, a new prober probes the tunnels of the record, each one that
 * stays continuing its own verdict (carry_verdicts(): a verdict belongs to
 * a tunnel, not to a role); the health file stays ours. Returns 0
 * (nothing to do), 1 (a new prober, or none when it failed) or -ENOENT
 * (the record is gone).
 */
static int follow_record(struct health_agent *ha)
{
	struct health_failover_info now, before = ha->info;
	struct health_agent_probe oldp[2 * HEALTH_TUNNELS];
	unsigned int oldn = ha->nprobes;
	struct health_prober *old;
	char err[256], kept[128] = "", fams[256] = "";
	int ret;

	if (!health_failover_record_changed(ha->fo))
		return 0;
	ret = health_failover_info(ha->fo, &now, err, sizeof(err));
	if (ret == -ENOENT)
		return -ENOENT;
	if (ret) {
		pr_warn("run: health: %s", err);
		return 0;
	}
	if (same_tunnels(&now, &before))
		return 0;
	memcpy(oldp, ha->probe, sizeof(oldp));
	old = ha->pr;
	ha->pr = NULL;
	stop_prober(ha);	/* the link monitor */
	ret = start_prober(ha, err, sizeof(err));
	if (!ret) {
		carry_verdicts(ha, old, &before, oldp, oldn, kept, sizeof(kept));
		roles_reset(ha);
	}
	health_prober_free(old);
	if (ret) {
		pr_warn("run: health: %s; retrying every %llu s", err,
			(unsigned long long)(HA_RETRY_NS / FS_NS_PER_S));
		stop_probing(ha);
		ha->open_failing = true;
		ha->next_open_ns = mono_ns() + HA_RETRY_NS;
		return 1;
	}
	families_text(ha, fams, sizeof(fams));
	pr_info("run: health: route up changed the tunnels: probing %s (short) via %s, %s (long) "
		"via %s%s%s%s",
		ha->info.dev[0], ha->target[0], ha->info.dev[1], ha->target[1],
		kept[0] ? "; verdicts kept: " : "", kept, fams);
	/* the plan of the kept verdicts in their new roles (what route up
	 * installed: normally nothing changes) */
	apply(ha, false);
	ha->next_publish_ns = 0;
	return 1;
}

/* Tunnel t as published: its first family's state machine with the
 * tunnel's state (since the change of the family that gave it), and the
 * families probed. */
static void publish_tunnel(struct health_agent *ha, int t, struct health *h)
{
	struct health_file_family fam[HEALTH_FAMILIES];
	enum health_state st = tunnel_state(ha, t);
	unsigned int i;
	int n = 0;

	memset(fam, 0, sizeof(fam));
	*h = *health_prober_tunnel(ha->pr, t);
	if (h->state != st)
		h->since_ns = 0;
	for (i = 0; i < ha->nprobes && n < HEALTH_FAMILIES; i++) {
		const struct health *f = health_prober_tunnel(ha->pr, i);

		if (ha->probe[i].tunnel != t)
			continue;
		if (h->state != st && f->state == st && f->since_ns > h->since_ns)
			h->since_ns = f->since_ns;
		fam[n].family = ha->probe[i].family;
		snprintf(fam[n].target, sizeof(fam[n].target), "%s", ha->probe[i].target);
		fam[n].state = f->state;
		fam[n].rtt_last_ns = f->rtt_last_ns;
		fam[n].probes = f->probes;
		fam[n].missed = f->missed;
		fam[n].loss = health_loss_ratio(f);
		n++;
	}
	h->state = st;
	health_failover_set_families(ha->fo, t, fam, n);
}

static void publish(struct health_agent *ha)
{
	static struct health hs[HEALTH_TUNNELS];
	const struct health *h[HEALTH_TUNNELS] = { &hs[HEALTH_SHORT], &hs[HEALTH_LONG] };
	char err[256];

	struct spill_view sv;
	struct dup_view dv;

	const char *dev[HEALTH_TUNNELS] = { ha->info.dev[HEALTH_SHORT], ha->info.dev[HEALTH_LONG] };
	struct roles_input in;
	struct roles_view rv;
	uint64_t now = mono_ns();

	publish_tunnel(ha, HEALTH_SHORT, &hs[HEALTH_SHORT]);
	publish_tunnel(ha, HEALTH_LONG, &hs[HEALTH_LONG]);
	spill_agent_view(&ha->spill, &sv);
	health_failover_set_spill(ha->fo, &sv);
	dup_agent_view(&ha->dup, &dv);
	health_failover_set_dup(ha->fo, &dv);
	roles_input(ha, &in, now);
	roles_view(&ha->roles, &in, dev, now, &rv);
	rv.active = ha->info.mode == HEALTH_MODE_SPLIT;	/* ECMP: no roles */
	health_failover_set_roles_view(ha->fo, &rv);
	if (health_failover_publish(ha->fo, h, mono_ns(), err, sizeof(err)))
		pr_warn("run: health: publish: %s", err);
	update_metrics(ha);
	ha->next_publish_ns = mono_ns() + HA_PUBLISH_NS;
}

/* The plan of the tunnels' current states; false when the record is gone. */
static bool apply(struct health_agent *ha, bool after_down)
{
	enum health_state st[HEALTH_TUNNELS];
	struct health_plan plan;
	char err[256], text[64];
	int t, ret;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		st[t] = tunnel_state(ha, t);
	ret = health_failover_apply(ha->fo, st, err, sizeof(err));
	if (ret == -ENOENT)
		return false;
	if (ret < 0) {
		pr_warn("run: health: apply: %s", err);
		return true;
	}
	if (ret > 0) {
		plan = health_failover_in_force(ha->fo);
		health_plan_format(&plan, text, sizeof(text));
		pr_info("run: health: routes now %s (%d changed)", text, ret);
		if (after_down)
			ha->failovers++;
	}
	return true;
}

/* A state change of the prober's tunnel idx (from: its state before),
 * when its tunnel has several families: "ipv6 of vxs (short) via
 * fd10:1::2: up -> down after 3 misses, ..." */
static void log_family(struct health_agent *ha, unsigned int idx, enum health_state from)
{
	int t = ha->probe[idx].tunnel;
	char line[256];

	if (tunnel_families(ha, t) < 2)
		return;
	health_transition_format(health_prober_tunnel(ha->pr, idx), from, line, sizeof(line));
	pr_info("run: health: %s of %s (%s) via %s: %s", family_name(ha->probe[idx].family),
		ha->info.dev[t], tunnel_name[t], ha->probe[idx].target, line);
}

/*
 * Tunnel t's state changed since it was last logged: one line as ever
 * ("vxs (short) up -> down after 3 misses, ..."), from the family whose
 * latest change gave that state (named when there are several).
 */
static void log_tunnel(struct health_agent *ha, int t)
{
	enum health_state st = tunnel_state(ha, t);
	const struct health *by = NULL, *h;
	bool several = tunnel_families(ha, t) > 1;
	unsigned int i, fam = 0;
	char line[256];

	if (st == ha->logged[t])
		return;
	for (i = 0; i < ha->nprobes; i++) {
		h = health_prober_tunnel(ha->pr, i);
		if (ha->probe[i].tunnel == t && h->state == st &&
		    (!by || h->since_ns > by->since_ns)) {
			by = h;
			fam = i;
		}
	}
	if (by) {
		health_transition_format(by, ha->logged[t], line, sizeof(line));
		pr_info("run: health: %s (%s) %s%s%s%s", ha->info.dev[t], tunnel_name[t], line,
			several ? " (" : "", several ? family_name(ha->probe[fam].family) : "",
			several ? ")" : "");
	} else {
		pr_info("run: health: %s (%s) %s -> %s: waiting for the verdict of each family",
			ha->info.dev[t], tunnel_name[t], health_state_name(ha->logged[t]),
			health_state_name(st));
	}
	ha->logged[t] = st;
}

/* Prober events: one log line each, then the plan; false: record gone. */
static bool on_probes(struct health_agent *ha)
{
	struct health_event ev[HA_MAX_EVENTS];
	bool down = false;
	int n, i;

	n = health_poll(ha->pr, 0, ev, HA_MAX_EVENTS);
	if (n < 0) {
		pr_warn("run: health: probing: %s", strerror(-n));
		return true;
	}
	for (i = 0; i < n; i++) {
		log_family(ha, ev[i].tunnel, ev[i].from);
		down |= ev[i].to == HEALTH_DOWN;
	}
	if (!n)
		return true;
	for (i = 0; i < HEALTH_TUNNELS; i++)
		log_tunnel(ha, i);
	if (!apply(ha, down))
		return false;
	publish(ha);
	return true;
}

/* A link event of a tunnel device: down at once, or re-converge. */
static bool on_link(struct health_agent *ha, const struct health_link_event *ev)
{
	bool lost = ev->kind == HEALTH_LINK_DOWN || ev->kind == HEALTH_LINK_DELETED;
	struct health_event down;
	char err[256];
	unsigned int i;
	int ret;

	if (!lost) {
		ret = health_failover_reconverge(ha->fo, err, sizeof(err));
		if (ret == -ENOENT)
			return false;
		if (ret < 0)
			pr_warn("run: health: reconverge: %s", err);
		else if (ret > 0)
			pr_info("run: health: %d routes put back", ret);
		return true;
	}
	for (i = 0; i < ha->nprobes; i++)
		if (!strcmp(ev->dev, ha->info.dev[ha->probe[i].tunnel]) &&
		    health_prober_link_down(ha->pr, i, &down) == 1)
			log_family(ha, i, down.from);
	for (i = 0; i < HEALTH_TUNNELS; i++)
		log_tunnel(ha, i);
	return apply(ha, true);
}

static bool on_links(struct health_agent *ha)
{
	struct health_link_event ev[HA_MAX_EVENTS];
	bool changed = false;
	int n, i;

	n = health_linkmon_read(ha->mon, ev, HA_MAX_EVENTS);
	if (n < 0) {
		pr_warn("run: health: link monitor: %s", strerror(-n));
		return true;
	}
	for (i = 0; i < n; i++) {
		if (!on_link(ha, &ev[i]))
			return false;
		changed = true;
	}
	if (changed)
		publish(ha);
	return true;
}

static int ms_until(uint64_t now, uint64_t when)
{
	uint64_t ms;

	if (when <= now)
		return 0;
	ms = (when - now + FS_NS_PER_MS - 1) / FS_NS_PER_MS;
	return ms > 1000 ? 1000 : (int)ms;
}

/* The LONG shaper as the record asks (route up --long-rate): ours adopted
 * when it is what the record asks, made when it is missing (a device made
 * anew), removed where the record does not want it (docs/design.md,
 * *Short class first on LONG*). Under the record's lock, as route up. */
static void longq_adopt(void)
{
	static struct tcfg_spec rec;
	struct tcfg_err e = { "" };
	char what[128], err[256];
	int lock;

	lock = tcfg_lock(&e);
	if (lock < 0 || tcfg_record_read(&rec, &e)) {
		tcfg_unlock(lock);
		return;
	}
	if (tcfg_longq_reconcile(NULL, &rec, -1, what, sizeof(what), err, sizeof(err)))
		pr_warn("run: health: LONG shaper: %s", err);
	else if (what[0])
		pr_info("run: health: LONG shaper: %s", what);
	else if (rec.long_rate_bps)
		pr_info("run: health: LONG shaper on %s adopted", rec.long_dev);
	tcfg_unlock(lock);
}

/* Without a route record: wait, and look for one every few seconds. */
static void idle_until(struct health_agent *ha, uint64_t deadline_ns)
{
	char err[256];
	uint64_t now = mono_ns();
	int ret;

	if (now >= ha->next_open_ns) {
		ret = start_probing(ha, err, sizeof(err));
		if (!ret) {
			char fams[256] = "";

			families_text(ha, fams, sizeof(fams));
			pr_info("run: health: probing %s (short) via %s, %s (long) via %s%s",
				ha->info.dev[0], ha->target[0], ha->info.dev[1], ha->target[1],
				fams);
			ha->open_failing = false;
			ha->next_publish_ns = 0;
			longq_adopt();
			return;
		}
		/* -ENOENT: "route up" has not run; nothing to steer, quietly */
		if (ret != -ENOENT && !ha->open_failing)
			pr_warn("run: health: %s; retrying every %llu s", err,
				(unsigned long long)(HA_RETRY_NS / FS_NS_PER_S));
		ha->open_failing = ret != -ENOENT;
		ha->next_open_ns = now + HA_RETRY_NS;
	}
	if (deadline_ns > ha->next_open_ns)
		deadline_ns = ha->next_open_ns;
	poll(NULL, 0, ms_until(now, deadline_ns));
}

/* Spill's step with what health knows now; publishes what changed. */
static void spill_step(struct health_agent *ha)
{
	struct health_plan in_force = health_failover_in_force(ha->fo);
	struct spill_health sh = {
		.normal_plan = in_force.action == HEALTH_PLAN_ROUTE &&
			       in_force.short_via == HEALTH_VIA_SHORT &&
			       in_force.long_via == HEALTH_VIA_LONG,
	};
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const struct health *h = health_prober_tunnel(ha->pr, t);

		sh.up[t] = tunnel_state(ha, t) == HEALTH_UP;
		sh.rtt_samples[t] = h->rtt_samples;
		sh.rtt_last_ns[t] = h->rtt_last_ns;
		sh.probes_lost[t] = h->window_lost;
		sh.probes_window[t] = h->window_len;
	}
	if (spill_agent_step(&ha->spill, &sh, mono_ns()))
		publish(ha);
}

void health_agent_run_until(struct health_agent *ha, uint64_t deadline_ns)
{
	struct pollfd pfd[2 + HEALTH_TUNNELS];
	int sfd[HEALTH_TUNNELS], t;
	uint64_t now, wake, sw;
	bool alive = true;
	int ret;

	while (!fs_stop && !fs_reload && (now = mono_ns()) < deadline_ns) {
		if (!ha->s.enabled) {
			poll(NULL, 0, ms_until(now, deadline_ns));
			continue;
		}
		if (!ha->fo) {
			idle_until(ha, deadline_ns);
			continue;
		}
		if (now >= ha->next_publish_ns)
			publish(ha);
		wake = deadline_ns < ha->next_publish_ns ? deadline_ns : ha->next_publish_ns;
		sw = spill_agent_next_ns(&ha->spill);
		if (sw < wake)
			wake = sw;
		sw = dup_agent_next_ns(&ha->dup);
		if (sw < wake)
			wake = sw;
		pfd[0] = (struct pollfd){ .fd = health_prober_fd(ha->pr), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = health_linkmon_fd(ha->mon), .events = POLLIN };
		spill_agent_fds(&ha->spill, sfd);
		for (t = 0; t < HEALTH_TUNNELS; t++)
			pfd[2 + t] = (struct pollfd){ .fd = sfd[t], .events = POLLIN };
		if (poll(pfd, 2 + HEALTH_TUNNELS, ms_until(now, wake)) < 0)
			continue;	/* a signal */
		ret = follow_record(ha);
		if (ret > 0)
			continue;	/* new tunnels (or none): pfd is stale */
		alive = !ret && on_probes(ha);
		if (alive && ha->info.mode == HEALTH_MODE_SPLIT)
			alive = roles_update(ha);
		if (alive && pfd[1].revents)
			alive = on_links(ha);
		if (alive && ha->pr)
			spill_step(ha);
		/* the copy follows the configured SHORT's loss, off while
		 * the roles have the short class on LONG (dup_agent.h) */
		if (alive && ha->pr &&
		    dup_agent_step(&ha->dup, health_prober_tunnel(ha->pr, HEALTH_SHORT),
				   health_prober_tunnel(ha->pr, HEALTH_LONG), ha->roles.swapped,
				   mono_ns()))
			publish(ha);
		if (!alive) {
			pr_info("run: health: the route record is gone (route down): steering "
				"stops");
			stop_probing(ha);
			ha->next_open_ns = mono_ns() + HA_RETRY_NS;
		}
	}
}
