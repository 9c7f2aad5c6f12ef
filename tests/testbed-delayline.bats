#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# testbed/delayline on its own: a -- d [delayline d0 <-> d1] -- b, numbered
# UDP streams (dlprobe) through it. Order kept, delay accurate, a
# bandwidth-delay product held without a drop, counters that add up, random
# loss as configured, bursty (Gilbert-Elliott) loss with the configured
# share and mean burst length, a schedule that starts and ends loss on
# time, bad arguments refused with exit 2.
FS_PREFIX=fstl
load lib/common

DL=$FS_BUILD/delayline
PROBE=$FS_BUILD/dlprobe

setup() {
	fs_need "$DL" "$PROBE"
	D=$BATS_TEST_TMPDIR
}

# topo: namespaces A (a0 10.79.0.1) -- DN (d0, d1) -- B (b0 10.79.0.2)
topo() {
	A=fstl-a-$$-$BATS_TEST_NUMBER DN=fstl-d-$$-$BATS_TEST_NUMBER B=fstl-b-$$-$BATS_TEST_NUMBER
	fs_netns "$A" "$DN" "$B"
	local ns
	for ns in "$A" "$DN" "$B"; do	# no IPv6 chatter through the line
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	done
	ip link add a0 netns "$A" type veth peer d0 netns "$DN"
	ip link add d1 netns "$DN" type veth peer b0 netns "$B"
	ip -n "$A" link set a0 up
	ip -n "$DN" link set d0 up
	ip -n "$DN" link set d1 up
	ip -n "$B" link set b0 up
	ip -n "$A" addr add 10.79.0.1/24 dev a0
	ip -n "$B" addr add 10.79.0.2/24 dev b0
	# no ARP through the line while measuring
	ip -n "$A" neigh add 10.79.0.2 lladdr "$(ip -n "$B" -j link show b0 | jq -r '.[0].address')" dev a0
	ip -n "$B" neigh add 10.79.0.1 lladdr "$(ip -n "$A" -j link show a0 | jq -r '.[0].address')" dev b0
}

# dl_start ARGS...: the delay line in DN on the last CPU at SCHED_FIFO 30 (as the testbed runs it),
# counters in $D/dl.json; returns once it is ready (the file exists)
dl_start() {
	fs_bg ip netns exec "$DN" "$DL" --cpu $(($(nproc) - 1)) --rt-priority 30 \
		--stats "$D/dl.json" "$@" 2>"$D/dl.log"
	DLPID=$(tail -n 1 "$BATS_TEST_TMPDIR/.fs_pids")
	fs_wait_for 5 test -s "$D/dl.json"
}

# dl_stop: SIGTERM; it exits 0 and writes its final counters
dl_stop() {
	kill -TERM "$DLPID"
	local rc=0
	wait "$DLPID" || rc=$?
	cat "$D/dl.log"
	jq -c '.lines[]' "$D/dl.json"
	[ "$rc" -eq 0 ]
}

# probe COUNT PPS SIZE: numbered stream a -> b; receiver's JSON in $D/rx.json
probe() {
	rm -f "$D/ready"
	# sender and receiver at SCHED_FIFO 20 (below the line's 30): on a loaded
	# machine a preempted sender stamps datagrams long before it sends them
	ip netns exec "$B" chrt -f 20 "$PROBE" recv --port 9000 --count "$1" --idle-ms 1500 --timeout-s 60 \
		--ready "$D/ready" --out "$D/rx.json" &
	local rx=$!
	fs_wait_for 5 test -e "$D/ready"
	ip netns exec "$A" chrt -f 20 "$PROBE" send --dst 10.79.0.2 --port 9000 --count "$1" --pps "$2" --size "$3" >"$D/tx.json"
	wait "$rx" || true
	cat "$D/tx.json" "$D/rx.json"
}

@test "bad arguments: exit 2 and one line naming the value" {
	for a in "in=d0,out=d1,delay-ms=-1" "in=d0,out=d1,delay-ms=abc" "in=d0,out=d1,delay-ms=10000.5" \
		"in=d0,out=d1,delay-ms=1e3" "in=d0,out=d1" "in=d0,out=d0,delay-ms=1" \
		"in=d0,out=d1,delay-ms=1,loss-pct=101" "in=d0,out=d1,delay-ms=1,dist=pareto" \
		"in=d0,out=d1,delay-ms=1,bogus=1"; do
		run "$DL" --line "$a"
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == delayline:* ]]
	done
	# impairments: burst loss without its length, more than a chain can
	# have, a phase of a line not given or without its line
	for a in "in=d0,out=d1,delay-ms=1,burst-loss-pct=5" "in=d0,out=d1,delay-ms=1,burst-loss-pct=60,burst-len=1" \
		"in=d0,out=d1,delay-ms=1,burst-loss-pct=100,burst-len=3" "in=d0,out=d1,delay-ms=1,burst-len=0.5"; do
		run "$DL" --line "$a"
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == delayline:*burst-* ]]
	done
	for a in "line=2,loss-pct=3" "at-ms=5,loss-pct=3" "line=1,for-ms=0" "line=1,loss-pct=x" \
		"line=1,burst-loss-pct=90,burst-len=2" "line=1,extra-delay-ms=-4"; do
		run "$DL" --line in=d0,out=d1,delay-ms=1 --phase "$a"
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == "delayline: --phase"* ]]
	done
	run "$DL" --line in=d0,out=d1,delay-ms=1,burst-loss-pct=60,burst-len=1
	[[ $output == *"'60'"* || $output == *"=60 "*"accepted: burst-loss-pct <= 50 "* ]]
	for a in "--limit-bytes 5" "--cpu x" "--rt-priority 100" "--bogus" "--line"; do
		run "$DL" --line in=d0,out=d1,delay-ms=1 $a
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ]
	done
	run "$DL"
	[ "$status" -eq 2 ]
	# a runtime failure is 1: no such interface here
	run "$DL" --line in=fstl-none0,out=fstl-none1,delay-ms=1
	echo "$output"
	[ "$status" -eq 1 ] && [[ $output == *fstl-none* ]]
}

# stalled: the delay line read or sent some frame more than 5 ms late, i.e. the
# machine did not run it (here: another job's kernel work on a PREEMPT_NONE
# kernel held the CPU for up to hundreds of ms); its delays are then the
# machine's, not the line's, and the accuracy measurement is repeated
stalled() {
	jq -e '[.lines[] | .late_max_us, .rx_age_max_us] | max > 5000' "$D/dl.json" >/dev/null ||
		# ... or the prober: a sender held off between stamp and send, or
		# more than 1 % of the datagrams read > 1 ms after they arrived (the
		# read time is used for those)
		jq -e '.send_stall_max_us > 5000' "$D/tx.json" >/dev/null ||
		jq -e '.late_reads > .received / 100' "$D/rx.json" >/dev/null
}

# unstalled COUNT PPS SIZE DL_ARGS...: dl_start DL_ARGS, probe COUNT PPS
# SIZE, dl_stop, until a run in which the delay line was not stalled (3
# runs at most; three stalled runs measured the machine, not the delay
# line: the test is skipped, saying so)
unstalled() {
	local count=$1 pps=$2 size=$3 attempt
	shift 3
	for attempt in 1 2 3; do
		dl_start "$@"
		probe "$count" "$pps" "$size"
		dl_stop
		stalled || return 0
		echo "attempt $attempt: the delay line was stalled (machine load), again"
	done
	skip "the delay line was held off the CPU in 3 runs (machine overloaded)"
}

@test "delay: every datagram 20 ms later (mean within 0.5 ms), in order, counted" {
	topo
	unstalled 2000 1000 200 --line in=d0,out=d1,delay-ms=20 --line in=d1,out=d0,delay-ms=0
	jq -e '.received == 2000 and .lost == 0 and .reordered == 0 and .duplicates == 0' "$D/rx.json"
	jq -e '.owd_mean_us >= 19500 and .owd_mean_us <= 20500' "$D/rx.json"
	# never early beyond the wake-up compensation (<= 0.25 ms) plus the age
	# up to which a kernel receive stamp is trusted (0.5 ms)
	jq -e '.owd_min_us >= 19250' "$D/rx.json"
	# counters: what came in went out, nothing dropped, frames wire-sized
	jq -e '.lines[0] | .rx == 2000 and .tx == 2000 and .lost == 0 and .overflow == 0 and
		.oversize == 0 and .gso == 0 and .sock_drops == 0 and .tx_errors == 0 and .queued == 0' "$D/dl.json"
	jq -e '.lines[0].tx_bytes == 2000 * (200 + 8 + 20 + 14)' "$D/dl.json"
}

@test "jitter never reorders: 5 ms +- 4 ms uniform at 2000 datagrams/s" {
	topo
	dl_start --line in=d0,out=d1,delay-ms=5,jitter-ms=4 --line in=d1,out=d0,delay-ms=0 --seed 7
	probe 4000 2000 100
	dl_stop
	jq -e '.received == 4000 and .reordered == 0 and .duplicates == 0 and .lost == 0' "$D/rx.json"
	# the jitter is real: the spread is milliseconds, not microseconds
	jq -e '.owd_max_us - .owd_min_us > 2000' "$D/rx.json"
}

@test "holds a bandwidth-delay product (100 Mbit/s x 80 ms) without a drop; a smaller buffer overflows, counted" {
	topo
	# 8333 frames/s of 1514 bytes = 100 Mbit/s; BDP = 1.0 MB; buffer 2.5 MB
	unstalled 10000 8333 1472 --line in=d0,out=d1,delay-ms=80 --line in=d1,out=d0,delay-ms=0 \
		--limit-bytes 2500000
	jq -e '.received == 10000 and .lost == 0 and .reordered == 0' "$D/rx.json"
	jq -e '.lines[0] | .rx == 10000 and .tx == 10000 and .overflow == 0 and .sock_drops == 0' "$D/dl.json"
	# it did hold about a BDP at once (1 MB of frames + 16 B per record)
	jq -e '.lines[0].peak_bytes >= 800000' "$D/dl.json"
	cp "$D/dl.json" "$D/dl-big.json"
	# 256 kB cannot hold 80 ms of 100 Mbit/s: drops, and the counters add up
	dl_start --line in=d0,out=d1,delay-ms=80 --line in=d1,out=d0,delay-ms=0 --limit-bytes 262144
	probe 5000 8333 1472
	dl_stop
	jq -e '.lines[0] | .overflow > 0 and .rx == .tx + .overflow and .peak_bytes <= 262144' "$D/dl.json"
	[ "$(jq .received "$D/rx.json")" -eq "$(jq '.lines[0].tx' "$D/dl.json")" ]
}

@test "random loss: about the configured share, exactly the counted frames missing" {
	topo
	dl_start --line in=d0,out=d1,delay-ms=1,loss-pct=10 --line in=d1,out=d0,delay-ms=0 --seed 3
	probe 3000 3000 64
	dl_stop
	lost=$(jq '.lines[0].lost' "$D/dl.json")
	[ "$lost" -ge 200 ] && [ "$lost" -le 400 ]
	[ "$(jq .received "$D/rx.json")" -eq $((3000 - lost)) ]
	jq -e '.reordered == 0' "$D/rx.json"
}

@test "ping through both directions: RTT = sum of the two delays (+- 0.5 ms)" {
	topo
	dl_start --line in=d0,out=d1,delay-ms=7.5 --line in=d1,out=d0,delay-ms=12.5
	run ip netns exec "$A" ping -c 40 -i 0.05 10.79.0.2
	echo "$output"
	[ "$status" -eq 0 ]
	med=$(echo "$output" | fs_median_rtt)
	echo "median RTT $med ms"
	awk -v m="$med" 'BEGIN { exit !(m >= 19.5 && m <= 20.5) }'
	dl_stop
}

@test "burst loss (Gilbert-Elliott): about the configured share, in bursts of about the configured mean" {
	topo
	# 5 % in bursts of 4 frames on average: ~6000 x 0.05 / 4 = 75 bursts
	dl_start --line in=d0,out=d1,delay-ms=1,burst-loss-pct=5,burst-len=4 --line in=d1,out=d0,delay-ms=0 --seed 11
	probe 6000 3000 64
	dl_stop
	lost=$(jq '.lines[0].lost_burst' "$D/dl.json")
	bursts=$(jq '.lines[0].bursts' "$D/dl.json")
	echo "lost $lost in $bursts bursts"
	# share: 5 % of 6000 = 300; bursts make the count vary more than
	# independent loss (variance x (2 x len - 1)): 4.5 sigma is ~ +-170
	[ "$lost" -ge 130 ] && [ "$lost" -le 520 ]
	[ "$(jq '.lines[0].lost' "$D/dl.json")" -eq 0 ]
	# the receiver sees exactly those frames missing, in runs: mean run
	# length near 4 (geometric: sd 3.5 per run, ~75 runs: +-1.6 at 4 sigma;
	# adjacent bursts merge, a little above)
	jq -e --argjson n "$lost" '.received == 6000 - $n and .reordered == 0' "$D/rx.json"
	awk -v l="$(jq .lost "$D/rx.json")" -v r="$(jq .loss_runs "$D/rx.json")" \
		'BEGIN { m = l / r; print "receiver: mean run", m; exit !(m >= 2.4 && m <= 6) }'
	# and random loss of the same share has runs of about 1 frame
	dl_start --line in=d0,out=d1,delay-ms=1,loss-pct=5 --line in=d1,out=d0,delay-ms=0 --seed 11
	probe 6000 3000 64
	dl_stop
	lost=$(jq .lost "$D/rx.json")
	awk -v l="$lost" -v r="$(jq .loss_runs "$D/rx.json")" 'BEGIN { m = l / r; print "random: mean run", m; exit !(m >= 1 && m <= 1.3) }'
}

@test "schedule: loss starts and ends on the schedule's clock; SIGHUP starts it over" {
	topo
	# path down 1.5 s after the start for 2 s at 50 % loss; the counters are
	# read at times the schedule's own clock stamps (schedule_t_s), so a
	# loaded machine moves the reads, never the verdict
	dl_start --line in=d0,out=d1,delay-ms=1 --line in=d1,out=d0,delay-ms=0 --seed 5 \
		--phase line=1,at-ms=1500,for-ms=2000,loss-pct=50
	# a constant stream of 500 datagrams/s for 5.5 s, from just after a
	# restart of the schedule (SIGHUP) on
	rm -f "$D/ready"
	ip netns exec "$B" chrt -f 20 "$PROBE" recv --port 9000 --count 2750 --idle-ms 1500 --timeout-s 60 \
		--ready "$D/ready" --out "$D/rx.json" &
	local rx=$!
	fs_wait_for 5 test -e "$D/ready"
	kill -HUP "$DLPID"
	ip netns exec "$A" chrt -f 20 "$PROBE" send --dst 10.79.0.2 --port 9000 --count 2750 --pps 500 --size 64 >"$D/tx.json" &
	local tx=$! snaps=()
	for t in 0.5 2.5 4.5 5.2; do
		# SIGUSR1: a fresh write; keep it
		local w
		w=$(jq .writes "$D/dl.json")
		sleep "$(awk -v t="$t" -v p="${prev:-0}" 'BEGIN { print t - p }')"
		prev=$t
		kill -USR1 "$DLPID"
		fs_wait_for 2 sh -c "[ \"\$(jq .writes '$D/dl.json' 2>/dev/null)\" != '$w' ]"
		cp "$D/dl.json" "$D/snap-$t.json"
		snaps+=("$D/snap-$t.json")
	done
	wait "$tx"
	wait "$rx" || true
	dl_stop
	jq -e '.schedule_starts == 2' "$D/dl.json"
	# each read: before the phase (t < 1.5 s) nothing lost; inside it losses
	# grow; after it (t > 3.5 s) the count stays what it was at its end
	local final
	final=$(jq '.lines[0].lost' "$D/dl.json")
	echo "lost: $final in all"
	for f in "${snaps[@]}"; do
		jq -c '{t: .schedule_t_s, lost: .lines[0].lost, rx: .lines[0].rx, phase: .phases[0]}' "$f"
		jq -e --argjson fin "$final" '.schedule_t_s as $t | .lines[0].lost as $l |
			if $t < 1.45 then $l == 0 and (.phases[0].active | not)
			elif $t > 1.8 and $t < 3.4 then $l > 0 and .phases[0].active
			elif $t > 3.6 then $l == $fin and (.phases[0].active | not)
			else true end' "$f"
	done
	# while active the phase saw 2 s of the stream and dropped about half
	jq -e '.phases[0] | .rx >= 850 and .rx <= 1150 and .lost >= 0.38 * .rx and .lost <= 0.62 * .rx' "$D/dl.json"
	jq -e '.lines[0].lost == .phases[0].lost' "$D/dl.json"
	# the receiver: the losses lie in the phase's stretch of the stream
	# (datagram n sent at n / 500 s after the restart, give or take the
	# sender's start: 0.3 s of slack)
	jq -e '.lost_first_seq >= 0.9 * 500 and .lost_first_seq <= 2.1 * 500 and
		.lost_last_seq >= 2.9 * 500 and .lost_last_seq <= 4.1 * 500' "$D/rx.json"
	[ "$(jq .lost "$D/rx.json")" -eq "$final" ]
}

@test "schedule: a delay step for a while, then back" {
	topo
	dl_start --line in=d0,out=d1,delay-ms=5 --line in=d1,out=d0,delay-ms=0 \
		--phase line=1,at-ms=0,for-ms=3000,extra-delay-ms=20
	# during the step: RTT ~25 ms; the line reports what is in force
	run ip netns exec "$A" ping -c 10 -i 0.05 10.79.0.2
	echo "$output"
	med=$(echo "$output" | fs_median_rtt)
	awk -v m="$med" 'BEGIN { exit !(m >= 24.5 && m <= 27) }'
	kill -USR1 "$DLPID"
	fs_wait_for 2 sh -c "jq -e '.lines[0].now.delay_ms == 25' '$D/dl.json' >/dev/null"
	# after it (schedule clock > 3 s): back to 5 ms
	fs_wait_for 8 sh -c "kill -USR1 $DLPID; jq -e '.schedule_t_s > 3.1' '$D/dl.json' >/dev/null"
	run ip netns exec "$A" ping -c 10 -i 0.05 10.79.0.2
	echo "$output"
	med=$(echo "$output" | fs_median_rtt)
	awk -v m="$med" 'BEGIN { exit !(m >= 4.5 && m <= 7) }'
	dl_stop
	jq -e '.lines[0].now.delay_ms == 5 and .lines[0].delay_ms == 5 and .phases[0].extra_delay_ms == 20' "$D/dl.json"
}
