#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# [dup] in the config file: apply attaches "dup attach" on the [route]'s
# tunnel devices (dedup on both, the copy left to the agent), leaves it
# when it matches, changes it in place or attaches it again when it
# differs, removes it when the file says no; check judges the keys; down
# removes it, and apply after down (a reboot) brings it back. On
# tests/lib/wan.bash: router A is configured by its file, B by hand.
FS_PREFIX=fstcd
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

# conf DUP_KEYS...: router A's file (tunnels as wan_setup makes them,
# splitter, split route), with a [dup] section of these lines (none
# without arguments)
conf() {
	cat <<-EOF
	[tunnel vxs]
	kind = vxlan
	vni = 101
	local = 172.16.1.1
	remote = 172.16.1.2
	dev = a1
	address = 192.168.101.1/30 fd10:1::1/64

	[tunnel vxl]
	kind = vxlan
	vni = 102
	local = 172.16.2.1
	remote = 172.16.2.2
	dev = a2
	address = 192.168.102.1/30 fd10:2::1/64

	[splitter]
	interfaces = lana
	hook = xdp
	threshold = 20
	flows = $FS_TEST_FLOWS

	[route]
	mode = split
	short-dev = vxs
	long-dev = vxl
	prefix = 10.2.0.0/24 fd02::/64
	lan-dev = lana
	via-short = 192.168.101.2 fd10:1::2
	via-long = 192.168.102.2 fd10:2::2
	EOF
	[ $# -eq 0 ] && return
	echo "[dup]"
	printf '%s\n' "$@"
}

# apply_a FILE: apply on A, -j; the document in $output
apply_a() { run wan_sc "$A" -j apply -c "$1"; echo "$output"; }

# dup_changes: the "dup" objects of apply's document in $output
dup_changes() { jq -c '[.changes[] | select(.object == "dup") | {name, action, from, to}]' <<<"$output"; }

dup_status() { wan_sc "$A" -j dup status; }

ifindex() { ip netns exec "$A" cat "/sys/class/net/$1/ifindex"; }

@test "config [dup]: apply attaches it, a second apply changes nothing, a change in place keeps the copy, attach = no removes it" {
	conf "attach = yes" >"$D/dup.conf"
	# the dry run lists it and changes nothing
	run wan_sc "$A" -j apply --dry-run -c "$D/dup.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(dup_changes)" = '[{"name":"vxs/vxl","action":"attach","from":"","to":"short vxs, long vxl, window 1 s, entries 65536"}]' ]
	[ ! -e "$BPFA/dup" ]
	# apply: dedup on both tunnels, the copy off (the agent's)
	run wan_sc "$A" apply -c "$D/dup.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"  dup vxs/vxl: attach (short vxs, long vxl, window 1 s, entries 65536)"* ]]
	dup_status | jq -e '.attached and .dedup and .copy == false and .short_dev == "vxs" and .long_dev == "vxl" and .window_ms == 1000 and .capacity4 == 65536'
	[ -e "$BPFA/dup/link_dup_if$(ifindex vxs)" ]
	[ -e "$BPFA/dup/link_dedup_if$(ifindex vxs)" ]
	[ -e "$BPFA/dup/link_dedup_if$(ifindex vxl)" ]
	# the same file again: no change, not even to the pins
	pin=$(stat -c %i "$BPFA/dup/fs_dup_seen4")
	run wan_sc "$A" apply -c "$D/dup.conf"
	echo "$output"
	[ "$output" = "$D/dup.conf: no change" ]
	[ "$(stat -c %i "$BPFA/dup/fs_dup_seen4")" = "$pin" ]
	# the copy switched on by hand (as the agent does); a new window
	# changes in place and keeps the copy and the tables
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes >/dev/null
	conf "attach = yes" "window = 2" >"$D/dup.conf"
	apply_a "$D/dup.conf"
	[ "$status" -eq 0 ]
	[ "$(dup_changes)" = '[{"name":"vxs/vxl","action":"change","from":"short vxs, long vxl, window 1 s, entries 65536, peer-mac '"$(dup_status | jq -r .peer_mac)"'","to":"short vxs, long vxl, window 2 s, entries 65536"}]' ]
	dup_status | jq -e '.copy and .window_ms == 2000'
	[ "$(stat -c %i "$BPFA/dup/fs_dup_seen4")" = "$pin" ]
	# another table size: attached again (the copy off until the agent's next step)
	conf "attach = yes" "window = 2" "entries = 1024" >"$D/dup.conf"
	apply_a "$D/dup.conf"
	[ "$status" -eq 0 ]
	[ "$(dup_changes | jq -r '.[0].action')" = reattach ]
	dup_status | jq -e '.copy == false and .capacity4 == 1024 and .capacity6 == 1024'
	[ "$(stat -c %i "$BPFA/dup/fs_dup_seen4")" != "$pin" ]
	run wan_sc "$A" apply -c "$D/dup.conf"
	[ "$output" = "$D/dup.conf: no change" ]
	# attach = no: removed, pins and links
	conf "attach = no" >"$D/dup.conf"
	run wan_sc "$A" -j apply --dry-run -c "$D/dup.conf"
	# (the live one names the peer's address it found)
	dup_changes | jq -e '.[0] | .name == "" and .action == "remove" and (.from | startswith("short vxs, long vxl, window 2 s, entries 1024")) and .to == ""'
	[ -e "$BPFA/dup" ]
	run wan_sc "$A" apply -c "$D/dup.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"  dup: remove (short vxs, long vxl, window 2 s, entries 1024"* ]]
	dup_status | jq -e '.attached == false'
	[ ! -e "$BPFA/dup" ]
	! ip netns exec "$A" bpftool net show dev vxl | grep -q fs_dedup || false
	# a file without [dup] says no too (declarative): a dup attached by
	# hand goes with the next apply
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl >/dev/null
	conf >"$D/none.conf"
	run wan_sc "$A" apply -c "$D/none.conf"
	echo "$output"
	[[ "$output" == *"  dup: remove ("* ]]
	[ ! -e "$BPFA/dup" ]
}

@test "config [dup]: bad keys and values are refused by check and apply with one line, nothing changed" {
	# bad_dup CODE TEXT KEYS...: check (offline too when CODE is 2) and
	# apply exit CODE with one line holding TEXT; nothing was attached
	bad_dup() {
		local code=$1 text=$2 mode
		shift 2
		conf "$@" >"$D/bad.conf"
		for mode in --offline ""; do
			[ "$code" -eq 2 ] || [ -z "$mode" ] || continue
			run wan_sc "$A" check $mode -c "$D/bad.conf"
			echo "$output"
			[ "$status" -eq "$code" ]
			[ "${#lines[@]}" -eq 1 ]
			[[ "$output" == *"$text"* ]]
		done
		run wan_sc "$A" apply -c "$D/bad.conf"
		echo "$output"
		[ "$status" -eq "$code" ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"$text"* ]]
		[ ! -e "$BPFA" ]
	}
	bad_dup 2 "bad.conf:32: [dup]: attach: invalid value 'maybe': accepted: yes, no, 1, 0" "attach = maybe"
	bad_dup 2 "bad.conf:33: [dup]: unknown key 'bogus': accepted: attach, short-dev, long-dev, peer-mac, window, entries, copy" \
		"attach = yes" "bogus = 1"
	bad_dup 2 "bad.conf:33: [dup]: window: invalid value '0': accepted: seconds 0.001..60" "attach = yes" "window = 0"
	bad_dup 2 "bad.conf:33: [dup]: entries: invalid value '10'" "attach = yes" "entries = 10"
	bad_dup 2 "bad.conf:33: [dup]: peer-mac: invalid MAC address '02:00': accepted: six hex pairs" \
		"attach = yes" "peer-mac = 02:00"
	bad_dup 2 "bad.conf:33: [dup]: short-dev: invalid interface name" "attach = yes" "short-dev = a/b"
	bad_dup 2 "bad.conf:33: [dup]: copy: invalid value 'yes': accepted: auto, on, off" "attach = yes" "copy = yes"
	bad_dup 2 "[dup]: short-dev and long-dev are both 'vxl': accepted: two tunnel devices" \
		"attach = yes" "short-dev = vxl"
	# against the system: exit 1
	bad_dup 1 "[dup] long-dev: no interface 'nosuch'" "attach = yes" "long-dev = nosuch"
	bad_dup 1 "[dup] short-dev: 'lo' is not an Ethernet device" "attach = yes" "short-dev = lo"
	# no devices: neither keys nor a [route]
	printf '[splitter]\ninterfaces = lana\n[dup]\nattach = yes\n' >"$D/bad.conf"
	run -2 wan_sc "$A" check --offline -c "$D/bad.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"[dup]: attach = yes without short-dev: give short-dev and long-dev, or a [route] with them"* ]]
	# a [tunnel] of the file that is not an Ethernet tunnel
	printf '[tunnel g0]\nkind = gre\nlocal = 172.16.1.1\nremote = 172.16.1.2\n[splitter]\ninterfaces = lana\n[dup]\nattach = yes\nshort-dev = g0\nlong-dev = vxl\n' >"$D/bad.conf"
	run -2 wan_sc "$A" check --offline -c "$D/bad.conf"
	echo "$output"
	[[ "$output" == *"[dup]: short-dev 'g0' is a [tunnel] of kind gre: accepted: a vxlan tunnel"* ]]
	# the devices named, without a [route]: valid
	printf '[splitter]\ninterfaces = lana\n[dup]\nattach = yes\nshort-dev = vxs\nlong-dev = vxl\ncopy = off\n' >"$D/ok.conf"
	wan_sc "$A" check -c "$D/ok.conf"
}

# request: one short request from the client to B's server, answered
request() {
	[ "$(echo ping | ip netns exec "$C" timeout 3 socat - TCP:10.2.0.1:7000,connect-timeout=3 2>/dev/null)" = pong ]
}

@test "config [dup]: down removes it; apply after down (a reboot) brings it back, and it dedups" {
	# B by hand: splitter, route, dedup (as the deploy guide's peer)
	wan_sc "$B" attach lanb --hook xdp --threshold 20 --flows "$FS_TEST_FLOWS" >/dev/null
	wan_sc "$B" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.1.0.0/24 \
		--prefix fd01::/64 --lan-dev lanb --via-short 192.168.101.1 --via-short fd10:1::1 \
		--via-long 192.168.102.1 --via-long fd10:2::1 >/dev/null
	wan_sc "$B" dup attach --short-dev vxs --long-dev vxl >/dev/null
	conf "attach = yes" >"$D/dup.conf"
	wan_sc "$A" apply -c "$D/dup.conf" >/dev/null
	dup_status | jq -e .attached
	# down: the tunnels, the splitter, its pins and dup's go
	run wan_sc "$A" down
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$BPFA" ]
	! ip -n "$A" link show vxs 2>/dev/null || false
	# the reboot's apply: tunnels, splitter, route and dup again
	run wan_sc "$A" -j apply -c "$D/dup.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(dup_changes | jq -r '.[0].action')" = attach ]
	dup_status | jq -e '.attached and .dedup and .short_dev == "vxs" and .long_dev == "vxl"'
	[ -e "$BPFA/dup/link_dup_if$(ifindex vxs)" ]
	[ -e "$BPFA/dup/link_dedup_if$(ifindex vxl)" ]
	run wan_sc "$A" apply -c "$D/dup.conf"
	[ "$output" = "$D/dup.conf: no change" ]
	# it works: A copies the short class (switched on as the agent
	# does), B drops the second copies; GRO off (dedup matches wire
	# packets)
	for ns in "$A" "$B"; do
		for d in vxs vxl; do ip netns exec "$ns" ethtool -K $d gro off 2>/dev/null || true; done
	done
	fs_bg ip netns exec "$S" socat TCP-LISTEN:7000,fork,reuseaddr SYSTEM:'read l; echo pong'
	fs_wait_for 5 sh -c "ip netns exec '$S' ss -Hltn 'sport = :7000' | grep -q ."
	# B's neighbours of A's tunnels: their new addresses; A's of B's
	# resolved (LONG's too: the copies go to it)
	for t in vxs vxl; do
		n=1; [ $t = vxl ] && n=2
		ma=$(ip -n "$A" -j link show $t | jq -r '.[0].address')
		ip -n "$B" neigh replace 192.168.10$n.1 lladdr "$ma" dev $t nud permanent
		ip -n "$B" neigh replace fd10:$n::1 lladdr "$ma" dev $t nud permanent
		ip netns exec "$A" ping -c 1 -W 5 192.168.10$n.2 >/dev/null
	done
	request
	wan_sc "$A" dup attach --short-dev vxs --long-dev vxl --copy yes >/dev/null
	for i in 1 2 3 4 5; do request; done
	wan_sc "$A" -j dup status | jq -e '.counters.dup_packets > 0'
	wan_sc "$B" -j dup status | jq -e '.counters.dedup_drops > 0'
}

@test "config [dup]: a failure to attach dup undoes the whole apply" {
	# something in the way of dup/ (an empty directory, not splitctl's
	# pins): everything checks out, and the dup step fails
	mkdir -p "$BPFA/dup"
	before=$(wan_dump "$A")
	conf "attach = yes" >"$D/dup.conf"
	wan_sc "$A" check -c "$D/dup.conf"
	run wan_sc "$A" apply -c "$D/dup.conf"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$BPFA/dup': File exists"* ]]
	# the splitter attached by this call is detached, no route, no dup
	[ "$(wan_dump "$A")" = "$before" ]
	! ip -n "$A" link show lana | grep -q xdp || false
	[ ! -e "$BPFA/link_if$(ifindex lana)" ]
	! ip netns exec "$A" bpftool net show dev vxs | grep -q fs_dup || false
}
