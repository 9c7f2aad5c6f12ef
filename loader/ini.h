/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ini.h - the INI syntax of splitctl's config files, read line by line.
 *
 *   [section]
 *   key = value        (the first '=' or ':' separates; blanks around both
 *                       parts are dropped)
 *   # comment          (also "; comment"; " ; comment" after a value)
 *
 * The same syntax libinih reads, with what its defaults got wrong for us:
 * a line may hold up to SC_INI_MAX_LINE characters and a longer one is an
 * error (inih cut lines at 199 characters and read the tail as a line of
 * its own, so a commented-out setting could come back to life); no
 * continuation lines (an indented line is a line like any other); parsing
 * stops at the first error, so the line number named is the bad line's.
 */
#ifndef SPLITCTL_INI_H
#define SPLITCTL_INI_H

#include <stdio.h>

#define SC_INI_MAX_LINE 4096	/* characters, without the newline */
#define SC_INI_MAX_LINE_TEXT "4096"
#define SC_INI_MAX_SECTION 64	/* characters of a section name */

/* One "key = value" of section ("" before the first section header), or
 * a "[section]" header line (key and value NULL). 0 to go on; anything
 * else stops the parse at this line. */
typedef int (*sc_ini_handler)(void *user, int line, const char *section,
			      const char *key, const char *value);

/*
 * Read f to its end. 0 when every line was read and taken; else the number
 * of the first bad line (> 0) with *why the syntax problem, or NULL when
 * the handler refused the line; or -errno when f cannot be read.
 */
int sc_ini_parse(FILE *f, sc_ini_handler fn, void *user, const char **why);

#endif /* SPLITCTL_INI_H */
