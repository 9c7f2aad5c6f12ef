#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Roles by path quality in "splitctl run" (docs/health.md, *Roles*), on
# tests/lib/wan.bash with SHORT's underlay through a path namespace $P
# where testbed/delayline carries it (WAN_SHORT_PATH): the agent on router
# A; "the short class" is where A routes a LAN packet to the server
# (wan_via: DSCP 0, table SHORT). Unequal tunnels (30 ms one-way on SHORT,
# none on LONG) with roles auto and fixed; bulk on LONG through a full
# 100 ms FIFO with 5 ms of jitter on SHORT; a brownout made by cross
# traffic that is not ours (UDP into a 20 Mbit/s TBF on SHORT's underlay);
# bad settings. Times are printed, not asserted (a loaded, shared machine).
FS_PREFIX=fstj
WAN_SHORT_PATH=1
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

# dl_start ONE_WAY_MS [JITTER_MS]: the delay line between pa and pb
dl_start() {
	local j=
	[ -z "${2:-}" ] || j=",jitter-ms=$2"
	fs_bg ip netns exec "$P" "$FS_BUILD/delayline" --line "in=pa,out=pb,delay-ms=$1$j" \
		--line "in=pb,out=pa,delay-ms=$1$j" --limit-bytes 8388608 --stats "$D/dl.json"
	DL_PID=$!
	# the tunnel answers through it
	fs_wait_for 10 ip netns exec "$A" ping -c 1 -W 1 -q 192.168.101.2 >/dev/null
}

both_up() { [ "$(grep -c 'health: vx[sl] .* -> up' "$D/agent-$1")" -ge 2 ]; }
short_via() { [ "$(wan_via "$A" 10.2.0.1)" = "$1" ]; }
roles_json() { wan_sc "$A" -j route show | jq '.health.roles'; }
quality_ready() { roles_json | jq -e '.quality[0].ready and .quality[1].ready' >/dev/null; }
moves() { grep -c 'health: roles: ' "$D/agent-$A" || true; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

@test "roles: bad settings exit 2 with one line, nothing started" {
	wan_run_refused --roles "--roles maybe" "--roles-margin 1001" "--roles-hold-min 5s --roles-hold-max 2s" \
		"--roles-sla-loss 101" "--roles-sustain 5"
	printf '[splitter]\ninterfaces = lana\n[health]\nroles = sometimes\n' >"$D/bad.conf"
	run -2 wan_sc "$A" run -c "$D/bad.conf"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"[health]: roles: invalid value 'sometimes': accepted: auto, fixed"* ]]
	! pgrep -f "pin-dir $BPFA run" >/dev/null
}

@test "roles: SHORT on the slow tunnel: fixed keeps it there, auto moves the short class to the fast one" {
	dl_start 30
	wan_attach 10
	wan_route split
	agent "$A" --roles fixed
	fs_wait_for 10 both_up "$A"
	fs_wait_for 10 quality_ready
	sleep 3
	# fixed: where route up put it, and said so
	short_via vxs
	[ "$(moves)" -eq 0 ]
	roles_json | jq -e '.mode == "fixed" and .swapped == false and .quality[0].base_rtt_ms > 50'
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "roles") | .status == "note" and (.detail | test("^fixed: the short class stays on vxs"))' <<<"$output"
	kill -TERM "$AGENT_PID"
	wait "$AGENT_PID" || true
	# auto: the agent moves it as soon as both tunnels have
	# a verdict and their quality is known
	local t0
	t0=$(now)
	agent "$A" --roles auto --textfile "$D/m.prom"
	fs_wait_for 20 short_via vxl
	echo "# roles auto, SHORT at 30 ms one-way, LONG at 0: short class on the fast tunnel $(since "$t0") s after the agent started" >&3
	cat "$D/agent-$A"
	grep -q 'health: roles: short class on vxl (swapped: the other path is shorter)' "$D/agent-$A"
	# the long class takes the slow one: a swap, as the plan in force
	[ "$(wan_via "$A" 10.2.0.1 0x04)" = vxs ] || [ "$(wan_via "$A" 10.2.0.1 0x08)" = vxs ]
	wan_sc "$A" -j route show | jq -e '.state == "ok" and .health.in_force == "short=LONG long=SHORT"'
	wan_sc "$A" route show | grep '^roles: auto, short class on vxl (swapped)'
	wan_sc "$A" route show | grep '^quality: vxs (short) base [0-9.]* ms'
	wan_sc "$A" -j status | jq -e '.health.roles.swapped and .health.roles.cause == "base" and .health.roles.moves.base == 1'
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "roles") | .status == "pass" and (.detail | test("^auto: short class on vxl \\(swapped"))' <<<"$output"
	has_metrics() { grep -q '^flowsplit_roles_swapped 1' "$D/m.prom"; }
	fs_wait_for 5 has_metrics
	# a swap is no failover: no class counts as failed over
	fs_prom_has "$D/m.prom" 'flowsplit_role_moves_total{cause="base"} 1' \
		'flowsplit_class_failed_over{class="short"} 0' \
		'flowsplit_class_failed_over{class="long"} 0'
	grep '^flowsplit_tunnel_base_rtt_seconds{tunnel="short",dev="vxs"} 0\.0[5-9]' "$D/m.prom"
	grep '^flowsplit_tunnel_queueing_delay_seconds{tunnel="long",dev="vxl"} ' "$D/m.prom"
	grep '^flowsplit_tunnel_jitter_seconds{tunnel="long",dev="vxl"} ' "$D/m.prom"
	grep '^flowsplit_tunnel_short_loss_ratio{tunnel="short",dev="vxs"} ' "$D/m.prom"
	# and it stays: one move
	sleep 5
	[ "$(moves)" -eq 1 ]
	short_via vxl
}

@test "roles: bulk on LONG through a full 100 ms FIFO and 5 ms of jitter on SHORT move nothing" {
	dl_start 1 5
	wan_offloads_off "$C c0" "$A lana" "$A vxl" "$A a2" "$B b2" "$B vxl" "$B lanb" "$S s0"
	wan_shape a2
	wan_attach 10
	wan_route split
	agent "$A" --roles auto --textfile "$D/m.prom"
	fs_wait_for 10 both_up "$A"
	fs_wait_for 10 quality_ready
	ip netns exec "$S" iperf3 -s -D -p 5201 --logfile "$D/iperf-s.log"
	ip netns exec "$C" iperf3 -c 10.2.0.1 -p 5201 -P 2 -C cubic -t 20 -J >"$D/bulk.json"
	# and after it, while LONG's queue drains
	sleep 3
	roles_json
	cat "$D/agent-$A"
	# the bulk ran, on LONG, and filled its FIFO: its probes saw the queue
	jq -e '.end.sum_received.bits_per_second > 10000000' "$D/bulk.json"
	grep -q 'flowsplit_tunnel_probe_rtt_seconds{tunnel="long",dev="vxl"}' "$D/m.prom"
	[ "$(moves)" -eq 0 ]
	short_via vxs
	roles_json >"$D/roles.json"
	cat "$D/roles.json"
	jq -e '.swapped == false and .moves.base + .moves.queue + .moves.loss == 0' "$D/roles.json"
}

@test "roles: cross traffic on SHORT's underlay moves the short class, and it returns after" {
	dl_start 0
	local t0 t_move t_back
	wan_offloads_off "$A a1" "$A vxs"
	# SHORT's underlay: 20 Mbit/s, a 100 ms FIFO
	wan_shape a1
	wan_attach 10
	wan_route split
	agent "$A" --roles auto --textfile "$D/m.prom"
	fs_wait_for 10 both_up "$A"
	fs_wait_for 10 quality_ready
	short_via vxs
	# cross traffic that is not ours: 30 Mbit/s of UDP from A's underlay
	# address to B's, for 8 s
	ip netns exec "$B" iperf3 -s -D -B 172.16.1.2 -p 5301 --logfile "$D/iperf-x.log"
	t0=$(now)
	fs_bg ip netns exec "$A" iperf3 -c 172.16.1.2 -B 172.16.1.1 -p 5301 -u -b 30M -t 8 -J >"$D/cross.json"
	fs_wait_for 8 short_via vxl
	t_move=$(since "$t0")
	cat "$D/agent-$A"
	grep -Eq 'health: roles: short class on vxl \(swapped: (queueing delay|loss)\)' "$D/agent-$A"
	roles_json | jq -e '.swapped and (.cause == "queue" or .cause == "loss")'
	# back once the cross traffic ended and the hold-down ran out
	fs_wait_for 30 short_via vxs
	t_back=$(since "$t0")
	cat "$D/agent-$A"
	echo "# cross traffic 30 Mbit/s into SHORT's 20 Mbit/s underlay for 8 s: moved after $t_move s, back after $t_back s" >&3
	grep -q 'health: roles: short class on vxs (configured: recovered)' "$D/agent-$A"
	[ "$(moves)" -eq 2 ]
	grep -x 'flowsplit_failovers_total 0' "$D/m.prom"
}
