#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# fct-tap bad input: one clear line on stderr, non-zero exit, no output dir.
FS_PREFIX=fstt
load lib/common
bats_require_minimum_version 1.5.0

TAP=$FS_BUILD/fct-tap
MKPCAP=$FS_BUILD/tap-mkpcap
EAL=(--no-huge -m 256 --no-pci --in-memory -l 0 --log-level=error)

setup() {
	[ -x "$TAP" ] && [ -x "$MKPCAP" ] || skip "build/fct-tap not built"
	D=$BATS_TEST_TMPDIR
	"$MKPCAP" "$D/a.pcap" "$D/b.pcap" <"$FS_ROOT/tests/tap/fixtures/single.spec"
	PCAPS=(--vdev=net_pcap0,rx_pcap="$D/a.pcap" --vdev=net_pcap1,rx_pcap="$D/b.pcap")
}

teardown() {
	fs_teardown
}

# fails STATUS PATTERN CMD...: exit status and a stderr line matching PATTERN
fails() {
	local want=$1 pat=$2; shift 2
	run --separate-stderr "$@"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq "$want" ]
	grep -q -- "$pat" <<<"$stderr"
	[ ! -e "$D/out" ]
}

@test "tap-errors: missing pcap file named" {
	fails 1 "cannot read pcap file '$D/nope.pcap'" "$TAP" "${EAL[@]}" \
		--vdev=net_pcap0,rx_pcap="$D/nope.pcap" "${PCAPS[1]}" -- \
		--port-a 0 --port-b 1 --out "$D/out"
}

@test "tap-errors: unreadable (not a pcap) file" {
	echo garbage >"$D/bad.pcap"
	fails 1 "is not a pcap file" "$TAP" "${EAL[@]}" \
		--vdev=net_pcap0,rx_pcap="$D/bad.pcap" "${PCAPS[1]}" -- \
		--port-a 0 --port-b 1 --out "$D/out"
}

@test "tap-errors: a link type it does not parse (raw IP) is refused by name" {
	"$MKPCAP" --raw "$D/ra.pcap" "$D/rb.pcap" <"$FS_ROOT/tests/tap/fixtures/single.spec"
	fails 2 "'$D/ra.pcap' has link type RAW (Raw IP): accepted EN10MB (Ethernet) only" \
		"$TAP" "${EAL[@]}" --vdev=net_pcap0,rx_pcap="$D/ra.pcap" \
		--vdev=net_pcap1,rx_pcap="$D/rb.pcap" -- --port-a 0 --port-b 1 --out "$D/out"
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
}

@test "tap-errors: a truncated pcap file header names the file and the problem" {
	head -c 10 "$D/a.pcap" >"$D/short.pcap"
	fails 1 "'$D/short.pcap' is not a pcap file: truncated dump file" \
		"$TAP" "${EAL[@]}" --vdev=net_pcap0,rx_pcap="$D/short.pcap" \
		"${PCAPS[1]}" -- --port-a 0 --port-b 1 --out "$D/out"
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
}

@test "tap-errors: unknown PMD" {
	fails 1 "unknown PMD" "$TAP" "${EAL[@]}" --vdev=net_nosuchpmd0 "${PCAPS[1]}" -- \
		--port-a 0 --port-b 1 --out "$D/out"
}

@test "tap-errors: same port for A and B" {
	fails 2 "port-a and --port-b are both 0" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 0 --out "$D/out"
}

@test "tap-errors: no ports at all" {
	fails 2 "no DPDK ports" "$TAP" "${EAL[@]}" -- --port-a 0 --port-b 1 --out "$D/out"
}

@test "tap-errors: a port that does not exist" {
	fails 2 "port 5 does not exist: 2 ports available" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 5 --out "$D/out"
}

@test "tap-errors: missing --port-b, bad numbers, idle below loss timeout" {
	fails 2 "are required" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- --port-a 0 --out "$D/out"
	fails 2 "^fct-tap: --flows: invalid value '12x': accepted: an integer 16.." "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 1 --flows 12x --out "$D/out"
	fails 2 "^fct-tap: --dscp-long: invalid DSCP '64': accepted: an integer 0..63$" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 1 --dscp-long 64 --out "$D/out"
	fails 2 "idle-timeout-ms 10 is below --loss-timeout-ms 1000" "$TAP" "${EAL[@]}" \
		"${PCAPS[@]}" -- --port-a 0 --port-b 1 --idle-timeout-ms 10 --out "$D/out"
}

@test "tap-errors: --help exits 0 and names the options" {
	run "$TAP" --help
	[ "$status" -eq 0 ]
	[[ $output == *"--port-a N"* && $output == *"--idle-timeout-ms"* ]]
}

@test "tap-errors: --rt-priority out of range (usage), refused without CAP_SYS_NICE (runtime)" {
	fails 2 "^fct-tap: --rt-priority: invalid value '0': accepted: an integer 1..99$" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 1 --rt-priority 0 --out "$D/out"
	fails 2 "^fct-tap: --rt-priority: invalid value '100': accepted: an integer 1..99$" "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- \
		--port-a 0 --port-b 1 --rt-priority 100 --out "$D/out"
	command -v setpriv >/dev/null || skip "setpriv not installed"
	[ "$(ulimit -r)" = 0 ] || skip "RLIMIT_RTPRIO is not 0: SCHED_FIFO allowed without CAP_SYS_NICE"
	fails 1 "rt-priority 10: SCHED_FIFO refused: Operation not permitted" \
		setpriv --bounding-set -sys_nice --inh-caps -sys_nice "$TAP" "${EAL[@]}" \
		"${PCAPS[@]}" -- --port-a 0 --port-b 1 --rt-priority 10 --out "$D/out"
}

@test "tap-errors: --rt-priority accepted as root: recorded in summary.json" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for SCHED_FIFO"
	run "$TAP" "${EAL[@]}" "${PCAPS[@]}" -- --port-a 0 --port-b 1 --rt-priority 10 --out "$D/out"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"polling on lcore 0 at SCHED_FIFO priority 10"* ]]
	[ "$(jq -r .rt_priority "$D/out/summary.json")" -eq 10 ]
}
