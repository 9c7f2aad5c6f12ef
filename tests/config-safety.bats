#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Config files and apply: what check calls valid, apply does; the INI
# reader takes one section per name, none empty, none unknown; a route
# prefix with host bits is refused before anything changes.
FS_PREFIX=fstq
bats_require_minimum_version 1.5.0
load lib/common
load lib/router

# bad_conf LINE TEXT: the file on stdin is refused by check (offline and
# not) with exit 2 and one line naming LINE and TEXT
bad_conf() {
	cat >"$D/bad.conf"
	local mode
	for mode in --offline ""; do
		run -2 fs_sc check $mode -c "$D/bad.conf"
		echo "$output"
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"bad.conf:$1: "*"$2"* ]]
	done
}

@test "config: a second section of one name is refused, next to it or not" {
	printf '[splitter]\ninterfaces = rc\n[rule a]\nprefix = 10.2.0.0/24\n[rule a]\nport = 443\n' |
		bad_conf 5 "[rule a] given twice (first at line 3): accepted: one section per name"
	printf '[splitter]\ninterfaces = rc\n[rule a]\nprefix = 10.2.0.0/24\n[agent]\ninterval = 1\n[rule a]\nport = 443\n' |
		bad_conf 7 "[rule a] given twice (first at line 3)"
	printf '[splitter]\ninterfaces = rc\n[splitter]\nthreshold = 9\n' |
		bad_conf 3 "[splitter] given twice (first at line 1)"
}

@test "config: empty and unknown sections are refused" {
	printf '[splitter]\ninterfaces = rc\n[rule x]\n' | bad_conf 3 "[rule x] (line 3) is empty"
	printf '[splitter]\ninterfaces = rc\n[rule x]\n[agent]\ninterval = 1\n' | bad_conf 4 "[rule x] (line 3) is empty"
	printf '[splitter]\ninterfaces = rc\n[bogus]\n' | bad_conf 3 "unknown section '[bogus]'"
	printf '[splitter]\ninterfaces = rc\n[health]\n# nothing\n' | bad_conf 3 "[health] (line 3) is empty"
	# the example config stays valid
	fs_sc check --offline -c "$FS_ROOT/loader/flowsplit.conf.example"
}

@test "config: a [route] prefix with host bits is refused by check, offline or not" {
	printf '[splitter]\ninterfaces = rc\n[route]\nmode = split\nshort-dev = rc\nlong-dev = rs\nprefix = 10.3.0.0/24 10.2.0.1/24\n' |
		bad_conf 7 "prefix: invalid value '10.2.0.1/24': host bits set: accepted: a network address ADDR/LEN (10.2.0.0/24)"
	printf '[splitter]\ninterfaces = rc\n[route]\nmode = split\nshort-dev = rc\nlong-dev = rs\nprefix = fd02::1/64\n' |
		bad_conf 7 "host bits set: accepted: a network address ADDR/LEN (fd02::/64)"
}

@test "apply: a foreign XDP program on the second interface: check foresees it, apply prints one line and changes nothing" {
	ip link add rc2 netns "$R" type veth peer cv2 netns "$C"
	ip -n "$R" link set rc2 up
	ip -n "$C" link set cv2 up
	ip -n "$R" link set dev rs xdpgeneric obj "$FS_BUILD/bpf/xdp_pass.bpf.o" sec xdp
	printf '[splitter]\ninterfaces = rc2 rs\nhook = xdp\n' >"$D/a.conf"
	run -1 fs_sc check -c "$D/a.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"interface 'rs' already runs XDP program 'xdp_pass'"* ]]
	run -1 fs_sc apply -c "$D/a.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"interface 'rs' already runs XDP program 'xdp_pass'"* ]]
	# rc2 has no program, rs still the foreign one
	[ "$(ip -n "$R" -j link show rc2 | jq '.[0].xdp // empty | length')" = "" ]
	ip -n "$R" -j link show rs | jq -e '.[0].xdp.prog.name == "xdp_pass"'
}
