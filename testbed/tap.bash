# SPDX-License-Identifier: GPL-2.0
# tap.bash - fct-tap on a testbed that is up, sourced by testbed/testbed
# (run) and testbed/apps (run --tap yes): the one place it is started and
# stopped. Uses BUILD, PREFIX, TAP (the tap namespace) and die().
#
# tap_start DIR: fct-tap on ports A (pA2) and B (pB2), output in DIR/tap,
#   log DIR/tap.log; returns once it polls, so no traffic is mirrored
#   before it reads (packets piling up in the capture ring overflow it on a
#   loaded machine). Real-time priority (--rt-priority 20): on a busy
#   machine a tap at normal priority is not scheduled for long enough that
#   its 2 MB capture rings overflow; the idle back-off keeps it from
#   starving the CPU.
# tap_stop: SIGINT (it drains and writes its files), wait.
# tap_drops DIR: the tap's port drops in DIR/tap (-1: no summary).
TAP_PID=
tap_start() {
	local out=$1 i
	mkdir -p "$out/tap"
	ip netns exec "$TAP" "$BUILD/fct-tap" --no-huge -m 256 --no-pci --in-memory -l 0 \
		--file-prefix "$PREFIX" --vdev=net_pcap0,rx_iface=pA2 --vdev=net_pcap1,rx_iface=pB2 \
		-- --port-a 0 --port-b 1 --out "$out/tap" --idle-sleep-us 20 --rt-priority 20 \
		>"$out/tap.log" 2>&1 &
	TAP_PID=$!
	for i in $(seq 200); do
		grep -q '^fct-tap: timestamp source' "$out/tap.log" 2>/dev/null && return 0
		kill -0 "$TAP_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -INT "$TAP_PID" 2>/dev/null
	wait "$TAP_PID" || true
	TAP_PID=
	die "fct-tap did not start (see $out/tap.log)"
}

tap_stop() {
	[ -n "$TAP_PID" ] || return 0
	kill -INT "$TAP_PID" 2>/dev/null || true
	wait "$TAP_PID" || echo "${0##*/}: fct-tap exited with $? (see its tap.log)" >&2
	TAP_PID=
}

tap_drops() {
	local d
	d=$(awk '$1 == "port_drops" { print $2 }' "$1/tap/summary.txt" 2>/dev/null || true)
	echo "${d:--1}"
}
