#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The Debian package (make deb, debian/): lintian-clean of errors, its
# dependencies the same as scripts/install-deps' runtime list, and an
# install on this machine that puts every file in place and a purge that
# leaves nothing behind. The package is built once, and again only when a
# file of the work tree is newer (FS_DEB=FILE uses a given one).
FS_PREFIX=fstd
bats_require_minimum_version 1.5.0
load lib/common

APT=(apt-get -y -qq -o DPkg::Lock::Timeout=300)

# stale DEB: a file of the work tree (what make deb packages) is newer
stale() {
	(cd "$FS_ROOT" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 -r sh -c 'find "$@" -newer "$0" -print -quit 2>/dev/null' "$1") | grep -q .
}

setup_file() {
	if [ -z "${FS_DEB:-}" ]; then
		command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
			skip "dpkg-dev and debhelper not installed (scripts/install-deps build)"
		FS_DEB=$(ls "$FS_BUILD"/deb/flowsplit_*.deb 2>/dev/null || true)
		if [ -z "$FS_DEB" ] || stale "$FS_DEB"; then
			make -C "$FS_ROOT" -s deb BUILD="$FS_BUILD" >&3 2>&1
			FS_DEB=$(ls "$FS_BUILD"/deb/flowsplit_*.deb)
		fi
	fi
	export FS_DEB
}

setup() {
	D=$BATS_TEST_TMPDIR
	[ -f "$FS_DEB" ] || skip "no package built"
}

# names: the package names of a Depends-style field on stdin, one a line
names() { tr ',' '\n' | sed 's/[(|].*//; s/^ *//; s/ *$//; /^$/d; /^\$/d' | sort -u; }

@test "package: lintian reports no errors" {
	command -v lintian >/dev/null || skip "lintian not installed"
	# make deb ran lintian on this very file and kept its report when it
	# passed (newer than the package); another package is checked here
	local report
	report=$(dirname "$FS_DEB")/lintian.txt
	if [ "$report" -nt "$FS_DEB" ]; then
		output=$(cat "$report") status=0
	else
		run lintian "$FS_DEB"
	fi
	echo "$output"
	[ "$status" -eq 0 ]
	! grep -q '^E: ' <<<"$output"
}

@test "package: Depends and Recommends are install-deps' runtime list, as docs/packaging.md quotes it" {
	dpkg-deb -f "$FS_DEB" Depends Recommends | sed 's/^[A-Za-z]*: //' | names >"$D/deb"
	"$FS_ROOT/scripts/install-deps" --list runtime | sort -u >"$D/runtime"
	diff "$D/deb" "$D/runtime"
	# the completion's loader is recommended, the libraries are depended on
	[ "$(dpkg-deb -f "$FS_DEB" Recommends | names)" = bash-completion ]
	# docs/packaging.md quotes the list
	grep -qxF "    $("$FS_ROOT/scripts/install-deps" --list runtime | paste -sd' ')" "$FS_ROOT/docs/packaging.md"
}

@test "package: Build-Depends are in install-deps' build list; the version is splitctl's" {
	sed -n '/^Build-Depends:/,/^[A-Z]/p' "$FS_ROOT/debian/control" | sed '$d; s/^Build-Depends://' |
		names | grep -v '^debhelper-compat$' >"$D/bdeps"
	[ -s "$D/bdeps" ]
	"$FS_ROOT/scripts/install-deps" --list build | sort -u >"$D/build"
	comm -23 "$D/bdeps" "$D/build" >"$D/missing"
	cat "$D/missing"
	[ ! -s "$D/missing" ]
	[ "splitctl $(dpkg-deb -f "$FS_DEB" Version)" = "$("$SPLITCTL" --version)" ]
}

# leftovers: every path on the system whose name is the package's, its
# files' and its unit's (not /proc, /sys, /run, /tmp, the work trees)
leftovers() {
	find /etc /lib /usr /var /opt \( -name '*flowsplit*' -o -name '*splitctl*' \) \
		-not -path '/var/tmp/*' 2>/dev/null | sort
}

purge() { "${APT[@]}" purge flowsplit >"$D/purge.log" 2>&1; }

teardown() {
	# a failed test does not leave the package installed
	if [ -n "${FS_INSTALLED:-}" ] && dpkg-query -W -f='${Status}' flowsplit 2>/dev/null | grep -q installed; then
		purge || cat "$D/purge.log"
	fi
	fs_teardown
}

@test "package: installed, every file in place; purged, nothing left behind (file, directory, user)" {
	if dpkg-query -W -f='${Status}' flowsplit 2>/dev/null | grep -q 'ok installed'; then
		skip "flowsplit is installed on this machine: not touching it"
	fi
	leftovers >"$D/before"
	cat /etc/passwd /etc/group >"$D/users-before"
	FS_INSTALLED=1
	run "${APT[@]}" install "$FS_DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	# the files, where Debian puts them
	for f in /usr/sbin/splitctl /usr/share/man/man8/splitctl.8.gz \
		/usr/share/bash-completion/completions/splitctl /lib/systemd/system/flowsplit.service \
		/etc/flowsplit/flowsplit.conf /usr/share/doc/flowsplit/examples/flowsplit.conf.example; do
		dpkg -S "$f"
		[ -f "$f" ]
	done
	[ "$(/usr/sbin/splitctl --version)" = "$("$SPLITCTL" --version)" ]
	# the config: a conffile, valid as shipped
	dpkg-query -W -f='${Conffiles}\n' flowsplit | grep -q '^ /etc/flowsplit/flowsplit.conf '
	/usr/sbin/splitctl check --offline -c /etc/flowsplit/flowsplit.conf
	# the unit runs the package's splitctl, and systemd accepts it; its
	# Documentation= resolves (man -w: a formatted page cached by man
	# itself would be no file of the package's); neither enabled nor started
	grep -qx 'ExecStart=/usr/sbin/splitctl run -c /etc/flowsplit/flowsplit.conf' /lib/systemd/system/flowsplit.service
	systemd-analyze verify --man=no /lib/systemd/system/flowsplit.service
	grep -qx 'Documentation=man:splitctl(8)' /lib/systemd/system/flowsplit.service
	[ "$(man -w 8 splitctl)" = /usr/share/man/man8/splitctl.8.gz ]
	[ ! -e /etc/systemd/system/multi-user.target.wants/flowsplit.service ]
	# the completion loads through bash-completion and offers commands
	bash -c 'source /usr/share/bash-completion/bash_completion
		COMP_WORDS=(splitctl att); COMP_CWORD=1; COMP_LINE="splitctl att"; COMP_POINT=${#COMP_LINE}
		_completion_loader splitctl; $(complete -p splitctl | sed "s/.*-F \([^ ]*\).*/\1/") splitctl att splitctl
		printf "%s\n" "${COMPREPLY[@]}"' >"$D/compl"
	cat "$D/compl"
	grep -qx attach "$D/compl"
	# the operator edits the config; purge removes it all the same
	echo '# edited' >>/etc/flowsplit/flowsplit.conf
	purge || { cat "$D/purge.log"; false; }
	! dpkg-query -W -f='${Status}' flowsplit 2>/dev/null | grep -q installed
	leftovers >"$D/after"
	diff "$D/before" "$D/after"
	[ ! -e /etc/flowsplit ]
	cat /etc/passwd /etc/group | diff "$D/users-before" -
}
