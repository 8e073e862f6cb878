#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ult-trace-summary on the trace of a short run of top_target: its event
# counts and its per-uthread table.
#   trace_summary.sh ULT_TRACE_SUMMARY TOP_TARGET
set -eu
sum=$1 target=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "trace_summary: $*"; cat "$out/counts" "$out/report" 2>/dev/null; exit 1; }

ULT_TRACE="$out/t.json" "$target" quick > /dev/null || fail "the target failed"
"$sum" --counts "$out/t.json" > "$out/counts" || fail "--counts failed"
count() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$out/counts"; }
[ "$(count spawn)" = 3 ] || fail "spawns: $(count spawn)"
[ "$(count exit)" = 3 ] || fail "exits: $(count exit)"
[ "$(count uthreads)" = 3 ] || fail "uthreads: $(count uthreads)"
[ "$(count wakeup)" = "$(count woken)" ] || fail "unpaired wakeups"
[ "$(count sleep)" -ge 1 ] || fail "sleeps: $(count sleep)"
[ "$(count 'lock contended')" -ge 1 ] || fail "no contended lock"
[ "$(count dropped)" = 0 ] || fail "dropped: $(count dropped)"

"$sum" "$out/t.json" > "$out/report" || fail "the report failed"
for n in top-sleeper top-waiter top-spinner; do
	grep -Eq "^[0-9]+ +$n +[1-9]" "$out/report" || fail "no row for $n"
done
grep -q '^policy ULE, 2 workers' "$out/report" || fail "no header"

echo '{"not":"a trace"}' > "$out/bad.json"
if "$sum" "$out/bad.json" 2> "$out/err"; then fail "took a file with no events"; fi
grep -q "no events" "$out/err" || fail "no clear message: $(cat "$out/err")"
echo "trace_summary: ok"
