#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The agent and the routes under change: the agent follows "route up" to
# new tunnels, routes of others are never replaced or deleted, one agent
# per namespace (a lock the kernel drops with the process), the health of
# a dead agent is not trusted, and the shipped unit lets the agent probe.
FS_PREFIX=fsts
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

# up_count NS: how many "-> up" verdicts the agent of NS logged
up_count() { grep -c 'health: vx[sl] .* -> up' "$D/agent-$1" || true; }
both_up() { [ "$(up_count "$1")" -ge "${2:-2}" ]; }
in_force_is() { [ "$(wan_sc "$1" -j route show | jq -r '.health.in_force')" = "$2" ]; }
monitored() { wan_sc "$1" -j route show | jq -e '.health.monitored' >/dev/null; }
not_monitored() { wan_sc "$1" -j route show | jq -e '.health.monitored | not' >/dev/null; }

# failed_over_agent: route up split and the agent in router A (its pid in
# AGENT_PID), whose SHORT underlay then dies: both classes over LONG
failed_over_agent() {
	wan_route split
	agent "$A"
	fs_wait_for 10 both_up "$A"
	wan_underlay_drop "$A" a1
	fs_wait_for 10 in_force_is "$A" "short=LONG long=LONG"
}

# LONG: the TOS byte of the long class. No splitter runs here, so route up
# matches the default long code point, DSCP 1 (LE: TOS 0x04)
LONG=0x04

# reach: one ping of each class from the client to the server (IPv4, IPv6)
reach() {
	ip netns exec "$C" ping -q -c 1 -i 0.2 -w 3 10.2.0.1 >/dev/null &&
	ip netns exec "$C" ping -q -c 1 -i 0.2 -w 3 -Q $LONG 10.2.0.1 >/dev/null &&
	ip netns exec "$C" ping -6 -q -c 1 -i 0.2 -w 3 fd02::1 >/dev/null &&
	ip netns exec "$C" ping -6 -q -c 1 -i 0.2 -w 3 -Q $LONG fd02::1 >/dev/null
}

swapped_route() { # NS: route up with SHORT and LONG swapped
	if [ "$1" = "$A" ]; then
		wan_sc "$A" route up --mode split --short-dev vxl --long-dev vxs \
			--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
			--via-short 192.168.102.2 --via-short fd10:2::2 \
			--via-long 192.168.101.2 --via-long fd10:1::2
	else
		wan_sc "$B" route up --mode split --short-dev vxl --long-dev vxs \
			--prefix 10.1.0.0/24 --prefix fd01::/64 --lan-dev lanb \
			--via-short 192.168.102.1 --via-short fd10:2::1 \
			--via-long 192.168.101.1 --via-long fd10:1::1
	fi
}

@test "route up swaps the tunnels under a running agent: it probes the new ones, and the dead one is left" {
	wan_route split
	agent "$A"
	agent "$B"
	wan_wait_both 10 both_up
	swapped_route "$A"
	swapped_route "$B"
	# both tunnels stay (in other roles): they keep their verdicts
	fs_wait_for 10 grep -q 'route up changed the tunnels: probing vxl (short) via 192.168.102.2, vxs (long) via 192.168.101.2; verdicts kept: vxl up, vxs up' "$D/agent-$A"
	fs_wait_for 10 grep -q 'verdicts kept: vxl up, vxs up' "$D/agent-$B"
	wan_sc "$A" -j route show | jq -e '.health.tunnels[0].dev == "vxl" and .health.tunnels[1].dev == "vxs"'
	# the classes take the swapped tunnels
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	[ "$(wan_via "$A" 10.2.0.1 $LONG)" = vxs ]
	reach
	# the new LONG tunnel (the old SHORT, vxs) dies
	wan_underlay_drop "$B" b1
	wan_underlay_drop "$A" a1
	wan_wait_both 10 in_force_is "short=SHORT long=SHORT"
	grep -q 'health: vxs (long) up -> down' "$D/agent-$A"
	# both classes over the live tunnel, vxl, and the verdict names vxs
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	[ "$(wan_via "$A" 10.2.0.1 $LONG)" = vxl ]
	reach
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok" and .health.tunnels[1].dev == "vxs" and .health.tunnels[1].state == "down" and .health.tunnels[0].state == "up"'
}

@test "route up with other gateways under a running agent: it probes the new targets" {
	ip -n "$A" addr add 192.168.101.5/30 dev vxs
	ip -n "$B" addr add 192.168.101.6/30 dev vxs
	ma=$(ip -n "$A" -j link show vxs | jq -r '.[0].address')
	mb=$(ip -n "$B" -j link show vxs | jq -r '.[0].address')
	ip -n "$A" neigh add 192.168.101.6 lladdr "$mb" dev vxs nud permanent
	ip -n "$B" neigh add 192.168.101.5 lladdr "$ma" dev vxs nud permanent
	wan_route split
	agent "$A"
	fs_wait_for 10 both_up "$A"
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --lan-dev lana --via-short 192.168.101.6 --via-long 192.168.102.2
	# vxs, probed at another target, starts over; vxl keeps its verdict
	fs_wait_for 10 grep -q 'route up changed the tunnels: probing vxs (short) via 192.168.101.6, .*; verdicts kept: vxl up$' "$D/agent-$A"
	fs_wait_for 10 both_up "$A" 3
	# the old gateway stops answering: the tunnel stays up over 20 probes
	ip -n "$B" addr del 192.168.101.2/30 dev vxs
	local p0
	p0=$(wan_sc "$A" -j route show | jq '.health.tunnels[0].probes')
	fs_wait_for 10 eval '[ "$(wan_sc "$A" -j route show | jq ".health.tunnels[0].probes")" -ge $((p0 + 20)) ]'
	wan_sc "$A" -j route show | jq -e '.health.tunnels[0].state == "up" and .health.tunnels[0].flaps == 0 and .health.in_force == "short=SHORT long=LONG"'
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
}

@test "route up refuses a route of the operator in its tables; route down leaves it" {
	ip -n "$A" route add 10.2.0.0/24 via 10.1.0.1 table 100 proto static
	ip -n "$A" -6 route add fd02::/64 via fd01::1 table 101 proto static
	before=$(wan_dump "$A")
	run -1 wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"table 100 already has a route to 10.2.0.0/24 of protocol static, not created by splitctl"* ]]
	[ "$(wan_dump "$A")" = "$before" ]
	wan_sc "$A" route down
	[ "$(wan_dump "$A")" = "$before" ]
	ip -n "$A" route show table 100 | grep -q '10.2.0.0/24 via 10.1.0.1 dev lana proto static'
	ip -n "$A" -6 route show table 101 | grep -q 'fd02::/64 via fd01::1 dev lana proto static'
	# free tables work
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2 --table-short 110 --table-long 111
	wan_sc "$A" route down
	[ "$(wan_dump "$A")" = "$before" ]
}

@test "a route of the operator put where ours was: the agent never replaces it, doctor names it" {
	wan_route split
	agent "$A"
	fs_wait_for 10 both_up "$A"
	# the operator takes the destination over
	ip -n "$A" route replace 10.2.0.0/24 via 10.1.0.1 table 100 proto static
	# a failover wants table 100 over vxl: the operator's route stays
	wan_underlay_drop "$A" a1
	fs_wait_for 5 grep -q 'table 100 already has a route to 10.2.0.0/24 of protocol static' "$D/agent-$A"
	ip -n "$A" route show table 100 | grep -q '10.2.0.0/24 via 10.1.0.1 dev lana proto static'
	run wan_sc "$A" doctor
	echo "$output"
	echo "$output" | grep -q 'route owners.*table 100 already has a route to 10.2.0.0/24 of protocol static'
	wan_sc "$A" route down
	ip -n "$A" route show table 100 | grep -q '10.2.0.0/24 via 10.1.0.1 dev lana proto static'
}

@test "a second agent in the namespace refuses to start, naming the first; the first's health stays" {
	failed_over_agent
	local first=$AGENT_PID
	hf=$(wan_health_file "$A")
	[ -f "$hf" ]
	# another pin directory changes nothing: the routes are the namespace's
	run -1 timeout 10 ip netns exec "$A" "$SPLITCTL" --pin-dir "$BPFA-other" run --interval 1
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"another agent (pid $first) runs in this network namespace"* ]]
	[ -f "$hf" ]
	monitored "$A"
	in_force_is "$A" "short=LONG long=LONG"
	# a route up now keeps the failover
	wan_route split
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	kill -TERM "$first"
	fs_wait_for 5 not_monitored "$A"
	# the agent's files go with it
	[ ! -e "$hf" ]
	[ ! -e "/run/flowsplit/agent-$(ip netns exec "$A" stat -L -c %i /proc/self/ns/net)" ]
}

@test "a dead agent's health is not trusted, even when its PID lives again; down removes its files" {
	failed_over_agent
	local first=$AGENT_PID
	kill -9 "$first"
	wait "$first" 2>/dev/null || true
	hf=$(wan_health_file "$A")
	af=/run/flowsplit/agent-$(ip netns exec "$A" stat -L -c %i /proc/self/ns/net)
	[ -f "$hf" ] && [ -f "$af" ]
	# the PID reused: a live process now has the dead agent's PID
	sleep 60 &
	local reuse=$!
	echo "$reuse" >>"$D/.fs_pids"
	jq -c ".pid = $reuse" "$hf" >"$hf.new" && mv "$hf.new" "$hf"
	not_monitored "$A"
	# route up installs the split of both tunnels: no agent would undo a failover
	wan_underlay_heal "$A" a1
	wan_route split
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
	kill -9 "$reuse"
	wan_sc "$A" route down
	[ ! -e "$hf" ] && [ ! -e "$af" ]
}

# caps FILE: the CapabilityBoundingSet of a unit file as setpriv's list
caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$1" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_/+/' | paste -sd, -
}

@test "the agent under the installed unit's capabilities probes and fails over (ping sockets closed)" {
	dest=$D/root
	make -C "$FS_ROOT" -s install DESTDIR="$dest" BUILD="$FS_BUILD" >/dev/null
	unit=$dest/etc/systemd/system/flowsplit.service
	set=$(caps "$unit")
	echo "# bounding set: $set"
	[ -n "$set" ]
	# a namespace nobody configured: ping sockets for no group
	[ "$(ip netns exec "$A" sysctl -n net.ipv4.ping_group_range | tr -s '\t ' ' ')" = "1 0" ]
	wan_route split
	ip netns exec "$A" setpriv --bounding-set "-all,$set" --inh-caps -all -- \
		"$SPLITCTL" --pin-dir "$BPFA" run --interval 1 >>"$D/agent-$A" 2>&1 </dev/null &
	local pid=$!
	wan_agent_started $pid
	fs_wait_for 10 both_up "$A"
	# the agent holds exactly that set (setpriv exec'd into splitctl), not root's
	want=$(setpriv --bounding-set "-all,$set" --inh-caps -all -- grep CapEff /proc/self/status)
	echo "# agent $(grep CapEff /proc/$pid/status), root's $(grep CapEff /proc/self/status)"
	[ "$(grep CapEff /proc/$pid/status)" = "$want" ]
	[ "$want" != "$(grep CapEff /proc/self/status)" ]
	wan_sc "$A" -j route show | jq -e '.health.monitored and .health.tunnels[0].state == "up"'
	run wan_sc "$A" doctor
	echo "$output"
	echo "$output" | grep -q 'probing.*the agent (pid [0-9]*) can send probes: CAP_NET_RAW'
	wan_underlay_drop "$A" a1
	fs_wait_for 10 in_force_is "$A" "short=LONG long=LONG"
	! grep -q 'Operation not permitted' "$D/agent-$A"
}

@test "doctor says when probing cannot work" {
	wan_route split
	run ip netns exec "$A" setpriv --bounding-set -all,+bpf,+net_admin,+sys_admin,+perfmon,+sys_resource \
		--inh-caps -all -- "$SPLITCTL" --pin-dir "$BPFA" doctor
	echo "$output"
	echo "$output" | grep -q 'probing.*cannot send probes: no CAP_NET_RAW, group 0 not in net.ipv4.ping_group_range 1-0'
}

@test "route up: a prefix with host bits after a good one: exit 2, one line, nothing installed" {
	before=$(wan_dump "$A")
	run -2 wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.3.0.0/24 --prefix 10.2.0.1/24 --via-short 192.168.101.2 --via-long 192.168.102.2
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"'10.2.0.1/24': host bits set: accepted: a network address ADDR/LEN (10.2.0.0/24)"* ]]
	[ "$(wan_dump "$A")" = "$before" ]
	wan_sc "$A" -j route show | jq -e '.state == "down"'
}

wide_route() { # route up of the deploy guide's wider prefixes, a /16 and a /48
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/16 --prefix fd02::/48 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2
}

# wide_refused TEXT: wide_route exits 1, one line containing TEXT, and
# changes nothing
wide_refused() {
	local before
	before=$(wan_dump "$A")
	run -1 wide_route
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$1"* ]]
	[ "$(wan_dump "$A")" = "$before" ]
}

@test "route up refuses a route of the operator inside or around our prefixes; doctor names it; the agent leaves it" {
	ip -n "$A" route add 10.2.5.0/24 via 10.1.0.1 table 100 proto static
	ip -n "$A" -6 route add fd02:0:0:5::/64 via fd01::1 table 101 proto static
	wide_refused "table 100 has a route to 10.2.5.0/24 of protocol static inside our prefix 10.2.0.0/16, not created by splitctl"
	wan_sc "$A" -j route show | jq -e '.state == "down"'
	ip -n "$A" route del 10.2.5.0/24 table 100
	wide_refused "table 101 has a route to fd02:0:0:5::/64 of protocol static inside our prefix fd02::/48"
	ip -n "$A" -6 route del fd02:0:0:5::/64 table 101
	# one around ours: our rules would send it the LAN's other traffic
	ip -n "$A" route add 10.0.0.0/8 via 10.1.0.1 table 101 proto static
	wide_refused "table 101 has a route to 10.0.0.0/8 of protocol static around our prefix 10.2.0.0/16"
	ip -n "$A" route del 10.0.0.0/8 table 101
	# installed, then the operator adds one inside: doctor names it, and
	# neither a failover nor route down touches it
	wide_route
	agent "$A"
	fs_wait_for 10 both_up "$A"
	ip -n "$A" route add 10.2.5.0/24 via 10.1.0.1 table 100 proto static
	run wan_sc "$A" doctor
	echo "$output"
	echo "$output" | grep -q 'FAIL  route owners: table 100 has a route to 10.2.5.0/24 of protocol static inside our prefix 10.2.0.0/16'
	wan_underlay_drop "$A" a1
	fs_wait_for 10 in_force_is "$A" "short=LONG long=LONG"
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	ip -n "$A" route show table 100 | grep -q '10.2.5.0/24 via 10.1.0.1 dev lana proto static'
	wan_sc "$A" route down
	ip -n "$A" route show table 100 | grep -q '10.2.5.0/24 via 10.1.0.1 dev lana proto static'
}
