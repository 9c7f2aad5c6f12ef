/* SPDX-License-Identifier: GPL-2.0 */
/*
 * params.h - typed option tables for every program of the project (the
 * xdp-tools params.h idea): splitctl, fct-tap, flowgen, delayline, dlprobe.
 *
 * Every command declares its options once, in a table of struct sc_option:
 * name, type, the member of the command's argument struct it fills, the
 * accepted range or values, and the help text. From that one table come
 * getopt's tables, the parsing and validation of every value (into the
 * member, never twice), `--help`, splitctl's hidden `help-table` (checked
 * against the man page and the bash completion) and the lookup of the same
 * names as `set` NAME VALUE pairs and config file keys.
 *
 * Each kind of value is validated by exactly one function of params.c
 * (listed at SC_OPT_*); the sc_parse_*() ones are exported for code that
 * reads a value outside a table. An invalid value gives one line,
 * "<prog>[ <cmd>]: --<name>: invalid <noun> '<value>': accepted: <what>",
 * the same for every program (the program name is fs_log_init()'s).
 *
 * Every argument struct starts with `__u32 given`: bit i is set when option
 * i of its table was parsed (the command line overrides a config file only
 * where it was given; settings are merged onto the live config only where
 * given).
 */
#ifndef FS_PARAMS_H
#define FS_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <linux/types.h>

enum sc_opt_type {
	SC_OPT_END,		/* terminates a table */
	SC_OPT_FLAG,		/* no value: bool = true */
	SC_OPT_COUNT,		/* no value: unsigned int += 1 (-v -v) */
	SC_OPT_UINT,		/* decimal integer lo..hi into __u8/__u16/__u32/
				 * __u64 (parse_u64()) */
	SC_OPT_DSCP,		/* a DSCP 0..FS_DSCP_MAX into __u8/__u32
				 * (sc_parse_dscp()) */
	SC_OPT_DURATION,	/* a duration (sc_parse_duration()) in `unit`
				 * (default seconds), lo..hi in that unit, into
				 * __u64 nanoseconds; with unit_suffix the value
				 * names its unit ("100ms", "1.5s") */
	SC_OPT_MSEC,		/* the same in seconds, at most 3 decimals, lo..hi
				 * in ms, into __u32 ms */
	SC_OPT_SECONDS,		/* the same in seconds lo..hi, into double s */
	SC_OPT_NUMBER,		/* a decimal number lo..hi into double
				 * (sc_parse_number()) */
	SC_OPT_RATE,		/* a rate with its unit ("20mbit", "1.5gbit";
				 * sc_parse_rate()), lo..hi in bit/s, into
				 * __u64 bit/s */
	SC_OPT_YESNO,		/* yes|no|1|0 (sc_parse_yesno()) into bit `bit`
				 * of a __u32, or into a bool when bit is 0 */
	SC_OPT_ENUM,		/* one of `values` into int; with `bit`, a value
				 * of 0 clears that bit of a __u32, others set it */
	SC_OPT_STRING,		/* non-empty, into const char * (not copied) */
	SC_OPT_PATH,		/* a path (sc_valid_path()), into const char * */
	SC_OPT_ABSPATH,		/* an absolute path (sc_valid_path()), into
				 * const char * */
	SC_OPT_LISTEN,		/* ADDR:PORT into struct sc_listen */
	SC_OPT_IFNAME,		/* an interface name the kernel accepts
				 * (sc_valid_ifname()), into char[IFNAMSIZ] */
	SC_OPT_ADDR,		/* an IP address of `family` (0: either), into
				 * struct sc_prefix (sc_parse_prefix()) */
	SC_OPT_PREFIX,		/* ADDR[/LEN], no host bits set, into struct
				 * sc_prefix (sc_parse_prefix()) */
	SC_OPT_IFADDR,		/* ADDR/LEN of an interface (host bits allowed),
				 * into struct sc_prefix (sc_parse_prefix()) */
	SC_OPT_LIST,		/* values of type `elem` into SC_LIST(T, N):
				 * every occurrence adds, a value may hold
				 * several separated by ',' or ' ' (KEYVALS
				 * elements: one per occurrence) */
	SC_OPT_KEYVALS,		/* "KEY=VALUE,KEY=VALUE" into the struct at the
				 * member through the table `sub` (its rows
				 * must copy their values: no STRING or PATH) */
	SC_OPT_INCLUDE,		/* the options of `sub`, whose struct is the
				 * member at offset */
};

/* SC_OPT_LIST of addresses kept one per family (per_family): the member is
 * struct sc_prefix[2], [0] IPv4, [1] IPv6, each value goes to its
 * family's slot. */
enum sc_per_family {
	SC_PER_FAMILY_REPLACE = 1,	/* a later one replaces the earlier */
	SC_PER_FAMILY_ONCE,		/* a second one is refused */
};

/* The unit a SC_OPT_DURATION is written in, as nanoseconds. */
enum sc_unit {
	SC_UNIT_S = 1000000000,
	SC_UNIT_MS = 1000000,
	SC_UNIT_US = 1000,
};

struct sc_enum {
	const char *name;
	int val;
};

struct sc_option {
	const char *name;	/* long option, `set` name and config key */
	const char *cli_name;	/* the long option when it is not name (the
				 * [health] key "interval" is --health-interval) */
	char short_opt;		/* 0: long form only */
	enum sc_opt_type type;
	size_t offset, size;	/* the member of the argument struct */
	const char *metavar;	/* value name in the help, NULL for flags */
	const char *help;
	double lo, hi;		/* accepted range (SC_OPT_MSEC: in ms,
				 * SC_OPT_DURATION: in its unit) */
	const struct sc_enum *values;	/* SC_OPT_ENUM, ended by { NULL } */
	__u32 bit;		/* SC_OPT_YESNO, SC_OPT_ENUM */
	enum sc_unit unit;	/* SC_OPT_DURATION; 0: seconds */
	int family;		/* SC_OPT_ADDR: AF_INET, AF_INET6, 0: either */
	enum sc_opt_type elem;	/* SC_OPT_LIST: the type of its values */
	size_t elem_off, elem_size;	/* SC_OPT_LIST: the array in the member */
	unsigned int max;	/* SC_OPT_LIST: its length */
	const char *noun;	/* "invalid <noun> 'x'", default "value" */
	const char *accepted;	/* what the row accepts, in place of its
				 * type's words (a range with exceptions) */
	/* The row's own rule on top of its type, on the value just stored
	 * in the member (a list: the list, its newest value last): 0, or
	 * -EINVAL with the reason in why ("" for the row's "invalid ...
	 * accepted" line); the member is as it was. */
	int (*check)(const struct sc_option *o, void *member, const char *value,
		     char *why, size_t whylen);
	unsigned int pfx_flags;	/* SC_OPT_PREFIX, SC_OPT_IFADDR: more
				 * sc_parse_prefix() flags (SC_PFX_*) */
	bool unit_suffix;	/* SC_OPT_DURATION: the value ends in its unit,
				 * "ms" or "s"; lo..hi still in `unit` */
	enum sc_per_family per_family;	/* SC_OPT_LIST of addresses */
	bool positional;	/* an argument, not an option */
	bool required;		/* a usage error when not given */
	bool key_only;		/* a config key / set name, not an option of
				 * the including command's command line */
	bool cli_only;		/* an option, not a config file key */
	const struct sc_option *sub;	/* SC_OPT_INCLUDE */
};

#define sc_sizeof_field(T, m) sizeof(((T *)0)->m)
/* One table row for member m of argument struct T. */
#define SC_OPTION(_name, _type, T, m, ...) {				\
		.name = _name, .type = _type, .offset = offsetof(T, m),	\
		.size = sc_sizeof_field(T, m), __VA_ARGS__ }
#define SC_OPTIONS_END { .type = SC_OPT_END }

/* A list member: n values of type T, at most N. */
#define SC_LIST(T, N) struct { unsigned int n; T v[N]; }
/* One SC_OPT_LIST row for list member m (an SC_LIST) of struct T. */
#define SC_OPTION_LIST(_name, _elem, T, m, ...) {				\
		.name = _name, .type = SC_OPT_LIST, .elem = _elem,		\
		.offset = offsetof(T, m), .size = sc_sizeof_field(T, m),	\
		.elem_off = offsetof(T, m.v) - offsetof(T, m),			\
		.elem_size = sc_sizeof_field(T, m.v[0]),			\
		.max = sizeof(((T *)0)->m.v) / sizeof(((T *)0)->m.v[0]),	\
		__VA_ARGS__ }

/* A list kept as a count member and an array member right after it (an
 * existing struct's layout): int/unsigned n, then T a[N]. */
#define SC_OPTION_LIST_AT(_name, _elem, T, n, a, ...) {				\
		.name = _name, .type = SC_OPT_LIST, .elem = _elem,		\
		.offset = offsetof(T, n),					\
		.size = offsetof(T, a) + sizeof(((T *)0)->a) - offsetof(T, n),	\
		.elem_off = offsetof(T, a) - offsetof(T, n),			\
		.elem_size = sizeof(((T *)0)->a[0]),				\
		.max = sizeof(((T *)0)->a) / sizeof(((T *)0)->a[0]),		\
		__VA_ARGS__ }
/* A list of addresses kept one per family: member m is struct sc_prefix[2]. */
#define SC_OPTION_PER_FAMILY(_name, _elem, T, m, _how, ...)			\
	SC_OPTION(_name, SC_OPT_LIST, T, m, .elem = _elem,			\
		  .elem_size = sizeof(struct sc_prefix), .max = 2,		\
		  .per_family = _how, __VA_ARGS__)

/* The first member of every argument struct (so a table has at most 32
 * rows; a command line at most 48 with its includes). */
struct sc_args_head {
	__u32 given;
};

/* An IP address or prefix (SC_OPT_ADDR, SC_OPT_PREFIX, SC_OPT_IFADDR). */
struct sc_prefix {
	int family;		/* AF_INET, AF_INET6 */
	unsigned char addr[16];	/* network byte order */
	int len;		/* prefix length in bits (an address: 32, 128) */
};

/* "ADDR:PORT" or "[ADDR6]:PORT", parsed. */
struct sc_listen {
	const char *text;	/* as given */
	struct sockaddr_storage addr;
	socklen_t len;		/* 0 when not given */
};

/* An option found in a table: the row, its table (for its given bit) and
 * the struct it fills. */
struct sc_opt_ref {
	const struct sc_option *t, *opt;
	void *base;
};

/*
 * Parse one value into the member the option names, and mark it given.
 * 0, or -EINVAL with "<prefix><name>: invalid <noun> '<value>': accepted:
 * <...>" in err (prefix "--" on the command line, naming the option by
 * its cli_name, "" for set and config files; positional arguments:
 * "invalid <noun> '<value>': ..."), or -E2BIG when an SC_OPT_LIST list is
 * full.
 */
int sc_option_set(const struct sc_opt_ref *r, const char *value,
		  const char *prefix, char *err, size_t errlen);
/*
 * Find name in table t (and its includes) for the argument struct at base.
 * With cli, key_only rows are skipped; without it, cli_only rows are.
 * 0, or -ENOENT.
 */
int sc_option_find(const struct sc_option *t, void *base, const char *name,
		   bool cli, struct sc_opt_ref *r);
/* Was the option (by name, in t or its includes) given? */
bool sc_option_given(const struct sc_option *t, void *base, const char *name);
/*
 * The error of a value valid alone but not with the others (a rule across
 * rows): "<name> '<value>': out of range with the other settings:
 * accepted: <rule>" (rule "": without it), about the option key of table
 * t, its value the member in base, named as the user gave it:
 * "--<cli_name>" when cli (may be NULL) has it given, else the key.
 * Returns -EINVAL.
 */
int sc_option_cross_error(const struct sc_option *t, void *base, const void *cli,
			  const char *key, const char *rule, char *err, size_t errlen);
/* "a, b, c": the names sc_option_find() accepts with !cli. */
void sc_option_names(const struct sc_option *t, char *buf, size_t len);
/* The options given in src (its given bits) copied over dst's, includes
 * too, as a command line goes over a config file's keys; dst's given bits
 * get src's. Members that point (strings) point into src's storage. */
void sc_options_merge(const struct sc_option *t, void *dst, const void *src);
/* The layers of a setting, lowest first: dst holds the defaults; the
 * config file's keys (file, may be NULL) go over them, the command line's
 * options (cli, may be NULL) over those. */
void sc_options_layer(const struct sc_option *t, void *dst, const void *file, const void *cli);

/*
 * getopt_long over the table into base, then the positional arguments.
 * in_order: options end at the first argument (global options; "set",
 * whose values may look like options). Returns 0 with *rest the index of
 * the first unparsed argument (only when rest != NULL; otherwise a
 * leftover argument is an error), 1 for -h/--help (the caller prints the
 * command's help), or
 * FS_EXIT_USAGE after printing one error line prefixed by "<prog>
 * <cmd>: " (a row marked required and not given is such an error).
 */
int sc_options_parse(const struct sc_option *t, const char *cmd, int argc,
		     char **argv, void *base, bool in_order, int *rest);
/* The same with the rows of a second table (into extra_base) accepted
 * too: the global options after the command, as bpftool does. */
int sc_options_parse_with(const struct sc_option *t, void *base,
			  const struct sc_option *extra, void *extra_base,
			  const char *cmd, int argc, char **argv, bool in_order,
			  int *rest);
/* "  -t, --threshold N   help (lo..hi)" lines. */
void sc_options_help(FILE *f, const struct sc_option *t);
/*
 * A whole --help: "Usage: <prog> <synopsis>", the options of t with the
 * values in defaults (the argument struct before parsing; NULL: none; a
 * number outside its row's range means "not given" and is not shown),
 * then epilog when not NULL.
 */
void sc_usage(FILE *f, const char *synopsis, const struct sc_option *t,
	      const void *defaults, const char *epilog);
/* "<prog>[ <cmd>]: <message>" on stderr; returns FS_EXIT_USAGE. */
int sc_print_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* From now on usage errors read "<prog>: <cmd>: <message>", the shape of
 * the program's log lines (pr_err()), for a command whose errors go to a
 * log with the rest of what it says (splitctl's agent, "run"). */
void sc_usage_errors_as_log(bool on);

/* ---- the validators: one per kind of value -------------------------------- */
/* The kernel's rule for interface names (dev_valid_name()). */
bool sc_valid_ifname(const char *name);
/* A non-empty path shorter than PATH_MAX; with absolute, starting with '/'. */
bool sc_valid_path(const char *path, bool absolute);
/* yes|no|1|0. 0 or -EINVAL. */
int sc_parse_yesno(const char *s, bool *out);
/* A DSCP, 0..FS_DSCP_MAX. 0, -EINVAL or -ERANGE. */
int sc_parse_dscp(const char *s, __u8 *out);
/*
 * A duration: DIGITS[.DIGITS] (no sign, exponent or space) in units of
 * unit_ns (enum sc_unit), or, with unit_ns 0, followed by its unit: "ms"
 * or "s" ("100ms", "1.5s"); at most `decimals` decimals (and never finer
 * than a nanosecond), into ns. 0 or -EINVAL (syntax, too fine, or beyond
 * 2^64 ns).
 */
int sc_parse_duration(const char *s, __u64 unit_ns, unsigned int decimals,
		      __u64 *ns);
/* A number in the same syntax, lo..hi. 0, -EINVAL or -ERANGE. */
int sc_parse_number(const char *s, double lo, double hi, double *out);
/* A rate: a number in the same syntax followed by its unit, "bit",
 * "kbit", "mbit" or "gbit" (powers of 1000, as tc's), into bit/s exactly
 * ("1.5bit", finer than a bit, is refused). 0 or -EINVAL (syntax, unit,
 * too fine, beyond 2^64 bit/s). */
int sc_parse_rate(const char *s, __u64 *bps);
/* bps as a rate in the largest unit it reaches, exact ("20mbit",
 * "1.5gbit", "800bit", "1.000001mbit"): sc_parse_rate() reads it back. */
void sc_rate_text(__u64 bps, char *buf, size_t len);
/* Flags of sc_parse_prefix(). */
enum {
	SC_PFX_ADDR = 1,	/* an address: no /LEN */
	SC_PFX_NEED_LEN = 2,	/* /LEN required */
	SC_PFX_HOST_BITS = 4,	/* bits beyond /LEN may be set (an interface
				 * address); otherwise refused */
};
/* IPv4 or IPv6 (family AF_INET or AF_INET6; 0: either) ADDR[/LEN]. A
 * missing LEN is the full length. 0 or -EINVAL. */
int sc_parse_prefix(const char *s, int family, unsigned int flags,
		    struct sc_prefix *out);
/* Whether p has bits set past its length; they are cleared (p becomes the
 * network address, which an error line can suggest). */
bool sc_prefix_host_bits(struct sc_prefix *p);
/* Whether two prefixes share an address: same family, and one contains
 * the other (equal ones included). */
bool sc_prefix_overlap(const struct sc_prefix *a, const struct sc_prefix *b);
/* One of the names of values (ended by { NULL }) into *out. 0 or -EINVAL. */
int sc_parse_enum(const struct sc_enum *values, const char *s, int *out);
/* What a value of the row may be ("an integer 0..63"), for errors and help
 * (code outside a table passes a row of just .type and what that needs). */
void sc_option_accepted(const struct sc_option *o, char *buf, size_t len);
/* "  threshold N   help (accepted)" lines: the rows as set/config keys. */
void sc_options_keys_help(FILE *f, const struct sc_option *t);
/*
 * Lines for bash completion (help-completion), tab separated, includes
 * expanded: "opt PATH --NAME VALUES -S" (VALUES: "a|b" enum values, yes|no,
 * else the metavar; "" for a flag; -S its short form or ""), "arg PATH
 * NOUN" for a positional
 * argument; with keys, the rows as "key PATH NAME VALUES" (set pairs).
 */
void sc_options_complete(const char *path, const struct sc_option *t, bool keys);
/* "<path> --<option>" lines for help-table; includes expanded. */
void sc_options_table(const char *path, const struct sc_option *t);

#endif /* FS_PARAMS_H */
