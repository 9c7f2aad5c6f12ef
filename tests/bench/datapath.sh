#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, datapath part: attach the splitter with `splitctl attach`
# defaults, once per hook (XDP native, TC), each in its own pin directory of
# a throwaway namespace, and once more per hook with rules (xdp-rules,
# tc-rules: 200 rules per family from a config file, one of which matches
# the probe flows with the default threshold, so the rows compare like for
# like), and measure the attached programs with build/bench-datapath (which
# follows the pinned links to them: the splitter's, and the observer's at TC
# egress for the other direction's packets), each against the reference
# program (build/bpf/ref_count.bpf.o) in the same run. Extra targets for
# before/after tables: BASELINE_OBJ=old/splitter.bpf.o.
# Output: a table on stdout and build/bench/datapath.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
export BUILD=${BUILD:-build}
SPLITCTL=$BUILD/splitctl
P=fstbdp$$
PIN_MNT=/run/$P/bpf

cleanup() {
	ip netns pids "$P" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$P" 2>/dev/null
	umount "$PIN_MNT" 2>/dev/null
	rm -rf "/run/$P"
	return 0
}
trap cleanup EXIT INT TERM

if [ ! -x "$SPLITCTL" ] || [ ! -x "$BUILD/bench-datapath" ]; then
	echo "bench-datapath: skipped, $SPLITCTL or $BUILD/bench-datapath is not built yet" >&2
	exit 0
fi
mkdir -p "$PIN_MNT" "$BUILD/bench"
mount -t bpf bpf "$PIN_MNT"
ip netns add "$P"
ip -n "$P" link add x0 type veth peer x1
ip -n "$P" link add t0 type veth peer t1
ip -n "$P" link add y0 type veth peer y1
ip -n "$P" link add u0 type veth peer u1
for l in x0 x1 t0 t1 y0 y1 u0 u1; do ip -n "$P" link set "$l" up; done
sc() { ip netns exec "$P" "$SPLITCTL" --pin-dir "$@"; }

# rules_conf IFACE: 200 rules per family (nested prefixes, some with a
# port); the probes (bench-datapath: 10.0.0.1 -> 10.0.1.2:443,
# fd00::1 -> fd00:1::2 port 443) match probe4/probe6, threshold 20
rules_conf() {
	local i
	printf '[splitter]\ninterfaces = %s\n' "$1"
	printf '[rule probe4]\nprefix = 10.0.1.0/24\nport = 443\nthreshold = 20\n'
	printf '[rule probe6]\nprefix = fd00:1::/64\nport = 443\nthreshold = 20\n'
	printf '[rule net4]\nprefix = 10.0.0.0/8\nmode = long\n'
	printf '[rule net6]\nprefix = fd00::/16\nmode = long\n'
	for i in $(seq 1 196); do
		printf '[rule a%d]\nprefix = 100.%d.%d.0/24\nthreshold-bytes = %d\n' "$i" $((64 + i / 64)) $((i % 64 * 4)) $((1000 * i))
		printf '[rule b%d]\nprefix = 2001:db8:%x::/48\nmode = short\n' "$i" "$i"
	done
	printf '[rule p4]\nprefix = 0.0.0.0/0\nport = 22\nmode = short\n'
	printf '[rule p6]\nprefix = ::/0\nport = 22\nmode = short\n'
}

sc "$PIN_MNT/xdp" attach x0 --hook xdp --mode native >/dev/null
sc "$PIN_MNT/tc" attach t0 --hook tc >/dev/null
sc "$PIN_MNT/xdp-rules" attach y0 --hook xdp --mode native >/dev/null
sc "$PIN_MNT/tc-rules" attach u0 --hook tc >/dev/null
rules_conf y0 >"/run/$P/y0.conf"
rules_conf u0 >"/run/$P/u0.conf"
sc "$PIN_MNT/xdp-rules" apply -c "/run/$P/y0.conf" >/dev/null
sc "$PIN_MNT/tc-rules" apply -c "/run/$P/u0.conf" >/dev/null
# the short-class copy of the TC instance (dup/ rows): t0 as SHORT, t1 as
# LONG (the copies are transmitted on t1 and dropped by its peer's stack)
sc "$PIN_MNT/tc" dup attach --short-dev t0 --long-dev t1 --copy yes \
	--peer-mac 02:00:00:00:00:02 >/dev/null
args=(--json "$BUILD/bench/datapath.json" --pin "$PIN_MNT/xdp" --pin "$PIN_MNT/tc"
      --pin "$PIN_MNT/xdp-rules" --pin "$PIN_MNT/tc-rules")
[ -n "${BASELINE_OBJ:-}" ] && args=(--obj "$BASELINE_OBJ" "${args[@]}")
ip netns exec "$P" "$BUILD/bench-datapath" "${args[@]}"
