// SPDX-License-Identifier: GPL-2.0
/*
 * spill_grant.c - the spill controller's grants (spill_int.h;
 * docs/design.md, *Which flows, and when they move*): when one more long
 * flow may spill, whether SHORT's path is long enough for a frame, and
 * the hold that keeps a moved flow's packets in order.
 */
#include "spill_int.h"

/*
 * How much later than a SHORT packet sent now a LONG packet sent now can
 * arrive, from LONG's samples of the last HOLD_WINDOW_NS, like compared
 * with like:
 * - LONG's samples are RTTs: LONG's worst (its one-way delay is less, and
 *   SHORT's at least 0), whatever SHORT's kind;
 * - both one-way: LONG's worst less SHORT's minimum (the far end's clock
 *   offset, the same for both, cancels);
 * - LONG's one-way, SHORT's not (its far end drops timestamp requests, or
 *   none yet): LONG's carry an offset nothing of SHORT's cancels. LONG's
 *   worst above its own minimum (there it cancels: the queue) plus LONG's
 *   least RTT (the path, both ways: at least its one-way delay).
 * HOLD_BLIND_NS without a LONG sample, or in the last case without
 * LONG's RTT.
 */
static uint64_t long_lead(const struct spill *s, uint64_t now)
{
	const struct spill_delay *l = &s->d[SPILL_LONG], *sh = &s->d[SPILL_SHORT];
	uint64_t lo, hi, base, rtt;

	if (!spill_delay_recent(l, now > HOLD_WINDOW_NS ? now - HOLD_WINDOW_NS : 0,
				&lo, &hi))
		return HOLD_BLIND_NS;
	if (!l->one_way)
		return hi;
	if (sh->one_way && (base = spill_delay_base(sh)))
		return hi > base ? hi - base : 0;
	rtt = spill_rtt_min_ns(s, SPILL_LONG);
	base = spill_delay_base(l);
	if (!rtt)
		return HOLD_BLIND_NS;
	return (hi > base ? hi - base : 0) + rtt;
}

/* Does one spilled frame fit SHORT's path? A short packet may find one
 * in service on SHORT's WAN link: at most frame_share of SHORT's least RTT
 * (at SHORT's configured rate, else its capacity estimate, else LONG's as
 * the grant is due; a path with none of them is let spill). Says why, once per generation, when it
 * does not. */
static bool frame_fits(struct spill *s)
{
	uint64_t c = s->p.short_rate_bps ? s->p.short_rate_bps :
		     s->cap_bps ? s->cap_bps : s->long_cap_bps;
	uint64_t rtt = spill_rtt_min_ns(s, SPILL_SHORT), frame_ns;

	if (!s->p.frame_share_pct || !c)
		return true;
	frame_ns = FS_FRAME_BYTES * 8 * FS_NS_PER_S / c;
	if (frame_ns * 100 <= rtt * s->p.frame_share_pct)
		return true;
	if (!s->frame_gated) {
		s->frame_gated = true;
		spill_say(s,
			  "no grant: a frame at %.2f Mbit/s takes %.2f ms, over %u %% of SHORT's "
			  "least RTT %.2f ms (frame-share)",
			  spill_mbit(c), spill_ms(frame_ns), s->p.frame_share_pct, spill_ms(rtt));
	}
	return false;
}

/* The tunnels' probe loss from health's windows (the tick's counters
 * taken: last_tick_ns is now); SHORT is lossy when it
 * lost at least SPILL_LOSS_MIN_LOST probes and its ratio is above LONG's
 * by more than loss_margin. Compared with LONG's, not with 0: a
 * congested LONG loses probes in its full FIFO, and that is no reason
 * against SHORT. */
void spill_loss_update(struct spill *s, const struct spill_obs *o)
{
	unsigned int t;

	for (t = 0; t < SPILL_TUNNELS; t++)
		s->loss_ppm[t] = o->probes_window[t] ?
			(uint32_t)((uint64_t)o->probes_lost[t] * 1000000 /
				   o->probes_window[t]) : 0;
	s->short_lossy = o->probes_lost[SPILL_SHORT] >= SPILL_LOSS_MIN_LOST &&
			 s->loss_ppm[SPILL_SHORT] >
				 (uint64_t)s->loss_ppm[SPILL_LONG] + s->p.loss_margin_ppm;
	if (s->short_lossy)
		s->lossy_last_ns = s->last_tick_ns;
}

/*
 * Is a return of the spilled flows to LONG in order now? A new generation
 * makes them long from their next packet (bpf/flowsplit.h, fs_spill: the
 * datapath keeps no gap for it), so it is in order when a packet sent on
 * LONG now arrives after every packet already sent to SHORT: LONG's least
 * delay of its last probes above SHORT's worst, by the class's backlog at
 * its rate and the margin. Only one-way delays of both tunnels compare
 * (the far end's clock offset cancels); with RTTs nothing proves it.
 */
bool spill_return_in_order(const struct spill *s, uint64_t now,
			   const struct spill_obs *o)
{
	const struct spill_delay *l = &s->d[SPILL_LONG], *sh = &s->d[SPILL_SHORT];
	uint64_t w = spill_filter_window(s, SHORT_FILTER_INTERVALS);
	uint64_t l_lo, l_hi, s_lo, s_hi, drain;

	if (!l->one_way || !sh->one_way ||
	    !spill_delay_recent(l, now > w ? now - w : 0, &l_lo, &l_hi) ||
	    !spill_delay_recent(sh, now > w ? now - w : 0, &s_lo, &s_hi))
		return false;
	drain = o->spill_backlog_bytes * 8 * FS_NS_PER_S /
		(s->rate_bps ? s->rate_bps : 1);
	return l_lo >= s_hi + drain + s->p.hold_margin_ns;
}

/* RUN: is a grant due? Says why when it is. */
bool spill_grant_due(struct spill *s, uint64_t now, const struct spill_obs *o)
{
	uint64_t qd_l, qd_s;
	unsigned int k;

	if (now - s->last_close_ns < s->p.grant_gap_ns ||
	    s->rate_bps < RATE_MIN_GRANT_FACTOR * s->p.rate_min_bps)
		return false;
	k = spill_qd(s, SPILL_LONG, now,
		     spill_filter_window(s, LONG_FILTER_INTERVALS), &qd_l);
	if (k < LONG_MIN_SAMPLES || qd_l <= s->p.long_target_ns)
		return false;	/* LONG has headroom (or is not measured) */
	if (!spill_qd(s, SPILL_SHORT, now,
		      spill_filter_window(s, SHORT_FILTER_INTERVALS), &qd_s) ||
	    qd_s > s->p.target_ns / 2)
		return false;	/* SHORT is not calm */
	if (s->short_lossy ||
	    (s->lossy_last_ns && now - s->lossy_last_ns < LOSS_QUIET_NS)) {
		if (!s->loss_gated) {
			s->loss_gated = true;
			spill_say(s,
				  "no grant: SHORT loses %.2f %% of probes, LONG %.2f %% (margin "
				  "%.2f)",
				  s->loss_ppm[SPILL_SHORT] / 1e4, s->loss_ppm[SPILL_LONG] / 1e4,
				  s->p.loss_margin_ppm / 1e4);
		}
		return false;
	}
	if (s->used_avg_bps * 100 >= s->rate_bps * ROOM_PCT ||
	    o->spill_backlog_bytes >= FULL_BACKLOG_BYTES ||
	    (s->last_full_ns && now - s->last_full_ns < ROOM_FOR_NS))
		return false;	/* the spilled flows use the class already
				 * (or did within a second: a start-up) */
	/* LONG was busy all along (a standing queue): its capacity is what
	 * it carried less its queue's growth, over the same probes (one
	 * tick alone is noisy: the queue drains after a loss) */
	s->long_cap_bps = spill_capacity_of(s, SPILL_LONG, now,
					    spill_filter_window(s, LONG_FILTER_INTERVALS),
					    s->long_bps, 0, LONG_FLOOR_PCT);
	if (!frame_fits(s))
		return false;
	spill_say(s,
		  "LONG queue %.1f ms > %.1f ms (capacity %.2f Mbit/s), SHORT queue %.1f ms, class "
		  "%.2f of %.2f Mbit/s: hold, then grant",
		  spill_ms(qd_l), spill_ms(s->p.long_target_ns), spill_mbit(s->long_cap_bps),
		  spill_ms(qd_s), spill_mbit(s->used_avg_bps), spill_mbit(s->rate_bps));
	return true;
}

/* The grant is closed (taken or withdrawn): hold the class until LONG's
 * queue has drained (long_lead() and the margin), and never longer than
 * SPILL_HOLD_MAX_NS since the hold began (HOLD_WAIT), the tick that sees
 * the release (one interval later at most) included: a flow stalled on
 * SHORT costs more than a reordering. */
void spill_grant_close(struct spill *s, uint64_t now)
{
	uint64_t end = s->held_since_ns + SPILL_HOLD_MAX_NS - s->p.interval_ns;

	s->release_ns = now + long_lead(s, now) + s->p.hold_margin_ns;
	if (s->release_ns > end)
		s->release_ns = end > now ? end : now;
	s->hold_ns = s->release_ns - now;
	s->last_close_ns = now;
	spill_set_state(s, SPILL_HOLD, now);
}
