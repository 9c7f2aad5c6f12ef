// SPDX-License-Identifier: GPL-2.0
/*
 * test_lib.c - unit tests of lib/ (output layer, parsers, safe files),
 * TAP output. The JSON output is checked by parsing it back with json-c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <net/if.h>
#include <json-c/json.h>

#include "json_print.h"
#include "params.h"
#include "util.h"
#include "tap.h"
#include "capture.h"

#define ok tap_ok

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
	s = "name a\"b\\c\n\x01/ big 18446744073709551615 neg -5 on yes ratio 0.25 none - (text "
	    "only)\n";
	ok(!strcmp(out, s), "text mode prints the formats");

	out = capture(emit_stream, true);
	ok(!strcmp(out, "[{\"i\":0},{\"i\":1},{\"i\":2}]\n"), "streamed array");
	out = capture(emit_stream, false);
	ok(!strcmp(out, "i=0\ni=1\ni=2\n"), "streamed array as text");
}

/* rates: exact (no double on the way: 1.1 x 1e6 is not 1100000 in one),
 * whole bits, their text read back */
static void test_rate(void)
{
	static const __u64 back[] = { 1, 999, 1000, 1001, 100000, 1100000, 20000000,
				      1000000001, 1234567891, 1500000000, UINT64_MAX };
	char t[48];
	__u64 r = 0;
	size_t i;
	bool all = true;

	ok(sc_parse_rate("20mbit", &r) == 0 && r == 20000000, "rate 20mbit");
	ok(sc_parse_rate("1.5gbit", &r) == 0 && r == 1500000000, "rate 1.5gbit");
	ok(sc_parse_rate("1.1mbit", &r) == 0 && r == 1100000, "rate 1.1mbit exactly");
	ok(sc_parse_rate("0.3kbit", &r) == 0 && r == 300, "rate 0.3kbit exactly");
	ok(sc_parse_rate("100kbit", &r) == 0 && r == 100000, "rate 100kbit");
	ok(sc_parse_rate("8bit", &r) == 0 && r == 8, "rate 8bit");
	ok(sc_parse_rate("0bit", &r) == 0 && r == 0, "rate 0bit");
	ok(sc_parse_rate("1.5bit", &r) == -EINVAL, "rate refuses a fraction of a bit");
	ok(sc_parse_rate("0.0000000001gbit", &r) == -EINVAL, "rate refuses a tenth of a bit");
	ok(sc_parse_rate("20", &r) == -EINVAL, "rate needs its unit");
	ok(sc_parse_rate("20mbps", &r) == -EINVAL, "rate refuses an unknown unit");
	ok(sc_parse_rate("20Mbit", &r) == -EINVAL, "rate units are lower case");
	ok(sc_parse_rate("-1mbit", &r) == -EINVAL, "rate refuses a sign");
	ok(sc_parse_rate("1e3kbit", &r) == -EINVAL, "rate refuses an exponent");
	ok(sc_parse_rate(" 1mbit", &r) == -EINVAL, "rate refuses white space");
	ok(sc_parse_rate("mbit", &r) == -EINVAL, "rate refuses a unit alone");
	ok(sc_parse_rate("18446744073.709551615gbit", &r) == 0 && r == UINT64_MAX,
	   "rate: the largest");
	ok(sc_parse_rate("18446744073.709551616gbit", &r) == -EINVAL,
	   "rate: one bit/s more overflows");
	sc_rate_text(20000000, t, sizeof(t));
	ok(!strcmp(t, "20mbit"), "rate text 20mbit (%s)", t);
	sc_rate_text(1500000000, t, sizeof(t));
	ok(!strcmp(t, "1.5gbit"), "rate text 1.5gbit (%s)", t);
	sc_rate_text(800, t, sizeof(t));
	ok(!strcmp(t, "800bit"), "rate text 800bit (%s)", t);
	sc_rate_text(1000001, t, sizeof(t));
	ok(!strcmp(t, "1.000001mbit"), "rate text exact: 1.000001mbit (%s)", t);
	sc_rate_text(0, t, sizeof(t));
	ok(!strcmp(t, "0bit"), "rate text 0bit (%s)", t);
	for (i = 0; i < sizeof(back) / sizeof(back[0]); i++) {
		sc_rate_text(back[i], t, sizeof(t));
		if (sc_parse_rate(t, &r) || r != back[i]) {
			tap_diag("%llu -> '%s' -> %llu", (unsigned long long)back[i], t,
				 (unsigned long long)r);
			all = false;
		}
	}
	ok(all, "rate text reads back to the same rate (%zu rates)", i);
}

static void test_parse(void)
{
	uint64_t u = 7;
	double d = 7;
	bool b;

	ok(parse_u64("42", 0, 100, &u) == 0 && u == 42, "u64 42");
	ok(parse_u64("0x10", 0, 100, &u) == -EINVAL && u == 42, "u64 refuses hex");
	ok(parse_u64("-1", 0, 100, &u) == -EINVAL, "u64 refuses a sign");
	ok(parse_u64(" 1", 0, 100, &u) == -EINVAL, "u64 refuses a space");
	ok(parse_u64("", 0, 100, &u) == -EINVAL, "u64 refuses empty");
	ok(parse_u64("101", 0, 100, &u) == -ERANGE, "u64 range");
	ok(parse_u64("99999999999999999999", 0, UINT64_MAX, &u) == -ERANGE, "u64 overflow");
	ok(sc_parse_number("0.25", 0, 1, &d) == 0 && d == 0.25, "number 0.25");
	ok(sc_parse_number("nan", 0, 1, &d) == -EINVAL, "number refuses nan");
	ok(sc_parse_number("0x1p3", 0, 100, &d) == -EINVAL, "number refuses hex");
	ok(sc_parse_number("1e3", 0, 1e300, &d) == -EINVAL, "number refuses an exponent");
	ok(sc_parse_number("2", 0, 1, &d) == -ERANGE && d == 0.25, "number range");
	test_rate();
	ok(sc_parse_yesno("yes", &b) == 0 && b, "yes/no yes");
	ok(sc_parse_yesno("0", &b) == 0 && !b, "yes/no 0");
	ok(sc_parse_yesno("off", &b) == -EINVAL, "yes/no refuses off");
}

/* The validators other code calls outside a table (tunnel-cfg, rules.c). */
static void test_validators(void)
{
	static const struct sc_enum modes[] = { { "split", 1 }, { "ecmp", 2 }, { NULL, 0 } };
	struct sc_prefix p;
	char acc[160];
	int v = 7;

	ok(sc_parse_enum(modes, "ecmp", &v) == 0 && v == 2, "enum: a name gives its value");
	ok(sc_parse_enum(modes, "ECMP", &v) == -EINVAL && v == 2 &&
	   sc_parse_enum(modes, "", &v) == -EINVAL, "enum: exact names only, else untouched");
	ok(!sc_valid_ifname("a:b") && !sc_valid_ifname("..") && !sc_valid_ifname("a b") &&
	   !sc_valid_ifname("a/b") && !sc_valid_ifname("") &&
	   !sc_valid_ifname("abcdefghijklmnop") && sc_valid_ifname("abcdefghijklmno") &&
	   sc_valid_ifname("wg-short.1"), "ifname: the kernel's rule");
	ok(!sc_parse_prefix("10.2.0.1/24", 0, SC_PFX_NEED_LEN | SC_PFX_HOST_BITS, &p) &&
	   p.family == AF_INET && p.len == 24 && sc_prefix_host_bits(&p) && p.addr[3] == 0 &&
	   !sc_prefix_host_bits(&p), "host bits: found, cleared to the network, then none");
	ok(!sc_parse_prefix("fd02::4000:0:0:0/65", 0, SC_PFX_HOST_BITS, &p) &&
	   sc_prefix_host_bits(&p) && p.addr[8] == 0 &&
	   !sc_parse_prefix("fd02::8000:0:0:0/65", 0, 0, &p), "host bits: IPv6 past a byte edge");
	ok(sc_parse_prefix("10.2.0.1/24", 0, 0, &p) == -EINVAL &&
	   sc_parse_prefix("10.2.0.0", 0, SC_PFX_NEED_LEN, &p) == -EINVAL &&
	   sc_parse_prefix("10.2.0.0/24", 0, SC_PFX_ADDR, &p) == -EINVAL &&
	   sc_parse_prefix("10.2.0.0/24", AF_INET6, 0, &p) == -EINVAL &&
	   !sc_parse_prefix("1.0.0.0/0", 0, SC_PFX_HOST_BITS, &p) && p.len == 0,
	   "prefix: host bits, length, address-only and family flags");
	{
		struct sc_prefix a, b, c, d, e;

		ok(!sc_parse_prefix("10.2.0.0/16", 0, 0, &a) &&
			   !sc_parse_prefix("10.2.5.0/24", 0, 0, &b) &&
			   !sc_parse_prefix("10.3.0.0/20", 0, 0, &c) &&
			   !sc_parse_prefix("10.3.16.0/20", 0, 0, &d) &&
			   !sc_parse_prefix("fd02::/48", 0, 0, &e) && sc_prefix_overlap(&a, &b) &&
			   sc_prefix_overlap(&b, &a) && sc_prefix_overlap(&a, &a) &&
			   !sc_prefix_overlap(&a, &c) && !sc_prefix_overlap(&c, &d) &&
			   !sc_prefix_overlap(&a, &e) &&
			   !sc_parse_prefix("10.3.0.0/19", 0, 0, &a) && sc_prefix_overlap(&a, &d) &&
			   !sc_parse_prefix("0.0.0.0/0", 0, 0, &a) && sc_prefix_overlap(&a, &c),
		   "prefix overlap: inside, around, equal; not beside (past a byte edge), not "
		   "another family");
	}
	sc_option_accepted(&(struct sc_option){ .type = SC_OPT_IFNAME }, acc, sizeof(acc));
	ok(!strcmp(acc, "1..15 characters, not '.' or '..', no '/', ':' or white space"),
	   "accepted text of a bare row: %s", acc);
}

/* ---- params: every kind of value, accepted, at its bounds, refused ------- */
struct kv_args {
	__u32 given;
	__u32 a;
	bool b;
};

static const struct sc_option kv_keys[] = {
	SC_OPTION("a", SC_OPT_UINT, struct kv_args, a, .lo = 1, .hi = 9, .required = true),
	SC_OPTION("b", SC_OPT_YESNO, struct kv_args, b),
	SC_OPTIONS_END,
};

struct t_args {
	__u32 given;
	__u32 n;
	__u8 dscp;
	__u64 dur, us;
	__u32 msec, flags;
	double secs, num;
	__u64 bw;
	bool yn;
	int color;
	const char *str, *path, *abspath;
	char ifname[IFNAMSIZ];
	struct sc_prefix addr4, addr, pfx, ifaddr;
	struct sc_listen listen;
	SC_LIST(struct sc_prefix, 2) pfxs;
	SC_LIST(struct kv_args, 2) kv;
};

static const struct sc_enum colors[] = { { "red", 1 }, { "green", 2 }, { NULL, 0 } };

#define T_OPT(name, type, m, ...) SC_OPTION(name, type, struct t_args, m, __VA_ARGS__)
static const struct sc_option t_opts[] = {
	T_OPT("n", SC_OPT_UINT, n, .lo = 1, .hi = 100, .metavar = "N", .help = "n"),
	T_OPT("dscp", SC_OPT_DSCP, dscp, .noun = "DSCP"),
	T_OPT("dur", SC_OPT_DURATION, dur, .unit = SC_UNIT_MS, .lo = 0, .hi = 10000),
	T_OPT("us", SC_OPT_DURATION, us, .unit = SC_UNIT_US, .lo = 1, .hi = 1000000),
	T_OPT("idle", SC_OPT_MSEC, msec, .lo = 1, .hi = 86400000),
	T_OPT("watch", SC_OPT_SECONDS, secs, .lo = 0.1, .hi = 3600),
	T_OPT("rate", SC_OPT_NUMBER, num, .lo = 0.001, .hi = 10000),
	T_OPT("bw", SC_OPT_RATE, bw, .lo = 100000, .hi = 10e9, .metavar = "RATE", .help = "bw"),
	T_OPT("on", SC_OPT_YESNO, flags, .bit = 4),
	T_OPT("yn", SC_OPT_YESNO, yn),
	T_OPT("color", SC_OPT_ENUM, color, .values = colors),
	T_OPT("str", SC_OPT_STRING, str),
	T_OPT("path", SC_OPT_PATH, path, .noun = "path"),
	T_OPT("abspath", SC_OPT_ABSPATH, abspath, .noun = "path"),
	T_OPT("ifname", SC_OPT_IFNAME, ifname, .noun = "interface name"),
	T_OPT("addr4", SC_OPT_ADDR, addr4, .family = AF_INET, .noun = "address"),
	T_OPT("addr", SC_OPT_ADDR, addr, .noun = "address"),
	T_OPT("pfx", SC_OPT_PREFIX, pfx, .noun = "prefix"),
	T_OPT("ifaddr", SC_OPT_IFADDR, ifaddr, .noun = "address"),
	T_OPT("listen", SC_OPT_LISTEN, listen),
	SC_OPTION_LIST("pfxs", SC_OPT_PREFIX, struct t_args, pfxs, .noun = "prefix"),
	SC_OPTION_LIST("kv", SC_OPT_KEYVALS, struct t_args, kv, .sub = kv_keys),
	SC_OPTIONS_END,
};

#define PFX_ACC                                                                                    \
	"an IPv4 or IPv6 address with an optional /LEN (0..32, 0..128) and no host bits set, "     \
	"e.g. 10.1.0.0/16"
/* name, value, the error line (NULL: accepted) */
static const struct { const char *name, *value, *err;
} t_cases[] = {
	{"n", "1", NULL},
	{"n", "100", NULL},
	{"n", "0", "--n: invalid value '0': accepted: an integer 1..100"},
	{"n", "101", "--n: invalid value '101': accepted: an integer 1..100"},
	{"n", "1x", "--n: invalid value '1x': accepted: an integer 1..100"},
	{"dscp", "0", NULL},
	{"dscp", "63", NULL},
	{"dscp", "64", "--dscp: invalid DSCP '64': accepted: an integer 0..63"},
	{"dur", "0", NULL},
	{"dur", "10000", NULL},
	{"dur", "7.5", NULL},
	{"dur", "10000.5", "--dur: invalid value '10000.5': accepted: milliseconds 0..10000"},
	{"dur", "1e3", "--dur: invalid value '1e3': accepted: milliseconds 0..10000"},
	{"dur", "-1", "--dur: invalid value '-1': accepted: milliseconds 0..10000"},
	{"dur", ".5", "--dur: invalid value '.5': accepted: milliseconds 0..10000"},
	{"dur", "5.", "--dur: invalid value '5.': accepted: milliseconds 0..10000"},
	{"dur", "0.0000001", "--dur: invalid value '0.0000001': accepted: milliseconds 0..10000"},
	{"us", "0", "--us: invalid value '0': accepted: microseconds 1..1000000"},
	{"idle", "0.001", NULL},
	{"idle", "86400", NULL},
	{"idle", "0.0005",
	 "--idle: invalid value '0.0005': accepted: seconds 0.001..86400, at most 3 decimals"},
	{"idle", "1.0000",
	 "--idle: invalid value '1.0000': accepted: seconds 0.001..86400, at most 3 decimals"},
	{"watch", "0.1", NULL},
	{"watch", "3600", NULL},
	{"watch", "1e0", "--watch: invalid value '1e0': accepted: seconds 0.1..3600"},
	{"rate", "0.001", NULL},
	{"rate", "10000", NULL},
	{"rate", "0", "--rate: invalid value '0': accepted: a number 0.001..10000"},
	{"rate", "inf", "--rate: invalid value 'inf': accepted: a number 0.001..10000"},
	{"bw", "100kbit", NULL},
	{"bw", "10gbit", NULL},
	{"bw", "1.1mbit", NULL},
	{"bw", "99999bit",
	 "--bw: invalid value '99999bit': accepted: a rate 100kbit..10gbit (bit, kbit, mbit, "
	 "gbit)"},
	{"bw", "10.000000001gbit",
	 "--bw: invalid value '10.000000001gbit': accepted: a rate 100kbit..10gbit (bit, kbit, "
	 "mbit, gbit)"},
	{"bw", "20",
	 "--bw: invalid value '20': accepted: a rate 100kbit..10gbit (bit, kbit, mbit, gbit)"},
	{"on", "yes", NULL},
	{"on", "0", NULL},
	{"yn", "1", NULL},
	{"on", "on", "--on: invalid value 'on': accepted: yes, no, 1, 0"},
	{"color", "green", NULL},
	{"color", "pink", "--color: invalid value 'pink': accepted: red, green"},
	{"str", "x", NULL},
	{"str", "", "--str: invalid value '': accepted: a non-empty string"},
	{"path", "a/b", NULL},
	{"path", "", "--path: invalid path '': accepted: a path of 1..4095 characters"},
	{"abspath", "/a", NULL},
	{"abspath", "a", "--abspath: invalid path 'a': accepted: an absolute path"},
	{"ifname", "eth0", NULL},
	{"ifname", "123456789012345", NULL},
	{"ifname", "1234567890123456",
	 "--ifname: invalid interface name '1234567890123456': accepted: 1..15 characters, not '.' "
	 "or '..', no '/', ':' or white space"},
	{"ifname", "a:b",
	 "--ifname: invalid interface name 'a:b': accepted: 1..15 characters, not '.' or '..', no "
	 "'/', ':' or white space"},
	{"ifname", "..",
	 "--ifname: invalid interface name '..': accepted: 1..15 characters, not '.' or '..', no "
	 "'/', ':' or white space"},
	{"addr4", "10.0.0.1", NULL},
	{"addr4", "::1", "--addr4: invalid address '::1': accepted: an IPv4 address"},
	{"addr4", "10.0.0.1/8", "--addr4: invalid address '10.0.0.1/8': accepted: an IPv4 address"},
	{"addr", "fd00::1", NULL},
	{"addr", "nowhere", "--addr: invalid address 'nowhere': accepted: an IPv4 or IPv6 address"},
	{"pfx", "10.1.0.0/16", NULL},
	{"pfx", "0.0.0.0/0", NULL},
	{"pfx", "fd02::/48", NULL},
	{"pfx", "10.1.0.1/16", "--pfx: invalid prefix '10.1.0.1/16': accepted: " PFX_ACC},
	{"pfx", "10.0.0.0/33", "--pfx: invalid prefix '10.0.0.0/33': accepted: " PFX_ACC},
	{"ifaddr", "192.168.101.1/30", NULL},
	{"ifaddr", "192.168.101.1",
	 "--ifaddr: invalid address '192.168.101.1': accepted: an IPv4 or IPv6 address with /LEN "
	 "(0..32, 0..128), e.g. 192.168.101.1/30"},
	{"listen", "[::1]:9434", NULL},
	{"listen", "10.0.0.1:80", NULL},
	{"listen", "10.0.0.1",
	 "--listen: invalid value '10.0.0.1': accepted: an address and port, e.g. 127.0.0.1:9434, "
	 "[::1]:9434 or 0.0.0.0:9434"},
	{"pfxs", "10.0.0.0/8 x", "--pfxs: invalid prefix 'x': accepted: " PFX_ACC},
	{"kv", "a=0", "--kv: a: invalid value '0': accepted: an integer 1..9"},
	{"kv", "c=1", "--kv: unknown key 'c': accepted: a, b"},
	{"kv", "b=yes", "--kv: a= is required"},
};

static void test_params_cases(void)
{
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(t_cases) / sizeof(t_cases[0]); i++) {
		struct t_args a = { 0 };
		struct sc_opt_ref r;
		int rc;

		err[0] = '\0';
		rc = sc_option_find(t_opts, &a, t_cases[i].name, true, &r);
		if (!rc)
			rc = sc_option_set(&r, t_cases[i].value, "--", err, sizeof(err));
		if (!t_cases[i].err)
			ok(!rc && sc_option_given(t_opts, &a, t_cases[i].name),
			   "params: --%s '%s' accepted", t_cases[i].name, t_cases[i].value);
		else if (!ok(rc == -EINVAL && !strcmp(err, t_cases[i].err),
			     "params: --%s '%s' refused: %s", t_cases[i].name,
			     t_cases[i].value, t_cases[i].err))
			tap_diag("got %d: %s", rc, err);
	}
}

/* set one value into a; 0 or the error */
static int t_set(struct t_args *a, const char *name, const char *value)
{
	struct sc_opt_ref r;
	char err[512];

	return sc_option_find(t_opts, a, name, true, &r) ?:
	       sc_option_set(&r, value, "--", err, sizeof(err));
}

static void test_params_values(void)
{
	struct t_args a = { 0 };
	__u64 ns = 0;

	ok(!t_set(&a, "dur", "7.5") && a.dur == 7500000, "params: 7.5 ms is 7500000 ns");
	ok(!t_set(&a, "idle", "0.25") && a.msec == 250, "params: 0.25 s into ms is 250");
	ok(!t_set(&a, "watch", "0.5") && a.secs == 0.5, "params: 0.5 s into seconds");
	ok(!t_set(&a, "bw", "2.5mbit") && a.bw == 2500000, "params: 2.5mbit into bit/s");
	ok(t_set(&a, "bw", "1kbit") == -EINVAL && a.bw == 2500000,
	   "params: a rate out of range leaves the member");
	ok(!t_set(&a, "on", "yes") && a.flags == 4 && !t_set(&a, "on", "no") && !a.flags,
	   "params: yes/no sets and clears its bit");
	ok(!t_set(&a, "color", "green") && a.color == 2, "params: enum value");
	ok(!t_set(&a, "pfx", "fd02::/48") && a.pfx.family == AF_INET6 && a.pfx.len == 48,
	   "params: IPv6 prefix and length");
	ok(!t_set(&a, "pfx", "10.1.2.3") && a.pfx.family == AF_INET && a.pfx.len == 32,
	   "params: an address is a /32 prefix");
	ok(!t_set(&a, "pfxs", "10.0.0.0/8,fd00::/8") && a.pfxs.n == 2 &&
	   a.pfxs.v[1].family == AF_INET6, "params: a list of two in one value");
	ok(t_set(&a, "pfxs", "192.168.0.0/16") == -E2BIG && a.pfxs.n == 2,
	   "params: a full list refuses one more");
	a.pfxs.n = 0;
	ok(t_set(&a, "pfxs", "10.0.0.0/8 10.0.0.1/8") == -EINVAL && a.pfxs.n == 0,
	   "params: a list value with a bad element adds none of it");
	ok(t_set(&a, "pfxs", " , ") == -EINVAL && a.pfxs.n == 0,
	   "params: a list value without an element is refused");
	ok(!t_set(&a, "kv", "a=3,b=yes") && !t_set(&a, "kv", "a=4") && a.kv.n == 2 &&
	   a.kv.v[0].a == 3 && a.kv.v[0].b && a.kv.v[1].a == 4 && !a.kv.v[1].b,
	   "params: KEY=VALUE lists, one element per occurrence");
	ok(!sc_parse_duration("0.000000001", SC_UNIT_S, 9, &ns) && ns == 1,
	   "params: duration to the nanosecond");
	ok(!sc_parse_duration("18446744073.709551615", SC_UNIT_S, 9, &ns) && ns == UINT64_MAX,
	   "params: the longest duration");
	ok(sc_parse_duration("18446744073.709551616", SC_UNIT_S, 9, &ns) == -EINVAL,
	   "params: one nanosecond more overflows");
}

static void t_usage(void)
{
	static const struct t_args defaults = { .n = 5, .dur = 2500000, .color = 2,
						.bw = 1500000 };

	sc_usage(print_fp(), "[options]", t_opts, &defaults, "end\n");
}

static void test_params_help(void)
{
	char *out = capture(t_usage, false);

	ok(strstr(out, "Usage: ") && strstr(out, " [options]\n"), "params: usage line");
	ok(strstr(out, "--n N ") && strstr(out, "n (an integer 1..100; default 5)\n"),
	   "params: help shows the range and the default");
	ok(strstr(out, "(milliseconds 0..10000; default 2.5)\n") != NULL,
	   "params: a duration's default in its unit");
	ok(strstr(out, "--bw RATE") &&
		   strstr(out,
			  "bw (a rate 100kbit..10gbit (bit, kbit, mbit, gbit); default 1.5mbit)\n"),
	   "params: a rate's range and default with their units");
	ok(strstr(out, "(microseconds 1..1000000)\n") != NULL,
	   "params: a default out of range is not shown");
	ok(strstr(out, "a=") && strstr(out, "(an integer 1..9; required)"),
	   "params: KEY=VALUE keys listed under their option");
	ok(strstr(out, "end\n") != NULL, "params: epilog");
}

static void test_params_parse(void)
{
	char a0[] = "t", a1[] = "--n", a2[] = "7", a3[] = "--dur=1", a4[] = "x";
	char *argv[] = { a0, a1, a2, a3, a4, NULL };
	struct t_args a = { 0 };
	int rest = 0;

	ok(sc_options_parse(t_opts, NULL, 4, argv, &a, false, NULL) == 0 && a.n == 7 &&
	   a.dur == 1000000, "params: getopt from the table");
	ok(sc_options_parse(t_opts, NULL, 5, argv, &a, false, &rest) == 0 && rest == 4,
	   "params: the first argument left for the caller");
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

	/* a writer killed before its commit leaves its temporary: the
	 * owner's cleanup of the target removes it, and nothing else */
	snprintf(target, sizeof(target), "%s/state.json", dir);
	if (!out_file_open(&of, target, 0644)) {
		fputs("{}", of.f);
		fflush(of.f);	/* as far as a SIGKILL lets it get */
		memcpy(link, of.tmp, sizeof(link) - 1);
		fclose(of.f);
	}
	snprintf(victim, sizeof(victim), "%s/.state.json", dir);
	f = fopen(victim, "w");
	if (f)
		fclose(f);
	out_file_remove_stale(target);
	ok(access(link, F_OK) != 0 && access(victim, F_OK) == 0,
	   "out_file_remove_stale: %s removed, %s (not a temporary) kept", link, victim);

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

/* Prometheus sample values: shortest round-trip, and the format's NaN/Inf. */
static void test_prom_double(void)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 0.000535979, "0.000535979" },	/* %.17g: 0.00053597900000000001 */
		{ 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 0, "0" },
		{ -2.5, "-2.5" },
		{ 1e-9, "1e-09" },
		{ 30, "30" },
		{ 1500, "1500" },
		{ 1e20, "1e+20" },
		{ 12345678901234567.0, "12345678901234568" },
		{ 0.0 / 0.0, "NaN" },
		{ 1.0 / 0.0, "+Inf" },
		{ -1.0 / 0.0, "-Inf" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fs_prom_double(cases[i].v, buf, sizeof(buf));
		ok(!strcmp(buf, cases[i].want), "fs_prom_double %s (got %s)", cases[i].want, buf);
	}
	/* every value round-trips, whatever its digits */
	for (i = 1; i < 2000; i++) {
		double v = (double)i / 7919 * (i % 3 ? 1e-4 : 1e6);

		fs_prom_double(v, buf, sizeof(buf));
		if (strtod(buf, NULL) != v)
			break;
	}
	ok(i == 2000, "fs_prom_double round-trips 1999 values");
}

/* lib's one Internet checksum: RFC 1071's example words, an odd length,
 * and a header that sums to zero with its checksum in place. */
static void test_csum(void)
{
	/* RFC 1071 4.1: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2, so ~ = 220d */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	/* an ICMP echo request, id 0x5350, seq 1, checksum field 0, then 3
	 * bytes of payload (odd) */
	uint8_t echo[11] = { 8, 0, 0, 0, 0x53, 0x50, 0x00, 0x01, 'a', 'b', 'c' };
	uint16_t c;

	tap_ok(ntohs(inet_csum(rfc, sizeof(rfc))) == 0x220d, "inet_csum: RFC 1071's example");
	c = inet_csum(echo, sizeof(echo));
	memcpy(echo + 2, &c, 2);
	tap_ok(inet_csum(echo, sizeof(echo)) == 0,
	       "inet_csum: odd length, zero with the checksum in place");
}

static void test_grow(void)
{
	size_t cap = 0, n;
	int *a = NULL, *p;
	bool kept = true;

	for (n = 0; n < 100; n++) {
		p = fs_grow(a, &cap, n, sizeof(*a), 4);
		if (!p)
			break;
		a = p;
		a[n] = (int)n;
	}
	for (n = 0; n < 100; n++)
		kept = kept && a && a[n] == (int)n;
	tap_ok(kept && cap == 128, "fs_grow: 100 elements kept, capacity 4 doubled to 128 (%zu)",
	       cap);
	p = fs_grow(a, &cap, 100, sizeof(*a), 4);
	tap_ok(p == a && cap == 128, "fs_grow: room left: the same array, capacity kept");
	free(a);
}

int main(void)
{
	test_csum();
	test_grow();
	test_json();
	test_prom_double();
	test_parse();
	test_validators();
	test_params_cases();
	test_params_values();
	test_params_help();
	test_params_parse();
	test_files();
	return tap_done();
}
