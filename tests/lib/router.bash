# SPDX-License-Identifier: GPL-2.0
# A throwaway client - router - server topology for splitctl tests.
#   $C (10.77.1.1, fd77:1::1) --cv/rc-- $R --rs/sv-- $S (10.77.2.1, fd77:2::1)
# The router forwards; the splitter goes on rc and/or rs. $BPF is a private
# bpffs (visible inside ip netns exec); $SC runs splitctl in the router
# namespace with that pin directory. Load after lib/common (FS_PREFIX set).
#
# Loading it gives a suite its setup() and teardown(): the topology and a
# private bpffs per test, $D the test's directory, everything removed
# afterwards ("route down" first, and fd 7 closed, which a test may hold
# open on a FIFO). A suite that needs more defines its own after the load.

# fs_router_setup [ID]: the topology, ID in its names (default: the test's
# PID and number)
fs_router_setup() {
	local id=${1:-$$-$BATS_TEST_NUMBER}
	C=$FS_PREFIX-c-$id R=$FS_PREFIX-r-$id S=$FS_PREFIX-s-$id
	fs_netns_add "$C" "$R" "$S"
	ip -batch - <<-EOF
	link add cv netns $C type veth peer rc netns $R
	link add sv netns $S type veth peer rs netns $R
	EOF
	fs_ip "$C" <<-EOF
	link set lo up
	addr add 10.77.1.1/24 dev cv
	addr add fd77:1::1/64 dev cv nodad
	link set cv up
	route add default via 10.77.1.254
	route add default via fd77:1::fe
	EOF
	fs_ip "$R" <<-EOF
	link set lo up
	addr add 10.77.1.254/24 dev rc
	addr add 10.77.2.254/24 dev rs
	addr add fd77:1::fe/64 dev rc nodad
	addr add fd77:2::fe/64 dev rs nodad
	link set rc up
	link set rs up
	EOF
	fs_ip "$S" <<-EOF
	link set lo up
	addr add 10.77.2.1/24 dev sv
	addr add fd77:2::1/64 dev sv nodad
	link set sv up
	route add default via 10.77.2.254
	route add default via fd77:2::fe
	EOF
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	# native XDP on a veth needs an XDP program on the peer to receive
	# redirected frames; for frames arriving from the stack it works as is.
	BPF=$(fs_bpffs "$id")/fs
	SC="ip netns exec $R $SPLITCTL --pin-dir $BPF"
}

# fs_router_setup_file: from setup_file(), the topology once for the whole
# file, for a suite whose tests leave it as they found it (each test's
# setup() should check that, and rebuild it if a failed test did not: the
# tests stay independent of their order). Its names are fixed for the file
# (FS_FILE_ID), exported (each test runs in a process of its own), so that
# a test can rebuild it under the same names: fs_router_teardown_file, then
# fs_router_setup_file. Registered in $BATS_FILE_TMPDIR; removed by
# fs_router_teardown_file from teardown_file() (which bats runs even when
# setup_file failed).
fs_router_setup_file() {
	local BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR
	export FS_FILE_ID=${FS_FILE_ID:-$$-f}
	fs_router_setup "$FS_FILE_ID"
	export C R S BPF SC
}

fs_router_teardown_file() {
	local BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR
	[ -z "${R:-}" ] || fs_sc route down >/dev/null 2>&1 || true
	fs_teardown
}

# fs_router_recheck WANT STATE_FN FIXTURE_FN: from setup(), the shared
# topology of fs_router_setup_file as the file made it: STATE_FN prints
# what it must be (WANT, taken in setup_file); if a failed test changed
# it, say what changed and rebuild it (FIXTURE_FN on a fresh topology)
fs_router_recheck() {
	local want=$1 state_fn=$2 fixture_fn=$3 now
	now=$("$state_fn")
	[ "$now" != "$want" ] || return 0
	echo "# the shared topology was changed (an earlier test failed?): rebuilt" >&3
	diff <(echo "$want") <(echo "$now") | sed 's/^/#   /' >&3
	fs_router_teardown_file
	fs_router_setup_file
	"$fixture_fn"
	[ "$("$state_fn")" = "$want" ]
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

setup() {
	fs_router_setup
	D=$BATS_TEST_TMPDIR
}

teardown() {
	exec 7>&- 2>/dev/null || true
	# the route record of "route up" (and an agent's files) live in
	# /run/flowsplit, per netns: gone before the namespace goes
	fs_sc route down >/dev/null 2>&1 || true
	fs_teardown
}

# transfer BYTES PORT: BYTES of random data from $C to $S:PORT, waited for
# until all arrived intact
transfer() {
	local bytes=$1 port=$2
	head -c "$bytes" /dev/urandom >"$D/src"
	fs_sink "$port" "$D/dst.$port"
	ip netns exec "$C" socat -u OPEN:"$D/src" TCP:10.77.2.1:"$port"
	fs_wait_for 10 cmp -s "$D/src" "$D/dst.$port"
}

# one_line CODE PATTERN: $status and $output of "run" (stdout and stderr):
# exit CODE, one line containing PATTERN
one_line() {
	echo "exit $status: $output"
	[ "$status" -eq "$1" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$2"* ]]
}

config() { # the live config, compact
	fs_sc -j status | jq -c .config
}

# tunnels: two stand-in "tunnel" devices in the router namespace, up (veth:
# this kernel has no dummy driver)
tunnels() {
	local t
	for t in ts tl; do
		ip -n "$R" link add "$t" type veth peer name "${t}p"
		ip -n "$R" link set "$t" up
		ip -n "$R" link set "${t}p" up
	done
}

# lab_routes: two lab tunnels of splitctl's over rs, and the routes over them
lab_routes() {
	fs_sc tunnel add vx1 vxlan --vni 11 --local 10.77.2.254 --remote 10.77.2.1 --dev rs
	fs_sc tunnel add vx2 vxlan --vni 12 --local 10.77.2.254 --remote 10.77.2.1 --dev rs --dstport 4790
	ip -n "$R" addr add 192.168.201.1/30 dev vx1
	ip -n "$R" addr add 192.168.202.1/30 dev vx2
	fs_sc route up --mode split --short-dev vx1 --long-dev vx2 --prefix 10.9.0.0/24 \
		--lan-dev rc --via-short 192.168.201.2 --via-long 192.168.202.2
}

# bad_conf LINE PATTERN: the config on stdin is refused by check (exit 2,
# one line) naming LINE, or with LINE "-" the file without a line (a rule
# across its keys)
bad_conf() {
	cat >"$D/bad.conf"
	run ip netns exec "$R" "$SPLITCTL" check -c "$D/bad.conf"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	if [ "$1" = - ]; then
		[[ "$output" == *"$D/bad.conf: $2"* ]]
	else
		[[ "$output" == *"$D/bad.conf:$1: $2"* ]]
	fi
}
