# SPDX-License-Identifier: GPL-2.0
# A throwaway client - router - server topology for splitctl tests.
#   $C (10.77.1.1, fd77:1::1) --cv/rc-- $R --rs/sv-- $S (10.77.2.1, fd77:2::1)
# The router forwards; the splitter goes on rc and/or rs. $BPF is a private
# bpffs (visible inside ip netns exec); $SC runs splitctl in the router
# namespace with that pin directory. Load after lib/common (FS_PREFIX set).

fs_router_setup() {
	local id=$$-$BATS_TEST_NUMBER
	C=$FS_PREFIX-c-$id R=$FS_PREFIX-r-$id S=$FS_PREFIX-s-$id
	fs_netns "$C" "$R" "$S"
	ip link add cv netns "$C" type veth peer rc netns "$R"
	ip link add sv netns "$S" type veth peer rs netns "$R"
	ip -n "$C" addr add 10.77.1.1/24 dev cv
	ip -n "$R" addr add 10.77.1.254/24 dev rc
	ip -n "$R" addr add 10.77.2.254/24 dev rs
	ip -n "$S" addr add 10.77.2.1/24 dev sv
	ip -n "$C" addr add fd77:1::1/64 dev cv nodad
	ip -n "$R" addr add fd77:1::fe/64 dev rc nodad
	ip -n "$R" addr add fd77:2::fe/64 dev rs nodad
	ip -n "$S" addr add fd77:2::1/64 dev sv nodad
	local ns dev
	for ns in "$C:cv" "$R:rc" "$R:rs" "$S:sv"; do
		ip -n "${ns%%:*}" link set "${ns#*:}" up
	done
	ip -n "$C" route add default via 10.77.1.254
	ip -n "$S" route add default via 10.77.2.254
	ip -n "$C" -6 route add default via fd77:1::fe
	ip -n "$S" -6 route add default via fd77:2::fe
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	# native XDP on a veth needs an XDP program on the peer to receive
	# redirected frames; for frames arriving from the stack it works as is.
	BPF=$(fs_bpffs)/fs
	SC="ip netns exec $R $SPLITCTL --pin-dir $BPF"
}

# fs_sc ARGS...: splitctl in the router namespace
fs_sc() {
	ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" "$@"
}

# fs_stat NAME: one counter from "stats -j"
fs_stat() {
	fs_sc -j stats | jq -r ".$1"
}

# fs_sink PORT FILE: TCP server in $S writing what it receives to FILE
fs_sink() {
	fs_bg ip netns exec "$S" socat -u TCP-LISTEN:"$1",reuseaddr OPEN:"$2",creat,trunc
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':$1 '"
}
