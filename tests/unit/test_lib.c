// SPDX-License-Identifier: GPL-2.0
/*
 * test_lib.c - unit tests of lib/ (output layer, parsers, safe files),
 * TAP output. The JSON output is checked by parsing it back with json-c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "json_print.h"
#include "util.h"
#include "tap.h"

#define ok tap_ok

/* Run fn with output captured in a memory stream; returns the text. */
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

static const char *odd_name = "a\"b\\c\n\x01/";

static void emit_record(void)
{
	open_json_object(NULL);
	print_string(PRINT_ANY, "name", "name %s", odd_name);
	print_uint(PRINT_ANY, "big", " big %llu", 18446744073709551615ull);
	print_int(PRINT_ANY, "neg", " neg %lld", -5);
	print_bool(PRINT_ANY, "on", " on %s", true);
	print_float(PRINT_ANY, "ratio", " ratio %.2f", 0.25);
	print_float(PRINT_JSON, "nan", NULL, 0.0 / 0.0);
	print_null(PRINT_ANY, "none", " none %s", "-");
	open_json_array(PRINT_JSON, "list");
	print_uint(PRINT_JSON, NULL, NULL, 1);
	print_uint(PRINT_JSON, NULL, NULL, 2);
	close_json_array(PRINT_JSON, NULL);
	print_string(PRINT_FP, NULL, " (%s)", "text only");
	print_nl();
	close_json_object();
}

static void emit_stream(void)
{
	int i;

	open_json_array(PRINT_JSON, NULL);
	for (i = 0; i < 3; i++) {
		open_json_object(NULL);
		print_int(PRINT_ANY, "i", "i=%lld\n", i);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

static void test_json(void)
{
	struct json_object *o, *v;
	const char *s;
	char *out;

	out = capture(emit_record, true);
	o = json_tokener_parse(out);
	ok(o != NULL, "record is valid JSON");
	ok(o && json_object_object_get_ex(o, "name", &v) &&
	   !strcmp(json_object_get_string(v), odd_name),
	   "a name with quote, backslash, newline and a control byte survives");
	ok(o && json_object_object_get_ex(o, "big", &v) &&
	   json_object_get_uint64(v) == 18446744073709551615ull, "u64 max is exact");
	ok(o && json_object_object_get_ex(o, "nan", &v) && v == NULL,
	   "NaN becomes null");
	ok(o && json_object_object_get_ex(o, "list", &v) &&
	   json_object_array_length(v) == 2, "nested array");
	ok(strchr(out, '\n') == out + strlen(out) - 1, "one line");
	json_object_put(o);

	out = capture(emit_record, false);
	s = "name a\"b\\c\n\x01/ big 18446744073709551615 neg -5 on yes ratio 0.25 none - (text only)\n";
	ok(!strcmp(out, s), "text mode prints the formats");

	out = capture(emit_stream, true);
	ok(!strcmp(out, "[{\"i\":0},{\"i\":1},{\"i\":2}]\n"), "streamed array");
	out = capture(emit_stream, false);
	ok(!strcmp(out, "i=0\ni=1\ni=2\n"), "streamed array as text");
}

static void test_parse(void)
{
	uint64_t u = 7;
	int64_t i = 7;
	double d = 7;
	bool b;

	ok(parse_u64("42", 0, 100, &u) == 0 && u == 42, "u64 42");
	ok(parse_u64("0x10", 0, 100, &u) == -EINVAL && u == 42, "u64 refuses hex");
	ok(parse_u64("-1", 0, 100, &u) == -EINVAL, "u64 refuses a sign");
	ok(parse_u64(" 1", 0, 100, &u) == -EINVAL, "u64 refuses a space");
	ok(parse_u64("", 0, 100, &u) == -EINVAL, "u64 refuses empty");
	ok(parse_u64("101", 0, 100, &u) == -ERANGE, "u64 range");
	ok(parse_u64("99999999999999999999", 0, UINT64_MAX, &u) == -ERANGE, "u64 overflow");
	ok(parse_s64("-5", -10, 10, &i) == 0 && i == -5, "s64 -5");
	ok(parse_s64("-", -10, 10, &i) == -EINVAL, "s64 refuses a lone sign");
	ok(parse_s64("-11", -10, 10, &i) == -ERANGE, "s64 range");
	ok(parse_double("0.25", 0, 1, &d) == 0 && d == 0.25, "double 0.25");
	ok(parse_double("nan", 0, 1, &d) == -EINVAL, "double refuses nan");
	ok(parse_double("0x1p3", 0, 100, &d) == -EINVAL, "double refuses hex");
	ok(parse_double("1e400", 0, 1e300, &d) == -ERANGE, "double overflow");
	ok(parse_bool("yes", &b) == 0 && b, "bool yes");
	ok(parse_bool("off", &b) == 0 && !b, "bool off");
	ok(parse_bool("maybe", &b) == -EINVAL, "bool refuses maybe");
}

static void test_files(void)
{
	char dir[] = "/tmp/fsutil-XXXXXX", target[64], victim[64], link[128];
	struct out_file of;
	char buf[64] = "";
	FILE *f;
	int err;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(target, sizeof(target), "%s/out.prom", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	fputs("secret\n", f);
	fclose(f);
	/* a link planted at a guessable temporary name must not be followed:
	 * plant links at every name the old scheme used */
	snprintf(link, sizeof(link), "%s.%d.tmp", target, getpid());
	ok(symlink(victim, link) == 0, "planted a link at %s", link);

	err = out_file_open(&of, target, 0644);
	ok(err == 0, "out_file_open: %s", strerror(-err));
	if (!err) {
		fputs("new\n", of.f);
		err = out_file_commit(&of);
		ok(err == 0, "out_file_commit");
	}
	f = fopen(victim, "r");
	ok(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "secret\n"),
	   "the planted link's target is untouched");
	if (f)
		fclose(f);
	f = fopen(target, "r");
	ok(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "new\n"), "target written");
	if (f)
		fclose(f);

	/* abort leaves nothing behind */
	snprintf(target, sizeof(target), "%s/aborted", dir);
	if (!out_file_open(&of, target, 0644)) {
		fputs("x", of.f);
		out_file_abort(&of);
	}
	ok(access(target, F_OK) != 0, "abort writes no target");

	/* inputs: a directory and a FIFO are refused at once */
	errno = 0;
	ok(!in_file_open(dir) && errno == EISDIR, "in_file_open refuses a directory");
	snprintf(link, sizeof(link), "%s/fifo", dir);
	mkfifo(link, 0600);
	errno = 0;
	ok(!in_file_open(link) && errno == EINVAL, "in_file_open refuses a FIFO without blocking");

	snprintf(buf, sizeof(buf), "rm -rf %s", dir);
	if (system(buf))
		ok(0, "cleanup %s", dir);
}

int main(void)
{
	test_json();
	test_parse();
	test_files();
	return tap_done();
}
