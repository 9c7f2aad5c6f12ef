// SPDX-License-Identifier: GPL-2.0
/*
 * config.c - "apply -c FILE" and "check -c FILE": the INI config file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <ini.h>

#include "config.h"
#include "ops.h"

struct parse_ctx {
	struct sc_config *cfg;
	const char *path;
	int line;		/* inih does not pass line numbers: we count */
};

static int fail(struct parse_ctx *p, const char *fmt, const char *a,
		const char *b)
{
	char msg[400];

	snprintf(msg, sizeof(msg), fmt, a, b);
	if (!p->cfg->err[0])
		snprintf(p->cfg->err, sizeof(p->cfg->err), "%s", msg);
	return 0;	/* inih: stop and report this line */
}

static int add_ifaces(struct parse_ctx *p, const char *value)
{
	char *copy = strdup(value), *tok, *save = NULL;
	struct sc_config *cfg = p->cfg;

	for (tok = strtok_r(copy, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		if (strlen(tok) >= IFNAMSIZ || cfg->nifaces == SC_MAX_IFACES) {
			free(copy);
			return fail(p, "interfaces: invalid interface name '%s'%s", tok, "");
		}
		if (!if_nametoindex(tok)) {
			char name[IFNAMSIZ + 1];

			snprintf(name, sizeof(name), "%s", tok);
			free(copy);
			return fail(p, "interfaces: interface '%s' does not exist%s", name, "");
		}
		cfg->ifaces[cfg->nifaces++] = strdup(tok);
	}
	free(copy);
	if (!cfg->nifaces)
		return fail(p, "interfaces: empty list%s%s", "", "");
	return 1;
}

static int splitter_key(struct parse_ctx *p, const char *name, const char *value)
{
	struct sc_config *cfg = p->cfg;
	struct split_config tmp;
	char err[256];
	__u64 v;

	if (!strcmp(name, "interfaces"))
		return add_ifaces(p, value);
	if (!strcmp(name, "mode")) {
		if (!strcmp(value, "native"))
			cfg->mode = SC_MODE_NATIVE;
		else if (!strcmp(value, "generic"))
			cfg->mode = SC_MODE_GENERIC;
		else if (!strcmp(value, "auto"))
			cfg->mode = SC_MODE_AUTO;
		else
			return fail(p, "mode: invalid value '%s': accepted: native, generic, auto%s", value, "");
		return 1;
	}
	if (!strcmp(name, "flows")) {
		char msg[128];

		if (sc_parse_u64(value, FS_MIN_FLOWS, FS_MAX_FLOWS, &v)) {
			snprintf(msg, sizeof(msg), "accepted: an integer %u..%u", FS_MIN_FLOWS, FS_MAX_FLOWS);
			return fail(p, "flows: invalid value '%s': %s", value, msg);
		}
		cfg->flows = v;
		return 1;
	}
	sc_config_defaults(&tmp, 1000);
	if (sc_setting_apply(&tmp, name, value, 1000, err, sizeof(err)))
		return fail(p, "%s%s", err, "");
	if (cfg->nsettings == SC_CFG_MAX_SETTINGS)
		return fail(p, "too many settings%s%s", "", "");
	cfg->settings[2 * cfg->nsettings] = strdup(name);
	cfg->settings[2 * cfg->nsettings + 1] = strdup(value);
	cfg->nsettings++;
	return 1;
}

static int agent_key(struct parse_ctx *p, const char *name, const char *value)
{
	struct sc_config *cfg = p->cfg;
	struct sockaddr_storage ss;
	unsigned int len = sizeof(ss);
	char err[256], *end;

	if (!strcmp(name, "interval")) {
		cfg->interval = strtod(value, &end);
		if (*end || end == value || !(cfg->interval >= 0.1 && cfg->interval <= 3600))
			return fail(p, "interval: invalid value '%s': accepted: seconds 0.1..3600%s", value, "");
	} else if (!strcmp(name, "textfile")) {
		if (value[0] != '/')
			return fail(p, "textfile: '%s': accepted: an absolute path%s", value, "");
		free(cfg->textfile);
		cfg->textfile = strdup(value);
	} else if (!strcmp(name, "listen")) {
		if (sc_parse_listen(value, &ss, &len, err, sizeof(err)))
			return fail(p, "%s%s", err, "");
		free(cfg->listen);
		cfg->listen = strdup(value);
	} else {
		return fail(p, "[agent]: unknown key '%s': accepted: interval, textfile, listen%s", name, "");
	}
	return 1;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse_ctx *p = user;
	char err[256];

	if (!strcmp(section, "splitter"))
		return splitter_key(p, name, value);
	if (!strcmp(section, "agent"))
		return agent_key(p, name, value);
	if (!strcmp(section, "route")) {
		if (!p->cfg->route)
			p->cfg->route = tcfg_spec_new();
		if (!p->cfg->route)
			return fail(p, "[route]: routing support is not available%s%s", "", "");
		if (tcfg_spec_set(p->cfg->route, name, value, err, sizeof(err)))
			return fail(p, "%s%s", err, "");
		return 1;
	}
	return fail(p, "unknown section '[%s]': accepted: [splitter], [agent], [route]%s", section, "");
}

int sc_config_load(const char *path, struct sc_config *cfg)
{
	struct parse_ctx p = { .cfg = cfg, .path = path };
	char msg[sizeof(cfg->err)];
	int line;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->interval = SC_AGENT_INTERVAL_DEFAULT;
	f = fopen(path, "r");
	if (!f) {
		snprintf(cfg->err, sizeof(cfg->err), "%s: cannot read: %s", path, strerror(errno));
		return SC_EXIT_RUNTIME;
	}
	line = ini_parse_file(f, handler, &p);
	fclose(f);
	if (line) {
		if (!cfg->err[0])
			snprintf(cfg->err, sizeof(cfg->err), "syntax error (expected '[section]' or 'key = value')");
		snprintf(msg, sizeof(msg), "%.200s:%d: %.300s", path, line, cfg->err);
		memcpy(cfg->err, msg, sizeof(msg));
		return SC_EXIT_USAGE;
	}
	if (!cfg->nifaces) {
		snprintf(cfg->err, sizeof(cfg->err), "%s: [splitter] interfaces is missing: name at least one LAN interface", path);
		return SC_EXIT_USAGE;
	}
	{
		struct split_config tmp;
		char err[256];
		int i;

		sc_config_defaults(&tmp, 1000);
		for (i = 0; i < cfg->nsettings; i++)
			sc_setting_apply(&tmp, cfg->settings[2 * i], cfg->settings[2 * i + 1],
					 1000, err, sizeof(err));
		if (tmp.dscp_short == tmp.dscp_long) {
			snprintf(cfg->err, sizeof(cfg->err), "%s: dscp-short and dscp-long are both %u: they must differ",
				 path, tmp.dscp_short);
			return SC_EXIT_USAGE;
		}
	}
	if (cfg->route && tcfg_spec_check(cfg->route, msg, sizeof(msg))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [route]: %.280s", path, msg);
		return SC_EXIT_USAGE;
	}
	return 0;
}

void sc_config_free(struct sc_config *cfg)
{
	int i;

	for (i = 0; i < cfg->nifaces; i++)
		free(cfg->ifaces[i]);
	for (i = 0; i < 2 * cfg->nsettings; i++)
		free((char *)cfg->settings[i]);
	free(cfg->textfile);
	free(cfg->listen);
	tcfg_spec_free(cfg->route);
	memset(cfg, 0, sizeof(*cfg));
}

int sc_parse_listen(const char *s, void *sa, unsigned int *salen, char *err,
		    size_t errlen)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	__u64 port;
	size_t hl;

	if (!colon || colon == s || (hl = colon - s) >= sizeof(host) ||
	    sc_parse_u64(colon + 1, 1, 65535, &port))
		goto bad;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = sa;

		host[hl - 1] = '\0';
		memset(a, 0, sizeof(*a));
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1 ||
		    !IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			goto bad;
		*salen = sizeof(*a);
	} else {
		struct sockaddr_in *a = sa;

		memset(a, 0, sizeof(*a));
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1 ||
		    (ntohl(a->sin_addr.s_addr) >> 24) != 127)
			goto bad;
		*salen = sizeof(*a);
	}
	return 0;
bad:
	snprintf(err, errlen, "listen: invalid address '%s': accepted: a loopback address and port, e.g. 127.0.0.1:9434 or [::1]:9434",
		 s);
	return -1;
}

int sc_config_apply(const struct sc_opts *o, const struct sc_config *cfg)
{
	struct sc_attach_opts ao = { .mode = cfg->mode, .flows = cfg->flows,
				     .settings = cfg->settings };
	struct sc_iface ifs[SC_MAX_IFACES];
	int fresh[SC_MAX_IFACES] = { 0 };
	int i, j, n, ret = 0;

	n = sc_ifaces_list(sc_pin_dir(o), ifs, SC_MAX_IFACES);
	for (i = 0; i < cfg->nifaces && !ret; i++) {
		fresh[i] = 1;
		for (j = 0; j < n; j++)
			if (!strcmp(ifs[j].name, cfg->ifaces[i]))
				fresh[i] = 0;
		/* an interface already attached is upgraded in place, and the
		 * maps are reused: the flows stay */
		ao.flows = fresh[i] && n == 0 && i == 0 ? cfg->flows : 0;
		ret = sc_attach(o, cfg->ifaces[i], &ao);
	}
	if (!ret && cfg->route) {
		struct tcfg_ctx ctx = { .json = o->json, .verbose = o->verbose };
		int k;

		ctx.dscp_long = FS_DEFAULT_DSCP_LONG;
		for (k = 0; k < cfg->nsettings; k++)
			if (!strcmp(cfg->settings[2 * k], "dscp-long"))
				ctx.dscp_long = atoi(cfg->settings[2 * k + 1]);
		ret = tcfg_route_apply(cfg->route, &ctx);
	}
	if (ret) {
		/* all or nothing: undo the attachments this call made */
		for (j = 0; j < i; j++)
			if (fresh[j])
				sc_detach(o, cfg->ifaces[j]);
	}
	return ret;
}

static int config_cmd(int argc, char **argv, const struct sc_opts *o, int apply)
{
	const char *cmd = apply ? "apply" : "check";
	const char *path = NULL;
	struct sc_config cfg;
	int c, ret;

	while ((c = sc_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'h':
			return SC_EXIT_OK;
		default:
			return SC_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return sc_usage_error(cmd, "unexpected argument '%s' (see -h)", argv[optind]);
	if (!path)
		return sc_usage_error(cmd, "-c FILE is required");
	ret = sc_config_load(path, &cfg);
	if (ret) {
		sc_err("%s", cfg.err);
	} else if (apply) {
		ret = sc_config_apply(o, &cfg);
	} else if (o->json) {
		printf("{\"file\":\"%s\",\"valid\":true}\n", path);
	} else {
		printf("%s: valid\n", path);
	}
	sc_config_free(&cfg);
	return ret;
}

int cmd_apply(int argc, char **argv, const struct sc_opts *o)
{
	return config_cmd(argc, argv, o, 1);
}

int cmd_check(int argc, char **argv, const struct sc_opts *o)
{
	return config_cmd(argc, argv, o, 0);
}
