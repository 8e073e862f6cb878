#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bash and dash under ult-run: command substitution, subshells, pipelines
# and functions in them, which fork children of the shell that run
# without exec (they used to die on sigprocmask, or say "" for $(...)).
# Each shell's output and exit status under ult-run must be the native
# ones.  (Not `cmd & wait` in dash: its wait is a sigsuspend for SIGCHLD,
# which is the signal delivery's business, not fork's.)
. "$(dirname "$0")/lib.sh"
script='x=$(echo hi); echo "$x"; (echo sub); echo a | tr a b
y=$(for i in 1 2 3; do echo "$i"; done | wc -l); echo "lines $y"
( exit 3 ); echo "subshell status $?"
f() { echo "in f $1"; }; z=$(f one); echo "$z"
echo "$(echo "$(echo nested)")"; exit 5'
n=0
for sh in bash dash; do
	command -v "$sh" >/dev/null 2>&1 || continue
	n=$((n + 1))
	on native "$sh" -c "$script" >"$tmp/native" 2>&1
	want=$rc
	[ "$want" = 5 ] || fail "$sh natively: exit status $want"
	for cfg in $configs; do
		on "$cfg" "$sh" -c "$script" >"$tmp/$cfg" 2>&1
		[ "$rc" = "$want" ] ||
		    fail "$cfg: $sh: exit status $rc, native $want: $(cat "$tmp/$cfg")"
		cmp -s "$tmp/$cfg" "$tmp/native" || {
			diff "$tmp/native" "$tmp/$cfg"
			fail "$cfg: $sh: output differs from the native one"
		}
		echo "ok: $cfg $sh: as native"
	done
done
[ $n -gt 0 ] || { echo "skipped: neither bash nor dash installed"; exit 77; }
