// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dup.bpf.c - duplicating the short class over both tunnels, and dropping
 * the second copy at the peer (docs/design.md, *Duplicating the short
 * class*). Loaded and attached by "splitctl dup attach", off by default.
 *
 *   fs_dup    TC (tcx) egress of the SHORT tunnel device: a short-class
 *             TCP segment (dup_wanted()) leaves as usual and a copy goes
 *             out of the LONG tunnel device (bpf_clone_redirect), its
 *             Ethernet addresses those of the LONG tunnel. Never drops.
 *   fs_dedup  TC (tcx) ingress of both tunnel devices at the peer: the
 *             first copy of a segment passes and is remembered; a second
 *             one, on the other tunnel within the window, is dropped
 *             (TC_ACT_SHOT). Everything else passes.
 *
 * Both return TC_ACT_UNSPEC (= TCX_NEXT) for what they pass: the next
 * program on the hook runs, with none the packet passes.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "parse.h"
#include "dup.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FS_TC_VERDICT	TC_ACT_UNSPEC
/* The Ethernet destination and source: what the copy changes. */
#define FS_ETH_ADDRS_LEN	12

/* What both programs work on: their config and stats, and the packet. */
struct dup_pkt {
	struct dup_config *dc;
	struct fs_dup_stats *s;
	struct packet p;
	enum parse_result r;
	void *data, *data_end;
};

/* Fill @d from @skb; nonzero when the program is on (@flag set in the dup
 * config) and the packet is one to work on (dup_wanted()). */
static __always_inline int dup_start(struct __sk_buff *skb, __u32 flag,
				     struct dup_pkt *d)
{
	struct split_config *cfg;
	__u32 zero = 0;

	d->dc = bpf_map_lookup_elem(&fs_dup_config, &zero);
	cfg = bpf_map_lookup_elem(&fs_config, &zero);
	d->s = bpf_map_lookup_elem(&fs_dup_stats, &zero);
	if (!d->dc || !cfg || !d->s || !(d->dc->flags & flag))
		return 0;
	d->r = parse_skb(skb, &d->p, &d->data, &d->data_end);
	return dup_wanted(&d->p, d->r, d->data, d->data_end, cfg->dscp_short);
}

SEC("tc")
int fs_dup(struct __sk_buff *skb)
{
	__u8 orig[FS_ETH_ADDRS_LEN], addrs[FS_ETH_ADDRS_LEN];
	__u32 segs = skb->gso_segs ? skb->gso_segs : 1;
	__u64 bytes = skb->len;
	struct dup_pkt d = {};

	if (!dup_start(skb, FS_DUP_F_DUP, &d))
		return FS_TC_VERDICT;
	if (segs > 1)
		bytes += (__u64)(segs - 1) * packet_hdr_len(&d.p, d.data);

	/* The copy leaves with the LONG tunnel's Ethernet addresses (the
	 * peer's LONG device accepts only frames to its own address), the
	 * original with its own: rewrite, clone, put them back. The clone
	 * shares the data, so the restore writes a private copy of the
	 * header (skb_ensure_writable) and the copy keeps the new one. */
	if (bpf_skb_load_bytes(skb, 0, orig, sizeof(orig)))
		return FS_TC_VERDICT;
	__builtin_memcpy(addrs, d.dc->long_dmac, 6);
	__builtin_memcpy(addrs + 6, d.dc->long_smac, 6);
	if (bpf_skb_store_bytes(skb, 0, addrs, sizeof(addrs), 0)) {
		d.s->v[FS_DUP_STAT_FAIL] += segs;
		return FS_TC_VERDICT;
	}
	if (bpf_clone_redirect(skb, d.dc->long_ifindex, 0)) {
		d.s->v[FS_DUP_STAT_FAIL] += segs;
	} else {
		d.s->v[FS_DUP_STAT_PKTS] += segs;
		d.s->v[FS_DUP_STAT_BYTES] += bytes;
	}
	/* Should the restore fail, the original would leave with LONG's
	 * addresses and the peer's SHORT device drop it: the copy still
	 * carries the segment. */
	bpf_skb_store_bytes(skb, 0, orig, sizeof(orig), 0);
	return FS_TC_VERDICT;
}

/*
 * The first arrival of a segment is remembered with its time and tunnel.
 * A second arrival of the same key is the peer's copy, and dropped, when
 * it comes on the OTHER tunnel within the window: fs_dup sends one copy
 * per tunnel. A repeat on the same tunnel (a retransmission that kept its
 * key, a duplicate made by the network) or after the window passes; the
 * latter is remembered anew. A dropped copy's entry is removed: each
 * segment has exactly two copies.
 */
static __always_inline int dedup_seen(void *map, const void *key,
				      const struct dup_config *dc,
				      struct fs_dup_stats *s, __u32 ifindex,
				      __u32 segs)
{
	struct dup_seen *seen, first = { .ifindex = ifindex };
	__u64 now = bpf_jiffies64();

	seen = bpf_map_lookup_elem(map, key);
	if (seen) {
		if (now - seen->jiffies <= dc->window_jiffies) {
			if (seen->ifindex != ifindex) {
				s->v[FS_DUP_STAT_DROPS] += segs;
				bpf_map_delete_elem(map, key);
				return TC_ACT_SHOT;
			}
			s->v[FS_DUP_STAT_SAME_DEV] += segs;
			return FS_TC_VERDICT;
		}
		s->v[FS_DUP_STAT_LATE] += segs;
	}
	first.jiffies = now;
	if (bpf_map_update_elem(map, key, &first, BPF_ANY))
		s->v[FS_DUP_STAT_INSERT_FAIL] += segs;
	else if (!seen)
		s->v[FS_DUP_STAT_FIRST] += segs;
	return FS_TC_VERDICT;
}

SEC("tc")
int fs_dedup(struct __sk_buff *skb)
{
	__u32 segs = skb->gso_segs ? skb->gso_segs : 1;
	struct dup_pkt d = {};

	if (!dup_start(skb, FS_DUP_F_DEDUP, &d))
		return FS_TC_VERDICT;
	if (d.r == PARSE_TCP4) {
		struct dup_key4 k = {};

		dup_key4_of(&k, &d.p, d.data_end);
		return dedup_seen(&fs_dup_seen4, &k, d.dc, d.s, skb->ifindex, segs);
	} else {
		struct dup_key6 k = {};

		dup_key6_of(&k, &d.p, d.data_end);
		return dedup_seen(&fs_dup_seen6, &k, d.dc, d.s, skb->ifindex, segs);
	}
}
