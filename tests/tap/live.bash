# SPDX-License-Identifier: GPL-2.0
# Live topology for fct-tap's tests and noise-floor benchmark (sourced; needs
# fs_netns/fs_bg from tests/lib/common.bash or the stand-ins in bench.sh).
#
#   snd s0 ==== m0 mid m1 ==[tbf]==== r0 rcv
#               | ingress mirred (TCP)   | ingress mirred (TCP)
#               ta                       tb
#               |                        |
#              pa ---- tap namespace --- pb      fct-tap: A = pa, B = pb
#
# A = copy of what leaves the sender (taken where it enters mid: a tc hook
# on the sender's own egress would see TCP's GSO super-packets, which are
# segmented only after that hook), B = copy of what reaches the receiver
# (after the mid router's rate limit); both read with net_af_packet.
# Only the data direction snd -> rcv crosses both points.

LIVE_SND=10.71.1.1
LIVE_RCV=10.71.2.1

# live_topo PREFIX RATE: builds namespaces PREFIX-{snd,mid,rcv,tap}
live_topo() {
	local p=$1 rate=$2
	SND=$p-snd MID=$p-mid RCV=$p-rcv TAPNS=$p-tap
	fs_netns "$SND" "$MID" "$RCV" "$TAPNS"
	ip -n "$SND" link add s0 type veth peer name m0 netns "$MID"
	ip -n "$MID" link add m1 type veth peer name r0 netns "$RCV"
	ip -n "$MID" link add ta type veth peer name pa netns "$TAPNS"
	ip -n "$RCV" link add tb type veth peer name pb netns "$TAPNS"
	# no IPv6 chatter (ND, MLD) from the tap links into the capture
	ip netns exec "$MID" sysctl -qw net.ipv6.conf.ta.disable_ipv6=1
	ip netns exec "$RCV" sysctl -qw net.ipv6.conf.tb.disable_ipv6=1
	ip netns exec "$TAPNS" sysctl -qw net.ipv6.conf.pa.disable_ipv6=1
	ip netns exec "$TAPNS" sysctl -qw net.ipv6.conf.pb.disable_ipv6=1
	ip -n "$SND" addr add $LIVE_SND/24 dev s0
	ip -n "$MID" addr add 10.71.1.2/24 dev m0
	ip -n "$MID" addr add 10.71.2.2/24 dev m1
	ip -n "$RCV" addr add $LIVE_RCV/24 dev r0
	for l in "$SND s0" "$MID ta" "$MID m0" "$MID m1" "$RCV r0" "$RCV tb" \
		"$TAPNS pa" "$TAPNS pb"; do
		set -- $l
		ip -n "$1" link set "$2" up
	done
	ip -n "$SND" route add default via 10.71.1.2
	ip -n "$RCV" route add default via 10.71.2.2
	ip netns exec "$MID" sysctl -qw net.ipv4.ip_forward=1
	# MTU-sized packets, as on a real wire (no TSO/GSO super-packets)
	ip netns exec "$SND" ethtool -K s0 tso off gso off >/dev/null 2>&1
	ip netns exec "$RCV" ethtool -K r0 tso off gso off >/dev/null 2>&1
	tc -n "$MID" qdisc add dev m1 root tbf rate "$rate" burst 32k latency 100ms
	tc -n "$MID" qdisc add dev m0 clsact
	tc -n "$MID" filter add dev m0 ingress protocol ip u32 match ip protocol 6 0xff \
		action mirred egress mirror dev ta
	tc -n "$RCV" qdisc add dev r0 clsact
	tc -n "$RCV" filter add dev r0 ingress protocol ip u32 match ip protocol 6 0xff \
		action mirred egress mirror dev tb
}

# live_tap OUTDIR LOG [fct-tap options]: start fct-tap in the tap namespace
# (LIVE_PMD=af_packet (default): TSC stamps; LIVE_PMD=pcap: net_pcap
# rx_iface=, kernel capture stamps)
live_tap() {
	local out=$1 log=$2; shift 2
	local vdevs=(--vdev=net_af_packet0,iface=pa --vdev=net_af_packet1,iface=pb)
	[ "${LIVE_PMD:-af_packet}" = pcap ] &&
		vdevs=(--vdev=net_pcap0,rx_iface=pa --vdev=net_pcap1,rx_iface=pb)
	fs_bg ip netns exec "$TAPNS" "$FS_BUILD/fct-tap" --no-huge -m 256 --no-pci \
		--in-memory -l 0 --log-level=error "${vdevs[@]}" -- \
		--port-a 0 --port-b 1 --out "$out" "$@" >"$log" 2>&1
	TAP_PID=$!
	fs_wait_for 20 grep -q "timestamp source" "$log"
}
