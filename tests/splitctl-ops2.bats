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
