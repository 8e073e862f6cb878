#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# xz -T4 natively and under ult-run: 1 MiB blocks (9 of them) so that
# four encoder threads really run, and preset 1 to keep it short.  The
# threaded encoder's output does not depend on timing, so every
# configuration must write the native bytes; the threaded decoder
# (xz -d -T4) must give the input back.
. "$(dirname "$0")/lib.sh"
need xz
gen "$tmp/in"
x="xz -T4 -1 --block-size=1MiB"
on native $x -c "$tmp/in" >"$tmp/native.xz" || fail "native xz: $rc"
on native $x -c "$tmp/in" >"$tmp/again.xz" || fail "native xz: $rc"
cmp -s "$tmp/native.xz" "$tmp/again.xz" ||
    fail "two native runs of $x differ: nothing to compare against"
blocks=$(xz --robot -l "$tmp/native.xz" | awk '$1 == "file" { print $3 }')
[ "${blocks:-0}" -gt 4 ] || fail "only ${blocks:-?} blocks: xz would not use 4 threads"
for cfg in $configs; do
	on "$cfg" $x -c "$tmp/in" >"$tmp/$cfg.xz" ||
	    fail "$cfg: $x -c: exit status $rc"
	cmp "$tmp/$cfg.xz" "$tmp/native.xz" ||
	    fail "$cfg: compressed output differs from the native one"
	on "$cfg" xz -d -T4 -c "$tmp/native.xz" >"$tmp/$cfg.out" ||
	    fail "$cfg: xz -d -T4: exit status $rc"
	cmp "$tmp/$cfg.out" "$tmp/in" ||
	    fail "$cfg: decompressed output differs from the input"
	echo "ok: $cfg $x: $blocks blocks, as native; roundtrip"
done
