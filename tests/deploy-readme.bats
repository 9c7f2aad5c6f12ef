#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The deploy guide's "Deploy, step by step" section (docs/deploy.md),
# literally: every `splitctl` command of its code blocks, in order and as
# written, runs on
# router A; A then carries IPv4 and IPv6 traffic of both classes through
# the right tunnel, and the section's last command, `splitctl down`,
# removes everything splitctl made there.
#   $C1 --(c0/lan0)--  $A  --(wan0/wan0, wan1/wan1: the underlays)-- $B --(lanb/s0)-- $S
#   $C2 --(c1/lan1)--
# B is the peer router (set up by this file, as the guide tells: the same
# commands with the addresses swapped).
FS_PREFIX=fsto
load lib/common

setup() {
	local id=$$-$BATS_TEST_NUMBER l
	C1=$FS_PREFIX-c1-$id C2=$FS_PREFIX-c2-$id A=$FS_PREFIX-a-$id B=$FS_PREFIX-b-$id
	S=$FS_PREFIX-s-$id
	D=$BATS_TEST_TMPDIR
	fs_netns "$C1" "$C2" "$A" "$B" "$S"
	ip link add c0 netns "$C1" type veth peer lan0 netns "$A"
	ip link add c1 netns "$C2" type veth peer lan1 netns "$A"
	ip link add wan0 netns "$A" mtu 1550 type veth peer wan0 netns "$B" mtu 1550
	ip link add wan1 netns "$A" mtu 1550 type veth peer wan1 netns "$B" mtu 1550
	ip link add s0 netns "$S" type veth peer lanb netns "$B"
	ip -n "$C1" addr add 10.1.0.1/24 dev c0
	ip -n "$C1" addr add fd01::1/64 dev c0 nodad
	ip -n "$C2" addr add 10.1.1.1/24 dev c1
	ip -n "$C2" addr add fd01:1::1/64 dev c1 nodad
	ip -n "$A" addr add 10.1.0.254/24 dev lan0
	ip -n "$A" addr add fd01::fe/64 dev lan0 nodad
	ip -n "$A" addr add 10.1.1.254/24 dev lan1
	ip -n "$A" addr add fd01:1::fe/64 dev lan1 nodad
	ip -n "$A" addr add 172.16.1.1/30 dev wan0
	ip -n "$A" addr add 172.16.2.1/30 dev wan1
	ip -n "$B" addr add 172.16.1.2/30 dev wan0
	ip -n "$B" addr add 172.16.2.2/30 dev wan1
	ip -n "$B" addr add 10.2.0.254/24 dev lanb
	ip -n "$B" addr add fd02::fe/64 dev lanb nodad
	ip -n "$S" addr add 10.2.0.1/24 dev s0
	ip -n "$S" addr add fd02::1/64 dev s0 nodad
	for l in "$C1 c0" "$C2 c1" "$A lan0" "$A lan1" "$A wan0" "$A wan1" "$B wan0" "$B wan1" \
		 "$B lanb" "$S s0"; do
		ip -n ${l% *} link set ${l#* } up
	done
	for l in "$C1 10.1.0.254 fd01::fe" "$C2 10.1.1.254 fd01:1::fe" "$S 10.2.0.254 fd02::fe"; do
		set -- $l
		ip -n "$1" route add default via "$2"
		ip -n "$1" -6 route add default via "$3"
	done
	for l in "$A" "$B"; do
		ip netns exec "$l" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	done
	BPF=$(fs_bpffs)
	# "splitctl" on the PATH is this build
	mkdir -p "$D/bin"
	ln -sf "$SPLITCTL" "$D/bin/splitctl"
	peer_setup
}

# both routers' state files in /run/flowsplit (route records, an agent's
# lock and health) go with their namespaces: "down" in each first
teardown() {
	local ns
	for ns in "${A:-}" "${B:-}"; do
		[ -n "$ns" ] && ip netns exec "$ns" "$SPLITCTL" --pin-dir "$BPF/$ns" down >/dev/null 2>&1
	done
	fs_teardown
}

# on NS CMD: a guide's command line, as written, in namespace NS with its
# own instance directory
on() {
	ip netns exec "$1" env PATH="$D/bin:$PATH" FLOWSPLIT_PIN_DIR="$BPF/$1" sh -ec "$2"
}

# B: the guide's tunnels and routes, addresses swapped, A's prefixes; its
# splitter and dedup (the loss protection step: both routers)
peer_setup() {
	on "$B" "splitctl tunnel add sdwan0 vxlan --vni 101 --local 172.16.1.2 --remote 172.16.1.1 --dev wan0 --address 192.168.101.2/30 --address fd10:1::2/64"
	on "$B" "splitctl tunnel add sdwan1 vxlan --vni 102 --local 172.16.2.2 --remote 172.16.2.1 --dev wan1 --address 192.168.102.2/30 --address fd10:2::2/64"
	on "$B" "splitctl route up --mode split --short-dev sdwan0 --long-dev sdwan1 --prefix 10.1.0.0/16 --prefix fd01::/16 --lan-dev lanb --via-short 192.168.101.1 --via-short fd10:1::1 --via-long 192.168.102.1 --via-long fd10:2::1"
	on "$B" "splitctl attach lanb"
	on "$B" "splitctl dup attach --short-dev sdwan0 --long-dev sdwan1"
}

# The splitctl commands of the guide's step-by-step section: code lines
# (indented 4 or more), continuation lines joined, in order.
readme_commands() {
	awk '/^## Deploy, step by step/ { on = 1; next } /^## / { on = 0 }
	     on && /^    / { sub(/^ +/, ""); line = line $0
		     if (line ~ /\\$/) { sub(/\\$/, "", line); next }
		     if (line ~ /^splitctl /) print line; line = "" }' "$FS_ROOT/docs/deploy.md" |
		tr -s ' '
}

# tx_bytes NS DEV
tx_bytes() {
	ip -n "$1" -j -s link show "$2" | jq '.[0].stats64.tx.bytes'
}

# transfer FROM_NS ADDR PORT: 2 MB over TCP to $S, received whole
transfer() {
	fs_bg ip netns exec "$S" socat -u "TCP-LISTEN:$3,reuseaddr,pf=$4" OPEN:"$D/rx-$3",creat,trunc
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':$3 '"
	head -c 2000000 /dev/zero | ip netns exec "$1" socat -u - "TCP:$2:$3"
	fs_wait_for 10 sh -c "[ \$(stat -c %s '$D/rx-$3') -eq 2000000 ]"
}

@test "docs/deploy.md step by step, literally: IPv4 and IPv6 of both classes through the right tunnel, then down" {
	mapfile -t cmds < <(readme_commands)
	printf '%s\n' "${cmds[@]}"
	[ "${#cmds[@]}" -ge 12 ]
	[ "${cmds[-1]}" = "splitctl down" ]
	for ((i = 0; i < ${#cmds[@]} - 1; i++)); do
		run on "$A" "${cmds[i]}"
		echo "\$ ${cmds[i]} -> $status"
		[ "$status" -eq 0 ] || { echo "$output"; false; }
	done
	# every rule and route in place; degraded only for want of an agent
	on "$A" "splitctl -j route show" |
		jq -e '.state == "degraded" and .routes_state == "ok" and (.problems | length) == 1 and (.problems[0] | startswith("no agent"))'
	# both LAN ports, both families reach the far side (ICMP: SHORT)
	ip netns exec "$C1" ping -c 1 -W 5 10.2.0.1 >/dev/null
	ip netns exec "$C1" ping -c 1 -W 5 fd02::1 >/dev/null
	ip netns exec "$C2" ping -c 1 -W 5 10.2.0.1 >/dev/null
	ip netns exec "$C2" ping -c 1 -W 5 fd02::1 >/dev/null
	# a 2 MB transfer per family: its first packets over SHORT (sdwan0),
	# the rest over LONG (sdwan1)
	for t in "$C1 10.2.0.1 7001 ipv4" "$C2 [fd02::1] 7002 ipv6"; do
		set -- $t
		s0=$(tx_bytes "$A" sdwan0) l0=$(tx_bytes "$A" sdwan1)
		transfer "$1" "$2" "$3" "$4"
		s1=$(tx_bytes "$A" sdwan0) l1=$(tx_bytes "$A" sdwan1)
		echo "$4: SHORT +$((s1 - s0)) B, LONG +$((l1 - l0)) B"
		# the guide sets reshort-gap 50: a sender that pauses longer
		# (a loaded machine) sends one more threshold short, so the
		# bounds are the whole transfer and SHORT well below LONG
		[ $((s1 - s0 + l1 - l0)) -gt 1900000 ]
		[ $((s1 - s0)) -gt 20000 ]
		[ $((l1 - l0)) -gt $((4 * (s1 - s0))) ]
	done
	[ "$(on "$A" "splitctl -j stats" | jq .packets_long)" -gt 1000 ]
	# the last command: everything splitctl made on A goes, B keeps its own
	run on "$A" "${cmds[-1]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(ip -n "$A" rule show | grep 'proto 245')" ]
	[ -z "$(ip -n "$A" -6 rule show | grep 'proto 245')" ]
	[ -z "$(ip -n "$A" route show table all proto 245)" ]
	[ -z "$(ip -n "$A" -6 route show table all proto 245)" ]
	! ip -n "$A" link show sdwan0 2>/dev/null || false
	! ip -n "$A" link show sdwan1 2>/dev/null || false
	! ip -n "$A" -d link show | grep -q 'prog/' || false
	[ ! -e "$BPF/$A" ]
	ip -n "$B" link show sdwan0 >/dev/null
	[ -n "$(ip -n "$B" route show table all proto 245)" ]
	run on "$A" "splitctl down"
	[ "$output" = "nothing to do: no splitter, routes or tunnels of splitctl in this network namespace" ]
}

# What splitctl made on router A: its tunnels, rules and routes (tag 245),
# its splitter rules, settings and interfaces (ids left out: new ones
# after a re-attach), and dup (its copy flag left out: the agent's)
snapshot() {
	on "$A" "splitctl -j tunnel show" | jq -S '[.[] | select(.splitctl)]'
	ip -n "$A" rule show | grep 'proto 245' | sort
	ip -n "$A" -6 rule show | grep 'proto 245' | sort
	ip -n "$A" route show table all proto 245 | sort
	ip -n "$A" -6 route show table all proto 245 | sort
	on "$A" "splitctl -j rule show" | jq -S .
	on "$A" "splitctl -j status" |
		jq -S '{config, interfaces: [.interfaces[] | {name, hook, mode}]}'
	on "$A" "splitctl -j dup status" |
		jq -S '{attached, dedup, short_dev, long_dev, window_ms, capacity4, capacity6}'
}

@test "reboot: down, then apply -c of the shipped example, then run: the deploy section's router again" {
	mapfile -t cmds < <(readme_commands)
	[ "${cmds[-1]}" = "splitctl down" ]
	for ((i = 0; i < ${#cmds[@]} - 1; i++)); do
		on "$A" "${cmds[i]}" >/dev/null
	done
	snapshot >"$D/deployed"
	# the example is the deploy section's router: only the agent's
	# metrics port is made free for this test
	sed 's/^listen = .*/listen = 127.0.0.1:19434/' "$FS_ROOT/loader/flowsplit.conf.example" >"$D/flowsplit.conf"
	on "$A" "splitctl down" >/dev/null
	# "reboot": nothing of splitctl's left; a dry run lists, changes nothing
	run on "$A" "splitctl -j apply --dry-run -c $D/flowsplit.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c '[.dry_run, ([.changes[] | select(.object == "tunnel") | .action] | join(","))]')" = '[true,"create,create"]' ]
	echo "$output" | jq -e '[.changes[] | select(.object == "route")] == [{"object":"route","name":"","action":"install","from":"","to":"mode split, short-dev sdwan0, long-dev sdwan1"}]'
	echo "$output" | jq -e '[.changes[] | select(.object == "interface") | .name] == ["lan0","lan1"]'
	echo "$output" | jq -e '[.changes[] | select(.object == "dup") | .action] == ["attach"]'
	! ip -n "$A" link show sdwan0 2>/dev/null || false
	[ ! -e "$BPF/$A" ]
	run on "$A" "splitctl apply -c $D/flowsplit.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -qx "$D/flowsplit.conf: 8 change(s)"
	[[ "$output" == *"  tunnel sdwan0: create"* ]]
	[[ "$output" == *"  rule backup: add (10.9.0.0/16 mode long)"* ]]
	[[ "$output" == *"  dup sdwan0/sdwan1: attach (short sdwan0, long sdwan1, window 1 s, entries 65536)"* ]]
	snapshot >"$D/applied"
	diff "$D/deployed" "$D/applied"
	# the same file again: nothing to change
	run on "$A" "splitctl apply -c $D/flowsplit.conf"
	[ "$output" = "$D/flowsplit.conf: no change" ]
	# the unit's command: run applies the file too, then keeps it
	fs_bg ip netns exec "$A" env FLOWSPLIT_PIN_DIR="$BPF/$A" "$SPLITCTL" run -c "$D/flowsplit.conf" 2>"$D/run.log"
	# (its apply loads the program for each interface: seconds on a
	# loaded machine)
	fs_wait_for 60 sh -c "ip netns exec '$A' env FLOWSPLIT_PIN_DIR='$BPF/$A' '$SPLITCTL' -j route show | jq -e '.health.tunnels[1].state == \"up\"' >/dev/null" ||
		{ cat "$D/run.log"; false; }
	snapshot >"$D/running"
	diff "$D/deployed" "$D/running"
	on "$A" "splitctl route show" | grep -qx 'state: ok'
	ip netns exec "$C1" ping -c 1 -W 5 10.2.0.1 >/dev/null
	ip netns exec "$C2" ping -c 1 -W 5 fd02::1 >/dev/null
}
