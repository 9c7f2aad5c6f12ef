// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp_pass.bpf.c - the benchmark floor of the XDP hook (pass.h: XDP_PASS),
 * measured in the same run as the splitter.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "pass.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return pass_floor((void *)(long)ctx->data, (void *)(long)ctx->data_end, XDP_PASS);
}
