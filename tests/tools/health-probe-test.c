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
 * T: a duration with its unit, "100ms", "1.5s" (health_params_set()).
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
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"
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
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* --KEY VALUE for a [health] setting; exits 2 on a bad value. */
static void opt_param(struct health_params *p, const char *key,
		      const char *val)
{
	if (health_params_set(p, key, val)) {
		pr_err("--%s: bad value '%s' (%s)", key, val,
		       health_param_range(key));
		exit(FS_EXIT_USAGE);
	}
}

static void parse_args(int argc, char **argv, struct health_params *params,
		       enum health_icmp_socket *sock, uint64_t *duration_ns)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 'p' },
		{ "adaptive-timeout", required_argument, NULL, 'p' },
		{ "down-misses", required_argument, NULL, 'p' },
		{ "up-successes", required_argument, NULL, 'p' },
		{ "hold-min", required_argument, NULL, 'p' },
		{ "hold-max", required_argument, NULL, 'p' },
		{ "half-life", required_argument, NULL, 'p' },
		{ "loss-window", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	const char *field;
	int c, idx;

	while ((c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		switch (c) {
		case 'p':
			opt_param(params, opts[idx].name, optarg);
			break;
		case 's':
			if (!strcmp(optarg, "auto"))
				*sock = HEALTH_ICMP_AUTO;
			else if (!strcmp(optarg, "dgram"))
				*sock = HEALTH_ICMP_DGRAM;
			else if (!strcmp(optarg, "raw"))
				*sock = HEALTH_ICMP_RAW;
			else
				goto bad_socket;
			break;
		case 'D':
			if (health_parse_duration(optarg, duration_ns)) {
				pr_err("--duration: bad value '%s' (0s..3600s)",
				       optarg);
				exit(FS_EXIT_USAGE);
			}
			break;
		default:
			fprintf(stderr, "%s\n", usage);
			exit(FS_EXIT_USAGE);
		}
	}
	if (health_params_check(params, &field)) {
		pr_err("--%s: out of range together with the other settings "
		       "(%s)", field, health_param_range(field));
		exit(FS_EXIT_USAGE);
	}
	return;
bad_socket:
	pr_err("--socket: bad value '%s' (auto, dgram, raw)", optarg);
	exit(FS_EXIT_USAGE);
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

	health_prober_stats(p, i, &st);
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

	health_prober_stats(p, ev->tunnel, &st);
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
	uint64_t duration_ns = 3600 * HEALTH_NS_PER_S, end;
	struct health_event ev[16];
	struct health_params params;
	struct health_prober *p;
	int i, n, ntun, r;

	fs_log_init("health-probe-test", FS_LOG_INFO);
	setvbuf(stdout, NULL, _IOLBF, 0);
	health_params_default(&params);
	parse_args(argc, argv, &params, &sock, &duration_ns);
	ntun = argc - optind;
	if (ntun < 1 || ntun > MAX_TUNNELS) {
		fprintf(stderr, "%s\n", usage);
		return FS_EXIT_USAGE;
	}
	for (i = 0; i < ntun; i++)
		parse_tunnel(argv[optind + i], &cfg[i]);
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
		       health_prober_socket_name(p, r));
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
