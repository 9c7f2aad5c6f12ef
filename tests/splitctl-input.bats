#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Bad input, one matrix: each case checks the exit code (2 usage, 1 runtime),
# a one-line message naming the bad value and what is accepted, and that
# the state is unchanged (expect, lib/common.bash, compares state() with
# the $BEFORE setup() took).
#
# Every test starts from the same fixture: the router topology with the
# splitter on rc (XDP, threshold 7), built once for the file (an attach
# takes a second here, the test itself a fraction of one). A test that
# changes it on purpose puts it back in teardown(); setup() checks it is
# as built and rebuilds it otherwise (after a test that failed), so that
# no test depends on the ones before it.
FS_PREFIX=fstc
load lib/common
load lib/router

# fixture: the instance every test starts from (its topology built)
fixture() {
	fs_sc attach rc --hook xdp --threshold 7 >/dev/null
}

# fixture_state: the fixture as a test may find it, without the ids a
# rebuild changes (programs, the namespace's inode and cookie): config,
# interfaces, pins, links up, XDP on each interface, what is in the
# private bpffs, the routes
fixture_state() {
	fs_sc -j status | jq -c '{config, ifs: [.interfaces[] | {name, hook, mode}]}'
	ls "$BPF" "${BPF%/*}" | sed 's/^netns_[0-9]*_[0-9]*$/netns_INO_COOKIE/'
	ip -n "$R" -d link show | awk '/^[0-9]+:/ { sub(/@.*/, "", $2); print $2, ($3 ~ /[<,]UP[,>]/) ? "up" : "down" }
		/prog\/xdp/ { print "xdp" }'
	fs_sc route show
}

setup_file() {
	fs_router_setup_file
	fixture
	export FIXTURE_STATE
	FIXTURE_STATE=$(fixture_state)
}

teardown_file() {
	fs_router_teardown_file
}

setup() {
	D=$BATS_TEST_TMPDIR
	fs_router_recheck "$FIXTURE_STATE" fixture_state fixture
	BEFORE=$(state)
}

# what tests change on purpose, put back (setup() checks the rest): rs
# down, a foreign XDP program on rs (iproute2 loading it makes its
# directories in the first bpffs it finds: ours), pin directories beside
# the instance's (not the kernel's *.debug files of every bpffs)
teardown() {
	ip -n "$R" link set rs up || true
	ip -n "$R" link set dev rs xdpgeneric off || true
	find "${BPF%/*}" -mindepth 1 -maxdepth 1 ! -name "${BPF##*/}" ! -name '*.debug' -exec rm -rf {} +
	fs_teardown
}

# everything an error must not change: config, interfaces, pins, XDP
state() {
	fs_sc -j status | jq -c '{config, ifs: [.interfaces[] | {name, mode, prog_id}]}'
	ls "$BPF"
	ip -n "$R" -d link show rs | grep -c 'prog/xdp' || true
}

@test "unknown interface" {
	expect 1 "interface 'nosuch0' does not exist" -- fs_sc attach nosuch0
}

@test "interface name too long" {
	expect 2 "invalid interface name 'abcdefghijklmnopq'" -- fs_sc attach abcdefghijklmnopq
}

@test "attach on a down interface" {
	ip -n "$R" link set rs down
	BEFORE=$(state)
	expect 1 "interface 'rs' is down" -- fs_sc attach rs
}

@test "threshold not numeric" {
	expect 2 "threshold: invalid value 'abc': accepted: an integer 0..1000000000" -- fs_sc set threshold abc
}

@test "threshold negative" {
	expect 2 "threshold: invalid value '-5'" -- fs_sc set threshold -5
}

@test "threshold out of range" {
	expect 2 "threshold: invalid value '1000000001'" -- fs_sc set threshold 1000000001
}

@test "threshold out of range on attach leaves the other interface alone" {
	expect 2 "threshold: invalid value '99999999999'" -- fs_sc attach rs --threshold 99999999999
}

@test "dscp above 63" {
	expect 2 "dscp-long: invalid DSCP '64': accepted: an integer 0..63" -- fs_sc set dscp-long 64
}

@test "dscp negative" {
	expect 2 "dscp-short: invalid DSCP '-1'" -- fs_sc set dscp-short -1
}

@test "dscp short equal to long" {
	expect 2 "dscp-short and dscp-long would both be 1" -- fs_sc set dscp-short 1
}

@test "spill takes yes or no, as every switch" {
	expect 2 "spill: invalid value 'on': accepted: yes, no, 1, 0" -- fs_sc set spill on
}

@test "dscp-spill equal to dscp-long, or to dscp-short" {
	expect 2 "dscp-spill and dscp-long would both be 1: they must differ" -- fs_sc set dscp-spill 1
	expect 2 "dscp-spill and dscp-short would both be 0: they must differ" -- fs_sc set dscp-spill 0
	# the last pair wins the check, not only the value: short moved onto spill's
	expect 2 "dscp-spill and dscp-short would both be 2: they must differ" -- fs_sc set dscp-short 2
}

@test "dscp-spill that a tos rule could not tell from dscp-long (modulo 8)" {
	expect 2 "dscp-spill 9 and dscp-long 1 look alike to a tos rule selector (TOS & 0x1c: the same value modulo 8)" -- fs_sc set dscp-spill 9
	expect 2 "dscp-spill 2 and dscp-long 10 look alike to a tos rule selector" -- fs_sc set dscp-long 10
	# both in one call: checked together, nothing applied
	expect 2 "dscp-spill 12 and dscp-long 4 look alike" -- fs_sc set dscp-long 4 dscp-spill 12
}

@test "dscp-short that a tos rule could not tell from dscp-long (modulo 8): refused as dscp-spill's" {
	expect 2 "dscp-short 9 and dscp-long 1 look alike to a tos rule selector (TOS & 0x1c: the same value modulo 8), which would send short packets LONG: give dscp-short a code point whose value modulo 8 is not 1" -- fs_sc set dscp-short 9
	expect 2 "dscp-short 13 and dscp-long 5 look alike to a tos rule selector" -- fs_sc set dscp-short 13 dscp-long 5
}

@test "idle-timeout zero" {
	expect 2 "idle-timeout: invalid value '0'" -- fs_sc set idle-timeout 0
}

@test "idle-timeout with too many decimals" {
	expect 2 "idle-timeout: invalid value '0.0001'" -- fs_sc set idle-timeout 0.0001
}

@test "unknown setting, and a valid one in the same call is not applied" {
	expect 2 "unknown setting 'speed'" -- fs_sc set threshold 3 speed 9
}

@test "set with a missing value" {
	expect 2 "expected NAME VALUE pairs" -- fs_sc set threshold
}

@test "unknown subcommand" {
	expect 2 "unknown command 'atach'" -- fs_sc atach rs
}

@test "unknown option" {
	expect 2 "unknown option '--fast'" -- fs_sc attach rs --fast
}

@test "option without its value" {
	expect 2 "option '--mode' needs a value" -- fs_sc attach rs --mode
}

@test "bad attach mode" {
	expect 2 "--mode: invalid value 'turbo': accepted: native, generic, auto" -- fs_sc attach rs --mode turbo
}

@test "flows out of range" {
	expect 2 "--flows: invalid value '10': accepted: an integer 64..67108864" -- fs_sc attach rs --flows 10
}

@test "resizing a live flow table is refused" {
	expect 1 "--flows 4096: the pinned flow table" -- fs_sc attach rs --flows 4096
}

@test "changing the mode on upgrade is refused" {
	expect 2 "runs the splitter in native mode" -- fs_sc attach rc --mode generic
}

@test "foreign XDP program on the interface" {
	ip -n "$R" link set dev rs xdpgeneric obj "$FS_BUILD/bpf/xdp_pass.bpf.o" sec xdp
	BEFORE=$(state)
	expect 1 "interface 'rs' already runs XDP program 'xdp_pass' (id" -- fs_sc attach rs --hook xdp
}

@test "changing the hook on upgrade is refused" {
	expect 2 "interface 'rc' runs the splitter at hook xdp: an upgrade keeps the hook" -- fs_sc attach rc --hook tc
}

@test "unknown hook" {
	expect 2 "--hook: invalid value 'bpf': accepted: auto, xdp, tc" -- fs_sc attach rs --hook bpf
}

@test "an XDP mode with the TC hook" {
	expect 2 "--mode is an XDP attach mode: it cannot be combined with --hook tc" -- fs_sc attach rs --hook tc --mode native
}

@test "detach an interface that does not run the splitter" {
	expect 1 "the splitter is not attached to 'rs'" -- fs_sc detach rs
}

@test "detach when nothing is attached" {
	expect 1 "nothing attached" -- ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-other" detach --all
}

@test "missing privileges" {
	expect 1 "permission denied" -- ip netns exec "$R" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$SPLITCTL" --pin-dir "$BPF" set threshold 3
}

@test "pin directory not on bpffs" {
	mkdir -p "/run/$FS_PREFIX-$$-tmpfs"
	expect 1 "no bpffs at '/run/$FS_PREFIX-$$-tmpfs'" -- ip netns exec "$R" "$SPLITCTL" --pin-dir "/run/$FS_PREFIX-$$-tmpfs/fs" attach rs
	rmdir "/run/$FS_PREFIX-$$-tmpfs"
}

@test "stats --watch with a bad interval" {
	expect 2 "--watch: invalid interval '0'" -- fs_sc stats --watch 0
}

@test "flows --sort with a bad key" {
	expect 2 "--sort: invalid value 'size'" -- fs_sc flows --sort size
}

@test "set enabled with a bad value" {
	expect 2 "enabled: invalid value 'maybe': accepted: yes, no, 1, 0" -- fs_sc set enabled maybe
}

@test "set ack-short with a bad value" {
	expect 2 "ack-short: invalid value 'on': accepted: yes, no, 1, 0" -- fs_sc set ack-short on
}

@test "set midstream with a bad value" {
	expect 2 "midstream: invalid value 'yes': accepted: short, long" -- fs_sc set midstream yes
}

@test "status with an unexpected argument" {
	expect 2 "unexpected argument 'rc'" -- fs_sc status rc
}

@test "a pinned map with another layout is refused, never recreated" {
	other=$BPF-old
	mkdir "$other"
	bpftool map create "$other/fs_config" type array key 4 value 8 entries 1 name fs_config
	id=$(bpftool -j map show pinned "$other/fs_config" | jq .id)
	expect 1 "pinned map '$other/fs_config' has another layout (array, key 4 B, value 8 B, 1 entries) than this splitter needs (array, key 4 B, value 56 B" -- ip netns exec "$R" "$SPLITCTL" --pin-dir "$other" attach rs
	# the old map is still the pinned one, and nothing else was pinned
	[ "$(bpftool -j map show pinned "$other/fs_config" | jq .id)" -eq "$id" ]
	[ "$(ls "$other")" = fs_config ]
}

@test "detach with an interface name the kernel cannot have" {
	expect 2 "invalid interface name 'r:0'" -- fs_sc detach r:0
}

@test "route up refuses a device name the kernel cannot have, as attach does, in the same words" {
	local acc="accepted: 1..15 characters, not '.' or '..', no '/', ':' or white space"
	expect 2 "attach: invalid interface name 'a:b': $acc" -- fs_sc attach a:b
	expect 2 "route up: --short-dev: invalid interface name 'a:b': $acc" -- \
		fs_sc route up --mode split --short-dev a:b --long-dev tl --prefix 10.99.0.0/24
	expect 2 "route up: --lan-dev: invalid interface name 'eth0:1': $acc" -- \
		fs_sc route up --mode split --short-dev ts --long-dev tl --prefix 10.99.0.0/24 --lan-dev rc,eth0:1
	printf '[splitter]\ninterfaces = rc\n[route]\nmode = split\nshort-dev = ts\nlong-dev = ..\nprefix = 10.99.0.0/24\n' \
		>"$BATS_TEST_TMPDIR/route.conf"
	expect 2 "route.conf:6: long-dev: invalid interface name '..': $acc" -- \
		fs_sc check --offline -c "$BATS_TEST_TMPDIR/route.conf"
}

@test "health yes/no takes 1 and 0, as every other switch (set enabled 1) does" {
	# the value is accepted: the error names the next option, not --health
	expect 2 "run: --health-interval: invalid value '0ms'" -- fs_sc run --health 1 --health-interval 0ms
	expect 2 "run: --health: invalid value 'on': accepted: yes, no, 1, 0" -- fs_sc run --health on
	printf '[splitter]\ninterfaces = rc\n[health]\nenabled = 0\nadaptive-timeout = 1\n' >"$BATS_TEST_TMPDIR/health.conf"
	run fs_sc check --offline -c "$BATS_TEST_TMPDIR/health.conf"
	echo "exit $status: $output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"health.conf: valid (offline: the file alone)" ]]
}

@test "pin directory whose parent does not exist" {
	expect 1 "its parent '$BPF-none' does not exist" -- ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-none/fs" attach rs
}

@test "detach --all on an empty pin directory" {
	mkdir "$BPF-empty"
	expect 1 "nothing attached: no flowsplit pins in '$BPF-empty'" -- ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF-empty" detach --all
	[ -d "$BPF-empty" ]	# the operator's directory stays
}

@test "a failed attach on a second interface changes no setting" {
	# lo has no native XDP: the attach fails after loading; the shared
	# config must keep threshold 7
	expect 1 "interface 'lo': cannot attach in native mode" -- fs_sc attach lo --mode native --threshold 9
}
