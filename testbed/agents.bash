# SPDX-License-Identifier: GPL-2.0
# agents.bash - the agent ("splitctl run": tunnel health, failover, spill)
# on both routers of a testbed that is up, sourced by testbed/testbed (run
# --health yes) and testbed/apps (the modes with agents): the one place it
# is started and stopped. Uses SPLITCTL, RUN, RA, RB, sc() and die().
#
# agents_start DIR [RUN_OPTS...]: "splitctl run RUN_OPTS" on rA and rB
#   after route up, logs in DIR/agent-ra.log and DIR/agent-rb.log (with
#   -v: also each spill probe's delay); returns once both publish both
#   tunnels up (route show). Pids in AGENT_PIDS.
# agents_stop: SIGTERM, and wait until they are gone (health files
#   withdrawn); one that ignores SIGTERM is killed, or it would still steer
#   in the next run.
AGENT_PIDS=()
agents_start() {
	local out=$1 ns r
	shift
	for ns in "$RA" "$RB"; do
		r=${ns##*-}
		# not through sc(): $! must be splitctl itself (ip netns exec execs
		# it), or SIGTERM would end a subshell and leave the agent running
		ip netns exec "$ns" "$SPLITCTL" -v --pin-dir "$RUN/bpf/$r" run "$@" \
			>"$out/agent-$r.log" 2>&1 </dev/null &
		AGENT_PIDS+=($!)
	done
	both_up() { [ "$(sc "$1" -j route show 2>/dev/null | jq -c '[.health.tunnels[]?.state]')" = '["up","up"]' ]; }
	for ns in "$RA" "$RB"; do
		for _ in $(seq 200); do both_up "$ns" && break; sleep 0.05; done
		both_up "$ns" || { agents_stop; die "the agent in $ns did not see both tunnels up (see $out/agent-${ns##*-}.log)"; }
	done
}

agents_stop() {
	local p
	for p in "${AGENT_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || continue
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null && echo "${0##*/}: agent $p ignored SIGTERM: killed" >&2
		wait "$p" 2>/dev/null || true
	done
	AGENT_PIDS=()
}
