#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, forwarding part, through a router namespace
#   src --veth-- r --veth-- dst
# with, on r's ingress from src (r0), each of:
#   none          nothing
#   xdp_native    splitctl attach r0 --hook xdp --mode native
#   xdp_generic   splitctl attach r0 --hook xdp --mode generic
#   tc            splitctl attach r0 --hook tc
#   auto          splitctl attach r0 (the default: auto picks the hook)
#   nft_conntrack an nftables + conntrack rule set marking the same DSCP
# Three tables, ratios against "none" measured in the same run (all three
# namespaces share the machine's cores, so absolute figures are CPU-bound):
#   1. TCP throughput: iperf3 for SECS seconds; for the splitter cases also
#      the packets it counted in the flows against the TCP segments the
#      client sent (counted/sent = 1: exact counts).
#   2. Small packets: trafgen (netsniff-ng) sends 64-byte TCP frames over
#      FLOWS flows from one process for SECS seconds; forwarded packets/s
#      (r1's tx counter) and the busy time of all CPUs (generator, veths,
#      forwarding: trafgen pins its worker itself, and the receive side
#      may run elsewhere) per forwarded packet, meaningful on an otherwise
#      idle machine.
#   3. New flows: the same with a new 5-tuple in every frame; flows/s the
#      splitter inserts (flows_new).
# REPS rounds over all cases (interleaved, so that load from other jobs on
# the machine hits every case alike); the median of each case is reported.
# Output: tables on stdout and build/bench/forwarding.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SPLITCTL=$BUILD/splitctl
SECS=${SECS:-4}
REPS=${REPS:-3}
MSS=${MSS:-1400}
FLOWS=${FLOWS:-4096}
P=fstfwd$$
PIN_MNT=/run/$P/bpf
PIN=$PIN_MNT/flowsplit
OUT=$BUILD/bench/forwarding.json
CASES=(none xdp_native xdp_generic tc auto nft_conntrack)
NEW_CASES=(none xdp_native tc)	# of the new-flow table

cleanup() {
	[ -n "${TG_PID:-}" ] && kill -KILL -- "-$TG_PID" 2>/dev/null
	for ns in $P-src $P-r $P-dst; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	umount "$PIN_MNT" 2>/dev/null
	rm -rf "/run/$P"
	return 0
}
trap cleanup EXIT INT TERM

if [ ! -x "$SPLITCTL" ]; then
	echo "bench-forwarding: skipped, $SPLITCTL is not built yet" >&2
	exit 0
fi
mkdir -p "$PIN_MNT" "$(dirname "$OUT")"
mount -t bpf bpf "$PIN_MNT"

for ns in src r dst; do ip netns add "$P-$ns"; ip -n "$P-$ns" link set lo up; done
ip link add s0 netns "$P-src" type veth peer name r0 netns "$P-r"
ip link add r1 netns "$P-r" type veth peer name d0 netns "$P-dst"
ip -n "$P-src" addr add 10.77.1.1/24 dev s0
ip -n "$P-r" addr add 10.77.1.254/24 dev r0
ip -n "$P-r" addr add 10.77.2.254/24 dev r1
ip -n "$P-dst" addr add 10.77.2.1/24 dev d0
for l in "src s0" "r r0" "r r1" "dst d0"; do set -- $l; ip -n "$P-$1" link set "$2" up; done
ip -n "$P-src" route add default via 10.77.1.254
ip -n "$P-dst" route add default via 10.77.2.254
# small packets go to 10.77.3.0/24: forwarded to dst, which has no such
# address and does not forward, so it drops them without answering
ip -n "$P-r" route add 10.77.3.0/24 via 10.77.2.1
ip netns exec "$P-r" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
# the new-flow frames come from 10.64.0.0/10: no reverse-path filter
ip netns exec "$P-r" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.r0.rp_filter=0
ip netns exec "$P-r" sh -c 'echo 1 > /proc/sys/net/netfilter/nf_conntrack_acct' 2>/dev/null || true

sc() { ip netns exec "$P-r" "$SPLITCTL" --pin-dir "$PIN" "$@"; }
stat_of() { sc -j stats | jq -r ".$1"; }

case_on() {
	case $1 in
	none) ;;
	xdp_native) sc attach r0 --hook xdp --mode native >/dev/null ;;
	xdp_generic) sc attach r0 --hook xdp --mode generic >/dev/null ;;
	tc) sc attach r0 --hook tc >/dev/null ;;
	auto) sc attach r0 | sed 's/^/# /' ;;
	nft_conntrack)
		# the same classification from connection counters (per
		# connection, not per direction, once conntrack has the flow)
		ip netns exec "$P-r" nft -f - <<NFT
table inet fstfwd {
	chain pre {
		type filter hook prerouting priority mangle; policy accept;
		iifname "r0" meta l4proto tcp ct original packets > 20 ip dscp set 1
		iifname "r0" meta l4proto tcp ct original packets <= 20 ip dscp set 0
	}
}
NFT
		;;
	esac
}

case_off() {
	case $1 in
	none) ;;
	nft_conntrack) ip netns exec "$P-r" nft delete table inet fstfwd ;;
	*) sc detach --all >/dev/null ;;
	esac
}

# TCP segments src sent: OutSegs (every segment of a TSO skb) + RetransSegs
out_segs() {
	ip netns exec "$P-src" nstat -az TcpOutSegs TcpRetransSegs | awk '$1 ~ /^Tcp/ {n += $2} END {print n}'
}

# one iperf3 run; prints "mbit counted sent" (counted: packets of the
# client->server flows the splitter counted, or -; sent: TCP segments src
# sent meanwhile)
run_iperf() {
	local sent0 sent1 mbit counted=-
	sent0=$(out_segs)
	ip netns exec "$P-dst" iperf3 -s -1 -D >/dev/null 2>&1
	for _ in $(seq 50); do ip netns exec "$P-dst" ss -ltn | grep -q ':5201' && break; sleep 0.02; done
	mbit=$(ip netns exec "$P-src" iperf3 -c 10.77.2.1 -t "$SECS" -M "$MSS" -J |
		jq '.end.sum_received.bits_per_second / 1e6')
	# every client socket closed (TIME-WAIT): its last segment is out
	for _ in $(seq 100); do
		ip netns exec "$P-src" ss -Htn state established state fin-wait-1 state fin-wait-2 state last-ack | grep -q . || break
		sleep 0.05
	done
	sleep 0.2
	sent1=$(out_segs)
	if [ -e "$PIN" ]; then
		counted=$(sc -j flows | jq '[.[] | select(.dst == "10.77.2.1") | .packets] | add // 0')
	fi
	printf '%s %s %s\n' "$mbit" "$counted" "$((sent1 - sent0))"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# trafgen config: 64-byte frames (14 + 20 + 20 + 10 bytes payload) to r0
trafgen_conf() { # NEWFLOWS(0|1)
	local mac sp
	mac=$(ip -n "$P-r" -j link show r0 | jq -r '.[0].address')
	if [ "$1" = 1 ]; then
		# a new source address per frame: 2^32 distinct flows
		sp="sp=40000"
		src="saddr=10.64.0.0, saddr=dinc()"
	else
		sp="sp=dinc(10000, $((10000 + FLOWS - 1)))"
		src="saddr=10.77.1.1"
	fi
	cat <<CONF
{
	eth(da=$mac, type=0x0800),
	ipv4($src, daddr=10.77.3.1, ttl=64),
	tcp($sp, dp=80, ack, psh, seq=1, win=65535),
	fill(0x41, 10)
}
CONF
}

busy_ticks() { # user+nice+system+irq+softirq of all CPUs, in ticks
	awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8}' /proc/stat
}

# trafgen for SECS seconds; prints "pps cpu_ns_per_pkt new_flows_per_s"
run_trafgen() { # NEWFLOWS(0|1)
	local conf=/run/$P/trafgen.cfg
	local tx0 tx1 b0 b1 f0=0 f1=0 t0 t1 hz
	hz=$(getconf CLK_TCK)
	trafgen_conf "$1" >"$conf"
	# its own process group (trafgen forks a worker): stopped as a whole
	ip netns exec "$P-src" setsid trafgen -o s0 -c "$conf" -P 1 -q >/dev/null 2>&1 &
	TG_PID=$!
	sleep 1	# ramp up
	[ -e "$PIN" ] && f0=$(stat_of flows_new)
	tx0=$(ip netns exec "$P-r" cat /sys/class/net/r1/statistics/tx_packets)
	b0=$(busy_ticks); t0=$(date +%s.%N)
	sleep "$SECS"
	tx1=$(ip netns exec "$P-r" cat /sys/class/net/r1/statistics/tx_packets)
	b1=$(busy_ticks); t1=$(date +%s.%N)
	[ -e "$PIN" ] && f1=$(stat_of flows_new)
	kill -INT -- "-$TG_PID" 2>/dev/null; wait "$TG_PID" 2>/dev/null || true; TG_PID=
	awk -v p=$((tx1 - tx0)) -v b=$((b1 - b0)) -v f=$((f1 - f0)) -v hz="$hz" \
		-v t0="$t0" -v t1="$t1" 'BEGIN {
		d = t1 - t0
		printf "%.0f %.0f %.0f\n", p / d, p ? b / hz * 1e9 / p : 0, f / d }'
}

# measure KIND CMD... -- CASE...: CMD once in each CASE (set up around it);
# its output line appended to runs[KIND CASE]
declare -A runs
measure() {
	local kind=$1 c out cmd=()
	shift
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	for c in "$@"; do
		case_on "$c"
		out=$("${cmd[@]}")
		case_off "$c"
		runs[$kind $c]+="$out"$'\n'
	done
}

# field KIND CASE N: field N of each of runs[KIND CASE]'s lines
field() { printf '%s' "${runs[$1 $2]}" | awk -v n="$3" '{ print $n }'; }

# sum: the sum of the numbers on stdin, one a line, those that are "-" left
# out; "-" when all are
sum() {
	local s=- v
	while read -r v; do [ "$v" = - ] || s=$((${s/-/0} + v)); done
	echo "$s"
}

# REPS rounds, each over every case in turn, so that load from elsewhere on
# the machine spreads over all cases; medians per case (sums of the
# counted and sent packets)
for r in $(seq "$REPS"); do
	measure tcp run_iperf -- "${CASES[@]}"
	measure small run_trafgen 0 -- "${CASES[@]}"
	measure new run_trafgen 1 -- "${NEW_CASES[@]}"
done
declare -A mbps counted sent pps cpuns newfl newpps
for c in "${CASES[@]}"; do
	mbps[$c]=$(field tcp "$c" 1 | median)
	counted[$c]=$(field tcp "$c" 2 | sum)
	sent[$c]=$(field tcp "$c" 3 | sum)
	pps[$c]=$(field small "$c" 1 | median)
	cpuns[$c]=$(field small "$c" 2 | median)
done
for c in "${NEW_CASES[@]}"; do
	newpps[$c]=$(field new "$c" 1 | median)
	newfl[$c]=$(field new "$c" 3 | median)
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b ? a / b : 0}'; }
json="{\"benchmark\":\"forwarding\",\"seconds\":$SECS,\"reps\":$REPS,\"mss\":$MSS,\"small_packet_flows\":$FLOWS,\"tcp\":["
printf '%-16s %10s %7s %12s\n' "TCP (iperf3)" "Mbit/s" "ratio" "counted/sent"
sep=
for c in "${CASES[@]}"; do
	r=$(ratio "${mbps[$c]}" "${mbps[none]}")
	cs=-; csj=null
	if [ "${counted[$c]}" != - ]; then cs=$(ratio "${counted[$c]}" "${sent[$c]}"); csj=$cs; fi
	printf '%-16s %10.0f %7s %12s\n' "$c" "${mbps[$c]}" "$r" "$cs"
	json+="$sep{\"case\":\"$c\",\"mbit_s\":${mbps[$c]},\"ratio_to_none\":$r,\"splitter_counted\":$([ "${counted[$c]}" = - ] && echo null || echo "${counted[$c]}"),\"client_segments\":${sent[$c]},\"counted_to_sent\":$csj}"
	sep=,
done
json+="],\"small_packets\":["
printf '\n%-16s %10s %7s %12s %10s\n' "64 B TCP ($FLOWS flows)" "pkt/s" "ratio" "CPU ns/pkt" "vs none"
sep=
for c in "${CASES[@]}"; do
	r=$(ratio "${pps[$c]}" "${pps[none]}")
	d=$((cpuns[$c] - cpuns[none]))
	printf '%-16s %10s %7s %12s %+10d\n' "$c" "${pps[$c]}" "$r" "${cpuns[$c]}" "$d"
	json+="$sep{\"case\":\"$c\",\"pps\":${pps[$c]},\"ratio_to_none\":$r,\"cpu_ns_per_packet\":${cpuns[$c]},\"cpu_ns_over_none\":$d}"
	sep=,
done
json+="],\"new_flows\":["
printf '\n%-16s %10s %7s %12s\n' "new 5-tuple/frame" "pkt/s" "ratio" "flows/s"
sep=
for c in "${NEW_CASES[@]}"; do
	r=$(ratio "${newpps[$c]}" "${newpps[none]}")
	printf '%-16s %10s %7s %12s\n' "$c" "${newpps[$c]}" "$r" "$([ "$c" = none ] && echo - || echo "${newfl[$c]}")"
	json+="$sep{\"case\":\"$c\",\"pps\":${newpps[$c]},\"ratio_to_none\":$r,\"flows_new_per_s\":$([ "$c" = none ] && echo null || echo "${newfl[$c]}")}"
	sep=,
done
echo "$json]}" >"$OUT"
