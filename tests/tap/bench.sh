#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# fct-tap benchmark (make bench):
#  1. offline replay rate: a generated pcap pair of 1 M packets per capture
#     point (10 000 flows), replayed through net_pcap on one core; frames/s
#     over both ports, best of 3, at the default and a smaller --inflight.
#  2. live noise floor: one UDP stream mirrored at the SAME point to both tap
#     ports, so every B - A is pure measurement error; per configuration the
#     B - A distribution and fct-tap's CPU use:
#       af_packet (TSC stamps) on CPU 0 shared with the traffic: busy-poll,
#       20 us back-off (its default), 200 us back-off; af_packet on a CPU of
#       its own (the last; iperf3 on the others): busy-poll, and 20 us
#       back-off at SCHED_FIFO 50 (the README's live set-up); net_pcap
#       rx_iface (kernel stamps): busy-poll, 200 us back-off (its default).
# Prints a table, writes build/bench/fct-tap.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FS_BUILD=$(pwd)/$BUILD
OUT=$BUILD/bench
W=$(mktemp -d /tmp/fct-tap-bench.XXXXXX)
P=fstt-bench$$
mkdir -p "$OUT"
EAL=(--no-huge -m 256 --no-pci --in-memory -l 0 --log-level=error)
. tests/tap/standalone.bash

# ---- 1. replay ----
"$BUILD/tap-mkpcap" --bench 1000000 10000 "$W/a.pcap" "$W/b.pcap"
replay() {
	local best=0 r
	for _ in 1 2 3; do
		"$BUILD/fct-tap" "${EAL[@]}" --vdev=net_pcap0,rx_pcap="$W/a.pcap" \
			--vdev=net_pcap1,rx_pcap="$W/b.pcap" -- --port-a 0 --port-b 1 \
			--out "$W/replay" "$@" >/dev/null
		r=$(jq .run.pps "$W/replay/summary.json")
		[ "$r" -gt "$best" ] && best=$r
	done
	echo "$best"
}
PPS_DEF=$(replay)
PPS_64K=$(replay --inflight 65536)
rm -f "$W/a.pcap" "$W/b.pcap"

# ---- 2. noise floor ----
GEN=$P-gen SINK=$P-sink TAPNS=$P-tap
fs_netns "$GEN" "$SINK" "$TAPNS"
ip -n "$GEN" link add g0 type veth peer name k0 netns "$SINK"
ip -n "$SINK" link add ta type veth peer name pa netns "$TAPNS"
ip -n "$SINK" link add tb type veth peer name pb netns "$TAPNS"
ip -n "$GEN" addr add 10.72.0.1/24 dev g0
ip -n "$SINK" addr add 10.72.0.2/24 dev k0
for l in "$GEN g0" "$SINK k0" "$SINK ta" "$SINK tb" "$TAPNS pa" "$TAPNS pb"; do
	set -- $l
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip -n "$1" link set "$2" up
done
tc -n "$SINK" qdisc add dev k0 clsact
tc -n "$SINK" filter add dev k0 ingress protocol ip u32 match ip protocol 17 0xff \
	action mirred egress mirror dev ta action mirred egress mirror dev tb

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
RATE_PPS=5000
DUR=4
NCPU=$(nproc)
# noise NAME PMD [fct-tap options]; OWN=1: fct-tap alone on the last CPU,
# iperf3 on the others (needs 2 CPUs); else fct-tap on CPU 0, iperf3 anywhere
noise() {
	local name=$1 pmd=$2; shift 2
	local vd=(--vdev=net_af_packet0,iface=pa --vdev=net_af_packet1,iface=pb)
	[ "$pmd" = pcap ] && vd=(--vdev=net_pcap0,rx_iface=pa --vdev=net_pcap1,rx_iface=pb)
	local eal=("${EAL[@]}") gen=()
	if [ "${OWN:-0}" = 1 ]; then
		[ "$NCPU" -ge 2 ] || return 0
		eal=(--no-huge -m 256 --no-pci --in-memory -l $((NCPU - 1)) --log-level=error)
		gen=(taskset -c 0-$((NCPU - 2)))
	fi
	"${gen[@]}" ip netns exec "$SINK" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	PIDS+=($!)
	fs_wait_for 10 bash -c "ip netns exec $SINK ss -ltn | grep -q :5201"
	ip netns exec "$TAPNS" "$FS_BUILD/fct-tap" "${eal[@]}" "${vd[@]}" -- \
		--port-a 0 --port-b 1 --out "$W/$name" "$@" >"$W/$name.log" 2>&1 &
	local tp=$!
	PIDS+=("$tp")
	fs_wait_for 20 grep -q "timestamp source" "$W/$name.log"
	local c0 c1 t0 t1
	c0=$(cpu_ticks $tp); t0=$(date +%s.%N)
	"${gen[@]}" ip netns exec "$GEN" iperf3 -c 10.72.0.2 -p 5201 -u -l 1000 \
		-b $((RATE_PPS * 8000)) -t $DUR >/dev/null 2>&1 || true
	c1=$(cpu_ticks $tp); t1=$(date +%s.%N)
	kill -INT $tp
	wait $tp || true
	local cpu
	cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%.1f", (b - a) / hz / (t1 - t0) * 100 }')
	# the UDP flow = the flow with the most packets
	awk -F, -v name="$name" -v cpu="$cpu" 'NR > 1 && $8 > best { best = $8; row = $0 }
		END { split(row, f, ","); printf "%s %s %s %s %s %s %s %s %s\n", name,
			f[8], f[12], f[16], f[18], f[19], f[20], f[17], cpu }' "$W/$name/flows.csv"
}
{
	noise af_packet_busy af_packet --busy-poll
	noise af_packet_sleep20 af_packet
	noise af_packet_sleep200 af_packet --idle-sleep-us 200
	OWN=1 noise af_packet_own_busy af_packet --busy-poll
	OWN=1 noise af_packet_own_rt20 af_packet --rt-priority 50
	noise pcap_iface_busy pcap --busy-poll
	noise pcap_iface_sleep200 pcap
} >"$W/noise.txt"

printf '\nfct-tap benchmark\n'
printf '  replay (net_pcap, 1 core, 2 x 1M packets, 10k flows): %s frames/s (--inflight default), %s frames/s (--inflight 65536)\n' \
	"$PPS_DEF" "$PPS_64K"
printf '  noise floor: one UDP stream (%s pkt/s, %s s) mirrored at one point to A and B; B - A in us\n' "$RATE_PPS" "$DUR"
printf '  %-20s %8s %5s %9s %9s %9s %9s %9s %6s\n' config pkts lost min p50 p99 max mean cpu%
awk '{ printf "  %-20s %8s %5s %9s %9s %9s %9s %9s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' "$W/noise.txt"
# noise.txt columns: config pkts lost min p50 p99 max mean cpu% (a value the
# tap did not give: null)
jq -n -R --argjson pps "$PPS_DEF" --argjson pps64 "$PPS_64K" \
	--argjson rate "$RATE_PPS" --argjson dur "$DUR" '
	def num: tonumber? // null;
	[inputs | split(" ") | { config: .[0], pkts: (.[1] | num), lost: (.[2] | num),
		min_us: (.[3] | num), p50_us: (.[4] | num), p99_us: (.[5] | num),
		max_us: (.[6] | num), mean_us: (.[7] | num), cpu_pct: (.[8] | num) }] as $configs |
	{ replay: { packets_per_port: 1000000, flows: 10000, frames_per_s: $pps,
		    frames_per_s_inflight_65536: $pps64 },
	  noise_floor: { rate_pps: $rate, duration_s: $dur, configs: $configs } }' \
	<"$W/noise.txt" >"$OUT/fct-tap.json"
jq -e . "$OUT/fct-tap.json" >/dev/null
echo "  written: $OUT/fct-tap.json"
