#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every tool answers --help (and -h) with its usage on stdout and exit
# status 0, so that a newcomer's first try works.
#   help.sh TOOL...
set -u
fail=0
for tool in "$@"; do
	name=$(basename "$tool")
	for opt in --help -h; do
		out=$("$tool" "$opt" 2>/dev/null)
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL $name $opt: exit status $rc"
			fail=1
		elif ! printf '%s\n' "$out" | grep -q "^usage: $name "; then
			echo "FAIL $name $opt: no 'usage: $name' line on stdout"
			fail=1
		else
			echo "$name $opt: ok"
		fi
	done
done
exit $fail
