#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# Smoke test of the whole testbed: up (a small bottleneck bucket), a short
# split run and a short ECMP run, every request measured by flowgen and
# fct-tap, tunnels used as the mode says, nothing left behind.
FS_PREFIX=fstb
load lib/common
load lib/testbed

setup_file() {
	tb_up --rate-mbit 20 --queue 200 --burst 4096
	export OUTDIR=$BATS_FILE_TMPDIR/runs
	"$TB" run --prefix "$P" --mode split --duration 8 --seed 1 --req-rate 5 --out "$OUTDIR/split-1"
	"$TB" run --prefix "$P" --mode ecmp --duration 8 --seed 1 --req-rate 5 --out "$OUTDIR/ecmp-1"
}

teardown_file() {
	"$TB" down --prefix "$P"
}

requests() { tail -n +2 "$1/flowgen.csv" | wc -l; }

@test "flowgen completed every request of the schedule, in both modes" {
	for m in split ecmp; do
		n=$("$FS_BUILD/flowgen" --rate 5 --duration 8 --seed 1 --scale 0.02 --print-schedule | tail -n +2 | wc -l)
		[ "$(requests "$OUTDIR/$m-1")" -eq "$n" ]
		! tail -n +2 "$OUTDIR/$m-1/flowgen.csv" | awk -F, '$10 == 0' | grep . || false
		jq -e '.flowgen_exit == 0 and .netem == false' "$OUTDIR/$m-1/meta.json"
	done
}

@test "fct-tap has a flow record for every request, and accounts for every port drop" {
	# Whether the ports drop depends on how the tap is scheduled on a shared
	# machine, so drops are not a failure; a drop the tap does not count,
	# report and warn about is.
	for m in split ecmp; do
		s=$OUTDIR/$m-1/tap
		# shown on failure: what each port counted and what the tap said
		jq -c '.ports' "$s/summary.json"
		tail -n 4 "$OUTDIR/$m-1/tap.log"
		drops=$(jq '[.ports[] | .imissed + .ierrors + .rx_nombuf] | add' "$s/summary.json")
		grep -q "port_drops *$drops " "$s/summary.txt"
		if [ "$drops" -eq 0 ]; then
			! grep -q 'WARNING: the ports dropped' "$OUTDIR/$m-1/tap.log"
		else
			grep -q "WARNING: the ports dropped $drops packets" "$OUTDIR/$m-1/tap.log"
			jq -e '.complete == false' "$s/summary.json"
			echo "# $m: the ports dropped $drops packets (a loaded machine)" >&3
		fi
		tail -n +2 "$OUTDIR/$m-1/flowgen.csv" | cut -d, -f6 | while read -r port; do
			grep -q ",$port,10.2.0.1,80,6,\|^10.2.0.1,80,10.1.0.1,$port," "$s/flows.csv" ||
				{ echo "no flow for client port $port ($m)"; false; }
		done
	done
}

@test "split: the LONG tunnel carries exactly the long-marked traffic; ECMP uses both" {
	# split: what rA marked long left through vxl, what it marked short through vxs
	long=$(jq '.ra.packets_long' "$OUTDIR/split-1/splitter.json")
	short=$(jq '.ra.packets_short' "$OUTDIR/split-1/splitter.json")
	[ "$long" -gt 100 ]
	vxl=$(jq '.tunnels[] | select(.name == "vxl") | .tx_packets' "$OUTDIR/split-1/tunnels.json")
	vxs=$(jq '.tunnels[] | select(.name == "vxs") | .tx_packets' "$OUTDIR/split-1/tunnels.json")
	# exactly: every long-marked packet, and nothing else, left through vxl
	# (the split run is the first on this testbed, so counters are its own)
	[ "$vxl" -eq "$long" ] && [ "$vxs" -eq "$short" ]
	# ecmp: both tunnels carry a fair share of the data
	e_vxl=$(jq '.tunnels[] | select(.name == "vxl") | .tx_packets' "$OUTDIR/ecmp-1/tunnels.json")
	e_vxs=$(jq '.tunnels[] | select(.name == "vxs") | .tx_packets' "$OUTDIR/ecmp-1/tunnels.json")
	[ "$((e_vxl - vxl))" -gt 100 ] && [ "$((e_vxs - vxs))" -gt 100 ]
	jq -e '.mode == "ecmp"' "$OUTDIR/ecmp-1/tunnels.json"
}

@test "--burst: both paths' bottleneck, both directions, is an HTB with that bucket; meta.json says it" {
	for n in 1 2; do
		for dev in wan_a wan_b; do
			c=$(ip netns exec "$P-w$n" tc class show dev "$dev" classid 1:1)
			echo "path $n $dev: $c"
			# tc stores the bucket as time at the rate and prints it back
			# in bytes (4096 -> 4Kb, or a few bytes under it)
			echo "$c" | grep -Eq 'rate 20Mbit ceil 20Mbit burst (4Kb|40[89][0-9]b) cburst (4Kb|40[89][0-9]b)'
		done
	done
	jq -e '.burst_bytes == 4096' "$OUTDIR/split-1/meta.json"
}

@test "report.py summarises the pair" {
	run /usr/bin/python3 "$FS_ROOT/testbed/analysis/report.py" "$OUTDIR"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"short FCT mean (ms)"* ]]
	[ -s "$OUTDIR/summary.md" ] && [ -s "$OUTDIR/fct_cdf.png" ]
	# every request joined with its tap flow
	[ "$(awk -F, 'NR > 1 && $6 != 0' "$OUTDIR/summary.csv" | wc -l)" -eq 0 ]
}

@test "down leaves nothing behind" {
	"$TB" down --prefix "$P"
	! ip netns list | grep -q "^$P-" || false
	[ ! -e "/run/$P" ]
	! grep -q " /run/$P/" /proc/mounts || false
	! pgrep -f -- "--prefix $P " >/dev/null || false
	! pgrep -f "$P-" >/dev/null || false
}
