#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# All or nothing, and one truth: pin directories others may write, link
# pins gone behind our back, marks and routes that agree (set, attach,
# route up, apply), config files checked before anything changes and laid
# over the defaults, refusals that leave nothing behind. Every refusal:
# exact exit code, one line, state unchanged. Flows that lose their entry
# mid-transfer are counted and classed by `midstream`.
FS_PREFIX=fstk
load lib/common
load lib/router

# long_match: the code point our IPv4 rule to the LONG table (101) matches
long_match() {
	fs_sc -j route show | jq -r '[.rules[] | select(.family == "ipv4" and .table == 101)][0] |
		if .dscp >= 0 then .dscp else .tos / 4 end'
}

# flow_present PORT: the flow to PORT is in the table
flow_present() {
	$SC -j flows | jq -e "[.[] | select(.dport == $1)] | length == 1" >/dev/null
}

# ---- item 3: the pin directory ------------------------------------------------

@test "a pin directory owned by another user, or writable by others, is refused" {
	mkdir "$BPF"
	chown nobody "$BPF"
	run fs_sc attach rc
	one_line 1 "pin directory '$BPF' is owned by uid $(id -u nobody)"
	[[ "$output" == *"chown root $BPF && chmod 0700 $BPF"* ]]
	[ -z "$(ls -A "$BPF")" ]
	chown root "$BPF"
	chmod 0777 "$BPF"
	run fs_sc attach rc
	one_line 1 "with mode 0777"
	[ -z "$(ls -A "$BPF")" ]
	chmod 0700 "$BPF"
	run fs_sc attach rc
	[ "$status" -eq 0 ]
	# read commands refuse it as well, once it became writable by others
	chmod 0770 "$BPF"
	run fs_sc status
	one_line 1 "with mode 0770"
	chmod 0700 "$BPF"
}

@test "status notices a link pin removed behind splitctl's back; detach forgets it" {
	fs_sc attach rc
	fs_sc attach rs
	idx=$(ip -n "$R" -o link show rc | cut -d: -f1)
	rm "$BPF/link_if$idx"
	run fs_sc status
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"interface 'rc' (ifindex $idx): its link pin '$BPF/link_if$idx' is gone"* ]]
	[ "$(ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" status 2>&1 >/dev/null | wc -l)" -eq 1 ]
	rc=0
	fs_sc -j status >"$D/st" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	jq -e '[.interfaces[] | {name, mode}] | sort_by(.name) ==
		[{"name": "rc", "mode": "missing"}, {"name": "rs", "mode": "tcx"}]' "$D/st"
	run fs_sc detach rc
	[ "$status" -eq 0 ]
	run fs_sc status
	[ "$status" -eq 0 ]
}

# ---- item 5 / issue 14: marks and routes agree ---------------------------------

@test "set dscp-long: the routes of route up follow the splitter's long code point" {
	tunnels
	fs_sc attach rc
	fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24
	[ "$(long_match)" -eq 1 ]
	run fs_sc set dscp-long 5
	[ "$status" -eq 0 ]
	[ "$(config | jq .dscp_long)" -eq 5 ]
	[ "$(long_match)" -eq 5 ]
	# attach with another long code point: the routes follow too
	run fs_sc attach rs --dscp-long 3
	[ "$status" -eq 0 ]
	[ "$(long_match)" -eq 3 ]
	# route up takes the live code point when none is given
	fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24
	[ "$(long_match)" -eq 3 ]
}

@test "route up --dscp-long other than the splitter's is refused (routes inverted)" {
	tunnels
	fs_sc attach rc
	fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24
	before=$(fs_sc -j route show | jq -c .rules)
	run fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24 --dscp-long 0
	one_line 2 "dscp-long 0: the splitter marks long flows with DSCP 1: the routes must match it"
	[ "$(fs_sc -j route show | jq -c .rules)" = "$before" ]
	# the same value is fine
	run fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24 --dscp-long 1
	[ "$status" -eq 0 ]
}

@test "set dscp-long that the installed rules cannot match is refused, nothing changes" {
	tunnels
	fs_sc attach rc
	fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24 --selector tos
	before=$(config)
	rules=$(fs_sc -j route show | jq -c .rules)
	run fs_sc set dscp-long 9
	one_line 2 "dscp-long 9: the installed routes (route up) cannot follow it"
	[[ "$output" == *"accepted: DSCP 1..7"* ]]
	[ "$(config)" = "$before" ]
	[ "$(fs_sc -j route show | jq -c .rules)" = "$rules" ]
	# a tunnel that went down: the routes cannot follow, nothing changes
	ip -n "$R" link set tl down
	run fs_sc set dscp-long 4
	one_line 1 "tunnel interface 'tl' is down"
	[ "$(config)" = "$before" ]
	[ "$(fs_sc -j route show | jq -c .rules)" = "$rules" ]
}

@test "apply [route]: the rules match the long code point the file gives the splitter" {
	tunnels
	fs_sc attach rc
	fs_sc set dscp-long 5
	printf '[splitter]\ninterfaces = rc\ndscp-long = 6\n[route]\nmode = split\nshort-dev = ts\nlong-dev = tl\nprefix = 10.99.0.0/24\n' >"$D/r.conf"
	run fs_sc apply -c "$D/r.conf"
	[ "$status" -eq 0 ]
	[ "$(config | jq .dscp_long)" -eq 6 ]
	[ "$(long_match)" -eq 6 ]
	# apply without [route]: the installed routes follow the file's
	printf '[splitter]\ninterfaces = rc\n' >"$D/n.conf"
	run fs_sc apply -c "$D/n.conf"
	[ "$status" -eq 0 ]
	[ "$(long_match)" -eq 1 ]
	# [route] dscp-long against the file's own splitter: refused by check
	printf '[splitter]\ninterfaces = rc\n[route]\nmode = split\nshort-dev = ts\nlong-dev = tl\nprefix = 10.99.0.0/24\ndscp-long = 0\n' >"$D/x.conf"
	run fs_sc check --offline -c "$D/x.conf"
	one_line 2 "[route]: dscp-long 0: the splitter marks long flows with DSCP 1"
}

# ---- items 6, 7 / issue 14: apply all or nothing, declarative ------------------

@test "apply with a listed interface down: one error line, nothing changed" {
	fs_sc attach rc --threshold 20
	ip -n "$R" link set rs down
	before=$(fs_sc -j status)
	printf '[splitter]\ninterfaces = rc rs\nthreshold = 5\n' >"$D/a.conf"
	run fs_sc apply -c "$D/a.conf"
	one_line 1 "a.conf:2: interfaces: interface 'rs' is down"
	[ "$(fs_sc -j status)" = "$before" ]
	# check judges it the same way
	run fs_sc check -c "$D/a.conf"
	one_line 1 "interface 'rs' is down"
}

@test "apply is declarative: keys left out are the defaults, not the live values" {
	fs_sc attach rc --threshold 7 --dscp-short 5 --dscp-long 1
	printf '[splitter]\ninterfaces = rc\ndscp-long = 5\n' >"$D/a.conf"
	# check and apply agree: over the defaults, dscp-short is 0
	run fs_sc check -c "$D/a.conf"
	[ "$status" -eq 0 ]
	run fs_sc apply -c "$D/a.conf"
	[ "$status" -eq 0 ]
	[ "$(config | jq -c '[.threshold, .dscp_short, .dscp_long]')" = "[20,0,5]" ]
}

@test "apply: flows against a live table of another size is an error naming it" {
	fs_sc attach rc
	before=$(fs_sc -j status)
	printf '[splitter]\ninterfaces = rc\nthreshold = 3\nflows = 128\n' >"$D/a.conf"
	run fs_sc apply -c "$D/a.conf"
	one_line 1 "flows 128: the live flow table of '$BPF' has 1048576 entries"
	[[ "$output" == *"re-attach"* ]]
	[ "$(fs_sc -j status)" = "$before" ]
	run fs_sc check -c "$D/a.conf"
	one_line 1 "flows 128: the live flow table"
	# left out: the default size, which the live table has
	printf '[splitter]\ninterfaces = rc\nthreshold = 3\n' >"$D/b.conf"
	run fs_sc apply -c "$D/b.conf"
	[ "$status" -eq 0 ]
}

@test "check --offline judges the file alone; [route] lan-dev takes a list" {
	printf '[splitter]\ninterfaces = nosuch7 nosuch8\n[route]\nmode = split\nshort-dev = ts9\nlong-dev = tl9\nprefix = 10.99.0.0/24 10.98.0.0/24\nlan-dev = lan0 lan1\n' >"$D/o.conf"
	run "$SPLITCTL" check --offline -c "$D/o.conf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"valid (offline"* ]]
	"$SPLITCTL" -j check --offline -c "$D/o.conf" | jq -e '.valid and .offline'
	run "$SPLITCTL" check -c "$D/o.conf"
	one_line 2 "o.conf:2: interfaces: interface 'nosuch7' does not exist"
	# apply has no offline mode
	run "$SPLITCTL" apply --offline -c "$D/o.conf"
	[ "$status" -eq 2 ]
}

# ---- item 9: refusals that leave nothing behind -------------------------------------

@test "run -c with the listen port in use exits 1 before applying anything" {
	fs_bg ip netns exec "$R" /usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 9437)); s.listen(); time.sleep(60)'
	fs_wait_for 5 ip netns exec "$R" sh -c "ss -ltn | grep -q ':9437 '"
	printf '[splitter]\ninterfaces = rc\nthreshold = 9\n[agent]\nlisten = 127.0.0.1:9437\n' >"$D/a.conf"
	run fs_sc run -c "$D/a.conf" --interval 0.1
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot listen on 127.0.0.1:9437"* ]]
	[ ! -e "$BPF" ]
}

@test "a refused first attach leaves no pin directory behind" {
	run fs_sc attach rc --dscp-short 1 --dscp-long 1
	one_line 2 "dscp-short and dscp-long would both be 1"
	[ ! -e "$BPF" ]
	# a directory the operator made stays, empty
	mkdir "$BPF"
	run fs_sc attach rc --dscp-short 1 --dscp-long 1
	[ "$status" -eq 2 ]
	[ -d "$BPF" ]
	[ -z "$(ls -A "$BPF")" ]
}

@test "set with an unknown name and nothing attached is a usage error" {
	run fs_sc set foo 1
	one_line 2 "unknown setting 'foo'"
}

@test "a flow that loses its entry mid-transfer: flows_midstream, marked in flows; midstream long keeps it long" {
	fs_sc attach rc --threshold 5
	fs_sink 6102 /dev/null
	# ~1 kB every 50 ms for 6 s: one segment at a time, the flow stays alive
	(for i in $(seq 120); do head -c 1000 /dev/zero; sleep 0.05; done) |
		ip netns exec "$C" socat -u - TCP:10.77.2.1:6102 &
	fs_wait_for 5 sh -c "$SC -j flows --class long | jq -e '[.[] | select(.dport == 6102)] | length == 1' >/dev/null"
	# started with its SYN: not midstream
	fs_sc -j flows | jq -e '[.[] | select(.dport == 6102)][0] | .midstream == false'
	fs_sc -j set midstream long | jq -e '.config.midstream == "long"'
	m0=$(fs_stat flows_midstream)
	fs_sc flush	# as a flood's eviction or a restart would
	fs_wait_for 5 flow_present 6102
	fs_sc -j flows | jq -e '[.[] | select(.dport == 6102)][0] | .midstream and .class == "long" and .mode == "long"'
	fs_sc flows | grep ':6102 ' | grep -Eq ' long midstream$'
	[ "$(fs_stat flows_midstream)" -gt "$m0" ]
	fs_sc status | grep -q 'midstream long'
	# the default: such a flow starts over under the threshold
	fs_sc set midstream short
	fs_sc flush
	fs_wait_for 5 flow_present 6102
	fs_sc -j flows | jq -e '[.[] | select(.dport == 6102)][0] | .midstream and .mode == "global"'
	fs_sc stats --prometheus | grep -Eq '^flowsplit_flows_midstream_total [1-9]'
	wait
}
