// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_stats.c - "stats": the counters summed over CPUs, once, every S
 * seconds with their rates (--watch, or one line per interval with
 * --line), or in Prometheus text format (metrics.c).
 */
#include <string.h>
#include <time.h>

#include "bpfutil.h"
#include "commands.h"
#include "ops.h"

struct sc_stats_args {
	__u32 given;
	double watch;		/* seconds, 0 = print once */
	bool prometheus;
	bool line;		/* --watch: one line per interval */
};

static const struct sc_option stats_opts[] = {
	SC_OPTION("watch", SC_OPT_SECONDS, struct sc_stats_args, watch, .short_opt = 'w',
		  .metavar = "S", .lo = 0.1, .hi = 3600, .noun = "interval",
		  .help = "print rates every S seconds until interrupted"),
	SC_OPTION("prometheus", SC_OPT_FLAG, struct sc_stats_args, prometheus, .short_opt = 'p',
		  .help = "Prometheus text exposition format"),
	SC_OPTION(
		"line", SC_OPT_FLAG, struct sc_stats_args, line,
		.help = "with --watch: one line per interval (rates per class, new flows, passed)"),
	SC_OPTIONS_END,
};

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
	print_float(PRINT_ANY, "packets_short_per_s", " short %.0f pkt/s",
		    rate(cur, prev, FS_STAT_PKTS_SHORT, dt));
	print_float(PRINT_ANY, "bits_short_per_s", " %.1f Mbit/s",
		    rate(cur, prev, FS_STAT_BYTES_SHORT, dt) * 8 / 1e6);
	print_float(PRINT_ANY, "packets_long_per_s", "  long %.0f pkt/s",
		    rate(cur, prev, FS_STAT_PKTS_LONG, dt));
	print_float(PRINT_ANY, "bits_long_per_s", " %.1f Mbit/s",
		    rate(cur, prev, FS_STAT_BYTES_LONG, dt) * 8 / 1e6);
	print_float(PRINT_ANY, "flows_new_per_s", "  new %.1f flows/s",
		    rate(cur, prev, FS_STAT_FLOWS_NEW, dt));
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

/* The options that do not go together, before the instance is opened. */
static int check_stats(const struct sc_call *c)
{
	const struct sc_stats_args *a = c->args;

	if (a->prometheus && a->watch)
		return sc_print_usage_error("stats", "--prometheus and --watch cannot be combined");
	if (a->line && !a->watch)
		return sc_print_usage_error("stats",
					    "--line is a --watch format: give --watch S too");
	return FS_EXIT_OK;
}

static int cmd_stats(const struct sc_call *c)
{
	const struct sc_stats_args *a = c->args;
	__u64 cur[FS_STAT_MAX];
	int ret = FS_EXIT_OK, err;

	if (a->prometheus) {
		err = sc_metrics_write(print_fp(), c->st);
		if (err)
			pr_err("cannot read the instance's metrics: %s", strerror(-err));
		ret = err ? FS_EXIT_RUNTIME : FS_EXIT_OK;
	} else if (a->watch) {
		ret = watch_stats(c->st, a->watch, c->o->json, a->line);
	} else if ((err = sc_stats_read(c->st, cur))) {
		pr_err("cannot read the stats map: %s", strerror(-err));
		ret = FS_EXIT_RUNTIME;
	} else {
		print_counters(cur);
	}
	return ret;
}

const struct sc_cmd sc_cmd_stats =
	SC_CMD("stats", cmd_stats, "", "counters summed over CPUs", stats_opts,
	       struct sc_stats_args, .check = check_stats, .state = SC_STATE_READ);
