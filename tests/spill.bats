#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Spill in "splitctl run" (docs/design.md, *Spill*), on tests/lib/wan.bash:
# router A's egress onto each underlay is the "WAN", a TBF at WAN_MBIT with
# a 100 ms FIFO (no netem here), offloads off so that queues count wire
# packets. The splitter runs on both routers, the agent on A (spill A -> B:
# client -> server uploads). Bulk is iperf3 (cubic) from the client.
FS_PREFIX=fsts
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan
load lib/spill

# the health settings' bound on detection: interval x down-misses + timeout
DETECT_BOUND_MS=400

# The WAN here has no delay line: SHORT's least RTT is well under a
# millisecond, and one 20 Mbit/s frame (0.6 ms) is more than the default
# frame share (10 %) of it, so nothing would be granted. The cases on the
# controller's mechanics set the share to 0; SPILL_DEFAULT_SHARE=1 keeps
# the default.
spill_setup() {
	local share=(--spill-frame-share 0)

	[ -z "${SPILL_DEFAULT_SHARE:-}" ] || share=()
	spill_wan
	spill_attached
	wan_route split
	# bulk on 5201, the short traffic's UDP on 5202 (a server runs one test)
	ip netns exec "$S" iperf3 -s -D -p 5201 --logfile "$D/iperf-s.log"
	ip netns exec "$S" iperf3 -s -D -p 5202 --logfile "$D/iperf-s2.log"
	agent "$A" --textfile "$D/m.prom" "${share[@]}" "$@"
	AGENT_A=$AGENT_PID
	running() { grep -q 'spill: class on vxs' "$D/agent-$A"; }
	fs_wait_for 10 running
}

spill_json() { wan_sc "$A" -j route show | jq '.health.spill'; }
# ungranted: once the bulk is done, the agent's log; a generation open
# with no grant given or taken; and the bulk did flow
ungranted() {
	local j

	wait "$BULK_PID" || true
	cat "$D/agent-$A"
	j=$(spill_json)
	echo "$j"
	jq -e '.active and .generation >= 1 and .grants == 0 and .taken == 0 and .state == "run"' <<<"$j"
	jq -e '.end.sum_received.bits_per_second > 0' "$D/bulk.json"
}
spill_field() { spill_json | jq -r ".$1"; }
# granted: the datapath took a grant in the agent's generation
granted() { [ "$(spill_field taken)" -ge 1 ]; }

# bulk SECONDS [iperf3 options]: 2 cubic streams client -> server, in the
# background (its JSON in $D/bulk.json)
bulk() {
	local t=$1
	shift
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5201 -P 2 -C cubic -t "$t" -J "$@" >"$D/bulk.json"
	BULK_PID=$!
}

# htb_top: the HTB's top on A's vxs (class f5a0:1's ceil), bit/s (this
# tc prints classes as text only, the rate with a unit)
htb_top() {
	ip netns exec "$A" tc class show dev vxs | awk '$2 == "htb" && $3 == "f5a0:1" {
		for (i = 4; i < NF; i++) if ($i == "ceil") {
			v = $(i + 1); m = 1
			if (v ~ /Gbit$/) m = 1e9; else if (v ~ /Mbit$/) m = 1e6; else if (v ~ /Kbit$/) m = 1e3
			sub(/[A-Za-z]+$/, "", v); printf "%.0f\n", v * m
		} }'
}
# spill_mbit: what the spill class sent over the next second, Mbit/s
spill_mbit() {
	local b0 b1
	b0=$(ip netns exec "$A" tc -s -j qdisc show dev vxs | jq '.[] | select(.kind == "tbf") | .bytes')
	sleep 1
	b1=$(ip netns exec "$A" tc -s -j qdisc show dev vxs | jq '.[] | select(.kind == "tbf") | .bytes')
	echo $(( (b1 - b0) * 8 / 1000000 ))
}

@test "spill: bad settings exit 2 with one line, nothing started" {
	wan_run_refused --spill "--spill maybe" "--spill-target-delay 0ms" "--spill-target-delay 5" \
		"--spill-rate-min 2mbit" "--spill-rate-init 1" "--spill-tunnel-rate 10kbit" \
		"--spill-limit 100" "--spill-grant-gap 5ms" "--spill-tunnel-rate 1mbit --spill-rate-init 1mbit"
	# the same in a config file's [spill], named by its key
	printf '[splitter]\ninterfaces = lana\n[spill]\ntarget-delay = 0ms\n' >"$D/bad.conf"
	run -2 wan_sc "$A" run -c "$D/bad.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"[spill]: target-delay: invalid value '0ms': accepted: 1ms..1s"* ]]
	printf '[splitter]\ninterfaces = lana\n[spill]\nrate-min = 5mbit\n' >"$D/bad.conf"
	run -2 wan_sc "$A" run -c "$D/bad.conf"
	echo "$output"
	[[ "$output" == *"[spill]: rate-min '5mbit': out of range with the other settings: accepted: at most rate-init"* ]]
	printf '[splitter]\ninterfaces = lana\n[spill]\nbogus = 1\n' >"$D/bad.conf"
	run -2 wan_sc "$A" run -c "$D/bad.conf"
	[[ "$output" == *"[spill]: unknown key 'bogus': accepted: enabled, target-delay"* ]]
	# nothing started: no class, no agent
	[ -z "$(ip netns exec "$A" tc qdisc show dev vxs | grep htb)" ]
	! pgrep -f "pin-dir $BPFA run" >/dev/null
}

@test "spill: a root qdisc of the operator's on SHORT is refused with one line, and left alone" {
	wan_attach 10
	wan_sc "$A" set spill yes
	wan_route split
	ip netns exec "$A" tc qdisc add dev vxs root handle 1: htb default 1
	agent "$A"
	refused() { grep -q 'spill: vxs: a root qdisc that splitctl did not make is there (htb 1:)' "$D/agent-$A"; }
	fs_wait_for 10 refused
	ip netns exec "$A" tc qdisc show dev vxs | grep -q '^qdisc htb 1: root'
	# route down leaves it too
	wan_sc "$A" route down
	ip netns exec "$A" tc qdisc show dev vxs | grep -q '^qdisc htb 1: root'
}

@test "spill: nothing is granted while LONG has headroom" {
	spill_setup
	# a quarter of LONG's rate, paced: the WAN here is a TBF with a
	# 3000-byte bucket, which loses rate when its timer fires late on a
	# loaded machine (one CI run: LONG measured at 8.27 Mbit/s with a
	# 15 ms queue under half its rate, and a grant followed)
	bulk 8 -b $((WAN_MBIT / 8))M
	sleep 8.5
	ungranted
	! grep -Eq 'spill: (hold-wait|grant) ' "$D/agent-$A" || false
}

@test "spill: by default, no grant where one frame is over 10 % of SHORT's RTT (here under 1 ms); the reason logged once" {
	SPILL_DEFAULT_SHARE=1 spill_setup
	bulk 12
	gated() { grep -Eq "run: spill: run \(vxs\), generation [0-9]+, grants 0, .*: no grant: a frame at [0-9.]+ Mbit/s takes [0-9.]+ ms, over 10 % of SHORT's least RTT [0-9.]+ ms \(frame-share\)$" "$D/agent-$A"; }
	fs_wait_for 10 gated || { cat "$D/agent-$A"; false; }
	ungranted
	[ "$(grep -c 'no grant: a frame at' "$D/agent-$A")" -eq 1 ]
}

@test "spill: bulk above one tunnel gets a grant, the top below SHORT's rate, SHORT's ping stays near its no-bulk value, returning short traffic goes first" {
	spill_setup -v
	# SHORT's no-bulk RTT (short class: TOS 0)
	ip netns exec "$C" ping -q -i 0.05 -c 40 10.2.0.1 >/dev/null
	ip netns exec "$C" ping -i 0.05 -c 40 10.2.0.1 >"$D/ping-idle"
	bulk 30
	fs_wait_for 20 granted
	# settle into the spilled state, then the pings of both classes
	sleep 3
	fs_bg ip netns exec "$C" ping -i 0.05 -c 60 -Q 0x04 10.2.0.1 >"$D/ping-long"
	ip netns exec "$C" ping -i 0.05 -c 60 10.2.0.1 >"$D/ping-bulk"
	local idle busy long
	idle=$(fs_median_rtt <"$D/ping-idle")
	busy=$(fs_median_rtt <"$D/ping-bulk")
	long=$(fs_median_rtt <"$D/ping-long")
	echo "# spill: SHORT ping median ${idle} ms idle, ${busy} ms with bulk spilled; LONG ping ${long} ms" >&3
	# SHORT's queue stays within the target (twice, for the probes' own
	# filter), far below LONG's, which the bulk fills
	awk -v b="$busy" -v i="$idle" -v t=$TARGET_MS 'BEGIN { exit !(b <= i + 2 * t) }'
	awk -v b="$busy" -v l="$long" 'BEGIN { exit !(l > 4 * b) }'
	# the bulk uses both tunnels: their wire rate over 3 s, above one's
	local s0 l0 s1 l1 mbit
	s0=$(ip -n "$A" -j -s link show vxs | jq '.[0].stats64.tx.bytes')
	l0=$(ip -n "$A" -j -s link show vxl | jq '.[0].stats64.tx.bytes')
	sleep 3
	s1=$(ip -n "$A" -j -s link show vxs | jq '.[0].stats64.tx.bytes')
	l1=$(ip -n "$A" -j -s link show vxl | jq '.[0].stats64.tx.bytes')
	mbit=$(( (s1 - s0 + l1 - l0) * 8 / 3 / 1000000 ))
	echo "# spill: SHORT + LONG carried $(( (s1 - s0) * 8 / 3 / 1000000 )) + $(( (l1 - l0) * 8 / 3 / 1000000 )) = ${mbit} Mbit/s of tunnel frames (each tunnel's WAN ${WAN_MBIT} Mbit/s)" >&3
	[ "$mbit" -gt $((WAN_MBIT * 3 / 2)) ]
	# spilled packets left over SHORT's class
	local sent
	sent=$(ip netns exec "$A" tc -s -j qdisc show dev vxs | jq '.[] | select(.kind == "tbf") | .bytes')
	[ "$sent" -gt 1000000 ]
	wan_sc "$A" route show
	# the text says how many back-offs were on a queue not SHORT's own
	wan_sc "$A" route show | grep -Eq "^spill: queueing delay .*, back-offs [0-9]+ \([0-9]+ on a queue not SHORT's own\), holds [0-9]+$"
	# doctor: the agent spills, its class is on SHORT
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "spill") | .status == "pass"' <<<"$output"
	jq -e '.checks[] | select(.name == "spill class") | .status == "pass" and (.detail | test("^vxs: root HTB f5a0:"))' <<<"$output"
	local j
	j=$(spill_json)
	jq -e '.active and .dev == "vxs" and .generation >= 1 and .grants >= 1 and .rate_bps > 0 and .top_bps > 0
		and (.queue_delay_ms | has("short") and has("long")) and .delay_source == "timestamps"
		and (.backoffs_foreign | type == "number") and .backoffs_foreign <= .backoffs
		and (.why | length > 0)' <<<"$j"
	# metrics: the gauges and the queueing delay per tunnel
	fs_wait_for 3 grep -q '^flowsplit_spill_rate_bytes_per_second [1-9]' "$D/m.prom"
	promtool check metrics <"$D/m.prom"
	grep '^flowsplit_tunnel_queue_delay_seconds{tunnel="short",dev="vxs"} [0-9.e-]*$' "$D/m.prom"
	grep '^flowsplit_tunnel_queue_delay_seconds{tunnel="long",dev="vxl"} [0-9.e-]*$' "$D/m.prom"
	grep '^flowsplit_spill_capacity_bytes_per_second [0-9.e+]*$' "$D/m.prom"
	grep '^flowsplit_spill_backoffs_foreign_total [0-9]*$' "$D/m.prom"
	grep '^flowsplit_spill_top_bytes_per_second [1-9][0-9.e+]*$' "$D/m.prom"
	grep -x 'flowsplit_spill_active 1' "$D/m.prom"
	# -v: each probe's delay, per tunnel; SHORT's median within the target
	local probes
	probes=$(grep -Eo 'spill: probe on vxs: one-way delay -?[0-9.]+ ms above' "$D/agent-$A" | awk '{ print $7 }' | sort -n)
	grep -Eq 'spill: probe on vxl: one-way delay [0-9.]+ ms above' "$D/agent-$A"
	[ "$(wc -l <<<"$probes")" -ge 50 ]
	awk -v t=$TARGET_MS '{ v[NR] = $1 } END { exit !(v[int((NR + 1) / 2)] <= t) }' <<<"$probes"
	# the HTB's top: below SHORT's WAN rate while spilling, so that SHORT's
	# queue is the router's, where short traffic goes first
	local top
	top=$(htb_top)
	echo "# spill: the HTB's top $top bit/s (WAN ${WAN_MBIT} Mbit/s)" >&3
	[ "$top" -lt $((WAN_MBIT * 1000000)) ] && [ "$top" -gt $((WAN_MBIT * 1000000 / 2)) ]
	# short traffic returns: 8 Mbit/s of UDP (never long) on SHORT; the
	# spilled class gives it room at once (the HTB's priority under the
	# top), and SHORT's ping stays near its no-bulk value
	local before after
	before=$(spill_mbit)
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5202 -u -b 8M -t 5
	sleep 0.5
	ip netns exec "$C" ping -i 0.05 -c 20 10.2.0.1 >"$D/ping-udp"
	after=$(spill_mbit)
	busy=$(fs_median_rtt <"$D/ping-udp")
	echo "# spill: spilled ${before} -> ${after} Mbit/s with 8 Mbit/s of short traffic; SHORT ping median ${busy} ms" >&3
	[ "$after" -le $((before - 4)) ]
	awk -v b="$busy" -v i="$idle" -v t=$TARGET_MS 'BEGIN { exit !(b <= i + 2 * t) }'
}

@test "spill: short traffic queued under the top on the router is not taken for SHORT's queue (the probes go first)" {
	spill_setup
	bulk 25
	fs_wait_for 20 granted
	sleep 3
	local top0 log0
	top0=$(htb_top)
	log0=$(wc -l <"$D/agent-$A")
	# 20 Mbit/s of UDP (short class) against a top below 20: its queue
	# forms in the short class on the router, not in the WAN
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5202 -u -b 20M -t 6
	sleep 2.5
	ip netns exec "$C" ping -i 0.05 -c 20 10.2.0.1 >"$D/ping-udp"
	local rtt q top
	rtt=$(fs_median_rtt <"$D/ping-udp")
	q=$(awk '$1 == "flowsplit_tunnel_queue_delay_seconds{tunnel=\"short\",dev=\"vxs\"}" { print $2 * 1000 }' "$D/m.prom")
	top=$(htb_top)
	echo "# spill: under 20 Mbit/s of UDP: SHORT ping median ${rtt} ms, the agent's SHORT queue ${q} ms, top ${top0} -> ${top} bit/s" >&3
	# the premise: short traffic queues on the router
	awk -v r="$rtt" -v t=$TARGET_MS 'BEGIN { exit !(r > 10 * t) }'
	# the agent's timestamp probes pass it (class :5, prio 0): the
	# controller sees SHORT's WAN queue, below the target, not the
	# router's (before the probe class: back-offs at 10, 94, 385 and 1071
	# ms, the top 18.1 -> 4.8 Mbit/s, SHORT failed over as congested).
	# Under this flood the 2-core testbed's softirq backlogs delay a
	# probe now and then by a few ms to tens of ms (4.7 ms seen; probe
	# pairs of 11-14 ms in the testbed), which the controller may take
	# for a queue of its own: the top to 0.90-0.94 x in 2 of 5 runs, below
	# 0.85 x once in a CI run. So: the queue it sees stays far below the
	# router's (50 ms and more would be the short class's), the top at
	# least half of what it was, and no failover
	awk -v q="$q" -v t=$TARGET_MS 'BEGIN { exit !(q != "" && q < t) }'
	[ "$top" -ge $((top0 / 2)) ]
	tail -n +"$((log0 + 1))" "$D/agent-$A" >"$D/agent-udp"
	cat "$D/agent-udp"	# (shown when the test fails)
	! grep -E "SHORT queue ([5-9][0-9]|[0-9]{3,})\.[0-9] ms|up -> down" "$D/agent-udp" || false
	local probes
	# (classes as text only: "Sent B bytes N pkt")
	probes=$(ip netns exec "$A" tc -s class show dev vxs classid f5a0:5 | awk '$1 == "Sent" { print $4 }')
	[ "$probes" -gt 10 ]
	# beside the top, not under it: a top cut low would hold the probes
	ip netns exec "$A" tc class show dev vxs classid f5a0:5 | grep -q "^class htb f5a0:5 root "
}

@test "spill: a failover ends the generation, detection stays within health's bound; a new one after the return" {
	spill_setup
	bulk 40
	fs_wait_for 20 granted
	local gen t0 t
	gen=$(spill_field generation)
	[ "$gen" -ge 1 ]
	# SHORT's underlay dies at B
	wan_underlay_drop "$B" b1
	t0=$(date +%s%N)
	on_long() { [ "$(wan_via "$A" 10.2.0.1)" = vxl ]; }
	fs_wait_for 5 on_long
	t=$((($(date +%s%N) - t0) / 1000000))
	echo "# spill: failover under spilled bulk: routes on LONG ${t} ms after the drop, as seen by our polls (health's bound ${DETECT_BOUND_MS} ms)" >&3
	# the bound holds when health declares SHORT down after down-misses
	# (3) probes; the spilled queue must not make it wait for
	# congested-misses (10: a second). Timed by the agent, not by our
	# polls, which a loaded machine delays.
	grep -qE 'health: vxs \(short\) up -> down after 3 misses, ' "$D/agent-$A"
	ended() { spill_json | jq -e '.state == "off" and .generation == 0' >/dev/null; }
	fs_wait_for 2 ended
	grep -q 'spill: off (vxs), generation 0' "$D/agent-$A"
	# no generation: the top open again, short traffic not capped
	opened() { [ "$(htb_top)" -gt $((WAN_MBIT * 1000000)) ]; }
	fs_wait_for 2 opened
	# the health file and the plan agree: failover, not spill, rules
	wan_sc "$A" -j route show | jq -e '.health.in_force == "short=LONG long=LONG"'
	wan_underlay_heal "$B" b1
	split_again() { wan_sc "$A" -j route show | jq -e '.health.in_force == "short=SHORT long=LONG"' >/dev/null; }
	fs_wait_for 15 split_again
	new_gen() { [ "$(spill_field generation)" -gt "$gen" ]; }
	fs_wait_for 5 new_gen
	cat "$D/agent-$A"
}

@test "spill: --spill no runs no class; route show says so" {
	wan_attach 10
	wan_route split
	agent "$A" --spill no
	up() { grep -q 'health: vxl (long) .* -> up' "$D/agent-$A"; }
	fs_wait_for 10 up
	sleep 0.5
	[ -z "$(ip netns exec "$A" tc qdisc show dev vxs | grep htb)" ]
	wan_sc "$A" route show | grep -q '^spill: off (not running on these tunnels)'
	wan_sc "$A" -j route show | jq -e '.health.spill.active == false'
}
