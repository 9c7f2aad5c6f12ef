# SPDX-License-Identifier: GPL-2.0
# The network of the dup suites (tests/dup.bats, tests/dup-agent.bats), on
# tests/lib/wan.bash: the splitter on both routers, split routing, GRO off
# on the tunnel devices (dedup matches wire packets), and a one-line
# request/response server (socat, "pong", port 7000) on $S. Load after
# lib/wan.

# dup_net [ARGS]: sets it up; with ARGS, "splitctl dup attach ARGS" on each
# router too
dup_net() {
	local ns d
	wan_attach 20
	wan_route split
	for ns in "$A" "$B"; do
		for d in vxs vxl; do
			ip netns exec "$ns" ethtool -K $d gro off 2>/dev/null || true
		done
		[ $# -eq 0 ] || wan_sc "$ns" dup attach "$@"
	done
	fs_bg ip netns exec "$S" socat TCP-LISTEN:7000,fork,reuseaddr SYSTEM:'read l; echo pong'
	fs_wait_for 5 dup_listening
}

dup_listening() { ip netns exec "$S" ss -Hltn 'sport = :7000' | grep -q .; }
