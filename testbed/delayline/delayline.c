// SPDX-License-Identifier: GPL-2.0
/*
 * delayline - propagation delay for the testbed's WAN paths, in user space,
 * for kernels without sch_netem.
 *
 * Each --line forwards every Ethernet frame that arrives on its IN device out
 * of its OUT device, no earlier than arrival + delay (+ an optional jitter
 * sample), optionally dropping a random share. Frames of one line leave in
 * the order they arrived: a jitter sample that would let a frame overtake its
 * predecessor is raised to the predecessor's release time (so jitter never
 * reorders). One process, one thread, any number of lines.
 *
 * Impairments per line: random loss (loss-pct: each frame dropped with that
 * probability), bursty loss (burst-loss-pct, burst-len: a two-state
 * Gilbert-Elliott chain, every frame in the bad state dropped, none in the
 * good one; P(bad -> good) = 1 / burst-len per frame, so bursts last
 * burst-len frames on average, and P(good -> bad) = r x pi / (1 - pi) for a
 * long-run share pi = burst-loss-pct / 100 in the bad state; the two losses
 * are independent and add), jitter, and the delay. A schedule (--phase)
 * changes them for a while: a phase of line N is active from at-ms to at-ms +
 * for-ms on the schedule's clock, and sets the keys it gives (extra-delay-ms
 * adds to the line's delay-ms); of two active phases of a line, the later
 * one's keys win. The schedule's clock starts when the process is ready and
 * starts over on SIGHUP (a run's start), which also zeroes the phases'
 * counters. The parameters in force are those at a frame's read.
 *
 * Time, CLOCK_MONOTONIC in ns. Arrival: the kernel's receive stamp of the
 * frame (SO_TIMESTAMPNS, CLOCK_REALTIME, taken when the veth peer sent it),
 * moved to CLOCK_MONOTONIC; so the time a frame waited for this process to
 * wake up is already served delay. A missing or implausible stamp (older than
 * 1 s, or in the future: a forwarded frame can carry another clock's time)
 * falls back to the read time (counted: ts_fallback). Release: the process
 * sleeps in epoll_pwait2() with a nanosecond timeout (an hrtimer, not a
 * jiffy: 4 ms here) until the next release time minus its expected wake-up
 * latency (wake_ahead: the median of 31 timed sleeps at start, then an EWMA
 * of every timed wake-up, capped at 0.25 ms), and sends every frame due by
 * then. Sends are thus on time on average, each within about the spread of
 * the wake-up latency; release_err_mean_us, late_max_us and early_max_us
 * in the counters say how well that went. --rt-priority and --cpu keep the
 * wake-up latency in the tens to hundreds of microseconds on a loaded VM.
 *
 * I/O: AF_PACKET. IN: a SOCK_RAW socket bound to IN, read with recvmmsg()
 * (64 frames per call), PACKET_IGNORE_OUTGOING (frames the kernel sends out
 * of IN are not ours), PACKET_VNET_HDR: each frame comes with its
 * virtio_net_hdr (checksum still to be completed by the stack, GSO), which
 * goes out with it, so a frame whose checksum a veth left partial stays
 * valid. OUT: a SOCK_RAW socket bound to OUT (protocol 0: it receives
 * nothing), PACKET_QDISC_BYPASS, PACKET_VNET_HDR, written with sendmmsg()
 * straight from the hold buffer. The original frame on IN continues into the
 * kernel stack, which drops it: its destination MAC is not IN's
 * (PACKET_OTHERHOST); IN must have no IP address. GRO, GSO and TSO are turned
 * off on IN and OUT (--keep-offloads: not) and frames are expected
 * wire-sized; a GSO frame is still forwarded, and counted (gso), so an
 * upstream device with segmentation offload on shows; a frame OUT cannot
 * send (larger than its MTU) is dropped and counted (oversize).
 *
 * Hold buffer: one byte ring per line (--limit-bytes), records of a 16-byte
 * header plus the 10-byte virtio_net_hdr and the frame, rounded up to 8
 * bytes, released from the tail in FIFO order. It holds a bandwidth-delay
 * product as long as limit-bytes >= 1.5 x rate x delay (the record overhead
 * is at most 47 % of a 60-byte frame, 2 % of a 1514-byte one); a frame that
 * does not fit is dropped and counted (overflow). Memory is touched only as
 * the ring fills.
 *
 * Counters (JSON, --stats FILE: written when ready, every --stats-interval-ms,
 * on SIGUSR1 and at exit; stdout at exit without --stats; SIGUSR2: written,
 * then the worst cases - late, early, read age, peak - start over, so a
 * reader can get them per measurement): per line rx, tx,
 * lost (random loss), lost_burst (Gilbert-Elliott loss) and bursts (its
 * visits to the bad state), the parameters in force (now), overflow,
 * oversize, gso, tx_errors, sock_drops (frames
 * the kernel dropped because the socket buffer was full), tx_retries, queued,
 * peak_bytes, ts_fallback, release error (mean, worst late, worst early),
 * wake_ahead; per process CPU seconds (user, system: the system time includes
 * the receiving side's processing of every frame sent, which the kernel does
 * in the sender's context on a veth), the schedule's clock (schedule_t_s)
 * and per phase its settings, whether it is active, and the frames its line
 * read (rx) and dropped (lost: random and burst) while it was.
 *
 * Exit: 0 on SIGINT/SIGTERM, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>
#include <math.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "json_print.h"
#include "params.h"
#include "util.h"

#define MAX_LINES 8
#define MAX_LINES_STR "8"
#define MAX_PHASES 16
#define MAX_BURST_LEN 1000000.0	/* frames */
#define BATCH 64		/* frames per recvmmsg()/sendmmsg() */
#define VNET_HDR sizeof(struct virtio_net_hdr)
#define FRAME_MAX 65536		/* receive slot (a GSO frame fits); larger: oversize */
#define MAX_DELAY_MS 10000.0	/* 10 s */
#define DEF_LIMIT_BYTES (32u << 20)	/* ~1 Gbit/s x 170 ms of full-size frames */
#define MIN_LIMIT_BYTES (64u << 10)
#define SOCKBUF_BYTES (8 << 20)
#define TX_RETRY_NS 50000	/* OUT's socket buffer full: try again after 50 us */
#define WAKE_AHEAD_MAX_NS 250000	/* cap of the wake-up latency compensation */
#define TS_MAX_AGE_NS 500000	/* a kernel stamp older than 0.5 ms is not trusted */
#define NSEC 1000000000LL

enum dist { DIST_UNIFORM, DIST_NORMAL };
static const char *const dist_names[] = { "uniform", "normal" };

/* ring record header; the frame follows, the record is padded to 8 bytes */
struct rec {
	int64_t release_ns;	/* CLOCK_MONOTONIC */
	uint32_t len;		/* frame bytes; REC_WRAP: continue at offset 0 */
	uint32_t pad;
};
_Static_assert(sizeof(struct rec) == 16, "ring record header is 16 bytes");
#define REC_WRAP UINT32_MAX

/* what a line does to its frames: its --line keys, and what is in force
 * (the keys of its active phases over them) */
struct impair {
	int64_t delay_ns, jitter_ns;
	enum dist dist;
	double loss;		/* random loss, probability 0..1 */
	double burst_loss;	/* Gilbert-Elliott: long-run share in the bad state, 0..1 */
	double burst_len;	/* ... mean frames per visit to it, >= 1 */
};

struct line_stats {
	uint64_t rx, rx_bytes, tx, tx_bytes;
	uint64_t lost, lost_burst, bursts;	/* random, burst loss; bad-state visits */
	uint64_t overflow, oversize, tx_errors, sock_drops;
	uint64_t gso; /* frames received as GSO (offloads on upstream) */
	uint64_t tx_retries;
	int64_t err_sum_ns;			/* sum of (send time - release time) */
	int64_t late_max_ns, early_max_ns;	/* worst late (> 0) and early (> 0) send */
	uint64_t ts_fallback;			/* frames stamped at read: no kernel stamp */
	int64_t rx_age_max_ns;			/* worst read - kernel stamp time */
	uint64_t peak_bytes;			/* ring bytes in use, high watermark */
};

struct line {
	char in_name[IF_NAMESIZE], out_name[IF_NAMESIZE];
	int in_ifindex, out_ifindex;
	struct impair base, cur;	/* --line's; in force */
	double ge_p, ge_r;	/* cur's chain: P(good -> bad), P(bad -> good) */
	bool ge_bad;		/* the chain's state for the next frame */
	uint32_t active;	/* bit i: phase i is active */
	int rx_fd, tx_fd;
	unsigned char *ring;
	uint64_t cap;		/* ring bytes */
	uint64_t head, tail;	/* byte offsets: write at head, release from tail */
	uint64_t used;		/* bytes between tail and head, wrap padding included */
	uint64_t queued;	/* frames held */
	int64_t last_release;	/* release time of the newest frame: no overtaking */
	int64_t retry_at;	/* OUT was full: no send before this time */
	struct line_stats st;
};

static struct line lines[MAX_LINES];
static int nlines;

/* one --phase: line `line` gets the keys in `given` from at to end */
enum { PH_LOSS = 1, PH_BURST_LOSS = 2, PH_BURST_LEN = 4, PH_JITTER = 8, PH_EXTRA_DELAY = 16 };
struct phase {
	int line;
	int64_t at_ns, end_ns;	/* schedule clock; end INT64_MAX: to the exit */
	unsigned int given;	/* PH_* */
	struct impair v;	/* delay_ns: the extra delay */
	uint64_t rx, lost;	/* while active, since the schedule started */
};
static struct phase phases[MAX_PHASES];
static int nphases;
static int64_t sched_t0;	/* CLOCK_MONOTONIC of the schedule's start */
static unsigned long sched_starts;

static volatile sig_atomic_t stop_flag, dump_flag, reset_flag, restart_flag;
static uint64_t rng_state = 0x853c49e6748fea9bULL;
static const char *stats_path;
static unsigned long stats_writes;

/* xorshift64*: uniform 64-bit values, reproducible from --seed */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static double rng_unit(void)	/* [0, 1) */
{
	return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* delay + jitter sample for one frame, never negative */
static int64_t sample_delay(const struct line *l)
{
	const struct impair *c = &l->cur;
	double j = 0;

	if (c->jitter_ns) {
		if (c->dist == DIST_UNIFORM) {
			j = (2 * rng_unit() - 1) * (double)c->jitter_ns;
		} else {	/* Box-Muller, standard deviation = jitter */
			double u1 = 1.0 - rng_unit(), u2 = rng_unit();

			j = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2) * (double)c->jitter_ns;
		}
	}
	int64_t d = c->delay_ns + (int64_t)j;
	return d < 0 ? 0 : d;
}

/* the impairments in force on line I at schedule time T: its --line keys,
 * then the keys of each phase active at T, in the order given; the
 * Gilbert-Elliott chain's probabilities from them (its state is kept, and
 * set good when burst loss is off) */
static void line_update(int i, int64_t t)
{
	struct line *l = &lines[i];
	struct impair c = l->base;
	uint32_t active = 0;

	for (int k = 0; k < nphases; k++) {
		const struct phase *ph = &phases[k];

		if (ph->line != i || t < ph->at_ns || t >= ph->end_ns)
			continue;
		active |= 1u << k;
		if (ph->given & PH_LOSS)
			c.loss = ph->v.loss;
		if (ph->given & PH_BURST_LOSS)
			c.burst_loss = ph->v.burst_loss;
		if (ph->given & PH_BURST_LEN)
			c.burst_len = ph->v.burst_len;
		if (ph->given & PH_JITTER)
			c.jitter_ns = ph->v.jitter_ns;
		if (ph->given & PH_EXTRA_DELAY)
			c.delay_ns = l->base.delay_ns + ph->v.delay_ns;
	}
	l->cur = c;
	l->active = active;
	if (c.burst_loss > 0) {
		l->ge_r = 1.0 / c.burst_len;
		l->ge_p = l->ge_r * c.burst_loss / (1 - c.burst_loss);
	} else {
		l->ge_p = l->ge_r = 0;
		l->ge_bad = false;
	}
}

/* drop this frame? Random loss and the Gilbert-Elliott chain, counted on
 * the line and on its active phases */
static bool frame_lost(struct line *l)
{
	bool lost = false;

	if (l->cur.loss > 0 && rng_unit() < l->cur.loss) {
		l->st.lost++;
		lost = true;
	}
	if (l->ge_p > 0) {
		if (l->ge_bad) {
			if (!lost)
				l->st.lost_burst++;
			lost = true;
			if (rng_unit() < l->ge_r)
				l->ge_bad = false;
		} else if (rng_unit() < l->ge_p) {
			l->ge_bad = true;	/* from the next frame on */
			l->st.bursts++;
		}
	}
	for (uint32_t a = l->active; a; a &= a - 1) {
		struct phase *ph = &phases[__builtin_ctz(a)];

		ph->rx++;
		ph->lost += lost;
	}
	return lost;
}

/* --- options ----------------------------------------------------------------- */

/* one --line, as given */
struct line_spec {
	__u32 given;		/* params.h: first member */
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	uint64_t delay_ns, jitter_ns;
	int dist;		/* enum dist */
	double loss_pct, burst_loss_pct, burst_len;
};

/* one --phase, as given */
struct phase_spec {
	__u32 given;		/* params.h: first member */
	uint32_t line;
	uint64_t at_ns, for_ns;
	double loss_pct, burst_loss_pct, burst_len;
	uint64_t jitter_ns, extra_delay_ns;
};

struct dl_opts {
	__u32 given;		/* params.h: first member */
	SC_LIST(struct line_spec, MAX_LINES) lines;
	SC_LIST(struct phase_spec, MAX_PHASES) phases;
	uint64_t limit, seed;
	int cpu, rt_prio;	/* -1, 0: not given */
	const char *stats;
	uint64_t interval_ns;
	bool keep_offloads;
};

static const struct sc_enum dist_values[] = {
	{ "uniform", DIST_UNIFORM }, { "normal", DIST_NORMAL }, { NULL, 0 },
};

#define LINE_KEY(name, type, member, ...) \
	SC_OPTION(name, type, struct line_spec, member, __VA_ARGS__)
static const struct sc_option line_keys[] = {
	LINE_KEY("in", SC_OPT_IFNAME, in, .metavar = "DEV", .required = true,
		 .noun = "interface name", .help = "frames arrive here"),
	LINE_KEY("out", SC_OPT_IFNAME, out, .metavar = "DEV", .required = true,
		 .noun = "interface name", .help = "and leave here"),
	LINE_KEY("delay-ms", SC_OPT_DURATION, delay_ns, .metavar = "MS", .required = true,
		 .unit = SC_UNIT_MS, .lo = 0, .hi = MAX_DELAY_MS, .help = "delay"),
	LINE_KEY("jitter-ms", SC_OPT_DURATION, jitter_ns, .metavar = "MS", .unit = SC_UNIT_MS,
		 .lo = 0, .hi = MAX_DELAY_MS, .help = "jitter added to the delay, 0 by default"),
	LINE_KEY("dist", SC_OPT_ENUM, dist, .metavar = "uniform|normal", .values = dist_values,
		 .help = "jitter distribution: uniform in +-jitter (the default), or normal "
			 "with standard deviation jitter"),
	LINE_KEY("loss-pct", SC_OPT_NUMBER, loss_pct, .metavar = "P", .lo = 0, .hi = 100,
		 .help = "share of frames dropped at random, 0 by default"),
	LINE_KEY("burst-loss-pct", SC_OPT_NUMBER, burst_loss_pct, .metavar = "P", .lo = 0, .hi = 99,
		 .help = "share of frames dropped in bursts (Gilbert-Elliott), 0 by default; "
			 "needs burst-len"),
	LINE_KEY("burst-len", SC_OPT_NUMBER, burst_len, .metavar = "N", .lo = 1,
		 .hi = MAX_BURST_LEN, .help = "mean frames per burst of burst-loss-pct"),
	SC_OPTIONS_END,
};

#define PHASE_KEY(name, type, member, ...) \
	SC_OPTION(name, type, struct phase_spec, member, __VA_ARGS__)
static const struct sc_option phase_keys[] = {
	PHASE_KEY("line", SC_OPT_UINT, line, .metavar = "N", .required = true, .lo = 1,
		  .hi = MAX_LINES, .help = "the line, 1 = the first --line"),
	PHASE_KEY("at-ms", SC_OPT_DURATION, at_ns, .metavar = "MS", .unit = SC_UNIT_MS, .lo = 0,
		  .hi = 86400000, .help = "start on the schedule's clock, 0 by default"),
	PHASE_KEY("for-ms", SC_OPT_DURATION, for_ns, .metavar = "MS", .unit = SC_UNIT_MS, .lo = 1,
		  .hi = 86400000, .help = "length (by default: until the exit)"),
	PHASE_KEY("loss-pct", SC_OPT_NUMBER, loss_pct, .metavar = "P", .lo = 0, .hi = 100,
		  .help = "random loss meanwhile"),
	PHASE_KEY("burst-loss-pct", SC_OPT_NUMBER, burst_loss_pct, .metavar = "P", .lo = 0,
		  .hi = 99, .help = "burst loss meanwhile"),
	PHASE_KEY("burst-len", SC_OPT_NUMBER, burst_len, .metavar = "N", .lo = 1,
		  .hi = MAX_BURST_LEN, .help = "mean burst length meanwhile"),
	PHASE_KEY("jitter-ms", SC_OPT_DURATION, jitter_ns, .metavar = "MS", .unit = SC_UNIT_MS,
		  .lo = 0, .hi = MAX_DELAY_MS, .help = "jitter meanwhile"),
	PHASE_KEY("extra-delay-ms", SC_OPT_DURATION, extra_delay_ns, .metavar = "MS",
		  .unit = SC_UNIT_MS, .lo = 0, .hi = MAX_DELAY_MS,
		  .help = "added to the line's delay meanwhile"),
	SC_OPTIONS_END,
};

#define DL_OPT(name, type, member, ...) SC_OPTION(name, type, struct dl_opts, member, __VA_ARGS__)
static const struct sc_option dl_options[] = {
	SC_OPTION_LIST("line", SC_OPT_KEYVALS, struct dl_opts, lines, .sub = line_keys,
		       .metavar = "KEY=VALUE,...", .required = true,
		       .help = "a line: forward IN to OUT at arrival + delay (+ jitter)"),
	SC_OPTION_LIST("phase", SC_OPT_KEYVALS, struct dl_opts, phases, .sub = phase_keys,
		       .metavar = "KEY=VALUE,...",
		       .help = "a phase of the schedule: other impairments on a line for a while"),
	DL_OPT("limit-bytes", SC_OPT_UINT, limit, .metavar = "N", .lo = MIN_LIMIT_BYTES,
	       .hi = 1ULL << 36, .help = "hold buffer per line"),
	DL_OPT("seed", SC_OPT_UINT, seed, .metavar = "N", .lo = 0, .hi = UINT64_MAX,
	       .help = "seed of the jitter and loss samples"),
	DL_OPT("cpu", SC_OPT_UINT, cpu, .metavar = "N", .lo = 0, .hi = CPU_SETSIZE - 1,
	       .help = "pin to CPU N"),
	DL_OPT("rt-priority", SC_OPT_UINT, rt_prio, .metavar = "N", .lo = 1, .hi = 99,
	       .help = "run at SCHED_FIFO priority N"),
	DL_OPT("stats", SC_OPT_PATH, stats, .metavar = "FILE", .noun = "path",
	       .help = "counters as JSON: at start, every interval, on SIGUSR1 and at exit "
		       "(else stdout at exit)"),
	DL_OPT("stats-interval-ms", SC_OPT_DURATION, interval_ns, .metavar = "MS",
	       .unit = SC_UNIT_MS, .lo = 10, .hi = 3600000, .help = "interval of --stats"),
	DL_OPT("keep-offloads", SC_OPT_FLAG, keep_offloads,
	       .help = "leave GRO/GSO/TSO of IN and OUT as they are"),
	SC_OPTIONS_END,
};

static const struct dl_opts dl_defaults = {
	.limit = DEF_LIMIT_BYTES, .cpu = -1, .interval_ns = 1000 * 1000000ULL,
};

static void usage(FILE *f)
{
	sc_usage(f,
		 "--line "
		 "in=DEV,out=DEV,delay-ms=MS[,jitter-ms=MS][,dist=uniform|normal][,loss-pct=P]\n"
		 "                 [--line ...] [--phase "
		 "line=N[,at-ms=MS][,for-ms=MS][,loss-pct=P]\n"
		 "                 "
		 "[,burst-loss-pct=P,burst-len=N][,jitter-ms=MS][,extra-delay-ms=MS] ...]\n"
		 "                 [--limit-bytes N] [--seed N] [--cpu N] [--rt-priority N]\n"
		 "                 [--stats FILE] [--stats-interval-ms MS] [--keep-offloads]",
		 dl_options, &dl_defaults,
		 "Forwards every frame arriving on IN out of OUT at arrival + delay (+ jitter),\n"
		 "in arrival order, dropping loss-pct % at random and burst-loss-pct % in bursts\n"
		 "of burst-len frames on average. Up to " MAX_LINES_STR
		 " lines. A --phase changes a\n"
		 "line's impairments from at-ms for for-ms on the schedule's clock, which starts\n"
		 "when ready and again on SIGHUP.\n"
		 "Exit: 0 stopped by SIGINT/SIGTERM, 1 runtime error, 2 usage error.\n");
}

/* a burst loss share PCT with mean burst length LEN (0: not given) is one a
 * two-state chain can have: P(good -> bad) = pi / ((1 - pi) x len) <= 1,
 * i.e. pi <= len / (1 + len); 0, or a usage error (printed) */
static int burst_check(const char *opt, unsigned int n, double pct, double len)
{
	double pi = pct / 100;

	if (pct <= 0)
		return 0;
	if (len <= 0)
		return sc_print_usage_error(NULL,
					    "%s %u: burst-loss-pct=%g without burst-len: accepted: "
					    "burst-len=N (mean frames per burst, 1..%.0f) with it",
					    opt, n, pct, MAX_BURST_LEN);
	if (pi > len / (1 + len))
		return sc_print_usage_error(
			NULL,
			"%s %u: burst-loss-pct=%g with burst-len=%g: accepted: "
			"burst-loss-pct <= %g with that burst-len (100 x len / (1 + len))",
			opt, n, pct, len, 100 * len / (1 + len));
	return 0;
}

/* the lines, the phases and the seed from the options; a usage error
 * (printed) when a line goes nowhere or an impairment cannot be had */
static int lines_set(const struct dl_opts *o)
{
	for (unsigned int i = 0; i < o->lines.n; i++) {
		const struct line_spec *sp = &o->lines.v[i];
		struct line *l = &lines[i];

		if (!strcmp(sp->in, sp->out))
			return sc_print_usage_error(
				NULL, "--line: in and out are both '%s': accepted: two interfaces",
				sp->in);
		memset(l, 0, sizeof(*l));
		l->rx_fd = l->tx_fd = -1;
		strcpy(l->in_name, sp->in);
		strcpy(l->out_name, sp->out);
		l->base.delay_ns = (int64_t)sp->delay_ns;
		l->base.jitter_ns = (int64_t)sp->jitter_ns;
		l->base.dist = sp->dist;
		l->base.loss = sp->loss_pct / 100;
		l->base.burst_loss = sp->burst_loss_pct / 100;
		l->base.burst_len =
			sc_option_given(line_keys, (void *)sp, "burst-len") ? sp->burst_len : 0;
		if (burst_check("--line", i + 1, sp->burst_loss_pct, l->base.burst_len))
			return -1;
	}
	nlines = (int)o->lines.n;
	for (unsigned int k = 0; k < o->phases.n; k++) {
		const struct phase_spec *sp = &o->phases.v[k];
		struct phase *ph = &phases[k];
		const struct line *l;
		double pct, len;

		if (sp->line > o->lines.n)
			return sc_print_usage_error(
				NULL, "--phase: line=%u: accepted: 1..%u (the --lines given)",
				sp->line, o->lines.n);
		l = &lines[sp->line - 1];
		memset(ph, 0, sizeof(*ph));
		ph->line = (int)sp->line - 1;
		ph->at_ns = (int64_t)sp->at_ns;
		ph->end_ns = sc_option_given(phase_keys, (void *)sp, "for-ms") ?
			     (int64_t)(sp->at_ns + sp->for_ns) : INT64_MAX;
#define PH_KEY(key, bit, set) \
		if (sc_option_given(phase_keys, (void *)sp, key)) { ph->given |= bit; set; }
		PH_KEY("loss-pct", PH_LOSS, ph->v.loss = sp->loss_pct / 100)
		PH_KEY("burst-loss-pct", PH_BURST_LOSS, ph->v.burst_loss = sp->burst_loss_pct / 100)
		PH_KEY("burst-len", PH_BURST_LEN, ph->v.burst_len = sp->burst_len)
		PH_KEY("jitter-ms", PH_JITTER, ph->v.jitter_ns = (int64_t)sp->jitter_ns)
		PH_KEY("extra-delay-ms", PH_EXTRA_DELAY,
		       ph->v.delay_ns = (int64_t)sp->extra_delay_ns)
#undef PH_KEY
		/* the burst loss this phase puts in force, over its line's */
		pct = ph->given & PH_BURST_LOSS ? sp->burst_loss_pct : l->base.burst_loss * 100;
		len = ph->given & PH_BURST_LEN ? sp->burst_len : l->base.burst_len;
		if (burst_check("--phase", k + 1, pct, len))
			return -1;
	}
	nphases = (int)o->phases.n;
	rng_state ^= o->seed * 0x9E3779B97F4A7C15ULL;
	if (!rng_state)
		rng_state = 1;
	return 0;
}

/* 0 to run, else the exit code (--help: 0, printed) */
static int dl_parse(int argc, char **argv, struct dl_opts *o)
{
	int rc;

	*o = dl_defaults;
	rc = sc_options_parse(dl_options, NULL, argc, argv, o, false, NULL);
	if (rc == 1)
		usage(stdout);
	if (rc)
		return rc == 1 ? 0 : rc;
	o->limit &= ~7ULL;
	stats_path = o->stats;
	return lines_set(o) ? FS_EXIT_USAGE : -1;
}

/* --- set-up --------------------------------------------------------------- */

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_flag = 1;
	else if (sig == SIGUSR2)
		dump_flag = reset_flag = 1;
	else if (sig == SIGHUP)
		restart_flag = 1;
	else
		stop_flag = 1;
}

/* GRO, GSO and TSO off: wire-sized frames in and out (legacy ethtool ioctls) */
static int offloads_off(int fd, const char *dev)
{
	static const struct { uint32_t cmd; const char *name; } feats[] = {
		{ ETHTOOL_SGRO, "gro" }, { ETHTOOL_SGSO, "gso" }, { ETHTOOL_STSO, "tso" },
	};
	for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		struct ethtool_value ev = { .cmd = feats[i].cmd, .data = 0 };
		struct ifreq ifr = { 0 };

		strcpy(ifr.ifr_name, dev);
		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr) && errno != EOPNOTSUPP) {
			fprintf(stderr, "delayline: %s: turning %s off: %s\n", dev,
				feats[i].name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int packet_socket(const char *dev, int ifindex, int rx)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int one = 1, buf = SOCKBUF_BYTES;
	/* protocol 0 until bound: an unbound ETH_P_ALL socket sees every device */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		fprintf(stderr, "delayline: AF_PACKET socket: %s (needs CAP_NET_RAW)\n",
			strerror(errno));
		return -1;
	}
	if (rx) {
		sll.sll_protocol = htons(ETH_P_ALL);
		if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) ||
		    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
		    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
		    (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) &&
		     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf))))
			goto err;
	} else {
		if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) ||
		    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
		    (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) &&
		     setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf))))
			goto err;
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto err;
	return fd;
err:
	fprintf(stderr, "delayline: %s: %s socket set-up: %s\n", dev, rx ? "receive" : "send",
		strerror(errno));
	close(fd);
	return -1;
}

static int line_open(struct line *l, uint64_t limit, int keep_offloads)
{
	int fd;

	l->in_ifindex = if_nametoindex(l->in_name);
	l->out_ifindex = if_nametoindex(l->out_name);
	if (!l->in_ifindex || !l->out_ifindex) {
		fprintf(stderr, "delayline: no interface '%s' in this network namespace\n",
			l->in_ifindex ? l->out_name : l->in_name);
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (!keep_offloads && (offloads_off(fd, l->in_name) || offloads_off(fd, l->out_name))) {
		close(fd);
		return -1;
	}
	close(fd);
	l->rx_fd = packet_socket(l->in_name, l->in_ifindex, 1);
	l->tx_fd = packet_socket(l->out_name, l->out_ifindex, 0);
	if (l->rx_fd < 0 || l->tx_fd < 0)
		return -1;
	l->cap = limit;
	l->ring = mmap(NULL, limit, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l->ring == MAP_FAILED) {
		fprintf(stderr, "delayline: hold buffer of %" PRIu64 " bytes: %s\n", limit,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* --- the hold buffer ------------------------------------------------------ */

static inline uint64_t rec_size(uint32_t len)
{
	return sizeof(struct rec) + ((len + 7u) & ~7u);
}

/* room for a record of LEN bytes at head; returns the record or NULL (full) */
static struct rec *ring_reserve(struct line *l, uint32_t len)
{
	uint64_t need = rec_size(len), wrap = 0;

	if (!l->queued)		/* empty: start over, no wrap padding left behind */
		l->head = l->tail = l->used = 0;
	if (l->head + need > l->cap)	/* does not fit before the end: wrap */
		wrap = l->cap - l->head;
	if (l->used + wrap + need > l->cap)
		return NULL;
	if (wrap) {
		if (wrap >= sizeof(struct rec))
			((struct rec *)(l->ring + l->head))->len = REC_WRAP;
		l->used += wrap;
		l->head = 0;
	}
	return (struct rec *)(l->ring + l->head);
}

static void ring_commit(struct line *l, uint32_t len)
{
	uint64_t sz = rec_size(len);

	l->head += sz;
	if (l->head == l->cap)
		l->head = 0;
	l->used += sz;
	l->queued++;
	if (l->used > l->st.peak_bytes)
		l->st.peak_bytes = l->used;
}

/* the oldest record, skipping wrap padding; NULL when empty */
static struct rec *ring_peek(struct line *l)
{
	if (!l->queued)
		return NULL;
	if (l->cap - l->tail < sizeof(struct rec) ||
	    ((struct rec *)(l->ring + l->tail))->len == REC_WRAP) {
		l->used -= l->cap - l->tail;
		l->tail = 0;
	}
	return (struct rec *)(l->ring + l->tail);
}

static void ring_pop(struct line *l)
{
	uint64_t sz = rec_size(((struct rec *)(l->ring + l->tail))->len);

	l->tail += sz;
	if (l->tail == l->cap)
		l->tail = 0;
	l->used -= sz;
	l->queued--;
}

/* --- receive and release -------------------------------------------------- */

static unsigned char rxbuf[BATCH][VNET_HDR + FRAME_MAX];
static unsigned char rxctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
static int64_t wake_ahead_ns;	/* expected wake-up latency of a timed sleep */

/* arrival time of a received frame on CLOCK_MONOTONIC: the kernel's receive
 * stamp (CLOCK_REALTIME, taken when the veth handed the frame over) moved by
 * the current REALTIME - MONOTONIC offset, so the wake-up latency of this
 * process counts as delay already served. A missing stamp, or one more than
 * 0.5 ms older than the read time, falls back to the read time NOW: here some
 * frames carried stamps up to ~18 ms older than their send time (cause not
 * found; a forwarded frame can keep an earlier hop's time), which would have
 * released them that much early. A late read is then added delay, visible
 * in rx_age_max_us. */
static int64_t arrival_ns(struct msghdr *mh, int64_t now, int64_t real_off, struct line *l)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			int64_t t;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			t = (int64_t)ts.tv_sec * NSEC + ts.tv_nsec - real_off;
			if (t <= now && now - t > l->st.rx_age_max_ns)
				l->st.rx_age_max_ns = now - t;
			if (t <= now && now - t <= TS_MAX_AGE_NS)
				return t;
			break;
		}
	}
	l->st.ts_fallback++;
	return now;
}

static void line_receive(struct line *l)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];

	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = rxbuf[i];
			iov[i].iov_len = VNET_HDR + FRAME_MAX;
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = rxctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(rxctl[i]);
		}
		int n = recvmmsg(l->rx_fd, msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (n <= 0)
			return;	/* EAGAIN: drained; other errors show up as missing rx */
		struct timespec rt;
		int64_t now = mono_ns();

		clock_gettime(CLOCK_REALTIME, &rt);
		int64_t real_off = (int64_t)rt.tv_sec * NSEC + rt.tv_nsec - now;

		line_update((int)(l - lines), now - sched_t0);

		for (int i = 0; i < n; i++) {
			/* len: virtio_net_hdr + frame */
			uint32_t len = msgs[i].msg_len;
			const struct virtio_net_hdr *vh = (const void *)rxbuf[i];
			struct rec *r;
			int64_t rel;

			if (len < VNET_HDR)
				continue;
			l->st.rx++;
			l->st.rx_bytes += len - VNET_HDR;
			if (len > VNET_HDR + FRAME_MAX || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				l->st.oversize++;
				continue;
			}
			if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
				l->st.gso++;
			if (frame_lost(l))
				continue;
			r = ring_reserve(l, len);
			if (!r) {
				l->st.overflow++;
				continue;
			}
			rel = arrival_ns(&msgs[i].msg_hdr, now, real_off, l) + sample_delay(l);
			if (rel < l->last_release)
				rel = l->last_release;	/* never overtake */
			l->last_release = rel;
			r->release_ns = rel;
			r->len = len;
			memcpy(r + 1, rxbuf[i], len);
			ring_commit(l, len);
		}
		if (n < BATCH)
			return;
	}
}

/* send every frame whose release time has come; returns the next release
 * time of this line, or INT64_MAX when it holds nothing */
static int64_t line_release(struct line *l, int64_t now)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct rec *recs[BATCH];

	if (l->retry_at > now)
		return l->retry_at;
	l->retry_at = 0;
	for (;;) {
		int n = 0;

		/* collect due records without consuming them: peek walks a copy */
		uint64_t tail = l->tail, used = l->used, queued = l->queued;
		while (n < BATCH) {
			struct rec *r = ring_peek(l);

			/* due, or due before a timed sleep would end anyway */
			if (!r || r->release_ns > now + wake_ahead_ns)
				break;
			recs[n] = r;
			iov[n].iov_base = r + 1;
			iov[n].iov_len = r->len;
			memset(&msgs[n].msg_hdr, 0, sizeof(msgs[n].msg_hdr));
			msgs[n].msg_hdr.msg_iov = &iov[n];
			msgs[n].msg_hdr.msg_iovlen = 1;
			ring_pop(l);
			n++;
		}
		l->tail = tail, l->used = used, l->queued = queued;
		if (!n)
			break;

		int sent = sendmmsg(l->tx_fd, msgs, n, MSG_DONTWAIT);
		int64_t t = mono_ns();

		if (sent < 0) {
			if (errno == EAGAIN || errno == ENOBUFS) {
				l->st.tx_retries++;
				l->retry_at = t + TX_RETRY_NS;
				return l->retry_at;
			}
			/* the first frame cannot be sent (EMSGSIZE: larger than
			 * OUT's MTU; ENETDOWN...): drop it, go on with the next */
			if (errno == EMSGSIZE)
				l->st.oversize++;
			else
				l->st.tx_errors++;
			sent = 0;
			ring_peek(l);
			ring_pop(l);
		}
		for (int i = 0; i < sent; i++) {
			int64_t err = t - recs[i]->release_ns;

			l->st.tx++;
			l->st.tx_bytes += recs[i]->len - VNET_HDR;
			l->st.err_sum_ns += err;
			if (err > l->st.late_max_ns)
				l->st.late_max_ns = err;
			if (-err > l->st.early_max_ns)
				l->st.early_max_ns = -err;
			ring_peek(l);
			ring_pop(l);
		}
		now = t;
	}
	struct rec *r = ring_peek(l);
	return r ? r->release_ns : INT64_MAX;
}

/* --- counters ------------------------------------------------------------- */

static void read_sock_drops(struct line *l)
{
	struct tpacket_stats ps;
	socklen_t len = sizeof(ps);

	/* reading resets the kernel's counters: accumulate */
	if (!getsockopt(l->rx_fd, SOL_PACKET, PACKET_STATISTICS, &ps, &len))
		l->st.sock_drops += ps.tp_drops;
}

/* the keys of one impairment set */
static void print_impair(const struct impair *c)
{
	print_float(PRINT_JSON, "delay_ms", NULL, c->delay_ns / 1e6);
	print_float(PRINT_JSON, "jitter_ms", NULL, c->jitter_ns / 1e6);
	print_string(PRINT_JSON, "dist", NULL, dist_names[c->dist]);
	print_float(PRINT_JSON, "loss_pct", NULL, c->loss * 100);
	print_float(PRINT_JSON, "burst_loss_pct", NULL, c->burst_loss * 100);
	print_float(PRINT_JSON, "burst_len", NULL, c->burst_len);
}

static void write_phase_stats(const struct phase *ph, int64_t t)
{
	open_json_object(NULL);
	print_uint(PRINT_JSON, "line", NULL, ph->line + 1);
	print_float(PRINT_JSON, "at_s", NULL, ph->at_ns / 1e9);
	if (ph->end_ns == INT64_MAX)
		print_null(PRINT_JSON, "end_s", NULL, NULL);
	else
		print_float(PRINT_JSON, "end_s", NULL, ph->end_ns / 1e9);
	print_bool(PRINT_JSON, "active", NULL, t >= ph->at_ns && t < ph->end_ns);
	if (ph->given & PH_LOSS)
		print_float(PRINT_JSON, "loss_pct", NULL, ph->v.loss * 100);
	if (ph->given & PH_BURST_LOSS)
		print_float(PRINT_JSON, "burst_loss_pct", NULL, ph->v.burst_loss * 100);
	if (ph->given & PH_BURST_LEN)
		print_float(PRINT_JSON, "burst_len", NULL, ph->v.burst_len);
	if (ph->given & PH_JITTER)
		print_float(PRINT_JSON, "jitter_ms", NULL, ph->v.jitter_ns / 1e6);
	if (ph->given & PH_EXTRA_DELAY)
		print_float(PRINT_JSON, "extra_delay_ms", NULL, ph->v.delay_ns / 1e6);
	print_uint(PRINT_JSON, "rx", NULL, ph->rx);
	print_uint(PRINT_JSON, "lost", NULL, ph->lost);
	close_json_object();
}

static void write_line_stats(struct line *l)
{
	struct line_stats *s = &l->st;

	read_sock_drops(l);
	open_json_object(NULL);
	print_string(PRINT_JSON, "in", NULL, l->in_name);
	print_string(PRINT_JSON, "out", NULL, l->out_name);
	print_impair(&l->base);
	open_json_object("now");	/* in force at the last frame's read */
	print_impair(&l->cur);
	close_json_object();
	print_uint(PRINT_JSON, "limit_bytes", NULL, l->cap);
	print_uint(PRINT_JSON, "rx", NULL, s->rx);
	print_uint(PRINT_JSON, "rx_bytes", NULL, s->rx_bytes);
	print_uint(PRINT_JSON, "tx", NULL, s->tx);
	print_uint(PRINT_JSON, "tx_bytes", NULL, s->tx_bytes);
	print_uint(PRINT_JSON, "lost", NULL, s->lost);
	print_uint(PRINT_JSON, "lost_burst", NULL, s->lost_burst);
	print_uint(PRINT_JSON, "bursts", NULL, s->bursts);
	print_uint(PRINT_JSON, "overflow", NULL, s->overflow);
	print_uint(PRINT_JSON, "oversize", NULL, s->oversize);
	print_uint(PRINT_JSON, "gso", NULL, s->gso);
	print_uint(PRINT_JSON, "tx_errors", NULL, s->tx_errors);
	print_uint(PRINT_JSON, "sock_drops", NULL, s->sock_drops);
	print_uint(PRINT_JSON, "tx_retries", NULL, s->tx_retries);
	print_uint(PRINT_JSON, "queued", NULL, l->queued);
	print_uint(PRINT_JSON, "peak_bytes", NULL, s->peak_bytes);
	print_uint(PRINT_JSON, "ts_fallback", NULL, s->ts_fallback);
	print_float(PRINT_JSON, "rx_age_max_us", NULL, s->rx_age_max_ns / 1e3);
	print_float(PRINT_JSON, "release_err_mean_us", NULL,
		    s->tx ? s->err_sum_ns / 1e3 / s->tx : 0.0);
	print_float(PRINT_JSON, "late_max_us", NULL, s->late_max_ns / 1e3);
	print_float(PRINT_JSON, "early_max_us", NULL, s->early_max_ns / 1e3);
	print_float(PRINT_JSON, "wake_ahead_us", NULL, wake_ahead_ns / 1e3);
	close_json_object();
}

static void write_stats(FILE *f)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	print_begin(f, true);
	open_json_object(NULL);
	print_int(PRINT_JSON, "pid", NULL, getpid());
	print_uint(PRINT_JSON, "writes", NULL, stats_writes);
	print_float(PRINT_JSON, "cpu_user_s", NULL,
		    ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	print_float(PRINT_JSON, "cpu_sys_s", NULL,
		    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	int64_t t = (int64_t)mono_ns() - sched_t0;

	print_float(PRINT_JSON, "schedule_t_s", NULL, t / 1e9);
	print_uint(PRINT_JSON, "schedule_starts", NULL, sched_starts);
	open_json_array(PRINT_JSON, "lines");
	for (int i = 0; i < nlines; i++)
		write_line_stats(&lines[i]);
	close_json_array(PRINT_JSON, NULL);
	open_json_array(PRINT_JSON, "phases");
	for (int k = 0; k < nphases; k++)
		write_phase_stats(&phases[k], t);
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
	print_end();
}

/* atomically replace --stats FILE */
static void dump_stats(void)
{
	char tmp[4096];
	FILE *f;

	stats_writes++;
	if (!stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", stats_path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "delayline: %s: %s\n", tmp, strerror(errno));
		return;
	}
	write_stats(f);
	if (fclose(f) || rename(tmp, stats_path))
		fprintf(stderr, "delayline: %s: %s\n", stats_path, strerror(errno));
}

/* --- wake-up latency ------------------------------------------------------ */

/* one timed wake-up's latency into the estimate: EWMA 1/16, each sample
 * clamped to [0, WAKE_AHEAD_MAX_NS] so one preemption cannot throw it off */
static void wake_ahead_update(int64_t lat)
{
	if (lat < 0)
		lat = 0;
	if (lat > WAKE_AHEAD_MAX_NS)
		lat = WAKE_AHEAD_MAX_NS;
	wake_ahead_ns += (lat - wake_ahead_ns) / 16;
}

/* start from the median latency of 31 timed 1 ms sleeps (~35 ms), with the
 * scheduling policy and CPU the loop will have */
static void wake_ahead_calibrate(void)
{
	int64_t lat[31];

	for (int i = 0; i < 31; i++) {
		int64_t t = mono_ns() + 1000000;
		struct timespec ts = { .tv_sec = t / NSEC, .tv_nsec = t % NSEC };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		lat[i] = mono_ns() - t;
	}
	for (int i = 1; i < 31; i++)	/* insertion sort */
		for (int j = i; j > 0 && lat[j] < lat[j - 1]; j--) {
			int64_t x = lat[j];

			lat[j] = lat[j - 1];
			lat[j - 1] = x;
		}
	wake_ahead_ns = lat[15] < 0 ? 0 : lat[15] > WAKE_AHEAD_MAX_NS ? WAKE_AHEAD_MAX_NS : lat[15];
}

/* --- main ----------------------------------------------------------------- */

/* --cpu and --rt-priority, then the wake-up latency with them: 0 or -1
 * (printed) */
static int sched_setup(const struct dl_opts *o)
{
	if (o->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "delayline: --cpu %d: %s\n", o->cpu, strerror(errno));
			return -1;
		}
	}
	if (o->rt_prio) {
		struct sched_param sp = { .sched_priority = o->rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			fprintf(stderr, "delayline: --rt-priority %d: %s\n", o->rt_prio,
				strerror(errno));
			return -1;
		}
	}
	prctl(PR_SET_TIMERSLACK, 1UL);	/* 1 ns: wake at the release time */
	wake_ahead_calibrate();
	return 0;
}

/* every line's sockets and ring, their receive sockets in one epoll set,
 * the signals: the epoll descriptor, or -1 */
static int lines_start(const struct dl_opts *o)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sigaction sa = { .sa_handler = on_signal };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	for (int i = 0; i < nlines; i++) {
		if (line_open(&lines[i], o->limit, o->keep_offloads))
			return -1;
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, lines[i].rx_fd, &ev))
			return -1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return ep;
}

/* the schedule's clock from now, the phases' counters from 0, each line's
 * impairments as at its start */
static void sched_restart(void)
{
	sched_t0 = mono_ns();
	sched_starts++;
	for (int k = 0; k < nphases; k++)
		phases[k].rx = phases[k].lost = 0;
	for (int i = 0; i < nlines; i++)
		line_update(i, 0);
}

/* Forward until SIGINT/SIGTERM: release what is due, dump the counters
 * every interval (and on SIGUSR1/SIGUSR2), sleep until the next release. */
static void run_loop(int ep, int64_t interval)
{
	struct epoll_event evs[MAX_LINES];
	int64_t next_dump = (int64_t)mono_ns() + interval;

	sched_restart();
	dump_stats();	/* ready: the file exists once every socket is bound */
	fprintf(stderr, "delayline: ready, %d line(s)\n", nlines);

	while (!stop_flag) {
		int64_t now = mono_ns(), next = next_dump;

		if (restart_flag) {	/* SIGHUP: the schedule from its start */
			restart_flag = 0;
			sched_restart();
		}
		for (int i = 0; i < nlines; i++) {
			int64_t t = line_release(&lines[i], now);

			if (t < next)
				next = t;
		}
		if (dump_flag || now >= next_dump) {
			dump_flag = 0;
			dump_stats();
			if (reset_flag) {	/* SIGUSR2: worst cases from now on */
				reset_flag = 0;
				for (int i = 0; i < nlines; i++) {
					struct line_stats *st = &lines[i].st;

					st->late_max_ns = st->early_max_ns = st->rx_age_max_ns = 0;
					st->peak_bytes = lines[i].used;
				}
			}
			next_dump = now + interval;
			continue;
		}
		now = mono_ns();
		/* wake early by the expected wake-up latency; frames due within it
		 * are sent then, so sends are on time on average */
		int64_t target = next == next_dump ? next : next - wake_ahead_ns;
		if (target <= now)
			continue;
		struct timespec to = { .tv_sec = (target - now) / NSEC,
				       .tv_nsec = (target - now) % NSEC };
		int n = epoll_pwait2(ep, evs, MAX_LINES, &to, NULL);

		if (n == 0 && target != next_dump) {
			/* a timed wake-up: its latency updates the estimate (EWMA 1/16) */
			wake_ahead_update(mono_ns() - target);
		}
		for (int i = 0; i < n; i++)
			line_receive(&lines[evs[i].data.u32]);
	}
}

int main(int argc, char **argv)
{
	struct dl_opts o;
	int ep, rc;

	fs_log_init("delayline", FS_LOG_INFO);
	rc = dl_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (sched_setup(&o))
		return 1;
	ep = lines_start(&o);
	if (ep < 0)
		return 1;
	run_loop(ep, (int64_t)o.interval_ns);
	if (stats_path)
		dump_stats();
	else
		write_stats(stdout);
	return 0;
}
