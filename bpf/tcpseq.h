/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tcpseq.h - message boundaries from TCP state, shared by the splitter
 * (its flow's own segments, LAN ingress) and the observer (the ACKs of the
 * other direction, LAN egress).
 *
 * A data segment of flow F starts a new message when
 *   (1) its sequence number equals the highest end sequence F has sent
 *       (snd_nxt): it is new data, not a retransmission, and
 *   (2) it equals the highest ACK number seen in the other direction
 *       (ack_hi): the receiver has every earlier byte.
 * No earlier byte of F is then in either tunnel (a spurious retransmission
 * of acknowledged data aside), so the segment cannot overtake one, whatever
 * tunnel it takes. And
 *   (3) the other direction sent data (a reply) since F's last data
 *       segment (reply_gen != data_gen).
 * (3) tells a message from the next write of a bulk transfer: at a small
 * RTT (measured: a 2 MB socat transfer through a router namespace) a bulk
 * sender often has every byte acknowledged before its next write, and
 * with (1) and (2) alone half of its segments went short; its receiver
 * sends pure ACKs, never a reply. Request/response traffic gets a reply
 * between messages; pipelined requests go out before it.
 *
 * Not a boundary, whatever the numbers say:
 *   - the first data of a connection (FS_SEQ_F_DATA unset): the flow
 *     counts from its SYN already;
 *   - a segment while the receiver advertised a zero window at ack_hi, and
 *     the first one after it (FS_ACK_F_ZERO_WINDOW, cleared by the splitter
 *     when new data is in flight again): a window probe, or the resume of
 *     a transfer its receiver stalled;
 *   - any segment of a flow whose other direction was never seen
 *     (FS_ACK_F_SEEN unset: asymmetric routing): it behaves as without
 *     boundaries.
 * A SYN resets the state (a new connection on the 5-tuple). Sequence
 * numbers are compared the kernel's way (before()/after()): modulo 2^32,
 * correct across wrap-around.
 *
 * Two CPUs: snd_nxt, seq_flags, data_gen and boundaries are the
 * splitter's, ack_hi, ack_flags and reply_gen the observer's (the splitter
 * only clears ZERO_WINDOW and resets the flags on a SYN), all plain stores.
 * A lost update can only make snd_nxt or ack_hi lag, a reply go unseen, or
 * a zero window be forgotten: the first two fail a condition (a missed
 * boundary, the safe direction), the last can re-short a transfer once as
 * it resumes (bounded: one threshold of packets). RSS keeps a flow on one
 * CPU in practice.
 */
#ifndef FS_TCPSEQ_H
#define FS_TCPSEQ_H

#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "flowsplit.h"
#include "parse.h"

/* a is before b in sequence space (the kernel's before()) */
static __always_inline int fs_seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline int fs_seq_after(__u32 a, __u32 b)
{
	return fs_seq_before(b, a);
}

/* Sequence space a packet of @payload bytes consumes (SYN and FIN one). */
static __always_inline __u32 tcp_seq_len(const struct packet *p,
					 __u64 payload)
{
	return (__u32)payload + p->th->syn + p->th->fin;
}

/* A new entry's sequence state from its first packet (@st zeroed). */
static __always_inline void seq_init(struct flow_state *st,
				     const struct packet *p, __u64 payload)
{
	st->snd_nxt = bpf_ntohl(p->th->seq) + tcp_seq_len(p, payload);
	st->seq_flags = payload ? FS_SEQ_F_DATA : 0;
}

/*
 * Advance the flow's snd_nxt by its packet @p of @payload bytes; with
 * @boundaries, say whether the packet starts a new message (1). Pure ACKs
 * and RSTs without payload consume no sequence space: one compare.
 */
static __always_inline int seq_track(struct flow_state *st,
				     const struct packet *p, __u64 payload,
				     int boundaries)
{
	__u32 seq, end, len = tcp_seq_len(p, payload);
	int replied;
	__u8 af;

	if (!len)
		return 0;
	seq = bpf_ntohl(p->th->seq);
	end = seq + len;
	if (p->th->syn) {
		/* a new connection: forget the old one's state (the ACK
		 * flags are the observer's; a write racing with it can only
		 * leave them unset: no boundary) */
		st->snd_nxt = end;
		st->seq_flags = payload ? FS_SEQ_F_DATA : 0;
		st->data_gen = st->reply_gen;
		if (st->ack_flags)
			st->ack_flags = 0;
		return 0;
	}
	if (seq != st->snd_nxt) {
		/* a retransmission (before) or data after a hole we did not
		 * see (after): never a boundary */
		if (fs_seq_after(end, st->snd_nxt))
			st->snd_nxt = end;
		return 0;
	}
	st->snd_nxt = end;
	if (!payload)
		return 0;	/* a bare FIN */
	af = st->ack_flags;
	replied = st->reply_gen != st->data_gen;
	if (replied)
		st->data_gen = st->reply_gen;	/* this data answers it */
	if (seq != st->ack_hi) {
		/* new data with data in flight: a transfer goes on */
		if (af & FS_ACK_F_ZERO_WINDOW)
			st->ack_flags = af & ~FS_ACK_F_ZERO_WINDOW;
		st->seq_flags |= FS_SEQ_F_DATA;
		return 0;
	}
	if (!(st->seq_flags & FS_SEQ_F_DATA)) {
		st->seq_flags |= FS_SEQ_F_DATA;
		return 0;	/* the connection's first message */
	}
	return boundaries && replied &&
	       (af & (FS_ACK_F_SEEN | FS_ACK_F_ZERO_WINDOW)) == FS_ACK_F_SEEN;
}

/*
 * The observer's part: @p is a packet of the other direction of the flow
 * whose entry is @st, carrying @payload bytes. Record its ACK number when
 * it is at or after the highest seen (and a zero window advertised there),
 * and a reply when it carries data. Never writes when nothing changes: a
 * download's packets repeat the same ACK number, and a reply is recorded
 * once until the flow sends data again.
 */
static __always_inline void ack_track(struct flow_state *st,
				      const struct packet *p, __u64 payload)
{
	struct tcphdr *th = p->th;
	__u32 ack;
	__u8 af, want, gen;

	if (!th->ack || th->rst)
		return;
	gen = st->data_gen + 1;
	if (payload && st->reply_gen != gen)
		st->reply_gen = gen;
	ack = bpf_ntohl(th->ack_seq);
	af = st->ack_flags;
	if ((af & FS_ACK_F_SEEN) && fs_seq_before(ack, st->ack_hi))
		return;		/* an old ACK, reordered or duplicated */
	if (!(af & FS_ACK_F_SEEN) || ack != st->ack_hi)
		st->ack_hi = ack;
	want = af | FS_ACK_F_SEEN;
	if (!th->window)
		want |= FS_ACK_F_ZERO_WINDOW;
	if (want != af)
		st->ack_flags = want;
}

#endif /* FS_TCPSEQ_H */
