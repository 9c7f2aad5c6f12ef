#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# A central Prometheus scrapes the agent from another host: "run --listen"
# on the router's address with a web config (TLS + basic auth, the
# exporter-toolkit format), scraped with curl from the client namespace.
# Loopback without a web config as before; any other address without one
# refused; bad web configs refused with one line, nothing started.
FS_PREFIX=fstx
load lib/common
load lib/router

PORT=9441
ADDR=10.77.1.254	# the router's address towards $C

teardown() {
	if [ -n "${AGENT:-}" ]; then
		kill -TERM "$AGENT" 2>/dev/null
		fs_wait_for 5 eval '! kill -0 "$AGENT" 2>/dev/null' || true
	fi
	fs_sc route down >/dev/null 2>&1 || true
	fs_teardown
}

# bcrypt PASSWORD: a bcrypt hash, from whichever tool this machine has
bcrypt() {
	if command -v htpasswd >/dev/null; then
		htpasswd -nbBC 6 x "$1" | cut -d: -f2
	elif command -v mkpasswd >/dev/null; then
		mkpasswd -m bcrypt -R 6 "$1"
	else
		/usr/bin/python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=64)))' "$1"
	fi
}

# need_tools: openssl, curl, a bcrypt generator (else skip, saying which)
need_tools() {
	command -v openssl >/dev/null || skip "openssl is not installed (apt-get install openssl)"
	command -v curl >/dev/null || skip "curl is not installed"
	[ "$(bcrypt x | cut -c1-2)" = '$2' ] ||
		skip "no bcrypt generator: htpasswd (apache2-utils), mkpasswd (whois) or /usr/bin/python3's crypt"
}

# certs: a self-signed certificate for $ADDR in $D (cert.pem, key.pem)
certs() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$D/key.pem" -out "$D/cert.pem" -days 2 -subj /CN=flowsplit-test \
		-addext "subjectAltName=IP:$ADDR" 2>/dev/null
}

# web_config USER PASSWORD: $D/web.yml with TLS (relative paths) and USER
web_config() {
	cat >"$D/web.yml" <<EOF
# the exporter-toolkit's format
tls_server_config:
  cert_file: cert.pem
  key_file: "key.pem"
  min_version: TLS12
basic_auth_users:
  $1: '$(bcrypt "$2")'
EOF
}

# agent ARGS...: "run" in the router namespace, its stderr in $D/agent.err
agent() {
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL --pin-dir $BPF run --interval 1 --health no $* 2>$D/agent.err"
	AGENT=$!
}

# scrape [CURL ARGS...]: from $C over TLS, checked against our
# certificate; prints the HTTP status (000: no HTTP answer)
scrape() {
	ip netns exec "$C" curl -s --max-time 5 --cacert "$D/cert.pem" -o "$D/body" \
		-w '%{http_code}' "$@" "https://$ADDR:$PORT/metrics" || true
}

@test "remote scrape over TLS with basic auth: right password 200, wrong or none 401, plain HTTP refused" {
	need_tools
	certs
	web_config prometheus 's3cret!'
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	agent --listen 0.0.0.0:$PORT --web-config "$D/web.yml"
	fs_wait_for 10 eval '[ "$(scrape -u prometheus:s3cret!)" = 200 ]'
	promtool check metrics <"$D/body"
	grep -q '^flowsplit_flows_new_total ' "$D/body"
	# a float is the shortest that parses back: no more digits than
	# Python's repr() (shortest round-trip) of the same value
	grep -v '^#' "$D/body" | awk '{ print $NF }' | /usr/bin/python3 -c '
import sys
for v in sys.stdin.read().split():
    if v in ("NaN", "+Inf", "-Inf"): continue
    ours = len(v.split("e")[0].replace("-", "").replace(".", "").strip("0"))
    best = len(repr(float(v)).split("e")[0].replace("-", "").replace(".", "").strip("0"))
    assert ours <= max(best, 1), (v, repr(float(v)))'
	# the scrape is cached after bcrypt: a second one is answered too
	[ "$(scrape -u prometheus:s3cret!)" = 200 ]
	[ "$(scrape -u prometheus:wrong)" = 401 ]
	[ "$(scrape -u nobody:s3cret!)" = 401 ]
	[ "$(scrape)" = 401 ]
	ip netns exec "$C" curl -s --max-time 5 --cacert "$D/cert.pem" -D "$D/hdr" -o /dev/null \
		"https://$ADDR:$PORT/metrics" || true
	grep -qi '^WWW-Authenticate: Basic realm="flowsplit"' "$D/hdr"
	# an unknown path is still behind the password
	run ip netns exec "$C" curl -s --max-time 5 --cacert "$D/cert.pem" -o /dev/null -w '%{http_code}' \
		"https://$ADDR:$PORT/other"
	[ "$output" = 401 ]
	# plain HTTP gets no answer at all (the TLS handshake fails)
	run ip netns exec "$C" curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$ADDR:$PORT/metrics"
	[ "$status" -ne 0 ]
	[ "$output" = 000 ]
	# TLS 1.1 is refused (min_version TLS12)
	run ip netns exec "$C" curl -s --max-time 5 --cacert "$D/cert.pem" --tls-max 1.1 \
		-u prometheus:s3cret! -o /dev/null "https://$ADDR:$PORT/metrics"
	[ "$status" -ne 0 ]
}

@test "the TLS endpoint keeps its protections: a scrape beside 200 idle connections, idle ones dropped" {
	need_tools
	certs
	web_config p pw
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	agent --listen $ADDR:$PORT --web-config "$D/web.yml"
	fs_wait_for 10 eval '[ "$(scrape -u p:pw)" = 200 ]'
	cat >"$D/hold.py" <<'PY'
import select, socket, sys, time
socks = [socket.create_connection((sys.argv[1], int(sys.argv[2]))) for _ in range(200)]
print("ready", flush=True)
# the agent closes the idle ones (its 5 s timeout): a read sees EOF or a
# reset; counted as they close, until all have or 8 s have passed
deadline = time.monotonic() + 8
left = set(socks)
while left and time.monotonic() < deadline:
    readable, _, _ = select.select(list(left), [], [], 0.2)
    for s in readable:
        try:
            if not s.recv(4096):	# a TLS alert, then EOF
                left.discard(s)
        except ConnectionResetError:
            left.discard(s)
print("closed", len(socks) - len(left), flush=True)
PY
	fs_bg sh -c "exec ip netns exec $C /usr/bin/python3 $D/hold.py $ADDR $PORT >$D/hold"
	fs_wait_for 10 grep -q ready "$D/hold"
	[ "$(scrape -u p:pw)" = 200 ]
	fs_wait_for 15 grep -q closed "$D/hold"
	cat "$D/hold"
	grep -qx 'closed 200' "$D/hold"
	[ "$(scrape -u p:pw)" = 200 ]
}

@test "a non-loopback --listen without a web config is refused (exit 2, one line); loopback needs none" {
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	run fs_sc run --listen 0.0.0.0:$PORT
	echo "$output"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"listen: '0.0.0.0:$PORT' is not a loopback address: serving metrics beyond this host needs --web-config FILE"* ]]
	run fs_sc run --listen "[fd77:1::fe]:$PORT"
	[ "$status" -eq 2 ]
	# nothing listens
	! ip netns exec "$R" ss -ltn | grep -q ":$PORT " || false
	# loopback: plain HTTP as before
	agent --listen 127.0.0.1:$PORT
	fs_wait_for 5 ip netns exec "$R" curl -sf -o "$D/m" http://127.0.0.1:$PORT/metrics
	grep -q '^flowsplit_flows_new_total ' "$D/m"
}

@test "bad web configs: one line naming the file, the line and what is accepted; nothing started" {
	need_tools
	certs
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	local h
	h=$(bcrypt pw)
	# bad FILE-CONTENT EXPECTED: run refuses it with exit 2
	bad() {
		printf '%s\n' "$1" >"$D/bad.yml"
		run fs_sc run --listen $ADDR:$PORT --web-config "$D/bad.yml"
		echo "exit $status: $output"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"$2"* ]]
		! ip netns exec "$R" ss -ltn | grep -q ":$PORT " || false
	}
	bad 'tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
  client_ca_file: ca.pem' "bad.yml:4: tls_server_config: unsupported key 'client_ca_file': accepted: cert_file, key_file, min_version"
	bad 'tls_server_config: { cert_file: cert.pem }' "bad.yml:1: tls_server_config: expected its keys on the lines below (block style)"
	bad "basic_auth_users:
  alice: \$1\$abc\$def" "bad.yml:2: basic_auth_users: alice: invalid hash: accepted: a bcrypt hash"
	bad 'tls_server_config:
  cert_file: cert.pem' "tls_server_config: cert_file and key_file are both needed"
	bad 'tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
  min_version: TLS10' "min_version: invalid value 'TLS10': accepted: TLS12, TLS13"
	bad "http_server_config:
  http2: false" "unsupported key 'http_server_config': accepted: tls_server_config, basic_auth_users"
	bad "basic_auth_users:
  a: $h
  a: $h" "user 'a' given twice"
	bad "basic_auth_users:
	a: $h" "bad.yml:2: a tab in the indentation"
	bad 'tls_server_config:
  cert_file: key.pem
  key_file: key.pem' "cert_file: '$D/key.pem' holds no PEM -----BEGIN CERTIFICATE-----"
	# neither TLS nor users: refused beyond loopback
	bad '# nothing' "is not a loopback address: serving metrics beyond this host needs --web-config FILE with tls_server_config and/or basic_auth_users (the web config sets neither)"
	# a certificate with another key: found before anything starts
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$D/other.key" -out "$D/other.pem" -days 2 -subj /CN=other 2>/dev/null
	bad "tls_server_config:
  cert_file: cert.pem
  key_file: other.key" "the certificate and key do not load together"
	# a missing file: a runtime error (exit 1), named
	run fs_sc run --listen $ADDR:$PORT --web-config "$D/missing.yml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"web config: $D/missing.yml: cannot read: No such file or directory"* ]]
}

@test "run -c: [agent] web-config, and SIGHUP switches users and certificate on the same socket" {
	need_tools
	certs
	web_config old oldpw
	fs_sc attach rc --flows "$FS_TEST_FLOWS"
	printf '[splitter]\ninterfaces = rc\nflows = %s\n[agent]\nlisten = %s:%s\nweb-config = %s\n' \
		"$FS_TEST_FLOWS" "$ADDR" "$PORT" "$D/web.yml" >"$D/a.conf"
	# -v: its loop's first line says the start (an apply) is over; a
	# reload applies the file again, seconds on a loaded machine
	fs_bg sh -c "exec ip netns exec $R $SPLITCTL -v --pin-dir $BPF run --interval 1 --health no -c $D/a.conf 2>$D/agent.err"
	AGENT=$!
	fs_wait_for 60 grep -q 'run: sweeping every' "$D/agent.err"
	fs_wait_for 10 eval '[ "$(scrape -u old:oldpw)" = 200 ]'
	# listen_ino: the listening socket's inode (the same socket after a
	# handover)
	listen_ino() { ip netns exec "$R" ss -ltnHe "sport = :$PORT" | grep -o 'ino:[0-9]*'; }
	local ino
	ino=$(listen_ino)
	[ -n "$ino" ]
	web_config new newpw
	kill -HUP "$AGENT"
	fs_wait_for 60 eval '[ "$(scrape -u new:newpw)" = 200 ]' || {
		echo "old: $(scrape -u old:oldpw), new: $(scrape -u new:newpw)"
		kill -0 "$AGENT" && echo "agent runs"
		cat "$D/agent.err"
		false
	}
	[ "$(scrape -u old:oldpw)" = 401 ]
	grep -q "reloaded '$D/a.conf'" "$D/agent.err"
	[ "$(listen_ino)" = "$ino" ]
	# a broken web config on reload: the running one stays, the reason logged
	echo 'tls_server_config: nope' >"$D/web.yml"
	kill -HUP "$AGENT"
	fs_wait_for 30 grep -q "reload: web config: $D/web.yml:1: .*keeping the running config" "$D/agent.err"
	[ "$(scrape -u new:newpw)" = 200 ]
}

@test "check -c validates [agent] web-config as run does: one line, run's exit status, offline too" {
	need_tools
	certs
	fs_sc attach rc
	local h
	h=$(bcrypt pw)
	# conf WEB-CONFIG [LISTEN]: $D/a.conf with that [agent]
	conf() {
		printf '[splitter]\ninterfaces = rc\n[agent]\nlisten = %s\nweb-config = %s\n' \
			"${2:-$ADDR:$PORT}" "$1" >"$D/a.conf"
	}
	# checked STATUS EXPECTED: check and check --offline both end with
	# STATUS and one line holding EXPECTED (and run -c refuses alike)
	checked() {
		local mode
		for mode in "" --offline; do
			run fs_sc check $mode -c "$D/a.conf"
			echo "check $mode: exit $status: $output"
			[ "$status" -eq "$1" ]
			[ "${#lines[@]}" -eq 1 ]
			[[ "$output" == *"$D/a.conf: [agent] "*"$2"* ]]
		done
		run fs_sc -j check --offline -c "$D/a.conf"
		[ "$status" -eq "$1" ]
		jq -e --arg m "$2" '.level == "error" and (.message | contains($m))' <<<"$output"
		run timeout 30 ip netns exec "$R" "$SPLITCTL" --pin-dir "$BPF" run --interval 1 \
			--health no -c "$D/a.conf"
		[ "$status" -eq "$1" ]
		[[ "$output" == *"$2"* ]]
	}
	# unreadable: a runtime error
	conf "$D/missing.yml"
	checked 1 "web config: $D/missing.yml: cannot read: No such file or directory"
	# unknown key, bad hash, missing key file, a certificate without its key
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_ca_file: ca.pem\n' >"$D/w.yml"
	conf "$D/w.yml"
	checked 2 "web config: $D/w.yml:4: tls_server_config: unsupported key 'client_ca_file': accepted: cert_file, key_file, min_version"
	printf 'basic_auth_users:\n  alice: $1$abc$def\n' >"$D/w.yml"
	checked 2 "web config: $D/w.yml:2: basic_auth_users: alice: invalid hash: accepted: a bcrypt hash"
	printf 'tls_server_config:\n  cert_file: cert.pem\n' >"$D/w.yml"
	checked 2 "tls_server_config: cert_file and key_file are both needed"
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: nokey.pem\n' >"$D/w.yml"
	checked 1 "tls_server_config: key_file: cannot read '$D/nokey.pem': No such file or directory"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$D/other.key" -out "$D/other.pem" -days 2 -subj /CN=other 2>/dev/null
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: other.key\n' >"$D/w.yml"
	checked 2 "the certificate and key do not load together"
	# beyond loopback without TLS or users
	printf '# nothing\n' >"$D/w.yml"
	checked 2 "is not a loopback address: serving metrics beyond this host needs --web-config FILE with tls_server_config and/or basic_auth_users"
	# a good one: valid, online and offline
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  a: %s\n' "$h" >"$D/w.yml"
	fs_sc check -c "$D/a.conf" | grep -qx "$D/a.conf: valid"
	fs_sc check --offline -c "$D/a.conf" | grep -qx "$D/a.conf: valid (offline: the file alone)"
}
