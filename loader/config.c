// SPDX-License-Identifier: GPL-2.0
/*
 * config.c - "apply -c FILE" and "check -c FILE": the INI config file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "commit.h"
#include "config.h"
#include "ini.h"
#include "ops.h"

/* apply and check */
struct sc_config_args {
	__u32 given;
	const char *config;
	bool offline;		/* check: the file alone, no system access */
	bool dry_run;		/* apply: list what would change, change nothing */
};

#define SC_CFG_MAX_KEYS 128	/* distinct keys remembered for duplicates */
/* section headers remembered: [splitter], [agent], [health], [spill],
 * [dup], [route] and a [rule NAME] per rule of both families; more rules than
 * that are refused by the rule step with the per-family limit, which
 * names the cause */
#define SC_CFG_MAX_SECTIONS (6 + SC_CFG_MAX_TUNNELS + 2 * FS_MAX_RULES + 1)

struct parse_ctx {
	struct sc_config *cfg;
	const char *path;
	struct seen_key {
		char section[32];
		char key[48];
		int line;
	} seen[SC_CFG_MAX_KEYS];
	int nseen;
	char section[128];	/* of the previous key */
	/* the section headers read: each name once, none empty */
	struct seen_section {
		char name[SC_INI_MAX_SECTION + 1];
		int line;
	} sections[SC_CFG_MAX_SECTIONS];
	int nsections;
	int keys_in_section;	/* keys of the last header so far */
};

/* Record the first error (the parse then stops at this line). */
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

/* A key given twice (in one section) is an error: which one counts would
 * be a guess. 1 first time, 0 error recorded. */
static int first_time(struct parse_ctx *p, int line, const char *section,
		      const char *name)
{
	int i;

	for (i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i].section, section) && !strcmp(p->seen[i].key, name))
			return fail(p,
				    "%.64s: given twice (first on line %d): give it once (lists go "
				    "on one line)",
				    name, p->seen[i].line);
	if (p->nseen == SC_CFG_MAX_KEYS)
		return fail(p, "more than %d keys", SC_CFG_MAX_KEYS);
	snprintf(p->seen[p->nseen].section, sizeof(p->seen[0].section), "%s", section);
	snprintf(p->seen[p->nseen].key, sizeof(p->seen[0].key), "%s", name);
	p->seen[p->nseen++].line = line;
	return 1;
}

/* "interfaces: invalid interface name 'x': accepted: <lib's words>" */
static int bad_iface(struct parse_ctx *p, const char *name)
{
	char acc[160];

	sc_option_accepted(&(struct sc_option){ .type = SC_OPT_IFNAME }, acc, sizeof(acc));
	return fail(p, "interfaces: invalid interface name '%.64s': accepted: %s", name, acc);
}

/* The names only: whether they exist is for sc_config_validate(). */
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
			ret = bad_iface(p, tok);
		else if (cfg->nifaces == SC_MAX_IFACES)
			ret = fail(p, "interfaces: more than %d interfaces", SC_MAX_IFACES);
		else
			strcpy(cfg->ifaces[cfg->nifaces++], tok);	/* < IFNAMSIZ */
	}
	free(copy);
	if (ret && !cfg->nifaces)
		return fail(p, "interfaces: empty list");
	return ret;
}

/* [agent]: the agent's own keys (the same rows are options of "run") */
const struct sc_option sc_agent_opts[] = {
	SC_OPTION("interval", SC_OPT_SECONDS, struct sc_agent_args, interval,
		  .short_opt = 'i', .metavar = "S", .lo = 0.1, .hi = 3600,
		  .help = "seconds between idle sweeps and metric writes (default 10)"),
	SC_OPTION("textfile", SC_OPT_ABSPATH, struct sc_agent_args, textfile,
		  .short_opt = 't', .metavar = "PATH",
		  .help = "write metrics there (node_exporter textfile collector)"),
	SC_OPTION("listen", SC_OPT_LISTEN, struct sc_agent_args, listen, .short_opt = 'l',
		  .metavar = "ADDR:PORT", .noun = "address",
		  .help = "serve GET /metrics on this address (not loopback: needs --web-config)"),
	SC_OPTION("web-config", SC_OPT_ABSPATH, struct sc_agent_args, web_config,
		  .metavar = "FILE",
		  .help = "TLS and basic auth of --listen (Prometheus exporters' web config file)"),
	SC_OPTIONS_END,
};

/* [dup]: the rows of "dup attach" as keys (copy excepted: a command line
 * option only), and the agent's copy */
const struct sc_option sc_dup_file_opts[] = {
	SC_OPTION("attach", SC_OPT_YESNO, struct sc_dup_file, attach, .metavar = "yes|no",
		  .help = "apply attaches dedup on both tunnels and the copy (off: the agent's) on "
			  "SHORT, as dup attach (default no: the peer must run it too)"),
	SC_OPTION("dev", SC_OPT_INCLUDE, struct sc_dup_file, dev, .sub = sc_dup_attach_opts),
	SC_OPTION("agent", SC_OPT_INCLUDE, struct sc_dup_file, agent, .sub = dup_settings_opts),
	SC_OPTIONS_END,
};

void sc_config_help_keys(void)
{
	printf("key\t[splitter]\tinterfaces\tIF\n");
	sc_options_complete("[splitter]", sc_attach_opts, true);
	sc_options_complete("[agent]", sc_agent_opts, true);
	sc_options_complete("[health]", health_settings_opts, true);
	sc_options_complete("[spill]", spill_settings_opts, true);
	sc_options_complete("[dup]", sc_dup_file_opts, true);
	printf("key\t[tunnel NAME]\tkind\tvxlan|gre|ipip|wireguard\n");
	sc_options_complete("[tunnel NAME]", tcfg_tunnel_opts, true);
	sc_options_complete("[route]", tcfg_route_opts, true);
	sc_options_complete("[rule NAME]", sc_rule_opts, true);
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
			return fail(p, "unknown setting '%.64s': accepted: interfaces, %s", name,
				    names);
		return fail(p, "[%s]: unknown key '%.64s': accepted: %s", section, name, names);
	}
	v = keep(p->cfg, value);
	if (!v)
		return fail(p, "%s: too many values", name);
	if (sc_option_set(&r, v, "", err, sizeof(err)))
	{
		bool agent_table = t == health_settings_opts || t == spill_settings_opts ||
				   t == sc_dup_file_opts;

		return fail(p, "%s%s%s%s", agent_table ? "[" : "", agent_table ? section : "",
			    agent_table ? "]: " : "", err);
	}
	return 1;
}

/* [tunnel NAME]: "kind" and the rows of "tunnel add" (tcfg_tunnel_opts).
 * 1 ok, 0 error recorded. */
static int tunnel_key(struct parse_ctx *p, int line, const char *name, const char *key,
		      const char *value)
{
	struct sc_config *cfg = p->cfg;
	struct sc_config_tunnel *ct = NULL;
	char names[256] = "", section[64];
	struct sc_opt_ref r;
	int i;

	snprintf(section, sizeof(section), "tunnel %.32s", name);
	for (i = 0; i < cfg->ntunnels; i++)
		if (!strcmp(cfg->tunnels[i].name, name))
			ct = &cfg->tunnels[i];
	if (!ct) {
		if (!sc_valid_ifname(name)) {
			sc_option_accepted(&(struct sc_option){ .type = SC_OPT_IFNAME }, names,
					   sizeof(names));
			return fail(p, "[%s]: invalid tunnel name '%.32s': accepted: %s", section,
				    name, names);
		}
		if (cfg->ntunnels == SC_CFG_MAX_TUNNELS)
			return fail(p, "[%s]: more than %d [tunnel] sections", section,
				    SC_CFG_MAX_TUNNELS);
		ct = &cfg->tunnels[cfg->ntunnels++];
		snprintf(ct->name, sizeof(ct->name), "%s", name);
		/* errors about the whole section name its header */
		ct->line = p->nsections ? p->sections[p->nsections - 1].line : line;
	}
	if (!strcmp(key, "kind")) {
		snprintf(ct->kind, sizeof(ct->kind), "%.15s", value);
		return 1;
	}
	if (sc_option_find(tcfg_tunnel_opts, &ct->given, key, false, &r)) {
		sc_option_names(tcfg_tunnel_opts, names, sizeof(names));
		return fail(p, "[%s]: unknown key '%.64s': accepted: kind, %s", section, key,
			    names);
	}
	return table_key(p, tcfg_tunnel_opts, &ct->given, section, key, value);
}

static int section_key(struct parse_ctx *p, int line, const char *section,
		       const char *name, const char *value)
{
	struct sc_config *cfg = p->cfg;
	char err[256];

	if (!strcmp(section, "splitter")) {
		if (!strcmp(name, "interfaces")) {
			cfg->ifaces_line = line;
			return add_ifaces(p, value);
		}
		return table_key(p, sc_attach_opts, &cfg->splitter, section, name, value);
	}
	if (!strcmp(section, "agent"))
		return table_key(p, sc_agent_opts, &cfg->agent, section, name, value);
	if (!strcmp(section, "health"))
		return table_key(p, health_settings_opts, &cfg->health, section, name, value);
	if (!strcmp(section, "spill"))
		return table_key(p, spill_settings_opts, &cfg->spill, section, name, value);
	if (!strcmp(section, "dup"))
		return table_key(p, sc_dup_file_opts, &cfg->dup, section, name, value);
	if (!strcmp(section, "route")) {
		if (!cfg->route)
			cfg->route = tcfg_spec_new();
		if (!cfg->route)
			return fail(p, "[route]: routing support is not available");
		if (tcfg_spec_set(cfg->route, name, value, err, sizeof(err)))
			return fail(p, "%s", err);
		return 1;
	}
	if (!strncmp(section, "tunnel ", 7))
		return tunnel_key(p, line, section + 7, name, value);
	return fail(p,
		    "unknown section '[%.64s]': accepted: [splitter], [agent], [health], [spill], "
		    "[dup], [tunnel NAME], [route], [rule NAME]",
		    section);
}

/* sc_ini_handler: 0 to go on, 1 stop (the error is in cfg->err) */
static bool known_section(const char *section)
{
	return !strcmp(section, "splitter") || !strcmp(section, "agent") ||
	       !strcmp(section, "health") || !strcmp(section, "spill") ||
	       !strcmp(section, "dup") || !strcmp(section, "route") ||
	       (!strncmp(section, "tunnel ", 7) && section[7]) ||
	       (!strncmp(section, "rule ", 5) && section[5]);
}

/* The section before a new header (or the end of the file) had keys. */
static int section_done(struct parse_ctx *p)
{
	const struct seen_section *last;

	if (!p->nsections || p->keys_in_section)
		return 1;
	last = &p->sections[p->nsections - 1];
	if (!known_section(last->name))
		return fail(p,
			    "unknown section '[%.64s]': accepted: [splitter], [agent], [health], "
			    "[spill], [dup], [tunnel NAME], [route], [rule NAME]",
			    last->name);
	return fail(p, "[%s] (line %d) is empty: give it its keys or remove it", last->name,
		    last->line);
}

/* A "[section]" line: not seen before, and the previous one not empty
 * (nor unknown). 1 to go on. */
static int header(struct parse_ctx *p, int line, const char *section)
{
	int i;

	/* an unknown section is named at its first key (the keys' check),
	 * or at the next header or the end when it has none */
	if (!section_done(p))
		return 0;
	for (i = 0; i < p->nsections; i++)
		if (!strcmp(p->sections[i].name, section))
			return fail(p,
				    "[%s] given twice (first at line %d): accepted: one section "
				    "per name",
				    section, p->sections[i].line);
	if (p->nsections == SC_CFG_MAX_SECTIONS)
		return fail(p, "[%.64s]: too many sections: at most %d", section,
			    SC_CFG_MAX_SECTIONS);
	snprintf(p->sections[p->nsections].name, sizeof(p->sections[0].name), "%s", section);
	p->sections[p->nsections++].line = line;
	p->keys_in_section = 0;
	/* a new section, even of the name of the keys before */
	snprintf(p->section, sizeof(p->section), "%s", section);
	sc_rule_file_next_section(&p->cfg->rule_file);
	return 1;
}

static int handler(void *user, int line, const char *section, const char *name,
		   const char *value)
{
	struct parse_ctx *p = user;
	char err[512];

	if (!name)
		return !header(p, line, section);
	p->keys_in_section++;

	if (strncmp(section, p->section, sizeof(p->section))) {
		snprintf(p->section, sizeof(p->section), "%s", section);
		sc_rule_file_next_section(&p->cfg->rule_file);
	}
	/* [rule NAME]: rules.c checks its keys (and keys given twice) */
	if (!strncmp(section, "rule ", 5)) {
		if (sc_rule_file_key(&p->cfg->rule_file, section + 5, name, value, err,
				     sizeof(err)))
			return !fail(p, "%s", err);
		return 0;
	}
	if (!first_time(p, line, section, name))
		return 1;
	return !section_key(p, line, section, name, value);
}

/* [dup] attach = yes: what apply attaches, its devices the file's or the
 * [route]'s (dup_want). 0, or FS_EXIT_USAGE with the reason in cfg->err. */
static int dup_check(const char *path, struct sc_config *cfg)
{
	struct sc_dup_attach_args *w = &cfg->dup_want;
	const char *which[2] = { "short-dev", "long-dev" };
	char *dev[2] = { w->short_dev, w->long_dev };
	int i;

	sc_dup_attach_defaults(w);
	if (!cfg->dup.attach)
		return 0;
	sc_options_merge(sc_dup_attach_opts, w, &cfg->dup.dev);
	if (cfg->route && !w->short_dev[0])
		snprintf(w->short_dev, sizeof(w->short_dev), "%s", cfg->route->short_dev);
	if (cfg->route && !w->long_dev[0])
		snprintf(w->long_dev, sizeof(w->long_dev), "%s", cfg->route->long_dev);
	for (i = 0; i < 2; i++)
		if (!dev[i][0]) {
			snprintf(cfg->err, sizeof(cfg->err),
				 "%.200s: [dup]: attach = yes without %s: give short-dev and "
				 "long-dev, or a [route] with them",
				 path, which[i]);
			return FS_EXIT_USAGE;
		}
	if (!strcmp(w->short_dev, w->long_dev)) {
		snprintf(cfg->err, sizeof(cfg->err),
			 "%.200s: [dup]: short-dev and long-dev are both '%s': accepted: two "
			 "tunnel devices",
			 path, w->short_dev);
		return FS_EXIT_USAGE;
	}
	/* a tunnel of the file: an Ethernet one (the copies are frames) */
	for (i = 0; i < 2 * cfg->ntunnels; i++) {
		const struct sc_config_tunnel *ct = &cfg->tunnels[i / 2];

		if (strcmp(ct->name, dev[i % 2]) || !strcmp(ct->kind, "vxlan"))
			continue;
		snprintf(cfg->err, sizeof(cfg->err),
			 "%.200s: [dup]: %s '%s' is a [tunnel] of kind %s: accepted: a vxlan "
			 "tunnel (the copies are Ethernet frames)",
			 path, which[i % 2], dev[i % 2], ct->kind);
		return FS_EXIT_USAGE;
	}
	return 0;
}

/* The rules across keys, after the whole file was read; the settings
 * become the file's over the defaults (every one given). */
static int config_check(const char *path, struct sc_config *cfg)
{
	struct sc_settings *s = &cfg->splitter.settings;
	struct health_settings health;
	struct spill_settings spill;
	struct tcfg_ctx ctx;
	struct split_config tmp;
	char err[400];
	int i;

	if (!cfg->nifaces) {
		snprintf(
			cfg->err, sizeof(cfg->err),
			"%.200s: [splitter] interfaces is missing: name at least one LAN interface",
			path);
		return FS_EXIT_USAGE;
	}
	sc_config_defaults(&tmp, 1000);
	if (sc_settings_merge(&tmp, s, 1000, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	s->v = tmp;
	s->given = (1U << SC_SET_MAX) - 1;
	cfg->flows = sc_attach_given(&cfg->splitter, SC_ATTACH_FLOWS) ?
		     cfg->splitter.flows : FS_DEFAULT_FLOWS;
	if (cfg->splitter.hook == SC_HOOK_TC &&
	    sc_attach_given(&cfg->splitter, SC_ATTACH_MODE)) {
		snprintf(cfg->err, sizeof(cfg->err),
			 "%.200s: [splitter]: mode is an XDP attach mode: it cannot be combined "
			 "with hook = tc",
			 path);
		return FS_EXIT_USAGE;
	}
	if (health_settings_resolve(&health, &cfg->health, NULL, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [health]: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	if (spill_settings_resolve(&spill, &cfg->spill, NULL, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [spill]: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	/* the routes match the long code point this file gives the splitter */
	ctx.dscp_long = tmp.dscp_long;
	if (cfg->route && tcfg_spec_check_ctx(cfg->route, &ctx, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: [route]: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	for (i = 0; i < cfg->ntunnels; i++) {
		struct sc_config_tunnel *ct = &cfg->tunnels[i];

		if (!ct->kind[0]) {
			snprintf(cfg->err, sizeof(cfg->err),
				 "%.200s:%d: [tunnel %s]: kind is missing: accepted: vxlan (gre, "
				 "ipip, wireguard where the kernel has them)",
				 path, ct->line, ct->name);
			return FS_EXIT_USAGE;
		}
		ct->t = tcfg_tunnel_new(ct->name, ct->kind, err, sizeof(err));
		if (!ct->t) {
			snprintf(cfg->err, sizeof(cfg->err), "%.200s:%d: [tunnel %s]: %.200s", path,
				 ct->line, ct->name, err);
			return FS_EXIT_USAGE;
		}
		/* the keys given, over the defaults of the kind ("tunnel add") */
		sc_options_merge(tcfg_tunnel_opts, ct->t, &ct->given);
		if (tcfg_tunnel_check(ct->t, "", err, sizeof(err))) {
			snprintf(cfg->err, sizeof(cfg->err), "%.200s:%d: [tunnel %s]: %.200s", path,
				 ct->line, ct->name, err);
			return FS_EXIT_USAGE;
		}
	}
	if (sc_rule_file_rules(&cfg->rule_file, &cfg->rules, err, sizeof(err))) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: %.280s", path, err);
		return FS_EXIT_USAGE;
	}
	return dup_check(path, cfg);
}

/* Where an installation puts the shipped example: beside the config
 * (make install: /etc/flowsplit/flowsplit.conf.example), or with the
 * package's documentation (debian/rules). */
#define SC_CONFIG_EXAMPLE "flowsplit.conf.example"
#define SC_CONFIG_EXAMPLE_DOC "/usr/share/doc/flowsplit/examples/" SC_CONFIG_EXAMPLE

/* No config file at path (e.g. the unit's, after "make install"): what
 * to do, naming the example this system has. */
static void missing_file(struct sc_config *cfg, const char *path)
{
	char example[PATH_MAX], msg[4 * PATH_MAX];
	const char *slash = strrchr(path, '/');
	int n;

	snprintf(example, sizeof(example), "%.*s" SC_CONFIG_EXAMPLE,
		 slash ? (int)(slash - path + 1) : 0, path);
	if (access(example, R_OK))
		snprintf(example, sizeof(example), "%s", SC_CONFIG_EXAMPLE_DOC);
	n = snprintf(msg, sizeof(msg),
		     "%s: cannot read: %s: write one (a whole router: " SC_CONFIG_EXAMPLE
		     ", docs/config.md) and check it with 'splitctl check -c FILE'",
		     path, strerror(ENOENT));
	if (!access(example, R_OK) && n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n,
			 "; this system's example: cp %s %s, then edit it for this router "
			 "(interfaces, tunnels, routes)",
			 example, path);
	snprintf(cfg->err, sizeof(cfg->err), "%.*s", (int)sizeof(cfg->err) - 1, msg);
}

int sc_config_load(const char *path, struct sc_config *cfg)
{
	struct parse_ctx *p;
	char msg[sizeof(cfg->err)];
	const char *why;
	int line;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->agent.interval = SC_AGENT_INTERVAL_DEFAULT;
	/* in_file_open() refuses what is not a regular file (a directory, a
	 * FIFO: never blocks) */
	f = in_file_open(path);
	if (!f && errno == ENOENT) {
		missing_file(cfg, path);
		return FS_EXIT_RUNTIME;
	}
	if (!f) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: cannot read: %s%s", path,
			 strerror(errno),
			 errno == EISDIR   ? " (name a config file)"
			 : errno == EINVAL ? " (not a regular file)"
					   : "");
		return FS_EXIT_RUNTIME;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		fclose(f);
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: out of memory", path);
		return FS_EXIT_RUNTIME;
	}
	p->cfg = cfg;
	p->path = path;
	line = sc_ini_parse(f, handler, p, &why);
	if (!line && !section_done(p))
		line = p->sections[p->nsections - 1].line;
	if (f != stdin)
		fclose(f);
	free(p);
	if (line < 0) {
		snprintf(cfg->err, sizeof(cfg->err), "%.200s: cannot read: %s", path,
			 strerror(-line));
		return FS_EXIT_RUNTIME;
	}
	if (line) {
		snprintf(msg, sizeof(msg), "%.190s:%d: %.300s", path, line, why ? why : cfg->err);
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
	for (i = 0; i < cfg->ntunnels; i++)
		tcfg_tunnel_free(cfg->tunnels[i].t);
	sc_rule_file_free(&cfg->rule_file);
	sc_rule_set_free(&cfg->rules);
	memset(cfg, 0, sizeof(*cfg));
}

/* What is live in the instance of the pin directory, if anything. */
struct live_state {
	bool attached;			/* its maps are pinned */
	struct split_config cfg;
	__u32 flows;			/* entries of its flow table */
	__u32 flows_id;			/* its map id (another instance's
					 * splitter uses another one) */
	struct sc_iface ifs[SC_MAX_IFACES];
	int nifs;
};

/* 0 (live->attached false when nothing is attached), or an exit code
 * with the reason in err. */
static int live_read(const struct sc_opts *o, struct live_state *live, char *err,
		     size_t len)
{
	struct sc_state st;
	int ret;

	memset(live, 0, sizeof(*live));
	ret = sc_state_open(o, &st, 0);
	/* nothing attached; no bpffs there (yet): nothing live either (the
	 * attach of apply then says what is missing) */
	if (ret == -ESRCH || ret == -ENODATA || ret == -ENOENT || ret == -ENODEV)
		return 0;
	if (ret) {
		sc_state_strerror(ret, sc_pin_dir(o), err, len);
		return ret == -ENAMETOOLONG ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
	}
	ret = sc_config_read(&st, &live->cfg);
	if (!ret) {
		live->flows = fs_map__capacity(st.flows4_fd);
		live->flows_id = sc_flows_map_id(st.flows4_fd);
		live->nifs = sc_ifaces_list(st.dir, live->ifs, SC_MAX_IFACES);
		if (live->nifs < 0)
			ret = live->nifs;
	}
	sc_state_close(&st);
	if (ret) {
		snprintf(err, len, "cannot read the instance '%.200s': %s", sc_pin_dir(o),
			 strerror(-ret));
		return FS_EXIT_RUNTIME;
	}
	live->attached = true;
	return 0;
}

/* "FILE[:LINE]: reason" into cfg->err; returns code. */
static int vfail(struct sc_config *cfg, int line, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int vfail(struct sc_config *cfg, int line, int code, const char *fmt, ...)
{
	char msg[400], at[16] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(at, sizeof(at), ":%d", line);
	snprintf(cfg->err, sizeof(cfg->err), "%.100s%.12s: %.390s", cfg->path, at, msg);
	return code;
}

/* An upgrade keeps an interface's hook and XDP mode: the file may not ask
 * for others (attach would refuse it half-way through the list). */
static int check_hooks(struct sc_config *cfg, const struct live_state *live)
{
	const struct sc_attach_args *a = &cfg->splitter;
	bool mode_given = sc_attach_given(a, SC_ATTACH_MODE);
	int want = a->hook != SC_HOOK_AUTO ? a->hook : mode_given ? SC_HOOK_XDP : SC_HOOK_AUTO;
	const char *mode = a->mode == SC_MODE_NATIVE ? "native" : "generic";
	int i, j;

	for (i = 0; i < cfg->nifaces; i++)
		for (j = 0; j < live->nifs; j++) {
			const struct sc_iface *l = &live->ifs[j];

			if (strcmp(l->name, cfg->ifaces[i]))
				continue;
			if (want != SC_HOOK_AUTO && (int)l->hook != want)
				return vfail(cfg, 0, FS_EXIT_USAGE,
					     "interface '%s' runs the splitter at hook %s, the "
					     "file asks for %s: an upgrade keeps the hook "
					     "('splitctl detach %s' first)",
					     l->name, sc_hook_name(l->hook), sc_hook_name(want),
					     l->name);
			if (mode_given && a->mode != SC_MODE_AUTO && l->hook == SC_HOOK_XDP &&
			    strcmp(l->mode, mode))
				return vfail(cfg, 0, FS_EXIT_USAGE,
					     "interface '%s' runs the splitter in %s mode, the "
					     "file asks for %s: an upgrade keeps the mode "
					     "('splitctl detach %s' first)",
					     l->name, l->mode, mode, l->name);
		}
	return 0;
}

/* The name of program id (or "?"). */
static void prog_name(__u32 id, char *buf, size_t len)
{
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(buf, len, "?");
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(buf, len, "%s", info.name);
	if (fd >= 0)
		close(fd);
}

/* An interface the file attaches afresh at XDP must have no XDP program,
 * and none may run another instance's splitter: attach would refuse them
 * half-way through the list. */
static int check_foreign_xdp(const struct sc_opts *o, struct sc_config *cfg,
			     const struct live_state *live)
{
	const struct sc_attach_args *a = &cfg->splitter;
	bool mode_given = sc_attach_given(a, SC_ATTACH_MODE);
	char why[200], name[BPF_OBJ_NAME_LEN + 1];
	char other[PATH_MAX + 256];
	int i, j, hook, ifindex;

	for (i = 0; i < cfg->nifaces; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (sc_other_splitter(cfg->ifaces[i], live->flows_id, sc_pin_dir(o), other,
				      sizeof(other)))
			return vfail(cfg, cfg->ifaces_line, FS_EXIT_RUNTIME, "interfaces: %s",
				     other);
		for (j = 0; j < live->nifs && strcmp(live->ifs[j].name, cfg->ifaces[i]); j++)
			;
		if (j < live->nifs)
			continue;	/* ours: upgraded in place */
		hook = a->hook != SC_HOOK_AUTO ? a->hook : mode_given ? SC_HOOK_XDP :
		       (int)sc_hook_auto(cfg->ifaces[i], why, sizeof(why));
		ifindex = if_nametoindex(cfg->ifaces[i]);
		if (hook != SC_HOOK_XDP || !ifindex || bpf_xdp_query(ifindex, 0, &q) || !q.prog_id)
			continue;
		prog_name(q.prog_id, name, sizeof(name));
		return vfail(cfg, cfg->ifaces_line, FS_EXIT_RUNTIME,
			     "interfaces: interface '%s' already runs XDP program '%s' (id %u), "
			     "not attached by this instance ('%s'): detach it first",
			     cfg->ifaces[i], name, q.prog_id, sc_pin_dir(o));
	}
	return 0;
}

/* The agent writes its textfile beside itself (a temporary file renamed
 * over it): the directory must exist, or every sweep's metrics fail. */
static int check_textfile(struct sc_config *cfg)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (!cfg->agent.textfile)
		return 0;
	snprintf(dir, sizeof(dir), "%s", cfg->agent.textfile);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	int e = stat(dir, &st) ? errno : 0;

	if (e || !S_ISDIR(st.st_mode))
		return vfail(cfg, 0, FS_EXIT_RUNTIME,
			     "[agent] textfile '%.100s': directory '%.100s' %s: create it "
			     "(node_exporter's textfile collector directory) or leave textfile out",
			     cfg->agent.textfile, dir,
			     e == ENOENT ? "does not exist"
			     : e	 ? strerror(e)
					 : "is not a directory");
	return 0;
}

/* The file's tunnels against the kernel's: an interface of one's name that
 * splitctl did not make is refused; the route's devices among those apply
 * makes (or makes again) are checked once they exist. */
static int check_tunnels(struct sc_config *cfg)
{
	int i;

	cfg->route_check_later = false;
	for (i = 0; i < cfg->ntunnels; i++) {
		struct sc_config_tunnel *ct = &cfg->tunnels[i];

		ct->state = tcfg_tunnel_compare(ct->t, &ct->live, ct->differs,
						sizeof(ct->differs));
		if (ct->state < 0)
			return vfail(cfg, ct->line, FS_EXIT_RUNTIME, "[tunnel %s]: %s", ct->name,
				     ct->differs);
		if (ct->state != TCFG_TUNNEL_SAME && ct->t->dev[0] && !if_nametoindex(ct->t->dev))
			return vfail(cfg, ct->line, FS_EXIT_RUNTIME,
				     "[tunnel %s]: underlay interface '%s' does not exist",
				     ct->name, ct->t->dev);
		if (ct->state != TCFG_TUNNEL_SAME && cfg->route &&
		    (!strcmp(ct->name, cfg->route->short_dev) ||
		     !strcmp(ct->name, cfg->route->long_dev)))
			cfg->route_check_later = true;
	}
	return 0;
}

/* A [dup] device that is a tunnel apply makes (again): it exists only
 * after the tunnels step, with a new index. */
static bool dup_dev_remade(const struct sc_config *cfg, const char *dev)
{
	int i;

	for (i = 0; i < cfg->ntunnels; i++)
		if (!strcmp(cfg->tunnels[i].name, dev) &&
		    cfg->tunnels[i].state != TCFG_TUNNEL_SAME)
			return true;
	return false;
}

static bool dup_remade(const struct sc_config *cfg)
{
	return dup_dev_remade(cfg, cfg->dup_want.short_dev) ||
	       dup_dev_remade(cfg, cfg->dup_want.long_dev);
}

/* [dup] attach = yes: its devices exist and are Ethernet devices, or are
 * tunnels of the file (vxlan: dup_check()) that apply makes. */
static int check_dup(struct sc_config *cfg)
{
	const char *dev[2] = { cfg->dup_want.short_dev, cfg->dup_want.long_dev };
	const char *which[2] = { "short-dev", "long-dev" };
	char err[200];
	int i, ret;

	if (!cfg->dup.attach)
		return 0;
	for (i = 0; i < 2; i++) {
		if (dup_dev_remade(cfg, dev[i]))
			continue;
		ret = sc_dup_dev_check(dev[i], err, sizeof(err));
		if (ret)
			return vfail(cfg, 0, ret, "[dup] %s: %s", which[i], err);
	}
	return 0;
}

/* The loaded file against the system and the live instance of o, changing
 * nothing: 0, or an exit code with the reason in cfg->err. */
static int sc_config_validate(const struct sc_opts *o, struct sc_config *cfg)
{
	static struct live_state live;
	int dscp_long = cfg->splitter.settings.v.dscp_long;
	struct tcfg_ctx ctx;
	char err[300];
	int i, ret;

	for (i = 0; i < cfg->nifaces; i++) {
		ret = sc_iface_usable(cfg->ifaces[i], err, sizeof(err));
		if (ret)
			return vfail(cfg, cfg->ifaces_line, ret, "interfaces: %s", err);
	}
	ret = live_read(o, &live, err, sizeof(err));
	if (ret)
		return vfail(cfg, 0, ret, "%s", err);
	sc_route_ctx(dscp_long, &ctx);
	if (live.attached && live.flows != cfg->flows)
		return vfail(cfg, 0, FS_EXIT_RUNTIME,
			     "flows %u%s: the live flow table of '%.100s' has %u entries: a table "
			     "cannot be resized in place: re-attach ('splitctl detach --all', then "
			     "apply) or give flows = %u",
			     cfg->flows,
			     sc_attach_given(&cfg->splitter, SC_ATTACH_FLOWS)
				     ? ""
				     : " (the default: the key is left out)",
			     sc_pin_dir(o), live.flows, live.flows);
	ret = check_hooks(cfg, &live);
	if (!ret)
		ret = check_foreign_xdp(o, cfg, &live);
	if (!ret)
		ret = check_tunnels(cfg);
	if (!ret)
		ret = check_textfile(cfg);
	if (!ret)
		ret = check_dup(cfg);
	if (ret)
		return ret;
	if (cfg->route && cfg->route_check_later)
		return 0;	/* after apply made the tunnels */
	if (cfg->route) {
		ret = tcfg_route_check(cfg->route, &ctx, err, sizeof(err));
		if (ret)
			return vfail(cfg, 0, ret, "[route]: %s", err);
		return 0;
	}
	/* no [route]: the routes installed by "route up" follow the long
	 * code point (split mode) */
	ret = sc_commit_check(NULL, dscp_long, err, sizeof(err));
	if (ret)
		return vfail(cfg, 0, ret, "%s", err);
	return 0;
}

/* ---- what apply changes --------------------------------------------------- */
static struct sc_config_change *change(struct sc_config *cfg, const char *object,
				       const char *name, const char *action)
{
	struct sc_config_change *c;

	cfg->changes_total++;
	if (cfg->nchanges == SC_CFG_MAX_CHANGES)
		return NULL;
	c = &cfg->changes[cfg->nchanges++];
	memset(c, 0, sizeof(*c));
	c->object = object;
	c->action = action;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static void change_from_to(struct sc_config *cfg, const char *object, const char *name,
			   const char *from, const char *to)
{
	struct sc_config_change *c = change(cfg, object, name, "change");

	if (c) {
		snprintf(c->from, sizeof(c->from), "%s", from);
		snprintf(c->to, sizeof(c->to), "%s", to);
	}
}

/* The splitter's settings, as "set" names and values. */
static void settings_diff(struct sc_config *cfg, const struct split_config *a,
			  const struct split_config *b)
{
	static const struct {
		const char *name;
		__u32 flag;
		const char *on, *off;
	} flags[] = {
		{ "enabled", FS_CFG_F_ENABLED, "yes", "no" },
		{ "ack-short", FS_CFG_F_ACK_SHORT, "yes", "no" },
		{ "midstream", FS_CFG_F_MIDSTREAM_LONG, "long", "short" },
		{ "reshort", FS_CFG_F_RESHORT_BOUNDARY, "boundary", "off" },
		{ "spill", FS_CFG_F_SPILL, "yes", "no" },
	};
	const struct {
		const char *name;
		unsigned long long a, b;
	} nums[] = {
		{ "threshold", a->threshold, b->threshold },
		{ "dscp-short", a->dscp_short, b->dscp_short },
		{ "dscp-long", a->dscp_long, b->dscp_long },
		{ "threshold-bytes", a->threshold_bytes, b->threshold_bytes },
		{ "reshort-gap", a->reshort_gap_ms, b->reshort_gap_ms },
		{ "dscp-spill", a->dscp_spill, b->dscp_spill },
	};
	char from[32], to[32];
	size_t i;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (nums[i].a == nums[i].b)
			continue;
		snprintf(from, sizeof(from), "%llu", nums[i].a);
		snprintf(to, sizeof(to), "%llu", nums[i].b);
		change_from_to(cfg, "setting", nums[i].name, from, to);
	}
	if (a->idle_timeout_ms != b->idle_timeout_ms) {
		snprintf(from, sizeof(from), "%g", a->idle_timeout_ms / 1000.0);
		snprintf(to, sizeof(to), "%g", b->idle_timeout_ms / 1000.0);
		change_from_to(cfg, "setting", "idle-timeout", from, to);
	}
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if ((a->flags ^ b->flags) & flags[i].flag)
			change_from_to(cfg, "setting", flags[i].name,
				       a->flags & flags[i].flag ? flags[i].on : flags[i].off,
				       b->flags & flags[i].flag ? flags[i].on : flags[i].off);
}

/* A rule as one line: "10.9.0.0/16 port 443 mode auto threshold-bytes N". */
static void rule_text(const struct sc_rule *r, char *buf, size_t len)
{
	const struct flow_policy *p = &r->v.policy;
	char prefix[64];
	size_t off;

	sc_rule_prefix_str(r, prefix, sizeof(prefix));
	off = snprintf(buf, len, "%s", prefix);
	if (r->port && off < len)
		off += snprintf(buf + off, len - off, " port %u", r->port);
	if (off < len)
		off += snprintf(buf + off, len - off, " mode %s", sc_rule_mode_name(r));
	if ((p->flags & FS_POLICY_F_THRESHOLD) && off < len)
		off += snprintf(buf + off, len - off, " threshold %u", p->threshold);
	if (p->threshold_bytes && off < len)
		snprintf(buf + off, len - off, " threshold-bytes %llu",
			 (unsigned long long)p->threshold_bytes);
}

static void rules_diff(struct sc_config *cfg, const struct sc_rule_set *have,
		       const struct sc_rule_set *want)
{
	char a[200], b[200];
	int i, j;

	for (i = 0; i < want->n; i++) {
		rule_text(&want->r[i], b, sizeof(b));
		for (j = 0; j < have->n && strcmp(have->r[j].v.name, want->r[i].v.name); j++)
			;
		if (j == have->n) {
			struct sc_config_change *c = change(cfg, "rule", want->r[i].v.name, "add");

			if (c)
				snprintf(c->to, sizeof(c->to), "%s", b);
			continue;
		}
		rule_text(&have->r[j], a, sizeof(a));
		if (strcmp(a, b))
			change_from_to(cfg, "rule", want->r[i].v.name, a, b);
	}
	for (j = 0; j < have->n; j++) {
		for (i = 0; i < want->n && strcmp(have->r[j].v.name, want->r[i].v.name); i++)
			;
		if (i == want->n) {
			struct sc_config_change *c =
				change(cfg, "rule", have->r[j].v.name, "remove");

			if (c)
				rule_text(&have->r[j], c->from, sizeof(c->from));
		}
	}
}

/* [dup] against the live dup/ of the instance (none: nothing to remove) */
static void dup_diff(const struct sc_opts *o, struct sc_config *cfg)
{
	static const char *const actions[] = {
		[SC_DUP_ATTACH] = "attach", [SC_DUP_REATTACH] = "reattach",
		[SC_DUP_CHANGE] = "change", [SC_DUP_REMOVE] = "remove",
	};
	const struct sc_dup_attach_args *w = cfg->dup.attach ? &cfg->dup_want : NULL;
	char from[256], to[256], name[64] = "";
	struct sc_config_change *c;
	enum sc_dup_action act;

	act = sc_dup_plan(sc_pin_dir(o), w, w && dup_remade(cfg), from, sizeof(from), to,
			  sizeof(to));
	if (act == SC_DUP_KEEP)
		return;
	if (w)
		snprintf(name, sizeof(name), "%s/%s", w->short_dev, w->long_dev);
	c = change(cfg, "dup", name, actions[act]);
	if (!c)
		return;
	if (act != SC_DUP_ATTACH)
		snprintf(c->from, sizeof(c->from), "%s", from);
	if (act != SC_DUP_REMOVE)
		snprintf(c->to, sizeof(c->to), "%s", to);
}

static void route_key_diff(void *u, const char *key, const char *from, const char *to)
{
	change_from_to(u, "route", key, from, to);
}

/* What applying cfg changes of the live state (validated: cfg's tunnels
 * compared). Nothing is changed. */
static void config_diff(const struct sc_opts *o, struct sc_config *cfg)
{
	static struct live_state live;
	struct sc_rule_maps m = { { -1, -1 } };
	struct sc_rule_set have = { 0 };
	struct sc_config_change *c;
	char err[256];
	struct sc_state st;
	int i, j;

	cfg->nchanges = cfg->changes_total = 0;
	for (i = 0; i < cfg->ntunnels; i++) {
		struct sc_config_tunnel *ct = &cfg->tunnels[i];

		if (ct->state == TCFG_TUNNEL_ABSENT)
			change(cfg, "tunnel", ct->name, "create");
		else if (ct->state == TCFG_TUNNEL_DIFFERS && (c = change(cfg, "tunnel", ct->name,
									 "recreate")))
			snprintf(c->from, sizeof(c->from), "%s", ct->differs);
	}
	if (live_read(o, &live, err, sizeof(err)))
		live.attached = false;
	for (i = 0; i < cfg->nifaces; i++) {
		for (j = 0; j < live.nifs && strcmp(live.ifs[j].name, cfg->ifaces[i]); j++)
			;
		if (j == live.nifs)
			change(cfg, "interface", cfg->ifaces[i], "attach");
	}
	if (live.attached) {
		settings_diff(cfg, &live.cfg, &cfg->splitter.settings.v);
		if (!sc_state_open(o, &st, 0)) {
			if (!sc_rule_maps_open(st.dir, &m))
				sc_rules_read(&m, &have);
			sc_rule_maps_close(&m);
			sc_state_close(&st);
		}
	}
	rules_diff(cfg, &have, &cfg->rules);
	sc_rule_set_free(&have);
	dup_diff(o, cfg);
	if (cfg->route && tcfg_route_diff(cfg->route, route_key_diff, cfg) == -ENOENT &&
	    (c = change(cfg, "route", "", "install")))
		snprintf(c->to, sizeof(c->to), "mode %s, short-dev %s, long-dev %s",
			 cfg->route->mode == MODE_ECMP ? "ecmp" : "split", cfg->route->short_dev,
			 cfg->route->long_dev);
}

/* The file's tunnels that differ from the kernel's made (again); made[i]
 * says which. An exit code (the error printed); on a failure the ones
 * made go again. */
static int tunnels_make(struct sc_config *cfg, bool made[])
{
	int i, ret = 0;

	for (i = 0; i < cfg->ntunnels && !ret; i++) {
		struct sc_config_tunnel *ct = &cfg->tunnels[i];

		if (ct->state == TCFG_TUNNEL_SAME)
			continue;
		if (ct->state == TCFG_TUNNEL_DIFFERS && (ret = tcfg_tunnel_del(ct->name)))
			break;
		ret = tcfg_tunnel_add(ct->t);
		if (ret && ct->state == TCFG_TUNNEL_DIFFERS)
			tcfg_tunnel_add(&ct->live);	/* the one deleted, back */
		made[i] = !ret;
	}
	return ret;
}

/* Undo tunnels_make(): the new tunnels go, recreated ones come back. */
static void tunnels_undo(struct sc_config *cfg, const bool made[])
{
	int i;

	for (i = 0; i < cfg->ntunnels; i++) {
		if (!made[i])
			continue;
		tcfg_tunnel_del(cfg->tunnels[i].name);
		if (cfg->tunnels[i].state == TCFG_TUNNEL_DIFFERS)
			tcfg_tunnel_add(&cfg->tunnels[i].live);
	}
}

int sc_config_apply(const struct sc_opts *o, struct sc_config *cfg)
{
	return sc_config_apply_changes(o, cfg, false);
}

int sc_config_apply_changes(const struct sc_opts *o, struct sc_config *cfg, bool dry_run)
{
	struct sc_attach_args a = cfg->splitter;
	struct sc_iface ifs[SC_MAX_IFACES];
	bool fresh[SC_MAX_IFACES] = { false };
	bool made[SC_CFG_MAX_TUNNELS] = { false };
	struct sc_rule_set rules_before = { 0 };
	struct sc_dup_saved dup_saved = { 0 };
	struct sc_commit commit;
	bool rules_done = false;
	struct tcfg_ctx ctx;
	char err[300];
	int i = 0, j, n, ret;

	/* everything checked before the first change */
	ret = sc_config_validate(o, cfg);
	if (ret) {
		pr_err("%s", cfg->err);
		return ret;
	}
	config_diff(o, cfg);
	if (dry_run)
		return 0;
	sc_route_ctx(cfg->splitter.settings.v.dscp_long, &ctx);
	ctx.dscp_short = cfg->splitter.settings.v.dscp_short;	/* the LONG shaper's */
	/* the tunnels first: the route's check needs its devices */
	ret = tunnels_make(cfg, made);
	if (!ret && cfg->route && cfg->route_check_later) {
		ret = tcfg_route_check(cfg->route, &ctx, err, sizeof(err));
		if (ret)
			pr_err("%.100s: [route]: %s", cfg->path, err);
	}
	if (ret) {
		tunnels_undo(cfg, made);
		return ret;
	}
	sc_commit_begin(&commit, o, NULL);
	n = sc_ifaces_list(sc_pin_dir(o), ifs, SC_MAX_IFACES);
	/* the table size: validated against a live table; the size of a new one */
	a.flows = cfg->flows;
	for (i = 0; i < cfg->nifaces; i++) {
		fresh[i] = true;
		for (j = 0; j < n; j++)
			if (!strcmp(ifs[j].name, cfg->ifaces[i]))
				fresh[i] = false;
		/* an interface already attached is upgraded in place, and the
		 * maps are reused: the flows stay */
		ret = sc_attach(o, cfg->ifaces[i], &a);
		if (ret)
			break;	/* i: the one that failed, left as it was */
	}
	/* the live rules become exactly the file's (none: no rules) */
	if (!ret) {
		ret = sc_rules_apply(o, &cfg->rules, &rules_before);
		rules_done = !ret;
	}
	/* dup on the tunnel devices (it shares the splitter's fs_config),
	 * or none */
	if (!ret)
		ret = sc_dup_apply(o, cfg->dup.attach ? &cfg->dup_want : NULL,
				   cfg->dup.attach && dup_remade(cfg), &dup_saved);
	if (!ret && cfg->route)
		ret = tcfg_route_up(cfg->route, &ctx);
	else if (!ret)
		ret = sc_commit_follow(&commit, NULL);
	if (ret) {
		/* all or nothing: undo the rules, the attachments this call
		 * made, the settings it changed and the tunnels it made */
		sc_dup_restore(o, &dup_saved);
		if (rules_done)
			sc_rules_restore(o, &rules_before);
		for (j = 0; j < i; j++)
			if (fresh[j])
				sc_detach(o, cfg->ifaces[j]);
		sc_commit_rollback(&commit, NULL);
		tunnels_undo(cfg, made);
	}
	sc_rule_set_free(&rules_before);
	return ret;
}

/* What apply changed (or, dry_run, would change): one document. */
static void print_changes(const struct sc_config *cfg, bool dry_run)
{
	int i;

	open_json_object(NULL);
	print_string(PRINT_ANY, "file", "%s", cfg->path);
	print_bool(PRINT_JSON, "dry_run", NULL, dry_run);
	print_uint(PRINT_JSON, "changed", NULL, cfg->changes_total);
	if (!cfg->changes_total)
		print_text(dry_run ? ": no change would be made\n" : ": no change\n");
	else
		print_text(dry_run ? ": would make %d change(s)\n" : ": %d change(s)\n",
			   cfg->changes_total);
	open_json_array(PRINT_JSON, "changes");
	for (i = 0; i < cfg->nchanges; i++) {
		const struct sc_config_change *c = &cfg->changes[i];

		open_json_object(NULL);
		print_string(PRINT_ANY, "object", "  %s", c->object);
		print_string(PRINT_ANY, "name", c->name[0] ? " %s" : "%s", c->name);
		print_string(PRINT_ANY, "action", ": %s", c->action);
		print_string(PRINT_JSON, "from", NULL, c->from);
		print_string(PRINT_JSON, "to", NULL, c->to);
		if (c->from[0] && c->to[0])
			print_text(" %s -> %s", c->from, c->to);
		else if (c->from[0] || c->to[0])
			print_text(" (%s)", c->from[0] ? c->from : c->to);
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	if (cfg->nchanges < cfg->changes_total)
		print_text("  ... and %d more\n", cfg->changes_total - cfg->nchanges);
	close_json_object();
}

/* [agent]'s metrics endpoint as "run" checks it before it starts: the web
 * config (its keys, hashes, certificate and key) and listen. */
static int check_agent_web(struct sc_config *cfg)
{
	char err[600];
	int ret = sc_agent_web_check(&cfg->agent, err, sizeof(err));

	return ret ? vfail(cfg, 0, ret, "[agent] %s", err) : 0;
}

static int config_cmd(const struct sc_opts *o, const struct sc_config_args *a,
		      bool apply)
{
	struct sc_config cfg;
	int ret;

	if (!a->config)
		return sc_print_usage_error(apply ? "apply" : "check", "-c FILE is required");
	ret = sc_config_load(a->config, &cfg);
	if (!ret && !apply && !a->offline)
		ret = sc_config_validate(o, &cfg);
	/* files, not the system: offline too */
	if (!ret && !apply)
		ret = check_agent_web(&cfg);
	if (ret) {
		pr_err("%s", cfg.err);
	} else if (apply) {
		ret = sc_config_apply_changes(o, &cfg, a->dry_run);
		if (!ret)
			print_changes(&cfg, a->dry_run);
	} else {
		open_json_object(NULL);
		print_string(PRINT_ANY, "file", "%s: ", a->config);
		print_bool(PRINT_JSON, "valid", NULL, true);
		print_bool(PRINT_JSON, "offline", NULL, a->offline);
		print_text(a->offline ? "valid (offline: the file alone)\n" : "valid\n");
		close_json_object();
	}
	sc_config_free(&cfg);
	return ret;
}

static int cmd_apply(const struct sc_call *c)
{
	return config_cmd(c->o, c->args, true);
}

static int cmd_check(const struct sc_call *c)
{
	return config_cmd(c->o, c->args, false);
}

/* -c FILE, the same option of apply and check */
#define CONFIG_FILE_OPTION \
	SC_OPTION("config", SC_OPT_STRING, struct sc_config_args, config, \
		  .short_opt = 'c', .metavar = "FILE", .help = "the config file (required)")

static const struct sc_option config_opts[] = {
	CONFIG_FILE_OPTION,
	SC_OPTION("dry-run", SC_OPT_FLAG, struct sc_config_args, dry_run,
		  .help = "validate and print what would change, change nothing"),
	SC_OPTIONS_END,
};

static const struct sc_option check_opts[] = {
	CONFIG_FILE_OPTION,
	SC_OPTION("offline", SC_OPT_FLAG, struct sc_config_args, offline,
		  .help = "judge the file alone: no interface needs to exist, no live instance is "
			  "read"),
	SC_OPTIONS_END,
};

const struct sc_cmd sc_cmd_apply =
	SC_CMD("apply", cmd_apply, "-c FILE [--dry-run]",
	       "apply a config file (all or nothing) and print what changed", config_opts,
	       struct sc_config_args);
const struct sc_cmd sc_cmd_check =
	SC_CMD("check", cmd_check, "-c FILE [--offline]",
	       "validate a config file as apply would, without applying it", check_opts,
	       struct sc_config_args);
