// SPDX-License-Identifier: GPL-2.0
/*
 * rules.c - policy rules: checks, sets, and the pinned LPM tries (rules.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "rules.h"

static const struct sc_enum rule_mode_values[] = {
	{ "auto", FS_MODE_AUTO }, { "short", FS_MODE_SHORT },
	{ "long", FS_MODE_LONG }, { NULL, 0 },
};

/* "rule add" options; without the positional name, the [rule NAME] keys */
const struct sc_option sc_rule_opts[] = {
	SC_OPTION("prefix", SC_OPT_STRING, struct sc_rule_args, prefix,
		  .metavar = "CIDR", .noun = "prefix",
		  .help = "remote prefix, IPv4 or IPv6 (ADDR/LEN, or ADDR for one host); "
			  "matches either endpoint of a flow (required)"),
	SC_OPTION("port", SC_OPT_UINT, struct sc_rule_args, port, .metavar = "P",
		  .noun = "port", .lo = 1, .hi = 65535,
		  .help = "TCP port of that endpoint (default: any port)"),
	SC_OPTION("mode", SC_OPT_ENUM, struct sc_rule_args, mode,
		  .metavar = "auto|short|long", .values = rule_mode_values,
		  .help = "auto: by the thresholds (default); short or long: every packet"),
	SC_OPTION("threshold", SC_OPT_UINT, struct sc_rule_args, threshold,
		  .metavar = "N", .lo = 0, .hi = FS_MAX_THRESHOLD,
		  .help = "mode auto: packets per flow marked short"),
	SC_OPTION("threshold-bytes", SC_OPT_UINT, struct sc_rule_args, threshold_bytes,
		  .metavar = "N", .lo = 1, .hi = FS_MAX_THRESHOLD_BYTES,
		  .help = "mode auto: TCP payload bytes per flow marked short "
			  "(neither threshold: the global ones)"),
	SC_OPTION("name", SC_OPT_STRING, struct sc_rule_args, name,
		  .positional = true, .noun = "rule name"),
	SC_OPTIONS_END,
};

static bool given(const struct sc_rule_args *a, const char *name)
{
	return sc_option_given(sc_rule_opts, (void *)a, name);
}

/* Letters, digits, '_', '-', '.'; 1..FS_RULE_NAME_LEN - 1 characters. */
static bool valid_rule_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= FS_RULE_NAME_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.", s[i]))
			return false;
	return true;
}

/* "ADDR/LEN" or "ADDR", no host bits (sc_parse_prefix()), into r->family,
 * r->addr, r->v.prefixlen. */
static int parse_prefix(const char *s, struct sc_rule *r)
{
	struct sc_prefix p;

	if (sc_parse_prefix(s, 0, 0, &p))
		return -EINVAL;
	r->family = p.family == AF_INET ? 4 : 6;
	memcpy(r->addr, p.addr, sizeof(r->addr));
	r->v.prefixlen = p.len;
	return 0;
}

/* The policy of mode and thresholds (the rules across keys). */
static int build_policy(const struct sc_rule_args *a, const char *dash,
			struct flow_policy *p, char *err, size_t len)
{
	bool th = given(a, "threshold"), thb = given(a, "threshold-bytes");
	int mode = given(a, "mode") ? a->mode : FS_MODE_AUTO;

	if (mode != FS_MODE_AUTO && (th || thb)) {
		snprintf(err, len,
			 "%s%s: only mode auto has thresholds; mode %s marks every packet %s", dash,
			 th ? "threshold" : "threshold-bytes",
			 mode == FS_MODE_SHORT ? "short" : "long",
			 mode == FS_MODE_SHORT ? "short" : "long");
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	/* auto without thresholds of its own follows the global ones */
	p->mode = mode == FS_MODE_AUTO && !th && !thb ? FS_MODE_GLOBAL : mode;
	if (th) {
		p->flags |= FS_POLICY_F_THRESHOLD;
		p->threshold = a->threshold;
	}
	if (thb)
		p->threshold_bytes = a->threshold_bytes;
	return 0;
}

int sc_rule_build(const struct sc_rule_args *a, const char *name,
		  const char *dash, struct sc_rule *out, char *err, size_t len)
{
	memset(out, 0, sizeof(*out));
	if (!name || !valid_rule_name(name)) {
		snprintf(
			err, len,
			"invalid rule name '%.64s': accepted: 1..%d letters, digits, '_', '-', '.'",
			name ? name : "", FS_RULE_NAME_LEN - 1);
		return -EINVAL;
	}
	strcpy(out->v.name, name);	/* valid_rule_name(): fits */
	if (!given(a, "prefix")) {
		snprintf(err, len,
			 "%sprefix is required: accepted: an IPv4 or IPv6 prefix, e.g. 10.1.0.0/16",
			 dash);
		return -EINVAL;
	}
	if (parse_prefix(a->prefix, out)) {
		snprintf(err, len,
			 "%sprefix: invalid prefix '%.64s': accepted: an IPv4 or IPv6 address with "
			 "an optional /LEN (0..32, 0..128) and no host bits set, e.g. 10.1.0.0/16",
			 dash, a->prefix);
		return -EINVAL;
	}
	if (given(a, "port")) {
		out->port = a->port;
		out->v.flags |= FS_RULE_F_PORT;
	}
	return build_policy(a, dash, &out->v.policy, err, len);
}

void sc_rule_prefix_str(const struct sc_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(r->family == 6 ? AF_INET6 : AF_INET, r->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, r->v.prefixlen);
}

const char *sc_rule_mode_name(const struct sc_rule *r)
{
	switch (r->v.policy.mode) {
	case FS_MODE_SHORT: return "short";
	case FS_MODE_LONG: return "long";
	default: return "auto";
	}
}

static bool same_match(const struct sc_rule *a, const struct sc_rule *b)
{
	return a->family == b->family && a->port == b->port &&
	       a->v.prefixlen == b->v.prefixlen && !memcmp(a->addr, b->addr, 16);
}

int sc_rule_set_add(struct sc_rule_set *set, const struct sc_rule *r,
		    char *err, size_t len)
{
	char p[64], port[16] = "any port";
	struct sc_rule *nr;
	int i, fam = 0;

	for (i = 0; i < set->n; i++) {
		if (!strcmp(set->r[i].v.name, r->v.name)) {
			snprintf(err, len,
				 "rule '%s' already exists: accepted: a new name (or 'rule del %s' "
				 "first)",
				 r->v.name, r->v.name);
			return -EEXIST;
		}
		if (same_match(&set->r[i], r)) {
			sc_rule_prefix_str(r, p, sizeof(p));
			if (r->port)
				snprintf(port, sizeof(port), "port %u", r->port);
			snprintf(err, len,
				 "rule '%s' overlaps rule '%s': both match prefix %s and %s: "
				 "accepted: one rule per prefix and port",
				 r->v.name, set->r[i].v.name, p, port);
			return -EEXIST;
		}
		fam += set->r[i].family == r->family;
	}
	if (fam >= (int)FS_MAX_RULES) {
		snprintf(err, len, "too many IPv%d rules: accepted: at most %u",
			 r->family, FS_MAX_RULES);
		return -E2BIG;
	}
	nr = fs_grow(set->r, &set->cap, set->n, sizeof(*nr), 16);
	if (!nr)
		return -ENOMEM;
	set->r = nr;
	set->r[set->n++] = *r;
	return 0;
}

int sc_rule_set_del(struct sc_rule_set *set, const char *name)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->r[i].v.name, name)) {
			set->r[i] = set->r[--set->n];
			return 0;
		}
	return -ENOENT;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct sc_rule *)a)->v.name,
		      ((const struct sc_rule *)b)->v.name);
}

void sc_rule_set_sort(struct sc_rule_set *set)
{
	if (set->n)
		qsort(set->r, set->n, sizeof(*set->r), cmp_name);
}

void sc_rule_set_free(struct sc_rule_set *set)
{
	free(set->r);
	memset(set, 0, sizeof(*set));
}

/* ---- [rule NAME] sections ------------------------------------------------- */
void sc_rule_file_next_section(struct sc_rule_file *f)
{
	f->cur = -1;
}

/* The section [rule @name] being read: the current one, or a new one.
 * NULL with err set for a second section of one name. */
static struct sc_rule_section *section_of(struct sc_rule_file *f, const char *name,
					  char *err, size_t len)
{
	struct sc_rule_section *sec;
	int i;

	if (f->cur >= 0 && f->cur < f->n && !strcmp(f->s[f->cur].name, name))
		return &f->s[f->cur];
	for (i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].name, name)) {
			snprintf(err, len,
				 "[rule %s]: rule '%s' already exists: accepted: one section per "
				 "rule name",
				 name, name);
			return NULL;
		}
	sec = fs_grow(f->s, &f->cap, f->n, sizeof(*sec), 8);
	if (!sec) {
		snprintf(err, len, "[rule %s]: out of memory", name);
		return NULL;
	}
	f->s = sec;
	sec = &f->s[f->n];
	memset(sec, 0, sizeof(*sec));
	strcpy(sec->name, name);	/* checked by the caller: fits */
	f->cur = f->n++;
	return sec;
}

int sc_rule_file_key(struct sc_rule_file *f, const char *name, const char *key,
		     const char *value, char *err, size_t len)
{
	struct sc_rule_section *sec;
	struct sc_opt_ref r;
	struct sc_rule tmp;
	char names[128] = "";

	if (!valid_rule_name(name)) {
		snprintf(err, len,
			 "[rule %.64s]: invalid rule name: accepted: 1..%d letters, digits, '_', "
			 "'-', '.'",
			 name, FS_RULE_NAME_LEN - 1);
		return -EINVAL;
	}
	sec = section_of(f, name, err, len);
	if (!sec)
		return -EINVAL;
	if (sc_option_find(sc_rule_opts, &sec->a, key, false, &r)) {
		sc_option_names(sc_rule_opts, names, sizeof(names));
		snprintf(err, len, "[rule %s]: unknown key '%.64s': accepted: %s", name, key,
			 names);
		return -EINVAL;
	}
	if (sc_option_given(sc_rule_opts, &sec->a, key)) {
		snprintf(err, len, "[rule %s]: %.64s: given twice: give it once", name, key);
		return -EINVAL;
	}
	if (!strcmp(key, "prefix")) {
		if (strlen(value) >= sizeof(sec->prefix) || parse_prefix(value, &tmp)) {
			snprintf(err, len,
				 "[rule %s]: prefix: invalid prefix '%.64s': accepted: an IPv4 or "
				 "IPv6 address with an optional /LEN (0..32, 0..128) and no host "
				 "bits set, e.g. 10.1.0.0/16",
				 name, value);
			return -EINVAL;
		}
		strcpy(sec->prefix, value);
		value = sec->prefix;
	}
	if (sc_option_set(&r, value, "", err, len)) {
		char msg[512];

		snprintf(msg, sizeof(msg), "[rule %s]: %s", name, err);
		snprintf(err, len, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

int sc_rule_file_rules(const struct sc_rule_file *f, struct sc_rule_set *out,
		       char *err, size_t len)
{
	struct sc_rule_args a;
	char msg[512];
	struct sc_rule r;
	int i, ret;

	for (i = 0; i < f->n; i++) {
		a = f->s[i].a;
		a.prefix = f->s[i].prefix;	/* the array moved since */
		ret = sc_rule_build(&a, f->s[i].name, "", &r, msg, sizeof(msg));
		if (!ret)
			ret = sc_rule_set_add(out, &r, msg, sizeof(msg));
		if (ret) {
			snprintf(err, len, "[rule %s]: %s", f->s[i].name, msg);
			return ret;
		}
	}
	return 0;
}

void sc_rule_file_free(struct sc_rule_file *f)
{
	free(f->s);
	memset(f, 0, sizeof(*f));
}

/* ---- the pinned tries ----------------------------------------------------- */
int sc_rule_maps_open(const char *dir, struct sc_rule_maps *m)
{
	static const char *const names[2] = { FS_MAP_RULES4, FS_MAP_RULES6 };
	char path[PATH_MAX];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		m->fd[i] = bpf_obj_get(path);
	}
	if (m->fd[0] < 0 || m->fd[1] < 0) {
		sc_rule_maps_close(m);
		return -ENODATA;
	}
	return 0;
}

void sc_rule_maps_close(struct sc_rule_maps *m)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

/* An IPv4 rule's trie key is the start of an IPv6 one (the same fields,
 * a shorter address): one key buffer and one way to fill it for both. */
_Static_assert(offsetof(struct rule_key4, port) == offsetof(struct rule_key6, port) &&
	       offsetof(struct rule_key4, addr) == offsetof(struct rule_key6, addr),
	       "rule_key4 is the start of rule_key6");

/* The address bytes of a key of @family */
static size_t key_addr_len(int family)
{
	return family == 4 ? sizeof(((struct rule_key4 *)0)->addr)
			   : sizeof(((struct rule_key6 *)0)->addr);
}

/* The trie key of a rule in @k (an IPv4 rule's is its first bytes) */
static void rule_key(const struct sc_rule *r, struct rule_key6 *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = FS_RULE_PORT_BITS + r->v.prefixlen;
	k->port = htons(r->port);
	memcpy(k->addr, r->addr, key_addr_len(r->family));
}

static void rule_from_key(struct sc_rule *r, int family,
			  const struct rule_key6 *k, const struct fs_rule *v)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->v = *v;
	r->port = ntohs(k->port);
	memcpy(r->addr, k->addr, key_addr_len(family));
	r->v.name[FS_RULE_NAME_LEN - 1] = '\0';
}

/* Entries of one trie: 0 or -errno. */
static int sc_rule_map_count(int fd, __u32 *n)
{
	struct rule_key6 k, next;	/* the larger key fits both */
	void *prev = NULL;

	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		(*n)++;
	}
	return errno == ENOENT ? 0 : -errno;
}

int sc_rules_read(const struct sc_rule_maps *m, struct sc_rule_set *set)
{
	struct rule_key6 k, next;
	struct fs_rule v;
	struct sc_rule r;
	char err[256];
	void *prev;
	int i, ret;

	for (i = 0; i < 2; i++) {
		prev = NULL;
		while (!bpf_map_get_next_key(m->fd[i], prev, &next)) {
			k = next;
			prev = &k;
			if (bpf_map_lookup_elem(m->fd[i], &k, &v))
				return -errno;
			rule_from_key(&r, i ? 6 : 4, &k, &v);
			ret = sc_rule_set_add(set, &r, err, sizeof(err));
			if (ret == -ENOMEM)
				return ret;
		}
		if (errno != ENOENT)
			return -errno;
	}
	return 0;
}

static const struct sc_rule *find_match(const struct sc_rule_set *set,
					const struct sc_rule *r)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (same_match(&set->r[i], r))
			return &set->r[i];
	return NULL;
}

/* Delete the rules of @from whose match is not in @keep, then write every
 * rule of @to (a changed rule of the same match is updated in place). */
static int rules_move(const struct sc_rule_maps *m, const struct sc_rule_set *from,
		      const struct sc_rule_set *to)
{
	struct rule_key6 key;
	int i, fd;

	for (i = 0; i < from->n; i++) {
		if (find_match(to, &from->r[i]))
			continue;
		fd = m->fd[from->r[i].family == 6];
		rule_key(&from->r[i], &key);
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
	}
	for (i = 0; i < to->n; i++) {
		fd = m->fd[to->r[i].family == 6];
		rule_key(&to->r[i], &key);
		if (bpf_map_update_elem(fd, &key, &to->r[i].v, BPF_ANY))
			return -errno;
	}
	return 0;
}

int sc_rules_count_into(const struct sc_rule_maps *m, struct split_config *cfg)
{
	int err = sc_rule_map_count(m->fd[0], &cfg->rules4);

	return err ? err : sc_rule_map_count(m->fd[1], &cfg->rules6);
}

/* The config's rule counts from the tries, in one config write. */
static int write_counts(const struct sc_state *st, const struct sc_rule_maps *m)
{
	struct split_config cfg;
	int err = sc_config_read(st, &cfg);

	if (!err)
		err = sc_rules_count_into(m, &cfg);
	return err ? err : sc_config_write(st, &cfg);
}

int sc_rules_replace(const struct sc_state *st, const struct sc_rule_maps *m,
		     const struct sc_rule_set *have,
		     const struct sc_rule_set *want)
{
	int err = rules_move(m, have, want);

	if (err) {
		/* all or nothing: put the previous rules back */
		rules_move(m, want, have);
		write_counts(st, m);
		return err;
	}
	err = write_counts(st, m);
	if (err) {
		rules_move(m, want, have);
		write_counts(st, m);
	}
	return err;
}
