#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The agent's metrics endpoint under many idle and slowloris connections:
# a scrape is still answered.
FS_PREFIX=fstm
load lib/common
load lib/router

# the agent is stopped with SIGTERM, so that it removes its lock file
# (fs_teardown's kill -9 would leave it, /run/flowsplit residue)
teardown() {
	if [ -n "${AGENT:-}" ]; then
		kill -TERM "$AGENT" 2>/dev/null
		fs_wait_for 5 eval '! kill -0 "$AGENT" 2>/dev/null' || true
	fi
	exec 7>&- 2>/dev/null || true
	fs_sc route down >/dev/null 2>&1 || true
	fs_teardown
}

# hold.py PORT N MODE: N connections to 127.0.0.1:PORT kept open; MODE idle
# (nothing sent) or slow (a request line, then one header line every 3 s,
# never the end of the headers). Prints "ready N" once all are open.
write_client() {
	cat >"$D/hold.py" <<'PY'
import socket, sys, time
port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if mode == "slow":
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
    socks.append(s)
print("ready", len(socks), flush=True)
while True:
    time.sleep(3)
    if mode == "slow":
        for s in socks:
            try:
                s.sendall(b"X-a: b\r\n")
            except OSError:
                pass
PY
}

scrape() {
	ip netns exec "$R" curl -sf --max-time 3 http://127.0.0.1:9438/metrics -o "$D/m" &&
		grep -q flowsplit_flows_new_total "$D/m"
}

@test "run: a scrape is answered beside 500 idle and 100 slowloris connections" {
	fs_sc attach rc
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF run --interval 1 --listen 127.0.0.1:9438 2>$D/agent.err"
	AGENT=$!	# sh, ip netns exec, then splitctl: one process (exec)
	fs_wait_for 5 scrape
	write_client
	fs_bg sh -c "exec ip netns exec $R /usr/bin/python3 $D/hold.py 9438 500 idle >$D/idle"
	fs_bg sh -c "exec ip netns exec $R /usr/bin/python3 $D/hold.py 9438 100 slow >$D/slow"
	fs_wait_for 20 grep -q 'ready 500' "$D/idle"
	fs_wait_for 20 grep -q 'ready 100' "$D/slow"
	# at once, and after the idle timeout (the slowloris ones stay)
	scrape
	sleep 6
	scrape
	cat "$D/agent.err"
}
