// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen - HTTP/1.1 workload generator for the flowsplit testbed.
 *
 * Requests arrive as a Poisson process (exponential inter-arrival times at
 * --rate per second) with kinds and sizes drawn from a mix: the paper's
 * file-hosting mix (folder listing, video, upload), the WebSearch flow-size
 * CDF (testbed/data/websearch.cdf) or any CDF file. The whole schedule is
 * computed up front from --seed with our own PRNG (splitmix64), so a seed
 * gives the same requests on every machine.
 *
 * One thread drives every request with non-blocking sockets and epoll;
 * arrivals are timed by an absolute CLOCK_MONOTONIC timerfd. One TCP
 * connection per request unless --keepalive. Downloads are GETs of a byte
 * range of nginx's one large file, uploads are PUTs whose body nginx reads
 * and discards. One CSV row per request (README.md: "Log format").
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "params.h"
#include "util.h"

#define MSS_BYTES 1448		/* TCP payload per packet: 1500 MTU, timestamps */
#define MAX_CDF 256		/* points in a CDF file */
#define MAX_REQUESTS 1000000	/* schedule length limit (memory: ~100 B each) */
#define HDR_MAX 4096		/* response header limit; nginx sends ~250 B */
#define IO_CHUNK 65536		/* bytes per send()/recv() of a body */
#define TIMEOUT_CHECK_NS 100000000ULL	/* request timeouts checked every 100 ms */
#define LATE_WARN_NS 10000000ULL	/* a start this late hints at an overloaded client */
#define NSEC 1000000000ULL

enum kind { K_LISTING, K_VIDEO, K_UPLOAD, K_WEB };
static const char *const kind_names[] = { "listing", "video", "upload", "websearch" };

/* why a request failed: the log's "error" column (empty = success) */
enum err { E_NONE, E_CONNECT, E_SEND, E_RECV, E_CLOSED, E_HTTP, E_STATUS,
	   E_LENGTH, E_TIMEOUT, E_INTERRUPTED };
static const char *const err_names[] = { "", "connect", "send", "recv", "closed", "http",
					 "status", "length", "timeout", "interrupted" };

struct request {
	double at_s;		/* scheduled arrival, seconds after time zero */
	enum kind kind;
	int put;		/* upload (PUT) rather than download (GET) */
	uint64_t bytes;		/* body bytes requested (GET) or sent (PUT) */
	/* results */
	char laddr[INET6_ADDRSTRLEN];
	int lport;
	uint64_t start_ns, end_ns;
	int status;		/* HTTP status, 0 = no valid response */
	enum err err;
	int done;
};

enum conn_state { C_CONNECTING, C_SENDING, C_RECEIVING, C_IDLE };

struct conn {
	int fd;
	enum conn_state state;
	struct request *req;	/* NULL when idle */
	int reused;		/* served a request before this one */
	int active_idx;		/* index in active[] while it carries a request */
	struct conn *next_idle;
	char laddr[INET6_ADDRSTRLEN];
	int lport;
	/* sending: the request header, then (PUT) the body */
	char out[512];
	size_t out_len, out_off;
	uint64_t body_left;
	/* receiving */
	char in[HDR_MAX + 1];
	size_t in_len;
	int have_hdr, server_close;
	int64_t clen;		/* Content-Length, -1 = read to EOF */
	uint64_t body_got;
	uint64_t rx_bytes;	/* anything received for this request */
};

/* the command line (flowgen_options, by main()) */
struct flowgen_opts {
	__u32 given;		/* params.h: first member */
	struct sc_prefix server;
	uint32_t port;
	const char *mix;
	double rate, scale;
	uint64_t duration_ns, timeout_ns;
	uint64_t requests, max_inflight;
	uint64_t seed;
	const char *cc;
	const char *log;
	bool keepalive, print_schedule;
};
static const struct flowgen_opts flowgen_defaults = {
	.port = 80, .mix = "filehosting", .scale = 1, .seed = 1, .cc = "cubic",
	.timeout_ns = 300 * NSEC, .max_inflight = 4096,
};
static struct flowgen_opts opt;
static char server_host[INET6_ADDRSTRLEN];	/* the Host header */

static struct sockaddr_storage server_sa;
static socklen_t server_len;
static int epfd;
static struct conn **active;	/* connections carrying a request */
static long n_active;
static struct conn *idle;	/* --keepalive: idle connections, LIFO */
static const char zeros[IO_CHUNK];
static char scratch[IO_CHUNK];	/* discarded response bodies */

/* ---- deterministic randomness ------------------------------------------- */
static uint64_t rng_state;

static uint64_t splitmix64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in (0, 1): the top 53 bits, never 0 (log(0)) nor 1 */
static double uniform(void)
{
	return ((splitmix64() >> 11) + 0.5) / 9007199254740992.0;
}

/* ---- mixes ---------------------------------------------------------------- */
/*
 * File-hosting mix of the paper (§III-A, NextCloud): folder listing ~5
 * packets, video ~60 000 packets (download), upload ~100 000 packets. The
 * paper gives no proportions; we use 90 % listings, 6 % video, 4 % upload:
 * mostly short interactive requests with enough bulk transfers to keep long
 * flows on the WAN most of the time (README.md).
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
#define N_FILEHOSTING (sizeof(filehosting) / sizeof(filehosting[0]))

static double cdf_x[MAX_CDF], cdf_p[MAX_CDF];
static int cdf_n;

static int load_cdf(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (!f) {
		fprintf(stderr,
			"flowgen: --mix: cannot read '%s': %s (accepted: filehosting, websearch or "
			"a CDF file)\n",
			path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		double x, p;
		char extra;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[strspn(line, " \t")] == '#' || !line[strspn(line, " \t")])
			continue;
		if (sscanf(line, "%lf %lf %c", &x, &p, &extra) != 2 || !(x >= 0) || !(p >= 0) ||
		    !(p <= 1) || (cdf_n && (x < cdf_x[cdf_n - 1] || p < cdf_p[cdf_n - 1])) ||
		    cdf_n == MAX_CDF) {
			fprintf(stderr,
				"flowgen: --mix: %s:%d: bad line '%.40s': expected 'BYTES "
				"PROBABILITY', both non-decreasing, probability 0..1, at most %d "
				"points\n",
				path, lineno, line, MAX_CDF);
			fclose(f);
			return -1;
		}
		cdf_x[cdf_n] = x;
		cdf_p[cdf_n++] = p;
	}
	fclose(f);
	if (cdf_n < 2 || cdf_p[cdf_n - 1] != 1.0) {
		fprintf(stderr,
			"flowgen: --mix: %s: a CDF needs at least 2 points and must end at "
			"probability 1\n",
			path);
		return -1;
	}
	return 0;
}

/* inverse transform sampling with linear interpolation between points */
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

		for (i = 0; i < N_FILEHOSTING - 1; i++) {
			acc += filehosting[i].weight;
			if (u <= acc)
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

/* The schedule, entirely from the seed: arrivals, then kind and size. */
static struct request *make_schedule(long *count)
{
	struct request *req = NULL;
	long n = 0, cap = 0;
	double t = 0;

	rng_state = opt.seed;
	for (;;) {
		t += -log(uniform()) / opt.rate;
		if ((opt.duration_ns && t * 1e9 > opt.duration_ns) ||
		    (opt.requests && (uint64_t)n == opt.requests))
			break;
		if (n == MAX_REQUESTS) {
			fprintf(stderr,
				"flowgen: --duration %g at --rate %g: more than %d requests (lower "
				"one of them)\n",
				opt.duration_ns / 1e9, opt.rate, MAX_REQUESTS);
			free(req);
			return NULL;
		}
		if (n == cap) {
			struct request *p;

			cap = cap ? 2 * cap : 1024;
			p = realloc(req, cap * sizeof(*req));
			if (!p) {
				fprintf(stderr, "flowgen: out of memory for %ld requests\n", cap);
				free(req);
				return NULL;
			}
			req = p;
		}
		memset(&req[n], 0, sizeof(req[n]));
		req[n].at_s = t;
		draw(&req[n]);
		n++;
	}
	*count = n;
	return req ? req : calloc(1, sizeof(*req));
}

/* ---- connections ---------------------------------------------------------- */
static void active_add(struct conn *c)
{
	c->active_idx = n_active;
	active[n_active++] = c;
}

static void active_del(struct conn *c)
{
	active[c->active_idx] = active[--n_active];
	active[c->active_idx]->active_idx = c->active_idx;
	c->active_idx = -1;
}

static void conn_close(struct conn *c)
{
	close(c->fd);	/* also leaves the epoll set */
	free(c);
}

static int set_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	return epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
}

static void local_name(int fd, char *addr, int *port)
{
	struct sockaddr_storage la;
	socklen_t ll = sizeof(la);

	if (getsockname(fd, (struct sockaddr *)&la, &ll))
		return;
	if (la.ss_family == AF_INET) {
		struct sockaddr_in *s = (void *)&la;

		inet_ntop(AF_INET, &s->sin_addr, addr, INET6_ADDRSTRLEN);
		*port = ntohs(s->sin_port);
	} else {
		struct sockaddr_in6 *s = (void *)&la;

		inet_ntop(AF_INET6, &s->sin6_addr, addr, INET6_ADDRSTRLEN);
		*port = ntohs(s->sin6_port);
	}
}

/* a new non-blocking connection, connect() started; NULL on failure */
static struct conn *conn_open(void)
{
	struct epoll_event e = { .events = EPOLLOUT };
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->active_idx = -1;
	c->fd = socket(server_sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       IPPROTO_TCP);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	if (setsockopt(c->fd, IPPROTO_TCP, TCP_CONGESTION, opt.cc, strlen(opt.cc)) ||
	    (connect(c->fd, (struct sockaddr *)&server_sa, server_len) && errno != EINPROGRESS))
		goto fail;
	/* the local port is bound by connect(), even while it is in progress */
	local_name(c->fd, c->laddr, &c->lport);
	c->state = C_CONNECTING;
	e.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e))
		goto fail;
	return c;
fail:
	close(c->fd);
	free(c);
	return NULL;
}

static void finish(struct conn *c, enum err err);

/* prepare c to carry r: request header and body counters */
static void conn_assign(struct conn *c, struct request *r)
{
	c->req = r;
	memcpy(r->laddr, c->laddr, sizeof(r->laddr));
	r->lport = c->lport;
	if (r->put)
		c->out_len = snprintf(c->out, sizeof(c->out),
				      "PUT /upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %" PRIu64
				      "\r\n%s\r\n",
				      server_host, r->bytes,
				      opt.keepalive ? "" : "Connection: close\r\n");
	else
		c->out_len = snprintf(c->out, sizeof(c->out),
				      "GET /data HTTP/1.1\r\nHost: %s\r\nRange: bytes=0-%" PRIu64
				      "\r\n%s\r\n",
				      server_host, r->bytes - 1,
				      opt.keepalive ? "" : "Connection: close\r\n");
	c->out_off = 0;
	c->body_left = r->put ? r->bytes : 0;
	c->in_len = 0;
	c->have_hdr = 0;
	c->server_close = 0;
	c->clen = -1;
	c->body_got = 0;
	c->rx_bytes = 0;
	active_add(c);
}

/* Each of do_send(), do_recv(), check_complete() returns 1 when the request
 * is over: finish() ran and c may be freed, so the caller must not touch it. */
static int do_send(struct conn *c)
{
	while (c->out_off < c->out_len || c->body_left) {
		const char *p = c->out_off < c->out_len ? c->out + c->out_off : zeros;
		size_t n = c->out_off < c->out_len
				   ? c->out_len - c->out_off
				   : (c->body_left < IO_CHUNK ? c->body_left : IO_CHUNK);
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w <= 0) {
			finish(c, E_SEND);
			return 1;
		}
		if (c->out_off < c->out_len)
			c->out_off += w;
		else
			c->body_left -= w;
	}
	c->state = C_RECEIVING;
	if (set_events(c, EPOLLIN)) {
		finish(c, E_RECV);
		return 1;
	}
	return 0;
}

/* parse the response header in c->in; 0 = ok, -1 = malformed/unsupported */
static int parse_header(struct conn *c, char *eoh)
{
	char *line, *next;
	int status;

	*eoh = '\0';
	if (sscanf(c->in, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100)
		return -1;
	c->req->status = status;
	for (line = strstr(c->in, "\r\n"); line; line = next) {
		line += 2;
		next = strstr(line, "\r\n");
		if (!strncasecmp(line, "Content-Length:", 15)) {
			char *end;
			long long v = strtoll(line + 15, &end, 10);

			if (v < 0 || (*end && *end != '\r' && *end != ' '))
				return -1;
			c->clen = v;
		} else if (!strncasecmp(line, "Transfer-Encoding:", 18)) {
			return -1;	/* chunked: nginx never sends it for these */
		} else if (!strncasecmp(line, "Connection:", 11) && strcasestr(line, "close")) {
			c->server_close = 1;
		}
	}
	/* 1xx, 204 and 304 have no body (RFC 9112 §6.3) */
	if (status < 200 || status == 204 || status == 304)
		c->clen = 0;
	return 0;
}

/* is the response complete? then finish the request */
static int check_complete(struct conn *c)
{
	struct request *r = c->req;

	if (!c->have_hdr || c->clen < 0 || c->body_got < (uint64_t)c->clen)
		return 0;
	if (c->out_off < c->out_len || c->body_left)
		/* nginx answered before reading the whole upload: an error status */
		finish(c, E_STATUS);
	else if (r->status != (r->put ? 204 : 206))
		finish(c, E_STATUS);
	else if (!r->put && c->body_got != r->bytes)
		finish(c, E_LENGTH);
	else
		finish(c, E_NONE);
	return 1;
}

static int do_recv(struct conn *c)
{
	for (;;) {
		ssize_t n;

		if (!c->have_hdr) {
			char *eoh;

			n = recv(c->fd, c->in + c->in_len, HDR_MAX - c->in_len, 0);
			if (n > 0) {
				c->rx_bytes += n;
				c->in_len += n;
				c->in[c->in_len] = '\0';
				eoh = strstr(c->in, "\r\n\r\n");
				if (!eoh) {
					if (c->in_len == HDR_MAX) {
						finish(c, E_HTTP);
						return 1;
					}
					continue;
				}
				c->body_got = c->in_len - (eoh + 4 - c->in);
				if (parse_header(c, eoh)) {
					finish(c, E_HTTP);
					return 1;
				}
				c->have_hdr = 1;
				if (c->clen >= 0 && c->body_got > (uint64_t)c->clen) {
					finish(c, E_HTTP);	/* more than announced */
					return 1;
				}
				if (check_complete(c))
					return 1;
				continue;
			}
		} else {
			/* never read past the body: with --keepalive the next
			 * response follows on the same connection */
			size_t want = IO_CHUNK;

			if (c->clen >= 0 && (uint64_t)c->clen - c->body_got < want)
				want = c->clen - c->body_got;
			/* MSG_TRUNC: TCP discards the bytes without copying them
			 * (tcp(7)); the body is never looked at */
			n = recv(c->fd, scratch, want, MSG_TRUNC);
			if (n > 0) {
				c->rx_bytes += n;
				c->body_got += n;
				if (check_complete(c))
					return 1;
				continue;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0) {
			finish(c, E_RECV);
			return 1;
		}
		/* EOF */
		if (c->have_hdr && c->clen < 0) {
			c->clen = c->body_got;	/* body delimited by close */
			c->server_close = 1;
			return check_complete(c);
		}
		finish(c, c->have_hdr ? E_LENGTH : E_CLOSED);
		return 1;
	}
}

static long finished, failed, late;
static uint64_t late_max;

static void start_request(struct request *r, uint64_t now);

/*
 * The request on c is over (err = why it failed, E_NONE = success). With
 * --keepalive the connection goes back to the idle list when it can carry
 * another request.
 */
static void finish(struct conn *c, enum err err)
{
	struct request *r = c->req;

	active_del(c);
	c->req = NULL;
	/* a reused keep-alive connection the server closed before answering:
	 * retry once on a new connection, as HTTP clients do (RFC 9112 §9.3.1) */
	if (c->reused && !c->rx_bytes && (err == E_CLOSED || err == E_SEND || err == E_RECV)) {
		conn_close(c);
		start_request(r, 0);
		return;
	}
	r->end_ns = mono_ns();
	r->err = err;
	r->done = 1;
	finished++;
	failed += err != E_NONE;
	if (opt.keepalive && err == E_NONE && !c->server_close &&
	    !set_events(c, EPOLLIN | EPOLLRDHUP)) {
		c->state = C_IDLE;
		c->reused = 1;
		c->next_idle = idle;
		idle = c;
		return;
	}
	conn_close(c);
}

/* start r now (now = 0: a retry, keep the original start time) */
static void start_request(struct request *r, uint64_t now)
{
	struct conn *c = NULL;

	if (now)
		r->start_ns = now;
	if (opt.keepalive && idle && now) {
		c = idle;
		idle = c->next_idle;
		conn_assign(c, r);
		c->state = C_SENDING;
		if (set_events(c, EPOLLIN | EPOLLOUT))
			finish(c, E_SEND);
		else
			do_send(c);
		return;
	}
	c = conn_open();
	if (!c) {
		r->end_ns = mono_ns();
		r->err = E_CONNECT;
		r->done = 1;
		finished++;
		failed++;
		return;
	}
	conn_assign(c, r);
}

static void on_event(struct conn *c, uint32_t ev)
{
	if (c->state == C_IDLE) {
		/* an idle connection must stay silent: the server closed it */
		struct conn **p;

		for (p = &idle; *p; p = &(*p)->next_idle)
			if (*p == c) {
				*p = c->next_idle;
				break;
			}
		conn_close(c);
		return;
	}
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			finish(c, E_CONNECT);
			return;
		}
		c->state = C_SENDING;
		if (set_events(c, EPOLLIN | EPOLLOUT)) {
			finish(c, E_SEND);
			return;
		}
		do_send(c);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) && do_recv(c))
		return;
	if (c->state == C_SENDING && (ev & EPOLLOUT))
		do_send(c);
}

/* ---- options --------------------------------------------------------------- */
#define FLOWGEN_OPT(name, type, member, ...) \
	SC_OPTION(name, type, struct flowgen_opts, member, __VA_ARGS__)
static const struct sc_option flowgen_options[] = {
	FLOWGEN_OPT("server", SC_OPT_ADDR, server, .metavar = "ADDR", .noun = "address",
		    .help = "nginx's numeric IPv4/IPv6 address"),
	FLOWGEN_OPT("port", SC_OPT_UINT, port, .metavar = "P", .lo = 1, .hi = 65535,
		    .help = "its port"),
	FLOWGEN_OPT("mix", SC_OPT_STRING, mix, .metavar = "M",
		    .help = "filehosting, websearch, or a CDF file of 'BYTES PROBABILITY' lines"),
	FLOWGEN_OPT("rate", SC_OPT_NUMBER, rate, .metavar = "R", .lo = 0.001, .hi = 10000,
		    .required = true, .help = "mean requests per second, Poisson arrivals"),
	FLOWGEN_OPT("duration", SC_OPT_DURATION, duration_ns, .metavar = "S", .lo = 0.001,
		    .hi = 86400, .help = "requests arriving within S seconds"),
	FLOWGEN_OPT("requests", SC_OPT_UINT, requests, .metavar = "N", .lo = 1,
		    .hi = MAX_REQUESTS, .help = "exactly N requests"),
	FLOWGEN_OPT("seed", SC_OPT_UINT, seed, .metavar = "N", .lo = 0, .hi = UINT64_MAX,
		    .help = "PRNG seed: same seed, same schedule"),
	FLOWGEN_OPT("scale", SC_OPT_NUMBER, scale, .metavar = "F", .lo = 0.000001, .hi = 1000,
		    .help = "multiply video/upload/CDF sizes by F"),
	FLOWGEN_OPT("keepalive", SC_OPT_FLAG, keepalive,
		    .help = "reuse idle connections (default: one connection per request)"),
	FLOWGEN_OPT("cc", SC_OPT_STRING, cc, .metavar = "ALGO",
		    .help = "TCP congestion control of every socket"),
	FLOWGEN_OPT("timeout", SC_OPT_DURATION, timeout_ns, .metavar = "S", .lo = 0,
		    .hi = 86400, .help = "fail a request not complete after S s (0 = never)"),
	FLOWGEN_OPT("max-inflight", SC_OPT_UINT, max_inflight, .metavar = "N", .lo = 1,
		    .hi = MAX_REQUESTS, .help = "at most N requests in progress"),
	FLOWGEN_OPT("log", SC_OPT_PATH, log, .metavar = "FILE", .noun = "path",
		    .help = "per-request CSV ('-' = stdout)"),
	FLOWGEN_OPT("print-schedule", SC_OPT_FLAG, print_schedule,
		    .help = "print the schedule (id,at_s,kind,method,bytes) and exit"),
	SC_OPTIONS_END,
};

static void usage(void)
{
	sc_usage(
		stdout,
		"--server ADDR [--port P] [--mix filehosting|websearch|CDF-FILE]\n"
		"               --rate R (--duration S | --requests N) [--seed N] [--scale F]\n"
		"               [--keepalive] [--cc ALGO] [--timeout S] [--max-inflight N]\n"
		"               --log FILE | --print-schedule",
		flowgen_options, &flowgen_defaults,
		"Exit: 0 all requests succeeded, 1 some failed or runtime error, 2 usage error.\n");
}

/* The server's socket address and Host header from --server and --port. */
static void server_set(void)
{
	struct sockaddr_in *s4 = (void *)&server_sa;
	struct sockaddr_in6 *s6 = (void *)&server_sa;

	inet_ntop(opt.server.family, opt.server.addr, server_host, sizeof(server_host));
	if (opt.server.family == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(opt.port);
		memcpy(&s4->sin_addr, opt.server.addr, 4);
		server_len = sizeof(*s4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(opt.port);
		memcpy(&s6->sin6_addr, opt.server.addr, 16);
		server_len = sizeof(*s6);
	}
}

/* 0 to run, else the exit code (--help: 0, printed) */
static int parse_args(int argc, char **argv)
{
	int rc;

	opt = flowgen_defaults;
	rc = sc_options_parse(flowgen_options, NULL, argc, argv, &opt, false, NULL);
	if (rc == 1) {
		usage();
		exit(0);
	}
	if (rc)
		return rc;
	if (!opt.duration_ns == !opt.requests)
		return sc_print_usage_error(
			NULL, "give exactly one of --duration and --requests (see -h)");
	if (!opt.print_schedule && (!opt.server.family || !opt.log))
		return sc_print_usage_error(
			NULL, "--server and --log are required (or --print-schedule)");
	if (strcmp(opt.mix, "filehosting") &&
	    load_cdf(strcmp(opt.mix, "websearch") ? opt.mix : FLOWGEN_DATADIR "/websearch.cdf"))
		return 2;
	if (opt.server.family)
		server_set();
	return 0;
}

/* the congestion control must be usable here: tell before sending anything */
static int check_cc(void)
{
	int fd = socket(server_sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	char allowed[256] = "?";
	FILE *f;

	if (fd < 0) {
		fprintf(stderr, "flowgen: socket: %s\n", strerror(errno));
		return 1;
	}
	if (!setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, opt.cc, strlen(opt.cc))) {
		close(fd);
		return 0;
	}
	f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");
	if (f) {
		if (fgets(allowed, sizeof(allowed), f))
			allowed[strcspn(allowed, "\n")] = '\0';
		fclose(f);
	}
	fprintf(stderr, "flowgen: --cc: cannot use '%s': %s (available: %s)\n", opt.cc,
		strerror(errno), allowed);
	close(fd);
	return 2;
}

static void write_log(FILE *f, const struct request *req, long n, uint64_t t0)
{
	long i;

	fprintf(f, "id,kind,method,bytes,local_addr,local_port,start_ns,end_ns,fct_us,status,sched_"
		   "ns,error\n");
	for (i = 0; i < n; i++) {
		const struct request *r = &req[i];
		double fct = r->start_ns && r->end_ns ? (r->end_ns - r->start_ns) / 1e3 : 0;

		/* status: the HTTP status of a complete response (the expected
		 * one, or an unexpected one: error "status"), else 0 */
		int status = r->err == E_NONE || r->err == E_STATUS ? r->status : 0;

		fprintf(f,
			"%ld,%s,%s,%" PRIu64 ",%s,%d,%" PRIu64 ",%" PRIu64 ",%.1f,%d,%" PRIu64
			",%s\n",
			i, kind_names[r->kind], r->put ? "PUT" : "GET", r->bytes, r->laddr,
			r->lport, r->start_ns, r->end_ns, fct, status,
			t0 + (uint64_t)llround(r->at_s * 1e9), err_names[r->err]);
	}
}

static void check_timeouts(uint64_t now)
{
	long i;

	for (i = n_active - 1; i >= 0; i--) {
		struct conn *c = active[i];

		/* finish() moves the last entry to i: already checked */
		if (now - c->req->start_ns >= opt.timeout_ns)
			finish(c, E_TIMEOUT);
	}
}

/* ---- the run ---------------------------------------------------------------- */
static char sig_tag, timer_tag;	/* epoll data of the signalfd and the timerfd */

static void print_schedule(const struct request *req, long n)
{
	printf("id,at_s,kind,method,bytes\n");
	for (long i = 0; i < n; i++)
		printf("%ld,%.6f,%s,%s,%" PRIu64 "\n", i, req[i].at_s, kind_names[req[i].kind],
		       req[i].put ? "PUT" : "GET", req[i].bytes);
}

/* descriptors, the active table, epoll with the arrival timer and the stop
 * signals (SIGINT/SIGTERM end the run: the log is still written); 0 or -1
 * (printed) */
static int run_setup(int *tfd, int *sfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct rlimit rl;
	sigset_t sigs;

	/* one descriptor per request in flight */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	active = calloc(opt.max_inflight, sizeof(*active));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	*tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	*sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (!active || epfd < 0 || *tfd < 0 || *sfd < 0) {
		fprintf(stderr, "flowgen: set-up failed: %s\n", strerror(errno));
		return -1;
	}
	ev.data.ptr = &timer_tag;
	if (!epoll_ctl(epfd, EPOLL_CTL_ADD, *tfd, &ev)) {
		ev.data.ptr = &sig_tag;
		if (!epoll_ctl(epfd, EPOLL_CTL_ADD, *sfd, &ev))
			return 0;
	}
	fprintf(stderr, "flowgen: epoll: %s\n", strerror(errno));
	return -1;
}

/* Start every request that is due, as far as --max-inflight allows; the
 * timer is set for the next one. */
static void start_due(struct request *req, long n, long *next, uint64_t t0, int tfd)
{
	uint64_t now = mono_ns();

	while (*next < n && (uint64_t)n_active < opt.max_inflight) {
		uint64_t due = t0 + (uint64_t)llround(req[*next].at_s * 1e9);

		if (due > now) {
			struct itimerspec its = { .it_value = { due / NSEC, due % NSEC } };

			timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
			break;
		}
		if (now - due > LATE_WARN_NS) {
			late++;
			if (now - due > late_max)
				late_max = now - due;
		}
		start_request(&req[(*next)++], now);
		now = mono_ns();
	}
}

/* Until every request finished, or a stop signal: 1 when stopped. */
static int run_loop(struct request *req, long n, uint64_t t0, int tfd)
{
	uint64_t last_check = 0;
	struct epoll_event ev[64];
	long next = 0;
	int stop = 0;

	while (finished < n && !stop) {
		int k, m, wait_ms = -1;
		uint64_t now;

		start_due(req, n, &next, t0, tfd);
		now = mono_ns();
		if (opt.timeout_ns && n_active) {
			if (now - last_check >= TIMEOUT_CHECK_NS) {
				check_timeouts(now);
				last_check = now;
			}
			wait_ms = TIMEOUT_CHECK_NS / 1000000;
		}
		if (finished == n)
			break;
		m = epoll_wait(epfd, ev, 64, wait_ms);
		if (m < 0 && errno != EINTR) {
			fprintf(stderr, "flowgen: epoll_wait: %s\n", strerror(errno));
			break;
		}
		for (k = 0; k < m; k++) {
			if (ev[k].data.ptr == &timer_tag) {
				uint64_t ticks;

				if (read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					stop = 1;
			} else if (ev[k].data.ptr == &sig_tag) {
				stop = 1;
			} else {
				on_event(ev[k].data.ptr, ev[k].events);
			}
		}
	}
	return stop;
}

/* whatever did not complete is interrupted; idle connections close */
static void run_end(struct request *req, long n)
{
	long i;

	for (i = n_active - 1; i >= 0; i--)
		finish(active[i], E_INTERRUPTED);
	for (i = 0; i < n; i++)
		if (!req[i].done) {
			req[i].err = E_INTERRUPTED;
			failed++;
		}
	while (idle) {
		struct conn *c = idle;

		idle = c->next_idle;
		conn_close(c);
	}
}

/* the log and the run's summary on stderr: the exit code */
static int run_report(FILE *logf, const struct request *req, long n, uint64_t t0, int stop)
{
	write_log(logf, req, n, t0);
	if (fflush(logf) || (logf != stdout && fclose(logf))) {
		fprintf(stderr, "flowgen: --log: cannot write '%s': %s\n", opt.log,
			strerror(errno));
		return 1;
	}
	if (late)
		fprintf(stderr,
			"flowgen: %ld of %ld requests started more than %llu ms late (max %.1f "
			"ms): the client could not keep up, or --max-inflight was reached\n",
			late, n, LATE_WARN_NS / 1000000, late_max / 1e6);
	if (stop)
		fprintf(stderr, "flowgen: interrupted after %ld of %ld requests\n", finished, n);
	if (failed)
		fprintf(stderr, "flowgen: %ld of %ld requests failed (error column of %s)\n",
			failed, n, opt.log);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct request *req;
	int rc, tfd, sfd, stop;
	uint64_t t0;
	long n = 0;
	FILE *logf;

	fs_log_init("flowgen", FS_LOG_INFO);
	rc = parse_args(argc, argv);
	if (rc)
		return rc;
	req = make_schedule(&n);
	if (!req)
		return 1;
	if (opt.print_schedule) {
		print_schedule(req, n);
		free(req);
		return 0;
	}
	rc = check_cc();
	if (rc)
		return rc;
	logf = strcmp(opt.log, "-") ? fopen(opt.log, "w") : stdout;
	if (!logf) {
		fprintf(stderr, "flowgen: --log: cannot write '%s': %s\n", opt.log,
			strerror(errno));
		return 1;
	}
	if (run_setup(&tfd, &sfd))
		return 1;
	t0 = mono_ns();
	stop = run_loop(req, n, t0, tfd);
	run_end(req, n);
	return run_report(logf, req, n, t0, stop);
}
