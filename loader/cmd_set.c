// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_set.c - "set NAME VALUE [NAME VALUE]...": change live settings. The
 * pairs are rows of the settings table (settings.c), each value checked
 * once; all of them are merged onto a copy of the live config and written
 * in one update through the commit path (commit.h: the routes of "route
 * up" follow a new long code point), or nothing changes.
 */
#include <string.h>

#include "commands.h"
#include "commit.h"

/* NAME VALUE pairs through the settings table: each value checked once. */
static int parse_pairs(int argc, char **argv, struct sc_settings *s)
{
	char err[512], names[256] = "";
	struct sc_opt_ref r;
	int i;

	if (!argc || argc % 2) {
		sc_option_names(sc_setting_opts, names, sizeof(names));
		return sc_print_usage_error("set", "expected NAME VALUE pairs; names: %s", names);
	}
	for (i = 0; i < argc; i += 2) {
		if (sc_option_find(sc_setting_opts, s, argv[i], false, &r)) {
			sc_option_names(sc_setting_opts, names, sizeof(names));
			pr_err("unknown setting '%s': accepted: %s", argv[i], names);
			return FS_EXIT_USAGE;
		}
		if (sc_option_set(&r, argv[i + 1], "", err, sizeof(err))) {
			pr_err("%s", err);
			return FS_EXIT_USAGE;
		}
	}
	return 0;
}

/* The pairs, before the instance is opened: a usage error is one. */
static int check_set(const struct sc_call *c)
{
	return parse_pairs(c->argc, c->argv, c->args);
}

static int cmd_set(const struct sc_call *c)
{
	const struct sc_settings *s = c->args;
	struct sc_commit commit;
	struct split_config cfg;
	char err[400];
	unsigned int hz;
	__u64 now;
	int ret;

	ret = sc_clock_now(c->st, &now, &hz);
	if (ret) {
		pr_err("cannot read the datapath clock: %s", strerror(-ret));
		return FS_EXIT_RUNTIME;
	}
	ret = sc_config_read(c->st, &cfg);
	if (ret) {
		pr_err("cannot read the config map: %s", strerror(-ret));
		return FS_EXIT_RUNTIME;
	}
	sc_commit_begin(&commit, c->o, c->st);
	/* all pairs on a copy; written in one update or not at all */
	if (sc_settings_merge(&cfg, s, hz, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_USAGE;
	}
	ret = sc_commit_check(&commit, cfg.dscp_long, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		return ret;
	}
	ret = sc_config_write(c->st, &cfg);
	if (ret) {
		pr_err("cannot write the config map: %s", strerror(-ret));
		return FS_EXIT_RUNTIME;
	}
	ret = sc_commit_follow(&commit, c->st);
	if (ret)
		return ret;
	open_json_object(NULL);
	sc_print_config(&cfg, 0);
	close_json_object();
	return FS_EXIT_OK;
}

const struct sc_cmd sc_cmd_set =
	SC_CMD("set", cmd_set, "NAME VALUE [NAME VALUE]...", "change settings live (see Settings)",
	       sc_no_opts, struct sc_settings, .free_args = true, .check = check_set,
	       .state = SC_STATE_LOCK, .keys = sc_setting_opts);
