/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quality.h - a tunnel's path quality as the short class sees it, from the
 * prober's outcomes: base RTT, queueing delay above it, jitter, loss, and
 * the expected delay of a short request (docs/health.md, *Path quality*).
 *
 * Pure, like health.h: no clock reads, no I/O; every function takes the
 * CLOCK_MONOTONIC time in ns, so tests drive it on invented time lines.
 * roles.h decides from two of these which tunnel carries the short class.
 *
 * Estimates (each over the answers and misses of one tunnel's probes):
 *   base    the least RTT of the current and the previous bucket of
 *           QUALITY_BASE_BUCKET answers measured while not busy (one to
 *           two buckets: 5 to 10 minutes at 10 probes/s); the buckets
 *           move on with those answers, not with time, so a tunnel filled
 *           by our bulk for an hour keeps the base it showed before. Until
 *           a tunnel was ever measured not busy, the same over all answers
 *           (too high under our bulk: it only ever keeps the short class
 *           off that tunnel)
 *   queue   min of the last QUALITY_QUEUE_SAMPLES RTTs, minus base: one
 *           late answer is not a queue, a queue that holds for that many
 *           probes is
 *   jitter  RFC 3550 6.4.1 on consecutive RTTs: J += (|D| - J) / 16
 *   loss    lost probes over the last QUALITY_LOSS_WINDOW outcomes; the
 *           counted loss forgives QUALITY_LOSS_FORGIVEN of them, so one
 *           or two lost probes in 2 s never count (a loaded router or
 *           path stalls that long now and then; a brownout loses far more);
 *           a failover's misses leave the window when the tunnel is up
 *           again (quality_down(), quality_up())
 *   expected base + queue + loss x (QUALITY_RTO_MIN_NS + base + queue):
 *           a lost packet of a short request costs Linux's least RTO
 *           (200 ms) plus the RTT of the retransmission
 *
 * "Busy": while our own traffic (the LONG class) fills the tunnel, its
 * queue and its losses are ours and leave with that traffic; the view of
 * the tunnel judged for the short class (quality_judged_ns()) is then its
 * base plus what was last measured while it was not busy, for at most
 * QUALITY_IDLE_MEMORY_NS.
 */
#ifndef HEALTH_QUALITY_H
#define HEALTH_QUALITY_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define QUALITY_BASE_BUCKET 3000
#define QUALITY_QUEUE_SAMPLES 4
#define QUALITY_LOSS_WINDOW 20
#define QUALITY_LOSS_FORGIVEN 2
#define QUALITY_RTO_MIN_NS (200 * FS_NS_PER_MS)
/* what was measured while not busy stands for the tunnel this long */
#define QUALITY_IDLE_MEMORY_NS (30 * FS_NS_PER_S)
/* answers before the estimates count (base and queue need a few) */
#define QUALITY_MIN_ANSWERS QUALITY_QUEUE_SAMPLES

/* A windowed minimum over buckets of QUALITY_BASE_BUCKET samples. */
struct quality_min {
	uint64_t cur_ns, prev_ns;	/* UINT64_MAX: none */
	uint32_t n;			/* samples in cur */
};

struct quality {
	struct quality_min base_idle, base_all;
	uint64_t recent_ns[QUALITY_QUEUE_SAMPLES];
	uint32_t recent_n, recent_pos;
	uint64_t rtt_prev_ns;		/* the last answer's RTT */
	uint64_t jitter_q4_ns;		/* RFC 3550 J, x 16 */
	uint8_t lost[QUALITY_LOSS_WINDOW];	/* 1 = lost */
	uint32_t loss_len, loss_pos, loss_lost;
	uint64_t answers, misses;
	uint64_t miss_run;		/* consecutive misses, the last outcomes */
	/* down (a failover) since down_at_ns: the failover's misses are
	 * outcome down_from (answers + misses counted before it) and on */
	bool down;
	uint64_t down_from, down_at_ns;
	/* base-relative cost last measured while not busy, and when */
	uint64_t idle_extra_ns, idle_at_ns;
	bool idle_seen;
};

void quality_init(struct quality *q, uint64_t now_ns);
/* One probe outcome, in the order they were sent; busy: our own traffic
 * filled the tunnel when it was measured. */
void quality_answer(struct quality *q, uint64_t now_ns, uint64_t rtt_ns, bool busy);
void quality_lost(struct quality *q, uint64_t now_ns, bool busy);

/*
 * A failover: health took the tunnel down (on its consecutive misses, or
 * a link event) and acts on that itself. The misses that took it down
 * (the run the outcomes end with at quality_down()) and every miss fed
 * until quality_up() are the failover's; quality_up(), when the tunnel is
 * up again, takes those still in the loss window out of it (they count
 * as answered), so the loss the roles count is what the tunnel loses from
 * then on, not what the failover already acted on; a not-busy view taken
 * while it was down (quality_judged_ns()) is taken again without them.
 * Health's own loss
 * accounting (health.h, its loss window and consecutive misses) is other
 * state, and keeps them. quality_down() while down and quality_up() while
 * up do nothing.
 */
void quality_down(struct quality *q, uint64_t now_ns);
void quality_up(struct quality *q);

/* Enough answers for the estimates to count. */
bool quality_ready(const struct quality *q);
uint64_t quality_base_ns(const struct quality *q);	/* 0 before any answer */
uint64_t quality_queue_ns(const struct quality *q);
uint64_t quality_jitter_ns(const struct quality *q);
/* Lost probes over the window (raw), and the counted loss (forgiving). */
double quality_loss_ratio(const struct quality *q);
double quality_loss_counted(const struct quality *q);
/* The loss penalty of a short request: counted loss x (RTO + RTT). */
uint64_t quality_loss_penalty_ns(const struct quality *q);
/* base + queue + loss penalty: a short request's expected delay. */
uint64_t quality_expected_ns(const struct quality *q);
/*
 * What the short class would see on this tunnel: quality_expected_ns(),
 * or, while busy with our own traffic, the base plus the queue and loss
 * penalty last measured while not busy (for QUALITY_IDLE_MEMORY_NS).
 */
uint64_t quality_judged_ns(const struct quality *q, bool busy, uint64_t now_ns);

#endif /* HEALTH_QUALITY_H */
