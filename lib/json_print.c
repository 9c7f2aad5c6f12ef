// SPDX-License-Identifier: GPL-2.0
/*
 * json_print.c - text and JSON output from the same calls, on json-c.
 *
 * json-c (Debian libjson-c-dev) rather than jansson: it stores unsigned
 * 64-bit integers natively (json_object_new_uint64), and our counters are
 * __u64; jansson's integers are signed long long. Both escape strings.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <json-c/json.h>

#include "json_print.h"

#define JP_MAX_DEPTH 32

static struct {
	FILE *f;
	bool json;
	int depth;
	/* stack[0] is the top-level value; NULL until opened */
	struct json_object *stack[JP_MAX_DEPTH];
	const char *keys[JP_MAX_DEPTH];	/* key of each open container */
	bool streaming;		/* top-level array: elements written as closed */
	unsigned long streamed;	/* elements written so far */
	int werr;		/* first write error (errno) */
	bool wrote;		/* anything written in this document */
} jp;

static const int jp_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

static void jp_write(const char *s)
{
	jp.wrote = true;
	if (fputs(s, jp.f) == EOF && !jp.werr)
		jp.werr = errno ? errno : EIO;
}

void print_begin(FILE *f, bool json)
{
	memset(&jp, 0, sizeof(jp));
	jp.f = f;
	jp.json = json;
	/* a double as text: 10 significant digits, no locale (json-c default) */
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
}

void print_begin_decimals(FILE *f, bool json, int decimals)
{
	char fmt[8];

	print_begin(f, json);
	if (json) {
		snprintf(fmt, sizeof(fmt), "%%.%df", decimals);
		json_c_set_serialization_double_format(fmt, JSON_C_OPTION_GLOBAL);
	}
}

FILE *print_fp(void)
{
	return jp.f ? jp.f : stdout;
}

/* Attach v to the innermost open container (or make it the top level). */
static void jp_add(const char *key, struct json_object *v)
{
	struct json_object *parent;

	if (!jp.depth) {
		/* a bare top-level scalar */
		jp_write(json_object_to_json_string_ext(v, jp_flags));
		json_object_put(v);
		return;
	}
	parent = jp.stack[jp.depth - 1];
	if (json_object_is_type(parent, json_type_array))
		json_object_array_add(parent, v);
	else
		json_object_object_add(parent, key ? key : "", v);
}

static void jp_open(const char *key, struct json_object *c)
{
	if (jp.depth >= JP_MAX_DEPTH) {
		/* a programming error; keep the output well-formed */
		json_object_put(c);
		return;
	}
	if (jp.depth == 0 && json_object_is_type(c, json_type_array)) {
		jp.streaming = true;
		jp_write("[");
	}
	jp.keys[jp.depth] = key;
	jp.stack[jp.depth++] = c;
}

static void jp_close(void)
{
	struct json_object *c;

	if (!jp.depth)
		return;
	c = jp.stack[--jp.depth];
	if (jp.depth == 0) {
		if (jp.streaming)
			jp_write("]");
		else
			jp_write(json_object_to_json_string_ext(c, jp_flags));
		json_object_put(c);
		return;
	}
	if (jp.streaming && jp.depth == 1) {
		/* an element of the top-level array: write it, drop it */
		if (jp.streamed++)
			jp_write(",");
		jp_write(json_object_to_json_string_ext(c, jp_flags));
		json_object_put(c);
		return;
	}
	if (json_object_is_type(jp.stack[jp.depth - 1], json_type_array))
		json_object_array_add(jp.stack[jp.depth - 1], c);
	else
		json_object_object_add(jp.stack[jp.depth - 1],
				       jp.keys[jp.depth] ? jp.keys[jp.depth] : "", c);
}

int print_end(void)
{
	if (jp.json) {
		while (jp.depth)
			jp_close();
		/* an empty document (a command with nothing to report) stays
		 * empty, not a blank line */
		if (jp.wrote)
			jp_write("\n");
	}
	if (fflush(jp.f) == EOF && !jp.werr)
		jp.werr = errno ? errno : EIO;
	return -jp.werr;
}

void open_json_object(const char *key)
{
	if (jp.json)
		jp_open(key, json_object_new_object());
}

void close_json_object(void)
{
	if (jp.json)
		jp_close();
}

void open_json_array(enum output_type t, const char *key)
{
	(void)t;
	if (jp.json)
		jp_open(key, json_object_new_array());
}

void close_json_array(enum output_type t, const char *text_delim)
{
	if (jp.json)
		jp_close();
	else if ((t & PRINT_FP) && text_delim)
		jp_write(text_delim);
}

static void jp_textf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void jp_textf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vfprintf(jp.f, fmt, ap) < 0 && !jp.werr)
		jp.werr = errno ? errno : EIO;
	va_end(ap);
}

/* The text formats come from our own code (never from input): the
 * format-nonliteral warning does not apply. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

void print_string(enum output_type t, const char *key, const char *fmt,
		  const char *value)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, value ? json_object_new_string(value) : NULL);
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, value ? value : "");
	}
}

void print_bool(enum output_type t, const char *key, const char *fmt, bool value)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, json_object_new_boolean(value));
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, value ? "yes" : "no");
	}
}

void print_int(enum output_type t, const char *key, const char *fmt, long long value)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, json_object_new_int64(value));
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, value);
	}
}

void print_uint(enum output_type t, const char *key, const char *fmt,
		unsigned long long value)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, json_object_new_uint64(value));
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, value);
	}
}

void print_float(enum output_type t, const char *key, const char *fmt, double value)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, isfinite(value) ? json_object_new_double(value) : NULL);
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, value);
	}
}

void print_null(enum output_type t, const char *key, const char *fmt, const char *text)
{
	if (jp.json) {
		if (t & PRINT_JSON)
			jp_add(key, NULL);
	} else if ((t & PRINT_FP) && fmt) {
		jp_textf(fmt, text ? text : "");
	}
}

void print_nl(void)
{
	if (!jp.json)
		jp_write("\n");
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (jp.json)
		return;
	va_start(ap, fmt);
	if (vfprintf(jp.f, fmt, ap) < 0 && !jp.werr)
		jp.werr = errno ? errno : EIO;
	va_end(ap);
}
