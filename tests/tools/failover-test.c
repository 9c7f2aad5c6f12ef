// SPDX-License-Identifier: GPL-2.0
/*
 * failover-test.c - drives tunnel-cfg's failover API (failover.h) the way
 * the agent will, for tests/route-split.bats:
 *
 *   failover-test [--both-down keep|main] apply SHORT LONG
 *       install the plan of these tunnel states (init, up, down) once
 *   failover-test reconverge
 *       put the plan in force (both up, for a new process) back in place
 *   failover-test [--both-down keep|main] agent SHORT LONG
 *       apply, publish the health of these states, then watch the links
 *       of both tunnels: a tunnel link going down takes that tunnel down
 *       (health_link_down) and applies the new plan; a link coming back,
 *       a route of ours deleted or an overrun re-converge. One line per
 *       event on stdout; SIGTERM ends it (the health file withdrawn).
 *   failover-test [--both-down keep|main] probe
 *       the same with real health: both tunnels probed (probe.h, default
 *       settings, the recorded gateways as targets); each state change
 *       applies its plan: "health tunnel=T to=S plan=P changed=N".
 *
 * Output lines: "applied plan=P changed=N", "event kind=K dev=D changed=N".
 * Exit 0, 1 (runtime error, one line on stderr), 2 (usage).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "agent_lock.h"
#include "failover.h"
#include "linkmon.h"
#include "probe.h"
#include "util.h"

#define RTT_NS 100000	/* the synthetic answers' RTT */

static int usage(void)
{
	fprintf(stderr, "usage: failover-test [--both-down keep|main] apply|agent SHORT LONG\n"
			"       failover-test [--both-down keep|main] probe\n"
			"       failover-test reconverge\n"
			"  SHORT, LONG: init, up or down\n");
	return FS_EXIT_USAGE;
}

static int parse_state(const char *s, enum health_state *st)
{
	if (!strcmp(s, "init"))
		*st = HEALTH_INIT;
	else if (!strcmp(s, "up"))
		*st = HEALTH_UP;
	else if (!strcmp(s, "down"))
		*st = HEALTH_DOWN;
	else
		return -1;
	return 0;
}

/* A state machine brought to st by probe outcomes (down without a flap). */
static void synth_health(struct health *h, enum health_state st, uint64_t now)
{
	struct health_params p;
	uint32_t i;

	health_params_default(&p);
	health_init(h, &p, now);
	for (i = 0; st == HEALTH_UP && i < p.up_successes; i++)
		health_reply(h, now, RTT_NS);
	for (i = 0; st == HEALTH_DOWN && i < p.down_misses; i++)
		health_miss(h, now);
}

static const char *kind_name(enum health_link_kind k)
{
	static const char *const names[] = { "up", "down", "deleted", "route-lost", "overrun" };

	return k <= HEALTH_MON_OVERRUN ? names[k] : "?";
}

static int publish(struct health_failover *fo, struct health h[HEALTH_TUNNELS])
{
	const struct health *const hp[HEALTH_TUNNELS] = { &h[0], &h[1] };
	char err[512];

	if (health_failover_publish(fo, hp, mono_ns(), err, sizeof(err))) {
		pr_err("publish: %s", err);
		return -1;
	}
	return 0;
}

/* One link event: the tunnel's health, then the plan or a re-converge. */
static int on_event(struct health_failover *fo, const struct health_failover_info *info,
		    struct health h[HEALTH_TUNNELS], const struct health_link_event *ev)
{
	enum health_state st[HEALTH_TUNNELS];
	char err[512];
	int t, ret;
	bool lost = ev->kind == HEALTH_LINK_DOWN || ev->kind == HEALTH_LINK_DELETED;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		if (lost && !strcmp(ev->dev, info->dev[t]))
			health_link_down(&h[t], mono_ns());
	for (t = 0; t < HEALTH_TUNNELS; t++)
		st[t] = h[t].state;
	ret = lost ? health_failover_apply(fo, st, err, sizeof(err)) :
		     health_failover_reconverge(fo, err, sizeof(err));
	if (ret < 0)
		pr_warn("event %s %s: %s", kind_name(ev->kind), ev->dev, err);
	printf("event kind=%s dev=%s changed=%d\n", kind_name(ev->kind), ev->dev, ret);
	fflush(stdout);
	return publish(fo, h);
}

static int agent(struct health_failover *fo, struct health h[HEALTH_TUNNELS])
{
	struct health_failover_info info;
	struct health_link_event ev[16];
	struct health_linkmon *mon;
	char err[512];
	int t, n, i, ret = 0;

	if (health_failover_info(fo, &info, err, sizeof(err)) ||
	    health_linkmon_open(&mon, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_RUNTIME;
	}
	for (t = 0; t < HEALTH_TUNNELS; t++)
		health_linkmon_watch(mon, info.dev[t]);
	if (publish(fo, h))
		ret = FS_EXIT_RUNTIME;
	printf("agent ready short=%s long=%s\n", info.dev[0], info.dev[1]);
	fflush(stdout);
	while (!ret && !fs_stop) {
		struct pollfd pfd = { .fd = health_linkmon_fd(mon), .events = POLLIN };

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = health_linkmon_read(mon, ev, 16);
		if (n < 0) {
			pr_err("netlink monitor: %s", strerror(-n));
			ret = FS_EXIT_RUNTIME;
		}
		for (i = 0; i < n && !ret; i++)
			if (on_event(fo, &info, h, &ev[i]))
				ret = FS_EXIT_RUNTIME;
	}
	health_linkmon_close(mon);
	return ret;
}

/* Prober state changes: the plan of the new states. */
static int on_health(struct health_failover *fo, struct health_prober *pr)
{
	const struct health *h[HEALTH_TUNNELS];
	enum health_state st[HEALTH_TUNNELS];
	struct health_event ev[8];
	struct health_plan plan;
	char err[512], text[64];
	int n, i, t, ret;

	n = health_poll(pr, 0, ev, 8);
	if (n < 0) {
		pr_err("health_poll: %s", strerror(-n));
		return -1;
	}
	for (i = 0; i < n; i++) {
		for (t = 0; t < HEALTH_TUNNELS; t++) {
			h[t] = health_prober_tunnel(pr, t);
			st[t] = h[t]->state;
		}
		ret = health_failover_apply(fo, st, err, sizeof(err));
		if (ret < 0)
			pr_warn("apply: %s", err);
		plan = health_failover_in_force(fo);
		health_plan_format(&plan, text, sizeof(text));
		printf("health tunnel=%u to=%s mono_ns=%llu plan=%s changed=%d\n", ev[i].tunnel,
		       health_state_name(ev[i].to), (unsigned long long)ev[i].at_ns, text, ret);
		fflush(stdout);
		if (health_failover_publish(fo, h, mono_ns(), err, sizeof(err)))
			pr_warn("publish: %s", err);
	}
	return 0;
}

static int probe_agent(struct health_failover *fo)
{
	struct health_failover_info info;
	struct health_params params;
	struct health_prober *pr;
	char err[512];
	int t, ret = 0;

	if (health_failover_info(fo, &info, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_RUNTIME;
	}
	health_params_default(&params);
	pr = health_prober_new(&params, HEALTH_ICMP_AUTO);
	if (!pr) {
		pr_err("prober: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	for (t = 0; t < HEALTH_TUNNELS && !ret; t++) {
		struct health_probe_cfg cfg = { .dev = info.dev[t], .target = info.target[t] };
		int idx = health_prober_add(pr, &cfg);

		if (idx != t) {
			pr_err("probe %s via %s: %s", info.dev[t], info.target[t], strerror(-idx));
			ret = FS_EXIT_RUNTIME;
		}
	}
	printf("agent ready short=%s long=%s\n", info.dev[0], info.dev[1]);
	fflush(stdout);
	while (!ret && !fs_stop) {
		struct pollfd pfd = { .fd = health_prober_fd(pr), .events = POLLIN };

		poll(&pfd, 1, 100);
		if (on_health(fo, pr))
			ret = FS_EXIT_RUNTIME;
	}
	health_prober_free(pr);
	return ret;
}

int main(int argc, char **argv)
{
	enum health_both_down both_down = HEALTH_BOTH_DOWN_KEEP;
	enum health_state st[HEALTH_TUNNELS];
	struct health h[HEALTH_TUNNELS];
	struct health_failover *fo;
	struct health_plan plan;
	char err[512], text[64];
	int i = 1, ret, lock = -1, holder;

	fs_log_init("failover-test", FS_LOG_INFO);
	fs_signals_install(false);
	if (argc > 2 && !strcmp(argv[1], "--both-down")) {
		if (strcmp(argv[2], "keep") && strcmp(argv[2], "main"))
			return usage();
		both_down = strcmp(argv[2], "main") ? HEALTH_BOTH_DOWN_KEEP : HEALTH_BOTH_DOWN_MAIN;
		i = 3;
	}
	if (i >= argc)
		return usage();
	/* the agents publish health: one per namespace, as splitctl run */
	if (!strcmp(argv[i], "probe") || !strcmp(argv[i], "agent")) {
		lock = agent_lock_take("failover-test", &holder, err, sizeof(err));
		if (lock < 0) {
			pr_err("%s", err);
			return FS_EXIT_RUNTIME;
		}
	}
	if (!strcmp(argv[i], "probe") && argc == i + 1) {
		if (health_failover_open(&fo, both_down, err, sizeof(err))) {
			pr_err("%s", err);
			return FS_EXIT_RUNTIME;
		}
		ret = probe_agent(fo);
		health_failover_close(fo);
		agent_lock_release(lock);
		return ret;
	}
	if (!strcmp(argv[i], "reconverge") ? argc != i + 1 :
	    (strcmp(argv[i], "apply") && strcmp(argv[i], "agent")) || argc != i + 3 ||
	    parse_state(argv[i + 1], &st[0]) || parse_state(argv[i + 2], &st[1]))
		return usage();
	if (health_failover_open(&fo, both_down, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_RUNTIME;
	}
	if (!strcmp(argv[i], "reconverge")) {
		ret = health_failover_reconverge(fo, err, sizeof(err));
	} else {
		ret = health_failover_apply(fo, st, err, sizeof(err));
		plan = health_failover_in_force(fo);
		health_plan_format(&plan, text, sizeof(text));
		if (ret >= 0)
			printf("applied plan=%s changed=%d\n", text, ret);
	}
	if (ret < 0) {
		pr_err("%s", err);
		health_failover_close(fo);
		return FS_EXIT_RUNTIME;
	}
	if (!strcmp(argv[i], "reconverge"))
		printf("reconverged changed=%d\n", ret);
	ret = FS_EXIT_OK;
	if (!strcmp(argv[i], "agent")) {
		synth_health(&h[0], st[0], mono_ns());
		synth_health(&h[1], st[1], mono_ns());
		ret = agent(fo, h);
	}
	health_failover_close(fo);
	agent_lock_release(lock);
	return ret;
}
