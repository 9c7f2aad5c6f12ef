#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Policy rules and the byte threshold / reshort gap settings through
# splitctl: rule add|del|show, [rule NAME] sections in check, apply and the
# agent, real TCP traffic through the router, and the bad-input matrix
# (exit 2 or 1, one line naming the value, nothing changed).
FS_PREFIX=fstr
load lib/common
load lib/router

# the client->server flow to PORT, one field
flow_field() { # PORT FIELD
	fs_sc -j flows | jq -r ".[] | select(.dport == $1) | .$2"
}

# everything a refused command must leave as it was
state() {
	fs_sc -j rule show
	fs_sc -j status | jq -c .config
	fs_sc -j flows | jq -c '[.[] | {dport, packets, class}]'
}

@test "rule add, show (text and -j), del; status counts the rules" {
	fs_sc attach rc
	run fs_sc rule show
	[ "$output" = "no rules: every flow follows the global settings" ]
	[ "$(fs_sc -j rule show)" = "[]" ]
	fs_sc rule add web --prefix 10.77.2.0/24 --port 443 --threshold 40 --threshold-bytes 100000
	fs_sc rule add bulk --prefix fd77:2::/64 --mode long
	fs_sc rule add peer --prefix 10.77.2.1
	fs_sc rule add lan --prefix 10.77.2.0/24 --mode short
	run fs_sc rule show
	[ "$status" -eq 0 ]
	fs_lines_are "bulk: prefix fd77:2::/64 any port, mode long" \
		"lan: prefix 10.77.2.0/24 any port, mode short" \
		"peer: prefix 10.77.2.1/32 any port, mode auto (the global thresholds)" \
		"web: prefix 10.77.2.0/24 port 443, mode auto, threshold 40, threshold-bytes 100000"
	[ "$(fs_sc -j rule show | jq -c '.[] | select(.name == "web")')" = \
	  '{"name":"web","prefix":"10.77.2.0/24","port":443,"mode":"auto","threshold":40,"threshold_bytes":100000}' ]
	[ "$(fs_sc -j rule show | jq -c '.[] | select(.name == "bulk")')" = \
	  '{"name":"bulk","prefix":"fd77:2::/64","port":null,"mode":"long","threshold":null,"threshold_bytes":null}' ]
	[ "$(fs_sc -j status | jq -c '.config | [.rules_ipv4, .rules_ipv6]')" = "[3,1]" ]
	fs_sc status | grep -q 'rules: ipv4 3, ipv6 1$'
	fs_sc stats --prometheus | grep -q '^flowsplit_rules 4$'
	run fs_sc rule del lan
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(fs_sc -j rule show | jq -r '[.[].name] | join(",")')" = bulk,peer,web ]
	fs_sc rule del bulk
	[ "$(fs_sc -j status | jq -c '.config | [.rules_ipv4, .rules_ipv6]')" = "[2,0]" ]
	# a rule can take back a deleted one's prefix and port
	fs_sc rule add lan2 --prefix 10.77.2.0/24 --mode short
	[ "$(fs_sc -j rule show | jq length)" -eq 3 ]
}

@test "rule help: the options of rule add, the actions of rule" {
	run "$SPLITCTL" rule -h
	[ "$status" -eq 0 ]
	[[ "$output" == *"add "*"del "*"show "* ]]
	run "$SPLITCTL" rule add -h
	[ "$status" -eq 0 ]
	for o in --prefix --port --mode --threshold --threshold-bytes; do
		[[ "$output" == *"$o "* ]]
	done
	run "$SPLITCTL" set -h
	[[ "$output" == *"threshold-bytes N"* ]]
	[[ "$output" == *"reshort-gap MS"* ]]
}

@test "a rule 'long' for the server's prefix and port: its flow is long from the first packet" {
	fs_sc attach rc --threshold 10
	fs_sc rule add bulk --prefix 10.77.2.0/24 --port 5001 --mode long
	transfer 300000 5001
	[ "$(flow_field 5001 class)" = long ]
	[ "$(fs_stat rule_matches)" -eq 1 ]
	[ "$(fs_stat flows_promoted)" -eq 0 ]
	# every packet long but the pure ACKs, which ack-short keeps short
	[ "$(fs_stat packets_short)" -eq "$(fs_stat acks_short)" ]
	[ "$(fs_stat packets_long)" -gt 0 ]
	# another port: no rule, the global threshold
	transfer 300000 5002
	[ "$(flow_field 5002 class)" = long ]
	[ "$(fs_stat rule_matches)" -eq 1 ]
	[ "$(fs_stat flows_promoted)" -eq 1 ]
	[ "$(fs_stat flows_promoted_packets)" -eq 1 ]
}

@test "a rule 'short' keeps a bulk transfer short" {
	fs_sc attach rc --threshold 10
	fs_sc rule add rpc --prefix 10.77.2.1 --port 5003 --mode short
	transfer 300000 5003
	[ "$(flow_field 5003 class)" = short ]
	[ "$(flow_field 5003 packets)" -gt 10 ]
	[ "$(fs_stat packets_long)" -eq 0 ]
}

@test "threshold-bytes: a flow turns long by its payload bytes, counted by cause" {
	fs_sc attach rc --threshold 1000000 --threshold-bytes 20000
	# no re-short: a sender that pauses on a loaded machine with every
	# byte acknowledged starts a message, and the flow counts again
	fs_sc set reshort off
	[ "$(fs_sc -j status | jq .config.threshold_bytes)" -eq 20000 ]
	transfer 200000 5004
	[ "$(flow_field 5004 class)" = long ]
	[ "$(flow_field 5004 payload_bytes)" -eq 200000 ]
	[ "$(fs_stat flows_promoted_bytes)" -eq 1 ]
	[ "$(fs_stat flows_promoted_packets)" -eq 0 ]
	fs_sc stats --prometheus | grep -q '^flowsplit_threshold_bytes 20000$'
	fs_sc stats --prometheus | grep -q '^flowsplit_flows_promoted_by_bytes_total 1$'
}

@test "reshort-gap: set, shown, checked against idle-timeout" {
	fs_sc attach rc --reshort-gap 50
	[ "$(fs_sc -j status | jq .config.reshort_gap_ms)" -eq 50 ]
	fs_sc set reshort-gap 200 idle-timeout 10
	fs_sc status | grep -q 'reshort-gap 200 ms'
	fs_sc stats --prometheus | grep -q '^flowsplit_reshort_gap_seconds 0.2'
	BEFORE=$(state)
	expect 2 "reshort-gap 10000 ms is not shorter than idle-timeout 10 s" -- fs_sc set reshort-gap 10000
	expect 2 "reshort-gap 200 ms is not shorter than idle-timeout 0.2 s" -- fs_sc set idle-timeout 0.2
	fs_sc set reshort-gap 0
	fs_sc status | grep -q 'reshort-gap 0 ms (off)'
}

@test "rule changes keep the flows: entries, counts and classes untouched" {
	fs_sc attach rc --threshold 1000
	transfer 100000 5005
	before=$(fs_sc -j flows | jq -c '[.[] | {dport, packets, bytes, class}]')
	[ "$(echo "$before" | jq length)" -eq 1 ]
	fs_sc rule add bulk --prefix 10.77.2.0/24 --mode long
	[ "$(fs_sc -j flows | jq -c '[.[] | {dport, packets, bytes, class}]')" = "$before" ]
	fs_sc rule del bulk
	[ "$(fs_sc -j flows | jq -c '[.[] | {dport, packets, bytes, class}]')" = "$before" ]
	[ "$(fs_stat rule_matches)" -eq 0 ]
}

# ---- bad input: exit code, one line, nothing changed ------------------------
# The cases below share one instance, built once for the file (an attach
# takes a second here, a case a fraction of one): rules_setup() points a
# case at it, after checking that it is as built (rebuilt otherwise: a
# case that failed may have changed it), so no case depends on another.
# Every other test has a topology of its own (lib/router's setup()).

# rules_fixture: the instance of the bad-input cases: one flow, one rule
rules_fixture() {
	fs_sc attach rc >/dev/null
	transfer 20000 5006
	fs_sc rule add web --prefix 10.77.0.0/16 --port 443 --threshold 5
}

# rules_fixture_state: what a case must not have changed, as state()
# without the flows (no case sends or flushes, but the kernel may send a
# packet of its own between two cases)
rules_fixture_state() {
	fs_sc -j rule show
	fs_sc -j status | jq -c '{config, ifs: [.interfaces[] | {name, hook, mode}]}'
	fs_sc route show
}

setup_file() {
	local BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR D=$BATS_FILE_TMPDIR
	fs_router_setup_file
	rules_fixture
	export RULES_C=$C RULES_R=$R RULES_S=$S RULES_BPF=$BPF RULES_SC=$SC RULES_STATE
	RULES_STATE=$(rules_fixture_state)
}

teardown_file() {
	C=$RULES_C R=$RULES_R S=$RULES_S BPF=$RULES_BPF SC=$RULES_SC
	fs_router_teardown_file
}

rules_setup() {
	C=$RULES_C R=$RULES_R S=$RULES_S BPF=$RULES_BPF SC=$RULES_SC
	fs_router_recheck "$RULES_STATE" rules_fixture_state rules_fixture
	BEFORE=$(state)
}

@test "rule add: duplicate name" {
	rules_setup
	expect 2 "rule 'web' already exists" -- fs_sc rule add web --prefix 10.9.0.0/16
}
@test "rule add: same prefix and port as another rule (overlap)" {
	rules_setup
	expect 2 "rule 'web2' overlaps rule 'web': both match prefix 10.77.0.0/16 and port 443" -- fs_sc rule add web2 --prefix 10.77.0.0/16 --port 443 --mode long
}
@test "rule add: bad prefixes" {
	rules_setup
	for p in 10.77.0.0/33 10.77.1.0/16 300.1.1.1 fd00::/129 fd00::1/64 10.77.0.0/ nonsense; do
		expect 2 "--prefix: invalid prefix '$p': accepted: an IPv4 or IPv6 address" -- fs_sc rule add x --prefix "$p"
	done
	expect 2 "--prefix: invalid prefix ''" -- fs_sc rule add x --prefix ''
}
@test "rule add: port 0, 65536, not a number" {
	rules_setup
	for p in 0 65536 https -1; do
		expect 2 "--port: invalid port '$p': accepted: an integer 1..65535" -- fs_sc rule add x --prefix 10.9.0.0/16 --port "$p"
	done
}
@test "rule add: unknown mode" {
	rules_setup
	expect 2 "--mode: invalid value 'medium': accepted: auto, short, long" -- fs_sc rule add x --prefix 10.9.0.0/16 --mode medium
}
@test "rule add: a threshold with mode short or long" {
	rules_setup
	expect 2 "--threshold: only mode auto has thresholds; mode short" -- fs_sc rule add x --prefix 10.9.0.0/16 --mode short --threshold 5
	expect 2 "--threshold-bytes: only mode auto has thresholds; mode long" -- fs_sc rule add x --prefix 10.9.0.0/16 --mode long --threshold-bytes 5000
}
@test "rule add: thresholds out of range" {
	rules_setup
	expect 2 "--threshold-bytes: invalid value '0': accepted: an integer 1..4000000000" -- fs_sc rule add x --prefix 10.9.0.0/16 --threshold-bytes 0
	expect 2 "--threshold: invalid value '1000000001'" -- fs_sc rule add x --prefix 10.9.0.0/16 --threshold 1000000001
}
@test "rule add: no prefix, no name, bad name, extra argument" {
	rules_setup
	expect 2 "--prefix is required" -- fs_sc rule add x
	expect 2 "expected a rule name" -- fs_sc rule add --prefix 10.9.0.0/16
	expect 2 "invalid rule name 'a b'" -- fs_sc rule add 'a b' --prefix 10.9.0.0/16
	expect 2 "invalid rule name '$(printf 'n%.0s' {1..32})'" -- fs_sc rule add "$(printf 'n%.0s' {1..32})" --prefix 10.9.0.0/16
	expect 2 "unexpected argument 'more'" -- fs_sc rule add x more --prefix 10.9.0.0/16
}
@test "rule del of an unknown name; unknown rule action" {
	rules_setup
	expect 1 "no rule 'nosuch'" -- fs_sc rule del nosuch
	expect 2 "expected a rule name" -- fs_sc rule del
	expect 2 "unknown action 'list': accepted: add, del, show" -- fs_sc rule list
}
@test "set: threshold-bytes and reshort-gap out of range" {
	rules_setup
	expect 2 "threshold-bytes: invalid value '4000000001': accepted: an integer 0..4000000000" -- fs_sc set threshold-bytes 4000000001
	expect 2 "reshort-gap: invalid value '-1'" -- fs_sc set reshort-gap -1
	expect 2 "reshort-gap: invalid value '0.5'" -- fs_sc set threshold 3 reshort-gap 0.5
}
@test "rule commands without an instance" {
	run fs_sc rule show
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"nothing attached"* ]]
	run fs_sc rule add x --prefix 10.9.0.0/16
	[ "$status" -eq 1 ]
	[[ "$output" == *"nothing attached"* ]]
}

# ---- config files -----------------------------------------------------------

@test "check: [rule NAME] sections validated like rule add" {
	h='[splitter]\ninterfaces = rc\n'
	printf "$h[rule a]\nprefix = 10.0.0.0/33\n" | bad_conf 4 "[rule a]: prefix: invalid prefix '10.0.0.0/33'"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\nport = 0\n" | bad_conf 5 "[rule a]: port: invalid port '0'"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\nport = 65536\n" | bad_conf 5 "[rule a]: port: invalid port '65536'"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\nmode = medium\n" | bad_conf 5 "[rule a]: mode: invalid value 'medium'"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\ncolour = red\n" | bad_conf 5 "[rule a]: unknown key 'colour': accepted: prefix, port, mode, threshold, threshold-bytes"
	printf "$h[rule a b]\nprefix = 10.0.0.0/8\n" | bad_conf 4 "[rule a b]: invalid rule name"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\n[rule b]\nport = 1\n[rule a]\nport = 2\n" | bad_conf 7 "[rule a] given twice (first at line 3): accepted: one section per name"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\nmode = short\nthreshold = 4\n" | bad_conf - "[rule a]: threshold: only mode auto has thresholds"
	printf "$h[rule a]\nport = 80\n" | bad_conf - "[rule a]: prefix is required"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\n[rule b]\nprefix = 10.0.0.0/8\n" | bad_conf - "[rule b]: rule 'b' overlaps rule 'a'"
	printf "$h[rules]\nprefix = 10.0.0.0/8\n" | bad_conf 4 "unknown section '[rules]'"
	printf "$h[rule a]\nprefix = 10.0.0.0/8\nport = 1\nport = 2\n" | bad_conf 6 "[rule a]: port: given twice"
}

@test "check: more than 1024 rules of one family" {
	{
		printf '[splitter]\ninterfaces = rc\n'
		for i in $(seq 0 1024); do
			printf '[rule r%d]\nprefix = 10.%d.%d.0/24\n' "$i" $((i / 256)) $((i % 256))
		done
	} | bad_conf - "[rule r1024]: too many IPv4 rules: accepted: at most 1024"
}

@test "check: the example config's rules are valid" {
	sed -e 's/^interfaces = .*/interfaces = lo/' -e '/^\[tunnel /,/^# Rules:/d' \
		"$FS_ROOT/loader/flowsplit.conf.example" >"$D/ok.conf"
	[ "$(grep -c '^\[rule ' "$D/ok.conf")" -eq 2 ]
	run "$SPLITCTL" check -c "$D/ok.conf"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "apply: the file's rules replace the live ones; a file without rules has none" {
	fs_sc attach rc
	fs_sc rule add byhand --prefix 10.99.0.0/16
	printf '[splitter]\ninterfaces = rc\nthreshold-bytes = 30000\nreshort-gap = 100\n[rule a]\nprefix = 10.77.2.0/24\nmode = long\n[rule b]\nprefix = fd77:2::/64\nport = 443\nthreshold = 3\n' >"$D/r.conf"
	run fs_sc apply -c "$D/r.conf"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j rule show | jq -r '[.[].name] | join(",")')" = a,b ]
	[ "$(fs_sc -j status | jq -c '.config | [.threshold_bytes, .reshort_gap_ms, .rules_ipv4, .rules_ipv6]')" = "[30000,100,1,1]" ]
	# again: nothing changes
	fs_sc apply -c "$D/r.conf"
	[ "$(fs_sc -j rule show | jq -r '[.[].name] | join(",")')" = a,b ]
	# declarative: no [rule NAME] section, no rules
	printf '[splitter]\ninterfaces = rc\nthreshold = 7\n' >"$D/n.conf"
	fs_sc apply -c "$D/n.conf"
	[ "$(fs_sc -j rule show)" = "[]" ]
	[ "$(fs_sc -j status | jq -c '.config | [.threshold, .threshold_bytes, .reshort_gap_ms, .rules_ipv4, .rules_ipv6]')" = "[7,0,0,0,0]" ]
}

@test "apply: a bad rule, or a later failure, changes nothing" {
	fs_sc attach rc
	fs_sc rule add keep --prefix 10.99.0.0/16
	BEFORE=$(state)
	printf '[splitter]\ninterfaces = rc\nthreshold = 9\n[rule a]\nprefix = 10.77.2.0/24\n[rule b]\nprefix = 10.77.2.0/24\n' >"$D/bad.conf"
	expect 2 "[rule b]: rule 'b' overlaps rule 'a'" -- fs_sc apply -c "$D/bad.conf"
	# routes over tunnel devices that are down: refused before the rules
	# (or anything else) change
	ip -n "$R" link add fstrd0 type veth peer fstrd1
	printf '[splitter]\ninterfaces = rc\nthreshold = 9\n[rule a]\nprefix = 10.77.2.0/24\n[route]\nmode = split\nshort-dev = fstrd0\nlong-dev = fstrd1\nprefix = 10.77.2.0/24\n' >"$D/late.conf"
	run fs_sc apply -c "$D/late.conf"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *fstrd0* ]]
	[ "$(state)" = "$BEFORE" ]
}

@test "run: rules from the file on start, replaced on SIGHUP, a bad reload keeps them" {
	fs_sc attach rc
	printf '[splitter]\ninterfaces = rc\n[rule a]\nprefix = 10.77.2.0/24\nmode = long\n' >"$D/agent.conf"
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF run -c $D/agent.conf --interval 0.2 --health no 2>$D/agent.log"
	agent=$!
	fs_wait_for 30 sh -c "[ \"\$($SC -j rule show | jq -r '[.[].name] | join(\",\")')\" = a ]"
	printf '[splitter]\ninterfaces = rc\n[rule b]\nprefix = fd77:2::/64\nmode = short\n' >"$D/agent.conf"
	kill -HUP "$agent"
	fs_wait_for 30 sh -c "[ \"\$($SC -j rule show | jq -r '[.[].name] | join(\",\")')\" = b ]"
	printf '[splitter]\ninterfaces = rc\n[rule c]\nprefix = 10.0.0.1/8\n' >"$D/agent.conf"
	kill -HUP "$agent"
	fs_wait_for 30 grep -q "reload: .*agent.conf:4: \[rule c\]: prefix: invalid prefix '10.0.0.1/8'.*keeping the running config" "$D/agent.log"
	[ "$(fs_sc -j rule show | jq -r '[.[].name] | join(",")')" = b ]
	kill -TERM "$agent"
	wait "$agent" || true
}

@test "rule add and del under -j: the rule changed and the count, as one document" {
	fs_sc attach rc
	run fs_sc -j rule add bk --prefix 10.9.0.0/16 --mode long
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.added == {"name":"bk","prefix":"10.9.0.0/16","port":null,"mode":"long","threshold":null,"threshold_bytes":null} and .rules == 1'
	run fs_sc -j rule del bk
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.removed.name == "bk" and .rules == 0'
	# text: silent, as before
	run fs_sc rule add bk --prefix 10.9.0.0/16
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# an error under -j: one JSON object on stderr, the same exit code
	run fs_sc -j rule del nosuch
	[ "$status" -eq 1 ]
	echo "$output" | jq -e '.level == "error" and .message == "no rule '"'nosuch'"' (see '"'splitctl rule show'"')"'
}
