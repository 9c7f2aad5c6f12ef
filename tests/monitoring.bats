#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# monitoring/: the Prometheus rules (recording and alerting) and the
# Grafana dashboard. promtool checks the rules and runs their unit tests,
# every alert has a test where it fires and one where it does not, every
# dashboard query parses, and every metric either names is one splitctl
# exports.
FS_PREFIX=fsty
load lib/common
load lib/router

M=$BATS_TEST_DIRNAME/../monitoring
RULES=$M/flowsplit.rules.yml
RULE_TESTS=$M/flowsplit.rules.test.yml
DASHBOARD=$M/flowsplit.dashboard.json

need_promtool() {
	command -v promtool >/dev/null || skip "promtool is not installed (apt-get install prometheus)"
}

@test "promtool check rules: the rules file is valid" {
	need_promtool
	run promtool check rules "$RULES"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"SUCCESS: "*" rules found"* ]]
}

@test "promtool test rules: every alert fires in a test and stays quiet in another" {
	need_promtool
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "/usr/bin/python3 has no yaml module (apt-get install python3-yaml)"
	# what the rules define against what the tests check
	/usr/bin/python3 - "$RULES" "$RULE_TESTS" <<'PY'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
alerts = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
fires, quiet = set(), set()
for t in tests["tests"]:
    for a in t.get("alert_rule_test", []):
        (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
missing = sorted((alerts - fires) | (alerts - quiet))
for name in missing:
    print("no test where %s %s" % (name, "fires" if name not in fires else "stays quiet"))
unknown = sorted((fires | quiet) - alerts)
for name in unknown:
    print("a test of an unknown alert: %s" % name)
assert len(alerts) >= 12, alerts
sys.exit(1 if missing or unknown else 0)
PY
	run promtool test rules "$RULE_TESTS"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *SUCCESS* ]]
}

@test "promtool test rules fails when an alert misbehaves (the tests can fail)" {
	need_promtool
	cp "$RULES" "$RULE_TESTS" "$D/"
	# a loss threshold ten times lower fires where the tests say it must not
	sed -i 's/flowsplit_tunnel_probe_loss_ratio > 0.05/flowsplit_tunnel_probe_loss_ratio > 0.005/' \
		"$D/flowsplit.rules.yml"
	run promtool test rules "$D/flowsplit.rules.test.yml"
	[ "$status" -ne 0 ]
	[[ "$output" == *"alertname: FlowsplitTunnelLossHigh"* ]]
}

@test "the Grafana dashboard: valid JSON, every query parsed by promtool" {
	need_promtool
	jq -e '.title == "flowsplit" and (.panels | length) >= 10' "$DASHBOARD"
	# each query as a recording rule (Grafana's interval variables made
	# a duration; $instance sits inside a regex string, valid as it is)
	jq '{groups: [{name: "dashboard", rules: ([.panels[].targets[]] | to_entries | map(
		{record: "dashboard:query_\(.key)", expr: (.value.expr | gsub("\\$__(rate_)?interval|\\$__range"; "5m"))}))}]}' \
		"$DASHBOARD" >"$D/queries.json"
	n=$(jq '.groups[0].rules | length' "$D/queries.json")
	[ "$n" -ge 20 ]
	run promtool check rules "$D/queries.json"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"SUCCESS: $n rules found"* ]]
	# and a broken query would be caught
	jq '.groups[0].rules[0].expr = "rate(flowsplit_flows_new_total[5m]"' "$D/queries.json" >"$D/bad.json"
	run promtool check rules "$D/bad.json"
	[ "$status" -ne 0 ]
}

@test "every metric the rules and the dashboard name is one splitctl exports" {
	fs_sc attach rc
	# the splitter's series (stats --prometheus), and those written only
	# after route up, by the agent or with an HA role (names as literals
	# in metrics.c and ha.c)
	{
		fs_sc stats --prometheus | awk '/^# TYPE/ { print $3 }'
		grep -ohE 'flowsplit_[a-z_]+|"[a-z_]+"' "$FS_ROOT/loader/metrics.c" \
			"$FS_ROOT/loader/ha.c" | tr -d '"' |
			sed 's/^\(flowsplit_\)\{0,1\}/flowsplit_/'
	} | sort -u >"$D/exported"
	grep -qx flowsplit_tunnel_up "$D/exported"
	grep -qx flowsplit_flows_midstream_total "$D/exported"
	grep -oE 'flowsplit_[a-z_]+' "$RULES" "$DASHBOARD" | cut -d: -f2 | sort -u >"$D/named"
	[ "$(wc -l <"$D/named")" -ge 20 ]
	missing=$(comm -23 "$D/named" "$D/exported")
	[ -z "$missing" ] || { echo "named but not exported: $missing"; false; }
	# the names of before the rename are gone from the rules and dashboard
	! grep -E 'flowsplit_[a-z_]*_bps|flowsplit_packets_(short|long)_total' "$RULES" "$DASHBOARD" || false
}
