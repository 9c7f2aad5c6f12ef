// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_status.c - "status": the instance (pin directory, network
 * namespace), its interfaces (hook, mode, program, observer, what the hook
 * costs), the config, when a long flow counts as short again, the clock,
 * the table fill, the pinned memory, the agent and the tunnels' health.
 * Without a usable instance: the one error line, and under -j a document
 * saying so. It opens the instance itself (SC_STATE_NONE) for that
 * document.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_lock.h"
#include "bpfutil.h"
#include "commands.h"
#include "ha.h"
#include "health_file.h"

/* Generic XDP sees skbs after GRO: one call per merged packet. */
static bool iface_undercounts(const struct sc_iface *ifc)
{
	return ifc->hook == SC_HOOK_XDP && !strcmp(ifc->mode, "generic");
}

/* An attached interface whose link pin is gone: not attached any more. */
static void print_missing(int ifindex)
{
	char name[IF_NAMESIZE] = "?";

	if_indextoname(ifindex, name);
	open_json_object(NULL);
	print_string(PRINT_ANY, "name", "interface: %s", name);
	print_int(PRINT_ANY, "ifindex", " (ifindex %lld)", ifindex);
	print_string(PRINT_JSON, "hook", NULL, "?");
	print_string(PRINT_ANY, "mode",
		     " %s: its link pin is gone, the splitter no longer runs there\n", "missing");
	print_uint(PRINT_JSON, "prog_id", NULL, 0);
	print_uint(PRINT_JSON, "link_id", NULL, 0);
	print_bool(PRINT_JSON, "gro_undercount", NULL, false);
	close_json_object();
}

/* An interface removed under the splitter: one line (its pins stay until
 * detach --gone), no observer, no cost. */
static void print_removed(const struct sc_iface *ifc)
{
	open_json_object(NULL);
	print_string(PRINT_JSON, "name", NULL, ifc->name);
	print_int(PRINT_ANY, "ifindex", "interface: removed (ifindex %lld", ifc->ifindex);
	print_string(PRINT_ANY, "hook", ", was hook %s)", sc_hook_name(ifc->hook));
	print_string(PRINT_JSON, "mode", NULL, ifc->mode);
	print_uint(PRINT_JSON, "prog_id", NULL, ifc->prog_id);
	print_uint(PRINT_JSON, "link_id", NULL, ifc->link_id);
	print_bool(PRINT_JSON, "gro_undercount", NULL, false);
	print_text(": the splitter runs nowhere there; its pins stay until 'splitctl detach "
		   "--gone'\n");
	close_json_object();
}

static void print_ifaces(const struct sc_iface *ifs, int n, const int *missing,
			 int nmissing)
{
	char cost[256];
	int i;

	if (!n && !nmissing)
		print_text("interfaces: none (pins without attachment; 'splitctl detach --all' "
			   "removes them)\n");
	open_json_array(PRINT_JSON, "interfaces");
	for (i = 0; i < n; i++) {
		if (sc_iface_removed(&ifs[i])) {
			print_removed(&ifs[i]);
			continue;
		}
		open_json_object(NULL);
		print_string(PRINT_ANY, "name", "interface: %s", ifs[i].name);
		print_int(PRINT_ANY, "ifindex", " (ifindex %lld)", ifs[i].ifindex);
		print_string(PRINT_ANY, "hook", " hook %s,", sc_hook_name(ifs[i].hook));
		print_string(PRINT_ANY, "mode", " %s mode", ifs[i].mode);
		print_uint(PRINT_ANY, "prog_id", ", prog id %llu", ifs[i].prog_id);
		print_uint(PRINT_ANY, "link_id", ", link id %llu", ifs[i].link_id);
		print_bool(PRINT_JSON, "gro_undercount", NULL, iface_undercounts(&ifs[i]));
		print_nl();
		open_json_object("observer");
		print_bool(PRINT_JSON, "attached", NULL, ifs[i].observer);
		print_uint(PRINT_JSON, "prog_id", NULL, ifs[i].observer_prog_id);
		print_uint(PRINT_JSON, "link_id", NULL, ifs[i].observer_link_id);
		if (ifs[i].observer)
			print_uint(PRINT_FP, NULL, "  observer: tcx egress, prog id %llu",
				   ifs[i].observer_prog_id);
		if (ifs[i].observer)
			print_uint(PRINT_FP, NULL, ", link id %llu\n", ifs[i].observer_link_id);
		else
			print_string(PRINT_FP, NULL,
				     "  observer: missing at tcx egress: no message boundaries for "
				     "flows entering on %s ('splitctl attach' attaches it again)\n",
				     ifs[i].name);
		close_json_object();
		sc_hook_cost(&ifs[i], cost, sizeof(cost));
		print_string(PRINT_JSON, "cost", NULL, cost);
		if (cost[0] && !iface_undercounts(&ifs[i]))
			print_string(PRINT_FP, NULL, "  cost: %s\n", cost);
		if (iface_undercounts(&ifs[i]))
			print_string(PRINT_FP, NULL,
				     "warning: %s: generic XDP runs after GRO and counts a merged "
				     "packet as one: packet counts are too low under GRO (attach "
				     "with --hook tc to count every packet)\n",
				     ifs[i].name);
		close_json_object();
	}
	for (i = 0; i < nmissing; i++)
		print_missing(missing[i]);
	close_json_array(PRINT_JSON, NULL);
}

/*
 * When a long flow counts as short again, as configured and as the
 * observers allow, and why: "reshort" in status. An interface whose
 * observer is missing sees no message boundary: said apart, by name.
 */
static void print_reshort(const struct split_config *c, const struct sc_iface *ifs,
			  int n)
{
	bool boundary = c->flags & FS_CFG_F_RESHORT_BOUNDARY;
	char with[512], without[512], names[256] = "", why[1400];
	int i, missing = 0, live = 0;

	for (i = 0; i < n; i++) {
		if (sc_iface_removed(&ifs[i]))
			continue;
		live++;
		if (ifs[i].observer)
			continue;
		missing++;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 missing > 1 ? ", " : "", ifs[i].name);
	}
	open_json_object("reshort");
	print_bool(PRINT_JSON, "boundary", NULL, boundary);
	print_uint(PRINT_JSON, "gap_ms", NULL, c->reshort_gap_ms);
	print_uint(PRINT_JSON, "observers_missing", NULL, missing);
	sc_reshort_text(c, true, with, sizeof(with));
	/* flows entering where the observer is missing never see all their
	 * data acknowledged */
	sc_reshort_text(c, false, without, sizeof(without));
	if (!boundary || !missing)
		snprintf(why, sizeof(why), "%s", with);
	else if (missing == live)
		snprintf(why, sizeof(why), "on %s (observer missing): %s", names, without);
	else
		snprintf(why, sizeof(why), "%s; but on %s (observer missing): %s", with, names,
			 without);
	print_string(PRINT_ANY, "effective", "reshort: %s\n", why);
	close_json_object();
	if (boundary && missing)
		print_uint(PRINT_FP, NULL,
			   "warning: the observer is missing on %llu interface(s): their flows "
			   "never see a message boundary\n",
			   missing);
}

/* What the pinned maps hold in kernel memory (most of it the flow tables,
 * allocated in full when created). */
static void print_memory(const struct sc_state *st)
{
	__u64 f4 = sc_map_memlock(st->flows4_fd), f6 = sc_map_memlock(st->flows6_fd);
	__u64 total = f4 + f6 + sc_map_memlock(st->config_fd) + sc_map_memlock(st->stats_fd);

	open_json_object("memory");
	print_uint(PRINT_JSON, "bytes", NULL, total);
	print_uint(PRINT_JSON, "flows4_bytes", NULL, f4);
	print_uint(PRINT_JSON, "flows6_bytes", NULL, f6);
	print_float(PRINT_FP, NULL, "memory: %.1f MB pinned", total / 1e6);
	print_float(PRINT_FP, NULL, " (flow tables %.1f", f4 / 1e6);
	print_float(PRINT_FP, NULL, " + %.1f MB)\n", f6 / 1e6);
	close_json_object();
}

static int print_agent(const char *dir)
{
	int pid = agent_lock_holder_of(dir);

	open_json_object("agent");
	print_bool(PRINT_JSON, "running", NULL, pid > 0);
	print_int(PRINT_JSON, "pid", NULL, pid);
	if (pid)
		print_int(PRINT_FP, NULL, "agent: running (pid %lld)\n", pid);
	else
		print_text("agent: not running (no idle sweep, no metrics: 'systemctl start "
			   "flowsplit' or 'splitctl run')\n");
	close_json_object();
	return pid;
}

/*
 * Spill as the datapath has it: the agent's generation and what is left
 * of its lease (flowsplit.h). A generation holds while its lease does,
 * with or without the agent that wrote it: a dead agent's flows stay
 * spilled until then, and status says so.
 */
static void print_spill(const struct sc_state *st, const struct split_config *cfg, int pid)
{
	struct fs_spill a, d;
	bool holds;
	__s64 left;

	if (!(cfg->flags & FS_CFG_F_SPILL) || sc_spill_read(st, &a, &d) ||
	    sc_spill_lease_ms(st, &a, &left))
		return;
	holds = a.gen && left > 0;
	open_json_object("spill");
	print_uint(PRINT_JSON, "generation", NULL, a.gen);
	print_bool(PRINT_JSON, "spilling", NULL, holds);
	print_int(PRINT_JSON, "lease_ms", NULL, holds ? left : 0);
	print_bool(PRINT_JSON, "orphaned", NULL, holds && !pid);
	if (holds && !pid)
		print_text("spill: no agent runs, but a dead agent's generation %u holds for %lld "
			   "ms more: its spilled flows stay on SHORT until then\n",
			   a.gen, (long long)left);
	else if (holds)
		print_text("spill: generation %u, lease %lld ms, %llu grant(s) taken\n", a.gen,
			   (long long)left, (unsigned long long)d.taken);
	else if (a.gen)
		print_text("spill: generation %u, its lease ran out: nothing spills (no agent "
			   "renews it)\n",
			   a.gen);
	else
		print_text("spill: no generation: nothing spills%s\n",
			   pid ? "" : " (the agent grants)");
	close_json_object();
}

static void print_fill(const struct sc_state *st, __u64 n4, __u64 n6)
{
	open_json_object("flows");
	print_uint(PRINT_ANY, "ipv4", "flows: ipv4 %llu", n4);
	print_uint(PRINT_ANY, "ipv4_capacity", " / %llu", fs_map__capacity(st->flows4_fd));
	print_uint(PRINT_ANY, "ipv6", ", ipv6 %llu", n6);
	print_uint(PRINT_ANY, "ipv6_capacity", " / %llu", fs_map__capacity(st->flows6_fd));
	print_nl();
	close_json_object();
}

/* The namespace of the instance, "net:[INO] ('NAME')"; "" when unknown. */
static void instance_netns(const char *dir, char *buf, size_t len)
{
	struct sc_netns ns;

	buf[0] = '\0';
	if (!sc_netns_pinned(dir, &ns))
		sc_netns_describe(&ns, buf, len);
}

/*
 * status without a usable instance: the one error line, and under -j a
 * document saying so ({"pin_dir", "attached": false, "error"}; an instance
 * of another network namespace is attached, and named in "netns").
 */
static int status_unavailable(const struct sc_opts *o, int err)
{
	char msg[PATH_MAX + 512], netns[160];
	const char *dir = sc_pin_dir(o);

	sc_state_strerror(err, dir, msg, sizeof(msg));
	pr_err("%s", msg);
	instance_netns(dir, netns, sizeof(netns));
	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, dir);
	print_bool(PRINT_JSON, "attached", NULL, err == -EXDEV);
	if (err == -EXDEV) {
		print_string(PRINT_JSON, "netns", NULL, netns);
		print_bool(PRINT_JSON, "other_netns", NULL, true);
	}
	print_string(PRINT_JSON, "error", NULL, msg);
	close_json_object();
	return err == -ENAMETOOLONG ? FS_EXIT_USAGE : FS_EXIT_RUNTIME;
}

/* The LONG shaper of route up --long-rate, when it is there (missing,
 * the routing state says so): "long_shaper" null otherwise. */
static void print_long_shaper(void)
{
	struct tcfg_longq_state q;
	char dev[IF_NAMESIZE];

	if (!tcfg_longq_recorded(dev, &q)) {
		print_null(PRINT_JSON, "long_shaper", NULL, NULL);
		return;
	}
	open_json_object("long_shaper");
	print_string(PRINT_ANY, "dev", "long shaper: %s, short class first", dev);
	print_uint(PRINT_ANY, "short_bytes", " (short %llu bytes sent",
		   q.cls[TCFG_LONGQ_SHORT].bytes);
	print_uint(PRINT_ANY, "bulk_bytes", ", bulk %llu", q.cls[TCFG_LONGQ_BULK].bytes);
	print_uint(PRINT_ANY, "bulk_backlog_bytes", ", bulk backlog %llu bytes)\n",
		   q.cls[TCFG_LONGQ_BULK].backlog);
	close_json_object();
}

/* route show's state: the routes, the agent, failover, tunnels. */
static void print_routing(const struct split_config *cfg)
{
	struct tcfg_ctx ctx;
	const char *state;
	char why[256];

	sc_route_ctx(cfg->dscp_long, &ctx);
	state = tcfg_route_state(&ctx, why, sizeof(why));
	open_json_object("routing");
	print_string(PRINT_ANY, "state", "routing: %s", state);
	print_bool(PRINT_JSON, "degraded", NULL, !strcmp(state, "degraded"));
	print_string(PRINT_JSON, "why", NULL, why);
	if (why[0])
		print_string(PRINT_FP, NULL, " (%s)", why);
	print_string(PRINT_FP, NULL, "%s", !strcmp(state, "down") ? " (no route up)\n" : "\n");
	print_long_shaper();
	close_json_object();
}

static int cmd_status(const struct sc_call *c)
{
	const struct sc_opts *o = c->o;
	struct sc_iface ifs[SC_MAX_IFACES];
	int missing[SC_MAX_IFACES], nmissing;
	struct split_config cfg;
	struct sc_state st;
	__u64 n4, n6, now;
	unsigned int hz;
	char netns[160];
	int n, ret, pid;

	ret = sc_state_open(o, &st, 0);
	if (ret)
		return status_unavailable(o, ret);
	ret = FS_EXIT_RUNTIME;
	if ((n = sc_config_read(&st, &cfg)) || (n = sc_clock_now(&st, &now, &hz)) ||
	    (n = fs_map__count(st.flows4_fd, &n4)) || (n = fs_map__count(st.flows6_fd, &n6)) ||
	    (n = nmissing = sc_links_missing(st.dir, missing, SC_MAX_IFACES)) < 0 ||
	    (n = sc_ifaces_list(st.dir, ifs, SC_MAX_IFACES)) < 0) {
		pr_err("cannot read the instance '%s': %s", st.dir, strerror(-n));
		goto out;
	}
	instance_netns(st.dir, netns, sizeof(netns));
	open_json_object(NULL);
	print_string(PRINT_ANY, "pin_dir", "instance: %s", st.dir);
	print_bool(PRINT_JSON, "attached", NULL, true);
	print_string(PRINT_ANY, "netns", ", network namespace %s",
		     netns[0] ? netns : "not recorded");
	print_nl();
	print_ifaces(ifs, n, missing, nmissing);
	sc_print_config(&cfg, PRINT_FP);
	print_reshort(&cfg, ifs, n);
	/* HZ only: status stays comparable before/after a change */
	open_json_object("clock");
	print_uint(PRINT_ANY, "hz", "clock: HZ %llu\n", hz);
	close_json_object();
	print_fill(&st, n4, n6);
	print_memory(&st);
	pid = print_agent(st.dir);
	/* the role in an HA pair, where keepalived reports one */
	sc_ha_print(pid);
	print_spill(&st, &cfg, pid);
	print_routing(&cfg);
	/* the tunnels' health as the agent publishes it ("not monitored"
	 * without an agent) */
	health_show();
	close_json_object();
	ret = FS_EXIT_OK;
	if (nmissing) {
		char name[IF_NAMESIZE] = "?";

		if_indextoname(missing[0], name);
		pr_err("interface '%s' (ifindex %d): its link pin '%s/" SC_PIN_LINK_FMT
		       "' is gone: the splitter no longer runs there ('splitctl attach %s' "
		       "attaches it again, 'splitctl detach %s' forgets it)",
		       name, missing[0], st.dir, missing[0], name, name);
		ret = FS_EXIT_RUNTIME;
	}
out:
	sc_state_close(&st);
	return ret;
}

const struct sc_cmd sc_cmd_status =
	SC_CMD("status", cmd_status, "", "interfaces, mode, program, config, table fill",
	       sc_no_opts, struct sc_no_args);
