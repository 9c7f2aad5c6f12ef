# SPDX-License-Identifier: GPL-2.0
# The WAN of the spill suites (tests/spill.bats, tests/spill-faults.bats), on
# tests/lib/wan.bash: router A's egress onto each underlay shaped to
# WAN_MBIT with a 100 ms FIFO (no netem), offloads off on the whole path so
# that queues count wire packets. Load after lib/wan.

WAN_MBIT=20
WAN_LIMIT=250000	# bytes: 100 ms at 20 Mbit/s
TARGET_MS=5		# the default target-delay

# spill_wan: both of A's underlays shaped, GSO/TSO/GRO off on the path
spill_wan() {
	wan_offloads_off "$C c0" "$A lana" "$A vxs" "$A vxl" "$A a1" "$A a2" \
		"$B b1" "$B b2" "$B vxs" "$B vxl" "$B lanb" "$S s0"
	wan_shape a1 a2
}

# spill_attached: the splitter on both routers, spill on
spill_attached() {
	wan_attach 10
	wan_sc "$A" set spill yes
	wan_sc "$B" set spill yes
}
