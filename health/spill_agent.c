// SPDX-License-Identifier: GPL-2.0
/*
 * spill_agent.c - spill in the agent (spill_agent.h): the [spill] settings
 * and the glue between the controller (spill.c), the prober's health, the
 * splitter's fs_spill map and the scavenger class (tunnel-cfg).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include "flowsplit.h"
#include "health.h"
#include "spill_agent.h"
#include "tunnel_cfg.h"
#include "util.h"

#define SA_FAST_TICK_NS (10 * FS_NS_PER_MS)	/* while a grant is under way */
#define SA_DP_REREAD_NS (2 * FS_NS_PER_S)	/* "set spill", a re-attach */
#define SA_RETRY_NS (3 * FS_NS_PER_S)	/* the class could not be made */
#define SA_DUMMIES 2				/* spend the TBF's one-frame burst */
/* a full frame: less the ICMP, IPv4 and Ethernet headers */
#define SA_DUMMY_PAYLOAD (FS_FRAME_BYTES - 8 - 20 - 14)
#define SA_DUMMY_ID 0x5350			/* "SP" */
#define SA_TS_ID 0x5354				/* "ST", + the tunnel */
#define SA_TS_SLOTS 64
#define SA_TS_FRESH_NS (2 * FS_NS_PER_S)	/* else RTTs */
/* one-way delays kept positive whatever the two clocks' offset */
#define SA_OWD_OFFSET_NS (1000 * FS_NS_PER_S)
#define SA_DAY_NS (86400 * FS_NS_PER_S)
#define SA_RATE_STEP_PCT 1			/* smaller rate changes are not applied */
/* the queueing-delay windows the controller uses (spill.c) */
#define SA_QD_SHORT_WINDOW(i) (2 * (i) + (i) / 2)
#define SA_QD_LONG_WINDOW(i) (5 * (i) + (i) / 2)

/* ---- settings ------------------------------------------------------------------ */
#define SPILL_OPT(_name, _cli, _type, m, ...)					\
	SC_OPTION(_name, _type, struct spill_settings, m, .cli_name = _cli, __VA_ARGS__)
#define SPILL_DURATION(_name, _cli, m, _lo_ms, _hi_ms, _help)			\
	SPILL_OPT(_name, _cli, SC_OPT_DURATION, m, .unit = SC_UNIT_MS, .unit_suffix = true, \
		  .lo = _lo_ms, .hi = _hi_ms, .metavar = "DUR", .help = _help)
#define SPILL_RATE(_name, _cli, m, _lo, _hi, _help)				\
	SPILL_OPT(_name, _cli, SC_OPT_RATE, m, .lo = _lo, .hi = _hi, .metavar = "RATE",	\
		  .help = _help)
#define SPILL_MAX_RATE 100e9	/* 100 Gbit/s */
const struct sc_option spill_settings_opts[] = {
	SPILL_OPT("enabled", "spill", SC_OPT_YESNO, enabled, .metavar = "yes|no",
		  .help = "let long flows use SHORT's spare capacity behind short traffic (default "
			  "yes)"),
	SPILL_DURATION(
		"target-delay", "spill-target-delay", target_ns, 1, 1000,
		"SHORT's queueing delay above which the spilled rate backs off (default 5ms)"),
	SPILL_DURATION("long-target", "spill-long-target", long_target_ns, 1, 10000,
		       "LONG's standing queueing delay that counts as congested (default 10ms)"),
	SPILL_RATE("rate-init", "spill-rate-init", rate_init_bps, 8000, SPILL_MAX_RATE,
		   "the spilled rate when a generation starts (default 1mbit)"),
	SPILL_RATE("rate-min", "spill-rate-min", rate_min_bps, 8000, SPILL_MAX_RATE,
		   "the spilled rate's floor (default 100kbit)"),
	SPILL_RATE("tunnel-rate", "spill-tunnel-rate", tunnel_rate_bps, 100000, SPILL_MAX_RATE,
		   "SHORT's rate, when known: both classes held to 0.95 x it (default: not set)"),
	SPILL_DURATION("grant-gap", "spill-grant-gap", grant_gap_ns, 100, 600000,
		       "at least this between two grants (default 2s)"),
	SPILL_DURATION("hold-margin", "spill-hold-margin", hold_margin_ns, 1, 1000,
		       "added to a hold's delay difference (default 20ms)"),
	SPILL_OPT("frame-share", "spill-frame-share", SC_OPT_UINT, frame_share_pct, .lo = 0,
		  .hi = 100, .metavar = "PCT",
		  .help = "spill only where one frame at SHORT's rate takes at most this % of its "
			  "least RTT (default 10; 0: any path)"),
	SPILL_OPT("limit", "spill-limit", SC_OPT_UINT, limit_bytes, .lo = 2 * FS_FRAME_BYTES,
		  .hi = 1e9, .metavar = "BYTES",
		  .help = "the spilled flows' queue on the router, in bytes (default 1000000)"),
	SC_OPTIONS_END,
};

void spill_settings_default(struct spill_settings *s)
{
	struct spill_params p;

	spill_params_default(&p);
	memset(s, 0, sizeof(*s));
	s->enabled = true;
	s->target_ns = p.target_ns;
	s->long_target_ns = p.long_target_ns;
	s->rate_init_bps = p.rate_init_bps;
	s->rate_min_bps = p.rate_min_bps;
	s->grant_gap_ns = p.grant_gap_ns;
	s->hold_margin_ns = p.hold_margin_ns;
	s->frame_share_pct = p.frame_share_pct;
	s->limit_bytes = SPILL_DEF_LIMIT_BYTES;
}

/* the top the settings allow: 0.95 x tunnel-rate, or a line rate */
static uint64_t settings_top_bps(const struct spill_settings *s)
{
	return s->tunnel_rate_bps ? s->tunnel_rate_bps * SPILL_TOP_PCT / 100 :
				    SPILL_DEF_RATE_MAX_BPS;
}

/* The rule across rows: rate-min <= rate-init <= the ceiling. */
static int settings_check(const struct spill_settings *s, const struct spill_settings *cli,
			  char *err, size_t errlen)
{
	const char *key = NULL, *rule = NULL;

	if (s->rate_min_bps > s->rate_init_bps) {
		key = "rate-min";
		rule = "at most rate-init";
	} else if (s->rate_init_bps > settings_top_bps(s)) {
		key = "rate-init";
		rule = "at most 0.95 x tunnel-rate";
	}
	if (!key)
		return 0;
	return sc_option_cross_error(spill_settings_opts, (void *)s, cli, key, rule, err, errlen);
}

int spill_settings_resolve(struct spill_settings *out, const struct spill_settings *file,
			   const struct spill_settings *cli, char *err, size_t errlen)
{
	spill_settings_default(out);
	sc_options_layer(spill_settings_opts, out, file, cli);
	return settings_check(out, cli, err, errlen);
}

void spill_settings_params(const struct spill_settings *s, uint64_t interval_ns,
			   struct spill_params *p)
{
	spill_params_default(p);
	p->target_ns = s->target_ns;
	p->long_target_ns = s->long_target_ns;
	p->rate_init_bps = s->rate_init_bps;
	p->rate_min_bps = s->rate_min_bps;
	p->rate_max_bps = settings_top_bps(s);
	p->interval_ns = interval_ns;
	p->grant_gap_ns = s->grant_gap_ns;
	p->hold_margin_ns = s->hold_margin_ns;
	p->frame_share_pct = s->frame_share_pct;
	p->short_rate_bps = s->tunnel_rate_bps;
}

/* ---- the agent ------------------------------------------------------------------ */
void spill_agent_init(struct spill_agent *sa, const struct spill_settings *s,
		      const struct spill_dp_ops *ops, void *dp_arg)
{
	int t;

	memset(sa, 0, sizeof(*sa));
	pthread_mutex_init(&sa->lock, NULL);
	sa->s = *s;
	sa->dp_ops = ops;
	sa->dp_arg = dp_arg;
	sa->dummy_fd = -1;
	for (t = 0; t < HEALTH_TUNNELS; t++)
		sa->ts_fd[t] = -1;
}

static void set_view(struct spill_agent *sa)
{
	struct spill_view v = { .active = sa->running && sa->scav };
	uint64_t now = mono_ns();
	int t;

	if (v.active) {
		memcpy(v.dev, sa->dev, sizeof(v.dev));
		v.state = sa->act.state;
		v.gen = sa->act.gen;
		v.grants = sa->act.grants;
		if (sa->dp.h)
			sa->dp_ops->read(&sa->dp, NULL, &v.taken);
		v.rate_bps = sa->act.hold ? 0 : sa->act.rate_bps;
		v.cap_bps = sa->ctl.cap_bps;
		v.top_bps = sa->applied_top_bps;
		v.short_bps = sa->ctl.short_bps;
		v.used_bps = sa->ctl.used_bps;
		v.qd_valid[SPILL_SHORT] = spill_queue_delay(&sa->ctl, SPILL_SHORT, now,
						SA_QD_SHORT_WINDOW(sa->interval_ns),
						&v.qd_ns[SPILL_SHORT]);
		v.qd_valid[SPILL_LONG] = spill_queue_delay(&sa->ctl, SPILL_LONG, now,
						SA_QD_LONG_WINDOW(sa->interval_ns),
						&v.qd_ns[SPILL_LONG]);
		v.one_way = sa->ctl.d[SPILL_SHORT].one_way && sa->ctl.d[SPILL_LONG].one_way;
		v.backoffs = sa->ctl.backoffs;
		v.backoffs_foreign = sa->ctl.backoffs_foreign;
		v.holds = sa->holds;
		snprintf(v.why, sizeof(v.why), "%s", sa->ctl.why);
	}
	for (t = 0; t < HEALTH_TUNNELS && !v.active; t++)
		v.qd_valid[t] = false;
	pthread_mutex_lock(&sa->lock);
	sa->view = v;
	pthread_mutex_unlock(&sa->lock);
}

void spill_agent_view(struct spill_agent *sa, struct spill_view *v)
{
	pthread_mutex_lock(&sa->lock);
	*v = sa->view;
	pthread_mutex_unlock(&sa->lock);
}

static int agent_write(struct spill_agent *sa, uint16_t gen, uint64_t grants, uint64_t now)
{
	int ret;

	if (!sa->dp.h)
		return -ENOENT;
	ret = sa->dp_ops->write(&sa->dp, gen, grants);
	if (ret)
		return ret;
	if (gen && gen != sa->gen_written)
		sa->dp_ops->read(&sa->dp, NULL, &sa->taken_at_gen);
	sa->gen_written = gen;
	sa->grants_written = grants;
	/* renewed at a third of the lease: two renewals may fail or come
	 * late before the datapath drops the generation */
	sa->renew_ns = now + FS_SPILL_LEASE_MS * FS_NS_PER_MS / 3;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Remove a class of ours from dev, whoever made it. */
static void scav_remove(const char *dev)
{
	char err[256];
	int ret;

	if (!dev[0])
		return;
	ret = tcfg_scav_remove(dev, err, sizeof(err));
	if (ret < 0)
		pr_warn("run: spill: %s", err);
	else if (ret == 1)
		pr_info("run: spill: removed a spill class left on %s", dev);
}

/* End the generation (every spilled flow long again), remove the class. */
static void spill_off(struct spill_agent *sa, const char *why)
{
	if (sa->dp.h && sa->gen_written)
		agent_write(sa, 0, sa->grants_written, mono_ns());
	if (sa->scav) {
		tcfg_scav_close(sa->scav, true);
		sa->scav = NULL;
		pr_info("run: spill: off on %s: %s", sa->dev[SPILL_SHORT], why);
	} else if (sa->running) {
		/* one left by an agent killed before it could remove it */
		scav_remove(sa->dev[SPILL_SHORT]);
	}
	sa->act = (struct spill_act){ 0 };
	sa->held = false;
	set_view(sa);
	sa->publish = true;
}

static void dp_close(struct spill_agent *sa)
{
	if (sa->dp.h)
		sa->dp_ops->close(&sa->dp);
	sa->dp.h = NULL;
	sa->dp.on = false;
}

/* Re-read the splitter (fs_spill may be re-pinned by an attach; "set
 * spill" and "set dscp-spill" may change while we run). */
static void dp_refresh(struct spill_agent *sa, uint64_t now)
{
	struct spill_dp dp = { 0 };
	int ret;

	if (now < sa->next_dp_ns)
		return;
	sa->next_dp_ns = now + SA_DP_REREAD_NS;
	ret = sa->dp_ops ? sa->dp_ops->open(sa->dp_arg, &dp) : -ENOENT;
	if (ret) {
		if (!sa->dp_failing)
			pr_info("run: spill: no splitter with spill grants here (%s): nothing "
				"spills",
				strerror(-ret));
		sa->dp_failing = true;
		if (sa->dp.h && sa->gen_written)
			agent_write(sa, 0, sa->grants_written, now);
		dp_close(sa);
		return;
	}
	if (sa->dp_failing)
		pr_info("run: spill: the splitter's spill grants are back");
	sa->dp_failing = false;
	dp_close(sa);
	sa->dp = dp;
	if (sa->dp_fresh) {
		uint64_t taken = 0;

		/* an earlier agent's generation (killed before it ended it)
		 * ends: nothing spills before our first grant (its lease
		 * would end it anyway) */
		sa->dp_fresh = false;
		sa->dp_ops->read(&sa->dp, NULL, &taken);
		if ((ret = agent_write(sa, 0, taken, now)))
			pr_warn("run: spill: fs_spill: %s", strerror(-ret));
	}
}


static int dummy_open(struct spill_agent *sa)
{
	const char *dev = sa->dev[SPILL_SHORT];
	int tos = FS_DSCP_TO_TOS(sa->dp.dscp);

	close_fd(&sa->dummy_fd);
	sa->dummy_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (sa->dummy_fd < 0 ||
	    setsockopt(sa->dummy_fd, SOL_SOCKET, SO_BINDTODEVICE, dev, strlen(dev)) ||
	    setsockopt(sa->dummy_fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos))) {
		close_fd(&sa->dummy_fd);
		return -errno;
	}
	return 0;
}

static bool ipv4_target(const char *s, struct sockaddr_in *to)
{
	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	return inet_pton(AF_INET, s, &to->sin_addr) == 1;
}

/* Two full-size echoes with the spill code point: the TBF's burst spent. */
static void dummies_send(struct spill_agent *sa)
{
	static uint16_t seq;
	uint8_t pkt[sizeof(struct icmphdr) + SA_DUMMY_PAYLOAD];
	struct icmphdr *h = (void *)pkt;
	struct sockaddr_in to;
	int i;

	if (sa->dummy_fd < 0 || !ipv4_target(sa->target[SPILL_SHORT], &to))
		return;
	for (i = 0; i < SA_DUMMIES; i++) {
		memset(pkt, 0, sizeof(pkt));
		h->type = ICMP_ECHO;
		h->un.echo.id = htons(SA_DUMMY_ID);
		h->un.echo.sequence = htons(++seq);
		h->checksum = inet_csum(pkt, sizeof(pkt));
		sendto(sa->dummy_fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
	}
}

/* ---- one-way delays: ICMP timestamp requests (RFC 792) ---------------------------- */
struct ts_msg {
	uint8_t type, code;
	uint16_t csum, id, seq;
	uint32_t orig, rx, tx;	/* ms since midnight UTC, network order */
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * FS_NS_PER_S + ts.tv_nsec;
}

static void ts_open(struct spill_agent *sa)
{
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const char *dev = sa->dev[t];
		struct sockaddr_in to;

		close_fd(&sa->ts_fd[t]);
		/* IPv4 targets only: ICMPv6 has no timestamp (health's RTTs then) */
		if (!ipv4_target(sa->target[t], &to))
			continue;
		sa->ts_fd[t] =
			socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP);
		if (sa->ts_fd[t] >= 0 &&
		    setsockopt(sa->ts_fd[t], SOL_SOCKET, SO_BINDTODEVICE, dev, strlen(dev)))
			close_fd(&sa->ts_fd[t]);
	}
}

static void ts_send(struct spill_agent *sa, int t)
{
	struct ts_msg m = { .type = ICMP_TIMESTAMP };
	uint64_t rt = realtime_ns(), tx;
	struct sockaddr_in to;
	unsigned int slot;

	if (sa->ts_fd[t] < 0 || !ipv4_target(sa->target[t], &to))
		return;
	slot = ++sa->ts_seq[t] % SA_TS_SLOTS;
	m.id = htons(SA_TS_ID + t);
	m.seq = htons(sa->ts_seq[t]);
	m.orig = htonl((uint32_t)(rt % SA_DAY_NS / FS_NS_PER_MS));
	m.csum = inet_csum(&m, sizeof(m));
	sa->slot_seq[t][slot] = sa->ts_seq[t];
	sa->slot_rt_ns[t][slot] = rt;
	sa->slot_mono_ns[t][slot] = mono_ns();
	/* what the device had sent: the capacity is measured between
	 * probes (spill.c, capacity_of()); 0, unreadable */
	tx = fs_dev_tx_bytes(sa->dev[t]);
	sa->slot_tx_bytes[t][slot] = tx ? tx : SPILL_BYTES_UNKNOWN;
	sendto(sa->ts_fd[t], &m, sizeof(m), 0, (struct sockaddr *)&to, sizeof(to));
}

/* A delay sample of tunnel @t to the controller; with -v, one line each
 * (the delay above the path's minimum: queue and jitter). */
static void sample(struct spill_agent *sa, int t, uint64_t sent_ns,
		   uint64_t sent_bytes, uint64_t now, uint64_t delay_ns,
		   bool one_way)
{
	spill_sample(&sa->ctl, t, sent_ns, sent_bytes, now, delay_ns, one_way);
	pr_debug("run: spill: probe on %s: %s %.1f ms above the path's minimum",
		 sa->dev[t], one_way ? "one-way delay" : "RTT",
		 (delay_ns - spill_base_ns(&sa->ctl, t)) / 1e6);
}

/* Tunnel @t had a timestamp answer lately. */
static bool ts_fresh(const struct spill_agent *sa, int t, uint64_t now)
{
	return sa->ts_last_ns[t] && now - sa->ts_last_ns[t] < SA_TS_FRESH_NS;
}

/* The answers waiting: each a one-way delay sample. */
static void ts_recv(struct spill_agent *sa, int t, uint64_t now)
{
	uint8_t buf[256];
	const struct ts_msg *m;
	unsigned int ihl, slot;
	uint32_t rx;
	int64_t owd;
	ssize_t n;

	while (sa->ts_fd[t] >= 0 && (n = recv(sa->ts_fd[t], buf, sizeof(buf), 0)) > 0) {
		ihl = (buf[0] & 0x0f) * 4;
		if ((size_t)n < ihl + sizeof(*m))
			continue;
		m = (const void *)(buf + ihl);
		if (m->type != ICMP_TIMESTAMPREPLY || ntohs(m->id) != SA_TS_ID + t)
			continue;
		slot = ntohs(m->seq) % SA_TS_SLOTS;
		rx = ntohl(m->rx);
		/* not ours, or not in ms since midnight (the high bit: RFC 792's
		 * non-standard time) */
		if (sa->slot_seq[t][slot] != ntohs(m->seq) || (rx & 0x80000000u))
			continue;
		owd = (int64_t)rx * (int64_t)FS_NS_PER_MS -
		      (int64_t)(sa->slot_rt_ns[t][slot] % SA_DAY_NS);
		/* midnight between the send and the far end's receive */
		if (owd > (int64_t)SA_DAY_NS / 2)
			owd -= SA_DAY_NS;
		else if (owd < -(int64_t)SA_DAY_NS / 2)
			owd += SA_DAY_NS;
		sa->ts_last_ns[t] = now;
		/* one kind for both tunnels: while the other has none, this
		 * answer only counts towards switching to timestamps */
		if (ts_fresh(sa, !t, now))
			sample(sa, t, sa->slot_mono_ns[t][slot],
			       sa->slot_tx_bytes[t][slot], now,
			       (uint64_t)(SA_OWD_OFFSET_NS + owd), true);
		sa->slot_seq[t][slot] = 0;
	}
}

/* ---- reconciling: the one place inputs meet what is set up ------------------------ */
/* Start on sa->want with sa->s: the controller, the sockets; whatever an
 * earlier agent left (a class of ours on any tunnel device named, a
 * generation in fs_spill) goes first. */
static void run_start(struct spill_agent *sa, uint64_t now)
{
	struct spill_params p;
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++) {
		/* same sizes: want's are NUL-terminated copies of health's */
		memcpy(sa->dev[t], sa->want.dev[t], sizeof(sa->dev[t]));
		memcpy(sa->target[t], sa->want.target[t], sizeof(sa->target[t]));
		/* a class of ours is made anew on SHORT when spill can run,
		 * and never belongs on LONG (it would cap it) */
		scav_remove(sa->dev[t]);
	}
	sa->run_s = sa->s;
	sa->interval_ns = sa->want.interval_ns;
	spill_settings_params(&sa->s, sa->interval_ns, &p);
	spill_init(&sa->ctl, &p, now);
	/* generations continue from the wall clock's seconds, not from 1: a
	 * flow an earlier agent spilled keeps its generation in its entry, and
	 * must not count as spilled again in ours (spill.c wraps past 0) */
	sa->ctl.gen = (uint16_t)(realtime_ns() / FS_NS_PER_S);
	sa->dp_fresh = true;
	sa->running = true;
	sa->next_dp_ns = 0;
	sa->retry_ns = 0;
	sa->next_tick_ns = now + sa->interval_ns;
	sa->next_ts_ns = now;
	sa->one_way = false;
	sa->kind_said = false;
	sa->started_ns = now;
	roles_spill_init(&sa->ours);
	memset(sa->rtt_samples, 0, sizeof(sa->rtt_samples));
	memset(sa->ts_last_ns, 0, sizeof(sa->ts_last_ns));
	ts_open(sa);
}

static void run_stop(struct spill_agent *sa, const char *why)
{
	int t;

	if (!sa->running)
		return;
	spill_off(sa, why);
	for (t = 0; t < HEALTH_TUNNELS; t++)
		close_fd(&sa->ts_fd[t]);
	close_fd(&sa->dummy_fd);
	dp_close(sa);
	sa->running = false;
	set_view(sa);
}

/* Why what runs differs from what is wanted (NULL: it does not). */
static const char *run_differs(const struct spill_agent *sa)
{
	if (memcmp(sa->dev, sa->want.dev, sizeof(sa->dev)))
		return "the tunnel devices or their roles changed";
	if (memcmp(sa->target, sa->want.target, sizeof(sa->target)))
		return "the probe targets changed";
	if (sa->interval_ns != sa->want.interval_ns)
		return "the probe interval changed";
	if (memcmp(&sa->run_s, &sa->s, sizeof(sa->s)))
		return "new settings";
	return NULL;
}

/*
 * The one place where spill's inputs meet what is set up: the settings
 * (SIGHUP), the tunnels and their roles (route up), "set spill" and the
 * code point (the splitter, re-read every 2 s). Whatever differs is torn
 * down (generation ended, class removed) and set up again from the
 * inputs; the sample kind (timestamps or RTTs) is the tick's (both
 * tunnels the same kind).
 */
static void reconcile(struct spill_agent *sa, uint64_t now)
{
	const char *why = NULL;

	if (!sa->want.tunnels || !sa->s.enabled) {
		run_stop(sa, !sa->want.tunnels ? "stopped" : "turned off");
		return;
	}
	if (sa->running && (why = run_differs(sa))) {
		pr_info("run: spill: %s: starting again", why);
		run_stop(sa, why);
	}
	if (!sa->running)
		run_start(sa, now);
	dp_refresh(sa, now);
	if (!sa->scav)
		return;
	/* "set spill no", or an instance gone: no class catches anything */
	if (!sa->dp.h || !sa->dp.on)
		spill_off(sa, !sa->dp.h ? "no splitter" : "spill is off in the splitter");
	/* "set dscp-spill": the class's filters follow at the next tick */
	else if (sa->dp.dscp != sa->scav_dscp)
		spill_off(sa, "the spill code point changed");
}

void spill_agent_start(struct spill_agent *sa, const char dev[HEALTH_TUNNELS][IF_NAMESIZE],
		       const char target[HEALTH_TUNNELS][INET6_ADDRSTRLEN], uint64_t interval_ns)
{
	int t;

	sa->want.tunnels = true;
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		snprintf(sa->want.dev[t], sizeof(sa->want.dev[t]), "%s", dev[t]);
		snprintf(sa->want.target[t], sizeof(sa->want.target[t]), "%s", target[t]);
	}
	sa->want.interval_ns = interval_ns;
	reconcile(sa, mono_ns());
}

void spill_agent_stop(struct spill_agent *sa)
{
	sa->want.tunnels = false;
	reconcile(sa, mono_ns());
}

bool spill_agent_switch(struct spill_agent *sa, const struct spill_settings *next)
{
	if (!memcmp(&sa->s, next, sizeof(*next)))
		return false;
	sa->s = *next;
	reconcile(sa, mono_ns());
	return true;
}

int spill_agent_fds(const struct spill_agent *sa, int fds[HEALTH_TUNNELS])
{
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		fds[t] = sa->running ? sa->ts_fd[t] : -1;
	return HEALTH_TUNNELS;
}

uint64_t spill_agent_next_ns(const struct spill_agent *sa)
{
	uint64_t n;

	if (!sa->running)
		return UINT64_MAX;
	n = sa->next_tick_ns < sa->next_ts_ns ? sa->next_tick_ns : sa->next_ts_ns;
	if (sa->gen_written && sa->renew_ns < n)
		n = sa->renew_ns;
	return n;
}

/* The class on SHORT (while spill can run); false when it cannot be. */
static bool scav_ensure(struct spill_agent *sa, uint64_t now)
{
	struct tcfg_scav_cfg c = {
		.dscp = sa->dp.dscp, .top_bps = settings_top_bps(&sa->s),
		.min_bps = sa->s.rate_min_bps,
		/* nothing spilled yet: nothing to hold back (see apply()) */
		.rate_bps = settings_top_bps(&sa->s), .limit_bytes = sa->s.limit_bytes,
		.wait_ms = SA_WAIT_MS,
	};
	char err[512];
	int ret;

	if (sa->scav)
		return true;
	if (now < sa->retry_ns)
		return false;
	snprintf(c.dev, sizeof(c.dev), "%s", sa->dev[SPILL_SHORT]);
	ret = tcfg_scav_open(&sa->scav, &c, err, sizeof(err));
	if (ret) {
		if (!sa->scav_failing)
			pr_warn("run: spill: %s; retrying every %llu s", err,
				(unsigned long long)(SA_RETRY_NS / FS_NS_PER_S));
		sa->scav_failing = true;
		sa->retry_ns = now + SA_RETRY_NS;
		return false;
	}
	sa->scav_failing = false;
	sa->scav_dscp = c.dscp;
	sa->applied_rate_bps = c.rate_bps;
	sa->applied_top_bps = c.top_bps;
	sa->held = false;
	dummy_open(sa);
	pr_info("run: spill: class on %s (code point %d, ceiling %llu bit/s)", c.dev, c.dscp,
		(unsigned long long)c.top_bps);
	return true;
}

static void log_act(struct spill_agent *sa, const struct spill_act *a)
{
	char rate[32], top[32];

	sc_rate_text(a->rate_bps, rate, sizeof(rate));
	sc_rate_text(a->top_bps, top, sizeof(top));
	pr_info("run: spill: %s (%s), generation %u, grants %llu, rate %s, top %s: %s",
		spill_state_name(a->state), sa->dev[SPILL_SHORT], a->gen,
		(unsigned long long)a->grants, a->hold ? "held" : rate, top, a->why);
}

static bool moved(uint64_t to, uint64_t from)
{
	return to * 100 > from * (100 + SA_RATE_STEP_PCT) ||
	       to * 100 < from * (100 - SA_RATE_STEP_PCT);
}

/* The HTB's top as the controller asks: 0.95 x SHORT's capacity estimate
 * while a generation has one, else the configured top (a line rate
 * without tunnel-rate): short traffic is capped only while it has
 * priority over spilled traffic below SHORT's capacity. */
static void apply_top(struct spill_agent *sa, uint64_t top)
{
	char err[256];

	/* small moves wait; back to the configured top at once */
	if (!top || top == sa->applied_top_bps ||
	    (!moved(top, sa->applied_top_bps) && top != settings_top_bps(&sa->s)))
		return;
	if (tcfg_scav_top(sa->scav, top, err, sizeof(err)))
		pr_warn("run: spill: %s", err);
	else
		sa->applied_top_bps = top;
}

/*
 * The class's rate for an act. Rules, in order:
 *  - the queued bytes leave within SA_WAIT_MS at it (the queue limit,
 *    tcfg_scav_limit(), bounds what comes after): a back-off or a hold
 *    never strands what is queued, agent or not;
 *  - held: rate-init (or the class's rate, when lower), never below
 *    rate-min: not 8 bit/s, which strands what is queued if the agent
 *    dies in the hold. Its queue (SA_WAIT_MS at it: 187 kB at 1 Mbit/s)
 *    takes what a moved flow sends during a hold (a 9 Mbit/s flow held
 *    120 ms: 135 kB); the frames it lets out early (about 10 in 120 ms
 *    at 1 Mbit/s, against every one of them without a hold) are the
 *    price (docs/design.md, *Spill fails safe*);
 *  - nothing spilled in this generation: the top (the class then holds
 *    back nothing: traffic of the code point that no grant put there
 *    passes behind short traffic, not at the start-up rate).
 */
static uint64_t class_rate(const struct spill_agent *sa, const struct spill_act *a,
			   uint64_t backlog, bool spilled)
{
	uint64_t floor = backlog * 8 * 1000 / SA_WAIT_MS, r;

	if (a->hold) {
		r = sa->s.rate_init_bps;
		if (a->rate_bps && a->rate_bps < r)
			r = a->rate_bps;
		if (r < sa->s.rate_min_bps)
			r = sa->s.rate_min_bps;
	} else if (!spilled) {
		r = settings_top_bps(&sa->s);
	} else {
		r = a->rate_bps;
	}
	return r > floor ? r : floor;
}

/* Apply the act: fs_spill, then the class (the hold before a grant opens:
 * the controller asks for the hold first and opens the grant only once
 * the class is held). */
static void apply(struct spill_agent *sa, const struct spill_act *a, uint64_t backlog,
		  bool spilled, uint64_t now)
{
	uint64_t rate = class_rate(sa, a, backlog, spilled);
	char err[256];
	int ret;

	apply_top(sa, a->top_bps);
	if (a->hold && !sa->held) {
		if (tcfg_scav_rate(sa->scav, rate, err, sizeof(err)))
			pr_warn("run: spill: hold: %s", err);
		else {
			dummies_send(sa);
			sa->held = true;
			sa->holds++;
			sa->applied_rate_bps = rate;
		}
	} else if (a->state != SPILL_OFF &&
		   ((sa->held && !a->hold) || moved(rate, sa->applied_rate_bps))) {
		if (tcfg_scav_rate(sa->scav, rate, err, sizeof(err))) {
			pr_warn("run: spill: %s", err);
		} else {
			sa->applied_rate_bps = rate;
			sa->held = a->hold;
		}
	}
	if (a->gen != sa->gen_written || a->grants != sa->grants_written)
		if ((ret = agent_write(sa, a->gen, a->grants, now)))
			pr_warn("run: spill: fs_spill: %s", strerror(-ret));
}

static void tick(struct spill_agent *sa, const struct spill_health *h, uint64_t now)
{
	struct tcfg_scav_stats st = { 0 };
	struct spill_obs o = { 0 };
	enum spill_state before = sa->act.state;
	uint16_t gen_before = sa->act.gen;
	char err[256];
	bool usable;

	reconcile(sa, now);
	usable = sa->dp.h && sa->dp.on && h->up[SPILL_SHORT] && h->up[SPILL_LONG] &&
		 h->normal_plan;
	if (usable && !scav_ensure(sa, now))
		usable = false;
	if (sa->scav && tcfg_scav_stats(sa->scav, &st, err, sizeof(err))) {
		/* someone removed it: made again at the next tick */
		pr_warn("run: spill: %s", err);
		tcfg_scav_close(sa->scav, false);
		sa->scav = NULL;
		usable = false;
	}
	if (sa->dp.h)
		sa->dp_ops->read(&sa->dp, NULL, &o.taken);
	o.usable = usable;
	o.held = sa->held;
	o.tunnel_tx_bytes = fs_dev_tx_bytes(sa->dev[SPILL_SHORT]);
	o.long_tx_bytes = fs_dev_tx_bytes(sa->dev[SPILL_LONG]);
	o.spill_tx_bytes = st.bytes;
	o.spill_backlog_bytes = st.backlog;
	for (int t = 0; t < SPILL_TUNNELS; t++) {
		o.probes_lost[t] = h->probes_lost[t];
		o.probes_window[t] = h->probes_window[t];
	}
	spill_tick(&sa->ctl, now, &o, &sa->act);
	roles_spill_step(&sa->ours,
			 &(struct roles_spill_obs){
				 .gen = sa->act.state != SPILL_OFF,
				 .class_bps = sa->ctl.used_bps,
				 .backlog_bytes = st.backlog,
				 .foreign_backoffs = sa->ctl.backoffs_foreign,
			 },
			 now);
	if (sa->act.state == SPILL_OFF) {
		/* a generation ends (or none runs): every spilled flow long
		 * again; the class goes only when spill stops for good */
		if (sa->gen_written && sa->dp.h)
			agent_write(sa, 0, sa->act.grants, now);
		if (sa->scav && (sa->held || sa->applied_rate_bps != settings_top_bps(&sa->s))) {
			struct spill_act none = { .rate_bps = sa->s.rate_init_bps };
			uint64_t r = class_rate(sa, &none, st.backlog, false);

			if (!tcfg_scav_rate(sa->scav, r, err, sizeof(err))) {
				sa->held = false;
				sa->applied_rate_bps = r;
			}
		}
		if (sa->scav)
			apply_top(sa, sa->act.top_bps);
	} else if (sa->scav) {
		bool spilled = sa->gen_written == sa->act.gen && o.taken > sa->taken_at_gen;

		apply(sa, &sa->act, st.backlog, spilled, now);
	}
	if (sa->act.changed)
		log_act(sa, &sa->act);
	if (sa->act.state != before || sa->act.gen != gen_before)
		sa->publish = true;
	set_view(sa);
	sa->next_tick_ns += sa->act.state == SPILL_HOLD_WAIT || sa->act.state == SPILL_GRANT ?
			    SA_FAST_TICK_NS : sa->interval_ns;
	if (sa->next_tick_ns < now)
		sa->next_tick_ns = now + SA_FAST_TICK_NS;
}

/* Both tunnels' delays of one kind: one-way while both have fresh
 * timestamp answers, else both RTTs (a far end that drops timestamp
 * requests on one tunnel only must not mix the kinds). */
static void sample_kind(struct spill_agent *sa, uint64_t now)
{
	bool one_way = true;
	int t;

	for (t = 0; t < HEALTH_TUNNELS; t++)
		one_way &= ts_fresh(sa, t, now);
	/* said once the first answers could be in, then at each change */
	if (now - sa->started_ns < SA_TS_FRESH_NS)
		return;
	if (one_way != sa->one_way || !sa->kind_said)
		pr_info("run: spill: delays from %s", one_way ? "timestamps (one-way)" :
			"RTTs (a tunnel has no timestamp answers)");
	sa->kind_said = true;
	sa->one_way = one_way;
}

bool spill_agent_step(struct spill_agent *sa, const struct spill_health *h, uint64_t now)
{
	int t, ret;

	if (!sa->running)
		return false;
	for (t = 0; t < HEALTH_TUNNELS; t++)
		ts_recv(sa, t, now);
	sample_kind(sa, now);
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		if (h->rtt_samples[t] == sa->rtt_samples[t])
			continue;
		sa->rtt_samples[t] = h->rtt_samples[t];
		spill_rtt(&sa->ctl, t, h->rtt_last_ns[t]);
		/* no timestamp answers: the RTTs are the delay */
		if (!sa->one_way && now > h->rtt_last_ns[t])
			sample(sa, t, now - h->rtt_last_ns[t], SPILL_BYTES_UNKNOWN, now,
			       h->rtt_last_ns[t], false);
	}
	if (now >= sa->next_ts_ns) {
		for (t = 0; t < HEALTH_TUNNELS; t++)
			ts_send(sa, t);
		sa->next_ts_ns += sa->interval_ns;
		if (sa->next_ts_ns < now)
			sa->next_ts_ns = now + sa->interval_ns;
	}
	if (now >= sa->next_tick_ns)
		tick(sa, h, now);
	/* the lease, between ticks when the interval is long */
	if (sa->gen_written && now >= sa->renew_ns && sa->dp.h &&
	    (ret = agent_write(sa, sa->gen_written, sa->grants_written, now)))
		pr_warn("run: spill: renewing the lease: %s", strerror(-ret));
	if (sa->publish) {
		sa->publish = false;
		return true;
	}
	return false;
}

bool spill_agent_fills_short(const struct spill_agent *sa, uint64_t now)
{
	return sa->running && roles_spill_busy(&sa->ours, now);
}

void spill_agent_close(struct spill_agent *sa)
{
	spill_agent_stop(sa);
	pthread_mutex_destroy(&sa->lock);
}
