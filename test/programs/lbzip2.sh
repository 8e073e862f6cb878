#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lbzip2 -n 4 (four worker threads, plus its reader, writer and muxer)
# natively and under ult-run: a round trip whose bytes must be the input's,
# and compressed output that must be the native one (lbzip2 cuts the
# input into the same blocks whatever the threads' timing).
. "$(dirname "$0")/lib.sh"
need lbzip2
gen "$tmp/in"
on native lbzip2 -n 4 -c "$tmp/in" >"$tmp/native.bz2" || fail "native lbzip2: $rc"
on native lbzip2 -n 4 -c "$tmp/in" >"$tmp/again.bz2" || fail "native lbzip2: $rc"
cmp -s "$tmp/native.bz2" "$tmp/again.bz2" ||
    fail "two native runs of lbzip2 -n 4 differ: nothing to compare against"
for cfg in $configs; do
	on "$cfg" lbzip2 -n 4 -c "$tmp/in" >"$tmp/$cfg.bz2" ||
	    fail "$cfg: lbzip2 -n 4 -c: exit status $rc"
	cmp "$tmp/$cfg.bz2" "$tmp/native.bz2" ||
	    fail "$cfg: compressed output differs from the native one"
	on "$cfg" lbzip2 -d -n 4 -c "$tmp/native.bz2" >"$tmp/$cfg.out" ||
	    fail "$cfg: lbzip2 -d: exit status $rc"
	cmp "$tmp/$cfg.out" "$tmp/in" ||
	    fail "$cfg: decompressed output differs from the input"
	echo "ok: $cfg lbzip2 -n 4: $(wc -c <"$tmp/$cfg.bz2") bytes, as native; roundtrip"
done
