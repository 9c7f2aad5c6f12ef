#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, datapath part: attach the splitter with `splitctl attach`
# defaults, once per hook (XDP native, TC), each in its own pin directory of
# a throwaway namespace, and measure the attached programs with
# build/bench-datapath (which follows the pinned links to them). Extra
# targets for before/after tables: BASELINE_OBJ=old/splitter.bpf.o.
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
for l in x0 x1 t0 t1; do ip -n "$P" link set "$l" up; done
sc() { ip netns exec "$P" "$SPLITCTL" --pin-dir "$@"; }
sc "$PIN_MNT/xdp" attach x0 --hook xdp --mode native >/dev/null
sc "$PIN_MNT/tc" attach t0 --hook tc >/dev/null
args=(--json "$BUILD/bench/datapath.json" --pin "$PIN_MNT/xdp" --pin "$PIN_MNT/tc")
[ -n "${BASELINE_OBJ:-}" ] && args=(--obj "$BASELINE_OBJ" "${args[@]}")
ip netns exec "$P" "$BUILD/bench-datapath" "${args[@]}"
