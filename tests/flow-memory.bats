#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# One memory figure per flow: computed from the flow maps' definitions (key
# and value sizes) as the kernel allocates an LRU hash, checked against the
# kernel's own figure for the default table size, and quoted by every
# document that gives one.
FS_PREFIX=fstn
load lib/common

setup() {
	N=$FS_PREFIX-$$-$BATS_TEST_NUMBER
	fs_netns "$N"
	ip -n "$N" link add v0 type veth peer v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	BPF=$(fs_bpffs)/x
}

teardown() {
	ip netns exec "$N" "$SPLITCTL" --pin-dir "$BPF" detach --all >/dev/null 2>&1 || true
	fs_teardown
}

# map NAME FIELD: a field of a pinned map (bpftool JSON)
map() { bpftool -j map show pinned "$BPF/$1" | jq -r ".$2"; }

# r8 N: N rounded up to 8
r8() { echo $((($1 + 7) / 8 * 8)); }

@test "memory per flow: the map definitions, the kernel and the docs agree" {
	ip netns exec "$N" "$SPLITCTL" --pin-dir "$BPF" attach v0 >/dev/null
	local f per total=0 fig=()
	for f in fs_flows4 fs_flows6; do
		# an LRU hash element: a 48 B header, key and value rounded to
		# 8 B; a 16 B bucket per entry (entries: a power of two)
		per=$((48 + $(r8 "$(map $f bytes_key)") + $(r8 "$(map $f bytes_value)") + 16))
		echo "# $f: $per B per flow (key $(map $f bytes_key), value $(map $f bytes_value)), memlock $(map $f bytes_memlock) for $(map $f max_entries)"
		[ "$(( $(map $f bytes_memlock) / $(map $f max_entries) ))" -eq "$per" ]
		fig+=("$per")
		total=$((total + $(map $f bytes_memlock)))
	done
	mb=$(( (total + 500000) / 1000000 ))
	echo "# ${fig[0]} B per IPv4 flow, ${fig[1]} B per IPv6 flow, about $mb MB with the defaults"
	grep -q "Memory: ${fig[0]} B per IPv4 flow, ${fig[1]} B per IPv6 flow" "$FS_ROOT/docs/deploy.md"
	grep -q "about $mb MB, allocated in full" "$FS_ROOT/docs/deploy.md"
	grep -q "${fig[0]} B per IPv4 flow, ${fig[1]} B per IPv6 flow in the LRU tables" "$FS_ROOT/docs/design.md"
	tr '\n' ' ' <"$FS_ROOT/loader/splitctl.8" | grep -q "${fig[0]} B per IPv4 flow, ${fig[1]} B per IPv6 flow, about $mb MB with the defaults"
	# and no other figure per flow anywhere in the docs
	! grep -rhoE '[0-9]+ B per IPv[46] flow' "$FS_ROOT/README.md" "$FS_ROOT/docs" "$FS_ROOT/loader/splitctl.8" "$FS_ROOT/loader/README.md" |
		grep -vE "^(${fig[0]} B per IPv4|${fig[1]} B per IPv6) flow$" || false
}
