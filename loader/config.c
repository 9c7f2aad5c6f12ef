// SPDX-License-Identifier: GPL-2.0
/*
 * config.c - "apply -c FILE" and "check -c FILE": the INI config file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <ini.h>

#include "config.h"
#include "health_agent.h"
#include "ops.h"

struct parse_ctx {
	struct sc_config *cfg;
	const char *path;
};

/* Record the first error (inih then stops and reports this line). */
static int fail(struct parse_ctx *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct parse_ctx *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->cfg->err[0]) {
		va_start(ap, fmt);
		vsnprintf(p->cfg->err, sizeof(p->cfg->err), fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* A copy of value that lives as long as cfg. */
static const char *keep(struct sc_config *cfg, const char *value)
{
	char *v;

	if (cfg->nvalues == SC_CFG_MAX_VALUES || !(v = strdup(value)))
		return NULL;
	cfg->values[cfg->nvalues++] = v;
	return v;
}

static int add_ifaces(struct parse_ctx *p, const char *value)
{
	char *copy = strdup(value), *tok, *save = NULL;
	struct sc_config *cfg = p->cfg;
	int ret = 1;

	if (!copy)
		return fail(p, "interfaces: out of memory");
	for (tok = strtok_r(copy, " \t,", &save); tok && ret;
	     tok = strtok_r(NULL, " \t,", &save)) {
		if (!sc_valid_ifname(tok))
			ret = fail(p, "interfaces: invalid interface name '%.64s'", tok);
		else if (cfg->nifaces == SC_MAX_IFACES)
			ret = fail(p, "interfaces: more than %d interfaces", SC_MAX_IFACES);
		else if (!if_nametoindex(tok))
			ret = fail(p, "interfaces: interface '%s' does not exist", tok);
		else
			strcpy(cfg->ifaces[cfg->nifaces++], tok);	/* < IFNAMSIZ */
	}
	free(copy);
	if (ret && !cfg->nifaces)
		return fail(p, "interfaces: empty list");
	return ret;
}

/* name = value through a command's option table; 1 ok, 0 error recorded. */
static int table_key(struct parse_ctx *p, const struct sc_option *t, void *base,
		     const char *section, const char *name, const char *value)
{
	char err[400], names[256] = "";
	struct sc_opt_ref r;
	const char *v;

	if (sc_option_find(t, base, name, false, &r)) {
		sc_option_names(t, names, sizeof(names));
		if (!strcmp(section, "splitter"))
			return fail(p, "unknown setting '%s': accepted: interfaces, %s", name, names);
		return fail(p, "[%s]: unknown key '%s': accepted: %s", section, name, names);
	}
	v = keep(p->cfg, value);
	if (!v)
		return fail(p, "%s: too many values", name);
	if (sc_option_set(&r, v, "", err, sizeof(err)))
		return fail(p, "%s", err);
	return 1;
}

#define HEALTH_FILE_KEYS HEALTH_PARAM_KEYS ", both-down, enabled, target-short, target-long"

/* [health]: the run options of the same names (health-KEY for the probe
 * settings, "health" for enabled), into the [agent] arguments' list. */
static int health_key(struct parse_ctx *p, const char *name, const char *value)
{
	char opt[64], err[400];
	struct sc_opt_ref r;
	const char *v;

	if (!strcmp(name, "enabled"))
		snprintf(opt, sizeof(opt), "health");
	else if (health_param_range(name))
		snprintf(opt, sizeof(opt), "health-%s", name);
	else if (!strcmp(name, "both-down") || !strcmp(name, "target-short") ||
		 !strcmp(name, "target-long"))
		snprintf(opt, sizeof(opt), "%s", name);
	else
		return fail(p, "[health]: unknown key '%.64s': accepted: %s", name, HEALTH_FILE_KEYS);
	if (sc_option_find(sc_run_opts, &p->cfg->agent, opt, true, &r))
		return fail(p, "[health]: unknown key '%.64s': accepted: %s", name, HEALTH_FILE_KEYS);
	v = keep(p->cfg, value);
	if (!v)
		return fail(p, "%s: too many values", name);
	if (sc_option_set(&r, v, "", err, sizeof(err)))
		return fail(p, "[health]: %s", err);
	return 1;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse_ctx *p = user;
	struct sc_config *cfg = p->cfg;
	char err[256];

	if (!strcmp(section, "splitter")) {
		if (!strcmp(name, "interfaces"))
			return add_ifaces(p, value);
		return table_key(p, sc_attach_opts, &cfg->splitter, section, name, value);
	}
	if (!strcmp(section, "agent"))
		return table_key(p, sc_run_opts, &cfg->agent, section, name, value);
	if (!strcmp(section, "health"))
		return health_key(p, name, value);
	if (!strcmp(section, "route")) {
		if (!cfg->route)
			cfg->route = tcfg_spec_new();
		if (!cfg->route)
			return fail(p, "[route]: routing support is not available");
		if (tcfg_spec_set(cfg->route, name, value, err, sizeof(err)))
			return fail(p, "%s", err);
		return 1;
	}
	return fail(p, "unknown section '[%s]': accepted: [splitter], [agent], [health], [route]", section);
}

/* The rules across keys, after the whole file was read. */
static int config_check(const char *path, struct sc_config *cfg)
{
	struct split_config tmp;
	char err[256];

	if (!cfg->nifaces) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [splitter] interfaces is missing: name at least one LAN interface", path);
		return FS_EXIT_USAGE;
	}
	sc_config_defaults(&tmp, 1000);
	if (sc_settings_merge(&tmp, &cfg->splitter.settings, 1000, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	if (sc_health_agent_check(&cfg->agent.health, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [health]: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	if (cfg->route && tcfg_spec_check(cfg->route, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [route]: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	return 0;
}

int sc_config_load(const char *path, struct sc_config *cfg)
{
	struct parse_ctx p = { .cfg = cfg, .path = path };
	char msg[sizeof(cfg->err)];
	int line;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->agent.interval = SC_AGENT_INTERVAL_DEFAULT;
	f = in_file_open(path);
	if (!f) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: cannot read: %s", path, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	line = ini_parse_file(f, handler, &p);
	fclose(f);
	if (line) {
		if (!cfg->err[0])
			snprintf(cfg->err, sizeof(cfg->err), "syntax error (expected '[section]' or 'key = value')");
		snprintf(msg, sizeof(msg), "%.200s:%d: %.300s", path, line, cfg->err);
		memcpy(cfg->err, msg, sizeof(msg));
		return FS_EXIT_USAGE;
	}
	return config_check(path, cfg);
}

void sc_config_free(struct sc_config *cfg)
{
	int i;

	for (i = 0; i < cfg->nvalues; i++)
		free(cfg->values[i]);
	tcfg_spec_free(cfg->route);
	memset(cfg, 0, sizeof(*cfg));
}

/* The live long code point after the attach (the routes match on it). */
static int live_dscp_long(const struct sc_opts *o)
{
	struct split_config c;
	struct sc_state st;
	int v = FS_DEFAULT_DSCP_LONG;

	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &c))
			v = c.dscp_long;
		sc_state_close(&st);
	}
	return v;
}

/* The live config, to put back when an apply fails half-way; 0 when
 * nothing is attached yet (then there is nothing to restore). */
static int live_config(const struct sc_opts *o, struct split_config *c)
{
	struct sc_state st;
	int ret;

	if (sc_state_open(o, &st, 0))
		return -ENOENT;
	ret = sc_config_read(&st, c);
	sc_state_close(&st);
	return ret;
}

static void restore_config(const struct sc_opts *o, const struct split_config *c)
{
	struct sc_state st;
	int err;

	if (sc_state_open(o, &st, 1))
		return;
	err = sc_config_write(&st, c);
	if (err)
		pr_err("could not put the previous settings back: %s", strerror(-err));
	sc_state_close(&st);
}

int sc_config_apply(const struct sc_opts *o, const struct sc_config *cfg)
{
	struct sc_attach_args a = cfg->splitter;
	struct sc_iface ifs[SC_MAX_IFACES];
	bool fresh[SC_MAX_IFACES] = { false };
	struct split_config before;
	bool had = !live_config(o, &before);
	int i, j, n, ret = 0;

	n = sc_ifaces_list(sc_pin_dir(o), ifs, SC_MAX_IFACES);
	for (i = 0; i < cfg->nifaces && !ret; i++) {
		fresh[i] = true;
		for (j = 0; j < n; j++)
			if (!strcmp(ifs[j].name, cfg->ifaces[i]))
				fresh[i] = false;
		/* an interface already attached is upgraded in place, and the
		 * maps are reused: the flows stay */
		a.flows = fresh[i] && n <= 0 && i == 0 ? cfg->splitter.flows : 0;
		ret = sc_attach(o, cfg->ifaces[i], &a);
	}
	if (!ret && cfg->route) {
		struct tcfg_ctx ctx = { .dscp_long = live_dscp_long(o) };

		ret = tcfg_route_up(cfg->route, &ctx);
	}
	if (ret) {
		/* all or nothing: undo the attachments this call made, and
		 * the settings it changed */
		for (j = 0; j < i; j++)
			if (fresh[j])
				sc_detach(o, cfg->ifaces[j]);
		if (had)
			restore_config(o, &before);
	}
	return ret;
}

static int config_cmd(const struct sc_opts *o, const struct sc_config_args *a,
		      bool apply)
{
	struct sc_config cfg;
	int ret;

	if (!a->config)
		return sc_usage_error(apply ? "apply" : "check", "-c FILE is required");
	ret = sc_config_load(a->config, &cfg);
	if (ret) {
		pr_err("%s", cfg.err);
	} else if (apply) {
		ret = sc_config_apply(o, &cfg);
	} else {
		open_json_object(NULL);
		print_string(PRINT_ANY, "file", "%s: ", a->config);
		print_bool(PRINT_JSON, "valid", NULL, true);
		print_text("valid\n");
		close_json_object();
	}
	sc_config_free(&cfg);
	return ret;
}

int cmd_apply(const struct sc_opts *o, void *args, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return config_cmd(o, args, true);
}

int cmd_check(const struct sc_opts *o, void *args, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return config_cmd(o, args, false);
}
