// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_detach.c - "detach IFACE | --gone | --all": the splitter off one
 * interface, off the interfaces that were removed (their defunct pins), or
 * off all of them; the pins go with the last (attach.c does the work).
 * Silent in text mode; under -j it lists what it detached.
 */
#include "commands.h"

struct sc_detach_args {
	__u32 given;
	bool all;
	bool gone;
	char ifname[IFNAMSIZ];
};

static const struct sc_option detach_opts[] = {
	SC_OPTION("all", SC_OPT_FLAG, struct sc_detach_args, all, .short_opt = 'a',
		  .help = "detach from every interface and remove the pins"),
	SC_OPTION("gone", SC_OPT_FLAG, struct sc_detach_args, gone,
		  .help = "forget the interfaces that were removed (their pins); the others stay "
			  "attached"),
	SC_OPTION("interface", SC_OPT_IFNAME, struct sc_detach_args, ifname, .positional = true,
		  .noun = "interface name"),
	SC_OPTIONS_END,
};

/* The "detached" array and "pins_removed" of a JSON document. */
static void sc_print_detached(const struct sc_detach_result *r)
{
	int i;

	open_json_array(PRINT_JSON, "detached");
	for (i = 0; i < r->n; i++)
		print_string(PRINT_JSON, NULL, NULL, r->names[i]);
	close_json_array(PRINT_JSON, NULL);
	print_bool(PRINT_JSON, "pins_removed", NULL, r->pins_removed);
}

static int cmd_detach(const struct sc_call *c)
{
	static struct sc_detach_result r;
	const struct sc_detach_args *a = c->args;
	int ret;

	if (a->all + a->gone + !!a->ifname[0] != 1)
		return sc_print_usage_error(
			"detach", "expected one interface name, --gone or --all (see -h)");
	if (a->gone)
		ret = sc_detach_removed(c->o, &r);
	else
		ret = sc_detach_report(c->o, a->all ? NULL : a->ifname, &r);
	open_json_object(NULL);
	print_string(PRINT_JSON, "pin_dir", NULL, sc_pin_dir(c->o));
	sc_print_detached(&r);
	close_json_object();
	return ret;
}

const struct sc_cmd sc_cmd_detach = SC_CMD("detach", cmd_detach, "IFACE | --gone | --all",
					   "detach; remove the pins with the last interface",
					   detach_opts, struct sc_detach_args);
