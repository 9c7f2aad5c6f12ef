#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# fct-tap on pcap pairs written by tap-mkpcap from tests/tap/fixtures/*.spec
# (timestamps chosen by hand). Every expected value below is computed by hand
# from the fixture, in microseconds; net_pcap hands fct-tap the record times,
# so the results are exact.
FS_PREFIX=fstt
load lib/common
bats_require_minimum_version 1.5.0

TAP=$FS_BUILD/fct-tap
MKPCAP=$FS_BUILD/tap-mkpcap
FIX=$FS_ROOT/tests/tap/fixtures
EAL=(--no-huge -m 256 --no-pci --in-memory -l 0 --log-level=error)

setup() {
	fs_need "$TAP" "$MKPCAP"
	D=$BATS_TEST_TMPDIR
}

# pcaps SPEC_FILE: the pcap pair $D/a.pcap, $D/b.pcap of a fixture
pcaps() {
	"$MKPCAP" "$D/a.pcap" "$D/b.pcap" <"$1"
}

# run_tap [--separate-stderr] PCAP_A PCAP_B [fct-tap options]: fct-tap under
# "run", port a reading PCAP_A and port b PCAP_B, output into $D/out
run_tap() {
	local sep=()
	[ "$1" = --separate-stderr ] && sep=("$1") && shift
	run "${sep[@]}" "$TAP" "${EAL[@]}" --vdev=net_pcap0,rx_pcap="$1" \
		--vdev=net_pcap1,rx_pcap="$2" -- --port-a 0 --port-b 1 --out "$D/out" "${@:3}"
}

# tap FIXTURE [fct-tap options]: make the pcap pair, run the tap into
# $D/out: exit 0
tap() {
	local spec=$1; shift
	pcaps "$FIX/$spec.spec"
	run_tap "$D/a.pcap" "$D/b.pcap" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
}

# col SPORT COLUMN: a column of flows.csv for the flow with that source port
col() {
	awk -F, -v sp="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$2 == sp { print $h[c] }' "$D/out/flows.csv"
}

# summary FILTER: jq -r FILTER of summary.json
summary() {
	jq -r "$1" "$D/out/summary.json"
}

# js SPORT FIELD: a field of flows.jsonl
js() {
	jq -r --argjson sp "$1" "select(.sport == \$sp) | .$2" "$D/out/flows.jsonl"
}

# has WHERE GET KEY=VALUE...: "GET KEY" prints VALUE, for each KEY (a
# mismatch is named, WHERE saying where)
has() {
	local where=$1 get=$2 kv got; shift 2
	for kv in "$@"; do
		got=$($get "${kv%%=*}")
		if [ "$got" != "${kv#*=}" ]; then
			echo "$where: ${kv%%=*} = '$got', expected '${kv#*=}'"
			return 1
		fi
	done
}

# expect SPORT COLUMN=VALUE...: the flow's row in flows.csv
expect() {
	has "flow sport $1" "col $1" "${@:2}" || { cat "$D/out/flows.csv"; return 1; }
}

# expect_json SPORT FIELD=VALUE...: the flow's record in flows.jsonl
expect_json() {
	has "flows.jsonl, flow sport $1" "js $1" "${@:2}"
}

# single flow, transits 100 110 100 120:
#   FCT = 1620 - 1000 = 620; OWD mean 430/4 = 107.5; nearest-rank p50 of
#   {100,100,110,120} = 100, p99 = 120; D = 10, 10, 20:
#   J = 10/16 = 0.625; + (10 - 0.625)/16 = 1.2109375; + (20 - 1.2109375)/16
#   = 2.38525390625; |D| mean 40/3 = 13.333, std sqrt(200/9) = 4.714
#   bytes: 40 + 140 + 140 + 40 = 360
SINGLE=(src=10.0.0.1 dst=10.0.1.1 dport=80 proto=6 dscp=0 class=short
	pkts_a=4 bytes_a=360 pkts_b=4 bytes_b=360 lost=0 first_a_us=1000.000
	last_b_us=1620.000 fct_us=620.000 owd_min_us=100.000 owd_mean_us=107.500
	owd_p50_us=100.000 owd_p99_us=120.000 owd_max_us=120.000
	jitter_us=2.385 dv_mean_us=13.333 dv_std_us=4.714 end_reason=fin)

@test "tap: single flow: FCT, OWD stats, RFC 3550 jitter, bytes exact" {
	tap single
	[[ $output == *"timestamp source pcap, resolution 1000.000 ns"* ]]
	[ "$(wc -l <"$D/out/flows.csv")" -eq 2 ]
	expect 40000 "${SINGLE[@]}"
	[ "$(summary .timestamp.source)" = pcap ]
	[ "$(summary .complete)" = true ]
	[ "$(summary '.ports[0].imissed + .ports[1].rx_nombuf')" -eq 0 ]
	expect_json 40000 fct_us=620 jitter_us=2.385
}

@test "tap: A and B swapped: B before A for most packets is a warning, exit 1" {
	pcaps "$FIX/single.spec"
	run_tap --separate-stderr "$D/b.pcap" "$D/a.pcap"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"WARNING: 4 of the delay samples have the packet at B before A (more than half): are --port-a and --port-b swapped?"* ]]
	[ "$(summary .counters.owd_negative)" -eq 4 ]
	# the right way round: no warning, no negative sample
	tap single
	[[ $output != *swapped* ]] || false
	[ "$(summary .counters.owd_negative)" -eq 0 ]
}

@test "tap: --out never follows a link planted in it; files are replaced whole" {
	mkdir -p "$D/out"
	echo precious >"$D/victim"
	for f in flows.csv flows.jsonl summary.json summary.txt hist_fct.csv; do
		ln -s "$D/victim" "$D/out/$f"
	done
	tap single
	[ "$(cat "$D/victim")" = precious ]
	for f in flows.csv flows.jsonl summary.json summary.txt hist_fct.csv; do
		[ -f "$D/out/$f" ] && [ ! -L "$D/out/$f" ]
	done
	expect 40000 "${SINGLE[@]}"
	# no temporary left behind
	[ "$(ls -A "$D/out" | wc -l)" -eq 7 ]
}

@test "tap: a port name with a quote and a backslash is escaped in summary.json" {
	pcaps "$FIX/single.spec"
	run "$TAP" "${EAL[@]}" "--vdev=net_pcap\"q\\0,rx_pcap=$D/a.pcap" \
		--vdev=net_pcap1,rx_pcap="$D/b.pcap" -- --port-a 0 --port-b 1 --out "$D/out"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(summary '.ports[0].name')" = 'net_pcap"q\0' ]
}

@test "tap: per-packet stamps (pcap) give fct_err_us 0" {
	tap single
	expect 40000 fct_err_us=0.000
	expect_json 40000 fct_err_us=0
}

@test "tap: VXLAN (inside a VLAN) and GRE encapsulation give the inner flow, same numbers" {
	tap vxlan
	expect 40000 "${SINGLE[@]}"
	tap gre
	expect 40000 "${SINGLE[@]}"
}

@test "tap: IPv6 flow" {
	tap ipv6
	# IPv6 header is 20 bytes longer: 60 + 160 + 160 + 60 = 440
	local v6=("${SINGLE[@]/src=10.0.0.1/src=2001:db8::1}")
	v6=("${v6[@]/dst=10.0.1.1/dst=2001:db8:1::1}")
	v6=("${v6[@]/bytes_a=360/bytes_a=440}")
	v6=("${v6[@]/bytes_b=360/bytes_b=440}")
	expect 40000 "${v6[@]}"
}

@test "tap: interleaved flows, both directions, class from DSCP, FIN/RST, final ACK" {
	tap interleaved
	[ "$(wc -l <"$D/out/flows.csv")" -eq 4 ]
	# F1 transits 50 60 50: FCT 1450-1000; mean 160/3; J: 0.625, then
	# 0.625 + 9.375/16 = 1.2109375; |D| = 10, 10: mean 10 std 0
	expect 1001 dst=10.0.1.1 class=short pkts_a=3 pkts_b=3 fct_us=450.000 \
		owd_min_us=50.000 owd_mean_us=53.333 owd_p50_us=50.000 \
		owd_p99_us=60.000 owd_max_us=60.000 jitter_us=1.211 \
		dv_mean_us=10.000 dv_std_us=0.000 end_reason=fin
	# F2 (DSCP 1 = long): FIN at B 1280, the final ACK after it (B 1380)
	# is counted but does not extend the FCT: 1280 - 1010 = 270
	expect 1002 dscp=1 class=long pkts_a=5 pkts_b=5 lost=0 last_b_us=1280.000 \
		fct_us=270.000 owd_mean_us=80.000 jitter_us=0.000 end_reason=fin
	# F3 = reverse direction of F1: own flow, RST at B 1530 - 1060
	expect 80 src=10.0.1.1 dst=10.0.0.1 dport=1001 pkts_a=2 fct_us=470.000 \
		owd_mean_us=30.000 end_reason=rst
	# summary: short 1-10 bucket = F1, F3: mean (450 + 470) / 2
	run jq -r '.groups[] | select(.class == "short" and .bucket == "1-10") |
		"\(.flows) \(.fct_mean_us) \(.fct_p50_us) \(.fct_p99_us)"' "$D/out/summary.json"
	[ "$output" = "2 460 450 470" ]
	run jq -r '.groups[] | select(.class == "long" and .bucket == "all") | .flows' "$D/out/summary.json"
	[ "$output" = 1 ]
	grep -q '^long,' "$D/out/hist_fct.csv"
	grep -q '^short,' "$D/out/hist_owd.csv"
}

@test "tap: lost packet: counted, left out of the delay stats" {
	tap lost
	# transits 100, 100, 120: mean 106.667; D = 0, 20: J = 0 then 20/16
	expect 40000 pkts_a=4 bytes_a=360 pkts_b=3 bytes_b=220 lost=1 \
		fct_us=620.000 owd_min_us=100.000 owd_mean_us=106.667 \
		owd_max_us=120.000 jitter_us=1.250 dv_mean_us=10.000 dv_std_us=10.000
	[ "$(summary .counters.lost)" -eq 1 ]
}

@test "tap: duplicate at B: counted as duplicate, not as a delay sample" {
	tap duplicate
	expect 40000 pkts_a=4 pkts_b=5 bytes_b=500 lost=0 fct_us=620.000 \
		owd_mean_us=107.500 jitter_us=2.385
	expect_json 40000 dup_b=1
	[ "$(summary .counters.dup_b)" -eq 1 ]
}

@test "tap: identical retransmission: one loss, one retransmission, ambiguous pair not timed" {
	tap retrans
	# transits used: 100, 100, 100 (the retransmitted pair is ambiguous)
	expect 40000 pkts_a=5 pkts_b=4 lost=1 fct_us=1000.000 owd_mean_us=100.000 \
		owd_max_us=100.000 jitter_us=0.000
	expect_json 40000 retrans_a=1 ambiguous=1
}

@test "tap: flow with no packet at B: all lost, no FCT, ends by idle timeout" {
	tap nob
	expect 5000 pkts_a=2 pkts_b=0 lost=2 first_a_us=1000.000 last_b_us= \
		fct_us= owd_mean_us= jitter_us= end_reason=idle
	expect_json 5000 fct_us=null
	expect 5001 pkts_b=1 fct_us=100.000 end_reason=eof
	# the same input with a 10 s idle timeout: X is still open at EOF
	run_tap "$D/a.pcap" "$D/b.pcap" --idle-timeout-ms 10000
	echo "$output"
	expect 5000 lost=2 end_reason=eof
}

@test "tap: loss timeout: a packet at B later than --loss-timeout-ms is lost + unmatched" {
	grep ' - ' "$FIX/lost.spec" | sed 's/ - / 5000 /' >"$D/late.spec"
	pcaps "$D/late.spec"
	run_tap "$D/a.pcap" "$D/b.pcap" --loss-timeout-ms 1 --idle-timeout-ms 1
	[ "$status" -eq 0 ]
	# A at 1200, B at 5000: 3.8 ms > 1 ms
	[ "$(summary .counters.lost)" -eq 1 ]
	[ "$(summary .counters.unmatched_b)" -eq 1 ]
}

@test "tap: flow table overflow is counted, warned about, exit 1" {
	# 20 flows x 2 packets, room for 16 flows
	"$MKPCAP" --bench 40 20 "$D/a.pcap" "$D/b.pcap"
	run_tap --separate-stderr "$D/a.pcap" "$D/b.pcap" --flows 16
	[ "$status" -eq 1 ]
	[[ $stderr == *"WARNING: tables overflowed (16 packets of untracked flows"* ]]
	# 4 flows x 2 packets x 2 ports untracked
	[ "$(summary .counters.flow_overflow_pkts)" -eq 16 ]
	[ "$(summary .complete)" = false ]
	[ "$(($(wc -l <"$D/out/flows.csv") - 1))" -eq 16 ]
}

@test "tap: in-flight table overflow: unresolved evictions counted, exit 1" {
	local i
	for i in $(seq 1 20); do
		echo "$((1000 + i)) - udp 10.0.0.1 7000 10.0.1.1 53 len=$i"
	done >"$D/many.spec"
	pcaps "$D/many.spec"
	run_tap --separate-stderr "$D/a.pcap" "$D/b.pcap" --inflight 16
	[ "$status" -eq 1 ]
	[[ $stderr == *"4 unresolved in-flight evictions"* ]]
	[ "$(summary .counters.inflight_overflow)" -eq 4 ]
	# every packet is still accounted as lost (evicted ones on eviction)
	[ "$(summary .counters.lost)" -eq 20 ]
}
