#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# pigz -p 8 (8 compression threads, plus its reader and writer) natively
# and under ult-run: with the same block size and level pigz writes the
# same bytes whatever the threads' timing, so every configuration must
# give the native output, and decompress it back to the original.
. "$(dirname "$0")/lib.sh"
need pigz
gen "$tmp/in"
on native pigz -p 8 -c "$tmp/in" >"$tmp/native.gz" || fail "native pigz: $rc"
on native pigz -p 8 -c "$tmp/in" >"$tmp/again.gz" || fail "native pigz: $rc"
# The comparison below means something only if pigz is deterministic here.
cmp -s "$tmp/native.gz" "$tmp/again.gz" ||
    fail "two native runs of pigz -p 8 differ: nothing to compare against"
for cfg in $configs; do
	on "$cfg" pigz -p 8 -c "$tmp/in" >"$tmp/$cfg.gz" ||
	    fail "$cfg: pigz -p 8 -c: exit status $rc"
	cmp "$tmp/$cfg.gz" "$tmp/native.gz" ||
	    fail "$cfg: compressed output differs from the native one"
	on "$cfg" pigz -d -p 8 -c "$tmp/native.gz" >"$tmp/$cfg.out" ||
	    fail "$cfg: pigz -d: exit status $rc"
	cmp "$tmp/$cfg.out" "$tmp/in" ||
	    fail "$cfg: decompressed output differs from the input"
	echo "ok: $cfg pigz -p 8: $(wc -c <"$tmp/$cfg.gz") bytes, as native; roundtrip"
done
