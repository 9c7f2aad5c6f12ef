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
#include "params.h"
#include "util.h"

#define HA_RETRY_NS	(3 * HEALTH_NS_PER_S)	/* no record: look again */
#define HA_PUBLISH_NS	(2 * HEALTH_NS_PER_S)	/* health file refresh */
#define HA_MAX_EVENTS	16

static const char *const tunnel_name[HEALTH_TUNNELS] = { "short", "long" };

void health_agent_init(struct health_agent *ha)
{
	memset(ha, 0, sizeof(*ha));
	pthread_mutex_init(&ha->lock, NULL);
	health_params_default(&ha->params);
	ha->both_down = HEALTH_BOTH_DOWN_KEEP;
}

/* An IPv4 or IPv6 address (sc_parse_prefix()) that fits target[]. */
static bool is_address(const char *s)
{
	struct sc_prefix p;

	return strlen(s) < sizeof(((struct health_agent *)0)->target[0]) &&
	       !sc_parse_prefix(s, 0, SC_PFX_ADDR, &p);
}

static const struct sc_enum both_down_values[] = {
	{ "keep", HEALTH_BOTH_DOWN_KEEP }, { "main", HEALTH_BOTH_DOWN_MAIN }, { NULL, 0 },
};

/* health (yes/no) and both-down (keep|main) through lib's validators */
static int configure_choice(struct health_agent *next, const char *key,
			    const char *value, char *err, size_t errlen)
{
	bool yesno = !strcmp(key, "health"), on = false;
	const struct sc_option row = { .type = yesno ? SC_OPT_YESNO : SC_OPT_ENUM,
				       .values = both_down_values };
	char acc[64];
	int v = 0;

	if (yesno ? sc_parse_yesno(value, &on) : sc_parse_enum(row.values, value, &v)) {
		sc_option_accepted(&row, acc, sizeof(acc));
		snprintf(err, errlen, "--%s: invalid value '%s': accepted: %s", key, value, acc);
		return -EINVAL;
	}
	if (yesno)
		next->disabled = !on;
	else
		next->both_down = v;
	return 0;
}

/* One option into next; 0 or -EINVAL with the reason in err. */
static int configure_one(struct health_agent *next, const char *key, const char *value,
			 char *err, size_t errlen)
{
	const char *param = key + strlen("health-");
	int t, ret;

	if (!strcmp(key, "health") || !strcmp(key, "both-down"))
		return configure_choice(next, key, value, err, errlen);
	t = !strcmp(key, "target-short") ? HEALTH_SHORT : !strcmp(key, "target-long") ?
	    HEALTH_LONG : -1;
	if (t >= 0) {
		if (!is_address(value)) {
			snprintf(err, errlen, "--%s: invalid address '%s': accepted: an IPv4 or IPv6 address",
				 key, value);
			return -EINVAL;
		}
		strcpy(next->target[t], value);
		return 0;
	}
	ret = strncmp(key, "health-", 7) ? -ENOENT : health_params_set(&next->params, param, value);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "--%s: unknown health setting: accepted: %s", key,
			 HEALTH_PARAM_KEYS);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen, "--%s: invalid value '%s': accepted: %s", key, value,
			 health_param_range(param));
		return -EINVAL;
	}
	return 0;
}

int health_agent_configure(struct health_agent *ha, const struct sc_pass_list *opts,
			      char *err, size_t errlen)
{
	struct health_agent next = *ha;
	const char *field;
	unsigned int i;
	int ret;

	for (i = 0; i < opts->n; i++) {
		ret = configure_one(&next, opts->kv[i].key, opts->kv[i].value, err, errlen);
		if (ret)
			return ret;
	}
	if (health_params_check(&next.params, &field)) {
		snprintf(err, errlen, "--health-%s: out of range with the other settings: accepted: %s%s",
			 field, health_param_range(field),
			 !strcmp(field, "timeout") ? " (interval/10 .. 32 x interval)" : "");
		return -EINVAL;
	}
	*ha = next;
	return 0;
}

int health_agent_settings(struct health_agent *next, const struct sc_pass_list *file,
			     const struct sc_pass_list *cli, char *err, size_t errlen)
{
	memset(next, 0, sizeof(*next));
	health_params_default(&next->params);
	next->both_down = HEALTH_BOTH_DOWN_KEEP;
	if (file && health_agent_configure(next, file, err, errlen))
		return -EINVAL;
	return health_agent_configure(next, cli, err, errlen);
}

static bool same_params(const struct health_params *a, const struct health_params *b)
{
	return a->interval_ns == b->interval_ns && a->timeout_ns == b->timeout_ns &&
	       a->down_misses == b->down_misses && a->up_successes == b->up_successes &&
	       a->hold_min_ns == b->hold_min_ns && a->hold_max_ns == b->hold_max_ns &&
	       a->half_life_ns == b->half_life_ns && a->loss_window == b->loss_window &&
	       a->adaptive_timeout == b->adaptive_timeout;
}

static void stop_probing(struct health_agent *ha);

bool health_agent_switch(struct health_agent *ha, const struct health_agent *next)
{
	bool probing = ha->fo != NULL;

	if (same_params(&ha->params, &next->params) && ha->both_down == next->both_down &&
	    ha->disabled == next->disabled && !memcmp(ha->target, next->target, sizeof(ha->target)))
		return false;
	ha->params = next->params;
	ha->both_down = next->both_down;
	ha->disabled = next->disabled;
	memcpy(ha->target, next->target, sizeof(ha->target));
	/* a new prober with the new settings; the routes in force stay until
	 * both tunnels have a verdict again */
	stop_probing(ha);
	ha->next_open_ns = 0;
	ha->open_failing = false;
	if (probing)
		pr_info("run: health: new settings: probing %s", ha->disabled ? "stops" : "restarts");
	return true;
}

void health_agent_metrics(struct health_agent *ha, struct health_metrics *m)
{
	pthread_mutex_lock(&ha->lock);
	*m = ha->metrics;
	pthread_mutex_unlock(&ha->lock);
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
		m.up[t] = h->state == HEALTH_UP;
		m.rtt_s[t] = h->rtt_ewma_ns / 1e9;
		m.timeout_s[t] = health_probe_timeout_ns(h) / 1e9;
		m.loss[t] = health_loss_ratio(h);
	}
	pthread_mutex_lock(&ha->lock);
	ha->metrics = m;
	pthread_mutex_unlock(&ha->lock);
}

int health_agent_check(const struct sc_pass_list *opts, char *err, size_t errlen)
{
	struct health_agent ha;

	memset(&ha, 0, sizeof(ha));
	health_params_default(&ha.params);
	return health_agent_configure(&ha, opts, err, errlen);
}

static void stop_prober(struct health_agent *ha)
{
	if (ha->mon)
		health_linkmon_close(ha->mon);
	if (ha->pr)
		health_prober_free(ha->pr);
	ha->mon = NULL;
	ha->pr = NULL;
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
	pthread_mutex_destroy(&ha->lock);
}

static int add_tunnels(struct health_agent *ha, char *err, size_t errlen)
{
	int t, idx;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		struct health_probe_cfg cfg = {
			.dev = ha->info.dev[t],
			.target = ha->target[t][0] ? ha->target[t] : ha->info.target[t],
		};

		if (!cfg.target[0]) {
			snprintf(err, errlen, "no probe target for %s (%s): no gateway recorded",
				 cfg.dev, tunnel_name[t]);
			return -EINVAL;
		}
		idx = health_prober_add(ha->pr, &cfg);
		if (idx != t) {
			snprintf(err, errlen, "probe %s via %s: %s%s", cfg.dev, cfg.target,
				 strerror(idx < 0 ? -idx : EINVAL),
				 idx == -EPERM || idx == -EACCES ?
				 " (needs CAP_NET_RAW, or this group in net.ipv4.ping_group_range): no failover" : "");
			return idx < 0 ? idx : -EINVAL;
		}
		health_linkmon_watch(ha->mon, cfg.dev);
	}
	return 0;
}

/* The prober and the link monitor for the tunnels of the record (the
 * failover open); 0 or -errno, nothing left open on failure. */
static int start_prober(struct health_agent *ha, char *err, size_t errlen)
{
	int ret;

	ret = health_failover_info(ha->fo, &ha->info, err, errlen);
	if (ret)
		return ret;
	ha->pr = health_prober_new(&ha->params, HEALTH_ICMP_AUTO);
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
	if (ret)
		stop_prober(ha);
	return ret;
}

/* Open the failover, the prober and the link monitor; 0 or -errno. */
static int start_probing(struct health_agent *ha, char *err, size_t errlen)
{
	int ret;

	ret = health_failover_open(&ha->fo, ha->both_down, err, errlen);
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
	       !memcmp(a->target, b->target, sizeof(a->target));
}

/*
 * "route up" ran again: when the tunnels, their gateways or the mode
 * changed, the prober starts over on the new tunnels (a verdict belongs
 * to a tunnel, not to a role); the health file stays ours. Returns 0
 * (nothing to do), 1 (a new prober, or none when it failed) or -ENOENT
 * (the record is gone).
 */
static int follow_record(struct health_agent *ha)
{
	struct health_failover_info now, before = ha->info;
	char err[256];
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
	stop_prober(ha);
	ret = start_prober(ha, err, sizeof(err));
	if (ret) {
		pr_warn("run: health: %s; retrying every %llu s", err,
			(unsigned long long)(HA_RETRY_NS / HEALTH_NS_PER_S));
		stop_probing(ha);
		ha->open_failing = true;
		ha->next_open_ns = mono_ns() + HA_RETRY_NS;
		return 1;
	}
	pr_info("run: health: route up changed the tunnels: probing %s (short) via %s, %s (long) via %s",
		ha->info.dev[0], ha->info.target[0], ha->info.dev[1], ha->info.target[1]);
	ha->next_publish_ns = 0;
	return 1;
}

static void publish(struct health_agent *ha)
{
	const struct health *h[HEALTH_TUNNELS] = {
		health_prober_tunnel(ha->pr, HEALTH_SHORT),
		health_prober_tunnel(ha->pr, HEALTH_LONG),
	};
	char err[256];

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
		st[t] = health_prober_tunnel(ha->pr, t)->state;
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

static void log_transition(struct health_agent *ha, unsigned int t, enum health_state from)
{
	char line[256];

	health_transition_format(health_prober_tunnel(ha->pr, t), from, line, sizeof(line));
	pr_info("run: health: %s (%s) %s", ha->info.dev[t], tunnel_name[t], line);
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
		log_transition(ha, ev[i].tunnel, ev[i].from);
		down |= ev[i].to == HEALTH_DOWN;
	}
	if (!n)
		return true;
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
	int t, ret;

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
	for (t = 0; t < HEALTH_TUNNELS; t++)
		if (!strcmp(ev->dev, ha->info.dev[t]) &&
		    health_prober_link_down(ha->pr, t, &down) == 1)
			log_transition(ha, t, down.from);
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
	ms = (when - now + HEALTH_NS_PER_MS - 1) / HEALTH_NS_PER_MS;
	return ms > 1000 ? 1000 : (int)ms;
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
			pr_info("run: health: probing %s (short) via %s, %s (long) via %s",
				ha->info.dev[0], ha->info.target[0], ha->info.dev[1],
				ha->info.target[1]);
			ha->open_failing = false;
			ha->next_publish_ns = 0;
			return;
		}
		/* -ENOENT: "route up" has not run; nothing to steer, quietly */
		if (ret != -ENOENT && !ha->open_failing)
			pr_warn("run: health: %s; retrying every %llu s", err,
				(unsigned long long)(HA_RETRY_NS / HEALTH_NS_PER_S));
		ha->open_failing = ret != -ENOENT;
		ha->next_open_ns = now + HA_RETRY_NS;
	}
	if (deadline_ns > ha->next_open_ns)
		deadline_ns = ha->next_open_ns;
	poll(NULL, 0, ms_until(now, deadline_ns));
}

void health_agent_run_until(struct health_agent *ha, uint64_t deadline_ns)
{
	struct pollfd pfd[2];
	uint64_t now, wake;
	bool alive = true;
	int ret;

	while (!fs_stop && !fs_reload && (now = mono_ns()) < deadline_ns) {
		if (ha->disabled) {
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
		pfd[0] = (struct pollfd){ .fd = health_prober_fd(ha->pr), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = health_linkmon_fd(ha->mon), .events = POLLIN };
		if (poll(pfd, 2, ms_until(now, wake)) < 0)
			continue;	/* a signal */
		ret = follow_record(ha);
		if (ret > 0)
			continue;	/* new tunnels (or none): pfd is stale */
		alive = !ret && on_probes(ha);
		if (alive && pfd[1].revents)
			alive = on_links(ha);
		if (!alive) {
			pr_info("run: health: the route record is gone (route down): steering stops");
			stop_probing(ha);
			ha->next_open_ns = mono_ns() + HA_RETRY_NS;
		}
	}
}
