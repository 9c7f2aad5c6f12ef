/* SPDX-License-Identifier: GPL-2.0 */
/* tap.h - minimal TAP producer for the C unit tests (tests/run counts it). */
#ifndef FS_TEST_TAP_H
#define FS_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;
static const char *tap_prefix = "";	/* prepended to every description */

/* One test result; returns @ok so callers can print diagnostics on failure. */
__attribute__((format(printf, 2, 3)))
static int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - %s", ok ? "" : "not ", ++tap_count, tap_prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
	return ok;
}

__attribute__((format(printf, 1, 2), unused))
static void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("#   ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
