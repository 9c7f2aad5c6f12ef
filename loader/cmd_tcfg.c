// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_tcfg.c - "route up|down|show" and "tunnel add|del|show": their
 * options come parsed from the option table (main.c) as key/value pairs and
 * are handed to tunnel-cfg (tunnel_cfg.h), which checks each value, does
 * the netlink work, prints through json_print and words its own runtime
 * errors. splitctl adds what it knows of the live splitter: the long code
 * point the routes match on.
 */
#include <string.h>

#include "agent_lock.h"
#include "commands.h"
#include "health_file.h"
#include "tunnel_cfg.h"

void sc_route_ctx(int dscp_long, struct tcfg_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->dscp_long = dscp_long;
	health_file_in_force(&ctx->in_force);
	ctx->show_more = health_show;
}

/* The live long code point, if an instance is attached (-1 otherwise: no
 * instance is no error here, and the state functions print nothing). */
static void tcfg_context(const struct sc_opts *o, struct tcfg_ctx *ctx)
{
	struct split_config cfg;
	struct sc_state st;
	int dscp_long = -1;

	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &cfg))
			dscp_long = cfg.dscp_long;
		sc_state_close(&st);
	}
	sc_route_ctx(dscp_long, ctx);
}

/* tunnel-cfg names a bad value by its key ("mode: ..."), as in a config
 * file; on the command line it is the option: "--mode: ...". */
static int pass_error(const char *path, const struct sc_kv *kv, const char *err)
{
	size_t n = strlen(kv->key);
	bool is_key = !strncmp(err, kv->key, n) && err[n] == ':';

	return sc_print_usage_error(path, "%s%s", is_key ? "--" : "", err);
}

int cmd_route_up(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_route_up_args *a = args;
	struct tcfg_spec *spec;
	struct tcfg_ctx ctx;
	char err[256];
	unsigned int i;
	int ret;

	(void)argc;
	(void)argv;
	spec = tcfg_spec_new();
	if (!spec) {
		pr_err("route up: out of memory");
		return FS_EXIT_RUNTIME;
	}
	for (i = 0; i < a->opts.n; i++) {
		if (tcfg_spec_set(spec, a->opts.kv[i].key, a->opts.kv[i].value, err,
				  sizeof(err))) {
			ret = pass_error("route up", &a->opts.kv[i], err);
			goto out;
		}
	}
	tcfg_context(o, &ctx);
	ret = tcfg_route_up(spec, &ctx);	/* checks the spec as a whole */
out:
	tcfg_spec_free(spec);
	return ret;
}

int cmd_route_down(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct tcfg_ctx ctx;
	int ret;

	(void)args;
	(void)argc;
	(void)argv;
	tcfg_context(o, &ctx);
	ret = tcfg_route_down(&ctx);
	/* the lock file and health of an agent killed with -9 */
	agent_lock_remove_stale();
	return ret;
}

int cmd_route_show(const struct sc_opts *o, void *args, int argc, char **argv)
{
	struct tcfg_ctx ctx;

	(void)args;
	(void)argc;
	(void)argv;
	tcfg_context(o, &ctx);
	return tcfg_route_show(&ctx);
}

int cmd_tunnel_add(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_tunnel_add_args *a = args;
	struct tcfg_tunnel *t;
	char err[256];
	unsigned int i;
	int ret;

	(void)o;
	(void)argc;
	(void)argv;
	if (!a->name[0] || !a->kind)
		return sc_print_usage_error("tunnel add", "expected NAME KIND (see -h)");
	t = tcfg_tunnel_new(a->name, a->kind, err, sizeof(err));
	if (!t)
		return sc_print_usage_error("tunnel add", "%s", err);
	for (i = 0; i < a->opts.n; i++) {
		if (tcfg_tunnel_set(t, a->opts.kv[i].key, a->opts.kv[i].value, err,
				    sizeof(err))) {
			ret = pass_error("tunnel add", &a->opts.kv[i], err);
			goto out;
		}
	}
	ret = tcfg_tunnel_add(t);
out:
	tcfg_tunnel_free(t);
	return ret;
}

int cmd_tunnel_del(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_tunnel_del_args *a = args;

	(void)o;
	(void)argc;
	(void)argv;
	if (!a->name[0])
		return sc_print_usage_error("tunnel del", "expected NAME (see -h)");
	return tcfg_tunnel_del(a->name);
}

int cmd_tunnel_show(const struct sc_opts *o, void *args, int argc, char **argv)
{
	(void)o;
	(void)args;
	(void)argc;
	(void)argv;
	return tcfg_tunnel_show();
}
