// SPDX-License-Identifier: GPL-2.0
/*
 * params.c - parse, validate and describe options from their tables (see
 * params.h). Every value a user gives a program of the project, on the
 * command line, as a `set` pair or in a config file, is checked here: one
 * function per kind of value.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flowsplit.h"
#include "params.h"
#include "util.h"

#define SC_MAX_FLAT_OPTS 48	/* rows of one command, includes expanded */

static const char *noun(const struct sc_option *o)
{
	return o->noun ? o->noun : "value";
}

/* The long option of a row: its cli_name, else its name. */
static const char *opt_name(const struct sc_option *o)
{
	return o->cli_name ? o->cli_name : o->name;
}

/* uint64_t bounds of an integer row (a double: 2^64 - 1 is not one) */
static uint64_t bound(double d)
{
	return d >= 18446744073709551615.0 ? UINT64_MAX : d <= 0 ? 0 : (uint64_t)d;
}

static const char *unit_name(enum sc_unit u)
{
	switch (u) {
	case SC_UNIT_MS: return "milliseconds";
	case SC_UNIT_US: return "microseconds";
	default: return "seconds";
	}
}

static void enum_names(const struct sc_enum *e, const char *sep, char *buf,
		       size_t len)
{
	const struct sc_enum *v;
	size_t off = 0;

	buf[0] = '\0';
	for (v = e; v->name && off < len; v++)
		off += snprintf(buf + off, len - off, "%s%s", v == e ? "" : sep, v->name);
}

/* ns as a duration with its unit: "100ms", "1.5s", "0s" */
static void duration_text(double ns, char *buf, size_t len)
{
	if (ns >= SC_UNIT_S || ns == 0)
		snprintf(buf, len, "%.9gs", ns / SC_UNIT_S);
	else
		snprintf(buf, len, "%.9gms", ns / SC_UNIT_MS);
}

static const char *family_name(int family)
{
	return family == AF_INET ? "an IPv4" : family == AF_INET6 ? "an IPv6" :
	       "an IPv4 or IPv6";
}

/* A duration row's range: in its unit, or with the unit written when the
 * value carries it ("10ms..60s"). */
static void duration_accepted(const struct sc_option *o, char *buf, size_t len)
{
	double unit = o->unit ? o->unit : SC_UNIT_S;
	char lo[32], hi[32];

	if (!o->unit_suffix) {
		snprintf(buf, len, "%s %.15g..%.15g", unit_name(o->unit), o->lo, o->hi);
		return;
	}
	duration_text(o->lo * unit, lo, sizeof(lo));
	duration_text(o->hi * unit, hi, sizeof(hi));
	snprintf(buf, len, "%s..%s", lo, hi);
}

void sc_option_accepted(const struct sc_option *o, char *buf, size_t len)
{
	enum sc_opt_type type = o->type == SC_OPT_LIST ? o->elem : o->type;

	if (o->accepted) {
		snprintf(buf, len, "%s", o->accepted);
		return;
	}
	switch (type) {
	case SC_OPT_UINT:
		snprintf(buf, len, "an integer %" PRIu64 "..%" PRIu64, bound(o->lo),
			 bound(o->hi));
		break;
	case SC_OPT_DSCP:
		snprintf(buf, len, "an integer 0..%d", FS_DSCP_MAX);
		break;
	case SC_OPT_DURATION:
		duration_accepted(o, buf, len);
		break;
	case SC_OPT_MSEC:
		snprintf(buf, len, "seconds %g..%g, at most 3 decimals",
			 o->lo / 1000, o->hi / 1000);
		break;
	case SC_OPT_SECONDS:
		snprintf(buf, len, "seconds %g..%g", o->lo, o->hi);
		break;
	case SC_OPT_NUMBER:
		snprintf(buf, len, "a number %.15g..%.15g", o->lo, o->hi);
		break;
	case SC_OPT_RATE: {
		char lo[32], hi[32];

		sc_rate_text(bound(o->lo), lo, sizeof(lo));
		sc_rate_text(bound(o->hi), hi, sizeof(hi));
		snprintf(buf, len, "a rate %s..%s (bit, kbit, mbit, gbit)", lo, hi);
		break;
	}
	case SC_OPT_YESNO:
		snprintf(buf, len, "yes, no, 1, 0");
		break;
	case SC_OPT_ENUM:
		enum_names(o->values, ", ", buf, len);
		break;
	case SC_OPT_PATH:
		snprintf(buf, len, "a path of 1..%d characters", PATH_MAX - 1);
		break;
	case SC_OPT_ABSPATH:
		snprintf(buf, len, "an absolute path");
		break;
	case SC_OPT_LISTEN:
		snprintf(buf, len,
			 "an address and port, e.g. 127.0.0.1:9434, [::1]:9434 or 0.0.0.0:9434");
		break;
	case SC_OPT_IFNAME:
		snprintf(buf, len, "1..%d characters, not '.' or '..', no '/', ':' or white space",
			 IFNAMSIZ - 1);
		break;
	case SC_OPT_ADDR:
		snprintf(buf, len, "%s address", family_name(o->family));
		break;
	case SC_OPT_PREFIX:
		snprintf(buf, len,
			 "%s address with an optional /LEN (0..32, 0..128) and no host bits set, "
			 "e.g. 10.1.0.0/16",
			 family_name(o->family));
		break;
	case SC_OPT_IFADDR:
		snprintf(buf, len, "%s address with /LEN (0..32, 0..128), e.g. 192.168.101.1/30",
			 family_name(o->family));
		break;
	case SC_OPT_KEYVALS:
		buf[0] = '\0';
		sc_option_names(o->sub, buf, len);
		break;
	default:
		snprintf(buf, len, "a non-empty string");
		break;
	}
}

/* ---- the validators -------------------------------------------------------- */
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

bool sc_valid_path(const char *path, bool absolute)
{
	return *path && strlen(path) < PATH_MAX && (!absolute || path[0] == '/');
}

int sc_parse_yesno(const char *s, bool *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "1"))
		*out = true;
	else if (!strcmp(s, "no") || !strcmp(s, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

int sc_parse_dscp(const char *s, __u8 *out)
{
	uint64_t v;
	int err = parse_u64(s, 0, FS_DSCP_MAX, &v);

	if (!err)
		*out = v;
	return err;
}

/* DIGITS[.DIGITS]: the number syntax of every duration and fraction (no
 * sign, exponent, hex, inf or white space, which strtod() would take) */
static bool decimal_syntax(const char *s)
{
	size_t w = strspn(s, "0123456789");

	if (!w)
		return false;
	if (!s[w])
		return true;
	return s[w] == '.' && s[w + 1] &&
	       strspn(s + w + 1, "0123456789") == strlen(s + w + 1);
}

/* "NUMBERms" or "NUMBERs": the number in its unit. */
static int duration_suffixed(const char *s, unsigned int decimals, __u64 *ns)
{
	size_t n = strlen(s);
	__u64 unit = SC_UNIT_S;
	char num[48];

	if (n > 2 && !strcmp(s + n - 2, "ms")) {
		unit = SC_UNIT_MS;
		n -= 2;
	} else if (n > 1 && s[n - 1] == 's') {
		n -= 1;
	} else {
		return -EINVAL;
	}
	if (n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	return sc_parse_duration(num, unit, decimals, ns);
}

int sc_parse_duration(const char *s, __u64 unit_ns, unsigned int decimals,
		      __u64 *ns)
{
	const char *dot = strchr(s, '.');
	uint64_t w, f = 0, pow10 = 1, fns;
	char whole[24];
	size_t wl = dot ? (size_t)(dot - s) : strlen(s);

	if (!unit_ns)
		return duration_suffixed(s, decimals, ns);
	if (!decimal_syntax(s) || wl >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, s, wl);
	whole[wl] = '\0';
	if (parse_u64(whole, 0, UINT64_MAX / unit_ns, &w))
		return -EINVAL;
	/* the fraction exactly: at most 9 digits, so f * unit_ns < 2^64 */
	for (dot = dot ? dot + 1 : "", wl = 0; dot[wl]; wl++) {
		if (wl == decimals || wl == 9)
			return -EINVAL;
		f = f * 10 + (uint64_t)(dot[wl] - '0');
		pow10 *= 10;
	}
	if ((f * unit_ns) % pow10)
		return -EINVAL;		/* finer than a nanosecond */
	fns = f * unit_ns / pow10;
	if (w > (UINT64_MAX - fns) / unit_ns)
		return -EINVAL;
	*ns = w * unit_ns + fns;
	return 0;
}

int sc_parse_number(const char *s, double lo, double hi, double *out)
{
	double v;

	if (!decimal_syntax(s))
		return -EINVAL;
	v = strtod(s, NULL);
	if (!(v >= lo && v <= hi))
		return -ERANGE;
	*out = v;
	return 0;
}

/* largest first: sc_rate_text() picks the first that fits */
static const struct { const char *unit; __u64 scale; } rate_units[] = {
	{ "gbit", 1000000000 }, { "mbit", 1000000 }, { "kbit", 1000 }, { "bit", 1 },
};

int sc_parse_rate(const char *s, __u64 *bps)
{
	size_t i, n = strlen(s), ul;
	char num[32];

	for (i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++) {
		ul = strlen(rate_units[i].unit);
		if (n <= ul || n - ul >= sizeof(num) ||
		    strcmp(s + n - ul, rate_units[i].unit))
			continue;
		memcpy(num, s, n - ul);
		num[n - ul] = '\0';
		/* the duration syntax, counted in bits instead of ns:
		 * exact, whole bits, never beyond 2^64 */
		return sc_parse_duration(num, rate_units[i].scale, 9, bps);
	}
	return -EINVAL;
}

void sc_rate_text(__u64 bps, char *buf, size_t len)
{
	size_t i, last = sizeof(rate_units) / sizeof(rate_units[0]) - 1;
	__u64 scale, frac, t;
	int digits = 0;

	for (i = 0; i < last && bps < rate_units[i].scale; i++)
		;
	scale = rate_units[i].scale;
	frac = bps % scale;
	if (!frac) {
		snprintf(buf, len, "%llu%s", (unsigned long long)(bps / scale),
			 rate_units[i].unit);
		return;
	}
	/* exact: the fraction's digits, without trailing zeros */
	for (t = scale; t > 1; t /= 10)
		digits++;
	for (; frac % 10 == 0; frac /= 10)
		digits--;
	snprintf(buf, len, "%llu.%0*llu%s", (unsigned long long)(bps / scale), digits,
		 (unsigned long long)frac, rate_units[i].unit);
}

bool sc_prefix_host_bits(struct sc_prefix *p)
{
	int alen = p->family == AF_INET ? 4 : 16, i;
	bool set = false;

	for (i = 0; i < alen; i++) {
		int keep = p->len >= (i + 1) * 8 ? 8 : p->len <= i * 8 ? 0 : p->len - i * 8;
		unsigned char mask = (unsigned char)(0xff00 >> keep);

		set |= (p->addr[i] & (unsigned char)~mask) != 0;
		p->addr[i] &= mask;
	}
	return set;
}

bool sc_prefix_overlap(const struct sc_prefix *a, const struct sc_prefix *b)
{
	int len = a->len < b->len ? a->len : b->len, full = len / 8;

	if (a->family != b->family)
		return false;
	if (memcmp(a->addr, b->addr, full))
		return false;
	/* the bits of a last, partial byte */
	return len % 8 == 0 ||
	       !((a->addr[full] ^ b->addr[full]) & (unsigned char)(0xff00 >> (len % 8)));
}

int sc_parse_prefix(const char *s, int family, unsigned int flags,
		    struct sc_prefix *out)
{
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char addr[INET6_ADDRSTRLEN];
	struct sc_prefix p = { 0 }, net;
	uint64_t plen;

	if (!n || n >= sizeof(addr) || (slash && (flags & SC_PFX_ADDR)) ||
	    (!slash && (flags & SC_PFX_NEED_LEN)))
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (family != AF_INET6 && inet_pton(AF_INET, addr, p.addr) == 1)
		p.family = AF_INET;
	else if (family != AF_INET && inet_pton(AF_INET6, addr, p.addr) == 1)
		p.family = AF_INET6;
	else
		return -EINVAL;
	plen = p.family == AF_INET ? 32 : 128;
	if (slash && parse_u64(slash + 1, 0, plen, &plen))
		return -EINVAL;
	p.len = (int)plen;
	net = p;
	if (!(flags & SC_PFX_HOST_BITS) && sc_prefix_host_bits(&net))
		return -EINVAL;
	*out = p;
	return 0;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" (who may listen where: the caller). */
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
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -EINVAL;
		l->len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&l->addr;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
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

/* A duration row's value into ns; its unit, decimals and range. */
static int duration_ns(const struct sc_option *o, const char *v, __u64 *ns)
{
	double unit = o->type == SC_OPT_DURATION && o->unit ? o->unit : SC_UNIT_S;
	double scale = o->type == SC_OPT_MSEC ? SC_UNIT_MS : unit;
	__u64 given = o->type == SC_OPT_DURATION && o->unit_suffix ? 0 : unit;

	if (sc_parse_duration(v, given, o->type == SC_OPT_MSEC ? 3 : 9, ns) ||
	    *ns < o->lo * scale || *ns > o->hi * scale)
		return -EINVAL;
	return 0;
}

static int set_bool(const struct sc_option *o, bool on, void *p)
{
	if (!o->bit)
		*(bool *)p = on;
	else if (on)
		*(__u32 *)p |= o->bit;
	else
		*(__u32 *)p &= ~o->bit;
	return 0;
}

int sc_parse_enum(const struct sc_enum *values, const char *s, int *out)
{
	const struct sc_enum *e;

	for (e = values; e->name; e++) {
		if (!strcmp(s, e->name)) {
			*out = e->val;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_enum(const struct sc_option *o, const char *v, void *p)
{
	int val;

	if (sc_parse_enum(o->values, v, &val))
		return -EINVAL;
	if (!o->bit)
		*(int *)p = val;
	else
		set_bool(o, val, p);
	return 0;
}

static unsigned int prefix_flags(const struct sc_option *o, enum sc_opt_type type)
{
	return o->pfx_flags | (type == SC_OPT_ADDR ? SC_PFX_ADDR :
			       type == SC_OPT_IFADDR ? SC_PFX_NEED_LEN | SC_PFX_HOST_BITS : 0);
}

/* A value of one of the scalar types into the member; 0 or -EINVAL. */
static int set_scalar(const struct sc_option *o, enum sc_opt_type type,
		      const char *v, void *p)
{
	uint64_t u;
	__u64 ns;
	double d;
	bool b;

	switch (type) {
	case SC_OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case SC_OPT_COUNT:
		(*(unsigned int *)p)++;
		return 0;
	case SC_OPT_UINT:
		if (parse_u64(v, bound(o->lo), bound(o->hi), &u))
			return -EINVAL;
		store_uint(p, o->size, u);
		return 0;
	case SC_OPT_DSCP: {
		__u8 dscp;

		if (sc_parse_dscp(v, &dscp))
			return -EINVAL;
		store_uint(p, o->size, dscp);
		return 0;
	}
	case SC_OPT_DURATION:
	case SC_OPT_MSEC:
	case SC_OPT_SECONDS:
		if (duration_ns(o, v, &ns))
			return -EINVAL;
		if (type == SC_OPT_MSEC)
			*(__u32 *)p = ns / SC_UNIT_MS;
		else if (type == SC_OPT_SECONDS)
			*(double *)p = ns / 1e9;
		else
			*(__u64 *)p = ns;
		return 0;
	case SC_OPT_NUMBER:
		if (sc_parse_number(v, o->lo, o->hi, &d))
			return -EINVAL;
		*(double *)p = d;
		return 0;
	case SC_OPT_RATE:
		if (sc_parse_rate(v, &ns) || ns < bound(o->lo) || ns > bound(o->hi))
			return -EINVAL;
		*(__u64 *)p = ns;	/* bit/s */
		return 0;
	case SC_OPT_YESNO:
		return sc_parse_yesno(v, &b) ? -EINVAL : set_bool(o, b, p);
	case SC_OPT_ENUM:
		return set_enum(o, v, p);
	case SC_OPT_STRING:
	case SC_OPT_PATH:
	case SC_OPT_ABSPATH:
		if (type == SC_OPT_STRING ? !*v : !sc_valid_path(v, type == SC_OPT_ABSPATH))
			return -EINVAL;
		*(const char **)p = v;
		return 0;
	case SC_OPT_LISTEN:
		return parse_listen(v, p);
	case SC_OPT_IFNAME:
		if (!sc_valid_ifname(v))
			return -EINVAL;
		strcpy(p, v);	/* sc_valid_ifname(): < IFNAMSIZ */
		return 0;
	case SC_OPT_ADDR:
	case SC_OPT_PREFIX:
	case SC_OPT_IFADDR:
		return sc_parse_prefix(v, o->family, prefix_flags(o, type), p);
	default:
		return -EINVAL;
	}
}

static void invalid(const struct sc_option *o, const char *v, char *err, size_t len)
{
	char acc[256];

	sc_option_accepted(o, acc, sizeof(acc));
	snprintf(err, len, "invalid %s '%s': accepted: %s", noun(o), v, acc);
}

static int set_value(const struct sc_option *o, const char *v, void *p,
		     char *why, size_t whylen);

/* "KEY=VALUE,..." through the table o->sub into the struct at p. */
static int set_keyvals(const struct sc_option *o, const char *v, void *p,
		       char *why, size_t whylen)
{
	char buf[1024], *save, *kv, *val, names[256] = "";
	const struct sc_option *r;
	struct sc_opt_ref ref;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		val = strchr(kv, '=');
		if (val)
			*val++ = '\0';
		if (sc_option_find(o->sub, p, kv, false, &ref)) {
			sc_option_names(o->sub, names, sizeof(names));
			snprintf(why, whylen, "unknown key '%s': accepted: %s", kv, names);
			return -EINVAL;
		}
		if (sc_option_set(&ref, val ? val : "", "", why, whylen))
			return -EINVAL;
	}
	for (r = o->sub; r->type != SC_OPT_END; r++)
		if (r->required && !sc_option_given(o->sub, p, r->name)) {
			snprintf(why, whylen, "%s= is required", r->name);
			return -EINVAL;
		}
	return 0;
}

/* An address into its family's slot of the struct sc_prefix[2] at p. */
static int set_per_family(const struct sc_option *e, const char *part, void *p,
			  char *why, size_t whylen)
{
	struct sc_prefix a, *slot = p;
	int i;

	if (set_scalar(e, e->type, part, &a))
		return -EINVAL;
	i = a.family == AF_INET6;
	if (e->per_family == SC_PER_FAMILY_ONCE && slot[i].family) {
		snprintf(why, whylen, "'%s': one address per family", part);
		return -EINVAL;
	}
	slot[i] = a;
	return 0;
}

/* Every value in v into the list at p: one per occurrence for KEYVALS,
 * else as many as v holds (at least one), separated by ',' or ' '; the
 * row's check after each. All or none: on an error the list is as it
 * was. */
static int set_list(const struct sc_option *o, const char *v, void *p,
		    char *why, size_t whylen)
{
	struct sc_option e = *o;
	unsigned int *n = p, n0 = *n;
	struct sc_prefix fam0[2];
	char buf[1024], *save, *part;
	int err = 0;

	e.type = o->elem;
	e.size = o->elem_size;
	e.check = NULL;
	if (strlen(v) >= sizeof(buf)) {
		snprintf(why, whylen, "value of %zu characters: accepted: at most %zu",
			 strlen(v), sizeof(buf) - 1);
		return -EINVAL;
	}
	if (o->per_family)
		memcpy(fam0, p, sizeof(fam0));
	strcpy(buf, v);
	part = e.type == SC_OPT_KEYVALS ? buf : strtok_r(buf, ", ", &save);
	if (!part)
		return -EINVAL;
	for (; part && !err; part = e.type == SC_OPT_KEYVALS ? NULL : strtok_r(NULL, ", ", &save)) {
		void *slot = (char *)p + o->elem_off + (size_t)*n * o->elem_size;

		if (o->per_family) {
			err = set_per_family(&e, part, p, why, whylen);
			if (err && !why[0])
				invalid(&e, part, why, whylen);
			continue;
		}
		if (*n == o->max) {
			err = -E2BIG;
			break;
		}
		memset(slot, 0, o->elem_size);
		err = set_value(&e, e.type == SC_OPT_KEYVALS ? v : part, slot, why, whylen);
		if (err && !why[0])
			invalid(&e, part, why, whylen);
		if (!err)
			(*n)++;
		if (!err && o->check) {
			err = o->check(o, p, part, why, whylen);
			if (err && !why[0])
				invalid(&e, part, why, whylen);
		}
	}
	if (err && o->per_family)
		memcpy(p, fam0, sizeof(fam0));
	else if (err)
		*n = n0;
	return err;
}

static uint64_t load_uint(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const __u8 *)p;
	case 2: return *(const __u16 *)p;
	case 4: return *(const __u32 *)p;
	default: return *(const __u64 *)p;
	}
}

/* A scalar, then the row's own rule on it (the member as it was when
 * that refuses it; members larger than SC_MAX_CHECKED are not put back). */
#define SC_MAX_CHECKED 256
static int set_checked(const struct sc_option *o, const char *v, void *p,
		       char *why, size_t whylen)
{
	unsigned char before[SC_MAX_CHECKED];
	size_t n = o->size < sizeof(before) ? o->size : sizeof(before);
	int ret;

	if (o->check)
		memcpy(before, p, n);
	ret = set_scalar(o, o->type, v, p);
	if (ret || !o->check)
		return ret;
	ret = o->check(o, p, v, why, whylen);
	if (ret)
		memcpy(p, before, n);
	return ret;
}

/* The value into the member: 0, -E2BIG (a full list), or -EINVAL with the
 * reason in why when it is more than "invalid <noun> '<v>'". */
static int set_value(const struct sc_option *o, const char *v, void *p,
		     char *why, size_t whylen)
{
	why[0] = '\0';
	if (o->type == SC_OPT_LIST)
		return set_list(o, v, p, why, whylen);
	if (o->type == SC_OPT_KEYVALS)
		return set_keyvals(o, v, p, why, whylen);
	return set_checked(o, v, p, why, whylen);
}

int sc_option_set(const struct sc_opt_ref *r, const char *value,
		  const char *prefix, char *err, size_t errlen)
{
	const struct sc_option *o = r->opt;
	char why[512];
	int ret;

	ret = set_value(o, value, (char *)r->base + o->offset, why, sizeof(why));
	if (ret == -E2BIG)
		snprintf(why, sizeof(why), "at most %u values", o->max);
	else if (ret && !why[0])
		invalid(o, value, why, sizeof(why));
	if (ret && o->positional)
		snprintf(err, errlen, "%s", why);
	else if (ret)
		snprintf(err, errlen, "%s%s: %s", prefix, prefix[0] == '-' ? opt_name(o) : o->name,
			 why);
	if (ret)
		return ret;
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
		} else if (visible(o, cli) && !strcmp(cli ? opt_name(o) : o->name, name)) {
			r->t = t;
			r->opt = o;
			r->base = base;
			return 0;
		}
	}
	return -ENOENT;
}

void sc_options_merge(const struct sc_option *t, void *dst, const void *src)
{
	const struct sc_args_head *from = src;
	struct sc_args_head *to = dst;
	const struct sc_option *o;

	for (o = t; o->type != SC_OPT_END; o++) {
		if (o->type == SC_OPT_INCLUDE) {
			sc_options_merge(o->sub, (char *)dst + o->offset,
					 (const char *)src + o->offset);
		} else if (from->given & (1U << (o - t))) {
			memcpy((char *)dst + o->offset, (const char *)src + o->offset, o->size);
			to->given |= 1U << (o - t);
		}
	}
}

void sc_options_layer(const struct sc_option *t, void *dst, const void *file, const void *cli)
{
	if (file)
		sc_options_merge(t, dst, file);
	if (cli)
		sc_options_merge(t, dst, cli);
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
		lo[k].name = opt_name(r[i].opt);
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

static bool errors_as_log;

void sc_usage_errors_as_log(bool on)
{
	errors_as_log = on;
}

int sc_print_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fs_log_json_on())	/* -j: one JSON object, as every error */
		fs_log(FS_LOG_ERR, "%s%s%s", cmd ? cmd : "", cmd ? ": " : "", msg);
	else
		fprintf(stderr, "%s%s%s%s: %s\n", fs_log_prog(), cmd && errors_as_log ? ":" : "",
			cmd ? " " : "", cmd ? cmd : "", msg);
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
			return sc_print_usage_error(cmd, "%s", err);
		optind++;
	}
	if (rest)
		*rest = optind;
	else if (optind < argc)
		return sc_print_usage_error(cmd, "unexpected argument '%s' (see -h)", argv[optind]);
	return 0;
}

static int check_required(const struct sc_opt_ref *r, int n, const char *cmd)
{
	const struct sc_option *o;
	int i;

	for (i = 0; i < n; i++) {
		o = r[i].opt;
		if (!o->required ||
		    (((struct sc_args_head *)r[i].base)->given & (1U << (o - r[i].t))))
			continue;
		if (o->positional)
			return sc_print_usage_error(cmd, "%s is required (see -h)",
						    noun(o));
		return sc_print_usage_error(cmd, "--%s is required (see -h)", opt_name(o));
	}
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
				return sc_print_usage_error(cmd, "unknown option '%s' (see -h)",
						   argv[optind - 1]);
			snprintf(bad, sizeof(bad), "-%c", optopt);
			return sc_print_usage_error(cmd, "unknown option '%s' (see -h)", bad);
		} else if (c == ':') {
			return sc_print_usage_error(cmd, "option '%s' needs a value (see -h)",
					   argv[optind - 1]);
		}
		i = row_of(r, n, c);
		if (i < 0)
			return sc_print_usage_error(cmd, "unknown option '%s' (see -h)",
					   argv[optind - 1]);
		if (sc_option_set(&r[i], optarg, "--", err, sizeof(err)))
			return sc_print_usage_error(cmd, "%s", err);
	}
	c = parse_positionals(r, n, cmd, argc, argv, rest);
	return c ? c : check_required(r, n, cmd);
}

/* The member's value at base in the syntax it is given in; false when
 * there is none to show (no value, or a number outside the row's range:
 * "not given"). */
static bool value_text(const struct sc_option *o, const void *base, char *buf,
		       size_t len)
{
	const void *p = (const char *)base + o->offset;
	const struct sc_enum *e;
	uint64_t u = 0;
	double d = 0;

	switch (o->type) {
	case SC_OPT_UINT:
	case SC_OPT_DSCP:
		u = load_uint(p, o->size);
		if (o->type == SC_OPT_UINT && (u < bound(o->lo) || u > bound(o->hi)))
			return false;
		snprintf(buf, len, "%" PRIu64, u);
		return true;
	case SC_OPT_DURATION:
		d = *(const __u64 *)p / (double)(o->unit ? o->unit : SC_UNIT_S);
		if (o->unit_suffix && d >= o->lo && d <= o->hi) {
			duration_text(*(const __u64 *)p, buf, len);
			return true;
		}
		break;
	case SC_OPT_RATE:
		u = *(const __u64 *)p;
		if (u < bound(o->lo) || u > bound(o->hi))
			return false;
		sc_rate_text(u, buf, len);
		return true;
	case SC_OPT_MSEC:
		d = *(const __u32 *)p / 1000.0;
		break;
	case SC_OPT_SECONDS:
	case SC_OPT_NUMBER:
		d = *(const double *)p;
		break;
	case SC_OPT_ENUM:
		for (e = o->values; e->name && !o->bit; e++)
			if (e->val == *(const int *)p)
				return snprintf(buf, len, "%s", e->name) > 0;
		return false;
	case SC_OPT_STRING:
	case SC_OPT_PATH:
	case SC_OPT_ABSPATH:
		return *(const char *const *)p &&
		       snprintf(buf, len, "%s", *(const char *const *)p) > 0;
	default:
		return false;
	}
	if (o->type == SC_OPT_DURATION || o->type == SC_OPT_NUMBER)
		if (d < o->lo || d > o->hi)
			return false;
	snprintf(buf, len, "%.9g", d);
	return true;
}

int sc_option_cross_error(const struct sc_option *t, void *base, const void *cli,
			  const char *key, const char *rule, char *err, size_t errlen)
{
	char name[72], val[64] = "";
	struct sc_opt_ref r;
	bool opt;

	if (sc_option_find(t, base, key, false, &r)) {
		snprintf(name, sizeof(name), "%s", key);
	} else {
		/* named as the user gave it: an option, or a key of the file */
		opt = cli && sc_option_given(t, (void *)cli, key);
		snprintf(name, sizeof(name), "%s%s", opt ? "--" : "", opt ? opt_name(r.opt) : key);
		if (!value_text(r.opt, r.base, val, sizeof(val)))
			val[0] = '\0';
	}
	snprintf(err, errlen, "%s%s%s%s: out of range with the other settings%s%s", name,
		 val[0] ? " '" : "", val, val[0] ? "'" : "", rule[0] ? ": accepted: " : "", rule);
	return -EINVAL;
}

static bool shows_range(enum sc_opt_type type)
{
	return type == SC_OPT_UINT || type == SC_OPT_DSCP || type == SC_OPT_DURATION ||
	       type == SC_OPT_MSEC || type == SC_OPT_SECONDS || type == SC_OPT_NUMBER ||
	       type == SC_OPT_RATE;
}

static void help_line(FILE *f, const struct sc_option *o, const void *defaults)
{
	char flag[64], acc[256], def[128];
	bool has_def = defaults && value_text(o, defaults, def, sizeof(def));

	snprintf(flag, sizeof(flag), "%s%c%s--%s%s%s", o->short_opt ? "-" : "  ",
		 o->short_opt ? o->short_opt : ' ', o->short_opt ? ", " : "  ",
		 opt_name(o), o->metavar ? " " : "", o->metavar ? o->metavar : "");
	fprintf(f, "  %-34s %s", flag, o->help);
	acc[0] = '\0';
	if (shows_range(o->type == SC_OPT_LIST ? o->elem : o->type))
		sc_option_accepted(o, acc, sizeof(acc));
	if (acc[0] || has_def)
		fprintf(f, " (%s%s%s%s)", acc, acc[0] && has_def ? "; " : "",
			has_def ? "default " : "", has_def ? def : "");
	fputc('\n', f);
}

/* The keys of a KEYVALS row (or a list of them), under its option. */
static void help_keys(FILE *f, const struct sc_option *o)
{
	const struct sc_option *k;
	char key[64], acc[256];

	if (o->type != SC_OPT_KEYVALS && (o->type != SC_OPT_LIST || o->elem != SC_OPT_KEYVALS))
		return;
	for (k = o->sub; k->type != SC_OPT_END; k++) {
		snprintf(key, sizeof(key), "%s=%s", k->name, k->metavar ? k->metavar : "");
		sc_option_accepted(k, acc, sizeof(acc));
		fprintf(f, "  %6s%-28s %s (%s%s)\n", "", key, k->help, acc,
			k->required ? "; required" : "");
	}
}

static void options_help(FILE *f, const struct sc_option *t, const void *defaults)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, true, r, 0), i;

	for (i = 0; i < n; i++) {
		if (r[i].opt->positional)
			continue;
		help_line(f, r[i].opt, defaults);
		help_keys(f, r[i].opt);
	}
	fprintf(f, "  %-34s %s\n", "-h, --help", "show this help and exit");
}

void sc_options_help(FILE *f, const struct sc_option *t)
{
	options_help(f, t, NULL);
}

void sc_usage(FILE *f, const char *synopsis, const struct sc_option *t,
	      const void *defaults, const char *epilog)
{
	fprintf(f, "Usage: %s %s\n", fs_log_prog(), synopsis);
	options_help(f, t, defaults);
	if (epilog)
		fputs(epilog, f);
}

void sc_options_table(const char *path, const struct sc_option *t)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, true, r, 0), i;

	for (i = 0; i < n; i++)
		if (!r[i].opt->positional)
			printf("%s --%s\n", path, opt_name(r[i].opt));
	printf("%s --help\n", path);
}

void sc_options_keys_help(FILE *f, const struct sc_option *t)
{
	struct sc_opt_ref r[SC_MAX_FLAT_OPTS];
	int n = flatten(t, NULL, false, r, 0), i;
	char key[64], acc[256];

	for (i = 0; i < n; i++) {
		const struct sc_option *o = r[i].opt;

		snprintf(key, sizeof(key), "%s %s", o->name, o->metavar ? o->metavar : "");
		sc_option_accepted(o, acc, sizeof(acc));
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
			printf("opt\t%s\t--%s\t%s\t-%c\n", path, opt_name(o), v, o->short_opt);
		else
			printf("opt\t%s\t--%s\t%s\t\n", path, opt_name(o), v);
	}
	if (!keys)
		printf("opt\t%s\t--help\t\t-h\n", path);
}
