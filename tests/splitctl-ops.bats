#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# splitctl operations: idle sweep, the agent, config files, and the man page
# and completion against the option table.
FS_PREFIX=fstc
load lib/common
load lib/router

flow_exists() { # PORT
	[ "$(fs_sc -j flows | jq "[.[] | select(.dport == $1)] | length")" -eq 1 ]
}

# complete WORDS...: what the bash completion offers for "splitctl WORDS..."
# (the last word is the one being completed), sorted, space separated
complete_words() {
	PATH=$FS_BUILD:$PATH bash -c "
		_init_completion() { cur=\${COMP_WORDS[COMP_CWORD]}; prev=\${COMP_WORDS[COMP_CWORD-1]}; words=(\"\${COMP_WORDS[@]}\"); cword=\$COMP_CWORD; }
		_filedir() { :; }
		source '$FS_ROOT/loader/splitctl.bash-completion'
		COMP_WORDS=(splitctl $*); COMP_CWORD=$#; _splitctl
		printf '%s\n' \"\${COMPREPLY[@]}\"" | sort | tr '\n' ' '
}

@test "gc removes an expired flow and keeps a live one" {
	fs_sc attach rc --idle-timeout 1 --flows "$FS_TEST_FLOWS"
	fs_sink 6001 /dev/null
	fs_sink 6002 /dev/null
	ip netns exec "$C" socat -u OPEN:/dev/null TCP:10.77.2.1:6001 # idle from now on
	mkfifo "$D/fifo"
	fs_bg ip netns exec "$C" socat -u PIPE:"$D/fifo" TCP:10.77.2.1:6002
	# keep 6002 busy until the end of the test (also while the checks
	# below run on a loaded machine), let 6001 age past the timeout
	fs_bg sh -c "while :; do echo x; sleep 0.1; done >'$D/fifo'"
	fs_wait_for 5 flow_exists 6002
	flow_exists 6001
	fs_wait_for 10 sh -c "$SC -j flows | jq -e '.[] | select(.dport == 6001) | .idle_s > 1.2' >/dev/null"
	run fs_sc -j gc
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .flows_removed)" -eq 1 ]
	! flow_exists 6001 || false
	flow_exists 6002
	[ "$(fs_stat flows_swept)" -eq 1 ]
	# nothing more to remove right away
	[ "$(fs_sc -j gc | jq .flows_removed)" -eq 0 ]
}

@test "run: textfile and HTTP metrics, SIGTERM exits 0 and leaves the datapath" {
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.2 \
		--textfile "$D/flowsplit.prom" --listen 127.0.0.1:9434
	agent=$!
	fs_wait_for 5 test -s "$D/flowsplit.prom"
	promtool check metrics <"$D/flowsplit.prom"
	fs_wait_for 5 ip netns exec "$R" curl -sf http://127.0.0.1:9434/metrics -o "$D/http.prom"
	promtool check metrics <"$D/http.prom"
	grep -q flowsplit_flows_new_total "$D/http.prom"
	run ip netns exec "$R" curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9434/other
	[ "$output" = 404 ]
	kill -TERM "$agent"
	rc=0
	wait "$agent" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(fs_sc -j status | jq '.interfaces | length')" -eq 1 ]
}

@test "run: kill -9 leaves the datapath counting" {
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.1
	agent=$!
	sleep 0.3
	kill -9 "$agent"
	fs_sink 6004 /dev/null
	head -c 10000 /dev/zero | ip netns exec "$C" socat -u - TCP:10.77.2.1:6004
	[ "$(fs_stat packets_short)" -gt 0 ]
}

@test "run sweeps idle flows" {
	fs_sc attach rc --idle-timeout 0.2 --flows "$FS_TEST_FLOWS"
	fs_sink 6005 /dev/null
	ip netns exec "$C" socat -u OPEN:/dev/null TCP:10.77.2.1:6005
	flow_exists 6005
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.1
	fs_wait_for 5 sh -c "[ \$($SC -j stats | jq .flows_swept) -ge 1 ]"
	! flow_exists 6005 || false
}

@test "run: a non-loopback listen address without a web config is refused" {
	run fs_sc run --listen 0.0.0.0:9434
	[ "$status" -eq 2 ]
	[[ "$output" == *"listen: '0.0.0.0:9434' is not a loopback address: serving metrics beyond this host needs --web-config FILE"* ]]
	run fs_sc run --listen 0.0.0.0
	[ "$status" -eq 2 ]
	[[ "$output" == *"listen: invalid address '0.0.0.0': accepted: an address and port"* ]]
}

@test "check: the example config (with its interface renamed) is valid" {
	# its tunnels and route need its underlays: the splitter part alone
	sed -e 's/^interfaces = .*/interfaces = lo/' -e '/^\[tunnel /,/^# Rules:/d' \
		"$FS_ROOT/loader/flowsplit.conf.example" >"$D/ok.conf"
	run "$SPLITCTL" check -c "$D/ok.conf"
	[ "$status" -eq 0 ]
}

@test "check: bad config files name the line and the problem" {
	printf '[splitter]\ninterfaces = rc\nthreshold = lots\n' | bad_conf 3 "threshold: invalid value 'lots'"
	printf '# c\n[splitter]\ninterfaces = rc\n\ndscp-long = 99\n' | bad_conf 5 "dscp-long: invalid DSCP '99'"
	printf '[splitter]\ninterfaces = rc\ncolour = blue\n' | bad_conf 3 "unknown setting 'colour'"
	printf '[splitter]\ninterfaces = rc nosuch9\n' | bad_conf 2 "interfaces: interface 'nosuch9' does not exist"
	printf '[spliter]\ninterfaces = rc\n' | bad_conf 2 "unknown section '[spliter]'"
	printf '[splitter]\ninterfaces = rc\nthis is not ini\n' | bad_conf 3 "syntax error"
	printf '[splitter]\ninterfaces = rc\n[agent]\nlisten = 10.0.0.1\n' | bad_conf 4 "listen: invalid address"
	printf '[splitter]\ninterfaces = rc\nmode = fast\n' | bad_conf 3 "mode: invalid value 'fast'"
	printf '[splitter]\ninterfaces = rc\nhook = bpf\n' | bad_conf 3 "hook: invalid value 'bpf'"
	run ip netns exec "$R" "$SPLITCTL" check -c "$D/missing.conf"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing.conf: cannot read: No such file or directory: write one (a whole router: flowsplit.conf.example, docs/config.md) and check it with 'splitctl check -c FILE'"* ]]
}

@test "apply: attaches what the file says; a bad file changes nothing" {
	printf '[splitter]\ninterfaces = rc rs\nthreshold = 9\ndscp-long = 3\n' >"$D/a.conf"
	run fs_sc apply -c "$D/a.conf"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '[.interfaces[].name] | sort | join(",")')" = rc,rs ]
	[ "$(fs_sc -j status | jq '.config.threshold')" -eq 9 ]
	[ "$(fs_sc -j status | jq '.config.dscp_long')" -eq 3 ]
	before=$(fs_sc -j status)
	printf '[splitter]\ninterfaces = rc\nthreshold = -1\n' >"$D/b.conf"
	run fs_sc apply -c "$D/b.conf"
	[ "$status" -eq 2 ]
	[ "$(fs_sc -j status)" = "$before" ]
}

@test "apply: spill and dscp-spill from the [splitter] section; apply is declarative for them too" {
	printf '[splitter]\ninterfaces = rc\nspill = no\ndscp-spill = 3\n' >"$D/s.conf"
	run fs_sc apply -c "$D/s.conf"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -c '.config | [.spill, .dscp_spill]')" = '[false,3]' ]
	# keys left out take their defaults again
	printf '[splitter]\ninterfaces = rc\n' >"$D/d.conf"
	fs_sc apply -c "$D/d.conf"
	[ "$(fs_sc -j status | jq -c '.config | [.spill, .dscp_spill]')" = '[true,2]' ]
	printf '[splitter]\ninterfaces = rc\ndscp-spill = 9\n' | bad_conf - "dscp-spill 9 and dscp-long 1 look alike to a tos rule selector"
	printf '[splitter]\ninterfaces = rc\nspill = on\n' | bad_conf 3 "spill: invalid value 'on': accepted: yes, no, 1, 0"
}

@test "apply: hook and mode from the [splitter] section, checked as on the command line" {
	printf '[splitter]\ninterfaces = rc\nhook = xdp\nmode = generic\n' >"$D/x.conf"
	run fs_sc apply -c "$D/x.conf"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '.interfaces[0] | "\(.hook) \(.mode) \(.gro_undercount)"')" = "xdp generic true" ]
	fs_sc detach --all
	printf '[splitter]\ninterfaces = rc\nhook = tc\n' >"$D/t.conf"
	run fs_sc apply -c "$D/t.conf"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq -r '.interfaces[0] | "\(.hook) \(.mode)"')" = "tc tcx" ]
	before=$(fs_sc -j status)
	printf '[splitter]\ninterfaces = rc\nhook = tc\nmode = native\n' >"$D/m.conf"
	run fs_sc apply -c "$D/m.conf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"m.conf: [splitter]: mode is an XDP attach mode: it cannot be combined with hook = tc"* ]]
	[ "$(fs_sc -j status)" = "$before" ]
}

@test "man page and bash completion cover exactly the option table" {
	table=$("$SPLITCTL" help-table)
	# lines: "PATH" for every command path ("route up"), "PATH --OPTION"
	# for its options ("-" for the global options)
	opts=$(echo "$table" | awk '$NF ~ /^--/ {print $NF}' | sort -u)
	paths=$(echo "$table" | awk '$NF !~ /^--/')
	[ "$(echo "$paths" | wc -l)" -ge 19 ]	# 13 commands, 6 sub-commands
	for opt in $opts; do
		grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$FS_ROOT/loader/splitctl.8" || { echo "man: $opt"; false; }
	done
	while read -r path; do
		for w in $path; do
			grep -q "\\\\fB$w\\\\fR" "$FS_ROOT/loader/splitctl.8" || { echo "man: $path ($w)"; false; }
		done
		# the completion offers exactly the options of this path (and
		# the global ones, accepted after a command too)...
		subs=$(echo "$paths" | awk -v p="$path" 'index($0, p " ") == 1 && NF == split(p, x) + 1 {print $NF}' | sort | tr '\n' ' ')
		globals=$(echo "$table" | awk '$1 == "-" && $2 != "--help" {print $2}')
		[ -n "$subs" ] && globals=
		want=$( (echo "$table" | awk -v p="$path" '$NF ~ /^--/ { o = $NF; $NF = ""; sub(/ $/, ""); if ($0 == p) print o }'; echo "$globals") | grep . | sort | tr '\n' ' ')
		got=$(complete_words $path --)
		[ "$got" = "$want" ] || { echo "completion '$path --': got '$got' want '$want'"; false; }
		# ...and, for a command with sub-commands, exactly those
		if [ -n "$subs" ]; then
			got=$(complete_words $path "''")
			[ "$got" = "$subs" ] || { echo "completion '$path': got '$got' want '$subs'"; false; }
		fi
	done <<<"$paths"
}

@test "config keys: every key of every section, from the tables that parse it, is in the man page" {
	keys=$("$SPLITCTL" help-keys)
	[ "$(echo "$keys" | wc -l)" -ge 40 ]
	table=$("$SPLITCTL" help-table)
	while IFS=$'\t' read -r _ section key _; do
		if [ "$section" = "[route]" ]; then
			# "the long options of route up without the dashes"
			echo "$table" | grep -qx -- "route up --$key" || { echo "route up --$key"; false; }
			continue
		fi
		# the section's paragraph of the man page names the key
		awk -v s=".B ${section%% *}" 'index($0, s) == 1 { on = 1; next } /^\.TP/ { on = 0 } on' \
			"$FS_ROOT/loader/splitctl.8" | grep -qF -- "\\fB$(echo "$key" | sed 's/-/\\-/g')\\fR" ||
			{ echo "man: $section $key"; false; }
	done <<<"$keys"
}

@test "run: logs start, listen and exit, stamped off the journal; a failing textfile is named, and its end logged" {
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	mkdir "$D/tf"
	fs_bg ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 0.1 \
		--textfile "$D/tf/x/m.prom" --listen 127.0.0.1:19435 --health no 2>"$D/log"
	pid=$!
	fs_wait_for 30 grep -q "run: metrics textfile '$D/tf/x/m.prom': cannot write it (No such file or directory); retrying every 0.1 s" "$D/log"
	mkdir "$D/tf/x"
	fs_wait_for 10 grep -q 'run: sweep and metrics work again, after [0-9]* failed attempts in [0-9]* s' "$D/log"
	[ -s "$D/tf/x/m.prom" ]
	kill -TERM "$pid"
	fs_wait_for 10 grep -q 'run: exiting: stopped by a signal' "$D/log"
	cat "$D/log"
	grep -q 'splitctl: run: listening on 127.0.0.1:19435 (GET /metrics)' "$D/log"
	grep -q "splitctl: run: started (pid [0-9]*, instance '$BPF', config none)" "$D/log"
	# the failure once, not every 0.1 s
	[ "$(grep -c 'cannot write it' "$D/log")" -eq 1 ]
	# stderr is a file, not the journal: every line stamped
	! grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z splitctl: ' "$D/log" || false
	# $JOURNAL_STREAM naming stderr (as systemd sets it): no stamps
	ip netns exec "$R" sh -c 'exec 2>"$1"; JOURNAL_STREAM=$(stat -c %d:%i "$1") exec timeout -s TERM 2 "$2" --pin-dir "$3" run --interval 0.1 --health no' \
		_ "$D/log2" "$SPLITCTL" "$BPF" || true
	cat "$D/log2"
	grep -q '^splitctl: run: started' "$D/log2"
	grep -q '^splitctl: run: exiting: stopped by a signal' "$D/log2"
}
