#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Message boundaries (reshort boundary|off): the setting and its bad
# values, the observer attached, upgraded and detached with the splitter,
# status/doctor/stats, and real TCP through a router namespace: a
# request/response client over one persistent connection re-shorts at each
# request, a bulk transfer never does.
FS_PREFIX=fstq
load lib/common
load lib/router

# obs_link IF: the observer's link id on IF (status: pinned, and attached
# at TCX egress as the kernel's query says), else 0. (bpftool 7.1 lists no
# TCX attachment per device.)
obs_link() {
	fs_sc -j status | jq ".interfaces[] | select(.name == \"$1\" and .observer.attached) | .observer.link_id // 0"
}

# link_alive ID: the kernel still has that bpf_link
link_alive() {
	bpftool link show id "$1" >/dev/null 2>&1
}

@test "reshort: boundary by default, set off and back, shown with the reason" {
	fs_sc attach rc
	[ "$(fs_sc -j status | jq -r .config.reshort)" = boundary ]
	fs_sc -j status | jq -e '.reshort.boundary and .reshort.observers_missing == 0'
	fs_sc status | grep -q '^reshort: at a message boundary'
	fs_sc stats --prometheus | grep -q '^flowsplit_reshort_boundary 1$'
	fs_sc -j set reshort off | jq -e '.config.reshort == "off"'
	fs_sc stats --prometheus | grep -q '^flowsplit_reshort_boundary 0$'
	fs_sc status | grep -q '^reshort: never: a long flow stays long'
	fs_sc set reshort-gap 50
	fs_sc status | grep -q '^reshort: after a silence over 50 ms only'
	fs_sc set reshort boundary
	fs_sc status | grep -q '^reshort: at a message boundary .* and after a silence over 50 ms'
	fs_sc stats --prometheus | grep -q '^flowsplit_flows_reshort_boundary_total 0'
	fs_sc -j stats | jq -e 'has("flows_reshort_gap") and has("flows_reshort_boundary")'
}

@test "reshort: bad values name the value and what is accepted; nothing changes" {
	fs_sc attach rc
	before=$(fs_sc -j status | jq -c .config)
	expect 2 "reshort: invalid value 'yes': accepted: off, boundary" -- fs_sc set reshort yes
	expect 2 "reshort: invalid value 'on': accepted: off, boundary" -- fs_sc set threshold 5 reshort on
	expect 2 "expected NAME VALUE pairs" -- fs_sc set reshort
	expect 2 "reshort: invalid value ''" -- fs_sc attach rc --reshort ''
	[ "$(fs_sc -j status | jq -c .config)" = "$before" ]
	printf '[splitter]\ninterfaces = rc\nreshort = sometimes\n' >"$D/bad.conf"
	run "$SPLITCTL" check --offline -c "$D/bad.conf"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.conf:3"*"reshort: invalid value 'sometimes': accepted: off, boundary"* ]]
	printf '[splitter]\ninterfaces = rc\nreshort = off\n' >"$D/off.conf"
	fs_sc apply -c "$D/off.conf"
	[ "$(fs_sc -j status | jq -r .config.reshort)" = off ]
	fs_sc attach rc --reshort boundary
	[ "$(fs_sc -j status | jq -r .config.reshort)" = boundary ]
	"$SPLITCTL" attach -h | grep -q -- '--reshort boundary|off'
}

@test "observer: attached at TC egress with either hook, upgraded in place, gone with detach" {
	fs_sc attach rc --hook xdp
	fs_sc attach rs --hook tc
	fs_sc -j status | jq -e '[.interfaces[].observer.attached] == [true, true]'
	rc0=$(obs_link rc) rs0=$(obs_link rs)
	[ "$rc0" -gt 0 ] && [ "$rs0" -gt 0 ] && [ "$rc0" -ne "$rs0" ]
	p0=$(fs_sc -j status | jq '.interfaces[] | select(.name == "rc") | .observer.prog_id')
	fs_sc attach rc	# upgrade: same link, new program
	[ "$(obs_link rc)" -eq "$rc0" ]
	[ "$(fs_sc -j status | jq '.interfaces[] | select(.name == "rc") | .observer.prog_id')" -ne "$p0" ]
	fs_sc detach rs
	! link_alive "$rs0" || false
	[ ! -e "$BPF/observer_if$(ip -n "$R" -j link show rs | jq '.[0].ifindex')" ]
	link_alive "$rc0"
	fs_sc detach --all
	! link_alive "$rc0" || false
	[ -z "$(ls "$BPF" 2>/dev/null)" ]
}

@test "observer removed behind our back: status warns, doctor fails, attach puts it back" {
	fs_sc attach rc
	id=$(obs_link rc)
	rm "$BPF"/observer_if*
	fs_wait_for 5 sh -c "! bpftool link show id $id >/dev/null 2>&1"
	fs_sc status | grep -q 'observer: missing at tcx egress'
	fs_sc status | grep -q '^warning: the observer is missing on 1 interface'
	[ "$(fs_sc -j status | jq .reshort.observers_missing)" -eq 1 ]
	run fs_sc doctor
	echo "$output"
	[[ "$output" == *"FAIL  observer rc: missing at tcx egress"* ]]
	fs_sc attach rc
	[ "$(obs_link rc)" -gt 0 ]
	fs_sc set reshort off
	run fs_sc doctor
	[[ "$output" == *"skip  observer rc: reshort off"* ]]
}

# ---- real TCP ----------------------------------------------------------------

PY=/usr/bin/python3

# rr_server PORT REQ RESP: answer every REQ-byte request with RESP bytes
rr_server() {
	fs_bg ip netns exec "$S" "$PY" -c '
import socket, sys
port, req, resp = map(int, sys.argv[1:])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(4)
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        got = 0
        while got < req:
            d = c.recv(req - got)
            if not d:
                break
            got += len(d)
        if got < req:
            break
        c.sendall(b"r" * resp)
    c.close()
' "$1" "$2" "$3"
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':$1 '"
}

# rr_client PORT N REQ RESP: N requests over one connection, each after
# the previous response
rr_client() {
	ip netns exec "$C" "$PY" -c '
import socket, sys
port, n, req, resp = map(int, sys.argv[1:])
c = socket.create_connection(("10.77.2.1", port))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for i in range(n):
    c.sendall(b"q" * req)
    got = 0
    while got < resp:
        got += len(c.recv(resp - got))
c.close()
' "$1" "$2" "$3" "$4"
}

# flow_json DPORT: the client's flow to that port (flows -j)
flow_json() {
	fs_sc -j flows | jq -c "[.[] | select(.dport == $1 and .family == \"ipv4\")][0]"
}

@test "real TCP, request/response over one connection: a re-short at each request; bulk: none, <= 1 % short" {
	fs_sc attach rc --hook tc --threshold 3
	rr_server 7101 4000 20000
	b0=$(fs_stat flows_reshort_boundary)
	rr_client 7101 50 4000 20000
	f=$(flow_json 7101)
	echo "request/response flow: $f"
	n=$(( $(fs_stat flows_reshort_boundary) - b0 ))
	echo "flows_reshort_boundary +$n"
	# 50 requests of 3 segments: every request after the first starts short
	[ "$n" -ge 40 ]
	[ "$(jq .boundaries <<<"$f")" -ge 40 ]
	[ "$(jq .acks_seen <<<"$f")" = true ]

	# the same client with reshort off: no boundary, the connection long
	fs_sc set reshort off
	rr_server 7102 4000 20000
	b0=$(fs_stat flows_reshort_boundary)
	rr_client 7102 50 4000 20000
	[ "$(fs_stat flows_reshort_boundary)" -eq "$b0" ]
	[ "$(flow_json 7102 | jq .boundaries)" -eq 0 ]
	fs_sc set reshort boundary

	# bulk: 20 MB one way; the receiver sends only pure ACKs
	fs_bg ip netns exec "$S" "$PY" -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7103))
s.listen(1)
c, _ = s.accept()
while c.recv(1 << 16):
    pass
'
	fs_wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':7103 '"
	b0=$(fs_stat flows_reshort_boundary)
	s0=$(fs_stat bytes_short)
	ip netns exec "$C" "$PY" -c '
import socket
c = socket.create_connection(("10.77.2.1", 7103))
buf = b"b" * 65536
for i in range(320):
    c.sendall(buf)
c.close()
'
	f=$(flow_json 7103)
	short=$(( $(fs_stat bytes_short) - s0 ))
	echo "bulk flow: $f; bytes marked short: $short"
	[ "$(fs_stat flows_reshort_boundary)" -eq "$b0" ]
	[ "$(jq .boundaries <<<"$f")" -eq 0 ]
	[ "$(jq -r .class <<<"$f")" = long ]
	# the flow table's bytes: every short byte (the first threshold, and
	# the GRO packet that crosses it, included) within 1 % of the transfer
	total=$(jq .bytes <<<"$f")
	[ "$total" -ge 20000000 ]
	[ "$((short * 100))" -le "$total" ]
}

@test "real TCP at the XDP hook: the observer at TC egress gives the same re-shorts" {
	fs_sc attach rc --hook xdp --threshold 3
	rr_server 7111 4000 20000
	rr_client 7111 30 4000 20000
	f=$(flow_json 7111)
	echo "request/response flow (xdp): $f"
	[ "$(jq .boundaries <<<"$f")" -ge 25 ]
	[ "$(fs_stat flows_reshort_boundary)" -ge 25 ]
	# without its observer the same client never re-shorts
	rm "$BPF"/observer_if*
	rr_server 7112 4000 20000
	rr_client 7112 30 4000 20000
	f=$(flow_json 7112)
	echo "without the observer: $f"
	[ "$(jq .boundaries <<<"$f")" -eq 0 ]
	[ "$(jq .acks_seen <<<"$f")" = false ]
}
