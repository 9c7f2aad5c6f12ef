#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Hostile input and clients: an option repeated past any fixed array,
# config files past the INI reader's limits (long lines, hex, a directory,
# a FIFO), a prefix list longer than its buffer, an empty table under
# UBSan, and the agent's textfile, SIGHUP and HTTP endpoint under planted
# links and slow clients.
FS_PREFIX=fstc
load lib/common
load lib/router

# agent ARGS...: "splitctl run" in the router namespace, stderr to $D/agent.err
agent() {
	fs_bg sh -c 'exec ip netns exec "$0" "$@" 2>"'"$D"'/agent.err"' \
		"$R" "$SPLITCTL" --pin-dir "$BPF" run "$@"
	AGENT=$!
}

# write_client: $D/client.py, a client of 127.0.0.1:9435 (run it in $R)
write_client() {
	cat >"$D/client.py" <<'EOF'
import socket, sys, time
mode = sys.argv[1]
def conn():
    s = socket.create_connection(("127.0.0.1", 9435), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
def read_all(s):
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            return data
        data += b
if mode == "split":
    # one request in two TCP segments, 300 ms apart
    s = conn()
    s.sendall(b"GET /met")
    time.sleep(0.3)
    s.sendall(b"rics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    r = read_all(s)
    assert r.startswith(b"HTTP/1.1 200"), r[:100]
    assert b"flowsplit_flows_new_total" in r
elif mode == "hold":
    # N idle connections, or N clients that send a request and never read,
    # held open until killed
    n, what = int(sys.argv[2]), sys.argv[3]
    socks = []
    for i in range(n):
        s = conn()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        if what == "noread":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
        socks.append(s)
    print("ready", flush=True)
    time.sleep(60)
EOF
}

# ---- item 8: the INI reader -------------------------------------------------------

# bad FILE-CONTENT LINE PATTERN: check --offline names FILE:LINE, exit 2
bad() {
	printf "$1" >"$D/bad.conf"
	run "$SPLITCTL" check --offline -c "$D/bad.conf"
	one_line 2 "$D/bad.conf:$2: $3"
}

@test "an option repeated past any fixed array (100 x -t) is taken once, the last value" {
	args=()
	for i in $(seq 100); do args+=(-t "$i"); done
	run fs_sc attach rc "${args[@]}"
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq .config.threshold)" -eq 100 ]
	run fs_sc attach rc -t 1 -t 2 -t 3 -t 4 -t 5
	[ "$status" -eq 0 ]
	[ "$(fs_sc -j status | jq .config.threshold)" -eq 5 ]
}

@test "flows on an empty table, under UBSan: no qsort(NULL, 0)" {
	[ -e /usr/lib/gcc/x86_64-linux-gnu/*/libubsan.so ] || skip "no libubsan"
	ub=$D/ubsan
	(cd "$FS_ROOT" && CFLAGS="-O1 -g -fsanitize=undefined -fno-sanitize-recover=all" \
		make -s BUILD="$ub" "$ub/splitctl" >"$D/build.log" 2>&1) || { cat "$D/build.log"; false; }
	fs_sc attach rc
	run ip netns exec "$R" "$ub/splitctl" --pin-dir "$BPF" -j flows
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "[]" ]
	run ip netns exec "$R" "$ub/splitctl" --pin-dir "$BPF" flows --sort bytes
	[ "$status" -eq 0 ]
}

@test "run: the textfile never follows a link planted at its temporary name" {
	fs_sc attach rc
	echo precious >"$D/victim"
	agent --interval 0.1 --textfile "$D/m.prom"
	fs_wait_for 5 test -s "$D/m.prom"
	# the temporary names the agent used before the fix: PATH.<pid>.tmp
	ln -s "$D/victim" "$D/m.prom.$AGENT.tmp"
	# three more writes (each one renames a new file over the target)
	for i in 1 2 3; do
		ino=$(stat -c %i "$D/m.prom")
		fs_wait_for 5 sh -c "[ \"\$(stat -c %i '$D/m.prom' 2>/dev/null)\" != $ino ]"
	done
	[ "$(cat "$D/victim")" = precious ]
	[ ! -L "$D/m.prom" ]
	promtool check metrics <"$D/m.prom"
}

@test "run: SIGHUP re-reads the config, all or nothing" {
	printf '[splitter]\ninterfaces = rc\nthreshold = 7\n' >"$D/a.conf"
	agent -c "$D/a.conf" --interval 0.1
	# (the first attach creates the 1 M-entry tables: seconds under load)
	fs_wait_for 30 sh -c "[ \"\$($SC -j status 2>/dev/null | jq .config.threshold)\" = 7 ]"
	printf '[splitter]\ninterfaces = rc rs\nthreshold = 9\n' >"$D/a.conf"
	kill -HUP "$AGENT"
	# the new threshold comes with rc's upgrade, before rs is attached
	fs_wait_for 30 sh -c "[ \"\$($SC -j status | jq -r '[.interfaces[].name] | sort | join(\",\")')\" = rc,rs ]"
	[ "$(fs_sc -j status | jq .config.threshold)" -eq 9 ]
	kill -0 "$AGENT"
	# an invalid file changes nothing, and the agent keeps running
	printf '[splitter]\ninterfaces = rc\nthreshold = lots\n' >"$D/a.conf"
	kill -HUP "$AGENT"
	fs_wait_for 5 grep -q "reload: .*threshold: invalid value 'lots'" "$D/agent.err"
	# a valid file that cannot be applied (the second interface is down)
	ip -n "$R" link set rs down
	printf '[splitter]\ninterfaces = rc rs\nthreshold = 11\n' >"$D/a.conf"
	kill -HUP "$AGENT"
	fs_wait_for 5 grep -q "reload: applying" "$D/agent.err"
	[ "$(fs_sc -j status | jq .config.threshold)" -eq 9 ]
	kill -0 "$AGENT"
	kill -TERM "$AGENT"
	rc=0
	wait "$AGENT" || rc=$?
	[ "$rc" -eq 0 ]
}

@test "run: HTTP metrics survive split requests, idle and non-reading clients" {
	fs_sc attach rc
	agent --interval 0.1 --textfile "$D/m.prom" --listen 127.0.0.1:9435
	write_client
	fs_wait_for 5 ip netns exec "$R" curl -sf -o /dev/null http://127.0.0.1:9435/metrics
	ip netns exec "$R" timeout 20 /usr/bin/python3 "$D/client.py" split
	# 10 idle connections, then a scrape
	fs_bg sh -c "exec ip netns exec $R /usr/bin/python3 $D/client.py hold 10 idle >$D/idle"
	fs_wait_for 5 grep -q ready "$D/idle"
	ip netns exec "$R" curl -sf --max-time 3 http://127.0.0.1:9435/metrics -o "$D/h1"
	grep -q flowsplit_flows_new_total "$D/h1"
	# clients that send requests and never read the answers
	fs_bg sh -c "exec ip netns exec $R /usr/bin/python3 $D/client.py hold 5 noread >$D/noread"
	fs_wait_for 5 grep -q ready "$D/noread"
	ip netns exec "$R" curl -sf --max-time 3 http://127.0.0.1:9435/metrics -o "$D/h2"
	grep -q flowsplit_flows_new_total "$D/h2"
	# and the sweep goes on: the textfile is rewritten meanwhile
	ino=$(stat -c %i "$D/m.prom")
	fs_wait_for 5 sh -c "[ \"\$(stat -c %i '$D/m.prom')\" != $ino ]"
	kill -0 "$AGENT"
}

@test "INI: a long comment stays a comment; a line over 4096 characters is an error" {
	# 199 characters of comment, then what inih read as a line of its own
	{ printf '[splitter]\ninterfaces = rc\n# '; head -c 197 /dev/zero | tr '\0' x; printf 'threshold = 7\n'; } >"$D/l.conf"
	run fs_sc apply -c "$D/l.conf"
	[ "$status" -eq 0 ]
	[ "$(config | jq .threshold)" -eq 20 ]
	{ printf '[splitter]\ninterfaces = rc\nthreshold = 7 ; '; head -c 4100 /dev/zero | tr '\0' x; printf '\n'; } >"$D/l.conf"
	run "$SPLITCTL" check --offline -c "$D/l.conf"
	one_line 2 "l.conf:3: line too long: at most 4096 characters"
}

@test "INI: line numbers after a syntax error, duplicates, hex, directory, FIFO" {
	bad '[splitter]\ninterfaces = rc\nthreshold = 3\nthreshold = 4\n' 4 "threshold: given twice (first on line 3)"
	bad '[splitter]\nthis is bad\ninterfaces = rc\nthreshold = x\n' 2 "syntax error"
	bad '[splitter]\ninterfaces = rc\n\n\nthreshold = x\n' 5 "threshold: invalid value 'x'"
	bad '[splitter]\ninterfaces = rc\n[agent]\ninterval = 0x10\n' 4 "interval: invalid value '0x10'"
	bad '[splitter\ninterfaces = rc\n' 1 "syntax error"
	run "$SPLITCTL" check -c "$D"
	one_line 1 "$D: cannot read: Is a directory"
	mkfifo "$D/fifo"
	run timeout 5 "$SPLITCTL" check -c "$D/fifo"
	one_line 1 "fifo: cannot read"
}

@test "route up: a prefix list over 1023 characters is refused, not cut" {
	tunnels
	long=$(for i in $(seq 0 90); do printf '64.0.%d.0/24 ' "$i"; done)
	[ "${#long}" -gt 1023 ]
	run fs_sc route up --mode split --short-dev ts --long-dev tl --prefix "$long"
	one_line 2 "--prefix: value of ${#long} characters: accepted: at most 1023"
	[ "$(fs_sc -j route show | jq '.rules | length')" -eq 0 ]
	run fs_sc route up --mode split --short-dev ts --long-dev tl --via-short "$long"
	one_line 2 "via-short: value of ${#long} characters"
}
