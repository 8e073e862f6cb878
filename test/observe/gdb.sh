#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The gdb extension on a live process and on a core dump of top_target:
# info uthreads lists its uthreads with their states, wait channels and
# lock owners, uthread N bt shows each sleeper's own stack down to its
# function, info ult-deadlock finds the deadlocked pair, and print shows
# an ult_mutex_t's owner.
#   gdb.sh TOP_TARGET GDB_SCRIPT
set -eu
target=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") script=$2
command -v gdb >/dev/null 2>&1 || { echo "skipped: gdb not installed"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "gdb: $*"; cat "$out/log"; exit 1; }

cmds() {
	printf '%s\n' "set pagination off" "source $script" "info uthreads" \
	    "uthread 1 bt" "uthread 2 bt" "uthread 3 bt" "info ult-deadlock" \
	    "print dl_a" "print held"
}

check() {
	grep -Eq '^ +1  top-sleeper +sleeping .* sem \(0x' "$out/log" || fail "$1: sleeper"
	grep -Eq '^ +2  top-waiter +sleeping .* mutex \(0x[0-9a-f]+ <held>\)' "$out/log" ||
	    fail "$1: waiter"
	grep -Eq '^ +3  top-spinner ' "$out/log" || fail "$1: spinner"
	grep -q '^5 uthreads' "$out/log" || fail "$1: count"
	# Owners: the pair's each other's; the waiter's lock is main's.
	grep -Eq '^ +4  top-left +sleeping .* mutex \(0x[0-9a-f]+ <dl_b>\) owner 5 "top-right"$' \
	    "$out/log" || fail "$1: top-left's owner"
	grep -Eq '^ +5  top-right +sleeping .* mutex \(0x[0-9a-f]+ <dl_a>\) owner 4 "top-left"$' \
	    "$out/log" || fail "$1: top-right's owner"
	grep -Eq '^ +2  top-waiter .* <held>\) owner a foreign thread' "$out/log" ||
	    fail "$1: the waiter's foreign owner"
	grep -q '^deadlock 1: 2 uthreads wait for each other:' "$out/log" ||
	    fail "$1: no deadlock"
	grep -Eq '^  uthread 4 "top-left" waits for mutex 0x[0-9a-f]+ <dl_b>, owned by uthread 5 "top-right"$' \
	    "$out/log" || fail "$1: deadlock's first line"
	grep -Eq '^\$1 = ult_mutex_t owned by uthread 4 "top-left" \(contested\)$' \
	    "$out/log" || fail "$1: print dl_a"
	grep -Eq '^\$2 = ult_mutex_t owned by a foreign thread .*\(contested\)$' \
	    "$out/log" || fail "$1: print held"
	# Each sleeper's own frames, from the switch down to its function.
	awk '/^uthread 1 /{u=1} /^uthread 2 /{u=0} u && / in sem_sleeper /{f=1}
	    END{exit !f}' "$out/log" || fail "$1: no sem_sleeper frame in uthread 1's"
	awk '/^uthread 2 /{u=1} /^uthread 3 /{u=0} u && / in lock_waiter /{f=1}
	    END{exit !f}' "$out/log" || fail "$1: no lock_waiter frame in uthread 2's"
	grep -q ' in ult_mutex_lock ' "$out/log" || fail "$1: no ult_mutex_lock frame"
	grep -q ' in spinner ' "$out/log" || fail "$1: no spinner frame"
}

# Live: run under gdb until its abort, then look.
cmds > "$out/cmds"
gdb -q -batch -ex "set pagination off" -ex "run abort" -x "$out/cmds" \
    "$target" > "$out/log" 2>&1 || :
check live

# A core dump, if this host leaves one in the working directory.
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '?')
case $pattern in
'|'*|*/*) echo "core_pattern is '$pattern': no core file here, core part skipped"
	echo "gdb: ok (live)"
	exit 0 ;;
esac
(cd "$out" && ulimit -c unlimited && "$target" abort > /dev/null 2>&1) || :
core=$(ls "$out"/core* 2>/dev/null | head -1)
if [ -z "$core" ]; then
	echo "no core file was written (ulimit?): core part skipped"
	echo "gdb: ok (live)"
	exit 0
fi
gdb -q -batch -x "$out/cmds" "$target" "$core" > "$out/log" 2>&1 || :
check core
echo "gdb: ok (live and core)"
