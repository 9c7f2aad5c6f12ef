// SPDX-License-Identifier: GPL-2.0
/*
 * settings.c - the live settings: their table (the attach options -t -i
 * -s -l..., the "set" names and the [splitter] keys: each value checked
 * once against the datapath's limits in flowsplit.h), the defaults, the
 * merge of parsed settings onto a config with the rules across fields,
 * and the config as status and set print it (and what reshort does,
 * as status and doctor say it). Used by "set", "attach" and
 * config files alike.
 */
#include <errno.h>
#include <string.h>

#include "commands.h"

/* midstream: the value selects the bit FS_CFG_F_MIDSTREAM_LONG */
static const struct sc_enum midstream_values[] = {
	{ "short", 0 }, { "long", 1 }, { NULL, 0 },
};

/* reshort: the value selects the bit FS_CFG_F_RESHORT_BOUNDARY */
static const struct sc_enum reshort_values[] = {
	{ "off", 0 }, { "boundary", 1 }, { NULL, 0 },
};

/* spill: the value selects the bit FS_CFG_F_SPILL */
/* The live settings: attach options (-t -i -s -l), "set" names, and keys
 * of [splitter]. Indexed by enum sc_setting (its given bit). */
const struct sc_option sc_setting_opts[] = {
	[SC_SET_THRESHOLD] =
		SC_OPTION("threshold", SC_OPT_UINT, struct sc_settings, v.threshold,
			  .short_opt = 't', .metavar = "N", .help = "packets per flow marked short",
			  .lo = 0, .hi = FS_MAX_THRESHOLD),
	[SC_SET_IDLE] = SC_OPTION("idle-timeout", SC_OPT_MSEC, struct sc_settings,
				  v.idle_timeout_ms, .short_opt = 'i', .metavar = "S",
				  .help = "seconds of silence that end a flow",
				  .lo = FS_MIN_IDLE_MS, .hi = FS_MAX_IDLE_MS),
	[SC_SET_DSCP_SHORT] = SC_OPTION("dscp-short", SC_OPT_DSCP, struct sc_settings, v.dscp_short,
					.short_opt = 's', .metavar = "V", .noun = "DSCP",
					.help = "code point for short flows"),
	[SC_SET_DSCP_LONG] =
		SC_OPTION("dscp-long", SC_OPT_DSCP, struct sc_settings, v.dscp_long,
			  .short_opt = 'l', .metavar = "V", .noun = "DSCP",
			  .help = "code point for long flows (must differ from dscp-short)"),
	[SC_SET_ENABLED] = SC_OPTION("enabled", SC_OPT_YESNO, struct sc_settings, v.flags,
				     .bit = FS_CFG_F_ENABLED, .metavar = "yes|no", .key_only = true,
				     .help = "classify and mark; no: pass every packet untouched"),
	[SC_SET_ACK_SHORT] =
		SC_OPTION("ack-short", SC_OPT_YESNO, struct sc_settings, v.flags,
			  .bit = FS_CFG_F_ACK_SHORT, .metavar = "yes|no", .key_only = true,
			  .help = "pure ACKs of long flows keep the short code point"),
	[SC_SET_THRESHOLD_BYTES] =
		SC_OPTION("threshold-bytes", SC_OPT_UINT, struct sc_settings, v.threshold_bytes,
			  .metavar = "N",
			  .help = "TCP payload bytes per flow marked short; long at whichever "
				  "threshold is reached first (0: none)",
			  .lo = 0, .hi = FS_MAX_THRESHOLD_BYTES),
	[SC_SET_RESHORT] = SC_OPTION("reshort-gap", SC_OPT_UINT, struct sc_settings,
				     v.reshort_gap_ms, .metavar = "MS",
				     .help = "milliseconds of silence after which a flow counts as "
					     "short again, its entry kept (0: off)",
				     .lo = 0, .hi = FS_MAX_RESHORT_MS),
	[SC_SET_MIDSTREAM] = SC_OPTION("midstream", SC_OPT_ENUM, struct sc_settings, v.flags,
				       .bit = FS_CFG_F_MIDSTREAM_LONG, .values = midstream_values,
				       .metavar = "short|long", .key_only = true,
				       .help = "class of a flow first seen without a SYN (evicted, "
					       "swept, after a restart)"),
	[SC_SET_RESHORT_BOUNDARY] = SC_OPTION(
		"reshort", SC_OPT_ENUM, struct sc_settings, v.flags,
		.bit = FS_CFG_F_RESHORT_BOUNDARY, .values = reshort_values,
		.metavar = "boundary|off",
		.help = "boundary (default): a flow counts as short again when it starts a new "
			"message after all it sent was acknowledged (cannot reorder)"),
	[SC_SET_SPILL] = SC_OPTION("spill", SC_OPT_YESNO, struct sc_settings, v.flags,
				   .bit = FS_CFG_F_SPILL, .metavar = "yes|no",
				   .help = "yes (default): long flows may use the SHORT tunnel's "
					   "spare capacity behind short traffic, one at a time, as "
					   "the agent grants (run); no: none does"),
	[SC_SET_DSCP_SPILL] = SC_OPTION(
		"dscp-spill", SC_OPT_DSCP, struct sc_settings, v.dscp_spill, .metavar = "V",
		.noun = "DSCP",
		.help = "code point of spilled long flows (default 2; must differ from dscp-short "
			"and dscp-long, and from dscp-long in its low 3 bits)"),
	SC_OPTIONS_END,
};

void sc_config_defaults(struct split_config *cfg, unsigned int hz)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->threshold = FS_DEFAULT_THRESHOLD;
	split_config_set_idle(cfg, FS_DEFAULT_IDLE_MS, hz);
	cfg->dscp_short = FS_DEFAULT_DSCP_SHORT;
	cfg->dscp_long = FS_DEFAULT_DSCP_LONG;
	cfg->dscp_spill = FS_DEFAULT_DSCP_SPILL;
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

/* True (err filled) when the code point @dscp of the class @name is the
 * same as LONG's @dscp_long to a tos rule selector (TOS & FS_TOS_RULE_MASK:
 * the values modulo 8): such packets would match LONG's rule. */
static bool tos_alike(unsigned int dscp, const char *name, unsigned int dscp_long,
		      char *err, size_t errlen)
{
	unsigned int m = (FS_DSCP_TO_TOS(dscp_long) & FS_TOS_RULE_MASK) >> FS_DSCP_SHIFT;

	if ((FS_DSCP_TO_TOS(dscp) & FS_TOS_RULE_MASK) !=
	    (FS_DSCP_TO_TOS(dscp_long) & FS_TOS_RULE_MASK))
		return false;
	snprintf(err, errlen,
		 "dscp-%s %u and dscp-long %u look alike to a tos rule selector (TOS & 0x%02x: the "
		 "same value modulo 8), which would send %s packets LONG: give dscp-%s a code "
		 "point whose value modulo 8 is not %u",
		 name, dscp, dscp_long, FS_TOS_RULE_MASK, !strcmp(name, "spill") ? "spilled" : name,
		 name, m);
	return true;
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
	if (given(s, SC_SET_DSCP_SPILL))
		c.dscp_spill = s->v.dscp_spill;
	merge_flag(&c.flags, s, SC_SET_ENABLED);
	merge_flag(&c.flags, s, SC_SET_ACK_SHORT);
	merge_flag(&c.flags, s, SC_SET_MIDSTREAM);
	merge_flag(&c.flags, s, SC_SET_RESHORT_BOUNDARY);
	merge_flag(&c.flags, s, SC_SET_SPILL);
	if (given(s, SC_SET_THRESHOLD_BYTES))
		c.threshold_bytes = s->v.threshold_bytes;
	if (given(s, SC_SET_RESHORT))
		c.reshort_gap_ms = s->v.reshort_gap_ms;
	/* both idle (reshort) fields from one value: they never disagree */
	split_config_set_idle(&c, c.idle_timeout_ms, hz);
	split_config_set_reshort(&c, c.reshort_gap_ms, hz);
	/* an idle flow expires before the gap could apply */
	if (c.reshort_gap_ms && c.reshort_gap_ms >= c.idle_timeout_ms) {
		snprintf(err, errlen,
			 "reshort-gap %u ms is not shorter than idle-timeout %g s: a flow silent "
			 "that long expires instead",
			 c.reshort_gap_ms, c.idle_timeout_ms / 1000.0);
		return -EINVAL;
	}
	/* the datapath tells the classes apart only by their code points */
	if (c.dscp_short == c.dscp_long) {
		snprintf(err, errlen, "dscp-short and dscp-long would both be %u: they must differ",
			 c.dscp_short);
		return -EINVAL;
	}
	/* spilled packets are told from both by theirs (even with spill off:
	 * turning it on changes no code point) */
	if (c.dscp_spill == c.dscp_short || c.dscp_spill == c.dscp_long) {
		snprintf(err, errlen,
			 "dscp-spill and dscp-%s would both be %u: they must differ (give "
			 "dscp-spill another code point)",
			 c.dscp_spill == c.dscp_short ? "short" : "long", c.dscp_spill);
		return -EINVAL;
	}
	/* LONG's rule with the tos selector (route up on kernels without the
	 * DSCP one) sees only TOS & 0x1c, the DSCP's low 3 bits: a short or
	 * spilled packet alike to it would go LONG. Checked whatever routes
	 * are installed now: a later route up may pick that selector. */
	if (tos_alike(c.dscp_short, "short", c.dscp_long, err, errlen) ||
	    tos_alike(c.dscp_spill, "spill", c.dscp_long, err, errlen))
		return -EINVAL;
	*cfg = c;
	return 0;
}

/* The config object; text: PRINT_FP (status) or 0 (set: JSON only). */
void sc_print_config(const struct split_config *c, enum output_type text)
{
	enum output_type any = PRINT_JSON | text;

	open_json_object("config");
	print_uint(any, "threshold", "config: threshold %llu packets", c->threshold);
	print_uint(PRINT_JSON, "idle_timeout_ms", NULL, c->idle_timeout_ms);
	print_float(text, NULL, ", idle-timeout %g s", c->idle_timeout_ms / 1000.0);
	print_uint(any, "dscp_short", ", dscp-short %llu", c->dscp_short);
	print_uint(any, "dscp_long", ", dscp-long %llu", c->dscp_long);
	print_bool(PRINT_JSON, "enabled", NULL, c->flags & FS_CFG_F_ENABLED);
	print_bool(any, "ack_short", ", ack-short %s", c->flags & FS_CFG_F_ACK_SHORT);
	print_string(any, "midstream", ", midstream %s",
		     c->flags & FS_CFG_F_MIDSTREAM_LONG ? "long" : "short");
	print_string(text, NULL, ", %s",
		     c->flags & FS_CFG_F_ENABLED ? "enabled" : "disabled");
	if (text)
		print_nl();
	print_uint(any, "threshold_bytes", "config: threshold-bytes %llu", c->threshold_bytes);
	print_string(text, NULL, "%s", c->threshold_bytes ? "" : " (none)");
	print_string(any, "reshort", ", reshort %s",
		     c->flags & FS_CFG_F_RESHORT_BOUNDARY ? "boundary" : "off");
	print_uint(any, "reshort_gap_ms", ", reshort-gap %llu ms", c->reshort_gap_ms);
	print_string(text, NULL, "%s", c->reshort_gap_ms ? "" : " (off)");
	print_uint(any, "rules_ipv4", ", rules: ipv4 %llu", c->rules4);
	print_uint(any, "rules_ipv6", ", ipv6 %llu", c->rules6);
	if (text)
		print_nl();
	print_bool(any, "spill", "config: spill %s", c->flags & FS_CFG_F_SPILL);
	print_uint(any, "dscp_spill", ", dscp-spill %llu", c->dscp_spill);
	if (text)
		print_nl();
	close_json_object();
}

/* What reshort does where the observer records ACKs: message boundaries,
 * or only what the config does without them (observer false). */
void sc_reshort_text(const struct split_config *c, bool observer, char *buf, size_t len)
{
	bool boundary = (c->flags & FS_CFG_F_RESHORT_BOUNDARY) && observer;

	if (boundary && c->reshort_gap_ms)
		snprintf(buf, len,
			 "at a message boundary (all the flow sent was acknowledged: cannot "
			 "reorder) and after a silence over %u ms (reshort-gap: safe only above "
			 "the tunnels' delay difference)",
			 c->reshort_gap_ms);
	else if (boundary)
		snprintf(buf, len,
			 "at a message boundary: a data segment sent after all the flow sent was "
			 "acknowledged (cannot reorder; reshort boundary, the default)");
	else if (c->reshort_gap_ms)
		snprintf(buf, len,
			 "after a silence over %u ms only (%s, reshort-gap %u: safe only above the "
			 "tunnels' delay difference)",
			 c->reshort_gap_ms, observer ? "reshort off" : "no ACKs seen",
			 c->reshort_gap_ms);
	else
		snprintf(buf, len,
			 "never: a long flow stays long until idle-timeout (%s, reshort-gap 0)",
			 observer ? "reshort off" : "no ACKs seen");
}
