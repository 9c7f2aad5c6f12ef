// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp_pass.bpf.c - the benchmark floor: the cheapest meaningful XDP program
 * (one bounds check, XDP_PASS), measured in the same run as the splitter.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + sizeof(struct ethhdr) > data_end)
		return XDP_PASS;
	return XDP_PASS;
}
