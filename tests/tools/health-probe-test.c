// SPDX-License-Identifier: GPL-2.0
/*
 * health-probe-test - drive the tunnel prober (health/probe.h) against
 * real peers, for tests/health-probe.bats. Not installed.
 *
 *   health-probe-test [--interval T] [--timeout T] [--adaptive-timeout yes|no]
 *                     [--down-misses N]
 *                     [--up-successes M] [--hold-min T] [--hold-max T]
 *                     [--half-life T] [--loss-window N]
 *                     [--socket auto|dgram|raw] [--duration T]
 *                     DEV,TARGET[,udp:PORT]...
 * T: a duration with its unit, "100ms", "1.5s"; the settings are the
 * [health] keys of the agent (health_settings_opts, health_agent.h).
 *
 * One line per event on stdout (line buffered), key=value words:
 *   start  tunnel=I dev=D target=A socket=raw|dgram|udp
 *   event  tunnel=I dev=D from=S to=S mono_ns=T wall_ns=T flaps=N
 *          hold_ns=H misses=N successes=N last_answer_sent_ns=T
 *   stats  tunnel=I dev=D state=S sent=N answers=N late=N foreign=N
 *          send_errors=N probes=N missed=N loss=R rtt_last_ns=N
 *          rtt_ewma_ns=N timeout_ns=N flaps=N
 * (timeout_ns: the timeout a probe sent then would get)
 * wall_ns is CLOCK_REALTIME, comparable with `date +%s%N` in a script;
 * mono_ns and last_answer_sent_ns (the newest answered probe's send time:
 * the path was alive then) are CLOCK_MONOTONIC.
 * Runs until --duration has passed or SIGTERM/SIGINT, then prints stats.
 * Exit 0, 1 (runtime), 2 (usage).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health_agent.h"
#include "params.h"
#include "probe.h"
#include "probe_int.h"
#include "util.h"

#define MAX_TUNNELS 8

static const char usage[] =
	"usage: health-probe-test [--interval T] [--timeout T] "
	"[--adaptive-timeout yes|no] "
	"[--down-misses N] [--up-successes M] [--hold-min T] [--hold-max T] "
	"[--half-life T] [--loss-window N] [--socket auto|dgram|raw] "
	"[--duration T] DEV,TARGET[,udp:PORT]...  (T: 100ms, 1.5s)";

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * FS_NS_PER_S + ts.tv_nsec;
}

/* The counters of tunnel idx, and the ICMP socket it got ("udp" for UDP),
 * read from the prober's state (probe_int.h): nothing the agent uses. */
static void prober_stats(const struct health_prober *p, unsigned int idx,
			 struct health_probe_stats *st)
{
	*st = p->t[idx].stats;
}

static const char *prober_socket_name(const struct health_prober *p, unsigned int idx)
{
	if (p->t[idx].kind == HEALTH_PROBE_UDP)
		return "udp";
	return p->t[idx].raw ? "raw" : "dgram";
}

static const struct sc_enum socket_values[] = {
	{ "auto", HEALTH_ICMP_AUTO }, { "dgram", HEALTH_ICMP_DGRAM }, { "raw", HEALTH_ICMP_RAW },
	{ NULL, 0 },
};

/* The tool's own options; the [health] keys come from the agent's table. */
struct tool_args {
	__u32 given;
	int socket;		/* enum health_icmp_socket */
	__u64 duration_ns;
};
static const struct sc_option tool_opts[] = {
	SC_OPTION("socket", SC_OPT_ENUM, struct tool_args, socket, .values = socket_values),
	SC_OPTION("duration", SC_OPT_DURATION, struct tool_args, duration_ns,
		  .unit = SC_UNIT_MS, .unit_suffix = true, .lo = 0, .hi = 3600000),
	SC_OPTIONS_END,
};

/* --KEY VALUE pairs: [health] keys (health_settings_opts, by key) and the
 * tool's own; then the positional arguments from *first. Exits 2 with
 * one line on a bad one. */
static void parse_args(int argc, char **argv, struct health_params *params,
		       enum health_icmp_socket *sock, uint64_t *duration_ns, int *first)
{
	struct health_settings s;
	struct tool_args t = { .socket = HEALTH_ICMP_AUTO, .duration_ns = *duration_ns };
	struct sc_opt_ref r;
	char err[512];
	int i;

	health_settings_default(&s);
	s.params = *params;
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (sc_option_find(health_settings_opts, &s, argv[i] + 2, false, &r) &&
		    sc_option_find(tool_opts, &t, argv[i] + 2, true, &r)) {
			fprintf(stderr, "%s\n", usage);
			exit(FS_EXIT_USAGE);
		}
		if (i + 1 == argc || sc_option_set(&r, argv[i + 1], "", err, sizeof(err))) {
			pr_err("--%s", i + 1 == argc ? argv[i] + 2 : err);
			exit(FS_EXIT_USAGE);
		}
	}
	if (health_settings_check(&s, NULL, err, sizeof(err))) {
		pr_err("--%s", err);
		exit(FS_EXIT_USAGE);
	}
	*params = s.params;
	*sock = t.socket;
	*duration_ns = t.duration_ns;
	*first = i;
}

/* DEV,TARGET[,udp:PORT] -> cfg (pointing into arg, which is modified). */
static void parse_tunnel(char *arg, struct health_probe_cfg *cfg)
{
	char *target = strchr(arg, ','), *udp;
	uint64_t port;

	memset(cfg, 0, sizeof(*cfg));
	if (!target || target == arg || !target[1]) {
		pr_err("bad tunnel '%s' (DEV,TARGET[,udp:PORT])", arg);
		exit(FS_EXIT_USAGE);
	}
	*target++ = '\0';
	cfg->dev = arg;
	cfg->target = target;
	udp = strchr(target, ',');
	if (!udp)
		return;
	*udp++ = '\0';
	if (strncmp(udp, "udp:", 4) || parse_u64(udp + 4, 1, 65535, &port)) {
		pr_err("bad probe kind '%s' (udp:PORT, PORT 1..65535)", udp);
		exit(FS_EXIT_USAGE);
	}
	cfg->kind = HEALTH_PROBE_UDP;
	cfg->udp_port = (uint16_t)port;
}

static void print_stats(const struct health_prober *p, unsigned int i,
			const char *dev)
{
	const struct health *h = health_prober_tunnel(p, i);
	struct health_probe_stats st;

	prober_stats(p, i, &st);
	printf("stats tunnel=%u dev=%s state=%s sent=%llu answers=%llu "
	       "late=%llu foreign=%llu send_errors=%llu probes=%llu "
	       "missed=%llu loss=%.4f rtt_last_ns=%llu rtt_ewma_ns=%llu "
	       "timeout_ns=%llu flaps=%llu\n",
	       i, dev, health_state_name(h->state),
	       (unsigned long long)st.sent, (unsigned long long)st.answers,
	       (unsigned long long)st.late, (unsigned long long)st.foreign,
	       (unsigned long long)st.send_errors,
	       (unsigned long long)h->probes, (unsigned long long)h->missed,
	       health_loss_ratio(h), (unsigned long long)h->rtt_last_ns,
	       (unsigned long long)h->rtt_ewma_ns,
	       (unsigned long long)health_probe_timeout_ns(h),
	       (unsigned long long)h->flaps);
}

static void print_event(const struct health_prober *p,
			const struct health_event *ev, const char *dev)
{
	const struct health *h = health_prober_tunnel(p, ev->tunnel);
	struct health_probe_stats st;

	prober_stats(p, ev->tunnel, &st);
	printf("event tunnel=%u dev=%s from=%s to=%s mono_ns=%llu "
	       "wall_ns=%llu flaps=%llu hold_ns=%llu misses=%u successes=%u "
	       "last_answer_sent_ns=%llu\n",
	       ev->tunnel, dev, health_state_name(ev->from),
	       health_state_name(ev->to), (unsigned long long)ev->at_ns,
	       (unsigned long long)wall_ns(), (unsigned long long)h->flaps,
	       (unsigned long long)h->hold_ns, h->misses, h->successes,
	       (unsigned long long)st.last_answer_sent_ns);
}

int main(int argc, char **argv)
{
	struct health_probe_cfg cfg[MAX_TUNNELS];
	enum health_icmp_socket sock = HEALTH_ICMP_AUTO;
	uint64_t duration_ns = 3600 * FS_NS_PER_S, end;
	struct health_event ev[16];
	struct health_params params;
	struct health_prober *p;
	int i, n, ntun, r, first;

	fs_log_init("health-probe-test", FS_LOG_INFO);
	setvbuf(stdout, NULL, _IOLBF, 0);
	health_params_default(&params);
	parse_args(argc, argv, &params, &sock, &duration_ns, &first);
	ntun = argc - first;
	if (ntun < 1 || ntun > MAX_TUNNELS) {
		fprintf(stderr, "%s\n", usage);
		return FS_EXIT_USAGE;
	}
	for (i = 0; i < ntun; i++)
		parse_tunnel(argv[first + i], &cfg[i]);
	p = health_prober_new(&params, sock);
	if (!p) {
		pr_err("prober: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	for (i = 0; i < ntun; i++) {
		r = health_prober_add(p, &cfg[i]);
		if (r < 0) {
			pr_err("tunnel %s,%s: %s", cfg[i].dev, cfg[i].target,
			       strerror(-r));
			health_prober_free(p);
			return r == -EINVAL || r == -ENODEV ? FS_EXIT_USAGE
							    : FS_EXIT_RUNTIME;
		}
		printf("start tunnel=%d dev=%s target=%s socket=%s\n", r,
		       cfg[i].dev, cfg[i].target,
		       prober_socket_name(p, r));
	}
	fs_signals_install(false);
	end = mono_ns() + duration_ns;
	while (!fs_stop && mono_ns() < end) {
		/* a short wait, as an agent's main loop would use */
		n = health_poll(p, 50, ev, 16);
		if (n < 0) {
			pr_err("poll: %s", strerror(-n));
			health_prober_free(p);
			return FS_EXIT_RUNTIME;
		}
		for (i = 0; i < n; i++)
			print_event(p, &ev[i], cfg[ev[i].tunnel].dev);
	}
	for (i = 0; i < ntun; i++)
		print_stats(p, i, cfg[i].dev);
	health_prober_free(p);
	return FS_EXIT_OK;
}
