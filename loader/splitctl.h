/* SPDX-License-Identifier: GPL-2.0 */
/*
 * splitctl.h - internal interface between the parts of splitctl.
 *
 * main.c parses the global options and dispatches to a cmd_*() function.
 * Every cmd_*() gets argv with argv[0] = the subcommand name, parses its own
 * options with getopt_long (and answers -h/--help), and returns a process
 * exit code: SC_EXIT_OK, SC_EXIT_RUNTIME (1) or SC_EXIT_USAGE (2). Errors are
 * printed by the function that detects them, as one line on stderr
 * ("splitctl: <what>: <bad value>: <what is accepted>").
 *
 * Ownership: state.c/attach.c/settings.c/cmd_*.c (core) implement the
 * sc_state_*, sc_setting_*, sc_attach/sc_detach functions below; ops.h
 * declares the agent side (gc, run, metrics, config files).
 */
#ifndef SPLITCTL_H
#define SPLITCTL_H

#include <limits.h>
#include <stddef.h>
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

/* The pinned state of one flowsplit instance (one pin directory). */
struct sc_state {
	char dir[PATH_MAX];
	int lock_fd;		/* held while this process changes state */
	int flows4_fd;
	int flows6_fd;
	int config_fd;
	int stats_fd;
	int clock_prog_fd;	/* FS_PROG_CLOCK, to read bpf_jiffies64() */
};

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

/*
 * Settings shared by "set", "attach" options and config files:
 * names "threshold", "idle-timeout" (seconds), "dscp-short", "dscp-long",
 * "enabled" (yes/no). Validated against the datapath limits of flowsplit.h.
 * Returns 0, or -1 with a one-line reason (naming the bad value and the
 * accepted range) in err; cfg is unchanged on error.
 */
int sc_setting_apply(struct split_config *cfg, const char *name,
		     const char *value, char *err, size_t errlen);
/* NULL-terminated list of the setting names, for help, man page, completion. */
extern const char *const sc_setting_names[];

enum sc_xdp_mode { SC_MODE_AUTO, SC_MODE_NATIVE, SC_MODE_GENERIC };

struct sc_attach_opts {
	enum sc_xdp_mode mode;
	__u32 flows;		/* table size per family, used when creating maps */
	const struct split_config *cfg; /* NULL: keep existing / defaults */
};

/* Attach (or upgrade in place) on one interface; prints its own errors. */
int sc_attach(const struct sc_opts *o, const char *ifname,
	      const struct sc_attach_opts *ao);
/* Detach one interface (ifname) or all (ifname == NULL). */
int sc_detach(const struct sc_opts *o, const char *ifname);

/* Subcommands (core). */
int cmd_attach(int argc, char **argv, const struct sc_opts *o);
int cmd_detach(int argc, char **argv, const struct sc_opts *o);
int cmd_set(int argc, char **argv, const struct sc_opts *o);
int cmd_status(int argc, char **argv, const struct sc_opts *o);
int cmd_stats(int argc, char **argv, const struct sc_opts *o);
int cmd_flows(int argc, char **argv, const struct sc_opts *o);
int cmd_flush(int argc, char **argv, const struct sc_opts *o);

#endif /* SPLITCTL_H */
