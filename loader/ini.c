// SPDX-License-Identifier: GPL-2.0
/*
 * ini.c - the config file syntax (ini.h): no system access, no printing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"


static char *skip_blanks(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static void strip_trailing(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* A ';' after a blank starts a comment (as in inih): cut it off. */
static void cut_comment(char *s)
{
	char *p;

	for (p = s; *p; p++)
		if (*p == ';' && p > s && isspace((unsigned char)p[-1])) {
			*p = '\0';
			return;
		}
}

/* One line, without its newline: 0, 1 stop (handler), or -1 with *why. */
static int parse_line(char *raw, int lineno, char *section, sc_ini_handler fn,
		      void *user, const char **why)
{
	char *s = skip_blanks(raw), *end, *value;

	strip_trailing(s);
	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		cut_comment(s);
		strip_trailing(s);
		end = strchr(s, ']');
		if (!end || end[1]) {
			*why = "syntax error (expected '[section]')";
			return -1;
		}
		*end = '\0';
		if (end - s - 1 >= SC_INI_MAX_SECTION) {
			*why = "section name too long";
			return -1;
		}
		strcpy(section, s + 1);
		/* the header itself: the handler sees every section, also
		 * an empty one or a second of one name */
		return fn(user, lineno, section, NULL, NULL) ? 1 : 0;
	}
	end = strpbrk(s, "=:");
	if (!end || end == s) {
		*why = "syntax error (expected '[section]' or 'key = value')";
		return -1;
	}
	*end = '\0';
	strip_trailing(s);
	value = skip_blanks(end + 1);
	cut_comment(value);
	strip_trailing(value);
	return fn(user, lineno, section, s, value) ? 1 : 0;
}

int sc_ini_parse(FILE *f, sc_ini_handler fn, void *user, const char **why)
{
	char section[SC_INI_MAX_SECTION + 1] = "", *line = NULL, *s;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, ret = 0;

	*why = NULL;
	errno = 0;
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		s = line;
		/* a UTF-8 byte order mark before the first line */
		if (lineno == 1 && !strncmp(s, "\xEF\xBB\xBF", 3))
			s += 3;
		if (len > SC_INI_MAX_LINE) {
			*why = "line too long: at most " SC_INI_MAX_LINE_TEXT " characters";
			ret = lineno;
		} else if (strlen(line) != (size_t)len) {
			*why = "NUL byte in the line";
			ret = lineno;
		} else if (parse_line(s, lineno, section, fn, user, why)) {
			ret = lineno;
		}
	}
	if (!ret && ferror(f))
		ret = errno ? -errno : -EIO;
	free(line);
	return ret;
}
