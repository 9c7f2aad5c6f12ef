// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - "splitctl run", the agent systemd starts: applies the config file
 * once, then every interval sweeps idle flows and refreshes the metrics (a
 * textfile for node_exporter, written atomically, and/or GET /metrics on a
 * loopback HTTP listener). SIGTERM/SIGINT end it with exit 0; the datapath
 * stays attached (it never depended on this process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ops.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Render the metrics into a malloc()ed buffer. */
static char *render(const struct sc_opts *o, size_t *len)
{
	struct sc_state st;
	char *buf = NULL;
	FILE *f;
	int err;

	f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	err = sc_state_open(o, &st, 0);
	if (!err) {
		err = sc_metrics_write(f, &st);
		sc_state_close(&st);
	}
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_textfile(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	FILE *f;

	/* node_exporter may read at any time: write aside, then rename */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		sc_err("run: cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		sc_err("run: cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void serve_one(int lfd, const struct sc_opts *o)
{
	char req[1024], hdr[256];
	size_t len = 0;
	ssize_t n;
	char *body;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct timeval tv = { 1, 0 };

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, req, sizeof(req) - 1, 0);
	if (n <= 0)
		goto out;
	req[n] = '\0';
	if (strncmp(req, "GET /metrics ", 13) && strncmp(req, "GET /metrics?", 13)) {
		static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

		send(fd, nf, sizeof(nf) - 1, MSG_NOSIGNAL);
		goto out;
	}
	body = render(o, &len);
	if (!body) {
		static const char se[] = "HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

		send(fd, se, sizeof(se) - 1, MSG_NOSIGNAL);
		goto out;
	}
	n = snprintf(hdr, sizeof(hdr), "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     len);
	send(fd, hdr, n, MSG_NOSIGNAL);
	send(fd, body, len, MSG_NOSIGNAL);
	free(body);
out:
	close(fd);
}

static int tick(const struct sc_opts *o, const char *textfile)
{
	struct sc_state st;
	__u64 removed;
	size_t len;
	char *buf;
	int err;

	/* re-open every time: the operator may detach/attach while we run */
	err = sc_state_open(o, &st, 1);
	if (err)
		return -1;
	err = sc_gc_sweep(&st, &removed);
	sc_state_close(&st);
	if (!err && removed)
		sc_verbose("run: %llu idle flows removed\n", (unsigned long long)removed);
	if (textfile) {
		buf = render(o, &len);
		if (!buf || write_textfile(textfile, buf, len))
			err = -1;
		free(buf);
	}
	return err;
}

int cmd_run(int argc, char **argv, const struct sc_opts *o)
{
	const char *path = NULL, *textfile = NULL, *listen_at = NULL;
	struct sc_config cfg = { 0 };
	struct sockaddr_storage ss;
	unsigned int sslen = sizeof(ss);
	double interval = 0, next;
	char err[256], *end;
	int c, ret, lfd = -1, one = 1, failing = 0;

	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || end == optarg || !(interval >= 0.1 && interval <= 3600))
				return sc_usage_error("run", "--interval: invalid value '%s': accepted: seconds 0.1..3600",
						      optarg);
			break;
		case 't':
			if (optarg[0] != '/')
				return sc_usage_error("run", "--textfile: '%s': accepted: an absolute path", optarg);
			textfile = optarg;
			break;
		case 'l':
			listen_at = optarg;
			if (sc_parse_listen(listen_at, &ss, &sslen, err, sizeof(err)))
				return sc_usage_error("run", "%s", err);
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return sc_usage_error("run", "unexpected argument '%s' (see -h)", argv[optind]);
	ret = sc_check_privileges();
	if (ret)
		return ret;
	if (path) {
		ret = sc_config_load(path, &cfg);
		if (ret) {
			sc_err("%s", cfg.err);
			sc_config_free(&cfg);
			return ret;
		}
		ret = sc_config_apply(o, &cfg);
		if (ret) {
			sc_config_free(&cfg);
			return ret;
		}
		if (!interval)
			interval = cfg.interval;
		if (!textfile)
			textfile = cfg.textfile;
		if (!listen_at && cfg.listen) {
			listen_at = cfg.listen;
			sc_parse_listen(listen_at, &ss, &sslen, err, sizeof(err));
		}
	}
	if (!interval)
		interval = SC_AGENT_INTERVAL_DEFAULT;
	if (listen_at) {
		lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, sslen) || listen(lfd, 16)) {
			sc_err("run: cannot listen on %s: %s", listen_at, strerror(errno));
			ret = SC_EXIT_RUNTIME;
			goto out;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	sc_verbose("run: sweeping every %g s\n", interval);
	next = mono_s();
	while (!stop) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		double now = mono_s();
		int wait_ms;

		if (now >= next) {
			/* report a failure once, not every interval */
			if (tick(o, textfile)) {
				if (!failing)
					sc_err("run: sweep or metrics failed; retrying every %g s", interval);
				failing = 1;
			} else {
				failing = 0;
			}
			next = now + interval;
			continue;
		}
		wait_ms = (int)((next - now) * 1000) + 1;
		if (poll(&pfd, lfd >= 0 ? 1 : 0, wait_ms) > 0 && (pfd.revents & POLLIN))
			serve_one(lfd, o);
	}
	ret = SC_EXIT_OK;
out:
	if (lfd >= 0)
		close(lfd);
	sc_config_free(&cfg);
	return ret;
}
