#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# libult-pthread.so: it exports only the names of its export list, and the
# runtime inside it calls none of them (every such reference must have
# been renamed to libc's, src/dropin/rename.txt; one left would send a
# worker or the clock thread into the drop-in's stand-in of itself).
#   dropin_symbols.sh LIBRARY RUNTIME_OBJECT MAP
set -eu
lib=$1 obj=$2 map=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -oE '[A-Za-z_0-9]+;' "$map" | tr -d ';' | sort -u >"$tmp/map"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBVi]$/ { print $3 }' |
	sed 's/@.*//' | sort -u >"$tmp/exported"
nm -u "$obj" | awk '{ print $2 }' | sort -u >"$tmp/used"
status=0
extra=$(comm -23 "$tmp/exported" "$tmp/map")
if [ -n "$extra" ]; then
	echo "exported but not in $map:" $extra
	status=1
fi
# The runtime's own stdio lock wrappers stay: the drop-in exports them.
called=$(comm -12 "$tmp/map" "$tmp/used")
if [ -n "$called" ]; then
	echo "the runtime calls interposed names (add them to rename.txt):" $called
	status=1
fi
n=$(wc -l <"$tmp/exported")
[ "$n" -gt 100 ] || { echo "only $n symbols exported"; status=1; }
[ $status = 0 ] && echo "$n interposed names exported; the runtime calls none of them"
exit $status
