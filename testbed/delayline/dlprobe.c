// SPDX-License-Identifier: GPL-2.0
/*
 * dlprobe - a paced, numbered UDP stream and its receiver, to measure what a
 * path does to packets: one-way delay, loss, reordering, duplicates.
 *
 *   dlprobe send --dst IPV4 --port P [--count N] [--pps R] [--size B] [--tos T]
 *   dlprobe recv --port P [--count N] [--idle-ms MS] [--timeout-s S]
 *                [--ready FILE] [--out FILE]
 *
 * Each datagram carries a magic, its sequence number and its send time
 * (CLOCK_MONOTONIC, ns). Sender and receiver must share that clock, i.e. run
 * on one machine (any network namespaces). The receiver takes each datagram's
 * arrival time from the kernel's receive stamp (SO_TIMESTAMPNS, moved from
 * CLOCK_REALTIME to CLOCK_MONOTONIC), so its own wake-up latency does not
 * count; without a stamp, or with one more than 1 ms before the read, the
 * read time (--read-time: always).
 *
 * recv ends after --count datagrams, after --idle-ms (default 1000) without
 * one once the first has come, or after --timeout-s (default 60); it writes
 * one JSON object: received, unique, lost (highest sequence + 1 - unique),
 * reordered (datagrams with a lower sequence number than one already seen,
 * RFC 4737), duplicates, late_reads (datagrams timed by the read, the stamp
 * being over 1 ms old) and the one-way delay min/mean/p50/p99/max in µs.
 * send prints sent, errors and send_stall_max_us (worst time between a
 * datagram's stamp and its send() returning: a preempted sender).
 * Exit: 0 done, 1 runtime error (or nothing received), 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
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

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NSEC + ts.tv_nsec;
}

static int usage_error(const char *what, const char *val, const char *accepted)
{
	fprintf(stderr, "dlprobe: %s '%s': accepted: %s\n", what, val, accepted);
	return 2;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;

	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out < lo || *out > hi ? -1 : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int do_send(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dst", required_argument, NULL, 'd' }, { "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' }, { "pps", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' }, { "tos", required_argument, NULL, 't' },
		{ 0 }
	};
	uint64_t port = 0, count = 1000, pps = 1000, size = 64, tos = 0;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	const char *dst_s = NULL;
	unsigned char buf[65536] = { 0 };
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			dst_s = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, 1, 65535, &port))
				return usage_error("--port", optarg, "1..65535");
			break;
		case 'n':
			if (parse_u64(optarg, 1, MAX_COUNT, &count))
				return usage_error("--count", optarg, "1..10000000");
			break;
		case 'r':
			if (parse_u64(optarg, 1, 1000000, &pps))
				return usage_error("--pps", optarg, "1..1000000");
			break;
		case 's':
			if (parse_u64(optarg, sizeof(struct probe_hdr), 65000, &size))
				return usage_error("--size", optarg, "24..65000 bytes of UDP payload");
			break;
		case 't':
			if (parse_u64(optarg, 0, 255, &tos))
				return usage_error("--tos", optarg, "0..255");
			break;
		default:
			return usage_error("option", argv[optind - 1], "--dst --port --count --pps --size --tos");
		}
	}
	if (!dst_s || inet_pton(AF_INET, dst_s, &dst.sin_addr) != 1)
		return usage_error("--dst", dst_s ? dst_s : "", "an IPv4 address");
	if (!port)
		return usage_error("--port", "", "1..65535 (required)");
	dst.sin_port = htons(port);

	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), t = (int)tos;
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_TOS, &t, sizeof(t)) ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		fprintf(stderr, "dlprobe: send to %s:%" PRIu64 ": %s\n", dst_s, port, strerror(errno));
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	struct probe_hdr *h = (struct probe_hdr *)buf;
	int64_t start = mono_ns() + 1000000, gap = NSEC / (int64_t)pps;
	uint64_t sent = 0, errors = 0;
	int64_t stall_max = 0;	/* worst time from the send stamp to send() returning */

	h->magic = MAGIC;
	for (uint64_t i = 0; i < count; i++) {
		int64_t at = start + (int64_t)i * gap;
		struct timespec ts = { .tv_sec = at / NSEC, .tv_nsec = at % NSEC };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		h->seq = i;
		h->sent_ns = mono_ns();
		if (send(fd, buf, size, 0) == (ssize_t)size)
			sent++;
		else
			errors++;
		if (mono_ns() - h->sent_ns > stall_max)
			stall_max = mono_ns() - h->sent_ns;
	}
	/* send_stall_max_us: a sender held off its CPU between stamping and
	 * sending makes the path look slower by that much */
	print_begin(stdout, true);
	open_json_object(NULL);
	print_uint(PRINT_JSON, "sent", NULL, sent);
	print_uint(PRINT_JSON, "send_errors", NULL, errors);
	print_uint(PRINT_JSON, "pps", NULL, pps);
	print_uint(PRINT_JSON, "size", NULL, size);
	print_float(PRINT_JSON, "duration_s", NULL, (mono_ns() - start) / 1e9);
	print_float(PRINT_JSON, "send_stall_max_us", NULL, stall_max / 1e3);
	close_json_object();
	print_end();
	return 0;
}

static int do_recv(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' }, { "count", required_argument, NULL, 'n' },
		{ "idle-ms", required_argument, NULL, 'i' }, { "timeout-s", required_argument, NULL, 'T' },
		{ "ready", required_argument, NULL, 'R' }, { "out", required_argument, NULL, 'o' },
		{ "read-time", no_argument, NULL, 'r' },
		{ 0 }
	};
	int read_time = 0;
	uint64_t port = 0, count = MAX_COUNT, idle_ms = 1000, timeout_s = 60;
	const char *ready = NULL, *out = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, 1, 65535, &port))
				return usage_error("--port", optarg, "1..65535");
			break;
		case 'n':
			if (parse_u64(optarg, 1, MAX_COUNT, &count))
				return usage_error("--count", optarg, "1..10000000");
			break;
		case 'i':
			if (parse_u64(optarg, 1, 3600000, &idle_ms))
				return usage_error("--idle-ms", optarg, "1..3600000");
			break;
		case 'T':
			if (parse_u64(optarg, 1, 86400, &timeout_s))
				return usage_error("--timeout-s", optarg, "1..86400");
			break;
		case 'R':
			ready = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			read_time = 1;
			break;
		default:
			return usage_error("option", argv[optind - 1],
					   "--port --count --idle-ms --timeout-s --ready --out --read-time");
		}
	}
	if (!port)
		return usage_error("--port", "", "1..65535 (required)");

	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), buf = 8 << 20;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "dlprobe: bind port %" PRIu64 ": %s\n", port, strerror(errno));
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	int one = 1;
	if (!read_time)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	struct timeval tv = { .tv_usec = 10000 };	/* wake every 10 ms to check the deadlines */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fclose(f)) {
			fprintf(stderr, "dlprobe: %s: %s\n", ready, strerror(errno));
			return 1;
		}
	}

	int64_t *owd = malloc(count * sizeof(*owd));
	uint8_t *seen = calloc(count, 1);
	uint64_t received = 0, unique = 0, reordered = 0, dups = 0, foreign = 0, max_seq = 0;
	uint64_t late_reads = 0;	/* datagrams read > 1 ms after the kernel stamp */
	int64_t deadline = mono_ns() + (int64_t)timeout_s * NSEC, last = 0;
	static unsigned char bufs[BATCH][2048];
	static unsigned char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];

	if (!owd || !seen)
		return 1;
	while (received < count) {
		int64_t now = mono_ns();

		if (now > deadline || (last && now - last > (int64_t)idle_ms * 1000000))
			break;
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		struct timespec rt;

		now = mono_ns();
		clock_gettime(CLOCK_REALTIME, &rt);
		int64_t real_off = (int64_t)rt.tv_sec * NSEC + rt.tv_nsec - now;
		for (int i = 0; i < n; i++) {
			struct probe_hdr *h = (struct probe_hdr *)bufs[i];

			if (msgs[i].msg_len < sizeof(*h) || h->magic != MAGIC || h->seq >= count) {
				foreign++;
				continue;
			}
			received++;
			last = now;
			if (seen[h->seq]) {
				dups++;
				continue;
			}
			seen[h->seq] = 1;
			if (unique && h->seq < max_seq)
				reordered++;
			if (!unique || h->seq > max_seq)
				max_seq = h->seq;
			int64_t at = now;
			int stamped = 0;
			struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr);

			for (; c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
					struct timespec ts;
					int64_t t;

					memcpy(&ts, CMSG_DATA(c), sizeof(ts));
					t = (int64_t)ts.tv_sec * NSEC + ts.tv_nsec - real_off;
					/* as delayline: a stamp more than 1 ms
					 * before the read is not trusted */
					if (t <= now && t >= h->sent_ns && now - t <= 1000000)
						at = t;
					stamped = 1;
				}
			if (stamped && at == now)
				late_reads++;
			owd[unique++] = at - h->sent_ns;
		}
	}
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "dlprobe: %s: %s\n", out, strerror(errno));
		return 1;
	}
	print_begin(f, true);
	open_json_object(NULL);
	print_uint(PRINT_JSON, "received", NULL, received);
	print_uint(PRINT_JSON, "unique", NULL, unique);
	print_uint(PRINT_JSON, "lost", NULL, unique ? max_seq + 1 - unique : 0);
	print_uint(PRINT_JSON, "reordered", NULL, reordered);
	print_uint(PRINT_JSON, "duplicates", NULL, dups);
	print_uint(PRINT_JSON, "foreign", NULL, foreign);
	print_uint(PRINT_JSON, "late_reads", NULL, late_reads);
	if (unique) {
		double sum = 0;

		for (uint64_t i = 0; i < unique; i++)
			sum += owd[i];
		qsort(owd, unique, sizeof(*owd), cmp_i64);
		/* nearest rank: the smallest value with >= p % at or below it */
		uint64_t r50 = (unique * 50 + 99) / 100, r99 = (unique * 99 + 99) / 100;
		print_float(PRINT_JSON, "owd_min_us", NULL, owd[0] / 1e3);
		print_float(PRINT_JSON, "owd_mean_us", NULL, sum / unique / 1e3);
		print_float(PRINT_JSON, "owd_p50_us", NULL, owd[r50 ? r50 - 1 : 0] / 1e3);
		print_float(PRINT_JSON, "owd_p99_us", NULL, owd[r99 ? r99 - 1 : 0] / 1e3);
		print_float(PRINT_JSON, "owd_max_us", NULL, owd[unique - 1] / 1e3);
	}
	close_json_object();
	print_end();
	if (out)
		fclose(f);
	return unique ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("Usage: dlprobe send --dst IPV4 --port P [--count N] [--pps R] [--size B] [--tos T]\n"
		     "       dlprobe recv --port P [--count N] [--idle-ms MS] [--timeout-s S]\n"
		     "                    [--ready FILE] [--out FILE]");
		return 0;
	}
	fprintf(stderr, "dlprobe: '%s': accepted: send, recv (see --help)\n", argc >= 2 ? argv[1] : "");
	return 2;
}
