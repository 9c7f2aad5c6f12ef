/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pass.h - the body of the benchmark floors, the same at both hooks
 * (xdp_pass.bpf.c, tc_pass.bpf.c): a bounds check and the splitter's
 * verdict. Both branches return the verdict, so the compiler keeps
 * neither the check nor the loads: the floor is the hook's cost of
 * running a program that returns at once.
 */
#ifndef FS_BENCH_PASS_H
#define FS_BENCH_PASS_H

#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

static __always_inline int pass_floor(void *data, void *data_end, int verdict)
{
	if (data + sizeof(struct ethhdr) > data_end)
		return verdict;
	return verdict;
}

#endif /* FS_BENCH_PASS_H */
