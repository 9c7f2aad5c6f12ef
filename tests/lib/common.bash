# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the bats suites. Source with: load lib/common
#
# Naming contract: everything a test creates (netns, links, pin dirs, bpffs
# mounts such as /run/fstX-.../bpf) starts
# with "fst" so tests/run can detect residue. Use fs_netns to create
# namespaces; fs_teardown (call it from teardown()) removes what was created,
# even after a failure.

# Each suite sets FS_PREFIX (fstc, fstr, fstt, fstb, ...) before "load lib/common".
FS_PREFIX=${FS_PREFIX:-fst}
# FS_TEST_FLOWS: flow table entries per family for the attaches of tests
# that follow a few flows (attach --flows, or flows = in [splitter]): a
# first attach preallocates both tables, and the default size
# (FS_DEFAULT_FLOWS, 1M per family) costs seconds of CPU each time
FS_TEST_FLOWS=65536
FS_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
FS_BUILD=${BUILD:-$FS_ROOT/build}
# BUILD=build-asan (make sanitize) is relative to the repository
case $FS_BUILD in /*) ;; *) FS_BUILD=$FS_ROOT/$FS_BUILD ;; esac
SPLITCTL=$FS_BUILD/splitctl

# fs_netns_add NAME...: create namespaces (loopback down), registered for
# teardown (before they exist: one created before a failure goes too), in
# one ip process (a set-up runs ip many times: each costs a process)
fs_netns_add() {
	printf '%s\n' "$@" >>"$BATS_TEST_TMPDIR/.fs_netns"
	printf 'netns add %s\n' "$@" | ip -batch -
}

# fs_netns NAME...: create namespaces (loopback up), registered for teardown
fs_netns() {
	local ns
	fs_netns_add "$@"
	for ns in "$@"; do
		ip -n "$ns" link set lo up
	done
}

# fs_ip NS: the ip commands on stdin (one a line, without "ip"), in NS, by
# one ip process
fs_ip() {
	ip -n "$1" -batch -
}

# fs_pin_dir: a fresh bpffs directory for this test, registered for teardown
fs_pin_dir() {
	local d=/sys/fs/bpf/$FS_PREFIX-$$-$BATS_TEST_NUMBER
	mkdir -p "$d"
	echo "$d" >>"$BATS_TEST_TMPDIR/.fs_pins"
	echo "$d"
}

# fs_bpffs [ID]: a private bpffs mounted under /run, visible inside "ip netns
# exec" (which remounts /sys); prints the mount point; unmounted at teardown.
# ID names it (default: the test's PID and number)
fs_bpffs() {
	local d=/run/$FS_PREFIX-${1:-$$-$BATS_TEST_NUMBER}/bpf
	mkdir -p "$d"
	mount -t bpf bpf "$d"
	echo "$d" >>"$BATS_TEST_TMPDIR/.fs_mounts"
	echo "$d"
}

# fs_bg CMD...: run a command in the background, killed at teardown
fs_bg() {
	"$@" &
	echo $! >>"$BATS_TEST_TMPDIR/.fs_pids"
}

# (each step "|| true": it also runs under set -e, from a test that
# rebuilds a file's fixture, where what is gone already is no error)
fs_teardown() {
	local f pids
	f=$BATS_TEST_TMPDIR/.fs_pids
	[ -f "$f" ] && while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$f"
	f=$BATS_TEST_TMPDIR/.fs_netns
	if [ -f "$f" ]; then
		# kill anything still running inside, then delete them all (one
		# ip process; -force: on past one that is gone already)
		pids=$(while read -r ns; do ip netns pids "$ns" 2>/dev/null; done <"$f")
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
		sed 's/^/netns del /' "$f" | ip -force -batch - >/dev/null 2>&1 || true
	fi
	f=$BATS_TEST_TMPDIR/.fs_pins
	[ -f "$f" ] && while read -r d; do rm -rf "$d" || true; done <"$f"
	f=$BATS_TEST_TMPDIR/.fs_mounts
	[ -f "$f" ] && while read -r d; do
		umount "$d" 2>/dev/null || true
		rmdir "$d" "$(dirname "$d")" 2>/dev/null || true
	done <"$f"
	rm -f "$BATS_TEST_TMPDIR"/.fs_{pids,netns,pins,mounts}
	return 0
}

# Loading this file gives a suite a setup() (D the test's directory) and a
# teardown() (fs_teardown); a suite that needs more defines its own after
# the load (lib/router and lib/wan do).
setup() {
	D=$BATS_TEST_TMPDIR
}

teardown() {
	fs_teardown
}

# fs_need FILE...: skip the test unless every FILE (a program of the build)
# is built
fs_need() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || skip "${f#"$FS_ROOT"/} not built (make)"
	done
}

# fs_median_rtt: the median RTT (ms) of the replies in ping's output on
# stdin (one scheduling stall of a loaded machine moves the mean of a few
# dozen samples, not the median)
fs_median_rtt() {
	awk -F'time=' '/time=/ { split($2, t, " "); print t[1] }' | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# fs_prom_has FILE LINE...: FILE, a Prometheus textfile, passes promtool
# and has a line matching each LINE (a basic regex) as a whole
fs_prom_has() {
	local f=$1 l
	shift
	promtool check metrics <"$f"
	for l in "$@"; do
		if ! grep -qx -- "$l" "$f"; then
			echo "no line '$l' in $f"
			return 1
		fi
	done
}

# fs_lines_are LINE...: after bats' run, the output's first lines are
# exactly these, in order (lines after them are not looked at)
fs_lines_are() {
	local i=0 want
	for want in "$@"; do
		if [ "${lines[i]-}" != "$want" ]; then
			echo "line $i: '${lines[i]-}', wanted '$want'"
			return 1
		fi
		i=$((i + 1))
	done
}

# fs_wait_for TIMEOUT_S CMD...: poll until CMD succeeds (events, not sleeps)
fs_wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
}

# expect CODE PATTERN -- CMD...: exit code CODE, one line of output
# containing PATTERN; in a suite that defines state() and took $BEFORE,
# the state unchanged too
expect() {
	local code=$1 pattern=$2
	shift 3
	run "$@"
	echo "exit $status: $output"
	[ "$status" -eq "$code" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$pattern"* ]]
	if [ -n "${BEFORE+x}" ] && declare -F state >/dev/null; then
		[ "$(state)" = "$BEFORE" ]
	fi
}
