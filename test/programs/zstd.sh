#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# zstd -T4 natively and under ult-run: 1 MiB jobs, so that the four
# worker threads share the file, level 12 so that they have work.  The
# multithreaded output does not depend on timing: every configuration
# must write the native bytes and decompress them back to the input.
. "$(dirname "$0")/lib.sh"
need zstd
gen "$tmp/in"
x="zstd -q -T4 -12 -B1048576"
on native $x -c "$tmp/in" >"$tmp/native.zst" || fail "native zstd: $rc"
on native $x -c "$tmp/in" >"$tmp/again.zst" || fail "native zstd: $rc"
cmp -s "$tmp/native.zst" "$tmp/again.zst" ||
    fail "two native runs of $x differ: nothing to compare against"
for cfg in $configs; do
	on "$cfg" $x -c "$tmp/in" >"$tmp/$cfg.zst" ||
	    fail "$cfg: $x -c: exit status $rc"
	cmp "$tmp/$cfg.zst" "$tmp/native.zst" ||
	    fail "$cfg: compressed output differs from the native one"
	on "$cfg" zstd -q -d -c "$tmp/native.zst" >"$tmp/$cfg.out" ||
	    fail "$cfg: zstd -d: exit status $rc"
	cmp "$tmp/$cfg.out" "$tmp/in" ||
	    fail "$cfg: decompressed output differs from the input"
	echo "ok: $cfg $x: as native; roundtrip"
done
