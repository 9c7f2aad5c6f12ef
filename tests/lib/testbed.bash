# SPDX-License-Identifier: GPL-2.0
# The whole testbed (testbed/testbed) for a suite. Load after lib/common
# (FS_PREFIX set).

TB=$FS_ROOT/testbed/testbed

# tb_up ARGS...: from setup_file(), a testbed of this run's own: prefix P
# (FS_PREFIX and a number from the PID, still under FS_PREFIX for the
# residue check, so that concurrent runs of a suite cannot collide;
# exported, since each test runs in a process of its own and a $$ at file
# level differs per test), whatever an earlier run left under it taken
# down, then up with ARGS
tb_up() {
	export P=$FS_PREFIX$(($$ % 10000))
	"$TB" down --prefix "$P"
	"$TB" up --prefix "$P" "$@"
}
