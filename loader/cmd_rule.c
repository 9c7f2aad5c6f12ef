// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_rule.c - "rule add|del|show": the live policy rules (rules.h). Every
 * change reads the live rules under the instance lock, makes the new set
 * and hands both to sc_rules_replace(): all of it, or nothing.
 */
#include <errno.h>
#include <string.h>

#include "commands.h"
#include "rules.h"

/* The pinned tries, or one error line and an exit code. */
static int open_rule_maps(const struct sc_state *st, struct sc_rule_maps *m)
{
	if (!sc_rule_maps_open(st->dir, m))
		return 0;
	pr_err("instance '%s' has no rule tables (%s, %s): it was attached by an older splitctl; "
	       "'splitctl detach --all' and attach again",
	       st->dir, FS_MAP_RULES4, FS_MAP_RULES6);
	return FS_EXIT_RUNTIME;
}

/*
 * Under the lock: the live rules become @set (apply), or the live ones with
 * @add added or the rule named @del deleted; @before (may be NULL) gets
 * the rules there were. An exit code, the error printed.
 */
static int rules_change(const struct sc_state *st, const struct sc_rule *add,
			const char *del, const struct sc_rule_set *set,
			struct sc_rule_set *before)
{
	struct sc_rule_set have = { 0 }, want = { 0 };
	struct sc_rule_maps m = { { -1, -1 } };
	char err[512];
	int ret, e;

	ret = open_rule_maps(st, &m);
	if (ret)
		goto out;
	ret = FS_EXIT_RUNTIME;
	if ((e = sc_rules_read(&m, &have)) || (!set && (e = sc_rules_read(&m, &want)))) {
		pr_err("cannot read the rules: %s", strerror(-e));
		goto out;
	}
	if (add && (e = sc_rule_set_add(&want, add, err, sizeof(err)))) {
		if (e == -ENOMEM)
			pr_err("cannot add the rule: %s", strerror(-e));
		else
			pr_err("%s", err);
		ret = e == -ENOMEM ? FS_EXIT_RUNTIME : FS_EXIT_USAGE;
		goto out;
	}
	if (del && sc_rule_set_del(&want, del)) {
		pr_err("no rule '%s' (see 'splitctl rule show')", del);
		goto out;
	}
	e = sc_rules_replace(st, &m, &have, set ? set : &want);
	if (e) {
		pr_err("cannot change the rules: %s", strerror(-e));
		goto out;
	}
	ret = FS_EXIT_OK;
	if (before) {
		*before = have;
		memset(&have, 0, sizeof(have));
	}
out:
	sc_rule_set_free(&have);
	sc_rule_set_free(&want);
	sc_rule_maps_close(&m);
	return ret;
}

/* The rule itself, before the instance is opened: a usage error is one. */
static int check_rule_add(const struct sc_call *c)
{
	const struct sc_rule_args *a = c->args;
	struct sc_rule r;
	char err[512];

	if (!a->name)
		return sc_print_usage_error("rule add", "expected a rule name (see -h)");
	if (sc_rule_build(a, a->name, "--", &r, err, sizeof(err))) {
		pr_err("%s", err);
		return FS_EXIT_USAGE;
	}
	return FS_EXIT_OK;
}

static void print_rule(const char *key, const struct sc_rule *r, enum output_type t);

/* -j: what a change did, {"added"|"removed": RULE, "rules": N} (text:
 * nothing, as before). */
static void print_change(const struct sc_call *c, const char *key, const struct sc_rule *r)
{
	struct sc_rule_maps m = { { -1, -1 } };
	struct sc_rule_set now = { 0 };

	if (!c->o->json)
		return;
	open_json_object(NULL);
	print_rule(key, r, PRINT_JSON);
	if (!sc_rule_maps_open(c->st->dir, &m) && !sc_rules_read(&m, &now))
		print_uint(PRINT_JSON, "rules", NULL, now.n);
	close_json_object();
	sc_rule_set_free(&now);
	sc_rule_maps_close(&m);
}

static int cmd_rule_add(const struct sc_call *c)
{
	const struct sc_rule_args *a = c->args;
	struct sc_rule r;
	char err[512];
	int ret;

	sc_rule_build(a, a->name, "--", &r, err, sizeof(err));	/* checked */
	ret = rules_change(c->st, &r, NULL, NULL, NULL);
	if (!ret)
		print_change(c, "added", &r);
	return ret;
}

static int check_rule_del(const struct sc_call *c)
{
	const struct sc_rule_args *a = c->args;

	if (!a->name)
		return sc_print_usage_error("rule del", "expected a rule name (see -h)");
	return FS_EXIT_OK;
}

static int cmd_rule_del(const struct sc_call *c)
{
	const struct sc_rule_args *a = c->args;
	struct sc_rule_set before = { 0 };
	int ret, i;

	ret = rules_change(c->st, NULL, a->name, NULL, &before);
	for (i = 0; !ret && i < before.n; i++)
		if (!strcmp(before.r[i].v.name, a->name))
			print_change(c, "removed", &before.r[i]);
	sc_rule_set_free(&before);
	return ret;
}

/* One rule: a line of "rule show" (t t), or its object alone
 * (PRINT_JSON), under key (NULL in an array). */
static void print_rule(const char *key, const struct sc_rule *r, enum output_type t)
{
	const struct flow_policy *p = &r->v.policy;
	char prefix[64];

	sc_rule_prefix_str(r, prefix, sizeof(prefix));
	open_json_object(key);
	print_string(t, "name", "%s:", r->v.name);
	print_string(t, "prefix", " prefix %s", prefix);
	if (r->port)
		print_uint(t, "port", " port %llu", r->port);
	else
		print_null(t, "port", " any port", NULL);
	print_string(t, "mode", ", mode %s", sc_rule_mode_name(r));
	if (p->flags & FS_POLICY_F_THRESHOLD)
		print_uint(t, "threshold", ", threshold %llu", p->threshold);
	else
		print_null(PRINT_JSON, "threshold", NULL, NULL);
	if (p->threshold_bytes)
		print_uint(t, "threshold_bytes", ", threshold-bytes %llu",
			   p->threshold_bytes);
	else
		print_null(PRINT_JSON, "threshold_bytes", NULL, NULL);
	if (p->mode == FS_MODE_GLOBAL)
		print_string(t & PRINT_FP, NULL, "%s", " (the global thresholds)");
	if (t & PRINT_FP)
		print_nl();
	close_json_object();
}

static int cmd_rule_show(const struct sc_call *c)
{
	struct sc_rule_maps m = { { -1, -1 } };
	struct sc_rule_set set = { 0 };
	int ret, e, i;

	ret = open_rule_maps(c->st, &m);
	if (ret)
		goto out;
	e = sc_rules_read(&m, &set);
	if (e) {
		pr_err("cannot read the rules: %s", strerror(-e));
		ret = FS_EXIT_RUNTIME;
		goto out;
	}
	sc_rule_set_sort(&set);
	if (!set.n)
		print_text("no rules: every flow follows the global settings\n");
	open_json_array(PRINT_JSON, NULL);
	for (i = 0; i < set.n; i++)
		print_rule(NULL, &set.r[i], PRINT_ANY);
	close_json_array(PRINT_JSON, NULL);
out:
	sc_rule_set_free(&set);
	sc_rule_maps_close(&m);
	return ret;
}

/* "rule del NAME" */
static const struct sc_option rule_del_opts[] = {
	SC_OPTION("name", SC_OPT_STRING, struct sc_rule_args, name,
		  .positional = true, .noun = "rule name"),
	SC_OPTIONS_END,
};

/* apply: the rules of the file replace the live ones, all or nothing. */
int sc_rules_apply(const struct sc_opts *o, const struct sc_rule_set *want,
		   struct sc_rule_set *before)
{
	struct sc_state st;
	int ret;

	ret = sc_state_open_cmd(o, &st, 1);
	if (ret)
		return ret;
	ret = rules_change(&st, NULL, NULL, want, before);
	sc_state_close(&st);
	return ret;
}

void sc_rules_restore(const struct sc_opts *o, const struct sc_rule_set *before)
{
	struct sc_rule_maps m = { { -1, -1 } };
	struct sc_rule_set now = { 0 };
	struct sc_state st;
	int e;

	if (sc_state_open(o, &st, 1))
		return;
	if (!sc_rule_maps_open(st.dir, &m)) {
		e = sc_rules_read(&m, &now);
		if (!e)
			e = sc_rules_replace(&st, &m, &now, before);
		if (e)
			pr_err("could not put the previous rules back: %s", strerror(-e));
	}
	sc_rule_set_free(&now);
	sc_rule_maps_close(&m);
	sc_state_close(&st);
}

static const struct sc_cmd sc_cmd_rule_add =
	SC_CMD("add", cmd_rule_add, "NAME", "add a rule (checked against the others first)",
	       sc_rule_opts, struct sc_rule_args, .check = check_rule_add, .state = SC_STATE_LOCK);
static const struct sc_cmd sc_cmd_rule_del =
	SC_CMD("del", cmd_rule_del, "NAME", "remove a rule", rule_del_opts,
	       struct sc_rule_args, .check = check_rule_del, .state = SC_STATE_LOCK);
static const struct sc_cmd sc_cmd_rule_show =
	SC_CMD("show", cmd_rule_show, "", "the rules", sc_no_opts, struct sc_no_args,
	       .state = SC_STATE_READ);
static const struct sc_cmd *const rule_cmds[] = {
	&sc_cmd_rule_add, &sc_cmd_rule_del, &sc_cmd_rule_show, NULL,
};
const struct sc_cmd sc_cmd_rule =
	SC_CMD_GROUP("rule", "add|del|show ...",
		     "rules by remote prefix and port: class mode and thresholds", rule_cmds);
