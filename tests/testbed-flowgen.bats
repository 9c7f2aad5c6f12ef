#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# flowgen against the real nginx of the testbed in a throwaway namespace pair,
# the nginx set-up itself, and report.py on a synthetic results directory.
FS_PREFIX=fstg
load lib/common

FLOWGEN=$FS_BUILD/flowgen
NGINX_START=$FS_ROOT/testbed/nginx/start
NGINX_STOP=$FS_ROOT/testbed/nginx/stop
REPORT=$FS_ROOT/testbed/analysis/report.py
MKFIXTURE=$FS_ROOT/testbed/analysis/mkfixture.py
SRV=10.88.0.2

setup() {
	D=$BATS_TEST_TMPDIR
	[ -x "$FLOWGEN" ] || skip "$FLOWGEN not built (make build/flowgen)"
}

# net_up: client and server namespaces over a veth, nginx on $SRV:8080
net_up() {
	C=$FS_PREFIX-c-$$-$BATS_TEST_NUMBER S=$FS_PREFIX-s-$$-$BATS_TEST_NUMBER
	fs_netns "$C" "$S"
	ip link add fstg0 netns "$C" type veth peer fstg1 netns "$S"
	ip -n "$C" addr add 10.88.0.1/24 dev fstg0
	ip -n "$S" addr add $SRV/24 dev fstg1
	ip -n "$C" link set fstg0 up
	ip -n "$S" link set fstg1 up
	DATA_BYTES=${DATA_BYTES:-100000000} "$NGINX_START" "$S" $SRV 8080 "$D/nginx"
}

teardown() {
	[ -d "$D/nginx" ] && "$NGINX_STOP" "$D/nginx"
	fs_teardown
}

rows() { tail -n +2 "$1"; }

# max_inflight LOG: most requests in progress at once, from start/end times
max_inflight() {
	rows "$1" | awk -F, '{ print $7, 1; print $8, -1 }' | sort -n -k1,1 -k2,2n |
		awk '{ c += $2; if (c > m) m = c } END { print m }'
}

@test "every request of a file-hosting run completes with the right status and size" {
	net_up
	run ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --rate 40 --requests 60 \
		--seed 7 --scale 0.01 --log "$D/log.csv"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(rows "$D/log.csv" | wc -l)" -eq 60 ]
	# downloads answered 206 (partial content), uploads 204, no error
	! rows "$D/log.csv" | awk -F, '($3 == "GET" && $10 != 206) || ($3 == "PUT" && $10 != 204) || $12 != ""' | grep . || false
	# the schedule's kinds and sizes are what was requested
	diff <("$FLOWGEN" --rate 40 --requests 60 --seed 7 --scale 0.01 --print-schedule | tail -n +2 | cut -d, -f3-5) \
		<(rows "$D/log.csv" | cut -d, -f2-4)
	# every row: a client port, a positive FCT = end - start, started at or
	# after its scheduled time
	! rows "$D/log.csv" | awk -F, '$6 < 1 || $9 <= 0 || $7 < $11 ||
		($8 - $7) / 1000 - $9 > 0.1 || $9 - ($8 - $7) / 1000 > 0.1' | grep . || false
	# one connection per request: 60 distinct ports
	[ "$(rows "$D/log.csv" | cut -d, -f6 | sort -u | wc -l)" -eq 60 ]
}

@test "a range download is exactly N bytes; uploads of N bytes are read completely before the 204" {
	net_up
	printf '# fixed size\n100 0\n100 1\n' >"$D/fixed.cdf"
	ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --mix "$D/fixed.cdf" \
		--rate 100 --requests 5 --log "$D/log.csv"
	[ "$(awk -F, 'NR > 1 && $4 == 100 && $10 == 206' "$D/log.csv" | wc -l)" -eq 5 ]
	# nginx sends exactly the range
	run ip netns exec "$C" curl -s -o /dev/null -w '%{http_code} %{size_download}' -r 0-12344 \
		http://$SRV:8080/data
	[ "$output" = "206 12345" ]
	head -c 3000000 /dev/zero >"$D/up"
	for m in PUT POST; do
		run ip netns exec "$C" curl -s -o /dev/null -w '%{http_code} %{size_upload}' -X $m \
			--data-binary @"$D/up" http://$SRV:8080/upload
		[ "$output" = "204 3000000" ]
	done
	# half a body: no answer yet (nginx must not answer before reading it all)
	run ip netns exec "$C" /usr/bin/python3 -c '
import socket, sys
s = socket.create_connection(("'$SRV'", 8080))
s.sendall(b"PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n" + bytes(1000000))
s.settimeout(0.5)
try:
    print("early", s.recv(100)[:12]); sys.exit(1)
except socket.timeout:
    pass
s.sendall(bytes(1000000))
s.settimeout(5)
print(s.recv(100).split(b"\r\n")[0].decode())'
	echo "$output"
	[ "$status" -eq 0 ] && [ "$output" = "HTTP/1.1 204 No Content" ]
	# anything else than GET /data, PUT/POST /upload is refused
	run ip netns exec "$C" curl -s -o /dev/null -w '%{http_code}' http://$SRV:8080/upload
	[ "$output" = 403 ]
}

@test "WebSearch mix: draws follow the DCTCP CDF, and the requests complete" {
	"$FLOWGEN" --rate 10 --requests 20000 --seed 3 --mix websearch --print-schedule >"$D/s.csv"
	# P(size <= 80 kB) = 0.53 and P(<= 10 kB) = 0.15 in the CDF (std error ~0.004)
	rows "$D/s.csv" | awk -F, '$3 != "websearch" { exit 1 }
		{ n++; a += $5 <= 80000; b += $5 <= 10000; if ($5 > 30000000) exit 1 }
		END { exit !(a / n > 0.515 && a / n < 0.545 && b / n > 0.14 && b / n < 0.165) }'
	net_up
	run ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --mix websearch --scale 0.01 \
		--rate 50 --requests 40 --seed 3 --log "$D/log.csv"
	[ "$status" -eq 0 ]
	[ "$(awk -F, 'NR > 1 && $10 == 206 && $2 == "websearch"' "$D/log.csv" | wc -l)" -eq 40 ]
}

@test "same seed, same schedule (pinned); another seed, another one; Poisson arrivals" {
	a=$("$FLOWGEN" --rate 10 --requests 2000 --seed 1 --print-schedule)
	b=$("$FLOWGEN" --rate 10 --requests 2000 --seed 1 --print-schedule)
	c=$("$FLOWGEN" --rate 10 --requests 2000 --seed 2 --print-schedule)
	[ "$a" = "$b" ]
	[ "$a" != "$c" ]
	# pinned: a seed must reproduce earlier results on every machine and build
	s=$("$FLOWGEN" --rate 10 --requests 200 --seed 1 --scale 0.02 --print-schedule)
	[ "$(echo "$s" | sed -n 2p)" = "0,0.056817,listing,GET,7240" ]
	[ "$(echo "$s" | sed -n 16p)" = "14,1.459877,upload,PUT,2896000" ]
	[ "$(echo "$s" | sed -n 26p)" = "24,2.118953,video,GET,1737600" ]
	[ "$(echo "$s" | tail -1)" = "199,20.263355,listing,GET,7240" ]
	# exponential inter-arrival times at 10/s over 2000 requests: mean 0.1 s
	# within 10 % (std error 2.2 %), coefficient of variation 1 within 10 %
	echo "$a" | tail -n +2 | awk -F, '{ d = $2 - last; last = $2; s += d; q += d * d }
		END { m = s / NR; cv = sqrt(q / NR - m * m) / m;
		      exit !(m > 0.09 && m < 0.11 && cv > 0.9 && cv < 1.1) }'
	# the file-hosting mix: 90 % listings, 6 % video, 4 % uploads
	n=$(echo "$a" | grep -c ',listing,GET,7240$')
	[ "$n" -gt 1750 ] && [ "$n" -lt 1850 ]
	n=$(echo "$a" | grep -c ',upload,PUT,')
	[ "$n" -gt 55 ] && [ "$n" -lt 105 ]
	# --duration: arrivals within the duration, about rate x duration of them
	n=$("$FLOWGEN" --rate 100 --duration 20 --seed 4 --print-schedule | tail -n +2 |
		awk -F, '$2 > 20 { exit 1 } END { print NR }')
	[ "$n" -gt 1850 ] && [ "$n" -lt 2150 ]
}

@test "epoll engine: many requests in flight, --max-inflight caps them, --keepalive reuses connections" {
	net_up
	printf '2000000 0\n2000000 1\n' >"$D/2m.cdf"
	ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --mix "$D/2m.cdf" --rate 2000 \
		--requests 200 --log "$D/many.csv"
	[ "$(awk -F, 'NR > 1 && $10 == 206 && $4 == 2000000' "$D/many.csv" | wc -l)" -eq 200 ]
	m=$(max_inflight "$D/many.csv")
	echo "max in flight: $m"
	[ "$m" -ge 10 ]
	ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --mix "$D/2m.cdf" --rate 2000 \
		--requests 50 --max-inflight 3 --log "$D/capped.csv" 2>/dev/null
	[ "$(awk -F, 'NR > 1 && $10 == 206' "$D/capped.csv" | wc -l)" -eq 50 ]
	[ "$(max_inflight "$D/capped.csv")" -le 3 ]
	# keep-alive: sequential requests share few connections, all answered
	ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --rate 50 --requests 40 --seed 2 \
		--scale 0.001 --keepalive --log "$D/ka.csv"
	[ "$(awk -F, 'NR > 1 && ($10 == 206 || $10 == 204) && $12 == ""' "$D/ka.csv" | wc -l)" -eq 40 ]
	ports=$(rows "$D/ka.csv" | cut -d, -f6 | sort -u | wc -l)
	echo "keep-alive: $ports connections for 40 requests"
	[ "$ports" -lt 20 ]
}

@test "failures: refused, timed out and interrupted requests are logged and exit 1" {
	net_up
	# nothing listens on port 8099
	run ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8099 --rate 100 --requests 5 \
		--log "$D/refused.csv"
	[ "$status" -eq 1 ] && [[ "$output" == *"5 of 5 requests failed"* ]]
	[ "$(awk -F, 'NR > 1 && $10 == 0 && $12 == "connect"' "$D/refused.csv" | wc -l)" -eq 5 ]
	# a server that accepts but never answers
	fs_bg ip netns exec "$S" socat TCP-LISTEN:8098,bind=$SRV,reuseaddr,fork EXEC:"sleep 30"
	fs_wait_for 5 bash -c "ip netns exec $S ss -Htln 'sport = :8098' | grep -q ."
	run ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8098 --rate 100 --requests 3 \
		--timeout 0.3 --log "$D/timeout.csv"
	[ "$status" -eq 1 ]
	[ "$(awk -F, 'NR > 1 && $10 == 0 && $12 == "timeout" && $9 >= 300000' "$D/timeout.csv" | wc -l)" -eq 3 ]
	# SIGTERM mid-run: every scheduled request has a row, the rest "interrupted"
	ip netns exec "$C" "$FLOWGEN" --server $SRV --port 8080 --rate 5 --requests 100 \
		--log "$D/int.csv" 2>"$D/int.err" &
	pid=$!
	sleep 1
	kill -TERM $pid
	rc=0
	wait $pid || rc=$?
	[ "$rc" -eq 1 ]
	grep -q 'interrupted after' "$D/int.err"
	[ "$(rows "$D/int.csv" | wc -l)" -eq 100 ]
	[ "$(awk -F, 'NR > 1 && $12 == "interrupted"' "$D/int.csv" | wc -l)" -gt 80 ]
}

@test "bad command lines: exit 2 and one clear line" {
	check() {	# check "expected message" args...
		local want=$1; shift
		run "$FLOWGEN" "$@"
		echo "$output"
		[ "$status" -eq 2 ] && [[ "$output" == *"$want"* ]] && [ "${#lines[@]}" -eq 1 ]
	}
	check "--rate: invalid value '-1'" --rate -1 --requests 3 --print-schedule
	check "--rate: invalid value '0'" --rate 0 --requests 3 --print-schedule
	check "exactly one of --duration and --requests" --rate 1 --print-schedule
	check "exactly one of --duration and --requests" --rate 1 --requests 2 --duration 1 --print-schedule
	check "--server: invalid address 'nowhere'" --rate 1 --requests 1 --server nowhere --log /dev/null
	check "cannot read '/nonexistent'" --rate 1 --requests 1 --mix /nonexistent --print-schedule
	check "--port: invalid value '0'" --port 0 --rate 1 --requests 1 --print-schedule
	check "--port: invalid value '80x'" --port 80x --rate 1 --requests 1 --print-schedule
	check "--scale: invalid value '0'" --scale 0 --rate 1 --requests 1 --print-schedule
	check "--seed: invalid value '-3'" --seed -3 --rate 1 --requests 1 --print-schedule
	check "--requests: invalid value '1000001'" --requests 1000001 --rate 1 --print-schedule
	check "--max-inflight: invalid value '0'" --max-inflight 0 --rate 1 --requests 1 --print-schedule
	check "--timeout: invalid value 'x'" --timeout x --rate 1 --requests 1 --print-schedule
	check "unknown option '--bogus'" --bogus --rate 1 --requests 1 --print-schedule
	check "option '--log' needs a value" --rate 1 --requests 1 --log
	check "--server and --log are required" --rate 1 --requests 1
	check "--cc: cannot use 'nosuchcc'" --cc nosuchcc --rate 1 --requests 1 --server 10.0.0.1 --log /dev/null
	printf '100 0.5\n50 1\n' >"$D/bad.cdf"
	check "bad.cdf:2: bad line '50 1'" --mix "$D/bad.cdf" --rate 1 --requests 1 --print-schedule
	printf '100 0\n200 0.9\n' >"$D/short.cdf"
	check "must end at probability 1" --mix "$D/short.cdf" --rate 1 --requests 1 --print-schedule
	# nginx scripts
	run "$NGINX_START" nons 10.0.0.1 80 "$D/x"
	[ "$status" -eq 2 ] && [[ "$output" == *"network namespace 'nons' does not exist"* ]]
	run "$NGINX_STOP"
	[ "$status" -eq 2 ]
}

@test "nginx stop: master and workers gone, RUNDIR reusable" {
	net_up
	pid=$(cat "$D/nginx/nginx.pid")
	[ "$(pgrep -P "$pid" | wc -l)" -ge 1 ]
	"$NGINX_STOP" "$D/nginx"
	! kill -0 "$pid" 2>/dev/null || [ "$(awk '{print $3}' /proc/$pid/stat)" = Z ]
	! ip netns pids "$S" | grep -q . || false
	# a second stop is harmless; a restart in the same RUNDIR works
	"$NGINX_STOP" "$D/nginx"
	"$NGINX_START" "$S" $SRV 8080 "$D/nginx"
	run ip netns exec "$C" curl -s -o /dev/null -w '%{http_code}' -r 0-9 http://$SRV:8080/data
	[ "$output" = 206 ]
}

@test "report.py: known speedups, CIs, penalty and join on a synthetic results directory" {
	/usr/bin/python3 "$MKFIXTURE" "$D/rs"
	run /usr/bin/python3 "$REPORT" "$D/rs"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"threshold = 5, 3 repetitions"* ]]
	[[ "$output" == *"short FCT mean (ms)"* ]]
	sp() { awk -F, -v v="$1" -v m="$2" '$1 == v && $2 == m { print $8 " " $9 }' "$D/rs/speedups.csv"; }
	# ECMP/split 1.5, 2, 2.5 => 2 ± t(0.975, 2) * 0.5 / sqrt(3)
	# = 4.302653 * 0.288675 = 1.24207 (a t-table's 4.303 gave 1.2422)
	[ "$(sp 5 short_fct_mean_us)" = "2.0000 1.2421" ]
	[ "$(sp 5 short_fct_p50_us)" = "2.0000 1.2421" ]
	[ "$(sp 5 short_fct_p99_us)" = "2.0000 1.2421" ]
	[ "$(sp 20 short_fct_mean_us)" = "3.0000 0.0000" ]
	[ "$(sp 20 short_jitter_mean_us)" = "3.0000 0.0000" ]
	[ "$(sp 5 long_penalty)" = "1.1000 0.0000" ]
	# per run: 15 requests, 1 failed, 1 unmatched, 10 short, 2 long (the
	# 100-packet flow is neither); exact mean/p50/p99 (nearest rank) of a
	# split run; the long app FCT proves the reused port joined in time order
	! awk -F, 'NR > 1 && ($5 != 15 || $6 != 1 || $7 != 10 || $8 != 2 || $20 != 1)' "$D/rs/summary.csv" | grep . || false
	grep -q '^split-5-1,split,5,1,15,1,10,2,5500.0,5000.0,10000.0,5600.0,5100.0,10100.0,110000.0,111000.0,55.0,' \
		"$D/rs/summary.csv"
	grep -q '^ecmp-5-3,ecmp,5,3,15,1,10,2,13750.0,12500.0,25000.0,' "$D/rs/summary.csv"
	for p in fct_cdf fct_pdf jitter_pdf long_fct speedup; do
		[ -s "$D/rs/$p.png" ]
	done
	grep -q 'short flow: <= 40 packets' "$D/rs/summary.md"
	# --short-max moves the boundary: with 8, no listing is short
	run /usr/bin/python3 "$REPORT" --short-max 8 "$D/rs"
	[ "$status" -eq 0 ]
	! awk -F, 'NR > 1 && $7 != 0' "$D/rs/summary.csv" | grep . || false
}

@test "report.py: keep-alive runs class requests by size and judge them by app FCT" {
	mkdir -p "$D/ka"
	echo '{"experiment": "keepalive", "varied": "reshort_gap_ms", "reps": 1, "duration_s": 1}' >"$D/ka/experiment.json"
	for m in split ecmp; do
		mkdir -p "$D/ka/$m-0-1/tap"
		echo "{\"mode\":\"$m\",\"seed\":1,\"keepalive\":\"yes\",\"reshort_gap_ms\":0}" >"$D/ka/$m-0-1/meta.json"
		f=1; [ $m = ecmp ] && f=3
		{
			echo id,kind,method,bytes,local_addr,local_port,start_ns,end_ns,fct_us,status,sched_ns,error
			# one connection (port 40000) carries all four: 5 and 40
			# packets are short, 41..1000 neither, 2000 long
			echo "0,listing,GET,7240,10.1.0.1,40000,0,1,$((1000 * f)),206,0,"
			echo "1,listing,GET,57920,10.1.0.1,40000,0,1,$((3000 * f)),206,0,"
			echo "2,video,GET,100000,10.1.0.1,40000,0,1,50000,206,0,"
			echo "3,video,GET,2896000,10.1.0.1,40000,0,1,$((400000 * f)),206,0,"
		} >"$D/ka/$m-0-1/flowgen.csv"
		# the tap's one flow of that connection: no request's own flow
		echo 'src,sport,dst,dport,proto,dscp,class,pkts_a,bytes_a,pkts_b,bytes_b,lost,first_a_us,last_b_us,fct_us' >"$D/ka/$m-0-1/tap/flows.csv"
		echo '10.2.0.1,80,10.1.0.1,40000,6,1,long,2100,3000000,2100,3000000,0,0,999,999' >>"$D/ka/$m-0-1/tap/flows.csv"
	done
	run /usr/bin/python3 "$REPORT" "$D/ka"
	echo "$output"
	[ "$status" -eq 0 ]
	sp() { awk -F, -v m="$1" '$1 == 0 && $2 == m { print $4 " " $6 " " $8 }' "$D/ka/speedups.csv"; }
	# short: mean of 1 and 3 ms (split) against 3 and 9 ms (ECMP): 3x
	[ "$(sp short_app_mean_us | awk '{ printf "%.0f %.0f %.1f", $1, $2, $3 }')" = "2000 6000 3.0" ]
	grep -q '^split-0-1,split,0,1,4,0,2,1,' "$D/ka/summary.csv"
	# no network FCT for a request on a shared connection; the long-flow
	# penalty from app FCT: 400 / 1200 ms
	awk -F, '$1 == 0 && $2 == "short_fct_mean_us" { exit !($4 == "" && $8 == "") }' "$D/ka/speedups.csv"
	awk -F, '$1 == 0 && $2 == "long_penalty" { exit !($8 + 0 > 0.333 && $8 + 0 < 0.334) }' "$D/ka/speedups.csv"
}

@test "report.py: usage errors exit 2, a directory without runs exits 1" {
	run /usr/bin/python3 "$REPORT"
	[ "$status" -eq 2 ] && [[ "$output" == *"expected one RUNSET_DIR"* ]]
	run /usr/bin/python3 "$REPORT" --short-max x "$D"
	[ "$status" -eq 2 ] && [[ "$output" == *"--short-max: invalid value 'x'"* ]]
	mkdir "$D/empty"
	run /usr/bin/python3 "$REPORT" "$D/empty"
	[ "$status" -eq 1 ] && [[ "$output" == *"no run in"* ]]
}
