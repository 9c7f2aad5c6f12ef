// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - "splitctl run", the agent systemd starts: applies the config file,
 * then every interval sweeps idle flows and refreshes the metrics (a
 * textfile for node_exporter, written whole or not at all, and/or GET
 * /metrics on an address: loopback, or any with TLS and/or basic auth from
 * a web config file, webcfg.h). SIGHUP re-reads the config file, all or
 * nothing; SIGTERM/SIGINT end it with exit 0; the datapath stays attached
 * (it never depended on this process).
 *
 * Threads: the sweep runs in the main thread; libmicrohttpd serves HTTP
 * from its own polling thread with non-blocking sockets and a connection
 * timeout, so a slow, partial, idle or non-reading client can never stall
 * the sweep. A request only reads the pinned maps (no lock, no shared
 * state with the sweep).
 *
 * Between sweeps the main thread runs tunnel health (health_agent.h): it
 * probes the tunnels of the last "route up" and steers its routes; and
 * spill on those tunnels (health/spill_agent.h), which reads the
 * splitter's fs_spill map and spill settings through spill_dp_open().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <microhttpd.h>
#include <bpf/bpf.h>

#include "agent_lock.h"
#include "config.h"
#include "health_agent.h"
#include "ops.h"
#include "webcfg.h"

#define HTTP_TIMEOUT_S	5	/* an idle or stalled client is dropped */
/* Connections served at once: idle or slow clients (a slowloris sending a
 * header line every few seconds outlives the timeout) hold one each, and
 * a scrape needs a free one. Each costs a file descriptor (the limit is
 * raised to fit) and a little memory; epoll, so no FD_SETSIZE ceiling. */
#define HTTP_MAX_CONN	2000
#define HTTP_FDS_SPARE	64	/* pins, netlink, probes, the textfile */

/* "run": the config file, the agent's own settings (also its [agent]
 * keys, config.c), the tunnel health settings (also its [health] keys,
 * health/health_agent.h) and spill's (its [spill] keys,
 * health/spill_agent.h) */
struct sc_run_args {
	__u32 given;
	const char *config;
	struct sc_agent_args agent;
	struct health_settings health;
	struct spill_settings spill;
	struct dup_settings dup;
};

static const struct sc_option run_opts[] = {
	SC_OPTION("config", SC_OPT_STRING, struct sc_run_args, config, .short_opt = 'c',
		  .metavar = "FILE",
		  .help = "apply this config file on start (and on SIGHUP); its [agent] section "
			  "sets the defaults below"),
	SC_OPTION("agent", SC_OPT_INCLUDE, struct sc_run_args, agent, .sub = sc_agent_opts),
	SC_OPTION("health", SC_OPT_INCLUDE, struct sc_run_args, health,
		  .sub = health_settings_opts),
	SC_OPTION("spill", SC_OPT_INCLUDE, struct sc_run_args, spill, .sub = spill_settings_opts),
	SC_OPTION("dup", SC_OPT_INCLUDE, struct sc_run_args, dup, .sub = dup_settings_opts),
	SC_OPTIONS_END,
};

/* One HTTP daemon and what it serves with: its own copy of the web config
 * (a reload starts the next one before this one stops). */
struct http_server {
	struct MHD_Daemon *d;
	struct agent *ag;
	struct sc_web_config wc;	/* zeroed: plain HTTP, no auth */
};

struct agent {
	const struct sc_opts *o;
	const struct sc_run_args *cli;	/* the command line */
	struct sc_config cfg;		/* the config file (-c), if any */
	struct sc_agent_args eff;	/* cli over the file's [agent] */
	struct http_server *http;
	bool failing;			/* a tick failed: logged when it starts, again
					 * every SC_AGENT_RELOG_S while it lasts,
					 * and when it ends */
	unsigned int failures;		/* ticks failed in a row */
	__u64 failing_since_ns, relog_ns;
	char failure[PATH_MAX + 256];	/* what failed, naming its object */
	struct health_agent health;	/* tunnel probes and failover */
};

/* Render the metrics into a malloc()ed buffer; NULL on failure. */
static char *render(struct agent *ag, size_t *len)
{
	const struct sc_opts *o = ag->o;
	struct health_metrics hm;
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
	if (!err) {
		struct spill_view sv;

		health_agent_metrics(&ag->health, &hm);
		sc_metrics_write_health(f, &hm);
		spill_agent_view(&ag->health.spill, &sv);
		sc_metrics_write_spill(f, &sv);
		{
			struct dup_view dv;

			dup_agent_view(&ag->health.dup, &dv);
			sc_metrics_write_dup(f, sc_pin_dir(o), &dv);
		}
	}
	if (fclose(f) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code,
			     char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, body ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (code == MHD_HTTP_OK)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; version=0.0.4");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* 401 with the challenge (no body). */
static enum MHD_Result auth_fail(struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_basic_auth_fail_response(conn, "flowsplit", r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's request handler (its thread). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct http_server *hs = cls;
	struct agent *ag = hs->ag;
	char *user, *pass = NULL;
	size_t len = 0;
	bool allowed;
	char *body;

	(void)version;
	(void)upload_data;
	(void)req_cls;
	if (*upload_data_size) {
		*upload_data_size = 0;	/* a body is ignored */
		return MHD_YES;
	}
	if (hs->wc.nusers) {
		user = MHD_basic_auth_get_username_password(conn, &pass);
		allowed = sc_web_auth(&hs->wc, user, pass);
		if (pass)
			explicit_bzero(pass, strlen(pass));
		MHD_free(user);
		MHD_free(pass);
		if (!allowed)
			return auth_fail(conn);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, 0);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, NULL, 0);
	body = render(ag, &len);
	if (!body)
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, 0);
	return reply(conn, MHD_HTTP_OK, body, len);
}

/* Room for HTTP_MAX_CONN sockets: the soft RLIMIT_NOFILE raised (up to
 * the hard one). The connection limit is what fits. */
static unsigned int http_conn_limit(void)
{
	struct rlimit rl;
	rlim_t want = HTTP_MAX_CONN + HTTP_FDS_SPARE;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return HTTP_MAX_CONN;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= want)
		return HTTP_MAX_CONN;
	return rl.rlim_cur > 2 * HTTP_FDS_SPARE ? (unsigned int)(rl.rlim_cur - HTTP_FDS_SPARE) :
						  HTTP_FDS_SPARE;
}

/* TLS options of wc into o (none without tls_server_config); how many. */
static int tls_options(const struct sc_web_config *wc, struct MHD_OptionItem *o)
{
	if (!wc->cert_pem)
		return 0;
	o[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, wc->cert_pem };
	o[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, wc->key_pem };
	o[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
					(void *)sc_web_tls_priorities(wc) };
	return 3;
}

/*
 * What the agent's settings eff serve with: the web config (zeroed
 * without one), checked against the listen address, its certificate and
 * key loaded by GnuTLS once (a daemon without a socket) so that a bad
 * pair fails here, before anything changed. 0, or FS_EXIT_* with the
 * reason in err.
 */
static int http_config(const struct sc_agent_args *eff, struct sc_web_config *wc,
		       char *err, size_t errlen)
{
	char why[512];
	struct MHD_OptionItem o[4] = { { MHD_OPTION_END, 0, NULL } };
	struct MHD_Daemon *d;
	int ret;

	memset(wc, 0, sizeof(*wc));
	if (eff->web_config) {
		ret = sc_web_config_load(eff->web_config, wc, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "web config: %s", why);
			return ret;
		}
	}
	if (eff->listen.len && !sc_listen_check(&eff->listen, eff->web_config ? wc : NULL,
						err, errlen)) {
		sc_web_config_free(wc);
		return FS_EXIT_USAGE;
	}
	if (!wc->cert_pem)
		return 0;
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		snprintf(err, errlen,
			 "web config: %s: tls_server_config: this libmicrohttpd has no TLS support",
			 eff->web_config);
		sc_web_config_free(wc);
		return FS_EXIT_RUNTIME;
	}
	tls_options(wc, o);
	d = MHD_start_daemon(MHD_USE_TLS | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request,
			     NULL, MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	if (!d) {
		snprintf(err, errlen,
			 "web config: %s: tls_server_config: the certificate and key do not load "
			 "together (PEM, the key of that certificate)",
			 eff->web_config);
		sc_web_config_free(wc);
		return FS_EXIT_USAGE;
	}
	MHD_stop_daemon(d);
	return 0;
}

int sc_agent_web_check(const struct sc_agent_args *a, char *err, size_t errlen)
{
	struct sc_web_config wc;
	int ret = http_config(a, &wc, err, errlen);

	if (!ret)
		sc_web_config_free(&wc);
	return ret;
}

/*
 * Start the HTTP thread on l, serving with wc (taken over: the server
 * frees it); listen_fd >= 0: on that socket (a reload's handover) instead
 * of binding. NULL (error printed, wc freed) when it cannot.
 */
static struct http_server *http_start(struct agent *ag, const struct sc_listen *l,
				      struct sc_web_config *wc, int listen_fd)
{
	/* MHD_USE_ITC: what MHD_quiesce_daemon() needs for a handover */
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
	const struct sockaddr *sa = (const struct sockaddr *)&l->addr;
	struct MHD_OptionItem o[8];
	struct http_server *hs;
	sigset_t stop, old;
	__u16 port;
	int n = 0;

	hs = calloc(1, sizeof(*hs));
	if (!hs) {
		pr_err("run: cannot listen on %s: %s", l->text, strerror(ENOMEM));
		sc_web_config_free(wc);
		return NULL;
	}
	hs->ag = ag;
	hs->wc = *wc;
	memset(wc, 0, sizeof(*wc));
	if (sa->sa_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	} else {
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	}
	if (listen_fd >= 0)
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL };
	else
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)sa };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, http_conn_limit(), NULL };
	if (hs->wc.cert_pem)
		flags |= MHD_USE_TLS;
	n += tls_options(&hs->wc, o + n);
	o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	/* the HTTP thread inherits a mask without our signals: they reach
	 * the main thread, whose sleep they interrupt */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	hs->d = MHD_start_daemon(flags, port, NULL, NULL, on_request, hs,
				 MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!hs->d) {
		pr_err("run: cannot listen on %s: %s", l->text,
		       strerror(errno ? errno : EADDRINUSE));
		sc_web_config_free(&hs->wc);
		free(hs);
		return NULL;
	}
	pr_info("run: listening on %s (GET /metrics)", l->text);
	return hs;
}

static void http_stop(struct http_server *hs)
{
	if (!hs)
		return;
	MHD_stop_daemon(hs->d);
	sc_web_config_free(&hs->wc);
	free(hs);
}

/* The same address with another web config: its listening socket handed
 * from the running server to a new one (never a moment without a
 * listener, no bind race). The server to keep: the new one, the old one
 * when it cannot hand over, NULL when the new one failed (error printed). */
static struct http_server *http_handover(struct agent *ag, const struct sc_listen *l,
					 struct sc_web_config *wc)
{
	struct http_server *hs;
	int fd;

	fd = MHD_quiesce_daemon(ag->http->d);
	if (fd < 0) {
		pr_err("run: reload: cannot hand %s over: the web config in force stays", l->text);
		return ag->http;
	}
	hs = http_start(ag, l, wc, fd);
	if (!hs)
		close(fd);
	return hs;
}

static int write_textfile(const char *path, const char *buf, size_t len)
{
	struct out_file of;
	int err;

	/* node_exporter may read at any time: written aside (never through
	 * a planted link), then renamed */
	err = out_file_open(&of, path, 0644);
	if (err)
		return err;
	if (fwrite(buf, 1, len, of.f) != len) {
		err = -errno;
		out_file_abort(&of);
		return err ? err : -EIO;
	}
	return out_file_commit(&of);
}

/* spill's splitter (health/spill_agent.h): the agent's pin directory,
 * opened anew each time (the operator may detach/attach while we run);
 * fs_spill is read and written by sc_spill_read()/sc_spill_write() only. */
static int spill_dp_open(void *arg, struct spill_dp *dp)
{
	const struct sc_opts *o = arg;
	struct split_config c;
	struct sc_state *st;
	int err;

	dp->h = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	err = sc_spill_open(o, st);
	if (err) {
		free(st);
		return err;
	}
	err = sc_config_read(st, &c);
	if (err) {
		sc_state_close(st);
		free(st);
		return err;
	}
	dp->h = st;
	dp->on = c.flags & FS_CFG_F_SPILL;
	dp->dscp = c.dscp_spill;
	return 0;
}

static void spill_dp_close(struct spill_dp *dp)
{
	if (!dp->h)
		return;
	sc_state_close(dp->h);
	free(dp->h);
	dp->h = NULL;
}

static int spill_dp_write(const struct spill_dp *dp, uint16_t gen, uint64_t grants)
{
	return sc_spill_write(dp->h, gen, grants);
}

static int spill_dp_read(const struct spill_dp *dp, uint16_t *gen, uint64_t *taken)
{
	struct fs_spill a, d;
	int err = sc_spill_read(dp->h, &a, &d);

	if (err)
		return err;
	if (gen)
		*gen = a.gen;
	*taken = d.taken;
	return 0;
}

static const struct spill_dp_ops spill_dp = {
	.open = spill_dp_open, .close = spill_dp_close,
	.write = spill_dp_write, .read = spill_dp_read,
};

/* One sweep and one textfile; 0 or -errno (printed by the caller). */
/* One sweep and metrics write: 0, or -errno with what failed, naming its
 * object (the instance, the textfile's path), in ag->failure. */
static int tick(struct agent *ag)
{
	const char *textfile = ag->eff.textfile;
	char msg[PATH_MAX + 128];
	struct sc_state st;
	__u64 removed;
	size_t len;
	char *buf;
	int err;

	/* re-open every time: the operator may detach/attach while we run */
	err = sc_state_open(ag->o, &st, 1);
	if (err) {
		snprintf(ag->failure, sizeof(ag->failure), "idle sweep: %s",
			 sc_state_strerror(err, sc_pin_dir(ag->o), msg, sizeof(msg)));
		return err;
	}
	err = sc_gc_sweep(&st, &removed);
	sc_state_close(&st);
	if (err)
		snprintf(ag->failure, sizeof(ag->failure), "idle sweep of '%s' failed (%s)",
			 sc_pin_dir(ag->o), strerror(-err));
	if (!err && removed)
		pr_debug("run: %llu idle flows removed", (unsigned long long)removed);
	if (!err && textfile) {
		buf = render(ag, &len);
		err = buf ? write_textfile(textfile, buf, len) : -EIO;
		if (err)
			snprintf(ag->failure, sizeof(ag->failure), "metrics textfile '%s': %s (%s)",
				 textfile, buf ? "cannot write it" : "cannot render the metrics",
				 strerror(-err));
		free(buf);
	}
	return err;
}

/* A failing tick is logged when it starts, again at most every
 * SC_AGENT_RELOG_S while it lasts (a journal that rotated, an operator
 * who looks later, still sees it), and when it ends. */
#define SC_AGENT_RELOG_S 300
static void tick_report(struct agent *ag, int err)
{
	__u64 now = mono_ns();

	if (err) {
		if (!ag->failing) {
			ag->failing_since_ns = now;
			ag->failures = 0;
		}
		ag->failures++;
		if (!ag->failing || now >= ag->relog_ns) {
			if (!ag->failing)
				pr_err("run: %s; retrying every %g s", ag->failure,
				       ag->eff.interval);
			else
				pr_err("run: still failing after %u attempts in %.0f s: %s; "
				       "retrying every %g s",
				       ag->failures, (now - ag->failing_since_ns) / 1e9,
				       ag->failure, ag->eff.interval);
			ag->relog_ns = now + (__u64)SC_AGENT_RELOG_S * FS_NS_PER_S;
		}
	} else if (ag->failing) {
		pr_info("run: sweep and metrics work again, after %u failed attempts in %.0f s",
			ag->failures, (now - ag->failing_since_ns) / 1e9);
	}
	ag->failing = err != 0;
}

/* The agent's settings: the config file's [agent], the command line on top
 * where given. */
static void effective(const struct sc_run_args *cli, const struct sc_config *cfg,
		      bool have_cfg, struct sc_agent_args *eff)
{
	memset(eff, 0, sizeof(*eff));
	eff->interval = SC_AGENT_INTERVAL_DEFAULT;
	if (have_cfg)
		sc_options_merge(sc_agent_opts, eff, &cfg->agent);
	sc_options_merge(sc_agent_opts, eff, &cli->agent);
}

static bool same_listen(const struct sc_listen *a, const struct sc_listen *b)
{
	return a->len == b->len && !memcmp(&a->addr, &b->addr, a->len);
}

/*
 * SIGHUP: read the config file again and switch to it only when all of it
 * works (valid, HTTP address bound, applied); otherwise keep running as
 * before, with the reason logged.
 */
static void reload(struct agent *ag)
{
	struct http_server *http = ag->http;
	struct health_settings health;
	struct spill_settings spill;
	struct dup_settings dup;
	struct sc_web_config wc = { 0 };
	struct sc_agent_args eff;
	struct sc_config next;
	char herr[640];
	bool swap = false;

	if (!ag->cli->config) {
		pr_info("run: SIGHUP without a config file (-c): nothing to reload");
		return;
	}
	if (sc_config_load(ag->cli->config, &next)) {
		pr_err("run: reload: %s; keeping the running config", next.err);
		goto fail;
	}
	/* [health] with the command line on top: checked before anything
	 * changes, switched to with the rest */
	if (health_settings_resolve(&health, &next.health, &ag->cli->health, herr,
				    sizeof(herr))) {
		pr_err("run: reload: %s; keeping the running config", herr);
		goto fail;
	}
	if (spill_settings_resolve(&spill, &next.spill, &ag->cli->spill, herr, sizeof(herr))) {
		pr_err("run: reload: [spill]: %s; keeping the running config", herr);
		goto fail;
	}
	dup_settings_resolve(&dup, &next.dup.agent, &ag->cli->dup);
	effective(ag->cli, &next, true, &eff);
	if (eff.listen.len && http_config(&eff, &wc, herr, sizeof(herr))) {
		pr_err("run: reload: %s; keeping the running config", herr);
		goto fail;
	}
	if (eff.listen.len && (!ag->http || !same_listen(&eff.listen, &ag->eff.listen))) {
		http = http_start(ag, &eff.listen, &wc, -1);
		if (!http)
			goto fail;
	} else if (!eff.listen.len) {
		http = NULL;
	} else {
		/* the same address: a new web config is handed the socket
		 * once the rest applied */
		swap = !sc_web_config_equal(&wc, &ag->http->wc);
	}
	if (sc_config_apply(ag->o, &next)) {
		pr_err("run: reload: applying '%s' failed; keeping the running config",
		       ag->cli->config);
		if (http && http != ag->http)
			http_stop(http);
		goto fail;
	}
	if (swap)
		http = http_handover(ag, &eff.listen, &wc);
	if (ag->http && http != ag->http)
		http_stop(ag->http);
	ag->http = http;
	sc_web_config_free(&wc);
	sc_config_free(&ag->cfg);
	ag->cfg = next;
	/* eff points into next's strings, now owned by ag->cfg */
	effective(ag->cli, &ag->cfg, true, &ag->eff);
	health_agent_switch(&ag->health, &health);
	if (spill_agent_switch(&ag->health.spill, &spill))
		pr_info("run: spill: new settings");
	dup_agent_switch(&ag->health.dup, &dup);
	pr_info("run: reloaded '%s'", ag->cli->config);
	return;
fail:
	sc_web_config_free(&wc);
	sc_config_free(&next);
}

/* Everything that can fail without a change first (the file, the health
 * settings, the listen address), then the config applied. */
static int agent_start(struct agent *ag)
{
	bool have_cfg = ag->cli->config != NULL;
	int ret;

	if (have_cfg) {
		ret = sc_config_load(ag->cli->config, &ag->cfg);
		if (ret) {
			pr_err("%s", ag->cfg.err);
			return ret;
		}
	}
	effective(ag->cli, &ag->cfg, have_cfg, &ag->eff);
	/* health: the file's [health], the command line on top (both were
	 * checked: the file by its load, the command line in cmd_run) */
	if (have_cfg) {
		struct health_settings health;
		struct spill_settings spill;
		struct dup_settings dup;
		char err[256];

		if (health_settings_resolve(&health, &ag->cfg.health, &ag->cli->health,
					    err, sizeof(err))) {
			pr_err("run: %s", err);
			return FS_EXIT_USAGE;
		}
		if (spill_settings_resolve(&spill, &ag->cfg.spill, &ag->cli->spill,
					   err, sizeof(err))) {
			pr_err("run: [spill]: %s", err);
			return FS_EXIT_USAGE;
		}
		health_agent_switch(&ag->health, &health);
		spill_agent_switch(&ag->health.spill, &spill);
		dup_settings_resolve(&dup, &ag->cfg.dup.agent, &ag->cli->dup);
		dup_agent_switch(&ag->health.dup, &dup);
	}
	/* a bad web config, or a port in use, ends the agent before it
	 * changed anything */
	if (ag->eff.listen.len) {
		struct sc_web_config wc;
		char err[640];

		ret = http_config(&ag->eff, &wc, err, sizeof(err));
		if (ret) {
			pr_err("run: %s", err);
			return ret;
		}
		ag->http = http_start(ag, &ag->eff.listen, &wc, -1);
		if (!ag->http)
			return FS_EXIT_RUNTIME;
	}
	if (have_cfg)
		return sc_config_apply(ag->o, &ag->cfg);
	return FS_EXIT_OK;
}

static void agent_loop(struct agent *ag)
{
	__u64 next = mono_ns();
	int err;

	pr_debug("run: sweeping every %g s", ag->eff.interval);
	while (!fs_stop) {
		if (fs_reload) {
			fs_reload = 0;
			reload(ag);
		}
		if (mono_ns() >= next) {
			err = tick(ag);
			tick_report(ag, err);
			next = mono_ns() + (__u64)(ag->eff.interval * 1e9);
		}
		/* tunnel health until the next sweep; SIGTERM, SIGINT and
		 * SIGHUP end the wait early */
		health_agent_run_until(&ag->health, next);
	}
}

static int cmd_run(const struct sc_call *c)
{
	const struct sc_opts *o = c->o;
	struct agent ag = { .o = o, .cli = c->args };
	struct health_settings health;
	struct spill_settings spill;
	struct dup_settings dup;
	char msg[PATH_MAX + 256];
	int ret, mark, holder;

	if (health_settings_resolve(&health, NULL, &ag.cli->health, msg, sizeof(msg))) {
		pr_err("run: %s", msg);
		return FS_EXIT_USAGE;
	}
	if (spill_settings_resolve(&spill, NULL, &ag.cli->spill, msg, sizeof(msg))) {
		pr_err("run: %s", msg);
		return FS_EXIT_USAGE;
	}
	/* the journal stamps its lines; a terminal or a file gets the time */
	fs_log_timestamps();
	health_agent_init(&ag.health, &health, &spill, &spill_dp, (void *)o);
	dup_settings_resolve(&dup, NULL, &ag.cli->dup);
	dup_agent_configure(&ag.health.dup, &dup, sc_pin_dir(o), sc_dup_copy_flag);
	ret = sc_check_privileges();
	if (ret) {
		pr_err("%s", sc_state_strerror(ret, sc_pin_dir(o), msg, sizeof(msg)));
		return FS_EXIT_RUNTIME;
	}
	/* one agent per network namespace (the routes and the health file
	 * are the namespace's): the lock dies with us, even on kill -9;
	 * "status" reads it to tell whether an agent runs */
	mark = agent_lock_take(sc_pin_dir(o), &holder, msg, sizeof(msg));
	if (mark < 0) {
		pr_err("run: %s", msg);
		return FS_EXIT_RUNTIME;
	}
	/* the files of agents killed with -9, here or in gone namespaces */
	agent_lock_remove_stale();
	fs_signals_install(true);
	ret = agent_start(&ag);
	/* a start that failed said why in one line */
	if (!ret) {
		pr_info("run: started (pid %d, instance '%s', config %s%s%s)", (int)getpid(),
			sc_pin_dir(o), ag.cli->config ? "'" : "",
			ag.cli->config ? ag.cli->config : "none", ag.cli->config ? "'" : "");
		agent_loop(&ag);
	}
	/* the HTTP thread reads the health metrics: stopped first */
	http_stop(ag.http);
	health_agent_close(&ag.health);
	sc_config_free(&ag.cfg);
	agent_lock_release(mark);
	if (!ret)
		pr_info("run: exiting: stopped by a signal");
	return ret;
}

const struct sc_cmd sc_cmd_run = SC_CMD(
	"run", cmd_run, "", "agent: periodic idle sweep and metrics until SIGTERM; SIGHUP reloads",
	run_opts, struct sc_run_args, .log_errors = true);
