// SPDX-License-Identifier: GPL-2.0
/*
 * settings.c - the live settings: defaults, and the merge of parsed
 * settings (sc_setting_opts in main.c checks each value against the
 * datapath's limits in flowsplit.h) onto a config, with the rules across
 * fields. Used by "set", "attach" and config files alike.
 */
#include <errno.h>
#include <string.h>

#include "splitctl.h"

void sc_config_defaults(struct split_config *cfg, unsigned int hz)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->threshold = FS_DEFAULT_THRESHOLD;
	split_config_set_idle(cfg, FS_DEFAULT_IDLE_MS, hz);
	cfg->dscp_short = FS_DEFAULT_DSCP_SHORT;
	cfg->dscp_long = FS_DEFAULT_DSCP_LONG;
	cfg->flags = FS_DEFAULT_CFG_FLAGS;
}

static bool given(const struct sc_settings *s, enum sc_setting id)
{
	return s->given & (1U << id);
}

/* A flag setting (its table row's bit of flags), when given. */
static void merge_flag(__u32 *flags, const struct sc_settings *s,
		       enum sc_setting id)
{
	__u32 bit = sc_setting_opts[id].bit;

	if (given(s, id))
		*flags = (*flags & ~bit) | (s->v.flags & bit);
}

int sc_settings_merge(struct split_config *cfg, const struct sc_settings *s,
		      unsigned int hz, char *err, size_t errlen)
{
	struct split_config c = *cfg;

	if (given(s, SC_SET_THRESHOLD))
		c.threshold = s->v.threshold;
	if (given(s, SC_SET_IDLE))
		c.idle_timeout_ms = s->v.idle_timeout_ms;
	if (given(s, SC_SET_DSCP_SHORT))
		c.dscp_short = s->v.dscp_short;
	if (given(s, SC_SET_DSCP_LONG))
		c.dscp_long = s->v.dscp_long;
	merge_flag(&c.flags, s, SC_SET_ENABLED);
	merge_flag(&c.flags, s, SC_SET_ACK_SHORT);
	merge_flag(&c.flags, s, SC_SET_MIDSTREAM);
	merge_flag(&c.flags, s, SC_SET_RESHORT_BOUNDARY);
	if (given(s, SC_SET_THRESHOLD_BYTES))
		c.threshold_bytes = s->v.threshold_bytes;
	if (given(s, SC_SET_RESHORT))
		c.reshort_gap_ms = s->v.reshort_gap_ms;
	/* both idle (reshort) fields from one value: they never disagree */
	split_config_set_idle(&c, c.idle_timeout_ms, hz);
	split_config_set_reshort(&c, c.reshort_gap_ms, hz);
	/* an idle flow expires before the gap could apply */
	if (c.reshort_gap_ms && c.reshort_gap_ms >= c.idle_timeout_ms) {
		snprintf(err, errlen, "reshort-gap %u ms is not shorter than idle-timeout %g s: a flow silent that long expires instead",
			 c.reshort_gap_ms, c.idle_timeout_ms / 1000.0);
		return -EINVAL;
	}
	/* the datapath tells the classes apart only by their code points */
	if (c.dscp_short == c.dscp_long) {
		snprintf(err, errlen, "dscp-short and dscp-long would both be %u: they must differ",
			 c.dscp_short);
		return -EINVAL;
	}
	*cfg = c;
	return 0;
}
