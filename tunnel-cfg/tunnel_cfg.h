/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tunnel_cfg.h - the interface between splitctl (loader/) and tunnel-cfg.
 *
 * tunnel-cfg installs policy routing towards the SHORT and LONG tunnels with
 * netlink (libmnl) and creates lab tunnels. It knows nothing about BPF maps
 * and nothing about the command line, but exports the option tables of its
 * commands (tcfg_route_opts, tcfg_tunnel_opts: lib/params.h rows that parse
 * and check each value into its structs), which splitctl's commands use as
 * their own; splitctl passes in what it knows of the running splitter and
 * the agent through struct tcfg_ctx.
 *
 * Output goes through lib/json_print.h (the caller has called
 * print_begin()); errors are printed once, as one line, with pr_err()
 * (lib/util.h). The action functions return a process exit code
 * (FS_EXIT_OK, FS_EXIT_RUNTIME, FS_EXIT_USAGE).
 */
#ifndef TUNNEL_CFG_H
#define TUNNEL_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>

#include "params.h"
#include "plan.h"

/* What splitctl knows that tunnel-cfg does not look up itself. */
struct tcfg_ctx {
	int dscp_long;	/* long code point of the live splitter config, -1 if none */
	int dscp_short;	/* its short code point, -1 if not known (the LONG
			 * shaper keeps the one it matches, else the default) */
	struct tcfg_in_force in_force;	/* of a running agent (pid 0: none
					 * publishes health) */
	int agent_pid;			/* a running agent, publishing or not
					 * (0: none) */
	/* route show: the members the caller adds at the end of its object
	 * (splitctl: the agent's tunnel health); NULL for none */
	void (*show_more)(void);
};

/* Defaults of "route up", for splitctl's help text. */
#define TCFG_DEFAULT_TABLE_SHORT 100
#define TCFG_DEFAULT_TABLE_LONG 101
#define TCFG_DEFAULT_PRIORITY 1000

/* ---- route up|down|show ---------------------------------------------------- */
#define TCFG_MAX_PREFIXES 32
#define TCFG_MAX_LAN 8
enum tcfg_mode { MODE_NONE, MODE_SPLIT, MODE_ECMP };
enum tcfg_selector { SEL_AUTO, SEL_DSCP, SEL_TOS };

/* The settings of "route up": the rows of tcfg_route_opts fill it (the
 * options of route up, the [route] keys of a config file, the record). */
struct tcfg_spec {
	__u32 given;
	enum tcfg_mode mode;
	char short_dev[IF_NAMESIZE], long_dev[IF_NAMESIZE];
	int nprefixes;
	struct sc_prefix prefixes[TCFG_MAX_PREFIXES];
	int nlan;
	char lan[TCFG_MAX_LAN][IF_NAMESIZE];
	struct sc_prefix via_short[2], via_long[2];	/* [0] IPv4, [1] IPv6 */
	__u32 table_short, table_long, priority;
	int dscp_long;		/* -1: from splitctl's live config */
	enum tcfg_selector selector;
	__u64 long_rate_bps;	/* LONG's rate: the LONG shaper (longq.c) at
				 * 0.95 x it; 0: none */
	__u64 long_queue_ns;	/* its queues hold at most this at its rate */
};
/* Its option table (spec.c), and its values before any is given. */
extern const struct sc_option tcfg_route_opts[];
extern const struct tcfg_spec tcfg_spec_defaults;
struct tcfg_spec *tcfg_spec_new(void);
void tcfg_spec_free(struct tcfg_spec *spec);
/* One "route up" setting by its key (its row's name: "mode", "short-dev",
 * "prefix", ...; list keys may repeat), as the record holds them. 0 ok;
 * -1 bad key or value, with a one-line reason (naming the value and what
 * is accepted) in err. */
int tcfg_spec_set(struct tcfg_spec *spec, const char *key, const char *value,
		  char *err, size_t errlen);
/* 0 when complete and consistent; -1 with a reason in err */
int tcfg_spec_check(const struct tcfg_spec *spec, char *err, size_t errlen);
/*
 * One rule for the long code point the rules match: the splitter's. With a
 * live splitter (ctx->dscp_long >= 0) a spec's own dscp-long must equal it
 * (else -1 with the reason in err); without one, the spec's or 1. Includes
 * tcfg_spec_check().
 */
int tcfg_spec_check_ctx(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx,
			char *err, size_t errlen);
/* Everything "route up" checks before its first change (the devices exist
 * and are up, the rules can match the code point), changing nothing: an
 * exit code, with the reason in err (empty when FS_EXIT_OK). */
int tcfg_route_check(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx,
		     char *err, size_t errlen);
int tcfg_route_up(const struct tcfg_spec *spec, const struct tcfg_ctx *ctx);
/*
 * The splitter's long code point becomes ctx->dscp_long: the split-mode
 * routes of the last "route up" follow it (nothing to do without such
 * routes). dry_run: only check that they can (reason in err); else
 * re-install them (errors printed, as by tcfg_route_up). An exit code.
 */
int tcfg_route_follow(const struct tcfg_ctx *ctx, bool dry_run, char *err, size_t errlen);
/*
 * The recorded "up" against want, key by key (the keys of tcfg_spec_set();
 * values as text, lists space separated): fn for each that differs
 * (dscp-long and selector only when want names them). 0, -ENOENT when
 * nothing is recorded, -EINVAL when the record is unreadable.
 */
int tcfg_route_diff(const struct tcfg_spec *want,
		    void (*fn)(void *u, const char *key, const char *from, const char *to),
		    void *u);
/* What an "up" with want would drop of the recorded one: prefixes, LAN
 * devices and gateways, as "prefix fd02::/48; lan-dev lan1" in what; the
 * number of items (0: none, or nothing recorded). */
int tcfg_route_removals(const struct tcfg_spec *want, char *what, size_t len);
int tcfg_route_down(const struct tcfg_ctx *ctx);
int tcfg_route_show(const struct tcfg_ctx *ctx);
/* route show's state alone ("ok", "degraded", "down", "unknown"), its
 * first reason in why ("" when none); prints nothing (status). */
const char *tcfg_route_state(const struct tcfg_ctx *ctx, char *why, size_t len);

/* ---- tunnel add|del|show --------------------------------------------------- */
/* A lab tunnel: name and kind from tcfg_tunnel_new(), the rest from the
 * rows of tcfg_tunnel_opts (the options of "tunnel add"). */
struct tcfg_tunnel {
	__u32 given;
	char name[IF_NAMESIZE];
	char kind[16];			/* "vxlan", "gre", "ipip", "wireguard" */
	__u32 vni;			/* VXLAN network identifier, 0 unset */
	struct sc_prefix local, remote;	/* outer addresses; family 0 unset */
	char dev[IF_NAMESIZE];		/* underlay, "" unset */
	__u16 dstport;			/* UDP port, host byte order */
	__u32 mtu;			/* 0: underlay MTU - overhead */
	struct sc_prefix addr[2];	/* the tunnel's own: [0] IPv4, [1] IPv6 */
};
extern const struct sc_option tcfg_tunnel_opts[];
/* kind: "vxlan", ... ; NULL with a reason in err when kind or name is bad */
struct tcfg_tunnel *tcfg_tunnel_new(const char *name, const char *kind,
				    char *err, size_t errlen);
void tcfg_tunnel_free(struct tcfg_tunnel *t);
/* Complete and consistent (vxlan: vni, local, remote, dev)? An exit code,
 * the reason in err; dash: "--" for options, "" for config keys. */
int tcfg_tunnel_check(const struct tcfg_tunnel *t, const char *dash, char *err, size_t errlen);
int tcfg_tunnel_add(const struct tcfg_tunnel *t);
/*
 * What the kernel has of tunnel want (a config file's [tunnel NAME]):
 * ABSENT (no interface of that name), SAME, or DIFFERS (ours, what differs
 * in what: "vni 101 -> 102, ..."; live gets the tunnel as it is, to make it
 * again); -EEXIST when an interface of that name is not ours, -errno; the
 * reason in what. Addresses: the file's must be there, others may be.
 */
enum { TCFG_TUNNEL_ABSENT = 1, TCFG_TUNNEL_SAME, TCFG_TUNNEL_DIFFERS };
int tcfg_tunnel_compare(const struct tcfg_tunnel *want, struct tcfg_tunnel *live,
			char *what, size_t len);
int tcfg_tunnel_del(const char *name);
int tcfg_tunnel_show(void);

/* ---- traffic of the tunnels of route up ------------------------------------ */
struct tcfg_tunnel_traffic {
	char dev[16];		/* "" when the device is gone */
	unsigned long long tx_packets, tx_bytes, rx_packets, rx_bytes;
};
/* The SHORT [0] and LONG [1] tunnels of the recorded "route up" and their
 * interface counters: 0, -ENOENT (nothing recorded here), or -errno.
 * Prints nothing. */
int tcfg_tunnel_traffic(struct tcfg_tunnel_traffic t[2]);

/* ---- doctor: what "splitctl doctor" checks of tunnel-cfg's -------------------- */
struct tcfg_doctor_tunnel {
	char dev[16];			/* "" when the recorded device is gone */
	char underlay[16];		/* VXLAN: the underlay device, else "" */
	int up;
	unsigned int mtu, underlay_mtu;
	unsigned int overhead;		/* VXLAN: 50 over IPv4, 70 over IPv6; else 0 */
};
struct tcfg_doctor {
	int recorded;			/* a route up is recorded here */
	int ecmp, ipv6;			/* its mode; an IPv6 prefix among its prefixes */
	int dscp_long;			/* the code point its rules match */
	int dscp_selector;		/* FRA_DSCP rules (else tos: DSCP 1..7) */
	int kernel_dscp;		/* this kernel matches FRA_DSCP */
	int missing;			/* rules/routes wanted but not in the kernel */
	char missing_first[200];
	int problems;			/* health: no agent, a class failed
					 * over, a tunnel down (route show's
					 * "degraded:" lines) */
	char problem_first[200];
	int foreign;			/* routes of others where ours go */
	char foreign_first[300];
	char lan[8][16];
	int nlan;
	struct tcfg_doctor_tunnel t[2];	/* SHORT, LONG */
	__u64 long_rate_bps;		/* route up's long-rate (0: none) */
	int longq_owner, longq_dscp;	/* the LONG shaper on t[1].dev
					 * (struct tcfg_longq_state) */
	char longq_err[256];		/* it could not be read, or the
					 * operator's root qdisc there */
};
/* Fill d (prints nothing): 0 or -errno. Probes the kernel's DSCP rule
 * selector with a rule that can never match (added and removed). */
int tcfg_doctor(const struct tcfg_ctx *ctx, struct tcfg_doctor *d);

/* ---- down: everything of tunnel-cfg's in this network namespace ------------ */
#define TCFG_MAX_DOWN_TUNNELS 32
struct tcfg_down_result {
	int rules, routes;		/* removed (protocol TCFG_PROTO) */
	char tunnels[TCFG_MAX_DOWN_TUNNELS][16];	/* deleted (owner-tagged) */
	int ntunnels;
};
/*
 * "splitctl down", its two parts here. tcfg_routes_down(): every rule and
 * route of ours (as "route down"), the route record and the replaced hash
 * policy, counted into r. tcfg_tunnels_down(): every tunnel "tunnel add"
 * created (its owner tag), named in r. Each goes on after an error
 * (removes what it can) and returns the first one (-errno, the reason in
 * err); nothing is printed.
 */
int tcfg_routes_down(struct tcfg_down_result *r, char *err, size_t errlen);
int tcfg_tunnels_down(struct tcfg_down_result *r, char *err, size_t errlen);

/* ---- the spill class on SHORT (scavenger.c) --------------------------------- */
/* The handles: the root HTB's major is the owner tag (an HTB root of that
 * handle is splitctl's; any other root but the kernel's default is the
 * operator's and refused); the classes are its minors. */
#define TCFG_SCAV_MAJOR 0xf5a0
#define TCFG_SCAV_TBF_MAJOR 0xf5a2
#define TCFG_SCAV_TOP_MINOR 0x1
#define TCFG_SCAV_PROBE_MINOR 0x5
#define TCFG_SCAV_SHORT_MINOR 0x10
#define TCFG_SCAV_SPILL_MINOR 0x20
struct tcfg_scav_cfg {
	char dev[IF_NAMESIZE];	/* the SHORT tunnel */
	int dscp;		/* the spill code point */
	__u64 top_bps;		/* both classes' ceiling (0.95 x SHORT's rate,
				 * or a line rate) */
	__u64 min_bps;		/* the spill class's guaranteed rate */
	__u64 rate_bps;		/* the spill TBF's first rate */
	__u32 limit_bytes;	/* the spill TBF's queue at most */
	__u32 wait_ms;		/* no packet waits longer in the spill TBF:
				 * its queue is held to wait_ms at its rate
				 * (at least one frame), whoever sets it */
};
struct tcfg_scav_stats {
	__u64 bytes, packets;	/* sent by the spill TBF */
	__u32 backlog, drops;	/* bytes queued now; packets dropped */
};
struct tcfg_scav;
/* Install the class on c->dev (an earlier one of ours is made again);
 * refuses (-EEXIST) a root qdisc someone else made. 0 or -errno with one
 * line in err; nothing half-made stays. */
int tcfg_scav_open(struct tcfg_scav **s, const struct tcfg_scav_cfg *c, char *err,
		   size_t errlen);
/* The spill TBF's rate (its bucket refills: see the hold), and its queue
 * limit with it: wait_ms at that rate (tcfg_scav_limit()). */
int tcfg_scav_rate(struct tcfg_scav *s, __u64 rate_bps, char *err, size_t errlen);
/* The top: short and spilled traffic together at most top_bps (class :1
 * and both classes' ceilings; the short class's rate). */
int tcfg_scav_top(struct tcfg_scav *s, __u64 top_bps, char *err, size_t errlen);
int tcfg_scav_stats(struct tcfg_scav *s, struct tcfg_scav_stats *st, char *err,
		    size_t errlen);
/* The spill TBF's queue in bytes at rate_bps: wait_ms's worth, at least
 * one frame, at most limit_bytes. With no agent left to change the rate,
 * a queued packet leaves within about wait_ms (plus one frame's time). */
__u32 tcfg_scav_limit(__u64 rate_bps, __u32 wait_ms, __u32 limit_bytes);
/* Close; remove: the class goes too (when it is still ours). */
void tcfg_scav_close(struct tcfg_scav *s, bool remove);
/* Who owns dev's root qdisc: 1 the spill class (ours), 0 the kernel's
 * default or no such device, -EEXIST someone else (named in err), -errno
 * ("doctor"). */
int tcfg_scav_owner(const char *dev, char *err, size_t errlen);
/* The code point the spill class's IPv4 filter on dev matches, in *dscp
 * (-1: none): 1 the class is ours, 0 no class of ours, -errno ("doctor"). */
int tcfg_scav_dscp(const char *dev, int *dscp, char *err, size_t errlen);
/* Remove ours from dev ("route down", an agent that stops spilling): 1
 * removed, 0 none of ours there, -errno (reason in err). */
int tcfg_scav_remove(const char *dev, char *err, size_t errlen);

/* ---- the LONG shaper (longq.c; docs/design.md, *Short class first on LONG*) ---- */
/* route up --long-rate: LONG's queue on the router, the short class first:
 *   root HTB TCFG_LONGQ_MAJOR:   unclassified traffic -> :20
 *     :1   rate = ceil = 0.95 x long-rate
 *       :10  short code point, prio 0, rate = ceil = top; bfifo
 *       :20  the rest (bulk, and the agent's probes), prio 1, ceil top; bfifo
 * Each bfifo holds long-queue at the top's rate. Owner-tagged like the
 * spill class: an HTB root of handle TCFG_LONGQ_MAJOR is ours. */
#define TCFG_LONGQ_MAJOR 0xf5a4
#define TCFG_LONGQ_TOP_MINOR 0x1
#define TCFG_LONGQ_SHORT_MINOR 0x10
#define TCFG_LONGQ_BULK_MINOR 0x20
#define TCFG_LONGQ_SHORT_LEAF 0xf5a5	/* the leaves' bfifo handles */
#define TCFG_LONGQ_BULK_LEAF 0xf5a6
#define TCFG_LONGQ_TOP_PCT 95		/* the top: this % of long-rate */
#define TCFG_DEFAULT_LONG_QUEUE_MS 100
struct tcfg_longq_cfg {
	char dev[IF_NAMESIZE];	/* the LONG tunnel */
	__u64 rate_bps;		/* long-rate (the top is 0.95 x it) */
	__u32 queue_ms;		/* each leaf's queue at the top's rate */
	int dscp;		/* the short code point */
};
enum tcfg_longq_class { TCFG_LONGQ_SHORT, TCFG_LONGQ_BULK, TCFG_LONGQ_CLASSES };
struct tcfg_longq_state {
	int owner;		/* 1 ours, 0 none (or no device), -EEXIST
				 * someone else's root */
	int dscp;		/* ours: the short class's code point (-1:
				 * its filter is gone) */
	struct tcfg_scav_stats cls[TCFG_LONGQ_CLASSES]; /* ours: the leaves' */
	__u32 limit_bytes[TCFG_LONGQ_CLASSES];	/* ours: the leaves' queues */
};
/* 0.95 x rate_bps */
__u64 tcfg_longq_top(__u64 rate_bps);
/* Install it on c->dev (one of ours there is made again); refuses (-EEXIST)
 * a root qdisc someone else made. 0 or -errno with one line in err;
 * nothing half-made stays. */
int tcfg_longq_install(const struct tcfg_longq_cfg *c, char *err, size_t errlen);
/* What is on dev (route show, doctor, the agent): 0 or -errno; with
 * owner -EEXIST, err names the root qdisc there */
int tcfg_longq_read(const char *dev, struct tcfg_longq_state *st, char *err, size_t errlen);
/* The recorded LONG shaper (metrics): 1 with long-rate recorded and ours
 * on its device (dev, st filled), else 0. */
int tcfg_longq_recorded(char dev[IF_NAMESIZE], struct tcfg_longq_state *st);
/* Remove ours from dev: 1 removed, 0 none of ours there, -errno. */
int tcfg_longq_remove(const char *dev, char *err, size_t errlen);
/* The record's wish on the devices now (route up, an agent that starts):
 * ours goes from every device of old (may be NULL) and rec but rec's
 * LONG; with rec->long_rate_bps it is installed on rec's LONG (made
 * again when it is not what rec asks; dscp < 0: the code point the one
 * there matches, else the splitter's default), else removed. *what: one
 * line of what was done ("" nothing). 0 or -errno (err). */
int tcfg_longq_reconcile(const struct tcfg_spec *old, const struct tcfg_spec *rec, int dscp,
			 char *what, size_t whatlen, char *err, size_t errlen);

#endif /* TUNNEL_CFG_H */
