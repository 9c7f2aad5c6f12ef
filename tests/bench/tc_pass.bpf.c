// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tc_pass.bpf.c - the benchmark floor of the TC hook (pass.h:
 * TC_ACT_UNSPEC, as the splitter returns), measured in the same run as the
 * splitter's TC program.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "pass.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	return pass_floor((void *)(long)skb->data, (void *)(long)skb->data_end, TC_ACT_UNSPEC);
}
