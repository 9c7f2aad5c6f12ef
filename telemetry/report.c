// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - summary.txt, summary.json and hist_*.csv from the per-flow
 * results kept by track.c.
 *
 * Groups: class (short, long, all) x flow size bucket by packets at A
 * (1-10, 11-40, 41-1000, >1000, all). Percentiles are nearest-rank over the
 * flows of a group that have the value (FCT needs a packet at A and at B,
 * jitter two delay samples).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "json_print.h"
#include "tap.h"
#include "util.h"

static const struct {
	const char *name;
	uint64_t lo, hi;
} buckets[] = {
	{ "1-10", 1, 10 },
	{ "11-40", 11, 40 },
	{ "41-1000", 41, 1000 },
	{ ">1000", 1001, UINT64_MAX },
	{ "all", 0, UINT64_MAX },
};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))
static const char *const classes[] = { "short", "long", "all" };

struct stat3 {
	size_t n;
	double mean, p50, p99;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stat3(double *v, size_t n, struct stat3 *s)
{
	double sum = 0;

	s->n = n;
	s->mean = s->p50 = s->p99 = NAN;
	if (!n)
		return;
	qsort(v, n, sizeof(double), cmp_d);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->mean = sum / (double)n;
	s->p50 = v[(50 * n + 99) / 100 - 1];
	s->p99 = v[(99 * n + 99) / 100 - 1];
}

int tap_out_open(struct out_file *o, const char *dir, const char *name)
{
	char path[4096];
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = out_file_open(o, path, 0644);
	if (err)
		pr_err("cannot write %s/%s: %s", dir, name, strerror(-err));
	return err;
}

int tap_out_commit(struct out_file *o)
{
	int err = out_file_commit(o);

	if (err)
		pr_err("cannot write %s: %s", o->path, strerror(-err));
	return err;
}

/* hist file rows: class,lo_us,hi_us,count,pdf,cdf */
static void hist_rows(FILE *o, const char *cls, const uint64_t *h)
{
	uint64_t tot = 0, cum = 0;

	for (int b = 0; b < HIST_BINS; b++)
		tot += h[b];
	for (int b = 0; b < HIST_BINS; b++) {
		if (!h[b])
			continue;
		cum += h[b];
		fprintf(o, "%s,%.3f,%.3f,%lu,%.6f,%.6f\n", cls, hist_lo(b),
			hist_hi(b), h[b], (double)h[b] / (double)tot,
			(double)cum / (double)tot);
	}
}

static int write_hist(const char *dir, const char *name,
		      const uint64_t h[2][HIST_BINS])
{
	struct out_file o;
	uint64_t all[HIST_BINS];
	int err = tap_out_open(&o, dir, name);

	if (err)
		return err;
	for (int b = 0; b < HIST_BINS; b++)
		all[b] = h[0][b] + h[1][b];
	fputs("class,lo_us,hi_us,count,pdf,cdf\n", o.f);
	hist_rows(o.f, "short", h[0]);
	hist_rows(o.f, "long", h[1]);
	hist_rows(o.f, "all", all);
	return tap_out_commit(&o);
}

static int write_hists(const char *dir, const struct tracker *t)
{
	uint64_t hf[2][HIST_BINS] = { { 0 } }, hj[2][HIST_BINS] = { { 0 } };
	uint64_t ho[2][HIST_BINS];
	size_t n;
	const struct flow_result *r = tracker_results(t, &n);

	for (size_t i = 0; i < n; i++) {
		if (r[i].fct_us >= 0)
			hf[r[i].is_long][hist_bin(r[i].fct_us)]++;
		if (r[i].jitter_us >= 0)
			hj[r[i].is_long][hist_bin(r[i].jitter_us)]++;
	}
	memcpy(ho[0], tracker_owd_hist(t, 0), sizeof(ho[0]));
	memcpy(ho[1], tracker_owd_hist(t, 1), sizeof(ho[1]));
	if (write_hist(dir, "hist_fct.csv", (const uint64_t (*)[HIST_BINS])hf) ||
	    write_hist(dir, "hist_jitter.csv", (const uint64_t (*)[HIST_BINS])hj) ||
	    write_hist(dir, "hist_owd.csv", (const uint64_t (*)[HIST_BINS])ho))
		return -EIO;
	return 0;
}

/* a summary statistic: a table cell in text ("-" when undefined), a number
 * or null in JSON */
static void stat_print(const char *key, double v)
{
	if (isnan(v))
		print_null(PRINT_ANY, key, " %10s", "-");
	else
		print_float(PRINT_ANY, key, " %10.1f", v);
}

/* the run: JSON only (summary.txt has the results, the run is on stdout) */
static void run_print(const struct run_report *run, const struct track_counters *c)
{
	open_json_object("timestamp");
	print_string(PRINT_JSON, "source", NULL, run->ts_source);
	print_float(PRINT_JSON, "resolution_ns", NULL, run->resolution_ns);
	print_uint(PRINT_JSON, "tsc_hz", NULL, run->tsc_hz);
	close_json_object();
	print_uint(PRINT_JSON, "idle_sleep_us", NULL, run->idle_sleep_us);
	print_uint(PRINT_JSON, "idle_polls", NULL, run->idle_polls);
	print_uint(PRINT_JSON, "lcore", NULL, run->lcore);
	print_uint(PRINT_JSON, "rt_priority", NULL, run->rt_priority);
	open_json_array(PRINT_JSON, "ports");
	for (int i = 0; i < 2; i++) {
		const struct port_report *p = &run->ports[i];

		open_json_object(NULL);
		print_string(PRINT_JSON, "role", NULL, p->role);
		print_uint(PRINT_JSON, "port", NULL, p->port);
		print_string(PRINT_JSON, "name", NULL, p->name);
		print_string(PRINT_JSON, "driver", NULL, p->driver);
		print_uint(PRINT_JSON, "ipackets", NULL, p->ipackets);
		print_uint(PRINT_JSON, "ibytes", NULL, p->ibytes);
		print_uint(PRINT_JSON, "imissed", NULL, p->imissed);
		print_uint(PRINT_JSON, "ierrors", NULL, p->ierrors);
		print_uint(PRINT_JSON, "rx_nombuf", NULL, p->rx_nombuf);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	print_bool(PRINT_JSON, "complete", NULL, !run->port_drops &&
		   !c->flow_overflow_pkts && !c->inflight_overflow);
	print_string(PRINT_JSON, "end", NULL, run->end);
	open_json_object("unparsed");
	print_uint(PRINT_JSON, "not_ip", NULL, run->not_ip);
	print_uint(PRINT_JSON, "truncated", NULL, run->truncated);
	print_uint(PRINT_JSON, "fragment", NULL, run->fragment);
	close_json_object();
	open_json_object("run");
	print_uint(PRINT_JSON, "frames", NULL, run->frames);
	print_float(PRINT_JSON, "seconds", NULL, run->seconds);
	print_uint(PRINT_JSON, "pps", NULL, run->pps);
	print_float(PRINT_JSON, "wall_seconds", NULL, run->wall_seconds);
	close_json_object();
}

/* one group row: class x size bucket */
static void group_print(const struct flow_result *r, size_t n, int ci, size_t bi,
			double *fv, double *jv)
{
	struct stat3 sf, sj;
	size_t cnt = 0, k = 0, kj = 0;

	for (size_t i = 0; i < n; i++) {
		if (ci < 2 && r[i].is_long != ci)
			continue;
		if (r[i].pkts_a < buckets[bi].lo || r[i].pkts_a > buckets[bi].hi)
			continue;
		cnt++;
		if (r[i].fct_us >= 0)
			fv[k++] = r[i].fct_us;
		if (r[i].jitter_us >= 0)
			jv[kj++] = r[i].jitter_us;
	}
	if (!cnt && bi + 1 < NBUCKETS)
		return;		/* empty buckets are left out, "all" never */
	stat3(fv, k, &sf);
	stat3(jv, kj, &sj);
	open_json_object(NULL);
	print_string(PRINT_ANY, "class", "%-6s", classes[ci]);
	print_string(PRINT_ANY, "bucket", " %-8s", buckets[bi].name);
	print_uint(PRINT_ANY, "flows", " %8llu", cnt);
	print_uint(PRINT_JSON, "fct_n", NULL, sf.n);
	stat_print("fct_mean_us", sf.mean);
	stat_print("fct_p50_us", sf.p50);
	stat_print("fct_p99_us", sf.p99);
	print_uint(PRINT_JSON, "jitter_n", NULL, sj.n);
	stat_print("jitter_mean_us", sj.mean);
	stat_print("jitter_p50_us", sj.p50);
	stat_print("jitter_p99_us", sj.p99);
	close_json_object();
	print_nl();
}

/* summary.txt (text mode) or summary.json (JSON mode) from the same calls */
static int summary_print(FILE *o, bool json, const struct tracker *t,
			 const struct run_report *run, double *fv, double *jv)
{
	const struct track_counters *c = tracker_counters(t);
	size_t n;
	const struct flow_result *r = tracker_results(t, &n);

	print_begin_decimals(o, json, 6);
	open_json_object(NULL);
	run_print(run, c);
	print_text("fct-tap summary (times in us; FCT = last packet at B - "
		   "first packet at A)\n");
	print_text("%-6s %-8s %8s %10s %10s %10s %10s %10s %10s\n", "class",
		   "pkts_a", "flows", "fct_mean", "fct_p50", "fct_p99", "jit_mean",
		   "jit_p50", "jit_p99");
	open_json_array(PRINT_JSON, "groups");
	for (int ci = 0; ci < 3; ci++)
		for (size_t bi = 0; bi < NBUCKETS; bi++)
			group_print(r, n, ci, bi, fv, jv);
	close_json_array(PRINT_JSON, NULL);
	print_text("\ncounters:\n");
	open_json_object("counters");
#define TC_PRINT(nm, h)							\
	print_text("  %-20s", #nm);					\
	print_uint(PRINT_ANY, #nm, " %12llu", c->nm);			\
	print_text("  %s\n", h);
	TRACK_COUNTERS(TC_PRINT)
#undef TC_PRINT
	close_json_object();
	print_text("  %-20s", "port_drops");
	print_uint(PRINT_ANY, "port_drops", " %12llu", run->port_drops);
	print_text("  %s\n", "imissed + ierrors + rx_nombuf of both ports");
	close_json_object();
	return print_end();
}

int report_write(const char *dir, const struct tracker *t, const struct run_report *run)
{
	static const char *const names[2] = { "summary.txt", "summary.json" };
	size_t n;
	double *fv, *jv;
	int err = 0;

	tracker_results(t, &n);
	fv = malloc((n + 1) * sizeof(double));
	jv = malloc((n + 1) * sizeof(double));
	if (!fv || !jv) {
		pr_err("out of memory for the summary of %zu flows", n);
		err = -ENOMEM;
	}
	for (int json = 0; json < 2 && !err; json++) {
		struct out_file o;

		err = tap_out_open(&o, dir, names[json]);
		if (err)
			break;
		err = summary_print(o.f, json, t, run, fv, jv);
		if (err) {
			pr_err("cannot write %s: %s", o.path, strerror(-err));
			out_file_abort(&o);
		} else {
			err = tap_out_commit(&o);
		}
	}
	if (!err)
		err = write_hists(dir, t);
	free(fv);
	free(jv);
	return err;
}
