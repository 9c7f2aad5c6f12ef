/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dup_agent.h - the agent switches the short class's copy (bpf/dup.bpf.c,
 * "splitctl dup") on while SHORT loses probes and off after it has been
 * clean for a quiet time (docs/design.md, *Duplicating the short class*,
 * "When").
 *
 * Two parts: the decision (dup_ctl_*), pure, on the caller's clock, for
 * the unit test; and the agent's side (dup_agent_*), which reads the
 * probes' loss windows from health (struct health: window_lost of
 * window_len) and writes FS_DUP_F_DUP into the instance's pinned
 * <pin-dir>/dup/fs_dup_config when "dup attach" made one. The agent
 * only ever changes that bit: dedup (FS_DUP_F_DEDUP, the peer's side)
 * stays as attached.
 *
 * SHORT loses when at least DUP_ON_LOST of its probes were lost alone
 * within one loss window's time (loss-window probes at the probe
 * interval): lost while LONG's probes of the same moment (DUP_STEP_NS
 * either side) were answered. A probe lost on both tunnels at once is
 * a stall of the router or of something both paths share, which a copy
 * over LONG does not rescue. LONG losing on its own (its FIFO full of
 * bulk) does not stop the copy: a segment is lost only when both copies
 * are. The copy stays on until no probe was lost alone on SHORT for
 * DUP_QUIET_WINDOWS loss windows: a steady 1 % keeps it on, and the first
 * loss of a new episode finds it on already (docs/design.md,
 * *Duplicating the short class*).
 */
#ifndef HEALTH_DUP_AGENT_H
#define HEALTH_DUP_AGENT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "params.h"

struct health;

/* [dup] copy = auto|on|off (run --dup-copy): the value selects this */
enum dup_copy_mode {
	DUP_COPY_AUTO,		/* on only while SHORT loses (the default) */
	DUP_COPY_ON,		/* always on (the peer must dedup) */
	DUP_COPY_OFF,		/* never: dedup only */
};
const char *dup_copy_mode_name(int mode);

/* The [dup] keys of a config file and, by their cli_name, the options
 * of "run" (--dup-copy): one table (lib/params.h). */
struct dup_settings {
	__u32 given;
	int copy;		/* enum dup_copy_mode */
};
extern const struct sc_option dup_settings_opts[];

void dup_settings_default(struct dup_settings *s);
/* Defaults, file (may be NULL), cli (may be NULL) on top: 0 (every value
 * was checked by its row). */
int dup_settings_resolve(struct dup_settings *out, const struct dup_settings *file,
			 const struct dup_settings *cli);

/* ---- the decision ---- */
enum { DUP_SHORT, DUP_LONG, DUP_TUNNELS };

#define DUP_ON_LOST 2		/* lost alone within a window: one is chance */
#define DUP_QUIET_WINDOWS 6	/* windows without a lone loss: off */
#define DUP_ON_RING 4		/* lone losses remembered (>= DUP_ON_LOST) */

/* What the decision reads of each tunnel's health at a step: its loss
 * window (what status shows), the misses ever counted, and the window's
 * length in time. */
struct dup_loss {
	uint32_t lost[DUP_TUNNELS];
	uint32_t len[DUP_TUNNELS];
	uint64_t missed[DUP_TUNNELS];	/* totals: struct health's missed */
	uint64_t window_ns;		/* loss-window probes x the interval */
};

struct dup_ctl {
	bool losing;		/* SHORT loses now (DUP_ON_LOST in a window) */
	bool want;		/* auto: the copy should be on */
	uint64_t lone_last_ns;	/* the last step SHORT lost alone (0: never) */
	uint64_t lone_ns[DUP_ON_RING];	/* the last lone losses' steps */
	uint32_t lone_pos;
	uint64_t lone_total;	/* probes SHORT lost alone, ever */
	uint64_t quiet_ns;	/* the last step's DUP_QUIET_WINDOWS windows */
	/* per tunnel: misses at the last step, and SHORT's of the step
	 * before (judged once LONG's next step is seen) */
	uint64_t missed_prev[DUP_TUNNELS];
	uint64_t short_pending;
	bool long_lost[2];	/* LONG missed at the previous, the last step */
	bool primed;		/* missed_prev holds a step */
	uint32_t loss_ppm[DUP_TUNNELS];	/* the last step's windows */
	uint32_t lost[DUP_TUNNELS], len[DUP_TUNNELS];
};

void dup_ctl_init(struct dup_ctl *c);
/* One look at the loss at now_ns (> 0, non-decreasing): true when
 * c->want changed. */
bool dup_ctl_tick(struct dup_ctl *c, const struct dup_loss *l, uint64_t now_ns);
/* What the copy should be under mode: on or off. */
bool dup_ctl_copy(const struct dup_ctl *c, int mode);
/* SHORT clean and the copy on: how long until it goes off (else 0). */
uint64_t dup_ctl_quiet_left(const struct dup_ctl *c, uint64_t now_ns);

/* ---- the agent ---- */
#define DUP_STEP_NS 500000000ULL	/* the loss looked at twice a second:
					 * a loss window is seconds long */

/* What status, route show and the metrics show. */
struct dup_view {
	bool running;		/* the agent looks at the loss (probing) */
	bool attached;		/* dup/ pinned in the instance */
	int setting;		/* enum dup_copy_mode */
	bool copy;		/* FS_DUP_F_DUP as last read or written */
	bool losing;		/* SHORT loses (dup_ctl: lost alone) */
	uint32_t loss_ppm[DUP_TUNNELS];
	uint32_t lost[DUP_TUNNELS], len[DUP_TUNNELS];
	uint64_t quiet_left_ns;	/* auto, copy on, SHORT clean: until off */
	uint64_t changes;	/* flag changes the agent made */
	char why[160];		/* the last change's reason */
};

/*
 * The copy flag of the instance in dir (loader/cmd_dup.c,
 * sc_dup_copy_flag()): sets FS_DUP_F_DUP to want (0 or 1; -1 only
 * reads it) and reports it in *copy. 0, -ENOENT (dup not attached),
 * -EADDRNOTAVAIL (want 1 without the LONG peer's address) or -errno.
 */
typedef int (*dup_flag_fn)(const char *dir, int want, bool *copy);

struct dup_agent {
	struct dup_settings s;
	char dir[PATH_MAX];	/* the instance's pin directory */
	dup_flag_fn flag;	/* NULL: no instance, nothing done */
	struct dup_ctl ctl;
	uint64_t next_ns;
	bool warned;		/* a failure to write the flag was logged */
	pthread_mutex_t lock;	/* the view: the HTTP thread reads it */
	struct dup_view view;
};

/* The copy protects the short class from SHORT's loss: dup attached, as
 * of the last step, and the setting not off (auto turns it on as SHORT
 * loses). */
bool dup_agent_covers_loss(struct dup_agent *da);
/* With defaults and no instance: every step does nothing. */
void dup_agent_init(struct dup_agent *da);
/* The settings, the instance and its flag of an initialised agent. */
void dup_agent_configure(struct dup_agent *da, const struct dup_settings *s,
			 const char *pin_dir, dup_flag_fn flag);
/* New settings: true when they differ (applied at the next step). */
bool dup_agent_switch(struct dup_agent *da, const struct dup_settings *next);
/* One step with health's SHORT and LONG (as configured) while they are
 * probed, at most one every DUP_STEP_NS: the copy set as the setting and
 * SHORT's loss say, when dup is attached. swapped: the roles moved the
 * short class onto the configured LONG (roles.h); fs_dup, at the
 * configured SHORT's egress, then has nothing of it to copy, and auto
 * keeps the copy off. True when the flag changed (one log line
 * each time). */
bool dup_agent_step(struct dup_agent *da, const struct health *h_short,
		    const struct health *h_long, bool swapped, uint64_t now_ns);
uint64_t dup_agent_next_ns(const struct dup_agent *da);
void dup_agent_view(struct dup_agent *da, struct dup_view *v);
void dup_agent_close(struct dup_agent *da);

#endif /* HEALTH_DUP_AGENT_H */
