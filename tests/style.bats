#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The habits the tree keeps: C lines within .clang-format's column limit
# (tabs count 8), and commit subjects of at most 72 characters (from the
# first commit that kept the rule on; earlier history is what it is).
FS_PREFIX=fsty
load lib/common

# the commit from which every subject is <= 72 characters
SUBJECT_BASE=573242a

column_limit() {
	awk -F': *' '$1 == "ColumnLimit" { print $2 }' "$FS_ROOT/.clang-format"
}

@test "C sources stay within .clang-format's column limit" {
	local limit over
	limit=$(column_limit)
	[[ $limit =~ ^[0-9]+$ ]]
	cd "$FS_ROOT"
	over=$(git ls-files '*.c' '*.h' | xargs awk -v max="$limit" '{
		line = $0; gsub(/\t/, "        ", line)
		if (length(line) > max) printf "%s:%d: %d columns\n", FILENAME, FNR, length(line)
	}')
	[ -z "$over" ] || { echo "lines over $limit columns:"; echo "$over"; false; }
}

@test "the column check catches a long line" {
	local f=$BATS_TEST_TMPDIR/long.c
	printf '\t%0*d\n' 200 0 >"$f"
	run awk -v max="$(column_limit)" '{ gsub(/\t/, "        "); if (length > max) print "over" }' "$f"
	[ "$output" = over ]
}

@test "commit subjects are at most 72 characters" {
	cd "$FS_ROOT"
	git rev-parse -q --verify "$SUBJECT_BASE^{commit}" >/dev/null ||
		skip "not a full clone: $SUBJECT_BASE is not here"
	run bash -c "git log --format=%s $SUBJECT_BASE..HEAD | awk 'length > 72'"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "subjects over 72 characters:"; echo "$output"; false; }
}
