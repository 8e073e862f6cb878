#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# What a process leaves when it ends other than by exit: killed by
# SIGTERM, its trace is whole JSON, its report is on stderr, its segment
# is gone and it dies of SIGTERM; ULT_DUMP_SIGNAL writes the trace and the
# report while it goes on.  And a child that inherits ULT_TRACE does not
# write over the parent's trace ("%p" gives each its own).
#   obs_edges.sh OBS_TARGET ULT_TRACE_SUMMARY
set -u
target=$1 sum=$2
out=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
fail() { echo "obs_edges: $*"; exit 1; }
# Whole JSON: python's parser where there is one, else the summary tool's.
json_ok() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool "$1" > /dev/null 2>&1
	else
		"$sum" --counts "$1" > /dev/null 2>&1 && [ "$(tail -c 2 "$1")" = "}" ]
	fi
}
ready() {
	for i in $(seq 100); do grep -q "ready $pid" "$1" && return 0; sleep 0.1; done
	fail "the target did not start: $(cat "$1")"
}

# Killed by SIGTERM while its uthreads run.
ULT_TRACE="$out/k.json" ULT_STATS=1 ULT_SHM=1 "$target" run \
    > "$out/ready" 2> "$out/stats" &
pid=$!
ready "$out/ready"
[ -e "/dev/shm/ult-$pid" ] || fail "no segment while it runs"
sleep 0.3
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] || fail "status $rc, not killed by SIGTERM (143)"
[ -e "/dev/shm/ult-$pid" ] && fail "the segment outlived the process"
pid=
json_ok "$out/k.json" || fail "the trace is not whole JSON"
grep -q runtime_ms "$out/stats" || fail "no report on stderr: $(cat "$out/stats")"
"$sum" "$out/k.json" | grep -q spinner 2>/dev/null ||
	"$sum" --counts "$out/k.json" | grep -q '^spawn' || fail "no events"

# ULT_DUMP_SIGNAL: the trace and the report, and the program goes on.
rm -f "$out/ready"
ULT_TRACE="$out/d.json" ULT_STATS=1 ULT_DUMP_SIGNAL=PWR "$target" run \
    > "$out/ready" 2> "$out/stats" &
pid=$!
ready "$out/ready"
kill -PWR "$pid"
for i in $(seq 100); do
	grep -q runtime_ms "$out/stats" && json_ok "$out/d.json" && break
	sleep 0.1
done
json_ok "$out/d.json" || fail "ULT_DUMP_SIGNAL: the trace is not whole JSON"
grep -q runtime_ms "$out/stats" || fail "ULT_DUMP_SIGNAL: no report"
kill -0 "$pid" || fail "ULT_DUMP_SIGNAL ended the program"
# (A background job of sh ignores SIGINT and SIGQUIT: not those.)
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] || fail "after the dump: status $rc, not killed by SIGTERM"
pid=

# A bad ULT_DUMP_SIGNAL (the runtime's own, or no signal) fails ult_init.
for bad in URG 0 nonsense KILL; do
	if ULT_DUMP_SIGNAL=$bad "$target" child 2>/dev/null; then
		fail "ULT_DUMP_SIGNAL=$bad was accepted"
	fi
done

# A child that runs ult with the parent's ULT_TRACE writes nothing there.
ULT_TRACE="$out/f.json" "$target" fork || fail "fork: the target failed"
json_ok "$out/f.json" || fail "fork: the parent's trace is not whole JSON"
# With %p, each process writes its own.
ULT_TRACE="$out/p.%p.json" "$target" fork || fail "%p: the target failed"
n=0
for f in "$out"/p.*.json; do
	json_ok "$f" || fail "%p: $f is not whole JSON"
	n=$((n + 1))
done
[ "$n" = 2 ] || fail "%p: $n traces, not the parent's and the child's"
echo "obs_edges: ok"
