#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Fault injection for the agent and the routes (tests/lib/wan.bash: two
# routers, two VXLAN tunnels). While pings of both classes flow, each test
# replays one kind of fault; after every step it asserts that both classes
# reach the other site (IPv4 and IPv6), that the rules and routes are
# exactly those documented for the plan in force (tunnel-cfg/README.md),
# and that "route show -j" tells the truth about them and the health.
FS_PREFIX=fstf
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

setup() {
	wan_setup
	D=$BATS_TEST_TMPDIR
	wan_route split
	# both classes flow all along: 20 Hz each, short (tos 0) and long
	fs_bg ip netns exec "$C" ping -q -i 0.05 -w 600 10.2.0.1 >"$D/ping-short"
	fs_bg ip netns exec "$C" ping -q -i 0.05 -w 600 -Q $LONG 10.2.0.1 >"$D/ping-long"
}

# LONG: the TOS byte of the long class. No splitter runs here, so route up
# matches the default long code point, DSCP 1 (LE: TOS 0x04)
LONG=0x04

teardown() {
	wan_teardown
}

show() { wan_sc "$1" -j route show; }

# reach: one answer of each class, both families, client to server
reach() {
	local q
	for q in 0 $LONG; do
		ip netns exec "$C" ping -q -c 1 -i 0.2 -w 4 -Q $q 10.2.0.1 >/dev/null || return 1
		ip netns exec "$C" ping -6 -q -c 1 -i 0.2 -w 4 -Q $q fd02::1 >/dev/null || return 1
	done
}

# dev_of NS ROLE: the device of the SHORT or LONG tunnel in NS's record
dev_of() { show "$1" | jq -r --arg r "$2" '.health.tunnels[] | select(.role == ($r | ascii_downcase)) | .dev'; }

# documented NS: the kernel holds exactly the documented objects of the
# plan in force (split mode, tunnel-cfg/README.md): rules PRIO and PRIO+1
# per family, one route per prefix and family in each table, table SHORT
# (100) over the tunnel the plan names for the short class, table LONG
# (101) over the one it names for the long class; route show says "ok"
documented() {
	local ns=$1 j plan s l f
	j=$(show "$ns") || return 1
	jq -e '.routes_state == "ok" and .mode == "split" and .health.monitored' <<<"$j" >/dev/null || return 1
	plan=$(jq -r '.health.in_force' <<<"$j")
	s=${plan#short=}; s=${s%% *}; l=${plan##*long=}
	s=$(jq -r --arg r "${s,,}" '.health.tunnels[] | select(.role == $r) | .dev' <<<"$j")
	l=$(jq -r --arg r "${l,,}" '.health.tunnels[] | select(.role == $r) | .dev' <<<"$j")
	for f in -4 -6; do
		[ "$(ip -n "$ns" $f rule show | grep -c 'proto 245')" -eq 2 ] || return 1
		[ "$(ip -n "$ns" $f route show table all proto 245 | wc -l)" -eq 2 ] || return 1
		[ "$(ip -n "$ns" $f -j route show table 100 proto 245 | jq -r '.[0].dev')" = "$s" ] || return 1
		[ "$(ip -n "$ns" $f -j route show table 101 proto 245 | jq -r '.[0].dev')" = "$l" ] || return 1
	done
	# and a packet of each class from the LAN takes that tunnel
	[ "$(class_dev "$ns" 0)" = "$s" ] && [ "$(class_dev "$ns" $LONG)" = "$l" ]
}

# class_dev NS TOS: the device a LAN packet with TOS takes to the other site
class_dev() {
	local from=10.1.0.1 to=10.2.0.1 lan=lana
	[ "$1" = "$B" ] && from=10.2.0.1 to=10.1.0.1 lan=lanb
	ip -n "$1" -j route get "$to" from $from iif $lan tos "$2" | jq -r '.[0].dev'
}

# health_is NS SHORT_STATE LONG_STATE: what route show says of the tunnels
health_is() {
	show "$1" | jq -e --arg s "$2" --arg l "$3" \
		'([.health.tunnels[] | select(.role == "short") | .state] == [$s]) and
		 ([.health.tunnels[] | select(.role == "long") | .state] == [$l])' >/dev/null
}

# settled NS SHORT LONG: health as given, routes documented (waits)
settled() {
	fs_wait_for 30 health_is "$1" "$2" "$3" && fs_wait_for 5 documented "$1"
}

# step TEXT: after a fault, both routers settled and both classes through
check_step() {
	echo "# step: $1"
	settled "$A" "$2" "$3"
	settled "$B" "$2" "$3"
	reach
}

swapped_route() { # NS: route up with the tunnels' roles swapped
	local p1=10.2.0.0/24 p2=fd02::/64 lan=lana n=2
	[ "$1" = "$B" ] && p1=10.1.0.0/24 p2=fd01::/64 lan=lanb n=1
	wan_sc "$1" route up --mode split --short-dev vxl --long-dev vxs \
		--prefix $p1 --prefix $p2 --lan-dev $lan \
		--via-short 192.168.102.$n --via-short fd10:2::$n \
		--via-long 192.168.101.$n --via-long fd10:1::$n
}

@test "faults: route up swaps the tunnels back and forth, with and without a dead one" {
	agent "$A"; agent "$B"
	check_step "agents up" up up
	[ "$(dev_of "$A" SHORT)" = vxs ]
	swapped_route "$A"; swapped_route "$B"
	check_step "swapped" up up
	[ "$(dev_of "$A" SHORT)" = vxl ]
	wan_underlay_drop "$B" b1	# vxs dies: now the LONG tunnel
	check_step "vxs (long) dead" up down
	wan_route split			# back: vxs is SHORT again, still dead
	check_step "unswapped, vxs (short) dead" down up
	wan_underlay_heal "$B" b1
	check_step "healed" up up
}

@test "faults: route down, route up and down during a failover" {
	agent "$A"; agent "$B"
	check_step "agents up" up up
	wan_underlay_drop "$B" b1
	check_step "vxs dead" down up
	wan_sc "$A" route down
	# nothing of ours left; the agent publishes nothing without a record
	[ -z "$(ip -n "$A" rule show | grep 'proto 245')" ]
	[ -z "$(ip -n "$A" route show table all proto 245)" ]
	[ -z "$(ip -n "$A" -6 route show table all proto 245)" ]
	fs_wait_for 5 eval 'show "$A" | jq -e ".state == \"down\" and (.health.monitored | not)" >/dev/null'
	wan_route split
	check_step "route up again, vxs still dead" down up
	wan_sc "$A" down
	[ -z "$(ip -n "$A" rule show | grep 'proto 245')" ]
	[ -z "$(ip -n "$A" -6 rule show | grep 'proto 245')" ]
	[ -z "$(ip -n "$A" route show table all proto 245)" ]
	! ip -n "$A" link show vxs 2>/dev/null || false
	show "$A" | jq -e '.state == "down" and .mode == "down"'
	kill -0 "$AGENT_PID"	# B's agent lives on; A's:
	grep -q 'the route record is gone' "$D/agent-$A"
}

@test "faults: kill -9 at random moments over 20 cycles" {
	agent "$B"
	local i pid drop=0
	for i in $(seq 20); do
		agent "$A"
		pid=$AGENT_PID
		# a fault at a random moment of the agent's life: the underlay
		# dies or heals, then the agent is killed
		sleep "0.$((RANDOM % 10))"
		if [ $((RANDOM % 2)) -eq 1 ]; then
			if [ $drop -eq 0 ]; then wan_underlay_drop "$B" b1; drop=1
			else wan_underlay_heal "$B" b1; drop=0; fi
		fi
		sleep "0.$((RANDOM % 10))"
		kill -9 "$pid"
		wait "$pid" 2>/dev/null || true
		# a dead agent publishes nothing, and route show says what is
		# in the kernel against the plan of both tunnels up
		show "$A" | jq -e '.health.monitored | not' >/dev/null
		if [ "$(ip -n "$A" -4 -j route show table 100 proto 245 | jq -r '.[0].dev')" = vxs ]; then
			show "$A" | jq -e '.routes_state == "ok"' >/dev/null
		else
			show "$A" | jq -e '.state == "degraded"' >/dev/null
		fi
	done
	echo "# 20 agents killed with -9; underlay dropped at the end: $drop"
	agent "$A"
	if [ $drop -eq 1 ]; then check_step "after the kills, vxs dead" down up; fi
	wan_underlay_heal "$B" b1 2>/dev/null || true
	check_step "after the kills, healed" up up
}

@test "faults: two agents at once, five times: one runs, the other names it" {
	local i p1 p2 rc1 rc2 pid
	agent "$B"
	for i in $(seq 5); do
		agent "$A"; p1=$AGENT_PID
		agent "$A"; p2=$AGENT_PID
		fs_wait_for 5 eval '! kill -0 $p1 2>/dev/null || ! kill -0 $p2 2>/dev/null'
		sleep 0.3
		rc1=0; kill -0 $p1 2>/dev/null || { wait $p1 || rc1=$?; }
		rc2=0; kill -0 $p2 2>/dev/null || { wait $p2 || rc2=$?; }
		# exactly one exited, with 1, naming the other
		if kill -0 $p1 2>/dev/null; then pid=$p1; [ $rc2 -eq 1 ]; else pid=$p2; [ $rc1 -eq 1 ]; fi
		kill -0 $pid
		grep -q "another agent (pid $pid) runs in this network namespace" "$D/agent-$A"
		fs_wait_for 15 health_is "$A" up up
		documented "$A"
		[ "$(show "$A" | jq .health.pid)" -eq $pid ]
		kill -9 $pid
		wait $pid 2>/dev/null || true
	done
	agent "$A"
	check_step "one agent after the races" up up
}

@test "faults: a SIGHUP storm between two configs, during a failover" {
	printf '[splitter]\ninterfaces = lana\nhook = xdp\n[health]\ninterval = 100ms\n' >"$D/c1.conf"
	printf '[splitter]\ninterfaces = lana\nhook = xdp\n[health]\ninterval = 80ms\n' >"$D/c2.conf"
	cp "$D/c1.conf" "$D/h.conf"
	agent "$B"
	agent "$A" -c "$D/h.conf"
	local pid=$AGENT_PID i
	# (it attaches the file's interfaces first: seconds on a loaded machine)
	fs_wait_for 30 health_is "$A" up up
	check_step "agents up" up up
	wan_underlay_drop "$B" b1
	check_step "vxs dead" down up
	for i in $(seq 40); do
		cp "$D/c$((i % 2 + 1)).conf" "$D/h.conf"
		kill -HUP $pid
		sleep 0.02
	done
	kill -0 $pid
	check_step "after 40 SIGHUPs" down up
	wan_underlay_heal "$B" b1
	check_step "healed" up up
	kill -0 $pid
	[ "$(show "$A" | jq .health.pid)" -eq $pid ]
}

@test "faults: the SHORT underlay flaps at 5 Hz for 4 s, then settles" {
	agent "$A"; agent "$B"
	check_step "agents up" up up
	local i
	for i in $(seq 20); do
		wan_underlay_drop "$B" b1
		sleep 0.1
		wan_underlay_heal "$B" b1
		sleep 0.1
	done
	# flap damping may hold vxs down a while (docs/health.md: up to 32 s)
	fs_wait_for 40 health_is "$A" up up
	check_step "after the flaps" up up
	show "$A" | jq -r '.health.tunnels[] | "# \(.dev): flaps \(.flaps), probes \(.probes), missed \(.missed)"'
}

# received FILE: the replies a "ping -q" summary in FILE counts
received() { sed -n 's/.* \([0-9]*\) received.*/\1/p' "$1"; }

@test "faults: route up swaps the tunnels while one is dead: the long class stays on the live one" {
	agent "$A"; agent "$B"
	check_step "agents up" up up
	wan_underlay_drop "$B" b1	# vxs, the SHORT tunnel, dies
	check_step "vxs (short) dead" down up
	local flaps ping lost
	flaps=$(show "$A" | jq '.health.tunnels[] | select(.dev == "vxs") | .flaps')
	# the long class at 50 Hz, from before the swap of both routers to after
	fs_bg ip netns exec "$C" ping -q -n -c 250 -i 0.02 -W 1 -Q $LONG 10.2.0.1 >"$D/ping-swap"
	ping=$(tail -n 1 "$BATS_TEST_TMPDIR/.fs_pids")
	sleep 1
	swapped_route "$A"
	# route up alone already sends the long class over the live tunnel
	# (vxs is down whatever its role), before the agent has looked
	[ "$(class_dev "$A" $LONG)" = vxl ]
	[ "$(class_dev "$A" 0)" = vxl ]
	swapped_route "$B"
	[ "$(class_dev "$B" $LONG)" = vxl ]
	wait "$ping" || true
	lost=$((250 - $(received "$D/ping-swap")))
	echo "# long class at 50 Hz across the swap: $lost of 250 lost"
	[ "$lost" -le 10 ]
	check_step "swapped, vxs (long) dead" up down
	# the agent kept vxs's verdict, flaps and hold-down: no new verdicts
	grep -q 'route up changed the tunnels: .*verdicts kept: vxl up, vxs down' "$D/agent-$A"
	[ "$(show "$A" | jq '.health.tunnels[] | select(.dev == "vxs") | .flaps')" -eq "$flaps" ]
	wan_underlay_heal "$B" b1
	check_step "healed" up up
}
