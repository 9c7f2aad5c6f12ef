#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# splitctl against hostile names and clients: JSON and Prometheus output for
# interfaces named with quotes and backslashes, bounded argv handling, the
# agent's textfile, SIGHUP and its HTTP endpoint under slow clients.
FS_PREFIX=fstc
load lib/common
load lib/router

setup() {
	fs_router_setup
	D=$BATS_TEST_TMPDIR
}

teardown() {
	fs_teardown
}

# odd_iface NAME PEER: a veth pair inside the router namespace, up
odd_iface() {
	ip -n "$R" link add "$1" type veth peer name "$2"
	ip -n "$R" link set "$1" up
	ip -n "$R" link set "$2" up
}

# agent ARGS...: "splitctl run" in the router namespace, stderr to $D/agent.err
agent() {
	fs_bg sh -c 'exec ip netns exec "$0" "$@" 2>"'"$D"'/agent.err"' \
		"$R" "$SPLITCTL" --pin-dir "$BPF" run "$@"
	AGENT=$!
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
	timeout 3 ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" -j stats --watch 0.2 >"$D/watch" || true
	[ "$(wc -l <"$D/watch")" -ge 2 ]
	while read -r line; do echo "$line" | jq -e . >/dev/null; done <"$D/watch"
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
