/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.h - the operations side of splitctl: idle sweep, agent, metrics,
 * declarative config files. Uses the core interface of splitctl.h.
 */
#ifndef SPLITCTL_OPS_H
#define SPLITCTL_OPS_H

#include "splitctl.h"

#include <net/if.h>

/*
 * One idle sweep over both flow tables with batch map operations: delete
 * every flow whose last_seen is older than the configured idle timeout
 * (an entry touched just before the timeout survives). Adds the number
 * removed to FLOWS_SWEPT. 0 or -errno.
 */
int sc_gc_sweep(const struct sc_state *st, __u64 *removed);

/* Write every counter, the config and the table fill in Prometheus text
 * exposition format (valid for `promtool check metrics`). 0 or -errno. */
int sc_metrics_write(FILE *f, const struct sc_state *st);

struct health_metrics;
/* Append the tunnel series and flowsplit_failovers_total. */
void sc_metrics_write_health(FILE *f, const struct health_metrics *m);
struct spill_view;
/* Append spill's series (loader/metrics.c, health/spill_agent.h). */
void sc_metrics_write_spill(FILE *f, const struct spill_view *v);
/* The short class's copy: the agent's view and the counters of the
 * instance in dir's dup/ (none while it is not attached). */
struct dup_view;
void sc_metrics_write_dup(FILE *f, const char *dir, const struct dup_view *v);

#endif /* SPLITCTL_OPS_H */
