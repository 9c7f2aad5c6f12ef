// SPDX-License-Identifier: GPL-2.0
/*
 * settings.c - parse and validate the live settings against the datapath's
 * limits (flowsplit.h). Used by "set", the attach options and config files.
 */
#include <errno.h>
#include <stdlib.h>
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

int sc_parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	/* digits only: no sign, no spaces, no hex, no empty string */
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Seconds with up to 3 decimals ("30", "0.5", "0.001") -> milliseconds. */
static int parse_seconds_ms(const char *s, __u64 *ms)
{
	const char *dot = strchr(s, '.');
	char whole[24], frac[4] = "000";
	size_t wl, fl;
	__u64 w, f;

	wl = dot ? (size_t)(dot - s) : strlen(s);
	if (wl == 0 || wl >= sizeof(whole))
		return -1;
	memcpy(whole, s, wl);
	whole[wl] = '\0';
	if (sc_parse_u64(whole, 0, FS_MAX_IDLE_MS / 1000, &w))
		return -1;
	if (dot) {
		fl = strlen(dot + 1);
		if (fl == 0 || fl > 3 || strspn(dot + 1, "0123456789") != fl)
			return -1;
		memcpy(frac, dot + 1, fl);
	}
	f = strtoull(frac, NULL, 10);
	*ms = w * 1000 + f;
	return 0;
}

int sc_setting_apply(struct split_config *cfg, const char *name,
		     const char *value, unsigned int hz, char *err,
		     size_t errlen)
{
	__u64 v;

	if (!strcmp(name, "threshold")) {
		if (sc_parse_u64(value, 0, FS_MAX_THRESHOLD, &v)) {
			snprintf(err, errlen, "threshold: invalid value '%s': accepted: an integer 0..%u (packets)",
				 value, FS_MAX_THRESHOLD);
			return -1;
		}
		cfg->threshold = v;
	} else if (!strcmp(name, "idle-timeout")) {
		if (parse_seconds_ms(value, &v) || v < FS_MIN_IDLE_MS ||
		    v > FS_MAX_IDLE_MS) {
			snprintf(err, errlen, "idle-timeout: invalid value '%s': accepted: seconds %g..%u, at most 3 decimals",
				 value, FS_MIN_IDLE_MS / 1000.0, FS_MAX_IDLE_MS / 1000);
			return -1;
		}
		split_config_set_idle(cfg, v, hz);
	} else if (!strcmp(name, "dscp-short") || !strcmp(name, "dscp-long")) {
		if (sc_parse_u64(value, 0, FS_DSCP_MAX, &v)) {
			snprintf(err, errlen, "%s: invalid DSCP '%s': accepted: an integer 0..%d",
				 name, value, FS_DSCP_MAX);
			return -1;
		}
		if (name[5] == 's')
			cfg->dscp_short = v;
		else
			cfg->dscp_long = v;
	} else if (!strcmp(name, "enabled") || !strcmp(name, "ack-short")) {
		__u32 flag = !strcmp(name, "enabled") ? FS_CFG_F_ENABLED : FS_CFG_F_ACK_SHORT;

		if (!strcmp(value, "yes") || !strcmp(value, "1"))
			cfg->flags |= flag;
		else if (!strcmp(value, "no") || !strcmp(value, "0"))
			cfg->flags &= ~flag;
		else {
			snprintf(err, errlen, "%s: invalid value '%s': accepted: yes, no, 1, 0",
				 name, value);
			return -1;
		}
	} else {
		snprintf(err, errlen, "unknown setting '%s': accepted: " SC_SETTING_NAMES,
			 name);
		return -1;
	}
	return 0;
}
