/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rules.h - policy rules: a remote prefix (IPv4 or IPv6) and optionally a
 * TCP port, and the class mode of the flows they match: auto (with its own
 * packet and/or byte threshold, else the global ones), short or long.
 *
 * The live rules are the entries of the pinned LPM tries fs_rules4/6
 * (layout and matching in bpf/flowsplit.h); their names are kept in the
 * entries, so the tries are the only state. Every change — "rule add",
 * "rule del", a config file's [rule NAME] sections — goes through one
 * function, sc_rules_replace(): the tries end up holding exactly the wanted
 * set, or the set they held before. The datapath reads the rules only when
 * a flow starts counting; flows keep the policy they started with.
 *
 * Library-like: 0 or -errno, the reason in err where there is one; nothing
 * printed.
 */
#ifndef SPLITCTL_RULES_H
#define SPLITCTL_RULES_H

#include "splitctl.h"

/* The options of one rule: "rule add" and the keys of [rule NAME]. */
struct sc_rule_args {
	__u32 given;
	const char *name;	/* rule add's argument */
	const char *prefix;	/* checked by sc_rule_build() */
	__u32 port;		/* 1..65535; not given: any port */
	int mode;		/* enum fs_mode: AUTO (default), SHORT, LONG */
	__u32 threshold;	/* packets (mode auto) */
	__u32 threshold_bytes;	/* TCP payload bytes (mode auto) */
};
extern const struct sc_option sc_rule_opts[];

/* One rule, checked. */
struct sc_rule {
	int family;		/* 4 or 6 */
	__u8 addr[16];		/* network byte order; IPv4 in 0..3 */
	__u16 port;		/* host byte order; 0: any port */
	struct fs_rule v;	/* name, policy, prefix length, flags */
};

struct sc_rule_set {
	struct sc_rule *r;
	int n;
	size_t cap;
};

/*
 * A rule named @name from parsed options: the prefix (ADDR/LEN, or ADDR for
 * one host; no host bits set), the name, and the rules across keys (the
 * thresholds belong to mode auto). @dash is the option prefix for the
 * message ("--" on the command line, "" in a config file).
 * 0, or -EINVAL with one line in err.
 */
int sc_rule_build(const struct sc_rule_args *a, const char *name,
		  const char *dash, struct sc_rule *out, char *err, size_t len);

/* Append @r unless its name or its prefix and port are taken, or its
 * family is full: -EEXIST / -E2BIG with the reason in err; -ENOMEM. */
int sc_rule_set_add(struct sc_rule_set *set, const struct sc_rule *r,
		    char *err, size_t len);
/* Remove the rule named @name: 0 or -ENOENT. */
int sc_rule_set_del(struct sc_rule_set *set, const char *name);
/* Sort by name (the order "rule show" prints). */
void sc_rule_set_sort(struct sc_rule_set *set);
void sc_rule_set_free(struct sc_rule_set *set);

/* "10.0.0.0/8", "fd00::/16" */
void sc_rule_prefix_str(const struct sc_rule *r, char *buf, size_t len);
/* "auto", "short", "long" (FS_MODE_GLOBAL is "auto" without thresholds) */
const char *sc_rule_mode_name(const struct sc_rule *r);

/* ---- [rule NAME] sections of a config file ------------------------------- */
struct sc_rule_section {
	char name[FS_RULE_NAME_LEN];
	char prefix[64];		/* the prefix value (a.prefix points here) */
	struct sc_rule_args a;
};
struct sc_rule_file {
	struct sc_rule_section *s;
	int n;
	size_t cap;
	int cur;		/* the section being read, -1 between sections */
};
/* The file moves on to another section (of any kind): a [rule NAME] seen
 * before is then a duplicate. */
void sc_rule_file_next_section(struct sc_rule_file *f);
/* One "key = value" of section [rule @name]: the name and the value are
 * checked here (so the message carries the file's line). 0 or -EINVAL /
 * -ENOMEM with one line in err. */
int sc_rule_file_key(struct sc_rule_file *f, const char *name, const char *key,
		     const char *value, char *err, size_t len);
/* The sections as rules (the rules across keys and across rules checked):
 * 0 or -errno with "[rule NAME]: ..." in err. */
int sc_rule_file_rules(const struct sc_rule_file *f, struct sc_rule_set *out,
		       char *err, size_t len);
void sc_rule_file_free(struct sc_rule_file *f);

/* The pinned rule tries of an instance: fd[0] IPv4, fd[1] IPv6. */
struct sc_rule_maps {
	int fd[2];
};
/* 0, or -ENODATA when the instance has no rule tries pinned. */
int sc_rule_maps_open(const char *dir, struct sc_rule_maps *m);
void sc_rule_maps_close(struct sc_rule_maps *m);
/* The live rules (appended to set). */
int sc_rules_read(const struct sc_rule_maps *m, struct sc_rule_set *set);

/*
 * Make the tries hold exactly @want, given that they hold @have (as read
 * under the instance lock), then write the rule counts into the config
 * (the datapath skips the lookup of a family without rules). On a failure
 * the tries get @have back. 0 or -errno.
 */
int sc_rules_replace(const struct sc_state *st, const struct sc_rule_maps *m,
		     const struct sc_rule_set *have,
		     const struct sc_rule_set *want);

/*
 * For "apply": make the live rules exactly @want (under the instance lock),
 * keeping the rules it replaced in @before for sc_rules_restore(). Prints
 * its errors; returns an exit code.
 */
int sc_rules_apply(const struct sc_opts *o, const struct sc_rule_set *want,
		   struct sc_rule_set *before);
/* Put @before back (an apply that failed later); errors printed. */
void sc_rules_restore(const struct sc_opts *o, const struct sc_rule_set *before);

/* Set cfg->rules4/6 to the entries of the tries. 0 or -errno. */
int sc_rules_count_into(const struct sc_rule_maps *m, struct split_config *cfg);

#endif /* SPLITCTL_RULES_H */
