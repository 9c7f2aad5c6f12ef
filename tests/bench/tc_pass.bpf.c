// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tc_pass.bpf.c - the benchmark floor of the TC hook: the cheapest
 * meaningful clsact program (one bounds check, TC_ACT_UNSPEC as the splitter returns), measured in
 * the same run as the splitter's TC program.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;

	if (data + sizeof(struct ethhdr) > data_end)
		return TC_ACT_UNSPEC;
	return TC_ACT_UNSPEC;
}
