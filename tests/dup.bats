#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The short class duplicated over both tunnels, deduplicated at the peer
# ("splitctl dup", bpf/dup.bpf.c; docs/design.md, *Duplicating the short
# class*), on tests/lib/wan.bash: the splitter on both routers' LAN
# devices, split routing, GRO off on the tunnel devices (dedup matches
# wire packets). Short requests: a one-line request/response over socat.
FS_PREFIX=fstd
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan
load lib/dup

dup_setup() { dup_net; }

# request: one short request from the client, answered within 3 s
request() {
	local out
	out=$(echo ping | ip netns exec "$C" timeout 3 socat - TCP:10.2.0.1:7000,connect-timeout=3 2>/dev/null) || return 1
	[ "$out" = pong ]
}

# requests N: N requests, each must complete
requests() {
	local i
	for i in $(seq "$1"); do request || { echo "request $i failed"; return 1; }; done
}

# the client's TcpExtTCPDSACKRecv (DSACKs from the server: it received a
# segment twice)
dsacks() {
	ip netns exec "$C" nstat -asz TcpExtTCPDSACKRecv | awk '$1 == "TcpExtTCPDSACKRecv" { print $2 }'
}

dup_counter() { # NS NAME
	wan_sc "$1" -j dup status | jq -r ".counters.$2"
}

# SHORT's underlay loses the VXLAN packets leaving router NS on DEV:
# PERMILLE per mille of them (nftables numgen), all of them at 1000
underlay_loss() { # NS DEV PERMILLE
	local sel="numgen random mod 1000 < $3"
	[ "$3" -ge 1000 ] && sel=
	ip netns exec "$1" nft -f - <<-EOF2
	table inet ${FS_PREFIX}loss$2 {
		chain post {
			type filter hook postrouting priority 0;
			oifname "$2" udp dport 4789 $sel drop
		}
	}
	EOF2
}

@test "dup attach: dedup only by default, status -j, no residue after detach" {
	dup_setup
	run wan_sc "$A" dup attach --short-dev vxs --long-dev vxl
	echo "$output"
	[ "$status" -eq 0 ]
	run wan_sc "$A" -j dup status
	echo "$output"
	jq -e '.attached and .copy == false and .dedup and .short_dev == "vxs" and .long_dev == "vxl" and .window_ms == 1000 and .capacity4 == 65536' <<<"$output"
	# two TCX ingress programs and one egress program on the devices
	ls "$BPFA/dup"
	[ -e "$BPFA/dup/link_dup_if$(ip netns exec "$A" cat /sys/class/net/vxs/ifindex)" ]
	# usage errors: exit 2, nothing changed
	run wan_sc "$A" dup attach --short-dev vxs --long-dev vxs
	[ "$status" -eq 2 ]
	run wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --peer-mac 02:00
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid MAC address '02:00'"* ]]
	# other devices while attached: refused
	run wan_sc "$A" dup attach --short-dev vxl --long-dev vxs
	[ "$status" -eq 1 ]
	[[ "$output" == *"dup detach' first"* ]]
	# the copy switched on in place; its peer address from the neighbour table
	run wan_sc "$A" -j dup attach --short-dev vxs --long-dev vxl --copy yes
	echo "$output"
	[ "$status" -eq 0 ]
	mb=$(ip -n "$B" -j link show vxl | jq -r '.[0].address')
	jq -e --arg m "$mb" '.copy and .peer_mac == $m' <<<"$output"
	wan_sc "$A" dup detach
	[ ! -e "$BPFA/dup" ]
	run wan_sc "$A" -j dup status
	jq -e '.attached == false' <<<"$output"
	run wan_sc "$A" dup detach
	[ "$status" -eq 1 ]
	# the splitter's last detach takes a dup along
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl
	wan_sc "$A" detach --all
	[ ! -e "$BPFA/dup" ]
}

@test "dup: with all of SHORT lost, short requests complete only with the copy" {
	dup_setup
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl
	wan_sc "$B" dup attach --short-dev vxs --long-dev vxl
	requests 3
	underlay_loss "$A" a1 1000
	underlay_loss "$B" b1 1000
	# without the copy, a short request is lost with SHORT
	run request
	[ "$status" -ne 0 ]
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes
	wan_sc "$B" dup attach --short-dev vxs --long-dev vxl --copy yes
	requests 10
	[ "$(dup_counter "$A" dup_packets)" -gt 0 ]
	[ "$(dup_counter "$B" dedup_first)" -gt 0 ]
}

@test "dup: clean tunnels, dedup at the peer: the endpoints see no duplicate" {
	dup_setup
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes
	wan_sc "$B" dup attach --short-dev vxs --long-dev vxl --copy yes
	requests 2
	d0=$(dsacks)
	requests 20
	d1=$(dsacks)
	wan_sc "$A" dup status
	wan_sc "$B" dup status
	echo "DSACKs received by the client: $d0 -> $d1"
	[ "$(dup_counter "$A" dup_packets)" -ge 40 ]
	[ "$(dup_counter "$B" dedup_drops)" -ge 40 ]
	[ "$d1" -eq "$d0" ]
}

@test "dup: without dedup at the peer, the server receives every copy (DSACKs rise)" {
	dup_setup
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes
	requests 2
	d0=$(dsacks)
	requests 20
	d1=$(dsacks)
	echo "DSACKs received by the client: $d0 -> $d1"
	[ "$(dup_counter "$A" dup_packets)" -ge 40 ]
	[ "$d1" -ge $((d0 + 10)) ]
}

@test "dup: under bulk, the copies stay within the short class's bytes" {
	dup_setup
	ip netns exec "$S" iperf3 -s -D -p 5201 --logfile "$D/iperf-s.log"
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes
	wan_sc "$B" dup attach --short-dev vxs --long-dev vxl
	s0=$(ip -n "$A" -j -s link show vxs | jq '.[0].stats64.tx.bytes')
	l0=$(ip -n "$A" -j -s link show vxl | jq '.[0].stats64.tx.bytes')
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5201 -P 2 -t 3 -J >"$D/bulk.json"
	bulk=$!
	requests 20
	wait "$bulk" || true
	s1=$(ip -n "$A" -j -s link show vxs | jq '.[0].stats64.tx.bytes')
	l1=$(ip -n "$A" -j -s link show vxl | jq '.[0].stats64.tx.bytes')
	dupb=$(dup_counter "$A" dup_bytes)
	short=$(wan_sc "$A" -j stats | jq '.bytes_short')
	jq -e '.end.sum_received.bits_per_second > 0' "$D/bulk.json"
	echo "A: dup_bytes $dupb, bytes_short $short, tunnel tx bytes $(((s1 - s0) + (l1 - l0)))"
	echo "duplicated share of the tunnels' bytes: $(awk -v d="$dupb" -v t="$(((s1 - s0) + (l1 - l0)))" 'BEGIN { printf "%.4f", d / t }')"
	[ "$dupb" -gt 0 ]
	[ "$dupb" -le "$short" ]
}
