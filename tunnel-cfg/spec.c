// SPDX-License-Identifier: GPL-2.0
/*
 * spec.c - the settings of "route up": their option table (the options of
 * route up, the [route] keys of a config file, the keys of the record),
 * each value checked by lib's validator of its kind, and the check of the
 * settings as a whole. Nothing here touches the system.
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

const struct tcfg_spec tcfg_spec_defaults = {
	.table_short = TCFG_DEFAULT_TABLE_SHORT,
	.table_long = TCFG_DEFAULT_TABLE_LONG,
	.priority = TCFG_DEFAULT_PRIORITY,
	.dscp_long = -1,
	.long_queue_ns = TCFG_DEFAULT_LONG_QUEUE_MS * FS_NS_PER_MS,
};

struct tcfg_spec *tcfg_spec_new(void)
{
	struct tcfg_spec *s = malloc(sizeof(*s));

	if (s)
		*s = tcfg_spec_defaults;
	return s;
}

void tcfg_spec_free(struct tcfg_spec *spec)
{
	free(spec);
}

static const struct sc_enum modes[] = {
	{ "split", MODE_SPLIT }, { "ecmp", MODE_ECMP }, { NULL, 0 },
};
static const struct sc_enum selectors[] = {
	{ "auto", SEL_AUTO }, { "dscp", SEL_DSCP }, { "tos", SEL_TOS }, { NULL, 0 },
};

/* prefix: a network address; the newest of the list is checked, and the
 * network it names is suggested */
static int network_only(const struct sc_option *o, void *member, const char *value,
			char *why, size_t whylen)
{
	struct sc_prefix p = ((struct tcfg_spec *)((char *)member - o->offset))->prefixes[
		*(int *)member - 1];
	char net[TCFG_PREFIX_STRLEN];

	if (!sc_prefix_host_bits(&p))
		return 0;
	tcfg_fmt_prefix(&p, net, sizeof(net));
	snprintf(why, whylen,
		 "invalid value '%s': host bits set: accepted: a network address ADDR/LEN (%s)",
		 value, net);
	return -EINVAL;
}

/* table-short, table-long: not the kernel's own tables */
static int not_kernel_table(const struct sc_option *o, void *member, const char *value,
			    char *why, size_t whylen)
{
	__u32 t = *(__u32 *)member;

	(void)o;
	(void)value;
	(void)why;
	(void)whylen;
	return t >= 253 && t <= 255 ? -EINVAL : 0;	/* default, main, local */
}

#define ROUTE_OPT(_name, _type, m, ...) SC_OPTION(_name, _type, struct tcfg_spec, m, __VA_ARGS__)
const struct sc_option tcfg_route_opts[] = {
	ROUTE_OPT("mode", SC_OPT_ENUM, mode, .values = modes, .metavar = "split|ecmp",
		  .help = "split: long code point -> LONG tunnel, rest -> SHORT; "
			  "ecmp: one multipath route over both, L4 hash"),
	ROUTE_OPT("short-dev", SC_OPT_IFNAME, short_dev, .noun = "interface name",
		  .metavar = "DEV", .help = "tunnel interface for short flows (must be up)"),
	ROUTE_OPT("long-dev", SC_OPT_IFNAME, long_dev, .noun = "interface name",
		  .metavar = "DEV", .help = "tunnel interface for long flows (must be up)"),
	SC_OPTION_LIST_AT("prefix", SC_OPT_PREFIX, struct tcfg_spec, nprefixes, prefixes,
			  .pfx_flags = SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, .check = network_only,
			  .accepted = "an IPv4 or IPv6 prefix ADDR/LEN", .metavar = "CIDR",
			  .help = "remote prefix reachable over the SD-WAN (repeat; IPv4/IPv6)"),
	SC_OPTION_LIST_AT("lan-dev", SC_OPT_IFNAME, struct tcfg_spec, nlan, lan,
			  .noun = "interface name", .metavar = "IF",
			  .help = "match only traffic arriving on this LAN interface (repeat)"),
	SC_OPTION_PER_FAMILY("via-short", SC_OPT_ADDR, struct tcfg_spec, via_short,
			     SC_PER_FAMILY_REPLACE, .noun = "address", .metavar = "ADDR",
			     .accepted = "an IPv4 or IPv6 address (one per family)",
			     .help = "next hop through the SHORT tunnel (one per family)"),
	SC_OPTION_PER_FAMILY("via-long", SC_OPT_ADDR, struct tcfg_spec, via_long,
			     SC_PER_FAMILY_REPLACE, .noun = "address", .metavar = "ADDR",
			     .accepted = "an IPv4 or IPv6 address (one per family)",
			     .help = "next hop through the LONG tunnel (one per family)"),
	ROUTE_OPT("table-short", SC_OPT_UINT, table_short, .lo = 1, .hi = 0xfffffffe,
		  .check = not_kernel_table, .noun = "table", .metavar = "N",
		  .accepted = "1..4294967294 except 253-255 (default, main, local)",
		  .help = "routing table of the SHORT class (default 100)"),
	ROUTE_OPT("table-long", SC_OPT_UINT, table_long, .lo = 1, .hi = 0xfffffffe,
		  .check = not_kernel_table, .noun = "table", .metavar = "N",
		  .accepted = "1..4294967294 except 253-255 (default, main, local)",
		  .help = "routing table of the LONG class (default 101)"),
	ROUTE_OPT("priority", SC_OPT_UINT, priority, .lo = 1, .hi = 32764, .metavar = "N",
		  .accepted = "1..32764 (rules use PRIORITY and PRIORITY+1, before main at 32766)",
		  .help = "rule priority; PRIORITY and PRIORITY+1 are used (default 1000)"),
	ROUTE_OPT("dscp-long", SC_OPT_DSCP, dscp_long, .noun = "DSCP", .metavar = "V",
		  .help = "long code point (default: the attached splitter's, else 1)"),
	ROUTE_OPT("selector", SC_OPT_ENUM, selector, .values = selectors,
		  .metavar = "auto|dscp|tos",
		  .help = "rule match: dscp (kernel >= 6.13, any code point), "
			  "tos (every kernel, DSCP 1..7 only), auto: dscp if the kernel has it"),
	ROUTE_OPT("long-rate", SC_OPT_RATE, long_rate_bps, .lo = 100000, .hi = 100e9,
		  .metavar = "RATE",
		  .help = "LONG's rate, when known: its queue moves onto the router at 0.95 x "
			  "it, the short class first (default: not set)"),
	ROUTE_OPT("long-queue", SC_OPT_DURATION, long_queue_ns, .unit = SC_UNIT_MS,
		  .unit_suffix = true, .lo = 1, .hi = 10000, .metavar = "DUR",
		  .help = "each class's queue on LONG at most this long at its rate, with "
			  "long-rate (default 100ms)"),
	SC_OPTIONS_END,
};

int tcfg_spec_set(struct tcfg_spec *s, const char *key, const char *value,
		  char *err, size_t errlen)
{
	char names[256] = "";
	struct sc_opt_ref r;

	if (sc_option_find(tcfg_route_opts, s, key, false, &r)) {
		sc_option_names(tcfg_route_opts, names, sizeof(names));
		snprintf(err, errlen, "unknown route setting '%s': accepted: %s", key, names);
		return -1;
	}
	return sc_option_set(&r, value, "", err, errlen) ? -1 : 0;
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
		snprintf(err, errlen, "short-dev and long-dev are both '%s': they must differ",
			 s->short_dev);
	else if (!s->nprefixes)
		snprintf(err, errlen, "at least one remote prefix is required");
	else if (s->table_short == s->table_long)
		snprintf(err, errlen, "table-short and table-long are both %u: they must differ",
			 s->table_short);
	else if (s->mode == MODE_ECMP && v6 &&
		 (!s->via_short[1].family || !s->via_long[1].family)) {
		/* the kernel takes no device-only IPv6 multipath route */
		tcfg_fmt_prefix(v6, a, sizeof(a));
		snprintf(err, errlen,
			 "ecmp mode: IPv6 prefix %s needs IPv6 gateways: give --via-short and "
			 "--via-long an IPv6 address each",
			 a);
	} else {
		return 0;
	}
	return -1;
}
