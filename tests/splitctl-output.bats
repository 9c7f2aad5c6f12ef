#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# What splitctl shows: global options anywhere, valid JSON from every
# command (also for interface names with quotes and backslashes), escaped
# Prometheus labels, promtool-valid metrics, completion from the option
# table, status, flows, stats --watch --line, doctor.
FS_PREFIX=fsto
load lib/common
load lib/router

# odd_iface NAME PEER: a veth pair inside the router namespace, up
odd_iface() {
	ip -n "$R" link add "$1" type veth peer name "$2"
	ip -n "$R" link set "$1" up
	ip -n "$R" link set "$2" up
}

# complete WORDS...: what bash completion offers for "splitctl WORDS..."
# (the last word is being completed), sorted, space separated
complete_words() {
	PATH=$FS_BUILD:$PATH bash -c "
		_init_completion() { cur=\${COMP_WORDS[COMP_CWORD]}; prev=\${COMP_WORDS[COMP_CWORD-1]}; words=(\"\${COMP_WORDS[@]}\"); cword=\$COMP_CWORD; }
		_filedir() { COMPREPLY=(FILES); }
		source '$FS_ROOT/loader/splitctl.bash-completion'
		COMP_WORDS=(splitctl $*); COMP_CWORD=$#; _splitctl
		printf '%s\n' \"\${COMPREPLY[@]}\"" | sort | tr '\n' ' ' | sed 's/ $//'
}

# watch_lines FILE N TIMEOUT ARGS...: splitctl ARGS (a --watch) in the
# router namespace, its output in FILE, until it printed N lines (or
# TIMEOUT seconds passed), then stopped
watch_lines() {
	local file=$1 n=$2 t=$3 pid
	shift 3
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF $* >$file"
	pid=$!
	fs_wait_for "$t" sh -c "[ \$(wc -l <$file) -ge $n ]" || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# doctor_status NAME: the status of one check of "doctor -j"
doctor_status() {
	fs_sc -j doctor | jq -r --arg n "$1" '.checks[] | select(.name == $n) | .status'
}

@test "every -j output is valid JSON for an interface named a\"b\\c" {
	name='a"b\c'
	odd_iface "$name" fstc-peer0
	run fs_sc -j attach "$name"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --arg n "$name" '.interface == $n'
	fs_sc -j status | jq -e --arg n "$name" '.interfaces[0].name == $n'
	for cmd in status stats flows "flows --top 1" flush gc; do
		# shellcheck disable=SC2086
		fs_sc -j $cmd >"$D/out"
		jq -e . "$D/out" >/dev/null || { echo "invalid: -j $cmd"; cat "$D/out"; false; }
	done
	run fs_sc -j set threshold 5
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.config.threshold == 5'
	printf '[splitter]\ninterfaces = %s\n' "$name" >"$D/we\"ird.conf"
	fs_sc -j check -c "$D/we\"ird.conf" | jq -e --arg f "$D/we\"ird.conf" '.file == $f and .valid == true'
	# route and tunnel (tunnel-cfg's output, through the same layer)
	ip -n "$R" link add 'v"x\1' type vxlan id 7 dstport 4789 local 10.77.1.254
	fs_sc -j route show | jq -e '.rules | type == "array"'
	fs_sc -j tunnel show | jq -e 'map(.name) | index("v\"x\\1") != null'
	# --watch: one document per line
	watch_lines "$D/watch" 2 3 -j stats --watch 0.2
	[ "$(wc -l <"$D/watch")" -ge 2 ]
	while read -r line; do echo "$line" | jq -e . >/dev/null; done <"$D/watch"
}

@test "Prometheus label values are escaped (interfaces q\"x and b\\s)" {
	odd_iface 'q"x' 'b\s'
	fs_sc attach 'q"x'
	fs_sc attach 'b\s' --mode generic
	fs_sc stats --prometheus >"$D/m"
	promtool check metrics <"$D/m"
	# defaults on a veth: TC (hook.c); --mode: XDP
	grep -qF 'flowsplit_attached{interface="q\"x",hook="tc",mode="tcx"} 1' "$D/m"
	grep -qF 'flowsplit_attached{interface="b\\s",hook="xdp",mode="generic"} 1' "$D/m"
}

@test "global options anywhere: stats -j, -j stats, route show -P DIR -j; tunnel show -h, unknown options" {
	fs_sc attach rc
	run ip netns exec "$R" "$SPLITCTL" stats -j --pin-dir "$BPF"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.packets_short | type == "number"'
	run ip netns exec "$R" "$SPLITCTL" status -P "$BPF" -j -v
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.interfaces[0].name == "rc"'
	run ip netns exec "$R" "$SPLITCTL" route show -P "$BPF" -j
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.mode == "down"'
	run fs_sc tunnel show -j
	[ "$status" -eq 0 ]
	[ "$output" = "[]" ]
	run fs_sc tunnel show -h
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Usage: splitctl [OPTIONS] tunnel show [OPTIONS]" ]]
	run fs_sc tunnel show --bogus
	[ "$status" -eq 2 ]
	[ "$output" = "splitctl tunnel show: unknown option '--bogus' (see -h)" ]
	run fs_sc tunnel show extra
	[ "$status" -eq 2 ]
	[ "$output" = "splitctl tunnel show: unexpected argument 'extra' (see -h)" ]
	run fs_sc stats -V
	[ "$status" -eq 0 ]
	[[ "$output" == "splitctl "* ]]
}

@test "-j of attach, set, detach, down, tunnel add/show/del: valid JSON for names like a\"b\\c" {
	name='a"b\c'
	ip -n "$R" link add "$name" type veth peer name fsto-peer0
	ip -n "$R" link set "$name" up
	ip -n "$R" link set fsto-peer0 up
	fs_sc -j attach "$name" --hook xdp | jq -e --arg n "$name" '.interface == $n and .hook == "xdp" and .upgrade == false and (.mode | IN("native", "generic"))'
	fs_sc -j attach "$name" | jq -e '.upgrade == true'
	fs_sc -j set threshold 9 ack-short no | jq -e '.config.threshold == 9 and .config.ack_short == false'
	run fs_sc set threshold 8
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	tun='v"x\1'
	fs_sc -j tunnel add "$tun" vxlan --vni 21 --local 10.77.2.254 --remote 10.77.2.1 --dev rs
	fs_sc -j tunnel show | jq -e --arg n "$tun" '.[0] | .name == $n and .local == "10.77.2.254" and .remote == "10.77.2.1" and .dev == "rs" and .dstport == 4789 and .vni == 21 and .splitctl'
	fs_sc tunnel show | grep -qxF "$tun vxlan vni 21 local 10.77.2.254 remote 10.77.2.1 dev rs dstport 4789 mtu 1450 up"
	fs_sc -j detach "$name" | jq -e --arg n "$name" --arg d "$BPF" '.detached == [$n] and .pins_removed and .pin_dir == $d'
	run ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" -j detach --all
	[ "$status" -eq 1 ]
	echo "$output" | grep -v '^{"level"' | jq -e '.detached == [] and .pins_removed == false'
	fs_sc -j attach "$name" >/dev/null
	for cmd in status doctor "flows --class long" "stats --prometheus"; do
		# shellcheck disable=SC2086
		fs_sc -j $cmd >"$D/out" || true
		[ "$cmd" = "stats --prometheus" ] && { promtool check metrics <"$D/out"; continue; }
		jq -e . "$D/out" >/dev/null || { echo "invalid: -j $cmd"; cat "$D/out"; false; }
	done
	fs_sc -j doctor | jq -e --arg n "hook $name" '[.checks[].name] | index($n) != null'
	fs_sc -j down | jq -e --arg n "$name" --arg t "$tun" '.detached == [$n] and .tunnels_removed == [$t]'
}

@test "completion from the option table: every path's options and sub-commands, enum values, set pairs, -P DIR" {
	table=$("$SPLITCTL" help-completion)
	# every command path: its options (with the global ones after a
	# command), its sub-commands; the same with -P DIR in front
	while IFS=$'\t' read -r kind path group; do
		[ "$kind" = cmd ] || continue
		opts=$(awk -F'\t' -v p="$path" '$1 == "opt" && $2 == p {print $3}' <<<"$table")
		[ -z "$group" ] && opts+=$'\n'$(awk -F'\t' '$1 == "opt" && $2 == "-" && $3 != "--help" {print $3}' <<<"$table")
		want=$(sort <<<"$opts" | tr '\n' ' ' | sed 's/ $//')
		[ "$(complete_words $path --)" = "$want" ] || { echo "'$path --': $(complete_words $path --) != $want"; false; }
		[ "$(complete_words -P /x/y $path --)" = "$want" ] || { echo "-P: '$path --'"; false; }
		[ "$(complete_words $path -j --)" = "$want" ] || { echo "'$path -j --'"; false; }
		if [ -n "$group" ]; then
			subs=$(awk -F'\t' -v p="$path" '$1 == "cmd" && index($2, p " ") == 1 {sub(/.* /, "", $2); print $2}' <<<"$table" | sort | tr '\n' ' ' | sed 's/ $//')
			[ "$(complete_words $path "''")" = "$subs" ]
			[ "$(complete_words -P /x/y $path "''")" = "$subs" ]
		fi
		# every option with values offers exactly them
		while IFS=$'\t' read -r k p o v s; do
			[[ "$v" == *"|"* ]] || continue
			[ "$(complete_words $path "$o" "''")" = "$(tr '|' '\n' <<<"$v" | sort | tr '\n' ' ' | sed 's/ $//')" ] ||
				{ echo "'$path $o': $(complete_words $path "$o" "''") != $v"; false; }
			[ -z "$s" ] || [ "$(complete_words $path "$s" "''")" = "$(complete_words $path "$o" "''")" ]
		done < <(awk -F'\t' -v p="$path" '$1 == "opt" && $2 == p' <<<"$table")
	done <<<"$table"
	# the cases people hit
	[ "$(complete_words "''")" = "apply attach check detach doctor down dup flows flush gc ha route rule run set stats status tunnel" ]
	[ "$(complete_words route "''")" = "down show up" ]
	[ "$(complete_words tunnel "''")" = "add del show" ]
	[ "$(complete_words rule "''")" = "add del show" ]
	[ "$(complete_words rule add --mode "''")" = "auto long short" ]
	[ "$(complete_words route up --mode "''")" = "ecmp split" ]
	[ "$(complete_words -P /tmp/x route up --mode "''")" = "ecmp split" ]
	[ "$(complete_words route up --selector "''")" = "auto dscp tos" ]
	[ "$(complete_words attach --mode "''")" = "auto generic native" ]
	[ "$(complete_words attach -m "''")" = "auto generic native" ]
	[ "$(complete_words attach --hook "''")" = "auto tc xdp" ]
	[ "$(complete_words run --both-down "''")" = "keep main" ]
	[ "$(complete_words set "''")" = "ack-short dscp-long dscp-short dscp-spill enabled idle-timeout midstream reshort reshort-gap spill threshold threshold-bytes" ]
	[ "$(complete_words set enabled "''")" = "no yes" ]
	[ "$(complete_words set threshold 5 ack-short "''")" = "no yes" ]
	[ "$(complete_words set midstream "''")" = "long short" ]
	[ "$(complete_words set spill "''")" = "no yes" ]
	[ "$(complete_words attach rc --spill "''")" = "no yes" ]
	[ "$(complete_words set reshort "''")" = "boundary off" ]
	[ "$(complete_words set threshold 5 "''")" = "ack-short dscp-long dscp-short dscp-spill enabled idle-timeout midstream reshort reshort-gap spill threshold threshold-bytes" ]
	[ "$(complete_words set threshold "''")" = "" ]
	[ "$(complete_words -P "''")" = "FILES" ]
	[ "$(complete_words --pin-dir /x stats -w 1 "''")" = "" ]
	[ "$(complete_words apply -c "''")" = "FILES" ]
	[[ " $(complete_words attach "''") " == *" lo "* ]]
	[[ " $(complete_words route up --short-dev "''") " == *" lo "* ]]
}

@test "status: pinned memory, what each hook costs, whether the agent runs" {
	fs_sc attach rc
	fs_sc attach rs --hook xdp --mode native
	run fs_sc status
	echo "$output"
	[[ "$output" == *$'\n  cost: TC ingress after GRO: every segment counted'* ]]
	[[ "$output" == *$'\n  cost: native XDP on a virtual driver: GRO off on it'* ]]
	echo "$output" | grep -Eq '^memory: [0-9]+\.[0-9] MB pinned \(flow tables [0-9.]+ \+ [0-9.]+ MB\)$'
	echo "$output" | grep -q '^agent: not running'
	fs_sc -j status | jq -e '.memory.bytes > 100000000 and .memory.bytes >= .memory.flows4_bytes + .memory.flows6_bytes and
		.agent == {"running": false, "pid": 0} and
		([.interfaces[] | .cost | length > 0] | all)'
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.2 --health no
	agent=$!
	fs_wait_for 5 sh -c "$SC -j status | jq -e '.agent.running' >/dev/null"
	[ "$(fs_sc -j status | jq .agent.pid)" -eq "$agent" ]
	fs_sc status | grep -qx "agent: running (pid $agent)"
	# another instance's status does not claim this agent
	fs_sc -P "$BPF-2" attach rs 2>/dev/null || true
	kill -TERM "$agent"
	wait "$agent" || true
	[ "$(fs_sc -j status | jq .agent.running)" = false ]
}

@test "flows past the idle timeout show as expired, not long, and leave --class long" {
	fs_sc attach rc --idle-timeout 1 --threshold 5
	fs_sink 6101 /dev/null
	head -c 200000 /dev/zero | ip netns exec "$C" socat -u - TCP:10.77.2.1:6101
	fs_sc -j flows --class long | jq -e 'length == 1 and .[0].expired == false'
	fs_wait_for 10 sh -c "$SC -j flows | jq -e '[.[] | select(.dport == 6101)] | .[0].idle_s > 1.2' >/dev/null"
	fs_sc -j flows | jq -e '[.[] | select(.dport == 6101)] | .[0] | .expired and .class == "long"'
	fs_sc flows | grep ':6101 ' | grep -q ' expired$'
	[ "$(fs_sc -j flows --class long | jq length)" -eq 0 ]
}

@test "stats --watch --line: one line per interval; -j one document each; --line alone refused" {
	fs_sc attach rc
	watch_lines "$D/w" 2 2 stats --watch 0.3 --line
	cat "$D/w"
	[ "$(wc -l <"$D/w")" -ge 2 ]
	! grep -Evq '^[0-9]{2}:[0-9]{2}:[0-9]{2} short [0-9]+ pkt/s [0-9.]+ Mbit/s  long [0-9]+ pkt/s [0-9.]+ Mbit/s  new [0-9.]+ flows/s  promoted [0-9.]+/s  passed [0-9]+ pkt/s$' "$D/w" || false
	watch_lines "$D/wj" 2 2 stats -j --watch 0.3 --line
	[ "$(wc -l <"$D/wj")" -ge 2 ]
	while read -r l; do jq -e '.packets_long_per_s >= 0 and .interval_s > 0 and (.time | type == "number")' <<<"$l" >/dev/null; done <"$D/wj"
	run fs_sc stats --line
	[ "$status" -eq 2 ]
	[ "$output" = "splitctl stats: --line is a --watch format: give --watch S too" ]
}

@test "Prometheus: traffic per class and per tunnel of route up, valid for promtool" {
	fs_sc attach rc --threshold 5
	lab_routes
	ip -n "$R" neigh add 192.168.201.2 lladdr 02:00:00:00:00:01 dev vx1 nud permanent
	ip -n "$R" neigh add 192.168.202.2 lladdr 02:00:00:00:00:02 dev vx2 nud permanent
	tx_short() { fs_sc stats --prometheus | awk '/^flowsplit_tunnel_transmit_packets_total\{tunnel="short",dev="vx1"\}/ {print $2}'; }
	tx0=$(tx_short)
	# three pings to the remote prefix: over the SHORT tunnel, unanswered
	ip netns exec "$C" ping -c 3 -i 0.2 -W 1 10.9.0.9 >/dev/null || true
	fs_sc stats --prometheus >"$D/m"
	promtool check metrics <"$D/m"
	grep -Eq '^flowsplit_class_packets_total\{class="short"\} [0-9]+$' "$D/m"
	grep -Eq '^flowsplit_class_bytes_total\{class="long"\} [0-9]+$' "$D/m"
	tx=$(awk '/^flowsplit_tunnel_transmit_packets_total\{tunnel="short",dev="vx1"\}/ {print $2}' "$D/m")
	[ $((tx - tx0)) -ge 3 ]
	grep -Eq '^flowsplit_tunnel_transmit_bytes_total\{tunnel="long",dev="vx2"\} [0-9]+$' "$D/m"
	grep -Eq '^flowsplit_tunnel_receive_packets_total\{tunnel="short",dev="vx1"\} [0-9]+$' "$D/m"
	# no route up: no tunnel series
	fs_sc route down
	fs_sc stats --prometheus | { ! grep -q flowsplit_tunnel_transmit; }
}

@test "doctor: a complete router whose agent does not probe fails only health; each broken item fails with its fix (exit 1), text and JSON" {
	fs_sc attach rc
	lab_routes
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.2 --health no
	agent=$!
	fs_wait_for 5 sh -c "$SC -j status | jq -e '.agent.running' >/dev/null"
	run fs_sc doctor
	echo "$output"
	# the one failure: the agent runs without health (no peer answers
	# probes in this lab), so no class would fail over
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "1 check(s) failed" ]
	[ "$(grep -c '^FAIL' <<<"$output")" -eq 1 ]
	grep -A1 "^FAIL  health: degraded: the agent (pid $agent) does not probe the tunnels" <<<"$output" |
		grep -q '^      fix: run the agent with health on'
	for c in privileges bpffs instance "hook rc" "foreign programs rc" "dscp rules" "code points" \
		 routes lan "mtu vx1" "mtu vx2" "rp_filter vx1" "rp_filter vx2" ip_forward "multipath hash" agent; do
		grep -q "^\(ok\|skip\) *$c: " <<<"$output" || { echo "missing: $c"; false; }
	done
	fs_sc -j doctor | jq -e '(.ok | not) and .failed == 1 and (.checks | length >= 17)'
	# each broken item: that check fails, with a fix, exit 1
	broken() { # CHECK FIX_PATTERN
		run fs_sc doctor
		echo "$output"
		[ "$status" -eq 1 ]
		grep -A1 "^FAIL  $1: " <<<"$output" | grep -q "^      fix: .*$2"
		fs_sc -j doctor | jq -e --arg n "$1" '(.ok | not) and ([.checks[] | select(.name == $n)][0] | .status == "fail" and (.fix | length > 0))'
	}
	# "set" moves the rules with the marks; the marks changed behind
	# splitctl's back (byte 17 of fs_config: dscp_long) are caught
	cfg=$(bpftool -j map lookup pinned "$BPF/fs_config" key 0 0 0 0 | jq -r '.value | join(" ")')
	bpftool map update pinned "$BPF/fs_config" key 0 0 0 0 value \
		$(bpftool -j map lookup pinned "$BPF/fs_config" key 0 0 0 0 | jq -r '.value | .[17] = "0x05" | join(" ")')
	[ "$(fs_sc -j status | jq .config.dscp_long)" -eq 5 ]
	broken "code points" "route up ... again"
	bpftool map update pinned "$BPF/fs_config" key 0 0 0 0 value $cfg
	[ "$(doctor_status "code points")" = pass ]
	ip netns exec "$R" sysctl -qw net.ipv4.conf.vx2.rp_filter=1
	broken "rp_filter vx2" "net.ipv4.conf.vx2.rp_filter=2"
	ip netns exec "$R" sysctl -qw net.ipv4.conf.vx2.rp_filter=0
	ip -n "$R" link set rs mtu 1400
	broken "mtu vx1" "ip link set rs mtu 1500"
	ip -n "$R" link set rs mtu 1500
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=0
	broken ip_forward "net.ipv4.ip_forward=1"
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1
	fs_sc attach rs --hook xdp --mode native
	broken "hook rs" "attach rs --hook tc"
	fs_sc detach rs
	ip -n "$R" route del 10.9.0.0/24 table 101
	broken routes "route up"
	fs_sc route up --mode ecmp --short-dev vx1 --long-dev vx2 --prefix 10.9.0.0/24 --lan-dev rc \
		--via-short 192.168.201.2 --via-long 192.168.202.2
	[ "$(doctor_status "multipath hash")" = pass ]
	ip netns exec "$R" sysctl -qw net.ipv4.fib_multipath_hash_policy=0
	broken "multipath hash" "mode ecmp"
	kill -TERM "$agent"
	wait "$agent" || true
	broken agent "systemctl start flowsplit"
	# nothing attached here: instance fails, and doctor still reports all
	fs_sc down >/dev/null
	run fs_sc -j doctor
	[ "$status" -eq 1 ]
	echo "$output" | jq -e '([.checks[] | select(.name == "instance")][0].status == "fail") and ([.checks[] | select(.name == "routes")][0].status == "fail")'
}

@test "doctor: spill is a note while nothing can spill, skip when off, a failure without fs_spill" {
	fs_sc attach rc
	spill_check() { fs_sc -j doctor | jq -r '[.checks[] | select(.name == "spill")][0] | "\(.status): \(.detail)"'; }
	[[ "$(spill_check)" == "note: spill on (dscp-spill 2), but no agent runs: nothing spills"* ]]
	run fs_sc doctor
	grep -q '^note  spill: spill on' <<<"$output"
	# a note is no failure: it adds nothing to the count
	fs_sc -j doctor | jq -e --argjson f "$(fs_sc -j doctor | jq '[.checks[] | select(.status == "fail")] | length')" '.failed == $f'
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.2 --health no
	agent=$!
	fs_wait_for 5 sh -c "$SC -j status | jq -e '.agent.running' >/dev/null"
	[[ "$(spill_check)" == "note: "*"the agent (pid $agent) has no spill generation open"* ]]
	kill -TERM "$agent"
	wait "$agent" || true
	fs_sc set spill no
	[ "$(spill_check)" = "skip: spill is off (splitctl set spill yes)" ]
	fs_sc set spill yes
	# an instance without the map (pinned by a splitctl without spill)
	rm "$BPF/fs_spill"
	[ "$(doctor_status spill)" = fail ]
	fs_sc -j doctor | jq -e '[.checks[] | select(.name == "spill")][0].fix | test("splitctl attach")'
	fs_sc attach rc			# pins it again
	[ -e "$BPF/fs_spill" ]
	[[ "$(spill_check)" == note:* ]]
}

@test "stats --prometheus passes promtool check metrics" {
	fs_sc attach rc
	fs_sink 6003 /dev/null
	head -c 10000 /dev/zero | ip netns exec "$C" socat -u - TCP:10.77.2.1:6003
	fs_sc stats --prometheus >"$D/m"
	promtool check metrics <"$D/m"
	grep -q '^flowsplit_class_packets_total{class="short"} [1-9]' "$D/m"
	# one series per value: the class counters only by label
	! grep -Eq '^flowsplit_(packets|bytes)_(short|long)_total' "$D/m"
	grep -q '^flowsplit_threshold_packets 20$' "$D/m"
	grep -q '^flowsplit_attached{interface="rc",hook="tc",mode="tcx"} 1$' "$D/m"
	# spill: the settings, its counters and fs_spill's state (no agent: none)
	grep -qx 'flowsplit_spill 1' "$D/m"
	grep -qx 'flowsplit_dscp_spill 2' "$D/m"
	grep -qx 'flowsplit_spill_packets_total 0' "$D/m"
	grep -qx 'flowsplit_spill_bytes_total 0' "$D/m"
	grep -qx 'flowsplit_spill_flows_total 0' "$D/m"
	grep -qx 'flowsplit_spill_moved_total 0' "$D/m"
	grep -qx 'flowsplit_spill_generation 0' "$D/m"
	[ "$(grep -c '^# TYPE' "$D/m")" -ge 20 ]
}
