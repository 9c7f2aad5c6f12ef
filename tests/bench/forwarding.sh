#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, forwarding part: TCP throughput through a router namespace
#   src --veth-- r --veth-- dst
# with, on r's ingress from src: nothing; the splitter in native XDP; the
# splitter in generic XDP; an nftables + conntrack rule set that marks the
# same short/long DSCP (the obvious alternative to the splitter).
# Each case: iperf3, REPS runs of SECS seconds, median; ratios are against
# the "none" baseline measured in the same run. All three namespaces share
# the same 2 cores, so absolute figures are CPU-bound; compare ratios.
# Output: a table on stdout and build/bench/forwarding.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SPLITCTL=$BUILD/splitctl
SECS=${SECS:-4}
REPS=${REPS:-3}
MSS=${MSS:-1400}
P=fstfwd$$
PIN_MNT=/run/$P/bpf
OUT=$BUILD/bench/forwarding.json

cleanup() {
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
ip netns exec "$P-r" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'

run_iperf() {
	local i res=()
	for i in $(seq "$REPS"); do
		ip netns exec "$P-dst" iperf3 -s -1 -D >/dev/null 2>&1
		for _ in $(seq 50); do ip netns exec "$P-dst" ss -ltn | grep -q ':5201' && break; sleep 0.02; done
		res+=("$(ip netns exec "$P-src" iperf3 -c 10.77.2.1 -t "$SECS" -M "$MSS" -J |
			jq '.end.sum_received.bits_per_second / 1e6')")
	done
	printf '%s\n' "${res[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

declare -A mbps
mbps[none]=$(run_iperf)

PIN="$PIN_MNT/flowsplit"
ip netns exec "$P-r" "$SPLITCTL" --pin-dir "$PIN" attach r0 --mode native >/dev/null
mbps[xdp_native]=$(run_iperf)
ip netns exec "$P-r" "$SPLITCTL" --pin-dir "$PIN" detach --all >/dev/null
ip netns exec "$P-r" "$SPLITCTL" --pin-dir "$PIN" attach r0 --mode generic >/dev/null
mbps[xdp_generic]=$(run_iperf)
ip netns exec "$P-r" "$SPLITCTL" --pin-dir "$PIN" detach --all >/dev/null

# nftables + conntrack: the same classification from connection counters
# (per connection, not per direction, and only once conntrack has the flow).
ip netns exec "$P-r" sh -c 'echo 1 > /proc/sys/net/netfilter/nf_conntrack_acct' 2>/dev/null || true
ip netns exec "$P-r" nft -f - <<NFT
table inet fstfwd {
	chain pre {
		type filter hook prerouting priority mangle; policy accept;
		iifname "r0" meta l4proto tcp ct original packets > 20 ip dscp set 1
		iifname "r0" meta l4proto tcp ct original packets <= 20 ip dscp set 0
	}
}
NFT
mbps[nft_conntrack]=$(run_iperf)
ip netns exec "$P-r" nft delete table inet fstfwd

base=${mbps[none]}
printf '%-28s %12s %8s\n' "forwarding (iperf3 TCP)" "Mbit/s" "ratio"
json="{\"benchmark\":\"forwarding\",\"seconds\":$SECS,\"reps\":$REPS,\"mss\":$MSS,\"cases\":["
sep=
for c in none xdp_native xdp_generic nft_conntrack; do
	r=$(awk -v a="${mbps[$c]}" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
	printf '%-28s %12.0f %8s\n' "$c" "${mbps[$c]}" "$r"
	json+="$sep{\"case\":\"$c\",\"mbit_s\":${mbps[$c]},\"ratio_to_none\":$r}"
	sep=,
done
echo "$json]}" >"$OUT"
