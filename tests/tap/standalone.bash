# SPDX-License-Identifier: GPL-2.0
# Stand-ins for the fs_* helpers of tests/lib/common.bash, for the scripts
# that run outside bats (bench.sh, live-accuracy.sh). Sourced after W (the
# scratch directory) is set: on exit every started process is killed, every
# namespace deleted and W removed.
NS=()
PIDS=()
cleanup() {
	exec 2>/dev/null	# no "Killed" job notices
	local p n
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for n in "${NS[@]}"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del "$n" 2>/dev/null || true
	done
	rm -rf "$W"
}
trap cleanup EXIT
fs_netns() { local n; for n in "$@"; do ip netns add "$n"; ip -n "$n" link set lo up; NS+=("$n"); done; }
fs_bg() { "$@" & PIDS+=($!); }
fs_wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.05; done
}
