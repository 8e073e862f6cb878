#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every function ult.h declares is named in the NAME section of a manual
# page (so that `man <function>' finds it, through the page itself or
# the link the install makes), and every name a page lists is declared.
#   man_api.sh ULT_H MAN_DIR
set -u
header=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Declarations start a line (comments and struct members are indented).
grep -E '^[a-z].*[ *]ult_[a-z0-9_]*\(' "$header" |
    sed -E 's/.*[ *](ult_[a-z0-9_]*)\(.*/\1/' | sort -u >"$tmp/api"
awk '/^\.SH NAME/ { on = 1; next } /^\.SH/ { on = 0 }
    on { s = $0; sub(/\\-.*/, "", s); n = split(s, w, /[ ,]+/)
	for (i = 1; i <= n; i++) if (w[i] ~ /^ult_/) print w[i]
	if ($0 ~ /\\-/) on = 0 }' "$dir"/*.3 | sort -u >"$tmp/named"
[ "$(wc -l <"$tmp/api")" -gt 50 ] || { echo "FAIL: too few functions found in $header"; exit 1; }
fail=0
for f in $(comm -23 "$tmp/api" "$tmp/named"); do
	echo "FAIL $f: declared in ult.h, named in no manual page"
	fail=1
done
for f in $(comm -13 "$tmp/api" "$tmp/named"); do
	echo "FAIL $f: named in a manual page, not declared in ult.h"
	fail=1
done
[ $fail = 0 ] && echo "$(wc -l <"$tmp/api") functions, each in a manual page"
exit $fail
