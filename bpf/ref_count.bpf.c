// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ref_count.bpf.c - the benchmark's reference: the least any per-flow
 * counter can do. Parse to the 5-tuple (parse.h, as the splitter), one LRU
 * hash lookup, one in-place increment (an insert only for a flow not in
 * the table). Measured in the same run as the splitter and the observer,
 * at both hooks: their cost over the hook's floor is reported as a
 * multiple of this program's (budget 1.2x). Never attached by splitctl.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "flowsplit.h"
#include "map_def.h"
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The splitter's key and value layouts: the same memory per entry. */
FS_MAP(ref_flows4, BPF_MAP_TYPE_LRU_HASH, FS_DEFAULT_FLOWS, struct flow_key4, struct flow_state);
FS_MAP(ref_flows6, BPF_MAP_TYPE_LRU_HASH, FS_DEFAULT_FLOWS, struct flow_key6, struct flow_state);

static __always_inline void ref_count(void *data, void *data_end,
				      __u32 pkt_len)
{
	struct flow_state *st, fresh = { .packets = 1 };
	struct packet p = {};
	void *flows, *key;

	switch (parse_packet(&p, data, data_end, pkt_len)) {
	case PARSE_TCP4:
		flows = &ref_flows4;
		key = &p.k4;
		break;
	case PARSE_TCP6:
		flows = &ref_flows6;
		key = &p.k6;
		break;
	default:
		return;
	}
	st = bpf_map_lookup_elem(flows, key);
	if (st)
		st->packets++;
	else
		bpf_map_update_elem(flows, key, &fresh, BPF_NOEXIST);
}

SEC("xdp")
int ref_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	ref_count(data, data_end, data_end - data);
	return XDP_PASS;
}

SEC("tc")
int ref_tc(struct __sk_buff *skb)
{
	ref_count((void *)(long)skb->data, (void *)(long)skb->data_end,
		  skb->len);
	return TC_ACT_UNSPEC;
}
