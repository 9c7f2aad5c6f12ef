// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - what "route up" installed, recorded outside the kernel so that
 * the agent (failover, re-convergence after link events) and "route show"
 * (degraded state) know what should be there:
 *
 *   TCFG_STATE_DIR/route-<netns inode>.json
 *   {"version": 1, "netns_cookie": N, "settings": {KEY: VALUE | [VALUES]}}
 *
 * The settings are the keys of tcfg_spec_set() ("mode", "short-dev",
 * "prefix", ...) with the values in force: "dscp-long" and "selector" are
 * the resolved ones (the live code point, the selector the kernel probe
 * chose), so reading the record back goes through the same setters and
 * needs no probing. /run is shared by the namespaces of "ip netns", hence
 * the file per network namespace; a namespace's inode number is reused
 * once it is freed, so the record also holds the namespace's cookie
 * (SO_NETNS_COOKIE, never reused while the system runs) and a record of
 * another namespace is ignored as stale.
 *
 * Also here: the lock that serialises every change of our routes (route
 * up, route down, the agent's plans), and the state file paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "tcfg.h"
#include "util.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define TCFG_RECORD_VERSION 1

int tcfg_state_path(char *buf, size_t len, const char *name, const char *suffix,
		    struct tcfg_err *e)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return tcfg_fail(e, errno, "/proc/self/ns/net: %s", strerror(errno));
	snprintf(buf, len, "%s/%s-%lu%s", TCFG_STATE_DIR, name, (unsigned long)st.st_ino,
		 suffix);
	return 0;
}

/* This network namespace's cookie (never reused while the system runs), 0
 * where the kernel has none. */
static __u64 tcfg_netns_cookie(void)
{
	__u64 cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	/* kernels before 5.14 have no cookie: 0, and records are not checked */
	if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	if (fd >= 0)
		close(fd);
	return cookie;
}

int tcfg_lock(struct tcfg_err *e)
{
	int fd;

	if (mkdir(TCFG_STATE_DIR, 0755) && errno != EEXIST)
		return tcfg_fail(e, errno, "cannot create %s: %s", TCFG_STATE_DIR, strerror(errno));
	fd = open(TCFG_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return tcfg_fail(e, errno, "cannot open %s: %s", TCFG_STATE_DIR, strerror(errno));
	/* held for milliseconds (a few netlink requests): waiting is fine */
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			int err = errno;

			close(fd);
			return tcfg_fail(e, err, "cannot lock %s: %s", TCFG_STATE_DIR,
					 strerror(err));
		}
	}
	return fd;
}

void tcfg_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* releases the flock */
}

/* ---- the settings as JSON ----------------------------------------------------- */
static void add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void add_addr(struct json_object *arr, const struct sc_prefix *p)
{
	char a[INET6_ADDRSTRLEN];

	if (p->family && inet_ntop(p->family, p->addr, a, sizeof(a)))
		json_object_array_add(arr, json_object_new_string(a));
}

struct json_object *tcfg_spec_to_json(const struct tcfg_spec *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *arr;
	char buf[TCFG_PREFIX_STRLEN];
	int i;

	add_str(o, "mode", s->mode == MODE_ECMP ? "ecmp" : "split");
	add_str(o, "short-dev", s->short_dev);
	add_str(o, "long-dev", s->long_dev);
	arr = json_object_new_array();
	for (i = 0; i < s->nprefixes; i++) {
		tcfg_fmt_prefix(&s->prefixes[i], buf, sizeof(buf));
		json_object_array_add(arr, json_object_new_string(buf));
	}
	json_object_object_add(o, "prefix", arr);
	arr = json_object_new_array();
	for (i = 0; i < s->nlan; i++)
		json_object_array_add(arr, json_object_new_string(s->lan[i]));
	json_object_object_add(o, "lan-dev", arr);
	arr = json_object_new_array();
	add_addr(arr, &s->via_short[0]);
	add_addr(arr, &s->via_short[1]);
	json_object_object_add(o, "via-short", arr);
	arr = json_object_new_array();
	add_addr(arr, &s->via_long[0]);
	add_addr(arr, &s->via_long[1]);
	json_object_object_add(o, "via-long", arr);
	snprintf(buf, sizeof(buf), "%u", s->table_short);
	add_str(o, "table-short", buf);
	snprintf(buf, sizeof(buf), "%u", s->table_long);
	add_str(o, "table-long", buf);
	snprintf(buf, sizeof(buf), "%u", s->priority);
	add_str(o, "priority", buf);
	snprintf(buf, sizeof(buf), "%d", s->dscp_long);
	add_str(o, "dscp-long", buf);
	add_str(o, "selector",
		s->selector == SEL_DSCP	 ? "dscp"
		: s->selector == SEL_TOS ? "tos"
					 : "auto");
	/* only with the shaper: records and "route show" without it as before */
	if (s->long_rate_bps) {
		sc_rate_text(s->long_rate_bps, buf, sizeof(buf));
		add_str(o, "long-rate", buf);
		snprintf(buf, sizeof(buf), "%llums",
			 (unsigned long long)(s->long_queue_ns / FS_NS_PER_MS));
		add_str(o, "long-queue", buf);
	}
	return o;
}

/* Every key through tcfg_spec_set(), then tcfg_spec_check(). */
int tcfg_spec_from_json(struct json_object *o, struct tcfg_spec *s, struct tcfg_err *e)
{
	char err[256];
	size_t i;

	memset(s, 0, sizeof(*s));
	s->dscp_long = -1;
	s->long_queue_ns = tcfg_spec_defaults.long_queue_ns;
	json_object_object_foreach(o, key, val) {
		bool list = json_object_is_type(val, json_type_array);
		size_t n = list ? json_object_array_length(val) : 1;

		for (i = 0; i < n; i++) {
			struct json_object *v = list ? json_object_array_get_idx(val, i) : val;

			if (!json_object_is_type(v, json_type_string))
				return tcfg_fail(e, EINVAL, "setting '%s' is not text", key);
			if (tcfg_spec_set(s, key, json_object_get_string(v), err, sizeof(err)))
				return tcfg_fail(e, EINVAL, "%s", err);
		}
	}
	if (tcfg_spec_check(s, err, sizeof(err)))
		return tcfg_fail(e, EINVAL, "%s", err);
	return 0;
}

/* ---- state documents --------------------------------------------------------- */
#define STATE_SUFFIX ".json"

int tcfg_state_write(const char *name, struct json_object *o, struct tcfg_err *e)
{
	struct out_file of;
	char path[TCFG_STATE_PATH_MAX];
	int ret;

	ret = tcfg_state_path(path, sizeof(path), name, STATE_SUFFIX, e);
	if (ret) {
		json_object_put(o);
		return ret;
	}
	if (mkdir(TCFG_STATE_DIR, 0755) && errno != EEXIST) {
		json_object_put(o);
		return tcfg_fail(e, errno, "cannot create %s: %s", TCFG_STATE_DIR, strerror(errno));
	}
	ret = out_file_open(&of, path, 0644);
	if (ret) {
		json_object_put(o);
		return tcfg_fail(e, -ret, "cannot write %s: %s", path, strerror(-ret));
	}
	fprintf(of.f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	ret = out_file_commit(&of);
	if (ret)
		return tcfg_fail(e, -ret, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}

int tcfg_state_read(const char *name, char *path, size_t len, struct json_object **out,
		    struct tcfg_err *e)
{
	struct json_object *o, *v;
	__u64 cookie = tcfg_netns_cookie();
	int ret;

	ret = tcfg_state_path(path, len, name, STATE_SUFFIX, e);
	if (ret)
		return ret;
	o = json_object_from_file(path);
	if (!o) {
		if (access(path, F_OK) && errno == ENOENT)
			return -ENOENT;
		return tcfg_fail(e, EINVAL, "%s: unreadable: %s", path, json_util_get_last_err());
	}
	if (cookie && json_object_object_get_ex(o, "netns_cookie", &v) &&
	    (__u64)json_object_get_uint64(v) != cookie) {
		json_object_put(o);
		return -ENOENT;
	}
	*out = o;
	return 0;
}

int tcfg_state_remove(const char *name, struct tcfg_err *e)
{
	char path[TCFG_STATE_PATH_MAX];
	int ret;

	ret = tcfg_state_path(path, sizeof(path), name, STATE_SUFFIX, e);
	if (ret)
		return ret;
	if (unlink(path) && errno != ENOENT)
		return tcfg_fail(e, errno, "cannot remove %s: %s", path, strerror(errno));
	/* and what a writer killed between write and rename left (seen: a
	 * health document of an agent killed with SIGKILL) */
	out_file_remove_stale(path);
	return 0;
}

struct json_object *tcfg_json_doc_new(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "version", json_object_new_int(TCFG_RECORD_VERSION));
	json_object_object_add(o, "netns_cookie", json_object_new_uint64(tcfg_netns_cookie()));
	return o;
}

/* ---- the record ---------------------------------------------------------------- */
#define RECORD_NAME "route"

int tcfg_record_write(const struct tcfg_spec *s, struct tcfg_err *e)
{
	struct json_object *o = tcfg_json_doc_new();

	json_object_object_add(o, "settings", tcfg_spec_to_json(s));
	return tcfg_state_write(RECORD_NAME, o, e);
}

int tcfg_record_read(struct tcfg_spec *s, struct tcfg_err *e)
{
	struct json_object *o, *set;
	struct tcfg_err bad;
	char path[TCFG_STATE_PATH_MAX];
	int ret;

	ret = tcfg_state_read(RECORD_NAME, path, sizeof(path), &o, e);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "settings", &set))
		ret = tcfg_fail(e, EINVAL, "%s: no settings", path);
	else if (tcfg_spec_from_json(set, s, &bad))
		ret = tcfg_fail(e, EINVAL, "%s: %.400s", path, bad.msg);
	json_object_put(o);
	return ret;
}

int tcfg_record_remove(struct tcfg_err *e)
{
	return tcfg_state_remove(RECORD_NAME, e);
}

void tcfg_record_stat(struct stat *st)
{
	struct tcfg_err ignored;
	char path[TCFG_STATE_PATH_MAX];

	if (tcfg_state_path(path, sizeof(path), RECORD_NAME, STATE_SUFFIX, &ignored) ||
	    stat(path, st))
		memset(st, 0, sizeof(*st));
}
