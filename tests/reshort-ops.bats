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

# observer_doctor IF: doctor's line of IF's observer
observer_doctor() {
	fs_sc doctor | grep "^[a-zA-Z]* *observer $1: "
}

@test "status and doctor: reshort says what happens on an interface whose observer is missing" {
	fs_sc attach rc --hook tc
	fs_sc attach rs --hook xdp
	rm "$BPF/observer_if$(ip -n "$R" -j link show rs | jq '.[0].ifindex')"
	eff=$(fs_sc -j status | jq -r .reshort.effective)
	echo "$eff"
	[[ "$eff" == "at a message boundary: "*"; but on rs (observer missing): never: a long flow stays long until idle-timeout"* ]]
	observer_doctor rs | grep -qx "FAIL  observer rs: missing at tcx egress: flows entering here see no message boundary; they re-short never: a long flow stays long until idle-timeout (no ACKs seen, reshort-gap 0)"
	observer_doctor rc | grep -q "^ok    observer rc: tcx egress"
	fs_sc set reshort-gap 50
	eff=$(fs_sc -j status | jq -r .reshort.effective)
	echo "$eff"
	[[ "$eff" == *"; but on rs (observer missing): after a silence over 50 ms only"* ]]
	# doctor says what status says: a silence re-shorts there, nothing else
	observer_doctor rs | grep -q "^FAIL  observer rs: missing at tcx egress: flows entering here see no message boundary; they re-short after a silence over 50 ms only (no ACKs seen, reshort-gap 50"
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

# alone IF: no program but ours at TC ingress of IF (doctor counts them:
# bpftool net does not list TCX links), and the same XDP program
alone() {
	fs_sc doctor | grep -qx "ok    foreign programs $1: none besides the splitter" &&
	[ "$(ip -n "$R" -d link show "$1" | grep -o 'prog/xdp id [0-9]*')" = "${2:-}" ]
}

@test "attach refuses an interface that runs another instance's splitter, at either hook" {
	fs_sc attach rc --hook tc
	fs_sc attach rs --hook xdp
	prc=$(fs_sc -j status | jq '.interfaces[] | select(.name == "rc") | .prog_id')
	prs=$(fs_sc -j status | jq '.interfaces[] | select(.name == "rs") | .prog_id')
	alone rc
	alone rs "prog/xdp id $prs"
	for hook in tc xdp; do
		run ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-2" attach rc --hook $hook
		echo "$output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"interface 'rc' runs the splitter of another flowsplit instance (program id $prc at TC ingress), not this one ('$BPF-2')"* ]]
	done
	# TC next to the other instance's XDP
	run ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-2" attach rs --hook tc
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"interface 'rs' runs the splitter of another flowsplit instance (program id $prs at XDP), not this one ('$BPF-2')"* ]]
	# check foresees it (apply would refuse it half-way)
	printf '[splitter]\ninterfaces = rc\nhook = tc\n' >"$D/other.conf"
	run ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-2" check -c "$D/other.conf"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"interfaces: interface 'rc' runs the splitter of another flowsplit instance (program id $prc at TC ingress)"* ]]
	# nothing changed, nothing left in the other pin directory
	alone rc
	alone rs "prog/xdp id $prs"
	[ ! -e "$BPF-2" ]
	# the instance's own file checks clean
	fs_sc check -c "$D/other.conf"
	# this instance's own upgrade in place is no other instance
	fs_sc attach rc
	fs_sc attach rs
	[ "$(fs_sc -j status | jq '[.interfaces[].prog_id] | length')" -eq 2 ]
}
