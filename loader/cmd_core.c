// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_core.c - attach, detach, set, status, stats, flows, flush. Text and
 * JSON come from the same print_*() calls (json_print.h); main.c opens and
 * closes the document.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_lock.h"
#include "bpfutil.h"
#include "commands.h"
#include "health_file.h"
#include "ops.h"
#include "tunnel_cfg.h"

/* The live config, if an instance is attached: 0, else -errno. */
static int live_config(const struct sc_opts *o, struct split_config *c)
{
	struct sc_state st;
	int ret = sc_state_open(o, &st, 0);

	if (ret)
		return ret;
	ret = sc_config_read(&st, c);
	sc_state_close(&st);
	return ret;
}

static int routes_can_follow(__u32 from, __u32 to);

/* attach: the routes of "route up" follow a new long code point, as with
 * "set"; if they cannot, the attach is undone (config put back, or the
 * new instance detached). attach, detach and set are silent in text mode
 * (attach names the hook --hook auto picked); under -j they say what they
 * did. */
int cmd_attach(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct sc_attach_args *a = args;
	struct split_config before, after;
	struct sc_attach_result r;
	struct tcfg_ctx ctx;
	bool had;
	char err[256];
	int ret;

	(void)argc;
	(void)argv;
	if (!a->ifname[0])
		return sc_print_usage_error("attach", "expected exactly one interface name (see -h)");
	had = !live_config(o, &before);
	if (!had)	/* a new instance: the routes may predate it */
		sc_config_defaults(&before, 1000);
	after = before;
	/* (a merge error is sc_attach()'s to report) */
	if (!sc_settings_merge(&after, &a->settings, 1000, err, sizeof(err))) {
		ret = routes_can_follow(had ? before.dscp_long : FS_DSCP_MAX + 1,
					after.dscp_long);
		if (ret)
			return ret;
	}
	ret = sc_attach_report(o, a->ifname, a, &r);
	if (ret)
		return ret;
	ret = 0;
	if (!live_config(o, &after)) {
		sc_route_ctx(after.dscp_long, &ctx);
		ret = tcfg_route_follow(&ctx, false, err, sizeof(err));
	}
	if (ret && had) {
		struct sc_state st;

		if (!sc_state_open(o, &st, 1)) {
			sc_config_write(&st, &before);
			sc_state_close(&st);
		}
	} else if (ret) {
		sc_detach(o, a->ifname);
	}
	if (ret)
		return ret;
	open_json_object(NULL);
	print_string(PRINT_JSON, "interface", NULL, a->ifname);
	print_int(PRINT_JSON, "ifindex", NULL, r.ifindex);
	print_string(PRINT_JSON, "hook", NULL, sc_hook_name(r.hook));
	print_string(PRINT_JSON, "mode", NULL, r.mode);
	print_bool(PRINT_JSON, "upgrade", NULL, r.upgrade);
	print_bool(PRINT_JSON, "hook_auto", NULL, r.hook_auto);
	print_string(PRINT_JSON, "why", NULL, r.why);
	close_json_object();
	return FS_EXIT_OK;
}

void sc_print_detached(const struct sc_detach_result *r)
{
	int i;

	open_json_array(PRINT_JSON, "detached");
	for (i = 0; i < r->n; i++)
		print_string(PRINT_JSON, NULL, NULL, r->names[i]);
	close_json_array(PRINT_JSON, NULL);
	print_bool(PRINT_JSON, "pins_removed", NULL, r->pins_removed);
}

int cmd_detach(const struct sc_opts *o, void *args, int argc, char **argv)
{
	static struct sc_detach_result r;
	struct sc_detach_args *a = args;
	int ret;

	(void)argc;
	(void)argv;
	if (a->all == !!a->ifname[0])
		return sc_print_usage_error("detach", "expected one interface name or --all (see -h)");
	ret = sc_detach_report(o, a->all ? NULL : a->ifname, &r);
	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, sc_pin_dir(o));
	sc_print_detached(&r);
	close_json_object();
	return ret;
}

/* The config object; text: PRINT_FP (status) or 0 (set: JSON only). */
static void print_config(const struct split_config *c, enum output_type text)
{
	enum output_type any = PRINT_JSON | text;

	open_json_object("config");
	print_uint(any, "threshold", "config: threshold %llu packets", c->threshold);
	print_uint(PRINT_JSON, "idle_timeout_ms", NULL, c->idle_timeout_ms);
	print_float(text, NULL, ", idle-timeout %g s", c->idle_timeout_ms / 1000.0);
	print_uint(any, "dscp_short", ", dscp-short %llu", c->dscp_short);
	print_uint(any, "dscp_long", ", dscp-long %llu", c->dscp_long);
	print_bool(PRINT_JSON, "enabled", NULL, c->flags & FS_CFG_F_ENABLED);
	print_bool(any, "ack_short", ", ack-short %s", c->flags & FS_CFG_F_ACK_SHORT);
	print_string(any, "midstream", ", midstream %s",
		     c->flags & FS_CFG_F_MIDSTREAM_LONG ? "long" : "short");
	print_string(text, NULL, ", %s",
		     c->flags & FS_CFG_F_ENABLED ? "enabled" : "disabled");
	if (text)
		print_nl();
	print_uint(any, "threshold_bytes", "config: threshold-bytes %llu", c->threshold_bytes);
	print_string(text, NULL, "%s", c->threshold_bytes ? "" : " (none)");
	print_string(any, "reshort", ", reshort %s",
		     c->flags & FS_CFG_F_RESHORT_BOUNDARY ? "boundary" : "off");
	print_uint(any, "reshort_gap_ms", ", reshort-gap %llu ms", c->reshort_gap_ms);
	print_string(text, NULL, "%s", c->reshort_gap_ms ? "" : " (off)");
	print_uint(any, "rules_ipv4", ", rules: ipv4 %llu", c->rules4);
	print_uint(any, "rules_ipv6", ", ipv6 %llu", c->rules6);
	if (text)
		print_nl();
	close_json_object();
}

/* NAME VALUE pairs through the settings table: each value checked once. */
static int parse_pairs(int argc, char **argv, struct sc_settings *s)
{
	char err[512], names[256] = "";
	struct sc_opt_ref r;
	int i;

	if (!argc || argc % 2) {
		sc_option_names(sc_setting_opts, names, sizeof(names));
		return sc_print_usage_error("set", "expected NAME VALUE pairs; names: %s", names);
	}
	for (i = 0; i < argc; i += 2) {
		if (sc_option_find(sc_setting_opts, s, argv[i], false, &r)) {
			sc_option_names(sc_setting_opts, names, sizeof(names));
			pr_err("unknown setting '%s': accepted: %s", argv[i], names);
			return FS_EXIT_USAGE;
		}
		if (sc_option_set(&r, argv[i + 1], "", err, sizeof(err))) {
			pr_err("%s", err);
			return FS_EXIT_USAGE;
		}
	}
	return 0;
}

/* The split-mode routes of "route up" match the long code point: when
 * "set" changes it, they follow, or nothing changes (see docs/design.md). */
static int routes_can_follow(__u32 from, __u32 to)
{
	struct tcfg_ctx ctx;
	char err[300];
	int ret;

	if (from == to)
		return 0;
	sc_route_ctx(to, &ctx);
	ret = tcfg_route_follow(&ctx, true, err, sizeof(err));
	if (ret)
		pr_err("dscp-long %u: the installed routes (route up) cannot follow it: %s",
		       to, err);
	return ret;
}

int cmd_set(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct sc_settings s = { 0 };
	struct split_config cfg, before;
	struct sc_state st;
	char err[256];
	unsigned int hz;
	__u64 now;
	int ret;

	(void)args;
	ret = parse_pairs(argc, argv, &s);
	if (ret)
		return ret;
	ret = sc_state_open_cmd(o, &st, 1);
	if (ret)
		return ret;
	ret = sc_clock_now(&st, &now, &hz);
	if (ret) {
		pr_err("cannot read the datapath clock: %s", strerror(-ret));
		ret = FS_EXIT_RUNTIME;
		goto out;
	}
	ret = sc_config_read(&st, &cfg);
	if (ret) {
		pr_err("cannot read the config map: %s", strerror(-ret));
		ret = FS_EXIT_RUNTIME;
		goto out;
	}
	before = cfg;
	/* all pairs on a copy; written in one update or not at all */
	if (sc_settings_merge(&cfg, &s, hz, err, sizeof(err))) {
		pr_err("%s", err);
		ret = FS_EXIT_USAGE;
		goto out;
	}
	ret = routes_can_follow(before.dscp_long, cfg.dscp_long);
	if (ret)
		goto out;
	ret = sc_config_write(&st, &cfg);
	if (ret) {
		pr_err("cannot write the config map: %s", strerror(-ret));
		ret = FS_EXIT_RUNTIME;
		goto out;
	}
	if (before.dscp_long != cfg.dscp_long) {
		struct tcfg_ctx ctx;

		sc_route_ctx(cfg.dscp_long, &ctx);
		ret = tcfg_route_follow(&ctx, false, err, sizeof(err));
		if (ret) {	/* printed; the marks go back to what the routes match */
			sc_config_write(&st, &before);
			goto out;
		}
	}
	open_json_object(NULL);
	print_config(&cfg, 0);
	close_json_object();
out:
	sc_state_close(&st);
	return ret;
}


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
	print_string(PRINT_ANY, "mode", " %s: its link pin is gone, the splitter no longer runs there\n",
		     "missing");
	print_uint(PRINT_JSON, "prog_id", NULL, 0);
	print_uint(PRINT_JSON, "link_id", NULL, 0);
	print_bool(PRINT_JSON, "gro_undercount", NULL, false);
	close_json_object();
}

static void print_ifaces(const struct sc_iface *ifs, int n, const int *missing,
			 int nmissing)
{
	char cost[256];
	int i;

	if (!n && !nmissing)
		print_text("interfaces: none (pins without attachment; 'splitctl detach --all' removes them)\n");
	open_json_array(PRINT_JSON, "interfaces");
	for (i = 0; i < n; i++) {
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
			print_string(PRINT_FP, NULL, "  observer: missing at tcx egress: no message boundaries for flows entering on %s ('splitctl attach' attaches it again)\n",
				     ifs[i].name);
		close_json_object();
		sc_hook_cost(&ifs[i], cost, sizeof(cost));
		print_string(PRINT_JSON, "cost", NULL, cost);
		if (cost[0] && !iface_undercounts(&ifs[i]))
			print_string(PRINT_FP, NULL, "  cost: %s\n", cost);
		if (iface_undercounts(&ifs[i]))
			print_string(PRINT_FP, NULL,
				     "warning: %s: generic XDP runs after GRO and counts a merged packet as one: packet counts are too low under GRO (attach with --hook tc to count every packet)\n",
				     ifs[i].name);
		close_json_object();
	}
	for (i = 0; i < nmissing; i++)
		print_missing(missing[i]);
	close_json_array(PRINT_JSON, NULL);
}

/*
 * When a long flow counts as short again, as configured and as the
 * observers allow, and why: "reshort" in status.
 */
static void print_reshort(const struct split_config *c, const struct sc_iface *ifs,
			  int n)
{
	bool boundary = c->flags & FS_CFG_F_RESHORT_BOUNDARY;
	char why[512];
	int i, missing = 0;

	for (i = 0; i < n; i++)
		missing += !ifs[i].observer;
	open_json_object("reshort");
	print_bool(PRINT_JSON, "boundary", NULL, boundary);
	print_uint(PRINT_JSON, "gap_ms", NULL, c->reshort_gap_ms);
	print_uint(PRINT_JSON, "observers_missing", NULL, missing);
	if (boundary && c->reshort_gap_ms)
		snprintf(why, sizeof(why), "at a message boundary (all the flow sent was acknowledged: cannot reorder) and after a silence over %u ms (reshort-gap: safe only above the tunnels' delay difference)",
			 c->reshort_gap_ms);
	else if (boundary)
		snprintf(why, sizeof(why), "at a message boundary: a data segment sent after all the flow sent was acknowledged (cannot reorder; reshort boundary, the default)");
	else if (c->reshort_gap_ms)
		snprintf(why, sizeof(why), "after a silence over %u ms only (reshort off, reshort-gap %u: safe only above the tunnels' delay difference)",
			 c->reshort_gap_ms, c->reshort_gap_ms);
	else
		snprintf(why, sizeof(why), "never: a long flow stays long until idle-timeout (reshort off, reshort-gap 0)");
	print_string(PRINT_ANY, "effective", "reshort: %s\n", why);
	close_json_object();
	if (boundary && missing)
		print_uint(PRINT_FP, NULL, "warning: the observer is missing on %llu interface(s): their flows never see a message boundary\n",
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

static void print_agent(const char *dir)
{
	int pid = agent_lock_holder_of(dir);

	open_json_object("agent");
	print_bool(PRINT_JSON, "running", NULL, pid > 0);
	print_int(PRINT_JSON, "pid", NULL, pid);
	if (pid)
		print_int(PRINT_FP, NULL, "agent: running (pid %lld)\n", pid);
	else
		print_text("agent: not running (no idle sweep, no metrics: 'systemctl start flowsplit' or 'splitctl run')\n");
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

int cmd_status(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	int missing[SC_MAX_IFACES], nmissing;
	struct split_config cfg;
	struct sc_state st;
	__u64 n4, n6, now;
	unsigned int hz;
	char netns[160];
	int n, ret;

	(void)args;
	(void)argc;
	(void)argv;
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
	print_string(PRINT_ANY, "netns", ", network namespace %s", netns[0] ? netns : "not recorded");
	print_nl();
	print_ifaces(ifs, n, missing, nmissing);
	print_config(&cfg, PRINT_FP);
	print_reshort(&cfg, ifs, n);
	/* HZ only: status stays comparable before/after a change */
	open_json_object("clock");
	print_uint(PRINT_ANY, "hz", "clock: HZ %llu\n", hz);
	close_json_object();
	print_fill(&st, n4, n6);
	print_memory(&st);
	print_agent(st.dir);
	/* the tunnels' health as the agent publishes it ("not monitored"
	 * without an agent) */
	health_show();
	close_json_object();
	ret = FS_EXIT_OK;
	if (nmissing) {
		char name[IF_NAMESIZE] = "?";

		if_indextoname(missing[0], name);
		pr_err("interface '%s' (ifindex %d): its link pin '%s/" SC_PIN_LINK_FMT "' is gone: the splitter no longer runs there ('splitctl attach %s' attaches it again, 'splitctl detach %s' forgets it)",
		       name, missing[0], st.dir, missing[0], name, name);
		ret = FS_EXIT_RUNTIME;
	}
out:
	sc_state_close(&st);
	return ret;
}

static void print_counters(const __u64 *cur)
{
	int i;

	open_json_object(NULL);
	for (i = 0; i < FS_STAT_MAX; i++) {
		print_text("%-20s ", fs_stat_name(i));
		print_uint(PRINT_ANY, fs_stat_name(i), "%llu\n", cur[i]);
	}
	close_json_object();
}

/* One document per interval: counters, their rates, the measured interval. */
static int print_rates(const __u64 *cur, const __u64 *prev, double dt, bool json)
{
	char key[64];
	int i;

	print_begin(stdout, json);
	open_json_object(NULL);
	print_float(PRINT_JSON, "interval_s", NULL, dt);
	print_text("--- %.1f s\n", dt);
	for (i = 0; i < FS_STAT_MAX; i++) {
		snprintf(key, sizeof(key), "%s_per_s", fs_stat_name(i));
		print_text("%-20s ", fs_stat_name(i));
		print_uint(PRINT_ANY, fs_stat_name(i), "%14llu ", cur[i]);
		print_float(PRINT_ANY, key, "%12.1f/s\n", (cur[i] - prev[i]) / dt);
	}
	close_json_object();
	return print_end();
}

static double rate(const __u64 *cur, const __u64 *prev, enum fs_stat id, double dt)
{
	return (cur[id] - prev[id]) / dt;
}

/* --line: one line (one document) per interval: what an operator watches. */
static int print_rates_line(const __u64 *cur, const __u64 *prev, double dt, bool json)
{
	static const enum fs_stat pass[] = {
		FS_STAT_PASS_NON_TCP, FS_STAT_PASS_FRAGMENT, FS_STAT_PASS_NON_IP,
		FS_STAT_PASS_MALFORMED, FS_STAT_PASS_EXTHDR, FS_STAT_PASS_DISABLED,
	};
	double passed = 0;
	char when[16];
	time_t now = time(NULL);
	size_t i;

	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		passed += rate(cur, prev, pass[i], dt);
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	print_begin(stdout, json);
	open_json_object(NULL);
	print_uint(PRINT_JSON, "time", NULL, now);
	print_string(PRINT_FP, NULL, "%s", when);
	print_float(PRINT_JSON, "interval_s", NULL, dt);
	print_float(PRINT_ANY, "packets_short_per_s", " short %.0f pkt/s", rate(cur, prev, FS_STAT_PKTS_SHORT, dt));
	print_float(PRINT_ANY, "bits_short_per_s", " %.1f Mbit/s",
		    rate(cur, prev, FS_STAT_BYTES_SHORT, dt) * 8 / 1e6);
	print_float(PRINT_ANY, "packets_long_per_s", "  long %.0f pkt/s", rate(cur, prev, FS_STAT_PKTS_LONG, dt));
	print_float(PRINT_ANY, "bits_long_per_s", " %.1f Mbit/s",
		    rate(cur, prev, FS_STAT_BYTES_LONG, dt) * 8 / 1e6);
	print_float(PRINT_ANY, "flows_new_per_s", "  new %.1f flows/s", rate(cur, prev, FS_STAT_FLOWS_NEW, dt));
	print_float(PRINT_ANY, "flows_promoted_per_s", "  promoted %.1f/s",
		    rate(cur, prev, FS_STAT_FLOWS_PROMOTED, dt));
	print_float(PRINT_ANY, "passed_per_s", "  passed %.0f pkt/s\n", passed);
	close_json_object();
	return print_end();
}

static int watch_stats(const struct sc_state *st, double interval, bool json, bool line)
{
	__u64 cur[FS_STAT_MAX], prev[FS_STAT_MAX], t0, t1;
	int err;

	err = sc_stats_read(st, cur);
	if (err)
		goto fail;
	fs_signals_install(false);
	t0 = mono_ns();
	while (!fs_stop) {
		memcpy(prev, cur, sizeof(cur));
		sleep_until_ns(t0 + (__u64)(interval * 1e9));
		if (fs_stop)
			break;
		err = sc_stats_read(st, cur);
		if (err)
			goto fail;
		t1 = mono_ns();
		err = (line ? print_rates_line : print_rates)(cur, prev, (t1 - t0) / 1e9, json);
		if (err) {
			pr_err("cannot write the output: %s", strerror(-err));
			return FS_EXIT_RUNTIME;
		}
		t0 = t1;
	}
	return FS_EXIT_OK;
fail:
	pr_err("cannot read the stats map: %s", strerror(-err));
	return FS_EXIT_RUNTIME;
}

int cmd_stats(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_stats_args *a = args;
	__u64 cur[FS_STAT_MAX];
	struct sc_state st;
	int ret, err;

	(void)argc;
	(void)argv;
	if (a->prometheus && a->watch)
		return sc_print_usage_error("stats", "--prometheus and --watch cannot be combined");
	if (a->line && !a->watch)
		return sc_print_usage_error("stats", "--line is a --watch format: give --watch S too");
	ret = sc_state_open_cmd(o, &st, 0);
	if (ret)
		return ret;
	if (a->prometheus) {
		err = sc_metrics_write(print_fp(), &st);
		if (err)
			pr_err("cannot read the instance's metrics: %s", strerror(-err));
		ret = err ? FS_EXIT_RUNTIME : FS_EXIT_OK;
	} else if (a->watch) {
		ret = watch_stats(&st, a->watch, o->json, a->line);
	} else if ((err = sc_stats_read(&st, cur))) {
		pr_err("cannot read the stats map: %s", strerror(-err));
		ret = FS_EXIT_RUNTIME;
	} else {
		print_counters(cur);
	}
	sc_state_close(&st);
	return ret;
}

/* ---- flows ---------------------------------------------------------------- */
/* One flow, kept compact (1M flows: ~88 MB); text made at print time. */
struct flow_row {
	struct flow_state s;
	__u8 saddr[16], daddr[16];	/* network byte order; IPv4 in 0..3 */
	__u16 sport, dport;		/* host byte order */
	__u8 family;			/* 4 or 6 */
};

static int sort_key;	/* enum sc_flow_sort, for cmp_rows() */

/* Past the idle timeout (the datapath's test): it restarts as a new, short
 * flow at its next packet, the sweep removes it; it is no longer long. */
static bool flow_expired(const struct flow_state *s, __u64 now, __u64 idle_jiffies)
{
	return (__s64)(now - s->last_seen) > (__s64)idle_jiffies;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = a, *y = b;
	__u64 vx, vy;

	switch (sort_key) {
	case SC_SORT_BYTES: vx = x->s.bytes; vy = y->s.bytes; break;
	case SC_SORT_AGE: vx = y->s.first_seen; vy = x->s.first_seen; break; /* oldest first */
	default: vx = x->s.packets; vy = y->s.packets; break;
	}
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

struct flow_dump {
	int family;		/* 4 or 6 */
	int class;		/* FS_CLASS_*, -1 for every class; an expired
				 * flow is of no class */
	__u64 now, idle_jiffies;	/* to tell expired flows */
	struct flow_row *rows;
	size_t n, cap;
};

static void fill_row(struct flow_row *r, int family, const void *keys, __u32 i)
{
	r->family = family;
	if (family == 4) {
		const struct flow_key4 *k = (const struct flow_key4 *)keys + i;

		memcpy(r->saddr, &k->saddr, sizeof(k->saddr));
		memcpy(r->daddr, &k->daddr, sizeof(k->daddr));
		r->sport = ntohs(k->sport);
		r->dport = ntohs(k->dport);
	} else {
		const struct flow_key6 *k = (const struct flow_key6 *)keys + i;

		memcpy(r->saddr, k->saddr, sizeof(k->saddr));
		memcpy(r->daddr, k->daddr, sizeof(k->daddr));
		r->sport = ntohs(k->sport);
		r->dport = ntohs(k->dport);
	}
}

/* Append one batch of a flow table to the rows (fs_map_batch_fn). */
static int dump_batch(void *ctx, const void *keys, const void *values, __u32 count)
{
	const struct flow_state *vals = values;
	struct flow_dump *d = ctx;
	__u32 i;

	for (i = 0; i < count; i++) {
		if (d->class >= 0 && ((int)vals[i].class != d->class ||
				      flow_expired(&vals[i], d->now, d->idle_jiffies)))
			continue;
		if (d->n == d->cap) {
			size_t ncap = d->cap ? d->cap * 2 : 1024;
			struct flow_row *nr = realloc(d->rows, ncap * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			d->rows = nr;
			d->cap = ncap;
		}
		d->rows[d->n].s = vals[i];
		fill_row(&d->rows[d->n++], d->family, keys, i);
	}
	return 0;
}

static int dump_table(int fd, int family, struct flow_dump *d)
{
	d->family = family;
	return fs_map__for_each_batch(fd, 1024, FS_MAP_ITER_LOOKUP, dump_batch, d, NULL);
}

static void print_endpoint(const char *key, const char *port_key, int family,
			   const __u8 *addr, __u16 port)
{
	char a[INET6_ADDRSTRLEN], text[64];

	inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, a, sizeof(a));
	snprintf(text, sizeof(text), family == 6 ? "[%s]:%u" : "%s:%u", a, port);
	print_string(PRINT_JSON, key, NULL, a);
	print_uint(PRINT_JSON, port_key, NULL, port);
	print_string(PRINT_FP, NULL, "%-39s ", text);
}

/* The policy a flow started with (its rule's mode, or the global one). */
static const char *flow_mode_name(__u8 mode)
{
	static const char *const names[FS_MODE_MAX] = {
		[FS_MODE_GLOBAL] = "global", [FS_MODE_AUTO] = "auto",
		[FS_MODE_SHORT] = "short", [FS_MODE_LONG] = "long",
	};

	return mode < FS_MODE_MAX ? names[mode] : "?";
}

static const char *class_name(const struct flow_row *r)
{
	return r->s.class == FS_CLASS_LONG ? "long" : "short";
}

static void print_flow(const struct flow_row *r, __u64 now, unsigned int hz,
		       __u64 idle_jiffies)
{
	bool expired = flow_expired(&r->s, now, idle_jiffies);
	bool midstream = r->s.policy.flags & FS_POLICY_F_MIDSTREAM;

	open_json_object(NULL);
	print_string(PRINT_ANY, "family", "%s ", r->family == 6 ? "ipv6" : "ipv4");
	print_endpoint("src", "sport", r->family, r->saddr, r->sport);
	print_endpoint("dst", "dport", r->family, r->daddr, r->dport);
	print_uint(PRINT_ANY, "packets", "%10llu ", r->s.packets);
	print_uint(PRINT_ANY, "bytes", "%12llu ", r->s.bytes);
	print_uint(PRINT_JSON, "payload_bytes", NULL, r->s.payload);
	print_uint(PRINT_JSON, "boundaries", NULL, r->s.boundaries);
	print_bool(PRINT_JSON, "acks_seen", NULL, r->s.ack_flags & FS_ACK_F_SEEN);
	print_string(PRINT_JSON, "mode", NULL, flow_mode_name(r->s.policy.mode));
	print_float(PRINT_ANY, "age_s", "%9.1f ", (double)(now - r->s.first_seen) / hz);
	print_float(PRINT_ANY, "idle_s", "%9.1f ", (double)(now - r->s.last_seen) / hz);
	print_string(PRINT_JSON, "class", NULL, class_name(r));
	print_bool(PRINT_JSON, "expired", NULL, expired);
	print_bool(PRINT_JSON, "midstream", NULL, midstream);
	print_string(PRINT_FP, NULL, "%s", expired ? "expired" : class_name(r));
	print_string(PRINT_FP, NULL, "%s\n", midstream ? " midstream" : "");
	close_json_object();
}

int cmd_flows(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_flows_args *a = args;
	struct flow_dump d = { .class = a->class };
	struct split_config cfg;
	struct sc_state st;
	unsigned int hz;
	size_t i;
	__u64 now;
	int ret, err;

	(void)argc;
	(void)argv;
	ret = sc_state_open_cmd(o, &st, 0);
	if (ret)
		return ret;
	ret = FS_EXIT_RUNTIME;
	err = sc_clock_now(&st, &now, &hz);
	if (err) {
		pr_err("cannot read the datapath clock: %s", strerror(-err));
		goto out;
	}
	err = sc_config_read(&st, &cfg);
	if (err) {
		pr_err("cannot read the config map: %s", strerror(-err));
		goto out;
	}
	d.now = now;
	d.idle_jiffies = cfg.idle_jiffies;
	err = dump_table(st.flows4_fd, 4, &d);
	if (!err)
		err = dump_table(st.flows6_fd, 6, &d);
	if (err) {
		pr_err("cannot read the flow table: %s", strerror(-err));
		goto out;
	}
	sort_key = a->sort;
	if (d.n)	/* qsort(NULL, 0, ...) is undefined behaviour */
		qsort(d.rows, d.n, sizeof(*d.rows), cmp_rows);
	print_text("%-4s %-39s %-39s %10s %12s %9s %9s %s\n", "fam", "source",
		   "destination", "packets", "bytes", "age_s", "idle_s", "class");
	open_json_array(PRINT_JSON, NULL);
	for (i = 0; i < d.n && (!a->top || i < a->top); i++)
		print_flow(&d.rows[i], now, hz, cfg.idle_jiffies);
	close_json_array(PRINT_JSON, NULL);
	ret = FS_EXIT_OK;
out:
	free(d.rows);
	sc_state_close(&st);
	return ret;
}

int cmd_flush(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct sc_state st;
	__u64 n4 = 0, n6 = 0;
	int ret, err;

	(void)args;
	(void)argc;
	(void)argv;
	ret = sc_state_open_cmd(o, &st, 1);
	if (ret)
		return ret;
	/* batched lookup-and-delete: one syscall per 4096 entries */
	err = fs_map__for_each_batch(st.flows4_fd, 4096, FS_MAP_ITER_LOOKUP_DELETE,
				     NULL, NULL, &n4);
	if (!err)
		err = fs_map__for_each_batch(st.flows6_fd, 4096, FS_MAP_ITER_LOOKUP_DELETE,
					     NULL, NULL, &n6);
	if (err) {
		pr_err("cannot empty the flow table: %s", strerror(-err));
		ret = FS_EXIT_RUNTIME;
	} else {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "flows_removed", "%llu flows removed\n", n4 + n6);
		close_json_object();
	}
	sc_state_close(&st);
	return ret;
}
