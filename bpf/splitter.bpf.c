// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * splitter.bpf.c - the flowsplit splitter at its two hooks.
 *
 * Per packet: parse to TCP, count the packet in its directional 5-tuple flow,
 * and mark the flow short (packets 1..threshold) or long (threshold+1..) in
 * the DSCP bits, for policy routing to pick the SHORT or LONG tunnel (with
 * FS_CFG_F_ACK_SHORT, a long flow's pure ACKs keep the short mark). Every
 * other packet is passed unmodified and counted by reason. The splitter
 * never drops a packet: the verdict is always XDP_PASS at XDP, and at TC
 * TC_ACT_UNSPEC (= TCX_NEXT): the next program on the hook runs, and with
 * none the packet passes — the splitter never decides a packet's fate.
 *
 * Both programs are thin glue around fs_classify() (classify.h):
 *   fs_splitter     XDP, before GRO: one wire packet per call.
 *   fs_splitter_tc  TC clsact ingress, after GRO: one skb stands for
 *                   gso_segs wire packets (0 means 1), all counted.
 * and, on the same interfaces whatever the splitter's hook:
 *   fs_observer     TC (tcx) egress: the packets of the other direction
 *                   leave through the interface the splitter classifies
 *                   on; their ACK numbers go into the flows' entries, for
 *                   message boundaries (tcpseq.h). Never modifies a packet.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "maps.h"
#include "parse.h"
#include "csum.h"
#include "classify.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* TC verdict: continue (next TCX program, next cls_bpf filter, or pass). */
#define FS_TC_VERDICT	TC_ACT_UNSPEC

/*
 * Set the DSCP of the packet @p, parsed as @r (PARSE_TCP4/6). Returns the
 * ones' complement sum difference the write made to the bytes it changed
 * (0 when nothing changed, and always 0 for IPv4, whose header checksum
 * absorbs the change). The parser proved the IP header lies inside the
 * frame; the verifier needs to see it again on this path.
 */
static __always_inline __u32 write_dscp(const struct packet *p,
					enum parse_result r, void *data_end,
					__u8 dscp)
{
	if (r == PARSE_TCP6) {
		if (p->l3 + sizeof(struct ipv6hdr) > data_end)
			return 0;
		return ipv6_set_dscp(p->l3, dscp);
	}
	if (p->l3 + sizeof(struct iphdr) <= data_end)
		ipv4_set_dscp(p->l3, dscp);
	return 0;
}

SEC("xdp")
int fs_splitter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct split_config *cfg;
	struct packet p = {};
	enum parse_result r;
	struct fs_stats *s;
	__u32 zero = 0;
	int dscp;

	s = stats_get();
	cfg = bpf_map_lookup_elem(&fs_config, &zero);
	if (!s || !cfg)
		return XDP_PASS;
	if (!(cfg->flags & FS_CFG_F_ENABLED)) {
		s->v[FS_STAT_PASS_DISABLED]++;
		return XDP_PASS;
	}
	r = parse_packet(&p, data, data_end, data_end - data);
	dscp = fs_classify(cfg, s, r, &p, data, 1, data_end - data);
	if (dscp >= 0)
		write_dscp(&p, r, data_end, dscp);
	return XDP_PASS;
}

SEC("tc")
int fs_splitter_tc(struct __sk_buff *skb)
{
	__u32 segs = skb->gso_segs ? skb->gso_segs : 1;
	__u64 bytes = skb->len;
	struct split_config *cfg;
	void *data, *data_end;
	struct packet p = {};
	enum parse_result r;
	struct fs_stats *s;
	__u32 zero = 0, diff;
	int dscp;

	s = stats_get();
	cfg = bpf_map_lookup_elem(&fs_config, &zero);
	if (!s || !cfg)
		return FS_TC_VERDICT;
	if (!(cfg->flags & FS_CFG_F_ENABLED)) {
		s->v[FS_STAT_PASS_DISABLED] += segs;
		return FS_TC_VERDICT;
	}
	r = parse_skb(skb, &p, &data, &data_end);
	/* skb->len counts the Ethernet header once and every segment's
	 * payload; each segment after the first repeats the headers.
	 */
	if (segs > 1 && (r == PARSE_TCP4 || r == PARSE_TCP6))
		bytes += (__u64)(segs - 1) * packet_hdr_len(&p, data);
	dscp = fs_classify(cfg, s, r, &p, data, segs, bytes);
	if (dscp < 0)
		return FS_TC_VERDICT;
	diff = write_dscp(&p, r, data_end, dscp);
	/* A CHECKSUM_COMPLETE skb's csum covers the IP header: an IPv6
	 * traffic class change must be added to it (no-op otherwise).
	 */
	if (diff)
		bpf_csum_update(skb, diff);
	return FS_TC_VERDICT;
}

/*
 * fs_observer - records the ACK number of a TCP packet leaving the
 * interface in the entry of the flow it acknowledges (its own 5-tuple
 * reversed), if that flow is in the table, and whether it carries data (a
 * reply). Cost: the parse, one flow-table lookup, compares, and a store
 * only when the ACK number advances or a first reply arrives. No
 * config or stats lookup: with boundaries off the splitter ignores ack_hi.
 * Headers outside the skb's linear part (never for GRO or stack skbs) are
 * not pulled: such a packet is skipped.
 */
SEC("tc")
int fs_observer(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct flow_state *st;
	struct packet p = {};
	enum parse_result r;

	r = parse_packet_dir(&p, data, data_end, skb->len, 1);
	if (r == PARSE_TCP4)
		st = bpf_map_lookup_elem(&fs_flows4, &p.k4);
	else if (r == PARSE_TCP6)
		st = bpf_map_lookup_elem(&fs_flows6, &p.k6);
	else
		return FS_TC_VERDICT;
	if (st)
		ack_track(st, &p, packet_payload(&p, data));
	return FS_TC_VERDICT;
}

/*
 * fs_clock - lets user space read the datapath clock. Run with
 * BPF_PROG_TEST_RUN on a dummy frame of >= 8 bytes: the current
 * bpf_jiffies64() is written, in host byte order, over the first 8 bytes.
 */
SEC("xdp")
int fs_clock(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *now = data;

	if ((void *)(now + 1) > data_end)
		return XDP_ABORTED;
	*now = bpf_jiffies64();
	return XDP_PASS;
}
