/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dp_tap.h - the main of a datapath unit test (TAP): load the splitter,
 * check its clock, run the file's cases once per hook with descriptions
 * prefixed "xdp: " / "tc: ", and print the plan.
 */
#ifndef FS_TEST_DP_TAP_H
#define FS_TEST_DP_TAP_H

#include "dp.h"
#include "tap.h"

/* @each_hook runs every case of the file at dp->hook (already set). */
static int dp_tap_main(struct dp *dp, __u32 flows,
		       void (*each_hook)(enum dp_hook))
{
	static const char *const prefix[DP_HOOKS] = { "xdp: ", "tc: " };
	int h;

	if (dp_open_tap(dp, flows))
		return 1;
	tap_ok(dp->hz > 0, "datapath clock readable (HZ %u)", dp->hz);
	for (h = 0; h < DP_HOOKS; h++) {
		dp->hook = h;
		tap_prefix = prefix[h];
		each_hook(h);
	}
	tap_prefix = "";
	dp_close(dp);
	return tap_done();
}

#endif
