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
 *   record.c       the record of what "route up" installed; the lock
 *   plan.c         the routes of a plan (plan.h); converge; degraded check
 *   route.c        route up / down (the actions)
 *   route_show.c   route show
 *   tunnel.c       tunnel add / del / show
 *   down.c         everything of ours in this namespace ("splitctl down")
 *   doctor.c       what "splitctl doctor" checks of ours
 *   nl.c           the netlink socket (send, ACK, extack); tcfg_fail()
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
#include <sys/stat.h>
#include <linux/types.h>

#include "nl.h"
#include "params.h"
#include "plan.h"
#include "tunnel_cfg.h"

struct json_object;

#define TCFG_MAX_OBJS 256	/* rules or routes of ours read back from the kernel */

/* The failure reason of the innermost function that failed. */
struct tcfg_err {
	char msg[512];
};

/* Format the reason into e and return -err (err: a positive errno). */
int tcfg_fail(struct tcfg_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- spec.c ---------------------------------------------------------------- */
/* struct tcfg_spec and its option table are tunnel_cfg.h's. Addresses and
 * prefixes are lib's struct sc_prefix (params.h), parsed by
 * sc_parse_prefix() only; a zeroed one (family 0) is "unset". */

/* Index of a family in the [IPv4, IPv6] pairs; address length in bytes. */
static inline int tcfg_fam_idx(int family)
{
	return family == AF_INET6;
}

static inline int tcfg_alen(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

/* "ADDR/LEN" text of p into buf (TCFG_PREFIX_STRLEN bytes are enough). */
#define TCFG_PREFIX_STRLEN (INET6_ADDRSTRLEN + 4)
void tcfg_fmt_prefix(const struct sc_prefix *p, char *buf, size_t len);

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
	struct sc_prefix via;		/* gateway; family 0: on-link */
	bool dead;			/* read back: RTNH_F_DEAD (link down) */
};

/* A route of ours: DST in TABLE over one nexthop, or several (multipath). */
struct tcfg_route {
	int family;
	__u32 table;
	struct sc_prefix dst;
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
/* RTM_GETRULE / RTM_GETROUTE / RTM_GETADDR / RTM_GETLINK dump of every family */
struct nlmsghdr *tcfg_msg_dump(void *buf, int type);
/* RTM_GETLINK / RTM_DELLINK of one interface */
struct nlmsghdr *tcfg_msg_link(void *buf, int type, int ifindex);
struct tcfg_tunnel;
/* RTM_NEWLINK of tunnel t over the underlay ifindex, with this MTU (0: none) */
struct nlmsghdr *tcfg_msg_newlink(void *buf, const struct tcfg_tunnel *t,
				  int underlay, __u32 mtu);
/* RTM_NEWADDR of address/prefix length p on ifindex (IPv6: no DAD) */
struct nlmsghdr *tcfg_msg_newaddr(void *buf, int ifindex, const struct sc_prefix *p);
/* RTM_NEWLINK (no NLM_F_CREATE) setting the alias of interface ifindex */
struct nlmsghdr *tcfg_msg_setalias(void *buf, int ifindex, const char *alias);
/* Parse a dumped rule / route: true when it is ours (protocol TCFG_PROTO).
 * Routes are read back with their gateways and dead next hops. */
bool tcfg_parse_rule(const struct nlmsghdr *nlh, struct tcfg_rule *r);
bool tcfg_parse_route(const struct nlmsghdr *nlh, struct tcfg_route *rt);
/* Any route: rt filled, its protocol (rtm_protocol) returned. */
int tcfg_parse_route_any(const struct nlmsghdr *nlh, struct tcfg_route *rt);

/*
 * Routes splitctl did not create (protocol other than TCFG_PROTO) in the
 * table of a wanted route: at its destination, or, with overlap, at any
 * destination inside or around it (a more specific one takes part of our
 * prefix's traffic away from the tunnels). "route up" and "doctor" refuse
 * any overlapping one; the agent's converge never replaces one at its
 * destination (exact). 0 (none), -EEXIST (the first named in e: route,
 * table, owner protocol, our prefix) or another -errno. foreign, when not
 * NULL, counts them.
 */
int tcfg_routes_foreign(struct nl *nl, const struct tcfg_routes *want, bool overlap,
			int *foreign, struct tcfg_err *e);

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
/* Same destination and table; same next hops (a set: order ignored). */
bool tcfg_route_same_dst(const struct tcfg_route *a, const struct tcfg_route *b);
bool tcfg_route_same(const struct tcfg_route *a, const struct tcfg_route *b);
/* "10.2.0.0/24 via 192.168.101.2 dev vxs[, via ... dev ...]" */
void tcfg_fmt_route(const struct tcfg_route *rt, char *buf, size_t len);
void tcfg_routes_wanted(const struct tcfg_spec *s, int short_if, int long_if,
			struct tcfg_routes *want);
int tcfg_routes_dump(struct nl *nl, struct tcfg_routes *have, struct tcfg_err *e);
/* Create or replace one route; the error names it (destination, gateway,
 * device), and an unreachable gateway as such. */
int tcfg_route_install(struct nl *nl, const struct tcfg_route *rt, struct tcfg_err *e);
/* Delete our route of rt's destination and table (-ENOENT: none). */
int tcfg_route_delete(struct nl *nl, const struct tcfg_route *rt, struct tcfg_err *e);
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
/*
 * The owner tag of the tunnels "tunnel add" creates: their interface alias
 * (IFLA_IFALIAS, "ip link" shows it). "tunnel del" and "down" delete only
 * interfaces of a tunnel kind that carry it; iproute2 and FRR tag routes
 * with a protocol number the same way (TCFG_PROTO).
 */
#define TCFG_TUNNEL_TAG "flowsplit: created by splitctl tunnel add"

/* The VXLAN details of tunnel ifindex (underlay, MTUs, overhead): 0 or -errno. */
int tcfg_tunnel_details(struct nl *nl, int ifindex, struct tcfg_doctor_tunnel *t);

/* The global addresses of a dump (RTM_GETADDR), for tunnel show. */
#define TCFG_MAX_ADDRS 64
struct tcfg_addrs {
	int ifindex[TCFG_MAX_ADDRS];
	struct sc_prefix addr[TCFG_MAX_ADDRS];
	int n;
};
/* One RTM_NEWLINK of a dump, printed when it is a tunnel (tunnel show);
 * data: its addresses (struct tcfg_addrs), or NULL. */
int tcfg_tunnel_show_link(const struct nlmsghdr *nlh, void *data);

/* ---- route_show.c ---------------------------------------------------------------- */
/* The "rules" array of route show. */
void tcfg_show_rules(const struct tcfg_rules *rules);

/* ---- record.c ---------------------------------------------------------------------- */
/* State outside the kernel, one file per network namespace. */
#define TCFG_STATE_DIR "/run/flowsplit"
/* TCFG_STATE_DIR/NAME-<netns inode>SUFFIX into buf */
int tcfg_state_path(char *buf, size_t len, const char *name, const char *suffix,
		    struct tcfg_err *e);
/* Serialise changes of our routes (route up/down, the agent): an exclusive
 * flock on TCFG_STATE_DIR. Returns the fd to pass to tcfg_unlock(). */
int tcfg_lock(struct tcfg_err *e);
void tcfg_unlock(int fd);
/* The settings as tcfg_spec_set() keys and text values, and back (the
 * values checked by the setters and tcfg_spec_check()). */
struct json_object *tcfg_spec_to_json(const struct tcfg_spec *s);
int tcfg_spec_from_json(struct json_object *o, struct tcfg_spec *s, struct tcfg_err *e);
/* The state documents TCFG_STATE_DIR/NAME-<netns inode>.json: a new one
 * {"version", "netns_cookie"}; write one whole or not at all (consumes o);
 * read one back (its path into path, TCFG_STATE_PATH_MAX bytes, for the
 * caller's errors): -ENOENT when absent or another namespace's; remove
 * one (absent is no error). */
#define TCFG_STATE_PATH_MAX 128
struct json_object *tcfg_json_doc_new(void);
int tcfg_state_write(const char *name, struct json_object *o, struct tcfg_err *e);
int tcfg_state_read(const char *name, char *path, size_t len, struct json_object **o,
		    struct tcfg_err *e);
int tcfg_state_remove(const char *name, struct tcfg_err *e);
/* route-<netns inode>.json: the resolved settings of the last good "up"
 * (dscp_long and selector as installed). read: 0, -ENOENT (none) or
 * -EINVAL (unreadable). */
int tcfg_record_write(const struct tcfg_spec *s, struct tcfg_err *e);
int tcfg_record_read(struct tcfg_spec *s, struct tcfg_err *e);
int tcfg_record_remove(struct tcfg_err *e);
/* The record file's stat (all zero when there is none): a new "up"
 * replaces it (rename), so its inode or time changes. */
void tcfg_record_stat(struct stat *st);

/* ---- plan.c ------------------------------------------------------------------------ */
/* The mode of a spec, and its plan with both tunnels up. */
enum health_mode tcfg_health_mode(const struct tcfg_spec *s);
struct health_plan tcfg_plan_normal(const struct tcfg_spec *s);
/* The plan in force for spec s: the plan of the states a running agent
 * has in force for s's tunnel devices, whatever their roles (f may be
 * NULL; without an agent: the normal plan). */
struct health_plan tcfg_plan_in_force(const struct tcfg_spec *s, const struct tcfg_in_force *f);
/*
 * The routes plan puts in place (ROUTE: every prefix in each table over the
 * tunnels the plan names; MAIN: none). False for WAIT and KEEP, which
 * change nothing (want untouched). With the normal plan this is exactly
 * tcfg_routes_wanted().
 */
bool tcfg_routes_for_plan(const struct tcfg_spec *s, int short_if, int long_if,
			  const struct health_plan *plan, struct tcfg_routes *want);
/* Rules of a recorded spec (resolved dscp_long and selector). */
void tcfg_rules_recorded(const struct tcfg_spec *s, struct tcfg_rules *want);

/* What the kernel lacks of what is wanted (the degraded state). */
#define TCFG_MAX_MISSING 16
struct tcfg_missing {
	char what[TCFG_MAX_MISSING][200];
	int n;			/* listed */
	int total;		/* found (may exceed TCFG_MAX_MISSING) */
};
/* Count one more finding in m and, while there is room, list it. */
void tcfg_missing_add(struct tcfg_missing *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tcfg_check(const struct tcfg_routes *want_routes, const struct tcfg_rules *want_rules,
		const struct tcfg_routes *have_routes, const struct tcfg_rules *have_rules,
		struct tcfg_missing *m);
/*
 * Make our routes exactly want: each route that differs from the kernel's
 * is installed with NLM_F_REPLACE (never deleted first: no moment without
 * a route), identical ones are left alone, then routes of ours not wanted
 * are deleted. Goes on after a failed route and returns the first error;
 * *changed (may be NULL) counts the requests that changed something.
 */
int tcfg_routes_converge(struct nl *nl, const struct tcfg_routes *want, int *changed,
			 struct tcfg_err *e);
/* The ifindexes of the spec's tunnels (0 for a missing device). */
void tcfg_tunnel_ifindexes(const struct tcfg_spec *s, int *short_if, int *long_if);

/* ---- scavenger.c: the spill class's requests into buf (TCFG_MSG_SIZE) ----------- */
/* RTM_NEWQDISC: the HTB root, handle TCFG_SCAV_MAJOR:, default class :10 */
struct nlmsghdr *tcfg_msg_scav_root(void *buf, int ifindex);
/* RTM_NEWTCLASS: HTB class MAJOR:minor under MAJOR:parent_minor (create,
 * or change its rates: the top follows the capacity estimate) */
struct nlmsghdr *tcfg_msg_scav_class(void *buf, int ifindex, bool create,
				     unsigned int parent_minor, unsigned int minor,
				     unsigned int prio, __u64 rate_bps, __u64 ceil_bps);
/* RTM_NEWQDISC: the spill TBF under MAJOR:20 (create, or change its rate) */
struct nlmsghdr *tcfg_msg_scav_tbf(void *buf, int ifindex, bool create, __u64 rate_bps,
				   __u32 limit_bytes);
/* RTM_NEWTFILTER: u32 on the root, family's code point dscp -> MAJOR:20 */
struct nlmsghdr *tcfg_msg_scav_filter(void *buf, int ifindex, int family, int dscp);
/* RTM_NEWTFILTER: u32 on the root, an IPv4 ICMP timestamp request -> MAJOR:5 */
struct nlmsghdr *tcfg_msg_scav_probe_filter(void *buf, int ifindex);
/* RTM_GETQDISC / RTM_DELQDISC of one qdisc */
struct nlmsghdr *tcfg_msg_scav_qdisc(void *buf, int type, int ifindex, __u32 parent,
				     __u32 handle);
/* The same builders for any HTB root of ours (the spill class above, the
 * LONG shaper of longq.c): root major:, unclassified traffic -> defminor */
struct nlmsghdr *tcfg_msg_htb_root(void *buf, int ifindex, unsigned int major,
				  unsigned int defminor);
struct nlmsghdr *tcfg_msg_htb_class(void *buf, int ifindex, unsigned int major, bool create,
				    unsigned int parent_minor, unsigned int minor,
				    unsigned int prio, __u64 rate_bps, __u64 ceil_bps);
/* RTM_NEWQDISC: a bfifo of limit_bytes at parent (a leaf class), handle */
struct nlmsghdr *tcfg_msg_bfifo(void *buf, int ifindex, __u32 parent, __u32 handle,
				__u32 limit_bytes);
/* u32 on the root major:, filter priority prio: family's code point dscp
 * -> major:minor */
struct nlmsghdr *tcfg_msg_dscp_filter(void *buf, int ifindex, unsigned int major,
				      unsigned int prio, int family, int dscp, unsigned int minor);
/* u32 on the root major:, priority prio: an IPv4 ICMP timestamp request
 * (the agent's probes) -> major:minor */
struct nlmsghdr *tcfg_msg_probe_filter(void *buf, int ifindex, unsigned int major,
				       unsigned int prio, unsigned int minor);

/* One qdisc read back (tcfg_qdisc_get()) */
struct tcfg_qdisc {
	bool found;
	char kind[16];
	__u32 handle;
	__u32 limit;		/* a fifo's limit */
	struct tcfg_scav_stats st;
};
/* The qdisc (parent, handle) of ifindex (TC_H_ROOT, 0: the root): 0 (found
 * says whether it is there), or -1 with errno */
int tcfg_qdisc_get(struct nl *nl, int ifindex, __u32 parent, __u32 handle, struct tcfg_qdisc *q);
/* The code point of the IPv4 u32 filter on root major: to major:minor in
 * *dscp (-1: none): 0, or -1 with errno */
int tcfg_htb_filter_dscp(struct nl *nl, int ifindex, unsigned int major, unsigned int minor,
			 int *dscp);
/* What is at dev's root: 1 an HTB of handle major: (ours), 0 the kernel's
 * default (free), -EEXIST someone else's (named in e, with need: what
 * wants the root and what to do), -errno. */
int tcfg_root_owner(struct nl *nl, int ifindex, const char *dev, unsigned int major,
		    const char *need, struct tcfg_err *e);
/* tcfg_root_owner() of dev on a socket opened into nl (closed by the
 * caller; nl->sock NULL when it could not be opened): 0 when dev is gone. */
int tcfg_root_open(struct nl *nl, const char *dev, int *ifindex, unsigned int major,
		   const char *need, struct tcfg_err *e);
/* Delete the root qdisc of handle major: (0, or -1 with errno) */
int tcfg_qdisc_del_root(struct nl *nl, int ifindex, unsigned int major);

#endif /* TCFG_H */
