/* SPDX-License-Identifier: GPL-2.0 */
/*
 * splitctl.h - internal interface between the parts of splitctl.
 *
 * main.c holds the one option table (every subcommand and option, with its
 * help text), parses the global options and dispatches to a cmd_*()
 * function. Every cmd_*() gets argv with argv[0] = the subcommand name,
 * parses its own options with sc_getopt() (which answers -h/--help), and
 * returns a process exit code: SC_EXIT_OK, SC_EXIT_RUNTIME (1) or
 * SC_EXIT_USAGE (2). Errors are printed by the function that detects them,
 * as one line on stderr ("splitctl: <what>: <bad value>: <what is accepted>").
 */
#ifndef SPLITCTL_H
#define SPLITCTL_H

#include <limits.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowsplit.h"

enum { SC_EXIT_OK = 0, SC_EXIT_RUNTIME = 1, SC_EXIT_USAGE = 2 };

/* Global options, given before the subcommand. */
struct sc_opts {
	const char *pin_dir;	/* --pin-dir, else $FLOWSPLIT_PIN_DIR, else default */
	int json;		/* -j/--json */
	int verbose;		/* -v/--verbose */
};

/* ---- option table (main.c) ---------------------------------------------- */
struct sc_opt {
	const char *name;	/* long name, without "--" */
	int val;		/* short letter or a code >= 256 */
	const char *arg;	/* argument name, NULL for a flag */
	const char *help;	/* with lo < hi: a format with two %.15g, the
				 * accepted range (limits from flowsplit.h) */
	double lo, hi;
};

struct sc_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, const struct sc_opts *o);
	const char *args;	/* positional arguments, for the usage line */
	const char *summary;
	const struct sc_opt *opts; /* terminated by a zeroed entry */
};

/*
 * getopt_long over the subcommand's table. Returns the option's val, -1 at
 * the end, 'h' after printing help to stdout, or '?' after printing a one-line
 * usage error. optind/optarg as with getopt_long.
 */
int sc_getopt(int argc, char **argv);
void sc_usage(FILE *f, const char *cmd);
/* "splitctl CMD: " + message + newline on stderr; returns SC_EXIT_USAGE */
int sc_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "splitctl: " + message + newline on stderr */
void sc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* printed only with -v */
void sc_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int sc_verbose_level;

/* ---- pinned state (state.c) --------------------------------------------- */
/* The pinned state of one flowsplit instance (one pin directory). */
struct sc_state {
	char dir[PATH_MAX];
	int lock_fd;		/* flock()ed directory fd while changing state */
	int flows4_fd;
	int flows6_fd;
	int config_fd;
	int stats_fd;
	int clock_prog_fd;	/* FS_PROG_CLOCK, to read bpf_jiffies64() */
};

/* Pin names inside the directory (maps use their FS_MAP_* names). */
#define SC_PIN_PROG		"prog_splitter"
#define SC_PIN_CLOCK		"prog_clock"
#define SC_PIN_LINK_FMT		"link_if%d"	/* one per attached ifindex */
#define SC_PIN_TMP_SUFFIX	"_new"	/* program pin before its rename() */
#define SC_PIN_MODE		0600
/* detach waits at most this long for the kernel to release a link */
#define SC_DETACH_WAIT_MS	2000
/* Empty subdirectory: "splitctl created this pin directory" (bpffs holds
 * only pins and directories, and refuses names with a '.'). */
#define SC_PIN_CREATED		"created_by_splitctl"

/* Resolve the pin directory (option > environment > default). */
const char *sc_pin_dir(const struct sc_opts *o);
/* Root / CAP_BPF+CAP_NET_ADMIN check; prints and returns 1 when missing. */
int sc_check_privileges(void);
/*
 * Check that the pin directory's parent (or the directory) is on bpffs;
 * create the directory (0700) when create != 0. Prints, returns 0 or 1.
 */
int sc_prepare_dir(const char *dir, int create);
/*
 * Take the instance lock (blocks until free); -1 on error (printed), also
 * when the directory was removed by a concurrent detach while we waited.
 */
int sc_lock_dir(const char *dir);
/*
 * The same for attach: creates the directory (0700) when missing, marking it
 * with SC_PIN_CREATED so that the last detach removes it (and only then),
 * and creates it again if a concurrent detach removed it meanwhile.
 */
int sc_lock_dir_create(const char *dir);

/*
 * Open the pinned maps of an attached instance. Fails (prints, returns
 * SC_EXIT_RUNTIME) when bpffs is missing or nothing is attached.
 * lock != 0: take the instance lock first (for commands that change state).
 */
int sc_state_open(const struct sc_opts *o, struct sc_state *st, int lock);
void sc_state_close(struct sc_state *st);

int sc_config_read(const struct sc_state *st, struct split_config *cfg);
int sc_config_write(const struct sc_state *st, const struct split_config *cfg);
/* Sum the per-CPU counters into out[FS_STAT_MAX]. */
int sc_stats_read(const struct sc_state *st, __u64 out[FS_STAT_MAX]);
/* Add to one per-CPU counter from user space (e.g. FLOWS_SWEPT). */
int sc_stats_add(const struct sc_state *st, enum fs_stat id, __u64 n);
/* Current bpf_jiffies64() and the kernel's HZ, for comparing last_seen. */
int sc_clock_now(const struct sc_state *st, __u64 *jiffies, unsigned int *hz);
/* The kernel's HZ (CONFIG_HZ from /proc/config.gz, else measured). */
unsigned int sc_kernel_hz(int clock_prog_fd);

/* An interface the splitter is attached to (from the link pins). */
struct sc_iface {
	int ifindex;
	char name[32];		/* IF_NAMESIZE, "?" when the interface is gone */
	__u32 prog_id;
	__u32 link_id;
	const char *mode;	/* "native", "generic", "?", or "gone": the
				 * interface was removed (the link is defunct) */
};
/* ifindex an XDP link pin is attached to: 0 defunct, -1 no XDP link there */
int sc_link_ifindex(const char *path);
/* Fill up to max entries; returns the count, or -1 (printed). */
int sc_ifaces_list(const char *dir, struct sc_iface *out, int max);
#define SC_MAX_IFACES 64

/* ---- settings (settings.c) ---------------------------------------------- */
/*
 * Settings shared by "set", "attach" options and config files:
 * "threshold", "idle-timeout" (seconds), "dscp-short", "dscp-long",
 * "enabled", "ack-short" (yes/no). Validated against the datapath limits
 * of flowsplit.h.
 * Returns 0, or -1 with a one-line reason (naming the bad value and the
 * accepted range) in err; cfg is unchanged on error.
 */
int sc_setting_apply(struct split_config *cfg, const char *name,
		     const char *value, unsigned int hz, char *err,
		     size_t errlen);
/* The setting names, for help and error messages. */
#define SC_SETTING_NAMES "threshold, idle-timeout, dscp-short, dscp-long, enabled, ack-short"
void sc_config_defaults(struct split_config *cfg, unsigned int hz);
/* Strict unsigned parse: digits only, within [min, max]; 0 ok, -1 bad. */
int sc_parse_u64(const char *s, __u64 min, __u64 max, __u64 *out);

/* ---- attach (attach.c) -------------------------------------------------- */
enum sc_xdp_mode { SC_MODE_AUTO, SC_MODE_NATIVE, SC_MODE_GENERIC };

struct sc_attach_opts {
	enum sc_xdp_mode mode;
	__u32 flows;		/* table size per family; 0 = default / keep */
	/* settings given on the command line, applied on top of the live or
	 * default config; NULL-terminated name/value pairs */
	const char *const *settings;
};

/* 1 when the kernel would accept name as an interface name. */
int sc_valid_ifname(const char *name);
/* Attach (or upgrade in place) on one interface; prints its own errors. */
int sc_attach(const struct sc_opts *o, const char *ifname,
	      const struct sc_attach_opts *ao);
/* Detach one interface (ifname) or all (ifname == NULL). */
int sc_detach(const struct sc_opts *o, const char *ifname);

/* ---- subcommands -------------------------------------------------------- */
int cmd_attach(int argc, char **argv, const struct sc_opts *o);
int cmd_detach(int argc, char **argv, const struct sc_opts *o);
int cmd_set(int argc, char **argv, const struct sc_opts *o);
int cmd_status(int argc, char **argv, const struct sc_opts *o);
int cmd_stats(int argc, char **argv, const struct sc_opts *o);
int cmd_flows(int argc, char **argv, const struct sc_opts *o);
int cmd_flush(int argc, char **argv, const struct sc_opts *o);
int cmd_route(int argc, char **argv, const struct sc_opts *o);
int cmd_tunnel(int argc, char **argv, const struct sc_opts *o);

#endif /* SPLITCTL_H */
