#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The spill controller's code stays readable (health/spill_int.h lists its
# files): every function at most SPILL_FUNC_MAX lines, from its opening to
# its closing brace (tests/tools/func-length). No namespace, no root.
FS_PREFIX=fstsc
load lib/common

SPILL_FUNC_MAX=80
SPILL_SRCS=(health/spill.c health/spill_delay.c health/spill_rate.c health/spill_grant.c)
FUNC_LENGTH=tests/tools/func-length

@test "every function of the spill controller is at most 80 lines" {
	cd "$FS_ROOT"
	local f
	for f in "${SPILL_SRCS[@]}"; do
		[ -s "$f" ]
	done
	run "$FUNC_LENGTH" "$SPILL_FUNC_MAX" "${SPILL_SRCS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# a body of n lines: "{", n - 2 statements, "}"
mkfunc() {
	local name=$1 n=$2 i
	printf 'static int %s(int a,\n\t\tint b)\n{\n' "$name"
	for ((i = 0; i < n - 2; i++)); do
		printf '\ta += b;\n'
	done
	printf '}\n\n'
}

@test "func-length: 80 lines pass, 81 fail, named with their line" {
	local src=$BATS_TEST_TMPDIR/f.c
	{
		printf 'struct s {\n\tint a;\n};\n\n'
		mkfunc fits 80
		mkfunc too_long 81
		printf 'int knr(void) {\n\treturn 0;\n}\n'
	} >"$src"
	run "$FS_ROOT/$FUNC_LENGTH" 80 "$src"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "$src:90: too_long: 81 lines (at most 80)" ]
	run "$FS_ROOT/$FUNC_LENGTH" 2 "$src"
	[ "$status" -eq 1 ]
	[[ $output == *"knr: 3 lines"* ]]
	run "$FS_ROOT/$FUNC_LENGTH" 81 "$src"
	[ "$status" -eq 0 ]
	run "$FS_ROOT/$FUNC_LENGTH" x "$src"
	[ "$status" -eq 2 ]
}

@test "func-length: an unclosed body fails" {
	local src=$BATS_TEST_TMPDIR/g.c
	printf 'int f(void)\n{\n\treturn 0;\n' >"$src"
	run "$FS_ROOT/$FUNC_LENGTH" 80 "$src"
	[ "$status" -eq 1 ]
	[[ $output == *"f: body not closed"* ]]
}
