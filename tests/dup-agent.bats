#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The agent switches the short class's copy ("splitctl dup", [dup] copy =
# auto; health/dup_agent.h) on while SHORT loses probes and off after it
# has been clean for the quiet time (6 loss windows), on tests/lib/wan.bash: the
# splitter and dup (dedup, the copy left to the agent) on both routers,
# GRO off on the tunnel devices, an agent on each router. Loss: nftables
# numgen at each router's SHORT underlay egress (VXLAN, probes included).
FS_PREFIX=fsda
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan
load lib/dup

dup_agent_setup() { dup_net --short-dev vxs --long-dev vxl; }

# requests N: N short requests from the client; each may take up to 3 s
# (a lost one is retransmitted), and most must complete
requests() {
	local i ok=0
	for i in $(seq "$1"); do
		[ "$(echo ping | ip netns exec "$C" timeout 3 socat - TCP:10.2.0.1:7000,connect-timeout=3 2>/dev/null)" = pong ] &&
			ok=$((ok + 1))
	done
	echo "requests: $ok of $1 answered"
	[ "$ok" -gt 0 ]
}

dup_flag() { wan_sc "$1" -j dup status | jq -r .copy; }
dup_counter() { wan_sc "$1" -j dup status | jq -r ".counters.$2"; }
dup_shown() { wan_sc "$1" -j route show | jq -c .health.dup; }

# SHORT's underlay of router NS drops PERMILLE per mille of the VXLAN
# packets leaving on DEV (nftables numgen, the probes' too)
underlay_loss() { # NS DEV PERMILLE
	ip netns exec "$1" nft -f - <<-EOF2
	table inet ${FS_PREFIX}loss$2 {
		chain post {
			type filter hook postrouting priority 0;
			oifname "$2" udp dport 4789 numgen random mod 1000 < $3 drop
		}
	}
	EOF2
}
underlay_heal() { ip netns exec "$1" nft delete table inet "${FS_PREFIX}loss$2"; }

@test "dup agent: the copy goes on while SHORT loses and off after the quiet time" {
	dup_agent_setup
	# a loss window of 20 probes (2 s) keeps the test short; the rule
	# is the same at any window. Roles fixed: with auto, a lossy SHORT
	# loses the short class to LONG (roles.bats), and the copy stays off.
	# Down after 10 misses: at 28 % probe loss, 3 in a row on one of
	# SHORT's two families (IPv4, IPv6) would fail it over, and nothing
	# would leave SHORT to be copied
	agent "$A" --health-loss-window 20 --roles fixed --health-down-misses 10 \
		--textfile "$D/a.prom"
	agent "$B" --health-loss-window 20 --roles fixed --health-down-misses 10
	looking() { [ "$(dup_shown "$1" | jq -r .running)" = true ]; }
	fs_wait_for 10 looking "$A" || { cat "$D/agent-$A"; false; }
	fs_wait_for 10 looking "$B"
	# clean tunnels: no copy
	requests 3
	sleep 2
	[ "$(dup_flag "$A")" = false ]
	dup_shown "$A" | jq -e '.setting == "auto" and .copy == false and .attached and .losing == false'
	! grep -q 'run: dup: copy on' "$D/agent-$A" || false
	# 15 % each way on SHORT: its probes lose about 28 %
	underlay_loss "$A" a1 150
	underlay_loss "$B" b1 150
	on() { grep -q 'run: dup: copy on: SHORT lost [0-9]* of 20 probes' "$D/agent-$1"; }
	fs_wait_for 15 on "$A" || { cat "$D/agent-$A"; false; }
	fs_wait_for 15 on "$B" || { cat "$D/agent-$B"; false; }
	[ "$(dup_flag "$A")" = true ]
	[ "$(dup_flag "$B")" = true ]
	dup_shown "$A" | jq -e '.copy and .losing and .probe_loss.short.lost >= 2 and .probe_loss.short.window == 20 and .probe_loss.long.lost == 0 and .changes == 1 and (.why | test("SHORT lost"))'
	wan_sc "$A" route show >"$D/show"
	grep -E '^dup: setting auto, copy yes \(short class protected' "$D/show"
	grep -E '^dup: probe loss short [0-9]+ of 20 \([0-9]+\.[0-9] %\), long 0 of 20 \(0\.0 %\), SHORT losing' "$D/show"
	p0=$(dup_counter "$A" dup_packets)
	requests 10
	p1=$(dup_counter "$A" dup_packets)
	echo "dup_packets on A: $p0 -> $p1"
	[ "$p1" -ge $((p0 + 10)) ] || { wan_sc "$A" route show; cat "$D/agent-$A"; false; }
	[ "$(dup_counter "$B" dedup_drops)" -gt 0 ]
	# the metrics and doctor say the same
	sleep 1.5
	grep -qx 'flowsplit_dup_copy 1' "$D/a.prom"
	awk '$1 == "flowsplit_dup_packets_total" && $2 > 0 { f = 1 } END { exit !f }' "$D/a.prom"
	grep -q '^flowsplit_tunnel_probe_loss_ratio{tunnel="short"' "$D/a.prom"
	run wan_sc "$A" -j doctor
	jq -e '.checks[] | select(.name == "dup") | .status == "pass"' <<<"$output"
	jq -e '.checks[] | select(.name == "dup copy") | .status == "pass"' <<<"$output"
	# the loss ends: the copy stays on for the quiet time after SHORT
	# last lost a probe alone (6 windows of 2 s), then goes off
	underlay_heal "$A" a1
	underlay_heal "$B" b1
	healed=$(date +%s)
	sleep 5
	[ "$(dup_flag "$A")" = true ]
	off() { grep -q 'run: dup: copy off: SHORT clean for 12 s' "$D/agent-$1"; }
	fs_wait_for 20 off "$A" || { cat "$D/agent-$A"; false; }
	fs_wait_for 5 off "$B" || { cat "$D/agent-$B"; false; }
	echo "copy off $(( $(date +%s) - healed )) s after the loss ended"
	[ "$(dup_flag "$A")" = false ]
	# one log line per change
	[ "$(grep -c 'run: dup: copy' "$D/agent-$A")" -eq 2 ]
	p2=$(dup_counter "$A" dup_packets)
	requests 3
	[ "$(dup_counter "$A" dup_packets)" -eq "$p2" ]
}

@test "dup agent: --dup-copy off keeps the copy off under loss, on keeps it on" {
	dup_agent_setup
	underlay_loss "$A" a1 150
	agent "$A" --health-loss-window 20 --dup-copy off
	looking() { [ "$(dup_shown "$A" | jq -r .losing)" = true ]; }
	fs_wait_for 15 looking || { cat "$D/agent-$A"; false; }
	[ "$(dup_flag "$A")" = false ]
	dup_shown "$A" | jq -e '.setting == "off" and .copy == false'
	wan_agents_stop
	agent "$A" --dup-copy on
	on() { [ "$(dup_flag "$A")" = true ]; }
	fs_wait_for 10 on || { cat "$D/agent-$A"; false; }
	grep -q 'run: dup: copy on: setting copy = on' "$D/agent-$A"
	# detached under the agent: said in route show, nothing fails
	wan_sc "$A" dup detach
	gone() { [ "$(dup_shown "$A" | jq -r .attached)" = false ]; }
	fs_wait_for 5 gone
	kill -0 "$AGENT_PID"
}
