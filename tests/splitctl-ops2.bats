#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Operator safety: splitctl touches only what it made (tunnels by their
# owner tag, instances of its own network namespace), "down", global
# options anywhere, JSON from every command, bpffs, completion, doctor.
FS_PREFIX=fsto
load lib/common
load lib/router

setup() {
	fs_router_setup
	D=$BATS_TEST_TMPDIR
}

teardown() {
	fs_teardown
}

# links NS: the interface names of a namespace, sorted
links() {
	ip -n "$1" -j link show | jq -r '.[].ifname' | sort
}

@test "tunnel del: deletes its own tunnel, refuses a LAN port or a foreign tunnel, changing nothing" {
	fs_sc tunnel add vx1 vxlan --vni 11 --local 10.77.2.254 --remote 10.77.2.1 --dev rs
	ip -n "$R" -d link show vx1 | grep -q 'alias flowsplit: created by splitctl tunnel add'
	fs_sc -j tunnel show | jq -e '.[] | select(.name == "vx1") | .splitctl == true'
	ip -n "$R" link add vxf type vxlan id 12 dstport 4789 local 10.77.1.254
	before=$(links "$R")
	run fs_sc tunnel del rc
	[ "$status" -eq 1 ]
	[ "$output" = "splitctl: tunnel del: 'rc' is not a tunnel created by 'splitctl tunnel add' (kind veth, no owner tag): refusing to delete it" ]
	run fs_sc tunnel del vxf
	[ "$status" -eq 1 ]
	[[ "$output" == *"'vxf' is not a tunnel created by 'splitctl tunnel add' (kind vxlan, no owner tag)"* ]]
	run fs_sc tunnel del lo
	[ "$status" -eq 1 ]
	[[ "$output" == *"'lo' is not a tunnel created by 'splitctl tunnel add' (kind none"* ]]
	# an alias copied onto a non-tunnel does not make it ours
	ip -n "$R" link set rc alias "flowsplit: created by splitctl tunnel add"
	run fs_sc tunnel del rc
	[ "$status" -eq 1 ]
	[ "$(links "$R")" = "$before" ]
	fs_sc -j tunnel show | jq -e '.[] | select(.name == "vxf") | .splitctl == false'
	run fs_sc tunnel del vx1
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	! ip -n "$R" link show vx1 2>/dev/null || false
	ip -n "$R" link show vxf >/dev/null
	run fs_sc tunnel del vx1
	[ "$status" -eq 1 ]
	[ "$output" = "splitctl: tunnel del: interface 'vx1' does not exist" ]
}

# sc_in NS ARGS...: splitctl in namespace NS with the router's instance
sc_in() {
	local ns=$1
	shift
	ip netns exec "$ns" "$SPLITCTL" --pin-dir "$BPF" "$@"
}

@test "an instance of another network namespace: every command refuses, naming both; nothing changes" {
	fs_sc attach rc --hook xdp --threshold 7
	ino_r=$(ip netns exec "$R" stat -L -c %i /proc/self/ns/net)
	ino_c=$(ip netns exec "$C" stat -L -c %i /proc/self/ns/net)
	fs_sc status | grep -qx "instance: $BPF, network namespace net:\[$ino_r\] ('$R')"
	fs_sc -j status | jq -e --arg n "net:[$ino_r] ('$R')" '.netns == $n and .attached'
	before=$(fs_sc -j status | jq -c '{config, interfaces}'; ls "$BPF")
	want="splitctl: instance '$BPF' was attached in network namespace net:[$ino_r] ('$R'), this is net:[$ino_c] ('$C'): refusing to touch it (run splitctl in that namespace; if it is gone, remove the pins with 'rm -r $BPF')"
	for cmd in "detach cv" "detach --all" "attach cv" "set threshold 9" "flush" "gc" "stats" "flows" "status"; do
		# shellcheck disable=SC2086
		run sc_in "$C" $cmd
		echo "$cmd: $status $output"
		[ "$status" -eq 1 ]
		[ "$output" = "$want" ]
	done
	# status -j: a document naming the other namespace
	run sc_in "$C" -j status
	[ "$status" -eq 1 ]
	echo "$output" | grep -v '^splitctl:' | jq -e --arg n "net:[$ino_r] ('$R')" \
		'.attached and .other_netns and .netns == $n and (.error | startswith("instance"))'
	after=$(fs_sc -j status | jq -c '{config, interfaces}'; ls "$BPF")
	[ "$after" = "$before" ]
	ip -n "$R" -d link show rc | grep -q prog/xdp
	! ip -n "$C" -d link show cv | grep -q prog/xdp || false
	# the owner detaches; the record goes with the last pin
	fs_sc detach --all
	[ ! -e "$BPF" ]
}

@test "status and detach --all with nothing attached: exit 1, one line, a JSON document under -j" {
	run fs_sc status
	[ "$status" -eq 1 ]
	[ "$output" = "splitctl: nothing attached: pin directory '$BPF' does not exist (see 'splitctl attach')" ]
	run ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" -j status
	[ "$status" -eq 1 ]
	echo "$output" | grep -v '^splitctl:' | jq -e --arg d "$BPF" '.pin_dir == $d and .attached == false and (.error | startswith("nothing attached"))'
}
