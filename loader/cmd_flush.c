// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_flush.c - "flush": empty both flow tables, under the instance lock.
 */
#include <string.h>

#include "bpfutil.h"
#include "commands.h"

static int cmd_flush(const struct sc_call *c)
{
	__u64 n4 = 0, n6 = 0;
	int ret = FS_EXIT_OK, err;

	/* batched lookup-and-delete: one syscall per 4096 entries */
	err = fs_map__for_each_batch(c->st->flows4_fd, 4096, FS_MAP_ITER_LOOKUP_DELETE,
				     NULL, NULL, &n4);
	if (!err)
		err = fs_map__for_each_batch(c->st->flows6_fd, 4096, FS_MAP_ITER_LOOKUP_DELETE,
					     NULL, NULL, &n6);
	if (err) {
		pr_err("cannot empty the flow table: %s", strerror(-err));
		ret = FS_EXIT_RUNTIME;
	} else {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "flows_removed", "%llu flows removed\n", n4 + n6);
		close_json_object();
	}
	return ret;
}

const struct sc_cmd sc_cmd_flush =
	SC_CMD("flush", cmd_flush, "", "empty the flow tables", sc_no_opts, struct sc_no_args,
	       .state = SC_STATE_LOCK);
