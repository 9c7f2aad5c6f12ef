#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The systemd unit (loader/flowsplit.service): its exposure as systemd
# rates it, and the agent under exactly its sandbox. There is no systemd as
# PID 1 on the test machines, so the sandbox is rebuilt from the unit's own
# lines: CapabilityBoundingSet= and NoNewPrivileges= with setpriv,
# SystemCallFilter= (groups expanded by systemd-analyze, in systemd's
# order), SystemCallArchitectures=native and RestrictAddressFamilies= with
# seccomp (build/sandbox-exec), UMask= with umask. The file system
# protections (ProtectSystem= and its ReadWritePaths=) need systemd's
# mount namespace and are not rebuilt here.
FS_PREFIX=fstu
bats_require_minimum_version 1.5.0
load lib/common
load lib/wan

UNIT=$FS_ROOT/loader/flowsplit.service
SANDBOX=$FS_BUILD/sandbox-exec
MAX_EXPOSURE=4.0

# unit_value KEY: the values of KEY= in the unit, one line per assignment
unit_value() { sed -n "s/^$1=//p" "$UNIT"; }

# unit_cmd KEY: the command line of KEY= (ExecStart, ExecStartPre) with
# this build's splitctl and the test's config file
unit_cmd() {
	unit_value "$1" | sed "s|^/usr/local/sbin/splitctl|$SPLITCTL|; s|/etc/flowsplit/flowsplit.conf|$D/flowsplit.conf|"
}

# unit_caps: the CapabilityBoundingSet as setpriv's list (+bpf,+net_admin,...)
unit_caps() {
	unit_value CapabilityBoundingSet | tr 'A-Z ' 'a-z\n' | sed '/^$/d; s/^cap_/+/' | paste -sd, -
}

# syscalls TOKEN: the system calls of a group of systemd's (recursively),
# or the name itself
syscalls() {
	local t
	case $1 in
	@*) for t in $(systemd-analyze syscall-filter "$1" | awk 'NR > 1 && $1 !~ /^#/ { print $1 }'); do
		syscalls "$t"
	done ;;
	*) echo "$1" ;;
	esac
}

# unit_syscalls: the allow list of the unit's SystemCallFilter= lines as
# systemd builds it: the first line an allow list, then each line adds to
# it, or removes from it when it starts with "~"; execve, exit, exit_group,
# getrlimit, rt_sigreturn and sigreturn are always allowed (systemd.exec(5))
unit_syscalls() {
	local line neg n=0 s
	declare -A allow=()
	while read -r line; do
		neg=0
		[[ $line == "~"* ]] && { neg=1; line=${line#\~}; }
		[ $n -eq 0 ] && [ $neg -eq 1 ] && { echo "the unit's SystemCallFilter= is no allow list" >&2; return 1; }
		n=$((n + 1))
		for s in $(for t in $line; do syscalls "$t"; done); do
			if [ $neg -eq 1 ]; then unset "allow[$s]"; else allow[$s]=1; fi
		done
	done < <(unit_value SystemCallFilter)
	[ $n -gt 0 ] || { echo "the unit has no SystemCallFilter=" >&2; return 1; }
	for s in execve exit exit_group getrlimit rt_sigreturn sigreturn; do allow[$s]=1; done
	printf '%s\n' "${!allow[@]}" | sort | paste -sd, -
}

# sandboxed NS CMD...: CMD in network namespace NS under the unit's
# sandbox (umask, capabilities, no_new_privs, system calls, address
# families); the shell becomes CMD: call it in a subshell ("run", "&",
# where $! is then CMD's pid)
sandboxed() {
	local umask ns=$1
	shift
	umask=$(unit_value UMask)
	[ -n "$umask" ] || umask=0022
	umask "$umask"
	exec ip netns exec "$ns" setpriv --nnp --bounding-set "-all,$(unit_caps)" --inh-caps -all \
		--ambient-caps -all -- "$SANDBOX" --syscalls "$SYSCALLS" \
		--families "$(unit_value RestrictAddressFamilies | tr ' ' ',')" -- "$@"
}

setup() {
	fs_need "$SPLITCTL" "$SANDBOX"
	command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed"
	command -v setpriv >/dev/null || skip "setpriv not installed"
	SYSCALLS=$(unit_syscalls)
	wan_setup
	D=$BATS_TEST_TMPDIR
	# hook auto, as the shipped example: the choice asks ethtool (an
	# ioctl on an AF_INET socket) for the driver
	cat >"$D/flowsplit.conf" <<-EOF
	[splitter]
	interfaces = lana
	hook = auto
	idle-timeout = 1
	[agent]
	interval = 1
	listen = 127.0.0.1:9434
	EOF
}

# the agent's log shown with a failure
teardown() {
	[ -z "${BATS_TEST_COMPLETED:-}" ] && [ -f "$D/agent-$A" ] && sed 's/^/# agent: /' "$D/agent-$A" >&3
	wan_teardown
}

up_count() { grep -c 'health: vx[sl] .* -> up' "$D/agent-$A" || true; }
both_up() { [ "$(up_count)" -ge 2 ]; }
in_force_is() { [ "$(wan_sc "$A" -j route show | jq -r '.health.in_force')" = "$1" ]; }
stat_at_least() { [ "$(wan_sc "$A" -j stats 2>/dev/null | jq ".$1")" -ge "$2" ]; }
attached() { wan_sc "$A" -j status 2>/dev/null | jq -e '.interfaces[0].name == "lana"' >/dev/null; }

@test "unit: systemd rates its exposure at most $MAX_EXPOSURE, and verify accepts it" {
	sed "s|/usr/local/sbin/splitctl|$SPLITCTL|g" "$UNIT" >"$D/flowsplit.service"
	run systemd-analyze security --offline=true "$D/flowsplit.service"
	echo "$output"
	[ "$status" -eq 0 ]
	exposure=$(echo "$output" | sed -n 's/.*Overall exposure level for flowsplit.service: \([0-9.]*\).*/\1/p')
	echo "# exposure: $exposure"
	[ -n "$exposure" ]
	awk -v e="$exposure" -v m=$MAX_EXPOSURE 'BEGIN { exit !(e <= m) }'
	systemd-analyze verify --man=no "$D/flowsplit.service"
}

@test "unit: ExecStartPre checks the file alone; without a file, or with a bad one, the unit stops" {
	# the LAN port and tunnels of the file do not exist (yet): the check passes
	printf '[splitter]\ninterfaces = fstu-nolan\n' >"$D/flowsplit.conf"
	pre=$(unit_cmd ExecStartPre)
	[[ $pre == *"check --offline"* ]]
	ip netns exec "$A" $pre
	rm "$D/flowsplit.conf"
	run -1 ip netns exec "$A" $pre
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"$D/flowsplit.conf"* ]]
	# which systemd retries five times a minute, not every 5 s for ever
	[ "$(unit_value StartLimitBurst)" -le 5 ] && [ "$(unit_value StartLimitIntervalSec)" -ge 60 ]
	# a file that turns bad under a running unit (the agent exits 2 on
	# it): no restart
	printf '[splitter]\ninterfaces = lana\nbogus = 1\n' >"$D/flowsplit.conf"
	read -ra cmd <<<"$(unit_cmd ExecStart)"
	run -2 ip netns exec "$A" "${cmd[0]}" --pin-dir "$BPFA" "${cmd[@]:1}"
	echo "$output"
	[[ " $(unit_value RestartPreventExitStatus) " == *" 2 "* ]]
}

@test "unit: the agent under its sandbox attaches, sweeps, serves metrics, probes and fails over" {
	wan_route split
	read -ra cmd <<<"$(unit_cmd ExecStart)"
	[ "${cmd[1]}" = run ]
	sandboxed "$A" "${cmd[0]}" --pin-dir "$BPFA" "${cmd[@]:1}" >>"$D/agent-$A" 2>&1 </dev/null &
	local pid=$!
	wan_agent_started $pid
	# the agent (exec'd through ip, setpriv and unit-sandbox into splitctl)
	# holds exactly the unit's set, no_new_privs and a seccomp filter
	fs_wait_for 30 grep -q '^Name:.*splitctl' /proc/$pid/status
	want=$(setpriv --bounding-set "-all,$(unit_caps)" --inh-caps -all -- grep CapEff /proc/self/status)
	grep CapEff /proc/$pid/status
	[ "$(grep CapEff /proc/$pid/status)" = "$want" ]
	grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status
	grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status
	# the file's splitter attached
	fs_wait_for 60 attached
	# a flow counted, then swept when idle
	ip netns exec "$C" bash -c 'echo >/dev/tcp/10.2.0.1/7' 2>/dev/null || true
	fs_wait_for 30 stat_at_least flows_new 1
	fs_wait_for 30 stat_at_least flows_swept 1
	# metrics served
	ip netns exec "$A" curl -sf http://127.0.0.1:9434/metrics >"$D/metrics"
	grep -q '^flowsplit_' "$D/metrics"
	# both tunnels probed, and a failover works
	fs_wait_for 30 both_up
	wan_sc "$A" -j route show | jq -e '.health.monitored and .health.tunnels[0].state == "up" and .health.tunnels[1].state == "up"'
	wan_underlay_drop "$A" a1
	fs_wait_for 30 in_force_is "short=LONG long=LONG"
	cat "$D/agent-$A"
	! grep -q 'Operation not permitted\|not supported' "$D/agent-$A"
	kill -0 $pid
}

@test "unit: the rebuilt sandbox bites: no packet socket, no mount" {
	run sandboxed "$A" /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'
	echo "$output"
	[[ "$output" == *"Address family not supported"* ]]
	run sandboxed "$A" mount -t tmpfs none "$D"
	echo "$output"
	[ "$status" -ne 0 ]
	# and the same commands pass without it
	ip netns exec "$A" /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close()'
	mount -t tmpfs none "$D" && umount "$D"
}

@test "unit: CAP_SYS_ADMIN is what lets the agent see another instance's splitter" {
	# another instance's splitter on lana
	ip netns exec "$A" "$SPLITCTL" --pin-dir "${BPFA}-other" attach lana --hook tc >/dev/null
	printf '[splitter]\ninterfaces = lana\nhook = tc\n' >"$D/flowsplit.conf"
	run -1 ip netns exec "$A" setpriv --bounding-set "-all,$(unit_caps)" --inh-caps -all -- \
		"$SPLITCTL" --pin-dir "$BPFA" check -c "$D/flowsplit.conf"
	echo "$output"
	[[ "$output" == *"runs the splitter of another flowsplit instance"* ]]
	# without CAP_SYS_ADMIN the check sees nothing and passes
	run ip netns exec "$A" setpriv --bounding-set "-all,$(unit_caps),-sys_admin" --inh-caps -all -- \
		"$SPLITCTL" --pin-dir "$BPFA" check -c "$D/flowsplit.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	ip netns exec "$A" "$SPLITCTL" --pin-dir "${BPFA}-other" detach --all
}

@test "unit: installed without a config (make install), it refuses with one line naming the example to copy" {
	make -s -C "$FS_ROOT" BUILD="$FS_BUILD" DESTDIR="$D/root" install >/dev/null
	local etc=$D/root/etc/flowsplit unit=$D/root/etc/systemd/system/flowsplit.service key cmd
	[ -f "$etc/flowsplit.conf.example" ]
	[ ! -e "$etc/flowsplit.conf" ]
	# ExecStartPre stops the unit; ExecStart, run by hand, says the same
	for key in ExecStartPre ExecStart; do
		cmd=$(sed -n "s/^$key=//p" "$unit" |
			sed "s|/usr/local/sbin/splitctl|$D/root/usr/local/sbin/splitctl|; s|/etc/flowsplit/|$etc/|g")
		run -1 ip netns exec "$A" $cmd
		echo "$key: $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ $output == *"$etc/flowsplit.conf: cannot read: No such file or directory: "*"; this system's example: cp $etc/flowsplit.conf.example $etc/flowsplit.conf, then edit it for this router"* ]]
	done
	# the copy is what the line says to make: then the check passes
	cp "$etc/flowsplit.conf.example" "$etc/flowsplit.conf"
	cmd=$(sed -n "s/^ExecStartPre=//p" "$unit" |
		sed "s|/usr/local/sbin/splitctl|$D/root/usr/local/sbin/splitctl|; s|/etc/flowsplit/|$etc/|g")
	ip netns exec "$A" $cmd
}
