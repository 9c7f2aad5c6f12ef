#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# fct-tap live accuracy: the live test's 4 TCP transfers (tests/tap/live.bash),
# repeated RUNS times in one topology; per run and flow the FCT of fct-tap
# minus tcpdump's at the same two points, then per flow size the max |error|
# and how many runs broke the live test's bound (200 us or 2 %).
#   tests/tap/live-accuracy.sh [RUNS [fct-tap options]]
# Placement from the environment (see live.bash): LIVE_PMD, LIVE_LCORE,
# LIVE_GEN_CPUS; e.g. the recommended live set-up on 2 CPUs:
#   LIVE_LCORE=1 LIVE_GEN_CPUS=0 tests/tap/live-accuracy.sh 10 --rt-priority 50
set -euo pipefail
cd "$(dirname "$0")/../.."
FS_BUILD=$(pwd)/${BUILD:-build}
RUNS=${1:-10}
shift || true
W=$(mktemp -d /tmp/fct-tap-acc.XXXXXX)
. tests/tap/standalone.bash
. tests/tap/live.bash
live_topo "fstt-acc$$" 50mbit

echo "# run sport fct_tcpdump_us fct_tap_us err_us pkts_a tap_pkts_a pkts_b tap_pkts_b tap_lost tap_fct_err_us"
for r in $(seq 1 "$RUNS"); do
	live_run "$W/$r" "$@"
	live_compare "$W/$r" | sed "s/^/$r /" | tee -a "$W/all.txt"
	rm -rf "${W:?}/$r"
done
awk 'BEGIN { split("2kB 20kB 200kB 1MB", name, " ") }
	{ k = ++idx[$1]; e = $5 == "-" ? 1e18 : ($5 < 0 ? -$5 : $5)
	tol = 0.02 * $3; if (tol < 200) tol = 200
	cnt[k]++; if (e > mx[k]) mx[k] = e; if (e > tol) bad[k]++
	if (e > all) all = e; fct[k] += $3 }
	END { for (k = 1; k <= 4; k++)
		printf "%-5s mean FCT %7.0f us, max |err| %5.0f us, over 200 us / 2 %%: %d of %d runs\n",
			name[k], fct[k] / cnt[k], mx[k], bad[k], cnt[k]
	printf "max |err| over all flows and runs: %.0f us\n", all }' "$W/all.txt"
