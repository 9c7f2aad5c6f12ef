/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcfg.h - what the files of tunnel-cfg share (not part of the interface
 * to splitctl, which is tunnel_cfg.h).
 *
 *   spec.c         "route up" settings: parsing and validation
 *   msg.c          rtnetlink messages built into / parsed from a buffer
 *                  (no socket: unit-tested by tests/unit/test_tcfg.c)
 *   rules.c        our policy rules: wanted set, dump, converge, DSCP probe
 *   routes.c       our routes: wanted set, dump, install, remove
 *   hash_policy.c  the fib_multipath_hash_policy record of ECMP mode
 *   route.c        route up / down (the actions)
 *   route_show.c   route show
 *   tunnel.c       tunnel add / del / show
 *   nl.c           the netlink socket (send, ACK, extack); tcfg_fail()
 *   cli_compat.c   the old command lines (removed when splitctl parses them)
 *
 * Functions here return 0 or a negative errno and leave the one-line
 * reason in a struct tcfg_err; only the actions print (pr_err), once.
 */
#ifndef TCFG_H
#define TCFG_H

#include <stdbool.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "nl.h"
#include "tunnel_cfg.h"

#define TCFG_MAX_PREFIXES 32
#define TCFG_MAX_LAN 8
#define TCFG_MAX_OBJS 256	/* rules or routes of ours read back from the kernel */

/* The classic rule selector matches the TOS byte within this mask: DSCP 1..7. */
#define TCFG_TOS_MASK 0x1c

/* The failure reason of the innermost function that failed. */
struct tcfg_err {
	char msg[512];
};

/* Format the reason into e and return -err (err: a positive errno). */
int tcfg_fail(struct tcfg_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- spec.c ---------------------------------------------------------------- */
enum tcfg_mode { MODE_NONE, MODE_SPLIT, MODE_ECMP };
enum tcfg_selector { SEL_AUTO, SEL_DSCP, SEL_TOS };

/* An address, or a prefix when len < the full length. */
struct tcfg_prefix {
	int family;		/* AF_INET, AF_INET6; 0 = unset */
	unsigned char addr[16];	/* network byte order */
	int len;		/* prefix length in bits */
};

struct tcfg_spec {
	enum tcfg_mode mode;
	char short_dev[IF_NAMESIZE], long_dev[IF_NAMESIZE];
	struct tcfg_prefix prefixes[TCFG_MAX_PREFIXES];
	int nprefixes;
	char lan[TCFG_MAX_LAN][IF_NAMESIZE];
	int nlan;
	struct tcfg_prefix via_short[2], via_long[2];	/* [0] IPv4, [1] IPv6 */
	__u32 table_short, table_long, priority;
	int dscp_long;		/* -1: from splitctl's live config */
	enum tcfg_selector selector;
};

/* Index of a family in the [IPv4, IPv6] pairs; address length in bytes. */
static inline int tcfg_fam_idx(int family)
{
	return family == AF_INET6;
}

static inline int tcfg_alen(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

/* "ADDR/LEN" (need_len) or "ADDR"; 0 or -EINVAL. */
int tcfg_parse_prefix(const char *s, struct tcfg_prefix *p, bool need_len);
/* "ADDR/LEN" text of p into buf (TCFG_PREFIX_STRLEN bytes are enough). */
#define TCFG_PREFIX_STRLEN (INET6_ADDRSTRLEN + 4)
void tcfg_fmt_prefix(const struct tcfg_prefix *p, char *buf, size_t len);

/* ---- objects ---------------------------------------------------------------- */
/* A policy rule of ours: [iif IIF] [dscp D | tos T] -> lookup TABLE. */
struct tcfg_rule {
	int family;
	__u32 table, prio;
	char iif[IF_NAMESIZE];	/* "" = any input interface */
	int dscp;		/* FRA_DSCP selector, -1 none */
	int tos;		/* classic TOS selector (TOS byte), 0 none */
};

struct tcfg_nexthop {
	int oif;			/* output interface (ifindex) */
	struct tcfg_prefix via;		/* gateway; family 0: on-link */
};

/* A route of ours: DST in TABLE over one nexthop, or several (multipath). */
struct tcfg_route {
	int family;
	__u32 table;
	struct tcfg_prefix dst;
	struct tcfg_nexthop nh[2];
	int nnh;
};

/* Lists of up to TCFG_MAX_OBJS are tens of kilobytes: their users keep them
 * static (one action per process at a time, as with lib/json_print). */
struct tcfg_rules {
	struct tcfg_rule r[TCFG_MAX_OBJS];
	int n;
};

struct tcfg_routes {
	struct tcfg_route r[TCFG_MAX_OBJS];
	int n;
};

/* ---- msg.c: requests into buf (at least TCFG_MSG_SIZE bytes) ---------------- */
#define TCFG_MSG_SIZE 1024
/*
 * Every request carries NLM_F_REQUEST | NLM_F_ACK; nl_talk() stamps the
 * sequence number. New rules: NLM_F_CREATE | NLM_F_EXCL (a rule of the
 * same content would otherwise be added twice); new routes:
 * NLM_F_CREATE | NLM_F_REPLACE (a prefix is never without a route); new
 * links: NLM_F_CREATE | NLM_F_EXCL (never take over someone's interface).
 */
struct nlmsghdr *tcfg_msg_rule(void *buf, int type, const struct tcfg_rule *r);
struct nlmsghdr *tcfg_msg_route(void *buf, int type, const struct tcfg_route *rt);
/* RTM_GETRULE / RTM_GETROUTE / RTM_GETLINK dump of every family */
struct nlmsghdr *tcfg_msg_dump(void *buf, int type);
/* RTM_GETLINK / RTM_DELLINK of one interface */
struct nlmsghdr *tcfg_msg_link(void *buf, int type, int ifindex);
struct tcfg_tunnel;
/* RTM_NEWLINK of tunnel t over the underlay ifindex, with this MTU (0: none) */
struct nlmsghdr *tcfg_msg_newlink(void *buf, const struct tcfg_tunnel *t,
				  int underlay, __u32 mtu);
/* Parse a dumped rule / route: true when it is ours (protocol TCFG_PROTO). */
bool tcfg_parse_rule(const struct nlmsghdr *nlh, struct tcfg_rule *r);
bool tcfg_parse_route(const struct nlmsghdr *nlh, struct tcfg_route *rt);

/* ---- rules.c ----------------------------------------------------------------- */
/* The rules "route up" wants for spec s with long code point dscp. */
void tcfg_rules_wanted(const struct tcfg_spec *s, int dscp, bool use_dscp,
		       struct tcfg_rules *want);
int tcfg_rules_dump(struct nl *nl, struct tcfg_rules *have, struct tcfg_err *e);
/* Add the wanted rules missing from have, then delete those of have not
 * wanted (deletions are best effort). */
int tcfg_rules_converge(struct nl *nl, const struct tcfg_rules *want,
			const struct tcfg_rules *have, struct tcfg_err *e);
int tcfg_rules_remove_all(struct nl *nl, struct tcfg_err *e);
/* Does this kernel match rules on DSCP (FRA_DSCP)? */
bool tcfg_rules_dscp_supported(struct nl *nl, __u32 table);

/* ---- routes.c ----------------------------------------------------------------- */
void tcfg_routes_wanted(const struct tcfg_spec *s, int short_if, int long_if,
			struct tcfg_routes *want);
int tcfg_routes_dump(struct nl *nl, struct tcfg_routes *have, struct tcfg_err *e);
/* Install (create or replace) every wanted route. */
int tcfg_routes_install(struct nl *nl, const struct tcfg_routes *want,
			struct tcfg_err *e);
/* Delete the routes of ours that are not wanted (best effort). */
int tcfg_routes_remove_unwanted(struct nl *nl, const struct tcfg_routes *want,
				struct tcfg_err *e);
int tcfg_routes_remove_all(struct nl *nl, struct tcfg_err *e);

/* ---- hash_policy.c ------------------------------------------------------------- */
/* Set fib_multipath_hash_policy to 1 (L4) for IPv4 and IPv6, recording the
 * values replaced. fresh: none of our objects exist, so a record found is a
 * leftover and is overwritten. */
int tcfg_hash_policy_set(bool fresh, struct tcfg_err *e);
/* Put the recorded values back (those still 1) and drop the record. */
int tcfg_hash_policy_restore(struct tcfg_err *e);

/* ---- tunnel.c ------------------------------------------------------------------ */
struct tcfg_tunnel {
	char name[IF_NAMESIZE];
	char kind[16];			/* "vxlan", "gre", "ipip", "wireguard" */
	__u32 vni;			/* VXLAN network identifier, 0 unset */
	struct tcfg_prefix local, remote;	/* outer addresses; family 0 unset */
	char dev[IF_NAMESIZE];		/* underlay, "" unset */
	__u16 dstport;			/* UDP port, host byte order */
	__u32 mtu;			/* 0: underlay MTU - overhead */
};

/* One RTM_NEWLINK of a dump, printed when it is a tunnel (tunnel show). */
int tcfg_tunnel_show_link(const struct nlmsghdr *nlh, void *data);

/* ---- route_show.c ---------------------------------------------------------------- */
/* The "rules" array of route show. */
void tcfg_show_rules(const struct tcfg_rules *rules);

#endif /* TCFG_H */
