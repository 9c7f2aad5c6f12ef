#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# reshort boundary as an operator runs it (defects an adversarial pass
# over the observer found, each test failing before its fix): what the
# agent's metrics say of the observers.
FS_PREFIX=fstp
load lib/common
load lib/router

# series_unique FILE: no two samples of FILE (Prometheus text) share a
# metric name and label set (promtool does not check this)
series_unique() {
	local dup
	dup=$(grep -v '^#' "$1" | sed 's/ [^ ]*$//' | sort | uniq -d)
	[ -z "$dup" ] || { echo "repeated series: $dup" >&2; return 1; }
}

# metrics: one scrape of "stats --prometheus", checked by promtool and
# for repeated series
metrics() {
	fs_sc stats --prometheus >"$D/m"
	promtool check metrics <"$D/m" >&2
	series_unique "$D/m"
	cat "$D/m"
}

@test "metrics: an interface whose observer is missing says so" {
	fs_sc attach rc --hook tc
	fs_sc attach rs --hook xdp
	metrics | grep -qx 'flowsplit_observer_attached{interface="rc"} 1'
	metrics | grep -qx 'flowsplit_observer_attached{interface="rs"} 1'
	rm "$BPF/observer_if$(ip -n "$R" -j link show rs | jq '.[0].ifindex')"
	fs_wait_for 5 eval 'metrics | grep -qx "flowsplit_observer_attached{interface=\"rs\"} 0"'
	metrics | grep -qx 'flowsplit_observer_attached{interface="rc"} 1'
	fs_sc attach rs
	metrics | grep -qx 'flowsplit_observer_attached{interface="rs"} 1'
}

# veths NAME...: interfaces of the router (veth pairs NAME / NAMEp), up
veths() {
	local v
	for v in "$@"; do
		ip -n "$R" link add "$v" type veth peer "${v}p"
		ip -n "$R" link set "$v" up
		ip -n "$R" link set "${v}p" up
	done
}

@test "removed interfaces: one line each in status and doctor, no repeated metric series, detach --gone forgets them" {
	veths x0 y0
	fs_sc attach rc --hook tc
	fs_sc attach x0 --hook xdp
	fs_sc attach y0 --hook xdp
	ix=$(ip -n "$R" -j link show x0 | jq '.[0].ifindex')
	iy=$(ip -n "$R" -j link show y0 | jq '.[0].ifindex')
	ip -n "$R" link del x0
	ip -n "$R" link del y0
	run fs_sc status
	echo "$output"
	[ "$status" -eq 0 ]
	for i in $ix $iy; do
		[ "$(grep -c "ifindex $i\b" <<<"$output")" -eq 1 ]
		grep -qx "interface: removed (ifindex $i, was hook xdp): the splitter runs nowhere there; its pins stay until 'splitctl detach --gone'" <<<"$output"
	done
	! grep -q '?' <<<"$output" || false
	# the reshort line and its warning are of the live interface only
	grep -qx 'reshort: at a message boundary: .*the default)' <<<"$output"
	! grep -q '^warning: the observer is missing' <<<"$output" || false
	run fs_sc doctor
	echo "$output"
	! grep -q '?' <<<"$output" || false
	for i in $ix $iy; do
		[ "$(grep -c "ifindex $i\b" <<<"$output")" -eq 1 ]
		grep -A1 "^FAIL  interface ifindex $i: removed (was hook xdp): the splitter runs nowhere there; its pins stay$" <<<"$output" |
			grep -qx '      fix: splitctl detach --gone (forgets removed interfaces; the others stay attached)'
	done
	metrics | grep -qx 'flowsplit_interfaces_removed 2'
	! grep -q 'interface="?"' "$D/m" || false
	[ "$(grep -c '^flowsplit_attached{' "$D/m")" -eq 1 ]
	# the fix works, and keeps the live interface and its flows' table
	fs_sc detach --gone
	fs_sc -j status | jq -e '[.interfaces[].name] == ["rc"]'
	metrics | grep -qx 'flowsplit_interfaces_removed 0'
	[ -z "$(ls "$BPF" | grep -E "_if($ix|$iy)\$")" ]
	fs_sc detach --gone	# nothing removed: nothing to do
	fs_sc -j status | jq -e '[.interfaces[].name] == ["rc"]'
}

@test "status: reshort says what happens on an interface whose observer is missing" {
	fs_sc attach rc --hook tc
	fs_sc attach rs --hook xdp
	rm "$BPF/observer_if$(ip -n "$R" -j link show rs | jq '.[0].ifindex')"
	eff=$(fs_sc -j status | jq -r .reshort.effective)
	echo "$eff"
	[[ "$eff" == "at a message boundary: "*"; but on rs (observer missing): never: a long flow stays long until idle-timeout"* ]]
	fs_sc set reshort-gap 50
	eff=$(fs_sc -j status | jq -r .reshort.effective)
	echo "$eff"
	[[ "$eff" == *"; but on rs (observer missing): after a silence over 50 ms only"* ]]
	rm "$BPF/observer_if$(ip -n "$R" -j link show rc | jq '.[0].ifindex')"
	eff=$(fs_sc -j status | jq -r .reshort.effective)
	echo "$eff"
	[[ "$eff" == "on rs, rc (observer missing): after a silence over 50 ms only"* ||
	   "$eff" == "on rc, rs (observer missing): after a silence over 50 ms only"* ]]
	! [[ "$eff" == *"message boundary"* ]] || false
	fs_sc attach rs
	fs_sc attach rc
	fs_sc -j status | jq -e '.reshort.observers_missing == 0 and (.reshort.effective | startswith("at a message boundary"))'
}
