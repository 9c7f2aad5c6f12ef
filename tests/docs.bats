#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The README and docs/: a README a newcomer reads in minutes (at most 200
# lines), every file under docs/ reachable from the README or the docs
# index, no link to a file that is not there, no path of one machine,
# every results page naming its command and a commit the repository holds,
# and the results pages' tables exactly what their data in
# docs/results/data/ regenerates (testbed/analysis/regen_docs.py,
# `make results-docs`).
# Needs no root, no network namespace, no build.

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	REGEN=$ROOT/testbed/analysis/regen_docs.py
}

# links FILE: the targets of FILE's relative markdown links, as paths from
# the repository root, without #anchors
links() {
	local dir
	dir=$(dirname "${1#"$ROOT"/}")
	grep -oE '\]\([^)#]+(#[^)]*)?\)' "$1" | sed -E 's/^\]\(//; s/\)$//; s/#.*//' |
		grep -vE '^[a-z]+:' | while read -r t; do
		realpath -m --relative-to="$ROOT" "$ROOT/$dir/$t"
	done
}

@test "README.md has at most 200 lines" {
	n=$(wc -l <"$ROOT/README.md")
	echo "README.md: $n lines"
	[ "$n" -le 200 ]
}

@test "every file under docs/ is linked from README.md or docs/README.md" {
	linked=$( { links "$ROOT/README.md"; links "$ROOT/docs/README.md"; echo docs/README.md; } | sort -u)
	missing=$(cd "$ROOT" && find docs -type f | sort | comm -23 - <(echo "$linked"))
	[ -z "$missing" ] || { echo "not linked from README.md or docs/README.md:"; echo "$missing"; false; }
}

@test "every relative link in README.md and docs/ names a file that exists" {
	bad=
	while read -r f; do
		while read -r t; do
			[ -e "$ROOT/$t" ] || bad+="${f#"$ROOT"/}: $t"$'\n'
		done < <(links "$f")
	done < <(find "$ROOT/README.md" "$ROOT/docs" -name '*.md')
	[ -z "$bad" ] || { echo "$bad"; false; }
}

@test "no doc names a path of one machine" {
	run grep -rnE '/root/|/work/|/home/|/tmp/|results/[a-z0-9-]*20[0-9]{6}' \
		"$ROOT/README.md" "$ROOT/docs"
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "the results tables are what their data regenerates" {
	run /usr/bin/python3 "$REGEN" --check
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "regen_docs: a changed figure is drift, and regenerating puts it in the page" {
	copy=$BATS_TEST_TMPDIR/repo
	mkdir -p "$copy/docs"
	cp -r "$ROOT/docs/results" "$copy/docs/"
	cp "$ROOT/README.md" "$copy/"
	# the wrk row at RTT 40 ms, 1.5x paced cubic: 1.72 -> 1.73
	grep -q '^40 ms,1.5× cubic,.*,1.72 ± 0.02×,' "$copy/docs/results/data/apps-sweep.csv"
	sed -i 's/^\(40 ms,1.5× cubic,.*\),1.72 ± 0.02×,/\1,1.73 ± 0.02×,/' \
		"$copy/docs/results/data/apps-sweep.csv"
	run /usr/bin/python3 "$REGEN" --check --root "$copy"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"docs/results/apps.md differs from its data"* ]]
	# the README's headline table too
	sed -i 's/3.14 ± 0.82×/3.15 ± 0.82×/' "$copy/docs/results/data/demo-headline.csv"
	run /usr/bin/python3 "$REGEN" --check --root "$copy"
	[[ $output == *"README.md differs from its data"* ]]
	mkdir -p "$copy/docs/results/img"
	/usr/bin/python3 "$REGEN" --root "$copy"
	grep -q '| \*\*1.73 ± 0.02×\*\* |' "$copy/docs/results/apps.md"
	grep -q '| 3.15 ± 0.82× |' "$copy/README.md"
	/usr/bin/python3 "$REGEN" --check --root "$copy"
	[ -s "$copy/docs/results/img/apps.png" ]
}

@test "regen_docs: a table whose CSV is missing is an error, not an empty table" {
	copy=$BATS_TEST_TMPDIR/repo
	mkdir -p "$copy/docs"
	cp -r "$ROOT/docs/results" "$copy/docs/"
	cp "$ROOT/README.md" "$copy/"
	rm "$copy/docs/results/data/flood.csv"
	run /usr/bin/python3 "$REGEN" --check --root "$copy"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *flood.csv* ]]
}

@test "every results page names its command and a commit this repository holds" {
	git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
	bad=
	for f in "$ROOT"/docs/results/*.md; do
		grep -q 'Command' "$f" || bad+="${f#"$ROOT"/}: no command"$'\n'
		hashes=$(grep -oE '\bcommits? [0-9a-f]{7,40}\b' "$f" | awk '{print $2}' | sort -u)
		[ -n "$hashes" ] || bad+="${f#"$ROOT"/}: no commit"$'\n'
		for h in $hashes; do
			git -C "$ROOT" cat-file -e "$h^{commit}" 2>/dev/null ||
				bad+="${f#"$ROOT"/}: commit $h not in this repository"$'\n'
		done
	done
	[ -z "$bad" ] || { echo "$bad"; false; }
}
