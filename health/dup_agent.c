// SPDX-License-Identifier: GPL-2.0
/*
 * dup_agent.c - the agent's side of the short class's copy (dup_agent.h):
 * the [dup] settings, and the step that sets the copy flag of the
 * instance (through dup_flag_fn: loader/cmd_dup.c owns the pins) as the
 * setting and SHORT's loss say. The flag is read each step, so an attach
 * or detach while the agent runs is followed; the agent never creates
 * or removes a pin.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dup_agent.h"
#include "health.h"
#include "util.h"

static const struct sc_enum copy_values[] = {
	{ "auto", DUP_COPY_AUTO }, { "on", DUP_COPY_ON }, { "off", DUP_COPY_OFF }, { NULL, 0 },
};

const char *dup_copy_mode_name(int mode)
{
	const struct sc_enum *e;

	for (e = copy_values; e->name; e++)
		if (e->val == mode)
			return e->name;
	return "?";
}

const struct sc_option dup_settings_opts[] = {
	SC_OPTION("copy", SC_OPT_ENUM, struct dup_settings, copy, .cli_name = "dup-copy",
		  .values = copy_values, .metavar = "auto|on|off",
		  .help = "copy the short class onto LONG (dup attach): auto while SHORT loses "
			  "probes, on, off (default auto)"),
	SC_OPTIONS_END,
};

void dup_settings_default(struct dup_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->copy = DUP_COPY_AUTO;
}

int dup_settings_resolve(struct dup_settings *out, const struct dup_settings *file,
			 const struct dup_settings *cli)
{
	dup_settings_default(out);
	sc_options_layer(dup_settings_opts, out, file, cli);
	return 0;
}

void dup_agent_init(struct dup_agent *da)
{
	memset(da, 0, sizeof(*da));
	dup_settings_default(&da->s);
	dup_ctl_init(&da->ctl);
	pthread_mutex_init(&da->lock, NULL);
	da->view.setting = da->s.copy;
}

void dup_agent_configure(struct dup_agent *da, const struct dup_settings *s,
			 const char *pin_dir, dup_flag_fn flag)
{
	da->s = *s;
	snprintf(da->dir, sizeof(da->dir), "%s", pin_dir);
	da->flag = flag;
	da->next_ns = 0;
	pthread_mutex_lock(&da->lock);
	da->view.setting = s->copy;
	pthread_mutex_unlock(&da->lock);
}

bool dup_agent_switch(struct dup_agent *da, const struct dup_settings *next)
{
	if (da->s.copy == next->copy)
		return false;
	da->s = *next;
	da->next_ns = 0;	/* applied at the next step */
	pr_info("run: dup: copy setting now %s", dup_copy_mode_name(next->copy));
	return true;
}

uint64_t dup_agent_next_ns(const struct dup_agent *da)
{
	return da->flag ? da->next_ns : UINT64_MAX;
}

void dup_agent_view(struct dup_agent *da, struct dup_view *v)
{
	pthread_mutex_lock(&da->lock);
	*v = da->view;
	pthread_mutex_unlock(&da->lock);
}

void dup_agent_close(struct dup_agent *da)
{
	pthread_mutex_destroy(&da->lock);
}

/* Why the copy is what it should be now, for the log and the view. */
static void reason(const struct dup_agent *da, bool on, char *buf, size_t len)
{
	const struct dup_ctl *c = &da->ctl;

	if (da->s.copy != DUP_COPY_AUTO)
		snprintf(buf, len, "setting copy = %s", dup_copy_mode_name(da->s.copy));
	else if (on && c->losing)
		snprintf(buf, len,
			 "SHORT lost %u of %u probes (%.1f %%), LONG %u of %u (%.1f %%); "
			 "%u or more lost alone within a window",
			 c->lost[DUP_SHORT], c->len[DUP_SHORT], c->loss_ppm[DUP_SHORT] / 1e4,
			 c->lost[DUP_LONG], c->len[DUP_LONG], c->loss_ppm[DUP_LONG] / 1e4,
			 DUP_ON_LOST);
	else if (on)
		snprintf(buf, len, "SHORT lost a probe alone within the last %.0f s",
			 c->quiet_ns / 1e9);
	else
		snprintf(buf, len, "SHORT clean for %.0f s (lost %u of %u probes)",
			 c->quiet_ns / 1e9, c->lost[DUP_SHORT], c->len[DUP_SHORT]);
}

bool dup_agent_step(struct dup_agent *da, const struct health *h_short,
		    const struct health *h_long, bool swapped, uint64_t now_ns)
{
	struct dup_loss l = {
		.lost = { h_short->window_lost, h_long->window_lost },
		.len = { h_short->window_len, h_long->window_len },
		.missed = { h_short->missed, h_long->missed },
		.window_ns = h_short->params.loss_window * h_short->params.interval_ns,
	};
	struct dup_view v;
	const char *fail = NULL;
	bool want, changed = false;
	int err;

	if (!da->flag || now_ns < da->next_ns)
		return false;
	da->next_ns = now_ns + DUP_STEP_NS;
	dup_ctl_tick(&da->ctl, &l, now_ns);
	want = dup_ctl_copy(&da->ctl, da->s.copy) && !(swapped && da->s.copy == DUP_COPY_AUTO);
	dup_agent_view(da, &v);
	v.running = true;
	v.setting = da->s.copy;
	v.losing = da->ctl.losing;
	memcpy(v.loss_ppm, da->ctl.loss_ppm, sizeof(v.loss_ppm));
	memcpy(v.lost, da->ctl.lost, sizeof(v.lost));
	memcpy(v.len, da->ctl.len, sizeof(v.len));
	v.quiet_left_ns = da->s.copy == DUP_COPY_AUTO ? dup_ctl_quiet_left(&da->ctl, now_ns) : 0;
	err = da->flag(da->dir, -1, &v.copy);
	v.attached = err != -ENOENT;
	if (!err && v.copy != want) {
		err = da->flag(da->dir, want, &v.copy);
		if (!err) {
			v.changes++;
			reason(da, want, v.why, sizeof(v.why));
			if (!want && swapped && da->s.copy == DUP_COPY_AUTO)
				snprintf(v.why, sizeof(v.why),
					 "the roles moved the short class onto LONG: nothing of it "
					 "leaves SHORT to copy");
			pr_info("run: dup: copy %s: %s", want ? "on" : "off", v.why);
			changed = true;
		}
	}
	if (err == -EADDRNOTAVAIL)
		fail = "no LONG peer address for the copies ('dup attach --peer-mac MAC')";
	if (err && err != -ENOENT && !da->warned)
		pr_warn("run: dup: the copy should be %s, but %s", want ? "on" : "off",
			fail ? fail : strerror(-err));
	da->warned = err && err != -ENOENT;
	if (err && err != -ENOENT && !fail)
		fail = strerror(-err);
	if (!v.attached)
		snprintf(v.why, sizeof(v.why), "dup not attached ('splitctl dup attach')");
	else if (fail)
		snprintf(v.why, sizeof(v.why), "should be %s: %s", want ? "on" : "off", fail);
	else if (swapped && da->s.copy == DUP_COPY_AUTO)
		snprintf(v.why, sizeof(v.why),
			 "the roles moved the short class onto LONG: nothing of it leaves SHORT to "
			 "copy");
	else
		reason(da, v.copy, v.why, sizeof(v.why));
	pthread_mutex_lock(&da->lock);
	da->view = v;
	pthread_mutex_unlock(&da->lock);
	return changed;
}

bool dup_agent_covers_loss(struct dup_agent *da)
{
	bool covers;

	pthread_mutex_lock(&da->lock);
	covers = da->flag && da->view.attached && da->s.copy != DUP_COPY_OFF;
	pthread_mutex_unlock(&da->lock);
	return covers;
}
