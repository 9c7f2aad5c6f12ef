// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor.c - "splitctl doctor": pre-flight and live checks of this
 * router, each passed, failed (with a one-line fix) or skipped (does not
 * apply here). Read-only but for tunnel-cfg's DSCP selector probe (a rule
 * that can never match, added and removed). Exit 0 when nothing failed,
 * 1 otherwise. Text: "ok|FAIL|skip  NAME: what was found", a "fix:" line
 * under each failure; JSON: {"ok", "failed", "checks": [{name, status,
 * detail, fix}]}.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>

#include "agent_lock.h"
#include "commands.h"
#include "ha.h"
#include "health_file.h"
#include "tunnel_cfg.h"

/* NOTE: worth knowing, not a failure (not counted) */
enum verdict { PASS, FAIL, SKIP, NOTE };

struct doctor {
	const struct sc_opts *o;
	const char *dir;
	int failed;
	bool instance;			/* attached here, maps open */
	struct sc_state st;
	struct split_config cfg;
	struct sc_iface ifs[SC_MAX_IFACES];
	int nifs;
	struct tcfg_doctor t;		/* routes and tunnels */
};

static void check(struct doctor *d, enum verdict v, const char *name, const char *fix,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void check(struct doctor *d, enum verdict v, const char *name, const char *fix,
		  const char *fmt, ...)
{
	static const char *const status[] = { "ok", "FAIL", "skip", "note" };
	static const char *const json[] = { "pass", "fail", "skip", "note" };
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	d->failed += v == FAIL;
	open_json_object(NULL);
	print_string(PRINT_JSON, "status", NULL, json[v]);
	print_string(PRINT_FP, NULL, "%-5s ", status[v]);
	print_string(PRINT_ANY, "name", "%s: ", name);
	print_string(PRINT_ANY, "detail", "%s\n", detail);
	print_string(PRINT_JSON, "fix", NULL, v == FAIL ? fix : "");
	if (v == FAIL)
		print_string(PRINT_FP, NULL, "      fix: %s\n", fix);
	close_json_object();
}

/* An integer sysctl under /proc/sys; -1 when unreadable. */
static int sysctl_int(const char *fmt, const char *arg)
{
	char path[PATH_MAX];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), fmt, arg);
	f = fopen(path, "r");
	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static void check_base(struct doctor *d)
{
	char msg[PATH_MAX + 512], target[PATH_MAX];
	int err, i, removed = 0;

	err = sc_check_privileges();
	check(d, err ? FAIL : PASS, "privileges",
	      "run as root (CAP_BPF or CAP_SYS_ADMIN, and CAP_NET_ADMIN)", "%s",
	      err ? "missing" : "root, or CAP_BPF/CAP_SYS_ADMIN and CAP_NET_ADMIN");
	err = sc_prepare_dir(d->dir);
	if (err == -ENODEV || err == -EMEDIUMTYPE) {
		err = sc_bpffs_mountable(d->dir, target, sizeof(target));
		if (!err)
			check(d, PASS, "bpffs", "", "none at %s yet: attach mounts one there",
			      target);
	} else if (!err) {
		check(d, PASS, "bpffs", "", "%s is on a bpffs", d->dir);
	}
	if (err)
		check(d, FAIL, "bpffs", sc_state_strerror(err, d->dir, msg, sizeof(msg)),
		      "no usable bpffs for %s", d->dir);
	err = sc_state_open(d->o, &d->st, 0);
	d->instance = !err && !sc_config_read(&d->st, &d->cfg);
	if (d->instance)
		d->nifs = sc_ifaces_list(d->st.dir, d->ifs, SC_MAX_IFACES);
	if (d->nifs < 0)
		d->nifs = 0;
	for (i = 0; i < d->nifs; i++)
		removed += sc_iface_removed(&d->ifs[i]);
	if (d->instance && d->nifs)
		check(d, PASS, "instance", "", "%s: %d interface(s) attached%s", d->dir,
		      d->nifs - removed, removed ? " (and removed ones, below)" : "");
	else
		check(d, FAIL, "instance",
		      err == -EXDEV ? sc_state_strerror(err, d->dir, msg, sizeof(msg))
				    : "splitctl attach LAN_INTERFACE",
		      "%s",
		      err == -EXDEV ? "attached in another network namespace" : "nothing attached");
}

/* The observer at TC egress: without it, flows entering here never see a
 * message boundary (reshort boundary), only what reshort-gap does (said
 * as status says it). */
static void check_observer(struct doctor *d, const struct sc_iface *f)
{
	char name[64], fix[128], without[512];

	snprintf(name, sizeof(name), "observer %s", f->name);
	snprintf(fix, sizeof(fix), "splitctl attach %s (an upgrade in place attaches it again)",
		 f->name);
	if (!(d->cfg.flags & FS_CFG_F_RESHORT_BOUNDARY)) {
		check(d, SKIP, name, "", "reshort off: message boundaries not used");
		return;
	}
	sc_reshort_text(&d->cfg, false, without, sizeof(without));
	if (f->observer)
		check(d, PASS, name, fix,
		      "tcx egress: records the other direction's ACKs (message boundaries)");
	else
		check(d, FAIL, name, fix,
		      "missing at tcx egress: flows entering here see no message boundary; they "
		      "re-short %s",
		      without);
}

/* Per attached interface: its hook and what it costs, programs of others. */
static void check_hooks(struct doctor *d)
{
	char name[64], cost[256], fix[128];
	int i, n;

	for (i = 0; i < d->nifs; i++) {
		const struct sc_iface *f = &d->ifs[i];
		bool bad = !strcmp(f->mode, "generic") || !strcmp(f->mode, "?");

		if (sc_iface_removed(f)) {
			/* one check: nothing runs there, only its pins stay */
			snprintf(name, sizeof(name), "interface ifindex %d", f->ifindex);
			check(d, FAIL, name,
			      "splitctl detach --gone (forgets removed interfaces; the others stay "
			      "attached)",
			      "removed (was hook %s): the splitter runs nowhere there; its pins "
			      "stay",
			      sc_hook_name(f->hook));
			continue;
		}

		sc_hook_cost(f, cost, sizeof(cost));
		bad |= strstr(cost, "virtual driver") != NULL;
		snprintf(name, sizeof(name), "hook %s", f->name);
		snprintf(fix, sizeof(fix), "splitctl detach %s && splitctl attach %s --hook tc",
			 f->name, f->name);
		check(d, bad ? FAIL : PASS, name, fix, "%s %s: %s", sc_hook_name(f->hook), f->mode,
		      cost[0] ? cost : "unknown mode");
		n = sc_hook_tc_count(f->ifindex);
		n -= f->hook == SC_HOOK_TC;
		snprintf(name, sizeof(name), "foreign programs %s", f->name);
		check(d, n > 0 ? FAIL : PASS, name,
		      "see 'bpftool net show dev IF': remove them or make sure they keep the DSCP",
		      n > 0 ? "%d other TC ingress program(s) run with the splitter"
			    : "none besides the splitter",
		      n);
		check_observer(d, f);
	}
}

static bool attached(const struct doctor *d, const char *ifname)
{
	int i;

	for (i = 0; i < d->nifs; i++)
		if (!strcmp(d->ifs[i].name, ifname))
			return true;
	return false;
}

/* Code points of the datapath and of the rules; routes for both classes. */
static void check_routing(struct doctor *d)
{
	const struct tcfg_doctor *t = &d->t;
	char fix[128];
	int i, dl = d->instance ? d->cfg.dscp_long : t->dscp_long;

	if (t->kernel_dscp)
		check(d, PASS, "dscp rules", "",
		      "the kernel matches rules on DSCP (FRA_DSCP): any code point");
	else
		check(d, dl >= 1 && dl <= 7 ? PASS : FAIL, "dscp rules",
		      "splitctl set dscp-long 1 (rules can match DSCP 1..7 here)",
		      "tos selector only (DSCP 1..7); long code point %d", dl);
	if (!t->recorded) {
		check(d, FAIL, "routes",
		      "splitctl route up --mode split --short-dev DEV --long-dev DEV --prefix CIDR "
		      "...",
		      "no route up in this network namespace");
		return;
	}
	if (t->ecmp || !d->instance)
		check(d, SKIP, "code points", "", "%s",
		      t->ecmp ? "ecmp mode: no code point rules" : "no splitter attached");
	else
		check(d, d->cfg.dscp_long == (__u32)t->dscp_long ? PASS : FAIL, "code points",
		      "splitctl route up ... again (it takes the live code point)",
		      "the datapath marks long flows DSCP %u, the rules match DSCP %d",
		      d->cfg.dscp_long, t->dscp_long);
	check(d, t->missing ? FAIL : PASS, "routes",
	      "splitctl route up ... again, or run the agent (it re-converges)",
	      t->missing ? "degraded: %s" : "rules and routes of both classes in place%s",
	      t->missing ? t->missing_first : "");
	check(d, t->problems ? FAIL : PASS, "health",
	      strstr(t->problem_first, "no agent")
		      ? "splitctl run -c FILE (systemctl start flowsplit)"
	      : strstr(t->problem_first, "does not probe")
		      ? "run the agent with health on ([health] enabled = yes, --health yes)"
	      : strstr(t->problem_first, "not probed")
		      ? "give route up a gateway of that family for the tunnel (--via-short/"
			"--via-long ADDR, [route] via-short/via-long), or see the agent's log"
		      : "bring the tunnel back (splitctl route show: health), then the class "
			"returns after the hold-down",
	      t->problems ? "degraded: %s"
			  : "the agent probes both tunnels, both up, no class failed over%s",
	      t->problems ? t->problem_first : "");
	check(d, t->foreign ? FAIL : PASS, "route owners",
	      "remove the route, or route up with free --table-short/--table-long",
	      t->foreign ? "%s" : "no route of someone else in our tables overlaps our prefixes%s",
	      t->foreign ? t->foreign_first : "");
	for (i = 0; i < t->nlan; i++) {
		snprintf(fix, sizeof(fix), "splitctl attach %s", t->lan[i]);
		check(d, attached(d, t->lan[i]) ? PASS : FAIL, "lan", fix, "LAN interface %s %s",
		      t->lan[i],
		      attached(d, t->lan[i]) ? "runs the splitter"
					     : "has no splitter: all its flows are short");
	}
}

/* Tunnel MTU against its underlay and the LAN MTU; rp_filter per tunnel. */
static void check_tunnels(struct doctor *d)
{
	const struct tcfg_doctor *t = &d->t;
	char name[64], fix[160];
	int i, rp;

	for (i = 0; t->recorded && i < 2; i++) {
		const struct tcfg_doctor_tunnel *u = &t->t[i];

		snprintf(name, sizeof(name), "mtu %s", u->dev[0] ? u->dev : i ? "LONG" : "SHORT");
		if (!u->dev[0] || !u->overhead || !u->underlay[0]) {
			check(d, u->dev[0] ? SKIP : FAIL, name,
			      "splitctl tunnel add ... (the tunnel is gone)", "%s",
			      u->dev[0] ? "not a VXLAN tunnel over a known underlay"
					: "tunnel device missing");
			continue;
		}
		snprintf(fix, sizeof(fix), "ip link set %s mtu %u (or tunnel add --mtu %u)",
			 u->underlay, u->mtu + u->overhead, u->underlay_mtu - u->overhead);
		check(d, u->mtu + u->overhead <= u->underlay_mtu ? PASS : FAIL, name, fix,
		      "%u + %u B VXLAN overhead, underlay %s mtu %u", u->mtu, u->overhead,
		      u->underlay, u->underlay_mtu);
		snprintf(name, sizeof(name), "rp_filter %s", u->dev);
		rp = sysctl_int("/proc/sys/net/ipv4/conf/%s/rp_filter", u->dev);
		if (sysctl_int("/proc/sys/net/ipv4/conf/%s/rp_filter", "all") > rp)
			rp = sysctl_int("/proc/sys/net/ipv4/conf/%s/rp_filter", "all");
		snprintf(fix, sizeof(fix),
			 "sysctl -w net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.%s.rp_filter=2",
			 u->dev);
		check(d, rp == 1 ? FAIL : PASS, name, fix, "%d%s", rp,
		      rp == 1 ? ": strict, drops replies that come back over the other tunnel"
			      : "");
	}
}

static void check_sysctls(struct doctor *d)
{
	const struct tcfg_doctor *t = &d->t;
	int v4 = sysctl_int("/proc/sys/net/ipv4/%s", "ip_forward");
	int v6 = sysctl_int("/proc/sys/net/ipv6/conf/all/%s", "forwarding");
	bool need6 = t->ipv6 || !t->recorded;

	check(d, v4 == 1 && (v6 == 1 || !need6) ? PASS : FAIL, "ip_forward",
	      "sysctl -w net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1",
	      "net.ipv4.ip_forward %d, net.ipv6.conf.all.forwarding %d", v4, v6);
	if (!t->recorded || !t->ecmp) {
		check(d, SKIP, "multipath hash", "", "not in ECMP mode");
		return;
	}
	v4 = sysctl_int("/proc/sys/net/ipv4/%s", "fib_multipath_hash_policy");
	v6 = sysctl_int("/proc/sys/net/ipv6/%s", "fib_multipath_hash_policy");
	check(d, v4 == 1 && (v6 == 1 || !t->ipv6) ? PASS : FAIL, "multipath hash",
	      "splitctl route up --mode ecmp ... again (it sets the L4 hash)",
	      "fib_multipath_hash_policy ipv4 %d, ipv6 %d (ECMP needs 1: L4, one path per flow)",
	      v4, v6);
}

/* A "Key:\t..." line of /proc/PID/status. */
static bool proc_status(int pid, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, len, "%s", line + klen + 1);
			found = true;
		}
	if (f)
		fclose(f);
	return found;
}

/*
 * Whether the agent (or, with none running, a process with this doctor's
 * privileges) can send the health probes: a ping socket needs its group in
 * net.ipv4.ping_group_range (this namespace's: "1 0", nobody, unless
 * configured), a raw socket needs CAP_NET_RAW (flowsplit.service grants it).
 */
static void check_probing(struct doctor *d)
{
	int pid = agent_lock_holder(), self = pid ? pid : (int)getpid();
	unsigned long long caps = 0;
	unsigned int gid = 0, lo = 1, hi = 0;
	char val[128];
	bool raw, ping;
	FILE *f;

	if (!d->t.recorded) {
		check(d, SKIP, "probing", "", "no route up: no tunnel to probe");
		return;
	}
	if (proc_status(self, "CapEff", val, sizeof(val)))
		caps = strtoull(val, NULL, 16);
	if (proc_status(self, "Gid", val, sizeof(val)))
		sscanf(val, "%*u %u", &gid);
	f = fopen("/proc/sys/net/ipv4/ping_group_range", "r");
	if (!f || fscanf(f, "%u %u", &lo, &hi) != 2)
		lo = 1, hi = 0;
	if (f)
		fclose(f);
	raw = caps & (1ULL << CAP_NET_RAW);
	ping = gid >= lo && gid <= hi;
	if (raw || ping) {
		check(d, PASS, "probing", "", "%s (pid %d) can send probes: %s",
		      pid ? "the agent" : "splitctl run with these privileges", self,
		      raw ? "CAP_NET_RAW" : "ping sockets");
		return;
	}
	check(d, FAIL, "probing",
	      "give the agent CAP_NET_RAW (CapabilityBoundingSet of flowsplit.service), or sysctl "
	      "-w net.ipv4.ping_group_range='0 0'",
	      "%s (pid %d) cannot send probes: no CAP_NET_RAW, group %u not in "
	      "net.ipv4.ping_group_range %u-%u: no failover",
	      pid ? "the agent" : "splitctl run with these privileges", self, gid, lo, hi);
}

/*
 * The spill class on the recorded tunnels. While the agent has a
 * generation open, spilled packets must meet its class on SHORT, whose
 * filter matches the configured code point (else they wait in SHORT's
 * queue with short traffic, or in the short class). A class of ours on
 * LONG caps LONG (left by an agent that died before "route up" swapped
 * the roles), and one without an agent is a dead agent's: both are
 * failures whatever the generation.
 */
static void check_spill_class(struct doctor *d, int agent_pid, bool gen_open)
{
	const char *dev = d->t.t[0].dev, *ldev = d->t.t[1].dev;
	char err[256] = "";
	int own, dscp;

	if (!d->t.recorded)
		return;		/* the tunnels' own checks say why */
	if (ldev[0] && tcfg_scav_owner(ldev, err, sizeof(err)) == 1)
		check(d, FAIL, "spill class",
		      "systemctl restart flowsplit (the agent removes it), or splitctl route down",
		      "%s (LONG): a spill class of ours (root HTB %x) caps LONG's traffic", ldev,
		      TCFG_SCAV_MAJOR);
	if (!dev[0])
		return;
	own = tcfg_scav_dscp(dev, &dscp, err, sizeof(err));
	if (own == 1 && !agent_pid)
		check(d, FAIL, "spill class",
		      "systemctl start flowsplit (the agent adopts it), or splitctl route down",
		      "%s: a spill class of a dead agent (root HTB %x): no queued packet waits in "
		      "it over %u ms, but short traffic stays under its top",
		      dev, TCFG_SCAV_MAJOR, FS_SPILL_LEASE_MS);
	else if (own == 1 && gen_open && dscp != d->cfg.dscp_spill)
		check(d, FAIL, "spill class",
		      "systemctl restart flowsplit (the agent makes the class again)",
		      "%s: the class's filter matches code point %d, dscp-spill is %u: spilled "
		      "traffic misses the class",
		      dev, dscp, d->cfg.dscp_spill);
	else if (own == 1 && gen_open)
		check(d, PASS, "spill class", "",
		      "%s: root HTB %x: of splitctl's, code point %d, spilled traffic behind short "
		      "traffic",
		      dev, TCFG_SCAV_MAJOR, dscp);
	else if (gen_open)
		check(d, FAIL, "spill class",
		      "systemctl restart flowsplit (the agent makes the class again)", "%s: %s",
		      dev,
		      own == 0 ? "no spill class: spilled packets wait in SHORT's queue with short "
				 "traffic"
			       : err);
}

/*
 * The LONG shaper of "route up --long-rate" (docs/design.md, *Short class
 * first on LONG*): there when the record asks for it, its short class
 * matching the splitter's short code point; one of ours without long-rate
 * recorded shapes LONG for nothing.
 */
static void check_long_shaper(struct doctor *d)
{
	const char *dev = d->t.t[1].dev;

	if (!d->t.recorded || !dev[0])
		return;
	if (!d->t.long_rate_bps && d->t.longq_owner == 1)
		check(d, FAIL, "long shaper", "splitctl route up (again, without --long-rate)",
		      "%s: a LONG shaper of ours (root HTB %x) but no long-rate recorded", dev,
		      TCFG_LONGQ_MAJOR);
	else if (!d->t.long_rate_bps)
		check(d, SKIP, "long shaper", "", "long-rate not set: LONG's queue is the WAN's");
	else if (d->t.longq_owner == -EIO)
		check(d, FAIL, "long shaper", "splitctl route up (again)", "%s", d->t.longq_err);
	else if (d->t.longq_owner != 1)
		check(d, FAIL, "long shaper", "splitctl route up (again)",
		      "%s: the LONG shaper of long-rate is missing%s%s: its queue forms in the "
		      "WAN, short packets behind bulk",
		      dev, d->t.longq_owner == -EEXIST ? ": " : "",
		      d->t.longq_owner == -EEXIST ? d->t.longq_err : "");
	else if (d->instance && d->t.longq_dscp != (int)d->cfg.dscp_short)
		check(d, FAIL, "long shaper", "splitctl route up (again: it takes dscp-short)",
		      "%s: its short class matches code point %d, dscp-short is %u: short "
		      "packets wait behind bulk",
		      dev, d->t.longq_dscp, d->cfg.dscp_short);
	else
		check(d, PASS, "long shaper", "",
		      "%s: root HTB %x of splitctl's, code point %d first", dev, TCFG_LONGQ_MAJOR,
		      d->t.longq_dscp);
}

/*
 * Spill, the datapath's side: on in the config, fs_spill pinned, and an
 * agent with a generation open (gen 0 in the agent's entry: nothing
 * spills, which is a fact to know rather than a failure: spill waits for
 * an agent, both tunnels up and route up's scavenger class). Without an
 * agent, a dead agent's generation still spills until its lease runs out
 * (flowsplit.h): said as it is.
 */
static void check_spill(struct doctor *d, int agent_pid)
{
	struct fs_spill a, dp;
	long long left = 0;
	int err;

	if (!d->instance) {
		check(d, SKIP, "spill", "", "nothing attached");
		return;
	}
	if (!(d->cfg.flags & FS_CFG_F_SPILL)) {
		check(d, SKIP, "spill", "", "spill is off (splitctl set spill yes)");
		check_spill_class(d, agent_pid, false);
		return;
	}
	err = sc_spill_read(&d->st, &a, &dp);
	if (!err) {
		__s64 l;

		err = sc_spill_lease_ms(&d->st, &a, &l);
		left = l;
	}
	if (err) {
		check(d, FAIL, "spill",
		      "splitctl attach IFACE, for each attached interface (pins the map)",
		      "spill on, but %s: %s", FS_MAP_SPILL,
		      err == -EOPNOTSUPP ? "not pinned (attached by a splitctl without spill)"
					 : strerror(-err));
		return;
	}
	if (!agent_pid && a.gen && left > 0)
		check(d, FAIL, "spill", "systemctl start flowsplit",
		      "spill on (dscp-spill %u), no agent runs, but a dead agent's generation %u "
		      "holds for %lld ms more: its spilled flows stay on SHORT until then",
		      d->cfg.dscp_spill, a.gen, left);
	else if (!agent_pid && a.gen)
		check(d, NOTE, "spill", "",
		      "spill on (dscp-spill %u), but no agent runs: nothing spills (a dead agent's "
		      "generation %u, its lease ran out %lld ms ago)",
		      d->cfg.dscp_spill, a.gen, -left);
	else if (!agent_pid)
		check(d, NOTE, "spill", "",
		      "spill on (dscp-spill %u), but no agent runs: nothing spills (the agent, "
		      "splitctl run, grants)",
		      d->cfg.dscp_spill);
	else if (!a.gen)
		check(d, NOTE, "spill", "",
		      "spill on (dscp-spill %u), the agent (pid %d) has no spill generation open: "
		      "nothing spills now (its spill is off, a tunnel is down, or it waits for "
		      "route up)",
		      d->cfg.dscp_spill, agent_pid);
	else if (left <= 0)
		check(d, FAIL, "spill", "systemctl restart flowsplit",
		      "the agent (pid %d) has generation %u open, but its lease ran out %lld ms "
		      "ago: nothing spills (the agent does not renew it)",
		      agent_pid, a.gen, -left);
	else
		check(d, PASS, "spill", "",
		      "the agent (pid %d) runs spill: generation %u, %llu of %llu grants taken "
		      "(%llu moved from LONG), dscp-spill %u",
		      agent_pid, a.gen, (unsigned long long)dp.taken, (unsigned long long)a.grants,
		      (unsigned long long)dp.moved, d->cfg.dscp_spill);
	check_spill_class(d, agent_pid, agent_pid && a.gen && left > 0);
}

/*
 * The short class's copy, what this router can tell: dedup pinned at the
 * ingress of both tunnel devices (and enabled), fs_dup at SHORT's egress,
 * and the copy flag as the agent's [dup] copy says. Whether the peer
 * dedups cannot be seen from here: doctor says so, to be run there.
 */
static void check_dup(struct doctor *d, int agent_pid)
{
	char s[IF_NAMESIZE] = "?", l[IF_NAMESIZE] = "?";
	struct sc_dup_check c;
	struct dup_view v;
	bool flag;
	int err;

	err = sc_dup_check(d->dir, &c);
	if (err == -ENOENT) {
		check(d, SKIP, "dup", "",
		      "not attached: the short class is not protected against loss (splitctl dup "
		      "attach)");
		return;
	}
	if (err) {
		check(d, FAIL, "dup", "splitctl dup detach; splitctl dup attach ...",
		      "cannot read dup/%s: %s", FS_MAP_DUP_CONFIG, strerror(-err));
		return;
	}
	if_indextoname(c.dc.short_ifindex, s);
	if_indextoname(c.dc.long_ifindex, l);
	if (!(c.dc.flags & FS_DUP_F_DEDUP) || !c.dedup_link[0] || !c.dedup_link[1] || !c.dup_link)
		check(d, FAIL, "dup",
		      "splitctl dup detach; splitctl dup attach --short-dev DEV --long-dev DEV",
		      "short %s, long %s: %s", s, l,
		      !(c.dc.flags & FS_DUP_F_DEDUP) ? "dedup is off"
		      : !c.dedup_link[0]	     ? "no dedup at the SHORT device's ingress"
		      : !c.dedup_link[1]	     ? "no dedup at the LONG device's ingress"
						     : "no fs_dup at the SHORT device's egress");
	else
		check(d, PASS, "dup", "",
		      "short %s, long %s: dedup at both tunnels' ingress; the peer's dedup cannot "
		      "be checked from here: run doctor there",
		      s, l);
	flag = c.dc.flags & FS_DUP_F_DUP;
	if (!agent_pid || health_file_dup(&v) || !v.running) {
		check(d, NOTE, "dup copy", "", "copy %s, as dup attach set it: %s",
		      flag ? "on" : "off",
		      agent_pid
			      ? "the agent does not look at the loss yet (no route up, or starting)"
			      : "no agent switches it");
		return;
	}
	if (flag != v.copy || (v.setting == DUP_COPY_ON && !flag) ||
	    (v.setting == DUP_COPY_OFF && flag))
		check(d, FAIL, "dup copy",
		      "systemctl restart flowsplit (the agent sets the flag as its [dup] copy "
		      "says)",
		      "copy %s, the agent's [dup] copy = %s says %s (%s)", flag ? "on" : "off",
		      dup_copy_mode_name(v.setting), v.copy ? "on" : "off", v.why);
	else
		check(d, PASS, "dup copy", "", "copy %s, as the agent's [dup] copy = %s says: %s",
		      flag ? "on" : "off", dup_copy_mode_name(v.setting), v.why);
}

/* Probes a tunnel sent without one answer before doctor calls it unprobed
 * (5 s at the default interval; a starting agent has sent fewer). */
#define DOCTOR_ROLES_PROBES 50

/*
 * The roles (docs/health.md, *Path quality and roles*): with roles auto,
 * both tunnels need answered probes for their quality; a tunnel up whose
 * probes get no answers (health keeps it up on other evidence, or has no
 * verdict yet) leaves the roles blind to it.
 */
static void check_roles(struct doctor *d, int agent_pid)
{
	static struct health_file hf;
	const struct roles_view *v = &hf.roles;
	int t;

	if (!agent_pid || health_file_load(&hf) || !v->active) {
		check(d, SKIP, "roles", "", "%s",
		      !agent_pid ? "no agent: the short class stays where route up put it"
		      : !v->active ? "no roles: ecmp mode, or the agent is not probing yet"
				  : "the agent publishes no health yet");
		return;
	}
	if (v->mode == ROLES_FIXED) {
		check(d, NOTE, "roles", "",
		      "fixed: the short class stays on %s whatever its quality",
		      hf.t[HEALTH_SHORT].dev);
		return;
	}
	for (t = 0; t < HEALTH_TUNNELS; t++) {
		if (v->t[t].ready)
			continue;
		if (hf.t[t].probes < DOCTOR_ROLES_PROBES) {
			check(d, NOTE, "roles", "",
			      "auto: %s has no quality yet (%llu probes sent)", hf.t[t].dev,
			      (unsigned long long)hf.t[t].probes);
			return;
		}
		check(d, hf.t[t].state == HEALTH_DOWN ? NOTE : FAIL, "roles",
		      "check the tunnel's probe target (target-short, target-long) answers ICMP "
		      "echo through it, or set roles = fixed",
		      "auto: %s (%s) has no quality: %llu probes sent, %llu answered; the roles "
		      "cannot judge it",
		      hf.t[t].dev, health_state_name(hf.t[t].state),
		      (unsigned long long)hf.t[t].probes,
		      (unsigned long long)(hf.t[t].probes - hf.t[t].missed));
		return;
	}
	check(d, PASS, "roles", "", "auto: %s", v->why);
}

/*
 * The role in an HA pair, where keepalived reports one (ha.h): it fails
 * unless the router is active with its agent or a standby without one.
 * A standby's agent check is this one: true when it stands for it.
 */
static bool check_ha(struct doctor *d, int agent_pid)
{
	const char *fix;
	char why[256];
	struct sc_ha h;

	if (sc_ha_read(&h) == -ENOENT)
		return false;
	if (sc_ha_healthy(&h, agent_pid, why, sizeof(why), &fix))
		check(d, PASS, "ha", "", "%s%s%s, %s", sc_ha_role_name(h.role),
		      h.vrrp[0] ? " in vrrp " : "", h.vrrp,
		      h.role == SC_HA_ACTIVE ? "its agent runs" : "no agent, as a standby has");
	else
		check(d, FAIL, "ha", fix, "%s: %s", sc_ha_role_name(h.role), why);
	return h.role != SC_HA_ACTIVE;
}

static int cmd_doctor(const struct sc_call *c)
{
	static struct doctor d;
	const struct sc_opts *o = c->o;
	struct tcfg_ctx ctx;
	int pid, err;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.dir = sc_pin_dir(o);
	open_json_object(NULL);
	open_json_array(PRINT_JSON, "checks");
	check_base(&d);
	check_hooks(&d);
	sc_route_ctx(-1, &ctx);
	err = tcfg_doctor(&ctx, &d.t);
	if (err)
		check(&d, FAIL, "netlink", "run as root", "cannot read routes and tunnels: %s",
		      strerror(-err));
	check_routing(&d);
	check_tunnels(&d);
	check_sysctls(&d);
	check_probing(&d);
	pid = d.instance ? agent_lock_holder_of(d.dir) : 0;
	if (!check_ha(&d, pid))
		check(&d, pid ? PASS : FAIL, "agent",
		      "systemctl start flowsplit (or splitctl run -c FILE)",
		      pid ? "running (pid %d)"
			  : "not running: no idle sweep, no failover, no metrics",
		      pid);
	check_spill(&d, pid);
	check_long_shaper(&d);
	check_dup(&d, pid);
	check_roles(&d, pid);
	close_json_array(PRINT_JSON, NULL);
	print_bool(PRINT_JSON, "ok", NULL, !d.failed);
	print_uint(PRINT_JSON, "failed", NULL, d.failed);
	print_uint(PRINT_FP, NULL, "%llu check(s) failed\n", d.failed);
	close_json_object();
	if (d.instance)
		sc_state_close(&d.st);
	return d.failed ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

const struct sc_cmd sc_cmd_doctor =
	SC_CMD("doctor", cmd_doctor, "",
	       "check this router: bpffs, hooks, rules, routes, MTU, sysctls, agent", sc_no_opts,
	       struct sc_no_args);
