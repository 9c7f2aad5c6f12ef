/* SPDX-License-Identifier: GPL-2.0 */
/*
 * webcfg.h - the web config file of the agent's metrics endpoint ("run
 * --web-config FILE"): TLS and basic auth the way Prometheus exporters
 * configure them (the exporter-toolkit's web configuration file), so one
 * file serves node_exporter and flowsplit alike:
 *
 *   tls_server_config:
 *     cert_file: /etc/flowsplit/metrics.crt   # PEM; relative paths are
 *     key_file: /etc/flowsplit/metrics.key    # from the file's directory
 *     min_version: TLS12                      # TLS12 (default) or TLS13
 *   basic_auth_users:
 *     prometheus: $2y$10$...                  # bcrypt (htpasswd -nBC 10)
 *
 * YAML in block style only: the keys above, one per line, values plain or
 * quoted; anything else (flow style, another key, a client CA) is refused
 * with the line and what is accepted, never ignored: a security setting
 * that is silently dropped is worse than an error.
 *
 * Who may listen where (sc_listen_check): a loopback address as before; any
 * other address only with a web config that sets TLS or users, so that the
 * metrics never go beyond the host without the operator saying how.
 */
#ifndef SPLITCTL_WEBCFG_H
#define SPLITCTL_WEBCFG_H

#include <stdbool.h>
#include <stddef.h>

#include "params.h"

#define SC_WEB_MAX_USERS 16
#define SC_WEB_MAX_FILE (64 * 1024)	/* the config, a certificate, a key */

struct sc_web_user {
	char *name;
	char *hash;		/* bcrypt, $2a$/$2b$/$2y$ */
	char *fast;		/* after a match: a SHA-256-crypt of the
				 * password, so that the next scrape does
				 * not pay bcrypt again (HTTP thread only) */
};

struct sc_web_config {
	char *cert_pem;		/* NULL: plain HTTP */
	char *key_pem;
	bool tls13_only;	/* min_version TLS13 */
	struct sc_web_user users[SC_WEB_MAX_USERS];
	int nusers;		/* 0: no authentication */
};

/* Read path; 0, or FS_EXIT_USAGE (bad file) / FS_EXIT_RUNTIME (unreadable)
 * with "PATH:LINE: problem" in err. */
int sc_web_config_load(const char *path, struct sc_web_config *wc, char *err, size_t errlen);
void sc_web_config_free(struct sc_web_config *wc);
/* The same TLS material and users (a reload changes nothing). */
bool sc_web_config_equal(const struct sc_web_config *a, const struct sc_web_config *b);
/* The GnuTLS priorities of wc's min_version. */
const char *sc_web_tls_priorities(const struct sc_web_config *wc);
/*
 * Basic auth: true when no users are configured, or user/password match
 * one (NULLs: no credentials sent). An unknown user costs a bcrypt too
 * (no telling users apart by time). Not thread-safe (the cache): the one
 * HTTP thread only.
 */
bool sc_web_auth(struct sc_web_config *wc, const char *user, const char *password);

/* l is a loopback address. */
bool sc_listen_loopback(const struct sc_listen *l);
/* l may be served with wc (NULL: no web config); false with the reason. */
bool sc_listen_check(const struct sc_listen *l, const struct sc_web_config *wc,
		     char *err, size_t errlen);

#endif /* SPLITCTL_WEBCFG_H */
