#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Impairments in the testbed (testbed up --impair): each reaches the delay
# line of its path and direction (static keys on the line, at/for as a
# phase of the schedule), loss and an extra delay show in pings through
# the underlay, `testbed impair` starts the schedule over and reports the
# drops, an apps run records what was asked and what was dropped, and bad
# values are refused with exit 2 and one line before anything is created.
FS_PREFIX=fsti
load lib/common
load lib/testbed

APPS=$FS_ROOT/testbed/apps

setup_file() {
	# SHORT (path 1): 20 % random loss up, a 50 % brownout down from 1 s
	# for 8 s on the schedule; LONG (path 2): bursty loss down, 10 ms more
	# delay up
	tb_up --rate-mbit 20 --delay-ms 5 --impair short:up:loss=20% \
		--impair path1:down:at=1:for=8:loss=50% \
		--impair long:down:burst-loss=10%:burst-len=3 --impair path2:up:delay=10
}

teardown_file() {
	"$TB" down --prefix "$P"
}

# line PATH N: path PATH's delay line counters, line N (1: down, 2: up), fresh
line() {
	local f=/run/$P/delayline-w$1.json w
	w=$(jq .writes "$f")
	kill -USR1 "$(cat "/run/$P/delayline-w$1.pid")"
	fs_wait_for 2 sh -c "[ \"\$(jq .writes '$f' 2>/dev/null)\" != '$w' ]"
	jq -c ".lines[$(($2 - 1))]" "$f"
}

@test "bad --impair values: exit 2, one line naming the value and what is accepted, nothing created" {
	for a in "path3:up:loss=1%" "path1:sideways:loss=1" "path1:up" "path1:up:loss=101%" \
		"short:up:burst-loss=3%" "short:up:burst-loss=60%:burst-len=1" "short:up:burst-loss=1%:burst-len=0" \
		"long:both:jitter=x" "both:down:at=5" "both:down:loss=1:for=0" "path1:up:color=red" \
		"path1:up:loss" "path1:up:delay=-3" "path1:up:loss=1:at=1e3"; do
		run "$TB" up --prefix fstibad --impair "$a"
		echo "$a -> $status: $output"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == "testbed: --impair '$a': "*accepted* ]]
	done
	run "$TB" up --prefix fstibad --delay-impl netem --impair path1:up:loss=1%
	[ "$status" -eq 2 ] && [[ $output == *delayline* ]]
	[ "$(ip netns list | grep -c '^fstibad-')" -eq 0 ]
}

@test "each impairment is on its path and direction's delay line; impair.json says what was asked" {
	# static keys on the line, the extra delay added to the path's
	line 1 2 | jq -e '.loss_pct == 20 and .burst_loss_pct == 0 and .delay_ms == 5'
	line 1 1 | jq -e '.loss_pct == 0 and .delay_ms == 5'
	line 2 1 | jq -e '.burst_loss_pct == 10 and .burst_len == 3 and .loss_pct == 0 and .delay_ms == 5'
	line 2 2 | jq -e '.delay_ms == 15 and .loss_pct == 0'
	# the brownout: a phase of path 1's down line, none elsewhere
	jq -e '.phases == [{"line": 1, "at_s": 1, "end_s": 9, "active": .phases[0].active,
		"loss_pct": 50, "rx": .phases[0].rx, "lost": .phases[0].lost}]' "/run/$P/delayline-w1.json"
	jq -e '.phases == []' "/run/$P/delayline-w2.json"
	jq -e 'length == 4 and
		(map(select(.path == 1 and .dir == "up"))[0] | .loss_pct == 20 and .at_s == null) and
		(map(select(.path == 1 and .dir == "down"))[0] | .loss_pct == 50 and .at_s == 1 and .for_s == 8) and
		(map(select(.path == 2 and .dir == "down"))[0] | .burst_loss_pct == 10 and .burst_len == 3) and
		(map(select(.path == 2 and .dir == "up"))[0] | .extra_delay_ms == 10 and .tunnel == "LONG")' \
		"/run/$P/impair.json"
}

@test "pings: SHORT's underlay loses about 20 %, LONG's RTT has the extra 10 ms" {
	# after the brownout (the schedule's clock past 9 s): path 1 loses up only
	fs_wait_for 20 sh -c "kill -USR1 \$(cat /run/$P/delayline-w1.pid); jq -e '.schedule_t_s > 9.2' /run/$P/delayline-w1.json >/dev/null"
	local before
	before=$(line 1 2 | jq .lost)
	run ip netns exec "$P-ra" ping -c 300 -i 0.01 -W 1 172.16.1.6
	echo "$output" | tail -n 2
	received=$(echo "$output" | awk '/packets transmitted/ { print $4 }')
	echo "received $received of 300"
	[ "$received" -ge 195 ] && [ "$received" -le 276 ]
	# the requests the line dropped are the pings missing (the down line
	# loses nothing after the brownout; an ARP request lost up is the
	# slack)
	lost=$(( $(line 1 2 | jq .lost) - before ))
	echo "path 1 up dropped $lost"
	[ "$lost" -ge $((300 - received - 3)) ] && [ "$lost" -le $((300 - received + 3)) ]
	# LONG: 5 + 10 ms up and 5 ms down: RTT 20 ms (not 10)
	run ip netns exec "$P-ra" ping -c 40 -i 0.05 -W 1 172.16.2.6
	echo "$output" | tail -n 2
	med=$(echo "$output" | fs_median_rtt)
	echo "path 2: median RTT $med ms"
	awk -v m="$med" 'BEGIN { exit !(m >= 19.5 && m <= 21.5) }'
}

@test "testbed impair: the schedule from its start; the brownout drops on path 1 down while it lasts" {
	local starts
	starts=$(jq .schedule_starts "/run/$P/delayline-w1.json")
	run "$TB" impair --prefix "$P"
	echo "$output"
	[ "$status" -eq 0 ]
	jq -e 'length == 4 and all(.[]; has("lost") and has("lost_burst") and has("now"))' <<<"$output"
	# the schedule started over (once), its phase's counters with it
	jq -e --argjson s "$starts" 'map(select(.path == 1))[0] | .schedule_starts == $s + 1 and .phases[0].rx == 0' <<<"$output"
	# into the brownout (1..9 s): echoes come back through path 1's down line
	sleep 1.5
	run ip netns exec "$P-ra" ping -c 100 -i 0.01 -W 1 172.16.1.6
	echo "$output" | tail -n 2
	line 1 1 >/dev/null	# a fresh write
	jq -e '.phases[0] | .rx > 0 and .lost > 0 and .lost < .rx' "/run/$P/delayline-w1.json"
}

@test "an apps run records the impairments and what each delay line dropped" {
	command -v wrk >/dev/null || skip "wrk is not installed (scripts/install-deps)"
	local d=$BATS_TEST_TMPDIR/run
	"$APPS" run --prefix "$P" --mode ecmp --app wrk --requests 40 --conns 2 --bulk-demand 0 \
		--bulk-warmup 0 --out "$d"
	jq -e '.impairments | length == 4' "$d/meta.json"
	jq -e '.impaired | length == 4 and
		(map(select(.path == 1 and .dir == "down"))[0].phases | length == 1) and
		all(.[]; (.rx | type) == "number" and .lost >= 0 and .lost_burst >= 0)' "$d/meta.json"
	# the schedule started over at the run's start
	[ -s "$d/delayline-w1-start.json" ] && [ -s "$d/delayline-w1.json" ]
}

@test "a testbed run records the impairments; its delay line losses are impaired, not dropped" {
	local d=$BATS_TEST_TMPDIR/tbrun
	"$TB" run --prefix "$P" --mode split --out "$d" --duration 3 --req-rate 5 --bg-util 0 --tap no
	jq -e '(.impairments | length == 4) and .delayline.impaired > 0 and .delayline.dropped == 0' "$d/meta.json"
}

@test "down stops the impaired delay lines and leaves nothing behind" {
	"$TB" down --prefix "$P"
	[ "$(ip netns list | grep -c "^$P-")" -eq 0 ]
	[ ! -e "/run/$P" ]
}
