/* SPDX-License-Identifier: GPL-2.0 */
/* capture.h - what lib/json_print.h writes, captured for the unit tests. */
#ifndef FS_TEST_CAPTURE_H
#define FS_TEST_CAPTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_print.h"

/* Run fn inside one output document (text or JSON) written to memory;
 * the text, valid until the next call. */
static char *capture(void (*fn)(void), bool json)
{
	static char *buf;
	size_t len;
	FILE *f;

	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	print_begin(f, json);
	fn();
	print_end();
	fclose(f);
	return buf;
}

#endif
