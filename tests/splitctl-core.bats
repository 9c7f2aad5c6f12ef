#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# splitctl against the real kernel: attach modes, real TCP traffic through a
# router namespace, live settings, crashes, upgrade, clean detach.
FS_PREFIX=fstc
load lib/common
load lib/router

# A first attach preallocates the flow tables, here in every test and
# every round of the loops below: fs_sc's attach creates them with FLOWS
# entries (lib/common's FS_TEST_FLOWS; --flows, unless the command gives
# it); a test of the default size or of its preallocation sets FLOWS=
FLOWS=$FS_TEST_FLOWS
fs_sc() {
	if [ "${1:-}" = attach ] && [ -n "$FLOWS" ] && [[ " $* " != *" --flows "* ]]; then
		set -- "$@" --flows "$FLOWS"
	fi
	ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" "$@"
}

# packets of the client->server flow to PORT in the flow table
flow_packets() {
	fs_sc -j flows | jq -r ".[] | select(.dport == $1) | .packets"
}

# start a client->server connection fed through a fifo held open on fd 7
open_stream() {
	local port=$1
	fs_sink "$port" "$D/dst"
	mkfifo "$D/fifo"
	: >"$D/sent"
	fs_bg ip netns exec "$C" socat -u PIPE:"$D/fifo" TCP:10.77.2.1:"$port"
	exec 7>"$D/fifo"
}

# write one chunk into the stream and wait until the splitter counted more
chunk() {
	local port=$1 before after
	before=$(flow_packets "$port"); before=${before:-0}
	head -c 2000 /dev/urandom | tee -a "$D/sent" >&7
	fs_wait_for 5 sh -c "[ \"\$($SC -j flows | jq -r '.[] | select(.dport == $port) | .packets')\" -gt $before ] 2>/dev/null"
}

close_stream() {
	exec 7>&-
	fs_wait_for 10 cmp -s "$D/sent" "$D/dst"
}

check_mode_and_counts() {
	local mode=$1 want=$2
	run fs_sc attach rc --mode "$mode" --threshold 10
	[ "$status" -eq 0 ]
	run fs_sc attach rs --mode "$mode"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '[.interfaces[].mode] | unique | join(",")')" = "$want" ]
	[ "$(fs_sc -j status | jq -r '.interfaces | length')" -eq 2 ]
	transfer 2000000 5000
	# first 10 packets of each direction short, the rest long, except the
	# pure ACKs of a long flow (ack-short, on by default), counted apart
	[ "$(( $(fs_stat packets_short) - $(fs_stat acks_short) ))" -eq 20 ]
	[ "$(fs_stat acks_short)" -gt 0 ]
	[ "$(fs_stat flows_new)" -eq 2 ]
	[ "$(fs_stat flows_promoted)" -eq 2 ]
	local total_flows total_stats
	total_flows=$(fs_sc -j flows | jq '[.[].packets] | add')
	total_stats=$(( $(fs_stat packets_short) + $(fs_stat packets_long) ))
	[ "$total_flows" -eq "$total_stats" ]
	# native XDP sees every wire packet; generic XDP sees skbs after GRO,
	# so fewer (bigger) packets: only the first T per direction are exact
	if [ "$mode" = generic ]; then
		[ "$(fs_stat packets_long)" -gt 10 ]
	else
		[ "$(fs_stat packets_long)" -gt 1000 ]
	fi
	# one table shared by both interfaces: both directions are in it
	[ "$(fs_sc -j flows | jq 'length')" -eq 2 ]
}

@test "attach native: a 2 MB transfer marks the first T packets of each direction short" {
	check_mode_and_counts native native
}

@test "attach generic: same counts" {
	check_mode_and_counts generic generic
}

@test "attach auto: picks native on veth, same counts" {
	check_mode_and_counts auto native
}

# TCP segments the client sent (OutSegs counts every segment of a TSO/GSO
# skb, RetransSegs the retransmitted ones): the exact number of
# client->server packets on the wire, since the client has this one
# connection
client_out_segs() {
	ip netns exec "$C" nstat -az TcpOutSegs TcpRetransSegs | awk '$1 ~ /^Tcp/ {n += $2} END {print n}'
}

# client_done PORT: the client's side of its connection to PORT has sent
# its last segment: TIME-WAIT, or gone (no socket in any other state)
client_done() {
	local out
	out=$(ip netns exec "$C" ss -Htn state big "( dport = :$1 )") && [ -z "$out" ]
}

@test "attach with defaults on veth: auto picks tc and says why" {
	FLOWS=	# the default size
	run fs_sc attach rc
	[ "$status" -eq 0 ]
	[[ "$output" == "rc: hook tc (auto: driver veth is virtual"* ]]
	[ "$(fs_sc -j status | jq -r '.interfaces[0] | "\(.hook) \(.mode) \(.gro_undercount)"')" = "tc tcx false" ]
	fs_sc status | grep -q '^interface: rc (ifindex [0-9]*) hook tc, tcx mode'
	# TC keeps the offloads native XDP would turn off
	ip netns exec "$C" ethtool -k cv | grep -q '^tcp-segmentation-offload: on'
	# --mode alone still means XDP
	run fs_sc attach rs --mode auto
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '.interfaces[] | select(.name == "rs") | .hook')" = xdp ]
}

@test "tc hook with GRO on: exact short/long counts of every wire packet" {
	ip netns exec "$R" ethtool -K rc gro on
	ip netns exec "$C" ethtool -K cv tso on gso on
	# threshold 2: the SYN and the handshake's ACK (never merged) are
	# short, every data segment long, so the expected split is exact
	fs_sc attach rc --hook tc --threshold 2
	fs_sc set ack-short no
	transfer 3000000 5020
	# the client's last ACK (of the server's FIN) is out once its socket
	# is in TIME-WAIT (or gone); then both counts are final
	fs_wait_for 30 client_done 5020
	# (the router counts a packet a moment after the client sent it)
	for _ in $(seq 50); do
		[ "$(client_out_segs)" = "$(flow_packets 5020)" ] && break
		sleep 0.1
	done
	segs=$(client_out_segs)
	n=$(flow_packets 5020)
	skbs=$(ip netns exec "$R" cat /sys/class/net/rc/statistics/rx_packets)
	echo "client TcpOutSegs $segs, flow packets $n, rc rx skbs $skbs, short $(fs_stat packets_short), long $(fs_stat packets_long)"
	# GSO/GRO packets reached the hook (fewer skbs than segments), yet
	# every segment is counted: the flow holds what the server received
	[ "$skbs" -lt "$segs" ]
	[ "$n" -eq "$segs" ]
	[ "$(fs_stat packets_short)" -eq 2 ]
	[ "$(fs_stat packets_long)" -eq $((n - 2)) ]
	[ "$(fs_stat flows_promoted)" -eq 1 ]
	[ "$(fs_stat flows_new)" -eq 1 ]
}

@test "tc hook, IPv6 with GRO: exact counts, traffic class on the wire, payload intact" {
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	ip netns exec "$R" ethtool -K rc gro on
	ip netns exec "$C" ethtool -K cv tso on gso on
	fs_sc attach rc --hook tc --threshold 2 --dscp-short 2 --dscp-long 5 --dscp-spill 3
	fs_sc set ack-short no
	fs_bg sh -c "exec ip netns exec $S tcpdump -l -n -v -i sv 'ip6 and tcp dst port 5021' >$D/cap 2>$D/cap.err"
	dump=$!
	fs_wait_for 5 grep -q listening "$D/cap.err"
	head -c 3000000 /dev/urandom >"$D/src"
	fs_bg ip netns exec "$S" socat -u TCP6-LISTEN:5021,reuseaddr OPEN:"$D/dst",creat,trunc
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':5021 '"
	ip netns exec "$C" socat -u OPEN:"$D/src" TCP6:[fd77:2::1]:5021
	# a wrong checksum after the rewrite would stall the transfer here
	fs_wait_for 10 cmp -s "$D/src" "$D/dst"
	fs_wait_for 30 client_done 5021
	for _ in $(seq 50); do
		[ "$(client_out_segs)" = "$(flow_packets 5021)" ] && break
		sleep 0.1
	done
	kill "$dump"
	segs=$(client_out_segs)
	n=$(flow_packets 5021)
	echo "client TcpOutSegs $segs, flow packets $n, short $(fs_stat packets_short), long $(fs_stat packets_long)"
	[ "$n" -eq "$segs" ]
	[ "$(fs_stat packets_short)" -eq 2 ]
	[ "$(fs_stat packets_long)" -eq $((n - 2)) ]
	[ "$(fs_sc -j flows | jq -r '.[] | select(.dport == 5021) | .family')" = ipv6 ]
	# traffic class = DSCP << 2: the SYN and the handshake's ACK 2 -> 0x08,
	# every later (GSO) packet 5 -> 0x14; the rewrite leaves the TCP
	# checksum alone (the IPv6 pseudo-header has no traffic class)
	[ "$(grep -o 'class 0x[0-9a-f]*' "$D/cap" | head -n 2 | sort -u)" = "class 0x08" ]
	[ "$(grep -o 'class 0x[0-9a-f]*' "$D/cap" | tail -n +3 | sort -u)" = "class 0x14" ]
}

@test "generic XDP: status warns that it undercounts under GRO" {
	fs_sc attach rc --mode generic
	[ "$(fs_sc -j status | jq '.interfaces[0].gro_undercount')" = true ]
	fs_sc status | grep -q '^warning: rc: generic XDP runs after GRO'
}

# transfer_seen BYTES PORT: transfer BYTES to PORT while tcpdump at the
# server prints the packets to PORT in $D/cap; sets n to the flow's packet
# count and returns once tcpdump printed as many
transfer_seen() {
	local dump
	fs_bg sh -c "exec ip netns exec $S tcpdump -l -n -v -i sv 'tcp dst port $2' >$D/cap 2>$D/cap.err"
	dump=$!
	fs_wait_for 5 grep -q listening "$D/cap.err"
	transfer "$1" "$2"
	n=$(flow_packets "$2")
	fs_wait_for 5 sh -c "[ \$(grep -c 'tos 0x' $D/cap) -ge $n ]"
	kill "$dump"
}

@test "the code points reach the wire: first T packets DSCP short, the rest DSCP long" {
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	# XDP: one call per wire packet, as tcpdump at the server sees them
	fs_sc attach rc --hook xdp --threshold 3 --dscp-short 2 --dscp-long 5 --dscp-spill 3
	fs_sc set ack-short no		# the closing pure ACK would be short
	transfer_seen 100000 5011
	# TOS byte = DSCP << 2 (ECN bits 0 here): 2 -> 0x8, 5 -> 0x14
	[ "$(grep -o 'tos 0x[0-9a-f]*' "$D/cap" | head -n 3 | sort -u)" = "tos 0x8" ]
	[ "$(grep -o 'tos 0x[0-9a-f]*' "$D/cap" | tail -n +4 | sort -u)" = "tos 0x14" ]
	[ "$(grep -c 'tos 0x' "$D/cap")" -eq "$n" ]
}

# spill_grant GEN GRANTS: the agent's entry of fs_spill, as "splitctl run"
# writes it (grants: u64, gen: u16, pad, lease_jiffies: u64, the datapath's
# three u64 zero; flowsplit.h struct fs_spill), with a lease that never
# runs out (an agent renews it; here nothing would)
spill_grant() {
	local gen=$1 grants=$2 i v=()
	for i in 0 1 2 3 4 5 6 7; do v+=($(( (grants >> (8 * i)) & 255 ))); done
	v+=($(( gen & 255 )) $(( gen >> 8 )) 0 0 0 0 0 0)
	for i in 0 1 2 3 4 5 6 7; do v+=(255); done
	for i in $(seq 24); do v+=(0); done
	bpftool map update pinned "$BPF/fs_spill" key 0 0 0 0 value "${v[@]}"
}

# spilled PORT: the "spilled" of the client->server flow to PORT
spilled() {
	fs_sc -j flows | jq -r ".[] | select(.dport == $1) | .spilled"
}

@test "spill: a granted flow carries dscp-spill on the wire, flows/stats/metrics show it, spill off ends it at the next packet" {
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	fs_sc attach rc --hook xdp --threshold 3 --dscp-long 5
	fs_sc set ack-short no		# every packet after the third long
	[ "$(fs_sc -j status | jq -c '.config | [.spill, .dscp_spill]')" = '[true,2]' ]
	fs_sc status | grep -qx 'config: spill yes, dscp-spill 2'
	# no generation: nothing spills, whatever the flows
	transfer 50000 5030
	[ "$(spilled 5030)" = false ]
	[ "$(fs_stat spill_flows)" -eq 0 ] && [ "$(fs_stat packets_spill)" -eq 0 ]
	# generation 1, one grant: the next long data packet takes it
	spill_grant 1 1
	transfer_seen 100000 5031
	# TOS byte = DSCP << 2: short 0 -> 0x0, spill 2 -> 0x8 (never LONG's 0x14)
	[ "$(grep -o 'tos 0x[0-9a-f]*' "$D/cap" | head -n 3 | sort -u)" = "tos 0x0" ]
	[ "$(grep -o 'tos 0x[0-9a-f]*' "$D/cap" | tail -n +4 | sort -u)" = "tos 0x8" ]
	[ "$(spilled 5031)" = true ] && [ "$(spilled 5030)" = false ]
	fs_sc flows --class long | grep -q ':5031 .* long spilled$'
	[ "$(fs_stat spill_flows)" -eq 1 ]
	[ "$(fs_stat packets_spill)" -eq $((n - 3)) ]
	[ "$(fs_stat bytes_spill)" -gt 100000 ]
	[ "$(fs_stat packets_long)" -ge $((n - 3)) ]
	fs_sc stats --prometheus >"$D/m"
	grep -qx 'flowsplit_spill_flows_total 1' "$D/m"
	grep -qx 'flowsplit_spill_moved_total 0' "$D/m"	# it took it at promotion
	grep -qx 'flowsplit_spill_generation 1' "$D/m"
	grep -qx "flowsplit_spill_packets_total $((n - 3))" "$D/m"
	# the grant is used: a new flow turns long and stays LONG...
	open_stream 5032
	for i in $(seq 4); do chunk 5032; done
	[ "$(fs_sc -j flows | jq -r '.[] | select(.dport == 5032) | .class')" = long ]
	[ "$(spilled 5032)" = false ]
	p0=$(fs_stat packets_spill)
	# ...until one more grant: its next data packet takes it, moved from LONG
	spill_grant 1 2
	chunk 5032
	[ "$(spilled 5032)" = true ]
	[ "$(fs_stat spill_flows)" -eq 2 ]
	[ "$(fs_stat packets_spill)" -gt "$p0" ]
	fs_sc stats --prometheus | grep -qx 'flowsplit_spill_moved_total 1'
	# spill off: from the next packet nothing carries the spill code point
	fs_sc set spill no
	fs_sc status | grep -qx 'config: spill no, dscp-spill 2'
	p1=$(fs_stat packets_spill) l1=$(fs_stat packets_long)
	chunk 5032
	[ "$(fs_stat packets_spill)" -eq "$p1" ]
	[ "$(fs_stat packets_long)" -gt "$l1" ]
	[ "$(spilled 5032)" = false ] && [ "$(spilled 5031)" = false ]
	# a new generation (0: none) ends every grant of the old one
	fs_sc set spill yes
	spill_grant 2 2
	[ "$(spilled 5032)" = false ]
	close_stream
}

@test "a pinned fs_spill of another layout is refused, nothing changed" {
	fs_sc attach rc
	rm "$BPF/fs_spill"
	bpftool map create "$BPF/fs_spill" type array key 4 value 8 entries 2 name fs_spill
	before=$(fs_sc -j status)
	run fs_sc attach rc --threshold 9
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"pinned map '$BPF/fs_spill' has another layout (array, key 4 B, value 8 B, 2 entries)"* ]]
	after=$(fs_sc -j status)
	diff <(echo "$before" | jq -S .) <(echo "$after" | jq -S .)
	rm "$BPF/fs_spill"
	fs_sc attach rc
	[ "$(bpftool -j map show pinned "$BPF/fs_spill" | jq -c '[.type, .bytes_key, .bytes_value, .max_entries]')" = '["array",4,48,2]' ]
}

@test "set threshold during a transfer reclassifies later packets without resetting the flow" {
	fs_sc attach rc --threshold 1000
	open_stream 5001
	for i in $(seq 10); do chunk 5001; done
	[ "$(fs_stat packets_long)" -eq 0 ]
	p1=$(flow_packets 5001)
	run fs_sc set threshold 5
	[ "$status" -eq 0 ]
	for i in $(seq 5); do chunk 5001; done
	p2=$(flow_packets 5001)
	[ "$p2" -gt "$p1" ]                      # count continued, no reset
	[ "$(fs_stat packets_long)" -ge 5 ]
	[ "$(fs_stat flows_new)" -eq 1 ]
	[ "$(fs_sc -j flows | jq -r '.[] | select(.dport == 5001) | .class')" = long ]
	close_stream
}

@test "upgrade (attach again) during a transfer keeps the flow's count and the transfer completes" {
	fs_sc attach rc --threshold 30
	open_stream 5002
	for i in $(seq 8); do chunk 5002; done
	p1=$(flow_packets 5002)
	link1=$(fs_sc -j status | jq '.interfaces[0].link_id')
	prog1=$(fs_sc -j status | jq '.interfaces[0].prog_id')
	run fs_sc attach rc
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq '.interfaces[0].link_id')" -eq "$link1" ]
	[ "$(fs_sc -j status | jq '.interfaces[0].prog_id')" -ne "$prog1" ]
	[ "$(fs_sc -j status | jq '.config.threshold')" -eq 30 ]
	for i in $(seq 8); do chunk 5002; done
	p2=$(flow_packets 5002)
	[ "$p2" -gt "$p1" ]
	[ "$(fs_stat flows_new)" -eq 1 ]
	close_stream
}

# killed_after DELAY ARGS...: splitctl ARGS in the router namespace, killed
# (SIGKILL) DELAY seconds in unless it has ended by then
killed_after() {
	local delay=$1 pid
	shift
	ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" "$@" &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" || true
}

@test "kill -9 of a running splitctl and of attaches in progress: datapath keeps counting" {
	fs_sc attach rc --threshold 3
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF stats --watch 0.2 >$D/watch"
	watcher=$!
	fs_wait_for 5 grep -q packets_short "$D/watch"
	kill -9 "$watcher"
	for delay in 0 0.005 0.02 0.05; do
		killed_after "$delay" attach rs
		# the instance is consistent: status works, rc still attached
		run fs_sc -j status
		[ "$status" -eq 0 ]
		echo "$output" | jq -e '.interfaces | map(.name) | index("rc") != null'
	done
	# upgrades of rc killed at many points: never an instance without
	# its pins (status opens maps and the clock program)
	for delay in 0.002 0.005 0.008 0.011 0.014 0.017 0.02 0.025 0.03; do
		killed_after "$delay" attach rc
		run fs_sc -j status
		[ "$status" -eq 0 ]
		[ "$(echo "$output" | jq '.config.threshold')" -eq 3 ]
	done
	run fs_sc attach rs
	[ "$status" -eq 0 ]
	before=$(fs_stat packets_short)
	transfer 100000 5003
	[ "$(fs_stat packets_short)" -gt "$before" ]
	[ "$(fs_stat packets_long)" -gt 0 ]
}

@test "kill -9 of the first attach at any point: the next attach completes the instance" {
	FLOWS=	# the default tables' preallocation, killed midway
	# the first attach preallocates the tables (0.1-1 s): kill it early,
	# midway and late; each time a new attach must succeed on what is left
	for delay in 0.01 0.04 0.08 0.15 0.3 0.6; do
		killed_after "$delay" attach rc
		run fs_sc attach rc
		[ "$status" -eq 0 ]
		[ "$(fs_sc -j status | jq -r '[.interfaces[].name] | join(",")')" = rc ]
		[ "$(fs_sc -j status | jq '.config.threshold')" -eq 20 ]
		run fs_sc detach --all
		[ "$status" -eq 0 ]
		[ ! -e "$BPF" ]
	done
}

@test "concurrent attaches are serialised into one instance; pins are 0600" {
	ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" attach rc &
	a=$!
	ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" attach rs &
	b=$!
	wait "$a"
	wait "$b"
	[ "$(fs_sc -j status | jq '.interfaces | length')" -eq 2 ]
	# both programs use the same maps: one flow table, one config, one rule set
	m1=$(bpftool -j prog show id "$(fs_sc -j status | jq '.interfaces[0].prog_id')" | jq -c '.map_ids | sort')
	m2=$(bpftool -j prog show id "$(fs_sc -j status | jq '.interfaces[1].prog_id')" | jq -c '.map_ids | sort')
	[ "$m1" = "$m2" ]
	# 7 maps, 3 programs (auto on veth: TC, and the clock and observer;
	# the XDP splitter is not loaded), per interface the splitter's link
	# and the observer's
	[ "$(find "$BPF" -maxdepth 1 -type f | wc -l)" -eq 14 ]
	[ -e "$BPF/prog_splitter_tc" ] && [ ! -e "$BPF/prog_splitter" ]
	[ "$(find "$BPF" -maxdepth 1 -type f -name 'observer_if*' | wc -l)" -eq 2 ]
	[ -z "$(find "$BPF" -maxdepth 1 -type f ! -perm 0600)" ]
	[ "$(stat -c %a "$BPF")" = 700 ]
}

@test "attach and detach --all racing: only 'nothing attached' refusals, consistent end state" {
	for i in $(seq 10); do
		fs_sc attach rc --hook xdp 2>>"$D/err" &
		fs_sc detach --all 2>>"$D/err" &
		fs_sc attach rs --hook xdp 2>>"$D/err" &
		wait
		# what status lists is really attached
		for ifc in $(fs_sc -j status 2>/dev/null | jq -r '.interfaces[].name'); do
			ip -n "$R" -d link show "$ifc" | grep -q 'prog/xdp'
		done
	done
	cat "$D/err"
	[ -z "$(grep -v 'nothing attached' "$D/err")" ]
	fs_sc detach --all || true
	! ip -n "$R" -d link show rc | grep -q 'prog/xdp' || false
	! ip -n "$R" -d link show rs | grep -q 'prog/xdp' || false
	[ ! -e "$BPF" ]
}

@test "a pin directory the operator created is kept (empty) after the last detach" {
	mkdir "$BPF"
	fs_sc attach rc
	run fs_sc detach rc
	[ "$status" -eq 0 ]
	[ -d "$BPF" ]
	[ -z "$(ls -A "$BPF")" ]
}

@test "detach --all leaves no XDP program, pin or process" {
	fs_sc attach rc
	fs_sc attach rs --mode generic
	# every program of this instance: one splitter per interface, the clock
	progs="$(fs_sc -j status | jq '.interfaces[].prog_id') $(bpftool -j prog show pinned "$BPF/prog_clock" | jq .id)"
	[ "$(echo $progs | wc -w)" -eq 3 ]
	transfer 50000 5004
	run fs_sc detach --all
	[ "$status" -eq 0 ]
	# ("! cmd" alone never fails a bats test: hence "|| false")
	! ip -n "$R" -d link show rc | grep -q 'prog/xdp' || false
	! ip -n "$R" -d link show rs | grep -q 'prog/xdp' || false
	[ ! -e "$BPF" ]
	for p in $progs; do
		! bpftool prog show id "$p" >/dev/null 2>&1 || false
	done
	! pgrep -f -- "$BPF" >/dev/null || false
	# and nothing is attached any more
	run fs_sc status
	[ "$status" -eq 1 ]
}

@test "an interface removed under the splitter: status says gone; its reused ifindex gets a real attach" {
	ip -n "$R" link add x0 type veth peer x1
	ip -n "$R" link set x0 up
	ip -n "$R" link set x1 up
	idx=$(ip -n "$R" -j link show x0 | jq '.[0].ifindex')
	fs_sc attach rc
	fs_sc attach x0 --hook xdp
	ip -n "$R" link del x0
	[ "$(fs_sc -j status | jq -r ".interfaces[] | select(.ifindex == $idx) | .mode")" = gone ]
	# a new interface with the same ifindex: the stale link must not be
	# taken for an attachment to "upgrade"
	ip -n "$R" link add x2 index "$idx" type veth peer x3
	ip -n "$R" link set x2 up
	ip -n "$R" link set x3 up
	run fs_sc attach x2 --hook xdp
	[ "$status" -eq 0 ]
	ip -n "$R" -d link show x2 | grep -q 'prog/xdp'
	[ "$(fs_sc -j status | jq -r ".interfaces[] | select(.ifindex == $idx) | .name")" = x2 ]
	run fs_sc detach --all
	[ "$status" -eq 0 ]
	! ip -n "$R" -d link show x2 | grep -q 'prog/xdp' || false
	[ ! -e "$BPF" ]
}

@test "detach one interface keeps the other and the flow table" {
	fs_sc attach rc
	fs_sc attach rs
	transfer 50000 5005
	n=$(fs_sc -j flows | jq length)
	run fs_sc detach rs
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '[.interfaces[].name] | join(",")')" = rc ]
	[ "$(fs_sc -j flows | jq length)" -eq "$n" ]
}

@test "stats -j and status -j follow the documented schema" {
	FLOWS=	# the default size
	fs_sc attach rc
	transfer 20000 5006
	fs_sc -j stats | jq -e -f "$FS_ROOT/loader/stats.schema.jq"
	fs_sc -j status | jq -e '
		(.pin_dir | type == "string") and
		(.interfaces | type == "array" and length == 1) and
		(.interfaces[0] | (.name == "rc") and (.hook == "tc") and
		 (.mode == "tcx") and (.gro_undercount == false) and
		 (.ifindex | type == "number") and (.prog_id | type == "number")) and
		(.config | (.threshold == 20) and (.idle_timeout_ms == 30000) and
		 (.dscp_short == 0) and (.dscp_long == 1) and (.enabled == true) and
		 (.ack_short == true)) and
		(.clock.hz > 0) and
		(.flows | (.ipv4 == 1) and (.ipv4_capacity == 1048576))'
	# --watch: the same counters plus a measured interval and rates
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF -j stats --watch 0.1 >$D/watch"
	fs_wait_for 5 sh -c "[ \$(wc -l <$D/watch) -ge 2 ]"
	n=$(fs_sc -j stats | jq length)
	head -n 1 "$D/watch" | jq -e --argjson n "$n" '(.interval_s > 0) and (.packets_short_per_s | type == "number") and
		(.packets_short | type == "number") and ((keys | length) == 2 * $n + 1)'
}

@test "HZ measured from the jiffies clock when /proc/config.gz is missing" {
	[ -r /proc/config.gz ] || skip "no /proc/config.gz to compare with"
	fs_sc attach rc
	want=$(zcat /proc/config.gz | sed -n 's/^CONFIG_HZ=//p')
	[ "$(fs_sc -j status | jq .clock.hz)" -eq "$want" ]
	hz=$(ip netns exec "$R" unshare -m sh -c "mount --bind /dev/null /proc/config.gz && $SPLITCTL --pin-dir $BPF -j status" | jq .clock.hz)
	[ "$hz" -eq "$want" ]
}

@test "flows: class filter, sort and top" {
	fs_sc attach rc --threshold 5
	fs_sc attach rs
	transfer 300000 5007
	# a short flow: a few packets only (connection refused -> SYN + RST)
	ip netns exec "$C" socat -u /dev/null TCP:10.77.2.1:5999 2>/dev/null || true
	[ "$(fs_sc -j flows --class long | jq length)" -eq 2 ]
	[ "$(fs_sc -j flows --class short | jq length)" -ge 1 ]
	[ "$(fs_sc -j flows --top 1 | jq length)" -eq 1 ]
	first=$(fs_sc -j flows --sort bytes --top 1 | jq '.[0].bytes')
	[ "$first" -eq "$(fs_sc -j flows | jq '[.[].bytes] | max')" ]
	run fs_sc flows
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *source*destination*packets* ]]
}

@test "flows: idle and age seconds follow the wall clock" {
	fs_sc attach rc
	transfer 20000 5010
	t_end=$(date +%s.%N)
	# wait for the flows to be idle 1 s by the datapath's clock, then
	# compare with the wall clock (a wrong HZ scales idle_s)
	fs_wait_for 5 sh -c "$SC -j flows | jq -e 'length > 0 and all(.[]; .idle_s >= 1)' >/dev/null"
	# one read, bracketed by wall-clock reads: on a loaded machine the
	# reads themselves take time, so idle is checked against the window
	t_before=$(date +%s.%N)
	rows=$(fs_sc -j flows)
	t_now=$(date +%s.%N)
	idle=$(jq '[.[].idle_s] | max' <<<"$rows")
	age=$(jq '[.[].age_s] | min' <<<"$rows")
	awk -v i="$idle" -v a="$age" -v e="$t_end" -v b="$t_before" -v n="$t_now" \
		'BEGIN { exit !(i >= 1 && i >= b - e - 0.5 && i <= n - e + 0.1 && a >= i && a <= n - e + 5) }'
}

@test "IPv6 flows are counted and listed" {
	# threshold 2: the SYN and the handshake's ACK, never merged by GRO,
	# so exactly 2 short at either hook (the default here is TC)
	fs_sc attach rc --threshold 2
	fs_bg ip netns exec "$S" socat -u TCP6-LISTEN:5008,reuseaddr OPEN:/dev/null
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':5008 '"
	head -c 100000 /dev/zero | ip netns exec "$C" socat -u - TCP6:[fd77:2::1]:5008
	[ "$(( $(fs_stat packets_short) - $(fs_stat acks_short) ))" -eq 2 ]
	[ "$(fs_stat packets_long)" -gt 0 ]
	[ "$(fs_sc -j flows | jq -r '.[0].family')" = ipv6 ]
}

@test "flush empties the table" {
	fs_sc attach rc
	transfer 20000 5009
	[ "$(fs_sc -j flows | jq length)" -ge 1 ]
	run fs_sc -j flush
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .flows_removed)" -ge 1 ]
	[ "$(fs_sc -j flows | jq length)" -eq 0 ]
}
