#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# splitctl touches only what it made: tunnels by their owner tag, instances
# of its own network namespace, "down" (routes, rules, its tunnels, the
# datapath, nothing else), bpffs mounted only where it lasts, make install
# and uninstall.
FS_PREFIX=fsto
load lib/common
load lib/router

# links NS: the interface names of a namespace, sorted
links() {
	ip -n "$1" -j link show | jq -r '.[].ifname' | sort
}

# sc_in NS ARGS...: splitctl in namespace NS with the router's instance
sc_in() {
	local ns=$1
	shift
	ip netns exec "$ns" "$SPLITCTL" --pin-dir "$BPF" "$@"
}

# ours NS: what "down" must remove: our rules and routes (protocol 245),
# our tunnels, the splitter
ours() {
	ip -n "$1" rule show | grep -c 'proto 245' || true
	ip -n "$1" -6 rule show | grep -c 'proto 245' || true
	ip -n "$1" route show table all proto 245 | wc -l
	ip -n "$1" -6 route show table all proto 245 | wc -l
	ip -n "$1" -d link show | grep -c 'flowsplit: created by splitctl' || true
	ip -n "$1" -d link show | grep -c 'prog/xdp' || true
}

# sc_hostmnt ARGS...: splitctl in the router's network namespace but the
# host's mount namespace (nsenter --net, unlike ip netns exec)
sc_hostmnt() {
	nsenter --net="/run/netns/$R" "$SPLITCTL" "$@"
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
	echo "$output" | grep -v '^{"level"' | jq -e --arg n "net:[$ino_r] ('$R')" \
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
	echo "$output" | grep -v '^{"level"' | jq -e --arg d "$BPF" '.pin_dir == $d and .attached == false and (.error | startswith("nothing attached"))'
}

@test "down removes routes, rules, its tunnels and the datapath, nothing else; again: nothing to do" {
	fs_sc attach rc --hook xdp
	lab_routes
	# the operator's own objects, which must stay
	ip -n "$R" link add vxf type vxlan id 13 dstport 4791 local 10.77.1.254
	ip -n "$R" rule add priority 900 lookup 200
	ip -n "$R" route add 10.8.0.0/24 dev rs table 200
	[ "$(ours "$R" | tr '\n' ' ')" = "2 2 2 0 2 1 " ]
	others=$(ip -n "$R" rule show | grep -v 'proto 245'; ip -n "$R" route show table 200; links "$R" | grep -v '^vx[12]$')
	run fs_sc down
	echo "$output"
	[ "$status" -eq 0 ]
	fs_lines_are "removed: 4 policy rules and 2 routes of route up" \
		"removed: tunnel vx1, vx2" \
		"detached: rc" \
		"removed: the pins of instance $BPF"
	[ "$(ours "$R" | tr '\n' ' ')" = "0 0 0 0 0 0 " ]
	[ ! -e "$BPF" ]
	[ "$(ip -n "$R" rule show | grep -v 'proto 245'; ip -n "$R" route show table 200; links "$R")" = "$others" ]
	run fs_sc down
	[ "$status" -eq 0 ]
	[ "$output" = "nothing to do: no splitter, routes or tunnels of splitctl in this network namespace" ]
	fs_sc -j down | jq -e '.changed == false and .rules_removed == 0 and .tunnels_removed == [] and .detached == []'
}

@test "down -j says what it removed; refuses another namespace's instance before any change" {
	fs_sc attach rc --hook xdp
	lab_routes
	before=$(ours "$R")
	run ip netns exec "$C" "$SPLITCTL" --pin-dir "$BPF" down
	[ "$status" -eq 1 ]
	[[ "$output" == "splitctl: instance '$BPF' was attached in network namespace"*"refusing to touch it"* ]]
	[ "$(ours "$R")" = "$before" ]
	run fs_sc -j down
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.changed and .rules_removed == 4 and .routes_removed == 2 and .tunnels_removed == ["vx1", "vx2"] and .detached == ["rc"] and .pins_removed'
}

@test "bpffs: attach mounts one on an empty directory, as bpftool does; refuses where it would vanish or hide files" {
	base=/run/$FS_PREFIX-$$-$BATS_TEST_NUMBER-m
	mkdir -p "$base/mnt" "$base/empty" "$base/full" "$base/fail"
	touch "$base/full/keep"
	echo "$base/mnt" >>"$BATS_TEST_TMPDIR/.fs_mounts"
	echo "$base/fail" >>"$BATS_TEST_TMPDIR/.fs_mounts"
	run sc_hostmnt -P "$base/mnt/fs" attach rc
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"splitctl: mounted a bpffs at $base/mnt for pin directory $base/mnt/fs"* ]]
	[ "$(stat -f -c %T "$base/mnt")" = bpf_fs ]
	ip netns exec "$R" "$SPLITCTL" -P "$base/mnt/fs" -j status | jq -e '.interfaces[0].name == "rc"'
	ip netns exec "$R" "$SPLITCTL" -P "$base/mnt/fs" detach --all
	# a failed first attach leaves nothing mounted
	run sc_hostmnt -P "$base/fail/fs" attach lo --mode native
	[ "$status" -eq 1 ]
	! mountpoint -q "$base/fail" || false
	# under ip netns exec the mount would die with the command
	run ip netns exec "$R" "$SPLITCTL" -P "$base/empty/fs" attach rc
	[ "$status" -eq 1 ]
	[ "$output" = "splitctl: no bpffs at '$base/empty' (for pin directory '$base/empty/fs') in this mount namespace (as under 'ip netns exec'): one mounted here would vanish with this command, and the datapath with it: mount one in the host's, e.g. 'mkdir -p /run/flowsplit/bpf && mount -t bpf bpf /run/flowsplit/bpf', and use --pin-dir /run/flowsplit/bpf/NAME" ]
	run env -u FLOWSPLIT_PIN_DIR ip netns exec "$R" "$SPLITCTL" attach rc
	[ "$status" -eq 1 ]
	[[ "$output" == "splitctl: no bpffs at '/sys/fs/bpf' (for pin directory '/sys/fs/bpf/flowsplit') in this mount namespace (as under 'ip netns exec')"* ]]
	# never over a directory with files (e.g. -P /tmp/x)
	run sc_hostmnt -P "$base/full/fs" attach rc
	[ "$status" -eq 1 ]
	[[ "$output" == "splitctl: no bpffs at '$base/full' (for pin directory '$base/full/fs'), and it is not empty: a bpffs there would hide its files"* ]]
	! mountpoint -q "$base/full" || false
	! mountpoint -q "$base/empty" || false
	[ -e "$base/full/keep" ]
	# read commands without a bpffs say where attach would mount one
	run ip netns exec "$R" "$SPLITCTL" -P "$base/full/fs" status
	[ "$status" -eq 1 ]
	[[ "$output" == "splitctl: no bpffs at '$base/full' (for pin directory '$base/full/fs'): 'splitctl attach' mounts one there when it is an empty directory" ]]
	! ip -n "$R" -d link show rc | grep -q prog/ || false
	rm -rf "$base/full" "$base/empty"
}

@test "tunnel add --address: IPv4 and IPv6 on the new tunnel, shown by tunnel show; a failed address removes the tunnel" {
	fs_sc tunnel add vx1 vxlan --vni 11 --local 10.77.2.254 --remote 10.77.2.1 --dev rs \
		--address 192.168.201.1/30 --address fd10:1::1/64
	ip -n "$R" -j addr show dev vx1 | jq -e '[.[0].addr_info[] | select(.scope == "global") | "\(.local)/\(.prefixlen)"] | sort == ["192.168.201.1/30", "fd10:1::1/64"]'
	ip -n "$R" -6 -j addr show dev vx1 | jq -e '[.[0].addr_info[] | select(.local == "fd10:1::1") | .tentative] == [null]'
	fs_sc -j tunnel show | jq -e '.[0].addresses == ["192.168.201.1/30", "fd10:1::1/64"]'
	fs_sc tunnel show | grep -qx 'vx1 vxlan vni 11 local 10.77.2.254 remote 10.77.2.1 dev rs dstport 4789 mtu 1450 address 192.168.201.1/30 address fd10:1::1/64 up'
	before=$(links "$R")
	run fs_sc tunnel add vx2 vxlan --vni 12 --local 10.77.2.254 --remote 10.77.2.1 --dev rs --address 192.168.202.1
	[ "$status" -eq 2 ]
	[ "$output" = "splitctl tunnel add: --address: invalid value '192.168.202.1': accepted: ADDR/LEN, IPv4 or IPv6" ]
	run fs_sc tunnel add vx2 vxlan --vni 12 --local 10.77.2.254 --remote 10.77.2.1 --dev rs --address 10.0.0.1/30 --address 10.0.0.5/30
	[ "$status" -eq 2 ]
	[ "$output" = "splitctl tunnel add: --address: '10.0.0.5/30': one address per family" ]
	# the kernel refuses the address (IPv6 off on new devices): no tunnel left
	ip netns exec "$R" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	run fs_sc tunnel add vx2 vxlan --vni 12 --local 10.77.2.254 --remote 10.77.2.1 --dev rs --dstport 4790 --address fd10:2::1/64
	[ "$status" -eq 1 ]
	[[ "$output" == "splitctl: tunnel add: cannot add address fd10:2::1/64 to 'vx2': "* ]]
	[ "$(links "$R")" = "$before" ]
}

@test "make install PREFIX=/usr writes that prefix into the unit; make uninstall removes what install wrote" {
	dest=$BATS_TEST_TMPDIR/root
	make -C "$FS_ROOT" -s install DESTDIR="$dest" PREFIX=/usr BUILD="$FS_BUILD" >/dev/null
	grep -qx 'ExecStart=/usr/sbin/splitctl run -c /etc/flowsplit/flowsplit.conf' "$dest/etc/systemd/system/flowsplit.service"
	! grep -q /usr/local "$dest/etc/systemd/system/flowsplit.service" || false
	[ -x "$dest/usr/sbin/splitctl" ]
	[ -f "$dest/usr/share/man/man8/splitctl.8" ]
	[ -f "$dest/usr/share/bash-completion/completions/splitctl" ]
	# the operator's config stays; everything install wrote goes
	echo '# mine' >"$dest/etc/flowsplit/flowsplit.conf"
	make -C "$FS_ROOT" -s uninstall DESTDIR="$dest" PREFIX=/usr BUILD="$FS_BUILD" >/dev/null
	[ "$(cd "$dest" && find . -type f)" = "./etc/flowsplit/flowsplit.conf" ]
	make -C "$FS_ROOT" -s install DESTDIR="$dest" BUILD="$FS_BUILD" >/dev/null
	grep -qx 'ExecStart=/usr/local/sbin/splitctl run -c /etc/flowsplit/flowsplit.conf' "$dest/etc/systemd/system/flowsplit.service"
}
