/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json_print.h - one output path for text and JSON (the iproute2 pattern).
 *
 * A command prints each field once:
 *
 *	print_begin(stdout, json);
 *	open_json_object(NULL);
 *	print_string(PRINT_ANY, "name", "interface %s", ifname);
 *	print_uint(PRINT_ANY, "ifindex", " (ifindex %llu)", ifindex);
 *	print_nl();
 *	close_json_object();
 *	print_end();
 *
 * In text mode the PRINT_FP and PRINT_ANY calls print with their printf
 * format; in JSON mode the PRINT_JSON and PRINT_ANY calls add key/value to a
 * document built with json-c, which escapes every string. print_end() writes
 * the document as one line. Objects and arrays nest; a key is NULL inside an
 * array (and for the top-level value).
 *
 * Large outputs: when the top-level value is an array, each element is
 * written as soon as it is closed and then freed, so a million-row listing
 * never holds a million-row tree in memory.
 *
 * One document at a time per process (like iproute2); not thread-safe.
 */
#ifndef FS_JSON_PRINT_H
#define FS_JSON_PRINT_H

#include <stdbool.h>
#include <stdio.h>

enum output_type {
	PRINT_FP = 1,	/* text mode only */
	PRINT_JSON = 2,	/* JSON mode only */
	PRINT_ANY = 3,	/* both */
};

/* Start a document on f (text when json == 0). */
void print_begin(FILE *f, bool json);
/* The same, with every JSON number that is a double written with
 * `decimals` decimals, as the text output has them (json-c writes every
 * double of a document with one format; its default would cut a
 * microsecond time since the epoch, 16 digits, to 10). */
void print_begin_decimals(FILE *f, bool json, int decimals);
/* Finish it: in JSON mode write it (one line + '\n'). 0, or -errno when
 * writing failed (e.g. EPIPE, ENOSPC). */
int print_end(void);
/* The stream of the current document (for text that is not a field). */
FILE *print_fp(void);

void open_json_object(const char *key);
void close_json_object(void);
/* In text mode, open/close print nothing (but a PRINT_FP/ANY close prints
 * text_delim when it is not NULL). */
void open_json_array(enum output_type t, const char *key);
void close_json_array(enum output_type t, const char *text_delim);

void print_string(enum output_type t, const char *key, const char *fmt,
		  const char *value);
void print_bool(enum output_type t, const char *key, const char *fmt,
		bool value);
/* In text mode a bool prints fmt with "yes"/"no" for %s; in JSON true/false. */
void print_int(enum output_type t, const char *key, const char *fmt,
	       long long value);
void print_uint(enum output_type t, const char *key, const char *fmt,
		unsigned long long value);
/* Non-finite values become null in JSON. */
void print_float(enum output_type t, const char *key, const char *fmt,
		 double value);
/* JSON null; in text mode fmt is printed with text as its %s. */
void print_null(enum output_type t, const char *key, const char *fmt,
		const char *text);
/* Text mode only: a newline. */
void print_nl(void);
/* Text mode only: printf-style free text (headers, separators). */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* FS_JSON_PRINT_H */
