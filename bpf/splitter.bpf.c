// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * splitter.bpf.c - the flowsplit XDP splitter.
 *
 * Per packet: parse to TCP, count the packet in its directional 5-tuple flow,
 * and mark the flow short (packets 1..threshold) or long (threshold+1..) in
 * the DSCP bits, for policy routing to pick the SHORT or LONG tunnel (with
 * FS_CFG_F_ACK_SHORT, a long flow's pure ACKs keep the short mark). Every
 * other packet is passed unmodified and counted by reason. The verdict is
 * always XDP_PASS: the splitter never drops a packet.
 *
 * Cost budget (PLATFORM.md): one flow-table lookup per established-flow
 * packet, no map write beyond the flow's own counters, jiffies as the clock.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "maps.h"
#include "parse.h"
#include "csum.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline void stat_add(__u32 idx, __u64 val)
{
	__u64 *c = bpf_map_lookup_elem(&fs_stats, &idx);

	if (c)
		*c += val;	/* per-CPU slot: no atomics needed */
}

/* Atomically record the flow's class; count a short->long transition once
 * even when several CPUs see it at the same time.
 */
static __always_inline void flow_set_class(struct flow_state *st, __u32 class)
{
	if (st->class == class)
		return;
	if (__sync_lock_test_and_set(&st->class, class) == FS_CLASS_SHORT &&
	    class == FS_CLASS_LONG)
		stat_add(FS_STAT_FLOWS_PROMOTED, 1);
}

/*
 * Count one packet of the flow @key in @flows and return the flow's packet
 * count including this packet. A flow idle for longer than the timeout
 * restarts at 1 (checked here, at packet time; the user-space sweep only
 * reclaims memory).
 */
static __always_inline __u64 flow_count(void *flows, void *key, __u64 len,
					const struct split_config *cfg,
					__u32 *class_out)
{
	__u64 now = bpf_jiffies64();
	struct flow_state *st, fresh = {};
	__u64 count;
	__u32 class;

	st = bpf_map_lookup_elem(flows, key);
	if (st) {
		if ((__s64)(now - st->last_seen) > (__s64)cfg->idle_jiffies) {
			/* expired: this packet starts a new incarnation */
			st->packets = 1;
			st->bytes = len;
			st->first_seen = now;
			st->last_seen = now;
			stat_add(FS_STAT_FLOWS_EXPIRED, 1);
			stat_add(FS_STAT_FLOWS_NEW, 1);
			count = 1;
		} else {
			count = __sync_fetch_and_add(&st->packets, 1) + 1;
			__sync_fetch_and_add(&st->bytes, len);
			if (st->last_seen != now)
				st->last_seen = now;
		}
	} else {
		class = cfg->threshold ? FS_CLASS_SHORT : FS_CLASS_LONG;
		fresh.packets = 1;
		fresh.bytes = len;
		fresh.first_seen = now;
		fresh.last_seen = now;
		fresh.class = class;
		if (bpf_map_update_elem(flows, key, &fresh, BPF_NOEXIST) == 0) {
			stat_add(FS_STAT_FLOWS_NEW, 1);
			*class_out = class;
			return 1;
		}
		/* Another CPU inserted the same flow first: count on its entry. */
		st = bpf_map_lookup_elem(flows, key);
		if (!st) {
			stat_add(FS_STAT_INSERT_FAIL, 1);
			*class_out = class;
			return 1;
		}
		count = __sync_fetch_and_add(&st->packets, 1) + 1;
		__sync_fetch_and_add(&st->bytes, len);
	}

	class = count <= cfg->threshold ? FS_CLASS_SHORT : FS_CLASS_LONG;
	flow_set_class(st, class);
	*class_out = class;
	return count;
}

SEC("xdp")
int fs_splitter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 len = data_end - data;
	struct split_config *cfg;
	struct packet p = {};
	__u32 zero = 0, class;
	__u8 dscp;

	cfg = bpf_map_lookup_elem(&fs_config, &zero);
	if (!cfg || !(cfg->flags & FS_CFG_F_ENABLED)) {
		stat_add(FS_STAT_PASS_DISABLED, 1);
		return XDP_PASS;
	}

	switch (parse_packet(&p, data, data_end)) {
	case PARSE_TCP4:
		flow_count(&fs_flows4, &p.k4, len, cfg, &class);
		break;
	case PARSE_TCP6:
		flow_count(&fs_flows6, &p.k6, len, cfg, &class);
		break;
	case PARSE_NON_TCP:
		stat_add(FS_STAT_PASS_NON_TCP, 1);
		return XDP_PASS;
	case PARSE_FRAGMENT:
		stat_add(FS_STAT_PASS_FRAGMENT, 1);
		return XDP_PASS;
	case PARSE_NON_IP:
		stat_add(FS_STAT_PASS_NON_IP, 1);
		return XDP_PASS;
	case PARSE_EXTHDR:
		stat_add(FS_STAT_PASS_EXTHDR, 1);
		return XDP_PASS;
	default:
		stat_add(FS_STAT_PASS_MALFORMED, 1);
		return XDP_PASS;
	}

	if (class == FS_CLASS_LONG && p.pure_ack &&
	    (cfg->flags & FS_CFG_F_ACK_SHORT)) {
		class = FS_CLASS_SHORT;
		stat_add(FS_STAT_ACKS_SHORT, 1);
	}
	if (class == FS_CLASS_SHORT) {
		dscp = cfg->dscp_short;
		stat_add(FS_STAT_PKTS_SHORT, 1);
		stat_add(FS_STAT_BYTES_SHORT, len);
	} else {
		dscp = cfg->dscp_long;
		stat_add(FS_STAT_PKTS_LONG, 1);
		stat_add(FS_STAT_BYTES_LONG, len);
	}

	/* The parser proved the IP header lies inside the frame; the verifier
	 * needs to see it again on this path.
	 */
	if (p.l3 + sizeof(struct ipv6hdr) <= data_end &&
	    ((struct iphdr *)p.l3)->version == 6)
		ipv6_set_dscp(p.l3, dscp);
	else if (p.l3 + sizeof(struct iphdr) <= data_end)
		ipv4_set_dscp(p.l3, dscp);
	return XDP_PASS;
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
