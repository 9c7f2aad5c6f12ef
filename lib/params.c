// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - parse, validate and describe options from their tables (see
 * options.h). Every value a user can give splitctl, on the command line,
 * as a `set` pair or in a config file, is checked here and only here.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "util.h"

#define SC_MAX_FLAT_OPTS 48	/* rows of one command, includes expanded */

static const char *noun(const struct sc_option *o)
{
	return o->noun ? o->noun : "value";
}

/* What a value of this option may be, for errors and help. */
static void accepted(const struct sc_option *o, char *buf, size_t len)
{
	const struct sc_enum *e;
	size_t off = 0;

	switch (o->type) {
	case SC_OPT_UINT:
		snprintf(buf, len, "an integer %.15g..%.15g", o->lo, o->hi);
		break;
	case SC_OPT_MSEC:
		snprintf(buf, len, "seconds %g..%g, at most 3 decimals",
			 o->lo / 1000, o->hi / 1000);
		break;
	case SC_OPT_SECONDS:
		snprintf(buf, len, "seconds %g..%g", o->lo, o->hi);
		break;
	case SC_OPT_YESNO:
		snprintf(buf, len, "yes, no, 1, 0");
		break;
	case SC_OPT_ENUM:
		buf[0] = '\0';
		for (e = o->values; e->name && off < len; e++)
			off += snprintf(buf + off, len - off, "%s%s",
					e == o->values ? "" : ", ", e->name);
		break;
	case SC_OPT_ABSPATH:
		snprintf(buf, len, "an absolute path");
		break;
	case SC_OPT_LISTEN:
		snprintf(buf, len, "a loopback address and port, e.g. 127.0.0.1:9434 or [::1]:9434");
		break;
	case SC_OPT_IFNAME:
		snprintf(buf, len, "1..%d characters, not '.' or '..', no '/', ':' or white space",
			 IFNAMSIZ - 1);
		break;
	default:
		snprintf(buf, len, "a non-empty string");
		break;
	}
}

/* The kernel's rule for interface names (dev_valid_name()). */
bool sc_valid_ifname(const char *name)
{
	const char *p;

	if (!*name || strlen(name) >= IFNAMSIZ || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (p = name; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return false;
	return true;
}

/* Seconds with up to 3 decimals ("30", "0.5", "0.001") -> milliseconds. */
static int parse_seconds_ms(const char *s, uint64_t *ms)
{
	const char *dot = strchr(s, '.');
	char whole[24], frac[4] = "000";
	size_t wl, fl;
	uint64_t w, f;

	wl = dot ? (size_t)(dot - s) : strlen(s);
	if (wl == 0 || wl >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, s, wl);
	whole[wl] = '\0';
	if (parse_u64(whole, 0, UINT32_MAX / 1000, &w))
		return -EINVAL;
	if (dot) {
		fl = strlen(dot + 1);
		if (fl == 0 || fl > 3 || strspn(dot + 1, "0123456789") != fl)
			return -EINVAL;
		memcpy(frac, dot + 1, fl);
	}
	f = strtoull(frac, NULL, 10);
	*ms = w * 1000 + f;
	return 0;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" on a loopback address. */
static int parse_listen(const char *s, struct sc_listen *l)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	uint64_t port;
	size_t hl;

	if (!colon || colon == s || (hl = colon - s) >= sizeof(host) ||
	    parse_u64(colon + 1, 1, 65535, &port))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(&l->addr, 0, sizeof(l->addr));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&l->addr;

		host[hl - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1 ||
		    !IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			return -EINVAL;
		l->len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&l->addr;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1 ||
		    (ntohl(a->sin_addr.s_addr) >> 24) != 127)
			return -EINVAL;
		l->len = sizeof(*a);
	}
	l->text = s;
	return 0;
}

static void store_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(__u8 *)p = v; break;
	case 2: *(__u16 *)p = v; break;
	case 4: *(__u32 *)p = v; break;
	default: *(__u64 *)p = v; break;
	}
}

/* The value into the member; 0 or -EINVAL. */
static int set_value(const struct sc_option *o, const char *v, void *p)
{
	const struct sc_enum *e;
	uint64_t u;
	double d;

	switch (o->type) {
	case SC_OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case SC_OPT_COUNT:
		(*(unsigned int *)p)++;
		return 0;
	case SC_OPT_UINT:
		if (parse_u64(v, o->lo, o->hi, &u))
			return -EINVAL;
		store_uint(p, o->size, u);
		return 0;
	case SC_OPT_MSEC:
		if (parse_seconds_ms(v, &u) || u < o->lo || u > o->hi)
			return -EINVAL;
		*(__u32 *)p = u;
		return 0;
	case SC_OPT_SECONDS:
		if (parse_double(v, o->lo, o->hi, &d))
			return -EINVAL;
		*(double *)p = d;
		return 0;
	case SC_OPT_YESNO:
		if (!strcmp(v, "yes") || !strcmp(v, "1"))
			*(__u32 *)p |= o->bit;
		else if (!strcmp(v, "no") || !strcmp(v, "0"))
			*(__u32 *)p &= ~o->bit;
		else
			return -EINVAL;
		return 0;
	case SC_OPT_ENUM:
		for (e = o->values; e->name; e++) {
			if (strcmp(v, e->name))
				continue;
			if (!o->bit)
				*(int *)p = e->val;
			else if (e->val)
				*(__u32 *)p |= o->bit;
			else
				*(__u32 *)p &= ~o->bit;
			return 0;
		}
		return -EINVAL;
	case SC_OPT_ABSPATH:
		if (v[0] != '/')
			return -EINVAL;
		*(const char **)p = v;
		return 0;
	case SC_OPT_LISTEN:
		return parse_listen(v, p);
	case SC_OPT_IFNAME:
		if (!sc_valid_ifname(v))
			return -EINVAL;
		strcpy(p, v);	/* valid_ifname(): < IFNAMSIZ */
		return 0;
	case SC_OPT_STRING:
		if (!*v)
			return -EINVAL;
		*(const char **)p = v;
		return 0;
	case SC_OPT_PASS: {
		struct sc_pass_list *l = p;

		if (l->n == SC_MAX_PASS)
			return -E2BIG;
		l->kv[l->n].key = o->name;
		l->kv[l->n++].value = v;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int sc_option_set(const struct sc_opt_ref *r, const char *value,
		  const char *prefix, char *err, size_t errlen)
{
	const struct sc_option *o = r->opt;
	char acc[160];
	int ret;

	ret = set_value(o, value, (char *)r->base + o->offset);
	if (ret == -E2BIG) {
		snprintf(err, errlen, "%s%s: too many options (at most %d in one command)",
			 prefix, o->name, SC_MAX_PASS);
		return ret;
	}
	if (ret) {
		accepted(o, acc, sizeof(acc));
		if (o->positional)
			snprintf(err, errlen, "invalid %s '%s': accepted: %s",
				 noun(o), value, acc);
		else
			snprintf(err, errlen, "%s%s: invalid %s '%s': accepted: %s",
				 prefix, o->name, noun(o), value, acc);
		return -EINVAL;
	}
	((struct sc_args_head *)r->base)->given |= 1U << (o - r->t);
	return 0;
}

static bool visible(const struct sc_option *o, bool cli)
{
	return cli ? !o->key_only : !o->cli_only && !o->positional;
}

int sc_option_find(const struct sc_option *t, void *base, const char *name,
		   bool cli, struct sc_opt_ref *r)
{
	const struct sc_option *o;

	for (o = t; o->type != SC_OPT_END; o++) {
		if (o->type == SC_OPT_INCLUDE) {
			if (visible(o, cli) &&
			    !sc_option_find(o->sub, (char *)base + o->offset, name,
					    cli, r))
				return 0;
		} else if (visible(o, cli) && !strcmp(o->name, name)) {
			r->t = t;
			r->opt = o;
			r->base = base;
			return 0;
		}
	}
	return -ENOENT;
}

bool sc_option_given(const struct sc_option *t, void *base, const char *name)
{
	struct sc_opt_ref r;

	if (sc_option_find(t, base, name, false, &r) &&
	    sc_option_find(t, base, name, true, &r))
		return false;
	return ((struct sc_args_head *)r.base)->given & (1U << (r.opt - r.t));
}

void sc_option_names(const struct sc_option *t, char *buf, size_t len)
{
	const struct sc_option *o;
	size_t off = strlen(buf);

	for (o = t; o->type != SC_OPT_END && off < len; o++) {
		if (!visible(o, false))
			continue;
		if (o->type == SC_OPT_INCLUDE) {
			sc_option_names(o->sub, buf, len);
			off = strlen(buf);
		} else {
			off += snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", o->name);
		}
	}
}

/* The rows of a command line, includes expanded, in table order. */
static int flatten(const struct sc_option *t, void *base, bool cli,
		   struct sc_opt_ref *out, int n)
{
	const struct sc_option *o;

	for (o = t; o->type != SC_OPT_END && n < SC_MAX_FLAT_OPTS; o++) {
		if (!visible(o, cli))
			continue;
		if (o->type == SC_OPT_INCLUDE) {
			n = flatten(o->sub, (char *)base + o->offset, cli, out, n);
		} else {
			out[n].t = t;
			out[n].opt = o;
			out[n++].base = base;
		}
	}
	return n;
}

static bool takes_value(const struct sc_option *o)
{
	return o->type != SC_OPT_FLAG && o->type != SC_OPT_COUNT;
}

/* getopt_long's tables; long option i has val 256 + i. */
static void build_getopt(const struct sc_opt_ref *r, int n, bool in_order,
			 struct option *lo, char *shortopts)
{
	char *s = shortopts;
	int i, k = 0;

	if (in_order)
		*s++ = '+';
	*s++ = ':';	/* a missing value is reported as ':' */
	*s++ = 'h';
	for (i = 0; i < n; i++) {
		if (r[i].opt->positional)
			continue;
		lo[k].name = r[i].opt->name;
		lo[k].has_arg = takes_value(r[i].opt) ? required_argument : no_argument;
		lo[k].flag = NULL;
		lo[k++].val = 256 + i;
		if (r[i].opt->short_opt) {
			*s++ = r[i].opt->short_opt;
			if (takes_value(r[i].opt))
				*s++ = ':';
		}
	}
	lo[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	memset(&lo[k], 0, sizeof(lo[k]));
	*s = '\0';
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	fprintf(stderr, "splitctl%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
	return FS_EXIT_USAGE;
}

/* The row of a getopt result (short letter or 256 + index). */
static int row_of(const struct sc_opt_ref *r, int n, int c)
{
	int i;

	if (c >= 256)
		return c - 256;
	for (i = 0; i < n; i++)
		if (r[i].opt->short_opt == c && !r[i].opt->positional)
			return i;
	return -1;
}

static int parse_positionals(const struct sc_opt_ref *r, int n, const char *cmd,
			     int argc, char **argv, int *rest)
{
	char err[512];
	int i;

	for (i = 0; i < n && optind < argc; i++) {
		if (!r[i].opt->positional)
			continue;
		if (sc_option_set(&r[i], argv[optind], "--", err, sizeof(err)))
			return usage_error(cmd, "%s", err);
		optind++;
	}
	if (rest)
		*rest = optind;
	else if (optind < argc)
		return usage_error(cmd, "unexpected argument '%s' (see -h)", argv[optind]);
	return 0;
}

int sc_options_parse(const struct sc_option *t, const char *cmd, int argc,
		     char **argv, void *base, bool in_order, int *rest)
{
	return sc_options_parse_with(t, base, NULL, NULL, cmd, argc, argv, in_order, rest);
}

int sc_options_parse_with(const struct sc_option *t, void *base,
			  const struct sc_option *extra, void *extra_base,
			  const char *cmd, int argc, char **argv, bool in_order,
			  int *rest)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	struct option lo[SC_MAX_FLAT_OPTS + 2];
	char shortopts[3 * SC_MAX_FLAT_OPTS + 8], err[512], bad[8];
	int n = flatten(t, base, true, r, 0), c, i;

	if (extra)
		n = flatten(extra, extra_base, true, r, n);

	build_getopt(r, n, in_order, lo, shortopts);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (c == 'h') {
			return 1;
		} else if (c == '?') {
			if (!optopt)
				return usage_error(cmd, "unknown option '%s' (see -h)",
						   argv[optind - 1]);
			snprintf(bad, sizeof(bad), "-%c", optopt);
			return usage_error(cmd, "unknown option '%s' (see -h)", bad);
		} else if (c == ':') {
			return usage_error(cmd, "option '%s' needs a value (see -h)",
					   argv[optind - 1]);
		}
		i = row_of(r, n, c);
		if (i < 0)
			return usage_error(cmd, "unknown option '%s' (see -h)",
					   argv[optind - 1]);
		if (sc_option_set(&r[i], optarg, "--", err, sizeof(err)))
			return usage_error(cmd, "%s", err);
	}
	return parse_positionals(r, n, cmd, argc, argv, rest);
}

static void help_line(FILE *f, const struct sc_option *o)
{
	char flag[64], acc[160];

	snprintf(flag, sizeof(flag), "%s%c%s--%s%s%s", o->short_opt ? "-" : "  ",
		 o->short_opt ? o->short_opt : ' ', o->short_opt ? ", " : "  ",
		 o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
	fprintf(f, "  %-34s %s", flag, o->help);
	if (o->type == SC_OPT_UINT || o->type == SC_OPT_MSEC ||
	    o->type == SC_OPT_SECONDS) {
		accepted(o, acc, sizeof(acc));
		fprintf(f, " (%s)", acc);
	}
	fputc('\n', f);
}

void sc_options_help(FILE *f, const struct sc_option *t)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, true, r, 0), i;

	for (i = 0; i < n; i++)
		if (!r[i].opt->positional)
			help_line(f, r[i].opt);
	fprintf(f, "  %-34s %s\n", "-h, --help", "show this help and exit");
}

void sc_options_table(const char *path, const struct sc_option *t)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, true, r, 0), i;

	for (i = 0; i < n; i++)
		if (!r[i].opt->positional)
			printf("%s --%s\n", path, r[i].opt->name);
	printf("%s --help\n", path);
}

void sc_options_keys_help(FILE *f, const struct sc_option *t)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, false, r, 0), i;
	char key[64], acc[160];

	for (i = 0; i < n; i++) {
		const struct sc_option *o = r[i].opt;

		snprintf(key, sizeof(key), "%s %s", o->name, o->metavar ? o->metavar : "");
		accepted(o, acc, sizeof(acc));
		fprintf(f, "  %-34s %s (%s)\n", key, o->help, acc);
	}
}

/* What completes an option's value: its enum values or yes|no from the
 * table itself, else its metavar ("" for a flag). */
static void complete_values(const struct sc_option *o, char *buf, size_t len)
{
	const struct sc_enum *e;
	size_t off = 0;

	buf[0] = '\0';
	if (o->type == SC_OPT_ENUM) {
		for (e = o->values; e->name && off < len; e++)
			off += snprintf(buf + off, len - off, "%s%s", off ? "|" : "", e->name);
	} else if (o->type == SC_OPT_YESNO) {
		snprintf(buf, len, "yes|no");
	} else if (takes_value(o)) {
		snprintf(buf, len, "%s", o->metavar ? o->metavar : "VALUE");
	}
}

void sc_options_complete(const char *path, const struct sc_option *t, bool keys)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, !keys, r, 0), i;
	char v[160];

	for (i = 0; i < n; i++) {
		const struct sc_option *o = r[i].opt;

		complete_values(o, v, sizeof(v));
		if (keys)
			printf("key\t%s\t%s\t%s\n", path, o->name, v);
		else if (o->positional)
			printf("arg\t%s\t%s\n", path, noun(o));
		else if (o->short_opt)
			printf("opt\t%s\t--%s\t%s\t-%c\n", path, o->name, v, o->short_opt);
		else
			printf("opt\t%s\t--%s\t%s\t\n", path, o->name, v);
	}
	if (!keys)
		printf("opt\t%s\t--help\t\t-h\n", path);
}
