#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# python3 running python.py natively and under ult-run: its threading
# (a pool of 8 threads on a Queue, a Lock, a Condition, a Barrier, an
# Event), subprocess (children with pipes, spawned from several threads)
# and multiprocessing (a Pool of 4 over fork, Processes and a Queue) must
# print what they print natively, and exit 0.
. "$(dirname "$0")/lib.sh"
# Debian's python3 itself, not a wrapper script in front of it.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
need "$py"
script="$(dirname "$0")/python.py"
on native "$py" "$script" >"$tmp/native" 2>&1 || fail "native python3: $rc: $(cat "$tmp/native")"
for cfg in $configs; do
	on "$cfg" "$py" "$script" >"$tmp/$cfg" 2>&1 ||
	    fail "$cfg: python3: exit status $rc: $(cat "$tmp/$cfg")"
	cmp -s "$tmp/$cfg" "$tmp/native" || {
		diff "$tmp/native" "$tmp/$cfg"
		fail "$cfg: python3's output differs from the native one"
	}
	echo "ok: $cfg python3 threading, subprocess, multiprocessing: as native"
done
