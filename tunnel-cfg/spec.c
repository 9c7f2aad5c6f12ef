// SPDX-License-Identifier: GPL-2.0
/*
 * spec.c - the settings of "route up" (command-line options or the [route]
 * section of a config file), one key/value at a time, and their check.
 * Nothing here touches the system.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcfg.h"
#include "util.h"

void tcfg_fmt_prefix(const struct sc_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(p->family, p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%d", a, p->len);
}

struct tcfg_spec *tcfg_spec_new(void)
{
	struct tcfg_spec *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->table_short = TCFG_DEFAULT_TABLE_SHORT;
	s->table_long = TCFG_DEFAULT_TABLE_LONG;
	s->priority = TCFG_DEFAULT_PRIORITY;
	s->dscp_long = -1;
	return s;
}

void tcfg_spec_free(struct tcfg_spec *spec)
{
	free(spec);
}

/* ---- one setter per key: 0, or -1 with the reason in err ---------------------- */
/* "<key>: invalid <noun> '<value>': accepted: <lib's words for the type>" */
static int invalid(const char *key, const char *noun, const char *value,
		   const struct sc_option *row, char *err, size_t errlen)
{
	char acc[160];

	sc_option_accepted(row, acc, sizeof(acc));
	snprintf(err, errlen, "%s: invalid %s '%s': accepted: %s", key, noun, value, acc);
	return -1;
}

static const struct sc_enum modes[] = {
	{ "split", MODE_SPLIT }, { "ecmp", MODE_ECMP }, { NULL, 0 },
};
static const struct sc_enum selectors[] = {
	{ "auto", SEL_AUTO }, { "dscp", SEL_DSCP }, { "tos", SEL_TOS }, { NULL, 0 },
};

/* mode, selector: one of their names (sc_parse_enum()) */
static int set_enum(struct tcfg_spec *s, const char *key, const char *value,
		    char *err, size_t errlen)
{
	bool mode = !strcmp(key, "mode");
	const struct sc_option row = { .type = SC_OPT_ENUM,
				       .values = mode ? modes : selectors };
	int v;

	if (sc_parse_enum(row.values, value, &v))
		return invalid(key, "value", value, &row, err, errlen);
	if (mode)
		s->mode = v;
	else
		s->selector = v;
	return 0;
}

/* config files list several prefixes (or gateways, LAN interfaces) on one
 * line; a list longer than its buffer is refused, never cut short */
#define TCFG_LIST_SEP " ,"
#define TCFG_MAX_LIST_LEN 1023

static int list_copy(const char *key, const char *value, char *buf, size_t len,
		     char *err, size_t errlen)
{
	size_t n = strlen(value);

	if (n >= len) {
		snprintf(err, errlen, "%s: value of %zu characters: accepted: at most %zu",
			 key, n, len - 1);
		return -1;
	}
	memcpy(buf, value, n + 1);
	return 0;
}

/* One item of a list key (or the value of a single one). */
typedef int (*spec_item_fn)(struct tcfg_spec *s, const char *key, const char *item,
			    char *err, size_t errlen);

/* Every item of a list value through fn; the first bad one is named. */
static int set_list(struct tcfg_spec *s, const char *key, const char *value,
		    spec_item_fn fn, char *err, size_t errlen)
{
	char buf[TCFG_MAX_LIST_LEN + 1], *tok, *save = NULL;

	if (list_copy(key, value, buf, sizeof(buf), err, errlen))
		return -1;
	for (tok = strtok_r(buf, TCFG_LIST_SEP, &save); tok;
	     tok = strtok_r(NULL, TCFG_LIST_SEP, &save))
		if (fn(s, key, tok, err, errlen))
			return -1;
	return 0;
}

static int set_one_dev(struct tcfg_spec *s, const char *key, const char *value,
		       char *err, size_t errlen)
{
	char *dst;

	if (!sc_valid_ifname(value))
		return invalid(key, "interface name", value,
			       &(struct sc_option){ .type = SC_OPT_IFNAME }, err, errlen);
	if (!strcmp(key, "lan-dev")) {
		if (s->nlan == TCFG_MAX_LAN) {
			snprintf(err, errlen, "lan-dev: at most %d interfaces", TCFG_MAX_LAN);
			return -1;
		}
		dst = s->lan[s->nlan++];
	} else {
		dst = !strcmp(key, "short-dev") ? s->short_dev : s->long_dev;
	}
	snprintf(dst, IF_NAMESIZE, "%s", value);
	return 0;
}

/* short-dev, long-dev: one name; lan-dev: a list, like the other list keys */
static int set_dev(struct tcfg_spec *s, const char *key, const char *value,
		   char *err, size_t errlen)
{
	/* a single name, or an empty lan-dev list: named as it is */
	if (strcmp(key, "lan-dev") || !value[strspn(value, TCFG_LIST_SEP)])
		return set_one_dev(s, key, value, err, errlen);
	return set_list(s, key, value, set_one_dev, err, errlen);
}

static int set_one_prefix(struct tcfg_spec *s, const char *key, const char *tok,
			  char *err, size_t errlen)
{
	struct sc_prefix p;

	(void)key;
	if (sc_parse_prefix(tok, 0, SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, &p)) {
		snprintf(err, errlen, "prefix: invalid value '%s': accepted: an IPv4 or IPv6 prefix ADDR/LEN",
			 tok);
		return -1;
	}
	if (sc_prefix_host_bits(&p)) {
		char net[TCFG_PREFIX_STRLEN];

		tcfg_fmt_prefix(&p, net, sizeof(net));
		snprintf(err, errlen, "prefix: invalid value '%s': host bits set: accepted: a network address ADDR/LEN (%s)",
			 tok, net);
		return -1;
	}
	if (s->nprefixes == TCFG_MAX_PREFIXES) {
		snprintf(err, errlen, "prefix: at most %d prefixes", TCFG_MAX_PREFIXES);
		return -1;
	}
	s->prefixes[s->nprefixes++] = p;
	return 0;
}

/* via-short, via-long: one address per family */
static int set_one_via(struct tcfg_spec *s, const char *key, const char *tok,
		       char *err, size_t errlen)
{
	struct sc_prefix *via = !strcmp(key, "via-short") ? s->via_short : s->via_long;
	struct sc_prefix p;

	if (sc_parse_prefix(tok, 0, SC_PFX_ADDR, &p)) {
		snprintf(err, errlen, "%s: invalid address '%s': accepted: an IPv4 or IPv6 address (one per family)",
			 key, tok);
		return -1;
	}
	via[tcfg_fam_idx(p.family)] = p;
	return 0;
}

static int set_table(struct tcfg_spec *s, const char *key, const char *value,
		     char *err, size_t errlen)
{
	uint64_t v;

	/* 253..255 are the kernel's default, main and local tables */
	if (parse_u64(value, 1, 0xfffffffe, &v) || (v >= 253 && v <= 255)) {
		snprintf(err, errlen, "%s: invalid table '%s': accepted: 1..4294967294 except 253-255 (default, main, local)",
			 key, value);
		return -1;
	}
	*(!strcmp(key, "table-short") ? &s->table_short : &s->table_long) = v;
	return 0;
}

static int set_priority(struct tcfg_spec *s, const char *key, const char *value,
			char *err, size_t errlen)
{
	uint64_t v;

	(void)key;
	if (parse_u64(value, 1, 32764, &v)) {
		snprintf(err, errlen, "priority: invalid value '%s': accepted: 1..32764 (rules use PRIORITY and PRIORITY+1, before main at 32766)",
			 value);
		return -1;
	}
	s->priority = v;
	return 0;
}

static int set_dscp_long(struct tcfg_spec *s, const char *key, const char *value,
			 char *err, size_t errlen)
{
	__u8 v;

	if (sc_parse_dscp(value, &v))
		return invalid(key, "DSCP", value,
			       &(struct sc_option){ .type = SC_OPT_DSCP }, err, errlen);
	s->dscp_long = v;
	return 0;
}

static const struct spec_key {
	const char *key;
	spec_item_fn set;
	bool list;		/* set takes each item of the list value */
} spec_keys[] = {
	{ "mode", set_enum, false },
	{ "short-dev", set_dev, false },
	{ "long-dev", set_dev, false },
	{ "prefix", set_one_prefix, true },
	{ "lan-dev", set_dev, false },
	{ "via-short", set_one_via, true },
	{ "via-long", set_one_via, true },
	{ "table-short", set_table, false },
	{ "table-long", set_table, false },
	{ "priority", set_priority, false },
	{ "dscp-long", set_dscp_long, false },
	{ "selector", set_enum, false },
};

#define N_SPEC_KEYS (sizeof(spec_keys) / sizeof(spec_keys[0]))

int tcfg_spec_set(struct tcfg_spec *s, const char *key, const char *value,
		  char *err, size_t errlen)
{
	size_t i, off;

	for (i = 0; i < N_SPEC_KEYS; i++)
		if (!strcmp(key, spec_keys[i].key))
			return spec_keys[i].list ?
			       set_list(s, key, value, spec_keys[i].set, err, errlen) :
			       spec_keys[i].set(s, key, value, err, errlen);
	off = snprintf(err, errlen, "unknown route setting '%s': accepted: ", key);
	for (i = 0; i < N_SPEC_KEYS && off < errlen; i++)
		off += snprintf(err + off, errlen - off, "%s%s", i ? ", " : "", spec_keys[i].key);
	return -1;
}

/* The first IPv6 prefix of s, or NULL. */
static const struct sc_prefix *first_v6(const struct tcfg_spec *s)
{
	int i;

	for (i = 0; i < s->nprefixes; i++)
		if (s->prefixes[i].family == AF_INET6)
			return &s->prefixes[i];
	return NULL;
}

int tcfg_spec_check(const struct tcfg_spec *s, char *err, size_t errlen)
{
	const struct sc_prefix *v6 = first_v6(s);
	char a[TCFG_PREFIX_STRLEN];

	if (!s->mode)
		snprintf(err, errlen, "mode is missing: accepted: split, ecmp");
	else if (!s->short_dev[0] || !s->long_dev[0])
		snprintf(err, errlen, "short-dev and long-dev are required");
	else if (!strcmp(s->short_dev, s->long_dev))
		snprintf(err, errlen, "short-dev and long-dev are both '%s': they must differ", s->short_dev);
	else if (!s->nprefixes)
		snprintf(err, errlen, "at least one remote prefix is required");
	else if (s->table_short == s->table_long)
		snprintf(err, errlen, "table-short and table-long are both %u: they must differ", s->table_short);
	else if (s->mode == MODE_ECMP && v6 &&
		 (!s->via_short[1].family || !s->via_long[1].family)) {
		/* the kernel takes no device-only IPv6 multipath route */
		tcfg_fmt_prefix(v6, a, sizeof(a));
		snprintf(err, errlen, "ecmp mode: IPv6 prefix %s needs IPv6 gateways: give --via-short and --via-long an IPv6 address each",
			 a);
	} else {
		return 0;
	}
	return -1;
}
