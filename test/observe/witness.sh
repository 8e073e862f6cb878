#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The lock checker's example (examples/witness.c) as a user sees it: a
# report for the pthread mutex held across ult_yield, one for the lock
# order reversal, and ULT_STATS's report of the deadlock it ends in.
#   witness.sh WITNESS_EXAMPLE
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "witness: $*"; cat "$out"; exit 1; }
# The example exits with its deadlocked pair alive: their memory is no
# leak to report.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

ULT_WITNESS=1 ULT_STATS=1 timeout 60 "$1" 2> "$out" || fail "exit status $?"
grep -q '^ult witness: uthread 1 "holder" waits ("yield") holding 1 lock taken through libc:$' \
    "$out" || fail "no report of the wait"
grep -Eq '^ult witness:   pthread mutex \(or mtx_t, std::mutex\) 0x[0-9a-f]+$' \
    "$out" || fail "the held mutex is not named"
[ "$(grep -c 'waits ("yield")' "$out")" = 1 ] || fail "reported more than once"
grep -q '^ult witness: lock order reversal in uthread 3 "right":$' "$out" ||
    fail "no reversal"
grep -Eq '^ult witness:   established: ult_mutex 0x[0-9a-f]+ \(taken at 0x[0-9a-f]+ \(witness\+0x[0-9a-f]+\)\)$' \
    "$out" || fail "no established order"
grep -Eq '^ult witness:   now: +ult_mutex 0x[0-9a-f]+ \(taken at ' "$out" ||
    fail "no new order"
grep -q '^ult stats: deadlock: a cycle of uthreads waiting for each other:$' \
    "$out" || fail "no deadlock in the stats report"
grep -Eq '^ult stats:   uthread 2 "left" waits for mutex 0x[0-9a-f]+, owned by uthread 3 "right"$' \
    "$out" || fail "left's wait"
grep -Eq '^ult stats:   uthread 3 "right" waits for mutex 0x[0-9a-f]+, owned by uthread 2 "left"$' \
    "$out" || fail "right's wait"
# Off: no reports, the deadlock still named.
ULT_WITNESS=0 ULT_STATS=1 timeout 60 "$1" 2> "$out" || fail "exit status $? (off)"
! grep -q '^ult witness' "$out" || fail "reports with ULT_WITNESS=0"
grep -q '^ult stats: deadlock' "$out" || fail "no deadlock with ULT_WITNESS=0"
echo "witness: ok"
