#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# reshort boundary as an operator runs it (defects an adversarial pass
# over the observer found, each test failing before its fix): what the
# agent's metrics say of the observers.
FS_PREFIX=fstp
load lib/common
load lib/router

# metrics: one scrape of "stats --prometheus", checked by promtool
metrics() {
	fs_sc stats --prometheus >"$D/m"
	promtool check metrics <"$D/m" >&2
	cat "$D/m"
}

@test "metrics: an interface whose observer is missing says so" {
	fs_sc attach rc --hook tc
	fs_sc attach rs --hook xdp
	metrics | grep -qx 'flowsplit_observer_attached{interface="rc"} 1'
	metrics | grep -qx 'flowsplit_observer_attached{interface="rs"} 1'
	rm "$BPF/observer_if$(ip -n "$R" -j link show rs | jq '.[0].ifindex')"
	fs_wait_for 5 eval 'metrics | grep -qx "flowsplit_observer_attached{interface=\"rs\"} 0"'
	metrics | grep -qx 'flowsplit_observer_attached{interface="rc"} 1'
	fs_sc attach rs
	metrics | grep -qx 'flowsplit_observer_attached{interface="rs"} 1'
}
