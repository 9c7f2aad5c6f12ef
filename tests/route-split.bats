#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# tunnel-cfg end to end: client - rA = SHORT/LONG VXLAN tunnels = rB - server,
# with the real splitter on both routers' LAN interfaces.
FS_PREFIX=fstr
load lib/common
load lib/wan

FAILOVER=$FS_BUILD/failover-test

# fo NS ARGS...: the failover harness (health/failover.h) in a router
fo() {
	local ns=$1
	shift
	ip netns exec "$ns" "$FAILOVER" "$@"
}

# fo_agent NS ARGS...: the harness as an agent in the background, output in
# $D/agent-NS, pid in FO_PID; stopped with SIGTERM at teardown (it withdraws
# its file)
fo_agent() {
	local ns=$1
	shift
	ip netns exec "$ns" "$FAILOVER" "$@" >"$D/agent-$ns" 2>&1 </dev/null &
	FO_PID=$!
	wan_agent_started "$FO_PID"
	fs_wait_for 5 grep -q '^agent ready' "$D/agent-$ns"
}

sink() { # PORT FILE [6]
	fs_bg ip netns exec "$S" socat -u TCP${3:-}-LISTEN:"$1",reuseaddr OPEN:"$2",creat,trunc
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':$1 '"
}

capture() { # NS DEV FILE
	fs_bg ip netns exec "$1" tcpdump -U -n -B 16384 -s 200 -i "$2" -w "$3" udp port 4789
	fs_wait_for 5 test -s "$3"
}

# nft_count NS: count, on the receiving router, inner TCP packets per tunnel
# and direction, and underlay packets per outer DSCP
nft_count() {
	ip netns exec "$1" nft -f - <<-EOF
	table inet fstr {
		chain pre {
			type filter hook prerouting priority -300;
			iifname "vxs" ip protocol tcp counter name "vxs"
			iifname "vxl" ip protocol tcp counter name "vxl"
			# inner IPv4 TCP: VXLAN (8 B) + inner Ethernet (14 B) + IP
			# protocol byte (9) after the UDP header: bit 312 of th
			iifname { "b1", "a1" } udp dport 4789 @th,312,8 6 ip dscp != 0 counter name "w1bad"
			iifname { "b2", "a2" } udp dport 4789 @th,312,8 6 ip dscp != 1 counter name "w2bad"
			iifname { "b2", "a2" } udp dport 4789 counter name "w2"
		}
		counter vxs {}
		counter vxl {}
		counter w1bad {}
		counter w2bad {}
		counter w2 {}
	}
	EOF
}

nft_get() { # NS COUNTER
	ip netns exec "$1" nft -j list counter inet fstr "$2" | jq '.nftables[1].counter.packets'
}

@test "split: first T packets per direction over SHORT, the rest over LONG, payload intact, DSCP on the underlays" {
	wan_attach 10
	wan_route split
	# count packets as sent: no GRO merging on the receiving routers
	for l in "$A a1" "$A a2" "$A vxs" "$A vxl" "$B b1" "$B b2" "$B vxs" "$B vxl"; do
		ip netns exec ${l% *} ethtool -K ${l#* } gro off
	done
	nft_count "$A"
	nft_count "$B"
	head -c 1600000 /dev/urandom >"$D/src"
	sink 7000 "$D/dst"
	ip netns exec "$C" socat -u OPEN:"$D/src" TCP:10.2.0.1:7000
	fs_wait_for 10 cmp -s "$D/src" "$D/dst"
	shortA=$(wan_sc "$A" -j stats | jq .packets_short)
	longA=$(wan_sc "$A" -j stats | jq .packets_long)
	shortB=$(wan_sc "$B" -j stats | jq .packets_short)
	longB=$(wan_sc "$B" -j stats | jq .packets_long)
	echo "splitter: A short $shortA long $longA; B short $shortB long $longB"
	acksB=$(wan_sc "$B" -j stats | jq .acks_short)
	echo "received on B: vxs $(nft_get "$B" vxs) vxl $(nft_get "$B" vxl); on A: vxs $(nft_get "$A" vxs) vxl $(nft_get "$A" vxl)"
	# server->client is the ACK stream: with ack-short (default) its pure
	# ACKs after the 10th packet stay short, counted in acks_short
	[ "$shortA" -eq 10 ] && [ "$((shortB - acksB))" -eq 10 ] && [ "$acksB" -gt 100 ]
	[ "$((shortA + longA))" -ge 1000 ]
	# client->server packets arrive at B through the tunnel of their class,
	# server->client ones at A: exactly as classified
	[ "$(nft_get "$B" vxs)" -eq "$shortA" ] && [ "$(nft_get "$B" vxl)" -eq "$longA" ]
	[ "$(nft_get "$A" vxs)" -eq "$shortB" ] && [ "$(nft_get "$A" vxl)" -eq "$longB" ]
	# outer DSCP (VXLAN tos inherit): 0 on the SHORT underlay, 1 on the LONG one
	[ "$(nft_get "$B" w2)" -ge "$longA" ]
	[ "$(nft_get "$B" w1bad)" -eq 0 ] && [ "$(nft_get "$B" w2bad)" -eq 0 ]
	[ "$(nft_get "$A" w1bad)" -eq 0 ] && [ "$(nft_get "$A" w2bad)" -eq 0 ]
	# and a sample of the LONG underlay, decoded by tcpdump: outer tos 0x4
	capture "$B" b2 "$D/w2.pcap"
	sink 7005 /dev/null
	head -c 200000 /dev/zero | ip netns exec "$C" socat -u - TCP:10.2.0.1:7005
	fs_wait_for 5 sh -c "tcpdump -r '$D/w2.pcap' -n -v 2>/dev/null | grep -q 'tos 0x4'" ||
		{ tcpdump -r "$D/w2.pcap" -n -v | head; false; }
	# every outer header carrying inner IPv4 TCP (protocol byte at UDP
	# offset 8 + 8 + 14 + 9 = 39)
	! tcpdump -r "$D/w2.pcap" -n -v 'udp[39] = 6' 2>/dev/null | grep 'proto UDP' | grep -v 'tos 0x4' | grep -q . || false
}

@test "split: UDP and ICMP use the SHORT tunnel" {
	wan_attach 1
	wan_route split
	capture "$B" b1 "$D/w1.pcap"
	capture "$B" b2 "$D/w2.pcap"
	ip netns exec "$C" ping -c 5 -i 0.05 -q 10.2.0.1
	fs_bg ip netns exec "$S" socat -u UDP-RECV:7001 OPEN:"$D/udp",creat
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -lun | grep -q ':7001 '"
	for i in $(seq 10); do echo "datagram $i"; done | ip netns exec "$C" socat -u - UDP-SENDTO:10.2.0.1:7001
	fs_wait_for 5 sh -c "[ \$(wc -l <'$D/udp') -ge 1 ]"
	sleep 0.5
	icmp() { tcpdump -r "$1" -n 2>/dev/null | grep -c "IP 10.1.0.1 > 10.2.0.1: ICMP echo request" || true; }
	udp() { tcpdump -r "$1" -n 2>/dev/null | grep -c "IP 10.1.0.1.[0-9]* > 10.2.0.1.7001: UDP" || true; }
	[ "$(icmp "$D/w1.pcap")" -eq 5 ] && [ "$(icmp "$D/w2.pcap")" -eq 0 ]
	[ "$(udp "$D/w1.pcap")" -ge 1 ] && [ "$(udp "$D/w2.pcap")" -eq 0 ]
	[ "$(wan_sc "$A" -j stats | jq .pass_non_tcp)" -ge 6 ]
}

@test "split: IPv6 end to end" {
	wan_attach 10
	wan_route split
	head -c 300000 /dev/urandom >"$D/src"
	l0=$(wan_tx "$A" vxl)
	sink 7002 "$D/dst" 6
	ip netns exec "$C" socat -u OPEN:"$D/src" TCP6:[fd02::1]:7002
	fs_wait_for 10 cmp -s "$D/src" "$D/dst"
	[ "$(wan_sc "$A" -j stats | jq '.packets_short - .acks_short')" -eq 10 ]
	[ "$(( $(wan_tx "$A" vxl) - l0 ))" -ge "$(wan_sc "$A" -j stats | jq .packets_long)" ]
	[ "$(wan_sc "$A" -j flows | jq -r '.[0].family')" = ipv6 ]
}

@test "ecmp: 64 parallel flows spread over both tunnels, each flow on one tunnel" {
	wan_attach 10
	wan_route ecmp
	[ "$(ip netns exec "$A" cat /proc/sys/net/ipv4/fib_multipath_hash_policy)" = 1 ]
	# rB records the client ports arriving through each tunnel (in-kernel sets)
	ip netns exec "$B" nft -f - <<-EOF
	table inet fstr {
		set vxs { type inet_service; }
		set vxl { type inet_service; }
		chain pre {
			type filter hook prerouting priority -300;
			iifname "vxs" tcp dport 7004 update @vxs { tcp sport }
			iifname "vxl" tcp dport 7004 update @vxl { tcp sport }
		}
	}
	EOF
	s0=$(wan_tx "$A" vxs); l0=$(wan_tx "$A" vxl)
	# socat forks per connection for the 64 clients; a backlog large enough
	# that no SYN is dropped: on a retransmission timeout Linux re-hashes
	# the socket (sk_txhash), which legitimately moves a flow to the other
	# path of a multipath route
	fs_bg ip netns exec "$S" socat -u TCP-LISTEN:7004,reuseaddr,fork,backlog=256 OPEN:/dev/null
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':7004 '"
	pids=()
	for i in $(seq 64); do
		head -c 30000 /dev/zero | ip netns exec "$C" socat -u - TCP:10.2.0.1:7004 &
		pids+=($!)
	done
	wait "${pids[@]}"
	s=$(( $(wan_tx "$A" vxs) - s0 )); l=$(( $(wan_tx "$A" vxl) - l0 ))
	echo "short tunnel $s packets, long tunnel $l"
	[ "$((s * 100 / (s + l)))" -ge 20 ] && [ "$((l * 100 / (s + l)))" -ge 20 ]
	ports() { ip netns exec "$B" nft -j list set inet fstr "$1" | jq -r '.nftables[1].set.elem // [] | .[]' | sort; }
	ports vxs >"$D/p1"; ports vxl >"$D/p2"
	echo "flows: $(wc -l <"$D/p1") via vxs, $(wc -l <"$D/p2") via vxl"
	[ "$(cat "$D/p1" "$D/p2" | sort -u | wc -l)" -eq 64 ]
	[ "$(wc -l <"$D/p1")" -ge 13 ] && [ "$(wc -l <"$D/p2")" -ge 13 ]   # 20 % of 64 flows
	[ -z "$(comm -12 "$D/p1" "$D/p2")" ]
}

@test "up is idempotent, modes switch in place without loss, down restores the tables exactly" {
	ip -n "$A" rule add pref 500 from 10.9.9.9 lookup 100
	# distinct hash policies: ecmp sets 1, split and down put these back
	ip netns exec "$A" sysctl -qw net.ipv4.fib_multipath_hash_policy=2 net.ipv6.fib_multipath_hash_policy=0
	hashpol() { ip netns exec "$A" cat /proc/sys/net/ipv4/fib_multipath_hash_policy /proc/sys/net/ipv6/fib_multipath_hash_policy | paste -sd' '; }
	before=$(wan_dump "$A")
	wan_route split
	one=$(wan_dump "$A")
	wan_route split
	[ "$(wan_dump "$A")" = "$one" ]
	# continuous traffic while switching split <-> ecmp
	fs_bg ip netns exec "$C" ping -q -i 0.01 -c 300 -w 10 10.2.0.1
	pinger=$!
	for i in 1 2 3 4; do wan_route ecmp; wan_route split; done
	rc=0; wait "$pinger" || rc=$?
	[ "$rc" -eq 0 ]   # ping -c 300 -w 10: exit 0 only when all 300 replies came back
	[ "$(wan_dump "$A")" = "$one" ]
	[ "$(hashpol)" = "2 0" ]
	wan_route ecmp
	[ "$(hashpol)" = "1 1" ]
	wan_route ecmp
	wan_sc "$A" route down
	[ "$(wan_dump "$A")" = "$before" ]
	[ "$(hashpol)" = "2 0" ]
	ip -n "$A" rule show | grep -q 'from 10.9.9.9 lookup 100'
	# down again: nothing left to remove
	wan_sc "$A" route down
	[ "$(wan_dump "$A")" = "$before" ]
}

@test "route show: mode, rules, routes, tunnel counters" {
	wan_route split
	run wan_sc "$A" -j route show
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.mode == "split" and (.rules | length) == 4 and (.routes | length) == 4'
	echo "$output" | jq -e '[.tunnels[].name] | sort == ["vxl", "vxs"]'
	echo "$output" | jq -e '.tunnels | all(.up and (.tx_packets | type == "number"))'
	wan_route ecmp
	wan_sc "$A" -j route show | jq -e '.mode == "ecmp" and (.rules | length) == 2 and (.routes | length) == 2'
	wan_sc "$A" -j route show | jq -e '.routes[0].devs | length == 2'
	wan_sc "$A" route down
	wan_sc "$A" -j route show | jq -e '.mode == "down"'
}

route_a() { # MODE [options]: route up on rA only
	local mode=$1
	shift
	wan_sc "$A" route up --mode "$mode" --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --lan-dev lana --via-short 192.168.101.2 \
		--via-long 192.168.102.2 "$@"
}

# refused CMD...: exit code, one message line, and no change to the tables
refused() {
	local code=$1 pattern=$2
	shift 2
	before=$(wan_dump "$A")
	run "$@"
	echo "$output"
	[ "$status" -eq "$code" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$pattern"* ]]
	[ "$(wan_dump "$A")" = "$before" ]
}

@test "errors: refused code point, missing or down tunnel, bad values: nothing installed" {
	refused 2 "DSCP 10 cannot be matched by this kernel's rules (tos selector): accepted: DSCP 1..7" \
		route_a split --selector tos --dscp-long 10
	refused 2 "dscp-long: invalid DSCP '64'" route_a split --dscp-long 64
	refused 1 "interface 'nosuch' does not exist" \
		wan_sc "$A" route up --mode split --short-dev vxs --long-dev nosuch --prefix 10.2.0.0/24
	# not tunnels: the loopback, a LAN interface of the same plan
	refused 2 "--long-dev 'lo': a loopback device, not a tunnel" \
		wan_sc "$A" route up --mode split --short-dev vxs --long-dev lo --via-long 127.0.0.1 \
		--prefix 10.2.0.0/24
	refused 2 "--short-dev 'lana': also a LAN interface (--lan-dev)" \
		wan_sc "$A" route up --mode split --short-dev lana --long-dev vxl --lan-dev lana \
		--prefix 10.2.0.0/24
	refused 2 "prefix: invalid value '10.2.0.0/33'" \
		wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/33
	refused 2 "mode: invalid value 'fast'" \
		wan_sc "$A" route up --mode fast --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24
	refused 2 "at least one remote prefix" \
		wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl
	# on top of a split installation: the v4 multipath route must not go in
	route_a split
	refused 2 "IPv6 prefix fd02::/64 needs IPv6 gateways" \
		wan_sc "$A" route up --mode ecmp --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--prefix fd02::/64 --via-short 192.168.101.2 --via-long 192.168.102.2
	wan_sc "$A" route down
	# the DSCP selector takes code points the tos selector cannot
	route_a split --dscp-long 10
	wan_sc "$A" -j route show | jq -e '[.rules[].dscp] | index(10) != null'
	wan_sc "$A" route down
	ip -n "$A" link set vxl down
	refused 1 "tunnel interface 'vxl' is down" route_a split
}

@test "tunnel add: unsupported kinds and bad values are refused clearly" {
	run wan_sc "$A" tunnel add gre1 gre --local 172.16.1.1 --remote 172.16.1.2
	[ "$status" -eq 1 ]
	[[ "$output" == *"this kernel has no gre tunnels"* ]] || [ -z "skip: kernel has GRE" ]
	run wan_sc "$A" tunnel add vx9 vxlan --vni 0 --local 172.16.1.1 --remote 172.16.1.2 --dev a1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--vni: invalid value '0'"* ]]
	run wan_sc "$A" tunnel add vx9 vxlan --vni 9 --local 172.16.1.1 --remote 172.16.1.2 --dev a1 --mtu 1600
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs an underlay MTU of 1650"* ]]
	wan_sc "$A" -j tunnel show | jq -e 'map(select(.name == "vxs")) | .[0].mtu == 1500 and .[0].vni == 101'
}

# vias SHORT_DEV LONG_DEV: router A sends the short class (tos 0) to the
# server over SHORT_DEV, the long class (tos 0x04) over LONG_DEV
vias() {
	[ "$(wan_via "$A" 10.2.0.1)" = "$1" ]
	[ "$(wan_via "$A" 10.2.0.1 0x04)" = "$2" ]
}

# applied_both SHORT LONG PLAN: the harness applies the verdicts SHORT and
# LONG (up/down) in both routers; each changes both tables to PLAN
applied_both() {
	local ns
	for ns in "$A" "$B"; do
		run fo "$ns" apply "$1" "$2"
		[ "$status" -eq 0 ]
		[ "$output" = "applied plan=$3 changed=2" ]
	done
}

@test "failover: plans switch tables in place; 100 Hz pings of both classes lose nothing" {
	[ -x "$FAILOVER" ] || { echo "$FAILOVER not built" >&2; false; }
	wan_route split
	one=$(wan_dump "$A")
	vias vxs vxl
	# the SHORT class (tos 0) and the LONG class (tos 0x04: DSCP 1, whose
	# echo replies keep it), 100 packets per second each
	fs_bg ip netns exec "$C" ping -q -i 0.01 -c 600 -w 30 10.2.0.1 >"$D/ping1"
	p1=$!
	fs_bg ip netns exec "$C" ping -q -Q 0x04 -i 0.01 -c 600 -w 30 10.2.0.1 >"$D/ping2"
	p2=$!
	local n=0 ns
	for i in 1 2 3; do
		# SHORT down: both classes over LONG, in both routers
		applied_both down up "short=LONG long=LONG"
		vias vxl vxl
		# the same plan again changes nothing
		[ "$(fo "$A" apply down up)" = "applied plan=short=LONG long=LONG changed=0" ]
		sleep 0.3
		for ns in "$A" "$B"; do fo "$ns" apply up up >/dev/null; done
		vias vxs vxl
		sleep 0.3
		# LONG down: both over SHORT
		applied_both up down "short=SHORT long=SHORT"
		vias vxs vxs
		sleep 0.3
		for ns in "$A" "$B"; do fo "$ns" apply up up >/dev/null; done
		n=$((n + 4))
	done
	rc1=0; wait "$p1" || rc1=$?
	rc2=0; wait "$p2" || rc2=$?
	cat "$D/ping1" "$D/ping2"
	echo "# $n plan switches per router during 100 Hz pings: SHORT class $(grep -o '[0-9]* packets transmitted, [0-9]* received' "$D/ping1"), LONG class $(grep -o '[0-9]* packets transmitted, [0-9]* received' "$D/ping2")" >&3
	# ping -c 600 -w 30: exit 0 only when all 600 replies came back
	[ "$rc1" -eq 0 ]
	[ "$rc2" -eq 0 ]
	# back to split: exactly what route up installed
	[ "$(wan_dump "$A")" = "$one" ]
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok" and .missing == []'
}

@test "failover: ecmp: the dead member leaves the multipath route and returns" {
	wan_route ecmp
	mp() { wan_sc "$A" -j route show | jq -c '[.routes[] | select(.dst == "10.2.0.0/24") | .nexthops[] | [.dev, .via]]'; }
	[ "$(mp)" = '[["vxs","192.168.101.2"],["vxl","192.168.102.2"]]' ]
	mp6() { wan_sc "$A" -j route show | jq -c '[.routes[] | select(.dst == "fd02::/64") | .nexthops[] | [.dev, .via]]'; }
	[ "$(mp6)" = '[["vxs","fd10:1::2"],["vxl","fd10:2::2"]]' ]
	[ "$(fo "$A" apply up down)" = "applied plan=short=SHORT changed=2" ]
	[ "$(mp)" = '[["vxs","192.168.101.2"]]' ]
	[ "$(mp6)" = '[["vxs","fd10:1::2"]]' ]
	wan_sc "$A" -j route show | jq -e '.state == "degraded"'   # no agent: both up wanted
	ip -n "$A" route show table 100 10.2.0.0/24 | grep -q 'via 192.168.101.2 dev vxs'
	! ip -n "$A" route show table 100 10.2.0.0/24 | grep -q nexthop || false
	[ "$(fo "$A" apply down up)" = "applied plan=short=LONG changed=2" ]
	[ "$(mp)" = '[["vxl","192.168.102.2"]]' ]
	[ "$(mp6)" = '[["vxl","fd10:2::2"]]' ]
	[ "$(fo "$A" apply up up)" = "applied plan=short=SHORT+LONG changed=2" ]
	[ "$(mp)" = '[["vxs","192.168.101.2"],["vxl","192.168.102.2"]]' ]
	[ "$(mp6)" = '[["vxs","fd10:1::2"],["vxl","fd10:2::2"]]' ]
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok"' 
	# a tunnel without a verdict, and both down with "keep": nothing changes
	[ "$(fo "$A" apply init down)" = "applied plan=short=SHORT+LONG changed=0" ]
	[ "$(fo "$A" apply down down)" = "applied plan=short=SHORT+LONG changed=0" ]
}

@test "failover: both down with main: our routes go, the rules stay; route down restores everything" {
	before=$(wan_dump "$A")
	wan_route split
	fo_agent "$A" --both-down main agent down down
	cat "$D/agent-$A"
	[ -z "$(ip -n "$A" route show table 100 proto 245)" ]
	[ -z "$(ip -n "$A" route show table 101 proto 245)" ]
	[ "$(ip -n "$A" rule show | grep -c 'lookup 10[01]')" -eq 2 ]
	# route show: what the agent's plan wants is there; its health shown
	run wan_sc "$A" -j route show
	echo "$output"
	echo "$output" | jq -e '.routes_state == "ok" and (.routes | length) == 0 and (.rules | length) == 4'
	echo "$output" | jq -e '.health.monitored and .health.plan == "main" and .health.in_force == "main"'
	echo "$output" | jq -e '[.health.tunnels[] | [.dev, .role, .state]] == [["vxs","short","down"],["vxl","long","down"]]'
	echo "$output" | jq -e '.health.tunnels | all(.flaps == 0 and .loss_pct == 100 and (.for_s | type == "number"))'
	wan_sc "$A" route show | grep -q '^health: vxl (long) down for '
	# route up again keeps the agent's failover in force
	run wan_route split
	[ "$status" -eq 0 ]
	[ -z "$(ip -n "$A" route show table 100 proto 245)" ]
	# route down takes everything away whatever the agent left
	wan_sc "$A" route down
	[ "$(wan_dump "$A")" = "$before" ]
	wan_sc "$A" -j route show | jq -e '.mode == "down" and .state == "down"'
	# the agent has nothing to steer any more: re-converging changes nothing
	run fo "$A" reconverge
	[ "$status" -eq 1 ]
	[[ "$output" == *"route up has not run"* ]]
	[ "$(wan_dump "$A")" = "$before" ]
}

@test "link down/up drops routes: route show degraded, naming them; re-converge restores" {
	wan_route split
	wan_sc "$A" route show | grep -qx 'health: not monitored (no agent publishes tunnel health)'
	wan_sc "$A" route show | grep -q '^route: table 101 10.2.0.0/24 via 192.168.102.2 dev vxl$'
	ip -n "$A" link set vxl down
	ip -n "$A" link set vxl up
	run wan_sc "$A" route show
	echo "$output"
	[[ "$output" == *"state: degraded (table 101: route 10.2.0.0/24 via 192.168.102.2 dev vxl missing; table 101: route fd02::/64 via fd10:2::2 dev vxl missing)"* ]]
	run wan_sc "$A" -j route show
	echo "$output" | jq -e '.mode == "split" and .state == "degraded" and .degraded == true and (.missing | length) == 2'
	[ "$(wan_via "$A" 10.2.0.1 0x04)" = vxs ]   # the long class fell through to SHORT
	# the link down also took vxl's IPv6 address (keep_addr_on_down 0):
	# the IPv4 route returns, the IPv6 one cannot, and the error says why
	run fo "$A" reconverge
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"route fd02::/64 via fd10:2::2 dev vxl in table 101: No route to host (gateway fd10:2::2 is not on a network of dev vxl"* ]]
	[ "$(wan_via "$A" 10.2.0.1 0x04)" = vxl ]
	wan_sc "$A" route show | grep -q 'state: degraded (table 101: route fd02::/64 via fd10:2::2 dev vxl missing)'
	ip -n "$A" addr add fd10:2::1/64 dev vxl nodad
	[ "$(fo "$A" reconverge)" = "reconverged changed=1" ]
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok" and .missing == []'
	# with keep_addr_on_down the whole link down/up is repaired in one go
	ip netns exec "$A" sysctl -qw net.ipv6.conf.vxl.keep_addr_on_down=1
	ip -n "$A" link set vxl down
	ip -n "$A" link set vxl up
	wan_sc "$A" -j route show | jq -e '.state == "degraded" and (.missing | length) == 2'
	[ "$(fo "$A" reconverge)" = "reconverged changed=2" ]
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok"'
	[ "$(wan_via "$A" 10.2.0.1 0x04)" = vxl ]
	# a missing rule is named too, and re-converging adds it back
	ip -n "$A" rule del pref 1000 iif lana lookup 101
	wan_sc "$A" route show | grep -q 'state: degraded (rule ipv4 priority 1000 iif lana lookup 101 missing)'
	[ "$(fo "$A" reconverge)" = "reconverged changed=0" ]
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok"'
}

@test "link monitor: the agent fails over on a tunnel link down and re-converges on link up" {
	wan_route split
	fo_agent "$A" agent up up
	ip -n "$A" link set vxl down
	fs_wait_for 5 grep -q '^event kind=down dev=vxl' "$D/agent-$A"
	# LONG down (link event): table LONG over SHORT, right away
	ip -n "$A" route show table 101 10.2.0.0/24 | grep -q 'via 192.168.101.2 dev vxs'
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok" and .health.in_force == "short=SHORT long=SHORT"'
	wan_sc "$A" -j route show | jq -e '.health.tunnels[1].state == "down" and .health.tunnels[1].link_down and .health.tunnels[1].flaps == 1'
	ip -n "$A" link set vxl up
	fs_wait_for 5 grep -q '^event kind=up dev=vxl' "$D/agent-$A"
	# someone deletes a route of ours: put back
	ip -n "$A" route del 10.2.0.0/24 table 100 proto 245
	fs_wait_for 5 grep -q '^event kind=route-lost dev= changed=1' "$D/agent-$A"
	ip -n "$A" route show table 100 10.2.0.0/24 | grep -q 'via 192.168.101.2 dev vxs'
	cat "$D/agent-$A"
	# the LONG tunnel stays down (no prober here to bring it back)
	wan_sc "$A" -j route show | jq -e '.routes_state == "ok" and .health.in_force == "short=SHORT long=SHORT"'
	kill -TERM "$FO_PID"
	not_monitored() { wan_sc "$A" route show | grep -q '^health: not monitored'; }
	fs_wait_for 5 not_monitored
	# without the agent, the routes of both tunnels up are wanted, and
	# nothing watches the tunnels: degraded, and doctor fails
	wan_sc "$A" -j route show | jq -e '.state == "degraded" and (.problems[0] | startswith("no agent: "))'
	run wan_sc "$A" doctor
	[ "$status" -eq 1 ]
	[[ "$output" == *"degraded: no agent: the tunnels are not probed"* ]]
}

@test "errors: an unreachable gateway is named; nothing installed" {
	refused 1 "gateway 192.168.200.9 is not on a network of dev vxl" route_a split --via-long 192.168.200.9
	refused 1 "route 10.2.0.0/24 via 192.168.200.9 dev vxl in table 101" route_a split --via-long 192.168.200.9
	wan_sc "$A" -j route show | jq -e '.mode == "down" and .state == "down"'
}

@test "failover with real probes: the SHORT underlay dies, both classes move to LONG, and return" {
	wan_route split
	fo_agent "$A" probe
	fo_agent "$B" probe
	both_up() { [ "$(grep -c '^health .* to=up ' "$D/agent-$1")" -ge 2 ]; }
	wan_wait_both 10 both_up
	grep -q 'plan=short=SHORT long=LONG changed=0' "$D/agent-$A"
	wan_ping_start
	# every VXLAN packet arriving at B over the SHORT underlay is lost:
	# A's probes and B's probe answers alike, the devices stay up
	wan_underlay_drop "$B" b1
	down() { grep -q '^health tunnel=0 to=down .* plan=short=LONG long=LONG changed=2' "$D/agent-$1"; }
	wan_wait_both 5 down
	[ "$(wan_via "$A" 10.2.0.1)" = vxl ]
	ip netns exec "$C" ping -q -c 5 -i 0.05 -W 2 10.2.0.1
	run wan_sc "$A" -j route show
	echo "$output" | jq -e '.routes_state == "ok" and .health.in_force == "short=LONG long=LONG"'
	echo "$output" | jq -e '.health.tunnels[0].state == "down" and .health.tunnels[0].flaps == 1 and .health.tunnels[1].rtt_ms > 0 and .health.tunnels[1].timeout_ms >= 100'
	# the class failed over: degraded, and doctor fails naming it
	echo "$output" | jq -e '.state == "degraded" and .degraded and (.problems | index("tunnel vxs (short) failed: the short class runs over vxl")) != null'
	wan_sc "$A" route show | grep -qx 'degraded: tunnel vxs (short) failed: the short class runs over vxl'
	run wan_sc "$A" doctor
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"health"*"degraded: tunnel vxs (short) failed"* ]]
	sleep 1
	wan_underlay_heal "$B" b1
	back() { grep -q '^health tunnel=0 to=up .* plan=short=SHORT long=LONG changed=2' "$D/agent-$1"; }
	wan_wait_both 10 back
	[ "$(wan_via "$A" 10.2.0.1)" = vxs ]
	wan_ping_end
	local sent got
	sent=$(grep -o '[0-9]* packets transmitted' "$D/ping" | cut -d' ' -f1)
	got=$(grep -o '[0-9]* received' "$D/ping" | cut -d' ' -f1)
	local ms
	ms=$(grep -o 'time [0-9]*ms' "$D/ping" | tr -dc 0-9)
	echo "# real outage of the SHORT underlay under a ping at -i 0.01: $((sent - got)) of $sent lost in $ms ms, i.e. about $(((sent - got) * ms / sent)) ms without replies (failover and return included)" >&3
	[ "$got" -gt 0 ]
	[ "$got" -lt "$sent" ]
	ip netns exec "$C" ping -q -c 5 -i 0.05 -W 2 10.2.0.1
	wan_sc "$A" -j route show | jq -e '.state == "ok" and .problems == [] and .health.in_force == "short=SHORT long=LONG"'
}

@test "route up that would drop part of the running setup: refused naming it, --replace drops it" {
	wan_route split
	one=$(wan_dump "$A")
	# the mistake of issue 39: one prefix, one gateway, no --lan-dev
	refused 2 "this would remove from the running setup: prefix fd02::/64; lan-dev lana; via-short fd10:1::2; via-long 192.168.102.2 fd10:2::2: give them again, or --replace to drop them" \
		wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--via-short 192.168.101.2
	[ "$(wan_dump "$A")" = "$one" ]
	# the same setup again is no removal; -j: a result
	run wan_sc "$A" -j route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--prefix fd02::/64 --lan-dev lana --via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2
	[ "$status" -eq 0 ]
	[ "$output" = '{"ok":true,"removed":""}' ]
	# asked for: done, and said
	run wan_sc "$A" -j route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--lan-dev lana --via-short 192.168.101.2 --via-long 192.168.102.2 --replace
	[ "$status" -eq 0 ]
	[ "$output" = '{"ok":true,"removed":"prefix fd02::/64; via-short fd10:1::2; via-long fd10:2::2"}' ]
	[ -z "$(ip -n "$A" -6 route show table all proto 245)" ]
	# errors under -j: one JSON object on stderr, the exit code unchanged
	run wan_sc "$A" -j route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24
	[ "$status" -eq 2 ]
	echo "$output" | jq -e '.level == "error" and .program == "splitctl" and (.message | startswith("route up: this would remove from the running setup: lan-dev lana"))'
}
