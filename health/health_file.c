// SPDX-License-Identifier: GPL-2.0
/*
 * health_file.c - the tunnel health a running agent publishes for
 * "route show" (and "status") and for "route up":
 *
 *   TCFG_STATE_DIR/health-<netns inode>.json, written whole or not at all
 *   {"version": 1, "netns_cookie": N, "pid": P, "updated_mono_ns": T,
 *    "mode": "split"|"ecmp", "both_down": "keep"|"main",
 *    "states": [SHORT, LONG], "in_force_states": [SHORT, LONG],
 *    "tunnels": [{"role", "dev", "state", "since_mono_ns", "rtt_last_ns",
 *                 "rtt_ewma_ns", "timeout_ns", "loss", "flaps", "probes", "missed",
 *                 "link_down", "families": [{"family": "ipv4"|"ipv6", "target",
 *                 "state", "rtt_last_ns", "loss", "probes", "missed"}]}],
 *    "spill": {"active", "dev", "state", "generation", "grants", "taken",
 *              "rate_bps", "capacity_bps", "short_bps", "spilled_bps", "top_bps",
 *              "queue_delay_ns": [SHORT, LONG] (null: none), "one_way",
 *              "backoffs", "backoffs_foreign", "holds", "why"},
 *    "dup": {"running", "attached", "setting", "copy", "losing",
 *            "lost": [SHORT, LONG], "window": [SHORT, LONG],
 *            "quiet_left_ns", "changes", "why"},
 *    "roles": {"active", "mode": "auto"|"fixed", "swapped", "cause",
 *              "hold_left_ns", "moves": {CAUSE: N}, "why",
 *              "quality": [SHORT, LONG: {"ready", "base_rtt_ns", "queue_ns",
 *                          "jitter_ns", "loss", "expected_ns", "seen_ns",
 *                          "busy"}]}}
 *
 * States are "init", "up", "down". The plans are not stored but derived
 * from the states (health_plan()) and "roles"."swapped" (roles_plan()), so a reader with other
 * settings (a new "route up" switching the mode) derives the plan for its own mode.
 * "in_force_states" are the states whose plan is installed: a WAIT or KEEP
 * plan leaves the one before in force. A file whose agent is gone (it
 * no longer holds the agent lock of agent_lock.c) counts as absent. A
 * tunnel's "families" are the address families the agent probes through
 * it, each with its own state machine; its "state" is down when one of
 * them is, up when all are (a file without "families" is not judged on
 * them). Times are CLOCK_MONOTONIC,
 * which every process of the system shares.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "agent_lock.h"
#include "health_file.h"
#include "json_print.h"
#include "tcfg.h"
#include "util.h"

#define HEALTH_FILE_NAME "health"	/* health-<netns inode>.json */

static const char *const role_name[HEALTH_TUNNELS] = { "short", "long" };

static const char *family_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

static int state_from_name(const char *s, enum health_state *st)
{
	if (!strcmp(s, "init"))
		*st = HEALTH_INIT;
	else if (!strcmp(s, "up"))
		*st = HEALTH_UP;
	else if (!strcmp(s, "down"))
		*st = HEALTH_DOWN;
	else
		return -EINVAL;
	return 0;
}

/*
 * The plain fields of a record: one table per record serves the writer
 * and the reader, so a field cannot be written under one key and read
 * under another. A field missing from the file reads as 0 / false.
 */
enum field_kind { FIELD_U64, FIELD_DOUBLE, FIELD_BOOL };	/* FIELD_U64: __u64 or uint64_t */
struct field {
	const char *key;
	enum field_kind kind;
	size_t off;
};
#define FIELD(key, kind, type, member) { key, kind, offsetof(type, member) }
#define FIELDS(a) (a), sizeof(a) / sizeof((a)[0])

static const struct field tunnel_fields[] = {
	FIELD("since_mono_ns", FIELD_U64, struct health_file_tunnel, since_mono_ns),
	FIELD("rtt_last_ns", FIELD_U64, struct health_file_tunnel, rtt_last_ns),
	FIELD("rtt_ewma_ns", FIELD_U64, struct health_file_tunnel, rtt_ewma_ns),
	FIELD("timeout_ns", FIELD_U64, struct health_file_tunnel, timeout_ns),
	FIELD("loss", FIELD_DOUBLE, struct health_file_tunnel, loss),
	FIELD("flaps", FIELD_U64, struct health_file_tunnel, flaps),
	FIELD("probes", FIELD_U64, struct health_file_tunnel, probes),
	FIELD("missed", FIELD_U64, struct health_file_tunnel, missed),
	FIELD("link_down", FIELD_BOOL, struct health_file_tunnel, link_down),
};
static const struct field family_fields[] = {
	FIELD("rtt_last_ns", FIELD_U64, struct health_file_family, rtt_last_ns),
	FIELD("loss", FIELD_DOUBLE, struct health_file_family, loss),
	FIELD("probes", FIELD_U64, struct health_file_family, probes),
	FIELD("missed", FIELD_U64, struct health_file_family, missed),
};
/* the grants and the rates, in this order */
static const struct field spill_rate_fields[] = {
	FIELD("grants", FIELD_U64, struct spill_view, grants),
	FIELD("taken", FIELD_U64, struct spill_view, taken),
	FIELD("rate_bps", FIELD_U64, struct spill_view, rate_bps),
	FIELD("capacity_bps", FIELD_U64, struct spill_view, cap_bps),
	FIELD("short_bps", FIELD_U64, struct spill_view, short_bps),
	FIELD("spilled_bps", FIELD_U64, struct spill_view, used_bps),
	FIELD("top_bps", FIELD_U64, struct spill_view, top_bps),
};
/* after the queueing delays */
static const struct field spill_more_fields[] = {
	FIELD("one_way", FIELD_BOOL, struct spill_view, one_way),
	FIELD("backoffs", FIELD_U64, struct spill_view, backoffs),
	FIELD("backoffs_foreign", FIELD_U64, struct spill_view, backoffs_foreign),
	FIELD("holds", FIELD_U64, struct spill_view, holds),
};
static const struct field quality_fields[] = {
	FIELD("ready", FIELD_BOOL, struct roles_tunnel_view, ready),
	FIELD("base_rtt_ns", FIELD_U64, struct roles_tunnel_view, base_ns),
	FIELD("queue_ns", FIELD_U64, struct roles_tunnel_view, queue_ns),
	FIELD("jitter_ns", FIELD_U64, struct roles_tunnel_view, jitter_ns),
	FIELD("loss", FIELD_DOUBLE, struct roles_tunnel_view, loss),
	FIELD("expected_ns", FIELD_U64, struct roles_tunnel_view, expected_ns),
	FIELD("seen_ns", FIELD_U64, struct roles_tunnel_view, seen_ns),
	FIELD("busy", FIELD_BOOL, struct roles_tunnel_view, busy),
};

static void fields_put(struct json_object *o, const void *rec, const struct field *f, size_t n)
{
	const char *p = rec;
	struct json_object *v;
	uint64_t u;
	size_t i;

	for (i = 0; i < n; i++) {
		if (f[i].kind == FIELD_U64) {
			memcpy(&u, p + f[i].off, sizeof(u));	/* either spelling */
			v = json_object_new_uint64(u);
		} else if (f[i].kind == FIELD_DOUBLE)
			v = json_object_new_double(*(const double *)(p + f[i].off));
		else
			v = json_object_new_boolean(*(const bool *)(p + f[i].off));
		json_object_object_add(o, f[i].key, v);
	}
}

static void fields_get(struct json_object *o, void *rec, const struct field *f, size_t n)
{
	char *p = rec;
	struct json_object *v;
	size_t i;

	for (i = 0; i < n; i++) {
		bool has = json_object_object_get_ex(o, f[i].key, &v);
		uint64_t u = has ? json_object_get_uint64(v) : 0;

		if (f[i].kind == FIELD_U64)
			memcpy(p + f[i].off, &u, sizeof(u));	/* either spelling */
		else if (f[i].kind == FIELD_DOUBLE)
			*(double *)(p + f[i].off) = has ? json_object_get_double(v) : 0;
		else
			*(bool *)(p + f[i].off) = has && json_object_get_boolean(v);
	}
}

static struct json_object *states_json(const enum health_state st[HEALTH_TUNNELS])
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < HEALTH_TUNNELS; i++)
		json_object_array_add(a, json_object_new_string(health_state_name(st[i])));
	return a;
}

static struct json_object *tunnel_json(int role, const struct health_file_tunnel *t)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "role", json_object_new_string(role_name[role]));
	json_object_object_add(o, "dev", json_object_new_string(t->dev));
	json_object_object_add(o, "state", json_object_new_string(health_state_name(t->state)));
	fields_put(o, t, FIELDS(tunnel_fields));
	if (t->nfam >= 0) {
		struct json_object *a = json_object_new_array(), *f;
		int i;

		for (i = 0; i < t->nfam; i++) {
			f = json_object_new_object();
			json_object_object_add(
				f, "family", json_object_new_string(family_name(t->fam[i].family)));
			json_object_object_add(f, "target",
					       json_object_new_string(t->fam[i].target));
			json_object_object_add(f, "state", json_object_new_string(
				health_state_name(t->fam[i].state)));
			fields_put(f, &t->fam[i], FIELDS(family_fields));
			json_object_array_add(a, f);
		}
		json_object_object_add(o, "families", a);
	}
	return o;
}

static struct json_object *spill_json(const struct spill_view *v)
{
	struct json_object *o = json_object_new_object(), *a;
	int t;

	json_object_object_add(o, "active", json_object_new_boolean(v->active));
	if (!v->active)
		return o;
	json_object_object_add(o, "dev", json_object_new_string(v->dev[HEALTH_SHORT]));
	json_object_object_add(o, "state", json_object_new_string(spill_state_name(v->state)));
	json_object_object_add(o, "generation", json_object_new_int(v->gen));
	fields_put(o, v, FIELDS(spill_rate_fields));
	a = json_object_new_array();
	for (t = 0; t < HEALTH_TUNNELS; t++)
		json_object_array_add(a,
				      v->qd_valid[t] ? json_object_new_uint64(v->qd_ns[t]) : NULL);
	json_object_object_add(o, "queue_delay_ns", a);
	fields_put(o, v, FIELDS(spill_more_fields));
	json_object_object_add(o, "why", json_object_new_string(v->why));
	return o;
}

static struct json_object *pair_json(const uint32_t v[DUP_TUNNELS])
{
	struct json_object *a = json_object_new_array();
	int t;

	for (t = 0; t < DUP_TUNNELS; t++)
		json_object_array_add(a, json_object_new_uint64(v[t]));
	return a;
}

static struct json_object *dup_json(const struct dup_view *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "running", json_object_new_boolean(v->running));
	if (!v->running)
		return o;
	json_object_object_add(o, "attached", json_object_new_boolean(v->attached));
	json_object_object_add(o, "setting",
			       json_object_new_string(dup_copy_mode_name(v->setting)));
	json_object_object_add(o, "copy", json_object_new_boolean(v->copy));
	json_object_object_add(o, "losing", json_object_new_boolean(v->losing));
	json_object_object_add(o, "lost", pair_json(v->lost));
	json_object_object_add(o, "window", pair_json(v->len));
	json_object_object_add(o, "quiet_left_ns", json_object_new_uint64(v->quiet_left_ns));
	json_object_object_add(o, "changes", json_object_new_uint64(v->changes));
	json_object_object_add(o, "why", json_object_new_string(v->why));
	return o;
}

static struct json_object *roles_json(const struct health_file *hf)
{
	const struct roles_view *v = &hf->roles;
	struct json_object *o = json_object_new_object(), *m, *a, *q;
	int c, t;

	json_object_object_add(o, "active", json_object_new_boolean(v->active));
	json_object_object_add(o, "swapped", json_object_new_boolean(hf->swapped));
	if (!v->active)
		return o;
	json_object_object_add(o, "mode", json_object_new_string(roles_mode_name(v->mode)));
	json_object_object_add(o, "cause", json_object_new_string(roles_cause_name(v->cause)));
	json_object_object_add(o, "hold_left_ns", json_object_new_uint64(v->hold_left_ns));
	m = json_object_new_object();
	for (c = 0; c < ROLES_CAUSES; c++)
		json_object_object_add(m, roles_cause_name(c), json_object_new_uint64(v->moves[c]));
	json_object_object_add(o, "moves", m);
	json_object_object_add(o, "why", json_object_new_string(v->why));
	a = json_object_new_array();
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		q = json_object_new_object();
		fields_put(q, &v->t[t], FIELDS(quality_fields));
		json_object_array_add(a, q);
	}
	json_object_object_add(o, "quality", a);
	return o;
}

int health_file_write(const struct health_file *hf, struct tcfg_err *e)
{
	enum health_state st[HEALTH_TUNNELS];
	struct json_object *o, *a;
	int i;

	o = tcfg_json_doc_new();
	json_object_object_add(o, "pid", json_object_new_int(hf->pid));
	json_object_object_add(o, "updated_mono_ns", json_object_new_uint64(hf->updated_mono_ns));
	json_object_object_add(o, "mode", json_object_new_string(hf->mode == HEALTH_MODE_ECMP ?
								 "ecmp" : "split"));
	json_object_object_add(o, "both_down", json_object_new_string(
		hf->both_down == HEALTH_BOTH_DOWN_MAIN ? "main" : "keep"));
	for (i = 0; i < HEALTH_TUNNELS; i++)
		st[i] = hf->t[i].state;
	json_object_object_add(o, "states", states_json(st));
	json_object_object_add(o, "in_force_states", states_json(hf->in_force_state));
	a = json_object_new_array();
	for (i = 0; i < HEALTH_TUNNELS; i++)
		json_object_array_add(a, tunnel_json(i, &hf->t[i]));
	json_object_object_add(o, "tunnels", a);
	json_object_object_add(o, "spill", spill_json(&hf->spill));
	json_object_object_add(o, "dup", dup_json(&hf->dup));
	json_object_object_add(o, "roles", roles_json(hf));
	return tcfg_state_write(HEALTH_FILE_NAME, o, e);
}

int health_file_remove(void)
{
	struct tcfg_err ignored;

	return tcfg_state_remove(HEALTH_FILE_NAME, &ignored);
}

/* ---- reading ------------------------------------------------------------------- */
static __u64 get_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : "";
}

static int get_states(struct json_object *o, const char *key, enum health_state st[HEALTH_TUNNELS])
{
	struct json_object *a;
	int i;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) != HEALTH_TUNNELS)
		return -EINVAL;
	for (i = 0; i < HEALTH_TUNNELS; i++)
		if (state_from_name(json_object_get_string(json_object_array_get_idx(a, i)),
				    &st[i]))
			return -EINVAL;
	return 0;
}

/* A tunnel's "families" (nfam -1 without the key). */
static int get_families(struct json_object *o, struct health_file_tunnel *t)
{
	struct json_object *a, *f;
	int i;

	t->nfam = -1;
	if (!json_object_object_get_ex(o, "families", &a))
		return 0;
	if (!json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) > HEALTH_FAMILIES)
		return -EINVAL;
	t->nfam = json_object_array_length(a);
	for (i = 0; i < t->nfam; i++) {
		struct health_file_family *x = &t->fam[i];

		f = json_object_array_get_idx(a, i);
		if (!strcmp(get_str(f, "family"), "ipv4"))
			x->family = AF_INET;
		else if (!strcmp(get_str(f, "family"), "ipv6"))
			x->family = AF_INET6;
		else
			return -EINVAL;
		snprintf(x->target, sizeof(x->target), "%s", get_str(f, "target"));
		if (state_from_name(get_str(f, "state"), &x->state))
			return -EINVAL;
		fields_get(f, x, FIELDS(family_fields));
	}
	return 0;
}

static int get_tunnel(struct json_object *o, struct health_file_tunnel *t)
{
	snprintf(t->dev, sizeof(t->dev), "%s", get_str(o, "dev"));
	if (state_from_name(get_str(o, "state"), &t->state))
		return -EINVAL;
	fields_get(o, t, FIELDS(tunnel_fields));
	if (get_families(o, t))
		return -EINVAL;
	return 0;
}

static void get_spill(struct json_object *o, struct spill_view *v)
{
	struct json_object *s, *a, *x;
	int t;

	memset(v, 0, sizeof(*v));
	if (!json_object_object_get_ex(o, "spill", &s) ||
	    !json_object_object_get_ex(s, "active", &x) || !json_object_get_boolean(x))
		return;
	v->active = true;
	snprintf(v->dev[HEALTH_SHORT], sizeof(v->dev[HEALTH_SHORT]), "%s", get_str(s, "dev"));
	for (v->state = SPILL_OFF; v->state < SPILL_STATES; v->state++)
		if (!strcmp(get_str(s, "state"), spill_state_name(v->state)))
			break;
	if (v->state == SPILL_STATES)
		v->state = SPILL_OFF;
	v->gen = get_u64(s, "generation");
	fields_get(s, v, FIELDS(spill_rate_fields));
	if (json_object_object_get_ex(s, "queue_delay_ns", &a) &&
	    json_object_is_type(a, json_type_array) &&
	    json_object_array_length(a) == HEALTH_TUNNELS)
		for (t = 0; t < HEALTH_TUNNELS; t++) {
			x = json_object_array_get_idx(a, t);
			v->qd_valid[t] = x != NULL;
			v->qd_ns[t] = x ? json_object_get_uint64(x) : 0;
		}
	fields_get(s, v, FIELDS(spill_more_fields));
	snprintf(v->why, sizeof(v->why), "%s", get_str(s, "why"));
}

static bool get_bool(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static void get_pair(struct json_object *o, const char *key, uint32_t v[DUP_TUNNELS])
{
	struct json_object *a;
	int t;

	if (json_object_object_get_ex(o, key, &a) && json_object_is_type(a, json_type_array) &&
	    json_object_array_length(a) == DUP_TUNNELS)
		for (t = 0; t < DUP_TUNNELS; t++)
			v[t] = json_object_get_uint64(json_object_array_get_idx(a, t));
}

static void get_dup(struct json_object *o, struct dup_view *v)
{
	struct json_object *d;
	int m;

	memset(v, 0, sizeof(*v));
	if (!json_object_object_get_ex(o, "dup", &d) || !get_bool(d, "running"))
		return;
	v->running = true;
	v->attached = get_bool(d, "attached");
	for (m = DUP_COPY_AUTO; m <= DUP_COPY_OFF; m++)
		if (!strcmp(get_str(d, "setting"), dup_copy_mode_name(m)))
			v->setting = m;
	v->copy = get_bool(d, "copy");
	v->losing = get_bool(d, "losing");
	get_pair(d, "lost", v->lost);
	get_pair(d, "window", v->len);
	for (m = 0; m < DUP_TUNNELS; m++)
		v->loss_ppm[m] = v->len[m] ? (uint64_t)v->lost[m] * 1000000 / v->len[m] : 0;
	v->quiet_left_ns = get_u64(d, "quiet_left_ns");
	v->changes = get_u64(d, "changes");
	snprintf(v->why, sizeof(v->why), "%s", get_str(d, "why"));
}

static void get_roles(struct json_object *o, struct health_file *hf)
{
	struct roles_view *v = &hf->roles;
	struct json_object *r, *m, *a;
	int c, t;

	memset(v, 0, sizeof(*v));
	if (!json_object_object_get_ex(o, "roles", &r))
		return;
	hf->swapped = get_bool(r, "swapped");
	v->swapped = hf->swapped;
	if (!get_bool(r, "active"))
		return;
	v->active = true;
	v->mode = strcmp(get_str(r, "mode"), "fixed") ? ROLES_AUTO : ROLES_FIXED;
	for (c = 0; c < ROLES_CAUSES; c++)
		if (!strcmp(get_str(r, "cause"), roles_cause_name(c)))
			v->cause = c;
	v->hold_left_ns = get_u64(r, "hold_left_ns");
	if (json_object_object_get_ex(r, "moves", &m))
		for (c = 0; c < ROLES_CAUSES; c++)
			v->moves[c] = get_u64(m, roles_cause_name(c));
	snprintf(v->why, sizeof(v->why), "%s", get_str(r, "why"));
	if (!json_object_object_get_ex(r, "quality", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) != HEALTH_TUNNELS)
		return;
	for (t = 0; t < HEALTH_TUNNELS; t++)
		fields_get(json_object_array_get_idx(a, t), &v->t[t], FIELDS(quality_fields));
}

static int parse_health(struct json_object *o, struct health_file *hf)
{
	enum health_state st[HEALTH_TUNNELS];
	struct json_object *a;
	int i;

	memset(hf, 0, sizeof(*hf));
	hf->pid = get_u64(o, "pid");
	hf->updated_mono_ns = get_u64(o, "updated_mono_ns");
	hf->mode = strcmp(get_str(o, "mode"), "ecmp") ? HEALTH_MODE_SPLIT : HEALTH_MODE_ECMP;
	hf->both_down = strcmp(get_str(o, "both_down"), "main") ? HEALTH_BOTH_DOWN_KEEP :
								   HEALTH_BOTH_DOWN_MAIN;
	if (hf->pid <= 0 || get_states(o, "states", st) ||
	    get_states(o, "in_force_states", hf->in_force_state) ||
	    !json_object_object_get_ex(o, "tunnels", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) != HEALTH_TUNNELS)
		return -EINVAL;
	for (i = 0; i < HEALTH_TUNNELS; i++)
		if (get_tunnel(json_object_array_get_idx(a, i), &hf->t[i]))
			return -EINVAL;
	get_spill(o, &hf->spill);
	get_dup(o, &hf->dup);
	get_roles(o, hf);
	hf->plan = roles_plan(health_plan(hf->mode, hf->both_down, st), hf->swapped);
	hf->in_force = roles_plan(health_plan(hf->mode, hf->both_down, hf->in_force_state),
				  hf->swapped);
	return 0;
}

/* 0; -ENOENT: no agent publishes here (no file, another namespace's, or
 * its agent is gone); -EINVAL unreadable. */
static int health_file_read(struct health_file *hf, struct tcfg_err *e)
{
	struct json_object *o;
	char path[TCFG_STATE_PATH_MAX];
	int ret;

	ret = tcfg_state_read(HEALTH_FILE_NAME, path, sizeof(path), &o, e);
	if (ret)
		return ret;
	ret = parse_health(o, hf);
	json_object_put(o);
	if (ret)
		return tcfg_fail(e, EINVAL, "%s: unreadable tunnel health", path);
	/* an agent that died without removing its file publishes nothing:
	 * the writer must hold this namespace's agent lock now (a PID alone
	 * may have been reused) */
	if (agent_lock_holder() != hf->pid)
		return -ENOENT;
	return 0;
}

int health_file_dup(struct dup_view *v)
{
	static struct health_file hf;
	struct tcfg_err ignored;

	memset(v, 0, sizeof(*v));
	if (health_file_read(&hf, &ignored))
		return -ENOENT;
	*v = hf.dup;
	return 0;
}

void health_file_in_force(struct tcfg_in_force *f)
{
	static struct health_file hf;
	struct tcfg_err ignored;
	enum health_state st[HEALTH_TUNNELS];
	enum health_mode m;
	int t, s_down, l_down;

	memset(f, 0, sizeof(*f));
	if (health_file_read(&hf, &ignored))
		return;
	f->pid = hf.pid;
	f->families_known = true;
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		int i;

		snprintf(f->dev[t], sizeof(f->dev[t]), "%s", hf.t[t].dev);
		f->down[t] = hf.in_force_state[t] == HEALTH_DOWN;
		f->families_known &= hf.t[t].nfam >= 0;
		for (i = 0; i < hf.t[t].nfam; i++)
			f->probed[t][hf.t[t].fam[i].family == AF_INET6] = true;
	}
	/* every pair of states planned for either mode: "route up" may
	 * switch the mode, or give the devices other roles */
	for (m = HEALTH_MODE_SPLIT; m <= HEALTH_MODE_ECMP; m++)
		for (s_down = 0; s_down < 2; s_down++)
			for (l_down = 0; l_down < 2; l_down++) {
				st[HEALTH_SHORT] = s_down ? HEALTH_DOWN : HEALTH_UP;
				st[HEALTH_LONG] = l_down ? HEALTH_DOWN : HEALTH_UP;
				/* the roles in force: both up, swapped */
				f->plan[m][s_down][l_down] =
					roles_plan(health_plan(m, hf.both_down, st), hf.swapped);
			}
}

/* ---- route show ------------------------------------------------------------------ */
static double ms(__u64 ns)
{
	return ns / 1e6;
}

/* The families probed through a tunnel: one line, "health:   ipv4 up via
 * 192.168.101.2 (rtt 0.21 ms, loss 0.0 %), ipv6 ..." */
static void show_families(const struct health_file_tunnel *t)
{
	int i;

	if (t->nfam < 0)
		return;
	open_json_array(PRINT_JSON, "families");
	print_string(PRINT_FP, NULL, "%s", "health:   families probed:");
	if (!t->nfam)
		print_string(PRINT_FP, NULL, "%s", " none");
	for (i = 0; i < t->nfam; i++) {
		const struct health_file_family *x = &t->fam[i];

		open_json_object(NULL);
		print_string(PRINT_ANY, "family", i ? ", %s" : " %s", family_name(x->family));
		print_string(PRINT_ANY, "state", " %s", health_state_name(x->state));
		print_string(PRINT_ANY, "target", " via %s", x->target);
		print_float(PRINT_ANY, "rtt_ms", " (rtt %.2f ms", ms(x->rtt_last_ns));
		print_float(PRINT_ANY, "loss_pct", ", loss %.1f %%)", x->loss * 100);
		print_uint(PRINT_JSON, "probes", NULL, x->probes);
		print_uint(PRINT_JSON, "missed", NULL, x->missed);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	print_nl();
}

static void show_tunnel(int role, const struct health_file_tunnel *t, __u64 now_mono)
{
	double for_s = now_mono > t->since_mono_ns ? (now_mono - t->since_mono_ns) / 1e9 : 0;
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	open_json_object(NULL);
	print_string(PRINT_ANY, "dev", "health: %s", t->dev);
	print_string(PRINT_ANY, "role", " (%s)", role_name[role]);
	print_string(PRINT_ANY, "state", " %s", health_state_name(t->state));
	print_float(PRINT_ANY, "for_s", " for %.1f s", for_s);
	print_float(PRINT_JSON, "since_unix", NULL, rt.tv_sec + rt.tv_nsec / 1e9 - for_s);
	if (t->link_down && t->state == HEALTH_DOWN)
		print_string(PRINT_FP, NULL, "%s", " (link down)");
	print_bool(PRINT_JSON, "link_down", NULL, t->link_down);
	print_float(PRINT_ANY, "rtt_ms", ", rtt %.2f ms", ms(t->rtt_last_ns));
	print_float(PRINT_ANY, "rtt_avg_ms", " (avg %.2f)", ms(t->rtt_ewma_ns));
	print_float(PRINT_ANY, "timeout_ms", ", timeout %.0f ms", ms(t->timeout_ns));
	print_float(PRINT_ANY, "loss_pct", ", loss %.1f %%", t->loss * 100);
	print_uint(PRINT_ANY, "flaps", ", flaps %llu", t->flaps);
	print_uint(PRINT_JSON, "probes", NULL, t->probes);
	print_uint(PRINT_JSON, "missed", NULL, t->missed);
	print_nl();
	show_families(t);
	close_json_object();
}

/* The "spill" object of route show / status: what spills now, and why. */
static void show_spill(const struct spill_view *v)
{
	char rate[32], cap[32], sh[32], used[32], top[32];
	int t;

	open_json_object("spill");
	print_bool(PRINT_JSON, "active", NULL, v->active);
	if (!v->active) {
		print_string(PRINT_FP, NULL, "%s\n", "spill: off (not running on these tunnels)");
		close_json_object();
		return;
	}
	sc_rate_text(v->rate_bps, rate, sizeof(rate));
	sc_rate_text(v->cap_bps, cap, sizeof(cap));
	sc_rate_text(v->short_bps, sh, sizeof(sh));
	sc_rate_text(v->used_bps, used, sizeof(used));
	sc_rate_text(v->top_bps, top, sizeof(top));
	print_string(PRINT_ANY, "dev", "spill: on %s", v->dev[HEALTH_SHORT]);
	print_string(PRINT_ANY, "state", " %s", spill_state_name(v->state));
	print_uint(PRINT_ANY, "generation", ", generation %u", v->gen);
	print_uint(PRINT_ANY, "grants", ", grants %llu", v->grants);
	print_uint(PRINT_ANY, "taken", " (taken %llu)", v->taken);
	print_uint(PRINT_JSON, "rate_bps", NULL, v->rate_bps);
	print_string(PRINT_FP, NULL, ", rate %s", v->state == SPILL_OFF ? "-" : rate);
	print_uint(PRINT_JSON, "spilled_bps", NULL, v->used_bps);
	print_string(PRINT_FP, NULL, " (sent %s)", used);
	print_uint(PRINT_JSON, "capacity_bps", NULL, v->cap_bps);
	print_string(PRINT_FP, NULL, ", capacity %s", v->cap_bps ? cap : "-");
	print_uint(PRINT_JSON, "short_bps", NULL, v->short_bps);
	print_string(PRINT_FP, NULL, ", short traffic %s", sh);
	print_uint(PRINT_JSON, "top_bps", NULL, v->top_bps);
	print_string(PRINT_FP, NULL, ", top %s", top);
	print_nl();
	open_json_object("queue_delay_ms");
	print_string(PRINT_FP, NULL, "%s", "spill: queueing delay");
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		if (v->qd_valid[t])
			print_float(PRINT_ANY, role_name[t],
				    t ? ", long %.2f ms" : " short %.2f ms", v->qd_ns[t] / 1e6);
		else
			print_null(PRINT_ANY, role_name[t], t ? ", long %s" : " short %s", "-");
	}
	close_json_object();
	print_string(PRINT_ANY, "delay_source", " (from %s)", v->one_way ? "timestamps" : "rtts");
	print_uint(PRINT_ANY, "backoffs", ", back-offs %llu", v->backoffs);
	print_uint(PRINT_ANY, "backoffs_foreign", " (%llu on a queue not SHORT's own)",
		   v->backoffs_foreign);
	print_uint(PRINT_ANY, "holds", ", holds %llu", v->holds);
	print_nl();
	print_string(PRINT_ANY, "why", "spill: why: %s", v->why[0] ? v->why : "-");
	print_nl();
	close_json_object();
}

/* The "dup" object of route show / status: whether the short class is
 * copied now, and why. */
static void show_dup(const struct dup_view *v)
{
	int t;

	open_json_object("dup");
	print_bool(PRINT_JSON, "running", NULL, v->running);
	if (!v->running) {
		print_string(PRINT_FP, NULL, "%s\n",
			     "dup: the agent does not look at the loss yet");
		close_json_object();
		return;
	}
	print_bool(PRINT_JSON, "attached", NULL, v->attached);
	print_string(PRINT_ANY, "setting", "dup: setting %s", dup_copy_mode_name(v->setting));
	print_bool(PRINT_ANY, "copy", ", copy %s", v->copy);
	print_string(PRINT_FP, NULL, "%s", v->copy ? " (short class protected: copied onto LONG)" :
		     v->attached ? " (dedup only)" : " (dup not attached)");
	print_bool(PRINT_JSON, "losing", NULL, v->losing);
	print_nl();
	open_json_object("probe_loss");
	print_string(PRINT_FP, NULL, "%s", "dup: probe loss");
	for (t = 0; t < DUP_TUNNELS; t++) {
		open_json_object(role_name[t]);
		print_uint(PRINT_ANY, "lost", t ? ", long %llu" : " short %llu", v->lost[t]);
		print_uint(PRINT_ANY, "window", " of %llu", v->len[t]);
		print_float(PRINT_JSON, "ratio", NULL, v->loss_ppm[t] / 1e6);
		print_float(PRINT_FP, NULL, " (%.1f %%)", v->loss_ppm[t] / 1e4);
		close_json_object();
	}
	close_json_object();
	print_string(PRINT_FP, NULL, "%s", v->losing ? ", SHORT losing" : "");
	print_float(PRINT_ANY, "quiet_left_s",
		    v->quiet_left_ns ? ", off in %.0f s without loss" : "", v->quiet_left_ns / 1e9);
	print_uint(PRINT_ANY, "changes", ", changes %llu", v->changes);
	print_nl();
	print_string(PRINT_ANY, "why", "dup: why: %s", v->why[0] ? v->why : "-");
	print_nl();
	close_json_object();
}

/* The "roles" object of route show / status: which tunnel carries the
 * short class, why, and each tunnel's quality. */
static void show_roles(const struct health_file *hf)
{
	const struct roles_view *v = &hf->roles;
	int c, t;

	open_json_object("roles");
	print_bool(PRINT_JSON, "active", NULL, v->active);
	if (!v->active) {
		print_string(PRINT_FP, NULL, "%s\n", "roles: none (ecmp mode)");
		close_json_object();
		return;
	}
	print_string(PRINT_ANY, "mode", "roles: %s", roles_mode_name(v->mode));
	print_bool(PRINT_JSON, "swapped", NULL, hf->swapped);
	print_string(PRINT_ANY, "short_class_dev", ", short class on %s",
		     hf->t[hf->swapped ? HEALTH_LONG : HEALTH_SHORT].dev);
	print_string(PRINT_FP, NULL, "%s", hf->swapped ? " (swapped)" : "");
	print_string(PRINT_ANY, "cause", ", cause %s", roles_cause_name(v->cause));
	print_float(PRINT_ANY, "hold_left_s", ", hold-down %.1f s", v->hold_left_ns / 1e9);
	open_json_object("moves");
	print_string(PRINT_FP, NULL, "%s", ", moves");
	for (c = ROLES_CAUSE_BASE; c < ROLES_CAUSES; c++) {
		char fmt[32];

		snprintf(fmt, sizeof(fmt), "%s%s %%llu", c == ROLES_CAUSE_BASE ? " " : ", ",
			 roles_cause_name(c));
		print_uint(PRINT_ANY, roles_cause_name(c), fmt, v->moves[c]);
	}
	close_json_object();
	print_nl();
	print_string(PRINT_ANY, "why", "roles: why: %s", v->why);
	print_nl();
	open_json_array(PRINT_JSON, "quality");
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		const struct roles_tunnel_view *tv = &v->t[t];

		open_json_object(NULL);
		print_string(PRINT_ANY, "dev", "quality: %s", hf->t[t].dev);
		print_string(PRINT_ANY, "role", " (%s)", role_name[t]);
		print_bool(PRINT_JSON, "ready", NULL, tv->ready);
		print_float(PRINT_ANY, "base_rtt_ms", " base %.2f ms", ms(tv->base_ns));
		print_float(PRINT_ANY, "queue_ms", ", queue %.2f ms", ms(tv->queue_ns));
		print_float(PRINT_ANY, "jitter_ms", ", jitter %.2f ms", ms(tv->jitter_ns));
		print_float(PRINT_ANY, "loss_pct", ", loss %.1f %%", tv->loss * 100);
		print_float(PRINT_ANY, "expected_ms", ", expected %.2f ms", ms(tv->expected_ns));
		print_float(PRINT_ANY, "seen_ms", ", judged %.2f ms", ms(tv->seen_ns));
		print_bool(PRINT_JSON, "busy", NULL, tv->busy);
		print_string(PRINT_FP, NULL, "%s", tv->busy ? " (busy with our traffic)" : "");
		print_string(PRINT_FP, NULL, "%s", tv->ready ? "" : " (not enough answers yet)");
		print_nl();
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
}

void health_file_show(const struct health_file *hf, bool monitored)
{
	char plan[64], in_force[64];
	int i;

	open_json_object("health");
	print_bool(PRINT_JSON, "monitored", NULL, monitored);
	if (!monitored) {
		print_string(PRINT_FP, NULL, "%s\n",
			     "health: not monitored (no agent publishes tunnel health)");
		close_json_object();
		return;
	}
	print_int(PRINT_JSON, "pid", NULL, hf->pid);
	health_plan_format(&hf->plan, plan, sizeof(plan));
	health_plan_format(&hf->in_force, in_force, sizeof(in_force));
	print_string(PRINT_ANY, "plan", "plan: %s", plan);
	print_string(PRINT_ANY, "in_force", " (in force: %s)", in_force);
	print_string(PRINT_ANY, "both_down", ", both down: %s",
		     hf->both_down == HEALTH_BOTH_DOWN_MAIN ? "main" : "keep");
	print_int(PRINT_FP, NULL, ", agent pid %lld", hf->pid);
	print_nl();
	open_json_array(PRINT_JSON, "tunnels");
	for (i = 0; i < HEALTH_TUNNELS; i++)
		show_tunnel(i, &hf->t[i], mono_ns());
	close_json_array(PRINT_JSON, NULL);
	show_spill(&hf->spill);
	show_dup(&hf->dup);
	show_roles(hf);
	close_json_object();
}

void health_show(void)
{
	static struct health_file hf;
	struct tcfg_err e;

	health_file_show(&hf, !health_file_read(&hf, &e));
}
