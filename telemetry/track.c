// SPDX-License-Identifier: GPL-2.0
/*
 * track.c - per-packet matching between A and B, per-flow statistics and
 * the per-flow records (flows.csv, flows.jsonl).
 *
 * In-flight table: one entry per packet signature, stored in a ring in
 * insertion (= time) order, indexed by a chained hash. An entry counts the
 * copies seen at A (n_a) and at B (n_b). It is resolved when it is
 * loss_timeout old (or evicted from a full ring, or at the end):
 *   lost += n_a - n_b        (when n_a > n_b: seen at A, never at B)
 *   dup_b += n_b - n_a       (when n_a > 0 and n_b > n_a)
 *   unmatched_b += n_b       (when n_a == 0)
 * Extra copies at A while an entry is pending are counted at once as
 * retransmissions (retrans_a). A delay sample is taken only from the first B
 * copy of a packet seen exactly once at A so far (Karn's rule: an ambiguous
 * pair is counted in "ambiguous", never guessed).
 *
 * Flows: chained hash on the directional inner 5-tuple, bounded; an LRU list
 * for the idle sweep. A flow ends when FIN or RST is seen at B (packets at B
 * after it are counted but do not extend the FCT) or after idle_timeout
 * without packets; its record is written once all its in-flight entries are
 * resolved, so a late final ACK or a lost-and-retransmitted FIN is still
 * accounted to it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_tcp.h>

#include "json_print.h"
#include "tap.h"

#define NIL UINT32_MAX

enum end_reason { END_NONE, END_FIN, END_RST, END_IDLE };

struct flow {
	struct flow_key key;
	uint32_t hnext, lru_prev, lru_next;
	uint32_t gen;		/* bumped when the slot is reused */
	uint32_t pending;	/* in-flight entries not yet resolved */
	uint8_t used, dscp, end;
	uint64_t pkts_a, bytes_a, pkts_b, bytes_b;
	uint64_t lost, retrans, dup_b, unmatched_b, ambiguous;
	int64_t first_a, last_b, last_seen;
	/* how late the stamps of the first packet at A and the last at B may
	 * be (ns; 0 with per-packet stamps): the FCT is exact within the
	 * larger of the two */
	int64_t first_a_err, last_b_err;
	bool has_a, has_b;
	/* one-way delay (ns) */
	int64_t owd_min, owd_max;
	double owd_sum;
	uint64_t owd_n;
	int64_t *samples;
	uint32_t ns, cap;
	/* jitter: RFC 3550 J, and |D| mean/std; D = transit_i - transit_{i-1} */
	int64_t prev_transit;
	double jitter, dv_sum, dv_sq;
	uint64_t dv_n;
};

struct entry {
	uint64_t sig;
	int64_t t;		/* first copy at A; while n_a == 0 the B time.
				 * Ring order (expiry) follows it. */
	uint32_t hnext, flow, gen;
	uint16_t n_a, n_b;
};
_Static_assert(sizeof(struct entry) == 32, "entry: two per cache line");

struct tracker {
	struct track_cfg cfg;
	FILE *csv, *jsonl;
	int werr;		/* first record write error (errno) */
	struct track_counters c;
	int64_t now;
	/* flows */
	struct flow *flows;
	uint32_t *fbucket, fmask, free_head, nflows;
	uint32_t lru_head, lru_tail;	/* head = most recent */
	/* in-flight ring */
	struct entry *ring;
	uint32_t *ebucket, emask, rhead, rcount;
	uint64_t samples_used;
	/* summary material */
	struct flow_result *res;
	size_t nres, capres;
	uint64_t owd_hist[2][HIST_BINS];
};

static uint32_t pow2_ge(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static uint64_t key_hash(const struct flow_key *k)
{
	uint64_t h = 0, w;
	const uint8_t *p = (const uint8_t *)k;

	for (size_t i = 0; i < sizeof(*k); i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 31;
	}
	return h;
}

struct tracker *tracker_new(const struct track_cfg *cfg, FILE *csv, FILE *jsonl)
{
	struct tracker *t = calloc(1, sizeof(*t));
	uint32_t nb;

	if (!t)
		return NULL;
	t->cfg = *cfg;
	t->csv = csv;
	t->jsonl = jsonl;
	t->flows = calloc(cfg->max_flows, sizeof(*t->flows));
	nb = pow2_ge(cfg->max_flows);
	t->fbucket = malloc(nb * sizeof(uint32_t));
	t->fmask = nb - 1;
	t->ring = calloc(cfg->max_inflight, sizeof(*t->ring));
	nb = pow2_ge(cfg->max_inflight);
	t->ebucket = malloc(nb * sizeof(uint32_t));
	t->emask = nb - 1;
	if (!t->flows || !t->fbucket || !t->ring || !t->ebucket) {
		tracker_free(t);
		return NULL;
	}
	memset(t->fbucket, 0xff, (t->fmask + 1) * sizeof(uint32_t));
	memset(t->ebucket, 0xff, (t->emask + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < cfg->max_flows; i++)
		t->flows[i].hnext = i + 1 < cfg->max_flows ? i + 1 : NIL;
	t->free_head = 0;
	t->lru_head = t->lru_tail = NIL;
	t->now = INT64_MIN;
	if (csv)
		fputs("src,sport,dst,dport,proto,dscp,class,pkts_a,bytes_a,"
		      "pkts_b,bytes_b,lost,first_a_us,last_b_us,fct_us,"
		      "owd_min_us,owd_mean_us,owd_p50_us,owd_p99_us,owd_max_us,"
		      "jitter_us,dv_mean_us,dv_std_us,end_reason,fct_err_us\n", csv);
	return t;
}

void tracker_free(struct tracker *t)
{
	if (!t)
		return;
	if (t->flows)
		for (uint32_t i = 0; i < t->cfg.max_flows; i++)
			free(t->flows[i].samples);
	free(t->flows);
	free(t->fbucket);
	free(t->ring);
	free(t->ebucket);
	free(t->res);
	free(t);
}

const struct track_counters *tracker_counters(const struct tracker *t)
{
	return &t->c;
}

void tracker_set_unparsed(struct tracker *t, uint64_t n)
{
	t->c.unparsed = n;
}

const struct flow_result *tracker_results(const struct tracker *t, size_t *n)
{
	*n = t->nres;
	return t->res;
}

const uint64_t *tracker_owd_hist(const struct tracker *t, int is_long)
{
	return t->owd_hist[is_long ? 1 : 0];
}

/* ---- histogram bins (shared with report.c) ---- */
int hist_bin(double us)
{
	int b;

	if (!(us >= 1.0))
		return 0;
	b = 1 + (int)floor(log10(us) * HIST_PER_DECADE);
	return b >= HIST_BINS ? HIST_BINS - 1 : b;
}

double hist_lo(int bin)
{
	return bin == 0 ? -INFINITY : pow(10.0, (double)(bin - 1) / HIST_PER_DECADE);
}

double hist_hi(int bin)
{
	return bin == HIST_BINS - 1 ? INFINITY :
	       pow(10.0, (double)bin / HIST_PER_DECADE);
}

/* ---- LRU ---- */
static void lru_unlink(struct tracker *t, uint32_t i)
{
	struct flow *f = &t->flows[i];

	if (f->lru_prev != NIL)
		t->flows[f->lru_prev].lru_next = f->lru_next;
	else
		t->lru_head = f->lru_next;
	if (f->lru_next != NIL)
		t->flows[f->lru_next].lru_prev = f->lru_prev;
	else
		t->lru_tail = f->lru_prev;
}

static void lru_push(struct tracker *t, uint32_t i)
{
	struct flow *f = &t->flows[i];

	f->lru_prev = NIL;
	f->lru_next = t->lru_head;
	if (t->lru_head != NIL)
		t->flows[t->lru_head].lru_prev = i;
	t->lru_head = i;
	if (t->lru_tail == NIL)
		t->lru_tail = i;
}

/* ---- flow records ---- */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* nearest-rank percentile of sorted s[0..n-1] */
static int64_t pct(const int64_t *s, uint32_t n, unsigned int p)
{
	uint64_t r = ((uint64_t)p * n + 99) / 100;

	return s[r ? r - 1 : 0];
}

static const char *end_name(const struct flow *f, const char *dflt)
{
	switch (f->end) {
	case END_FIN: return "fin";
	case END_RST: return "rst";
	case END_IDLE: return "idle";
	default: return dflt;
	}
}

/* a time in us with 3 decimals (CSV field after a comma), or undefined:
 * empty CSV field, JSON null */
static void print_us(const char *key, double ns, bool defined)
{
	if (defined)
		print_float(PRINT_ANY, key, ",%.3f", ns / 1000.0);
	else
		print_null(PRINT_ANY, key, ",%s", "");
}

/* One flow record: a flows.csv row in text mode, a flows.jsonl line in JSON
 * mode, from the same calls (the CSV columns are the header in tracker_new;
 * the last four counters are JSON only). */
static void record_print(FILE *o, bool json, struct tracker *t,
			 const struct flow *f, const char *reason)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	bool has_fct = f->has_a && f->has_b;
	bool has_owd = f->owd_n > 0, has_j = f->dv_n > 0;
	double dvm = has_j ? f->dv_sum / (double)f->dv_n : 0;
	double dvs = has_j ? sqrt(fmax(0, f->dv_sq / (double)f->dv_n - dvm * dvm)) : 0;
	int err;

	inet_ntop(f->key.family == 4 ? AF_INET : AF_INET6, f->key.src, s, sizeof(s));
	inet_ntop(f->key.family == 4 ? AF_INET : AF_INET6, f->key.dst, d, sizeof(d));
	print_begin_decimals(o, json, 3);
	open_json_object(NULL);
	print_string(PRINT_ANY, "src", "%s", s);
	print_uint(PRINT_ANY, "sport", ",%llu", ntohs(f->key.sport));
	print_string(PRINT_ANY, "dst", ",%s", d);
	print_uint(PRINT_ANY, "dport", ",%llu", ntohs(f->key.dport));
	print_uint(PRINT_ANY, "proto", ",%llu", f->key.proto);
	print_uint(PRINT_ANY, "dscp", ",%llu", f->dscp);
	print_string(PRINT_ANY, "class", ",%s",
		     f->dscp == t->cfg.dscp_long ? "long" : "short");
	print_uint(PRINT_ANY, "pkts_a", ",%llu", f->pkts_a);
	print_uint(PRINT_ANY, "bytes_a", ",%llu", f->bytes_a);
	print_uint(PRINT_ANY, "pkts_b", ",%llu", f->pkts_b);
	print_uint(PRINT_ANY, "bytes_b", ",%llu", f->bytes_b);
	print_uint(PRINT_ANY, "lost", ",%llu", f->lost);
	print_us("first_a_us", (double)f->first_a, f->has_a);
	print_us("last_b_us", (double)f->last_b, f->has_b);
	print_us("fct_us", (double)(f->last_b - f->first_a), has_fct);
	print_us("owd_min_us", (double)f->owd_min, has_owd);
	print_us("owd_mean_us", has_owd ? f->owd_sum / (double)f->owd_n : 0, has_owd);
	print_us("owd_p50_us", f->ns ? (double)pct(f->samples, f->ns, 50) : 0, f->ns > 0);
	print_us("owd_p99_us", f->ns ? (double)pct(f->samples, f->ns, 99) : 0, f->ns > 0);
	print_us("owd_max_us", (double)f->owd_max, has_owd);
	print_us("jitter_us", f->jitter, has_j);
	print_us("dv_mean_us", dvm, has_j);
	print_us("dv_std_us", dvs, has_j);
	print_string(PRINT_ANY, "end_reason", ",%s", end_name(f, reason));
	print_us("fct_err_us", (double)(f->first_a_err > f->last_b_err ?
					f->first_a_err : f->last_b_err), has_fct);
	print_uint(PRINT_JSON, "retrans_a", NULL, f->retrans);
	print_uint(PRINT_JSON, "dup_b", NULL, f->dup_b);
	print_uint(PRINT_JSON, "unmatched_b", NULL, f->unmatched_b);
	print_uint(PRINT_JSON, "ambiguous", NULL, f->ambiguous);
	close_json_object();
	print_nl();
	err = print_end();
	if (err && !t->werr)
		t->werr = -err;
}

/* keep what the summary percentiles need (report.c), within its budget */
static void result_keep(struct tracker *t, const struct flow *f)
{
	struct flow_result *r;

	if (t->nres >= t->cfg.summary_flows) {
		t->c.summary_dropped++;
		return;
	}
	if (t->nres == t->capres) {
		size_t nc = t->capres ? t->capres * 2 : 1024;

		if (nc > t->cfg.summary_flows)
			nc = t->cfg.summary_flows;
		r = realloc(t->res, nc * sizeof(*r));
		if (!r) {
			t->c.summary_dropped++;
			return;
		}
		t->res = r;
		t->capres = nc;
	}
	r = &t->res[t->nres++];
	r->fct_us = f->has_a && f->has_b ? (double)(f->last_b - f->first_a) / 1000.0 : -1;
	r->jitter_us = f->dv_n ? f->jitter / 1000.0 : -1;
	r->pkts_a = f->pkts_a;
	r->is_long = f->dscp == t->cfg.dscp_long;
}

static void write_record(struct tracker *t, struct flow *f, const char *reason)
{
	if (f->ns)
		qsort(f->samples, f->ns, sizeof(int64_t), cmp_i64);
	if (t->csv)
		record_print(t->csv, false, t, f, reason);
	if (t->jsonl)
		record_print(t->jsonl, true, t, f, reason);
	result_keep(t, f);
	t->c.flows_ended++;
}

static void flow_end(struct tracker *t, uint32_t i, const char *reason)
{
	struct flow *f = &t->flows[i];
	uint32_t *pp = &t->fbucket[key_hash(&f->key) & t->fmask];

	write_record(t, f, reason);
	while (*pp != i)
		pp = &t->flows[*pp].hnext;
	*pp = f->hnext;
	lru_unlink(t, i);
	t->samples_used -= f->cap;
	free(f->samples);
	f->samples = NULL;
	f->ns = f->cap = 0;
	f->used = 0;
	f->gen++;
	f->hnext = t->free_head;
	t->free_head = i;
	t->nflows--;
}

static uint32_t flow_get(struct tracker *t, const struct pkt_info *pi)
{
	uint32_t *bucket = &t->fbucket[key_hash(&pi->key) & t->fmask];
	uint32_t i;
	struct flow *f;

	for (i = *bucket; i != NIL; i = t->flows[i].hnext)
		if (!memcmp(&t->flows[i].key, &pi->key, sizeof(pi->key)))
			return i;
	if (t->free_head == NIL)
		return NIL;	/* counted per packet by the caller */
	i = t->free_head;
	f = &t->flows[i];
	t->free_head = f->hnext;
	{
		uint32_t gen = f->gen;

		memset(f, 0, sizeof(*f));
		f->gen = gen;
	}
	f->key = pi->key;
	f->used = 1;
	f->dscp = pi->dscp;
	f->owd_min = INT64_MAX;
	f->owd_max = INT64_MIN;
	f->hnext = *bucket;
	*bucket = i;
	lru_push(t, i);
	t->nflows++;
	t->c.flows_started++;
	return i;
}

static void add_sample(struct tracker *t, struct flow *f, int64_t owd)
{
	double d;

	if (owd < f->owd_min)
		f->owd_min = owd;
	if (owd > f->owd_max)
		f->owd_max = owd;
	f->owd_sum += (double)owd;
	if (owd < 0)
		t->c.owd_negative++;
	if (f->owd_n) {
		d = fabs((double)(owd - f->prev_transit));
		f->jitter += (d - f->jitter) / 16.0;	/* RFC 3550 6.4.1 */
		f->dv_sum += d;
		f->dv_sq += d * d;
		f->dv_n++;
	}
	f->prev_transit = owd;
	f->owd_n++;
	t->owd_hist[f->dscp == t->cfg.dscp_long][hist_bin((double)owd / 1000.0)]++;

	if (f->ns == f->cap) {
		uint32_t nc = f->cap ? f->cap * 2 : 16;
		int64_t *s;

		if (t->samples_used + (nc - f->cap) > t->cfg.owd_samples ||
		    !(s = realloc(f->samples, nc * sizeof(int64_t)))) {
			t->c.owd_samples_dropped++;
			return;
		}
		t->samples_used += nc - f->cap;
		f->samples = s;
		f->cap = nc;
	}
	f->samples[f->ns++] = owd;
}

/* ---- in-flight entries ---- */
static void entry_resolve(struct tracker *t, uint32_t ri)
{
	struct entry *e = &t->ring[ri];
	uint32_t *pp = &t->ebucket[e->sig & t->emask];
	struct flow *f;

	while (*pp != ri)
		pp = &t->ring[*pp].hnext;
	*pp = e->hnext;
	if (e->flow == NIL)
		return;
	f = &t->flows[e->flow];
	if (!f->used || f->gen != e->gen)
		return;		/* cannot happen: flows wait for pending == 0 */
	if (e->n_a > e->n_b) {
		f->lost += e->n_a - e->n_b;
		t->c.lost += e->n_a - e->n_b;
	} else if (e->n_a == 0) {
		f->unmatched_b += e->n_b;
		t->c.unmatched_b += e->n_b;
	} else if (e->n_b > e->n_a) {
		f->dup_b += e->n_b - e->n_a;
		t->c.dup_b += e->n_b - e->n_a;
	}
	if (--f->pending == 0 && f->end != END_NONE)
		flow_end(t, e->flow, NULL);
}

static void ring_pop(struct tracker *t)
{
	uint32_t ri = t->rhead;

	t->rhead = ri + 1 == t->cfg.max_inflight ? 0 : ri + 1;
	t->rcount--;
	entry_resolve(t, ri);
}

static void expire(struct tracker *t)
{
	uint32_t i;

	while (t->rcount &&
	       t->ring[t->rhead].t + t->cfg.loss_timeout_ns <= t->now)
		ring_pop(t);
	/* idle flows; entries of a flow idle this long are resolved already
	 * since idle_timeout >= loss_timeout (checked by main.c) */
	while ((i = t->lru_tail) != NIL &&
	       t->flows[i].last_seen + t->cfg.idle_timeout_ns <= t->now &&
	       t->flows[i].pending == 0) {
		if (t->flows[i].end == END_NONE)
			t->flows[i].end = END_IDLE;
		flow_end(t, i, NULL);
	}
}

static struct entry *entry_find(struct tracker *t, uint64_t sig)
{
	for (uint32_t i = t->ebucket[sig & t->emask]; i != NIL; i = t->ring[i].hnext)
		if (t->ring[i].sig == sig)
			return &t->ring[i];
	return NULL;
}

static struct entry *entry_add(struct tracker *t, uint64_t sig, uint32_t fi,
			       int64_t ts)
{
	uint32_t ri;
	struct entry *e;
	uint32_t *b;

	ri = t->rhead + t->rcount;
	if (ri >= t->cfg.max_inflight)
		ri -= t->cfg.max_inflight;
	t->rcount++;
	e = &t->ring[ri];
	memset(e, 0, sizeof(*e));
	e->sig = sig;
	e->t = ts;
	e->flow = fi;
	e->gen = t->flows[fi].gen;
	b = &t->ebucket[sig & t->emask];
	e->hnext = *b;
	*b = ri;
	t->flows[fi].pending++;
	return e;
}

/* a packet at A of flow fi; e: its in-flight entry, NULL if none yet */
static void packet_at_a(struct tracker *t, uint32_t fi, struct entry *e,
			int64_t ts, int64_t ts_err, const struct pkt_info *pi)
{
	struct flow *f = &t->flows[fi];

	f->pkts_a++;
	f->bytes_a += pi->ip_len;
	if (!f->has_a) {
		f->first_a = ts;
		f->first_a_err = ts_err;
		f->has_a = true;
	}
	if (!e) {
		e = entry_add(t, pi->sig, fi, ts);
	} else if (e->n_a) {
		f->retrans++;
		t->c.retrans_a++;
	}
	if (e->n_a++ == 0 && e->n_b) {
		/* B copy seen first (live capture: B port polled before A):
		 * the pair is still exact */
		if (e->n_b == 1)
			add_sample(t, f, e->t - ts);
		e->t = ts;
	}
}

/* a packet at B of flow fi; e: its in-flight entry, NULL if none yet */
static void packet_at_b(struct tracker *t, uint32_t fi, struct entry *e,
			int64_t ts, int64_t ts_err, const struct pkt_info *pi)
{
	struct flow *f = &t->flows[fi];

	f->pkts_b++;
	f->bytes_b += pi->ip_len;
	if (f->end == END_NONE) {
		f->last_b = ts;
		f->last_b_err = ts_err;
		f->has_b = true;
		if (pi->tcp_flags & RTE_TCP_RST_FLAG)
			f->end = END_RST;
		else if (pi->tcp_flags & RTE_TCP_FIN_FLAG)
			f->end = END_FIN;
	}
	if (!e) {
		e = entry_add(t, pi->sig, fi, ts);
		e->n_b = 1;
		return;
	}
	if (e->n_b++ == 0 && e->n_a == 1) {
		add_sample(t, f, ts - e->t);
	} else if (e->n_a) {
		f->ambiguous++;
		t->c.ambiguous++;
	}
}

void tracker_packet(struct tracker *t, enum port_role role, int64_t ts,
		    int64_t ts_err, const struct pkt_info *pi)
{
	struct entry *e;
	uint32_t fi;

	if (ts > t->now)
		t->now = ts;
	expire(t);
	if (t->rcount == t->cfg.max_inflight) {
		struct entry *h = &t->ring[t->rhead];

		/* make room before looking up the flow (resolving may end it).
		 * A fully matched entry may go early; anything else is lost
		 * information and counted */
		if (!(h->n_a && h->n_a == h->n_b))
			t->c.inflight_overflow++;
		ring_pop(t);
	}
	if (role == ROLE_A)
		t->c.pkts_a++;
	else
		t->c.pkts_b++;
	fi = flow_get(t, pi);
	if (fi == NIL) {
		t->c.flow_overflow_pkts++;
		return;
	}
	t->flows[fi].last_seen = ts;
	lru_unlink(t, fi);
	lru_push(t, fi);
	e = entry_find(t, pi->sig);
	if (role == ROLE_A)
		packet_at_a(t, fi, e, ts, ts_err, pi);
	else
		packet_at_b(t, fi, e, ts, ts_err, pi);
}

void tracker_advance(struct tracker *t, int64_t now)
{
	if (now > t->now) {
		t->now = now;
		expire(t);
	}
}

int tracker_finish(struct tracker *t, const char *reason)
{
	while (t->rcount)
		ring_pop(t);
	/* oldest first, so records come out in a stable order */
	while (t->lru_tail != NIL)
		flow_end(t, t->lru_tail, reason);
	return -t->werr;
}
