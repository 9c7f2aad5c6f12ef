#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "json_print.h"
#include "params.h"
#include "util.h"

#define MAGIC 0x646c7072u	/* "dlpr" */
#define NSEC 1000000000LL
#define MAX_COUNT 10000000
#define BATCH 64

struct probe_hdr {
	uint32_t magic;		/* host byte order: sender and receiver share a machine */
	uint32_t pad;
	uint64_t seq;
	int64_t sent_ns;	/* CLOCK_MONOTONIC */
};
_Static_assert(sizeof(struct probe_hdr) == 24, "probe header is 24 bytes");

/* the options of both commands (send_options, recv_options) */
struct probe_opts {
	__u32 given;		/* params.h: first member */
	struct sc_prefix dst;
	uint32_t port, tos;
	uint64_t count, pps, size;
	uint64_t idle_ns, timeout_ns;
	const char *ready, *out;
	bool read_time;
};

#define PROBE_OPT(name, type, member, ...) \
	SC_OPTION(name, type, struct probe_opts, member, __VA_ARGS__)
#define PORT_OPT PROBE_OPT("port", SC_OPT_UINT, port, .metavar = "P", .lo = 1, \
			   .hi = 65535, .required = true, .help = "UDP port")
#define COUNT_OPT PROBE_OPT("count", SC_OPT_UINT, count, .metavar = "N", .lo = 1, \
			    .hi = MAX_COUNT, .help = "datagrams")

static const struct sc_option send_options[] = {
	PROBE_OPT("dst", SC_OPT_ADDR, dst, .metavar = "IPV4", .family = AF_INET,
		  .noun = "address", .required = true, .help = "the receiver"),
	PORT_OPT,
	COUNT_OPT,
	PROBE_OPT("pps", SC_OPT_UINT, pps, .metavar = "R", .lo = 1, .hi = 1000000,
		  .help = "datagrams per second"),
	PROBE_OPT("size", SC_OPT_UINT, size, .metavar = "B", .lo = sizeof(struct probe_hdr),
		  .hi = 65000, .help = "bytes of UDP payload"),
	PROBE_OPT("tos", SC_OPT_UINT, tos, .metavar = "T", .lo = 0, .hi = 255,
		  .help = "IPv4 TOS byte"),
	SC_OPTIONS_END,
};

static const struct sc_option recv_options[] = {
	PORT_OPT,
	COUNT_OPT,
	PROBE_OPT("idle-ms", SC_OPT_DURATION, idle_ns, .metavar = "MS", .unit = SC_UNIT_MS,
		  .lo = 1, .hi = 3600000,
		  .help = "end this long after the last datagram, once one came"),
	PROBE_OPT("timeout-s", SC_OPT_DURATION, timeout_ns, .metavar = "S", .lo = 1,
		  .hi = 86400, .help = "end after S seconds in any case"),
	PROBE_OPT("ready", SC_OPT_PATH, ready, .metavar = "FILE", .noun = "path",
		  .help = "created once the socket is bound"),
	PROBE_OPT("out", SC_OPT_PATH, out, .metavar = "FILE", .noun = "path",
		  .help = "the JSON result (default stdout)"),
	PROBE_OPT("read-time", SC_OPT_FLAG, read_time,
		  .help = "time every datagram by its read, not the kernel stamp"),
	SC_OPTIONS_END,
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* a UDP socket, bound to port (recv) or connected to dst:port (send) */
static int probe_socket(const struct probe_opts *o, bool rx)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), t = (int)o->tos;
	char addr[INET_ADDRSTRLEN] = "";

	if (!rx)
		memcpy(&a.sin_addr, o->dst.addr, 4);
	if (fd >= 0 && (rx ? !bind(fd, (struct sockaddr *)&a, sizeof(a)) :
			!setsockopt(fd, IPPROTO_IP, IP_TOS, &t, sizeof(t)) &&
			!connect(fd, (struct sockaddr *)&a, sizeof(a))))
		return fd;
	inet_ntop(AF_INET, &a.sin_addr, addr, sizeof(addr));
	fprintf(stderr, "dlprobe: %s %s:%u: %s\n", rx ? "bind" : "send to", addr,
		o->port, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static int do_send(const struct probe_opts *o)
{
	unsigned char buf[65536] = { 0 };
	struct probe_hdr *h = (struct probe_hdr *)buf;
	int fd = probe_socket(o, false);

	if (fd < 0)
		return 1;
	prctl(PR_SET_TIMERSLACK, 1UL);
	int64_t start = (int64_t)mono_ns() + 1000000, gap = NSEC / (int64_t)o->pps;
	uint64_t sent = 0, errors = 0;
	int64_t stall_max = 0;	/* worst time from the send stamp to send() returning */

	h->magic = MAGIC;
	for (uint64_t i = 0; i < o->count; i++) {
		int64_t at = start + (int64_t)i * gap;
		struct timespec ts = { .tv_sec = at / NSEC, .tv_nsec = at % NSEC };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		h->seq = i;
		h->sent_ns = (int64_t)mono_ns();
		if (send(fd, buf, o->size, 0) == (ssize_t)o->size)
			sent++;
		else
			errors++;
		if ((int64_t)mono_ns() - h->sent_ns > stall_max)
			stall_max = (int64_t)mono_ns() - h->sent_ns;
	}
	/* send_stall_max_us: a sender held off its CPU between stamping and
	 * sending makes the path look slower by that much */
	print_begin(stdout, true);
	open_json_object(NULL);
	print_uint(PRINT_JSON, "sent", NULL, sent);
	print_uint(PRINT_JSON, "send_errors", NULL, errors);
	print_uint(PRINT_JSON, "pps", NULL, o->pps);
	print_uint(PRINT_JSON, "size", NULL, o->size);
	print_float(PRINT_JSON, "duration_s", NULL, ((int64_t)mono_ns() - start) / 1e9);
	print_float(PRINT_JSON, "send_stall_max_us", NULL, stall_max / 1e3);
	close_json_object();
	print_end();
	return 0;
}

/* the receiver's tally */
struct rx_tally {
	int64_t *owd;		/* one-way delay of each unique datagram, ns */
	uint8_t *seen;		/* by sequence number */
	uint64_t received, unique, reordered, dups, foreign, max_seq;
	uint64_t late_reads;	/* datagrams read > 1 ms after the kernel stamp */
	int64_t last;		/* read time of the last datagram, 0: none yet */
};

/* recv's socket: bound, a large buffer, kernel stamps, a 10 ms read
 * timeout (to check the deadlines); --ready created then */
static int rx_socket(const struct probe_opts *o)
{
	struct timeval tv = { .tv_usec = 10000 };
	int fd = probe_socket(o, true), buf = 8 << 20, one = 1;
	FILE *f;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (!o->read_time)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (o->ready && (!(f = fopen(o->ready, "w")) || fclose(f))) {
		fprintf(stderr, "dlprobe: %s: %s\n", o->ready, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The arrival time of a datagram sent at sent_ns and read at now: the
 * kernel stamp, moved from CLOCK_REALTIME by real_off, unless it is over
 * 1 ms before the read (as delayline) or there is none. */
static int64_t rx_time(struct msghdr *m, int64_t now, int64_t real_off,
		       int64_t sent_ns, struct rx_tally *t)
{
	struct cmsghdr *c;
	int64_t at = now;
	int stamped = 0;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct timespec ts;
		int64_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		k = (int64_t)ts.tv_sec * NSEC + ts.tv_nsec - real_off;
		if (k <= now && k >= sent_ns && now - k <= 1000000)
			at = k;
		stamped = 1;
	}
	if (stamped && at == now)
		t->late_reads++;
	return at;
}

/* one datagram of ours or a foreign one */
static void rx_one(struct rx_tally *t, uint64_t count, struct msghdr *m,
		   size_t len, int64_t now, int64_t real_off)
{
	const struct probe_hdr *h = m->msg_iov->iov_base;

	if (len < sizeof(*h) || h->magic != MAGIC || h->seq >= count) {
		t->foreign++;
		return;
	}
	t->received++;
	t->last = now;
	if (t->seen[h->seq]) {
		t->dups++;
		return;
	}
	t->seen[h->seq] = 1;
	if (t->unique && h->seq < t->max_seq)
		t->reordered++;
	if (!t->unique || h->seq > t->max_seq)
		t->max_seq = h->seq;
	t->owd[t->unique++] = rx_time(m, now, real_off, h->sent_ns, t) - h->sent_ns;
}

/* read until count datagrams, the idle time or the timeout */
static void rx_loop(int fd, const struct probe_opts *o, struct rx_tally *t)
{
	static unsigned char bufs[BATCH][2048];
	static unsigned char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
	int64_t deadline = (int64_t)mono_ns() + (int64_t)o->timeout_ns;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];

	while (t->received < o->count) {
		int64_t now = (int64_t)mono_ns(), real_off;
		struct timespec rt;
		int n;

		if (now > deadline || (t->last && now - t->last > (int64_t)o->idle_ns))
			break;
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		now = (int64_t)mono_ns();
		clock_gettime(CLOCK_REALTIME, &rt);
		real_off = (int64_t)rt.tv_sec * NSEC + rt.tv_nsec - now;
		for (int i = 0; i < n; i++)
			rx_one(t, o->count, &msgs[i].msg_hdr, msgs[i].msg_len, now, real_off);
	}
}

static void rx_report(FILE *f, struct rx_tally *t)
{
	print_begin(f, true);
	open_json_object(NULL);
	print_uint(PRINT_JSON, "received", NULL, t->received);
	print_uint(PRINT_JSON, "unique", NULL, t->unique);
	print_uint(PRINT_JSON, "lost", NULL, t->unique ? t->max_seq + 1 - t->unique : 0);
	print_uint(PRINT_JSON, "reordered", NULL, t->reordered);
	print_uint(PRINT_JSON, "duplicates", NULL, t->dups);
	print_uint(PRINT_JSON, "foreign", NULL, t->foreign);
	print_uint(PRINT_JSON, "late_reads", NULL, t->late_reads);
	/* the losses' shape, up to the last datagram received: runs of
	 * consecutive missing sequence numbers, the longest, the first and
	 * the last missing one (null: none) */
	uint64_t runs = 0, run = 0, run_max = 0, first = UINT64_MAX, last = 0;

	for (uint64_t q = 0; t->unique && q <= t->max_seq; q++) {
		if (t->seen[q]) {
			run = 0;
			continue;
		}
		runs += !run++;
		run_max = run > run_max ? run : run_max;
		first = first == UINT64_MAX ? q : first;
		last = q;
	}
	print_uint(PRINT_JSON, "loss_runs", NULL, runs);
	print_uint(PRINT_JSON, "loss_run_max", NULL, run_max);
	if (runs) {
		print_uint(PRINT_JSON, "lost_first_seq", NULL, first);
		print_uint(PRINT_JSON, "lost_last_seq", NULL, last);
	} else {
		print_null(PRINT_JSON, "lost_first_seq", NULL, NULL);
		print_null(PRINT_JSON, "lost_last_seq", NULL, NULL);
	}
	if (t->unique) {
		uint64_t n = t->unique, r50 = (n * 50 + 99) / 100, r99 = (n * 99 + 99) / 100;
		int64_t *owd = t->owd;
		double sum = 0;

		for (uint64_t i = 0; i < n; i++)
			sum += owd[i];
		qsort(owd, n, sizeof(*owd), cmp_i64);
		/* nearest rank: the smallest value with >= p % at or below it */
		print_float(PRINT_JSON, "owd_min_us", NULL, owd[0] / 1e3);
		print_float(PRINT_JSON, "owd_mean_us", NULL, sum / n / 1e3);
		print_float(PRINT_JSON, "owd_p50_us", NULL, owd[r50 ? r50 - 1 : 0] / 1e3);
		print_float(PRINT_JSON, "owd_p99_us", NULL, owd[r99 ? r99 - 1 : 0] / 1e3);
		print_float(PRINT_JSON, "owd_max_us", NULL, owd[n - 1] / 1e3);
	}
	close_json_object();
	print_end();
}

static int do_recv(const struct probe_opts *o)
{
	struct rx_tally t = {
		.owd = malloc(o->count * sizeof(*t.owd)),
		.seen = calloc(o->count, 1),
	};
	int fd = t.owd && t.seen ? rx_socket(o) : -1;
	FILE *f;

	if (fd < 0)
		return 1;
	rx_loop(fd, o, &t);
	close(fd);
	f = o->out ? fopen(o->out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "dlprobe: %s: %s\n", o->out, strerror(errno));
		return 1;
	}
	rx_report(f, &t);
	if (o->out)
		fclose(f);
	free(t.owd);
	free(t.seen);
	return t.unique ? 0 : 1;
}

/* ---- commands ------------------------------------------------------------- */
static const struct probe_cmd {
	const char *name, *synopsis;
	int (*run)(const struct probe_opts *o);
	const struct sc_option *options;
	struct probe_opts defaults;
} probe_cmds[] = {
	{ "send", "send --dst IPV4 --port P [--count N] [--pps R] [--size B] [--tos T]",
	  do_send, send_options, { .count = 1000, .pps = 1000, .size = 64 } },
	{ "recv", "recv --port P [--count N] [--idle-ms MS] [--timeout-s S]\n"
		  "                    [--ready FILE] [--out FILE] [--read-time]",
	  do_recv, recv_options,
	  { .count = MAX_COUNT, .idle_ns = 1000 * 1000000ULL, .timeout_ns = 60 * NSEC } },
};
#define N_CMDS (sizeof(probe_cmds) / sizeof(probe_cmds[0]))

static int run_cmd(const struct probe_cmd *c, int argc, char **argv)
{
	struct probe_opts o = c->defaults;
	int rc = sc_options_parse(c->options, c->name, argc, argv, &o, false, NULL);

	if (rc == 1)
		sc_usage(stdout, c->synopsis, c->options, &c->defaults, NULL);
	if (rc)
		return rc == 1 ? 0 : rc;
	return c->run(&o);
}

int main(int argc, char **argv)
{
	fs_log_init("dlprobe", FS_LOG_INFO);
	for (size_t i = 0; i < N_CMDS && argc >= 2; i++)
		if (!strcmp(argv[1], probe_cmds[i].name))
			return run_cmd(&probe_cmds[i], argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		for (size_t i = 0; i < N_CMDS; i++)
			printf("%s dlprobe %s\n", i ? "      " : "Usage:", probe_cmds[i].synopsis);
		printf("dlprobe COMMAND -h: the options of a command\n");
		return 0;
	}
	return sc_print_usage_error(NULL, "invalid command '%s': accepted: send, recv (see --help)",
				    argc >= 2 ? argv[1] : "");
}
