#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every manual page formats without a warning or an error: groff with all
# warnings on (-ww), or man-db's man --warnings where groff is not on the
# path; skipped (77) where neither is installed.
#   man_lint.sh MAN_DIR
set -u
dir=$1
if command -v groff >/dev/null 2>&1; then
	lint() { groff -man -Tutf8 -ww -z "$1" 2>&1; }
elif command -v man >/dev/null 2>&1; then
	lint() { man --warnings=w -l "$1" 2>&1 >/dev/null; }
else
	echo "skipped: neither groff nor man is installed"
	exit 77
fi
LC_ALL=C.UTF-8
export LC_ALL
fail=0 n=0
for page in "$dir"/*.[1-9]; do
	n=$((n + 1))
	msgs=$(lint "$page")
	if [ $? -ne 0 ] || [ -n "$msgs" ]; then
		echo "FAIL $(basename "$page"):"
		printf '%s\n' "$msgs" | sed 's/^/  /'
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "FAIL no pages in $dir"; exit 1; }
[ $fail = 0 ] && echo "$n pages: no warnings"
exit $fail
