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

@test "config: [tunnel NAME] sections: kind required, keys of tunnel add, vxlan complete" {
	printf '[splitter]\ninterfaces = rc\n[tunnel vx9]\nvni = 9\n' |
		bad_conf 3 "[tunnel vx9]: kind is missing: accepted: vxlan"
	printf '[splitter]\ninterfaces = rc\n[tunnel vx9]\nkind = vxlan\ncolour = red\n' |
		bad_conf 5 "[tunnel vx9]: unknown key 'colour': accepted: kind, vni, local, remote, dev"
	printf '[splitter]\ninterfaces = rc\n[tunnel vx9]\nkind = vxlan\nvni = 9\n' |
		bad_conf 3 "[tunnel vx9]: vxlan needs vni, local, remote and dev"
	printf '[splitter]\ninterfaces = rc\n[tunnel vx9]\nkind = vxlan\nvni = 99999999\n' |
		bad_conf 5 "vni: invalid value '99999999'"
	printf '[splitter]\ninterfaces = rc\n[tunnel vx9]\nkind = vxlan\nvni = 9\n[tunnel vx9]\nvni = 8\n' |
		bad_conf 6 "[tunnel vx9] given twice (first at line 3)"
}

@test "config: the shipped example is a whole router that check --offline accepts" {
	run fs_sc check --offline -c "$FS_ROOT/loader/flowsplit.conf.example"
	[ "$status" -eq 0 ]
	ex=$FS_ROOT/loader/flowsplit.conf.example
	[ "$(grep -c '^\[tunnel ' "$ex")" -eq 2 ]
	grep -qx '\[route\]' "$ex"
	[ "$(grep -c '^\[rule ' "$ex")" -eq 2 ]
}

@test "check: a textfile whose directory does not exist is refused, naming it (offline: the file alone)" {
	printf '[splitter]\ninterfaces = rc\n[agent]\ntextfile = %s/nodir/flowsplit.prom\n' "$D" >"$D/t.conf"
	run -1 fs_sc check -c "$D/t.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"[agent] textfile '$D/nodir/flowsplit.prom': directory '$D/nodir' does not exist: create it"* ]]
	run -1 fs_sc apply -c "$D/t.conf"
	[ ! -e "$BPF" ]
	fs_sc check --offline -c "$D/t.conf"
	mkdir "$D/nodir"
	fs_sc check -c "$D/t.conf"
}

@test "apply: a [tunnel] named like an interface splitctl did not make is refused before any change" {
	printf '[splitter]\ninterfaces = rc\n[tunnel rs]\nkind = vxlan\nvni = 7\nlocal = 10.77.2.254\nremote = 10.77.2.1\ndev = rc\n' >"$D/t.conf"
	run -1 fs_sc apply -c "$D/t.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"t.conf:3: [tunnel rs]: interface 'rs' exists and is not a tunnel created by splitctl (kind veth, no owner tag)"* ]]
	[ ! -e "$BPF" ]
	printf '[splitter]\ninterfaces = rc\n[tunnel fstqv]\nkind = vxlan\nvni = 7\nlocal = 10.77.2.254\nremote = 10.77.2.1\ndev = nosuch0\n' >"$D/t.conf"
	run -1 fs_sc check -c "$D/t.conf"
	[[ "$output" == *"[tunnel fstqv]: underlay interface 'nosuch0' does not exist"* ]]
}

@test "apply --dry-run lists what would change and changes nothing; apply prints what it changed" {
	fs_sc attach rc --threshold 30 --reshort-gap 50
	fs_sc rule add byhand --prefix 10.99.0.0/16 --mode long
	printf '[splitter]\ninterfaces = rc\nthreshold = 20\n[rule a]\nprefix = 10.77.2.0/24\nmode = short\n[tunnel fstqv]\nkind = vxlan\nvni = 7\nlocal = 10.77.2.254\nremote = 10.77.2.1\ndev = rs\naddress = 192.168.77.1/30\n' >"$D/a.conf"
	before=$(fs_sc -j status | jq -c .config; fs_sc -j rule show)
	run fs_sc apply --dry-run -c "$D/a.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	fs_lines_are "$D/a.conf: would make 5 change(s)" \
		"  tunnel fstqv: create" \
		"  setting threshold: change 30 -> 20" \
		"  setting reshort-gap: change 50 -> 0" \
		"  rule a: add (10.77.2.0/24 mode short)" \
		"  rule byhand: remove (10.99.0.0/16 mode long)"
	[ "$(fs_sc -j status | jq -c .config; fs_sc -j rule show)" = "$before" ]
	! ip -n "$R" link show fstqv 2>/dev/null || false
	# the same list, as JSON, from the same output path
	fs_sc -j apply --dry-run -c "$D/a.conf" |
		jq -e '.dry_run and .changed == 5 and .changes[1] == {"object":"setting","name":"threshold","action":"change","from":"30","to":"20"}'
	out=$(fs_sc -j apply -c "$D/a.conf" 2>/dev/null)
	echo "$out" | jq -e '(.dry_run | not) and .changed == 5 and ([.changes[].action] == ["create","change","change","add","remove"])'
	ip -n "$R" link show fstqv | grep -q 'alias flowsplit: created by splitctl'
	[ "$(fs_sc -j rule show | jq -r '[.[].name] | join(",")')" = a ]
	# again: nothing to change; then a tunnel that differs is made again
	run fs_sc apply -c "$D/a.conf"
	[ "$output" = "$D/a.conf: no change" ]
	sed -i 's/^vni = 7/vni = 8/' "$D/a.conf"
	run fs_sc apply -c "$D/a.conf"
	echo "$output"
	[[ "$output" == *"  tunnel fstqv: recreate (vni 7 -> 8)"* ]]
	ip -n "$R" -d link show fstqv | grep -q 'vxlan id 8'
	fs_sc down
}
