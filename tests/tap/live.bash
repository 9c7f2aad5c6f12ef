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

# Where the live pieces run (all optional):
#   LIVE_PMD=af_packet (default): TSC stamps; LIVE_PMD=pcap: net_pcap
#     rx_iface=, kernel capture stamps
#   LIVE_LCORE=N: fct-tap's EAL lcore (-l N, default 0)
#   LIVE_GEN_CPUS=LIST: taskset CPU list for tcpdump and socat (default: any)

# live_tap OUTDIR LOG [fct-tap options]: start fct-tap in the tap namespace
live_tap() {
	local out=$1 log=$2; shift 2
	# 4096 ring frames (default 512): room for 1 s of the transfers
	local vdevs=(--vdev=net_af_packet0,iface=pa,framecnt=4096
		--vdev=net_af_packet1,iface=pb,framecnt=4096)
	[ "${LIVE_PMD:-af_packet}" = pcap ] &&
		vdevs=(--vdev=net_pcap0,rx_iface=pa --vdev=net_pcap1,rx_iface=pb)
	fs_bg ip netns exec "$TAPNS" "$FS_BUILD/fct-tap" --no-huge -m 256 --no-pci \
		--in-memory -l "${LIVE_LCORE:-0}" --log-level=error "${vdevs[@]}" -- \
		--port-a 0 --port-b 1 --out "$out" "$@" >"$log" 2>&1
	TAP_PID=$!
	# a tap that does not start says why in its log (shown on failure)
	fs_wait_for 60 grep -q "timestamp source" "$log" || {
		echo "fct-tap did not start within 60 s:"
		cat "$log"
		ps -o pid,stat,etime,args -p "$TAP_PID" || true
		return 1
	}
}

# live_run DIR [fct-tap options]: tcpdump on pa and pb (DIR/a.pcap,
# DIR/b.pcap) and fct-tap (DIR/out, DIR/tap.log) while 4 TCP transfers of
# 2 kB, 20 kB, 200 kB and 1 MB run snd -> rcv one after the other; stops
# fct-tap with SIGINT once every FIN has reached B, then the tcpdumps (TERM:
# a background job of a non-interactive shell ignores SIGINT)
live_run() {
	local d=$1 n td_a td_b gen=(); shift
	[ -n "${LIVE_GEN_CPUS:-}" ] && gen=(taskset -c "$LIVE_GEN_CPUS")
	mkdir -p "$d"
	fs_bg "${gen[@]}" ip netns exec "$TAPNS" tcpdump -U --immediate-mode -B 16384 -i pa -w "$d/a.pcap" 2>"$d/tda.log"
	td_a=$!
	fs_bg "${gen[@]}" ip netns exec "$TAPNS" tcpdump -U --immediate-mode -B 16384 -i pb -w "$d/b.pcap" 2>"$d/tdb.log"
	td_b=$!
	fs_wait_for 60 grep -q listening "$d/tda.log"
	fs_wait_for 60 grep -q listening "$d/tdb.log"
	live_tap "$d/out" "$d/tap.log" --idle-timeout-ms 60000 "$@"
	ip netns exec "$RCV" ss -ltn | grep -q :5001 ||
		fs_bg "${gen[@]}" ip netns exec "$RCV" socat -u \
			TCP-LISTEN:5001,reuseaddr,fork GOPEN:/dev/null
	fs_wait_for 60 bash -c "ip netns exec $RCV ss -ltn | grep -q :5001"
	for n in 2000 20000 200000 1000000; do
		head -c $n /dev/zero |
			"${gen[@]}" ip netns exec "$SND" socat -u - TCP:$LIVE_RCV:5001
	done
	# every FIN has reached A and B (tcpdump writes each packet at once:
	# --immediate-mode hands it over at once, -U writes it; without them a
	# TPACKET_V3 block not yet full when tcpdump was stopped was lost, up to
	# 112 packets of the reference)
	fs_wait_for 60 bash -c "[ \$(tcpdump -nn -r $d/a.pcap 'tcp[13] & 1 != 0' 2>/dev/null | wc -l) -ge 4 ]"
	fs_wait_for 60 bash -c "[ \$(tcpdump -nn -r $d/b.pcap 'tcp[13] & 1 != 0' 2>/dev/null | wc -l) -ge 4 ]"
	kill -INT "$TAP_PID"
	fs_wait_for 60 bash -c "! kill -0 $TAP_PID 2>/dev/null"
	kill -TERM "$td_a" "$td_b" 2>/dev/null
	fs_wait_for 60 bash -c "! kill -0 $td_a 2>/dev/null && ! kill -0 $td_b 2>/dev/null"
}

# live_drops DIR: what overflowed a capture ring in live_run DIR (the tap's
# port counters, tcpdump's "dropped by kernel"); status 1 when nothing did
live_drops() {
	local d=$1 tap td
	tap=$(jq '[.ports[] | .imissed + .ierrors + .rx_nombuf] | add' "$d/out/summary.json" 2>/dev/null)
	td=$(cat "$d/tda.log" "$d/tdb.log" 2>/dev/null |
		awk '/packets dropped by kernel/ { n += $1 } END { print n + 0 }')
	[ "${tap:-0}" -eq 0 ] && [ "$td" -eq 0 ] && return 1
	echo "fct-tap ${tap:-?}, tcpdump $td"
}

# live_dump_fct A.pcap B.pcap: "sport fct_us pkts_a pkts_b" per flow from
# tcpdump (first packet at A, last packet at B up to the FIN)
live_dump_fct() {
	{
		tcpdump -tt -nn -r "$1" tcp 2>/dev/null | sed "s/^/A /"
		tcpdump -tt -nn -r "$2" tcp 2>/dev/null | sed 's/^/B /'
	} | awk '{ split($4, s, "."); sp = s[5]; t = $2 }
		$1 == "A" { if (!(sp in fa)) fa[sp] = t; na[sp]++ }
		$1 == "B" { nb[sp]++; if (!(sp in done)) { lb[sp] = t
				if ($8 ~ /[FR]/) done[sp] = 1 } }
		END { for (sp in fa) printf "%s %.0f %d %d\n", sp,
			(lb[sp] - fa[sp]) * 1e6, na[sp], nb[sp] }'
}

# live_compare DIR: one line per tcpdump flow, sorted by size:
#   sport fct_tcpdump_us fct_tap_us err_us pkts_a(tcpdump) pkts_a(tap)
#   pkts_b(tcpdump) pkts_b(tap) lost(tap) fct_err_us(tap)
# err_us = fct_tap - fct_tcpdump; fct_err_us = how late the tap says its
# stamps of the flow's first A and last B packet may be (TSC per burst);
# fields the tap lacks are "-". A packet of the 5-tuple that comes after the
# flow ended (FIN at B) and was resolved (loss timeout) starts a new record
# (e.g. a final ACK resent 1.75 s later on a loaded machine); tcpdump counts
# it with the flow, so the packet counts are summed over the records of a
# source port, the FCT is the first record's.
live_compare() {
	local d=$1
	live_dump_fct "$d/a.pcap" "$d/b.pcap" | sort -k3n |
		awk 'NR == FNR { if (FNR == 1) { for (i = 1; i <= NF; i++) c[$i] = i; next }
				sp = $c["sport"]
				if (!(sp in ft)) { ft[sp] = $c["fct_us"]; fe[sp] = $c["fct_err_us"] }
				pa[sp] += $c["pkts_a"]; pb[sp] += $c["pkts_b"]
				lo[sp] += $c["lost"]; next }
			{ t = ($1 in ft) ? ft[$1] : "-"
			  printf "%s %s %s %s %s %s %s %s %s %s\n", $1, $2, t,
				t == "-" ? "-" : sprintf("%.0f", t - $2), $3,
				($1 in pa) ? pa[$1] : "-", $4,
				($1 in pb) ? pb[$1] : "-", ($1 in lo) ? lo[$1] : "-",
				($1 in fe) && fe[$1] != "" ? sprintf("%.0f", fe[$1]) : "-" }' \
			FS=, "$d/out/flows.csv" FS=' ' -
}
