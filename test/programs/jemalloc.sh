#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Programs with jemalloc as their malloc (redis-server's) under ult-run:
# jemalloc's first malloc takes a pthread mutex, the drop-in's, which
# starts the runtime, whose start allocates again; and the runtime's TLS
# probe must not take jemalloc's blocks for glibc's.  bash with jemalloc
# preloaded must reach main and run its forked children as natively; so
# must the fork conformance program, whose children make threads (the
# child's reset runs before jemalloc's child handler, which unlocks its
# locks: no malloc there).
. "$(dirname "$0")/lib.sh"
lib=$(for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
	[ -e "$d/libjemalloc.so.2" ] && echo "$d/libjemalloc.so.2" && break
done)
[ -n "$lib" ] || { echo "skipped: libjemalloc.so.2 not installed"; exit 77; }
need bash
script='x=$(echo hi); echo "$x"; (echo sub); echo a | tr a b; exit 4'
# ult-run puts the drop-in in front of what LD_PRELOAD already says.
export LD_PRELOAD="$lib"
on native bash -c "$script" >"$tmp/native" 2>&1
[ "$rc" = 4 ] || fail "natively with jemalloc: $(cat "$tmp/native")"
for cfg in $configs; do
	on "$cfg" bash -c "$script" >"$tmp/$cfg" 2>&1
	[ "$rc" = 4 ] || fail "$cfg: exit status $rc: $(cat "$tmp/$cfg")"
	cmp -s "$tmp/$cfg" "$tmp/native" ||
	    fail "$cfg: output differs: $(cat "$tmp/$cfg")"
	echo "ok: $cfg bash with jemalloc: as native"
done
forkrt=$(dirname "$ultrun")/test/dropin/dropin_conf_forkrt
[ -x "$forkrt" ] || exit 0
on native "$forkrt" >"$tmp/native" 2>&1
[ "$rc" = 0 ] || fail "natively with jemalloc: $(tail -5 "$tmp/native")"
for cfg in $configs; do
	on "$cfg" "$forkrt" >"$tmp/$cfg" 2>&1
	[ "$rc" = 0 ] || fail "$cfg: forkrt: exit status $rc: $(tail -5 "$tmp/$cfg")"
	cmp -s "$tmp/$cfg" "$tmp/native" ||
	    fail "$cfg: forkrt: output differs: $(diff "$tmp/native" "$tmp/$cfg")"
	echo "ok: $cfg fork children's threads with jemalloc: as native"
done
