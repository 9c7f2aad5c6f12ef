# SPDX-License-Identifier: GPL-2.0
# Five namespaces: client - rA = two VXLAN tunnels over two veth underlays = rB - server
#   $C 10.1.0.1 fd01::1 --(c0/lana)-- $A --(a1/b1: 172.16.1.0/30)-- $B --(lanb/s0)-- $S 10.2.0.1 fd02::1
#                                      --(a2/b2: 172.16.2.0/30)--
#   tunnels on A and B: vxs (SHORT, over a1/b1, 192.168.101.0/30, fd10:1::/64)
#                       vxl (LONG,  over a2/b2, 192.168.102.0/30, fd10:2::/64)
# Tunnels are created with "splitctl tunnel add"; the splitter is not attached
# and no route is installed (wan_route / wan_attach do that).
# With WAN_SHORT_PATH=1 set before setup, a1 and b1 meet in a fifth
# namespace $P instead (see wan_setup).
# Load after lib/common (FS_PREFIX set). Loading it gives a suite its
# setup() (the five namespaces, $D the test's directory) and teardown()
# (wan_teardown); a suite that needs more defines its own after the load.

# wan_addrs NS ME PEER MAC1 MAC2: router NS's tunnel addresses (host ME
# of each /30 and /64) and its permanent neighbours, the peer router
# (host PEER) at MAC1 on vxs and MAC2 on vxl
wan_addrs() {
	fs_ip "$1" <<-EOF
	addr add 192.168.101.$2/30 dev vxs
	addr add 192.168.102.$2/30 dev vxl
	addr add fd10:1::$2/64 dev vxs nodad
	addr add fd10:2::$2/64 dev vxl nodad
	neigh add 192.168.101.$3 lladdr $4 dev vxs nud permanent
	neigh add fd10:1::$3 lladdr $4 dev vxs nud permanent
	neigh add 192.168.102.$3 lladdr $5 dev vxl nud permanent
	neigh add fd10:2::$3 lladdr $5 dev vxl nud permanent
	EOF
}

wan_setup() {
	local id=$$-$BATS_TEST_NUMBER
	C=$FS_PREFIX-c-$id A=$FS_PREFIX-a-$id B=$FS_PREFIX-b-$id S=$FS_PREFIX-s-$id
	# (each step one ip process per namespace: fs_ip)
	local under
	if [ -n "${WAN_SHORT_PATH:-}" ]; then
		# SHORT's underlay through a path namespace $P (pa to A, pb to
		# B) that forwards nothing by itself: a delay line between pa
		# and pb carries it (tests/roles.bats)
		P=$FS_PREFIX-p-$id
		fs_netns_add "$C" "$A" "$B" "$S" "$P"
		under="link add a1 netns $A mtu 1550 type veth peer pa netns $P mtu 1550
link add b1 netns $B mtu 1550 type veth peer pb netns $P mtu 1550"
	else
		fs_netns_add "$C" "$A" "$B" "$S"
		under="link add a1 netns $A mtu 1550 type veth peer b1 netns $B mtu 1550"
	fi
	ip -batch - <<-EOF
	link add c0 netns $C type veth peer lana netns $A
	link add s0 netns $S type veth peer lanb netns $B
	$under
	link add a2 netns $A mtu 1550 type veth peer b2 netns $B mtu 1550
	EOF
	[ -z "${WAN_SHORT_PATH:-}" ] || fs_ip "$P" <<-EOF
	link set lo up
	link set pa up
	link set pb up
	EOF
	fs_ip "$C" <<-EOF
	link set lo up
	addr add 10.1.0.1/24 dev c0
	addr add fd01::1/64 dev c0 nodad
	link set c0 up
	route add default via 10.1.0.254
	route add default via fd01::fe
	EOF
	fs_ip "$S" <<-EOF
	link set lo up
	addr add 10.2.0.1/24 dev s0
	addr add fd02::1/64 dev s0 nodad
	link set s0 up
	route add default via 10.2.0.254
	route add default via fd02::fe
	EOF
	fs_ip "$A" <<-EOF
	link set lo up
	addr add 10.1.0.254/24 dev lana
	addr add fd01::fe/64 dev lana nodad
	addr add 172.16.1.1/30 dev a1
	addr add 172.16.2.1/30 dev a2
	link set lana up
	link set a1 up
	link set a2 up
	EOF
	fs_ip "$B" <<-EOF
	link set lo up
	addr add 10.2.0.254/24 dev lanb
	addr add fd02::fe/64 dev lanb nodad
	addr add 172.16.1.2/30 dev b1
	addr add 172.16.2.2/30 dev b2
	link set lanb up
	link set b1 up
	link set b2 up
	EOF
	ip netns exec "$A" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip netns exec "$B" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	wan_sc "$A" tunnel add vxs vxlan --vni 101 --local 172.16.1.1 --remote 172.16.1.2 --dev a1
	wan_sc "$A" tunnel add vxl vxlan --vni 102 --local 172.16.2.1 --remote 172.16.2.2 --dev a2
	wan_sc "$B" tunnel add vxs vxlan --vni 101 --local 172.16.1.2 --remote 172.16.1.1 --dev b1
	wan_sc "$B" tunnel add vxl vxlan --vni 102 --local 172.16.2.2 --remote 172.16.2.1 --dev b2
	# static neighbours: no ARP/ND on the tunnels, so their packet
	# counters hold exactly the routed traffic
	local ma1 ma2 mb1 mb2
	read -r ma1 ma2 <<<"$(wan_macs "$A")"
	read -r mb1 mb2 <<<"$(wan_macs "$B")"
	wan_addrs "$A" 1 2 "$mb1" "$mb2"
	wan_addrs "$B" 2 1 "$ma1" "$ma2"
	BPFA=$(fs_bpffs)/a
	BPFB=${BPFA%/a}/b
}

# wan_macs NS: the MAC addresses of NS's vxs and vxl, in that order
wan_macs() {
	ip -n "$1" -br link show | awk '$1 == "vxs" { s = $3 } $1 == "vxl" { l = $3 } END { print s, l }'
}

# wan_sc NS ARGS...: splitctl in a router namespace with its own instance
wan_sc() {
	local ns=$1 dir=$BPFA
	shift
	[ "$ns" = "$B" ] && dir=$BPFB
	ip netns exec "$ns" "$SPLITCTL" --pin-dir "${dir:-/nonexistent}" "$@"
}

# wan_wait_both TIMEOUT CMD [ARGS...]: fs_wait_for TIMEOUT CMD NS ARGS...,
# for NS router A, then router B
wan_wait_both() {
	local t=$1 cmd=$2 ns
	shift 2
	for ns in "$A" "$B"; do
		fs_wait_for "$t" "$cmd" "$ns" "$@" || return 1
	done
}

# XDP: these suites count, per tunnel, the wire packets of each class; XDP
# marks every wire packet, TC marks a GRO packet by its first segment (the
# TC hook's exact counts are tested in splitctl-core.bats)
wan_attach() { # THRESHOLD (tables of FS_TEST_FLOWS entries: lib/common)
	wan_sc "$A" attach lana --hook xdp --threshold "$1" --flows "$FS_TEST_FLOWS"
	wan_sc "$B" attach lanb --hook xdp --threshold "$1" --flows "$FS_TEST_FLOWS"
}

wan_route() { # MODE [extra route-up options]
	local mode=$1
	shift
	wan_sc "$A" route up --mode "$mode" --short-dev vxs --long-dev vxl \
		--prefix 10.2.0.0/24 --prefix fd02::/64 --lan-dev lana \
		--via-short 192.168.101.2 --via-short fd10:1::2 \
		--via-long 192.168.102.2 --via-long fd10:2::2 "$@"
	wan_sc "$B" route up --mode "$mode" --short-dev vxs --long-dev vxl \
		--prefix 10.1.0.0/24 --prefix fd01::/64 --lan-dev lanb \
		--via-short 192.168.101.1 --via-short fd10:1::1 \
		--via-long 192.168.102.1 --via-long fd10:2::1 "$@"
}

# wan_tx NS DEV: transmitted packets of an interface
wan_tx() {
	ip -n "$1" -j -s link show "$2" | jq '.[0].stats64.tx.packets'
}

# everything routing-related in a namespace, for before/after diffs (but the
# kernel's own routes, which IPv6 link-local set-up adds asynchronously)
wan_dump() {
	ip -n "$1" rule show
	ip -n "$1" -6 rule show
	ip -n "$1" route show table all | grep -v 'proto kernel' || true
	ip -n "$1" -6 route show table all | grep -v 'proto kernel' || true
}

# wan_agent_started PID: an agent (splitctl run, failover-test) that
# wan_teardown stops with SIGTERM, so that it withdraws its health file
wan_agent_started() {
	echo "$1" >>"$BATS_TEST_TMPDIR/.wan_agents"
}

# agent NS [ARGS...]: "splitctl run" in router NS (its own pin directory),
# its log appended to $BATS_TEST_TMPDIR/agent-NS, its pid in AGENT_PID
# (not through wan_sc: $! must be splitctl itself, for signals); stopped
# by wan_teardown
agent() {
	local ns=$1 dir=$BPFA
	shift
	[ "$ns" = "$B" ] && dir=$BPFB
	ip netns exec "$ns" "$SPLITCTL" --pin-dir "$dir" run --interval 1 "$@" \
		>>"$BATS_TEST_TMPDIR/agent-$ns" 2>&1 </dev/null &
	AGENT_PID=$!
	wan_agent_started "$AGENT_PID"
}

# wan_agents_stop: SIGTERM every agent started, and wait until each is gone:
# one exiting while fs_teardown lists a namespace's processes makes its kill
# fail (and teardown stop before deleting the rest)
wan_agents_stop() {
	local f=$BATS_TEST_TMPDIR/.wan_agents p n
	[ -f "$f" ] || return 0
	while read -r p; do
		kill -TERM "$p" 2>/dev/null || continue
		for n in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	done <"$f"
	rm -f "$f"
}

# wan_health_file NS: where an agent in NS publishes the tunnels' health
wan_health_file() {
	echo "/run/flowsplit/health-$(stat -L -c %i "/run/netns/$1").json"
}

# wan_teardown: the agents first, then route down in both routers (which
# puts back what route up changed outside the namespaces: the route record,
# an ecmp hash policy), a health file a killed agent left, then fs_teardown
wan_teardown() {
	local ns
	wan_agents_stop
	for ns in "${A:-}" "${B:-}"; do
		[ -n "$ns" ] || continue
		ip netns exec "$ns" "$SPLITCTL" route down 2>/dev/null || true
		rm -f "$(wan_health_file "$ns")"
	done
	fs_teardown
}

# wan_ping_start [ping options]: 400 echo requests at 100 Hz from the
# client to the server (10.2.0.1) in the background, the summary in
# $D/ping; returns half a second into it
wan_ping_start() {
	fs_bg ip netns exec "$C" ping -q -i 0.01 -c 400 -w 30 "$@" 10.2.0.1 >"$D/ping"
	WAN_PING=$!
	sleep 0.5
}

# wan_ping_end: wait for that ping to end (whatever its status); router A's
# agent log and the ping's summary shown
wan_ping_end() {
	wait "$WAN_PING" || true
	cat "$D/agent-$A" "$D/ping"
}

# wan_via NS DST [TOS]: the device a LAN packet (from 10.1.0.1) to DST takes
wan_via() {
	ip -n "$1" -j route get "$2" from 10.1.0.1 iif lana tos "${3:-0}" | jq -r '.[0].dev'
}

# wan_underlay_drop NS DEV: every VXLAN packet arriving at NS over the
# underlay DEV is lost (probes and answers alike); the tunnel devices stay up
wan_underlay_drop() {
	ip netns exec "$1" nft -f - <<-EOF
	table inet ${FS_PREFIX}drop$2 {
		chain pre {
			type filter hook prerouting priority -300;
			iifname "$2" udp dport 4789 drop
		}
	}
	EOF
}

# wan_underlay_heal NS DEV: undo wan_underlay_drop
wan_underlay_heal() {
	ip netns exec "$1" nft delete table inet "${FS_PREFIX}drop$2"
}

# wan_run_refused PREFIX "ARGS"...: "splitctl run ARGS" on A, for each ARGS
# (split into words), exits 2 with one line "splitctl: run: PREFIX...
# accepted: ..." (PREFIX: the start of the option named)
wan_run_refused() {
	local prefix=$1 bad
	shift
	for bad in "$@"; do
		run -2 wan_sc "$A" run $bad
		echo "$bad: $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "splitctl: run: $prefix"*"accepted: "* ]]
	done
}

# wan_offloads_off "NS DEV"...: TSO, GSO and GRO off on each NS's DEV, so
# that queues and shapers count wire packets
wan_offloads_off() {
	local l
	for l in "$@"; do
		ip netns exec ${l% *} ethtool -K ${l#* } tso off gso off gro off 2>/dev/null || true
	done
}

# wan_shape DEV...: A's egress onto each underlay DEV is the "WAN": a TBF
# at WAN_MBIT (default 20) with a FIFO of WAN_LIMIT bytes (default 250000:
# 100 ms at 20 Mbit/s)
wan_shape() {
	local l
	for l in "$@"; do
		ip netns exec "$A" tc qdisc add dev $l root tbf rate ${WAN_MBIT:-20}mbit burst 3000 limit ${WAN_LIMIT:-250000}
	done
}

setup() {
	wan_setup
	D=$BATS_TEST_TMPDIR
}

teardown() {
	wan_teardown
}
