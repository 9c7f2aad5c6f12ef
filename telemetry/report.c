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

#include "tap.h"

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

static void json_num(FILE *o, double v)
{
	if (isnan(v))
		fputs("null", o);
	else
		fprintf(o, "%.3f", v);
}

static void txt_num(FILE *o, double v)
{
	if (isnan(v))
		fprintf(o, " %10s", "-");
	else
		fprintf(o, " %10.1f", v);
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "fct-tap: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

/* hist file from a value array: class,lo_us,hi_us,count,pdf,cdf */
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
	FILE *o = open_out(dir, name);
	uint64_t all[HIST_BINS];

	if (!o)
		return -1;
	for (int b = 0; b < HIST_BINS; b++)
		all[b] = h[0][b] + h[1][b];
	fputs("class,lo_us,hi_us,count,pdf,cdf\n", o);
	hist_rows(o, "short", h[0]);
	hist_rows(o, "long", h[1]);
	hist_rows(o, "all", all);
	return fclose(o) ? -1 : 0;
}

int report_write(const char *dir, const struct tracker *t, const char *ts_json,
		 const char *ports_json, uint64_t port_drops, const char *extra_json)
{
	size_t n, k, kj;
	const struct flow_result *r = tracker_results(t, &n);
	const struct track_counters *c = tracker_counters(t);
	double *fv = malloc((n + 1) * sizeof(double));
	double *jv = malloc((n + 1) * sizeof(double));
	uint64_t hf[2][HIST_BINS] = { { 0 } }, hj[2][HIST_BINS] = { { 0 } };
	uint64_t ho[2][HIST_BINS];
	FILE *txt = open_out(dir, "summary.txt");
	FILE *js = open_out(dir, "summary.json");
	int rc = 0, first = 1;

	if (!fv || !jv || !txt || !js) {
		rc = -1;
		goto out;
	}
	fprintf(js, "{%s,\"ports\":%s,\"port_drops\":%lu,\"complete\":%s,%s,"
		"\"counters\":{", ts_json, ports_json, port_drops,
		port_drops || c->flow_overflow_pkts || c->inflight_overflow ?
		"false" : "true", extra_json);
#define TC_JSON(nm, h) fprintf(js, "%s\"" #nm "\":%lu", first ? "" : ",", c->nm); first = 0;
	TRACK_COUNTERS(TC_JSON)
#undef TC_JSON
	fputs("},\"groups\":[", js);

	fprintf(txt, "fct-tap summary (times in us; FCT = last packet at B - "
		"first packet at A)\n");
	fprintf(txt, "%-6s %-8s %8s %10s %10s %10s %10s %10s %10s\n", "class",
		"pkts_a", "flows", "fct_mean", "fct_p50", "fct_p99", "jit_mean",
		"jit_p50", "jit_p99");
	first = 1;
	for (int ci = 0; ci < 3; ci++) {
		for (size_t bi = 0; bi < NBUCKETS; bi++) {
			struct stat3 sf, sj;
			size_t cnt = 0;

			k = kj = 0;
			for (size_t i = 0; i < n; i++) {
				if (ci < 2 && r[i].is_long != ci)
					continue;
				if (r[i].pkts_a < buckets[bi].lo ||
				    r[i].pkts_a > buckets[bi].hi)
					continue;
				cnt++;
				if (r[i].fct_us >= 0)
					fv[k++] = r[i].fct_us;
				if (r[i].jitter_us >= 0)
					jv[kj++] = r[i].jitter_us;
			}
			if (!cnt && bi + 1 < NBUCKETS)
				continue;
			stat3(fv, k, &sf);
			stat3(jv, kj, &sj);
			fprintf(txt, "%-6s %-8s %8zu", classes[ci],
				buckets[bi].name, cnt);
			txt_num(txt, sf.mean);
			txt_num(txt, sf.p50);
			txt_num(txt, sf.p99);
			txt_num(txt, sj.mean);
			txt_num(txt, sj.p50);
			txt_num(txt, sj.p99);
			fputc('\n', txt);
			fprintf(js, "%s{\"class\":\"%s\",\"bucket\":\"%s\","
				"\"flows\":%zu,\"fct_n\":%zu,\"fct_mean_us\":",
				first ? "" : ",", classes[ci], buckets[bi].name,
				cnt, sf.n);
			first = 0;
			json_num(js, sf.mean);
			fputs(",\"fct_p50_us\":", js);
			json_num(js, sf.p50);
			fputs(",\"fct_p99_us\":", js);
			json_num(js, sf.p99);
			fprintf(js, ",\"jitter_n\":%zu,\"jitter_mean_us\":", sj.n);
			json_num(js, sj.mean);
			fputs(",\"jitter_p50_us\":", js);
			json_num(js, sj.p50);
			fputs(",\"jitter_p99_us\":", js);
			json_num(js, sj.p99);
			fputc('}', js);
		}
	}
	fputs("]}\n", js);

	fprintf(txt, "\ncounters:\n");
#define TC_TXT(nm, h) fprintf(txt, "  %-20s %12lu  %s\n", #nm, c->nm, h);
	TRACK_COUNTERS(TC_TXT)
#undef TC_TXT
	fprintf(txt, "  %-20s %12lu  %s\n", "port_drops", port_drops,
		"imissed + ierrors + rx_nombuf of both ports");

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
		rc = -1;
out:
	if (txt && fclose(txt))
		rc = -1;
	if (js && fclose(js))
		rc = -1;
	free(fv);
	free(jv);
	return rc;
}
