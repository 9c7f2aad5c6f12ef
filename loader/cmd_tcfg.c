// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_tcfg.c - "route up|down|show" and "tunnel add|del|show": their
 * options come parsed from the option table (main.c) and are handed to
 * tunnel-cfg (tunnel_cfg.h), which checks their values and does the
 * netlink work. splitctl adds what it knows of the live splitter: the long
 * code point the routes match on.
 */
#include <string.h>

#include "commands.h"
#include "tunnel_cfg.h"

/* The live long code point, if an instance is attached (-1 otherwise: no
 * instance is no error here, and the state functions print nothing). */
static void tcfg_context(const struct sc_opts *o, struct tcfg_ctx *ctx)
{
	struct split_config cfg;
	struct sc_state st;

	memset(ctx, 0, sizeof(*ctx));
	ctx->json = o->json;
	ctx->verbose = o->verbose;
	ctx->dscp_long = -1;
	if (!sc_state_open(o, &st, 0)) {
		if (!sc_config_read(&st, &cfg))
			ctx->dscp_long = cfg.dscp_long;
		sc_state_close(&st);
	}
}

/*
 * tunnel-cfg's command-line entry points (tcfg_route_main/tcfg_tunnel_main)
 * until its key/value API is in: the parsed options, back in argv form.
 * words: the command words and positional arguments; every option of the
 * list becomes "--key value". Bounded by the list (SC_MAX_PASS).
 */
static int tcfg_call(const struct sc_opts *o, const char *const *words, int nwords,
		     const struct sc_pass_list *opts,
		     int (*main_fn)(int, char **, const struct tcfg_ctx *))
{
	char *argv[8 + 2 * SC_MAX_PASS + 1], key[SC_MAX_PASS][64];
	struct tcfg_ctx ctx;
	unsigned int i;
	int argc = 0;

	for (argc = 0; argc < nwords && argc < 8; argc++)
		argv[argc] = (char *)words[argc];
	for (i = 0; opts && i < opts->n; i++) {
		snprintf(key[i], sizeof(key[i]), "--%s", opts->kv[i].key);
		argv[argc++] = key[i];
		argv[argc++] = (char *)opts->kv[i].value;
	}
	argv[argc] = NULL;
	tcfg_context(o, &ctx);
	return main_fn(argc, argv, &ctx);
}

int cmd_route_up(const struct sc_opts *o, void *args, int argc, char **argv)
{
	static const char *const w[] = { "route", "up" };
	const struct sc_route_up_args *a = args;

	(void)argc;
	(void)argv;
	return tcfg_call(o, w, 2, &a->opts, tcfg_route_main);
}

int cmd_route_down(const struct sc_opts *o, void *args, int argc, char **argv)
{
	static const char *const w[] = { "route", "down" };

	(void)args;
	(void)argc;
	(void)argv;
	return tcfg_call(o, w, 2, NULL, tcfg_route_main);
}

int cmd_route_show(const struct sc_opts *o, void *args, int argc, char **argv)
{
	static const char *const w[] = { "route", "show" };

	(void)args;
	(void)argc;
	(void)argv;
	return tcfg_call(o, w, 2, NULL, tcfg_route_main);
}

int cmd_tunnel_add(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_tunnel_add_args *a = args;
	const char *w[] = { "tunnel", "add", a->name, a->kind };

	(void)argc;
	(void)argv;
	if (!a->name[0] || !a->kind)
		return sc_usage_error("tunnel add", "expected NAME KIND (see -h)");
	return tcfg_call(o, w, 4, &a->opts, tcfg_tunnel_main);
}

int cmd_tunnel_del(const struct sc_opts *o, void *args, int argc, char **argv)
{
	const struct sc_tunnel_del_args *a = args;
	const char *w[] = { "tunnel", "del", a->name };

	(void)argc;
	(void)argv;
	if (!a->name[0])
		return sc_usage_error("tunnel del", "expected NAME (see -h)");
	return tcfg_call(o, w, 3, NULL, tcfg_tunnel_main);
}

int cmd_tunnel_show(const struct sc_opts *o, void *args, int argc, char **argv)
{
	static const char *const w[] = { "tunnel", "show" };

	(void)args;
	(void)argc;
	(void)argv;
	return tcfg_call(o, w, 2, NULL, tcfg_tunnel_main);
}
