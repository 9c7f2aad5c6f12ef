/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - splitctl's typed option tables (the xdp-tools params.h idea).
 *
 * Every command declares its options once, in a table of struct sc_option:
 * name, type, the member of the command's argument struct it fills, the
 * accepted range or values, and the help text. From that one table come
 * getopt's tables, the parsing and validation of every value (into the
 * member, never twice), `--help`, the hidden `help-table` (checked against
 * the man page and the bash completion) and the lookup of the same names as
 * `set` NAME VALUE pairs and config file keys.
 *
 * Every argument struct starts with `__u32 given`: bit i is set when option
 * i of its table was parsed (the command line overrides a config file only
 * where it was given; settings are merged onto the live config only where
 * given).
 */
#ifndef SPLITCTL_OPTIONS_H
#define SPLITCTL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <linux/types.h>

enum sc_opt_type {
	SC_OPT_END,		/* terminates a table */
	SC_OPT_FLAG,		/* no value: bool = true */
	SC_OPT_COUNT,		/* no value: unsigned int += 1 (-v -v) */
	SC_OPT_UINT,		/* decimal integer lo..hi into __u8/__u32/__u64 */
	SC_OPT_MSEC,		/* seconds, <= 3 decimals, lo..hi ms, into __u32 ms */
	SC_OPT_SECONDS,		/* seconds lo..hi into double */
	SC_OPT_YESNO,		/* yes|no|1|0 into bit `bit` of a __u32 */
	SC_OPT_ENUM,		/* one of `values` into int; with `bit`, a value
				 * of 0 clears that bit of a __u32, others set it */
	SC_OPT_STRING,		/* non-empty, into const char * (not copied) */
	SC_OPT_ABSPATH,		/* an absolute path, into const char * */
	SC_OPT_LISTEN,		/* loopback ADDR:PORT into struct sc_listen */
	SC_OPT_IFNAME,		/* an interface name the kernel accepts, into
				 * char[IFNAMSIZ] */
	SC_OPT_INCLUDE,		/* the options of `sub`, whose struct is the
				 * member at offset */
	SC_OPT_PASS,		/* key (the name) and value appended to a
				 * struct sc_pass_list, for a library that
				 * checks its own values (tunnel-cfg) */
};

struct sc_enum {
	const char *name;
	int val;
};

struct sc_option {
	const char *name;	/* long option, `set` name and config key */
	char short_opt;		/* 0: long form only */
	enum sc_opt_type type;
	size_t offset, size;	/* the member of the argument struct */
	const char *metavar;	/* value name in the help, NULL for flags */
	const char *help;
	double lo, hi;		/* accepted range (SC_OPT_MSEC: in ms) */
	const struct sc_enum *values;	/* SC_OPT_ENUM, ended by { NULL } */
	__u32 bit;		/* SC_OPT_YESNO, SC_OPT_ENUM */
	const char *noun;	/* "invalid <noun> 'x'", default "value" */
	bool positional;	/* an argument, not an option */
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

/* The first member of every argument struct (so a table has at most 32
 * rows; a command line at most 48 with its includes). */
struct sc_args_head {
	__u32 given;
};

/* Options handed on as key/value pairs, in command line order. Bounded:
 * one more than SC_MAX_PASS is a usage error, never an overflow. */
#define SC_MAX_PASS 32
struct sc_pass_list {
	unsigned int n;
	struct sc_kv {
		const char *key, *value;
	} kv[SC_MAX_PASS];
};

/* "ADDR:PORT" on a loopback address, parsed. */
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
 * <...>" in err (prefix "--" on the command line, "" for set and config
 * files; positional arguments: "invalid <noun> '<value>': ..."), or
 * -E2BIG when an SC_OPT_PASS list is full.
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
/* "a, b, c": the names sc_option_find() accepts with !cli. */
void sc_option_names(const struct sc_option *t, char *buf, size_t len);

/*
 * getopt_long over the table into base, then the positional arguments.
 * in_order: options end at the first argument (global options; "set",
 * whose values may look like options). Returns 0 with *rest the index of
 * the first unparsed argument (only when rest != NULL; otherwise a
 * leftover argument is an error), 1 for -h/--help (the caller prints the
 * command's help), or
 * FS_EXIT_USAGE after printing one error line prefixed by "splitctl
 * <cmd>: ".
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
/* The kernel's rule for interface names (dev_valid_name()). */
bool sc_valid_ifname(const char *name);
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

#endif /* SPLITCTL_OPTIONS_H */
