// SPDX-License-Identifier: GPL-2.0
/*
 * ha.c - "ha set|show|clear": the router's role in an HA pair (docs/ha.md).
 *
 * keepalived elects the active router; its notify script tells splitctl
 * ("splitctl ha set active --vrrp site --pid $PPID"). The report is this
 * network namespace's file TCFG_STATE_DIR/ha-<netns inode>, one "KEY
 * VALUE" per line (role, previous, since in CLOCK_REALTIME ns, changes,
 * vrrp, pid and the start time of that process), replaced whole under
 * tunnel-cfg's state lock. "since" moves only when the role changes, and
 * each change is one log line (stdout and syslog). A report whose
 * keepalived process is gone (its PID absent, or reused: the start time
 * differs) says nothing any more: the role is unknown.
 *
 * What reads it: status (sc_ha_print), doctor (sc_ha_healthy), the metrics
 * (sc_ha_metrics_write). No report, no HA: none of them changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "agent_lock.h"
#include "commands.h"
#include "ha.h"
#include "tcfg.h"

static const char *const role_names[SC_HA_ROLES] = {
	[SC_HA_ACTIVE] = "active",   [SC_HA_BACKUP] = "backup",	  [SC_HA_FAULT] = "fault",
	[SC_HA_STOPPED] = "stopped", [SC_HA_UNKNOWN] = "unknown",
};

/* what "ha set" accepts: every role but unknown (a reader's conclusion) */
static const struct sc_enum set_roles[] = {
	{"active", SC_HA_ACTIVE},
	{"backup", SC_HA_BACKUP},
	{"fault", SC_HA_FAULT},
	{"stopped", SC_HA_STOPPED},
	{NULL},
};

const char *sc_ha_role_name(enum sc_ha_role r)
{
	return r < SC_HA_ROLES ? role_names[r] : "unknown";
}

static int role_parse(const char *s, enum sc_ha_role *r)
{
	int i;

	for (i = 0; i < SC_HA_ROLES; i++)
		if (!strcmp(s, role_names[i])) {
			*r = i;
			return 0;
		}
	return -EINVAL;
}

static int ha_path(char *buf, size_t len)
{
	struct tcfg_err e;

	return tcfg_state_path(buf, len, "ha", "", &e);
}

/* A process's start time (clock ticks since boot, /proc/PID/stat field
 * 22): 0 when it does not exist. Tells a live PID from a reused one. */
static unsigned long long proc_start(int pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024], *p;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		/* after the command name, which may hold spaces: field 3 on */
		p = strrchr(buf, ')');
		for (i = 2; p && i < 22; i++)
			p = strchr(p + 1, ' ');
		if (p)
			start = strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return start;
}

/* The report as written: 0, -ENOENT, or -EINVAL (why says what is wrong). */
static int ha_load(struct sc_ha *h, unsigned long long *start)
{
	char path[TCFG_STATE_PATH_MAX], line[256], key[32], val[128];
	bool has_role = false;
	FILE *f;
	int err = 0;

	memset(h, 0, sizeof(*h));
	h->role = h->previous = SC_HA_UNKNOWN;
	*start = 0;
	if (ha_path(path, sizeof(path)))
		return -errno ?: -EIO;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %127s", key, val) != 2)
			err = -EINVAL;
		else if (!strcmp(key, "role"))
			err = role_parse(val, &h->role), has_role = !err;
		else if (!strcmp(key, "previous"))
			err = role_parse(val, &h->previous);
		else if (!strcmp(key, "since"))
			h->since_ns = strtoull(val, NULL, 10);
		else if (!strcmp(key, "changes"))
			h->changes = strtoull(val, NULL, 10);
		else if (!strcmp(key, "vrrp") && strlen(val) < sizeof(h->vrrp))
			memcpy(h->vrrp, val, strlen(val) + 1);
		else if (!strcmp(key, "pid"))
			h->pid = atoi(val);
		else if (!strcmp(key, "pid_start"))
			*start = strtoull(val, NULL, 10);
	}
	fclose(f);
	if (!err && !has_role)
		err = -EINVAL;
	if (err) {
		h->role = SC_HA_UNKNOWN;
		snprintf(h->why, sizeof(h->why), "the report %s is unreadable", path);
	}
	return err;
}

int sc_ha_read(struct sc_ha *h)
{
	unsigned long long start;
	int err = ha_load(h, &start);

	if (err)
		return err;
	if (h->pid > 0 && proc_start(h->pid) != start) {
		snprintf(h->why, sizeof(h->why), "keepalived (pid %d), which reported %s, is gone",
			 h->pid, role_names[h->role]);
		h->role = SC_HA_UNKNOWN;
	}
	return 0;
}

bool sc_ha_healthy(const struct sc_ha *h, int agent_pid, char *why, size_t whylen, const char **fix)
{
	*fix = "";
	switch (h->role) {
	case SC_HA_ACTIVE:
		if (agent_pid)
			break;
		snprintf(why, whylen, "the active router runs no agent: no failover, no spill");
		*fix = "the notify script starts it (splitctl run); see docs/ha.md";
		return false;
	case SC_HA_BACKUP:
		if (!agent_pid)
			break;
		snprintf(why, whylen,
			 "a standby runs an agent (pid %d): it acts on tunnels it does not carry",
			 agent_pid);
		*fix = "stop it (the notify script stops the agent on BACKUP); see docs/ha.md";
		return false;
	case SC_HA_FAULT:
		snprintf(why, whylen, "keepalived reports a fault: this router cannot take over");
		*fix = "see keepalived's log (a tracked interface or script failed)";
		return false;
	case SC_HA_STOPPED:
		snprintf(why, whylen, "keepalived stopped: this router is out of the pair");
		*fix = "start keepalived (or 'splitctl ha clear' where HA is no longer used)";
		return false;
	default:
		snprintf(why, whylen, "%s", h->why[0] ? h->why : "the role is unknown");
		*fix = "start keepalived; its notify script reports the role (splitctl ha set)";
		return false;
	}
	why[0] = '\0';
	return true;
}

/* The one output of a report: the "ha" object (status, ha show). */
static void ha_print(const struct sc_ha *h, int agent_pid)
{
	char since[32] = "", why[256];
	const char *fix;
	time_t t = h->since_ns / FS_NS_PER_S;
	struct tm tm;
	bool ok = sc_ha_healthy(h, agent_pid, why, sizeof(why), &fix);
	time_t now = time(NULL);

	if (h->since_ns && gmtime_r(&t, &tm))
		strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	open_json_object("ha");
	print_string(PRINT_ANY, "role", "ha: %s", role_names[h->role]);
	print_string(PRINT_JSON, "previous", NULL, role_names[h->previous]);
	print_string(PRINT_JSON, "vrrp", NULL, h->vrrp);
	if (h->vrrp[0])
		print_string(PRINT_FP, NULL, " (vrrp %s)", h->vrrp);
	print_uint(PRINT_JSON, "since_unix_ms", NULL, h->since_ns / FS_NS_PER_MS);
	print_uint(PRINT_JSON, "for_s", NULL, since[0] && now > t ? (__u64)(now - t) : 0);
	if (since[0])
		print_string(PRINT_FP, NULL, " since %s", since);
	if (since[0])
		print_uint(PRINT_FP, NULL, " (%llu s)", now > t ? (__u64)(now - t) : 0);
	print_uint(PRINT_ANY, "changes", ", %llu change(s)", h->changes);
	print_int(PRINT_JSON, "keepalived_pid", NULL, h->pid);
	print_bool(PRINT_JSON, "healthy", NULL, ok);
	print_string(PRINT_JSON, "why", NULL, why);
	print_string(PRINT_FP, NULL, ": %s\n", ok ? "healthy" : why);
	close_json_object();
}

void sc_ha_print(int agent_pid)
{
	struct sc_ha h;

	if (sc_ha_read(&h) == -ENOENT)
		return;
	ha_print(&h, agent_pid);
}

void sc_ha_metrics_write(FILE *f)
{
	struct sc_ha h;
	int i;

	if (sc_ha_read(&h) == -ENOENT)
		return;
	fprintf(f, "# HELP flowsplit_ha_role The router's role in its HA pair (keepalived's last "
		   "report, splitctl ha set): 1 for the role it has.\n"
		   "# TYPE flowsplit_ha_role gauge\n");
	for (i = 0; i < SC_HA_ROLES; i++)
		fprintf(f, "flowsplit_ha_role{vrrp=\"%s\",role=\"%s\"} %d\n", h.vrrp, role_names[i],
			h.role == (enum sc_ha_role)i);
	fprintf(f,
		"# HELP flowsplit_ha_role_changes_total Role changes keepalived reported.\n"
		"# TYPE flowsplit_ha_role_changes_total counter\n"
		"flowsplit_ha_role_changes_total{vrrp=\"%s\"} %llu\n",
		h.vrrp, (unsigned long long)h.changes);
	fprintf(f,
		"# HELP flowsplit_ha_role_since_timestamp_seconds When the role last changed "
		"(Unix time).\n# TYPE flowsplit_ha_role_since_timestamp_seconds gauge\n"
		"flowsplit_ha_role_since_timestamp_seconds{vrrp=\"%s\"} %.3f\n",
		h.vrrp, h.since_ns / 1e9);
}

/* ---- the commands ------------------------------------------------------- */

struct sc_ha_set_args {
	__u32 given;
	int role;
	const char *vrrp;
	__u32 pid;
};

/* keepalived's instance names, kept to what a Prometheus label and a
 * "KEY VALUE" line hold as they are */
static int check_vrrp(const struct sc_option *o, void *member, const char *value, char *why,
		      size_t whylen)
{
	size_t n = strlen(value);

	(void)o;
	(void)member;
	if (n < 64 && strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_.-") == n)
		return 0;
	snprintf(why, whylen,
		 "invalid VRRP instance name '%s': accepted: 1..63 letters, digits, '_', '.', '-'",
		 value);
	return -EINVAL;
}

static const struct sc_option ha_set_opts[] = {
	SC_OPTION("role", SC_OPT_ENUM, struct sc_ha_set_args, role, .positional = true,
		  .values = set_roles, .noun = "role", .required = true),
	SC_OPTION("vrrp", SC_OPT_STRING, struct sc_ha_set_args, vrrp, .metavar = "NAME",
		  .check = check_vrrp,
		  .help = "keepalived's VRRP instance (the notify script's NAME argument)"),
	SC_OPTION("pid", SC_OPT_UINT, struct sc_ha_set_args, pid, .metavar = "PID", .lo = 1,
		  .hi = 4194304,
		  .help = "the keepalived process reporting (the notify script's $PPID): the "
			  "role is unknown once it is gone"),
	SC_OPTIONS_END,
};

static int cmd_ha_set(const struct sc_call *c)
{
	const struct sc_ha_set_args *a = c->args;
	char path[TCFG_STATE_PATH_MAX], line[160] = "";
	unsigned long long start = 0, old_start;
	struct tcfg_err e = {""};
	struct out_file of;
	struct sc_ha old, h;
	struct timespec ts;
	int lock, err;
	bool changed;

	if (ha_path(path, sizeof(path))) {
		pr_err("cannot name the HA report: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	if (a->pid) {
		start = proc_start(a->pid);
		if (!start) {
			pr_err("ha set: --pid %u: no such process (accepted: the running "
			       "keepalived process)",
			       a->pid);
			return FS_EXIT_USAGE;
		}
	}
	lock = tcfg_lock(&e);
	if (lock < 0) {
		pr_err("%s", e.msg);
		return FS_EXIT_RUNTIME;
	}
	err = ha_load(&old, &old_start);
	if (err == -ENOENT)
		old.role = SC_HA_UNKNOWN;
	h = old;
	h.role = a->role;
	changed = err || old.role != h.role;
	if (changed) {
		clock_gettime(CLOCK_REALTIME, &ts);
		h.previous = err ? SC_HA_UNKNOWN : old.role;
		h.since_ns = (__u64)ts.tv_sec * FS_NS_PER_S + ts.tv_nsec;
		h.changes = err ? 1 : old.changes + 1;
	}
	if (a->vrrp)
		snprintf(h.vrrp, sizeof(h.vrrp), "%s", a->vrrp);
	h.pid = a->pid;
	err = out_file_open(&of, path, 0644);
	if (!err) {
		fprintf(of.f, "role %s\nprevious %s\nsince %llu\nchanges %llu\n",
			role_names[h.role], role_names[h.previous], (unsigned long long)h.since_ns,
			(unsigned long long)h.changes);
		if (h.vrrp[0])
			fprintf(of.f, "vrrp %s\n", h.vrrp);
		if (h.pid)
			fprintf(of.f, "pid %d\npid_start %llu\n", h.pid, start);
		err = out_file_commit(&of);
	}
	tcfg_unlock(lock);
	if (err) {
		pr_err("cannot write %s: %s", path, strerror(-err));
		return FS_EXIT_RUNTIME;
	}
	/* one log line per change */
	if (changed) {
		snprintf(line, sizeof(line), "ha: role %s -> %s%s%s", role_names[h.previous],
			 role_names[h.role], h.vrrp[0] ? " (vrrp " : "", h.vrrp[0] ? h.vrrp : "");
		if (h.vrrp[0])
			strncat(line, ")", sizeof(line) - strlen(line) - 1);
		openlog("flowsplit", LOG_PID, LOG_DAEMON);
		syslog(LOG_NOTICE, "%s", line);
		closelog();
	}
	open_json_object(NULL);
	print_string(PRINT_JSON, "role", NULL, role_names[h.role]);
	print_string(PRINT_JSON, "previous", NULL, role_names[h.previous]);
	print_bool(PRINT_JSON, "changed", NULL, changed);
	if (changed)
		print_string(PRINT_FP, NULL, "%s\n", line);
	close_json_object();
	return FS_EXIT_OK;
}

static int cmd_ha_show(const struct sc_call *c)
{
	struct sc_ha h;
	int err = sc_ha_read(&h);

	(void)c;
	open_json_object(NULL);
	print_bool(PRINT_JSON, "configured", NULL, err != -ENOENT);
	if (err == -ENOENT)
		print_text("ha: not configured (no role reported: 'splitctl ha set' from "
			   "keepalived's notify script)\n");
	else
		ha_print(&h, agent_lock_holder());
	close_json_object();
	return FS_EXIT_OK;
}

static int cmd_ha_clear(const struct sc_call *c)
{
	char path[TCFG_STATE_PATH_MAX];
	int r;

	(void)c;
	if (ha_path(path, sizeof(path))) {
		pr_err("cannot name the HA report: %s", strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	r = unlink(path);
	if (r && errno != ENOENT) {
		pr_err("cannot remove %s: %s", path, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	open_json_object(NULL);
	print_bool(PRINT_JSON, "removed", NULL, !r);
	print_text("ha: not configured\n");
	close_json_object();
	return FS_EXIT_OK;
}

static const struct sc_cmd sc_cmd_ha_set =
	SC_CMD("set", cmd_ha_set, "ROLE",
	       "record the role keepalived reports (active|backup|fault|stopped); one log line "
	       "per change",
	       ha_set_opts, struct sc_ha_set_args);
static const struct sc_cmd sc_cmd_ha_show =
	SC_CMD("show", cmd_ha_show, "", "the role, since when, and whether it is healthy",
	       sc_no_opts, struct sc_no_args);
static const struct sc_cmd sc_cmd_ha_clear =
	SC_CMD("clear", cmd_ha_clear, "", "forget the role (HA no longer used)", sc_no_opts,
	       struct sc_no_args);
static const struct sc_cmd *const ha_cmds[] = {
	&sc_cmd_ha_set,
	&sc_cmd_ha_show,
	&sc_cmd_ha_clear,
	NULL,
};
const struct sc_cmd sc_cmd_ha = SC_CMD_GROUP(
	"ha", "set|show|clear ...", "this router's role in an HA pair (keepalived)", ha_cmds);
