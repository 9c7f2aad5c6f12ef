// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen - HTTP/1.1 workload generator for the flowsplit testbed.
 *
 * Requests arrive as a Poisson process (exponential inter-arrival times at
 * --rate per second) with kinds and sizes drawn from a mix: the paper's
 * file-hosting mix (folder listing, video, upload), the WebSearch flow-size
 * CDF (testbed/data/websearch.cdf) or any CDF file. The whole schedule is
 * computed up front from --seed with our own PRNG (splitmix64), so a seed
 * gives the same requests on every machine. One TCP connection per request
 * (one thread each, started at its arrival time); downloads are GETs of a
 * byte range of one large file, uploads are PUTs whose body nginx discards.
 * One CSV row per request: id,kind,method,bytes,local_addr,local_port,
 * start_ns,end_ns,fct_us,status (CLOCK_MONOTONIC; status = HTTP status, or
 * 0 when the request failed).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSS_BYTES 1448		/* TCP payload per packet (1500 MTU, timestamps) */
#define MAX_CDF 256
#define MAX_REQUESTS 1000000
#define IO_CHUNK 65536

enum kind { K_LISTING, K_VIDEO, K_UPLOAD, K_WEB };
static const char *const kind_names[] = { "listing", "video", "upload", "websearch" };

struct request {
	double at_s;		/* arrival, seconds after start */
	enum kind kind;
	int put;		/* upload */
	uint64_t bytes;
	/* results */
	char laddr[INET6_ADDRSTRLEN];
	int lport;
	uint64_t start_ns, end_ns;
	int status;
};

static struct {
	const char *server;
	int port;
	const char *mix;
	double rate, duration, scale;
	long requests;
	uint64_t seed;
	const char *cc;
	const char *log;
	int print_schedule;
} opt = { .port = 80, .mix = "filehosting", .scale = 1, .seed = 1, .cc = "cubic" };

static struct sockaddr_storage server_sa;
static socklen_t server_len;

/* ---- deterministic randomness ------------------------------------------- */
static uint64_t rng_state;

static uint64_t splitmix64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static double uniform(void)
{
	return ((splitmix64() >> 11) + 0.5) / 9007199254740992.0;
}

/* ---- mixes ---------------------------------------------------------------- */
/*
 * File-hosting mix of the paper (NextCloud): folder listing ~5 packets,
 * video ~60 000 packets (download), upload ~100 000 packets. The paper gives
 * no proportions; we use 90 % listings, 6 % video, 4 % upload: mostly short
 * interactive requests with enough bulk transfers to load the WAN.
 */
static const struct {
	enum kind kind;
	int put;
	double packets, weight;
} filehosting[] = {
	{ K_LISTING, 0, 5, 0.90 },
	{ K_VIDEO, 0, 60000, 0.06 },
	{ K_UPLOAD, 1, 100000, 0.04 },
};

static double cdf_x[MAX_CDF], cdf_p[MAX_CDF];
static int cdf_n;

static int load_cdf(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "flowgen: --mix: cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		double x, p;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%lf %lf", &x, &p) != 2 || x < 0 || p < 0 || p > 1 ||
		    (cdf_n && (x < cdf_x[cdf_n - 1] || p < cdf_p[cdf_n - 1])) || cdf_n == MAX_CDF) {
			fprintf(stderr, "flowgen: %s: bad line '%.40s': expected 'BYTES PROBABILITY', both non-decreasing\n",
				path, line);
			fclose(f);
			return -1;
		}
		cdf_x[cdf_n] = x;
		cdf_p[cdf_n++] = p;
	}
	fclose(f);
	if (cdf_n < 2 || cdf_p[cdf_n - 1] != 1.0) {
		fprintf(stderr, "flowgen: %s: a CDF needs at least 2 points and must end at probability 1\n", path);
		return -1;
	}
	return 0;
}

/* inverse transform sampling with linear interpolation */
static uint64_t sample_cdf(void)
{
	double u = uniform();
	int i;

	for (i = 1; i < cdf_n; i++)
		if (u <= cdf_p[i]) {
			double span = cdf_p[i] - cdf_p[i - 1];
			double x = cdf_x[i - 1] + (span > 0 ? (u - cdf_p[i - 1]) / span : 1) *
						  (cdf_x[i] - cdf_x[i - 1]);
			return x < 1 ? 1 : (uint64_t)x;
		}
	return (uint64_t)cdf_x[cdf_n - 1];
}

static void draw(struct request *r)
{
	if (cdf_n) {
		r->kind = K_WEB;
		r->put = 0;
		r->bytes = sample_cdf() * opt.scale;
	} else {
		double u = uniform(), acc = 0;
		size_t i;

		for (i = 0; i < sizeof(filehosting) / sizeof(filehosting[0]); i++) {
			acc += filehosting[i].weight;
			if (u <= acc || i == sizeof(filehosting) / sizeof(filehosting[0]) - 1)
				break;
		}
		r->kind = filehosting[i].kind;
		r->put = filehosting[i].put;
		/* listings are never scaled: they are the short flows we measure */
		r->bytes = filehosting[i].packets * MSS_BYTES *
			   (r->kind == K_LISTING ? 1 : opt.scale);
	}
	if (r->bytes < 1)
		r->bytes = 1;
}

/* ---- one request -------------------------------------------------------- */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/* Read the response: status, then Content-Length bytes of body (or to EOF). */
static int read_response(int fd, uint64_t *body)
{
	static __thread char buf[IO_CHUNK + 1];
	size_t have = 0;
	ssize_t n;
	char *eoh, *cl;
	int status = 0;
	long long len = -1;
	uint64_t got;

	for (;;) {
		n = read(fd, buf + have, IO_CHUNK - have);
		if (n <= 0)
			return -1;
		have += n;
		buf[have] = '\0';
		eoh = strstr(buf, "\r\n\r\n");
		if (eoh)
			break;
		if (have == IO_CHUNK)
			return -1;
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	cl = strcasestr(buf, "\r\nContent-Length:");
	if (cl && cl < eoh)
		len = atoll(cl + 17);
	got = have - (eoh + 4 - buf);
	while (len < 0 || got < (uint64_t)len) {
		n = read(fd, buf, IO_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += n;
	}
	if (len >= 0 && got != (uint64_t)len)
		return -1;
	*body = got;
	return status;
}

static void *run_request(void *arg)
{
	static const char zeros[IO_CHUNK];
	struct request *r = arg;
	struct sockaddr_storage la;
	socklen_t ll = sizeof(la);
	char hdr[512];
	uint64_t body = 0, left;
	int fd, len, status;

	r->start_ns = now_ns();
	fd = socket(server_sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		goto fail;
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, opt.cc, strlen(opt.cc)))
		goto fail;
	if (connect(fd, (struct sockaddr *)&server_sa, server_len))
		goto fail;
	if (!getsockname(fd, (struct sockaddr *)&la, &ll)) {
		if (la.ss_family == AF_INET) {
			struct sockaddr_in *s = (void *)&la;

			inet_ntop(AF_INET, &s->sin_addr, r->laddr, sizeof(r->laddr));
			r->lport = ntohs(s->sin_port);
		} else {
			struct sockaddr_in6 *s = (void *)&la;

			inet_ntop(AF_INET6, &s->sin6_addr, r->laddr, sizeof(r->laddr));
			r->lport = ntohs(s->sin6_port);
		}
	}
	if (r->put)
		len = snprintf(hdr, sizeof(hdr), "PUT /upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %llu\r\nConnection: close\r\n\r\n",
			       opt.server, (unsigned long long)r->bytes);
	else
		len = snprintf(hdr, sizeof(hdr), "GET /data HTTP/1.1\r\nHost: %s\r\nRange: bytes=0-%llu\r\nConnection: close\r\n\r\n",
			       opt.server, (unsigned long long)r->bytes - 1);
	if (write_all(fd, hdr, len))
		goto fail;
	for (left = r->put ? r->bytes : 0; left;) {
		size_t n = left < IO_CHUNK ? left : IO_CHUNK;

		if (write_all(fd, zeros, n))
			goto fail;
		left -= n;
	}
	status = read_response(fd, &body);
	if (status < 0 || (!r->put && body != r->bytes))
		goto fail;
	r->status = status;
	r->end_ns = now_ns();
	close(fd);
	return NULL;
fail:
	r->status = 0;
	r->end_ns = now_ns();
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- main ------------------------------------------------------------------ */
static int usage_error(const char *fmt, const char *val)
{
	fprintf(stderr, "flowgen: ");
	fprintf(stderr, fmt, val);
	fprintf(stderr, " (see flowgen --help)\n");
	return 2;
}

static void usage(void)
{
	printf("Usage: flowgen --server ADDR [--port P] [--mix filehosting|websearch|CDF-FILE]\n"
	       "               --rate R (--duration S | --requests N) [--seed N] [--scale F]\n"
	       "               [--cc ALGO] --log FILE | --print-schedule\n"
	       "  --rate R          mean requests per second (Poisson arrivals)\n"
	       "  --scale F         multiply the sizes of long kinds (video, upload, CDF) by F\n"
	       "  --print-schedule  print the request schedule and exit (no traffic)\n");
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return *end || end == s || !(*out >= min && *out <= max) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", required_argument, NULL, 's' }, { "port", required_argument, NULL, 'p' },
		{ "mix", required_argument, NULL, 'm' }, { "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' }, { "requests", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' }, { "scale", required_argument, NULL, 'x' },
		{ "cc", required_argument, NULL, 'c' }, { "log", required_argument, NULL, 'l' },
		{ "print-schedule", no_argument, NULL, 'P' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct request *req;
	pthread_t *th;
	double v, t = 0;
	long i, n = 0, failed = 0;
	uint64_t t0;
	char *end;
	FILE *logf;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.server = optarg; break;
		case 'p':
			if (parse_double(optarg, 1, 65535, &v))
				return usage_error("--port: invalid value '%s': accepted: 1..65535", optarg);
			opt.port = v;
			break;
		case 'm': opt.mix = optarg; break;
		case 'r':
			if (parse_double(optarg, 0.001, 10000, &opt.rate))
				return usage_error("--rate: invalid value '%s': accepted: 0.001..10000 requests/s", optarg);
			break;
		case 'd':
			if (parse_double(optarg, 0.001, 86400, &opt.duration))
				return usage_error("--duration: invalid value '%s': accepted: 0.001..86400 s", optarg);
			break;
		case 'n':
			opt.requests = strtol(optarg, &end, 10);
			if (*end || end == optarg || opt.requests < 1 || opt.requests > MAX_REQUESTS)
				return usage_error("--requests: invalid value '%s': accepted: 1..1000000", optarg);
			break;
		case 'S':
			opt.seed = strtoull(optarg, &end, 10);
			if (*end || end == optarg)
				return usage_error("--seed: invalid value '%s': accepted: an unsigned integer", optarg);
			break;
		case 'x':
			if (parse_double(optarg, 1e-6, 1000, &opt.scale))
				return usage_error("--scale: invalid value '%s': accepted: 0.000001..1000", optarg);
			break;
		case 'c': opt.cc = optarg; break;
		case 'l': opt.log = optarg; break;
		case 'P': opt.print_schedule = 1; break;
		case 'h': usage(); return 0;
		default:
			return usage_error("unknown option or missing value in '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.rate)
		return usage_error("--rate is required%s", "");
	if (!opt.duration == !opt.requests)
		return usage_error("give exactly one of --duration and --requests%s", "");
	if (!opt.print_schedule && (!opt.server || !opt.log))
		return usage_error("--server and --log are required%s", "");
	if (strcmp(opt.mix, "filehosting")) {
		if (load_cdf(strcmp(opt.mix, "websearch") ? opt.mix : FLOWGEN_DATADIR "/websearch.cdf"))
			return 2;
	}
	if (opt.server) {
		struct sockaddr_in *s4 = (void *)&server_sa;
		struct sockaddr_in6 *s6 = (void *)&server_sa;

		if (inet_pton(AF_INET, opt.server, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			s4->sin_port = htons(opt.port);
			server_len = sizeof(*s4);
		} else if (inet_pton(AF_INET6, opt.server, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(opt.port);
			server_len = sizeof(*s6);
		} else {
			return usage_error("--server: invalid address '%s': accepted: an IPv4 or IPv6 address", opt.server);
		}
	}

	/* the schedule, entirely from the seed */
	rng_state = opt.seed;
	req = calloc(opt.requests ? opt.requests : MAX_REQUESTS, sizeof(*req));
	if (!req)
		return 1;
	for (;;) {
		t += -log(uniform()) / opt.rate;
		if ((opt.duration && t > opt.duration) || (opt.requests && n == opt.requests) ||
		    n == MAX_REQUESTS)
			break;
		req[n].at_s = t;
		draw(&req[n]);
		n++;
	}
	if (opt.print_schedule) {
		printf("id,at_s,kind,method,bytes\n");
		for (i = 0; i < n; i++)
			printf("%ld,%.6f,%s,%s,%llu\n", i, req[i].at_s, kind_names[req[i].kind],
			       req[i].put ? "PUT" : "GET", (unsigned long long)req[i].bytes);
		return 0;
	}
	logf = fopen(opt.log, "w");
	if (!logf) {
		fprintf(stderr, "flowgen: --log: cannot write '%s': %s\n", opt.log, strerror(errno));
		return 1;
	}
	th = calloc(n, sizeof(*th));
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		uint64_t due = t0 + (uint64_t)(req[i].at_s * 1e9), now = now_ns();
		pthread_attr_t a;

		if (due > now) {
			struct timespec d = { (due - now) / 1000000000ULL, (due - now) % 1000000000ULL };

			nanosleep(&d, NULL);
		}
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 256 * 1024);
		if (pthread_create(&th[i], &a, run_request, &req[i])) {
			fprintf(stderr, "flowgen: cannot start request %ld: %s\n", i, strerror(errno));
			return 1;
		}
		pthread_attr_destroy(&a);
	}
	fprintf(logf, "id,kind,method,bytes,local_addr,local_port,start_ns,end_ns,fct_us,status\n");
	for (i = 0; i < n; i++) {
		struct request *r = &req[i];

		pthread_join(th[i], NULL);
		failed += r->status == 0;
		fprintf(logf, "%ld,%s,%s,%llu,%s,%d,%llu,%llu,%.1f,%d\n", i, kind_names[r->kind],
			r->put ? "PUT" : "GET", (unsigned long long)r->bytes, r->laddr, r->lport,
			(unsigned long long)r->start_ns, (unsigned long long)r->end_ns,
			(r->end_ns - r->start_ns) / 1e3, r->status);
	}
	fclose(logf);
	if (failed)
		fprintf(stderr, "flowgen: %ld of %ld requests failed (status 0 in %s)\n", failed, n, opt.log);
	return failed ? 1 : 0;
}
