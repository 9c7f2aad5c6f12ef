#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The LONG shaper ("route up --long-rate", tunnel-cfg/longq.c;
# docs/design.md, *Short class first on LONG*), on tests/lib/wan.bash:
# router A's egress onto each underlay is the "WAN", a TBF at WAN_MBIT
# with a 100 ms FIFO (tests/lib/spill.bash), offloads off so that queues
# count wire packets. Bulk is iperf3 (cubic) from the client with the long
# code point (TOS 0x04), so the routes put it on LONG; the short-class
# probe of LONG's queue is a ping from A to B's LONG address (TOS 0).
FS_PREFIX=fslq
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan
load lib/spill

# the shaper's handle and its leaves', as tc prints them
ROOT=f5a4:
SHORT_LEAF=f5a5:
BULK_LEAF=f5a6:

has_shaper() { # NS DEV
	ip netns exec "$1" tc -j qdisc show dev "$2" |
		jq -e '.[] | select(.root and .kind == "htb" and .handle == "f5a4:")' >/dev/null
}
no_htb() { # NS DEV: nothing of ours (nor any HTB) at the root
	! ip netns exec "$1" tc qdisc show dev "$2" | grep -q '^qdisc htb'
}

# bulk SECONDS [iperf3 options]: 2 cubic streams client -> server with the
# long code point, in the background (its JSON in $D/bulk.json)
bulk() {
	local t=$1
	shift
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5201 -P 2 -C cubic -S 0x04 -t "$t" -J "$@" >"$D/bulk.json"
	BULK_PID=$!
}
bulk_mbit() { # BULK_MBIT: received Mbit/s of the last bulk, once it ended
	wait "$BULK_PID" || true
	BULK_MBIT=$(jq '.end.sum_received.bits_per_second / 1000000 | floor' "$D/bulk.json") ||
		{ cat "$D/bulk.json"; false; }
}
iperf_listening() { ip netns exec "$S" ss -Hltn 'sport = :5201' | grep -q .; }
# iperf_server: iperf3's server on S (port 5201), listening
iperf_server() {
	ip netns exec "$S" iperf3 -s -D -p 5201 --logfile "$D/iperf-s.log"
	fs_wait_for 5 iperf_listening
}
# long_ping FILE: 60 short-class echo requests from A over LONG (to B's
# address on vxl), the replies in FILE
long_ping() {
	ip netns exec "$A" ping -i 0.05 -c 60 -w 20 192.168.102.2 >"$1" || true
}

@test "longq: route up --long-rate installs the shaper on LONG; route show, -j and doctor show it; route down removes it" {
	wan_route split --long-rate 20mbit
	has_shaper "$A" vxl
	no_htb "$A" vxs
	# the classes: the top at 0.95 x 20 Mbit/s, the short class first
	ip netns exec "$A" tc class show dev vxl | tee "$D/classes"
	grep -q '^class htb f5a4:1 root .*rate 19Mbit ceil 19Mbit' "$D/classes"
	grep -q '^class htb f5a4:10 parent f5a4:1 leaf f5a5: prio 0 ' "$D/classes"
	grep -q '^class htb f5a4:20 parent f5a4:1 leaf f5a6: prio 1 ' "$D/classes"
	# each leaf a bfifo of 100 ms at the top: 19 Mbit/s x 0.1 s / 8
	ip netns exec "$A" tc -j qdisc show dev vxl |
		jq -e '[.[] | select(.kind == "bfifo") | .options.limit] == [237500, 237500]'
	# unclassified traffic to the bulk class; probes (ICMP timestamp
	# requests) to it before the short code point's filter
	ip netns exec "$A" tc qdisc show dev vxl | grep -q '^qdisc htb f5a4: root .* default 0x20'
	ip netns exec "$A" tc filter show dev vxl | tee "$D/filters"
	grep -q 'pref 1 u32 .*flowid f5a4:20' "$D/filters"
	grep -q 'pref 2 u32 .*flowid f5a4:10' "$D/filters"
	run wan_sc "$A" route show
	echo "$output"
	[[ "$output" == *"long shaper: vxl installed long-rate 20mbit top 19mbit queue 100 ms short code point 0"* ]]
	[[ "$output" == *"  class short: sent "* ]]
	[[ "$output" == *"  class bulk: sent "* ]]
	run wan_sc "$A" -j route show
	jq -e '.long_shaper | .dev == "vxl" and .installed and .long_rate == "20mbit" and .top == "19mbit"
		and .queue_ms == 100 and .dscp_short == 0 and ([.classes[].class] == ["short", "bulk"])
		and (.classes[0] | has("packets") and has("bytes") and has("backlog_bytes") and has("drops") and .limit_bytes == 237500)' <<<"$output"
	# doctor: it passes; once it is gone, route show and doctor say so
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "long shaper") | .status == "pass" and (.detail | test("^vxl: root HTB f5a4 "))' <<<"$output"
	ip netns exec "$A" tc qdisc del dev vxl root
	run wan_sc "$A" route show
	echo "$output"
	[[ "$output" == *"degraded: vxl (long): the LONG shaper of long-rate is missing"* ]]
	[[ "$output" == *"long shaper: vxl MISSING"* ]]
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "long shaper") | .status == "fail" and (.detail | test("^vxl: the LONG shaper of long-rate is missing"))' <<<"$output"
	# route up again puts it back; without --long-rate it goes
	wan_route split --long-rate 20mbit
	has_shaper "$A" vxl
	wan_route split
	no_htb "$A" vxl
	run wan_sc "$A" -j route show
	jq -e '.long_shaper == null' <<<"$output"
	wan_route split --long-rate 20mbit --long-queue 50ms
	ip netns exec "$A" tc -j qdisc show dev vxl |
		jq -e '[.[] | select(.kind == "bfifo") | .options.limit] == [118750, 118750]'
	wan_sc "$A" route down
	no_htb "$A" vxl
	# splitctl down removes it too
	wan_route split --long-rate 20mbit
	has_shaper "$B" vxl
	wan_sc "$B" down
	no_htb "$B" vxl
}

@test "longq: a root qdisc of the operator's on LONG is refused with one line and left intact; bad values exit 2" {
	ip netns exec "$A" tc qdisc add dev vxl root handle 1: tbf rate 10mbit burst 3000 limit 30000
	run -1 wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--lan-dev lana --via-short 192.168.101.2 --via-long 192.168.102.2 --long-rate 20mbit
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"vxl: a root qdisc that splitctl did not make is there (tbf 1:): long-rate needs the root for the LONG shaper; remove it or leave long-rate out"* ]]
	ip netns exec "$A" tc qdisc show dev vxl | grep -q '^qdisc tbf 1: root'
	# nothing installed
	[ -z "$(ip -n "$A" rule show | grep 'lookup 10[01]')" ]
	# route down leaves it too
	wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 \
		--lan-dev lana --via-short 192.168.101.2 --via-long 192.168.102.2
	wan_sc "$A" route down
	ip netns exec "$A" tc qdisc show dev vxl | grep -q '^qdisc tbf 1: root'
	local bad
	for bad in "--long-rate 20" "--long-rate 10kbit" "--long-rate fast" "--long-queue 0ms" "--long-queue 5"; do
		run -2 wan_sc "$A" route up --mode split --short-dev vxs --long-dev vxl --prefix 10.2.0.0/24 $bad
		echo "$bad: $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "splitctl route up: --long-"*"accepted: "* ]]
	done
	# the same from a config file's [route], named by its key
	printf '[splitter]\ninterfaces = lana\n[route]\nmode = split\nshort-dev = vxs\nlong-dev = vxl\nprefix = 10.2.0.0/24\nlong-rate = 20\n' >"$D/bad.conf"
	run -2 wan_sc "$A" check -c "$D/bad.conf"
	echo "$output"
	[[ "$output" == *"long-rate: invalid "*"'20': accepted: "* ]]
}

@test "longq: with bulk filling LONG, a short-class packet over LONG waits far less with the shaper than without; the bulk keeps >= 0.9 x its rate" {
	spill_wan
	wan_route split
	iperf_server
	# LONG idle: the ping's RTT without a queue
	long_ping "$D/ping-idle"
	local idle off on off_mbit on_mbit
	idle=$(fs_median_rtt <"$D/ping-idle")
	# without the shaper: the bulk's queue is the WAN's FIFO
	bulk 8
	sleep 3
	long_ping "$D/ping-off"
	bulk_mbit
	off_mbit=$BULK_MBIT
	off=$(fs_median_rtt <"$D/ping-off")
	# with it: the same bulk, LONG's queue on the router behind the short class
	wan_route split --long-rate ${WAN_MBIT}mbit
	has_shaper "$A" vxl
	bulk 8
	sleep 3
	long_ping "$D/ping-on"
	bulk_mbit
	on_mbit=$BULK_MBIT
	on=$(fs_median_rtt <"$D/ping-on")
	echo "# longq: short-class ping over LONG: idle ${idle} ms; under bulk ${off} ms without the shaper, ${on} ms with it; bulk ${off_mbit} -> ${on_mbit} Mbit/s" >&3
	wan_sc "$A" route show | grep -A2 '^long shaper'
	# the WAN's queue was there without it (the bulk filled LONG), and
	# with it the short class waits a small part of that
	awk -v o="$off" -v i="$idle" 'BEGIN { exit !(o > i + 20) }'
	awk -v o="$off" -v n="$on" -v i="$idle" 'BEGIN { exit !(n - i < (o - i) / 4) }'
	# the bulk loses at most the shaper's 5 % (and the test's noise)
	[ "$off_mbit" -gt 0 ] && [ $((on_mbit * 10)) -ge $((off_mbit * 9)) ]
	# the bulk went through the bulk class, the pings through the short one
	local j
	j=$(wan_sc "$A" -j route show)
	jq -e '.long_shaper.classes[1].bytes > 1000000 and .long_shaper.classes[0].packets >= 60' <<<"$j"
}

@test "longq: spill still grants when LONG is full with the shaper on, and holds for LONG's queue (the probes go with the bulk)" {
	spill_wan
	wan_attach 10
	wan_sc "$A" set spill yes
	wan_sc "$B" set spill yes
	wan_route split --long-rate ${WAN_MBIT}mbit
	has_shaper "$A" vxl
	iperf_server
	agent "$A" --spill-frame-share 0
	running() { grep -q 'spill: class on vxs' "$D/agent-$A"; }
	fs_wait_for 10 running
	fs_bg ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5201 -P 2 -C cubic -t 25 -J >"$D/bulk.json"
	BULK_PID=$!
	granted() { [ "$(wan_sc "$A" -j route show | jq '.health.spill.taken')" -ge 1 ]; }
	fs_wait_for 20 granted || { cat "$D/agent-$A"; false; }
	grep -E 'spill: .*LONG queue [0-9.]+ ms > 10.0 ms' "$D/agent-$A" | head -1
	# the hold waited for LONG's queue, which is on the router now: the
	# probes saw it (far above the hold's margin of 20 ms alone)
	local held
	held=$(grep -Eo 'grant taken: held [0-9]+ ms' "$D/agent-$A" | head -1 | awk '{ print $4 }')
	echo "# longq: spill granted with the shaper on; the first hold ${held} ms" >&3
	[ "$held" -ge 50 ]
	# the bulk filled LONG's bulk class on the router
	wan_sc "$A" -j route show | jq -e '.long_shaper.classes[1].bytes > 1000000'
	# the metrics: each class's counters
	wan_sc "$A" stats --prometheus >"$D/m"
	promtool check metrics <"$D/m"
	grep -Eq '^flowsplit_long_shaper_sent_bytes_total\{class="bulk",dev="vxl"\} [1-9][0-9]{6,}$' "$D/m"
	grep -Eq '^flowsplit_long_shaper_sent_packets_total\{class="short",dev="vxl"\} [0-9]+$' "$D/m"
	grep -Eq '^flowsplit_long_shaper_drops_total\{class="bulk",dev="vxl"\} [0-9]+$' "$D/m"
	grep -Eq '^flowsplit_long_shaper_backlog_bytes\{class="short",dev="vxl"\} [0-9]+$' "$D/m"
	# an agent that starts adopted it (what the record asks), and makes it
	# again when it is gone
	grep -q 'run: health: LONG shaper on vxl adopted' "$D/agent-$A"
	# status says it too
	wan_sc "$A" status | grep -Eq '^long shaper: vxl, short class first \(short [0-9]+ bytes sent, bulk [1-9][0-9]+, bulk backlog [0-9]+ bytes\)$'
	wan_sc "$A" -j status | jq -e '.routing.long_shaper | .dev == "vxl" and .bulk_bytes > 1000000'
	wait "$BULK_PID" || true
}

@test "longq: an agent that starts makes the recorded shaper when it is missing, and adopts it when it is there" {
	wan_route split --long-rate 20mbit
	ip netns exec "$A" tc qdisc del dev vxl root
	no_htb "$A" vxl
	agent "$A"
	made() { grep -q 'run: health: LONG shaper: installed on vxl' "$D/agent-$A"; }
	fs_wait_for 10 made || { cat "$D/agent-$A"; false; }
	has_shaper "$A" vxl
	wan_agents_stop
	agent "$A"
	adopted() { grep -q 'run: health: LONG shaper on vxl adopted' "$D/agent-$A"; }
	fs_wait_for 10 adopted || { cat "$D/agent-$A"; false; }
	[ "$(grep -c 'LONG shaper: installed' "$D/agent-$A")" -eq 1 ]
	has_shaper "$A" vxl
}
