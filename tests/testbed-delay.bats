#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# WAN propagation delay in the testbed: `testbed up --delay-ms 20` gives a
# 40 ms RTT on both paths; under 40 % background an idle flow's one-way delay
# measured by fct-tap is the configured delay; nothing is reordered; the
# bottleneck's throughput is the same with the delay line as without it; bad
# knobs are refused; down leaves no delay line behind.
FS_PREFIX=fstw
load lib/common
load lib/testbed

setup_file() {
	tb_up --delay-ms 20
}

teardown_file() {
	"$TB" down --prefix "$P"
	[ -z "${P0:-}" ] || "$TB" down --prefix "$P0"
}

# stalled RUN: a delay line read or sent some frame more than 5 ms late during RUN,
# i.e. the machine did not run it (other jobs' kernel work on a PREEMPT_NONE
# kernel holds a CPU for up to hundreds of ms): the run measured the
# machine, and is repeated
stalled() {
	jq -e '[.[1] | .w1, .w2 | .lines[] | .late_max_us, .rx_age_max_us] | max > 5000' -s "$1/delayline.json" >/dev/null
}

@test "bad knobs: negative, non-numeric or > 10 s delays, bad queue-ms or burst: exit 2, one line, nothing created" {
	for a in "--delay-ms -1" "--delay-ms abc" "--delay-ms 10000.5" "--delay-ms 1e3" "--delay-ms 20ms" \
		"--delay-short-ms -5" "--delay-long-ms x" "--delay-long-ms 20001" "--queue-ms 0" \
		"--queue-ms -3" "--queue-ms q" "--delay-impl tc" "--delay-ms" "--burst 1599" "--burst 15k" \
		"--burst -1" "--burst 1234567890"; do
		run "$TB" up --prefix fstwbad $a
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == testbed:* ]]
	done
	! ip netns list | grep -q '^fstwbad-' || false
}

@test "ping RTT through each path is 2 x 20 ms (median within 0.5 ms), delay lines forward without a drop" {
	for n in 1 2; do
		# underlay: rA -> path n (HTB, 20 ms) -> rB and back (HTB, 20 ms)
		run ip netns exec "$P-ra" ping -c 40 -i 0.05 172.16.$n.6
		echo "$output" | tail -n 3
		[ "$status" -eq 0 ]
		med=$(echo "$output" | fs_median_rtt)
		echo "path $n: median RTT $med ms"
		awk -v m="$med" 'BEGIN { exit !(m >= 39.5 && m <= 40.5) }'
	done
	for n in 1 2; do
		jq -c '.lines[]' "/run/$P/delayline-w$n.json"
		jq -e '[.lines[] | .overflow + .oversize + .gso + .sock_drops + .tx_errors] | add == 0' \
			"/run/$P/delayline-w$n.json"
	done
}

@test "40 % background: fct-tap's one-way delay of an idle flow is 20 ms (mean +- 0.5, p99 <= +2 ms), nothing reordered" {
	# identical 5-packet requests only (no bulk flow fills a queue), 2/s, and a
	# numbered UDP probe at 200/s through each tunnel (TOS 0 -> SHORT, 0x04 -> LONG)
	printf '7240 0\n7240 1\n' >"$BATS_FILE_TMPDIR/small.cdf"
	for attempt in 1 2 3; do
		out=$BATS_FILE_TMPDIR/owd-$attempt
		"$TB" run --prefix "$P" --mode split --duration 10 --bg-util 0.4 --req-rate 2 \
			--mix "$BATS_FILE_TMPDIR/small.cdf" --probe-pps 200 --out "$out"
		# a stalled delay line or a tap that dropped packets measured the
		# machine's load, not the path: once more
		stalled "$out" || jq -e '.tap_port_drops != 0' "$out/meta.json" >/dev/null || { clean=1; break; }
		echo "attempt $attempt: a delay line was stalled or the tap dropped packets (machine load), again"
	done
	# three such runs measured the machine, not the path: say so
	[ "${clean:-0}" -eq 1 ] || skip "a delay line stalled or the tap dropped packets in 3 runs (machine overloaded)"
	jq -c . "$out/meta.json"
	jq -e '.delay_impl == "delayline" and .delay_short_ms == 20 and .delay_long_ms == 20 and
		.rtt_ms == 40 and .delays == "20/20" and .flowgen_exit == 0 and .tap_port_drops == 0' "$out/meta.json"
	jq -e '.delayline.dropped == 0 and .delayline.forwarded > 10000' "$out/meta.json"
	head -n 1 "$out/tap/flows.csv"
	for port in 9001 9002; do
		row=$(awk -F, -v p=$port '$4 == p && $5 == 17' "$out/tap/flows.csv")
		echo "$row"
		[ -n "$row" ]
		# owd_mean_us = column 17, owd_p99_us = column 19, lost = column 12
		echo "$row" | awk -F, '{ exit !($17 >= 19500 && $17 <= 20500 && $19 <= 22000 && $12 == 0) }'
	done
	# reordering, end to end: the probes' sequence numbers
	for k in short long; do
		cat "$out/probe-$k.json"
		jq -e '.received == 2000 and .reordered == 0 and .duplicates == 0 and .lost == 0' "$out/probe-$k.json"
	done
}

# iperf3_mbit NS_CLIENT NS_SERVER ADDR: TCP cubic for 6 s after 2 s of ramp-up
# (omitted), the sender's mean rate over the measured seconds, Mbit/s
iperf3_mbit() {
	local j=$BATS_TEST_TMPDIR/iperf-$1.json
	ip netns exec "$2" timeout 40 iperf3 -s -1 -B "$3" -p 5301 >"$BATS_TEST_TMPDIR/iperf-s.log" 2>&1 3>&- &
	echo $! >>"$BATS_TEST_TMPDIR/.fs_pids"
	fs_wait_for 5 sh -c "ip netns exec $2 ss -tln | grep -q ':5301 '"
	ip netns exec "$1" timeout 40 iperf3 -c "$3" -p 5301 -t 6 -O 2 -C cubic -J >"$j"
	jq '[.intervals[].sum | select(.omitted | not) | .bits_per_second] | add / length / 1e6' "$j"
}

@test "bottleneck throughput with the delay line is within 5 % of without" {
	export P0=fstw$((($$ + 1) % 10000))
	"$TB" down --prefix "$P0"
	"$TB" up --prefix "$P0" --xdp none
	for attempt in 1 2 3; do
		with=$(iperf3_mbit "$P-ra" "$P-rb" 172.16.1.6)
		without=$(iperf3_mbit "$P0-ra" "$P0-rb" 172.16.1.6)
		echo "path 1, TCP cubic: $with Mbit/s with 20 ms each way, $without Mbit/s without"
		# compared with each other, never with an absolute figure
		awk -v a="$with" -v b="$without" 'BEGIN { exit !(a >= 0.95 * b && b > 0) }' && break
	done
	awk -v a="$with" -v b="$without" 'BEGIN { exit !(a >= 0.95 * b && b > 0) }'
	"$TB" down --prefix "$P0"
}

@test "down stops the delay lines and leaves nothing behind" {
	pids=$(cat /run/$P/delayline-w1.pid /run/$P/delayline-w2.pid)
	for p in $pids; do kill -0 "$p"; done
	"$TB" down --prefix "$P"
	for p in $pids; do ! kill -0 "$p" 2>/dev/null || false; done
	! ip netns list | grep -q "^$P-" || false
	[ ! -e "/run/$P" ]
	! pgrep -f "$P-" >/dev/null || false
}
