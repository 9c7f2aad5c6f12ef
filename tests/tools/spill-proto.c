// SPDX-License-Identifier: GPL-2.0
/*
 * spill-proto - the spill prototype for the testbed: the controller
 * (health/spill.h) driven as the agent will drive it, in one router's
 * namespace. Not installed; the agent (splitctl run) replaces it.
 *
 *   spill-proto --pin-dir DIR --short-dev DEV --short-target ADDR
 *               --long-dev DEV --long-target ADDR [--dscp N] [--tc yes|no]
 *               [--hold yes|no] [--target-ms MS] [--long-target-ms MS]
 *               [--rate-max-mbit R] [--tunnel-rate-mbit R]
 *               [--limit-bytes N] [--interval-ms MS] [--one-way yes|no]
 *               [--duration S] [--log FILE]
 *
 * What it does:
 *   - turns spill on in the splitter instance at DIR (FS_CFG_F_SPILL and
 *     the spill code point in fs_config; fs_spill found through the
 *     pinned program's maps), and spill off (generation 0) at exit;
 *   - with --tc yes (default), puts the scavenger class on the SHORT
 *     device: HTB root, short traffic in 1:10 (prio 0, unshaped),
 *     spilled traffic in 1:20 (prio 1) picked by u32 on the spill code
 *     point (IPv4 and IPv6), its leaf a TBF at the controller's rate
 *     (limit --limit-bytes); removed at exit. With --tunnel-rate-mbit
 *     R (SHORT's rate is known), the HTB holds both classes to 0.95 x R,
 *     short traffic first: the queue forms on the router, not in the
 *     WAN, and the controller's rate is at most that;
 *   - probes both tunnels with the health prober (tunnel-cfg/probe.h)
 *     for their state (spill needs both up), and with ICMP timestamp
 *     requests for the one-way delay towards the far end (its receive
 *     time, in ms since midnight UTC, less our send time: the same clock
 *     offset for both tunnels, which end at the same router); feeds every
 *     one-way delay to the controller (a tunnel whose far end has not
 *     answered a timestamp request for 2 s: its echo RTTs instead), ticks
 *     it every interval (every 10 ms while a grant is under way) with the
 *     SHORT device's and the class's byte counters and the grants taken
 *     (--one-way no: RTTs only, for comparison);
 *   - applies what it returns: generation and grants into fs_spill, the
 *     TBF's rate; a hold is the TBF at 8 bit/s after its burst is spent
 *     by two 1514-byte ICMP echoes in the class (a TBF change refills the
 *     bucket, so without them one moved packet could leave); --hold no
 *     skips the hold (reports it applied, changes nothing): the plain
 *     move, for comparison;
 *   - logs one JSON object per tick to --log (t_s, state, gen, grants,
 *     taken, moved, rate/used/short Mbit/s, SHORT and LONG RTT and
 *     queueing delay ms, hold, why when it changed).
 * tc is run as a program (tc -s -j to read): a prototype's shortcut; the
 * agent will speak netlink. Exit 0, 1 (runtime), 2 (usage).
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <json-c/json.h>

#include "flowsplit.h"
#include "probe.h"
#include "spill.h"
#include "util.h"

#define PIN_PROG "prog_splitter"	/* splitctl's pin of the XDP program */
#define PIN_PROG_TC "prog_splitter_tc"
#define FAST_TICK_NS (10 * SPILL_NS_PER_MS)
#define DUMMY_PAYLOAD 1472	/* + ICMP 8 + IP 20 + Ethernet 14 = 1514 */
#define DUMMIES 2
#define TBF_BURST 1600		/* one full frame, not two */
#define HOLD_RATE "8bit"
#define TS_ID 0x5354		/* "ST": our timestamp requests */
#define TS_SLOTS 64
#define TS_FRESH_NS (2 * SPILL_NS_PER_S)
#define OWD_OFFSET_NS (1000 * SPILL_NS_PER_S) /* keeps one-way delays > 0 */
#define DAY_NS (86400 * SPILL_NS_PER_S)

static const char usage[] =
	"usage: spill-proto --pin-dir DIR --short-dev DEV --short-target ADDR "
	"--long-dev DEV --long-target ADDR [--dscp N] [--tc yes|no] "
	"[--hold yes|no] [--target-ms MS] [--long-target-ms MS] "
	"[--rate-max-mbit R] [--tunnel-rate-mbit R] [--limit-bytes N] "
	"[--interval-ms MS] [--one-way yes|no] "
	"[--duration S] [--log FILE]";

struct opts {
	const char *pin_dir, *short_dev, *long_dev, *short_target,
		*long_target, *log;
	unsigned int dscp;
	bool tc, hold, one_way;
	uint64_t limit_bytes, duration_ns, tunnel_bps;
	struct spill_params sp;
};

static void die_usage(const char *what, const char *val)
{
	pr_err("%s '%s': see usage", what, val);
	fprintf(stderr, "%s\n", usage);
	exit(FS_EXIT_USAGE);
}

static uint64_t num(const char *what, const char *s, uint64_t min,
		    uint64_t max)
{
	uint64_t v;

	if (parse_u64(s, min, max, &v))
		die_usage(what, s);
	return v;
}

static bool yesno(const char *what, const char *s)
{
	if (!strcmp(s, "yes"))
		return true;
	if (!strcmp(s, "no"))
		return false;
	die_usage(what, s);
	return false;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "short-dev", required_argument, NULL, 's' },
		{ "long-dev", required_argument, NULL, 'l' },
		{ "short-target", required_argument, NULL, 'S' },
		{ "long-target", required_argument, NULL, 'L' },
		{ "dscp", required_argument, NULL, 'd' },
		{ "tc", required_argument, NULL, 'c' },
		{ "hold", required_argument, NULL, 'h' },
		{ "target-ms", required_argument, NULL, 't' },
		{ "long-target-ms", required_argument, NULL, 'T' },
		{ "rate-max-mbit", required_argument, NULL, 'r' },
		{ "tunnel-rate-mbit", required_argument, NULL, 'R' },
		{ "one-way", required_argument, NULL, 'w' },
		{ "limit-bytes", required_argument, NULL, 'b' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'D' },
		{ "log", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .dscp = FS_DEFAULT_DSCP_SPILL, .tc = true,
			    .hold = true, .one_way = true, .limit_bytes = 1000000,
			    .duration_ns = 86400 * SPILL_NS_PER_S };
	spill_params_default(&o->sp);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p': o->pin_dir = optarg; break;
		case 's': o->short_dev = optarg; break;
		case 'l': o->long_dev = optarg; break;
		case 'S': o->short_target = optarg; break;
		case 'L': o->long_target = optarg; break;
		case 'd': o->dscp = num("--dscp", optarg, 1, FS_DSCP_MAX); break;
		case 'c': o->tc = yesno("--tc", optarg); break;
		case 'h': o->hold = yesno("--hold", optarg); break;
		case 'w': o->one_way = yesno("--one-way", optarg); break;
		case 't':
			o->sp.target_ns = num("--target-ms", optarg, 1, 10000) *
					  SPILL_NS_PER_MS;
			break;
		case 'T':
			o->sp.long_target_ns = num("--long-target-ms", optarg,
						   1, 10000) * SPILL_NS_PER_MS;
			break;
		case 'r':
			o->sp.rate_max_bps = num("--rate-max-mbit", optarg, 1,
						 100000) * 1000000;
			break;
		case 'R':
			o->tunnel_bps = num("--tunnel-rate-mbit", optarg, 1,
					    100000) * 1000000;
			o->sp.rate_max_bps = o->tunnel_bps * 95 / 100;
			break;
		case 'b':
			o->limit_bytes = num("--limit-bytes", optarg, 3028,
					     1000000000);
			break;
		case 'i':
			o->sp.interval_ns = num("--interval-ms", optarg, 10,
						1000) * SPILL_NS_PER_MS;
			break;
		case 'D':
			o->duration_ns = num("--duration", optarg, 1, 86400) *
					 SPILL_NS_PER_S;
			break;
		case 'o': o->log = optarg; break;
		default:
			fprintf(stderr, "%s\n", usage);
			exit(FS_EXIT_USAGE);
		}
	}
	if (!o->pin_dir || !o->short_dev || !o->long_dev || !o->short_target ||
	    !o->long_target || optind != argc) {
		fprintf(stderr, "%s\n", usage);
		exit(FS_EXIT_USAGE);
	}
}

/* ---- the splitter's maps ------------------------------------------------- */

/* The map named @name that the program pinned at @path uses, or -1. */
static int prog_map(const char *path, const char *name)
{
	struct bpf_prog_info info = {};
	__u32 ids[16], len = sizeof(info), i, n;
	int pfd = bpf_obj_get(path), fd = -1;

	if (pfd < 0)
		return -1;
	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len))
		goto out;
	n = info.nr_map_ids < 16 ? info.nr_map_ids : 16;
	for (i = 0; i < n && fd < 0; i++) {
		struct bpf_map_info mi = {};
		__u32 ml = sizeof(mi);
		int m = bpf_map_get_fd_by_id(ids[i]);

		if (m < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(m, &mi, &ml) && !strcmp(mi.name, name))
			fd = m;
		else
			close(m);
	}
out:
	close(pfd);
	return fd;
}

static int spill_fd, cfg_fd;

static int maps_open(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, PIN_PROG);
	if (access(path, F_OK))
		snprintf(path, sizeof(path), "%s/%s", dir, PIN_PROG_TC);
	spill_fd = prog_map(path, FS_MAP_SPILL);
	cfg_fd = prog_map(path, FS_MAP_CONFIG);
	return spill_fd < 0 || cfg_fd < 0 ? -1 : 0;
}

static int config_spill(bool on, unsigned int dscp)
{
	struct split_config c;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(cfg_fd, &zero, &c))
		return -1;
	if (on) {
		c.flags |= FS_CFG_F_SPILL;
		c.dscp_spill = dscp;
	} else {
		c.flags &= ~FS_CFG_F_SPILL;
	}
	return bpf_map_update_elem(cfg_fd, &zero, &c, BPF_ANY);
}

static int agent_write(uint16_t gen, uint64_t grants)
{
	struct fs_spill a = { .grants = grants, .gen = gen };
	__u32 key = FS_SPILL_KEY_AGENT;

	return bpf_map_update_elem(spill_fd, &key, &a, BPF_ANY);
}

static struct fs_spill dp_read(void)
{
	struct fs_spill d = {};
	__u32 key = FS_SPILL_KEY_DATAPATH;

	bpf_map_lookup_elem(spill_fd, &key, &d);
	return d;
}

/* ---- tc ------------------------------------------------------------------ */

static int run(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

#define TC(...) run((char *const[]){ "tc", __VA_ARGS__, NULL })

static void tc_down(const char *dev)
{
	TC("qdisc", "del", "dev", (char *)dev, "root");
}

static int tc_up(const struct opts *o)
{
	char dev[IFNAMSIZ], tos[16], rate[32], limit[32], burst[16],
	     top[32] = "10gbit";

	snprintf(dev, sizeof(dev), "%s", o->short_dev);
	snprintf(tos, sizeof(tos), "0x%02x", FS_DSCP_TO_TOS(o->dscp));
	snprintf(rate, sizeof(rate), "%llubit",
		 (unsigned long long)o->sp.rate_init_bps);
	snprintf(limit, sizeof(limit), "%llu",
		 (unsigned long long)o->limit_bytes);
	snprintf(burst, sizeof(burst), "%d", TBF_BURST);
	if (o->tunnel_bps)
		snprintf(top, sizeof(top), "%llubit",
			 (unsigned long long)o->sp.rate_max_bps);
	if (TC("qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb",
	       "default", "10") ||
	    TC("class", "add", "dev", dev, "parent", "1:", "classid", "1:1",
	       "htb", "rate", top, "ceil", top, "quantum", "1514") ||
	    TC("class", "add", "dev", dev, "parent", "1:1", "classid", "1:10",
	       "htb", "rate", top, "ceil", top, "prio", "0",
	       "quantum", "1514") ||
	    TC("class", "add", "dev", dev, "parent", "1:1", "classid", "1:20",
	       "htb", "rate", "100kbit", "ceil", top, "prio", "1",
	       "quantum", "1514") ||
	    TC("qdisc", "add", "dev", dev, "parent", "1:20", "handle", "20:",
	       "tbf", "rate", rate, "burst", burst, "limit", limit) ||
	    TC("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip",
	       "prio", "1", "u32", "match", "ip", "dsfield", tos, "0xfc",
	       "flowid", "1:20") ||
	    TC("filter", "add", "dev", dev, "parent", "1:", "protocol", "ipv6",
	       "prio", "2", "u32", "match", "ip6", "priority", tos, "0xfc",
	       "flowid", "1:20"))
		return -1;
	return 0;
}

static int tc_rate(const struct opts *o, const char *rate)
{
	char dev[IFNAMSIZ], limit[32], burst[16];

	snprintf(dev, sizeof(dev), "%s", o->short_dev);
	snprintf(limit, sizeof(limit), "%llu",
		 (unsigned long long)o->limit_bytes);
	snprintf(burst, sizeof(burst), "%d", TBF_BURST);
	return TC("qdisc", "change", "dev", dev, "parent", "1:20", "handle",
		  "20:", "tbf", "rate", (char *)rate, "burst", burst, "limit",
		  limit);
}

/* The TBF's sent bytes and backlog (tc -s -j). */
static int tc_class_stats(const char *dev, uint64_t *bytes, uint64_t *backlog)
{
	char cmd[128], buf[16384];
	struct json_object *arr, *q, *v;
	size_t n = 0, r;
	FILE *f;
	int i, found = -1;

	snprintf(cmd, sizeof(cmd), "tc -s -j qdisc show dev %s", dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((r = fread(buf + n, 1, sizeof(buf) - 1 - n, f)) > 0)
		n += r;
	pclose(f);
	buf[n] = '\0';
	arr = json_tokener_parse(buf);
	if (!arr)
		return -1;
	for (i = 0; i < (int)json_object_array_length(arr); i++) {
		q = json_object_array_get_idx(arr, i);
		if (!json_object_object_get_ex(q, "handle", &v) ||
		    strcmp(json_object_get_string(v), "20:"))
			continue;
		json_object_object_get_ex(q, "bytes", &v);
		*bytes = json_object_get_uint64(v);
		json_object_object_get_ex(q, "backlog", &v);
		*backlog = json_object_get_uint64(v);
		found = 0;
	}
	json_object_put(arr);
	return found;
}

static uint64_t dev_tx_bytes(const char *dev)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes",
		 dev);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* ---- the dummies that spend the TBF's burst ------------------------------ */

static uint16_t icmp_csum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	if (len)
		sum += *(const uint8_t *)w;
	sum = (sum >> 16) + (sum & 0xffff);
	sum += sum >> 16;
	return ~sum;
}

static int dummy_fd;
static struct sockaddr_in dummy_to;

static int dummy_open(const struct opts *o)
{
	int tos = FS_DSCP_TO_TOS(o->dscp);

	dummy_fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (dummy_fd < 0 ||
	    setsockopt(dummy_fd, SOL_SOCKET, SO_BINDTODEVICE, o->short_dev,
		       strlen(o->short_dev)) ||
	    setsockopt(dummy_fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)))
		return -1;
	dummy_to.sin_family = AF_INET;
	return inet_pton(AF_INET, o->short_target, &dummy_to.sin_addr) == 1
		       ? 0 : -1;
}

static int dummies_send(void)
{
	static uint16_t seq;
	uint8_t pkt[sizeof(struct icmphdr) + DUMMY_PAYLOAD] = {};
	struct icmphdr *h = (void *)pkt;
	int i;

	for (i = 0; i < DUMMIES; i++) {
		memset(pkt, 0, sizeof(pkt));
		h->type = ICMP_ECHO;
		h->un.echo.id = htons(0x5350);	/* "SP" */
		h->un.echo.sequence = htons(++seq);
		h->checksum = icmp_csum(pkt, sizeof(pkt));
		if (sendto(dummy_fd, pkt, sizeof(pkt), 0,
			   (struct sockaddr *)&dummy_to, sizeof(dummy_to)) < 0)
			return -1;
	}
	return 0;
}

/* ---- one-way delays: ICMP timestamp requests (RFC 792) ------------------ */

struct ts_msg {
	uint8_t type, code;
	uint16_t csum, id, seq;
	uint32_t orig, rx, tx;	/* ms since midnight UTC, network order */
};

struct tsprobe {
	int fd;
	struct sockaddr_in to;
	uint16_t id, seq;
	uint16_t slot_seq[TS_SLOTS];
	uint64_t slot_rt_ns[TS_SLOTS];	/* CLOCK_REALTIME at send */
	uint64_t slot_mono_ns[TS_SLOTS];	/* and CLOCK_MONOTONIC */
	uint64_t sent_ns;		/* mono: the last answer's send */
	uint64_t last_ns;		/* mono: the last answer */
	int64_t owd_ns;			/* the last one-way delay */
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int ts_open(struct tsprobe *t, const char *dev, const char *target,
		   uint16_t id)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMP);
	if (t->fd < 0 || setsockopt(t->fd, SOL_SOCKET, SO_BINDTODEVICE, dev,
				    strlen(dev)))
		return -1;
	t->to.sin_family = AF_INET;
	return inet_pton(AF_INET, target, &t->to.sin_addr) == 1 ? 0 : -1;
}

static void ts_send(struct tsprobe *t)
{
	struct ts_msg m = { .type = ICMP_TIMESTAMP };
	uint64_t rt = realtime_ns();
	unsigned int slot;

	t->seq++;
	slot = t->seq % TS_SLOTS;
	m.id = htons(t->id);
	m.seq = htons(t->seq);
	m.orig = htonl((uint32_t)(rt % DAY_NS / 1000000));
	m.csum = icmp_csum(&m, sizeof(m));
	t->slot_seq[slot] = t->seq;
	t->slot_rt_ns[slot] = rt;
	t->slot_mono_ns[slot] = mono_ns();
	sendto(t->fd, &m, sizeof(m), 0, (struct sockaddr *)&t->to,
	       sizeof(t->to));
}

/* Read the answers waiting; 1 when one gave a one-way delay (t->owd_ns). */
static int ts_recv(struct tsprobe *t, uint64_t now)
{
	uint8_t buf[256];
	const struct ts_msg *m;
	unsigned int ihl, slot;
	uint32_t rx;
	int64_t owd;
	ssize_t n;
	int got = 0;

	while ((n = recv(t->fd, buf, sizeof(buf), 0)) > 0) {
		ihl = (buf[0] & 0x0f) * 4;
		if ((size_t)n < ihl + sizeof(*m))
			continue;
		m = (const void *)(buf + ihl);
		if (m->type != ICMP_TIMESTAMPREPLY || ntohs(m->id) != t->id)
			continue;
		slot = ntohs(m->seq) % TS_SLOTS;
		rx = ntohl(m->rx);
		if (t->slot_seq[slot] != ntohs(m->seq) || (rx & 0x80000000u))
			continue;	/* not ours, or not in ms since midnight */
		owd = (int64_t)rx * 1000000 -
		      (int64_t)(t->slot_rt_ns[slot] % DAY_NS);
		if (owd > (int64_t)DAY_NS / 2)
			owd -= DAY_NS;
		else if (owd < -(int64_t)DAY_NS / 2)
			owd += DAY_NS;
		t->owd_ns = owd;
		t->sent_ns = t->slot_mono_ns[slot];
		t->last_ns = now;
		got = 1;
	}
	return got;
}

/* ---- main loop ----------------------------------------------------------- */

static double mbit(uint64_t bps)
{
	return bps / 1e6;
}

static double msd(uint64_t ns)
{
	return ns / 1e6;
}

int main(int argc, char **argv)
{
	struct health_event ev[8];
	struct health_params hp;
	struct health_probe_cfg pc[SPILL_TUNNELS];
	struct health_prober *p;
	uint64_t last_samples[SPILL_TUNNELS] = { 0 }, t0, now, next_tick,
		 end, applied_rate = 0, tx = 0, backlog = 0;
	uint16_t gen = 0;
	uint64_t grants = 0;
	bool held = false, usable;
	struct spill_act act = {};
	struct tsprobe ts[SPILL_TUNNELS];
	uint64_t next_ts;
	struct spill s;
	struct opts o;
	FILE *log = NULL;
	int i, n, rc = FS_EXIT_OK;

	fs_log_init("spill-proto", FS_LOG_INFO);
	parse_args(argc, argv, &o);
	if (maps_open(o.pin_dir)) {
		pr_err("%s: no splitter with an %s map pinned there",
		       o.pin_dir, FS_MAP_SPILL);
		return FS_EXIT_RUNTIME;
	}
	if (o.log && !(log = fopen(o.log, "w"))) {
		pr_err("%s: %s", o.log, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (dummy_open(&o)) {
		pr_err("dummy socket on %s: %s", o.short_dev, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (ts_open(&ts[SPILL_SHORT], o.short_dev, o.short_target, TS_ID) ||
	    ts_open(&ts[SPILL_LONG], o.long_dev, o.long_target, TS_ID + 1)) {
		pr_err("timestamp sockets: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	health_params_default(&hp);
	hp.interval_ns = o.sp.interval_ns;
	hp.timeout_ns = o.sp.interval_ns;
	p = health_prober_new(&hp, HEALTH_ICMP_AUTO);
	pc[SPILL_SHORT] = (struct health_probe_cfg){ .dev = o.short_dev,
		.target = o.short_target, .kind = HEALTH_PROBE_ICMP };
	pc[SPILL_LONG] = (struct health_probe_cfg){ .dev = o.long_dev,
		.target = o.long_target, .kind = HEALTH_PROBE_ICMP };
	if (!p || health_prober_add(p, &pc[SPILL_SHORT]) != SPILL_SHORT ||
	    health_prober_add(p, &pc[SPILL_LONG]) != SPILL_LONG) {
		pr_err("prober: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (o.tc && tc_up(&o)) {
		pr_err("tc: the scavenger class on %s failed", o.short_dev);
		tc_down(o.short_dev);
		return FS_EXIT_RUNTIME;
	}
	if (agent_write(0, dp_read().taken) || config_spill(true, o.dscp)) {
		pr_err("cannot write the splitter's maps: %s", strerror(errno));
		rc = FS_EXIT_RUNTIME;
		goto out;
	}
	fs_signals_install(false);
	t0 = mono_ns();
	spill_init(&s, &o.sp, t0);
	applied_rate = o.sp.rate_init_bps;
	next_tick = t0 + o.sp.interval_ns;
	next_ts = t0;
	end = t0 + o.duration_ns;
	while (!fs_stop && (now = mono_ns()) < end) {
		n = health_poll(p, 2, ev, 8);
		if (n < 0)
			break;
		now = mono_ns();
		if (o.one_way && now >= next_ts) {
			ts_send(&ts[SPILL_SHORT]);
			ts_send(&ts[SPILL_LONG]);
			next_ts += o.sp.interval_ns;
		}
		for (i = 0; i < SPILL_TUNNELS; i++) {
			const struct health *h = health_prober_tunnel(p, i);
			bool fresh;

			if (ts_recv(&ts[i], now))
				spill_sample(&s, i, ts[i].sent_ns, now,
					     OWD_OFFSET_NS + ts[i].owd_ns, true);
			fresh = ts[i].last_ns && now - ts[i].last_ns < TS_FRESH_NS;
			if (h && h->rtt_samples != last_samples[i]) {
				last_samples[i] = h->rtt_samples;
				spill_rtt(&s, i, h->rtt_last_ns);
				if (!fresh)
					spill_sample(&s, i,
						     now - h->rtt_last_ns, now,
						     h->rtt_last_ns, false);
			}
		}
		if (now < next_tick)
			continue;
		usable = health_prober_tunnel(p, SPILL_SHORT)->state ==
				 HEALTH_UP &&
			 health_prober_tunnel(p, SPILL_LONG)->state == HEALTH_UP;
		if (o.tc)
			tc_class_stats(o.short_dev, &tx, &backlog);
		struct fs_spill d = dp_read();
		struct spill_obs ob = {
			.usable = usable, .held = held,
			.tunnel_tx_bytes = dev_tx_bytes(o.short_dev),
			.long_tx_bytes = dev_tx_bytes(o.long_dev),
			.spill_tx_bytes = tx, .spill_backlog_bytes = backlog,
			.taken = d.taken,
		};
		spill_tick(&s, now, &ob, &act);
		if (act.gen != gen || act.grants != grants) {
			gen = act.gen;
			grants = act.grants;
			agent_write(gen, grants);
		}
		if (o.tc && act.hold && !held) {
			if (o.hold) {
				tc_rate(&o, HOLD_RATE);
				dummies_send();
			}
			held = true;
		} else if (o.tc && !act.hold && (held ||
			   act.rate_bps * 100 > applied_rate * 101 ||
			   act.rate_bps * 100 < applied_rate * 99)) {
			char r[32];

			snprintf(r, sizeof(r), "%llubit",
				 (unsigned long long)act.rate_bps);
			tc_rate(&o, r);
			applied_rate = act.rate_bps;
			held = false;
		}
		if (log) {
			uint64_t qs = 0, ql = 0;

			spill_queue_delay(&s, SPILL_SHORT, now,
					  2 * o.sp.interval_ns +
					  o.sp.interval_ns / 2, &qs);
			spill_queue_delay(&s, SPILL_LONG, now,
					  5 * o.sp.interval_ns +
					  o.sp.interval_ns / 2, &ql);
			fprintf(log, "{\"t_s\":%.3f,\"state\":\"%s\",\"gen\":%u,"
				     "\"grants\":%llu,\"taken\":%llu,\"moved\":%llu,"
				     "\"rate_mbit\":%.3f,\"used_mbit\":%.3f,"
				     "\"short_mbit\":%.3f,\"cap_mbit\":%.3f,"
				     "\"backlog\":%llu,\"rtt_short_ms\":%.2f,"
				     "\"rtt_long_ms\":%.2f,\"owd_short_ms\":%.2f,"
				     "\"owd_long_ms\":%.2f,\"one_way\":%s,"
				     "\"qd_short_ms\":%.2f,"
				     "\"qd_long_ms\":%.2f,\"hold\":%s",
				(now - t0) / 1e9, spill_state_name(act.state),
				act.gen, (unsigned long long)act.grants,
				(unsigned long long)d.taken,
				(unsigned long long)d.moved, mbit(act.rate_bps),
				mbit(s.used_bps), mbit(s.short_bps),
				mbit(s.cap_bps), (unsigned long long)backlog,
				msd(health_prober_tunnel(p, SPILL_SHORT)->rtt_last_ns),
				msd(health_prober_tunnel(p, SPILL_LONG)->rtt_last_ns),
				ts[SPILL_SHORT].owd_ns / 1e6,
				ts[SPILL_LONG].owd_ns / 1e6,
				s.d[SPILL_SHORT].one_way ? "true" : "false",
				msd(qs), msd(ql), act.hold ? "true" : "false");
			if (act.changed) {
				struct json_object *w = json_object_new_string(act.why);

				fprintf(log, ",\"why\":%s",
					json_object_to_json_string(w));
				json_object_put(w);
			}
			fprintf(log, "}\n");
			fflush(log);
		}
		next_tick += act.state == SPILL_HOLD_WAIT ||
				     act.state == SPILL_GRANT
			     ? FAST_TICK_NS : o.sp.interval_ns;
		if (next_tick < now)
			next_tick = now + FAST_TICK_NS;
	}
out:
	agent_write(0, dp_read().taken);
	config_spill(false, o.dscp);
	if (o.tc)
		tc_down(o.short_dev);
	health_prober_free(p);
	if (log)
		fclose(log);
	return rc;
}
