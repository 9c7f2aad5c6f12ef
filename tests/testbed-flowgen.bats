#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# flowgen against the real nginx of the testbed, in a throwaway namespace pair.
FS_PREFIX=fstg
load lib/common

FLOWGEN=$FS_BUILD/flowgen
NGINX_START=$FS_ROOT/testbed/nginx/start
NGINX_STOP=$FS_ROOT/testbed/nginx/stop

setup() {
	D=$BATS_TEST_TMPDIR
	C=$FS_PREFIX-c-$$-$BATS_TEST_NUMBER S=$FS_PREFIX-s-$$-$BATS_TEST_NUMBER
	fs_netns "$C" "$S"
	ip link add g0 netns "$C" type veth peer g1 netns "$S"
	ip -n "$C" addr add 10.88.0.1/24 dev g0
	ip -n "$S" addr add 10.88.0.2/24 dev g1
	ip -n "$C" link set g0 up
	ip -n "$S" link set g1 up
	DATA_BYTES=100000000 "$NGINX_START" "$S" 10.88.0.2 8080 "$D/nginx"
}

teardown() {
	"$NGINX_STOP" "$D/nginx"
	fs_teardown
}

@test "every request of a file-hosting run completes with the right status and size" {
	run ip netns exec "$C" "$FLOWGEN" --server 10.88.0.2 --port 8080 --rate 40 --requests 60 \
		--seed 7 --scale 0.01 --log "$D/log.csv"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(tail -n +2 "$D/log.csv" | wc -l)" -eq 60 ]
	# downloads answered 206 (partial content), uploads 204
	! tail -n +2 "$D/log.csv" | awk -F, '($3 == "GET" && $10 != 206) || ($3 == "PUT" && $10 != 204)' | grep .
	# the schedule's sizes are what was requested; every row has a port
	diff <(ip netns exec "$C" "$FLOWGEN" --rate 40 --requests 60 --seed 7 --scale 0.01 --print-schedule | tail -n +2 | cut -d, -f3-5) \
		<(tail -n +2 "$D/log.csv" | cut -d, -f2-4)
	! tail -n +2 "$D/log.csv" | awk -F, '$6 < 1 || $9 <= 0' | grep .
}

@test "a range download is exactly N bytes and an upload of N bytes is accepted" {
	printf '100 0\n100 1\n' >"$D/fixed.cdf"     # every request: 100 bytes
	ip netns exec "$C" "$FLOWGEN" --server 10.88.0.2 --port 8080 --mix "$D/fixed.cdf" \
		--rate 100 --requests 5 --log "$D/log.csv"
	[ "$(awk -F, 'NR > 1 && $4 == 100 && $10 == 206' "$D/log.csv" | wc -l)" -eq 5 ]
	head -c 3000000 /dev/zero >"$D/up"
	run ip netns exec "$C" curl -s -o /dev/null -w '%{http_code} %{size_upload}' -T "$D/up" \
		http://10.88.0.2:8080/upload
	[ "$output" = "204 3000000" ]
}

@test "same seed, same schedule; another seed, another one; Poisson rate" {
	a=$("$FLOWGEN" --rate 10 --requests 2000 --seed 1 --print-schedule)
	b=$("$FLOWGEN" --rate 10 --requests 2000 --seed 1 --print-schedule)
	c=$("$FLOWGEN" --rate 10 --requests 2000 --seed 2 --print-schedule)
	[ "$a" = "$b" ]
	[ "$a" != "$c" ]
	# mean inter-arrival 0.1 s within 10 % over 2000 requests (std error ~2 %)
	echo "$a" | tail -n +2 | awk -F, '{ last = $2 } END { m = last / NR; exit !(m > 0.09 && m < 0.11) }'
	# the file-hosting mix: ~90 % listings
	n=$(echo "$a" | grep -c ',listing,')
	[ "$n" -gt 1700 ] && [ "$n" -lt 1900 ]
}

@test "bad command lines: exit 2 and one clear line" {
	run "$FLOWGEN" --rate -1 --requests 3 --print-schedule
	[ "$status" -eq 2 ] && [[ "$output" == *"--rate: invalid value '-1'"* ]]
	run "$FLOWGEN" --rate 1 --print-schedule
	[ "$status" -eq 2 ] && [[ "$output" == *"exactly one of --duration and --requests"* ]]
	run "$FLOWGEN" --rate 1 --requests 1 --server nowhere --log /dev/null
	[ "$status" -eq 2 ] && [[ "$output" == *"--server: invalid address 'nowhere'"* ]]
	run "$FLOWGEN" --rate 1 --requests 1 --mix /nonexistent --print-schedule
	[ "$status" -eq 2 ] && [[ "$output" == *"cannot read '/nonexistent'"* ]]
}
