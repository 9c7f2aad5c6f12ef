// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_down.c - "splitctl down": remove everything splitctl made in this
 * network namespace, in this order: the policy rules and routes of
 * "route up" (and its record, and the hash policy ECMP mode replaced), the
 * tunnels of "tunnel add" (owner-tagged), then the splitter on every
 * interface of the instance and its pins (as "detach --all"). Routes go
 * first so that traffic falls back to the main table before the tunnels
 * and the marking vanish. Nothing else is touched: rules and routes by
 * their protocol number, tunnels by their tag, the instance only when it
 * belongs to this namespace (refused before any change otherwise). Run
 * again, it finds nothing, says so and exits 0.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent_lock.h"
#include "commands.h"
#include "tunnel_cfg.h"

/* Routes and rules first, so that traffic falls back to the main table
 * before the tunnels vanish; every step is tried, the first error printed
 * once. An exit code; r counts what went. */
static int tcfg_down(struct tcfg_down_result *r)
{
	char err[512] = "", err2[512];
	int ret;

	memset(r, 0, sizeof(*r));
	ret = tcfg_routes_down(r, err, sizeof(err));
	/* the lock file and health of an agent killed with -9 */
	agent_lock_remove_stale();
	if (tcfg_tunnels_down(r, err2, sizeof(err2)) && !ret) {
		ret = -1;
		memcpy(err, err2, sizeof(err));
	}
	if (ret)
		pr_err("down: %s", err);
	return ret ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}

static void print_names(const char *key, const char *fmt, char (*names)[16], int n)
{
	int i;

	open_json_array(PRINT_JSON, key);
	for (i = 0; i < n; i++) {
		print_string(PRINT_JSON, NULL, NULL, names[i]);
		print_string(PRINT_FP, NULL, i ? ", %s" : fmt, names[i]);
	}
	close_json_array(PRINT_JSON, NULL);
	if (n)
		print_nl();
}

static void print_down(const char *dir, const struct tcfg_down_result *r,
		       const struct sc_detach_result *det)
{
	bool changed = r->rules || r->routes || r->ntunnels || det->n || det->pins_removed;

	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, dir);
	print_uint(PRINT_JSON, "rules_removed", NULL, r->rules);
	print_uint(PRINT_JSON, "routes_removed", NULL, r->routes);
	if (r->rules || r->routes) {
		print_uint(PRINT_FP, NULL, "removed: %llu policy rules", r->rules);
		print_uint(PRINT_FP, NULL, " and %llu routes of route up\n", r->routes);
	}
	print_names("tunnels_removed", "removed: tunnel %s", (char (*)[16])r->tunnels,
		    r->ntunnels);
	print_names("detached", "detached: %s", (char (*)[16])det->names, det->n);
	print_bool(PRINT_JSON, "pins_removed", NULL, det->pins_removed);
	if (det->pins_removed)
		print_string(PRINT_FP, NULL, "removed: the pins of instance %s\n", dir);
	print_bool(PRINT_JSON, "changed", NULL, changed);
	if (!changed)
		print_text("nothing to do: no splitter, routes or tunnels of splitctl in this "
			   "network namespace\n");
	close_json_object();
}

static int cmd_down(const struct sc_call *c)
{
	static struct sc_detach_result det;
	const struct sc_opts *o = c->o;
	const char *dir = sc_pin_dir(o);
	char msg[PATH_MAX + 512];
	struct tcfg_down_result r;
	bool instance;
	int ret, err;

	err = sc_check_privileges();
	instance = !err && !sc_prepare_dir(dir) && !access(dir, F_OK) &&
		   sc_instance_present(dir);
	if (instance)
		err = sc_netns_check(dir);
	if (err) {
		/* another namespace's instance: refused before any change */
		pr_err("%s", sc_state_strerror(err, dir, msg, sizeof(msg)));
		return FS_EXIT_RUNTIME;
	}
	ret = tcfg_down(&r);
	if (instance) {
		err = sc_detach_report(o, NULL, &det);
		ret = ret ? ret : err;
	}
	print_down(dir, &r, &det);
	return ret;
}

const struct sc_cmd sc_cmd_down =
	SC_CMD("down", cmd_down, "", "remove everything splitctl made in this network namespace",
	       sc_no_opts, struct sc_no_args);
