// SPDX-License-Identifier: GPL-2.0
/*
 * webcfg.c - the metrics endpoint's web config file (webcfg.h): a reader of
 * the block-style YAML subset that file uses, its TLS material read into
 * memory (libmicrohttpd takes PEM buffers), and basic auth against bcrypt
 * hashes with libcrypt.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "util.h"
#include "webcfg.h"

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

struct parse {
	const char *path;
	int line;
	char *err;
	size_t errlen;
	struct sc_web_config *wc;
	enum section sec;
	int indent;		/* of the section's keys; 0: none yet */
	char *cert_file, *key_file, *min_version;
	bool tls_seen, users_seen;
};

static int fail(struct parse *p, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line)
		snprintf(p->err, p->errlen, "%.200s:%d: %s", p->path, p->line, msg);
	else
		snprintf(p->err, p->errlen, "%.200s: %s", p->path, msg);
	return FS_EXIT_USAGE;
}

/* The whole of a regular file, NUL-terminated, at most SC_WEB_MAX_FILE
 * bytes; NULL with errno (EFBIG: too large, EINVAL: holds a NUL). */
static char *read_all(const char *path)
{
	char *buf = malloc(SC_WEB_MAX_FILE + 1);
	size_t n;
	FILE *f;

	if (!buf)
		return NULL;
	f = in_file_open(path);
	if (!f) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, SC_WEB_MAX_FILE + 1, f);
	errno = ferror(f) ? EIO : n > SC_WEB_MAX_FILE ? EFBIG : 0;
	fclose(f);
	if (!errno && memchr(buf, '\0', n))
		errno = EINVAL;
	if (errno) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* A scalar: plain, 'single' ('' is a quote) or "double" (\\ and \"
 * escapes only), in place; NULL when malformed. */
static char *scalar(char *s)
{
	char q = s[0], *r, *w;
	size_t n = strlen(s);

	if (q != '\'' && q != '"')
		return s;
	if (n < 2 || s[n - 1] != q)
		return NULL;
	s[n - 1] = '\0';
	for (r = w = s + 1; *r; r++) {
		if (q == '\'' && r[0] == '\'') {
			if (r[1] != '\'')
				return NULL;
			r++;
		} else if (q == '"' && r[0] == '\\') {
			if (r[1] != '\\' && r[1] != '"')
				return NULL;
			r++;
		} else if (*r == q) {
			return NULL;
		}
		*w++ = *r;
	}
	*w = '\0';
	return s + 1;
}

/* Cut a comment ('#' at the start or after a blank, outside quotes) and
 * trailing blanks. */
static void strip(char *s)
{
	char q = 0, *e;

	for (e = s; *e; e++) {
		if (q) {
			if (*e == q)
				q = 0;
		} else if (*e == '\'' || *e == '"') {
			q = *e;
		} else if (*e == '#' && (e == s || e[-1] == ' ' || e[-1] == '\t')) {
			break;
		}
	}
	*e = '\0';
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
}

static bool bcrypt_hash(const char *h)
{
	/* $2b$NN$ then 53 characters of bcrypt's base64 */
	return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && strchr("aby", h[2]) &&
	       h[3] == '$' && h[4] >= '0' && h[4] <= '3' && h[5] >= '0' && h[5] <= '9' &&
	       h[6] == '$' &&
	       strspn(h + 7, "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
		       53;
}

static int set_once(struct parse *p, char **slot, const char *key, const char *v)
{
	if (*slot)
		return fail(p, "tls_server_config: %s given twice", key);
	*slot = strdup(v);
	return *slot ? 0 : fail(p, "out of memory");
}

static int tls_key(struct parse *p, const char *key, const char *v)
{
	if (!strcmp(key, "cert_file"))
		return set_once(p, &p->cert_file, key, v);
	if (!strcmp(key, "key_file"))
		return set_once(p, &p->key_file, key, v);
	if (!strcmp(key, "min_version")) {
		if (strcmp(v, "TLS12") && strcmp(v, "TLS13"))
			return fail(p,
				    "tls_server_config: min_version: invalid value '%.32s': "
				    "accepted: TLS12, TLS13",
				    v);
		return set_once(p, &p->min_version, key, v);
	}
	return fail(p,
		    "tls_server_config: unsupported key '%.64s': accepted: cert_file, key_file, "
		    "min_version",
		    key);
}

static int user_key(struct parse *p, const char *name, const char *hash)
{
	struct sc_web_config *wc = p->wc;
	struct crypt_data *cd;
	const char *r;
	int i;

	for (i = 0; i < wc->nusers; i++)
		if (!strcmp(wc->users[i].name, name))
			return fail(p, "basic_auth_users: user '%.64s' given twice", name);
	if (wc->nusers == SC_WEB_MAX_USERS)
		return fail(p, "basic_auth_users: more than %d users", SC_WEB_MAX_USERS);
	if (!*name || strchr(name, ':'))
		return fail(p,
			    "basic_auth_users: invalid user name '%.64s': accepted: 1 or more "
			    "characters, no ':'",
			    name);
	if (!bcrypt_hash(hash))
		return fail(p,
			    "basic_auth_users: %.64s: invalid hash: accepted: a bcrypt hash ($2y$, "
			    "$2b$ or $2a$, 60 characters; htpasswd -nBC 10 USER)",
			    name);
	/* libcrypt must know the method: a hash it cannot check would lock
	 * everyone out at the first scrape */
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return fail(p, "out of memory");
	r = crypt_r("", hash, cd);
	i = r && r[0] == '$';
	free(cd);
	if (!i)
		return fail(p,
			    "basic_auth_users: %.64s: this system's crypt() cannot check the hash",
			    name);
	wc->users[wc->nusers].name = strdup(name);
	wc->users[wc->nusers].hash = strdup(hash);
	if (!wc->users[wc->nusers].name || !wc->users[wc->nusers].hash) {
		free(wc->users[wc->nusers].name);
		return fail(p, "out of memory");
	}
	wc->nusers++;
	return 0;
}

static int top_key(struct parse *p, const char *key, const char *v)
{
	bool empty = !*v || !strcmp(v, "{}") || !strcmp(v, "~") || !strcmp(v, "null");

	if (!strcmp(key, "tls_server_config")) {
		if (p->tls_seen)
			return fail(p, "tls_server_config given twice");
		p->tls_seen = true;
		p->sec = SEC_TLS;
	} else if (!strcmp(key, "basic_auth_users")) {
		if (p->users_seen)
			return fail(p, "basic_auth_users given twice");
		p->users_seen = true;
		p->sec = SEC_USERS;
	} else {
		return fail(
			p, "unsupported key '%.64s': accepted: tls_server_config, basic_auth_users",
			key);
	}
	if (!empty)
		return fail(p,
			    "%s: expected its keys on the lines below (block style), not '%.32s'",
			    key, v);
	p->indent = 0;
	return 0;
}

static int parse_line(struct parse *p, char *s)
{
	char *key, *v, *colon;
	int indent;

	strip(s);
	indent = strspn(s, " ");
	if (s[indent] == '\t')
		return fail(p, "a tab in the indentation: YAML indents with spaces");
	if (!s[indent] || (p->line == 1 && !strcmp(s, "---")))
		return 0;
	/* "key: value" or "key:"; keys are plain or quoted, without ": " */
	for (colon = s + indent; (colon = strchr(colon, ':')); colon++)
		if (colon[1] == '\0' || colon[1] == ' ')
			break;
	if (!colon || strchr("{[-|>&*!", s[indent]))
		return fail(p, "expected 'key: value' (block style; flow style, lists and anchors "
			       "are not supported)");
	*colon = '\0';
	key = s + indent;
	while (colon > key && colon[-1] == ' ')
		*--colon = '\0';
	v = colon + 1;
	v += strspn(v, " ");
	key = scalar(key);
	if (!key)
		return fail(p, "malformed quoted key");
	if (!indent)
		return top_key(p, key, v);
	if (p->sec == SEC_NONE)
		return fail(p, "'%.64s' is indented under no section", key);
	if (!p->indent)
		p->indent = indent;
	if (indent != p->indent)
		return fail(
			p, "'%.64s': indentation %d, expected %d (nested values are not supported)",
			key, indent, p->indent);
	if (*v && strchr("{[|>&*!", *v))
		return fail(p,
			    "%.64s: flow style, block scalars and anchors are not supported: a "
			    "plain or quoted value",
			    key);
	v = scalar(v);
	if (!v)
		return fail(p, "%.64s: malformed quoted value", key);
	if (!*v)
		return fail(p, "%.64s: no value", key);
	return p->sec == SEC_TLS ? tls_key(p, key, v) : user_key(p, key, v);
}

/* path as written in the file at cfg: relative to cfg's directory. */
static char *resolve(const char *cfg, const char *path)
{
	const char *slash = strrchr(cfg, '/');
	char *out;

	if (path[0] == '/' || !slash)
		return strdup(path);
	if (asprintf(&out, "%.*s/%s", (int)(slash - cfg), cfg, path) < 0)
		return NULL;
	return out;
}

static int read_pem(struct parse *p, const char *key, const char *file, const char *marker,
		    char **out)
{
	char *path = resolve(p->path, file);

	if (!path)
		return fail(p, "out of memory");
	*out = read_all(path);
	if (!*out) {
		int e = errno;

		fail(p, "tls_server_config: %s: cannot read '%.200s': %s", key, path,
		     e == EFBIG	   ? "larger than 64 KiB"
		     : e == EINVAL ? "not a regular PEM file"
				   : strerror(e));
		free(path);
		return e == EFBIG || e == EINVAL ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
	}
	if (!strstr(*out, marker)) {
		fail(p, "tls_server_config: %s: '%.200s' holds no PEM %s", key, path, marker);
		free(path);
		return FS_EXIT_USAGE;
	}
	free(path);
	return 0;
}

int sc_web_config_load(const char *path, struct sc_web_config *wc, char *err, size_t errlen)
{
	struct parse p = { .path = path, .err = err, .errlen = errlen, .wc = wc };
	char *text, *s, *nl;
	int ret = 0;

	memset(wc, 0, sizeof(*wc));
	text = read_all(path);
	if (!text) {
		int e = errno;

		fail(&p, "cannot read: %s", e == EFBIG ? "larger than 64 KiB" :
		     e == EINVAL ? "not a regular text file" : strerror(e));
		return e == EFBIG || e == EINVAL ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
	}
	for (s = text; !ret && s && *s; s = nl) {
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = '\0';
		p.line++;
		ret = parse_line(&p, s);
	}
	free(text);
	p.line = 0;
	if (!ret && p.tls_seen && (!p.cert_file || !p.key_file))
		ret = fail(&p, "tls_server_config: cert_file and key_file are both needed");
	if (!ret && p.users_seen && !wc->nusers)
		ret = fail(&p, "basic_auth_users: no user");
	if (!ret && p.cert_file)
		ret = read_pem(&p, "cert_file", p.cert_file, "-----BEGIN CERTIFICATE-----",
			       &wc->cert_pem);
	if (!ret && p.key_file)
		ret = read_pem(&p, "key_file", p.key_file, "PRIVATE KEY-----", &wc->key_pem);
	wc->tls13_only = p.min_version && !strcmp(p.min_version, "TLS13");
	free(p.cert_file);
	free(p.key_file);
	free(p.min_version);
	if (ret)
		sc_web_config_free(wc);
	return ret;
}

void sc_web_config_free(struct sc_web_config *wc)
{
	int i;

	if (wc->key_pem)
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
	free(wc->key_pem);
	free(wc->cert_pem);
	for (i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
		free(wc->users[i].fast);
	}
	memset(wc, 0, sizeof(*wc));
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool sc_web_config_equal(const struct sc_web_config *a, const struct sc_web_config *b)
{
	int i;

	if (!same_str(a->cert_pem, b->cert_pem) || !same_str(a->key_pem, b->key_pem) ||
	    a->tls13_only != b->tls13_only || a->nusers != b->nusers)
		return false;
	for (i = 0; i < a->nusers; i++)
		if (strcmp(a->users[i].name, b->users[i].name) ||
		    strcmp(a->users[i].hash, b->users[i].hash))
			return false;
	return true;
}

const char *sc_web_tls_priorities(const struct sc_web_config *wc)
{
	/* the exporter-toolkit's default minimum is TLS 1.2 too */
	return wc->tls13_only ? "NORMAL:-VERS-ALL:+VERS-TLS1.3" :
				"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
}

/* Equal strings, in a time that depends on their lengths only. */
static bool same_secret(const char *a, const char *b)
{
	size_t n = strlen(a), i;
	unsigned char d = n != strlen(b);

	for (i = 0; i < n && !d; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return !d;
}

/* password against setting (a hash with its salt): crypt_r's result equal
 * to setting. */
static bool crypt_match(const char *password, const char *setting)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *r;
	bool ok;

	if (!cd)
		return false;
	r = crypt_r(password, setting, cd);
	ok = r && r[0] == '$' && same_secret(r, setting);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

bool sc_web_auth(struct sc_web_config *wc, const char *user, const char *password)
{
	struct sc_web_user *u = NULL;
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd;
	const char *r;
	bool ok;
	int i;

	if (!wc->nusers)
		return true;
	if (!user || !password)
		return false;
	for (i = 0; i < wc->nusers; i++)
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	/* a scrape every few seconds would cost a bcrypt each (tens of ms
	 * at cost 10): once matched, a SHA-256-crypt of the password with a
	 * fresh salt stands in for it (memory only, never the password) */
	if (u && u->fast)
		return crypt_match(password, u->fast);
	ok = crypt_match(password, u ? u->hash : wc->users[0].hash) && u;
	if (!ok || !crypt_gensalt_rn("$5$", 0, NULL, 0, salt, sizeof(salt)))
		return ok;
	cd = calloc(1, sizeof(*cd));
	if (cd) {
		r = crypt_r(password, salt, cd);
		if (r && r[0] == '$')
			u->fast = strdup(r);
		explicit_bzero(cd, sizeof(*cd));
		free(cd);
	}
	return ok;
}

bool sc_listen_loopback(const struct sc_listen *l)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;

	if (l->addr.ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
	return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
}

bool sc_listen_check(const struct sc_listen *l, const struct sc_web_config *wc, char *err,
		     size_t errlen)
{
	if (sc_listen_loopback(l) || (wc && (wc->cert_pem || wc->nusers)))
		return true;
	snprintf(err, errlen,
		 "listen: '%.64s' is not a loopback address: serving metrics beyond this host "
		 "needs --web-config FILE with tls_server_config and/or basic_auth_users%s",
		 l->text, wc ? " (the web config sets neither)" : "");
	return false;
}
