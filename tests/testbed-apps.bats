#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The apps harness (testbed/apps) on a small testbed: a wrk job under unpaced
# bulk, a pgbench job under paced bulk, a redis-benchmark job under
# unpaced bulk and flowgen's short flows (a new connection each) without
# bulk, all complete with run-times and percentiles that respect
# the propagation delay, bulk, the endpoints' TCP counters, the flow
# tables and the paths' bottleneck load recorded, the report built, bad
# values refused, the designs of run-experiment listed, the modes with
# agents (deployed, nospill) start and stop them and record the spill
# counters, and testbed down leaves no nginx, PostgreSQL, Redis, iperf3,
# wrk or agent behind.
FS_PREFIX=fsta
load lib/common

TB=$FS_ROOT/testbed/testbed
APPS=$FS_ROOT/testbed/apps
ONE_WAY_MS=5		# RTT 10 ms on both tunnels
RATE_MBIT=20
WRK_N=200 PG_N=40 REDIS_N=200 CONNS=4
FLOWGEN_N=60 FLOWGEN_RATE=60	# short flows, one new connection each, no bulk
AGENT_N=100		# the jobs of the modes with agents: their plumbing only
PG_DEMAND=0.5		# x one tunnel's rate per direction

setup_file() {
	for tool in wrk iperf3 nstat; do
		command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
	done
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || skip "no PostgreSQL server (postgresql-15)"
	command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
		skip "no Redis server or benchmark (redis-server, redis-tools)"
	export P=fsta$(($$ % 10000))
	export OUTDIR=$BATS_FILE_TMPDIR/runs
	"$TB" down --prefix "$P"
	"$TB" up --prefix "$P" --rate-mbit "$RATE_MBIT" --queue-ms 50 --delay-ms "$ONE_WAY_MS"
	"$APPS" run --prefix "$P" --mode ecmp --app wrk --requests "$WRK_N" --conns "$CONNS" \
		--bulk-demand max --bulk-warmup 2 --out "$OUTDIR/ecmp-wrk-1"
	"$APPS" run --prefix "$P" --mode split --app pgbench --requests "$PG_N" --conns "$CONNS" \
		--bulk-demand "$PG_DEMAND" --bulk-cc bbr --bulk-warmup 2 --out "$OUTDIR/split-pgbench-1"
	"$APPS" run --prefix "$P" --mode split --app redis --requests "$REDIS_N" --conns "$CONNS" \
		--bulk-demand max --bulk-warmup 2 --out "$OUTDIR/split-redis-1"
	"$APPS" run --prefix "$P" --mode split --app flowgen --requests "$FLOWGEN_N" --rate "$FLOWGEN_RATE" \
		--bulk-demand 0 --bulk-warmup 0 --out "$OUTDIR/split-flowgen-1"
	for m in deployed nospill; do
		"$APPS" run --prefix "$P" --mode "$m" --app wrk --requests "$AGENT_N" --conns "$CONNS" \
			--bulk-demand max --bulk-warmup 2 --agent-settle 1 --out "$OUTDIR/$m-wrk-1"
	done
}

teardown_file() {
	"$TB" down --prefix "$P"
}

rtt_ms() { echo $((2 * ONE_WAY_MS)); }

@test "wrk: the whole job, one round trip per request at least" {
	a=$OUTDIR/ecmp-wrk-1/app.json
	cat "$a"
	jq -e --argjson n "$WRK_N" '.complete and .requests == $n and .limit == $n and .errors == 0' "$a"
	# a request needs a round trip; K connections in parallel
	jq -e --argjson rtt "$(rtt_ms)" --argjson n "$WRK_N" --argjson k "$CONNS" \
		'.runtime_s >= $n * $rtt / 1000 / $k * 0.95' "$a"
	jq -e --argjson rtt "$(rtt_ms)" '.p50_ms >= $rtt * 0.95 and .p50_ms <= .p99_ms and .p99_ms <= .max_ms' "$a"
}

@test "pgbench: every transaction, five round trips each at least" {
	a=$OUTDIR/split-pgbench-1/app.json
	cat "$a"
	jq -e --argjson n "$PG_N" '.complete and .requests == $n and .errors == 0 and .tps > 0' "$a"
	jq -e --argjson rtt "$(rtt_ms)" '.p50_ms >= 5 * $rtt * 0.95 and .p50_ms <= .p99_ms and .p99_ms <= .max_ms' "$a"
	jq -e --argjson rtt "$(rtt_ms)" --argjson n "$PG_N" --argjson k "$CONNS" \
		'.runtime_s >= $n * 5 * $rtt / 1000 / $k * 0.95' "$a"
}

@test "flowgen: every short flow, a handshake and a request's round trip each at least" {
	a=$OUTDIR/split-flowgen-1/app.json
	cat "$a"
	jq -e --argjson n "$FLOWGEN_N" '.app == "flowgen" and .complete and .requests == $n and .errors == 0' "$a"
	# a new connection per request: the handshake's round trip, then the request's
	jq -e --argjson rtt "$(rtt_ms)" '.p50_ms >= 2 * $rtt * 0.95 and .p50_ms <= .p99_ms and .p99_ms <= .max_ms' "$a"
	jq -e --argjson r "$FLOWGEN_RATE" '.rate == $r and .bulk_demand == 0' "$OUTDIR/split-flowgen-1/meta.json"
	# one 5-tuple per request: as many client ports as requests
	[ "$(tail -n +2 "$OUTDIR/split-flowgen-1/flowgen.csv" | cut -d, -f6 | sort -u | wc -l)" -eq "$FLOWGEN_N" ]
}

@test "bulk: both directions measured; paced bulk stays near its demand" {
	for r in ecmp-wrk-1 split-pgbench-1; do
		jq -c . "$OUTDIR/$r/bulk.json"
		jq -e '.up.mbit > 1 and .down.mbit > 1 and .up.seconds > 0 and .down.seconds > 0' "$OUTDIR/$r/bulk.json"
	done
	# iperf3 -b paces each stream at its share of the demand
	jq -e --argjson cap "$(awk -v d="$PG_DEMAND" -v r="$RATE_MBIT" 'BEGIN { print d * r * 1.3 }')" \
		'.up.mbit <= $cap and .down.mbit <= $cap' "$OUTDIR/split-pgbench-1/bulk.json"
	jq -e '.bulk_cc == "bbr" and .bulk_demand == 0.5' "$OUTDIR/split-pgbench-1/meta.json"
	# the paths as the testbed was brought up: rate and bottleneck bucket
	jq -e --argjson r "$RATE_MBIT" --argjson b "$(sed -n 's/^BURST=//p' "/run/$P/env")" \
		'.rate_mbit == $r and .burst_bytes == $b' "$OUTDIR/split-pgbench-1/meta.json"
}

@test "the endpoints' TCP counters and the busiest CPU are recorded" {
	for r in ecmp-wrk-1 split-pgbench-1; do
		n=$OUTDIR/$r/nstat.json
		jq -c . "$n"
		for side in client server; do
			for k in TcpExtTCPSACKReorder TcpExtTCPDSACKRecv TcpRetransSegs TcpOutSegs; do
				jq -e --arg s "$side" --arg k "$k" '.[$s][$k] | type == "number" and . >= 0' "$n"
			done
			# the bulk alone sends thousands of segments from each end
			jq -e --arg s "$side" '.[$s].TcpOutSegs > 1000' "$n"
		done
		jq -e '.cpu_busy_max_pct >= 0 and .cpu_busy_max_pct <= 100 and
			.cpu_steal_pct >= 0 and .cpu_steal_pct <= 100 and
			.cpu_flagged == (.cpu_busy_max_pct > .cpu_flag_pct or
					 .cpu_steal_pct > .steal_flag_pct)' "$OUTDIR/$r/meta.json"
	done
}

@test "paths.json: each path's bottleneck over the job; the bulk fills LONG" {
	for r in ecmp-wrk-1 split-pgbench-1 split-redis-1; do
		p=$OUTDIR/$r/paths.json
		jq -c . "$p"
		for w in w1 w2; do
			for d in up down; do
				jq -e --arg w "$w" --arg d "$d" '.[$w][$d] | (.bytes >= 0 and .packets >= 0 and
					.drops >= 0 and .overlimits >= 0 and .mbit >= 0 and .load >= 0)' "$p"
			done
		done
	done
	# split: the job's messages cross SHORT (path 1) both ways; the
	# unpaced bulk keeps LONG (path 2) busy, well above what paced or
	# no bulk would (a share of the tunnel rate, not a time)
	p=$OUTDIR/split-redis-1/paths.json
	jq -e '.w1.up.packets >= 1 and .w1.down.packets >= 1' "$p"
	jq -e '.w2.up.load > 0.5 and .w2.down.load > 0.5' "$p"
	# the report carries the loads
	/usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" "$OUTDIR" >/dev/null
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h["run"] == "split-redis-1" { ok = ($h["path2_up_load"] > 0.5 && $h["path2_down_load"] > 0.5) }
		END { exit !ok }' "$OUTDIR/apps.csv"
}

@test "the modes route as they say: ECMP and split" {
	jq -e '.mode == "ecmp"' "$OUTDIR/ecmp-wrk-1/tunnels.json"
	jq -e '.mode == "split"' "$OUTDIR/split-pgbench-1/tunnels.json"
	# split at the built defaults: the splitter was re-attached, so its
	# threshold is the compiled one whatever an earlier run set
	jq -e '.ra.packets_long > 0 and .ra.packets_short > 0' "$OUTDIR/split-pgbench-1/splitter.json"
}

@test "redis: every GET of the job, one round trip each at least" {
	a=$OUTDIR/split-redis-1/app.json
	cat "$a"
	jq -e --argjson n "$REDIS_N" '.complete and .requests == $n and .errors == 0' "$a"
	# a pool of K connections, one GET at a time each: N/K round trips
	jq -e --argjson t "$(awk -v n="$REDIS_N" -v k="$CONNS" -v r="$(rtt_ms)" 'BEGIN { print n / k * r / 1000 }')" \
		'.runtime_s >= $t' "$a"
	jq -e --argjson r "$(rtt_ms)" '.p50_ms >= $r and .p99_ms >= .p50_ms' "$a"
}

@test "flow tables: the bulk's data flows found, never re-shorted; the app's re-shorted" {
	for f in flows-warmup.json flows.json; do
		jq -e '(.ra | length) > 0 and (.rb | length) > 0' "$OUTDIR/split-redis-1/$f"
	done
	/usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" "$OUTDIR" >/dev/null
	row=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h["run"] == "split-redis-1" { print $h["bulk_flows"], $h["bulk_flows_found"],
			$h["bulk_reshorts_warmup"] + $h["bulk_reshorts_job"], $h["app_reshorts"] }' "$OUTDIR/apps.csv")
	echo "$row"
	read -r want found reshorts app <<<"$row"
	# 2 streams per direction, each in the table of the router at its sender's side
	[ "$want" = 4 ] && [ "$found" = 4 ]
	[ "$reshorts" = 0 ]
	# every GET after a connection's first threshold is a message boundary
	[ "$app" -gt $((REDIS_N / 2)) ]
}

@test "apps_report.py: one row per run, the tables and the headline" {
	run /usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" --demo "$OUTDIR"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(tail -n +2 "$OUTDIR/apps.csv" | wc -l)" -eq 6 ]
	[ -s "$OUTDIR/apps-summary.md" ]
	# the headline is flowsplit as deployed (the agents) against ECMP
	[[ ${lines[-1]} =~ ^at\ RTT\ 10\ ms,\ flowsplit\ as\ deployed\ \(agent\ on\ both\ routers\):\ application\ run-time\ speedup\ ECMP/deployed\ [0-9.]+\ ±\ [^\ ]+\ x.*bulk\ throughput\ deployed/ECMP\ [0-9.]+\ x$ ]]
	# without a deployed run it is the split without the agent, said so
	local d=$BATS_TEST_TMPDIR/noagent
	mkdir -p "$d"
	cp -a "$OUTDIR/ecmp-wrk-1" "$OUTDIR/split-redis-1" "$d/"
	jq -c '.mode = "split" | .app = "wrk"' "$d/split-redis-1/meta.json" >"$d/m" && mv "$d/m" "$d/split-redis-1/meta.json"
	run /usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" --demo "$d"
	echo "$output" | tail -n 1
	[[ ${lines[-1]} == "at RTT 10 ms, split without the agent: application run-time speedup ECMP/split "* ]]
}

@test "apps_report.py: an iperf3 interval begun as SIGINT came (no sum) changes no figure" {
	local d=$BATS_TEST_TMPDIR/cut f
	mkdir -p "$d"
	cp -a "$OUTDIR/split-redis-1" "$d/"
	/usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" "$d" >/dev/null
	cp "$d/apps.csv" "$d/before.csv"
	f=$d/split-redis-1/iperf3-up.json
	jq '.intervals += [{"streams": []}]' "$f" >"$f.new" && mv "$f.new" "$f"
	run /usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" "$d"
	echo "$output"
	[ "$status" -eq 0 ]
	diff "$d/before.csv" "$d/apps.csv"
}

@test "modes with agents: started for the run, stopped after it, spill counters recorded" {
	for m in deployed nospill; do
		d=$OUTDIR/$m-wrk-1
		jq -e '.agents == true and .mode == "'"$m"'"' "$d/meta.json"
		# both agents ran and were stopped: their logs, no splitctl run left
		[ -s "$d/agent-ra.log" ] && [ -s "$d/agent-rb.log" ]
		[ -z "$(pgrep -f -- "--pin-dir /run/$P/bpf/r[ab] run")" ]
		# at the job's end the agents were up and saw both tunnels up
		for r in ra rb; do
			jq -e --arg r "$r" '[.[$r].health.tunnels[].state] == ["up", "up"]' "$d/routes-job.json"
		done
		# the counters at the job's start and end, on both routers, in order
		jq -e '. as $j | all(("ra", "rb"); . as $r | all(("packets_spill", "bytes_spill", "spill_flows");
			($j.start[$r][.] | type == "number") and $j.end[$r][.] >= $j.start[$r][.]))' "$d/splitter-job.json"
	done
	# without agents: none ran
	jq -e '.agents == false' "$OUTDIR/split-redis-1/meta.json"
	[ ! -e "$OUTDIR/split-redis-1/agent-ra.log" ]
	# spill off in the splitter: not one packet marked for spill
	jq -e '.splitter.spill == false' "$OUTDIR/nospill-wrk-1/meta.json"
	jq -e '.splitter.spill == true and .agent_settle_s == 1' "$OUTDIR/deployed-wrk-1/meta.json"
	jq -e '.agent_settle_s == 0' "$OUTDIR/ecmp-wrk-1/meta.json"
	jq -e '.ra.packets_spill == 0 and .rb.packets_spill == 0 and .ra.spill_flows == 0' \
		"$OUTDIR/nospill-wrk-1/splitter.json"
	# the spill report from these runs
	/usr/bin/python3 "$FS_ROOT/testbed/analysis/apps_report.py" "$OUTDIR" >/dev/null
	# one row per mode of the group (a CPU-flagged run counts, unused)
	for m in ecmp deployed nospill; do
		grep -Eq "^\| 10 \(5/5\) \| wrk \| max x \| $m \| [01]/1 \|" "$OUTDIR/spill-summary.md"
	done
	# the agents log each probe (-v); SHORT's p99 per run from them, none
	# without agents (its size is the testbed's: spill's queue on SHORT
	# plus the delay lines' stalls, over a second on a loaded machine, so
	# the bound only says it is a delay)
	grep -Eq 'spill: probe on vxs: one-way delay -?[0-9.]+ ms above' "$OUTDIR/deployed-wrk-1/agent-rb.log"
	/usr/bin/python3 - "$OUTDIR/apps.csv" <<-'EOF'
		import csv, math, sys
		p = {r["mode"]: float(r["short_probe_p99_ms"] or "nan") for r in csv.DictReader(open(sys.argv[1]))
		     if r["app"] == "wrk" and r["bulk_demand"] == "max"}
		print(p)
		assert 0 <= p["deployed"] < 10000 and 0 <= p["nospill"] < 10000 and math.isnan(p["ecmp"]), p
	EOF
	# each path's delay line over the run, in every mode; path 1's worst
	# lateness per run in the report
	for m in ecmp deployed nospill; do
		jq -e '.lines | length == 2 and all(.[]; has("rx_age_max_us") and has("late_max_us"))' \
			"$OUTDIR/$m-wrk-1/delayline-w1.json" "$OUTDIR/$m-wrk-1/delayline-w2.json"
	done
	/usr/bin/python3 - "$OUTDIR/apps.csv" <<-'EOF'
		import csv, sys
		w = [float(r["dl1_worst_ms"]) for r in csv.DictReader(open(sys.argv[1]))
		     if r["app"] == "wrk" and r["bulk_demand"] == "max"]
		print(w)
		assert len(w) == 3 and all(0 <= x < 10000 for x in w), w
	EOF
	[ -s "$OUTDIR/spill.png" ]
}

@test "bad values: one line naming the value, exit 2, nothing run" {
	run "$APPS" run --prefix "$P" --mode bogus --app wrk --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == *"'bogus'"*ecmp* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x/meta.json" ]
	run "$APPS" run --prefix "$P" --mode ecmp --app wrk --bulk-demand -1 --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"'-1'"* ]]
	run "$APPS" run --prefix "$P" --mode ecmp --app memcached --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"'memcached'"*redis* ]]
	run "$APPS" run --prefix "$P" --mode ecmp --app wrk --tap maybe --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"'maybe'"* ]]
	run "$APPS" run --prefix "$P" --mode ecmp --app flowgen --rate 0 --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"--rate '0'"*10000* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x/meta.json" ]
	run "$FS_ROOT/testbed/run-experiment" apps --modes "ecmp bogus"
	[ "$status" -eq 2 ] && [[ $output == *"'bogus'"* ]]
	run "$FS_ROOT/testbed/run-experiment" apps --design bogus
	[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == *"'bogus'"*sweep* ]]
	run "$FS_ROOT/testbed/run-experiment" apps --design sweep --max-minutes 0
	[ "$status" -eq 2 ] && [[ $output == *"'0'"* ]]
	run "$FS_ROOT/testbed/run-experiment" apps --tunnels sideways
	[ "$status" -eq 2 ] && [[ $output == *"'sideways'"*reverse* ]]
	run "$FS_ROOT/testbed/run-experiment" apps --design spill --modes "spill nospil" --list
	[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ $output == *"'nospil'"*nospill* ]]
	run "$FS_ROOT/testbed/run-experiment" apps --design spill --demands "1.5 lots" --list
	[ "$status" -eq 2 ] && [[ $output == *"'lots'"*max* ]]
	run "$APPS" run --prefix "$P" --mode ecmp --app redis --cross-short lots --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"--cross-short 'lots'"*Mbit* ]]
	run "$APPS" run --prefix "$P" --mode deployed --app wrk --agent-settle soon --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"--agent-settle 'soon'"*3600* ]]
	run "$APPS" run --prefix "$P" --mode spil --app wrk --out "$BATS_TEST_TMPDIR/x"
	[ "$status" -eq 2 ] && [[ $output == *"'spil'"*nospill* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x/meta.json" ]
}

# design_runs DESIGN [ARGS...]: $runs, the run directories --list prints,
# each named once
design_runs() {
	run "$FS_ROOT/testbed/run-experiment" apps --design "$@" --list
	[ "$status" -eq 0 ]
	runs=$(grep '^d' <<<"$output")
	[ "$(sort <<<"$runs" | uniq -d | wc -l)" -eq 0 ]
}
# has_runs NAME...: each of these is one of $runs
has_runs() {
	local n
	for n; do grep -qx -- "$n" <<<"$runs" || return 1; done
}

@test "run-experiment apps --list: a design's runs, narrowed by the lists" {
	design_runs sweep
	# no bulk: the limit once per routing, ECMP's and the split's, per repetition
	has_runs d30_10-wrk-bulk1.5-cubic-split-3 d40_40-wrk-bulk1.5-bbr-paper-1 \
		d0_0-wrk-bulk0-cubic-ecmp-2 d0_0-wrk-bulk0-cubic-split-2
	[ "$(grep -c -- '-bulk0-cubic-paper-' <<<"$runs")" -eq 0 ]
	[ "$(grep -c -- '-bulk0-bbr-' <<<"$runs")" -eq 0 ]
	run "$FS_ROOT/testbed/run-experiment" apps --design persistent --rtts 40 --apps redis --list
	[ "$status" -eq 0 ]
	# 3 repetitions x (bulk: ecmp, deployed, split + no bulk: ecmp, split)
	[ "$(grep -c '^d20_20-redis-' <<<"$output")" -eq 15 ]
	[ "$(grep -c '^d' <<<"$output")" -eq 15 ]
	# roles: 3 testbeds (RTT 40 ms, 10/30, 30/10) x 2 modes x 3 repetitions,
	# no bulk, each mode its own block
	design_runs roles
	[ "$(wc -l <<<"$runs")" -eq 18 ]
	has_runs d20_20-redis-bulk0-cubic-rolesfixed-1 d30_10-redis-bulk0-cubic-rolesauto-3
	# spill: 3 RTTs x 3 apps x 3 repetitions x (3 demands x 4 modes + no bulk:
	# ECMP and split, the limit per routing)
	design_runs spill
	[ "$(wc -l <<<"$runs")" -eq $((3 * 3 * 3 * (3 * 4 + 2))) ]
	has_runs d20_20-pgbench-bulkmax-cubic-nospill-3 d0_0-wrk-bulk0.5-cubic-deployed-1 \
		d10_10-flowgen-bulk1.5-cubic-deployed-2 d0_0-flowgen-bulk0-cubic-split-1 \
		d10_10-wrk-bulk0-cubic-ecmp-2 d10_10-wrk-bulk0-cubic-split-2
	# no bulk: ECMP and split only; split without agents only there
	# (counted: a "! cmd" before a test's last line fails nothing)
	[ "$(grep -c -- '-bulk0-cubic-deployed-' <<<"$runs")" -eq 0 ]
	[ "$(grep -v -- '-bulk0-' <<<"$runs" | grep -c -- '-split-')" -eq 0 ]
	# narrowed: the shorter run of the spill table
	run "$FS_ROOT/testbed/run-experiment" apps --design spill --rtts 40 --demands "0 1.5" \
		--apps wrk --modes "ecmp split deployed nospill" --reps 2 --list
	[ "$status" -eq 0 ]
	[ "$(grep -c '^d20_20-wrk-bulk1.5-cubic-\(ecmp\|deployed\|nospill\)-[12]$' <<<"$output")" -eq 6 ]
	[ "$(grep -c '^d20_20-wrk-bulk0-cubic-\(ecmp\|split\)-[12]$' <<<"$output")" -eq 4 ]
	[ "$(grep -c '^d' <<<"$output")" -eq 10 ]
	# the defaults: the deployed mode with the references; no bulk with
	# only ECMP and deployed listed: the split's limit under deployed
	run "$FS_ROOT/testbed/run-experiment" apps --rtts 40 --tunnels equal --ccs cubic --apps wrk --reps 1 --list
	[ "$status" -eq 0 ]
	has_runs_out() { local n; for n; do grep -qx -- "$n" <<<"$output" || return 1; done; }
	has_runs_out d20_20-wrk-bulk0.5-cubic-ecmp-1 d20_20-wrk-bulk0.5-cubic-deployed-1 \
		d20_20-wrk-bulk0.5-cubic-split-1 d20_20-wrk-bulk0.5-cubic-paper-1
	run "$FS_ROOT/testbed/run-experiment" apps --rtts 40 --tunnels equal --ccs cubic --apps wrk --reps 1 \
		--demands "0 max" --modes "ecmp deployed" --list
	[ "$status" -eq 0 ]
	[ "$(grep -c '^d' <<<"$output")" -eq 4 ]
	has_runs_out d20_20-wrk-bulk0-cubic-ecmp-1 d20_20-wrk-bulk0-cubic-deployed-1
	# spill is the earlier name of deployed: the same mode
	"$APPS" modes | grep -Eq '^spill +mode_deployed$'
	"$APPS" modes | grep -Eq '^deployed +routers_reset; routes_up split; agents_start'
}

@test "testbed down: no server, client or cluster left behind" {
	pg=$(cat "/run/$P/pg/data/postmaster.pid" | head -n 1)
	kill -0 "$pg"
	rd=$(cat "/run/$P/redis/redis.pid")
	kill -0 "$rd"
	"$TB" down --prefix "$P"
	# ("! cmd" fails a bats test only as its last command: tested as values)
	[ ! -e "/proc/$rd" ] && [ ! -e "/proc/$pg" ]
	[ -z "$(ip netns list | grep "^$P-")" ]
	[ ! -e "/run/$P" ]
	# nothing of this testbed in any process's command line (agents included)
	[ -z "$(grep -l -- "/run/$P[/]" /proc/[0-9]*/cmdline 2>/dev/null)" ]
	[ -z "$(pgrep -f -- "$P-")" ]
}
