// SPDX-License-Identifier: GPL-2.0
/*
 * clock.c - the datapath's clock: bpf_jiffies64() read through the pinned
 * clock program (BPF_PROG_TEST_RUN), and the kernel's HZ to turn it into
 * seconds (CONFIG_HZ from /proc/config.gz, else measured).
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "splitctl.h"

static int read_jiffies(int prog_fd, __u64 *j)
{
	__u8 buf[64] = { 0 }, out[64];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = sizeof(buf), .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	if (opts.retval != XDP_PASS)
		return -EPROTO;
	memcpy(j, out, sizeof(*j));
	return 0;
}

static unsigned int config_hz(void)
{
	char line[256];
	unsigned int hz = 0;
	gzFile f = gzopen("/proc/config.gz", "r");

	if (!f)
		return 0;
	while (gzgets(f, line, sizeof(line)))
		if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1)
			break;
	gzclose(f);
	return hz;
}

unsigned int sc_kernel_hz(int clock_prog_fd)
{
	static const unsigned int known[] = { 100, 250, 300, 1000 };
	/* 100 ms: +-1 jiffy is +-10 Hz, well inside the 25 Hz between the
	 * closest choices (250, 300) */
	static unsigned int cached;
	unsigned int hz, best = 0;
	double rate, err, best_err = 1e18;
	__u64 j0, j1, t0, t1;
	size_t i;

	if (cached)
		return cached;
	hz = config_hz();
	if (hz)
		return cached = hz;
	/* measure jiffies against CLOCK_MONOTONIC and take the nearest HZ the
	 * kernel can be built with */
	t0 = mono_ns();
	if (read_jiffies(clock_prog_fd, &j0))
		return 0;
	sleep_until_ns(t0 + 100 * 1000 * 1000);
	t1 = mono_ns();
	if (read_jiffies(clock_prog_fd, &j1))
		return 0;
	rate = (j1 - j0) / ((t1 - t0) / 1e9);
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		err = rate > known[i] ? rate - known[i] : known[i] - rate;
		if (err < best_err) {
			best_err = err;
			best = known[i];
		}
	}
	return cached = best;
}

int sc_clock_now(const struct sc_state *st, __u64 *jiffies, unsigned int *hz)
{
	int err = read_jiffies(st->clock_prog_fd, jiffies);

	if (err)
		return err;
	if (hz) {
		*hz = sc_kernel_hz(st->clock_prog_fd);
		if (!*hz)
			return -EPROTO;
	}
	return 0;
}
