#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Tunnel health per address family: where route up records an IPv6
# gateway for a tunnel whose routes carry IPv6, the agent probes it over
# ICMPv6 too, beside IPv4; the tunnel is down when one of its families is
# (its class fails over), and a tunnel or family that the routes carry
# but nothing probes ("family not probed") makes route show, status (text
# and -j) degraded and doctor fail with a fix line.
FS_PREFIX=fstv6
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

# show: router A's route show, JSON
show() { wan_sc "$A" -j route show; }
in_force_is() { [ "$(show | jq -r '.health.in_force')" = "$1" ]; }
# both_up: the agent's verdict on both tunnels is up
both_up() { show | jq -e '[.health.tunnels[].state] == ["up", "up"]' >/dev/null; }
# families_up DEV: both families of DEV probed and up
families_up() {
	show | jq -e --arg d "$1" '.health.tunnels[] | select(.dev == $d) |
		[.families[] | .family + " " + .state] == ["ipv4 up", "ipv6 up"]' >/dev/null
}

# break6 DEV / heal6 DEV: router A's IPv6 gateway on DEV answers no more
# (its neighbour entry points to a MAC nobody has, so only IPv6 through
# that tunnel is lost) / again
break6() {
	local n=1
	[ "$1" = vxl ] && n=2
	ip -n "$A" neigh replace fd10:$n::2 lladdr 02:00:00:00:00:01 dev "$1" nud permanent
}
heal6() {
	local n=1 mb
	[ "$1" = vxl ] && n=2
	mb=$(ip -n "$B" -j link show "$1" | jq -r '.[0].address')
	ip -n "$A" neigh replace fd10:$n::2 lladdr "$mb" dev "$1" nud permanent
}

@test "probe family: both families probed where IPv6 gateways are recorded; an IPv6-only failure fails the class over and back" {
	wan_route split
	agent "$A"
	fs_wait_for 15 both_up
	show | jq -e '.state == "ok" and .problems == []'
	# IPv6 through SHORT dies, IPv4 still answers: SHORT is down, its
	# class runs over LONG
	break6 vxs
	fs_wait_for 10 in_force_is "short=LONG long=LONG"
	grep -q 'run: health: probing vxs (short) via 192.168.101.2, vxl (long) via 192.168.102.2; also probing vxs (short) over ipv6 via fd10:1::2, vxl (long) over ipv6 via fd10:2::2' "$D/agent-$A"
	grep -Eq 'run: health: ipv6 of vxs \(short\) via fd10:1::2: up -> down after [0-9]+ misses' "$D/agent-$A"
	grep -Eq 'run: health: vxs \(short\) up -> down after [0-9]+ misses.* \(ipv6\)$' "$D/agent-$A"
	show | jq -e '.health.tunnels[0] | .state == "down" and ([.families[].state] == ["up", "down"])'
	show | jq -e '.state == "degraded" and (.problems | index("tunnel vxs (short) failed: the short class runs over vxl")) != null'
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	# back when IPv6 answers again (after the hold-down)
	heal6 vxs
	fs_wait_for 15 in_force_is "short=SHORT long=LONG"
	grep -Eq 'run: health: vxs \(short\) down -> up after' "$D/agent-$A"
	show | jq -e '.state == "ok" and .problems == []'
	fs_wait_for 5 families_up vxs
	show | jq -e '.health.tunnels[0].families[1] | .target == "fd10:1::2" and .probes > 0 and .rtt_ms > 0'
	wan_sc "$A" route show | grep -q '^health:   families probed: ipv4 up via 192.168.101.2 (rtt .*), ipv6 up via fd10:1::2 (rtt'
}

@test "probe family: routes of a family nothing probes: route show, status and doctor say so, with the fix" {
	wan_sc "$A" attach lana --hook tc
	# IPv6 prefix, IPv4 gateways only (split mode takes device routes
	# for IPv6): the IPv6 routes have nothing to probe
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-long 192.168.102.2
	agent "$A"
	fs_wait_for 15 both_up
	local why='tunnel vxs (short): family not probed: its IPv6 routes have no failover (no IPv6 gateway recorded: route up ... --via-short IPv6-ADDRESS)'
	show | jq -e --arg w "$why" '.state == "degraded" and .routes_state == "ok" and (.problems | index($w)) != null'
	show | jq -e '.problems | index("tunnel vxl (long): family not probed: its IPv6 routes have no failover (no IPv6 gateway recorded: route up ... --via-long IPv6-ADDRESS)") != null'
	wan_sc "$A" route show | grep -qxF "degraded: $why"
	# status: text and JSON
	wan_sc "$A" status | grep -qF "routing: degraded ($why)"
	wan_sc "$A" -j status | jq -e --arg w "$why" '.routing.degraded and .routing.why == $w'
	# doctor fails, naming it, with the fix
	run -1 wan_sc "$A" doctor
	echo "$output"
	grep -A1 "^FAIL  health: degraded: $why" <<<"$output" |
		grep -q 'fix: give route up a gateway of that family for the tunnel'
	show | jq -e '.health.tunnels[0].families | map(.family) == ["ipv4"]'
	# the IPv6 gateways given: both families probed, nothing degraded
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2
	fs_wait_for 15 families_up vxs
	fs_wait_for 15 families_up vxl
	grep -q 'route up changed the tunnels: probing vxs (short) via 192.168.101.2, vxl (long) via 192.168.102.2; verdicts kept: vxs up, vxl up; also probing vxs (short) over ipv6' "$D/agent-$A"
	show | jq -e '.state == "ok" and .problems == []'
	run wan_sc "$A" doctor
	echo "$output"
	grep -Eq '^ok +health: the agent probes both tunnels' <<<"$output"
}

@test "probe family: an IPv4 prefix with an IPv6-only gateway: IPv4 not probed on that tunnel" {
	# LONG has only an IPv6 gateway: it is probed over IPv6, and its
	# IPv4 routes (device routes) are not
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 --via-long fd10:2::2
	agent "$A"
	fs_wait_for 15 both_up
	show | jq -e '.state == "degraded" and .problems == ["tunnel vxl (long): family not probed: its IPv4 routes have no failover (no IPv4 gateway recorded: route up ... --via-long IPv4-ADDRESS)"]'
	fs_wait_for 5 families_up vxs
	show | jq -e '.health.tunnels[1] | .state == "up" and ([.families[] | .family + " " + .state] == ["ipv6 up"])'
}
