#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ripgrep -j4 (four searcher threads walking the tree in parallel) over a
# generated tree of 420 files: its lines come out in the order the
# threads finish, so the output is compared sorted, with the native one,
# for a literal, a regex with counts, and a listing of the files that do
# not match.
. "$(dirname "$0")/lib.sh"
need rg
t="$tmp/tree"
d=1
while [ $d -le 20 ]; do
	mkdir -p "$t/d$d/sub"
	f=1
	while [ $f -le 20 ]; do
		seq $((d * f)) $((d * f + 1500)) |
		    awk -v d=$d '{ print "row", $1, ($1 % 13 ? "hay" : "needle"), d }' \
			>"$t/d$d/f$f.txt"
		f=$((f + 1))
	done
	seq 1 $((d * 50)) | sed 's/^/plain /' >"$t/d$d/sub/g.txt"
	d=$((d + 1))
done
# search CFG NAME ARGS...: rg -j4 ARGS over the tree, sorted, in $tmp/CFG.NAME;
# rg's status must be 0 (found) as natively.
search() {
	c=$1 n=$2
	shift 2
	on "$c" rg -j4 "$@" "$t" >"$tmp/$c.$n.raw"
	[ "$rc" = 0 ] || fail "$c: rg -j4 $*: exit status $rc"
	sort "$tmp/$c.$n.raw" >"$tmp/$c.$n"
}
for cfg in native $configs; do
	search "$cfg" lit -n needle
	search "$cfg" re -c 'row 1[0-9]+ (hay|needle)'
	search "$cfg" files --files-without-match needle
	[ "$cfg" = native ] && continue
	for n in lit re files; do
		cmp -s "$tmp/$cfg.$n" "$tmp/native.$n" || {
			diff "$tmp/native.$n" "$tmp/$cfg.$n" | head -5
			fail "$cfg: rg -j4 ($n) output differs from the native one"
		}
	done
	echo "ok: $cfg rg -j4: $(wc -l <"$tmp/$cfg.lit") lines, counts and file list as native"
done
