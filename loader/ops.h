/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.h - the operations side of splitctl: idle sweep, agent, metrics,
 * declarative config files. Uses the core interface of splitctl.h.
 */
#ifndef SPLITCTL_OPS_H
#define SPLITCTL_OPS_H

#include "splitctl.h"

/*
 * One idle sweep over both flow tables with batch map operations: delete
 * every flow whose last_seen is older than the configured idle timeout
 * (an entry touched just before the timeout survives). Adds the number
 * removed to FLOWS_SWEPT. Returns 0 or -1 (message printed).
 */
int sc_gc_sweep(const struct sc_state *st, __u64 *removed);

/* Write every counter, the config and the table fill in Prometheus text
 * exposition format (valid for `promtool check metrics`). */
int sc_metrics_write(FILE *f, const struct sc_state *st);

/* Subcommands (ops). */
int cmd_gc(int argc, char **argv, const struct sc_opts *o);
int cmd_run(int argc, char **argv, const struct sc_opts *o);
int cmd_apply(int argc, char **argv, const struct sc_opts *o);
int cmd_check(int argc, char **argv, const struct sc_opts *o);

#endif /* SPLITCTL_OPS_H */
