#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# "splitctl run" with tunnel health: both routers run the agent after
# "route up"; the SHORT underlay dies under a 100 Hz ping and comes back.
FS_PREFIX=fstg
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

setup() {
	wan_setup
	D=$BATS_TEST_TMPDIR
}

teardown() {
	wan_teardown
}

# agent NS [ARGS...]: "splitctl run" in a router, log in $D/agent-NS, pid in
# AGENT_PID (not through wan_sc: $! must be splitctl itself, for signals)
agent() {
	local ns=$1 dir=$BPFA
	shift
	[ "$ns" = "$B" ] && dir=$BPFB
	ip netns exec "$ns" "$SPLITCTL" --pin-dir "$dir" run --interval 1 "$@" >>"$D/agent-$ns" 2>&1 </dev/null &
	AGENT_PID=$!
	wan_agent_started "$AGENT_PID"
}

both_up() { [ "$(grep -c 'health: vx[sl] .* -> up' "$D/agent-$1")" -ge 2 ]; }

@test "run: the SHORT underlay dies under a 100 Hz ping: failover, then split again after the hold-down" {
	wan_attach 10
	wan_route split
	agent "$A" --textfile "$D/m.prom"
	local agent_a=$AGENT_PID
	agent "$B"
	fs_wait_for 10 both_up "$A"
	fs_wait_for 10 both_up "$B"
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
	wan_sc "$A" -j route show | jq -e '.state == "ok" and .health.in_force == "short=SHORT long=LONG"'
	fs_bg ip netns exec "$C" ping -q -i 0.01 -c 400 -w 30 10.2.0.1 >"$D/ping"
	pinger=$!
	sleep 0.5
	# every VXLAN packet arriving at B over the SHORT underlay is lost
	# (probes and answers alike); the VXLAN devices stay up
	wan_underlay_drop "$B" b1
	failed_over() { wan_sc "$1" -j route show | jq -e '.health.in_force == "short=LONG long=LONG"' >/dev/null; }
	fs_wait_for 5 failed_over "$A"
	fs_wait_for 5 failed_over "$B"
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	grep -q 'health: vxs (short) up -> down after 3 misses' "$D/agent-$A"
	wan_sc "$A" status | grep '^health: vxs (short) down'
	wan_sc "$A" -j status | jq -e '.health.monitored and .health.tunnels[0].state == "down" and .health.tunnels[1].state == "up"'
	# the metrics (textfile every second) say so too
	short_down() { grep -qx 'flowsplit_tunnel_up{tunnel="short",dev="vxs"} 0' "$D/m.prom"; }
	fs_wait_for 5 short_down
	promtool check metrics <"$D/m.prom"
	grep -x 'flowsplit_tunnel_up{tunnel="long",dev="vxl"} 1' "$D/m.prom"
	grep -x 'flowsplit_failovers_total [1-9][0-9]*' "$D/m.prom"
	grep '^flowsplit_tunnel_probe_rtt_seconds{tunnel="long",dev="vxl"} [0-9.e-]*$' "$D/m.prom"
	grep '^flowsplit_tunnel_probe_loss_ratio{tunnel="short",dev="vxs"} 0\.[0-9]*' "$D/m.prom"
	wan_sc "$A" route show
	wan_sc "$A" -j route show | jq -e '.state == "ok" and .health.tunnels[0].state == "down" and .health.tunnels[0].flaps == 1'
	sleep 1
	wan_underlay_heal "$B" b1
	split_again() { wan_sc "$1" -j route show | jq -e '.health.in_force == "short=SHORT long=LONG"' >/dev/null; }
	fs_wait_for 10 split_again "$A"
	fs_wait_for 10 split_again "$B"
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
	grep -q 'health: vxs (short) down -> up' "$D/agent-$A"
	rc=0; wait "$pinger" || rc=$?
	cat "$D/agent-$A" "$D/ping"
	local sent got lost
	sent=$(grep -o '[0-9]* packets transmitted' "$D/ping" | cut -d' ' -f1)
	got=$(grep -o '[0-9]* received' "$D/ping" | cut -d' ' -f1)
	lost=$((sent - got))
	echo "# run agent failover under ping -i 0.01: $lost of $sent echo requests lost, $((lost * 10)) ms of lost replies at 10 ms each (failover and return)" >&3
	[ "$got" -gt 0 ]
	# at most 1 s of lost replies: 100 at the 10 ms interval
	[ "$lost" -le 100 ]
	# the agent exits on SIGTERM, withdraws its health, the routes stay
	kill -TERM "$agent_a"
	not_monitored() { wan_sc "$A" route show | grep -q '^health: not monitored'; }
	fs_wait_for 5 not_monitored
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
}

@test "run: bad health settings exit 2 with one line, nothing started" {
	local bad
	for bad in "--health-interval 0ms" "--health-down-misses 0" "--health-hold-min 5s --health-hold-max 2s" \
		"--target-short not-an-address" "--both-down maybe" "--health sometimes"; do
		run -2 wan_sc "$A" run $bad
		[ "${#lines[@]}" -eq 1 ]
		echo "$output" | grep -q "^splitctl: run: --.*accepted: "
	done
	run -2 wan_sc "$A" run --health-bogus 1
	[ "${#lines[@]}" -eq 1 ]
	# nothing published, nothing left running
	wan_sc "$A" route show | grep -q '^health: not monitored'
	# the [health] section of a config file: check takes all of it or nothing
	printf '[splitter]\ninterfaces = lana\n[health]\ninterval = 50ms\ndown-misses = 2\nboth-down = main\nenabled = yes\ntarget-short = 192.168.101.2\n' >"$D/ok.conf"
	wan_sc "$A" check -c "$D/ok.conf"
	for bad in "interval = 0ms" "down-misses = 0" "bogus = 1" "target-long = nope" "both-down = never" \
		"hold-min = 40s"; do
		printf '[splitter]\ninterfaces = lana\n[health]\ninterval = 50ms\n%s\n' "$bad" >"$D/bad.conf"
		run -2 wan_sc "$A" check -c "$D/bad.conf"
		[ "${#lines[@]}" -eq 1 ]
		echo "$output" | grep -q "\[health\]: .*accepted: "
	done
}

